set terminal pngcairo size 900,600 noenhanced font ",10"
set output "limit-share.png"
set title "rate-limited setups: download as % of the physical limit"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:110]
set ylabel "% of the physical limit"
set arrow from graph 0, first 75 to graph 1, first 75 nohead dt 2
set label "75 % target" at graph 0.01, first 78
set grid ytics
set key outside right top vertical
set xtics rotate by -25 scale 0
set datafile missing "?"
set datafile separator "\t"
plot "limit-share.dat" using 2:xtic(1) title columnheader(2), "limit-share.dat" using 3:xtic(1) title columnheader(3), "limit-share.dat" using 4:xtic(1) title columnheader(4), "limit-share.dat" using 5:xtic(1) title columnheader(5), "limit-share.dat" using 6:xtic(1) title columnheader(6), "limit-share.dat" using 7:xtic(1) title columnheader(7)
