#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# runc.sh CRIU: runc 1.1.5 checkpoints and restores a busybox container
# through crf in CRIU's place (runc --criu CRIU: crf's criu symlink, so runc
# runs `criu swrk 3` and speaks CRIU's RPC to crf).  The container counts
# into a bind-mounted file, its stdio pipes of this script, as runc wants.
#
#   1. runc's default config with a ramfs mounted in the container, which
#      crf refuses: the refusal, naming the object, must be in the log file
#      runc names in its error, runc must fail, and the container count on.
#   2. runc's own default config (runc spec, its devices cgroup whitelist
#      too): checkpoint --leave-running (counts on), checkpoint (gone),
#      restore -d: the same PID, and the count file goes on from where it
#      was, no number missing or repeated.
# Each step's time is printed.  Exits 77 without root, runc or busybox.
set -uo pipefail
criu=$1
here=$(cd "$(dirname "$0")" && pwd)
[[ $(id -u) -eq 0 ]] || { echo "SKIP: runc.sh needs root"; exit 77; }
command -v runc >/dev/null || { echo "SKIP: runc is not installed (scripts/install-deps.sh)"; exit 77; }
command -v busybox >/dev/null || { echo "SKIP: busybox-static is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/crf-runc.XXXXXX)
ct=crf-swrk-$$
in_pid= out_pid=
cleanup() {
	runc kill "$ct" KILL 2>/dev/null
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		runc state "$ct" 2>/dev/null | grep -q '"status": "running"' || break
		sleep 0.1
	done
	runc delete -f "$ct" 2>/dev/null
	[[ -n $in_pid ]] && kill "$in_pid" 2>/dev/null
	[[ -n $out_pid ]] && kill "$out_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	[[ -s $tmp/out ]] && { echo "--- runc's and the container's output"; tail -n5 "$tmp/out"; }
	for f in "$tmp"/work/*.log; do
		[[ -f $f ]] && { echo "--- $f (errors)"; grep -m5 'error' "$f"; }
	done
	exit 1
}
now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

bash "$here/../lib/busybox-rootfs.sh" "$tmp/bundle/rootfs" || fail "busybox rootfs"
mkdir -p "$tmp/data" "$tmp/img" "$tmp/work"
(cd "$tmp/bundle" && runc spec) || fail "runc spec"
# The container: count into /data/count, a bind mount of $tmp/data.
config() { # config PYTHON: edit config.json
	python3 - "$tmp/bundle/config.json" "$tmp/data" "$1" <<'PY'
import json, sys
path, data, edit = sys.argv[1:]
c = json.load(open(path))
c['process']['terminal'] = False
c['process']['args'] = ['sh', '-c',
	'i=0; while :; do i=$((i+1)); echo $i >> /data/count; sleep 0.1; done']
c['root']['readonly'] = False
if not any(m['destination'] == '/data' for m in c['mounts']):
	c['mounts'].append({'destination': '/data', 'type': 'bind', 'source': data,
		'options': ['rbind', 'rw']})
exec(edit)
json.dump(c, open(path, 'w'), indent=1)
PY
}
# stdio: pipes of this shell, as runc wants them here
exec {IN}< <(exec sleep 100000)
in_pid=$!
exec {OUT}> >(exec cat >>"$tmp/out")
out_pid=$!
start() {
	rm -f "$tmp/data/count"
	(cd "$tmp/bundle" && runc run -d "$ct" <&$IN >&$OUT 2>&1) || fail "runc run"
	for _ in $(seq 50); do [[ -s $tmp/data/count ]] && return; sleep 0.1; done
	fail "the container does not count"
}
last() { tail -n1 "$tmp/data/count"; }
counts_on() { # counts_on WHEN: the count grows, 1 2 3... without a gap or repeat
	local a b
	a=$(last)
	sleep 0.5
	b=$(last)
	((b > a)) || fail "$1: the container does not count on ($a, then $b)"
	awk 'NR != $1 { print "line " NR " says " $1; bad = 1; exit } END { exit bad }' \
		"$tmp/data/count" || fail "$1: the count has a gap or a repeat"
	echo "ok: $1: counts on ($a -> $b, no gap)"
}
checkpoint() { # checkpoint [--leave-running]
	rm -rf "$tmp/img"/* "$tmp/work"/*
	runc --criu "$criu" checkpoint --image-path "$tmp/img" --work-path "$tmp/work" "$@" "$ct" \
		>"$tmp/runc.out" 2>&1
}

# 1. A container crf refuses (a ramfs in it): refused, by name, where runc looks
config "c['mounts'].append({'destination': '/r', 'type': 'ramfs', 'source': 'ramfs', 'options': []})"
start
pid=$(runc state "$ct" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
t=$(now)
if checkpoint; then
	fail "runc checkpoint of a container with a ramfs succeeded: crf restores ramfs now? update runc.sh"
fi
echo "ok: a ramfs in the container: runc checkpoint refused in $(took "$t") s: $(grep -m1 'criu failed' "$tmp/runc.out")"
grep -q 'log file: .*dump.log' "$tmp/runc.out" || fail "runc's error does not name dump.log: $(cat "$tmp/runc.out")"
# a plugin's error naming the task or the container's cgroup
refusal="crf\[[a-z]+\]: error: .*(pid $pid|cgroup [a-z=,]+:[^ ]*$ct)"
grep -Eq "$refusal" "$tmp/work/dump.log" ||
	fail "dump.log does not hold crf's refusal naming pid $pid or the cgroup of $ct"
echo "ok: dump.log: $(grep -E -m1 "$refusal" "$tmp/work/dump.log" | cut -c1-240)"
[[ -z $(ls "$tmp/img" | grep -v '^descriptors.json$') ]] || fail "the refused dump left images: $(ls "$tmp/img")"
counts_on "after the refused checkpoint"
runc kill "$ct" KILL
sleep 0.3
runc delete -f "$ct" 2>/dev/null

# 2. runc's default container, its devices cgroup whitelist too.
config "c['mounts'] = [m for m in c['mounts'] if m['destination'] != '/r']"
start
pid=$(runc state "$ct" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
cat "/proc/$pid/cgroup" >"$tmp/cgroup.before"
t=$(now)
checkpoint --leave-running || fail "runc checkpoint --leave-running: $(cat "$tmp/runc.out")"
echo "ok: runc checkpoint --leave-running in $(took "$t") s"
counts_on "after checkpoint --leave-running"
t=$(now)
checkpoint || fail "runc checkpoint: $(cat "$tmp/runc.out")"
echo "ok: runc checkpoint in $(took "$t") s (reference CRIU: ~0.26 s)"
runc state "$ct" >/dev/null 2>&1 && fail "the container is still there after runc checkpoint"
gone() { [[ ! -e /proc/$1 ]] || [[ $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) == Z ]]; }
for _ in $(seq 20); do gone "$pid" && break; sleep 0.1; done
gone "$pid" || fail "pid $pid still runs after runc checkpoint"
before=$(last)
sleep 0.3
[[ $(last) == "$before" ]] || fail "the count moved while checkpointed"
t=$(now)
(cd "$tmp/bundle" && runc --criu "$criu" restore -d --image-path "$tmp/img" \
	--work-path "$tmp/work" "$ct" <&$IN >&$OUT 2>&$OUT) ||
	fail "runc restore (its messages: $tmp/out)"
echo "ok: runc restore -d in $(took "$t") s (reference CRIU: ~0.22 s)"
rpid=$(runc state "$ct" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["pid"], s["status"])')
[[ $rpid == "$pid running" ]] || fail "after runc restore: runc state says '$rpid', not '$pid running'"
echo "ok: runc state: $rpid"
# In the cgroups runc made for it again, as before (runc's cg_root, CRIU's sense)
diff "$tmp/cgroup.before" "/proc/$pid/cgroup" >"$tmp/cgroup.diff" ||
	fail "after runc restore the container is in other cgroups: $(cat "$tmp/cgroup.diff")"
echo "ok: the container's cgroups are those it had"
counts_on "after runc restore (from $before)"
exit 0
