set terminal pngcairo size 1280,600 noenhanced font ",10"
set output "ratios.png"
set title "ratios per setup: the pool against the first resolver, own balancers, dnsdist and the real tunnels alone"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y 2
set yrange [0.5:256]
set ylabel "ratio of median kbps (log 2 scale; 1 = level)"
set grid ytics
set key outside right top vertical
set xtics rotate by -25 scale 0
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2
set label "level" at graph 0.01, first 1.08
set datafile missing "?"
set datafile separator "\t"
plot "ratios.dat" using 2:xtic(1) title columnheader(2), "ratios.dat" using 3:xtic(1) title columnheader(3), "ratios.dat" using 4:xtic(1) title columnheader(4), "ratios.dat" using 5:xtic(1) title columnheader(5), "ratios.dat" using 6:xtic(1) title columnheader(6), "ratios.dat" using 7:xtic(1) title columnheader(7), "ratios.dat" using 8:xtic(1) title columnheader(8), "ratios.dat" using 9:xtic(1) title columnheader(9), "ratios.dat" using 10:xtic(1) title columnheader(10), "ratios.dat" using 11:xtic(1) title columnheader(11)
