set terminal pngcairo size 900,600 noenhanced font ",10"
set output "ratios.png"
set title "ratios per setup: the pool against the first resolver, own balancers, dnsdist and the real tunnels alone"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y 2
set yrange [1:2]
set ylabel "ratio of median kbps (log 2 scale; 1 = level)"
set grid ytics
set key outside right top vertical
set xtics rotate by -25 scale 0
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2
set label "level" at graph 0.01, first 1.08
set datafile missing "?"
set datafile separator "\t"
plot "ratios.dat" using 2:xtic(1) title columnheader(2), "ratios.dat" using 3:xtic(1) title columnheader(3)
