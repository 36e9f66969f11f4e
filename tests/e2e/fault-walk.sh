#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Every fault point of a dump and a restore of a small tree (wl-tree, 8
# processes), broken in turn (CRF_FAULT, core/lib/fault.c):
#
#   dump --leave-running, each point failing (fail@N), crf asked to stop
#   there (term@N: SIGTERM) and crf killed there (kill@N: SIGKILL; not where
#   the parasite is in a task, where PTRACE_O_EXITKILL kills the task):
#   the tree runs on unchanged (every process's state, tracer, signal masks
#   and maps, and its cgroup not frozen), crf says why and exits 1 (0 only
#   after the point "images complete": the dump was complete, and a failure
#   or a stop request before it must fail the dump), and an unfinished dump
#   leaves no image behind (the guardian removes what a killed crf wrote);
#   with the ptrace freezer; then a process alone in a scratch cgroup v2
#   (the cgroup freezer takes no more) with the cgroup freezer, crf stopped
#   and killed at each point: crf, or a killed crf's guardian, thaws it;
#   a killing dump, each point failing: the tree survives unchanged, or it
#   was killed after its images were complete and restores from them;
#   restore, each point failing and crf restore killed there: nothing of the
#   tree is left; the dump still restores afterwards.
#
# Then the tree verifies itself (memory, PIDs, sessions, groups).
#
# usage: fault-walk.sh CRF WL_TREE IMAGE_DIR_BASE
set -u
# A child subreaper (kept across exec): the restored tree is reparented to
# this shell, which reaps it, not to PID 1, which reaps late.
if [[ -z ${CRF_FAULT_WALK_REAPER:-} ]]; then
	export CRF_FAULT_WALK_REAPER=1
	exec python3 -c 'import ctypes, os, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
os.execv(sys.argv[1], sys.argv[1:])' "$0" "$@"
fi
CRF=$1 WL=$2 BASE=$3
T=$(mktemp -d /tmp/crf-fault-walk-XXXXXX)
passed=0 failed=0 root= CG= in_cg=

cleanup() {
	local p i r
	for r in $root ${tree_root:-}; do
		for p in $(tree_pids "$r"); do kill -KILL "$p" 2>/dev/null; done
	done
	if [[ -n $CG ]]; then
		echo 0 >"$CG/cgroup.freeze" 2>/dev/null
		for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		for ((i = 0; i < 200; i++)); do rmdir "$CG" 2>/dev/null && break; sleep 0.025; done
		[[ -d $CG ]] && echo "fault-walk: could not remove the cgroup $CG"
	fi
	rm -rf "$T" "$BASE".*
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	[[ -f $T/out ]] && sed 's/^/    | /' "$T/out" | tail -15
	failed=$((failed + 1))
}

# The PIDs of @1 and its descendants, the root first (one pass over /proc).
tree_pids() {
	cat /proc/[0-9]*/stat 2>/dev/null | sed -n 's/^\([0-9]*\) (.*) . \([0-9]*\) .*/\1 \2/p' |
		awk -v root="$1" '
			{ kids[$2] = kids[$2] " " $1; seen[$1] = 1 }
			END {
				if (!(root in seen)) exit
				q[0] = root; n = 1
				for (i = 0; i < n; i++) {
					print q[i]
					m = split(kids[q[i]], k, " ")
					for (j = 1; j <= m; j++) q[n++] = k[j]
				}
			}'
}

# /proc/PID/maps with adjacent anonymous mappings of the same protection
# joined: where the kernel split them (anon_vma history after a fork) is no
# state of the program, and a restore's fresh mappings merge.
maps() {
	awk '$5 == 0 && NF == 5 && prev_end == substr($1, 1, index($1, "-") - 1) && $2 == prev_prot {
		prev_end = substr($1, index($1, "-") + 1); next }
	{ if (line) print line, prev_end; line = substr($1, 1, index($1, "-") - 1) " " $2 " " $3 " " $4 " " $5 " " $6
	  prev_end = substr($1, index($1, "-") + 1); prev_prot = ($5 == 0 && NF == 5) ? $2 : "" }
	END { if (line) print line, prev_end }' "/proc/$1/maps"
}

# What must not change: each process's state class, tracer, masks and maps,
# and whether its cgroup is frozen (a frozen task's state looks like a sleep).
snapshot() {
	local p st
	[[ -n $in_cg ]] && echo "cgroup: freeze $(cat "$CG/cgroup.freeze"), $(grep frozen "$CG/cgroup.events")"
	for p in $(tree_pids "$root"); do
		st=$(sed 's/.*) \(.\).*/\1/' "/proc/$p/stat")
		[[ $st == [RSD] ]] && st=running
		echo "$p $st $(grep -E '^(TracerPid|SigBlk|SigIgn|SigCgt):' "/proc/$p/status" | tr '\n' ' ')"
		maps "$p" | md5sum
	done
}

unchanged() {
	snapshot >"$T/now"
	if ! cmp -s "$T/before" "$T/now"; then
		fail "$1: the tree changed"
		diff "$T/before" "$T/now" | head -10 | sed 's/^/    | /'
		return 1
	fi
}

# A dump of a crf killed by the guardian's standards: no image left behind.
no_images() {
	local i
	for ((i = 0; i < 200; i++)); do
		[[ -e $1 ]] || return 0
		[[ -e $1/inventory.img ]] && return 0 # complete: kept
		sleep 0.025
	done
	fail "$2: the unfinished dump in $1 was not removed"
	ls -la "$1" | sed 's/^/    | /'
	return 1
}

# PIDs of the tree as it was dumped (before the kill).
gone() {
	local p i
	for ((i = 0; i < 200; i++)); do
		for p in $pids; do [[ -e /proc/$p ]] && break; done
		[[ -e /proc/$p ]] || return 0
		sleep 0.025
	done
	fail "$1: PID $p is left behind"
	return 1
}

# point_names TRACE_FILE: "N NAME" lines.
points() {
	sed -n 's/^crf fault point \([0-9]*\): \(.*\)$/\1 \2/p' "$1"
}

# A scratch cgroup v2 below ours, for the tree alone: $CG, or empty (and why) where none can be made.
make_cgroup() {
	local mnt own
	mnt=$(sed -n 's/^[^ ]* [^ ]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -1)
	own=$(sed -n 's/^0:://p' /proc/self/cgroup)
	[[ -n $mnt ]] || { echo "  note: no cgroup v2 is mounted: no cgroup freezer walk"; return; }
	[[ $own == / ]] && own=
	CG=$mnt$own/crf-fault-walk-$$
	mkdir "$CG" || { echo "  note: cannot make a cgroup v2 ($CG): no cgroup freezer walk"; CG=; }
}

export CRF_TEST_READY=$T/ready CRF_TEST_VERIFY=$T/verify CRF_TEST_TMPDIR=$T CRF_TEST_TIMEOUT=600
make_cgroup
"$WL" </dev/null >"$T/wl.log" 2>&1 &
root=$!
for ((i = 0; i < 1000; i++)); do [[ -e $T/ready ]] && break; sleep 0.01; done
[[ -e $T/ready ]] || { fail "wl-tree did not get ready"; exit 1; }
pids=$(tree_pids "$root")
snapshot >"$T/before"

# Whether a point is a fine one (CRF_FAULT_FINE=1: image I/O, parasite calls).
fine_point() {
	[[ $1 == "image "* || $1 == "parasite call "* ]]
}

# 1. dump --leave-running, with freezer $1 (each point: the acts $2; at least $3 points);
# with $4 = fine, only the fine points, every one, counted with CRF_FAULT_FINE=1.
walk_dump() {
	local freeze=$1 acts=$2 min=$3 fine=${4:-} n complete i name act d st what pts
	pts=$T/dump-points-$freeze$fine
	CRF_FAULT=trace CRF_FAULT_FINE=${fine:+1} "$CRF" dump -t "$root" -D "$BASE.trace" \
		--leave-running --freeze="$freeze" >"$T/out" 2>&1 || fail "traced dump ($freeze)"
	points "$T/out" >"$pts"
	rm -rf "$BASE.trace"
	complete=$(sed -n 's/^\([0-9]*\) images complete$/\1/p' "$pts")
	[[ -n $complete ]] || { fail "no point 'images complete' in a dump ($freeze)"; complete=$n; }
	if [[ -n $fine ]]; then
		while read -r i name; do fine_point "$name" && echo "$i $name"; done <"$pts" >"$pts.f"
		mv "$pts.f" "$pts"
	fi
	n=$(wc -l <"$pts")
	((n >= min)) || fail "only $n ${fine:+fine }fault points in a dump ($freeze)"
	while read -r i name; do
		for act in $acts; do
			[[ $act == kill && $name == *"(parasite in)" ]] && continue
			d=$BASE.$act$i
			CRF_FAULT=$act@$i CRF_FAULT_FINE=${fine:+1} timeout -s KILL 60 "$CRF" dump \
				-t "$root" -D "$d" --leave-running --freeze="$freeze" >"$T/out" 2>&1
			st=$?
			what="dump ($freeze) $act at point $i ($name): status $st"
			case $act in
			kill) [[ $st -eq 137 ]] || { fail "$what, not 137"; continue; } ;;
			*) if ((i <= complete)); then
				[[ $st -eq 1 ]] ||
					{ fail "$what, not 1 (before its images are complete)"; continue; }
			elif ! [[ $st -eq 1 || ($st -eq 0 && -e $d/inventory.img) ]]; then
				fail "$what"
				continue
			fi ;;
			esac
			if [[ $st -eq 1 && $act != kill ]] && ! grep -Eq 'fault injected|interrupted by signal' "$T/out"; then
				fail "$what: no message says why"
				continue
			fi
			no_images "$d" "$what" && unchanged "$what" && passed=$((passed + 1))
			rm -rf "$d"
		done
	done <"$pts"
	echo "  dump --freeze=$freeze: $n ${fine:+fine }points ($acts)"
}
walk_dump ptrace "fail term kill" 20
n=$(wc -l <"$T/dump-points-ptrace")
# Every image create, write, rename and parasite call failing in turn.
walk_dump ptrace fail 50 fine
nf=$(wc -l <"$T/dump-points-ptracefine")

# 1b. the cgroup freezer, on a sleeper alone in $CG
if [[ -n $CG ]]; then
	tree_root=$root
	cp "$T/before" "$T/before-tree"
	(echo 0 >"$CG/cgroup.procs" && exec sleep 1000) </dev/null >/dev/null 2>&1 &
	root=$! in_cg=1
	for ((i = 0; i < 1000; i++)); do grep -qx "$root" "$CG/cgroup.procs" && break; sleep 0.01; done
	snapshot >"$T/before"
	walk_dump cgroup "term kill" 5
	kill -KILL "$root"
	wait "$root" 2>/dev/null
	root=$tree_root in_cg=
	mv "$T/before-tree" "$T/before"
fi

# 2. a killing dump, each point failing
while read -r i name; do
	d=$BASE.kfail$i
	CRF_FAULT=fail@$i timeout -s KILL 60 "$CRF" dump -t "$root" -D "$d" --freeze=ptrace \
		>"$T/out" 2>&1
	st=$?
	what="killing dump failing at point $i ($name): status $st"
	if [[ -e $d/inventory.img ]]; then
		# Killed after its images were complete: they must bring it back.
		gone "$what" || continue
		"$CRF" restore -D "$d" -d >"$T/out" 2>&1 || { fail "$what: no restore"; continue; }
	elif [[ $st -ne 1 ]]; then
		fail "$what, and no complete images"
		continue
	fi
	unchanged "$what" && passed=$((passed + 1))
	rm -rf "$d"
done <"$T/dump-points-ptrace"

# 3. restore
"$CRF" dump -t "$root" -D "$BASE.r" >"$T/out" 2>&1 || { fail "dump for the restore walk"; exit 1; }
gone "the dump for the restore walk"
CRF_FAULT=trace "$CRF" restore -D "$BASE.r" --pid-wait=2000 -d >"$T/out" 2>&1 ||
	fail "traced restore"
points "$T/out" >"$T/restore-points"
m=$(wc -l <"$T/restore-points")
((m >= 5)) || fail "only $m fault points in a restore"
unchanged "traced restore"
"$CRF" dump -t "$root" -D "$BASE.r2" >"$T/out" 2>&1 || { fail "second dump"; exit 1; }
gone "the second dump"
while read -r i name; do
	for act in fail kill; do
		CRF_FAULT=$act@$i timeout -s KILL 60 "$CRF" restore -D "$BASE.r2" -d >"$T/out" 2>&1
		st=$?
		what="restore $act at point $i ($name): status $st"
		# After the release the tree is the program's: a failure then is too late to undo.
		if [[ $st -eq 0 ]]; then
			fail "$what: the restore succeeded"
			continue
		fi
		gone "$what" && passed=$((passed + 1))
	done
done < <(grep -v 'restore-cleanup' "$T/restore-points")
# The fine points of a restore (every image open and read), failing: a sample of
# about 40, spread evenly, the first and last among them.
CRF_FAULT=trace CRF_FAULT_FINE=1 "$CRF" restore -D "$BASE.r2" --pid-wait=2000 -d >"$T/out" 2>&1 ||
	fail "traced restore (fine points)"
points "$T/out" | while read -r i name; do fine_point "$name" && echo "$i $name"; done \
	>"$T/restore-fine"
mf=$(wc -l <"$T/restore-fine")
((mf >= 20)) || fail "only $mf fine fault points in a restore"
"$CRF" dump -t "$root" -D "$BASE.r3" >"$T/out" 2>&1 || { fail "dump for the fine restore walk"; exit 1; }
gone "the dump for the fine restore walk"
stride=$(((mf + 39) / 40))
while read -r i name; do
	CRF_FAULT=fail@$i CRF_FAULT_FINE=1 timeout -s KILL 60 "$CRF" restore -D "$BASE.r3" -d \
		>"$T/out" 2>&1
	st=$?
	what="restore failing at fine point $i ($name): status $st"
	if [[ $st -eq 0 ]]; then
		fail "$what: the restore succeeded"
		continue
	fi
	grep -q 'fault injected' "$T/out" || { fail "$what: no message says why"; continue; }
	gone "$what" && passed=$((passed + 1))
done < <(awk -v s="$stride" -v n="$mf" '(NR - 1) % s == 0 || NR == n' "$T/restore-fine")
mv "$BASE.r3" "$BASE.r2.fine"
rm -rf "$BASE.r2"
mv "$BASE.r2.fine" "$BASE.r2"
"$CRF" restore -D "$BASE.r2" -d >"$T/out" 2>&1 || fail "the restore after the walk"
unchanged "the restore after the walk"
rm -rf "$BASE.r2"
"$CRF" dump -t "$root" -D "$BASE.r2" >"$T/out" 2>&1 || { fail "the last dump"; exit 1; }
gone "the last dump"

# 4. the tree's own verdict: the restored root is no child of this shell, so
# its word is its note (it exits without one on any difference).
"$CRF" restore -D "$BASE.r2" -d >"$T/final.log" 2>&1 || fail "the last restore"
touch "$T/verify"
for ((i = 0; i < 1000; i++)); do [[ -e /proc/$root ]] || break; sleep 0.01; done
if ! cat "$T/wl.log" "$T/final.log" | grep -q 'processes: PIDs, parents, sessions, groups'; then
	fail "wl-tree's verdict"
	cat "$T/wl.log" "$T/final.log" | sed 's/^/    | /' | tail
fi
root=
echo "fault-walk: $n dump points, $m restore points, $nf and $mf fine ones; $passed passed, $failed failed"
((failed == 0))
