#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# scripts/fuzz.sh [SECONDS [JOBS]]: run the image fuzzer (tests/fuzz/,
# libFuzzer) for SECONDS (default 60) in JOBS processes (default 1), niced.
# Builds it first in build-fuzz (or $FUZZ_BUILD) with clang (-Dfuzz=true).  The corpus it
# grows is build-fuzz/fuzz-corpus, seeded from tests/fuzz/corpus; a crash
# or sanitizer report leaves its input in build-fuzz/fuzz-artifacts/ and
# makes the script fail.  Prints the executions and the corpus size.
#
# Reproduce a finding: build-fuzz/tests/fuzz/fuzz-images FILE (with
# CRF_FUZZ_LOG=1 to see crf's messages).  A fixed one goes into
# tests/fuzz/corpus/ as its regression case.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-60}
JOBS=${2:-1}
B=${FUZZ_BUILD:-build-fuzz}
if [[ ! -f $B/build.ninja ]]; then
	CC=clang meson setup "$B" -Dfuzz=true -Dtests=false >/dev/null
fi
ninja -C "$B" tests/fuzz/fuzz-images >/dev/null
mkdir -p "$B/fuzz-corpus" "$B/fuzz-artifacts"
LOG=$B/fuzz.log
rm -f "$LOG" "$B"/fuzz-*.log
# check_printf=0: ASan's own parse of every printf format cost a third of
# the time (crf show prints every record); the call is still checked.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:check_printf=0
# The harness writes each input's image files: into memory when it can.
if [[ -z ${TMPDIR:-} && -w /dev/shm ]]; then
	export TMPDIR=/dev/shm
fi
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
args=(-max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=262144
	-artifact_prefix="$B/fuzz-artifacts/" -print_final_stats=1)
if ((JOBS > 1)); then
	nice -n 10 "$B/tests/fuzz/fuzz-images" "${args[@]}" -fork="$JOBS" -ignore_crashes=0 \
		"$B/fuzz-corpus" tests/fuzz/corpus >"$LOG" 2>&1 || status=$?
else
	nice -n 10 "$B/tests/fuzz/fuzz-images" "${args[@]}" \
		"$B/fuzz-corpus" tests/fuzz/corpus >"$LOG" 2>&1 || status=$?
fi
# One process ends with "Done N runs"; -fork=N prints "#N: cov: ..." lines.
runs=$( (grep -Eo 'stat::number_of_executed_units: *[0-9]+|Done [0-9]+ runs|^#[0-9]+:' "$LOG" || :) |
	grep -Eo '[0-9]+' | tail -1)
echo "fuzz: ${runs:-?} executions in ${SECS}s, corpus $(ls "$B/fuzz-corpus" | wc -l) inputs"
if ((status)) || grep -Eq 'ERROR: (AddressSanitizer|libFuzzer)|runtime error' "$LOG"; then
	grep -E -A30 'ERROR:|runtime error' "$LOG" | head -60
	echo "fuzz: FAILED (exit $status); the input is in $B/fuzz-artifacts/"
	exit 1
fi
