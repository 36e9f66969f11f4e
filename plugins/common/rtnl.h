/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rtnl.h - rtnetlink through libnl-route, as the net plugin (network
 * namespaces) and the devices plugin (tun/tap interfaces) both use it.
 */
#ifndef CRF_PLUGIN_COMMON_RTNL_H
#define CRF_PLUGIN_COMMON_RTNL_H

#include <netlink/addr.h>
#include <netlink/socket.h>
#include <protobuf-c/protobuf-c.h>

/* A NETLINK_ROUTE socket of this thread's net namespace; 0 or -errno (logged, naming @what). */
int common_rtnl_open(struct nl_sock **sk, const char *what);

/* @a's bytes into @b (malloc'ed); 0 or -ENOMEM. */
int common_rtnl_copy_addr(ProtobufCBinaryData *b, struct nl_addr *a);

#endif
