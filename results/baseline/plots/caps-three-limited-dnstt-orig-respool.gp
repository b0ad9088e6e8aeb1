set terminal pngcairo size 1000,520 noenhanced
set output "caps-three-limited-dnstt-orig-respool.png"
set title "three-limited, DNSTT orig respool (round 2): learned caps and answers per second"
set xlabel "seconds from the client's start"
set ylabel "queries per second"
set key below horizontal maxcols 3
set grid ytics lc rgb "#dddddd"
set xrange [0:*]
set yrange [0:55]
set datafile missing "?"
plot "caps-three-limited-dnstt-orig-respool.dat" using 1:3 with lines lw 2 lc 1 title "r1 (rate=20, over=refuse) answers/s", "caps-three-limited-dnstt-orig-respool.dat" using 1:2 with lines dt 2 lc 1 title "r1 cap", 20 with lines dt 3 lw 2 lc 1 title "r1 limit", "caps-three-limited-dnstt-orig-respool.dat" using 1:5 with lines lw 2 lc 2 title "r2 (rate=30, over=refuse) answers/s", "caps-three-limited-dnstt-orig-respool.dat" using 1:4 with lines dt 2 lc 2 title "r2 cap", 30 with lines dt 3 lw 2 lc 2 title "r2 limit", "caps-three-limited-dnstt-orig-respool.dat" using 1:7 with lines lw 2 lc 3 title "r3 (rate=40, over=drop) answers/s", "caps-three-limited-dnstt-orig-respool.dat" using 1:6 with lines dt 2 lc 3 title "r3 cap", 40 with lines dt 3 lw 2 lc 3 title "r3 limit"
