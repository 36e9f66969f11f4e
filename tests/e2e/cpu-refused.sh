#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A restore on a CPU that lacks what the dump's registers need is refused
# before anything is created, naming the feature:
#
#   the saved XSAVE area holds state of a feature this CPU lacks
#   the dump's CPU enabled a feature this CPU lacks
#   (control) the same dump, untouched, restores
#
# The dumps are real; xsave-tamper rewrites them as another CPU's would be.
#
# usage: cpu-refused.sh CRF XSAVE_TAMPER IMAGE_DIR_BASE
set -u
CRF=$1 TAMPER=$2 BASE=$3
passed=0 failed=0
started=()
OUT=$(mktemp /tmp/crf-cpu-refused-XXXXXX)

cleanup() {
	local pid
	for pid in "${started[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	rm -rf "$OUT" "$BASE".*
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	sed 's/^/    | /' "$OUT" | tail -20
	failed=$((failed + 1))
}

# A sleeper of ours, dumped (and so killed) into $BASE.$1; its PID in $pid.
dumped_sleeper() {
	sleep 1000 </dev/null >/dev/null 2>&1 &
	pid=$!
	started+=("$pid")
	if ! "$CRF" dump -t "$pid" -D "$BASE.$1" >"$OUT" 2>&1; then
		fail "$1: crf dump"
		return 1
	fi
	# It was killed by the dump: reap it, so that its PID is free.
	wait "$pid" 2>/dev/null
	return 0
}

# refused NAME TAMPER_ARGS REGEX: the tampered dump's restore fails, says
# REGEX, and creates no process.
refused() {
	local name=$1 what=$2 re=$3
	dumped_sleeper "$name" || return
	if ! "$TAMPER" "$BASE.$name" "$pid" "$what" missing >"$OUT" 2>&1; then
		fail "$name: xsave-tamper $what"
		return
	fi
	if timeout -s KILL 60 "$CRF" restore -D "$BASE.$name" -d >"$OUT" 2>&1; then
		fail "$name: the restore succeeded"
		return
	fi
	if ! grep -Eq -- "$re" "$OUT"; then
		fail "$name: the message must match /$re/"
		return
	fi
	if [[ -e /proc/$pid ]]; then
		fail "$name: PID $pid exists after the refused restore"
		return
	fi
	passed=$((passed + 1))
}

refused area area "pid [0-9]+: thread [0-9]+: its saved XSAVE area cannot be restored here: it holds state of .*XSAVE feature [0-9]+.*, which this CPU .* does not have"
refused cpu cpu "the dump was made on a CPU with .*XSAVE feature [0-9]+.*, which this CPU .* lacks"

# The control: an untouched dump of the same kind restores.
if dumped_sleeper control; then
	if "$CRF" restore -D "$BASE.control" -d >"$OUT" 2>&1 && [[ -e /proc/$pid ]]; then
		passed=$((passed + 1))
	else
		fail "control: the untouched dump did not restore"
	fi
	kill -KILL "$pid" 2>/dev/null
fi

echo "cpu-refused: $passed passed, $failed failed"
((failed == 0 && passed == 3))
