// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-tcp-ns MODE: established TCP connections in a network namespace of
 * the process's own (crf dump --tcp-established).
 *
 *   lo    a listener and a connection both of whose ends are in the
 *         namespace, over lo, with data queued both ways (partly read);
 *         after the restore each stream goes on with no gap and no
 *         repeat, and the listener accepts a new connection
 *   veth  a veth pair to the host's bridge (tests/e2e/tcp-ns-veth.sh makes
 *         crftbr0, 10.89.0.1/24), eth0 10.89.0.2/24 inside; a peer left in
 *         the host's namespace (outside the tree) connects to the
 *         namespace's listener across the veth and keeps sending through
 *         the checkpoint: it must never see a reset, and both streams go
 *         on with no gap and no repeat (the peer writes its verdict to a
 *         file, which the workload checks)
 *   orphan  a connection over lo whose client end was closed (FIN-WAIT-2,
 *         held by no fd: refused); after the refused dump the server end
 *         reads the data and the end of file
 *   foreign  a listener made in a namespace the process left again (setns
 *         back to its first one): refused, the restore would make it in
 *         the task's; after the refused dump it accepts a connection made
 *         in that namespace
 */
#include "wl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/sockios.h>

#include "wl-inet.h"
#include "wl-tcp.h"

#define PORT 7790

static void sh(const char *cmd)
{
	int r = system(cmd);

	if (r != 0)
		wl_fail("'%s' exited with %d", cmd, r);
}

static int listener(const char *ip, struct sockaddr_in *a)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	*a = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(PORT)};
	inet_pton(AF_INET, ip, &a->sin_addr);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (void *)a, sizeof(*a)) || listen(fd, 4))
		wl_fail("listener on %s: %s", ip, strerror(errno));
	return fd;
}

static int connect_to(const struct sockaddr_in *a)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (const void *)a, sizeof(*a)))
		wl_fail("connect: %s", strerror(errno));
	return fd;
}

static void mode_lo(void)
{
	struct wl_sk c = {0}, s = {0};
	struct sockaddr_in a;
	uint64_t cs_w = 0, cs_r = 0, sc_w = 0, sc_r = 0;
	int l, n;

	sh("ip link set lo up");
	l = listener("127.0.0.1", &a);
	c.fd = connect_to(&a);
	s.fd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (s.fd < 0)
		wl_fail("accept: %s", strerror(errno));
	wl_setint(c.fd, SOL_TCP, TCP_NODELAY, 1);
	wl_sk_record(&c);
	wl_sk_record(&s);
	wr(c.fd, 0, &cs_w, 3000);
	rd(s.fd, 0, &cs_r, 1000);
	wr(s.fd, 1, &sc_w, 2000);
	usleep(50000);
	wl_ready();
	wl_wait_verify();
	wl_sk_check(&c, 0);
	wl_sk_check(&s, 1);
	rd(s.fd, 0, &cs_r, (size_t)(cs_w - cs_r));
	rd(c.fd, 1, &sc_r, (size_t)(sc_w - sc_r));
	wr(c.fd, 0, &cs_w, 500);
	wr(s.fd, 1, &sc_w, 700);
	rd(s.fd, 0, &cs_r, 500);
	rd(c.fd, 1, &sc_r, 700);
	nothing_more(c.fd, 1);
	nothing_more(s.fd, 0);
	n = connect_to(&a);
	close(n);
	n = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (n < 0)
		wl_fail("the listener accepts no new connection: %s", strerror(errno));
	close(n);
	wl_note("a connection inside the namespace: %llu and %llu bytes each way, no gap, no "
		"repeat; the listener accepts",
		(unsigned long long)cs_r, (unsigned long long)sc_r);
}

/* @cmd in the host's namespace (the parent's, the harness's). */
static void sh_host(const char *cmd)
{
	char full[1024];

	snprintf(full, sizeof(full), "nsenter --net=/proc/%d/ns/net sh -c '%s'", (int)getppid(),
		 cmd);
	sh(full);
}

static void setup_veth(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "ip link add crfth0 type veth peer name eth0 netns %d && "
		 "ip link set crfth0 master crftbr0 up",
		 (int)getpid());
	sh_host(cmd);
	sh("ip link set lo up && ip link set eth0 up && ip addr add 10.89.0.2/24 dev eth0");
	/* The link-local addresses' duplicate address detection, both ends (the dump refuses
	 * a tentative one). */
	for (int i = 0; i < 500; i++) {
		char out[4096] = "";
		FILE *p;
		size_t got;

		snprintf(cmd, sizeof(cmd),
			 "ip -6 addr show tentative; nsenter --net=/proc/%d/ns/net "
			 "ip -6 addr show dev crfth0 tentative",
			 (int)getppid());
		p = popen(cmd, "r");
		if (!p)
			wl_fail("popen: %s", strerror(errno));
		got = fread(out, 1, sizeof(out) - 1, p);
		pclose(p);
		out[got] = '\0';
		if (!strstr(out, "inet6"))
			return;
		usleep(10000);
	}
	wl_fail("the link-local addresses stay tentative");
}

static void mode_veth(void)
{
	char result[512], go[512], text[8];
	struct wl_sk s = {0};
	struct sockaddr_in a;
	uint64_t w = 0, r = 0;
	int l;

	snprintf(result, sizeof(result), "%s/wl-tcp-ns-peer.%d", wl_tmpdir(), (int)getpid());
	snprintf(go, sizeof(go), "%s/wl-tcp-ns-go.%d", wl_tmpdir(), (int)getpid());
	unlink(result);
	unlink(go);
	if (wl_fork_outside()) {
		/* In the host's namespace: wait for the listener, then connect across the veth. */
		for (int i = 0; i < 3000 && wl_read_file(go, text, sizeof(text)) <= 0; i++)
			usleep(10000);
		unlink(go);
		a = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(PORT)};
		inet_pton(AF_INET, "10.89.0.2", &a.sin_addr);
		/* The bridge's port may take a moment to forward. */
		for (int i = 0; i < 100; i++) {
			int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

			if (fd >= 0 && connect(fd, (void *)&a, sizeof(a)) == 0)
				wl_tcp_peer(fd, result);
			if (fd >= 0)
				close(fd);
			usleep(100000);
		}
		wl_fail("the peer cannot connect to 10.89.0.2: %s", strerror(errno));
	}
	if (unshare(CLONE_NEWNET) < 0)
		wl_fail("unshare(CLONE_NEWNET): %s", strerror(errno));
	setup_veth();
	l = listener("10.89.0.2", &a);
	{
		FILE *f = fopen(go, "we");

		if (!f || fputs("go\n", f) < 0 || fclose(f))
			wl_fail("%s: %s", go, strerror(errno));
	}
	if (poll(&(struct pollfd){.fd = l, .events = POLLIN}, 1, 20000) != 1)
		wl_fail("the peer in the host's namespace did not connect in 20 s");
	s.fd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (s.fd < 0)
		wl_fail("accept: %s", strerror(errno));
	close(l);
	wl_setint(s.fd, SOL_TCP, TCP_NODELAY, 1);
	wl_sk_record(&s);
	wr(s.fd, 0, &w, 3000);
	rd(s.fd, 1, &r, 2000);
	wl_ready();
	wl_wait_verify();
	wl_sk_check(&s, 0);
	rd(s.fd, 1, &r, 20000);
	wl_tcp_peer_end(s.fd, &w, &r, result);
	wl_note("a connection across the veth to a peer outside the tree that kept sending: "
		"%llu and %llu bytes, no reset, no gap, no repeat",
		(unsigned long long)w, (unsigned long long)r);
}

static void mode_orphan(void)
{
	struct sockaddr_in a;
	char buf[8] = "";
	int l, c, s;

	sh("ip link set lo up");
	l = listener("127.0.0.1", &a);
	c = connect_to(&a);
	s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (s < 0 || write(c, "bye", 3) != 3)
		wl_fail("the connection: %s", strerror(errno));
	close(c);
	usleep(50000);
	wl_ready();
	wl_wait_verify();
	if (recv(s, buf, sizeof(buf), MSG_WAITALL) != 3 || memcmp(buf, "bye", 3))
		wl_fail("the server end lost the data");
	wl_note("the closed connection's other end reads its data and end of file");
}

static void mode_foreign(void)
{
	int own = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), l, ns;
	struct stat before, after;
	struct sockaddr_in a;
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (own < 0 || unshare(CLONE_NEWNET) < 0)
		wl_fail("unshare(CLONE_NEWNET): %s", strerror(errno));
	sh("ip link set lo up");
	l = listener("127.0.0.1", &a);
	if (stat("/proc/self/ns/net", &before) < 0 || setns(own, CLONE_NEWNET) < 0)
		wl_fail("setns back: %s", strerror(errno));
	close(own);
	wl_ready();
	wl_wait_verify();
	ns = ioctl(l, SIOCGSKNS);
	if (ns < 0 || fstat(ns, &after) < 0 || after.st_ino != before.st_ino)
		wl_fail("the listener is not in its namespace any more");
	close(ns);
	if (getsockopt(l, SOL_TCP, TCP_INFO, &ti, &len) || ti.tcpi_state != TCP_LISTEN)
		wl_fail("the listener does not listen any more");
	wl_note("the listener of the other namespace is there after the refused dump");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "lo";

	wl_init("tcp-ns");
	if (!strcmp(mode, "lo")) {
		if (unshare(CLONE_NEWNET) < 0)
			wl_fail("unshare(CLONE_NEWNET): %s", strerror(errno));
		mode_lo();
	} else if (!strcmp(mode, "orphan")) {
		if (unshare(CLONE_NEWNET) < 0)
			wl_fail("unshare(CLONE_NEWNET): %s", strerror(errno));
		mode_orphan();
	} else if (!strcmp(mode, "foreign")) {
		mode_foreign();
	} else if (!strcmp(mode, "veth")) {
		mode_veth();
	} else {
		wl_fail("unknown mode %s", mode);
	}
	return 0;
}
