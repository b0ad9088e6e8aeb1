set terminal pngcairo size 1000,520 noenhanced
set output "caps-one-limited-real-md-respool.png"
set title "one-limited, real MD respool (round 1): learned caps and answers per second"
set xlabel "seconds from the client's start"
set ylabel "queries per second"
set key below horizontal maxcols 3
set grid ytics lc rgb "#dddddd"
set xrange [0:*]
set yrange [0:55]
set datafile missing "?"
plot "caps-one-limited-real-md-respool.dat" using 1:3 with lines lw 2 lc 1 title "r1 (rate=30, over=refuse) answers/s", "caps-one-limited-real-md-respool.dat" using 1:2 with lines dt 2 lc 1 title "r1 cap", 30 with lines dt 3 lw 2 lc 1 title "r1 limit"
