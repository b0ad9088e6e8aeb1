#!/usr/bin/env bash
# The README's loopback quick start, run as written: the shell block under
# "## Quick start on loopback" is taken from README.md and run from the
# source root (where the README's relative paths point), all but its
# "./run.sh build" line (the suite runs from that build already); its dig
# must print the fake resolvers' answer, 127.0.0.1.
. "$(dirname "$0")/lib.sh"
need dig python3

python3 - "$RP_SOURCE_DIR/README.md" "$WORK/quickstart.sh" <<'PY' || fail "no quick start block in README.md"
import sys
text = open(sys.argv[1]).read()
part = text.split("## Quick start on loopback", 1)[1]
block = part.split("```", 2)[1]
# The build line is what the test suite itself stands on (its build/):
# running it again from inside ctest would re-configure the tree the
# other tests run from. Every other line runs as written.
lines = [l for l in block.lstrip("\n").split("\n") if l.strip() != "./run.sh build"]
open(sys.argv[2], "w").write("\n".join(lines))
PY
# The README's paths are build/...: the tests must run from that build.
[ "$(cd "$RP_BUILD_DIR" && pwd)" = "$(cd "$RP_SOURCE_DIR/build" 2>/dev/null && pwd)" ] || {
  note "skip: the tests do not run from $RP_SOURCE_DIR/build, which the README's lines use"
  echo ok
  exit 0
}
(cd "$RP_SOURCE_DIR" && timeout 120 bash -e "$WORK/quickstart.sh") >"$WORK/qs.out" 2>"$WORK/qs.err" ||
  fail "quick start failed: $(tail -5 "$WORK/qs.err")"
grep -qx "127.0.0.1" "$WORK/qs.out" || fail "quick start: dig printed: $(cat "$WORK/qs.out")"
note "README quick start: dig answered $(grep -x 127.0.0.1 "$WORK/qs.out")"
echo ok
