// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-rawping: raw and ping sockets, in a net namespace of its own (so that
 * nothing of the host's lands in their queues): lo up, and
 * net.ipv4.ping_group_range "0 0" there so that root may open ping sockets.
 *
 *   0  raw IPv4 UDP, bound to 127.0.0.12, IP_HDRINCL, O_NONBLOCK
 *   1  raw IPv4 ICMP, bound to 127.0.0.14, ICMP_FILTER
 *   2  raw IPv6 ICMPv6, ICMPV6_FILTER
 *   3  raw IPv6 protocol 253, IPV6_CHECKSUM at offset 2
 *   4  raw IPv4 IPPROTO_RAW (send only, IP_HDRINCL implied)
 *   5  raw IPv4 protocol 253, connected to 127.0.0.1 (getpeername: ENOTCONN)
 *   6  raw IPv4 protocol 253, bound to 127.0.0.1: what 5 sends
 *   7  ping IPv4, never bound, SO_RCVTIMEO 1 s
 *   8  ping IPv4, bound to 127.0.0.1 with identifier 4242, connected to it
 *   9  ping IPv6, bound to ::1 with identifier 777
 *  10  UDP, bound to 127.0.0.10:8081: what 0 sends, a header of its own
 * and a raw socket of every protocol 1-255, IPv4 and IPv6, with nothing set.
 *
 * After the restore: each socket's family, type, protocol, address, options
 * and O_NONBLOCK are as they were; 0 delivers its hand-made datagram to 10,
 * 5 sends without an address and 6 gets it, 7 and 8 and 9 get their echo
 * replies, 8 with its identifier.
 *
 * wl-rawping queued: 5 has sent a packet before the dump, which waits in
 * 5's queue and 6's: refused.
 */
#include "wl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/icmp.h>

#define N_SK	   11
#define PROTO_TEST 253 /* RFC 3692: for experiments */

struct sk {
	int fd, family, type, proto;
	struct sockaddr_storage name;
	socklen_t name_len;
	int fl;
};

static struct sk sk[N_SK];
static int storm[2][256];

static void sa(int family, const char *addr, int port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *in = (void *)ss;
	struct sockaddr_in6 *in6 = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, addr, &in6->sin6_addr);
		*len = sizeof(*in6);
	} else {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, addr, &in->sin_addr);
		*len = sizeof(*in);
	}
}

/* Socket @i: made, bound to @addr:@port when @addr. */
static int make(int i, int family, int type, int proto, const char *addr, int port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = socket(family, type | SOCK_CLOEXEC, proto);

	if (fd < 0)
		wl_fail("socket %d (%d, %d, %d): %s", i, family, type, proto, strerror(errno));
	if (addr) {
		sa(family, addr, port, &ss, &len);
		if (bind(fd, (struct sockaddr *)&ss, len))
			wl_fail("socket %d: bind %s:%d: %s", i, addr, port, strerror(errno));
	}
	sk[i] = (struct sk){.fd = fd, .family = family, .type = type, .proto = proto};
	return fd;
}

static void connect_to(int i, const char *addr)
{
	struct sockaddr_storage ss;
	socklen_t len;

	sa(sk[i].family, addr, 0, &ss, &len);
	if (connect(sk[i].fd, (struct sockaddr *)&ss, len))
		wl_fail("socket %d: connect %s: %s", i, addr, strerror(errno));
}

static void setopt(int i, int level, int name, const void *v, socklen_t len)
{
	if (setsockopt(sk[i].fd, level, name, v, len))
		wl_fail("socket %d: setsockopt(%d, %d): %s", i, level, name, strerror(errno));
}

static void getopt_is(int i, int level, int name, const void *want, socklen_t len,
		      const char *label)
{
	unsigned char got[64] = {0};
	socklen_t gl = sizeof(got);

	if (getsockopt(sk[i].fd, level, name, got, &gl) || gl < len || memcmp(got, want, len))
		wl_fail("socket %d: %s is not as set: %s", i, label, strerror(errno));
}

/* net.ipv4.ping_group_range "0 0" in its namespace: root may open ping sockets. */
static void ping_group(void)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ping_group_range", "we");

	if (!f || fputs("0 0\n", f) < 0 || fclose(f))
		wl_fail("ping_group_range: %s", strerror(errno));
}

static void record(void)
{
	for (int i = 0; i < N_SK; i++) {
		sk[i].name_len = sizeof(sk[i].name);
		if (getsockname(sk[i].fd, (struct sockaddr *)&sk[i].name, &sk[i].name_len))
			wl_fail("socket %d: getsockname: %s", i, strerror(errno));
		sk[i].fl = fcntl(sk[i].fd, F_GETFL);
	}
}

static int intopt(int fd, int name)
{
	int v = -1;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, name, &v, &len))
		wl_fail("fd %d: getsockopt(%d): %s", fd, name, strerror(errno));
	return v;
}

static void check_kind(int fd, int family, int type, int proto, const char *what)
{
	if (intopt(fd, SO_DOMAIN) != family || intopt(fd, SO_TYPE) != type ||
	    intopt(fd, SO_PROTOCOL) != proto)
		wl_fail("%s: family %d type %d protocol %d, not %d %d %d", what,
			intopt(fd, SO_DOMAIN), intopt(fd, SO_TYPE), intopt(fd, SO_PROTOCOL), family,
			type, proto);
}

static void check_sockets(void)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char what[32];

	for (int i = 0; i < N_SK; i++) {
		snprintf(what, sizeof(what), "socket %d", i);
		check_kind(sk[i].fd, sk[i].family, sk[i].type, sk[i].proto, what);
		len = sizeof(ss);
		if (getsockname(sk[i].fd, (struct sockaddr *)&ss, &len) || len != sk[i].name_len ||
		    memcmp(&ss, &sk[i].name, len))
			wl_fail("socket %d: another address", i);
		if (fcntl(sk[i].fd, F_GETFL) != sk[i].fl)
			wl_fail("socket %d: status flags %#x, not %#x", i, fcntl(sk[i].fd, F_GETFL),
				sk[i].fl);
	}
	for (int v = 0; v < 2; v++)
		for (int p = 1; p < 256; p++) {
			snprintf(what, sizeof(what), "raw socket %s/%d", v ? "IPv6" : "IPv4", p);
			check_kind(storm[v][p], v ? AF_INET6 : AF_INET, SOCK_RAW, p, what);
		}
}

/* Socket 0's datagram, IP and UDP headers written here, from 127.0.0.12:8080 to 10. */
static void raw_udp(void)
{
	static const char data[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	unsigned char pkt[128] = {0}, got[128];
	struct iphdr *ip = (void *)pkt;
	struct udphdr *udp = (void *)(pkt + sizeof(*ip));
	struct sockaddr_storage to;
	socklen_t len;
	size_t n = sizeof(*ip) + sizeof(*udp) + sizeof(data) - 1;

	ip->ihl = 5;
	ip->version = 4;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	inet_pton(AF_INET, "127.0.0.12", &ip->saddr);
	inet_pton(AF_INET, "127.0.0.10", &ip->daddr);
	udp->source = htons(8080);
	udp->dest = htons(8081);
	udp->len = htons((uint16_t)(sizeof(*udp) + sizeof(data) - 1));
	memcpy(pkt + sizeof(*ip) + sizeof(*udp), data, sizeof(data) - 1);
	sa(AF_INET, "127.0.0.10", 0, &to, &len);
	if (sendto(sk[0].fd, pkt, n, 0, (struct sockaddr *)&to, len) != (ssize_t)n)
		wl_fail("socket 0: send: %s", strerror(errno));
	if (recv(sk[10].fd, got, sizeof(got), 0) != (ssize_t)(sizeof(data) - 1) ||
	    memcmp(got, data, sizeof(data) - 1))
		wl_fail("socket 10: socket 0's datagram did not come: %s", strerror(errno));
}

/* Socket 5 sends without an address (it is connected); 6 gets it. */
static void raw_connected(void)
{
	unsigned char got[128];
	ssize_t n;

	if (send(sk[5].fd, "crf", 3, 0) != 3)
		wl_fail("socket 5: send without an address: %s", strerror(errno));
	n = recv(sk[6].fd, got, sizeof(got), 0);
	if (n != (ssize_t)sizeof(struct iphdr) + 3 || memcmp(got + sizeof(struct iphdr), "crf", 3))
		wl_fail("socket 6: socket 5's packet did not come (%zd)", n);
}

/* Socket @i sends an echo request (to @addr unless connected); its reply comes. */
static void ping(int i, const char *addr, int ident)
{
	unsigned char req[16] = {0}, rep[64];
	struct sockaddr_storage to;
	struct sockaddr_in *in = (void *)&sk[i].name;
	socklen_t len;
	ssize_t n;
	bool v6 = sk[i].family == AF_INET6;

	req[0] = v6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO;
	memcpy(req + 8, "crf-ping", 8);
	if (addr) {
		sa(sk[i].family, addr, 0, &to, &len);
		n = sendto(sk[i].fd, req, sizeof(req), 0, (struct sockaddr *)&to, len);
	} else {
		n = send(sk[i].fd, req, sizeof(req), 0);
	}
	if (n != (ssize_t)sizeof(req))
		wl_fail("socket %d: echo request: %s", i, strerror(errno));
	n = recv(sk[i].fd, rep, sizeof(rep), 0);
	if (n != (ssize_t)sizeof(req) || rep[0] != (v6 ? ICMP6_ECHO_REPLY : ICMP_ECHOREPLY) ||
	    memcmp(rep + 8, "crf-ping", 8))
		wl_fail("socket %d: no echo reply (%zd): %s", i, n, strerror(errno));
	if (ident && ntohs(in->sin_port) != ident)
		wl_fail("socket %d: identifier %u, not %d", i, ntohs(in->sin_port), ident);
}

int main(int argc, char **argv)
{
	struct icmp_filter f4 = {.data = 1u << ICMP_TIMESTAMP};
	struct icmp6_filter f6 = {{0}};
	struct timeval tv = {.tv_sec = 1};
	int one = 1, csum = 2;
	bool queued = argc > 1 && !strcmp(argv[1], "queued");

	wl_init("rawping");
	wl_own_netns();
	ping_group();
	f6.icmp6_filt[0] = 1u << 13;
	make(0, AF_INET, SOCK_RAW, IPPROTO_UDP, "127.0.0.12", 8080);
	setopt(0, SOL_IP, IP_HDRINCL, &one, sizeof(one));
	if (fcntl(sk[0].fd, F_SETFL, O_NONBLOCK))
		wl_fail("O_NONBLOCK: %s", strerror(errno));
	make(1, AF_INET, SOCK_RAW, IPPROTO_ICMP, "127.0.0.14", 0);
	setopt(1, SOL_RAW, ICMP_FILTER, &f4, sizeof(f4));
	make(2, AF_INET6, SOCK_RAW, IPPROTO_ICMPV6, NULL, 0);
	setopt(2, SOL_ICMPV6, ICMP6_FILTER, &f6, sizeof(f6));
	make(3, AF_INET6, SOCK_RAW, PROTO_TEST, NULL, 0);
	setopt(3, SOL_IPV6, IPV6_CHECKSUM, &csum, sizeof(csum));
	make(4, AF_INET, SOCK_RAW, IPPROTO_RAW, NULL, 0);
	make(5, AF_INET, SOCK_RAW, PROTO_TEST, NULL, 0);
	connect_to(5, "127.0.0.1");
	make(6, AF_INET, SOCK_RAW, PROTO_TEST, "127.0.0.1", 0);
	make(7, AF_INET, SOCK_DGRAM, IPPROTO_ICMP, NULL, 0);
	setopt(7, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	make(8, AF_INET, SOCK_DGRAM, IPPROTO_ICMP, "127.0.0.1", 4242);
	connect_to(8, "127.0.0.1");
	make(9, AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6, "::1", 777);
	make(10, AF_INET, SOCK_DGRAM, IPPROTO_UDP, "127.0.0.10", 8081);
	for (int v = 0; v < 2; v++)
		for (int p = 1; p < 256; p++) {
			storm[v][p] = socket(v ? AF_INET6 : AF_INET, SOCK_RAW | SOCK_CLOEXEC, p);
			if (storm[v][p] < 0)
				wl_fail("raw socket %d/%d: %s", v, p, strerror(errno));
		}
	record();
	if (queued && send(sk[5].fd, "early", 5, 0) != 5)
		wl_fail("socket 5: send: %s", strerror(errno));
	wl_ready();
	wl_wait_verify();
	if (queued) {
		/* The refused dump left the packet where it was, in each queue. */
		int q[3] = {sk[5].fd, sk[6].fd, storm[0][PROTO_TEST]};
		unsigned char got[64];

		for (int i = 0; i < 3; i++)
			if (recv(q[i], got, sizeof(got), MSG_DONTWAIT) !=
				    (ssize_t)sizeof(struct iphdr) + 5 ||
			    memcmp(got + sizeof(struct iphdr), "early", 5))
				wl_fail("the packet queued before the refused dump is gone (%d)",
					i);
	}

	check_sockets();
	getopt_is(0, SOL_IP, IP_HDRINCL, &one, sizeof(one), "IP_HDRINCL");
	getopt_is(1, SOL_RAW, ICMP_FILTER, &f4, sizeof(f4), "ICMP_FILTER");
	getopt_is(2, SOL_ICMPV6, ICMP6_FILTER, &f6, sizeof(f6), "ICMP6_FILTER");
	getopt_is(3, SOL_IPV6, IPV6_CHECKSUM, &csum, sizeof(csum), "IPV6_CHECKSUM");
	getopt_is(7, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv), "SO_RCVTIMEO");
	raw_udp();
	raw_connected();
	ping(7, "127.0.0.1", 0);
	ping(8, NULL, 4242);
	ping(9, "::1", 777);
	wl_note("%d raw and ping sockets and %d more raw ones: kinds, addresses, options, "
		"and traffic as before",
		N_SK - 1, 2 * 255);
	return 0;
}
