set terminal pngcairo size 900,480 noenhanced font ",10"
set output "shares-three-lossy.png"
set title "three-lossy: queries per resolver by column"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.7
set yrange [0:100]
set ylabel "share of the queries (%)"
set grid ytics
set key outside right top vertical
set xtics rotate by -25 scale 0
set datafile missing "?"
set datafile separator "\t"
plot "shares-three-lossy.dat" using 2:xtic(1) title columnheader(2), "shares-three-lossy.dat" using 3:xtic(1) title columnheader(3), "shares-three-lossy.dat" using 4:xtic(1) title columnheader(4)
