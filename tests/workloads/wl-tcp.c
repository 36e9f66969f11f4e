// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-tcp MODE: TCP sockets.
 *
 *   listen       an IPv4 and an IPv6 (v6only) listener with options and a
 *                backlog; after the restore: addresses, options, backlog
 *                equal, and each accepts a new connection
 *   established  a listener and a connection both of whose ends are in the
 *                process, with data in flight both ways: queued unread at
 *                the receiver, sent but not acknowledged (the workload drops
 *                one direction in nftables until it verifies, so the
 *                sender retransmits after the restore), and not yet sent
 *                (held by Nagle behind the unacknowledged data); after the
 *                restore each stream goes on with no gap and no repeat
 *   pending      a listener with a connection not yet accepted (refused)
 *   pending-skip a listener with a connection not yet accepted from a process
 *                outside the tree, for --skip-in-flight: the dump leaves it
 *                out (kill) or leaves it queued (leave); the listener is
 *                restored with its backlog and accepts new connections
 *   outside      a connection whose peer is a process outside the tree (a
 *                grandchild, reparented away), which keeps sending during
 *                the checkpoint: it must never see a reset, and both
 *                streams go on with no gap and no repeat (the peer writes
 *                its verdict to a file, which the workload checks)
 *
 * A stream's byte N is (N * 7 + direction) mod 251: a gap or a repeat shows.
 */
#include "wl.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <unistd.h>

#include <linux/sockios.h>

#include "wl-inet.h"
#include "wl-tcp.h"

static char nft_table[64];

static int listener(int family, const char *addr, int backlog)
{
	int fd = wl_inet_socket(family, SOCK_STREAM, addr);

	wl_setint(fd, SOL_SOCKET, SO_REUSEADDR, 1);
	if (listen(fd, backlog))
		wl_fail("listen: %s", strerror(errno));
	return fd;
}

static unsigned backlog_of(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, SOL_TCP, TCP_INFO, &ti, &len))
		wl_fail("TCP_INFO: %s", strerror(errno));
	return ti.tcpi_sacked;
}

static int client_of(const struct wl_sk *l)
{
	int fd = socket(l->at.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		wl_fail("socket: %s", strerror(errno));
	wl_connect(fd, l);
	return fd;
}

static void accepts(struct wl_sk *l, int id)
{
	int c = client_of(l), s = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);

	if (s < 0)
		wl_fail("listener %d: accept: %s", id, strerror(errno));
	if (write(c, "hi", 2) != 2 || recv(s, (char[2]){0}, 2, MSG_WAITALL) != 2)
		wl_fail("listener %d: a new connection carries nothing", id);
	close(c);
	close(s);
}

static void mode_listen(void)
{
	struct wl_sk l[2];

	l[0].fd = listener(AF_INET, "127.0.0.1", 7);
	l[1].fd = listener(AF_INET6, "::", 3);
	wl_setint(l[0].fd, SOL_SOCKET, SO_KEEPALIVE, 1);
	wl_setint(l[0].fd, SOL_TCP, TCP_NODELAY, 1);
	wl_setint(l[1].fd, SOL_SOCKET, SO_RCVBUF, 100000);
	wl_setint(l[1].fd, SOL_IPV6, IPV6_TCLASS, 0x28);
	for (int i = 0; i < 2; i++) {
		wl_sk_names(&l[i]);
		wl_sk_record(&l[i]);
	}
	wl_ready();
	wl_wait_verify();
	for (int i = 0; i < 2; i++) {
		wl_sk_check(&l[i], i);
		if (backlog_of(l[i].fd) != (i ? 3u : 7u))
			wl_fail("listener %d: backlog %u", i, backlog_of(l[i].fd));
		accepts(&l[i], i);
	}
	wl_note("2 listeners: addresses, options, backlog as before; both accept");
}

static void unlock(void)
{
	char cmd[128];

	if (!nft_table[0])
		return;
	snprintf(cmd, sizeof(cmd), "nft delete table inet %s 2>/dev/null", nft_table);
	if (system(cmd))
		wl_note("nft table %s was gone already", nft_table);
	nft_table[0] = '\0';
}

/* Drop the packets from @from to @to (their ports on loopback) until unlock(). */
static void drop(const struct wl_sk *from, const struct wl_sk *to)
{
	const struct sockaddr_in *f = (const void *)&from->local, *t = (const void *)&to->local;
	char cmd[512];

	snprintf(nft_table, sizeof(nft_table), "wl_tcp_%d", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "nft 'add table inet %s; add chain inet %s i { type filter hook input priority "
		 "-100; policy accept; }; add rule inet %s i tcp sport %u tcp dport %u drop'",
		 nft_table, nft_table, nft_table, ntohs(f->sin_port), ntohs(t->sin_port));
	if (system(cmd))
		wl_fail("nft failed: %s", cmd);
	atexit(unlock);
}

static void mode_established(void)
{
	struct wl_sk l = {0}, c = {0}, s = {0};
	uint64_t cs_w = 0, cs_r = 0, sc_w = 0, sc_r = 0;
	int unsent = 0, outq = 0;

	l.fd = listener(AF_INET, "127.0.0.1", 4);
	wl_sk_names(&l);
	c.fd = client_of(&l);
	s.fd = accept4(l.fd, NULL, NULL, SOCK_CLOEXEC);
	if (s.fd < 0)
		wl_fail("accept: %s", strerror(errno));
	wl_setint(c.fd, SOL_SOCKET, SO_KEEPALIVE, 1);
	wl_setint(c.fd, SOL_TCP, TCP_KEEPIDLE, 77);
	wl_setint(c.fd, SOL_TCP, TCP_KEEPCNT, 4);
	wl_setint(c.fd, SOL_SOCKET, SO_PRIORITY, 2);
	wl_setint(c.fd, SOL_IP, IP_TOS, 0x08);
	wl_setint(s.fd, SOL_TCP, TCP_NODELAY, 1);
	wl_sk_record(&l);
	wl_sk_record(&c);
	wl_sk_record(&s);

	/* Received, partly read. */
	wr(s.fd, 1, &sc_w, 3000);
	rd(c.fd, 1, &sc_r, 1000);
	/* Sent but never acknowledged (c -> s dropped, acks included), then held by Nagle. */
	drop(&c, &s);
	wr(c.fd, 0, &cs_w, 5000);
	usleep(50000);
	wr(c.fd, 0, &cs_w, 3000);
	wr(s.fd, 1, &sc_w, 2000);
	usleep(50000);
	if (ioctl(c.fd, SIOCOUTQNSD, &unsent) || ioctl(c.fd, SIOCOUTQ, &outq) || unsent <= 0 ||
	    outq <= unsent)
		wl_downgrade("the send queue holds %d bytes, %d of them unsent: not both kinds",
			     outq, unsent);
	wl_ready();
	wl_wait_verify();

	wl_sk_check(&l, 0);
	wl_sk_check(&c, 1);
	wl_sk_check(&s, 2);
	unlock();
	rd(c.fd, 1, &sc_r, (size_t)(sc_w - sc_r));
	rd(s.fd, 0, &cs_r, (size_t)(cs_w - cs_r));
	wr(c.fd, 0, &cs_w, 500);
	wr(s.fd, 1, &sc_w, 700);
	rd(s.fd, 0, &cs_r, 500);
	rd(c.fd, 1, &sc_r, 700);
	nothing_more(c.fd, 1);
	nothing_more(s.fd, 0);
	accepts(&l, 0);
	wl_note("a connection in the tree: %llu and %llu bytes each way, no gap, no repeat; "
		"%d of %d bytes queued were unsent",
		(unsigned long long)cs_r, (unsigned long long)sc_r, unsent, outq);
}

static void mode_pending(void)
{
	struct wl_sk l = {0};
	char buf[1];
	int c, s;

	l.fd = listener(AF_INET, "127.0.0.1", 4);
	wl_sk_names(&l);
	c = client_of(&l);
	wl_ready();
	wl_wait_verify();
	s = accept4(l.fd, NULL, NULL, SOCK_CLOEXEC);
	if (s < 0 || write(c, "x", 1) != 1 || recv(s, buf, 1, MSG_WAITALL) != 1 || buf[0] != 'x')
		wl_fail("the pending connection: %s", strerror(errno));
	accepts(&l, 0);
	wl_note("the listener and its pending connection are intact after the refused dump");
}

/* The peer outside the tree (wl-tcp.h). */
static _Noreturn void peer(const struct wl_sk *l, const char *result)
{
	wl_tcp_peer(client_of(l), result);
}

static void mode_outside(void)
{
	struct wl_sk l = {0}, s = {0};
	uint64_t w = 0, r = 0;
	char result[512];

	snprintf(result, sizeof(result), "%s/wl-tcp-peer.%d", wl_tmpdir(), (int)getpid());
	unlink(result);
	l.fd = listener(AF_INET, "127.0.0.1", 4);
	wl_sk_names(&l);
	if (wl_fork_outside()) {
		close(l.fd);
		peer(&l, result);
	}
	s.fd = accept4(l.fd, NULL, NULL, SOCK_CLOEXEC);
	if (s.fd < 0)
		wl_fail("accept: %s", strerror(errno));
	close(l.fd);
	wl_setint(s.fd, SOL_TCP, TCP_NODELAY, 1);
	wl_sk_record(&s);
	wr(s.fd, 0, &w, 3000);
	rd(s.fd, 1, &r, 2000);
	wl_ready();
	wl_wait_verify();
	wl_sk_check(&s, 0);
	rd(s.fd, 1, &r, 20000);
	wl_tcp_peer_end(s.fd, &w, &r, result);
	wl_note("a connection to a peer outside the tree that kept sending: %llu and %llu "
		"bytes, no reset, no gap, no repeat",
		(unsigned long long)w, (unsigned long long)r);
}

static void mode_pending_skip(void)
{
	struct wl_sk l = {0};
	char path[512], text[32] = "";
	pid_t helper = 0;
	int s;

	snprintf(path, sizeof(path), "%s/wl-tcp-pending.%d", wl_tmpdir(), (int)getpid());
	unlink(path);
	l.fd = listener(AF_INET, "127.0.0.1", 5);
	wl_sk_names(&l);
	wl_sk_record(&l);
	if (wl_fork_outside()) {
		FILE *f;

		close(l.fd);
		client_of(&l);
		f = fopen(path, "we");
		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
		sleep(120);
		_exit(0);
	}
	for (int i = 0; i < 500 && wl_read_file(path, text, sizeof(text)) <= 0; i++)
		usleep(10000);
	helper = atoi(text);
	if (helper <= 0)
		wl_fail("the client outside the tree did not start");
	wl_ready();
	wl_wait_verify();
	kill(helper, SIGKILL);
	unlink(path);
	wl_sk_check(&l, 0);
	if (backlog_of(l.fd) != 5)
		wl_fail("backlog %u", backlog_of(l.fd));
	/* The connection left out (kill) or still queued (leave). */
	s = poll(&(struct pollfd){.fd = l.fd, .events = POLLIN}, 1, 0) == 1
		    ? accept4(l.fd, NULL, NULL, SOCK_CLOEXEC)
		    : -1;
	if (s >= 0)
		close(s);
	accepts(&l, 0);
	wl_note("a listener with a connection not yet accepted: %s; accepts new ones",
		s >= 0 ? "still queued" : "left out");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "listen";

	wl_init("tcp");
	if (!strcmp(mode, "listen"))
		mode_listen();
	else if (!strcmp(mode, "established"))
		mode_established();
	else if (!strcmp(mode, "pending"))
		mode_pending();
	else if (!strcmp(mode, "pending-skip"))
		mode_pending_skip();
	else if (!strcmp(mode, "outside"))
		mode_outside();
	else
		wl_fail("unknown mode %s", mode);
	return 0;
}
