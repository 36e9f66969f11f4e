// SPDX-License-Identifier: GPL-2.0-only
/*
 * The multicast groups a UDP socket joined, with their source filters.
 *
 * No interface lists a socket's memberships; /proc/net/igmp and igmp6 list
 * the groups each interface of a namespace is in, and MCAST_MSFILTER asked
 * of a socket for one of them answers with its filter if the socket joined
 * it, EADDRNOTAVAIL if not (the groups the kernel joins itself, all-hosts
 * and the solicited-node ones, answer so).  So the dump asks the socket
 * about every group of its namespace; the restore joins each again after
 * the bind (MCAST_JOIN_GROUP on the interface index: indexes are restored
 * with the namespace, or must be the same host's) and sets its filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/sockios.h>

#include <crf/cleanup.h>

#include "inet.h"
#include "net.h"

/* The sources one filter may list here (the kernel's default limit is 10). */
#define MC_SOURCES_MAX 256
#define GF_SIZE(n)     (sizeof(struct group_filter) + (n) * sizeof(struct sockaddr_storage))

struct proc_open {
	const char *file;
	int err;
};

/* The file belongs to the namespace it was opened in. */
static int open_here(void *arg)
{
	struct proc_open *p = arg;
	char path[64];
	int f;

	snprintf(path, sizeof(path), "/proc/thread-self/net/%s", p->file);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		p->err = errno;
	return f < 0 ? -EIO : f;
}

/* Open /proc/net/@file of the net namespace socket @fd is in. */
static int open_proc_net(int fd, const char *file, const char *name)
{
	struct proc_open p = {file, 0};
	int f = net_in_sk_ns(fd, open_here, &p, name);

	/* Not entered, or the file opened: as it is; else the open's error. */
	if (f >= 0 || !p.err)
		return f;
	if (p.err == ENOENT)
		return -ENOENT; /* no IPv6 */
	return crf_error_errno(p.err, "%s: /proc/net/%s", name, file);
}

static int add_group(Crf__Net__InetSk *sk, uint32_t ifindex, const unsigned char *g, size_t len,
		     const struct group_filter *gf)
{
	Crf__Net__McastGroup **v, *m;

	v = realloc(sk->mcast, (sk->n_mcast + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	sk->mcast = v;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	crf__net__mcast_group__init(m);
	v[sk->n_mcast++] = m;
	m->ifindex = ifindex;
	m->fmode = gf->gf_fmode;
	m->group.data = malloc(len);
	m->sources = calloc(gf->gf_numsrc ? gf->gf_numsrc : 1, sizeof(*m->sources));
	if (!m->group.data || !m->sources)
		return -ENOMEM;
	memcpy(m->group.data, g, len);
	m->group.len = len;
	for (uint32_t i = 0; i < gf->gf_numsrc; i++) {
		const struct sockaddr_storage *ss = &gf->gf_slist[i];
		const void *a =
			ss->ss_family == AF_INET
				? (const void *)&((const struct sockaddr_in *)ss)->sin_addr
				: (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr;
		size_t n = ss->ss_family == AF_INET ? 4 : 16;

		m->sources[i].data = malloc(n);
		if (!m->sources[i].data)
			return -ENOMEM;
		memcpy(m->sources[i].data, a, n);
		m->sources[i].len = n;
		m->n_sources++;
	}
	return 0;
}

static void group_sa(struct sockaddr_storage *ss, const unsigned char *g, size_t len)
{
	memset(ss, 0, sizeof(*ss));
	if (len == 4) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, g, 4);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, g, 16);
	}
}

/* Ask socket @fd whether it joined group @g on interface @ifindex; save it if so. */
static int probe(int fd, Crf__Net__InetSk *sk, uint32_t ifindex, const unsigned char *g, size_t len,
		 const char *name)
{
	_cleanup_free_ struct group_filter *gf = calloc(1, GF_SIZE(MC_SOURCES_MAX));
	socklen_t sl = (socklen_t)GF_SIZE(MC_SOURCES_MAX);
	int level = len == 4 ? IPPROTO_IP : IPPROTO_IPV6;
	char ifname[IF_NAMESIZE] = "?";

	if (!gf)
		return -ENOMEM;
	/* An IPv6 group has no IPv4 socket (an IPv6 one may join IPv4 groups). */
	if (len == 16 && sk->family != AF_INET6)
		return 0;
	gf->gf_interface = ifindex;
	group_sa(&gf->gf_group, g, len);
	gf->gf_numsrc = MC_SOURCES_MAX;
	if (getsockopt(fd, level, MCAST_MSFILTER, gf, &sl)) {
		if (errno == EADDRNOTAVAIL || errno == EINVAL)
			return 0;
		return crf_error_errno(errno, "%s: MCAST_MSFILTER", name);
	}
	if (gf->gf_numsrc > MC_SOURCES_MAX)
		return crf_error_errno(E2BIG,
				       "%s: a multicast source filter of %u sources on %s, more "
				       "than the %u crf saves",
				       name, gf->gf_numsrc, if_indextoname(ifindex, ifname),
				       MC_SOURCES_MAX);
	return add_group(sk, ifindex, g, len, gf);
}

static int hex_bytes(const char *s, unsigned char *out, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned int b;

		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return -EINVAL;
		out[i] = (unsigned char)b;
	}
	return 0;
}

/* /proc/net/igmp: an interface's line "IDX\tNAME: ...", then "\t\t\t\tGROUP ..." lines. */
static int scan_igmp(int fd, Crf__Net__InetSk *sk, FILE *f, const char *name)
{
	char line[256];
	uint32_t ifindex = 0;
	int r = 0;

	while (r >= 0 && fgets(line, sizeof(line), f)) {
		unsigned int v;

		if (line[0] >= '0' && line[0] <= '9')
			ifindex = (uint32_t)strtoul(line, NULL, 10);
		else if (line[0] == '\t' && ifindex && sscanf(line, " %8x", &v) == 1)
			/* The group as the kernel holds it (network order), printed as a word. */
			r = probe(fd, sk, ifindex, (const unsigned char *)&v, 4, name);
	}
	return r;
}

/* /proc/net/igmp6: "IDX NAME GROUP(32 hex) USERS FLAGS TIMER". */
static int scan_igmp6(int fd, Crf__Net__InetSk *sk, FILE *f, const char *name)
{
	char line[256], dev[IF_NAMESIZE + 1], hex[33];
	unsigned char g[16];
	unsigned int ifindex;
	int r = 0;

	while (r >= 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %16s %32s", &ifindex, dev, hex) == 3 && strlen(hex) == 32 &&
		    !hex_bytes(hex, g, 16))
			r = probe(fd, sk, ifindex, g, 16, name);
	return r;
}

int udp_mcast_dump(int fd, Crf__Net__InetSk *sk, const char *name)
{
	static const char *const files[] = {"igmp", "igmp6"};
	int r = 0;

	for (int i = 0; r >= 0 && i < 2; i++) {
		int pf = open_proc_net(fd, files[i], name);
		FILE *f;

		if (pf == -ENOENT)
			continue;
		if (pf < 0)
			return pf;
		f = fdopen(pf, "r");
		if (!f) {
			close(pf);
			return crf_error_errno(errno, "%s: /proc/net/%s", name, files[i]);
		}
		r = i ? scan_igmp6(fd, sk, f, name) : scan_igmp(fd, sk, f, name);
		fclose(f);
	}
	return r == -ENOMEM ? crf_error_errno(ENOMEM, "%s: multicast groups", name) : r;
}

int udp_mcast_restore(int fd, const Crf__Net__InetSk *sk, const char *name)
{
	for (size_t i = 0; i < sk->n_mcast; i++) {
		const Crf__Net__McastGroup *m = sk->mcast[i];
		size_t len = m->group.len;
		int level = len == 4 ? IPPROTO_IP : IPPROTO_IPV6;
		struct group_req req = {.gr_interface = m->ifindex};
		_cleanup_free_ struct group_filter *gf = NULL;
		char ifname[IF_NAMESIZE] = "?";

		if ((len != 4 && len != 16) || m->n_sources > MC_SOURCES_MAX)
			return crf_error_errno(EBADMSG, "%s: a multicast group in the image", name);
		group_sa(&req.gr_group, m->group.data, len);
		if (setsockopt(fd, level, MCAST_JOIN_GROUP, &req, sizeof(req)))
			return crf_error_errno(
				errno, "%s: joining a multicast group on interface %u (%s)", name,
				m->ifindex, if_indextoname(m->ifindex, ifname));
		/* A join is "exclude nothing": only another filter needs setting. */
		if (m->fmode == MCAST_EXCLUDE && !m->n_sources)
			continue;
		gf = calloc(1, GF_SIZE(m->n_sources));
		if (!gf)
			return -ENOMEM;
		gf->gf_interface = m->ifindex;
		gf->gf_group = req.gr_group;
		gf->gf_fmode = m->fmode;
		gf->gf_numsrc = (uint32_t)m->n_sources;
		for (size_t s = 0; s < m->n_sources; s++) {
			if (m->sources[s].len != len)
				return crf_error_errno(EBADMSG,
						       "%s: a multicast source in the image", name);
			group_sa(&gf->gf_slist[s], m->sources[s].data, len);
		}
		if (setsockopt(fd, level, MCAST_MSFILTER, gf, (socklen_t)GF_SIZE(m->n_sources)))
			return crf_error_errno(errno, "%s: a multicast source filter", name);
	}
	return 0;
}
