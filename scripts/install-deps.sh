#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Install what building and testing crf needs (Debian 12, as root).
set -euo pipefail
pkgs=(
	gcc libc6-dev make meson ninja-build pkg-config
	libinih-dev libprotobuf-c-dev protobuf-c-compiler
	libcap-dev libnl-3-dev libnl-route-3-dev
	libcmocka-dev python3
	nftables libnftables-dev
	# the network namespace tests (wl-netns, netns-veth.sh): ip, bridge, nsenter
	iproute2 util-linux
	# the fuzzer (tests/fuzz/): clang's libFuzzer and sanitizers
	clang
	# the format test (scripts/check-format.sh)
	clang-format
	# the container tests: a busybox rootfs (tests/lib/busybox-rootfs.sh), runc
	busybox-static runc podman
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if ((${#missing[@]})); then
	if [[ $(id -u) -ne 0 ]]; then
		echo "install-deps: run as root to install: ${missing[*]}" >&2
		exit 1
	fi
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
