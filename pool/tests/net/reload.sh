#!/usr/bin/env bash
# SIGHUP reloads the configuration under load: dnsperf sends 800 q/s
# through respool for 9 s while the config file changes five times. The
# pool starts on one resolver that answers after 300 ms (dnsperf's 100
# outstanding queries are all in flight on it); the first reload
# replaces it by two others, so its queries in flight must move to them. Bad new configs (broken
# JSON, a bad resolver, no resolver) are rejected whole with the old one
# kept; a resolver is added back; a tuning change is named as needing a
# restart. Must hold: no query lost or answered SERVFAIL, the removed
# resolver listed no more, the added ones carrying queries, respool exits
# 0. Then the same with DoT and DoH resolvers (dnsdist in front of a
# fakeres) taken out and put back while their connections are open. Then, when
# valgrind is there, the same reloads without load under valgrind: no
# error, nothing leaked.
. "$(dirname "$0")/lib.sh"
need dnsperf python3 "$RESPOOL_BIN" "$FAKERES_BIN"

start_fakeres fr --answer -r name=a -r name=b -r name=c -r name=slow,latency=300ms
A=$(fakeres_udp fr 0)
B=$(fakeres_udp fr 1)
C=$(fakeres_udp fr 2)
SLOW=$(fakeres_udp fr 3)
CFG=$WORK/pool.json

# write_cfg JSON: replaces the config file in one rename, as an editor
# or a deploy tool would.
write_cfg() {
  printf '%s\n' "$1" >"$CFG.tmp" && mv "$CFG.tmp" "$CFG"
}

# hup_expect N PATTERN: sends SIGHUP and waits until PATTERN is the
# N-th SIGHUP line of the log.
hup_expect() {
  local i
  kill -HUP "$RP_PID"
  for i in $(seq 1 50); do
    if [ "$(grep -c "SIGHUP: \(configuration reloaded\|new configuration rejected\)" "$WORK/rp.err")" -ge "$1" ]; then
      grep "SIGHUP: \(configuration reloaded\|new configuration rejected\)" "$WORK/rp.err" |
        sed -n "$1p" | grep -q -- "$2" ||
        fail "SIGHUP $1: expected '$2', got: $(grep SIGHUP "$WORK/rp.err" | sed -n "$1p")"
      return 0
    fi
    sleep 0.1
  done
  fail "SIGHUP $1: no reload line: $(tail -5 "$WORK/rp.err")"
}

# sent_of FILE NAME: the sent count of resolver NAME in a stats JSON
# (-1 when it is not listed).
sent_of() {
  json_get "$1" "next((r['sent'] for r in j['resolvers'] if r['name'] == '$2'), -1)"
}

write_cfg "{\"resolvers\": [\"$SLOW\"]}"
start_respool rp -c "$CFG" --stats-json "$WORK/stats.json" --stats 500ms
wait_log "$WORK/rp.err" "start-up check: 1 of 1" "start"

dnsperf_data "$WORK/q.txt" 20000 A
dnsperf -s "$RP_HOST" -p "$RP_PORT" -d "$WORK/q.txt" -l 9 -Q 800 -c 4 -t 6 \
  >"$WORK/perf.out" 2>&1 &
PERF=$!
PIDS="$PIDS $PERF"

sleep 2
# 1: slow (holding queries for 300 ms) replaced by b and c.
cp "$WORK/stats.json" "$WORK/before1.json"
INFLIGHT=$(json_get "$WORK/before1.json" "[r['sent'] - r['answered'] for r in j['resolvers']][0]")
note "queries in flight on the resolver to be removed, half a second before: $INFLIGHT"
[ "$INFLIGHT" -gt 20 ] || fail "only $INFLIGHT queries in flight on $SLOW: the test proves nothing"
write_cfg "{\"resolvers\": [\"$B\", \"$C\"]}"
hup_expect 1 "configuration reloaded: 2 resolvers added, 1 removed, 0 kept"
sleep 1.2
cp "$WORK/stats.json" "$WORK/after1.json"
[ "$(sent_of "$WORK/after1.json" "$SLOW")" = -1 ] || fail "removed $SLOW still listed"
note "after it left: $(json_get "$WORK/after1.json" "'resends %d, waits %d (before: %d)' % (j['pool']['resends'], j['pool']['waits'], $(json_get "$WORK/before1.json" "j['pool']['waits']"))")"

# 2-4: rejected whole; the pool keeps b and c.
write_cfg '{"resolvers": [1,'
hup_expect 2 "new configuration rejected, the running one kept: $CFG: line"
write_cfg "{\"resolvers\": [\"$A\", \"nope:xx\"]}"
hup_expect 3 "new configuration rejected, the running one kept: $CFG: resolvers\[1\]"
write_cfg '{"resolvers": []}'
hup_expect 4 "new configuration rejected, the running one kept: no resolvers"
sleep 1

# 5: a back, and a tuning change that needs a restart.
write_cfg "{\"resolvers\": [\"$B\", \"$C\", \"$A\"], \"tuning\": {\"token_wait\": \"80ms\"}}"
hup_expect 5 "configuration reloaded: 1 resolver added, 0 removed, 2 kept"
grep -q "SIGHUP: changed, but applied only at a restart: tuning token_wait" "$WORK/rp.err" ||
  fail "tuning change not named: $(grep SIGHUP "$WORK/rp.err")"
sleep 1.2
cp "$WORK/stats.json" "$WORK/after5.json"

wait "$PERF" || fail "dnsperf failed: $(cat "$WORK/perf.out")"
SENT=$(dnsperf_field "$WORK/perf.out" "Queries sent")
LOST=$(dnsperf_field "$WORK/perf.out" "Queries lost")
SERVFAIL=$(dnsperf_rcode "$WORK/perf.out" SERVFAIL)
note "dnsperf: sent $SENT, lost $LOST, SERVFAIL $SERVFAIL"
[ "${SENT:-0}" -gt 4000 ] || fail "dnsperf sent only ${SENT:-0}: $(cat "$WORK/perf.out")"
[ "$LOST" = 0 ] || fail "$LOST queries lost across the reloads"
[ "$SERVFAIL" = 0 ] || fail "$SERVFAIL queries answered SERVFAIL across the reloads"

sleep 0.6
C1=$(sent_of "$WORK/after1.json" "$C")
C2=$(sent_of "$WORK/stats.json" "$C")
A5=$(sent_of "$WORK/after5.json" "$A")
A9=$(sent_of "$WORK/stats.json" "$A")
note "sent to c: $C1 one second after it was added, $C2 at the end; to a after its return: $A5 -> $A9"
[ "$C2" -gt "$C1" ] && [ "$C1" -gt 0 ] || fail "added resolver c carried nothing ($C1, $C2)"
[ "$A9" -gt 0 ] || fail "re-added resolver a carried nothing"
stop_respool rp

# DoT and DoH resolvers (dnsdist in front of b) removed and added back
# under load while their connections are open.
if command -v dnsdist >/dev/null 2>&1 && command -v openssl >/dev/null 2>&1; then
  . "$(dirname "$0")/lib_tls.sh"
  make_certs "$WORK"
  DOT=$(free_port)
  DOH=$(free_port)
  start_dnsdist dd "$B" "$DOT" "$DOH"
  wait_tcp "$DOT"
  wait_tcp "$DOH"
  TLS="\"dot://dns.test@127.0.0.1:$DOT\", \"https://dns.test@127.0.0.1:$DOH/dns-query\""
  write_cfg "{\"resolvers\": [$TLS], \"tls_ca\": \"$WORK/ca.pem\"}"
  start_respool rp -c "$CFG" --stats-json "$WORK/tls.json" --stats 500ms
  wait_log "$WORK/rp.err" "start-up check: 2 of 2" "TLS start"
  dnsperf -s "$RP_HOST" -p "$RP_PORT" -d "$WORK/q.txt" -l 5 -Q 300 -c 2 -t 6 \
    >"$WORK/perf-tls.out" 2>&1 &
  PERF=$!
  PIDS="$PIDS $PERF"
  sleep 1.5
  write_cfg "{\"resolvers\": [\"$A\"], \"tls_ca\": \"$WORK/ca.pem\"}"
  hup_expect 1 "configuration reloaded: 1 resolver added, 2 removed, 0 kept"
  sleep 1.5
  write_cfg "{\"resolvers\": [\"$A\", $TLS], \"tls_ca\": \"$WORK/ca.pem\"}"
  hup_expect 2 "configuration reloaded: 2 resolvers added, 0 removed, 1 kept"
  wait "$PERF" || fail "dnsperf (TLS) failed: $(cat "$WORK/perf-tls.out")"
  LOST=$(dnsperf_field "$WORK/perf-tls.out" "Queries lost")
  SERVFAIL=$(dnsperf_rcode "$WORK/perf-tls.out" SERVFAIL)
  note "DoT/DoH out and back in under load: sent $(dnsperf_field "$WORK/perf-tls.out" "Queries sent"), lost $LOST, SERVFAIL $SERVFAIL"
  [ "$LOST" = 0 ] && [ "$SERVFAIL" = 0 ] || fail "TLS reloads lost $LOST, SERVFAIL $SERVFAIL"
  sleep 0.6
  [ "$(json_get "$WORK/tls.json" "len(j['resolvers'])")" = 3 ] || fail "TLS: $(cat "$WORK/tls.json")"
  stop_respool rp
else
  note "dnsdist or openssl missing: the DoT/DoH reload is skipped"
fi

if [ "${RP_NO_VALGRIND:-0}" != 1 ] && command -v valgrind >/dev/null 2>&1; then
  write_cfg "{\"resolvers\": [\"$A\", \"$SLOW\"]}"
  RESPOOL_REAL=$RESPOOL_BIN
  RESPOOL_BIN=valgrind
  start_respool vg --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    "$RESPOOL_REAL" -c "$CFG"
  RESPOOL_BIN=$RESPOOL_REAL
  for i in $(seq 1 100); do
    grep -q "start-up check: 2 of 2" "$WORK/vg.err" && break
    sleep 0.1
  done
  python3 - "$RP_HOST" "$RP_PORT" >/dev/null 2>&1 <<'EOF' &
import socket, struct, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.05)
for i in range(200):
    name = bytes([len(b"v%d" % i)]) + b"v%d" % i + b"\x07example\x00"
    s.sendto(struct.pack(">HHHHHH", i, 0x0100, 1, 0, 0, 0) + name + b"\0\1\0\1", (sys.argv[1], int(sys.argv[2])))
    time.sleep(0.02)
EOF
  Q=$!
  sleep 1
  write_cfg "{\"resolvers\": [\"$B\", \"$C\"]}"
  kill -HUP "$RP_PID"
  sleep 1
  write_cfg '{"resolvers": [1,'
  kill -HUP "$RP_PID"
  sleep 0.5
  write_cfg "{\"resolvers\": [\"$A\", \"tls://127.0.0.1:1\"]}"
  kill -HUP "$RP_PID"
  wait "$Q"
  sleep 0.5
  kill -TERM "$RP_PID"
  wait "$RP_PID"
  RC=$?
  [ $RC -eq 0 ] || fail "respool under valgrind exited $RC: $(grep -A5 'ERROR SUMMARY\|definitely\|Invalid' "$WORK/vg.err" | head -30)"
  [ "$(grep -c "configuration reloaded" "$WORK/vg.err")" = 2 ] || fail "valgrind run: $(grep SIGHUP "$WORK/vg.err")"
  note "valgrind: $(grep -o 'ERROR SUMMARY: [0-9]* errors' "$WORK/vg.err")"
else
  note "valgrind not installed (or RP_NO_VALGRIND=1): the run under valgrind is skipped"
fi
echo "PASS"
