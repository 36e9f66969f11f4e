#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# AMX, on a CPU that has it (skipped elsewhere):
#   perm-kill   a task granted AMX tile data that used the tiles and released
#               them: dumped, killed, restored; the permission, the tiles
#               and the ymm registers of a block spinning across the
#               checkpoint are as they were (wl-amx perm)
#   perm-twice  the same, dumped and restored twice
#   live        a task with data in its tile registers: the dump is refused
#               naming the thread and the tile data, the task runs on with
#               its tiles intact (wl-amx live)
#
# usage: amx.sh HARNESS CRF WL_AMX IMAGE_DIR_BASE
set -u
HARNESS=$1 CRF=$2 WL=$3 BASE=$4

if ! grep -qw amx_tile /proc/cpuinfo; then
	echo "SKIP: this CPU has no AMX (no amx_tile in /proc/cpuinfo)"
	exit 77
fi
passed=0 failed=0
run() {
	local name=$1
	shift
	if "$HARNESS" --timeout 60 --crf "$CRF" --dir "$BASE.$name" --name "amx-$name" "$@"; then
		passed=$((passed + 1))
	else
		echo "FAIL: amx $name"
		failed=$((failed + 1))
	fi
}
run perm-kill --mode kill -- "$WL" perm
run perm-twice --mode twice -- "$WL" perm
run live --expect-dump-fail 'thread [0-9]+ holds live AMX tile data' -- "$WL" live
echo "amx: $passed passed, $failed failed"
[[ $failed == 0 ]]
