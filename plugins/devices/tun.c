// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tun/tap fd kind: an fd on /dev/net/tun, attached to an interface
 * with TUNSETIFF or not yet.  The fd's state is saved as its payload
 * (crf.devices.Tun): the interface's name and TUNGETIFF flags (tun or tap,
 * no_pi, vnet_hdr, multi_queue...), persist, owner and group, the socket's
 * sndbuf, the vnet header size and byte order, and the interface itself
 * (tun-link.c).  The files plugin keeps the fd's number, flags and sharing.
 *
 * Restore: /dev/net/tun opened again and TUNSETIFF with the same name and
 * flags.  A device that is still there (persistent, or made by a queue
 * restored before: multi_queue) is attached to and must have the flags and
 * index it had; one that is not is made anew and set as it was (owner,
 * group, persist, then the interface).
 *
 * Refused by name: an interface in a network namespace not crf's, packets
 * waiting to be read (the queue cannot be read without taking them, nor
 * put back), a classic BPF filter (TUNATTACHFILTER).  Not seen and so not
 * restored: an eBPF steering or filter program (TUNSETSTEERINGEBPF,
 * TUNSETFILTEREBPF: no ioctl reads them back), a queue detached with
 * IFF_DETACH_QUEUE (TUNGETIFF fails on it as on an fd never attached:
 * it is restored as the latter).
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/if_tun.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "tun.h"

#define TUN_MAJOR 10
#define TUN_MINOR 200

bool tun_match(const struct crf_object *obj)
{
	char kind[32];

	/* The walk names a character device "chr:MAJOR:MINOR" (no data yet). */
	if (obj->cls != CRF_OBJ_FD || !obj->kind)
		return false;
	snprintf(kind, sizeof(kind), "chr:%u:%u", TUN_MAJOR, TUN_MINOR);
	return !strcmp(obj->kind, kind);
}

/* A number in a sysfs file of interface @name: owner, group. */
static int sysfs_long(const char *what, const char *name, const char *file, int64_t *v)
{
	char path[96], buf[32];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", name, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return crf_error_errno(errno ? errno : EIO, "%s: %s", what, path);
	buf[n] = '\0';
	*v = strtoll(buf, NULL, 10);
	return 0;
}

/* The device's network namespace must be crf's: its sysfs and netlink are read here. */
static int check_netns(const char *what, int fd)
{
	_cleanup_close_ int ns = ioctl(fd, TUNGETDEVNETNS);
	struct stat a, b;

	if (ns < 0)
		return crf_error_errno(errno, "%s: TUNGETDEVNETNS", what);
	if (fstat(ns, &a) < 0 || stat("/proc/self/ns/net", &b) < 0)
		return crf_error_errno(errno, "%s: network namespaces", what);
	if (a.st_ino != b.st_ino || a.st_dev != b.st_dev)
		return crf_error_errno(EOPNOTSUPP,
				       "%s: an interface of network namespace net:[%lu], not "
				       "crf's, which crf does not restore tun devices in",
				       what, (unsigned long)a.st_ino);
	return 0;
}

static int read_tun(const char *what, int fd, const struct ifreq *ifr, Crf__Devices__Tun *t)
{
	struct sock_fprog prog = {0};
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int v, r = check_netns(what, fd);

	if (r < 0)
		return r;
	t->flags = (uint16_t)ifr->ifr_flags;
	t->has_flags = t->has_persist = t->has_sndbuf = t->has_vnet_hdr_sz = true;
	t->persist = !!(t->flags & IFF_PERSIST);
	if (ioctl(fd, TUNGETSNDBUF, &t->sndbuf) < 0 ||
	    ioctl(fd, TUNGETVNETHDRSZ, &t->vnet_hdr_sz) < 0)
		return crf_error_errno(errno, "%s: TUNGETSNDBUF/TUNGETVNETHDRSZ", what);
	if (ioctl(fd, TUNGETVNETLE, &v) == 0) {
		t->has_vnet_le = true;
		t->vnet_le = v;
	}
	if (ioctl(fd, TUNGETVNETBE, &v) == 0) {
		t->has_vnet_be = true;
		t->vnet_be = v;
	}
	if ((t->flags & IFF_TAP) && ioctl(fd, TUNGETFILTER, &prog) == 0 && prog.len)
		return crf_error_errno(EOPNOTSUPP,
				       "%s: a packet filter attached (TUNATTACHFILTER), which crf "
				       "does not save",
				       what);
	if (poll(&p, 1, 0) < 0)
		return crf_error_errno(errno, "%s: poll", what);
	if (p.revents & POLLIN)
		return crf_error_errno(EOPNOTSUPP,
				       "%s: packets waiting to be read, which crf cannot save (a "
				       "read takes them off the queue for good)",
				       what);
	t->has_owner = t->has_group = true;
	r = sysfs_long(what, ifr->ifr_name, "owner", &t->owner);
	if (r >= 0)
		r = sysfs_long(what, ifr->ifr_name, "group", &t->group);
	if (r < 0)
		return r;
	t->link = malloc(sizeof(*t->link));
	if (!t->link)
		return crf_error_errno(ENOMEM, "%s", what);
	crf__devices__tun_link__init(t->link);
	return tun_link_read(what, ifr->ifr_name, (int)if_nametoindex(ifr->ifr_name), t->link);
}

int tun_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;
	Crf__Devices__Tun t = CRF__DEVICES__TUN__INIT;
	struct ifreq ifr = {0};
	char what[96];
	_cleanup_free_ uint8_t *buf = NULL;
	size_t len;
	int r = 0;

	snprintf(what, sizeof(what), "pid %d: fd %d (/dev/net/tun)", (int)obj->pid, obj->id);
	if (ioctl(info->copy, TUNGETIFF, &ifr) == 0) {
		t.attached = true;
		t.name = ifr.ifr_name;
		snprintf(what, sizeof(what), "pid %d: fd %d (%s %s)", (int)obj->pid, obj->id,
			 ifr.ifr_flags & IFF_TAP ? "tap" : "tun", ifr.ifr_name);
		r = read_tun(what, info->copy, &ifr, &t);
	} else if (errno != EBADFD) {
		r = crf_error_errno(errno, "%s: TUNGETIFF", what);
	}
	if (r >= 0) {
		len = crf__devices__tun__get_packed_size(&t);
		buf = malloc(len ? len : 1);
		r = buf ? 0 : crf_error_errno(ENOMEM, "%s", what);
	}
	if (r >= 0) {
		crf__devices__tun__pack(&t, buf);
		r = crf_fd_save_payload(ctx, obj, buf, len);
	}
	if (t.link) {
		tun_link_free(t.link);
		free(t.link);
	}
	return r;
}
