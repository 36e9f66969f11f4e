#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# crf dump --leave-running --live (docs/live.md), with wl-live, a program
# that writes a page every ~2 us (some through read(2) from a pipe), and
# unmaps, moves and discards memory in the middle of the live copy:
#
#   plain      the program only writes (no events): its restored image is
#              one instant, byte for byte; the original runs on as it was
#   live       the dump succeeds; the original runs on: its memory checks,
#              no VmFlags of a userfaultfd are left, its fd table is the
#              same; then it exits, and the restored image checks that
#              every page is the state of one instant, byte for byte, and
#              the unmapped, moved and discarded memory as it was then
#   unsaved    memory unmapped before crf copied it fails the dump; the
#              program runs on unaffected, no registration left, no image
#   uffd       a program with a userfaultfd of its own is refused, by name
#   no-leave   --live without --leave-running is refused
#
# usage: live.sh CRF WL_LIVE BASE [MIB]
set -u
CRF=$1 WL=$2 BASE=$3 MIB=${4:-64}
passed=0 failed=0
started=()
OUT=$BASE.out

cleanup() {
	local pid
	for pid in "${started[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	rm -rf "$BASE".*
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	[[ -f $OUT ]] && sed 's/^/    | /' "$OUT" | tail -20
	[[ -f $BASE.log ]] && sed 's/^/    wl| /' "$BASE.log" | tail -10
	failed=$((failed + 1))
}

# Wait (up to 30 s) for CTL.$1.
ctl_wait() {
	local i
	for ((i = 0; i < 3000; i++)); do
		[[ -e $BASE.ctl.$1 ]] && return 0
		sleep 0.01
	done
	return 1
}
verdict() { cat "$BASE.ctl.verdict" 2>/dev/null; }

# start MODE: wl-live in the background, set up; its PID in $pid.
start() {
	rm -f "$BASE".ctl.* "$BASE.log"
	"$WL" "$BASE.ctl" "$MIB" "$1" </dev/null >>"$BASE.log" 2>&1 &
	pid=$!
	started+=("$pid")
	ctl_wait ready || { fail "$1: wl-live did not get ready"; return 1; }
}

fds() { ls -l "/proc/$1/fd" | awk 'NR > 1 { print $9, $11 }'; }
uffd_flags() { grep -E '^VmFlags:.* (uw|um|ui)( |$)' "/proc/$1/smaps" | head -3; }

# verify_original NAME: the running original checks its memory and exits 0.
verify_original() {
	local st
	rm -f "$BASE.ctl.verdict"
	touch "$BASE.ctl.verify"
	wait "$pid"
	st=$?
	[[ $st -eq 0 && $(verdict) == ok:* ]] ||
		{ fail "$1: the original's check after the dump: exit $st, $(verdict)"; return 1; }
	rm -f "$BASE.ctl.verify"
}

# running_unaffected NAME: after a dump, the program runs, no uffd flags, same fds.
running_unaffected() {
	local flags
	kill -0 "$pid" 2>/dev/null || { fail "$1: the program is gone"; return 1; }
	flags=$(uffd_flags "$pid")
	[[ -z $flags ]] || { fail "$1: userfaultfd VmFlags left: $flags"; return 1; }
	[[ $(fds "$pid") == "$fds_before" ]] ||
		{ fail "$1: fd table changed: $(diff <(echo "$fds_before") <(fds "$pid") | tr '\n' ' ')"; return 1; }
}

# --- live: a consistent image of a program that never stopped writing -----
# t_live NAME ARM: ARM=1 arms the events in the middle of the copy.
t_live() {
	local name=$1
	start normal || return
	fds_before=$(fds "$pid")
	[[ $2 == 1 ]] && touch "$BASE.ctl.arm"
	sleep 0.05
	if ! timeout -s KILL 120 "$CRF" dump -v -t "$pid" -D "$BASE.$name.img" --leave-running --live \
		>"$OUT" 2>&1; then
		fail "$name: crf dump --leave-running --live"
		return
	fi
	grep -q 'live dump:' "$OUT" || { fail "$name: no live copy reported"; return; }
	cp "$OUT" "$BASE.dump.log"
	[[ $2 == 0 || -e $BASE.ctl.events ]] || { fail "$name: the program saw no freeze"; return; }
	running_unaffected "$name" || return
	verify_original "$name" || return
	# The image, restored: the instant of the freeze.
	rm -f "$BASE.ctl.verdict"
	touch "$BASE.ctl.verify"
	if ! timeout -s KILL 60 "$CRF" restore -D "$BASE.$name.img" -d >"$OUT" 2>&1; then
		fail "$name: crf restore"
		return
	fi
	ctl_wait verdict; sleep 0.1
	[[ $(verdict) == ok:* ]] || { fail "$name: the restored check: $(verdict)"; return; }
	grep -h 'frozen for\|live dump:' "$BASE.dump.log" | sed "s/^/$name: /"
	passed=$((passed + 1))
}

# --- unsaved: memory unmapped before it was copied fails the dump ---------
# The program must run before crf has copied U (the last 32 MiB): on a
# loaded machine it may not, and the dump then rightly succeeds; tried up
# to 4 times.
t_unsaved() {
	local try
	for ((try = 1; try <= 4; try++)); do
		start unmap-unsaved || return
		fds_before=$(fds "$pid")
		touch "$BASE.ctl.arm"
		sleep 0.05
		if ! timeout -s KILL 120 "$CRF" dump -t "$pid" -D "$BASE.unsaved.$try" \
			--leave-running --live >"$OUT" 2>&1; then
			break
		fi
		echo "unsaved: try $try: the program ran only after crf had copied U; again"
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
		# A dump that succeeded must hold the freeze's U: restored, it checks.
		rm -f "$BASE.ctl.verdict"
		touch "$BASE.ctl.verify"
		timeout -s KILL 60 "$CRF" restore -D "$BASE.unsaved.$try" -d >"$OUT" 2>&1 ||
			{ fail "unsaved: try $try: crf restore"; return; }
		ctl_wait verdict; sleep 0.1
		kill -KILL "$pid" 2>/dev/null
		[[ $(verdict) == ok:* ]] ||
			{ fail "unsaved: try $try: the dump succeeded with a wrong image: $(verdict)"; return; }
		rm -f "$BASE.ctl.verify"
	done
	((try <= 4)) || { fail "unsaved: the dump succeeded 4 times"; return; }
	grep -Eq "unmapped (0x[0-9a-f]+-0x[0-9a-f]+ during the live dump, before crf copied|the page at 0x[0-9a-f]+ during the live dump before crf could tell)" "$OUT" ||
		{ fail "unsaved: not refused for the unmapped memory"; return; }
	[[ -z $(ls "$BASE.unsaved.$try" 2>/dev/null) ]] || { fail "unsaved: images left behind"; return; }
	running_unaffected unsaved || return
	verify_original unsaved || return
	passed=$((passed + 1))
}

# --- uffd: a program that handles its own faults is refused ---------------
t_uffd() {
	start uffd || return
	if timeout -s KILL 60 "$CRF" dump -t "$pid" -D "$BASE.uffd" --leave-running --live \
		>"$OUT" 2>&1; then
		fail "uffd: the dump succeeded"
		return
	fi
	grep -Eq "pid $pid: fd [0-9]+ is a userfaultfd" "$OUT" ||
		{ fail "uffd: the refusal does not name the task and its userfaultfd"; return; }
	[[ -z $(ls "$BASE.uffd" 2>/dev/null) ]] || { fail "uffd: images left behind"; return; }
	kill -0 "$pid" 2>/dev/null || { fail "uffd: the program is gone"; return; }
	verify_original uffd || return
	passed=$((passed + 1))
}

# --- no-leave: --live alone is refused --------------------------------------
t_no_leave() {
	local st
	"$CRF" dump -t $$ -D "$BASE.noleave" --live >"$OUT" 2>&1
	st=$?
	[[ $st -eq 2 ]] && grep -q -- '--live needs --leave-running' "$OUT" ||
		{ fail "no-leave: exit $st"; return; }
	passed=$((passed + 1))
}

t_live plain 0
t_live live 1
t_unsaved
t_uffd
t_no_leave
echo "live: $passed passed, $failed failed"
((failed == 0))
