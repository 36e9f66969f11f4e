#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A container (wl-mnt container-ext) whose /data is external, restored into
# another rootfs: dumped with --external mnt[/data]:data, restored with
# --external mnt[data]:DATA (DATA bound at /data again: the counter file the
# workload keeps an fd on) and --root ROOT2 (a second rootfs the workload
# made with the same mount points).  Then the restore without --external
# mnt must be refused, naming the key.  Both directories are removed on exit.
#
# usage: mnt-external.sh HARNESS CRF WL_MNT IMAGE_DIR_BASE
set -u
HARNESS=$1 CRF=$2 WL=$3 BASE=$4
DATA=$(mktemp -d /tmp/crf-mnt-data-XXXXXX) || exit 1
ROOT2=$(mktemp -d /tmp/crf-mnt-root-XXXXXX) || exit 1
failed=0

cleanup() {
	rm -rf "$DATA" "$ROOT2" "$BASE".*
}
trap cleanup EXIT

for mode in kill twice; do
	if "$HARNESS" --mode "$mode" --timeout 60 --name "mnt-external" --crf "$CRF" \
		--dir "$BASE.$mode" --dump-arg="--external=mnt[/data]:data" \
		--restore-arg="--external=mnt[data]:$DATA" --restore-arg="--root=$ROOT2" \
		-- "$WL" container-ext "$DATA" "$ROOT2"; then
		echo "ok: $mode"
	else
		echo "FAIL: $mode"
		failed=1
	fi
done
if "$HARNESS" --mode kill --timeout 60 --name "mnt-external-missing" --crf "$CRF" \
	--dir "$BASE.missing" --dump-arg="--external=mnt[/data]:data" \
	--restore-arg="--root=$ROOT2" \
	--expect-restore-fail 'mount [0-9]+ at /data .*: external at the dump: crf restore --external mnt\[KEY\]:PATH says what to bind there' \
	-- "$WL" container-ext "$DATA" "$ROOT2"; then
	echo "ok: restore without --external mnt refused"
else
	echo "FAIL: restore without --external mnt"
	failed=1
fi
exit $failed
