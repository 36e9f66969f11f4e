#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The freezer of a whole tree (docs/cgroup.md, "The freezer"), on wl-cgprops
# (a process and its child, both in the cgroup v2 /$N; each counts into a
# file every 20 ms), with dump --leave-running:
#
#   1. the tree alone in /$N: frozen by the cgroup (crf -v says "2
#      processes frozen with the cgroup freezer (DIR)"), /$N thawed after;
#   2. an outsider (sleep) in /$N too: the default falls back to ptrace (the
#      debug line names the outsider), --freeze=cgroup is refused naming
#      the cgroup; the outsider is never frozen, the tree runs on;
#   3. /$N frozen before crf came (cgroup.freeze 1), and a v1 freezer cgroup
#      FROZEN where that hierarchy is mounted: refused by name, whatever
#      the freezer, and still frozen after.
#
# usage: cgroup-freeze.sh CRF WL_CGPROPS IMAGE_DIR_BASE
set -u
CRF=$1 WL=$2 BASE=$3
T=$(mktemp -d /tmp/crf-cgfreeze-XXXXXX)
N=crf-cgfreeze-$$
passed=0 failed=0 pids=() out=

V2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
FRZ=$(awk '{ n = split($0, f, " - "); split(f[2], g, " ");
	if (g[1] == "cgroup" && ("," g[3] ",") ~ /,freezer,/) { print $5; exit } }' /proc/self/mountinfo)
[[ -n $V2 ]] || { echo "SKIP: no cgroup v2 mounted"; exit 77; }

kill_all() {
	local p
	for p in "${pids[@]}" $out; do kill -KILL "$p" 2>/dev/null; done
	for p in "${pids[@]}" $out; do
		for _ in $(seq 200); do [[ -e /proc/$p ]] || break; sleep 0.01; done
	done
	pids=() out=
}
cleanup() {
	[[ -f $V2/$N/cgroup.freeze ]] && echo 0 >"$V2/$N/cgroup.freeze"
	[[ -n $FRZ && -d $FRZ/$N ]] && echo THAWED >"$FRZ/$N/freezer.state"
	kill_all
	for d in "$V2/$N" ${FRZ:+"$FRZ/$N"}; do
		[[ -d $d ]] || continue
		for _ in $(seq 200); do rmdir "$d" 2>/dev/null && break; sleep 0.01; done
	done
	rm -rf "$T" "$BASE".*
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	[[ -f $T/out ]] && sed 's/^/    | /' "$T/out" | tail -8
	failed=$((failed + 1))
}
ok() { passed=$((passed + 1)); }

mkdir "$V2/$N" || { echo "FAIL: mkdir $V2/$N"; exit 1; }
procs="$V2/$N/cgroup.procs"
if [[ -n $FRZ && $FRZ != "$V2"* ]] && mkdir "$FRZ/$N"; then
	procs+=" $FRZ/$N/cgroup.procs"
else
	FRZ=
	echo "note: no v1 freezer hierarchy: its frozen cgroup not tried"
fi
setsid sh -c 'for f in '"$procs"'; do echo $$ >$f || exit 9; done; exec "$@"' sh \
	"$WL" "$T/st" "$V2/$N/cgroup.procs" </dev/null >/dev/null 2>&1 &
pids=($!)
for _ in $(seq 500); do [[ -s $T/st.0 && -s $T/st.1 ]] && break; sleep 0.01; done
[[ -s $T/st.0 && -s $T/st.1 ]] || { echo "FAIL: the workload did not start"; exit 1; }
pids+=($(cat /proc/"${pids[0]}"/task/*/children))

runs_on() { # WHAT: the tree counts on, unharmed
	local a b
	a=$(head -1 "$T/st.0") b=$(head -1 "$T/st.1")
	sleep 0.2
	[[ $(head -1 "$T/st.0") -gt $a && $(head -1 "$T/st.1") -gt $b ]] ||
		{ fail "$1: the tree does not run on"; return 1; }
}
dump() { # NAME ARGS...: dump --leave-running into $BASE.NAME
	local name=$1
	shift
	rm -rf "$BASE.$name"
	"$CRF" dump -t "${pids[0]}" -D "$BASE.$name" --leave-running "$@" >"$T/out" 2>&1
}

# 1. Alone: the cgroup freezer, the cgroup thawed after.
if ! dump alone -v; then
	fail "the tree alone in its cgroup: the dump failed"
elif ! grep -q "tree of pid ${pids[0]}: 2 processes frozen with the cgroup freezer ($V2/$N)" "$T/out"; then
	fail "the tree alone in its cgroup: not frozen with the cgroup freezer"
elif [[ $(cat "$V2/$N/cgroup.freeze") != 0 ]] || grep -q "frozen 1" "$V2/$N/cgroup.events"; then
	fail "the tree alone in its cgroup: left frozen"
else
	runs_on "the tree alone in its cgroup" && ok
fi

# 2. An outsider in the cgroup: ptrace; --freeze=cgroup refused; the outsider never frozen.
(echo 0 >"$V2/$N/cgroup.procs" && exec sleep 1000) </dev/null >/dev/null 2>&1 &
out=$!
for _ in $(seq 200); do grep -qx "$out" "$V2/$N/cgroup.procs" && break; sleep 0.01; done
if ! dump outsider -vv; then
	fail "an outsider in the cgroup: the dump failed"
elif ! grep -q "the tree of pid ${pids[0]}: not using the cgroup freezer: $V2/$N holds pid $out, which is not of the tree" "$T/out"; then
	fail "an outsider in the cgroup: the fallback is not said"
elif grep -q "frozen with the cgroup freezer" "$T/out"; then
	fail "an outsider in the cgroup: frozen with the cgroup freezer"
else
	runs_on "an outsider in the cgroup" && ok
fi
if dump outsider-cg --freeze=cgroup; then
	fail "an outsider in the cgroup, --freeze=cgroup: the dump succeeded"
elif ! grep -q "cannot freeze pid ${pids[0]} with its cgroup: $V2/$N holds other processes" "$T/out"; then
	fail "an outsider in the cgroup, --freeze=cgroup: not refused by name"
elif [[ $(awk '/^State:/ { print $2 }' /proc/$out/status) != S ]]; then
	fail "an outsider in the cgroup: it is not sleeping: $(grep State: /proc/$out/status)"
else
	runs_on "an outsider in the cgroup, --freeze=cgroup" && ok
fi
kill -KILL "$out"
for _ in $(seq 200); do [[ -e /proc/$out ]] || break; sleep 0.01; done
out=

# 3. Frozen before crf came: refused by name, whatever the freezer, and left frozen.
frozen_refused() { # WHAT PATTERN FILE VALUE
	local f
	for f in auto ptrace cgroup; do
		if timeout -s KILL 10 "$CRF" dump -t "${pids[0]}" -D "$BASE.frozen" --leave-running \
			--freeze=$f >"$T/out" 2>&1; then
			fail "$1 (--freeze=$f): the dump succeeded"
		elif ! grep -q "$2" "$T/out"; then
			fail "$1 (--freeze=$f): not refused by name"
		elif [[ $(cat "$3") != "$4" ]]; then
			fail "$1 (--freeze=$f): $3 reads $(cat "$3") after"
		else
			ok
		fi
	done
}
echo 1 >"$V2/$N/cgroup.freeze"
for _ in $(seq 200); do grep -q "frozen 1" "$V2/$N/cgroup.events" && break; sleep 0.01; done
frozen_refused "a frozen cgroup v2" \
	"pid ${pids[0]}: its cgroup v2 $V2/$N is frozen, not by crf" "$V2/$N/cgroup.freeze" 1
echo 0 >"$V2/$N/cgroup.freeze"
if [[ -n $FRZ ]]; then
	echo FROZEN >"$FRZ/$N/freezer.state"
	for _ in $(seq 200); do [[ $(cat "$FRZ/$N/freezer.state") == FROZEN ]] && break; sleep 0.01; done
	frozen_refused "a frozen v1 freezer cgroup" \
		"pid ${pids[0]}: its cgroup freezer:/$N ($FRZ/$N) is frozen, not by crf" \
		"$FRZ/$N/freezer.state" FROZEN
	echo THAWED >"$FRZ/$N/freezer.state"
fi
runs_on "thawed again" && ok

echo "passed $passed, failed $failed"
[[ $failed -eq 0 ]]
