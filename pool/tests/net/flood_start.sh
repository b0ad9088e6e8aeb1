#!/usr/bin/env bash
# Start-up under load (the reliability issue's item 4): a flood that
# begins the moment respool prints its address, over resolvers that
# answer 500 ms late. A new resolver is in probation (one query in
# flight, then one more per reply, until probation_answers replies), so
# a flood has nowhere to go for its first round trips; the queries it
# cannot place yet wait for room (token_wait) and then fail SERVFAIL.
# Measured by dnsperf, a real client: 5 000 q/s for 5 s, up to 5 000
# outstanding (under the pool's max_inflight of 10 000), with a 4 MiB
# socket buffer (-b): the held queries go out together when probation
# ends and their answers come back together 500 ms later, more than the
# default 208 KiB buffer holds (dnsperf then counts them lost; the
# kernel's UdpRcvbufErrors rose by exactly that many). The share of
# queries not answered NOERROR must stay small: before the fix 26 %
# SERVFAIL, after it 0; the bound is loose (a loaded machine delays the
# pool's start), the figure itself goes in the note.
. "$(dirname "$0")/lib.sh"
need dnsperf python3 "$RESPOOL_BIN" "$FAKERES_BIN"

QPS=${QPS:-5000}
SECS=${SECS:-5}
MAX_FAIL=${MAX_FAIL:-0.10}

start_fakeres slow --answer -r name=s1,latency=500ms -r name=s2,latency=500ms
S1=$(fakeres_udp slow 0)
S2=$(fakeres_udp slow 1)

python3 -c 'import sys
for i in range(5000): print("f%d.flood.example A" % i)' >"$WORK/names"

start_respool rp -r "$S1" -r "$S2" --pretest ""
dnsperf -b 4096 -s "$RP_HOST" -p "$RP_PORT" -d "$WORK/names" -Q "$QPS" -q 5000 \
  -l "$SECS" -t 3 >"$WORK/dnsperf.out" 2>&1 ||
  fail "dnsperf: $(tail -3 "$WORK/dnsperf.out")"

python3 - "$WORK/dnsperf.out" "$MAX_FAIL" <<'EOF' || fail "$(cat "$WORK/verdict")"
import re, sys
text = open(sys.argv[1]).read()
sent = int(re.search(r"Queries sent:\s+(\d+)", text).group(1))
done = int(re.search(r"Queries completed:\s+(\d+)", text).group(1))
codes = dict((k, int(v)) for k, v in re.findall(r"(\w+) (\d+) \(", text.split("Response codes:")[1].splitlines()[0]))
bad = sent - codes.get("NOERROR", 0)
share = bad / float(sent)
line = ("flood from start over two 500 ms resolvers: %d sent, %d completed, "
        "NOERROR %d, not answered NOERROR %d (%.2f %%)" %
        (sent, done, codes.get("NOERROR", 0), bad, 100 * share))
print("note: " + line)
open(sys.argv[1].rsplit("/", 1)[0] + "/verdict", "w").write(
    line + "; wants <= %.0f %%" % (100 * float(sys.argv[2])))
sys.exit(0 if share <= float(sys.argv[2]) else 1)
EOF
echo ok
