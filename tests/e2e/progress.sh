#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Long dumps and progress: --progress=always prints "N of M MiB" lines,
# the default prints nothing when stderr is not a terminal, and
# --progress=never prints nothing at all.
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

# The workload must hold no fd but 0-2: close what this script inherited.
for fd in $(ls /proc/$$/fd); do
	((fd > 2)) && eval "exec $fd>&-" 2>/dev/null
done
CRF_TEST_READY=$T/ready "$WL" 256 </dev/null >"$T/wl.log" 2>&1 &
pid=$!
for _ in $(seq 600); do [[ -e $T/ready ]] && break; sleep 0.1; done
[[ -e $T/ready ]] || { echo "FAIL: the workload did not get ready"; cat "$T/wl.log"; exit 1; }

check() { # check NAME WANT_LINES ARGS...
	local name=$1 want=$2
	shift 2
	rm -rf "$T/img"
	if ! "$CRF" dump -t "$pid" -D "$T/img" --leave-running "$@" >"$T/out" 2>&1; then
		echo "FAIL: $name: the dump failed:"; cat "$T/out"; failed=$((failed + 1)); return
	fi
	if [[ $want == yes ]] && ! grep -aqE "crf\[mem\]: pid $pid: [0-9]+ of [0-9]+ MiB" "$T/out"; then
		echo "FAIL: $name: no progress line:"; cat -A "$T/out" | head -5
		failed=$((failed + 1))
	elif [[ $want == no && -s $T/out ]]; then
		echo "FAIL: $name: printed something:"; cat -A "$T/out" | head -5
		failed=$((failed + 1))
	else
		passed=$((passed + 1))
	fi
}
check always yes --progress=always
check auto-not-a-terminal no
check never no --progress=never
echo "progress: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
