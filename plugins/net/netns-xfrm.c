// SPDX-License-Identifier: GPL-2.0-only
/*
 * IPsec (xfrm) state of a network namespace, which crf does not restore:
 * the dump is refused, naming it, where the namespace has a security
 * association (ip xfrm state), a policy (ip xfrm policy), a default
 * policy other than a fresh namespace's accept (ip xfrm policy
 * setdefault), or policy hash thresholds other than its 32/32 and 128/128
 * (ip xfrm policy set hthresh4/6).  Read through NETLINK_XFRM, in the
 * namespace (the calling thread is in it).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/xfrm.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "netns.h"

#define REFUSED "crf does not restore IPsec (xfrm) state"

static void addr_text(int family, const xfrm_address_t *a, char *buf, size_t len)
{
	if (!inet_ntop(family, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* What an entry of the dump says, or "" (@buf). */
static void describe(const struct nlmsghdr *h, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	static const char *const dirs[] = {"in", "out", "fwd"};

	*buf = '\0';
	if (h->nlmsg_type == XFRM_MSG_NEWSA &&
	    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct xfrm_usersa_info))) {
		const struct xfrm_usersa_info *sa = NLMSG_DATA(h);

		addr_text(sa->family, &sa->saddr, s, sizeof(s));
		addr_text(sa->family, &sa->id.daddr, d, sizeof(d));
		snprintf(buf, len, "xfrm state src %s dst %s proto %u spi %#x", s, d, sa->id.proto,
			 ntohl(sa->id.spi));
	} else if (h->nlmsg_type == XFRM_MSG_NEWPOLICY &&
		   h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct xfrm_userpolicy_info))) {
		const struct xfrm_userpolicy_info *p = NLMSG_DATA(h);

		addr_text(p->sel.family, &p->sel.saddr, s, sizeof(s));
		addr_text(p->sel.family, &p->sel.daddr, d, sizeof(d));
		snprintf(buf, len, "xfrm policy src %s/%u dst %s/%u dir %s", s, p->sel.prefixlen_s,
			 d, p->sel.prefixlen_d, p->dir < 3 ? dirs[p->dir] : "?");
	}
}

/* Dump @type (XFRM_MSG_GETSA, XFRM_MSG_GETPOLICY): the first entry's text in @buf, or "". */
static int first_of(int fd, int type, char *buf, size_t len, const char *what)
{
	struct nlmsghdr req = {.nlmsg_len = NLMSG_LENGTH(0),
			       .nlmsg_type = (uint16_t)type,
			       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP};
	long b[8192];
	ssize_t n;

	*buf = '\0';
	if (send(fd, &req, req.nlmsg_len, 0) < 0)
		return crf_error_errno(errno, "%s: listing xfrm state", what);
	while ((n = recv(fd, b, sizeof(b), 0)) > 0) {
		for (struct nlmsghdr *h = (void *)b; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return crf_error_errno(EIO, "%s: listing xfrm state", what);
			if (!*buf)
				describe(h, buf, len);
		}
	}
	return n < 0 ? crf_error_errno(errno, "%s: listing xfrm state", what) : 0;
}

/*
 * One answer to a request of @type with @payload: its payload in @out
 * (@len bytes at most), its length returned; 0 where this kernel does not
 * know the request.
 */
static int ask(int fd, int type, const void *payload, size_t plen, void *out, size_t len,
	       const char *what)
{
	struct {
		struct nlmsghdr h;
		char data[64];
	} req = {.h = {.nlmsg_len = (uint32_t)NLMSG_LENGTH(plen),
		       .nlmsg_type = (uint16_t)type,
		       .nlmsg_flags = NLM_F_REQUEST}};
	long b[1024];
	struct nlmsghdr *h = (void *)b;
	ssize_t n;

	memcpy(req.data, payload, plen);
	if (send(fd, &req, req.h.nlmsg_len, 0) < 0 || (n = recv(fd, b, sizeof(b), 0)) < 0)
		return crf_error_errno(errno, "%s: xfrm request %d", what, type);
	if (!NLMSG_OK(h, (size_t)n))
		return crf_error_errno(EIO, "%s: xfrm request %d: short answer", what, type);
	if (h->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(h);

		if (e->error == -EOPNOTSUPP || e->error == -EINVAL)
			return 0;
		return crf_error_errno(-e->error, "%s: xfrm request %d", what, type);
	}
	n = (ssize_t)h->nlmsg_len - NLMSG_LENGTH(0);
	if (n < 0)
		return crf_error_errno(EIO, "%s: xfrm request %d: short answer", what, type);
	n = (size_t)n < len ? n : (ssize_t)len;
	memcpy(out, NLMSG_DATA(h), (size_t)n);
	return (int)n;
}

static const char *def_text(uint8_t v)
{
	return v == XFRM_USERPOLICY_BLOCK ? "block" : v == XFRM_USERPOLICY_ACCEPT ? "accept" : "?";
}

static int check_defaults(int fd, const char *what)
{
	struct xfrm_userpolicy_default q = {0}, d = {0};
	int r = ask(fd, XFRM_MSG_GETDEFAULT, &q, sizeof(q), &d, sizeof(d), what);

	if (r < (int)sizeof(d))
		return r < 0 ? r : 0;
	if (d.in == XFRM_USERPOLICY_ACCEPT && d.fwd == XFRM_USERPOLICY_ACCEPT &&
	    d.out == XFRM_USERPOLICY_ACCEPT)
		return 0;
	return crf_error_errno(ENOTSUP,
			       "%s: its default xfrm policies are in %s fwd %s out %s, not a "
			       "fresh namespace's accept: " REFUSED,
			       what, def_text(d.in), def_text(d.fwd), def_text(d.out));
}

/* The hash thresholds, XFRMA_SPD_IPV4_HTHRESH and _IPV6_, after a u32 of flags. */
static int check_hthresh(int fd, const char *what)
{
	uint32_t flags = 0;
	long b[128] = {0};
	char *p = (char *)b + sizeof(uint32_t);
	int r = ask(fd, XFRM_MSG_GETSPDINFO, &flags, sizeof(flags), b, sizeof(b), what), len;

	if (r < (int)sizeof(uint32_t))
		return r < 0 ? r : 0;
	len = r - (int)sizeof(uint32_t);
	for (struct nlattr *a = (void *)p;
	     len >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) && a->nla_len <= len;
	     len -= NLA_ALIGN(a->nla_len), a = (void *)((char *)a + NLA_ALIGN(a->nla_len))) {
		const struct xfrmu_spdhthresh *t = (const void *)(a + 1);
		unsigned int want = a->nla_type == XFRMA_SPD_IPV4_HTHRESH ? 32 : 128;

		if ((a->nla_type != XFRMA_SPD_IPV4_HTHRESH &&
		     a->nla_type != XFRMA_SPD_IPV6_HTHRESH) ||
		    a->nla_len < sizeof(*a) + sizeof(*t))
			continue;
		if (t->lbits != want || t->rbits != want)
			return crf_error_errno(ENOTSUP,
					       "%s: its xfrm policy hash thresholds for IPv%d are "
					       "%u/%u, not a fresh namespace's %u/%u: " REFUSED,
					       what, want == 32 ? 4 : 6, t->lbits, t->rbits, want,
					       want);
	}
	return 0;
}

int netns_check_xfrm(const char *what)
{
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_XFRM);
	char first[256];
	int r;

	/* A kernel without xfrm has none of it. */
	if (fd < 0 && errno == EPROTONOSUPPORT)
		return 0;
	if (fd < 0)
		return crf_error_errno(errno, "%s: NETLINK_XFRM", what);
	r = first_of(fd, XFRM_MSG_GETSA, first, sizeof(first), what);
	if (r >= 0 && *first)
		return crf_error_errno(ENOTSUP, "%s: %s: " REFUSED, what, first);
	if (r >= 0)
		r = first_of(fd, XFRM_MSG_GETPOLICY, first, sizeof(first), what);
	if (r >= 0 && *first)
		return crf_error_errno(ENOTSUP, "%s: %s: " REFUSED, what, first);
	if (r >= 0)
		r = check_defaults(fd, what);
	if (r >= 0)
		r = check_hthresh(fd, what);
	return r;
}
