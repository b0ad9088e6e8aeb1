#!/usr/bin/env bash
# CPack's .deb: `cpack -G DEB` in the build directory makes a package
# whose contents are what `cmake --install` puts in place, under /usr,
# with the shared libraries' packages as dependencies; the packaged
# respool, unpacked, runs.
. "$(dirname "$0")/lib.sh"
need cpack dpkg-deb dpkg-shlibdeps

cd "$RP_BUILD_DIR" || fail "no build directory $RP_BUILD_DIR"
cpack -G DEB -B "$WORK/pkg" >"$WORK/cpack.log" 2>&1 ||
  fail "cpack -G DEB: $(tail -8 "$WORK/cpack.log")"
deb=$(find "$WORK/pkg" -maxdepth 1 -name 'respool_*.deb' | head -1)
[ -n "$deb" ] || fail "no respool_*.deb in $WORK/pkg: $(ls "$WORK/pkg")"
dpkg-deb -c "$deb" >"$WORK/contents" || fail "dpkg-deb -c $deb"
for f in ./usr/bin/respool ./usr/include/respool/respool.h \
  ./usr/include/respool/respool_net.h ./usr/share/man/man1/respool.1 \
  respool.pc respoolConfig.cmake respool.service librp_net.a; do
  grep -q -- "$f" "$WORK/contents" || fail "not in the package: $f"
done
dpkg-deb -f "$deb" Package Version Depends >"$WORK/fields"
grep -q '^Package: respool$' "$WORK/fields" || fail "package name: $(cat "$WORK/fields")"
for lib in libuv1 libssl3 libcjson1 libnghttp2; do
  grep -q "^Depends:.*$lib" "$WORK/fields" || fail "Depends lacks $lib: $(cat "$WORK/fields")"
done
dpkg-deb -x "$deb" "$WORK/root" || fail "dpkg-deb -x"
"$WORK/root/usr/bin/respool" --version >"$WORK/version" 2>&1 ||
  fail "the packaged respool does not run: $(cat "$WORK/version")"
note "$(basename "$deb"): $(grep '^Depends' "$WORK/fields")"
echo ok
