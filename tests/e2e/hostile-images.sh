#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Hostile images are refused before the first fork.  One real dump of a
# small tree (rich-tree.c: a thread, a child, pipes, epoll, inotify,
# memfd, an unlinked file...) is copied once per case, and one record of
# one image rewritten by img-tamper (re-framed: every checksum right) into
# what a hostile image would hold.  Each must be refused by crf restore:
#
#   exit 1, no sanitizer report, one error line naming the file, the
#   record and the field (the case's regex);
#   before anything is forked: CRF_FAULT=trace shows no point after the
#   plugins' restore-prepare hooks (tree ready, restore-task...);
#   no process at any PID of the dump afterwards.
#
# The control: the untouched dump restores, its POSIX timer signalling the
# same thread.  Then the same for a dump of hold-sockets.py (the net
# plugin's images and the payloads of socket fds), its control restored
# too.
#
# usage: hostile-images.sh CRF IMG_TAMPER RICH_TREE IMAGE_DIR_BASE
set -u
CRF=$1 TAMPER=$2 TREE=$3 BASE=$4
passed=0 failed=0 cases=0
OUT=$(mktemp /tmp/crf-hostile-XXXXXX)
restored=()

TOP=$BASE

cleanup() {
	local pid
	for pid in "${restored[@]}"; do
		kill -KILL "$pid" 2>/dev/null
	done
	rm -rf "$OUT" "$TOP" "$TOP".*
	# A lock a failed step left (a dump of hold-sockets.py never restored).
	[[ -z ${lock:-} ]] || nft delete table inet "$lock" 2>/dev/null || :
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	sed 's/^/    | /' "$OUT" | tail -20
	failed=$((failed + 1))
}

# The dump: the tree in a session of its own, with no fd of ours.
rm -rf "$BASE" "$BASE".*
setsid python3 -c 'import os, sys; os.closerange(3, 4096); os.execvp(sys.argv[1], sys.argv[1:])' \
	"$TREE" </dev/null >/dev/null 2>&1 &
root=$!
# Ready once its child is forked, which it does last but for the thread's
# pause (the interpreter that execs it may take seconds on a loaded machine).
for _ in $(seq 400); do
	[[ $(cat /proc/$root/task/*/children 2>/dev/null) ]] &&
		grep -q '^notify:' /proc/$root/timers 2>/dev/null && break
	sleep 0.05
done
sleep 0.3
timers=$(grep -E '^(notify|signal):' /proc/$root/timers)
if ! "$CRF" dump -t "$root" -D "$BASE" >"$OUT" 2>&1; then
	fail "crf dump of the tree"
	kill -KILL "$root" 2>/dev/null
	exit 1
fi
wait "$root" 2>/dev/null
pids=$(ls "$BASE" | sed -n 's/^core-\([0-9]*\)\.img$/\1/p' | sort -n)
child=$(echo "$pids" | grep -vx "$root" | head -1)
# The dump killed them all; the child's zombie goes when init reaps it.
for _ in $(seq 100); do
	gone=1
	for pid in $pids; do
		[[ -e /proc/$pid ]] && gone=0
	done
	((gone)) && break
	sleep 0.05
done
# A PID of the tree's other than the root's, and one that is in no tree.
stranger=$(( (root + 7919) % 4000000 + 300 ))

# refused NAME FILE REGEX EDIT...: the dump with FILE rewritten by EDITs is
# refused as above.  FILE "-": EDITs are a shell command run in the copy.
refused() {
	local name=$1 file=$2 re=$3 status pid dir=$BASE.$1
	shift 3
	cases=$((cases + 1))
	rm -rf "$dir"
	cp -a "$BASE" "$dir"
	if [[ $file == - ]]; then
		(cd "$dir" && eval "$*") >"$OUT" 2>&1
	else
		"$TAMPER" "$dir" "$file" "$@" >"$OUT" 2>&1
	fi
	if (($?)); then
		fail "$name: tampering with $file: $*"
		return
	fi
	CRF_FAULT=trace timeout -s KILL 60 "$CRF" restore -D "$dir" -d >"$OUT" 2>&1
	status=$?
	if [[ $status -ne 1 ]] || grep -Eq 'Sanitizer|runtime error' "$OUT"; then
		fail "$name: crf restore exited with $status (not 1) or crashed"
		# What it made goes, for the cases after it.
		for pid in $pids; do
			kill -KILL "$pid" 2>/dev/null
		done
		sleep 0.5
		return
	fi
	# A plugin's error is followed by the core's "plugin 'X': restore-prepare failed".
	if ! grep -Eq -- "$re" "$OUT" ||
		[[ $(grep -v "error: plugin '[a-z]*': restore-prepare failed" "$OUT" |
			grep -c 'error') -ne 1 ]]; then
		fail "$name: one error line, matching /$re/"
		return
	fi
	if grep -Eq 'fault point [0-9]+: (tree ready|restore-(task|premap|session|finish) )' \
		"$OUT"; then
		fail "$name: refused only after the tree was forked"
		return
	fi
	for pid in $pids; do
		if [[ -e /proc/$pid ]]; then
			fail "$name: PID $pid exists after the refused restore"
			return
		fi
	done
	passed=$((passed + 1))
	rm -rf "$dir"
}

core=core-$root.img
# The core's images: inventory, pstree, core-PID.img, cpu.img.
refused type-name - "pstree.img: holds crf.core.Cpu, not crf.core.Process" cp cpu.img pstree.img
refused pstree-parent pstree.img "pstree.img: PID $child: its parent $stranger is not" \
	"1:ppid=$stranger"
refused core-stranger - "core-$stranger.img: PID $stranger is not a live process of pstree.img" \
	cp "$core" "core-$stranger.img"
refused core-pid "$core" "$core: record 0: TaskCore.pid: $stranger, the file is PID $root's" \
	"0:pid=$stranger"
refused core-leader "$core" "$core: record 0: TaskCore.threads\\[0\\].tid: $stranger, not the leader" \
	"0:threads[0].tid=$stranger"
refused core-thread-twice "$core" "$core: record 0: TaskCore.threads\\[1\\].tid: thread $root twice" \
	"0:threads[1].tid=$root"
refused core-thread-nstid "$core" "$core: record 0: TaskCore.threads\\[1\\].ns_tid\\[0\\]: $stranger, not the thread's TID" \
	"0:threads[1].ns_tid[0]=$stranger"
refused core-rlimit "$core" "$core: record 0: TaskCore.rlimits\\[0\\].resource: 99 is out of range" \
	"0:rlimits[0].resource=99"
refused core-sigaction "$core" "$core: record 0: TaskCore.sigactions\\[0\\].sig: 65 is out of range" \
	"0:sigactions[0].sig=65"
refused core-timer-thread "$core" "$core: record 0: TaskCore.timers\\[0\\].notify_tid: $stranger is no thread of it" \
	"0:timers[0].notify_tid=$stranger"
# The cgroup plugin: cgroup.img.
refused cgroup-pid cgroup.img "cgroup.img: record 0: PID $stranger is not a live process of the dump" \
	"0:pid=$stranger"
refused cgroup-path cgroup.img "cgroup.img: record 0: TaskCgroups.members\\[0\\].path: '/../../etc' is not a cgroup path" \
	"0:members[0].path=/../../etc"

# first FILE COND: the index of the first record of FILE for which the
# Python expression COND (on record x, as crf show prints it) holds.
first() {
	"$CRF" show "$BASE" "$1" | python3 -c "import json, sys
print(next(i for i, x in enumerate(json.load(sys.stdin)['records']) if $2))"
}

# The mem plugin: mm-PID.img, shmem-*.img.
mm=mm-$root.img
vma=$(first "$mm" "'vma' in x")
runs=$(first "$mm" "'pages' in x and x['pages']['runs']")
refused mem-vma-overlap "$mm" "$mm: record $((vma + 1)): Vma.start: .* overlaps the mapping before it" \
	"dup:$vma:$((vma + 1))"
refused mem-run-outside "$mm" "$mm: record $runs: PageRuns.runs\\[0\\]: .* is not inside its mapping" \
	"$runs:pages.runs[0].vaddr+=0x100000000"
refused mem-run-offset "$mm" "$mm: record $runs: PageRuns.runs\\[0\\].off: .* is past the [0-9]+ bytes of the pages image" \
	"$runs:pages.runs[0].off=0x7ffffff000"
refused mem-n-vmas "$mm" "$mm: Mm.n_vmas: [0-9]+ mappings announced, [0-9]+ found" "0:mm.n_vmas+=1"
shmem=$(cd "$BASE" && ls shmem-[0-9]*.img | head -1)
refused mem-shmem-size "$shmem" "$shmem: record 0: ShmemObject: kind .* not the object the file is named for" \
	"0:object.size=0"
# The files plugin: files-PID.img and the images its records refer to.
files=files-$root.img
n=$("$CRF" show "$BASE" "$files" | python3 -c "import json, sys
print(len(json.load(sys.stdin)['records']))")
pipe=$(first "$files" "'pipe' in x")
epoll=$(first "$files" "'epoll' in x")
dup=$(first "$files" "'same_as' in x")
unl=$(first "$files" "'unlinked' in x and 'file' in x['unlinked']")
refused files-fd-limit "$files" "$files: record $((n - 1)): Fd.fd: 99999999, above the fd limit" \
	"$((n - 1)):fd=99999999"
refused files-fd-order "$files" "$files: record $((n - 1)): Fd.fd: 0 after fd [0-9]+: not in increasing order" \
	"$((n - 1)):fd=0"
refused files-pipe-index "$files" "$files: record $pipe: Fd.pipe: pipe 7, pipes.img has 1" \
	"$pipe:pipe=7"
refused files-epoll-target "$files" "$files: record $epoll: Fd.epoll.targets\\[0\\]: fd 900, which pid $root does not have" \
	"$epoll:epoll.targets[0].tfd=900"
refused files-dup "$files" "$files: record $dup: Fd.same_as: fd 900 is not an earlier fd" \
	"$dup:same_as=900"
refused files-same-pid "$files" "$files: record $dup: Fd.same_pid: PID $stranger is not a live process" \
	"$dup:same_pid=$stranger"
refused files-unlinked-index "$files" "$files: record $unl: Fd.unlinked.file: file 9, unlinked.img has 1" \
	"$unl:unlinked.file=9"
refused files-shared-pid shared-fds.img "shared-fds.img: record 0: PID $stranger is not a live process" \
	"0:pid=$stranger"

# The control: the untouched dump restores.
cases=$((cases + 1))
if ! "$CRF" restore -D "$BASE" -d >"$OUT" 2>&1 || [[ ! -e /proc/$root ]]; then
	fail "control: the untouched dump did not restore"
elif [[ $(grep -E '^(notify|signal):' /proc/$root/timers) != "$timers" ]]; then
	echo "$timers" >"$OUT"
	grep -E '^(notify|signal):' /proc/$root/timers >>"$OUT"
	fail "control: the POSIX timer signals another target (before, after)"
else
	passed=$((passed + 1))
fi
restored=($pids)

# The net plugin: a process holding sockets (hold-sockets.py), dumped.
BASE=$TOP.net
setsid python3 -c 'import os, sys; os.closerange(3, 4096); os.execvp(sys.argv[1], sys.argv[1:])' \
	python3 "$(dirname "$0")/hold-sockets.py" </dev/null >/dev/null 2>&1 &
root=$!
restored+=("$root")
for _ in $(seq 100); do
	# The tun's address is the last thing it sets up.
	ip -4 addr show dev "crfhs$root" 2>/dev/null | grep -q 10.213.77.1 && break
	sleep 0.05
done
if ! "$CRF" dump -t "$root" -D "$BASE" --tcp-established --unix-peercred-crf >"$OUT" 2>&1; then
	fail "crf dump of hold-sockets.py"
	exit 1
fi
wait "$root" 2>/dev/null
pids=$root
files=files-$root.img
unix=$(first unix-sk.img "'peer' in x")
named=$(first unix-sk.img "'name' in x")
tcp=$(first "$files" "x.get('kind') == 'tcp'")
usk=$(first "$files" "x.get('kind') == 'unix'")
refused net-lock-table netlock.img "netlock.img: record 0: NetLock.table: .* is not a table crf makes" \
	"0:table=crf_lock_1 { }; flush ruleset; add table inet x"
refused net-unix-peer unix-sk.img "unix-sk.img: record $unix: UnixSk.peer: socket 12345, which unix-sk.img does not list" \
	"$unix:peer=12345"
refused net-unix-name unix-sk.img "unix-sk.img: record $named: UnixSk.name: a name of 120 bytes" \
	"$named:name=$(printf '%0120d' 0)"
refused net-unix-twice unix-sk.img "unix-sk.img: socket [0-9]+ listed twice" "dup:0:1"
refused net-tcp-payload "$files" "pid $root: fd [0-9]+ \\(tcp\\): payload: no crf.net.InetSk in its 7 bytes" \
	"$tcp:payload=garbage"
refused net-unix-payload "$files" "pid $root: fd [0-9]+ \\(unix\\): payload: 3 bytes for a unix socket" \
	"$usk:payload=abc"
# The devices plugin's tun kind: its check (ABI 1.7) before the fork.
tun=$(first "$files" "x.get('kind') == 'tun'")
refused dev-tun-payload "$files" "pid $root: fd [0-9]+ \\(tun\\): payload: no crf.devices.Tun in its 3 bytes" \
	"$tun:payload=abc"
# The network lock of the killing dump stays through refused restores, and
# the one that succeeds drops it.
lock=$("$CRF" show "$BASE" netlock.img | python3 -c "import json, sys
print(json.load(sys.stdin)['records'][0]['table'])")
# A restore that fails late, the tree made and its connections with it,
# before restore-resume
# (one end with nothing to read, which a close out of repair mode would
# leave in FIN-WAIT-1 on the four-tuple): nothing left, the lock kept.
cases=$((cases + 3))
if nft list table inet "$lock" >/dev/null 2>&1; then
	passed=$((passed + 1))
else
	fail "net-lock-kept: the refused restores dropped the network lock $lock"
fi
if CRF_FAULT="fail@tree ready" "$CRF" restore -D "$BASE" -d >"$OUT" 2>&1; then
	fail "net-late-failure: the restore with a fault injected succeeded"
elif ! grep -q 'fault injected at point [0-9]* (tree ready)' "$OUT" || [[ -e /proc/$root ]]; then
	fail "net-late-failure: not failed at the point, or pid $root left"
elif ! nft list table inet "$lock" >/dev/null 2>&1; then
	fail "net-late-failure: the failed restore dropped the network lock $lock"
else
	passed=$((passed + 1))
fi
if ! "$CRF" restore -D "$BASE" -d >"$OUT" 2>&1 || [[ ! -e /proc/$root ]]; then
	fail "control: the untouched dump of hold-sockets.py did not restore"
elif nft list table inet "$lock" >/dev/null 2>&1; then
	fail "control: the restore left the network lock $lock"
else
	passed=$((passed + 1))
fi

echo "hostile-images: $passed passed, $failed failed"
((failed == 0 && passed == cases))
