set terminal pngcairo size 1280,600 noenhanced font ",10"
set output "throughput.png"
set title "download kbps per setup and column (2026-12-05T13:03:04+00:00)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set yrange [10:1000000]
set ylabel "download kbps (median, log scale)"
set grid ytics
set key outside right top vertical
set xtics rotate by -25 scale 0
set datafile missing "?"
set datafile separator "\t"
plot "throughput.dat" using 2:xtic(1) title columnheader(2), "throughput.dat" using 3:xtic(1) title columnheader(3), "throughput.dat" using 4:xtic(1) title columnheader(4), "throughput.dat" using 5:xtic(1) title columnheader(5), "throughput.dat" using 6:xtic(1) title columnheader(6), "throughput.dat" using 7:xtic(1) title columnheader(7), "throughput.dat" using 8:xtic(1) title columnheader(8), "throughput.dat" using 9:xtic(1) title columnheader(9), "throughput.dat" using 10:xtic(1) title columnheader(10), "throughput.dat" using 11:xtic(1) title columnheader(11), "throughput.dat" using 12:xtic(1) title columnheader(12), "throughput.dat" using 13:xtic(1) title columnheader(13), "throughput.dat" using 14:xtic(1) title columnheader(14), "throughput.dat" using 15:xtic(1) title columnheader(15), "throughput.dat" using 16:xtic(1) title columnheader(16), "throughput.dat" using 17:xtic(1) title columnheader(17)
