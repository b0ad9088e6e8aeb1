#!/usr/bin/env bash
# 0x20 against blind forgery (the reliability issue's item 3, the part
# about upstream entropy; pool/core/case.h): with --kind generic each
# try's question name goes out with the case of its letters at random,
# and only an answer that repeats that case is taken.
#
# A hostile resolver answers every query, except names starting with
# "forgery": for those it first sends two answers with the right ID and
# question, aimed at the query's own source port (a forger who has
# everything but the case), whose name is the client's spelling (lower
# case) and the case it received swapped, with the address 6.6.6.6;
# then 50 ms later the genuine answer (192.0.2.1) in the case it got.
#
# - --set case_randomize=0: the forgery in the client's spelling is
#   delivered (the test's own check that it catches the defect).
# - The default (generic): the forgeries are not delivered (counted
#   spoofed and case_mismatches), the genuine answer is; every answer
#   carries the client's own case (mixed-case names), and the resolver
#   saw the names in other cases.
# - A resolver that lower-cases the question of its answers (otherwise
#   correct) falls back (the log says so, the stats show it) and every
#   query is answered.
# - dig and kdig through respool to fakeres --answer: answered, the
#   question in the case asked, nothing counted spoofed.
# - --list-settings shows case_randomize 1 for generic, 0 for dnstt and
#   masterdns even with --set case_randomize=1.
. "$(dirname "$0")/lib.sh"
need python3 dig kdig "$RESPOOL_BIN" "$FAKERES_BIN"

# hostile RUN MODE: the resolver (hostile.py: MODE case or fold); its
# port goes to $WORK/RUN.port, the names it got to $WORK/RUN.log.
hostile() {
  python3 "$RP_SOURCE_DIR/pool/tests/net/hostile.py" "$WORK/$1" "$2" &
  PIDS="$PIDS $!"
  wait_line "$WORK/$1.port"
}

# client NAME...: asks each NAME (type A) in turn; prints one line per
# name: the answer's address (or timeout, rcodeN) and "case=ok" when the
# answer's question is the query's byte for byte, else "case=bad".
client() {
  python3 - "$RP_HOST" "$RP_PORT" "$@" <<'EOF'
import socket, struct, sys
host, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
for i, name in enumerate(sys.argv[3:]):
    qname = b"".join(bytes([len(l)]) + l.encode()
                     for l in name.split(".")) + b"\0"
    question = qname + b"\0\1\0\1"
    s.sendto(struct.pack("!HHHHHH", 100 + i, 0x0100, 1, 0, 0, 0) + question,
             (host, port))
    try:
        a = s.recv(4096)
    except socket.timeout:
        print("timeout")
        continue
    case = "ok" if a[12:12 + len(question)] == question else "bad"
    if a[3] & 0xF == 0 and len(a) >= 16:
        print("%s case=%s" % (".".join(str(b) for b in a[-4:]), case))
    else:
        print("rcode%d case=%s" % (a[3] & 0xF, case))
EOF
}

# The setting: on for generic (and auto, generic's until the verdict),
# off for the tunnels whatever --set says.
"$RESPOOL_BIN" --list-settings | grep -Eq "^ +case_randomize +1 " ||
  fail "--list-settings: $("$RESPOOL_BIN" --list-settings | grep case_)"
for k in dnstt masterdns; do
  "$RESPOOL_BIN" --list-settings --kind $k --set case_randomize=1 |
    grep -Eq "^ +case_randomize +0 " || fail "case_randomize on for kind $k"
done

WARM="Warm1.ExAmPle.net warm2.example.NET WARM3.EXAMPLE.NET wArM4.eXaMpLe.NeT"
FORGE=forgery-check.example.net

# 0x20 off: the forgery in the client's spelling is delivered.
hostile off case
start_respool off -r "127.0.0.1:$(cat "$WORK/off.port")" --kind generic \
  --pretest "" --set case_randomize=0
client $WARM $FORGE >"$WORK/off.answers"
stop_respool off
note "case_randomize=0: $(tr '\n' ' ' <"$WORK/off.answers")"
[ "$(tail -1 "$WORK/off.answers" | cut -d' ' -f1)" = 6.6.6.6 ] ||
  fail "with 0x20 off the forgery should get through (the test's own check): $(cat "$WORK/off.answers")"
grep -q "^[0-9.]* case=bad" "$WORK/off.answers" &&
  fail "case changed with 0x20 off: $(cat "$WORK/off.answers")"
# The names went as the client wrote them.
for n in $WARM $FORGE; do
  grep -q " $n\$" "$WORK/off.log" || fail "with 0x20 off $n was not sent as written"
done

# The default for generic: 0x20 on.
hostile on case
start_respool on -r "127.0.0.1:$(cat "$WORK/on.port")" --kind generic \
  --pretest "" --stats-json "$WORK/on.json" --stats 100ms
client $WARM $FORGE >"$WORK/on.answers"
stop_respool on
note "default: $(tr '\n' ' ' <"$WORK/on.answers")"
n=$(grep -c "^192.0.2.1 case=ok$" "$WORK/on.answers")
[ "$n" -eq 5 ] ||
  fail "forged, missing or wrong-case answers with 0x20: $(cat "$WORK/on.answers")"
sent_as_written=0
for n in $WARM $FORGE; do
  grep -q " $n\$" "$WORK/on.log" && sent_as_written=$((sent_as_written + 1))
done
note "names the resolver got in the client's own case: $sent_as_written of" \
  "$(wc -l <"$WORK/on.log") queries; e.g. $(head -2 "$WORK/on.log" | cut -d' ' -f2 | tr '\n' ' ')"
[ "$sent_as_written" -le 1 ] ||
  fail "the resolver got $sent_as_written names in the client's case: $(cat "$WORK/on.log")"
mism=$(json_get "$WORK/on.json" 'j["pool"]["case_mismatches"]')
spoofed=$(json_get "$WORK/on.json" 'j["pool"]["spoofed"]')
fb=$(json_get "$WORK/on.json" 'j["resolvers"][0]["case_fallback"]')
note "case_mismatches=$mism spoofed=$spoofed case_fallback=$fb"
[ "$mism" -ge 2 ] || fail "case_mismatches $mism (want >= 2)"
[ "$spoofed" -ge 2 ] || fail "spoofed $spoofed (want >= 2)"
[ "$fb" = False ] || fail "a case-keeping resolver fell back on forgeries"

# A resolver that answers in lower case falls back, and serves.
hostile fold fold
start_respool fold -r "127.0.0.1:$(cat "$WORK/fold.port")" --kind generic \
  --pretest "" --stats-json "$WORK/fold.json" --stats 100ms
client $WARM a5.example.net a6.example.net a7.example.net \
  >"$WORK/fold.answers"
stop_respool fold
note "folding resolver: $(tr '\n' ' ' <"$WORK/fold.answers")"
n=$(grep -c "^192.0.2.1 case=ok$" "$WORK/fold.answers")
[ "$n" -eq 7 ] || fail "folding resolver: $(cat "$WORK/fold.answers")"
grep -q "ev=case_fallback" "$WORK/fold.err" ||
  fail "no case_fallback in the log: $(tail -5 "$WORK/fold.err")"
[ "$(json_get "$WORK/fold.json" 'j["resolvers"][0]["case_fallback"]')" = True ] ||
  fail "fallback not in the stats"
[ "$(json_get "$WORK/fold.json" 'j["pool"]["case_fallbacks"]')" -eq 1 ] ||
  fail "case_fallbacks: $(json_get "$WORK/fold.json" 'j["pool"]')"

# dig and kdig through respool (generic, 0x20 on) to fakeres --answer.
start_fakeres fr -r name=u --answer
start_respool dig -r "$(fakeres_udp fr 0)" --kind generic \
  --stats-json "$WORK/dig.json" --stats 100ms
for i in 1 2 3; do
  a=$(dig +short +tries=1 +time=3 @"$RP_HOST" -p "$RP_PORT" "MiXeD$i.ExAmPle.ORG" A)
  [ "$a" = 127.0.0.1 ] || fail "dig answered '$a'"
  q=$(dig +noall +question +tries=1 +time=3 @"$RP_HOST" -p "$RP_PORT" \
    "MiXeD$i.ExAmPle.ORG" A | awk '/IN/ {print $1}')
  [ "$q" = ";MiXeD$i.ExAmPle.ORG." ] || fail "dig's question came back as '$q'"
done
a=$(kdig +short +notcp +retry=0 +timeout=3 @"$RP_HOST" -p "$RP_PORT" KnOt.ExAmPle.Org A)
[ "$a" = 127.0.0.1 ] || fail "kdig answered '$a'"
a=$(kdig +short +tcp +retry=0 +timeout=3 @"$RP_HOST" -p "$RP_PORT" KnOt2.ExAmPle.Org A)
[ "$a" = 127.0.0.1 ] || fail "kdig over TCP answered '$a'"
sleep 0.3
stop_respool dig
spoofed=$(json_get "$WORK/dig.json" 'j["pool"]["spoofed"]')
mism=$(json_get "$WORK/dig.json" 'j["pool"]["case_mismatches"]')
[ "$spoofed" -eq 0 ] && [ "$mism" -eq 0 ] ||
  fail "fakeres answers counted spoofed $spoofed, case_mismatches $mism"
echo "ok"
