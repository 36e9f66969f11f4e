#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The tree's cgroups and their settings (docs/cgroup.md), on wl-cgprops (a
# process and its child that check their /proc/self/cgroup every 20 ms):
#
#   v2 /T (cgroup.max.descendants 5, max.depth 3) > /T/a (the process) >
#   /T/a/b (its child, max.depth 1); v1 memory /T/a (limit 64M, soft limit
#   32M), pids /T (pids.max 33), cpu /T (shares 512, quota 50000 of
#   100000), cpuset /T (cpus and mems 0), where the hierarchies are mounted.
#
# Each case dumps (killing the tree), removes the cgroups or changes them,
# restores, and checks every membership and setting from outside and the
# workload's own check from inside: --manage-cgroups=full and the default
# (soft) make them again; soft and none refuse a setting that differs from
# the saved one, props writes it back; none and props refuse a cgroup that is
# gone, strict one that exists; --cgroup-root puts the tree below another
# cgroup; a setting the kernel does not take there (a cpuset outside its
# parent's) refuses before anything is forked and leaves nothing made.
# Every cgroup made here is removed on every path.
#
# usage: cgroup-props.sh CRF WL_CGPROPS IMAGE_DIR_BASE
set -u
if [[ -z ${CRF_CGPROPS_REAPER:-} ]]; then
	export CRF_CGPROPS_REAPER=1
	exec python3 -c 'import ctypes, os, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
os.execv(sys.argv[1], sys.argv[1:])' "$0" "$@"
fi
CRF=$1 WL=$2 BASE=$3
T=$(mktemp -d /tmp/crf-cgprops-XXXXXX)
N=crf-cgprops-$$
passed=0 failed=0 pids=()

# Mount points from /proc/self/mountinfo: "" for v2, else the v1 controller.
mnt() {
	if [[ -z $1 ]]; then
		awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo
	else
		awk -v c="$1" '{ n = split($0, f, " - "); split(f[2], g, " ");
			if (g[1] == "cgroup" && ("," g[3] ",") ~ ("," c ",")) { print $5; exit } }' \
			/proc/self/mountinfo
	fi
}
V2=$(mnt "") MEM=$(mnt memory) PIDS=$(mnt pids) CPU=$(mnt cpu) CPUSET=$(mnt cpuset)
DEVICES=$(mnt devices)
[[ -n $V2 ]] || { echo "SKIP: no cgroup v2 mounted"; exit 77; }
# The v1 hierarchies used, and the paths of each below its mount ("" none).
V1=()
for h in MEM PIDS CPU CPUSET DEVICES; do [[ -n ${!h} && ${!h} != "$V2"* ]] && V1+=("$h"); done
[[ ${#V1[@]} -gt 0 ]] || echo "note: no v1 hierarchy mounted: cgroup v2 only"
has() { local h; for h in "${V1[@]}"; do [[ $h == "$1" ]] && return 0; done; return 1; }

# Every directory made here, deepest first.
dirs() {
	local root=${1:-}
	echo "$V2$root/$N/a/b $V2$root/$N/a $V2$root/$N"
	has MEM && echo "$MEM$root/$N/a $MEM$root/$N"
	has PIDS && echo "$PIDS$root/$N"
	has CPU && echo "$CPU$root/$N"
	has CPUSET && echo "$CPUSET$root/$N"
	has DEVICES && echo "$DEVICES$root/$N"
}
kill_tree() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do
		for _ in $(seq 200); do [[ -e /proc/$p ]] || break; sleep 0.01; done
	done
	pids=()
}
rm_dirs() {
	local d
	for d in $(dirs "${1:-}"); do
		[[ -d $d ]] || continue
		for _ in $(seq 200); do rmdir "$d" 2>/dev/null && break; sleep 0.01; done
	done
}
cleanup() {
	kill_tree
	rm_dirs
	rm_dirs "/$N-root"
	rmdir "$V2/$N-root" "$MEM/$N-root" "$CPUSET/$N-root" 2>/dev/null
	rm -rf "$T" "$BASE".*
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	[[ -f $T/out ]] && sed 's/^/    | /' "$T/out" | tail -15
	failed=$((failed + 1))
}
ok() { passed=$((passed + 1)); }

# The settings the test sets, and which it compares: "DIR FILE".
SETTINGS=()
settings() {
	local root=${1:-}
	SETTINGS=("$V2$root/$N cgroup.max.descendants" "$V2$root/$N cgroup.max.depth"
		"$V2$root/$N/a/b cgroup.max.depth" "$V2$root/$N/a cgroup.subtree_control")
	has MEM && SETTINGS+=("$MEM$root/$N/a memory.limit_in_bytes"
		"$MEM$root/$N/a memory.soft_limit_in_bytes")
	has PIDS && SETTINGS+=("$PIDS$root/$N pids.max")
	has CPU && SETTINGS+=("$CPU$root/$N cpu.shares" "$CPU$root/$N cpu.cfs_quota_us"
		"$CPU$root/$N cpu.cfs_period_us")
	has CPUSET && SETTINGS+=("$CPUSET$root/$N cpuset.cpus" "$CPUSET$root/$N cpuset.mems")
	has DEVICES && SETTINGS+=("$DEVICES$root/$N devices.list")
	return 0
}
snapshot() { # FILE [ROOT]: every setting's value, one a line
	local s
	settings "${2:-}"
	for s in "${SETTINGS[@]}"; do echo "${s#*"$N"} $(cat ${s% *}/${s#* } 2>&1)"; done >"$1"
}

# Make the cgroups, set them up, start the workload in them.
start() {
	local procs="" d
	mkdir -p "$V2/$N/a/b" || { fail "mkdir $V2/$N/a/b"; exit 1; }
	echo 5 >"$V2/$N/cgroup.max.descendants" && echo 3 >"$V2/$N/cgroup.max.depth" &&
		echo 1 >"$V2/$N/a/b/cgroup.max.depth" || { fail "cgroup v2 settings"; exit 1; }
	procs="$V2/$N/a/cgroup.procs"
	if has MEM; then
		mkdir -p "$MEM/$N/a" && echo 64M >"$MEM/$N/a/memory.limit_in_bytes" &&
			echo 32M >"$MEM/$N/a/memory.soft_limit_in_bytes" || { fail "memory"; exit 1; }
		procs+=" $MEM/$N/a/cgroup.procs"
	fi
	if has PIDS; then
		mkdir -p "$PIDS/$N" && echo 33 >"$PIDS/$N/pids.max" || { fail "pids"; exit 1; }
		procs+=" $PIDS/$N/cgroup.procs"
	fi
	if has CPU; then
		mkdir -p "$CPU/$N" && echo 512 >"$CPU/$N/cpu.shares" &&
			echo 100000 >"$CPU/$N/cpu.cfs_period_us" &&
			echo 50000 >"$CPU/$N/cpu.cfs_quota_us" || { fail "cpu"; exit 1; }
		procs+=" $CPU/$N/cgroup.procs"
	fi
	if has CPUSET; then
		mkdir -p "$CPUSET/$N" && echo "${CPUS:-0}" >"$CPUSET/$N/cpuset.cpus" &&
			echo 0 >"$CPUSET/$N/cpuset.mems" || { fail "cpuset"; exit 1; }
		procs+=" $CPUSET/$N/cgroup.procs"
	fi
	if has DEVICES; then
		# A container's device list: all denied, then a few allowed (runc's default).
		mkdir -p "$DEVICES/$N" && echo a >"$DEVICES/$N/devices.deny" &&
			echo "c 1:3 rwm" >"$DEVICES/$N/devices.allow" &&
			echo "c 1:5 rwm" >"$DEVICES/$N/devices.allow" &&
			echo "c 136:* rwm" >"$DEVICES/$N/devices.allow" &&
			echo "b *:* m" >"$DEVICES/$N/devices.allow" || { fail "devices"; exit 1; }
		procs+=" $DEVICES/$N/cgroup.procs"
	fi
	rm -f "$T"/st.*
	case ${CASE:-} in root) touch "$T/st.rebase" ;; esac
	setsid sh -c 'for f in '"$procs"'; do echo $$ >$f || exit 9; done; exec "$@"' sh \
		"$WL" "$T/st" "$V2/$N/a/b/cgroup.procs" ${CASE:-} </dev/null >/dev/null 2>&1 &
	pids=($!)
	disown
	for _ in $(seq 500); do [[ -s $T/st.0 && -s $T/st.1 ]] && break; sleep 0.01; done
	[[ -s $T/st.0 && -s $T/st.1 ]] || { fail "the workload did not start"; exit 1; }
	pids+=($(cat /proc/"${pids[0]}"/task/*/children))
	cat /proc/"${pids[0]}"/cgroup >"$T/cg.0" && cat /proc/"${pids[1]}"/cgroup >"$T/cg.1"
	snapshot "$T/settings"
}

# dump NAME: a dump that kills the tree.
dump() {
	rm -rf "$BASE.$1"
	"$CRF" dump -t "${pids[0]}" -D "$BASE.$1" >"$T/out" 2>&1 || { fail "$1: dump"; return 1; }
	kill_tree
}

# restored WHAT ROOT: every membership and setting as at the dump (below ROOT
# with --cgroup-root), and the workload checks on.
restored() {
	local what=$1 root=${2:-} i a b
	pids=($(cat "$T/pids"))
	for i in 0 1; do
		[[ -e /proc/${pids[$i]} ]] || { fail "$what: pid ${pids[$i]} not restored"; return 1; }
		if [[ -z $root ]]; then
			diff "$T/cg.$i" /proc/"${pids[$i]}"/cgroup >"$T/diff" ||
				{ fail "$what: pid ${pids[$i]}'s cgroups: $(cat "$T/diff")"; return 1; }
		else
			grep -q "^0::$root/$N/a" /proc/"${pids[$i]}"/cgroup ||
				{ fail "$what: pid ${pids[$i]} not below $root: $(cat /proc/"${pids[$i]}"/cgroup)"; return 1; }
		fi
	done
	snapshot "$T/now" "$root"
	diff "$T/settings" "$T/now" >"$T/diff" || { fail "$what: settings: $(cat "$T/diff")"; return 1; }
	for i in 0 1; do
		ls -l /proc/"${pids[$i]}"/fd | grep -q cgroup &&
			{ fail "$what: pid ${pids[$i]} holds a cgroup fd of crf's: $(ls -l /proc/${pids[$i]}/fd)"; return 1; }
	done
	a=$(head -1 "$T/st.0") b=$(head -1 "$T/st.1")
	sleep 0.2
	for i in 0 1; do
		[[ $(head -1 "$T/st.$i") == BAD ]] && { fail "$what: the workload saw: $(cat "$T/st.$i")"; return 1; }
	done
	[[ $(head -1 "$T/st.0") -gt $a && $(head -1 "$T/st.1") -gt $b ]] ||
		{ fail "$what: the workload does not run on"; return 1; }
	return 0
}

# restore NAME [options]: -d, the PIDs into $T/pids.
restore() {
	local name=$1
	shift
	"$CRF" restore -D "$BASE.$name" -d "$@" >"$T/out" 2>&1 || return 1
	echo "${pids[@]:-}" >/dev/null
	return 0
}

# refused WHAT PATTERN NAME [options]: the restore fails with PATTERN and forks nothing.
refused() {
	local what=$1 pat=$2 name=$3
	shift 3
	if "$CRF" restore -D "$BASE.$name" -d "$@" >"$T/out" 2>&1; then
		fail "$what: the restore succeeded"
		pids=($(cat "$T/pids")); kill_tree
		return 1
	fi
	grep -Eq "$pat" "$T/out" || { fail "$what: no '$pat'"; return 1; }
	for p in $(cat "$T/pids"); do
		[[ -e /proc/$p ]] && { fail "$what: pid $p exists"; return 1; }
	done
	return 0
}

run_case() { # NAME: start, remember the PIDs, dump
	start
	echo "${pids[@]}" >"$T/pids"
	dump "$1"
}

# 1. full: the cgroups removed, made again with every setting.
if run_case full; then
	rm_dirs
	restore full --manage-cgroups=full && restored full && ok || fail "full: $(cat "$T/out")"
fi
kill_tree; rm_dirs

# 2. The default, soft: made again too.
if run_case soft; then
	rm_dirs
	restore soft && restored "soft (the default)" && ok || fail "soft: $(cat "$T/out")"
fi
kill_tree

# 3. soft, none: a cgroup that exists with another setting is refused by name; props writes it.
if run_case differ; then
	echo 6 >"$V2/$N/cgroup.max.descendants"
	refused "soft, a setting changed" \
		"cgroup v2:/$N \\(.*\\): cgroup.max.descendants is \"6\", the dump saved \"5\" \\(--manage-cgroups=soft" \
		differ && ok
	refused "none, a setting changed" "cgroup.max.descendants is \"6\", the dump saved \"5\"" \
		differ --manage-cgroups=none && ok
	restore differ --manage-cgroups=props && restored props && ok || fail "props: $(cat "$T/out")"
	kill_tree
	# none: as they are, all as saved.
	restore differ --manage-cgroups=none && restored none && ok || fail "none: $(cat "$T/out")"
	kill_tree
	# strict: refused while they exist.
	refused "strict, the cgroups exist" \
		"cgroup [^ ]+:/$N \\(.*\\) exists: --manage-cgroups=strict restores only cgroups that are gone" \
		differ --manage-cgroups=strict && ok
	rm_dirs
	refused "none, the cgroups gone" \
		"cgroup [^ ]+:/$N \\(.*\\) does not exist: --manage-cgroups=none makes none" \
		differ --manage-cgroups=none && ok
	refused "props, the cgroups gone" "does not exist: --manage-cgroups=props makes none" \
		differ --manage-cgroups=props && ok
	restore differ --manage-cgroups=strict && restored strict && ok || fail "strict: $(cat "$T/out")"
fi
kill_tree; rm_dirs

# 4. --cgroup-root: v2 and memory below /$N-root (the workload takes its new
# /proc/self/cgroup as its reference: st.rebase).
if CASE=root run_case root; then
	rm_dirs
	mkdir "$V2/$N-root" && { ! has MEM || mkdir "$MEM/$N-root"; } || fail "mkdir $N-root"
	args=(--cgroup-root "v2:/$N-root")
	has MEM && args+=(--cgroup-root "memory:/$N-root")
	# Only v2 and memory move: the others are where they were (and made there).
	settings_all=$(cat "$T/settings")
	grep -E "^/$N(/a)?(/b)? (cgroup|memory)" "$T/settings" >"$T/settings.moved"
	if restore root --manage-cgroups=full "${args[@]}"; then
		cp "$T/settings.moved" "$T/settings"
		snapshot "$T/now.all" "/$N-root"
		grep -E "^/$N(/a)?(/b)? (cgroup|memory)" "$T/now.all" >"$T/now"
		if ! diff "$T/settings" "$T/now" >"$T/diff"; then
			fail "--cgroup-root: settings: $(cat "$T/diff")"
		elif ! grep -q "^0::/$N-root/$N/a\$" /proc/"$(cut -d' ' -f1 "$T/pids")"/cgroup ||
			! grep -q "^0::/$N-root/$N/a/b\$" /proc/"$(cut -d' ' -f2 "$T/pids")"/cgroup; then
			fail "--cgroup-root: not below /$N-root: $(cat /proc/"$(cut -d' ' -f1 "$T/pids")"/cgroup)"
		elif has MEM && ! grep -q "memory:/$N-root/$N/a\$" /proc/"$(cut -d' ' -f1 "$T/pids")"/cgroup; then
			fail "--cgroup-root: memory not below /$N-root"
		else
			sleep 0.2
			[[ $(head -1 "$T/st.0") == BAD || $(head -1 "$T/st.1") == BAD ]] &&
				fail "--cgroup-root: the workload saw: $(cat "$T"/st.?)" || ok
		fi
		echo "$settings_all" >"$T/settings"
		pids=($(cat "$T/pids")); kill_tree
	else
		fail "--cgroup-root: $(cat "$T/out")"
	fi
	rm_dirs "/$N-root"
	rm_dirs
fi
kill_tree; rm_dirs

# 5. A cgroup namespace made in /$N/a (and the v1 cgroups): gone with the cgroups, made
# again in them; the workload reads "/" and "/b" as before.
if CASE=ns run_case cgns; then
	grep -q '^0::/b$' "$T/st.1" 2>/dev/null # (the view is the workload's to check)
	rm_dirs
	if restore cgns --manage-cgroups=full && restored "cgroup namespace"; then
		for p in "${pids[@]}"; do
			[[ $(readlink /proc/"$p"/ns/cgroup) != $(readlink /proc/self/ns/cgroup) ]] ||
				fail "cgroup namespace: pid $p is in crf's"
		done
		ok
	else
		fail "cgroup namespace: $(cat "$T/out")"
	fi
fi
kill_tree; rm_dirs

# A task moved out of its namespace's root (its view: "/.."): the root is not known, the
# dump is refused by name, and the tree runs on.
CASE=ns start
touch "$T/st.rebase"
echo "${pids[0]}" >"$V2/$N/cgroup.procs"
rm -rf "$BASE.cgns-out"
if "$CRF" dump -t "${pids[0]}" -D "$BASE.cgns-out" >"$T/out" 2>&1; then
	fail "cgroup namespace, a task outside its root: the dump succeeded"
elif ! grep -Eq "pid ${pids[0]}: namespace cgroup:\[[0-9]+\]: its cgroup v2:/$N reads \"/\.\.\" from inside: it is outside the namespace's root" "$T/out"; then
	fail "cgroup namespace, a task outside its root: not refused by name"
elif ! kill -0 "${pids[0]}" || [[ $(head -1 "$T/st.0") == BAD ]]; then
	fail "cgroup namespace, a task outside its root: the tree does not run on"
else
	ok
fi
kill_tree; rm_dirs

# A setting crf does not restore (the v1 OOM killer switched off) refuses the dump, by name.
if has MEM; then
	start
	echo 1 >"$MEM/$N/a/memory.oom_control"
	rm -rf "$BASE.oom"
	if "$CRF" dump -t "${pids[0]}" -D "$BASE.oom" >"$T/out" 2>&1; then
		fail "memory.oom_control: the dump succeeded"
	elif ! grep -q "pid ${pids[0]}: cgroup memory:/$N/a: memory.oom_control reads \"oom_kill_disable 1,.*\", not \"oom_kill_disable 0\" as in a new cgroup: crf does not restore this setting" "$T/out"; then
		fail "memory.oom_control: not refused by name"
	elif ! kill -0 "${pids[0]}" || [[ $(head -1 "$T/st.0") == BAD ]]; then
		fail "memory.oom_control: the tree does not run on"
	else
		ok
	fi
	kill_tree; rm_dirs
fi

# Another (a v1 CFS burst): refused by name too, the tree runs on.
if has CPU; then
	start
	if echo 1000 >"$CPU/$N/cpu.cfs_burst_us" 2>/dev/null; then
		rm -rf "$BASE.burst"
		if "$CRF" dump -t "${pids[0]}" -D "$BASE.burst" >"$T/out" 2>&1; then
			fail "cpu.cfs_burst_us: the dump succeeded"
		elif ! grep -q "pid ${pids[0]}: cgroup cpu:/$N: cpu.cfs_burst_us reads \"1000\", not \"0\" as in a new cgroup: crf does not restore this setting" "$T/out"; then
			fail "cpu.cfs_burst_us: not refused by name"
		elif ! kill -0 "${pids[0]}" || [[ $(head -1 "$T/st.0") == BAD ]]; then
			fail "cpu.cfs_burst_us: the tree does not run on"
		else
			ok
		fi
	else
		echo "note: cpu.cfs_burst_us not writable here: the refused burst not tried"
	fi
	kill_tree; rm_dirs
fi

# 6. A cpuset the kernel does not take below --cgroup-root's (CPU 1, the parent has only 0):
# refused before anything is forked, naming the cgroup and the file; nothing left made.
if has CPUSET && [[ $(nproc) -ge 2 ]]; then
	CPUS=1
	if run_case cpuset; then
		rm_dirs
		mkdir "$CPUSET/$N-root" && echo 0 >"$CPUSET/$N-root/cpuset.cpus" &&
			echo 0 >"$CPUSET/$N-root/cpuset.mems" || fail "cpuset root"
		refused "a cpuset outside its parent's" \
			"cgroup cpuset:/$N-root/$N \\(.*\\): cannot write cpuset.cpus \"1\"" \
			cpuset --manage-cgroups=full --cgroup-root "cpuset:/$N-root" && ok
		[[ -d $CPUSET/$N-root/$N ]] && fail "the refused restore left $CPUSET/$N-root/$N"
		[[ -d $V2/$N ]] && fail "the refused restore left $V2/$N"
		rmdir "$CPUSET/$N-root"
	fi
	CPUS=0
	kill_tree; rm_dirs
else
	echo "note: no v1 cpuset or 1 CPU: the refused cpuset not tried"
fi

echo "passed $passed, failed $failed"
[[ $failed -eq 0 ]]
