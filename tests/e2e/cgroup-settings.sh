#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The settings crf does not write back (docs/cgroup.md, "Every other
# setting"), on wl-cgprops (a process and its child in /$N/a, which check
# their /proc/self/cgroup every 20 ms):
#
#   1. v1 memory.swappiness of /$N/a changed (10, its parent has 60): the
#      dump is refused, naming the task, the cgroup, the file, the value and
#      a new cgroup's; the tree runs on, no image is left;
#   2. another setting no list names (v2 cgroup.pressure 0): refused the same;
#   3. the same where no scratch cgroup can be made (the parent's
#      cgroup.max.descendants is reached): crf's table says, refused too;
#   4. memory.swappiness 10 inherited from the parent (crf runs in /$N/crf,
#      so /$N is the root, not the tree's): dumped, and restored into a /$N/a
#      made again that reads 10; a soft restore into a /$N/a whose
#      swappiness was changed meanwhile is refused by name;
#   5. with manage-cgroups = none at the dump (a --config file), the changed
#      swappiness is saved, not refused: a restore into the same cgroups
#      works, one into cgroups made again is refused by name.
# No scratch cgroup is ever left; every cgroup made here is removed.
#
# usage: cgroup-settings.sh CRF WL_CGPROPS IMAGE_DIR_BASE
set -u
if [[ -z ${CRF_CGSET_REAPER:-} ]]; then
	export CRF_CGSET_REAPER=1
	exec python3 -c 'import ctypes, os, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
os.execv(sys.argv[1], sys.argv[1:])' "$0" "$@"
fi
CRF=$1 WL=$2 BASE=$3
T=$(mktemp -d /tmp/crf-cgset-XXXXXX)
N=crf-cgset-$$
passed=0 failed=0 pids=()

mnt() {
	if [[ -z $1 ]]; then
		awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo
	else
		awk -v c="$1" '{ n = split($0, f, " - "); split(f[2], g, " ");
			if (g[1] == "cgroup" && ("," g[3] ",") ~ ("," c ",")) { print $5; exit } }' \
			/proc/self/mountinfo
	fi
}
V2=$(mnt "") MEM=$(mnt memory)
[[ -n $V2 ]] || { echo "SKIP: no cgroup v2 mounted"; exit 77; }
[[ -n $MEM && $MEM != "$V2"* ]] || { MEM=; echo "note: no v1 memory hierarchy: swappiness not tried"; }

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
	for d in "$V2/$N/a" "$V2/$N/crf" "$V2/$N" ${MEM:+"$MEM/$N/a" "$MEM/$N/crf" "$MEM/$N"}; do
		[[ -d $d ]] || continue
		for _ in $(seq 200); do rmdir "$d" 2>/dev/null && break; sleep 0.01; done
	done
}
cleanup() {
	kill_tree
	rm_dirs
	rm -rf "$T" "$BASE".*
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	[[ -f $T/out ]] && sed 's/^/    | /' "$T/out" | tail -8
	failed=$((failed + 1))
}
ok() { passed=$((passed + 1)); }

# No scratch cgroup of crf's is left anywhere below /$N.
no_scratch() {
	local left
	left=$(find "$V2/$N" ${MEM:+"$MEM/$N"} -maxdepth 2 -name 'crf-scratch-*' 2>/dev/null)
	[[ -z $left ]] || { fail "$1: scratch cgroups left: $left"; return 1; }
}

# start: /$N/a in v2 (and v1 memory), the workload in it; crf's own cgroups /$N/crf.
start() {
	mkdir -p "$V2/$N/a" "$V2/$N/crf" || { fail "mkdir $V2/$N/a"; exit 1; }
	local procs="$V2/$N/a/cgroup.procs"
	if [[ -n $MEM ]]; then
		mkdir -p "$MEM/$N" && echo "${PARENT_SWAP:-60}" >"$MEM/$N/memory.swappiness" &&
			mkdir -p "$MEM/$N/a" "$MEM/$N/crf" || { fail "memory cgroups"; exit 1; }
		procs+=" $MEM/$N/a/cgroup.procs"
	fi
	rm -f "$T"/st.*
	setsid sh -c 'for f in '"$procs"'; do echo $$ >$f || exit 9; done; exec "$@"' sh \
		"$WL" "$T/st" "$V2/$N/a/cgroup.procs" </dev/null >/dev/null 2>&1 &
	pids=($!)
	disown
	for _ in $(seq 500); do [[ -s $T/st.0 && -s $T/st.1 ]] && break; sleep 0.01; done
	[[ -s $T/st.0 && -s $T/st.1 ]] || { fail "the workload did not start"; exit 1; }
	pids+=($(cat /proc/"${pids[0]}"/task/*/children))
}

# in_crf CMD...: run CMD in crf's own cgroups /$N/crf (so /$N is the tree's root).
in_crf() {
	sh -c 'echo $$ >'"$V2/$N/crf/cgroup.procs"' || exit 9
		[ -z "'"$MEM"'" ] || echo $$ >'"$MEM/$N/crf/cgroup.procs"' || exit 9
		exec "$@"' sh "$@"
}

# refused WHAT PATTERN NAME CMD...: CMD dump fails with PATTERN; the tree runs on.
refused() {
	local what=$1 pat=$2 name=$3 a
	shift 3
	a=$(head -1 "$T/st.0")
	rm -rf "$BASE.$name"
	if "$@" dump -t "${pids[0]}" -D "$BASE.$name" >"$T/out" 2>&1; then
		fail "$what: the dump succeeded"
	elif ! grep -Eq "$pat" "$T/out"; then
		fail "$what: not refused by name (no '$pat')"
	elif [[ -e $BASE.$name/inventory.img ]]; then
		fail "$what: an image was left"
	elif ! kill -0 "${pids[0]}" || ! sleep 0.2 || [[ $(head -1 "$T/st.0") == BAD ]] ||
		[[ $(head -1 "$T/st.0") -le $a ]]; then
		fail "$what: the tree does not run on"
	else
		no_scratch "$what" && ok
	fi
}

# restored WHAT: both processes back, running, their cgroups' checks fine.
restored() {
	local i a
	pids=($(cat "$T/pids"))
	for i in 0 1; do
		[[ -e /proc/${pids[$i]} ]] || { fail "$1: pid ${pids[$i]} not restored"; return 1; }
	done
	a=$(head -1 "$T/st.0")
	sleep 0.2
	[[ $(head -1 "$T/st.0") != BAD && $(head -1 "$T/st.1") != BAD ]] ||
		{ fail "$1: the workload saw: $(cat "$T"/st.?)"; return 1; }
	[[ $(head -1 "$T/st.0") -gt $a ]] || { fail "$1: the workload does not run on"; return 1; }
}

if [[ -n $MEM ]]; then
	start
	echo 10 >"$MEM/$N/a/memory.swappiness"
	refused "memory.swappiness" \
		"pid ${pids[0]}: cgroup memory:/$N/a: memory.swappiness reads \"10\", not \"60\" as in a new cgroup: crf does not restore this setting" \
		swap "$CRF"
	kill_tree; rm_dirs
fi

start
echo 0 >"$V2/$N/a/cgroup.pressure" || fail "cannot write cgroup.pressure"
refused "cgroup.pressure" \
	"pid ${pids[0]}: cgroup v2:/$N/a: cgroup.pressure reads \"0\", not \"1\" as in a new cgroup" \
	pressure "$CRF"
# 3. No scratch cgroup can be made beside /$N/a: the table knows cgroup.pressure's default.
echo 2 >"$V2/$N/cgroup.max.descendants"
refused "cgroup.pressure, no scratch cgroup" \
	"cgroup v2:/$N/a: cgroup.pressure reads \"0\", not \"1\" as in a new cgroup" \
	pressure in_crf "$CRF"
echo max >"$V2/$N/cgroup.max.descendants"
kill_tree; rm_dirs

# 4. Inherited from the parent, which is not the tree's: dumped and restored as it was.
if [[ -n $MEM ]]; then
	PARENT_SWAP=10 start
	echo "${pids[@]}" >"$T/pids"
	if [[ $(cat "$MEM/$N/a/memory.swappiness") != 10 ]]; then
		fail "memory.swappiness is not inherited here"
	elif ! in_crf "$CRF" dump -t "${pids[0]}" -D "$BASE.inh" >"$T/out" 2>&1; then
		fail "inherited memory.swappiness: the dump failed"
	else
		kill_tree
		no_scratch "inherited memory.swappiness" && ok
		rmdir "$MEM/$N/a" "$V2/$N/a"
		if ! in_crf "$CRF" restore -D "$BASE.inh" -d --manage-cgroups=full >"$T/out" 2>&1; then
			fail "inherited memory.swappiness: the restore failed"
		elif [[ $(cat "$MEM/$N/a/memory.swappiness") != 10 ]]; then
			fail "inherited memory.swappiness: reads $(cat "$MEM/$N/a/memory.swappiness")"
		else
			restored "inherited memory.swappiness" && ok
		fi
		kill_tree
		# The cgroup exists, its swappiness changed: soft leaves it, so refused.
		echo 20 >"$MEM/$N/a/memory.swappiness"
		if in_crf "$CRF" restore -D "$BASE.inh" -d >"$T/out" 2>&1; then
			fail "a changed memory.swappiness: the restore succeeded"
			pids=($(cat "$T/pids")); kill_tree
		elif ! grep -q "cgroup memory:/$N/a (.*): memory.swappiness is \"20\", \"10\" at the dump: crf does not write this setting" "$T/out"; then
			fail "a changed memory.swappiness: not refused by name"
		else
			ok
		fi
	fi
	kill_tree; rm_dirs
fi

# 5. manage-cgroups = none at the dump: saved as it is, checked at the restore.
if [[ -n $MEM ]]; then
	start
	echo "${pids[@]}" >"$T/pids"
	echo 10 >"$MEM/$N/a/memory.swappiness"
	printf '[cgroup]\nmanage-cgroups = none\n' >"$T/none.conf"
	if ! "$CRF" dump --config "$T/none.conf" -t "${pids[0]}" -D "$BASE.none" >"$T/out" 2>&1; then
		fail "manage-cgroups = none: the dump failed"
	else
		kill_tree
		if "$CRF" restore -D "$BASE.none" -d --manage-cgroups=none >"$T/out" 2>&1 &&
			restored "manage-cgroups = none"; then
			ok
		else
			fail "manage-cgroups = none: the restore into the same cgroups"
		fi
		kill_tree; rm_dirs
		if "$CRF" restore -D "$BASE.none" -d --manage-cgroups=full >"$T/out" 2>&1; then
			fail "manage-cgroups = none, the cgroups made again: the restore succeeded"
			pids=($(cat "$T/pids")); kill_tree
		elif ! grep -q "cgroup memory:/$N/a (.*): memory.swappiness is \"60\", \"10\" at the dump" "$T/out"; then
			fail "manage-cgroups = none, the cgroups made again: not refused by name"
		else
			ok
		fi
	fi
	kill_tree; rm_dirs
fi

echo "passed $passed, failed $failed"
[[ $failed -eq 0 ]]
