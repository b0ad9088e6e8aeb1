#!/usr/bin/env bash
# Failures loud and early (the operator issue): each case asserts the
# message and the exit code of the respool command.
#   - a listen address that is not loopback is refused (exit 2) unless
#     --allow-remote, which starts with a warning; the same from a config;
#   - --stats-json and --scores paths that cannot be written are errors at
#     start (exit 2), not a silent loss at the first write or at exit;
#   - a stats file that becomes unwritable while running is reported once;
#   - a resolver listed twice (8.8.8.8, 8.8.8.8:53, udp://8.8.8.8:53 are
#     one) is used once, with a note;
#   - at the default log level: a start-up line (address, resolvers,
#     check) and the check's outcome, a warning when no resolver passed;
#   - --resolvers-file: one URL a line with comments; a bad line is an
#     error naming the file and the line, a missing file one naming it;
#   - --check-config: exit 0 with a summary on a good configuration, the
#     same errors as a start on a bad one; --version names the commit and
#     the libraries;
#   - --resolver-list FILE alone probes the list only (no resolv.conf, no
#     bundled public resolvers: -r auto asks for those);
#   - SIGHUP reloads (here nothing changed: the reload says so and the
#     pool runs on); SIGTERM then stops cleanly, exit 0, scores saved
#     (reload.sh tests reloads that change something);
#   - discover's bad values name the option; durations take 1h and 1m30s;
#     fakeres takes --name=value;
#   - the event log: RFC 3339 wall-clock times, --log-file, --log-format
#     json (each line a JSON object; the pool's key=value words become
#     members), --log-level; bad values named.
. "$(dirname "$0")/lib.sh"
need python3 "$RESPOOL_BIN" "$FAKERES_BIN"

start_fakeres fr --answer -r name=a
A=$(fakeres_udp fr 0)
A_IP=${A%:*}
A_PORT=${A##*:}

# wait_grep FILE PATTERN: waits up to 5 s for PATTERN in FILE.
wait_grep() {
  local i
  for i in $(seq 1 50); do
    grep -q -- "$2" "$1" && return 0
    sleep 0.1
  done
  return 1
}

# expect_exit CODE NAME PATTERN ARGS...: runs respool, checks its exit
# code and that its stderr holds PATTERN (grep -E).
expect_exit() {
  local want=$1 name=$2 pattern=$3 rc
  shift 3
  timeout 10 "$RESPOOL_BIN" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  rc=$?
  [ "$rc" -eq "$want" ] ||
    fail "$name: exit $rc, wants $want: $(cat "$WORK/$name.err")"
  grep -Eq -- "$pattern" "$WORK/$name.err" ||
    fail "$name: stderr lacks /$pattern/: $(cat "$WORK/$name.err")"
  note "$name: exit $rc: $(grep -E -- "$pattern" "$WORK/$name.err" | head -1)"
}

expect_exit 2 remote "--listen: listen address 0\.0\.0\.0:0 is not a loopback address.*--allow-remote" \
  -r "$A" -l 0.0.0.0:0
echo '{"listen": "0.0.0.0:0", "resolvers": ["'"$A"'"]}' >"$WORK/remote.json"
expect_exit 2 remote_config "remote\.json: listen address 0\.0\.0\.0:0 is not a loopback address" \
  -c "$WORK/remote.json"
expect_exit 2 stats_path "--stats-json: cannot write in $WORK/none: No such file" \
  -r "$A" --stats-json "$WORK/none/stats.json"
expect_exit 2 scores_path "--scores: cannot write in $WORK/none: No such file" \
  -r "$A" --scores "$WORK/none/scores.json"
echo '{"scores_file": "'"$WORK"'/none/s.json", "resolvers": ["'"$A"'"]}' >"$WORK/scores.json"
expect_exit 2 scores_config "scores\.json: scores_file: cannot write in $WORK/none" -c "$WORK/scores.json"

# --allow-remote: starts, and says so.
start_respool allowed -r "$A" -l 0.0.0.0:0 --allow-remote
grep -q "warn --allow-remote: whoever reaches 0.0.0.0:" "$WORK/allowed.err" ||
  fail "--allow-remote: no warning: $(cat "$WORK/allowed.err")"
stop_respool allowed

# Duplicates, the start-up line and the check's outcome; then the stats
# file's folder removed while running: reported once.
mkdir -p "$WORK/st"
start_respool dup -r "$A" -r "udp://$A" -r "$A_IP:$A_PORT" --stats-json "$WORK/st/s.json" --stats 100ms
wait_json "$WORK/st/s.json" 'j["pool"]["nup"] >= 1' 5 >/dev/null ||
  fail "duplicates: the resolver did not join"
n=$(json_get "$WORK/st/s.json" 'len(j["resolvers"])')
[ "$n" = 1 ] || fail "duplicates: $n pool members, wants 1"
[ "$(grep -c "info resolver .* is the same as $A: used once" "$WORK/dup.err")" = 2 ] ||
  fail "duplicates: notes: $(cat "$WORK/dup.err")"
grep -q "listening on 127.0.0.1:$RP_PORT (UDP and TCP), 1 resolver, start-up check: example.com" "$WORK/dup.err" ||
  fail "no start-up line: $(cat "$WORK/dup.err")"
wait_grep "$WORK/dup.err" "start-up check: 1 of 1 resolvers passed" ||
  fail "no check summary: $(cat "$WORK/dup.err")"
# Moved away in one step, then removed: a plain rm -rf raced the writer,
# whose temporary file could appear between rm's unlinks and its rmdir
# ("Directory not empty"; the folder stayed and nothing failed).
mv "$WORK/st" "$WORK/st.gone"
rm -rf "$WORK/st.gone" 2>/dev/null || true
sleep 0.5
[ "$(grep -c "warn --stats-json: cannot write $WORK/st/s.json" "$WORK/dup.err")" = 1 ] ||
  fail "stats write failure not reported once: $(cat "$WORK/dup.err")"
mkdir -p "$WORK/st"
sleep 0.5
grep -q "info --stats-json: $WORK/st/s.json written again" "$WORK/dup.err" ||
  fail "stats recovery not reported: $(cat "$WORK/dup.err")"
stop_respool dup
note "duplicates merged, start-up line, check outcome, stats write failure reported once"

# --resolvers-file: comments, blank lines, blanks around a URL.
printf '# resolvers for the test\n\n  %s   # the live one\n\t127.0.0.1:9\n' "$A" >"$WORK/list.txt"
start_respool listed --resolvers-file "$WORK/list.txt" --stats-json "$WORK/listed.json" --stats 100ms
wait_json "$WORK/listed.json" 'len(j["resolvers"]) == 2 and j["pool"]["nup"] >= 1' 5 >/dev/null ||
  fail "--resolvers-file: $(cat "$WORK/listed.err")"
stop_respool listed
printf '%s\n8.8.8.8:99999\n' "$A" >"$WORK/bad.txt"
expect_exit 2 list_bad "bad\.txt: line 2: bad port \(8\.8\.8\.8:99999\)" --resolvers-file "$WORK/bad.txt"
expect_exit 2 list_missing "nothere\.txt: cannot read: No such file" --resolvers-file "$WORK/nothere.txt"
note "--resolvers-file: comments and blanks skipped; errors name file and line"

# --resolver-list alone: the list's one candidate, nothing else.
echo "$A" >"$WORK/cands.txt"
start_respool listonly --resolver-list "$WORK/cands.txt" -v
wait_grep "$WORK/listonly.err" "ev=disc_start" || fail "--resolver-list: no discovery: $(cat "$WORK/listonly.err")"
grep -q "ev=disc_start candidates=1 " "$WORK/listonly.err" ||
  fail "--resolver-list probed more than the list: $(grep ev=disc_start "$WORK/listonly.err")"
stop_respool listonly
note "--resolver-list alone: $(grep -o 'ev=disc_start candidates=[0-9]*' "$WORK/listonly.err")"

# An outbound of an unknown type, a CA file that is not there.
echo '{"type": "vless", "resolvers": ["'"$A"'"], "smart_pool": {"enabled": true}}' >"$WORK/type.json"
expect_exit 2 bad_type "type\.json: type: expected auto, dnstt, masterdns or generic \(\"vless\"\)" -c "$WORK/type.json"
expect_exit 2 tls_ca_missing "command line: --tls-ca: cannot read $WORK/ca.pem: No such file" -r "$A" --tls-ca "$WORK/ca.pem"

# discover's errors name the option; compound durations; --name=value.
expect_exit 2 disc_want "respool discover: command line: --want: bad number \(0; 1 to 1000000\)" discover --want 0
expect_exit 2 disc_timeout "command line: --timeout: bad duration \(5; use e.g. 500ms\)" discover --timeout 5
"$RESPOOL_BIN" -r "$A" --stats 1m30s --set token_wait=1s500ms --check-config >/dev/null 2>"$WORK/dur.err" ||
  fail "compound durations refused: $(cat "$WORK/dur.err")"
"$RESPOOL_BIN" -r "$A" --set deadline=1h --check-config >/dev/null 2>"$WORK/dur.err" ||
  fail "1h refused: $(cat "$WORK/dur.err")"
timeout 2 "$FAKERES_BIN" --seed=3 --answer -r name=x >"$WORK/seed.out" 2>"$WORK/seed.err"
grep -q '"name":"x"' "$WORK/seed.out" || fail "fakeres --seed=3: $(cat "$WORK/seed.err")"
note "discover errors name the option; 1m30s, 1s500ms, 1h taken; fakeres --seed=3 taken"

# --check-config and --version.
out=$("$RESPOOL_BIN" -r "$A" -r "udp://$A" --resolvers-file "$WORK/list.txt" --check-config 2>"$WORK/cc.err") ||
  fail "--check-config on a good configuration: $(cat "$WORK/cc.err")"
echo "$out" | grep -q "configuration OK: 2 resolvers, listen 127.0.0.1:0, kind auto, start-up check example.com" ||
  fail "--check-config: $out"
expect_exit 2 check_bad "--listen: listen address 0\.0\.0\.0:53 is not a loopback" \
  -r "$A" -l 0.0.0.0:53 --check-config
"$RESPOOL_BIN" --version | grep -Eq "^libuv [0-9.]+, OpenSSL 3" || fail "--version: $("$RESPOOL_BIN" --version)"
note "--check-config: $out"

# The event log: a file, JSON lines, levels.
start_respool logged -r 127.0.0.1:9 --log-file "$WORK/log.jsonl" --log-format json -v
wait_grep "$WORK/log.jsonl" "no resolver passed" || fail "--log-file: $(cat "$WORK/log.jsonl")"
stop_respool logged
python3 - "$WORK/log.jsonl" <<'PY' || fail "--log-format json: $(cat "$WORK/log.jsonl")"
import json, re, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", l["time"]) for l in lines), lines
assert any(l.get("ev") == "check_failed" and l.get("res") == "127.0.0.1:9" for l in lines), lines
assert any(l["level"] == "warn" and "no resolver passed" in l.get("msg", "") for l in lines), lines
PY
[ ! -s "$WORK/logged.err" ] || fail "--log-file: lines still on stderr: $(cat "$WORK/logged.err")"
start_respool quiet -r 127.0.0.1:9 --log-level warn
wait_grep "$WORK/quiet.err" "warn no resolver passed" || fail "--log-level warn: $(cat "$WORK/quiet.err")"
! grep -q " info " "$WORK/quiet.err" || fail "--log-level warn shows info: $(cat "$WORK/quiet.err")"
stop_respool quiet
grep -Eq "^respool: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z warn " "$WORK/quiet.err" ||
  fail "text log without a wall-clock time: $(cat "$WORK/quiet.err")"
expect_exit 2 log_level_bad "--log-level: expected error, warn, info or debug \(loud\)" -r "$A" --log-level loud
expect_exit 2 log_format_bad "--log-format: expected text or json \(xml\)" -r "$A" --log-format xml
expect_exit 2 log_file_bad "--log-file: cannot open $WORK/none/x.log" -r "$A" --log-file "$WORK/none/x.log"
note "event log: file, JSON lines, levels, RFC 3339 times"

# SIGHUP: a reload that changes nothing; the pool runs on.
start_respool hup -r "$A" --scores "$WORK/hup-scores.json"
wait_grep "$WORK/hup.err" "start-up check: 1 of 1" || fail "SIGHUP run: $(cat "$WORK/hup.err")"
kill -HUP "$RP_PID"
wait_grep "$WORK/hup.err" "info SIGHUP: configuration reloaded: 0 resolvers added, 0 removed, 1 kept" ||
  fail "SIGHUP: no reload line: $(cat "$WORK/hup.err")"
kill -0 "$RP_PID" 2>/dev/null || fail "SIGHUP stopped respool"
kill -TERM "$RP_PID"
wait "$RP_PID"
rc=$?
[ "$rc" = 0 ] || fail "SIGTERM after SIGHUP: exit $rc: $(cat "$WORK/hup.err")"
[ -s "$WORK/hup-scores.json" ] || fail "SIGTERM after SIGHUP: scores not saved"
note "SIGHUP: reloaded, still running; SIGTERM: exit 0, scores saved"

# No resolver passes: a warning at the default level.
start_respool none -r 127.0.0.1:9
wait_grep "$WORK/none.err" "warn no resolver passed its start-up check" ||
  fail "no warning when every check failed: $(cat "$WORK/none.err")"
stop_respool none
echo ok
