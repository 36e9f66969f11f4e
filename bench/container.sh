#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# container.sh: how long crf takes to dump and restore the container of the
# integrated container test (tests/workloads/wl-container.c: every
# namespace, a busybox rootfs, a veth, IPC objects, sockets, cgroups with
# limits, a user namespace, a nested PID namespace; 7 processes).  See
# bench/README.md.  Nothing here is a test: it prints medians and never
# fails on them.
#
# usage: container.sh CRF WL_CONTAINER [--runs 5] [--pieces LIST]
#
# Each run: the container is made (wl-container ROOTFS HOSTDIR PIECES, as
# tests/e2e/container.sh runs it, but with no harness), crf dump -v kills
# it (dump_ms, wall; frozen_ms, as crf reports it), crf restore -d brings it
# back (restore_ms, wall); then it is told to verify and its result noted
# (ok or FAIL, so that a number of a broken restore is seen as such).
set -u
CRF=${1:?usage: container.sh CRF WL_CONTAINER [--runs N] [--pieces LIST]}
WL=${2:?usage: container.sh CRF WL_CONTAINER [--runs N] [--pieces LIST]}
shift 2
RUNS=5 PIECES=
while [[ $# -gt 0 ]]; do
	case $1 in
	--runs) RUNS=$2; shift ;;
	--pieces) PIECES=$2; shift ;;
	*) echo "container.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/crf-bench-ctr-XXXXXX)
pid=
cleanup() {
	[[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null
	ip link del crfctrh0 2>/dev/null
	# wl-container's cgroups, if a run left them.
	find /sys/fs/cgroup -maxdepth 6 -type d -name crf-ctr -exec rmdir {} + 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

"$HERE/../tests/lib/busybox-rootfs.sh" "$T/rootfs" || exit 1
cp "$WL" "$T/rootfs/bin/wl-container" || exit 1
mkdir "$T/host" || exit 1

ms_now() { echo $(($(date +%s%N) / 1000000)); }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "-"; else print v[int((NR + 1) / 2)]}'; }

# One run: appends "dump frozen restore image_kib verdict" to $T/r.
measure() {
	local img=$T/img t0 t1 dump frozen restore size verdict=ok
	rm -rf "$img" "$T/ready" "$T/verify"
	mkdir -p "$img"
	CRF_TEST_READY=$T/ready CRF_TEST_VERIFY=$T/verify CRF_TEST_TIMEOUT=60 \
		setsid "$WL" "$T/rootfs" "$T/host" "$PIECES" </dev/null >"$T/wl.log" 2>&1 &
	pid=$!
	for _ in $(seq 3000); do [[ -e $T/ready ]] && break; sleep 0.01; done
	[[ -e $T/ready ]] || { echo "container.sh: not ready:" >&2; tail -5 "$T/wl.log" >&2; return 1; }
	t0=$(ms_now)
	if ! "$CRF" dump -v -t "$pid" -D "$img" >"$T/dump.log" 2>&1; then
		echo "container.sh: crf dump failed:" >&2
		tail -5 "$T/dump.log" >&2
		return 1
	fi
	t1=$(ms_now)
	dump=$((t1 - t0))
	{ wait "$pid"; } 2>/dev/null
	frozen=$(sed -nE 's/.*frozen for ([0-9.]+) ?ms.*/\1/p' "$T/dump.log" | tail -1)
	size=$(du -sk "$img" | awk '{print $1}')
	t0=$(ms_now)
	if ! "$CRF" restore -D "$img" -d </dev/null >"$T/restore.log" 2>&1; then
		echo "container.sh: crf restore failed:" >&2
		tail -5 "$T/restore.log" >&2
		return 1
	fi
	t1=$(ms_now)
	restore=$((t1 - t0))
	# The restored runtime is not our child: wait for its PID to go.
	touch "$T/verify"
	for _ in $(seq 3000); do [[ -e /proc/$pid ]] || break; sleep 0.01; done
	grep -q FAIL "$T/wl.log" && verdict=FAIL
	[[ -e /proc/$pid ]] && verdict=hung && kill -KILL "$pid"
	pid=
	for _ in $(seq 300); do ip link show crfctrh0 >/dev/null 2>&1 || break; sleep 0.01; done
	echo "$dump ${frozen:--} $restore $size $verdict" >>"$T/r"
}

for ((run = 1; run <= RUNS; run++)); do
	measure || exit 1
done
col() { awk -v c="$1" '{printf "%s ", $c}' "$T/r" | median; }
printf '%9s %10s %11s %10s %s\n' dump_ms frozen_ms restore_ms image_KiB verdicts
printf '%9s %10s %11s %10s %s\n' "$(col 1)" "$(col 2)" "$(col 3)" "$(col 4)" \
	"$(awk '{printf "%s ", $5}' "$T/r")"
