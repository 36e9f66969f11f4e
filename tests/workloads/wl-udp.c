// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-udp: UDP sockets, IPv4 and IPv6, bound and connected, with datagrams
 * waiting in their receive queues (one of them empty, from two sources),
 * and common options set.
 *
 * Multicast: socket 0 joined 239.1.2.3 on lo, socket 2 joined 239.7.7.7
 * on lo with a source filter (include 127.0.0.1 only), socket 3 (IPv6)
 * joined ff15::1234 on lo.
 *
 * After the restore: each socket's addresses, options and O_NONBLOCK are
 * as they were; each queue gives exactly its datagrams, in order, with
 * their source addresses, then nothing; new datagrams pass; each socket is
 * in its groups with its filter, and in no other of them.
 *
 * wl-udp filters: classic BPF filters on two sockets, one locked, come back
 * as attached (see attach()); wl-udp filter: one on a socket with
 * datagrams waiting, refused.
 *
 * wl-udp outside: a sender outside the tree (a grandchild, reparented away)
 * sends numbered datagrams to a socket every millisecond throughout the
 * checkpoint; after it, the queue gives them from the first, each numbered
 * higher than the one before: some may be lost, none comes early (while
 * the dump or the restore queues the datagrams again).
 */
#include "wl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/filter.h>

#include "wl-inet.h"

#define N_SK 5

struct queued {
	int to;	  /* index of the receiving socket */
	int from; /* index of the sending socket */
	char data[1200];
	size_t len;
};

static struct wl_sk sk[N_SK];
static struct queued q[8];
static int n_q;

static int udp(int family, const char *addr)
{
	return wl_inet_socket(family, SOCK_DGRAM, addr);
}

static void queue(int from, int to, size_t len, char fill)
{
	struct queued *e = &q[n_q++];
	struct sockaddr_storage ss = sk[to].at;
	ssize_t n;

	e->from = from;
	e->to = to;
	e->len = len;
	for (size_t i = 0; i < len; i++)
		e->data[i] = (char)(fill + i % 23);
	n = sendto(sk[from].fd, e->data, len, 0, (struct sockaddr *)&ss, sk[to].at_len);
	if (n != (ssize_t)len)
		wl_fail("sendto: %s", strerror(errno));
}

static void check_queue(int i)
{
	struct sockaddr_storage from;
	socklen_t fl;
	char buf[2048];
	ssize_t n;

	for (int k = 0; k < n_q; k++) {
		if (q[k].to != i)
			continue;
		fl = sizeof(from);
		n = recvfrom(sk[i].fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from,
			     &fl);
		if (n < 0)
			wl_fail("socket %d: datagram %d missing: %s", i, k, strerror(errno));
		if ((size_t)n != q[k].len || memcmp(buf, q[k].data, q[k].len))
			wl_fail("socket %d: datagram %d: %zd bytes, wanted %zu, or other bytes", i,
				k, n, q[k].len);
		if (fl != sk[q[k].from].at_len || memcmp(&from, &sk[q[k].from].at, fl))
			wl_fail("socket %d: datagram %d came from another address", i, k);
	}
	n = recv(sk[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n >= 0 || errno != EAGAIN)
		wl_fail("socket %d: a datagram more than was queued (%zd)", i, n);
}

static struct sock_filter accept_all = BPF_STMT(BPF_RET | BPF_K, 0xffff);
static struct sock_filter drop_all = BPF_STMT(BPF_RET | BPF_K, 0);
static struct {
	int sk;
	struct sock_filter *insn;
	bool locked;
} filters[2];
static int n_filters;

/* A one-instruction filter on socket @i, locked if @lock. */
static void attach(int i, struct sock_filter *insn, bool lock)
{
	struct sock_fprog prog = {.len = 1, .filter = insn};

	if (setsockopt(sk[i].fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)))
		wl_fail("SO_ATTACH_FILTER: %s", strerror(errno));
	if (lock)
		wl_setint(sk[i].fd, SOL_SOCKET, SO_LOCK_FILTER, 1);
	filters[n_filters].sk = i;
	filters[n_filters].insn = insn;
	filters[n_filters++].locked = lock;
}

/* Each filter as attached, locked or not, and socket 4's dropping what comes. */
static void check_filters(void)
{
	struct sock_filter got[4];
	socklen_t len;
	char buf[8];
	int lock;

	for (int k = 0; k < n_filters; k++) {
		int fd = sk[filters[k].sk].fd;

		len = 4;
		if (getsockopt(fd, SOL_SOCKET, SO_GET_FILTER, got, &len) || len != 1 ||
		    memcmp(got, filters[k].insn, sizeof(got[0])))
			wl_fail("socket %d: its filter is not the one attached (%u instructions)",
				filters[k].sk, len);
		len = sizeof(lock);
		if (getsockopt(fd, SOL_SOCKET, SO_LOCK_FILTER, &lock, &len) ||
		    lock != filters[k].locked)
			wl_fail("socket %d: SO_LOCK_FILTER is %d", filters[k].sk, lock);
	}
	/* What socket 1's filter accepts arrives; socket 4's drops the same. */
	if (sendto(sk[0].fd, "pass", 4, 0, (struct sockaddr *)&sk[1].at, sk[1].at_len) != 4 ||
	    recv(sk[1].fd, buf, sizeof(buf), 0) != 4)
		wl_fail("socket 1: a datagram from socket 0 did not pass: %s", strerror(errno));
	if (sendto(sk[3].fd, "drop", 4, 0, (struct sockaddr *)&sk[4].at, sk[4].at_len) != 4)
		wl_fail("sendto socket 4: %s", strerror(errno));
	usleep(100000);
	if (recv(sk[4].fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		wl_fail("socket 4's filter let a datagram through");
	if (!setsockopt(sk[1].fd, SOL_SOCKET, SO_DETACH_FILTER, NULL, 0))
		wl_fail("socket 1's locked filter came off");
}

/* Datagrams the sender outside the tree sends, one a millisecond. */
#define OUTSIDE_N 2500

static _Noreturn void sender(const struct wl_sk *to, const char *done)
{
	int fd = udp(AF_INET, "127.0.0.1");
	FILE *f;

	for (uint32_t n = 0; n < OUTSIDE_N; n++) {
		sendto(fd, &n, sizeof(n), 0, (const struct sockaddr *)&to->at, to->at_len);
		usleep(1000);
	}
	f = fopen(done, "we");
	if (f)
		fclose(f);
	_exit(0);
}

static void mode_outside(void)
{
	struct wl_sk r = {0};
	char done[512], c;
	uint32_t seq, last = 0;
	int n = 0;

	snprintf(done, sizeof(done), "%s/wl-udp-sender.%d", wl_tmpdir(), (int)getpid());
	unlink(done);
	r.fd = udp(AF_INET, "127.0.0.1");
	wl_setint(r.fd, SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20);
	wl_sk_names(&r);
	if (wl_fork_outside()) {
		close(r.fd);
		sender(&r, done);
	}
	if (poll(&(struct pollfd){.fd = r.fd, .events = POLLIN}, 1, 5000) != 1)
		wl_fail("nothing from the sender outside the tree");
	/* Some 500 queued: putting them back takes a while. */
	usleep(500000);
	wl_ready();
	wl_wait_verify();
	for (int i = 0; i < 3000 && wl_read_file(done, &c, 1) < 0; i++)
		usleep(10000);
	if (wl_read_file(done, &c, 1) < 0)
		wl_fail("the sender outside the tree did not finish");
	unlink(done);
	while (recv(r.fd, &seq, sizeof(seq), MSG_DONTWAIT) == sizeof(seq)) {
		if (n ? seq <= last : seq != 0)
			wl_fail("datagram %d is number %u, after %u", n, seq, last);
		last = seq;
		n++;
	}
	if (n < 100)
		wl_fail("%d datagrams of %d queued", n, OUTSIDE_N);
	wl_note("%d of %d datagrams from outside, in order: %d lost during the checkpoint", n,
		OUTSIDE_N, OUTSIDE_N - n);
}

struct mc {
	int sk;
	const char *group;
	uint32_t fmode, nsrc;
};

static const struct mc mcs[] = {
	{0, "239.1.2.3", MCAST_EXCLUDE, 0},
	{2, "239.7.7.7", MCAST_INCLUDE, 1},
	{3, "ff15::1234", MCAST_EXCLUDE, 0},
};

static void mc_sa(struct sockaddr_storage *ss, const char *a)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(a, ':')) {
		ss->ss_family = AF_INET6;
		inet_pton(AF_INET6, a, &((struct sockaddr_in6 *)ss)->sin6_addr);
	} else {
		ss->ss_family = AF_INET;
		inet_pton(AF_INET, a, &((struct sockaddr_in *)ss)->sin_addr);
	}
}

static void mc_join(const struct mc *m)
{
	struct group_req req = {.gr_interface = if_nametoindex("lo")};
	int level = strchr(m->group, ':') ? IPPROTO_IPV6 : IPPROTO_IP;

	mc_sa(&req.gr_group, m->group);
	if (m->fmode == MCAST_INCLUDE) {
		struct group_source_req sr = {.gsr_interface = req.gr_interface,
					      .gsr_group = req.gr_group};

		mc_sa(&sr.gsr_source, "127.0.0.1");
		WL_CHECK(!setsockopt(sk[m->sk].fd, level, MCAST_JOIN_SOURCE_GROUP, &sr, sizeof(sr)),
			 "MCAST_JOIN_SOURCE_GROUP %s: %s", m->group, strerror(errno));
		return;
	}
	WL_CHECK(!setsockopt(sk[m->sk].fd, level, MCAST_JOIN_GROUP, &req, sizeof(req)),
		 "MCAST_JOIN_GROUP %s: %s", m->group, strerror(errno));
}

/* Socket @s's filter of @group on lo: 0 and the mode and sources, or -errno. */
static int mc_filter(int s, const char *group, uint32_t *fmode, uint32_t *nsrc)
{
	union {
		struct group_filter gf;
		char room[sizeof(struct group_filter) + 4 * sizeof(struct sockaddr_storage)];
	} u = {0};
	socklen_t len = sizeof(u);
	int level = strchr(group, ':') ? IPPROTO_IPV6 : IPPROTO_IP;

	u.gf.gf_interface = if_nametoindex("lo");
	mc_sa(&u.gf.gf_group, group);
	u.gf.gf_numsrc = 4;
	if (getsockopt(sk[s].fd, level, MCAST_MSFILTER, &u, &len))
		return -errno;
	*fmode = u.gf.gf_fmode;
	*nsrc = u.gf.gf_numsrc;
	return 0;
}

static void mc_check(void)
{
	for (size_t i = 0; i < sizeof(mcs) / sizeof(mcs[0]); i++)
		for (int s = 0; s < N_SK; s++) {
			uint32_t fmode = 0, nsrc = 0;
			int r = mc_filter(s, mcs[i].group, &fmode, &nsrc);
			bool member = s == mcs[i].sk;

			if (!member) {
				WL_CHECK(r < 0, "socket %d is in group %s, which it never joined",
					 s, mcs[i].group);
				continue;
			}
			WL_CHECK(r == 0, "socket %d: not in group %s: %s", s, mcs[i].group,
				 strerror(-r));
			WL_CHECK(fmode == mcs[i].fmode && nsrc == mcs[i].nsrc,
				 "socket %d, group %s: filter mode %u with %u sources, was %u, %u",
				 s, mcs[i].group, fmode, nsrc, mcs[i].fmode, mcs[i].nsrc);
		}
}

int main(int argc, char **argv)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 5};
	char buf[16];
	int i;

	wl_init("udp");
	if (argc > 1 && !strcmp(argv[1], "outside")) {
		mode_outside();
		return 0;
	}
	sk[0].fd = udp(AF_INET, "127.0.0.1"); /* receives from 1 and 2 */
	sk[1].fd = udp(AF_INET, "127.0.0.1"); /* connected to 0 */
	sk[2].fd = udp(AF_INET, "0.0.0.0");   /* wildcard, receives from 0 */
	sk[3].fd = udp(AF_INET6, "::1");      /* receives from 4 */
	sk[4].fd = udp(AF_INET6, "::");	      /* connected to 3 */
	wl_setint(sk[0].fd, SOL_SOCKET, SO_REUSEADDR, 1);
	wl_setint(sk[0].fd, SOL_SOCKET, SO_RCVBUF, 300000);
	wl_setint(sk[0].fd, SOL_SOCKET, SO_SNDBUF, 70000);
	wl_setint(sk[0].fd, SOL_SOCKET, SO_PRIORITY, 3);
	wl_setint(sk[0].fd, SOL_SOCKET, SO_MARK, 7);
	wl_setint(sk[0].fd, SOL_IP, IP_TOS, 0x10);
	wl_setint(sk[0].fd, SOL_IP, IP_TTL, 33);
	wl_setint(sk[1].fd, SOL_SOCKET, SO_REUSEPORT, 1);
	wl_setint(sk[1].fd, SOL_SOCKET, SO_KEEPALIVE, 1);
	if (setsockopt(sk[1].fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
		wl_fail("SO_LINGER: %s", strerror(errno));
	if (setsockopt(sk[2].fd, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3))
		wl_fail("SO_BINDTODEVICE: %s", strerror(errno));
	wl_setint(sk[3].fd, SOL_IPV6, IPV6_TCLASS, 0x20);
	wl_setint(sk[3].fd, SOL_IPV6, IPV6_UNICAST_HOPS, 9);
	if (fcntl(sk[3].fd, F_SETFL, O_NONBLOCK))
		wl_fail("O_NONBLOCK: %s", strerror(errno));
	for (i = 0; i < N_SK; i++)
		wl_sk_names(&sk[i]);
	wl_connect(sk[1].fd, &sk[0]);
	wl_connect(sk[4].fd, &sk[3]);
	for (i = 0; i < N_SK; i++)
		wl_sk_record(&sk[i]);
	for (size_t m = 0; m < sizeof(mcs) / sizeof(mcs[0]); m++)
		mc_join(&mcs[m]);
	mc_check();

	queue(1, 0, 5, 'a');
	queue(1, 0, 0, 'b');
	queue(2, 0, 1200, 'c');
	queue(1, 0, 77, 'd');
	queue(0, 2, 300, 'e');
	queue(4, 3, 40, 'f');
	queue(4, 3, 999, 'g');
	/*
	 * wl-udp filter: a classic BPF filter on socket 2, which has datagrams
	 * waiting: refused (queued again, they would pass the filter twice).
	 */
	if (argc > 1 && !strcmp(argv[1], "filter"))
		attach(2, &accept_all, false);
	/*
	 * wl-udp filters: filters on sockets whose queues are empty, restored:
	 * socket 1's accepts all and is locked (SO_LOCK_FILTER), socket 4's
	 * drops all and is not.
	 */
	if (argc > 1 && !strcmp(argv[1], "filters")) {
		attach(1, &accept_all, true);
		attach(4, &drop_all, false);
	}
	/*
	 * wl-udp udplite: a UDP-Lite socket beside, which has the type of a UDP
	 * socket (SOCK_DGRAM) and must not come back as one: refused.
	 */
	if (argc > 1 && !strcmp(argv[1], "udplite")) {
		int l = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDPLITE);

		if (l < 0)
			wl_fail("socket(IPPROTO_UDPLITE): %s", strerror(errno));
	}
	/*
	 * wl-udp error: a socket connected to a port nobody listens on has sent
	 * to it, so ECONNREFUSED is pending on it, which the dump refuses; the
	 * next recv() after the failed dump still reports it.
	 */
	if (argc > 1 && !strcmp(argv[1], "error")) {
		struct wl_sk gone = {.fd = udp(AF_INET, "127.0.0.1")};
		int e = udp(AF_INET, "127.0.0.1");

		wl_sk_names(&gone);
		wl_connect(e, &gone);
		close(gone.fd);
		if (send(e, "x", 1, 0) != 1)
			wl_fail("send to a closed port: %s", strerror(errno));
		usleep(50000);
		wl_ready();
		wl_wait_verify();
		if (recv(e, buf, sizeof(buf), MSG_DONTWAIT) != -1 || errno != ECONNREFUSED)
			wl_fail("the pending ECONNREFUSED is gone after the failed dump: %s",
				strerror(errno));
		wl_note("ECONNREFUSED still pending after the refused dump");
		return 0;
	}
	wl_ready();
	wl_wait_verify();

	for (i = 0; i < N_SK; i++) {
		wl_sk_check(&sk[i], i);
		check_queue(i);
	}
	mc_check();
	/* New traffic passes, through a connected socket and to a wildcard one. */
	if (send(sk[1].fd, "new", 3, 0) != 3 || recv(sk[0].fd, buf, sizeof(buf), 0) != 3 ||
	    memcmp(buf, "new", 3))
		wl_fail("a new datagram from socket 1 to 0 did not pass: %s", strerror(errno));
	if (send(sk[4].fd, "six", 3, 0) != 3 || recv(sk[3].fd, buf, sizeof(buf), MSG_WAITALL) != 3)
		wl_fail("a new datagram from socket 4 to 3 did not pass: %s", strerror(errno));
	if (argc > 1 && !strcmp(argv[1], "filters")) {
		check_filters();
		wl_note("socket filters: instructions, lock and effect as before");
		return 0;
	}
	wl_note("5 UDP sockets: addresses, options, 7 queued datagrams and new traffic as before");
	return 0;
}
