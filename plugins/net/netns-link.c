// SPDX-License-Identifier: GPL-2.0-only
/*
 * A link's attributes that the restore does not set: each must be what a
 * link of its kind made anew has, or the dump is refused, naming it.  The
 * restore gives a link its name, MTU, queue length, state and, a veth,
 * its MAC address, ifindex and numbers of queues; everything else
 * rtnetlink says of a link (GSO and GRO sizes, flags such as multicast or
 * noarp, alternative names, an XDP program, the link mode, proto_down,
 * the IPv6 token, ...) is compared, as the kernel sends it, with a fresh
 * namespace's lo and with a veth made there: a child unshares a
 * namespace, makes the veth and lists both.  A veth's peer, in crf's
 * namespace, is compared with the new veth too (its bridge is restored).  Left out: what changes by
 * itself (operational state, carrier and its counts, statistics), what
 * is checked elsewhere (master, qdisc, promiscuity through the flags),
 * what names the peer (IFLA_LINK, IFLA_LINK_NETNSID, the link info), and
 * the per-family configuration (IFLA_INET_CONF, IFLA_INET6_CONF, the
 * address generation mode: the sysctls, restored).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "netns.h"

#define DUMP_MAX (1u << 20)
/* Flags that the restore sets (up) or that follow from it. */
#define FLAGS_SET (IFF_UP | IFF_RUNNING | IFF_LOWER_UP | IFF_DORMANT)

/* Attributes not compared (above); IFLA_NUM_*_QUEUES only for a veth. */
static bool skipped(unsigned int type, bool veth)
{
	switch (type) {
	case IFLA_IFNAME:
	case IFLA_MTU:
	case IFLA_TXQLEN:
	case IFLA_ADDRESS:
	case IFLA_OPERSTATE:
	case IFLA_STATS:
	case IFLA_STATS64:
	case IFLA_MAP:
	case IFLA_QDISC:
	case IFLA_MASTER:
	case IFLA_LINK:
	case IFLA_LINK_NETNSID:
	case IFLA_LINKINFO:
	case IFLA_CARRIER:
	case IFLA_CARRIER_CHANGES:
	case IFLA_CARRIER_UP_COUNT:
	case IFLA_CARRIER_DOWN_COUNT:
	case IFLA_PROMISCUITY:
	case IFLA_ALLMULTI:
	case IFLA_EVENT:
	case IFLA_AF_SPEC:
		return true;
	case IFLA_NUM_TX_QUEUES:
	case IFLA_NUM_RX_QUEUES:
		return veth;
	default:
		return false;
	}
}

static const char *attr_name(unsigned int type)
{
	switch (type) {
	case IFLA_BROADCAST:
		return "broadcast address";
	case IFLA_GSO_MAX_SIZE:
		return "gso_max_size";
	case IFLA_GSO_MAX_SEGS:
		return "gso_max_segs";
	case IFLA_GRO_MAX_SIZE:
		return "gro_max_size";
	case IFLA_TSO_MAX_SIZE:
		return "tso_max_size";
	case IFLA_TSO_MAX_SEGS:
		return "tso_max_segs";
	case IFLA_PROP_LIST:
		return "alternative names";
	case IFLA_XDP:
		return "XDP program";
	case IFLA_LINKMODE:
		return "link mode";
	case IFLA_PROTO_DOWN:
		return "proto_down";
	case IFLA_GROUP:
		return "group";
	case IFLA_IFALIAS:
		return "alias";
	case IFLA_NUM_TX_QUEUES:
		return "number of TX queues";
	case IFLA_NUM_RX_QUEUES:
		return "number of RX queues";
	default:
		return NULL;
	}
}

struct dump {
	unsigned char *buf;
	size_t len, cap;
};

/* Every RTM_NEWLINK of the caller's namespace, one after another, into @d; 0 or -errno. */
static int list_links(struct dump *d)
{
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
	} req = {
		.h = {.nlmsg_len = sizeof(req),
		      .nlmsg_type = RTM_GETLINK,
		      .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
		.i = {.ifi_family = AF_UNSPEC},
	};
	long b[8192];
	ssize_t n;

	d->len = 0;
	if (fd < 0 || send(fd, &req, sizeof(req), 0) < 0)
		return -errno;
	while ((n = recv(fd, b, sizeof(b), 0)) > 0) {
		for (struct nlmsghdr *h = (void *)b; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -EIO;
			if (h->nlmsg_type != RTM_NEWLINK ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
				continue;
			if (d->len + NLMSG_ALIGN(h->nlmsg_len) > d->cap)
				return -E2BIG;
			memcpy(d->buf + d->len, h, h->nlmsg_len);
			d->len += NLMSG_ALIGN(h->nlmsg_len);
		}
	}
	return n < 0 ? -errno : 0;
}

/* In a child: a fresh namespace with a veth pair, its links into @d (shared). */
static int list_fresh(struct dump *d, const char *what)
{
	int *rc = (int *)(d->buf + d->cap), status;
	pid_t pid;

	*rc = -EIO;
	pid = fork();
	if (pid < 0)
		return crf_error_errno(errno, "%s: fork", what);
	if (pid == 0) {
		struct nl_sock *sk = nl_socket_alloc();

		if (unshare(CLONE_NEWNET) < 0 || !sk || nl_connect(sk, NETLINK_ROUTE) < 0 ||
		    rtnl_link_veth_add(sk, "crfref0", "crfref1", getpid()) < 0)
			_exit(1);
		*rc = list_links(d);
		*(size_t *)(d->buf + d->cap + sizeof(int) * 2) = d->len;
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return crf_error_errno(EIO, "%s: a veth in a fresh namespace, to compare with",
				       what);
	if (*rc < 0)
		return crf_error_errno(-*rc, "%s: listing a fresh namespace's links", what);
	d->len = *(size_t *)(d->buf + d->cap + sizeof(int) * 2);
	return 0;
}

struct link_msg {
	const struct nlmsghdr *h;
	const struct ifinfomsg *ifi;
	const struct rtattr *tb[IFLA_MAX + 64];
	const struct rtattr *token; /* IFLA_AF_SPEC / AF_INET6 / IFLA_INET6_TOKEN */
	const char *name, *kind;
};

#define TB_MAX (sizeof(((struct link_msg *)0)->tb) / sizeof(((struct link_msg *)0)->tb[0]))

static const struct rtattr *nested(const struct rtattr *a, unsigned int type)
{
	int len = (int)RTA_PAYLOAD(a);

	for (const struct rtattr *n = RTA_DATA(a); RTA_OK(n, len); n = RTA_NEXT(n, len))
		if ((n->rta_type & NLA_TYPE_MASK) == type)
			return n;
	return NULL;
}

static void parse(const struct nlmsghdr *h, struct link_msg *m)
{
	const struct rtattr *a = IFLA_RTA(NLMSG_DATA(h)), *info, *kind, *inet6;
	int len = (int)IFLA_PAYLOAD(h);

	memset(m, 0, sizeof(*m));
	m->h = h;
	m->ifi = NLMSG_DATA(h);
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
		if ((a->rta_type & NLA_TYPE_MASK) < TB_MAX)
			m->tb[a->rta_type & NLA_TYPE_MASK] = a;
	m->name = m->tb[IFLA_IFNAME] ? RTA_DATA(m->tb[IFLA_IFNAME]) : "?";
	info = m->tb[IFLA_LINKINFO];
	kind = info ? nested(info, IFLA_INFO_KIND) : NULL;
	m->kind = kind ? RTA_DATA(kind) : (m->ifi->ifi_flags & IFF_LOOPBACK) ? "loopback" : "";
	inet6 = m->tb[IFLA_AF_SPEC] ? nested(m->tb[IFLA_AF_SPEC], AF_INET6) : NULL;
	m->token = inet6 ? nested(inet6, IFLA_INET6_TOKEN) : NULL;
}

static void value_text(const struct rtattr *a, char *buf, size_t len)
{
	size_t n = a ? RTA_PAYLOAD(a) : 0, at = 0;
	const unsigned char *p = a ? RTA_DATA(a) : NULL;
	int left = (int)n;

	if (!a) {
		snprintf(buf, len, "none");
	} else if ((a->rta_type & NLA_TYPE_MASK) == IFLA_PROP_LIST) {
		*buf = '\0';
		for (const struct rtattr *s = RTA_DATA(a); RTA_OK(s, left); s = RTA_NEXT(s, left))
			if (s->rta_type == IFLA_ALT_IFNAME && at < len)
				at += (size_t)snprintf(buf + at, len - at, "%s'%.*s'",
						       at ? " " : "", (int)RTA_PAYLOAD(s),
						       (const char *)RTA_DATA(s));
	} else if (n == 4) {
		uint32_t v;

		memcpy(&v, p, 4);
		snprintf(buf, len, "%u", v);
	} else if (n == 1) {
		snprintf(buf, len, "%u", p[0]);
	} else {
		for (size_t i = 0; i < n && at + 3 < len; i++)
			at += (size_t)snprintf(buf + at, len - at, "%02x", p[i]);
		if (!n)
			snprintf(buf, len, "(empty)");
	}
}

static bool same(const struct rtattr *a, const struct rtattr *b)
{
	if (!a || !b)
		return a == b;
	return RTA_PAYLOAD(a) == RTA_PAYLOAD(b) &&
	       !memcmp(RTA_DATA(a), RTA_DATA(b), RTA_PAYLOAD(a));
}

static int differs(const struct link_msg *l, const struct link_msg *ref, const char *attr,
		   const struct rtattr *have, const struct rtattr *fresh, const char *what)
{
	char a[128], b[128];

	value_text(have, a, sizeof(a));
	value_text(fresh, b, sizeof(b));
	return crf_error_errno(ENOTSUP,
			       "%s: link '%s': %s %s, where a new %s has %s: crf does not "
			       "restore it",
			       what, l->name, attr, a, ref->kind, b);
}

static int compare(const struct link_msg *l, const struct link_msg *ref, const char *what)
{
	bool veth = !strcmp(l->kind, "veth");
	unsigned int fl = l->ifi->ifi_flags & ~FLAGS_SET, fr = ref->ifi->ifi_flags & ~FLAGS_SET;
	char name[32];

	if (fl != fr)
		return crf_error_errno(ENOTSUP,
				       "%s: link '%s': its flags %#x are not a new %s's %#x: crf "
				       "does not restore them",
				       what, l->name, fl, ref->kind, fr);
	for (unsigned int t = 1; t < TB_MAX; t++) {
		if (skipped(t, veth) || same(l->tb[t], ref->tb[t]))
			continue;
		snprintf(name, sizeof(name), "attribute %u", t);
		return differs(l, ref, attr_name(t) ? attr_name(t) : name, l->tb[t], ref->tb[t],
			       what);
	}
	if (!same(l->token, ref->token))
		return differs(l, ref, "IPv6 token", l->token, ref->token, what);
	return 0;
}

static const struct nlmsghdr *find(const struct dump *d, const char *kind, struct link_msg *m)
{
	for (size_t at = 0; at < d->len;) {
		const struct nlmsghdr *h = (const void *)(d->buf + at);

		parse(h, m);
		if (!strcmp(m->kind, kind))
			return h;
		at += NLMSG_ALIGN(h->nlmsg_len);
	}
	return NULL;
}

static int check_all(struct dump *have, struct dump *fresh, const char *what)
{
	_cleanup_free_ struct link_msg *l = malloc(sizeof(*l)), *ref = malloc(sizeof(*ref));
	int r = 0;

	if (!l || !ref)
		return crf_error_errno(ENOMEM, "%s: links", what);
	for (size_t at = 0; r >= 0 && at < have->len;) {
		const struct nlmsghdr *h = (const void *)(have->buf + at);

		parse(h, l);
		at += NLMSG_ALIGN(h->nlmsg_len);
		/* Another kind is refused by name (netns.c). */
		if (find(fresh, l->kind, ref))
			r = compare(l, ref, what);
	}
	return r;
}

/*
 * With @ns, the veths' peers, in crf's namespace (the caller is back in
 * it): each compared with a new veth, as the links inside are.
 */
static int check_peers(struct dump *have, struct dump *fresh, const Crf__Net__NetNs *ns,
		       const char *what)
{
	_cleanup_free_ struct link_msg *l = malloc(sizeof(*l)), *ref = malloc(sizeof(*ref));
	int r = 0;

	if (!l || !ref)
		return crf_error_errno(ENOMEM, "%s: links", what);
	if (!find(fresh, "veth", ref))
		return crf_error_errno(EIO, "%s: no veth in the fresh namespace", what);
	for (size_t i = 0; r >= 0 && i < ns->n_links; i++) {
		const Crf__Net__NsLink *ln = ns->links[i];

		if (!ln->peer || !ln->has_peer_ifindex)
			continue;
		for (size_t at = 0; at < have->len;) {
			const struct nlmsghdr *h = (const void *)(have->buf + at);

			parse(h, l);
			at += NLMSG_ALIGN(h->nlmsg_len);
			if (l->ifi->ifi_index == (int)ln->peer_ifindex) {
				r = compare(l, ref, what);
				break;
			}
		}
	}
	return r;
}

static int check(const Crf__Net__NetNs *ns, const char *what)
{
	size_t size = 2 * DUMP_MAX + 64;
	unsigned char *p =
		mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct dump have, fresh;
	int r;

	if (p == MAP_FAILED)
		return crf_error_errno(errno, "%s: links", what);
	have = (struct dump){.buf = p, .cap = DUMP_MAX};
	fresh = (struct dump){.buf = p + DUMP_MAX, .cap = DUMP_MAX};
	r = list_links(&have);
	if (r < 0)
		r = crf_error_errno(-r, "%s: listing links", what);
	if (r >= 0)
		r = list_fresh(&fresh, what);
	if (r >= 0)
		r = ns ? check_peers(&have, &fresh, ns, what) : check_all(&have, &fresh, what);
	munmap(p, size);
	return r;
}

int netns_check_link_attrs(const char *what)
{
	return check(NULL, what);
}

int netns_check_peer_attrs(const Crf__Net__NetNs *ns, const char *what)
{
	for (size_t i = 0; i < ns->n_links; i++)
		if (ns->links[i]->peer)
			return check(ns, what);
	return 0;
}
