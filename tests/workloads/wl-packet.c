// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-packet: packet sockets (AF_PACKET), in a net namespace of its own (so
 * that nothing of the host's lands in their queues), lo up:
 *
 *   0  SOCK_RAW, protocol 0 (receiving nothing), TPACKET_V2, PACKET_AUXDATA,
 *      a receive ring, a promisc membership on lo
 *   1  SOCK_DGRAM, ETH_P_IP, bound to lo, PACKET_RESERVE 8, PACKET_ORIGDEV,
 *      fanout group 13 (hash), a unicast membership on lo, a transmit ring
 *   2  SOCK_RAW, ETH_P_ALL, bound to lo, O_NONBLOCK, a classic BPF filter
 *      that takes the first 200 bytes, a multicast membership added twice
 *      and an allmulti one
 *   3  SOCK_RAW, ETH_P_ALL, TPACKET_V3 with a receive ring of 2 blocks
 *   4  SOCK_PACKET, ETH_P_ALL, bound to lo by name
 *   5  SOCK_DGRAM, ETH_P_IP, bound to lo, in socket 1's fanout group
 *
 * After the restore: each socket's address (getsockname), options, filter,
 * fanout and O_NONBLOCK are as they were; each membership is there as many
 * times as added (lo's promiscuity and allmulti counts and its multicast
 * address's users are as before, and 0 once they are dropped); the rings
 * are there (PACKET_VERSION is busy, the mapping has their size); traffic
 * on lo reaches socket 2 cut to 200 bytes, socket 4, and socket 3's ring,
 * in its first block.
 *
 * wl-packet queued: socket 2 has a packet waiting at the dump: refused.
 * wl-packet mapped: the workload has socket 0's ring mapped: refused (the
 * mem plugin restores no mapping of a socket).
 */
#include "wl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/ethernet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/if_packet.h>

#define N_SK 6
#define CUT  200

static int sk[N_SK];
static struct sockaddr_ll names[N_SK]; /* zeroed: the kernel writes a part */
static socklen_t name_len[N_SK];
static struct sockaddr spkt_name;
static int fl[N_SK];
static const unsigned char mc_addr[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb};
static struct sock_filter cut = BPF_STMT(BPF_RET | BPF_K, CUT);

static void setint(int i, int name, int v)
{
	if (setsockopt(sk[i], SOL_PACKET, name, &v, sizeof(v)))
		wl_fail("socket %d: setsockopt(SOL_PACKET, %d, %d): %s", i, name, v,
			strerror(errno));
}

static int getint(int i, int name)
{
	int v = -1;
	socklen_t len = sizeof(v);

	if (getsockopt(sk[i], SOL_PACKET, name, &v, &len))
		wl_fail("socket %d: getsockopt(SOL_PACKET, %d): %s", i, name, strerror(errno));
	return v;
}

static void bind_lo(int i, int proto)
{
	struct sockaddr_ll ll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons((uint16_t)proto),
		.sll_ifindex = 1,
	};

	if (bind(sk[i], (struct sockaddr *)&ll, sizeof(ll)))
		wl_fail("socket %d: bind to lo: %s", i, strerror(errno));
}

static struct packet_mreq mreq(int type, const unsigned char *addr, int alen)
{
	struct packet_mreq m = {
		.mr_ifindex = 1, .mr_type = (unsigned short)type, .mr_alen = (unsigned short)alen};

	if (addr)
		memcpy(m.mr_address, addr, (size_t)alen);
	return m;
}

static void member(int i, struct packet_mreq m, bool add)
{
	if (setsockopt(sk[i], SOL_PACKET, add ? PACKET_ADD_MEMBERSHIP : PACKET_DROP_MEMBERSHIP, &m,
		       sizeof(m)))
		wl_fail("socket %d: %s membership of type %d: %s", i, add ? "add" : "drop",
			m.mr_type, strerror(errno));
}

/* lo's promiscuity and allmulti counts, as ip -d link tells them. */
static void lo_counts(int *promisc, int *allmulti)
{
	FILE *p = popen("ip -d link show lo", "r");
	char line[1024], *at;

	*promisc = *allmulti = -1;
	while (p && fgets(line, sizeof(line), p)) {
		if ((at = strstr(line, "promiscuity ")))
			sscanf(at, "promiscuity %d", promisc);
		if ((at = strstr(line, "allmulti ")))
			sscanf(at, "allmulti %d", allmulti);
	}
	if (!p || pclose(p) != 0 || *promisc < 0 || *allmulti < 0)
		wl_fail("ip -d link show lo: no promiscuity or allmulti count");
}

/*
 * The users of lo's multicast address mc_addr (/proc/net/dev_mcast), 0: not
 * there.  Each socket counts once, however often it added it.
 */
static int mc_users(void)
{
	FILE *f = fopen("/proc/net/dev_mcast", "re");
	char name[32], addr[64];
	int idx, users, global, n = 0;

	while (f && fscanf(f, "%d %31s %d %d %63s", &idx, name, &users, &global, addr) == 5)
		if (!strcmp(name, "lo") && !strcmp(addr, "01005e0000fb"))
			n = users;
	if (!f)
		wl_fail("/proc/net/dev_mcast: %s", strerror(errno));
	fclose(f);
	return n;
}

static void ring(int i, int name, unsigned bsize, unsigned bnr, unsigned fsize, bool v3)
{
	struct tpacket_req3 r = {
		.tp_block_size = bsize,
		.tp_block_nr = bnr,
		.tp_frame_size = fsize,
		.tp_frame_nr = bsize / fsize * bnr,
		.tp_retire_blk_tov = v3 ? 10 : 0,
	};

	if (setsockopt(sk[i], SOL_PACKET, name, &r, v3 ? sizeof(r) : sizeof(struct tpacket_req)))
		wl_fail("socket %d: ring %d: %s", i, name, strerror(errno));
}

/* Socket @i has rings of @size bytes in all: a mapping of that size, not one page more. */
static void check_rings(int i, size_t size)
{
	void *p = mmap(NULL, size + 4096, PROT_READ, MAP_SHARED, sk[i], 0);

	if (p != MAP_FAILED)
		wl_fail("socket %d: its rings are larger than %zu bytes", i, size);
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, sk[i], 0);
	if (p == MAP_FAILED)
		wl_fail("socket %d: its rings are not %zu bytes: %s", i, size, strerror(errno));
	munmap(p, size);
	if (!setsockopt(sk[i], SOL_PACKET, PACKET_VERSION, &(int){TPACKET_V1}, sizeof(int)))
		wl_fail("socket %d: PACKET_VERSION is not busy: no ring", i);
}

static void record(void)
{
	for (int i = 0; i < N_SK; i++) {
		name_len[i] = i == 4 ? sizeof(spkt_name) : sizeof(names[i]);
		if (getsockname(sk[i], i == 4 ? &spkt_name : (struct sockaddr *)&names[i],
				&name_len[i]))
			wl_fail("socket %d: getsockname: %s", i, strerror(errno));
		fl[i] = fcntl(sk[i], F_GETFL);
	}
}

static void check_names(void)
{
	for (int i = 0; i < N_SK; i++) {
		struct sockaddr_ll ll = {0};
		struct sockaddr spkt = {0};
		socklen_t len = i == 4 ? sizeof(spkt) : sizeof(ll);

		/* The kernel writes as many bytes as it says: those are compared. */
		if (getsockname(sk[i], i == 4 ? &spkt : (struct sockaddr *)&ll, &len))
			wl_fail("socket %d: getsockname: %s", i, strerror(errno));
		if (len != name_len[i] ||
		    (i == 4 ? memcmp(&spkt, &spkt_name, len) : memcmp(&ll, &names[i], len)))
			wl_fail("socket %d: another address", i);
		if (fcntl(sk[i], F_GETFL) != fl[i])
			wl_fail("socket %d: status flags %#x, not %#x", i, fcntl(sk[i], F_GETFL),
				fl[i]);
	}
}

/* A UDP datagram of @len bytes over lo. */
static void traffic(size_t len)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(9)};
	static char buf[1000];
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)) != (ssize_t)len)
		wl_fail("a datagram over lo: %s", strerror(errno));
	close(fd);
}

static void check_traffic(void)
{
	unsigned char buf[2000];
	struct tpacket_block_desc *b;
	ssize_t n;
	void *map;

	traffic(800);
	usleep(100000);
	n = recv(sk[2], buf, sizeof(buf), 0);
	if (n != CUT)
		wl_fail("socket 2: a packet of %zd bytes, not cut to %d by its filter: %s", n, CUT,
			strerror(errno));
	n = recv(sk[4], buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 800)
		wl_fail("socket 4 (SOCK_PACKET): no packet (%zd): %s", n, strerror(errno));
	map = mmap(NULL, 2 * 4096, PROT_READ, MAP_SHARED, sk[3], 0);
	if (map == MAP_FAILED)
		wl_fail("socket 3: mapping its ring: %s", strerror(errno));
	b = map;
	if (!(b->hdr.bh1.block_status & TP_STATUS_USER) || !b->hdr.bh1.num_pkts)
		wl_fail("socket 3: no packet in the first block of its ring (status %#x)",
			b->hdr.bh1.block_status);
	munmap(map, 2 * 4096);
}

int main(int argc, char **argv)
{
	struct sock_fprog prog = {.len = 1, .filter = &cut};
	struct sockaddr spkt = {.sa_family = AF_PACKET};
	const char *mode = argc > 1 ? argv[1] : "";
	struct sock_filter got[2];
	unsigned char pkt[2000];
	socklen_t len;
	void *mapped = NULL;
	int promisc, allmulti, users, n_promisc, n_allmulti;

	wl_init("packet");
	wl_own_netns();
	sk[0] = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	sk[1] = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_IP));
	sk[2] = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	sk[3] = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	sk[4] = socket(AF_PACKET, SOCK_PACKET | SOCK_CLOEXEC, htons(ETH_P_ALL));
	sk[5] = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_IP));
	for (int i = 0; i < N_SK; i++)
		if (sk[i] < 0)
			wl_fail("socket %d: %s", i, strerror(errno));
	setint(0, PACKET_VERSION, TPACKET_V2);
	setint(0, PACKET_AUXDATA, 1);
	ring(0, PACKET_RX_RING, 4096, 1, 1024, false);
	member(0, mreq(PACKET_MR_PROMISC, NULL, 0), true);
	bind_lo(1, 0);
	setint(1, PACKET_RESERVE, 8);
	setint(1, PACKET_ORIGDEV, 1);
	setint(1, PACKET_FANOUT, 13);
	member(1, mreq(PACKET_MR_UNICAST, NULL, 6), true);
	ring(1, PACKET_TX_RING, 4096, 1, 1024, false);
	bind_lo(2, ETH_P_ALL);
	if (setsockopt(sk[2], SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)))
		wl_fail("socket 2: SO_ATTACH_FILTER: %s", strerror(errno));
	member(2, mreq(PACKET_MR_MULTICAST, mc_addr, 6), true);
	member(2, mreq(PACKET_MR_MULTICAST, mc_addr, 6), true);
	member(2, mreq(PACKET_MR_ALLMULTI, NULL, 0), true);
	if (fcntl(sk[2], F_SETFL, O_NONBLOCK))
		wl_fail("O_NONBLOCK: %s", strerror(errno));
	setint(3, PACKET_VERSION, TPACKET_V3);
	ring(3, PACKET_RX_RING, 4096, 2, 2048, true);
	memcpy(spkt.sa_data, "lo", 3);
	if (bind(sk[4], &spkt, sizeof(spkt)))
		wl_fail("socket 4: bind to lo: %s", strerror(errno));
	bind_lo(5, 0);
	setint(5, PACKET_FANOUT, 13);
	record();
	lo_counts(&promisc, &allmulti);
	users = mc_users();
	if (promisc < 2 || allmulti < 1 || users != 1)
		wl_fail("lo: promiscuity %d, allmulti %d, multicast address added %d times: "
			"the memberships did not take",
			promisc, allmulti, users);
	if (!strcmp(mode, "mapped")) {
		mapped = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, sk[0], 0);
		if (mapped == MAP_FAILED)
			wl_fail("socket 0: mapping its ring: %s", strerror(errno));
	}
	if (!strcmp(mode, "queued")) {
		traffic(100);
		usleep(50000);
	}
	wl_ready();
	wl_wait_verify();
	if (strcmp(mode, "")) {
		/* After the refused dump: the sockets as they were, the packet still queued
		 * (100 bytes of UDP over IPv4 over Ethernet). */
		check_names();
		if (!strcmp(mode, "queued") && recv(sk[2], pkt, sizeof(pkt), MSG_DONTWAIT) != 142)
			wl_fail("socket 2: the packet queued before the refused dump is gone");
		wl_note("the packet sockets are as they were after the refused dump");
		return 0;
	}

	check_names();
	if (getint(0, PACKET_VERSION) != TPACKET_V2 || getint(0, PACKET_AUXDATA) != 1)
		wl_fail("socket 0: PACKET_VERSION or PACKET_AUXDATA not as set");
	if (getint(1, PACKET_RESERVE) != 8 || getint(1, PACKET_ORIGDEV) != 1)
		wl_fail("socket 1: PACKET_RESERVE or PACKET_ORIGDEV not as set");
	if (getint(1, PACKET_FANOUT) != 13 || getint(5, PACKET_FANOUT) != 13)
		wl_fail("sockets 1 and 5: fanout %#x and %#x, not group 13",
			getint(1, PACKET_FANOUT), getint(5, PACKET_FANOUT));
	if (getint(3, PACKET_VERSION) != TPACKET_V3)
		wl_fail("socket 3: PACKET_VERSION not as set");
	len = 2;
	if (getsockopt(sk[2], SOL_SOCKET, SO_GET_FILTER, got, &len) || len != 1 ||
	    memcmp(got, &cut, sizeof(cut)))
		wl_fail("socket 2: its filter is not the one attached");
	check_traffic();
	check_rings(0, 4096);
	check_rings(1, 4096);
	check_rings(3, 2 * 4096);
	/* Each membership as many times as added: lo's counts as they were, down to 0 when dropped.
	 */
	lo_counts(&n_promisc, &n_allmulti);
	if (n_promisc != promisc || n_allmulti != allmulti || mc_users() != users)
		wl_fail("lo: promiscuity %d, allmulti %d, multicast address added %d times, "
			"not %d, %d, %d",
			n_promisc, n_allmulti, mc_users(), promisc, allmulti, users);
	member(0, mreq(PACKET_MR_PROMISC, NULL, 0), false);
	member(1, mreq(PACKET_MR_UNICAST, NULL, 6), false);
	/* Added twice to one socket: the address stays after the first drop. */
	member(2, mreq(PACKET_MR_MULTICAST, mc_addr, 6), false);
	if (mc_users() != 1)
		wl_fail("socket 2: its multicast membership was there once, not twice");
	member(2, mreq(PACKET_MR_MULTICAST, mc_addr, 6), false);
	member(2, mreq(PACKET_MR_ALLMULTI, NULL, 0), false);
	lo_counts(&n_promisc, &n_allmulti);
	if (n_promisc || n_allmulti || mc_users())
		wl_fail("lo: promiscuity %d, allmulti %d, multicast address added %d times "
			"once the memberships are dropped",
			n_promisc, n_allmulti, mc_users());
	wl_note("%d packet sockets: addresses, options, filter, fanout, memberships, rings and "
		"traffic as before",
		N_SK);
	return 0;
}
