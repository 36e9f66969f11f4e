#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A restore the core's images cannot support is refused before anything is
# created, with one message:
#
#   the saved XSAVE area holds state of a feature this CPU lacks
#   the dump's CPU enabled a feature this CPU lacks
#   the general registers are not a struct user_regs_struct (0 and 1000 bytes)
#   (control) the same dump, untouched, restores
#
# The dumps are real; core-tamper rewrites them as another CPU's would be,
# or as a hostile image would.
#
# usage: core-refused.sh CRF CORE_TAMPER IMAGE_DIR_BASE
set -u
CRF=$1 TAMPER=$2 BASE=$3
passed=0 failed=0
started=()
OUT=$(mktemp /tmp/crf-core-refused-XXXXXX)

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

# refused NAME OP ARG REGEX: the dump tampered with by "core-tamper OP
# ARG" is refused with one message matching REGEX, and creates no process.
refused() {
	local name=$1 what=$2 arg=$3 re=$4 status
	dumped_sleeper "$name" || return
	if ! "$TAMPER" "$BASE.$name" "$pid" "$what" "$arg" >"$OUT" 2>&1; then
		fail "$name: core-tamper $what $arg"
		return
	fi
	timeout -s KILL 60 "$CRF" restore -D "$BASE.$name" -d >"$OUT" 2>&1
	status=$?
	# 1 is crf's failure; anything else is a crash, a hang or a success (a
	# sanitizer's report, with its own exit status, is a crash too).
	if [[ $status -ne 1 ]] || grep -Eq 'Sanitizer|runtime error' "$OUT"; then
		fail "$name: crf restore exited with $status (not 1) or crashed"
		return
	fi
	if ! grep -Eq -- "$re" "$OUT" || [[ $(grep -c 'error' "$OUT") -ne 1 ]]; then
		fail "$name: one error line, matching /$re/"
		return
	fi
	if [[ -e /proc/$pid ]]; then
		fail "$name: PID $pid exists after the refused restore"
		return
	fi
	passed=$((passed + 1))
}

refused area area missing "pid [0-9]+: thread [0-9]+: its saved XSAVE area cannot be restored here: it holds state of .*XSAVE feature [0-9]+.*, which this CPU .* does not have"
refused cpu cpu missing "the dump was made on a CPU with .*XSAVE feature [0-9]+.*, which this CPU .* lacks"
refused regs0 regs 0 "core-[0-9]+.img: registers of 0 bytes, expected 216"
refused regs1000 regs 1000 "core-[0-9]+.img: registers of 1000 bytes, expected 216"

# The control: an untouched dump of the same kind restores.
if dumped_sleeper control; then
	if "$CRF" restore -D "$BASE.control" -d >"$OUT" 2>&1 && [[ -e /proc/$pid ]]; then
		passed=$((passed + 1))
	else
		fail "control: the untouched dump did not restore"
	fi
	kill -KILL "$pid" 2>/dev/null
fi

echo "core-refused: $passed passed, $failed failed"
((failed == 0 && passed == 5))
