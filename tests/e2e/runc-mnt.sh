#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A real runc container's mount namespace, dumped and restored by crf's own
# command line with the options runc's checkpoint gives CRIU (docs/ns-mnt.md
# "runc"): `runc spec` edited (no terminal, stdio pipes, a host directory
# bound at /data, every device allowed; its root read-only, as runc spec has
# it), busybox sh counting into /data/count.
#
#   crf dump -t INIT --external mnt[/data]:/data and one for each cgroup v1
#     mount runc made (key its place) [runc: also mnt[F]:/dev/null for each
#     masked file] --external pipe:[N] for its stdio
#   crf restore --root ROOTFS --external mnt[/data]:DATA,
#     mnt[/sys/fs/cgroup/X]:the cgroup's host dir [runc: mnt[/dev/null]:/dev/null]
#     --inherit-fd fd[N]:pipe:[..] for new stdio pipes
#
# Checked from outside: the same PIDs, the counter goes on from its value at
# the dump (no restart), the mount table (mountinfo, field by field, mount
# IDs and peer group numbers aside, the devices of filesystems made anew
# compared as "the same as mount X's"), the listing of /dev, the links its
# sysfs shows (lo: its own net namespace's) and the cgroups are as before.
#
# usage: runc-mnt.sh CRF MODE DIR
#   MODE exact   masked files restored as binds of the container's /dev/null
#        runc    masked files external, as runc passes them (host /dev/null)
#        twice   exact, dumped and restored twice
#        pty-refused  a pty open in the container's devpts: the dump is
#                refused by name, the container runs on, no image is left
# Exit 77 (skipped) without runc, busybox-static or cgroup v1 mounts.
set -u
CRF=$1 MODE=$2 DIR=$3
HERE=$(cd "$(dirname "$0")" && pwd)
NAME=crf-runc-mnt-$$
failed=0 INIT= HOLD=()

command -v runc >/dev/null || {
	echo "skip: runc is not installed"
	exit 77
}
T=$(mktemp -d /tmp/crf-runc-mnt-XXXXXX) || exit 1
STATE=$T/state ROOTFS=$T/bundle/rootfs DATA=$T/data

cleanup() {
	# The container's init (restored with its PID): its PID namespace dies with it.
	[[ -n $INIT ]] && kill -9 "$INIT" 2>/dev/null
	runc --root "$STATE" delete -f "$NAME" >/dev/null 2>&1
	for p in "${HOLD[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$T" "$DIR"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	failed=1
}

bash "$HERE/../lib/busybox-rootfs.sh" "$ROOTFS" || exit 77
mkdir -p "$DATA"
(cd "$T/bundle" && runc spec) || exit 1
LOOP='i=0; while :; do i=$((i+1)); echo $i >/data/c; mv /data/c /data/count; usleep 20000; done'
[[ $MODE == pty-refused ]] && LOOP="exec 3<>/dev/ptmx; $LOOP"
python3 - "$T/bundle/config.json" "$DATA" "$LOOP" <<'EOF' || exit 1
import json, sys
path, data, loop = sys.argv[1:]
s = json.load(open(path))
s['process']['terminal'] = False
s['process']['args'] = ['sh', '-c', loop]
s['mounts'].append({'destination': '/data', 'type': 'bind', 'source': data,
		    'options': ['rbind', 'rw']})
# Every device allowed: devices.list as in a new cgroup (the cgroup plugin
# refuses the other settings of the devices controller).
s['linux']['resources'] = {'devices': [{'allow': True, 'access': 'rwm'}]}
json.dump(s, open(path, 'w'))
EOF

# The container's stdio: pipes from and to processes of the test's.
exec {SIN}< <(exec sleep 100000)
HOLD+=($!)
exec {SOUT}> >(exec cat >/dev/null)
HOLD+=($!)
(cd "$T/bundle" && runc --root "$STATE" run -d --pid-file "$T/pid" "$NAME" \
	<&$SIN >&$SOUT 2>&$SOUT) || {
	echo "FAIL: runc run"
	exit 1
}
INIT=$(cat "$T/pid")
for _ in $(seq 100); do
	[[ -s $DATA/count ]] && break
	sleep 0.05
done
[[ -s $DATA/count ]] || {
	echo "FAIL: the container does not count"
	exit 1
}
if ! grep -q ' - cgroup ' "/proc/$INIT/mountinfo"; then
	echo "skip: runc mounted no cgroup v1 hierarchy here"
	exit 77
fi

# The mount table, normalized: mount point, parent's mount point, root,
# options, propagation without group numbers, type, source, superblock
# options, and the device (for a filesystem made anew: the first mount
# point it is mounted at).  LOOSE mount points: only place and options.
table() {
	python3 - "/proc/$1/mountinfo" "${LOOSE:-}" <<'EOF'
import sys
lines = [l.split() for l in open(sys.argv[1])]
loose = sys.argv[2].split()
new = {'tmpfs', 'proc', 'sysfs', 'devpts', 'mqueue'}
mp = {l[0]: l[4] for l in lines}
first = {}
out = []
for l in lines:
	sep = l.index('-')
	tags = ' '.join(t.split(':')[0] for t in l[6:sep])
	fstype, source, sopts = l[sep + 1:sep + 4]
	dev = l[2]
	if fstype in new:
		dev = 'as:' + first.setdefault(dev, l[4])
	if l[4] in loose:
		out.append(f'{l[4]} {l[5]} {tags} (external)')
	else:
		out.append(f'{l[4]} parent:{mp.get(l[1], "-")} {dev} {l[3]} {l[5]} [{tags}] '
			   f'{fstype} {source} {sopts}')
print('\n'.join(sorted(out)))
EOF
}
# /dev's listing, the links its sysfs shows (of its net namespace: lo), and
# whether its /dev/mqueue is its IPC namespace's (an mqueue mounted there,
# in a mount namespace of the test's, is the same superblock).
devs() {
	local own
	ls -lan --time-style=+ "/proc/$1/root/dev" | awk '{$2=""; print}'
	ls "/proc/$1/root/sys/class/net"
	mkdir -p "$T/mq"
	own=$(nsenter -t "$1" -i unshare -m --propagation private \
		sh -c "mount -t mqueue none '$T/mq' && stat -c %d '$T/mq'")
	[[ $own == "$(stat -c %d "/proc/$1/root/dev/mqueue")" ]] && echo "mqueue: its IPC namespace's"
}

# runc's options (issue 13): each bind mount and cgroup v1 mount external,
# keyed by its place; the masked files bound from /dev/null (runc mode).
EXT_D=(--external 'mnt[/data]:/data') EXT_R=(--external "mnt[/data]:$DATA")
while read -r dev root mp fstype; do
	host=$(awk -v d="$dev" '$3 == d && $4 == "/" {print $5; exit}' /proc/self/mountinfo)
	EXT_D+=(--external "mnt[$mp]:$mp")
	EXT_R+=(--external "mnt[$mp]:$host$root")
done < <(awk '{for (i = 7; $i != "-"; i++); if ($(i+1) ~ /^cgroup2?$/) print $3, $4, $5, $(i+1)}' \
	"/proc/$INIT/mountinfo")
LOOSE=
if [[ $MODE == runc ]]; then
	for f in $(awk '$4 == "/null" && $5 ~ "^/(proc|sys)/" {print $5}' "/proc/$INIT/mountinfo"); do
		EXT_D+=(--external "mnt[$f]:/dev/null")
		LOOSE+=" $f"
	done
	EXT_R+=(--external 'mnt[/dev/null]:/dev/null')
fi

if [[ $MODE == pty-refused ]]; then
	before=$(cat "$DATA/count")
	out=$("$CRF" dump -t "$INIT" -D "$DIR" "${EXT_D[@]}" \
		$(for f in 0 1 2; do echo --external "$(readlink "/proc/$INIT/fd/$f")"; done | sort -u) 2>&1)
	rc=$?
	echo "$out" | tail -3
	[[ $rc -ne 0 ]] || fail "the dump of a container with a pty open succeeded"
	echo "$out" | grep -Eq "pid [0-9]+: mount namespace mnt:\[[0-9]+\]: mount [0-9]+ at /dev/pts \(devpts devpts\): holds pty 0, not restored" ||
		fail "the refusal does not name the devpts and its pty"
	sleep 0.3
	kill -0 "$INIT" 2>/dev/null && (($(cat "$DATA/count") > before)) ||
		fail "the container does not run on after the refused dump"
	[[ ! -e $DIR/inventory.img ]] || fail "an image was left"
	((failed)) || echo "ok: pty-refused"
	exit $failed
fi

cycles=1
[[ $MODE == twice ]] && cycles=2
PID=$INIT
for ((c = 1; c <= cycles; c++)); do
	rm -rf "$DIR"
	mkdir -p "$DIR"
	t_before=$(table "$PID") d_before=$(devs "$PID") cg_before=$(cat "/proc/$PID/cgroup")
	[[ $d_before == *"mqueue: its IPC namespace's"* ]] ||
		fail "dump $c: its /dev/mqueue is not its IPC namespace's"
	PIPES=()
	for f in 0 1 2; do PIPES+=("$(readlink "/proc/$PID/fd/$f")"); done
	t0=$(date +%s.%N)
	if ! "$CRF" dump -t "$PID" -D "$DIR" "${EXT_D[@]}" \
		$(printf -- '--external %s\n' "${PIPES[@]}" | sort -u); then
		fail "dump $c"
		break
	fi
	t1=$(date +%s.%N)
	for _ in $(seq 100); do
		[[ -e /proc/$PID && $(awk '{print $3}' "/proc/$PID/stat" 2>/dev/null) != Z ]] || break
		sleep 0.05
	done
	[[ -e /proc/$PID && $(awk '{print $3}' "/proc/$PID/stat" 2>/dev/null) != Z ]] &&
		fail "dump $c: the container still runs"
	while [[ -e /proc/$PID ]]; do sleep 0.05; done
	at_dump=$(cat "$DATA/count")
	exec {RIN}< <(exec sleep 100000)
	HOLD+=($!)
	exec {ROUT}> >(exec cat >/dev/null)
	HOLD+=($!)
	t2=$(date +%s.%N)
	INH=(--inherit-fd "fd[$RIN]:${PIPES[0]}" --inherit-fd "fd[$ROUT]:${PIPES[1]}")
	[[ ${PIPES[2]} != "${PIPES[1]}" ]] && INH+=(--inherit-fd "fd[$ROUT]:${PIPES[2]}")
	if ! "$CRF" restore -D "$DIR" -d --root "$ROOTFS" "${EXT_R[@]}" "${INH[@]}"; then
		fail "restore $c"
		break
	fi
	t3=$(date +%s.%N)
	exec {RIN}<&- {ROUT}>&-
	awk -v c="$c" -v a="$t0" -v b="$t1" -v d="$t2" -v e="$t3" \
		'BEGIN {printf "cycle %d: dump %.3f s, restore %.3f s\n", c, b - a, e - d}'
	kill -0 "$PID" 2>/dev/null || fail "restore $c: pid $PID is not there"
	for _ in $(seq 100); do
		(($(cat "$DATA/count") > at_dump + 5)) && break
		sleep 0.05
	done
	now=$(cat "$DATA/count")
	((now > at_dump + 5)) || fail "restore $c: the counter stays at $now (was $at_dump)"
	# A restart would count from 1 again.
	((now >= at_dump)) || fail "restore $c: the counter went back from $at_dump to $now"
	t_after=$(table "$PID") d_after=$(devs "$PID") cg_after=$(cat "/proc/$PID/cgroup")
	[[ $d_after == *"mqueue: its IPC namespace's"* ]] ||
		fail "restore $c: its /dev/mqueue is not its IPC namespace's"
	[[ $cg_before == "$cg_after" ]] || fail "restore $c: its cgroups are $cg_after, were $cg_before"
	if [[ $t_before != "$t_after" ]]; then
		fail "restore $c: the mount table differs"
		diff <(echo "$t_before") <(echo "$t_after")
	fi
	if [[ $d_before != "$d_after" ]]; then
		fail "restore $c: /dev or /sys/class/net differs"
		diff <(echo "$d_before") <(echo "$d_after")
	fi
	((failed)) && break
	echo "ok: cycle $c (counter $at_dump -> $now)"
done
exit $failed
