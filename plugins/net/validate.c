// SPDX-License-Identifier: GPL-2.0-only
/*
 * The net plugin's images, checked before the tree is forked: the first
 * step of restore-prepare, and what the fuzzer runs (validate.h).
 *
 * Restore-prepare makes the unix sockets from unix-sk.img and takes the
 * network lock from netlock.img; each forked task decodes the payload of
 * its socket fds (files-PID.img, Fd.payload) and a namespace's links,
 * routes and sysctls come from netns-ID.img.  Each of them trusts what
 * these checks establish: every record decodes, every address has its
 * family's length, every socket a record names is one of the image, the
 * lock's table is a name and not nftables commands.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>

#include "inet.pb-c.h"
#include "netlink.pb-c.h"
#include "netns.pb-c.h"
#include "packet.pb-c.h"
#include "unix.h"
#include "unix.pb-c.h"
#include "validate.h"

#define bad(v, fmt, ...) crf_error_errno(EBADMSG, "%s: " fmt, (v)->what, ##__VA_ARGS__)

struct v {
	struct crf_imgdir *dir;
	char what[320]; /* "DIR/IMAGE: record N", or the fd's, for messages */
	uint64_t *inos; /* the sockets of unix-sk.img, sorted */
	size_t n_inos;
};

/* v->what for record @rec of image @name. */
static void at_record(struct v *v, const char *name, size_t rec)
{
	snprintf(v->what, sizeof(v->what), "%s/%s: record %zu", crf_imgdir_path(v->dir), name, rec);
}

/* The most an option's value can be: a filter of BPF_MAXINSNS instructions. */
#define OPT_MAX (4096 * 8)

static size_t addr_len(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

/* An address of @family (0: either), with a port. */
static int check_addr(struct v *v, const Crf__Net__Addr *a, int family, const char *field)
{
	if (!a)
		return 0;
	if (family ? a->addr.len != addr_len(family) : a->addr.len != 4 && a->addr.len != 16)
		return bad(v, "%s: an address of %zu bytes", field, a->addr.len);
	if (a->port > 65535)
		return bad(v, "%s: port %u", field, a->port);
	return 0;
}

static int check_opts(struct v *v, Crf__Net__SockOpt *const *opts, size_t n, const char *kind)
{
	for (size_t i = 0; i < n; i++) {
		const Crf__Net__SockOpt *o = opts[i];

		if (o->value.len > OPT_MAX)
			return bad(v, "%s.opts[%zu]: a value of %zu bytes", kind, i, o->value.len);
		if (o->level == SOL_SOCKET && o->name == SO_ATTACH_FILTER &&
		    (!o->value.len || o->value.len % 8))
			return bad(v, "%s.opts[%zu]: a filter of %zu bytes", kind, i, o->value.len);
	}
	return 0;
}

static int check_tcp(struct v *v, const Crf__Net__InetSk *sk)
{
	const Crf__Net__TcpConn *c = sk->tcp;

	if (sk->state == CRF__NET__STATE__ESTABLISHED && (!c || !sk->peer))
		return bad(v, "InetSk: an established connection without its state or peer");
	if (!c)
		return 0;
	if (c->send_unsent > c->send_queue.len)
		return bad(v, "InetSk.tcp.send_unsent: %u of a queue of %zu bytes", c->send_unsent,
			   c->send_queue.len);
	if (c->send_queue.len > INT_MAX / 8 || c->recv_queue.len > INT_MAX / 8)
		return bad(v, "InetSk.tcp: queues of %zu and %zu bytes", c->send_queue.len,
			   c->recv_queue.len);
	if (c->snd_wscale > 14 || c->rcv_wscale > 14)
		return bad(v, "InetSk.tcp: window scales %u and %u", c->snd_wscale, c->rcv_wscale);
	if (c->mss > 65535)
		return bad(v, "InetSk.tcp.mss: %u", c->mss);
	if (c->has_state && (c->state < TCP_ESTABLISHED || c->state > TCP_CLOSING))
		return bad(v, "InetSk.tcp.state: %u", c->state);
	return 0;
}

static int check_inet(struct v *v, const char *kind, const Crf__Net__InetSk *sk)
{
	static const char *const kinds[] = {
		[CRF__NET__PROTO__TCP] = "tcp",
		[CRF__NET__PROTO__UDP] = "udp",
		[CRF__NET__PROTO__RAW] = "raw",
		[CRF__NET__PROTO__PING] = "ping",
	};
	int r;

	if (sk->family != AF_INET && sk->family != AF_INET6)
		return bad(v, "InetSk.family: %d", sk->family);
	if (sk->proto < CRF__NET__PROTO__TCP || sk->proto > CRF__NET__PROTO__PING ||
	    strcmp(kinds[sk->proto], kind))
		return bad(v, "InetSk.proto: %d in an fd of kind %s", sk->proto, kind);
	if (sk->state < CRF__NET__STATE__UNCONNECTED || sk->state > CRF__NET__STATE__CLOSED)
		return bad(v, "InetSk.state: %d", sk->state);
	r = check_addr(v, sk->local, sk->family, "InetSk.local");
	if (r == 0)
		r = check_addr(v, sk->peer, sk->family, "InetSk.peer");
	if (r == 0)
		r = check_opts(v, sk->opts, sk->n_opts, "InetSk");
	if (r < 0)
		return r;
	if (sk->has_backlog && sk->backlog > INT_MAX)
		return bad(v, "InetSk.backlog: %u", sk->backlog);
	if (sk->has_protocol && sk->protocol > 255)
		return bad(v, "InetSk.protocol: %u", sk->protocol);
	for (size_t i = 0; i < sk->n_rcvq; i++) {
		r = check_addr(v, sk->rcvq[i]->src, 0, "InetSk.rcvq.src");
		if (r < 0)
			return r;
		/* Queued again as one UDP datagram, whose length field has 16 bits. */
		if (sk->rcvq[i]->data.len > 65535 - 8)
			return bad(v, "InetSk.rcvq[%zu]: a datagram of %zu bytes", i,
				   sk->rcvq[i]->data.len);
	}
	for (size_t i = 0; i < sk->n_mcast; i++) {
		const Crf__Net__McastGroup *g = sk->mcast[i];

		if (g->group.len != 4 && g->group.len != 16)
			return bad(v, "InetSk.mcast[%zu].group: %zu bytes", i, g->group.len);
		for (size_t j = 0; j < g->n_sources; j++)
			if (g->sources[j].len != g->group.len)
				return bad(v, "InetSk.mcast[%zu].sources[%zu]: %zu bytes", i, j,
					   g->sources[j].len);
	}
	return sk->proto == CRF__NET__PROTO__TCP ? check_tcp(v, sk) : 0;
}

static int check_packet(struct v *v, const Crf__Net__PacketSk *sk)
{
	if (sk->type != SOCK_RAW && sk->type != SOCK_DGRAM && sk->type != SOCK_PACKET)
		return bad(v, "PacketSk.type: %u", sk->type);
	if (sk->protocol > 0xffff)
		return bad(v, "PacketSk.protocol: %u", sk->protocol);
	if (sk->device && strlen(sk->device) >= 14)
		return bad(v, "PacketSk.device: a name of %zu bytes", strlen(sk->device));
	for (size_t i = 0; i < sk->n_mclist; i++)
		if (sk->mclist[i]->addr.len > 8)
			return bad(v, "PacketSk.mclist[%zu].addr: %zu bytes", i,
				   sk->mclist[i]->addr.len);
	return check_opts(v, sk->opts, sk->n_opts, "PacketSk");
}

static int check_netlink(struct v *v, const Crf__Net__NetlinkSk *sk)
{
	if (sk->type != SOCK_RAW && sk->type != SOCK_DGRAM)
		return bad(v, "NetlinkSk.type: %u", sk->type);
	if (sk->protocol >= MAX_LINKS)
		return bad(v, "NetlinkSk.protocol: %u", sk->protocol);
	if (sk->n_groups > 1024)
		return bad(v, "NetlinkSk.groups: %zu words", sk->n_groups);
	return check_opts(v, sk->opts, sk->n_opts, "NetlinkSk");
}

static bool have_ino(const struct v *v, uint64_t ino)
{
	size_t lo = 0, hi = v->n_inos;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->inos[mid] == ino)
			return true;
		if (v->inos[mid] < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static int check_unix_fd(struct v *v, const uint8_t *data, size_t len)
{
	struct unix_payload pl;

	if (len != sizeof(pl))
		return bad(v, "payload: %zu bytes for a unix socket", len);
	memcpy(&pl, data, sizeof(pl));
	if (pl.version != 1)
		return bad(v, "payload: unix socket record version %u", pl.version);
	return 0;
}

int net_payload_check(const char *kind, const void *data, size_t len, const char *what)
{
	const ProtobufCMessageDescriptor *desc;
	struct v v = {0};
	ProtobufCMessage *m;
	int r;

	snprintf(v.what, sizeof(v.what), "%s", what);
	if (!strcmp(kind, "unix"))
		return check_unix_fd(&v, data, len);
	if (!strcmp(kind, "tcp") || !strcmp(kind, "udp") || !strcmp(kind, "raw") ||
	    !strcmp(kind, "ping"))
		desc = &crf__net__inet_sk__descriptor;
	else if (!strcmp(kind, "packet"))
		desc = &crf__net__packet_sk__descriptor;
	else if (!strcmp(kind, "netlink"))
		desc = &crf__net__netlink_sk__descriptor;
	else
		return bad(&v, "kind %s, which the net plugin does not have", kind);
	m = len ? protobuf_c_message_unpack(desc, NULL, len, data) : NULL;
	if (!m)
		return bad(&v, "payload: no %s in its %zu bytes", desc->name, len);
	if (desc == &crf__net__inet_sk__descriptor)
		r = check_inet(&v, kind, (Crf__Net__InetSk *)m);
	else if (desc == &crf__net__packet_sk__descriptor)
		r = check_packet(&v, (Crf__Net__PacketSk *)m);
	else
		r = check_netlink(&v, (Crf__Net__NetlinkSk *)m);
	protobuf_c_message_free_unpacked(m, NULL);
	return r;
}

/* Walk record image @img of @desc (absent: no records), @fn on each. */
static int each_record(struct v *v, const char *img, const ProtobufCMessageDescriptor *desc,
		       int (*fn)(struct v *v, const ProtobufCMessage *m))
{
	_cleanup_img_ struct crf_img *im = NULL;
	ProtobufCMessage *m;
	int r;

	if (faccessat(crf_imgdir_fd(v->dir), img, F_OK, 0) < 0)
		return 0;
	r = crf_img_open(v->dir, img, desc, &im);
	for (size_t rec = 0; r >= 0 && (at_record(v, img, rec), r = crf_img_read(im, &m)) > 0;
	     rec++) {
		r = fn(v, m);
		protobuf_c_message_free_unpacked(m, NULL);
	}
	return r;
}

static int add_ino(struct v *v, const ProtobufCMessage *m)
{
	const Crf__Net__UnixSk *sk = (const Crf__Net__UnixSk *)m;
	uint64_t *n = realloc(v->inos, (v->n_inos + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	v->inos = n;
	v->inos[v->n_inos++] = sk->ino;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int check_name(struct v *v, const ProtobufCBinaryData *name, const char *field)
{
	if (name->len > sizeof(((struct sockaddr_un *)0)->sun_path))
		return bad(v, "UnixSk.%s: a name of %zu bytes", field, name->len);
	return 0;
}

static int check_ref(struct v *v, uint64_t ino, const char *field)
{
	return have_ino(v, ino) ? 0
				: bad(v, "UnixSk.%s: socket %llu, which %s does not list", field,
				      (unsigned long long)ino, UNIX_IMG);
}

static int check_unix(struct v *v, const ProtobufCMessage *m)
{
	const Crf__Net__UnixSk *sk = (const Crf__Net__UnixSk *)m;
	int r = 0;

	if (sk->type != SOCK_STREAM && sk->type != SOCK_DGRAM && sk->type != SOCK_SEQPACKET)
		return bad(v, "UnixSk.type: %u", sk->type);
	if (sk->has_name)
		r = check_name(v, &sk->name, "name");
	if (r == 0 && sk->has_peer_name)
		r = check_name(v, &sk->peer_name, "peer_name");
	for (size_t i = 0; r == 0 && i < sk->n_senders; i++)
		r = check_name(v, &sk->senders[i], "senders");
	if (r == 0 && sk->has_peer)
		r = check_ref(v, sk->peer, "peer");
	for (size_t i = 0; r == 0 && i < sk->n_icons; i++)
		r = check_ref(v, sk->icons[i], "icons");
	if (r == 0 && sk->has_queued_on)
		r = check_ref(v, sk->queued_on, "queued_on");
	if (r == 0 && sk->has_accepted_from)
		r = check_ref(v, sk->accepted_from, "accepted_from");
	return r;
}

static int check_lock(struct v *v, const ProtobufCMessage *m)
{
	const Crf__Net__NetLock *nl = (const Crf__Net__NetLock *)m;
	const char *p = nl->table;

	/* It goes into nftables commands: crf_lock_PID, as the dump names it. */
	if (strncmp(p, "crf_lock_", 9) || !p[9] || strlen(p) > 32 ||
	    strspn(p + 9, "0123456789") != strlen(p + 9))
		return bad(v, "NetLock.table: \"%.40s\" is not a table crf makes", p);
	for (size_t i = 0; i < nl->n_conns; i++) {
		const Crf__Net__LockedConn *c = nl->conns[i];
		int r;

		if (c->family != AF_INET && c->family != AF_INET6)
			return bad(v, "NetLock.conns[%zu].family: %d", i, c->family);
		r = check_addr(v, c->local, c->family, "NetLock.conns.local");
		if (r == 0)
			r = check_addr(v, c->peer, c->family, "NetLock.conns.peer");
		if (r < 0)
			return r;
	}
	return 0;
}

static int check_ns_addr(struct v *v, const Crf__Net__NsAddr *a, const char *link)
{
	size_t len = addr_len((int)a->family);

	if (!len || a->local.len != len || (a->has_peer && a->peer.len != len))
		return bad(v, "NetNs: link %s: an address of family %u and %zu bytes", link,
			   a->family, a->local.len);
	if (a->prefixlen > len * 8)
		return bad(v, "NetNs: link %s: prefix length %u", link, a->prefixlen);
	if (a->label && strlen(a->label) >= IFNAMSIZ)
		return bad(v, "NetNs: link %s: a label of %zu bytes", link, strlen(a->label));
	return 0;
}

static int check_link(struct v *v, const Crf__Net__NsLink *l, bool peer)
{
	int r = 0;

	if (!l->name[0] || strlen(l->name) >= IFNAMSIZ || strchr(l->name, '/'))
		return bad(v, "NetNs.links: a link named \"%.40s\"", l->name);
	if (l->has_mac && l->mac.len > 32)
		return bad(v, "NetNs: link %s: a MAC address of %zu bytes", l->name, l->mac.len);
	if (l->master && strlen(l->master) >= IFNAMSIZ)
		return bad(v, "NetNs: link %s: a master named \"%.40s\"", l->name, l->master);
	if (l->peer && peer)
		return bad(v, "NetNs: link %s: the peer of a peer", l->name);
	for (size_t i = 0; r == 0 && i < l->n_addrs; i++)
		r = check_ns_addr(v, l->addrs[i], l->name);
	return r == 0 && l->peer ? check_link(v, l->peer, true) : r;
}

static int check_route(struct v *v, const Crf__Net__NsRoute *rt)
{
	size_t len = addr_len((int)rt->family);

	if (!len)
		return bad(v, "NetNs.routes: family %u", rt->family);
	if ((rt->has_dst && rt->dst.len != len) || (rt->has_gateway && rt->gateway.len != len) ||
	    (rt->has_pref_src && rt->pref_src.len != len) || rt->dst_len > len * 8)
		return bad(v, "NetNs.routes: route %s: an address of the wrong length", rt->key);
	if (rt->dev && strlen(rt->dev) >= IFNAMSIZ)
		return bad(v, "NetNs.routes: route %s: a device named \"%.40s\"", rt->key, rt->dev);
	return 0;
}

static int check_netns(struct v *v, const ProtobufCMessage *m)
{
	const Crf__Net__NetNs *ns = (const Crf__Net__NetNs *)m;
	int r = 0;

	for (size_t i = 0; r == 0 && i < ns->n_links; i++)
		r = check_link(v, ns->links[i], false);
	for (size_t i = 0; r == 0 && i < ns->n_routes; i++)
		r = check_route(v, ns->routes[i]);
	for (size_t i = 0; r == 0 && i < ns->n_sysctls; i++) {
		const char *p = ns->sysctls[i]->path;

		/* Written under /proc/sys/net: a path below it, nowhere else. */
		if (!p[0] || p[0] == '/' || strstr(p, ".."))
			r = bad(v, "NetNs.sysctls[%zu]: path \"%.60s\"", i, p);
	}
	return r;
}

/* Every netns-ID.img of the directory. */
static int check_netns_images(struct v *v)
{
	int dfd = fcntl(crf_imgdir_fd(v->dir), F_DUPFD_CLOEXEC, 0);
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (dfd < 0)
		return crf_error_errno(errno, "%s", crf_imgdir_path(v->dir));
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return crf_error_errno(errno, "%s", crf_imgdir_path(v->dir));
	}
	while (r >= 0 && (de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n > 10 && !strncmp(de->d_name, "netns-", 6) &&
		    !strcmp(de->d_name + n - 4, ".img"))
			r = each_record(v, de->d_name, &crf__net__net_ns__descriptor, check_netns);
	}
	closedir(d);
	return r;
}

int net_validate(struct crf_imgdir *dir)
{
	struct v v = {.dir = dir};
	int r;

	r = each_record(&v, UNIX_IMG, &crf__net__unix_sk__descriptor, add_ino);
	if (r >= 0 && v.n_inos) {
		qsort(v.inos, v.n_inos, sizeof(*v.inos), cmp_u64);
		for (size_t i = 1; r >= 0 && i < v.n_inos; i++)
			if (v.inos[i - 1] == v.inos[i])
				r = crf_error_errno(EBADMSG, "%s/%s: socket %llu listed twice",
						    crf_imgdir_path(dir), UNIX_IMG,
						    (unsigned long long)v.inos[i]);
	}
	if (r >= 0 && v.n_inos) {
		r = each_record(&v, UNIX_IMG, &crf__net__unix_sk__descriptor, check_unix);
	}
	if (r >= 0)
		r = each_record(&v, "netlock.img", &crf__net__net_lock__descriptor, check_lock);
	if (r >= 0)
		r = check_netns_images(&v);
	free(v.inos);
	return r < 0 ? r : 0;
}
