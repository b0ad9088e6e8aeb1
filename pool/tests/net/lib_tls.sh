# lib_tls.sh: helpers for the DoT/DoH integration scripts (sourced after
# lib.sh). They make a throw-away CA and a leaf certificate for dns.test
# with the openssl command and run Debian's dnsdist (DoT with
# addTLSLocal, DoH over HTTP/2 with addDOHLocal) on free loopback ports in
# front of a fakeres. Every process is recorded in PIDS (lib.sh kills
# them at exit).

# tls_backend: what the DoT/DoH checks start with: their tools, the
# certificates in $WORK (make_certs), a fakeres "fr" answering every
# query, and two free ports DOT and DOH for dnsdist.
tls_backend() {
  need dig dnsdist openssl python3 "$RESPOOL_BIN" "$FAKERES_BIN"
  make_certs "$WORK"
  start_fakeres fr --answer
  DOT=$(free_port)
  DOH=$(free_port)
}

# free_port: prints a free TCP port of 127.0.0.1 (UDP too, usually).
free_port() {
  python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# make_certs DIR: DIR/ca.pem (the CA), DIR/leaf.pem and DIR/leaf.key (for
# dns.test, signed by the CA), DIR/other.pem (a second, unrelated CA).
make_certs() {
  local d=$1
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -days 2 -subj "/CN=respool test CA" -keyout "$d/ca.key" -out "$d/ca.pem" \
    -addext basicConstraints=critical,CA:TRUE \
    -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null ||
    fail "openssl: cannot make the CA"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -subj "/CN=dns.test" -keyout "$d/leaf.key" -out "$d/leaf.csr" \
    2>/dev/null || fail "openssl: cannot make the leaf key"
  printf 'subjectAltName=DNS:dns.test\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
    >"$d/leaf.ext"
  openssl x509 -req -in "$d/leaf.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
    -CAcreateserial -days 2 -extfile "$d/leaf.ext" -out "$d/leaf.pem" \
    2>/dev/null || fail "openssl: cannot sign the leaf"
}

# wait_tcp PORT: waits up to 10 s for 127.0.0.1:PORT to accept.
wait_tcp() {
  python3 - "$1" <<'PYEOF' || fail "nothing listens on port $1"
import socket, sys, time
t0 = time.monotonic()
while time.monotonic() - t0 < 10:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)
PYEOF
}

# start_dnsdist NAME BACKEND DOT_PORT DOH_PORT [LUA]: writes
# $WORK/NAME.conf (DoT on DOT_PORT, DoH on DOH_PORT path /dns-query with
# an idle timeout of DD_IDLE seconds (30), forwarding to the UDP address
# BACKEND, plus the extra LUA lines) and runs dnsdist; sets DD_PID and
# DD_UDP (the plain DNS port, kept across restarts).
start_dnsdist() {
  local name=$1 backend=$2 dot=$3 doh=$4 extra=${5:-}
  DD_UDP=${DD_UDP:-$(free_port)}
  cat >"$WORK/$name.conf" <<CONF
setLocal("127.0.0.1:$DD_UDP")
setSecurityPollSuffix("")
newServer({address="$backend", checkInterval=3600, mustResolve=false})
addTLSLocal("127.0.0.1:$dot", "$WORK/leaf.pem", "$WORK/leaf.key")
addDOHLocal("127.0.0.1:$doh", "$WORK/leaf.pem", "$WORK/leaf.key", "/dns-query", {idleTimeout=${DD_IDLE:-30}})
$extra
CONF
  dnsdist --supervised --disable-syslog -C "$WORK/$name.conf" \
    >"$WORK/$name.out" 2>&1 &
  DD_PID=$!
  PIDS="$PIDS $DD_PID"
  wait_tcp "$dot"
  wait_tcp "$doh"
}
