// SPDX-License-Identifier: GPL-2.0-only
/* The tun/tap fd kind at restore (see tun.c). */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/if_tun.h>

#include <crf/log.h>

#include "tun.h"

static int set_int(const char *what, int fd, unsigned long req, const char *name, int v)
{
	if (ioctl(fd, req, v) < 0)
		return crf_error_errno(errno, "%s: %s %d", what, name, v);
	return 0;
}

static int set_ptr(const char *what, int fd, unsigned long req, const char *name, int v)
{
	if (ioctl(fd, req, &v) < 0)
		return crf_error_errno(errno, "%s: %s %d", what, name, v);
	return 0;
}

/* The device was made by this TUNSETIFF: set it up as it was. */
static int set_new(const char *what, int fd, const Crf__Devices__Tun *t)
{
	int r = 0;

	if (t->owner >= 0)
		r = set_int(what, fd, TUNSETOWNER, "TUNSETOWNER", (int)t->owner);
	if (r >= 0 && t->group >= 0)
		r = set_int(what, fd, TUNSETGROUP, "TUNSETGROUP", (int)t->group);
	if (r >= 0 && t->persist)
		r = set_int(what, fd, TUNSETPERSIST, "TUNSETPERSIST", 1);
	if (r >= 0 && !t->link->carrier && (t->link->ifflags & IFF_UP))
		r = set_ptr(what, fd, TUNSETCARRIER, "TUNSETCARRIER", 0);
	return r < 0 ? r : tun_link_apply(what, t->name, t->link);
}

/* This queue's own settings: its socket's. */
static int set_queue(const char *what, int fd, const Crf__Devices__Tun *t)
{
	int r = set_ptr(what, fd, TUNSETSNDBUF, "TUNSETSNDBUF", t->sndbuf);

	if (r >= 0)
		r = set_ptr(what, fd, TUNSETVNETHDRSZ, "TUNSETVNETHDRSZ", t->vnet_hdr_sz);
	if (r >= 0 && t->has_vnet_le)
		r = set_ptr(what, fd, TUNSETVNETLE, "TUNSETVNETLE", t->vnet_le);
	if (r >= 0 && t->has_vnet_be)
		r = set_ptr(what, fd, TUNSETVNETBE, "TUNSETVNETBE", t->vnet_be);
	return r;
}

static int attach(const char *what, int fd, const Crf__Devices__Tun *t)
{
	struct ifreq ifr = {0};
	unsigned int existed = if_nametoindex(t->name), got, mask;
	int r;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", t->name);
	ifr.ifr_flags = (short)(t->flags & TUN_SETIFF_FLAGS);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0)
		return crf_error_errno(errno, "%s: TUNSETIFF%s", what,
				       existed ? " (the interface exists)" : "");
	if (ioctl(fd, TUNGETIFF, &ifr) < 0)
		return crf_error_errno(errno, "%s: TUNGETIFF", what);
	/* A device made now is persistent only once set_new() says so. */
	mask = existed ? TUN_SETIFF_FLAGS | IFF_PERSIST : TUN_SETIFF_FLAGS;
	got = (uint16_t)ifr.ifr_flags & mask;
	if (got != (t->flags & mask))
		return crf_error_errno(existed ? EEXIST : EIO,
				       "%s: the interface %s has flags %#x, not %#x", what,
				       existed ? "there" : "made", got, t->flags & mask);
	if (existed && existed != t->link->ifindex)
		return crf_error_errno(EEXIST, "%s: the interface there has index %u, not %u", what,
				       existed, t->link->ifindex);
	r = existed ? 0 : set_new(what, fd, t);
	if (r >= 0)
		r = set_queue(what, fd, t);
	/* Not persistent, a device this restore made dies with the fd. */
	if (r < 0 && !existed && t->persist)
		(void)ioctl(fd, TUNSETPERSIST, 0);
	return r;
}

int tun_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;
	Crf__Devices__Tun *t;
	char what[96];
	int fd, r = 0;

	(void)ctx;
	snprintf(what, sizeof(what), "pid %d: fd %d (/dev/net/tun)", (int)obj->pid, obj->id);
	t = crf__devices__tun__unpack(NULL, info->payload_len, info->payload);
	/* Checked before the fork (tun_check); again here, where it is used. */
	if (!t || tun_record_check(t, what) < 0) {
		crf__devices__tun__free_unpacked(t, NULL);
		return t ? -EBADMSG : crf_error_errno(EBADMSG, "%s: its record", what);
	}
	fd = open("/dev/net/tun", (int)(info->flags & (O_ACCMODE | O_NONBLOCK)) | O_CLOEXEC);
	if (fd < 0)
		r = crf_error_errno(errno, "%s: open", what);
	else if (t->attached) {
		snprintf(what, sizeof(what), "pid %d: fd %d (%s %s)", (int)obj->pid, obj->id,
			 t->flags & IFF_TAP ? "tap" : "tun", t->name);
		r = attach(what, fd, t);
	}
	crf__devices__tun__free_unpacked(t, NULL);
	if (r < 0 && fd >= 0)
		close(fd);
	return r < 0 ? r : fd;
}
