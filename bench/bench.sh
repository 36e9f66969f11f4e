#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench.sh: how fast crf dumps and restores a process, against the physical
# limit measured in the same run.  See bench/README.md.
#
# usage: bench.sh CRF [--sizes "64 512 2048"] [--runs 5] [--dir DIR] [--live-rate PAGES_PER_S]
#
# For each size N (MiB), a process (bench/touch.c) fills N MiB with random
# data; crf dump -v times the dump and reports how long the process was
# frozen; crf restore -d times the restore; the image directory's size is
# recorded; and touch --copy times writing the same N MiB from memory into
# a file in the same directory (write + close, no fsync, as crf does).
# The runs are interleaved (size after size, RUNS times) and the table gives
# medians.  Then the live rows: the same sizes, the process writing
# --live-rate pages a second (default 20000; 0: no live rows), dumped with
# --leave-running (frozen the whole dump) and with --leave-running --live
# (frozen only to write-protect), and the side buffer's peak; medians too.
# Nothing here is a test: it prints numbers and never fails on them.
set -u
CRF=${1:?usage: bench.sh CRF [--sizes LIST] [--runs N] [--dir DIR]}
shift
SIZES="64 512 2048" RUNS=5 DIR= RATE=20000
while [[ $# -gt 0 ]]; do
	case $1 in
	--sizes) SIZES=$2; shift ;;
	--runs) RUNS=$2; shift ;;
	--dir) DIR=$2; shift ;;
	--live-rate) RATE=$2; shift ;;
	*) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /var/tmp/crf-bench-XXXXXX)
DIR=${DIR:-$T}
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

cc -O2 -o "$T/touch" "$HERE/touch.c" || exit 1

ms_now() { echo $(($(date +%s%N) / 1000000)); }

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "-"; else print v[int((NR + 1) / 2)]}'; }

# One measurement of size $1: appends "dump frozen restore image_mib copy" to $T/r.$1.
measure() {
	local n=$1 img=$DIR/img.$1 pid t0 t1 dump frozen restore size copy
	rm -rf "$img" "$T/ready"
	mkdir -p "$img"
	"$T/touch" "$n" "$T/ready" </dev/null >/dev/null 2>&1 &
	pid=$!
	pids+=("$pid")
	while [[ ! -e $T/ready ]]; do sleep 0.01; done

	t0=$(ms_now)
	if ! "$CRF" dump -v -t "$pid" -D "$img" >"$T/dump.log" 2>&1; then
		echo "bench.sh: crf dump of $n MiB failed:" >&2
		tail -5 "$T/dump.log" >&2
		return 1
	fi
	t1=$(ms_now)
	dump=$((t1 - t0))
	wait "$pid" 2>/dev/null
	frozen=$(sed -nE 's/.*frozen for ([0-9.]+) ?ms.*/\1/p' "$T/dump.log" | tail -1)
	size=$(du -sb "$img" | awk '{printf "%.1f", $1 / 1048576}')

	t0=$(ms_now)
	if ! "$CRF" restore -D "$img" -d </dev/null >"$T/restore.log" 2>&1; then
		echo "bench.sh: crf restore of $n MiB failed:" >&2
		tail -5 "$T/restore.log" >&2
		return 1
	fi
	t1=$(ms_now)
	restore=$((t1 - t0))
	kill -KILL "$pid" 2>/dev/null
	rm -rf "$img"

	copy=$("$T/touch" --copy "$n" "$DIR/copy.tmp") || return 1
	echo "$dump ${frozen:--} $restore $size $copy" >>"$T/r.$n"
}

# One live measurement of size $1: appends "leave_dump leave_frozen live_dump live_frozen
# side_peak_mib faults" to $T/l.$1.
measure_live() {
	local n=$1 img=$DIR/img.$1 pid t0 t1 ld lf vd vf peak faults
	for mode in leave live; do
		rm -rf "$img" "$T/ready"
		mkdir -p "$img"
		"$T/touch" --dirty "$RATE" "$n" "$T/ready" </dev/null >/dev/null 2>&1 &
		pid=$!
		pids+=("$pid")
		while [[ ! -e $T/ready ]]; do sleep 0.01; done
		t0=$(ms_now)
		if ! "$CRF" dump -v -t "$pid" -D "$img" --leave-running \
			$([[ $mode == live ]] && echo --live) >"$T/dump.log" 2>&1; then
			echo "bench.sh: crf dump --leave-running ($mode) of $n MiB failed:" >&2
			tail -5 "$T/dump.log" >&2
			return 1
		fi
		t1=$(ms_now)
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		rm -rf "$img"
		if [[ $mode == leave ]]; then
			ld=$((t1 - t0))
			lf=$(sed -nE 's/.*frozen for ([0-9.]+) ?ms.*/\1/p' "$T/dump.log" | tail -1)
		else
			vd=$((t1 - t0))
			vf=$(sed -nE 's/.*frozen for ([0-9.]+) ?ms.*/\1/p' "$T/dump.log" | tail -1)
			peak=$(sed -nE 's/.*side buffer peak [0-9]+ pages \(([0-9.]+) MiB\).*/\1/p' "$T/dump.log" | tail -1)
			faults=$(sed -nE 's/.* ([0-9]+) write faults served.*/\1/p' "$T/dump.log" | tail -1)
		fi
	done
	echo "$ld ${lf:--} $vd ${vf:--} ${peak:--} ${faults:--}" >>"$T/l.$n"
}

for ((run = 1; run <= RUNS; run++)); do
	for n in $SIZES; do
		measure "$n" || exit 1
	done
	if [[ $RATE != 0 ]]; then
		for n in $SIZES; do
			measure_live "$n" || exit 1
		done
	fi
done

printf '%8s %9s %10s %11s %10s %9s %10s %13s\n' MiB dump_ms frozen_ms restore_ms image_MiB copy_ms dump/copy restore/copy
for n in $SIZES; do
	col() { awk -v c="$1" '{printf "%s ", $c}' "$T/r.$n" | median; }
	d=$(col 1) f=$(col 2) r=$(col 3) s=$(col 4) c=$(col 5)
	# rate ratio: (N / dump time) / (N / copy time) = copy time / dump time
	printf '%8s %9s %10s %11s %10s %9s %10.2f %13.2f\n' "$n" "$d" "$f" "$r" "$s" "$c" \
		"$(awk -v a="$c" -v b="$d" 'BEGIN {print (b > 0 ? a / b : 0)}')" \
		"$(awk -v a="$c" -v b="$r" 'BEGIN {print (b > 0 ? a / b : 0)}')"
done
[[ $RATE == 0 ]] && exit 0
echo
echo "live: the process writes $RATE pages/s during the dump"
printf '%8s %14s %16s %13s %15s %15s %12s\n' MiB leave_dump_ms leave_frozen_ms live_dump_ms live_frozen_ms side_peak_MiB faults
for n in $SIZES; do
	col() { awk -v c="$1" '{printf "%s ", $c}' "$T/l.$n" | median; }
	printf '%8s %14s %16s %13s %15s %15s %12s\n' "$n" "$(col 1)" "$(col 2)" "$(col 3)" "$(col 4)" \
		"$(col 5)" "$(col 6)"
done
