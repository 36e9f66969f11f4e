#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The host's side of wl-tcp-ns veth: the bridge crftbr0 with 10.89.0.1/24
# (names of its own, so that it runs beside netns-veth.sh's tests), then the
# harness with the rest of the arguments (the workload adds the veth pair,
# its host end crfth0 a port of the bridge); the bridge and whatever end is
# left are removed on exit, failed or not.
#
# usage: tcp-ns-veth.sh HARNESS [HARNESS ARGS...]
set -u
cleanup() {
	ip link del crfth0 2>/dev/null
	ip link del crftbr0 2>/dev/null
}
trap cleanup EXIT
cleanup
ip link add crftbr0 type bridge || exit 1
ip addr add 10.89.0.1/24 dev crftbr0 || exit 1
ip link set crftbr0 up || exit 1
"$@"
