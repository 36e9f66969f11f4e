#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A time namespace restored as if on another boot (or host): wl-timens MODE
# is dumped, each timens-*.img rewritten by img-tamper with another boot id
# and the namespace's clocks at the dump 100 days later than they were, and
# restored: crf must raise the offsets (the namespace's clocks at least
# those values), which wl-timens ... moved checks from inside, and say so.
#
# usage: timens-moved.sh CRF IMG_TAMPER WL_TIMENS MODE IMAGE_DIR
set -u
CRF=$1 TAMPER=$2 WL=$3 MODE=$4 DIR=$5
T=$(mktemp -d /tmp/crf-timens-moved-XXXXXX)
pid=

cleanup() {
	[[ $pid ]] && pkill -KILL -s "$pid" 2>/dev/null
	rm -rf "$T" "$DIR"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	for f in "$T"/*.log; do
		echo "  $f:"
		sed 's/^/    | /' "$f" | tail -20
	done
	exit 1
}

rm -rf "$DIR"
export CRF_TEST_READY=$T/ready CRF_TEST_VERIFY=$T/verify CRF_TEST_TIMEOUT=60 CRF_TEST_TMPDIR=$T
# In a session of its own, with no fd of ours.
setsid python3 -c 'import os, sys; os.closerange(3, 4096); os.execvp(sys.argv[1], sys.argv[1:])' \
	"$WL" "$MODE" moved </dev/null >"$T/wl.log" 2>&1 &
pid=$!
for _ in $(seq 200); do
	[[ -e $T/ready ]] && break
	sleep 0.05
done
[[ -e $T/ready ]] || fail "wl-timens never got ready"
"$CRF" dump -t "$pid" -D "$DIR" >"$T/dump.log" 2>&1 || fail "crf dump"
wait "$pid" 2>/dev/null
n=0
for f in "$DIR"/timens-*.img; do
	[[ -e $f ]] || fail "no timens-*.img in the dump"
	"$TAMPER" "$DIR" "$(basename "$f")" 0:boot_id=00000000-another-boot \
		0:monotonic_ns+=8640000000000000 0:boottime_ns+=8640000000000000 \
		>"$T/tamper.log" 2>&1 || fail "img-tamper $f"
	n=$((n + 1))
done
"$CRF" restore -d -v -D "$DIR" >"$T/restore.log" 2>&1 || fail "crf restore"
grep -q 'dumped on boot 00000000-another-boot' "$T/restore.log" ||
	fail "the restore did not say it raised the offsets"
touch "$T/verify"
for _ in $(seq 600); do
	grep -q '^wl-timens: \(verified\|FAIL\)' "$T/wl.log" && break
	sleep 0.05
done
grep -q '^wl-timens: verified' "$T/wl.log" || fail "wl-timens $MODE moved: not verified"
echo "ok: $n time namespace(s) restored with raised offsets, clocks not back"
