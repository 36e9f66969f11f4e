#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The integrated container test (docs/containers.md): wl-container makes a
# container in every namespace (pid, mount, net, uts, ipc, user, cgroup,
# time) pivoted into a busybox rootfs that this script makes
# (tests/lib/busybox-rootfs.sh) with the static workload copied to
# /bin/wl-container, a host directory HOST bound at /data; the harness dumps
# and restores it, and the workload checks every piece from outside and
# from inside.
#
# CASE: kill, leave, twice (the harness's modes); vxlan-refused (a vxlan
# link in the container's netns); shared-socket-refused (the init's sockets
# held by the nested PID namespace's init too); block-refused (an ext4 on a loop device
# this script makes, mounted in the container: refused at the dump, since
# crf refuses every block-device mount there).  PIECES (a comma list of
# +NAME/-NAME, wl-container.h) switches pieces on or off.
#
# Everything made here is removed on any exit: the rootfs and host
# directory, the veth's host end if left, the loop device, the images.
# Skipped (77) without busybox-static, or for block-refused without a loop
# device.
#
# usage: container.sh HARNESS CRF WL_CONTAINER IMAGE_DIR CASE [PIECES]
set -u
HARNESS=$1 CRF=$2 WL=$3 DIR=$4 CASE=$5 PIECES=${6:-}
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/crf-ctr-XXXXXX) || exit 1
DEV=

cleanup() {
	ip link del crfctrh0 2>/dev/null
	[[ -n $DEV ]] && losetup -d "$DEV"
	rm -rf "$T" "$DIR" "$DIR".2
}
trap cleanup EXIT

command -v busybox >/dev/null || {
	echo "SKIP: busybox-static is not installed (scripts/install-deps.sh)"
	exit 77
}
# Run, not sourced: sourced, it would set -e here too.
"$HERE/../lib/busybox-rootfs.sh" "$T/rootfs" || exit 1
cp "$WL" "$T/rootfs/bin/wl-container" || exit 1
mkdir "$T/host" "$T/rootfs/mnt" || exit 1

args=(--timeout 60 --crf "$CRF" --dir "$DIR" --own-cgroup --own-cgroups-v1)
case $CASE in
kill | leave | twice)
	args+=(--mode "$CASE" --name container)
	;;
vxlan-refused)
	PIECES=${PIECES:+$PIECES,}refused-vxlan
	args+=(--name container-vxlan --expect-dump-fail
		'pid [0-9]+: net namespace net:\[[0-9]+\]: link .crfctrvx0. \(kind vxlan\) cannot be restored')
	;;
shared-socket-refused)
	PIECES=${PIECES:+$PIECES,}shared-sock
	args+=(--name container-shared-socket --expect-dump-fail
		'pid [0-9]+: fd [0-9]+ \(socket:\[[0-9]+\]\): a socket that pid [0-9]+ holds too, in net namespace net:\[[0-9]+\]: crf makes a socket several processes hold before the tree is forked, in its own net namespace')
	;;
block-refused)
	truncate -s 8M "$T/disk" && mkfs.ext4 -q -F "$T/disk" >/dev/null 2>&1 || {
		echo "SKIP: cannot make an ext4 image"
		exit 77
	}
	DEV=$(losetup -f --show "$T/disk" 2>/dev/null) || {
		DEV=
		echo "SKIP: no loop device"
		exit 77
	}
	PIECES=${PIECES:+$PIECES,}refused-block=$DEV
	args+=(--name container-block --expect-dump-fail
		"pid [0-9]+: mount namespace mnt:\\[[0-9]+\\]: mount [0-9]+ at /mnt \\(ext4 $DEV\\): a filesystem made in the namespace")
	;;
*)
	echo "container.sh: unknown case $CASE" >&2
	exit 2
	;;
esac
# TCP connections inside (+tcp, +tcp-host) are saved with --tcp-established.
[[ $PIECES == *+tcp* ]] && args+=(--dump-arg --tcp-established)
"$HARNESS" "${args[@]}" -- "$WL" "$T/rootfs" "$T/host" "$PIECES"
rc=$?
# From outside, after the workload's end: nothing of the container is left.
# (The netns goes, and its veth with it, a little after its last process.)
for _ in $(seq 300); do ip link show crfctrh0 >/dev/null 2>&1 || break; sleep 0.01; done
if ip link show crfctrh0 >/dev/null 2>&1; then
	echo "FAIL: the veth's host end crfctrh0 is still there"
	rc=1
fi
exit $rc
