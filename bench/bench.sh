#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench.sh: how fast crf dumps and restores a process, against the physical
# limit measured in the same run.  See bench/README.md.
#
# usage: bench.sh CRF [--sizes "64 512 2048"] [--runs 5] [--dir DIR]
#
# For each size N (MiB), a process (bench/touch.c) fills N MiB with random
# data; crf dump -v times the dump and reports how long the process was
# frozen; crf restore -d times the restore; the image directory's size is
# recorded; and touch --copy times writing the same N MiB from memory into
# a file in the same directory (write + close, no fsync, as crf does).
# The runs are interleaved (size after size, RUNS times) and the table gives
# medians.  Nothing here is a test: it prints numbers and never fails on them.
set -u
CRF=${1:?usage: bench.sh CRF [--sizes LIST] [--runs N] [--dir DIR]}
shift
SIZES="64 512 2048" RUNS=5 DIR=
while [[ $# -gt 0 ]]; do
	case $1 in
	--sizes) SIZES=$2; shift ;;
	--runs) RUNS=$2; shift ;;
	--dir) DIR=$2; shift ;;
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

for ((run = 1; run <= RUNS; run++)); do
	for n in $SIZES; do
		measure "$n" || exit 1
	done
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
