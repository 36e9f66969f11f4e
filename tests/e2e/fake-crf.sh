#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A stand-in for crf, for the harness self-test only (meson test
# harness-selftest-*, suite 'unit'): it lets every workload's ready ->
# verify path run in CI before crf can checkpoint anything.
#
#   fake-crf.sh dump -t PID -D DIR --leave-running [...]
#       exits 0 and leaves the process alone, like a dump that changed
#       nothing; refuses, as crf must, a process holding a socket;
#       with CRF_TEST_CORRUPT=1 in the environment, it first writes
#       "CORRUPT!" over the address the workload published as corrupt_addr
#       in its ready file (found through its CRF_TEST_READY), before it
#       succeeds or refuses: the workload's verification must then fail.
#   anything else: exits 1 (a fake cannot kill and restore a process).
set -u
cmd=${1:-}
shift || true
if [[ $cmd != dump ]]; then
	echo "fake-crf: only 'dump --leave-running' is faked" >&2
	exit 1
fi
pid='' dir='' leave=0
while [[ $# -gt 0 ]]; do
	case $1 in
	-t) pid=$2; shift ;;
	-D) dir=$2; shift ;;
	--leave-running) leave=1 ;;
	esac
	shift
done
if [[ -z $pid || -z $dir ]]; then
	echo "fake-crf: dump needs -t PID and -D DIR" >&2
	exit 2
fi
if [[ ! -d /proc/$pid ]]; then
	echo "fake-crf: no process with PID $pid" >&2
	exit 1
fi
if [[ ${CRF_TEST_CORRUPT:-0} == 1 ]]; then
	ready=$(tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^CRF_TEST_READY=//p')
	addr=$(sed -n 's/^corrupt_addr=//p' "$ready")
	if [[ -z $addr ]]; then
		echo "fake-crf: the workload published no corrupt_addr" >&2
		exit 1
	fi
	printf 'CORRUPT!' | dd of="/proc/$pid/mem" bs=8 count=1 seek=$((addr)) \
		oflag=seek_bytes conv=notrunc status=none || exit 1
fi
for fd in /proc/"$pid"/fd/*; do
	if [[ $(readlink "$fd") == socket:* ]]; then
		echo "fake-crf: dump: PID $pid fd ${fd##*/} (a socket): no plugin handles it" >&2
		exit 1
	fi
done
if [[ $leave -ne 1 ]]; then
	echo "fake-crf: only 'dump --leave-running' is faked" >&2
	exit 1
fi
echo "fake-crf: frozen for 0 ms"
exit 0
