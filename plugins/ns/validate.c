// SPDX-License-Identifier: GPL-2.0-only
/*
 * ns-PID.img, checked before the tree is forked: restore-premap enters the
 * claims of a process in ns_kinds[] order, one per kind, and hands each
 * handler the namespace by its dump-time link; a claim of an unknown kind,
 * two of one kind, or a link that is not its kind's and inode's would give
 * a handler what it never saved.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>

#include "ns.h"
#include "ns.pb-c.h"

#define bad(i, fmt, ...)                                                                           \
	crf_error_errno(EBADMSG, "%s/%s: record %zu: " fmt, crf_imgdir_path(dir), name, i,         \
			##__VA_ARGS__)

static int check_claim(struct crf_imgdir *dir, const char *name, size_t i,
		       const Crf__Ns__NsClaim *c, uint32_t *seen)
{
	/* A *_for_children link names the namespace kind itself: "pid:[N]". */
	const char *suffix = strstr(c->kind, "_for_children");
	int k = ns_kind_index(c->kind), n = suffix ? (int)(suffix - c->kind) : 32;
	char link[96];

	if (k < 0)
		return bad(i, "NsClaim.kind: unknown namespace kind '%.32s'", c->kind);
	if (*seen & (1u << k))
		return bad(i, "NsClaim.kind: a second claim of the %s namespace", c->kind);
	*seen |= 1u << k;
	snprintf(link, sizeof(link), "%.*s:[%" PRIu64 "]", n, c->kind, c->id);
	/* pid_for_children made by unshare, no process in it yet (userns-pid.c). */
	if (!c->id && !strcmp(c->kind, "pid_for_children") && !strcmp(c->link, "pid:[?]"))
		return 0;
	if (!c->id || strcmp(link, c->link))
		return bad(i, "NsClaim.link: '%.64s' is not %s's namespace %" PRIu64, c->link,
			   c->kind, c->id);
	if (!*c->claim_kind || !*c->claim_plugin)
		return bad(i, "NsClaim.claim_kind, claim_plugin: no handler named");
	/* external.c: only its handler's claims have a key, and each has one. */
	if ((c->external_key != NULL) !=
	    (!strcmp(c->claim_kind, "external") && !strcmp(c->claim_plugin, "ns")))
		return bad(i, "NsClaim.external_key: %s",
			   c->external_key ? "on a claim not external" : "missing");
	if (c->external_key && (!*c->external_key || strpbrk(c->external_key, " \t\n")))
		return bad(i, "NsClaim.external_key: empty, or with a space");
	return 0;
}

static int check_file(void *arg, const char *name, pid_t pid)
{
	struct crf_imgdir *dir = arg;
	_cleanup_img_ struct crf_img *img = NULL;
	ProtobufCMessage *msg;
	uint32_t seen = 0;
	size_t i = 0;
	int r = crf_img_check_task(dir, name, pid);

	if (r >= 0)
		r = crf_img_open(dir, name, &crf__ns__ns_claim__descriptor, &img);
	while (r >= 0 && (r = crf_img_read(img, &msg)) > 0) {
		r = check_claim(dir, name, i++, (Crf__Ns__NsClaim *)msg, &seen);
		protobuf_c_message_free_unpacked(msg, NULL);
	}
	return r;
}

int ns_validate(struct crf_imgdir *dir)
{
	return crf_imgdir_each_task(dir, "ns", check_file, dir);
}
