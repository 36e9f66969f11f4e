// SPDX-License-Identifier: GPL-2.0-only
/* The net plugin's descriptor and its private state. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <crf/log.h>
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

/*
 * The kinds' check (ABI 1.7), run by the files plugin's restore-prepare on
 * every socket fd's record; an established TCP connection's is noted for
 * restore-resume, which takes it out of repair mode (tcp-resume.c).
 */
static int net_kind_check(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;
	char what[96];
	int r;

	(void)ctx;
	snprintf(what, sizeof(what), "pid %d: fd %d (%s)", (int)obj->pid, obj->id, obj->kind);
	if (!info)
		return crf_error_errno(EBADMSG, "%s: no socket state saved", what);
	r = net_payload_check(obj->kind, info->payload, info->payload_len, what);
	if (r == 0 && !strcmp(obj->kind, "tcp"))
		r = tcp_resume_note(obj->pid, obj->id, info->payload, info->payload_len);
	return r;
}

/*
 * Whether this restore got as far as restore-resume (every live task does,
 * in a restore that succeeds) and was not undone after: a restore that
 * failed leaves the network lock as the killing dump left it, so that the
 * peers' segments meet no reset until a restore succeeds.
 */
static bool restore_resumed, restore_undone;

/* The connections out of repair mode (all at the first task), then this task's lock. */
static int net_restore_resume(struct crf_ctx *ctx)
{
	int r = tcp_resume(ctx);

	if (r >= 0)
		r = netlock_restore_resume(crf_ctx_pid(ctx));
	if (r >= 0)
		restore_resumed = true;
	return r;
}

static int net_restore_undo(struct crf_ctx *ctx)
{
	(void)ctx;
	restore_undone = true;
	tcp_resume_undo();
	return 0;
}

static int net_restore_cleanup(struct crf_ctx *ctx)
{
	netlock_restore_release(!restore_resumed || restore_undone);
	restore_resumed = restore_undone = false;
	tcp_resume_cleanup();
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
		[CRF_STAGE_RESTORE_UNDO] = net_restore_undo,
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
