#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# podman.sh CRIU: Podman 4.3 checkpoints and restores a container through crf
# in CRIU's place (Podman runs runc, which finds `criu` on PATH: here a
# directory holding CRIU, crf's criu symlink, first on PATH).  The container
# is a busybox rootfs imported as an image, without a network (--network
# none: this machine has no CNI set-up), counting into a file inside it.
#
#   1. podman container checkpoint, then restore: the count goes on from
#      where it was (the container's file, read with podman exec);
#   2. checkpoint --export FILE, then restore --import FILE --name other:
#      a second container, its cgroups named after it (CRIU's cg_root, a
#      rename: crf restore --cgroup-root-from), counts on from the export.
# Each step's time is printed.  Podman needs --runtime runc --cgroup-manager
# cgroupfs --events-backend file here.  Exits 77 without root, podman or
# busybox.  Every container and the image are removed at the end.
set -uo pipefail
criu=$1
here=$(cd "$(dirname "$0")" && pwd)
[[ $(id -u) -eq 0 ]] || { echo "SKIP: podman.sh needs root"; exit 77; }
command -v podman >/dev/null || { echo "SKIP: podman is not installed (scripts/install-deps.sh)"; exit 77; }
command -v runc >/dev/null || { echo "SKIP: runc is not installed"; exit 77; }
command -v busybox >/dev/null || { echo "SKIP: busybox-static is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/crf-podman.XXXXXX)
img=localhost/crf-test-bb-$$
ct=crf-podman-$$
P=(podman --runtime runc --cgroup-manager cgroupfs --events-backend file)
cleanup() {
	"${P[@]}" rm -f "$ct" "$ct-other" >/dev/null 2>&1
	"${P[@]}" rmi -f "$img" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.out; do [[ -s $f ]] && { echo "--- $f"; tail -n5 "$f"; }; done
	exit 1
}
now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# The shell truncates the file before each write: a read in between is empty, try again.
count() {
	local v i
	for i in 1 2 3 4 5; do
		v=$("${P[@]}" exec "$1" cat /tmp/count 2>/dev/null)
		[[ -n $v ]] && { echo "$v"; return 0; }
		sleep 0.05
	done
	return 1
}
counts_on() { # counts_on NAME FROM WHEN: NAME's count is past FROM and grows
	local a b
	a=$(count "$1") || fail "$3: podman exec $1"
	((a > $2)) || fail "$3: the count is $a, not past $2"
	sleep 0.5
	b=$(count "$1")
	((b > a)) || fail "$3: $1 does not count on ($a, then $b)"
	echo "ok: $3: counts on ($2 -> $a -> $b)"
}

mkdir -p "$tmp/bin"
ln -s "$(readlink -f "$criu")" "$tmp/bin/criu" || fail "criu link"
export PATH=$tmp/bin:$PATH
bash "$here/../lib/busybox-rootfs.sh" "$tmp/rootfs" || fail "busybox rootfs"
tar -C "$tmp/rootfs" -cf "$tmp/rootfs.tar" . || fail "tar"
"${P[@]}" import "$tmp/rootfs.tar" "$img" >"$tmp/import.out" 2>&1 || fail "podman import"
# The count goes to a file of the container's own, written every 0.1 s.
# Podman raises the container's limits past what runc may set here
# (without CAP_SYS_RESOURCE; even crf's own hard limits were refused for
# nproc): small fixed ones are passed.
lim=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
"${P[@]}" run -d --name "$ct" --network none "${lim[@]}" "$img" sh -c \
	'i=0; while :; do i=$((i+1)); echo $i >/tmp/count; sleep 0.1; done' \
	>"$tmp/run.out" 2>&1 </dev/null || fail "podman run"
for _ in $(seq 50); do [[ -n $(count "$ct") ]] && break; sleep 0.1; done
counts_on "$ct" 0 "started"

# 1. checkpoint, restore: the count goes on from where it was, not from 1
before=$(count "$ct")
t=$(now)
"${P[@]}" container checkpoint "$ct" >"$tmp/checkpoint.out" 2>&1 </dev/null ||
	fail "podman container checkpoint"
echo "ok: podman container checkpoint in $(took "$t") s (reference CRIU: ~0.40 s)"
"${P[@]}" ps --format '{{.Names}}' | grep -qx "$ct" && fail "$ct still runs after the checkpoint"
t=$(now)
"${P[@]}" container restore "$ct" >"$tmp/restore.out" 2>&1 </dev/null ||
	fail "podman container restore"
echo "ok: podman container restore in $(took "$t") s (reference CRIU: ~0.40 s)"
counts_on "$ct" "$before" "after the restore"

# 2. checkpoint --export, restore --import as another container
before=$(count "$ct")
t=$(now)
"${P[@]}" container checkpoint --export "$tmp/export.tar.zst" "$ct" >"$tmp/export.out" 2>&1 \
	</dev/null || fail "podman container checkpoint --export"
echo "ok: podman container checkpoint --export in $(took "$t") s"
t=$(now)
"${P[@]}" container restore --import "$tmp/export.tar.zst" --name "$ct-other" \
	>"$tmp/import-restore.out" 2>&1 </dev/null || fail "podman container restore --import"
echo "ok: podman container restore --import --name $ct-other in $(took "$t") s"
counts_on "$ct-other" "$before" "the imported copy"
grep -q "libpod-$("${P[@]}" inspect -f '{{.Id}}' "$ct-other")" \
	"/proc/$("${P[@]}" inspect -f '{{.State.Pid}}' "$ct-other")/cgroup" ||
	fail "the imported copy is not in its own cgroups"
echo "ok: the imported copy is in its own cgroups"
exit 0
