// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-tun: tun/tap fds and their interfaces survive checkpoint and restore
 * (plugins/devices/tun*.c).  In crf's network namespace:
 *
 *   A  tap crftap7 (no_pi, vnet_hdr), owner 4242, sndbuf 123456, vnet
 *      header 12 bytes little-endian; MAC 02:c7:f0:00:00:01, MTU 1400,
 *      txqueuelen 77, promisc, IPv4 10.231.7.1/24, IPv6 off and arp_ignore
 *      2 (per-device sysctls), up
 *   B  tun crftun7, multi_queue, no_pi, two queues (B and B2, O_NONBLOCK),
 *      persistent off, down
 *   C  /dev/net/tun opened, never attached
 *
 * After the restore: each fd's TUNGETIFF flags, sndbuf, vnet header, the
 * interfaces' indexes, MTU, MAC, txqueuelen, flags, address and sysctls
 * are as they were, C is still unattached (TUNSETIFF works on it); and A
 * is the device's queue: a datagram sent to 10.231.7.2 makes the kernel
 * send an ARP request, read from A, from the MAC above.
 *
 * wl-tun queued: that ARP request is waiting in A at the dump, which must
 * be refused (a read takes it off); after the refused dump it is still
 * there.  wl-tun route: a route added by hand through crftap7, refused.
 */
#include "wl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/if_tun.h>

#define TAP "crftap7"
#define TUN "crftun7"

static const unsigned char mac[6] = {0x02, 0xc7, 0xf0, 0x00, 0x00, 0x01};

struct fd_state {
	int flags, sndbuf, hdrsz, le;
	char name[IFNAMSIZ];
};

struct if_state {
	int index, mtu, txqlen, flags;
	unsigned char mac[6];
	struct in_addr addr;
	char sysctl[2][16];
};

static int sk;

static int tun_open(const char *name, int flags, int oflags)
{
	struct ifreq ifr = {.ifr_flags = (short)flags};
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | oflags);

	WL_CHECK(fd >= 0, "/dev/net/tun: %s", strerror(errno));
	if (name) {
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
		WL_CHECK(!ioctl(fd, TUNSETIFF, &ifr), "TUNSETIFF %s: %s", name, strerror(errno));
	}
	return fd;
}

static void ifreq_call(unsigned long req, const char *what, struct ifreq *ifr)
{
	WL_CHECK(!ioctl(sk, req, ifr), "%s %s: %s", what, ifr->ifr_name, strerror(errno));
}

static struct ifreq ifreq_of(const char *name)
{
	struct ifreq ifr = {0};

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	return ifr;
}

static void write_sysctl(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	WL_CHECK(fd >= 0 && write(fd, v, strlen(v)) == (ssize_t)strlen(v), "%s: %s", path,
		 strerror(errno));
	close(fd);
}

static const char *const sysctls[2] = {
	"/proc/sys/net/ipv6/conf/" TAP "/disable_ipv6",
	"/proc/sys/net/ipv4/conf/" TAP "/arp_ignore",
};

static void setup_tap(void)
{
	struct ifreq ifr = ifreq_of(TAP);
	struct sockaddr_in *a = (struct sockaddr_in *)&ifr.ifr_addr;

	write_sysctl(sysctls[0], "1");
	write_sysctl(sysctls[1], "2");
	ifr.ifr_hwaddr.sa_family = 1; /* ARPHRD_ETHER */
	memcpy(ifr.ifr_hwaddr.sa_data, mac, 6);
	ifreq_call(SIOCSIFHWADDR, "SIOCSIFHWADDR", &ifr);
	ifr = ifreq_of(TAP);
	ifr.ifr_mtu = 1400;
	ifreq_call(SIOCSIFMTU, "SIOCSIFMTU", &ifr);
	ifr = ifreq_of(TAP);
	ifr.ifr_qlen = 77;
	ifreq_call(SIOCSIFTXQLEN, "SIOCSIFTXQLEN", &ifr);
	ifr = ifreq_of(TAP);
	a->sin_family = AF_INET;
	inet_pton(AF_INET, "10.231.7.1", &a->sin_addr);
	ifreq_call(SIOCSIFADDR, "SIOCSIFADDR", &ifr);
	inet_pton(AF_INET, "255.255.255.0", &a->sin_addr);
	ifreq_call(SIOCSIFNETMASK, "SIOCSIFNETMASK", &ifr);
	ifr = ifreq_of(TAP);
	ifreq_call(SIOCGIFFLAGS, "SIOCGIFFLAGS", &ifr);
	ifr.ifr_flags |= IFF_UP | IFF_PROMISC;
	ifreq_call(SIOCSIFFLAGS, "SIOCSIFFLAGS", &ifr);
}

static void read_fd(int fd, struct fd_state *s)
{
	struct ifreq ifr = {0};

	memset(s, 0, sizeof(*s));
	if (ioctl(fd, TUNGETIFF, &ifr) < 0) {
		WL_CHECK(errno == EBADFD, "TUNGETIFF: %s", strerror(errno));
		s->flags = -1;
		return;
	}
	s->flags = (unsigned short)ifr.ifr_flags;
	memcpy(s->name, ifr.ifr_name, sizeof(s->name));
	WL_CHECK(!ioctl(fd, TUNGETSNDBUF, &s->sndbuf) && !ioctl(fd, TUNGETVNETHDRSZ, &s->hdrsz) &&
			 !ioctl(fd, TUNGETVNETLE, &s->le),
		 "%s: TUNGET*: %s", s->name, strerror(errno));
}

static void read_if(const char *name, struct if_state *s)
{
	struct ifreq ifr = ifreq_of(name);

	memset(s, 0, sizeof(*s));
	s->index = (int)if_nametoindex(name);
	WL_CHECK(s->index > 0, "%s: no such interface", name);
	ifreq_call(SIOCGIFMTU, "SIOCGIFMTU", &ifr);
	s->mtu = ifr.ifr_mtu;
	ifreq_call(SIOCGIFTXQLEN, "SIOCGIFTXQLEN", &ifr);
	s->txqlen = ifr.ifr_qlen;
	ifreq_call(SIOCGIFFLAGS, "SIOCGIFFLAGS", &ifr);
	s->flags = ifr.ifr_flags;
	ifreq_call(SIOCGIFHWADDR, "SIOCGIFHWADDR", &ifr);
	memcpy(s->mac, ifr.ifr_hwaddr.sa_data, 6);
	if (strcmp(name, TAP))
		return;
	ifreq_call(SIOCGIFADDR, "SIOCGIFADDR", &ifr);
	s->addr = ((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr;
	for (int i = 0; i < 2; i++) {
		ssize_t n = wl_read_file(sysctls[i], s->sysctl[i], sizeof(s->sysctl[i]));

		WL_CHECK(n > 0, "%s: %s", sysctls[i], strerror(errno));
	}
}

/* Send a datagram to 10.231.7.2: the kernel asks who has it, out of the tap. */
static void provoke_arp(void)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(9)};
	int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, "10.231.7.2", &to.sin_addr);
	WL_CHECK(u >= 0 && sendto(u, "x", 1, 0, (struct sockaddr *)&to, sizeof(to)) == 1,
		 "sendto 10.231.7.2: %s", strerror(errno));
	close(u);
}

/* Read frames from the tap until the ARP request for 10.231.7.2 from our MAC. */
static void expect_arp(int fd)
{
	unsigned char buf[2048];
	static const unsigned char who[4] = {10, 231, 7, 2};

	for (int tries = 0; tries < 20; tries++) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		WL_CHECK(poll(&p, 1, 3000) == 1, "no frame out of " TAP " in 3 s");
		/* vnet header (12 bytes), then the Ethernet frame. */
		n = read(fd, buf, sizeof(buf));
		WL_CHECK(n >= 12 + 14 + 28, "read " TAP ": %s", n < 0 ? strerror(errno) : "short");
		if (buf[12 + 12] != 0x08 || buf[12 + 13] != 0x06)
			continue; /* not ARP */
		WL_CHECK(!memcmp(buf + 12 + 6, mac, 6), "the ARP request is not from our MAC");
		WL_CHECK(!memcmp(buf + 12 + 14 + 24, who, 4), "an ARP request for another address");
		return;
	}
	wl_fail("no ARP request for 10.231.7.2 out of " TAP);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	struct fd_state fb[4], fa[4];
	struct if_state ib[2], ia[2];
	int fds[4], owner = 4242, le = 1, hdrsz = 12, sndbuf = 123456;

	wl_init("tun");
	sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	WL_CHECK(sk >= 0, "socket: %s", strerror(errno));
	fds[0] = tun_open(TAP, IFF_TAP | IFF_NO_PI | IFF_VNET_HDR, 0);
	WL_CHECK(!ioctl(fds[0], TUNSETOWNER, owner) && !ioctl(fds[0], TUNSETSNDBUF, &sndbuf) &&
			 !ioctl(fds[0], TUNSETVNETHDRSZ, &hdrsz) &&
			 !ioctl(fds[0], TUNSETVNETLE, &le),
		 TAP ": TUNSET*: %s", strerror(errno));
	setup_tap();
	fds[1] = tun_open(TUN, IFF_TUN | IFF_NO_PI | IFF_MULTI_QUEUE, 0);
	fds[2] = tun_open(TUN, IFF_TUN | IFF_NO_PI | IFF_MULTI_QUEUE, O_NONBLOCK);
	fds[3] = tun_open(NULL, 0, 0);
	if (!strcmp(mode, "queued"))
		provoke_arp();
	if (!strcmp(mode, "route")) {
		struct rtentry rt = {0};
		struct sockaddr_in *dst = (struct sockaddr_in *)&rt.rt_dst;
		struct sockaddr_in *mask = (struct sockaddr_in *)&rt.rt_genmask;

		dst->sin_family = mask->sin_family = AF_INET;
		inet_pton(AF_INET, "10.99.0.0", &dst->sin_addr);
		inet_pton(AF_INET, "255.255.0.0", &mask->sin_addr);
		rt.rt_flags = RTF_UP;
		rt.rt_dev = (char *)TAP;
		WL_CHECK(!ioctl(sk, SIOCADDRT, &rt), "SIOCADDRT: %s", strerror(errno));
	}
	for (int i = 0; i < 4; i++)
		read_fd(fds[i], &fb[i]);
	read_if(TAP, &ib[0]);
	read_if(TUN, &ib[1]);
	WL_CHECK(fb[0].sndbuf == sndbuf && fb[0].hdrsz == 12 && fb[0].le == 1 &&
			 (ib[0].flags & IFF_PROMISC) && (ib[0].flags & IFF_UP),
		 "the set-up did not take");
	wl_ready();
	wl_wait_verify();

	if (strcmp(mode, "")) {
		if (!strcmp(mode, "queued"))
			expect_arp(fds[0]);
		wl_note("the refused dump left the devices as they were");
		return 0;
	}
	for (int i = 0; i < 4; i++) {
		read_fd(fds[i], &fa[i]);
		WL_CHECK(!memcmp(&fa[i], &fb[i], sizeof(fa[i])),
			 "fd %d: flags %#x sndbuf %d hdr %d le %d on '%s', were %#x %d %d %d '%s'",
			 i, fa[i].flags, fa[i].sndbuf, fa[i].hdrsz, fa[i].le, fa[i].name,
			 fb[i].flags, fb[i].sndbuf, fb[i].hdrsz, fb[i].le, fb[i].name);
	}
	read_if(TAP, &ia[0]);
	read_if(TUN, &ia[1]);
	for (int i = 0; i < 2; i++)
		WL_CHECK(!memcmp(&ia[i], &ib[i], sizeof(ia[i])),
			 "%s: index %d mtu %d txqlen %d flags %#x sysctls %s/%s, were %d %d %d %#x "
			 "%s/%s (or another MAC or address)",
			 i ? TUN : TAP, ia[i].index, ia[i].mtu, ia[i].txqlen, ia[i].flags,
			 ia[i].sysctl[0], ia[i].sysctl[1], ib[i].index, ib[i].mtu, ib[i].txqlen,
			 ib[i].flags, ib[i].sysctl[0], ib[i].sysctl[1]);
	{
		char path[64], buf[16] = "";

		snprintf(path, sizeof(path), "/sys/class/net/%s/owner", TAP);
		WL_CHECK(wl_read_file(path, buf, sizeof(buf)) > 0 && atoi(buf) == owner,
			 TAP ": owner %s, was %d", buf, owner);
	}
	provoke_arp();
	expect_arp(fds[0]);
	{
		struct ifreq ifr = {.ifr_flags = IFF_TUN | IFF_NO_PI};

		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "crftun7c");
		WL_CHECK(!ioctl(fds[3], TUNSETIFF, &ifr), "the unattached fd: TUNSETIFF: %s",
			 strerror(errno));
	}
	wl_note("tap and tun fds, their interfaces and an unattached fd as they were");
	return 0;
}
