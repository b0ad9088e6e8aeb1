#!/usr/bin/env bash
# The Prometheus endpoint (--metrics): curl of /metrics parsed by a check
# of the text exposition format (HELP and TYPE before the samples, metric
# and label names, escaped label values, float values, counters named
# *_total), the counts agreeing with the queries sent; other paths 404,
# other methods 405, an oversized request 431, more than 16 connections
# closed at once, a non-loopback address refused without --allow-remote.
. "$(dirname "$0")/lib.sh"
need curl python3 "$RESPOOL_BIN" "$FAKERES_BIN"

start_fakeres fr --answer -r name=a -r name=b
A=$(fakeres_udp fr 0)
B=$(fakeres_udp fr 1)

if "$RESPOOL_BIN" -r "$A" --metrics 0.0.0.0:0 >"$WORK/remote.out" 2>"$WORK/remote.err"; then
  fail "--metrics 0.0.0.0:0 accepted"
fi
grep -q -- "--metrics: 0.0.0.0:0 is not a loopback address" "$WORK/remote.err" ||
  fail "--metrics remote: $(cat "$WORK/remote.err")"
if "$RESPOOL_BIN" -r "$A" --metrics nope >/dev/null 2>"$WORK/bad.err"; then
  fail "--metrics nope accepted"
fi
grep -q -- "--metrics: bad address (nope" "$WORK/bad.err" || fail "--metrics nope: $(cat "$WORK/bad.err")"

start_respool rp -r "$A" -r "$B" --metrics 127.0.0.1:0
for i in $(seq 1 50); do
  grep -q "metrics on http://" "$WORK/rp.err" && break
  sleep 0.1
done
URL=$(grep -o "http://[0-9.:]*/metrics" "$WORK/rp.err" | head -1)
[ -n "$URL" ] || fail "no metrics address logged: $(cat "$WORK/rp.err")"
for i in $(seq 1 50); do
  grep -q "start-up check: 2 of 2" "$WORK/rp.err" && break
  sleep 0.1
done

python3 - "$RP_HOST" "$RP_PORT" <<'EOF' || fail "queries through the pool"
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
for i in range(40):
    name = b"".join(bytes([len(l)]) + l for l in (b"m%d" % i, b"example")) + b"\0"
    s.sendto(struct.pack(">HHHHHH", i, 0x0100, 1, 0, 0, 0) + name + b"\0\1\0\1", (sys.argv[1], int(sys.argv[2])))
    s.recv(4096)
EOF

curl -sf "$URL" >"$WORK/metrics.txt" || fail "curl $URL"
python3 - "$WORK/metrics.txt" <<'EOF' || fail "exposition format: $(head -30 "$WORK/metrics.txt")"
import re, sys
NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\\\|\\"|\\n)*"'
SAMPLE = re.compile(r"^(%s)(\{%s(?:,%s)*\})? (-?[0-9.eE+-]+|NaN|[+-]Inf)$" % (NAME, LABEL, LABEL))
types, helps, samples = {}, set(), {}
for n, line in enumerate(open(sys.argv[1]).read().split("\n"), 1):
    if line == "":
        continue
    if line.startswith("# HELP "):
        name = line.split(" ")[2]
        assert re.fullmatch(NAME, name), (n, line)
        helps.add(name)
        continue
    if line.startswith("# TYPE "):
        _, _, name, kind = line.split(" ")
        assert kind in ("counter", "gauge"), (n, line)
        assert name not in types, ("TYPE twice", n, line)
        assert name in helps, ("TYPE without HELP", n, line)
        types[name] = kind
        continue
    m = SAMPLE.match(line)
    assert m, ("not a sample", n, line)
    name = m.group(1)
    assert name in types, ("sample before its TYPE", n, line)
    if types[name] == "counter":
        assert name.endswith("_total"), ("counter not *_total", n, line)
    float(m.group(3))
    samples.setdefault(name, []).append((m.group(2) or "", float(m.group(3))))
q = samples["respool_queries_total"][0][1]
d = samples["respool_delivered_total"][0][1]
assert q >= 40 and d >= 40, (q, d)
per = samples["respool_resolver_answered_total"]
assert len(per) == 2 and sum(v for _, v in per) >= 40, per
assert samples["respool_resolvers_up"][0][1] == 2
print("note: %d metrics, %d samples; queries %d, delivered %d" %
      (len(types), sum(len(v) for v in samples.values()), q, d))
EOF

base=${URL%/metrics}
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/other")" = 404 ] || fail "GET /other: not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL")" = 405 ] || fail "POST: not 405"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $(head -c 5000 /dev/zero | tr '\0' a)" "$URL")" = 431 ] ||
  fail "oversized request: not 431"

# A hostile local client: 40 idle connections; the endpoint keeps serving
# (at most 16 held) and the DNS side is untouched.
python3 - "${base#http://}" <<'EOF' || fail "connection flood"
import socket, sys, time, urllib.request
host, port = sys.argv[1].rsplit(":", 1)
held = []
for i in range(40):
    s = socket.create_connection((host, int(port)))
    held.append(s)
time.sleep(0.3)
closed = 0
for s in held:
    s.settimeout(0.2)
    try:
        if s.recv(1) == b"":
            closed += 1
    except socket.timeout:
        pass
assert closed >= 40 - 16, closed
print("note: %d of 40 idle connections closed at once" % closed)
for s in held:
    s.close()
time.sleep(0.2)
body = urllib.request.urlopen("http://%s:%s/metrics" % (host, port), timeout=3).read()
assert b"respool_queries_total" in body
EOF
stop_respool rp
echo ok
