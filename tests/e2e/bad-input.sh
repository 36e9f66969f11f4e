#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# End-to-end bad input: each case gets one clear message, exit status 1,
# and harms nothing: no process is killed, none is left behind.
#
#   dump of a PID that does not exist
#   dump of a kernel thread (not a process crf can trace)
#   restore while the saved PID is taken (the original still runs)
#   restore of a dump whose pages-*.img lost its last 100 bytes
#   restore of a tree whose root PID is free but a child's PID is taken
#   restore of a process whose open file was removed since the dump
#   restore with a plugin disabled that wrote the dump
#   restore of a process whose cgroup was frozen, then removed, since the dump
#
# usage: bad-input.sh CRF IMAGE_DIR_BASE
set -u
CRF=$1 BASE=$2
T=$(mktemp -d /tmp/crf-bad-input-XXXXXX)
passed=0 failed=0
started=()

cgroups=()

cleanup() {
	local pid cg
	for pid in "${started[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	for cg in "${cgroups[@]}"; do
		rmdir "$cg" 2>/dev/null
	done
	rm -rf "$T" "$BASE".*
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	failed=$((failed + 1))
}

# expect STATUS REGEX CMD...: CMD (given 60 s) exits with STATUS and its
# output matches the extended REGEX.
expect() {
	local want=$1 re=$2 got
	shift 2
	timeout -s KILL 60 "$@" >"$T/out" 2>&1 </dev/null
	got=$?
	# An empty REGEX asks for nothing (grep finds no line in empty output).
	if [[ $got -ne $want ]] || { [[ -n $re ]] && ! grep -Eq -- "$re" "$T/out"; }; then
		fail "$* (status $got, wanted $want; output must match /$re/)"
		sed 's/^/    | /' "$T/out" | tail -20
		return 1
	fi
	passed=$((passed + 1))
}

# A child of ours with a command line no other process has, holding only
# fds 0-2; its PID goes to $pid.
start_sleeper() {
	# shellcheck disable=SC2217 # stdin too: no fd may lead outside the dump
	sleep "$1" </dev/null >/dev/null 2>&1 &
	pid=$!
	started+=("$pid")
}

# PIDs of the processes whose command line is "sleep MARKER".
sleepers() {
	local f
	for f in /proc/[0-9]*/cmdline; do
		[[ $(tr '\0' ' ' <"$f" 2>/dev/null) == "sleep $1 " ]] && { f=${f#/proc/}; echo "${f%/cmdline}"; }
	done
}

running() {
	local state
	state=$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ $state != [ZXtT] ]]
}

# 1. No such process.
pid_max=$(cat /proc/sys/kernel/pid_max)
nopid=$((pid_max - 1))
while [[ -e /proc/$nopid ]]; do nopid=$((nopid - 1)); done
expect 1 "no process with PID $nopid" "$CRF" dump -t "$nopid" -D "$BASE.nopid"

# 2. A kernel thread: it has no memory, and crf must say so, not crash.
kthread=
for s in /proc/[0-9]*/stat; do
	read -r -a f <"$s" 2>/dev/null || continue
	# Field 9 of stat, after the "(comm)" field (no spaces in kernel thread names).
	if (( ${f[8]:-0} & 0x200000 )); then kthread=${f[0]}; break; fi
done
if [[ -z $kthread ]]; then
	fail "no kernel thread visible in /proc to try"
else
	expect 1 "(pid|PID|process) $kthread([^0-9]|\$)" "$CRF" dump -t "$kthread" -D "$BASE.kthread"
fi

# 3. Restore while the original still runs: its PID is taken.
marker=3600.$$1
start_sleeper "$marker"
if expect 0 "" "$CRF" dump -t "$pid" -D "$BASE.taken" --leave-running; then
	running "$pid" || fail "dump --leave-running did not leave PID $pid running"
	# By the way: crf show decodes every image of a real dump.
	expect 0 '"comm": "sleep"' "$CRF" show "$BASE.taken"
	grep -q '"type": "crf.mem.MmEntry"' "$T/out" || fail "crf show did not decode mm-$pid.img"
	expect 1 "(^|[^0-9])$pid([^0-9]|\$)" "$CRF" restore -D "$BASE.taken" -d
	others=$(sleepers "$marker" | grep -vx "$pid")
	if [[ -n $others ]]; then
		fail "the failed restore left processes behind: $others"
		for p in $others; do kill -KILL "$p"; done
	fi
	running "$pid" || fail "the failed restore harmed the original PID $pid"
fi

# 4. A truncated page image.
marker=3600.$$2
start_sleeper "$marker"
if expect 0 "" "$CRF" dump -t "$pid" -D "$BASE.trunc"; then
	wait "$pid" 2>/dev/null
	img=$(find "$BASE.trunc" -maxdepth 1 -name 'pages-*.img' | sort | head -1)
	if [[ -z $img ]]; then
		fail "the dump of PID $pid wrote no pages-*.img"
	else
		truncate -s -100 "$img"
		expect 1 "${img##*/}" "$CRF" restore -D "$BASE.trunc" -d
		left=$(sleepers "$marker")
		if [[ -n $left ]] || [[ -e /proc/$pid ]]; then
			fail "the failed restore left processes behind: ${left:-$pid}"
			for p in $left; do kill -KILL "$p"; done
		fi
	fi
fi

# 5. A tree (sh forks a sleep, then becomes a sleep itself) dumped and left
#    running; its root is then killed, so only the child's PID is taken.
#    The restore creates the root, which cannot create the child: it must
#    fail naming the child's PID, and kill the root it made.
marker=3600.$$3
sh -c "sleep $marker & exec sleep $marker" </dev/null >/dev/null 2>&1 &
pid=$! kid=
started+=("$pid")
for _ in $(seq 200); do
	kid=$(cat /proc/"$pid"/task/*/children 2>/dev/null)
	kid=${kid// /}
	[[ -n $kid && $(tr '\0' ' ' <"/proc/$pid/cmdline") == "sleep $marker " ]] && break
	sleep 0.01
done
started+=("$kid")
if [[ -z $kid ]]; then
	fail "the tree of PID $pid did not start"
elif expect 0 "" "$CRF" dump -t "$pid" -D "$BASE.tree" --leave-running; then
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	expect 1 "(^|[^0-9])$kid([^0-9]|\$)" "$CRF" restore -D "$BASE.tree" -d
	left=$(sleepers "$marker" | grep -vx "$kid")
	if [[ -n $left ]] || [[ -e /proc/$pid ]]; then
		fail "the failed tree restore left processes behind: ${left:-$pid}"
		for p in $left; do kill -KILL "$p"; done
	fi
	running "$kid" || fail "the failed tree restore harmed the original PID $kid"
fi

# 6. A file the process holds is saved by its path; removed before the
#    restore, it cannot be reopened: the restore must fail naming the path
#    and leave nothing behind.
marker=3600.$$4
gone=$T/gone.dat
echo "saved by its path" >"$gone"
sleep "$marker" 3<"$gone" </dev/null >/dev/null 2>&1 &
pid=$!
started+=("$pid")
for _ in $(seq 200); do
	[[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == "sleep $marker " ]] && break
	sleep 0.01
done
if expect 0 "" "$CRF" dump -t "$pid" -D "$BASE.gone"; then
	wait "$pid" 2>/dev/null
	rm -f "$gone"
	expect 1 "fd 3: open $gone: No such file" "$CRF" restore -D "$BASE.gone" -d
	left=$(sleepers "$marker")
	if [[ -n $left ]] || [[ -e /proc/$pid ]]; then
		fail "the failed restore left processes behind: ${left:-$pid}"
		for p in $left; do kill -KILL "$p"; done
	fi
fi

# 7. A dump restores with the plugins that wrote it: one of them disabled
#    at restore refuses it up front, naming the plugin and who disabled it,
#    and creates nothing; without the option the same dump restores.
marker=3600.$$5
start_sleeper "$marker"
if expect 0 "" "$CRF" dump -t "$pid" -D "$BASE.plugoff"; then
	wait "$pid" 2>/dev/null
	expect 1 "the dump was written with plugin 'cgroup' [0-9.]+, which is disabled by --disable" \
		"$CRF" restore -D "$BASE.plugoff" -d --disable cgroup
	[[ -e /proc/$pid ]] && fail "the refused restore created PID $pid"
	expect 0 "" "$CRF" restore -D "$BASE.plugoff" -d
	running "$pid" || fail "the dump refused with --disable cgroup did not restore without it"
	kill -KILL "$pid" 2>/dev/null
fi

# 8. A process in a cgroup v2 of its own, which is frozen, then removed,
#    between the dump and the restore: a task put in a frozen cgroup would
#    not run, and with --manage-cgroups=none crf does not make cgroups, so
#    each time the restore refuses before it forks, naming the cgroup, and
#    leaves nothing behind.
mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
[[ $own == / ]] && own=
cg=$mnt$own/crf-bad-input-$$
marker=3600.$$6
if [[ -z $mnt ]] || ! mkdir "$cg"; then
	fail "cannot make a cgroup v2 (${mnt:-no cgroup2 mount})"
else
	cgroups+=("$cg")
	sh -c "echo \$\$ >'$cg/cgroup.procs' && exec sleep $marker" </dev/null >/dev/null 2>&1 &
	pid=$!
	started+=("$pid")
	for _ in $(seq 200); do
		[[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == "sleep $marker " ]] && break
		sleep 0.01
	done
	if expect 0 "" "$CRF" dump -t "$pid" -D "$BASE.cgone"; then
		wait "$pid" 2>/dev/null
		# Frozen, it would stop the task put in it: refused too.
		echo 1 >"$cg/cgroup.freeze"
		expect 1 "pid $pid: cgroup v2:$own/crf-bad-input-$$ \($cg\) is frozen" \
			"$CRF" restore -D "$BASE.cgone" -d
		echo 0 >"$cg/cgroup.freeze"
		[[ -e /proc/$pid ]] && fail "the refused restore created PID $pid"
		for _ in $(seq 300); do rmdir "$cg" 2>/dev/null && break; sleep 0.01; done
		expect 1 "cgroup v2:$own/crf-bad-input-$$ \($cg\) does not exist: --manage-cgroups=none makes none" \
			"$CRF" restore -D "$BASE.cgone" -d --manage-cgroups=none
		left=$(sleepers "$marker")
		if [[ -n $left ]] || [[ -e /proc/$pid ]] || [[ -e $cg ]]; then
			fail "the refused restore left something behind: ${left:-$pid $cg}"
			for p in $left; do kill -KILL "$p"; done
		fi
	fi
fi

echo "bad-input: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
