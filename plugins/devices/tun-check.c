// SPDX-License-Identifier: GPL-2.0-only
/*
 * The check of a saved tun/tap fd (the kind's check, plugin ABI 1.7): run on
 * every record of the kind in restore-prepare, before the tree is forked,
 * so that tun_restore() in a forked task only meets a record it can use.
 * The name becomes an interface's and a path under /proc/sys/net, the
 * sysctls paths below it, the addresses netlink attributes.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <crf/log.h>

#include "tun.h"

#define MAC_MAX		 32 /* the kernel's MAX_ADDR_LEN */
#define SYSCTL_PATH_MAX	 128
#define SYSCTL_VALUE_MAX 256
#define ALIAS_MAX	 256 /* the kernel's IFALIASZ, with the NUL */

/* An interface name the kernel would give a device (dev_valid_name). */
static bool ifname_ok(const char *s)
{
	return s[0] && strlen(s) < IF_NAMESIZE && strcmp(s, ".") && strcmp(s, "..") &&
	       !s[strcspn(s, "/: \t\n\v\f\r")];
}

static int bad(const char *what, const char *field, const char *why)
{
	return crf_error_errno(EBADMSG, "%s: payload: Tun.%s: %s", what, field, why);
}

/* The same with a string of the record, quoted and cut. */
static int bad_str(const char *what, const char *field, const char *s, const char *why)
{
	return crf_error_errno(EBADMSG, "%s: payload: Tun.%s: '%.40s' %s", what, field, s, why);
}

static int check_addr(const char *what, const Crf__Devices__TunAddr *a)
{
	size_t len = a->family == AF_INET ? 4 : a->family == AF_INET6 ? 16 : 0;

	if (!len)
		return bad(what, "link.addrs.family", "neither AF_INET nor AF_INET6");
	if (a->local.len != len || (a->has_peer && a->peer.len != len) ||
	    (a->has_broadcast && a->broadcast.len != len))
		return bad(what, "link.addrs", "an address of the wrong length");
	if (a->prefixlen > len * 8)
		return bad(what, "link.addrs.prefixlen", "longer than the address");
	if (a->label && strlen(a->label) >= IF_NAMESIZE)
		return bad_str(what, "link.addrs.label", a->label, "is too long");
	return 0;
}

/* "ipv4/conf/forwarding": DIR/FILE, joined around the device's name. */
static int check_sysctl(const char *what, const Crf__Devices__TunSysctl *s)
{
	const char *file = strrchr(s->path, '/');

	if (!file || file == s->path || !file[1] || s->path[0] == '/' || strstr(s->path, "..") ||
	    strlen(s->path) > SYSCTL_PATH_MAX)
		return bad_str(what, "link.sysctls.path", s->path, "is not a sysctl of a device");
	if (strlen(s->value) > SYSCTL_VALUE_MAX)
		return bad(what, "link.sysctls.value", "too long");
	return 0;
}

static int check_link(const char *what, const Crf__Devices__Tun *t)
{
	const Crf__Devices__TunLink *l = t->link;
	int r = 0;

	if (l->has_mac && (!(t->flags & IFF_TAP) || l->mac.len > MAC_MAX))
		return bad(what, "link.mac", "not a tap's hardware address");
	if (l->alias && strlen(l->alias) >= ALIAS_MAX)
		return bad(what, "link.alias", "too long");
	for (size_t i = 0; r == 0 && i < l->n_addrs; i++)
		r = check_addr(what, l->addrs[i]);
	for (size_t i = 0; r == 0 && i < l->n_sysctls; i++)
		r = check_sysctl(what, l->sysctls[i]);
	return r;
}

int tun_record_check(const Crf__Devices__Tun *t, const char *what)
{
	if (!t->attached)
		return 0;
	if (!t->name || !t->has_flags || !t->link || !t->has_sndbuf || !t->has_vnet_hdr_sz ||
	    !t->has_owner || !t->has_group)
		return crf_error_errno(EBADMSG, "%s: payload: an attached tun without its settings",
				       what);
	if (!ifname_ok(t->name))
		return bad_str(what, "name", t->name, "is not an interface name");
	/* TUNGETIFF's 16 bits (IFF_PERSIST and the queue state besides TUNSETIFF's). */
	if (!(t->flags & IFF_TUN) == !(t->flags & IFF_TAP) || t->flags > 0xffff)
		return bad(what, "flags", "not one of tun or tap, or not TUNGETIFF's");
	return check_link(what, t);
}

int tun_payload_check(const void *data, size_t len, const char *what)
{
	Crf__Devices__Tun *t = len ? crf__devices__tun__unpack(NULL, len, data) : NULL;
	int r;

	if (!t)
		return crf_error_errno(EBADMSG, "%s: payload: no crf.devices.Tun in its %zu bytes",
				       what, len);
	r = tun_record_check(t, what);
	crf__devices__tun__free_unpacked(t, NULL);
	return r;
}

int tun_check(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;
	char what[64];

	(void)ctx;
	snprintf(what, sizeof(what), "pid %d: fd %d (tun)", (int)obj->pid, obj->id);
	if (!info)
		return crf_error_errno(EBADMSG, "%s: no record saved", what);
	return tun_payload_check(info->payload, info->payload_len, what);
}
