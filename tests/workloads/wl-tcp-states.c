// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-tcp-states MODE: TCP connections closing, both ends in the process
 * (over loopback), dumped with --tcp-established.  The workload holds the
 * segments that would end each state with nftables rules of its own (table
 * wl_tcps_PID, by port), and after the restore checks each end's
 * TCP_INFO state, addresses and options as before, then lets the segments
 * go and checks that every byte and each FIN arrive exactly once:
 *
 *   fin-wait-1  c shut down for writing, its data and FIN not acknowledged
 *               (s -> c dropped): c FIN-WAIT-1, s CLOSE-WAIT with c's data
 *               unread; s's data unread at c
 *   fin-wait-1-full  c shut down for writing with data never sent before its
 *               FIN (s's receive buffer is full: s does not read): c
 *               FIN-WAIT-1, s established; s then reads it all and the FIN
 *   fin-wait-2  c shut down for writing and acknowledged: c FIN-WAIT-2,
 *               s CLOSE-WAIT, data unread both ways (fin-wait-2-v6: over
 *               IPv6)
 *   last-ack    then s shut down too, its data and FIN held (s -> c
 *               dropped, but segments with neither): s LAST-ACK,
 *               c FIN-WAIT-2
 *   closing     both shut down at once, s's FIN received by c, no ack of
 *               either (c -> s dropped, and s -> c but FINs): c CLOSING,
 *               s FIN-WAIT-1
 *   shut-rd     established, s shut down for reading (SHUT_RD) with data
 *               queued: it reads the data, then end of file, and writes
 *   tcp-close   (dump --tcp-close, killing) an established connection with
 *               data queued both ways comes back closed at both ends:
 *               TCP_CLOSE, the same local address, end of file, EPIPE,
 *               no peer
 *   tcp-close-leave  the same, left running: the connection goes on
 *   closed      refused: c's connection was reset and the error read
 *   syn-sent    refused: c's connect() in progress (the SYN dropped)
 *
 * A stream's byte N is (N * 7 + direction) mod 251 (wl-tcp.h).
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/sockios.h>

#include "wl-inet.h"
#include "wl-tcp.h"

static char table[64];
static unsigned cport, sport;
/* AF_INET6 in the modes ending in -v6 (over ::1). */
static int family = AF_INET;

static void unlock(void)
{
	char cmd[128];

	if (!table[0])
		return;
	snprintf(cmd, sizeof(cmd), "nft delete table inet %s 2>/dev/null", table);
	if (system(cmd))
		wl_note("nft table %s was gone already", table);
	table[0] = '\0';
}

/* Drop the segments that @match (nft), until unlock(). */
static void drop_match(const char *match)
{
	char cmd[512];

	if (!table[0]) {
		snprintf(table, sizeof(table), "wl_tcps_%d", (int)getpid());
		snprintf(cmd, sizeof(cmd),
			 "nft 'add table inet %s; add chain inet %s i { type filter hook input "
			 "priority -100; policy accept; }'",
			 table, table);
		if (system(cmd))
			wl_fail("nft failed: %s", cmd);
		atexit(unlock);
	}
	snprintf(cmd, sizeof(cmd), "nft 'add rule inet %s i %s drop'", table, match);
	if (system(cmd))
		wl_fail("nft failed: %s", cmd);
}

/* Drop the segments from port @from to port @to matching @what ("" for all). */
static void drop(unsigned from, unsigned to, const char *what)
{
	char m[256];

	snprintf(m, sizeof(m), "tcp sport %u tcp dport %u %s", from, to, what);
	drop_match(m);
}

static unsigned state(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, SOL_TCP, TCP_INFO, &ti, &len))
		wl_fail("TCP_INFO: %s", strerror(errno));
	return ti.tcpi_state;
}

static void want_state(int fd, const char *who, unsigned want)
{
	for (int i = 0; i < 300 && state(fd) != want; i++)
		usleep(10000);
	if (state(fd) != want)
		wl_fail("%s: TCP state %u, wanted %u", who, state(fd), want);
}

/* The end of stream @dir on @fd: recv gives 0, now and again. */
static void eof(int fd, int dir)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char c;

	if (poll(&p, 1, 20000) != 1)
		wl_fail("stream %d: no end of file for 20 s", dir);
	for (int i = 0; i < 2; i++)
		if (recv(fd, &c, 1, MSG_DONTWAIT) != 0)
			wl_fail("stream %d: data or an error where the end of file is: %s", dir,
				strerror(errno));
}

static void no_write(int fd, const char *who)
{
	if (send(fd, "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT) != -1 || errno != EPIPE)
		wl_fail("%s: a write after shutdown(SHUT_WR) did not fail with EPIPE", who);
}

static void pair(struct wl_sk *c, struct wl_sk *s)
{
	struct wl_sk l = {0};

	l.fd = wl_inet_socket(family, SOCK_STREAM, family == AF_INET6 ? "::1" : "127.0.0.1");
	if (listen(l.fd, 1))
		wl_fail("listen: %s", strerror(errno));
	wl_sk_names(&l);
	c->fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		wl_fail("socket: %s", strerror(errno));
	wl_connect(c->fd, &l);
	s->fd = accept4(l.fd, NULL, NULL, SOCK_CLOEXEC);
	if (s->fd < 0)
		wl_fail("accept: %s", strerror(errno));
	close(l.fd);
	wl_setint(c->fd, SOL_TCP, TCP_NODELAY, 1);
	wl_setint(s->fd, SOL_TCP, TCP_NODELAY, 1);
	wl_sk_names(c);
	wl_sk_names(s);
	/* sin_port and sin6_port are at the same place. */
	cport = ntohs(((struct sockaddr_in *)&c->at)->sin_port);
	sport = ntohs(((struct sockaddr_in *)&s->at)->sin_port);
}

static void checkpoint(struct wl_sk *c, struct wl_sk *s, unsigned cst, unsigned sst)
{
	want_state(c->fd, "c", cst);
	want_state(s->fd, "s", sst);
	wl_sk_record(c);
	wl_sk_record(s);
	wl_ready();
	wl_wait_verify();
	wl_sk_check(c, 0);
	wl_sk_check(s, 1);
	if (state(c->fd) != cst || state(s->fd) != sst)
		wl_fail("restored in states %u and %u, not %u and %u", state(c->fd), state(s->fd),
			cst, sst);
}

static void mode_closing_one_way(const char *mode)
{
	struct wl_sk c = {0}, s = {0};
	uint64_t cs_w = 0, cs_r = 0, sc_w = 0, sc_r = 0;
	bool fw1 = !strcmp(mode, "fin-wait-1"), lack = !strcmp(mode, "last-ack");

	pair(&c, &s);
	wr(c.fd, 0, &cs_w, 3000);
	rd(s.fd, 0, &cs_r, 1000);
	wr(s.fd, 1, &sc_w, 1500);
	usleep(20000);
	if (fw1) {
		/* c's data and FIN are received; nothing of s's reaches c. */
		drop(sport, cport, "");
		wr(c.fd, 0, &cs_w, 2000);
	}
	if (shutdown(c.fd, SHUT_WR))
		wl_fail("shutdown: %s", strerror(errno));
	if (lack) {
		want_state(c.fd, "c", TCP_FIN_WAIT2);
		/*
		 * s's data and FIN: not the segments without either, such as the
		 * acknowledgement the restore makes for c's FIN.
		 */
		drop(sport, cport, "tcp flags & fin == fin");
		drop(sport, cport, "ip length > 60");
		wr(s.fd, 1, &sc_w, 500);
		if (shutdown(s.fd, SHUT_WR))
			wl_fail("shutdown: %s", strerror(errno));
	}
	checkpoint(&c, &s, fw1 ? TCP_FIN_WAIT1 : TCP_FIN_WAIT2,
		   lack ? TCP_LAST_ACK : TCP_CLOSE_WAIT);
	no_write(c.fd, "c");
	if (lack)
		no_write(s.fd, "s");
	unlock();
	rd(s.fd, 0, &cs_r, (size_t)(cs_w - cs_r));
	eof(s.fd, 0);
	if (!lack) {
		wr(s.fd, 1, &sc_w, 700);
		if (shutdown(s.fd, SHUT_WR))
			wl_fail("shutdown: %s", strerror(errno));
	}
	rd(c.fd, 1, &sc_r, (size_t)(sc_w - sc_r));
	eof(c.fd, 1);
	wl_note("%s: c's %llu bytes and FIN, s's %llu bytes and FIN, each once", mode,
		(unsigned long long)cs_r, (unsigned long long)sc_r);
}

static void mode_fin_wait_1_full(void)
{
	struct wl_sk c = {0}, s = {0};
	uint64_t cs_w = 0, cs_r = 0;
	int unsent = 0;

	pair(&c, &s);
	wl_setint(s.fd, SOL_SOCKET, SO_RCVBUF, 4096);
	wl_setint(c.fd, SOL_SOCKET, SO_SNDBUF, 16384);
	fcntl(c.fd, F_SETFL, O_NONBLOCK);
	/* Until c's send buffer is full too: s's window is closed. */
	for (;;) {
		unsigned char buf[1000];
		ssize_t n;

		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = pattern(0, cs_w + i);
		n = send(c.fd, buf, sizeof(buf), MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0)
			wl_fail("send: %s", strerror(errno));
		cs_w += (uint64_t)n;
		if (cs_w > 4000000)
			wl_fail("s's window never closes");
	}
	fcntl(c.fd, F_SETFL, 0);
	if (shutdown(c.fd, SHUT_WR))
		wl_fail("shutdown: %s", strerror(errno));
	usleep(50000);
	if (ioctl(c.fd, SIOCOUTQNSD, &unsent) || unsent <= 1)
		wl_fail("c: %d bytes never sent, with the FIN", unsent);
	checkpoint(&c, &s, TCP_FIN_WAIT1, TCP_ESTABLISHED);
	no_write(c.fd, "c");
	rd(s.fd, 0, &cs_r, (size_t)cs_w);
	eof(s.fd, 0);
	wl_note("fin-wait-1-full: %llu bytes, %d of them and the FIN never sent, each once",
		(unsigned long long)cs_r, unsent);
}

static void mode_closing(void)
{
	struct wl_sk c = {0}, s = {0};
	uint64_t cs_w = 0, cs_r = 0, sc_w = 0, sc_r = 0;

	pair(&c, &s);
	wr(c.fd, 0, &cs_w, 1000);
	wr(s.fd, 1, &sc_w, 1200);
	rd(s.fd, 0, &cs_r, 1000);
	rd(c.fd, 1, &sc_r, 1200);
	drop(sport, cport, "");
	drop(cport, sport, "");
	if (shutdown(c.fd, SHUT_WR) || shutdown(s.fd, SHUT_WR))
		wl_fail("shutdown: %s", strerror(errno));
	/*
	 * Now s's FIN, retransmitted, reaches c, which has sent its own: c
	 * CLOSING; nothing of c's reaches s, which stays in FIN-WAIT-1 and
	 * whose next FINs acknowledge nothing of c's.
	 */
	{
		char cmd[512];

		snprintf(cmd, sizeof(cmd),
			 "nft 'flush chain inet %s i; add rule inet %s i tcp sport %u tcp dport %u "
			 "tcp flags & fin == 0 drop; add rule inet %s i tcp sport %u tcp dport %u "
			 "drop'",
			 table, table, sport, cport, table, cport, sport);
		if (system(cmd))
			wl_fail("nft failed: %s", cmd);
	}
	checkpoint(&c, &s, TCP_CLOSING, TCP_FIN_WAIT1);
	no_write(c.fd, "c");
	no_write(s.fd, "s");
	unlock();
	eof(c.fd, 1);
	eof(s.fd, 0);
	wl_note("closing: both FINs once, both ends at end of file");
}

static void mode_shut_rd(void)
{
	struct wl_sk c = {0}, s = {0};
	uint64_t cs_w = 0, cs_r = 0, sc_w = 0, sc_r = 0;

	pair(&c, &s);
	wr(c.fd, 0, &cs_w, 2000);
	rd(s.fd, 0, &cs_r, 500);
	usleep(20000);
	if (shutdown(s.fd, SHUT_RD))
		wl_fail("shutdown: %s", strerror(errno));
	checkpoint(&c, &s, TCP_ESTABLISHED, TCP_ESTABLISHED);
	{
		struct pollfd p = {.fd = s.fd, .events = POLLRDHUP};

		if (poll(&p, 1, 0) != 1 || !(p.revents & POLLRDHUP))
			wl_fail("s is not shut down for reading any more");
	}
	rd(s.fd, 0, &cs_r, (size_t)(cs_w - cs_r));
	eof(s.fd, 0);
	wr(s.fd, 1, &sc_w, 900);
	rd(c.fd, 1, &sc_r, 900);
	nothing_more(c.fd, 1);
	wl_note("shut-rd: s read its %llu bytes, then end of file, and writes",
		(unsigned long long)cs_r);
}

static void closed_as_criu(struct wl_sk *k, const char *who)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char b;

	if (state(k->fd) != TCP_CLOSE)
		wl_fail("%s: TCP state %u, not closed", who, state(k->fd));
	if (getsockname(k->fd, (void *)&ss, &len) || len != k->at_len || memcmp(&ss, &k->at, len))
		wl_fail("%s: getsockname differs", who);
	if (getpeername(k->fd, (void *)&ss, &len) != -1 || errno != ENOTCONN)
		wl_fail("%s: getpeername does not fail with ENOTCONN", who);
	if (recv(k->fd, &b, 1, MSG_DONTWAIT) != 0)
		wl_fail("%s: a read gives no end of file: %s", who, strerror(errno));
	no_write(k->fd, who);
}

static void mode_tcp_close(bool leave)
{
	struct wl_sk c = {0}, s = {0};
	uint64_t cs_w = 0, cs_r = 0, sc_w = 0, sc_r = 0;

	pair(&c, &s);
	wr(c.fd, 0, &cs_w, 1000);
	wr(s.fd, 1, &sc_w, 1000);
	usleep(20000);
	wl_ready();
	wl_wait_verify();
	if (leave) {
		rd(s.fd, 0, &cs_r, 1000);
		rd(c.fd, 1, &sc_r, 1000);
		wr(c.fd, 0, &cs_w, 300);
		rd(s.fd, 0, &cs_r, 300);
		wl_note("tcp-close, left running: the connection goes on");
		return;
	}
	closed_as_criu(&c, "c");
	closed_as_criu(&s, "s");
	wl_note("tcp-close: both ends closed, same addresses, end of file, EPIPE");
}

static void mode_closed(void)
{
	struct wl_sk c = {0}, s = {0};
	struct linger lg = {1, 0};
	socklen_t len = sizeof(int);
	int err = 0;
	char b;

	pair(&c, &s);
	if (setsockopt(s.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
		wl_fail("SO_LINGER: %s", strerror(errno));
	close(s.fd);
	want_state(c.fd, "c", TCP_CLOSE);
	if (getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len) || err != ECONNRESET)
		wl_fail("c: no reset (%s)", strerror(err));
	wl_ready();
	wl_wait_verify();
	if (recv(c.fd, &b, 1, MSG_DONTWAIT) != 0)
		wl_fail("c: no end of file after the refused dump");
	wl_note("closed: the reset connection still reads end of file after the refused dump");
}

static void mode_syn_sent(void)
{
	struct wl_sk l = {0};
	int c, err = 0;
	socklen_t len = sizeof(err);

	l.fd = wl_inet_socket(AF_INET, SOCK_STREAM, "127.0.0.1");
	if (listen(l.fd, 1))
		wl_fail("listen: %s", strerror(errno));
	wl_sk_names(&l);
	{
		char m[64];

		snprintf(m, sizeof(m), "tcp dport %u",
			 ntohs(((struct sockaddr_in *)&l.at)->sin_port));
		drop_match(m);
	}
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c < 0 || (connect(c, (void *)&l.at, l.at_len) == 0 || errno != EINPROGRESS))
		wl_fail("connect in progress: %s", strerror(errno));
	want_state(c, "c", TCP_SYN_SENT);
	wl_ready();
	wl_wait_verify();
	unlock();
	{
		struct pollfd p = {.fd = c, .events = POLLOUT};

		if (poll(&p, 1, 20000) != 1 || getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &len) ||
		    err)
			wl_fail("the connection in progress did not complete: %s", strerror(err));
	}
	wl_note("syn-sent: the connection in progress completes after the refused dump");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fin-wait-2";

	wl_init("tcp-states");
	if (!strcmp(mode, "fin-wait-2-v6")) {
		family = AF_INET6;
		mode = "fin-wait-2";
	}
	if (!strcmp(mode, "fin-wait-1") || !strcmp(mode, "fin-wait-2") || !strcmp(mode, "last-ack"))
		mode_closing_one_way(mode);
	else if (!strcmp(mode, "fin-wait-1-full"))
		mode_fin_wait_1_full();
	else if (!strcmp(mode, "closing"))
		mode_closing();
	else if (!strcmp(mode, "shut-rd"))
		mode_shut_rd();
	else if (!strcmp(mode, "tcp-close") || !strcmp(mode, "tcp-close-leave"))
		mode_tcp_close(!strcmp(mode, "tcp-close-leave"));
	else if (!strcmp(mode, "closed"))
		mode_closed();
	else if (!strcmp(mode, "syn-sent"))
		mode_syn_sent();
	else
		wl_fail("unknown mode %s", mode);
	return 0;
}
