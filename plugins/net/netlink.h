/* SPDX-License-Identifier: GPL-2.0-only */
/* netlink.h - netlink sockets, the fd kind "netlink" (netlink.c). */
#ifndef CRF_PLUGIN_NET_NETLINK_H
#define CRF_PLUGIN_NET_NETLINK_H

#include <crf/plugin.h>

int netlink_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int netlink_restore(struct crf_ctx *ctx, const struct crf_object *obj);

#endif
