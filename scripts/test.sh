#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Install dependencies, build with warnings as errors under AddressSanitizer
# and UndefinedBehaviorSanitizer, and run every test.
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
python3 - "$B/meson-logs/testlog.json" <<'PY'
import json, sys
ok = bad = skip = 0
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    if r in ("OK", "EXPECTEDFAIL"):
        ok += 1
    elif r == "SKIP":
        skip += 1
    else:
        bad += 1
print(f"{ok} passed, {bad} failed, {skip} skipped")
PY
exit $status
