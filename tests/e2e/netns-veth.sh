#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A network namespace as a container runtime sets it up (wl-netns veth):
# this script makes the host's side, the bridge crfwlbr0 with 10.88.0.1/24
# and fd00:88::1/64, runs the harness with the rest of its arguments (the
# workload adds the veth pair, its host end crfwlh0 a port of the bridge),
# and removes the bridge and whatever end is left on exit, failed or not.
#
# usage: netns-veth.sh HARNESS [HARNESS ARGS...]
set -u
cleanup() {
	ip link del crfwlh0 2>/dev/null
	ip link del crfwlbr0 2>/dev/null
}
trap cleanup EXIT
cleanup
ip link add crfwlbr0 type bridge || exit 1
ip addr add 10.88.0.1/24 dev crfwlbr0 || exit 1
ip addr add fd00:88::1/64 dev crfwlbr0 nodad || exit 1
ip link set crfwlbr0 up || exit 1
"$@"
