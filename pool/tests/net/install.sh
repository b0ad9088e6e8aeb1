#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then outside programs built
# against the installed library, as a user of the library would: one with
# pkg-config (cc examples/embed.c $(pkg-config --cflags --libs respool)),
# one with the CMake package (find_package(respool), respool::respool).
# Both run a pool over a fake resolver and answer a dig through it. The
# man page names every long option of --help.
. "$(dirname "$0")/lib.sh"
need cc cmake pkg-config dig python3 "$FAKERES_BIN"

P="$WORK/prefix"
cmake --install "$RP_BUILD_DIR" --prefix "$P" >"$WORK/install.log" 2>&1 ||
  fail "cmake --install: $(tail -5 "$WORK/install.log")"
for f in bin/respool include/respool/respool.h include/respool/respool_net.h \
  include/respool/respool_config.h share/man/man1/respool.1; do
  [ -e "$P/$f" ] || fail "not installed: $f"
done
PC=$(dirname "$(find "$P" -name respool.pc | head -1)")
[ -n "$PC" ] && [ -f "$PC/respool.pc" ] || fail "no respool.pc installed"
find "$P" -name respoolConfig.cmake | grep -q . || fail "no CMake package installed"
find "$P" -name respool.service | grep -q . || fail "no systemd unit installed"
find "$P" -name librp_net.a | grep -q . || fail "no library installed"
"$P/bin/respool" --version >/dev/null || fail "installed respool does not run"

# pkg-config, and the CMake package, each from outside the source tree.
cc -o "$WORK/embed-pc" "$RP_SOURCE_DIR/examples/embed.c" \
  $(PKG_CONFIG_PATH="$PC" pkg-config --cflags --libs respool) >"$WORK/cc.log" 2>&1 ||
  fail "build with pkg-config: $(tail -5 "$WORK/cc.log")"
cmake -S "$RP_SOURCE_DIR/examples" -B "$WORK/embed-cmake" -DCMAKE_PREFIX_PATH="$P" \
  >"$WORK/cmake.log" 2>&1 && cmake --build "$WORK/embed-cmake" >>"$WORK/cmake.log" 2>&1 ||
  fail "build with the CMake package: $(tail -8 "$WORK/cmake.log")"

start_fakeres fr --answer -r name=a
A=$(fakeres_udp fr 0)
for prog in "$WORK/embed-pc" "$WORK/embed-cmake/embed"; do
  "$prog" 4 "$A" >"$WORK/embed.out" 2>"$WORK/embed.err" &
  pid=$!
  wait_line "$WORK/embed.out"
  addr=$(head -1 "$WORK/embed.out")
  sleep 0.5
  a=$(dig @"${addr%:*}" -p "${addr##*:}" +short +tries=2 +time=1 hello.example A)
  [ "$a" = 127.0.0.1 ] || fail "$prog: dig through the embedded pool: '$a' $(cat "$WORK/embed.err")"
  wait "$pid" || fail "$prog exited $?: $(cat "$WORK/embed.err")"
  note "$(basename "$prog"): answered through the installed library"
done

# The man page names every long option of --help.
missing=$("$P/bin/respool" --help | grep -o -- '--[a-z][a-z-]*' | sort -u |
  while read -r o; do
    grep -q -- "$(echo "$o" | sed 's/-/\\\\-/g')" "$P/share/man/man1/respool.1" || echo "$o"
  done)
[ -z "$missing" ] || fail "man page lacks: $missing"
echo ok
