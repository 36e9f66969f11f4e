#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A mount namespace whose copy of a shared mount of crf's is a slave of it
# (master:N), and which unmounted its copy of another: this script makes both
# tmpfs mounts in crf's namespace, runs wl-mnt slave under the harness (kill,
# then twice), and unmounts them on any exit.  The workload compares its
# mount table, master:N included, the one unmounted absent.
#
# usage: mnt-slave.sh HARNESS CRF WL_MNT IMAGE_DIR_BASE
set -u
HARNESS=$1 CRF=$2 WL=$3 BASE=$4
SH=$(mktemp -d /tmp/crf-mnt-slave-XXXXXX) || exit 1
GONE=$(mktemp -d /tmp/crf-mnt-gone-XXXXXX) || exit 1
failed=0

cleanup() {
	umount -l "$SH" 2>/dev/null
	umount -l "$GONE" 2>/dev/null
	rmdir "$SH" "$GONE"
	rm -rf "$BASE".*
}
trap cleanup EXIT

if ! mount -t tmpfs -o size=64k crf-slave "$SH" || ! mount --make-shared "$SH" ||
	! mount -t tmpfs -o size=64k crf-gone "$GONE"; then
	echo "FAIL: cannot make the tmpfs mounts at $SH and $GONE"
	exit 1
fi
for mode in kill twice; do
	if "$HARNESS" --mode "$mode" --timeout 60 --name "mnt-slave" --crf "$CRF" \
		--dir "$BASE.$mode" -- "$WL" slave "$SH" "$GONE"; then
		echo "ok: $mode"
	else
		echo "FAIL: $mode"
		failed=1
	fi
done
exit $failed
