#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A long dump shows its progress on a terminal, and stays quiet otherwise.
#
# usage: progress.sh CRF WL_MEMORY
set -u
CRF=$1 WL=$2
T=$(mktemp -d /tmp/crf-progress-XXXXXX)
pid=
cleanup() {
	[[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
passed=0 failed=0

start() {
	# 1 GiB of random memory: a dump long enough for the progress line.
	CRF_TEST_READY=$T/ready "$WL" 1024 </dev/null >"$T/wl.log" 2>&1 &
	pid=$!
	for _ in $(seq 600); do [[ -e $T/ready ]] && return 0; sleep 0.1; done
	echo "FAIL: the workload did not get ready"; cat "$T/wl.log"; exit 1
}

# On a terminal (script(1) gives the dump one): "N of M MiB" lines.
start
script -qec "$CRF dump -t $pid -D $T/img1 --leave-running" /dev/null >"$T/tty.out" 2>&1
if grep -aqE "crf\[mem\]: pid $pid: [0-9]+ of [0-9]+ MiB" "$T/tty.out"; then
	passed=$((passed + 1))
else
	echo "FAIL: no progress line on a terminal:"; cat -A "$T/tty.out" | head -5
	failed=$((failed + 1))
fi
# Not a terminal: nothing at all.
"$CRF" dump -t "$pid" -D "$T/img2" --leave-running >"$T/plain.out" 2>&1
if [[ -s $T/plain.out ]]; then
	echo "FAIL: the dump printed something without a terminal:"; cat -A "$T/plain.out" | head -5
	failed=$((failed + 1))
else
	passed=$((passed + 1))
fi
echo "progress: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
