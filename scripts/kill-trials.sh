#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What happens to a program when crf itself is stopped or killed in the
# middle of a dump, at a random moment: a measurement for the reliability
# issue, too slow and too random for the suite (e2e-fault-walk is its
# deterministic counterpart).
#
#   scripts/kill-trials.sh CRF [TRIALS] [MIB]
#
# A wl-memory of MIB MiB (default 512) is dumped TRIALS times (default 30)
# per row, and crf gets the row's signal after a random part of the time a
# whole dump takes.  After each trial the program must run on unchanged:
# alive, not stopped or traced, the same maps and signal mask, and, for the
# --leave-running rows, no unfinished image left behind.  A killing dump
# may also end with the program dead, but only with complete images, which
# must restore it.  Finally the program checks its memory byte for byte.
#
# Prints one row per signal: trials, unchanged, dead (restored), lost.
set -u
# A child subreaper (kept across exec): a restored program is reparented to
# this shell, which reaps it, not to PID 1, which reaps late.
if [[ -z ${CRF_KILL_TRIALS_REAPER:-} ]]; then
	export CRF_KILL_TRIALS_REAPER=1
	exec python3 -c 'import ctypes, os, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
os.execv(sys.argv[1], sys.argv[1:])' "$0" "$@"
fi
CRF=$(realpath "$1") TRIALS=${2:-30} MIB=${3:-512}
WL=$(dirname "$CRF")/../tests/workloads/wl-memory
[[ -x $WL ]] || { echo "no wl-memory next to $CRF (build the tests)"; exit 2; }
T=$(mktemp -d /tmp/crf-kill-trials-XXXXXX)
pid=
cleanup() {
	[[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

export CRF_TEST_READY=$T/ready CRF_TEST_VERIFY=$T/verify CRF_TEST_TMPDIR=$T CRF_TEST_TIMEOUT=3600
# Only fds 0-2: an fd inherited from the caller (a pipe) would be refused.
(
	for fd in /proc/self/fd/*; do
		n=${fd##*/}
		((n > 2)) && eval "exec $n>&-"
	done
	exec "$WL" "$MIB"
) </dev/null >>"$T/wl.log" 2>&1 &
pid=$!
for ((i = 0; i < 3000; i++)); do [[ -e $T/ready ]] && break; sleep 0.01; done
[[ -e $T/ready ]] || { echo "wl-memory did not get ready"; exit 1; }

state() {
	local st
	st=$(sed 's/.*) \(.\).*/\1/' "/proc/$pid/stat" 2>/dev/null) || { echo dead; return; }
	[[ $st == [RSD] ]] && st=running
	echo "$st $(grep -E '^(TracerPid|SigBlk):' "/proc/$pid/status" | tr '\n' ' ')"
	md5sum <"/proc/$pid/maps"
}
state >"$T/before"

# One whole dump, to know how long one takes (ms).
t0=$(date +%s%N)
"$CRF" dump -t "$pid" -D "$T/img" --leave-running -q || { echo "the timing dump failed"; exit 1; }
full_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
rm -rf "$T/img"
echo "a --leave-running dump of $MIB MiB takes $full_ms ms; $TRIALS trials per row"
printf '%-28s %7s %10s %14s %5s\n' "signal to crf, dump" trials unchanged "dead, restored" lost

# What a lost trial left: for the report.
note_lost() {
	{
		echo "lost: SIG$1 after $2 ms, ${3:-killing}: program $([[ -e /proc/$pid ]] && echo alive ||
			echo dead), images $([[ -e $T/img/inventory.img ]] && echo complete ||
			echo incomplete)"
		cat "$T/out"
		[[ -e $T/img ]] && ls -a "$T/img"
	} >>"$T/lost.log"
}

trial() { # SIG LEAVE: "unchanged", "restored" or "lost"
	local sig=$1 leave=$2 cpid delay i
	# A killing dump also syncs before the kill: its moments run longer.
	local span=$full_ms
	[[ -z $leave ]] && span=$((2 * full_ms))
	delay=$((RANDOM % (span + 1)))
	"$CRF" dump -t "$pid" -D "$T/img" $leave -q >"$T/out" 2>&1 &
	cpid=$!
	sleep "$(awk -v d="$delay" 'BEGIN { printf "%.3f", d / 1000 }')"
	kill "-$sig" "$cpid" 2>/dev/null
	wait "$cpid" 2>/dev/null
	# The guardian of a killed crf (reparented to this shell) finishes first.
	for ((i = 0; i < 500; i++)); do
		pgrep -P $$ -x crf-guardian >/dev/null || break
		sleep 0.01
	done
	# A program the dump killed is reaped before it is judged.
	for ((i = 0; i < 200; i++)); do
		[[ $(state) == Z* ]] || break
		wait "$pid" 2>/dev/null
		sleep 0.01
	done
	if [[ -e /proc/$pid && $(state) == "$(cat "$T/before")" ]]; then
		if [[ -e $T/img && ! -e $T/img/inventory.img ]]; then
			note_lost "$sig" "$delay" "$leave"
			rm -rf "$T/img"
			echo lost
			return
		fi
		rm -rf "$T/img"
		echo unchanged
		return
	fi
	if [[ ! -e /proc/$pid && -e $T/img/inventory.img ]] &&
		"$CRF" restore -D "$T/img" -d -q >/dev/null 2>&1 && [[ -e /proc/$pid ]]; then
		rm -rf "$T/img"
		state >"$T/before"
		echo restored
		return
	fi
	note_lost "$sig" "$delay" "$leave"
	rm -rf "$T/img"
	echo lost
}

for row in "KILL --leave-running" "TERM --leave-running" "INT --leave-running" \
	"HUP --leave-running" "KILL killing"; do
	read -r sig leave <<<"$row"
	[[ $leave == killing ]] && leave=
	n=0 same=0 back=0 lost=0
	for ((k = 0; k < TRIALS; k++)); do
		case $(trial "$sig" "$leave") in
		unchanged) same=$((same + 1)) ;;
		restored) back=$((back + 1)) ;;
		*) lost=$((lost + 1)) ;;
		esac
		n=$((n + 1))
		[[ -e /proc/$pid ]] || break
	done
	printf '%-28s %7d %10d %14d %5d\n' "SIG$sig, ${leave:-killing}" "$n" "$same" "$back" "$lost"
	[[ -e /proc/$pid ]] || { echo "the program is gone"; break; }
done
[[ -s $T/lost.log ]] && sed 's/^/  | /' "$T/lost.log"
[[ -e /proc/$pid ]] || exit 1
touch "$T/verify"
wait "$pid" 2>/dev/null
st=$?
# A restored program is no child of this shell: its verdict is in its log.
if [[ $st -ne 0 ]]; then
	for ((i = 0; i < 1000; i++)); do [[ -e /proc/$pid ]] || break; sleep 0.01; done
	grep -q 'FAIL' "$T/wl.log" && st=1 || st=0
fi
pid=
[[ $st -eq 0 ]] && echo "wl-memory: memory intact after every trial" ||
	{ echo "wl-memory: its memory check FAILED"; tail -3 "$T/wl.log"; exit 1; }
