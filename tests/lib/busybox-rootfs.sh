#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# busybox-rootfs.sh DIR: make DIR a minimal root filesystem from Debian's
# busybox-static (scripts/install-deps.sh installs it): /bin/busybox with a
# link for every applet it has, the directories a container runtime mounts
# on (/proc, /sys, /dev, /tmp, /run, /etc, /data) and /etc/passwd, group.
# Sourced, it defines busybox_rootfs DIR instead.
set -euo pipefail

busybox_rootfs() {
	local dir=$1 bb a
	bb=$(command -v busybox) || {
		echo "busybox-rootfs: busybox-static is not installed" >&2
		return 1
	}
	# The static build needs nothing else in the root: no loader, no libc.
	if LC_ALL=C ldd "$bb" >/dev/null 2>&1; then
		echo "busybox-rootfs: $bb is not the static build (busybox-static)" >&2
		return 1
	fi
	mkdir -p "$dir"/{bin,sbin,proc,sys,dev,tmp,run,etc,data,root}
	chmod 1777 "$dir/tmp"
	cp "$bb" "$dir/bin/busybox"
	for a in $("$dir/bin/busybox" --list); do
		[[ $a == busybox ]] || ln -sf busybox "$dir/bin/$a"
	done
	echo 'root:x:0:0:root:/root:/bin/sh' >"$dir/etc/passwd"
	echo 'root:x:0:' >"$dir/etc/group"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	[[ $# -eq 1 ]] || {
		echo "usage: $0 DIR" >&2
		exit 2
	}
	busybox_rootfs "$1"
fi
