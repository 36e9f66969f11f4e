// SPDX-License-Identifier: GPL-2.0-only
/* The net plugin's descriptor and its private state. */
#include <stdlib.h>

#include <crf/plugin.h>

#include "inet.h"
#include "net.h"
#include "netlink.h"
#include "netlink.pb-c.h"
#include "netns.h"
#include "packet.h"
#include "unix.h"
#include "validate.h"

struct net_state *net_state(struct crf_ctx *ctx)
{
	struct net_state *st = crf_ctx_priv(ctx);

	if (!st) {
		st = calloc(1, sizeof(*st));
		crf_ctx_set_priv(ctx, st);
	}
	return st;
}

int net_cleanup(struct crf_ctx *ctx)
{
	netlock_nft_close();
	net_unix_cleanup(ctx);
	if (crf_ctx_priv(ctx))
		for (int i = 0; i < 4; i++)
			free(net_state(ctx)->proc[i].text);
	free(crf_ctx_priv(ctx));
	crf_ctx_set_priv(ctx, NULL);
	return 0;
}

/* The unix and the inet halves of the stages both have work in. */
static int net_dump_finish(struct crf_ctx *ctx)
{
	int r = netlock_dump_finish(ctx);

	return r < 0 ? r : net_unix_dump_finish(ctx);
}

static int net_dump_cleanup(struct crf_ctx *ctx)
{
	tcp_repair_forget();
	netlock_dump_forget();
	return net_cleanup(ctx);
}

static int net_restore_prepare(struct crf_ctx *ctx)
{
	int r = net_validate(crf_ctx_images(ctx));

	if (r == 0)
		r = netlock_restore_prepare(ctx);

	return r < 0 ? r : net_unix_restore_prepare(ctx);
}

static int net_restore_resume(struct crf_ctx *ctx)
{
	return netlock_restore_resume(crf_ctx_pid(ctx));
}

static int net_restore_cleanup(struct crf_ctx *ctx)
{
	netlock_restore_release();
	return net_cleanup(ctx);
}

/* The descriptor reads best as one block. */
/* clang-format off */
CRF_PLUGIN(
	.name = "net",
	.version = "0.2.0",
	.description = "unix sockets (pairs, listeners and their connections, names, queues, "
		       "shutdown), TCP (unconnected, listening, established through TCP_REPAIR), "
		       "UDP, raw, ping, packet and netlink sockets; net namespaces (netns*.c: lo, veth to crf's "
		       "namespace, addresses, routes, sysctls, nftables)",
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = net_probe,
		[CRF_STAGE_DUMP_PAUSE] = inet_dump_pause,
		[CRF_STAGE_DUMP_UNDO] = inet_dump_undo,
		[CRF_STAGE_DUMP_RESUME] = inet_dump_undo,
		[CRF_STAGE_DUMP_FINISH] = net_dump_finish,
		[CRF_STAGE_DUMP_CLEANUP] = net_dump_cleanup,
		[CRF_STAGE_RESTORE_PREPARE] = net_restore_prepare,
		[CRF_STAGE_RESTORE_PREMAP] = net_unix_restore_premap,
		[CRF_STAGE_RESTORE_RESUME] = net_restore_resume,
		[CRF_STAGE_RESTORE_CLEANUP] = net_restore_cleanup,
	),
	.kinds = CRF_KINDS(
		{ .cls = CRF_OBJ_FD, .name = "unix", .dump = net_unix_dump,
		  .restore = net_unix_restore },
		{ .cls = CRF_OBJ_FD, .name = "tcp", .dump = inet_dump, .restore = inet_restore },
		{ .cls = CRF_OBJ_FD, .name = "udp", .dump = inet_dump, .restore = inet_restore },
		{ .cls = CRF_OBJ_FD, .name = "raw", .dump = inet_dump, .restore = inet_restore },
		{ .cls = CRF_OBJ_FD, .name = "ping", .dump = inet_dump, .restore = inet_restore },
		{ .cls = CRF_OBJ_FD, .name = "packet", .dump = packet_dump,
		  .restore = packet_restore },
		{ .cls = CRF_OBJ_FD, .name = "netlink", .dump = netlink_dump,
		  .restore = netlink_restore },
		{ .cls = CRF_OBJ_NS, .name = "net", .dump = netns_dump, .restore = netns_restore }
	),
	.checks = CRF_CHECKS(
		{ .cls = CRF_OBJ_FD, .name = "unix", .check = net_kind_check },
		{ .cls = CRF_OBJ_FD, .name = "tcp", .check = net_kind_check },
		{ .cls = CRF_OBJ_FD, .name = "udp", .check = net_kind_check },
		{ .cls = CRF_OBJ_FD, .name = "raw", .check = net_kind_check },
		{ .cls = CRF_OBJ_FD, .name = "ping", .check = net_kind_check },
		{ .cls = CRF_OBJ_FD, .name = "packet", .check = net_kind_check },
		{ .cls = CRF_OBJ_FD, .name = "netlink", .check = net_kind_check }
	),
	.config_keys = CRF_STRINGS("tcp-established", "skip-in-flight", "unix-peercred-crf",
				   "tcp-close"),
	.schemas = CRF_SCHEMAS(&crf__net__inet_sk__descriptor, &crf__net__net_lock__descriptor,
			       &crf__net__unix_sk__descriptor, &crf__net__netlink_sk__descriptor,
			       &crf__net__net_ns__descriptor, &crf__net__packet_sk__descriptor),
);
/* clang-format on */
