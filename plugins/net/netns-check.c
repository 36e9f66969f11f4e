// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a network namespace may hold that the dump refuses, by name, and its
 * nftables ruleset.  All of it runs in the namespace (the calling thread
 * is in it, and so is a child it forks).
 *
 * Policy routing rules are not restored: the namespace must have a fresh
 * namespace's (the dump makes one to compare).  Nor are neighbour entries:
 * the kernel's own come back with the traffic, one added by hand is
 * refused (netns-neigh.c), and so is a proxy entry.  Nor are tc qdiscs: a
 * link must have the kernel's default (noqueue, noop while down) and no ingress or clsact one
 * (their filters hang below them).  iptables-legacy tables are
 * refused: their rules are in a binary format of x_tables that only
 * iptables-save reads.  A TCP connection no fd holds is refused (below).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/inet_diag.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/tcp.h>

#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/rule.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "netns.h"

#define RULES_MAX 4096

/*
 * The rules as the kernel sends them (each RTM_NEWRULE's body, after its
 * length), which is what is compared: libnl's text leaves attributes out
 * (uidrange...).  The text is for the message.
 */
struct rules {
	char text[RULES_MAX];
	size_t len;
	unsigned char raw[RULES_MAX];
	size_t raw_len;
	bool over;
};

static void rule_cb(struct nl_object *o, void *arg)
{
	struct rules *rs = arg;
	char line[256];

	nl_object_dump_buf(o, line, sizeof(line));
	if (rs->len + strlen(line) + 2 < sizeof(rs->text))
		rs->len += (size_t)snprintf(rs->text + rs->len, sizeof(rs->text) - rs->len, "%s\n",
					    line);
}

static int raw_rules(struct rules *rs)
{
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct {
		struct nlmsghdr h;
		struct rtgenmsg g;
	} req = {
		.h = {.nlmsg_len = sizeof(req),
		      .nlmsg_type = RTM_GETRULE,
		      .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
		.g = {.rtgen_family = AF_UNSPEC},
	};
	long b[2048];
	ssize_t n;

	if (fd < 0 || send(fd, &req, sizeof(req), 0) < 0)
		return -errno;
	while ((n = recv(fd, b, sizeof(b), 0)) > 0) {
		for (struct nlmsghdr *h = (void *)b; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			uint32_t len = h->nlmsg_len - NLMSG_HDRLEN;

			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -EIO;
			if (h->nlmsg_type != RTM_NEWRULE)
				continue;
			if (rs->raw_len + sizeof(len) + len > sizeof(rs->raw)) {
				rs->over = true;
				continue;
			}
			memcpy(rs->raw + rs->raw_len, &len, sizeof(len));
			memcpy(rs->raw + rs->raw_len + sizeof(len), NLMSG_DATA(h), len);
			rs->raw_len += sizeof(len) + len;
		}
	}
	return n < 0 ? -errno : 0;
}

static int list_rules(struct nl_sock *sk, struct rules *rs)
{
	struct nl_cache *c = NULL;
	int e = rtnl_rule_alloc_cache(sk, AF_UNSPEC, &c);

	if (e < 0)
		return -EIO;
	rs->len = rs->raw_len = 0;
	rs->text[0] = '\0';
	rs->over = false;
	nl_cache_foreach(c, rule_cb, rs);
	nl_cache_free(c);
	return raw_rules(rs);
}

/* A fresh namespace's rules: unshare one for this thread, then go back into @back. */
static int fresh_rules(struct rules *rs, int back, const char *what)
{
	struct nl_sock *sk = NULL;
	int r;

	if (unshare(CLONE_NEWNET) < 0)
		return crf_error_errno(errno, "%s: a fresh net namespace to compare with", what);
	r = common_rtnl_open(&sk, what);
	if (r >= 0)
		r = list_rules(sk, rs);
	if (sk)
		nl_socket_free(sk);
	if (setns(back, CLONE_NEWNET) < 0)
		return crf_error_errno(errno, "%s: entering it again", what);
	return r;
}

int netns_check_rules(struct nl_sock *sk, const char *what)
{
	_cleanup_close_ int back = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	_cleanup_free_ struct rules *have = calloc(1, sizeof(*have));
	_cleanup_free_ struct rules *fresh = calloc(1, sizeof(*fresh));
	int r;

	if (back < 0)
		return crf_error_errno(errno, "%s: /proc/thread-self/ns/net", what);
	if (!have || !fresh)
		return crf_error_errno(ENOMEM, "%s: rules", what);
	r = list_rules(sk, have);
	if (r >= 0)
		r = fresh_rules(fresh, back, what);
	if (r < 0)
		return crf_error_errno(-r, "%s: listing its routing rules", what);
	if (have->over || have->raw_len != fresh->raw_len ||
	    memcmp(have->raw, fresh->raw, have->raw_len))
		return crf_error_errno(ENOTSUP,
				       "%s: its routing rules are not a fresh namespace's, and "
				       "crf does not restore rules:\n%s",
				       what, have->text);
	return 0;
}

struct neigh_walk {
	struct nl_cache *links;
	const char *what;
	int r;
};

/* A proxy neighbour entry (ip neigh add proxy ...): the cache above does not list them. */
static int check_proxy(struct nl_cache *links, const char *what)
{
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct {
		struct nlmsghdr h;
		struct ndmsg n;
	} req = {
		.h = {.nlmsg_len = sizeof(req),
		      .nlmsg_type = RTM_GETNEIGH,
		      .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
		.n = {.ndm_family = AF_UNSPEC, .ndm_flags = NTF_PROXY},
	};
	long b[2048];
	ssize_t n;

	if (fd < 0 || send(fd, &req, sizeof(req), 0) < 0)
		return crf_error_errno(errno, "%s: listing proxy neighbour entries", what);
	while ((n = recv(fd, b, sizeof(b), 0)) > 0) {
		for (struct nlmsghdr *h = (void *)b; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			struct ndmsg *m = NLMSG_DATA(h);
			struct rtattr *a = (struct rtattr *)((char *)m + NLMSG_ALIGN(sizeof(*m)));
			int len = (int)h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
			char dst[INET6_ADDRSTRLEN] = "?", dev[IF_NAMESIZE] = "?";

			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return crf_error_errno(EIO, "%s: listing proxy neighbour entries",
						       what);
			if (h->nlmsg_type != RTM_NEWNEIGH || !(m->ndm_flags & NTF_PROXY))
				continue;
			for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
				if (a->rta_type == NDA_DST)
					inet_ntop(m->ndm_family, RTA_DATA(a), dst, sizeof(dst));
			rtnl_link_i2name(links, m->ndm_ifindex, dev, sizeof(dev));
			return crf_error_errno(ENOTSUP,
					       "%s: proxy neighbour entry %s dev %s: not restored",
					       what, dst, dev);
		}
	}
	return n < 0 ? crf_error_errno(errno, "%s: listing proxy neighbour entries", what) : 0;
}

int netns_check_neigh(struct nl_sock *sk, struct nl_cache *links, const char *what)
{
	int r = netns_check_neigh_entries(sk, links, what);

	return r < 0 ? r : check_proxy(links, what);
}

static void qdisc_cb(struct nl_object *o, void *arg)
{
	struct rtnl_tc *tc = TC_CAST(o);
	struct neigh_walk *w = arg;
	const char *kind = rtnl_tc_get_kind(tc);
	char dev[IF_NAMESIZE] = "?";

	if (w->r < 0 || (kind && (!strcmp(kind, "noqueue") || !strcmp(kind, "noop"))))
		return;
	rtnl_link_i2name(w->links, rtnl_tc_get_ifindex(tc), dev, sizeof(dev));
	w->r = crf_error_errno(ENOTSUP,
			       "%s: link '%s' has a tc qdisc %s (handle %x:): tc qdiscs and "
			       "filters are not restored",
			       w->what, dev, kind ? kind : "?", rtnl_tc_get_handle(tc) >> 16);
}

int netns_check_qdisc(struct nl_sock *sk, struct nl_cache *links, const char *what)
{
	struct neigh_walk w = {.links = links, .what = what};
	struct nl_cache *c = NULL;
	int e = rtnl_qdisc_alloc_cache(sk, &c);

	if (e < 0)
		return crf_error_errno(EIO, "%s: listing tc qdiscs: %s", what, nl_geterror(e));
	nl_cache_foreach(c, qdisc_cb, &w);
	nl_cache_free(c);
	return w.r;
}

int netns_check_legacy(pid_t pid, const char *what)
{
	static const char *const files[] = {"ip_tables_names", "ip6_tables_names",
					    "arp_tables_names"};
	char path[64], names[256];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		_cleanup_close_ int fd = -1;
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, files[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0 || (n = read(fd, names, sizeof(names) - 1)) < 0)
			return crf_error_errno(errno, "%s: %s", what, path);
		names[n] = '\0';
		for (char *p = names; (p = strchr(p, '\n'));)
			*p = ' ';
		if (n)
			return crf_error_errno(
				ENOTSUP,
				"%s: iptables-legacy tables are in use (%s: %s): not "
				"restored (nftables rules are)",
				what, path, names);
	}
	return 0;
}

/*
 * TCP connections are the sockets' (inet.c, tcp.c), dumped through the fds
 * that hold them, with the network lock taken in the namespace too
 * (netlock.c).  One no fd holds (inode 0) is refused: its program closed it
 * (FIN-WAIT, LAST-ACK, CLOSING), and it would be gone after the restore.
 * Not those waiting in a listener's queue (the listener's dump refuses
 * them, or --skip-in-flight leaves them out), nor TIME-WAIT and half-open
 * ones (request sockets), which no process holds.
 */
static const char *const tcp_states[] = {
	[TCP_ESTABLISHED] = "established", [TCP_FIN_WAIT1] = "fin-wait-1",
	[TCP_FIN_WAIT2] = "fin-wait-2",	   [TCP_CLOSE_WAIT] = "close-wait",
	[TCP_LAST_ACK] = "last-ack",	   [TCP_CLOSING] = "closing",
	[TCP_SYN_SENT] = "syn-sent",
};

static int tcp_orphan(int family, char *buf, size_t len, const char *what)
{
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req = {
		.h = {.nlmsg_len = sizeof(req),
		      .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		      .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
		.r = {.sdiag_family = (uint8_t)family,
		      .sdiag_protocol = IPPROTO_TCP,
		      .idiag_states = ~((1u << TCP_CLOSE) | (1u << TCP_TIME_WAIT) |
					(1u << TCP_SYN_RECV) | (1u << 12 /* NEW_SYN_RECV */))},
	};
	uint16_t listen_ports[64];
	size_t n_listen = 0;
	long b[2048];
	ssize_t n;
	int found = 0;

	if (fd < 0 || send(fd, &req, sizeof(req), 0) < 0)
		return crf_error_errno(errno, "%s: inet_diag", what);
	while ((n = recv(fd, b, sizeof(b), 0)) > 0) {
		for (struct nlmsghdr *h = (void *)b; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			struct inet_diag_msg *m = NLMSG_DATA(h);
			char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
			bool queued = false;

			if (h->nlmsg_type == NLMSG_DONE)
				return found;
			if (h->nlmsg_type == NLMSG_ERROR)
				return crf_error_errno(EIO, "%s: inet_diag", what);
			/* The dump lists a namespace's listeners before their connections. */
			if (m->idiag_state == TCP_LISTEN) {
				if (n_listen < sizeof(listen_ports) / sizeof(listen_ports[0]))
					listen_ports[n_listen++] = m->id.idiag_sport;
				continue;
			}
			for (size_t i = 0; i < n_listen; i++)
				queued |= listen_ports[i] == m->id.idiag_sport;
			if (m->idiag_inode || queued || found)
				continue;
			inet_ntop(family, m->id.idiag_src, s, sizeof(s));
			inet_ntop(family, m->id.idiag_dst, d, sizeof(d));
			snprintf(buf, len, "%s port %u -> %s port %u (%s)", s,
				 ntohs(m->id.idiag_sport), d, ntohs(m->id.idiag_dport),
				 m->idiag_state < 12 && tcp_states[m->idiag_state]
					 ? tcp_states[m->idiag_state]
					 : "?");
			found = 1;
		}
	}
	return n < 0 ? crf_error_errno(errno, "%s: inet_diag", what) : found;
}

int netns_check_tcp(const char *what)
{
	static const int families[] = {AF_INET, AF_INET6};
	char conn[160];
	int r = 0;

	for (size_t i = 0; r == 0 && i < 2; i++)
		r = tcp_orphan(families[i], conn, sizeof(conn), what);
	if (r > 0)
		return crf_error_errno(ENOTSUP,
				       "%s: TCP connection %s: no fd holds it (its program closed "
				       "it), so it is not restored",
				       what, conn);
	return r;
}

/*
 * Run nft with @arg ("list ruleset", or "-f -" reading @in) in a child, in
 * the caller's namespace; its output in *@out (malloc'd) when @out.
 */
static int run_nft(const char *arg, const char *in, char **out, const char *what)
{
	_cleanup_close_ int input = memfd_create("crf-nft", MFD_CLOEXEC);
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	int p[2], status;
	ssize_t n;
	pid_t pid;

	if (input < 0 || !buf || (in && write(input, in, strlen(in)) != (ssize_t)strlen(in)) ||
	    lseek(input, 0, SEEK_SET) < 0 || pipe2(p, O_CLOEXEC) < 0) {
		free(buf);
		return crf_error_errno(errno ? errno : ENOMEM, "%s: nft", what);
	}
	pid = fork();
	if (pid == 0) {
		dup2(input, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		if (in)
			execlp("nft", "nft", "-f", "-", (char *)NULL);
		else
			execlp("nft", "nft", "list", "ruleset", (char *)NULL);
		dprintf(2, "cannot run nft (nftables): %s", strerror(errno));
		_exit(127);
	}
	close(p[1]);
	while (pid > 0 && (n = read(p[0], buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 1024) {
			char *g = realloc(buf, cap * 2);

			if (!g)
				break;
			buf = g;
			cap *= 2;
		}
	}
	close(p[0]);
	buf[len] = '\0';
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		crf_error_errno(EIO, "%s: nft %s failed: %s", what, arg, buf);
		free(buf);
		return -EIO;
	}
	if (out)
		*out = buf;
	else
		free(buf);
	return 0;
}

int netns_nft_dump(Crf__Net__NetNs *ns, const char *what)
{
	char *text = NULL;
	int r = run_nft("list ruleset", NULL, &text, what);

	if (r < 0)
		return r;
	if (!text[strspn(text, " \t\n")]) {
		free(text);
		return 0;
	}
	ns->nft_ruleset = text;
	return 0;
}

int netns_nft_restore(const Crf__Net__NetNs *ns, const char *what)
{
	_cleanup_free_ char *back = NULL;
	int r;

	if (!ns->nft_ruleset)
		return 0;
	r = run_nft("-f -", ns->nft_ruleset, NULL, what);
	if (r >= 0)
		r = run_nft("list ruleset", NULL, &back, what);
	if (r >= 0 && strcmp(back, ns->nft_ruleset))
		r = crf_error_errno(EIO,
				    "%s: its nftables ruleset lists differently after the "
				    "restore:\n%s\nnot:\n%s",
				    what, back, ns->nft_ruleset);
	return r;
}
