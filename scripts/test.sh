#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Install dependencies, build with warnings as errors under AddressSanitizer
# and UndefinedBehaviorSanitizer, and run every test; then the fuzzer's
# smoke run (clang, build-fuzz) and the demonstration's plain build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
B=build-test
if [[ ! -d $B ]]; then
	meson setup "$B" -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false \
		>/dev/null
fi
ninja -C "$B"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
meson test -C "$B" --print-errorlogs --num-processes 2 || status=$?
# The fuzzer's smoke run (tests/fuzz/, clang's libFuzzer): its seed corpus
# and what it finds in 45 s; scripts/fuzz.sh SECONDS for a long run.
scripts/fuzz.sh 45 || status=$?
# The demonstration's build (scripts/demo.sh, build/): no sanitizers, where
# gcc's flow analysis warns about other things; warnings are errors there too.
[[ -d build ]] || meson setup build -Dwerror=true >/dev/null
if ! out=$(ninja -C build 2>&1); then
	echo "$out" | grep -E 'error|FAILED' | head -30
	echo "test.sh: the demonstration's build (build/) fails"
	status=1
fi
# The summary: a skip (exit 77) says what the machine lacks on a "SKIP: " line,
# a downgrade (a test that checked less than it says) on a "NOTE " line.
python3 - "$B/meson-logs/testlog.json" <<'PY'
import json, sys
ok = bad = skip = 0
skips, notes = [], []
for line in open(sys.argv[1]):
    t = json.loads(line)
    r, name = t["result"], t["name"].split(" / ")[-1]
    out = ((t.get("stdout") or "") + "\n" + (t.get("stderr") or "")).splitlines()
    if r in ("OK", "EXPECTEDFAIL"):
        ok += 1
    elif r == "SKIP":
        skip += 1
        why = [l[6:] for l in out if l.startswith("SKIP: ")]
        skips.append(f"{name}: {why[0] if why else 'no reason given'}")
    else:
        bad += 1
    notes += [f"{name}: {l[5:]}" for l in out if l.startswith("NOTE ")]
for s in skips:
    print(f"skipped {s}")
print(f"{ok} passed, {bad} failed, {skip} skipped")
print(f"{len(notes)} downgraded{':' if notes else ''}")
for n in notes:
    print(f"  {n}")
PY
exit $status
