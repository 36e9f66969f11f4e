#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A mount of a block device in the namespace (an ext4 on a loop device this
# script makes): crf cannot make its source again, the dump is refused by
# name and the workload runs on.  The loop device and its file are removed
# on any exit.  Skipped (77) where no loop device can be made.
#
# usage: mnt-loop.sh HARNESS CRF WL_MNT IMAGE_DIR
set -u
HARNESS=$1 CRF=$2 WL=$3 DIR=$4
IMG=$(mktemp /tmp/crf-mnt-loop-XXXXXX) || exit 1
DEV=
WANT='mount [0-9]+ at .*/wl-mnt/r \(ext4 /dev/loop[0-9]+\): a filesystem made in the namespace'

cleanup() {
	[[ -n $DEV ]] && losetup -d "$DEV"
	rm -rf "$IMG" "$DIR"
}
trap cleanup EXIT

truncate -s 8M "$IMG" && mkfs.ext4 -q -F "$IMG" >/dev/null 2>&1 || {
	echo "SKIP: cannot make an ext4 image"
	exit 77
}
DEV=$(losetup -f --show "$IMG" 2>/dev/null) || {
	DEV=
	echo "SKIP: no loop device"
	exit 77
}
"$HARNESS" --timeout 60 --name mnt-loop --crf "$CRF" --dir "$DIR" \
	--expect-dump-fail "$WANT" -- "$WL" refused-block "$DEV"
