// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-netns MODE: a process in a network namespace of its own, set up with
 * ip(8) and nft(8) (so that what it checks is what an operator sees):
 *
 *   lo        lo with another MTU and queue length, up, IPv4 addresses
 *             (a label, a peer) and an IPv6 one, routes in the main table
 *             and table 100 (through a gateway, a blackhole, an
 *             unreachable, metrics, a protocol), sysctls (the common ones
 *             and others: conf/lo/ unlike conf/all/, neigh/lo/, the TCP
 *             fastopen key...), an nftables table; a TCP listener and a
 *             UDP socket bound to its addresses
 *   veth      as a container runtime makes it: a veth pair, eth0 in the
 *             namespace and crfwlh0 in the host's, a port of the bridge
 *             crfwlbr0 (10.88.0.1/24, fd00:88::1/64; tests/e2e/netns-veth.sh
 *             makes it and removes all on exit), MACs, MTUs, addresses and
 *             default routes inside; a child left in the host's namespace
 *             holds a UDP socket on 10.88.0.1: after the restore the
 *             process sends it a datagram across the veth, and it answers
 *   vxlan     a vxlan link in it (refused: kind vxlan)
 *   bridge    a bridge in it (refused: kind bridge)
 *   veth-inside  a veth pair both of whose ends are in it (refused)
 *   veth-neigh   veth's setup and a permanent neighbour entry (refused)
 *   veth-noarp, veth-managed, veth-extern  veth's setup and a neighbour
 *             entry added by hand: noarp to a unicast address, managed,
 *             stale with extern_learn (refused)
 *   veth-peer-gso  veth's setup, the host's end with a gso_max_size of its
 *             own (refused)
 *   rule      a routing rule of its own (refused)
 *   rule-hidden  the main table's rule replaced by one with a uid range
 *             (refused)
 *   tcp       a TCP connection over lo inside it (refused with
 *             --tcp-established: the network lock is crf's namespace's)
 *   lifetime  an address with a lifetime (refused)
 *   qdisc     a tc qdisc of its own on lo (refused)
 *   proxy     a proxy neighbour entry on lo (refused)
 *   link-gso, link-multicast, link-altname  lo with an attribute the
 *             restore does not set: gso_max_size, the multicast flag, an
 *             alternative name (refused)
 *   xfrm      an IPsec (xfrm) policy (refused)
 *   xfrm-default  a default xfrm policy of block (refused)
 *   xfrm-hthresh  xfrm policy hash thresholds of its own (refused)
 *   userns    lo with an address and sysctls, in a net namespace a user
 *             namespace of its own owns (ping_group_range, whose gids read
 *             as the reader's user namespace sees them, is its default)
 *   sysctl-ro a read-only sysctl that differs from a fresh namespace's:
 *             tcp_ehash_entries, the host's tcp_child_ehash_entries (set
 *             for our namespace, then back) at its making (refused)
 *
 * Before the dump it takes a snapshot: ip -d link, ip addr, the routes of
 * every table, the rules, nft list ruleset and every readable file of
 * /proc/sys/net (but nf_conntrack_count);
 * after the restore (or the refused dump) the same commands must print the
 * same text, byte for byte, and the sockets must work: the listener
 * accepts a connection, the UDP socket receives a datagram.
 */
#include "wl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <ftw.h>
#include <sys/wait.h>
#include <unistd.h>

#define SNAP_MAX (256 * 1024)
#define TCP_PORT 7777
#define UDP_PORT 7778

static const char *mode;
static pid_t udp_child = -1;
static char before[SNAP_MAX], after[SNAP_MAX];
static int listener = -1, udp = -1, conn[2] = {-1, -1};

static void sh(const char *cmd)
{
	int r = system(cmd);

	if (r != 0)
		wl_fail("'%s' exited with %d", cmd, r);
}

/* The output of @cmd appended to @buf (at *@at). */
static void capture(const char *cmd, char *buf, size_t *at)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	if (!p)
		wl_fail("popen %s: %m", cmd);
	*at += (size_t)snprintf(buf + *at, SNAP_MAX - *at, "$ %s\n", cmd);
	while (*at < SNAP_MAX - 1 && (n = fread(buf + *at, 1, SNAP_MAX - 1 - *at, p)) > 0)
		*at += n;
	buf[*at] = '\0';
	if (pclose(p) != 0)
		wl_fail("'%s' failed", cmd);
}

/* @cmd in the host's namespace, from a child that enters it; its output appended if @buf. */
static void sh_host(const char *cmd, char *buf, size_t *at)
{
	char full[1024];

	snprintf(full, sizeof(full), "nsenter --net=/proc/%d/ns/net sh -c '%s'", (int)getppid(),
		 cmd);
	if (buf)
		capture(full, buf, at);
	else
		sh(full);
}

/* Every readable file of /proc/sys/net but counters, "PATH = VALUE", sorted. */
static char *sysctl_lines[2048];
static size_t n_sysctl_lines;

static int sysctl_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char value[4096], line[4400];
	ssize_t n;

	(void)ftw;
	if (type != FTW_F || !(st->st_mode & 0444) || strstr(path, "nf_conntrack_count"))
		return 0;
	n = wl_read_file(path, value, sizeof(value));
	if (n < 0)
		snprintf(value, sizeof(value), "(%s)\n", strerror((int)-n));
	snprintf(line, sizeof(line), "%s = %s", path, value);
	if (n_sysctl_lines == sizeof(sysctl_lines) / sizeof(sysctl_lines[0]) ||
	    !(sysctl_lines[n_sysctl_lines++] = strdup(line)))
		wl_fail("too many sysctls");
	return 0;
}

static int by_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void snapshot_sysctls(char *buf, size_t *at)
{
	n_sysctl_lines = 0;
	if (nftw("/proc/sys/net", sysctl_one, 16, FTW_PHYS) != 0)
		wl_fail("walking /proc/sys/net: %m");
	qsort(sysctl_lines, n_sysctl_lines, sizeof(*sysctl_lines), by_line);
	*at += (size_t)snprintf(buf + *at, SNAP_MAX - *at, "$ /proc/sys/net\n");
	for (size_t i = 0; i < n_sysctl_lines; i++) {
		*at += (size_t)snprintf(buf + *at, SNAP_MAX - *at, "%s", sysctl_lines[i]);
		free(sysctl_lines[i]);
	}
	if (*at >= SNAP_MAX - 1)
		wl_fail("snapshot too large");
}

static void snapshot(char *buf)
{
	static const char *const cmds[] = {
		"ip -d link show",
		"ip addr show",
		"ip route show table all",
		"ip -6 route show table all",
		"ip rule show",
		"ip -6 rule show",
		"nft list ruleset",
	};
	size_t at = 0;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		/* An address with a lifetime shows it counting down. */
		if (!strcmp(mode, "lifetime") && i == 1)
			continue;
		capture(cmds[i], buf, &at);
	}
	/* From outside: the host's end is back, in its bridge, with its address. */
	if (!strcmp(mode, "veth"))
		sh_host("ip -br link show crfwlh0; ip -br addr show crfwlh0; "
			"bridge link show dev crfwlh0",
			buf, &at);
	snapshot_sysctls(buf, &at);
}

static void write_sysctl(const char *name, const char *value)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "echo '%s' > /proc/sys/net/%s", value, name);
	sh(cmd);
}

static void setup_lo(void)
{
	sh("ip link set lo mtu 16384 txqueuelen 500 up");
	sh("ip addr add 10.77.0.1/24 dev lo label lo:crf");
	sh("ip addr add 10.77.1.1 peer 10.77.1.2/32 dev lo");
	sh("ip addr add fd00:77::1/64 dev lo");
	sh("ip route add 10.78.0.0/16 via 10.77.0.2 dev lo metric 20 proto static");
	sh("ip route add default dev lo table 100 metric 5");
	sh("ip route add blackhole 10.79.0.0/16");
	sh("ip -6 route add fd00:78::/64 dev lo metric 7");
	sh("ip -6 route add unreachable fd00:79::/64");
	write_sysctl("ipv4/ip_forward", "1");
	write_sysctl("core/somaxconn", "777");
	write_sysctl("ipv4/ip_unprivileged_port_start", "80");
	write_sysctl("ipv4/ping_group_range", "0 2147483647");
	write_sysctl("ipv4/ip_local_port_range", "20000 30000");
	write_sysctl("ipv4/tcp_keepalive_time", "600");
	write_sysctl("ipv4/conf/default/rp_filter", "1");
	write_sysctl("ipv4/conf/lo/rp_filter", "2");
	write_sysctl("ipv6/conf/all/forwarding", "1");
	/*
	 * Beyond the common list: values a write to all/ or default/ would
	 * change again (lo's forwarding back to 0), a neighbour table's, the
	 * TCP fastopen key, a stable secret (unreadable while unset), units
	 * that alias (base_reachable_time and its _ms).
	 */
	write_sysctl("ipv4/conf/lo/forwarding", "0");
	write_sysctl("ipv6/conf/lo/forwarding", "0");
	write_sysctl("ipv4/conf/default/arp_ignore", "2");
	write_sysctl("ipv4/conf/lo/arp_announce", "1");
	write_sysctl("ipv6/conf/default/hop_limit", "33");
	write_sysctl("ipv6/conf/lo/stable_secret", "fd00::1:2:3:4");
	write_sysctl("ipv4/neigh/lo/base_reachable_time_ms", "12345");
	write_sysctl("ipv6/neigh/lo/gc_stale_time", "77");
	write_sysctl("ipv4/tcp_fastopen_key", "00000001-00000002-00000003-00000004");
	write_sysctl("ipv4/ip_local_reserved_ports", "7000-7010");
	write_sysctl("unix/max_dgram_qlen", "99");
	sh("nft add table inet crfwl && "
	   "nft add chain inet crfwl in '{ type filter hook input priority 0; policy accept; }' && "
	   "nft add rule inet crfwl in tcp dport 9 counter drop");
}

static void sa4(struct sockaddr_in *a, const char *ip, int port)
{
	*a = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(port)};
	inet_pton(AF_INET, ip, &a->sin_addr);
}

static void sa6(struct sockaddr_in6 *a, const char *ip, int port)
{
	*a = (struct sockaddr_in6){.sin6_family = AF_INET6, .sin6_port = htons(port)};
	inet_pton(AF_INET6, ip, &a->sin6_addr);
}

static void sockets(void)
{
	struct sockaddr_in a;
	struct sockaddr_in6 b;
	int one = 1;

	sa4(&a, "10.77.0.1", TCP_PORT);
	listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listener < 0 || setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(listener, (void *)&a, sizeof(a)) || listen(listener, 8))
		wl_fail("TCP listener on 10.77.0.1: %m");
	sa6(&b, "fd00:77::1", UDP_PORT);
	udp = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (udp < 0 || bind(udp, (void *)&b, sizeof(b)))
		wl_fail("UDP socket on fd00:77::1: %m");
}

static void check_sockets(void)
{
	struct sockaddr_in a;
	struct sockaddr_in6 b;
	char got[16] = "";
	int c, s, d;

	sa4(&a, "10.77.0.1", TCP_PORT);
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	WL_CHECK(c >= 0 && connect(c, (void *)&a, sizeof(a)) == 0,
		 "connect to the listener on 10.77.0.1: %m");
	s = accept(listener, NULL, NULL);
	WL_CHECK(s >= 0 && write(c, "hello", 5) == 5 && read(s, got, sizeof(got)) == 5 &&
			 !memcmp(got, "hello", 5),
		 "the accepted connection: %m");
	close(c);
	close(s);
	sa6(&b, "fd00:77::1", UDP_PORT);
	d = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	WL_CHECK(d >= 0 && sendto(d, "ping", 4, 0, (void *)&b, sizeof(b)) == 4,
		 "send to fd00:77::1: %m");
	WL_CHECK(recv(udp, got, sizeof(got), 0) == 4 && !memcmp(got, "ping", 4),
		 "the UDP socket received nothing: %m");
	close(d);
}

/* A child in the host's namespace: answers one datagram on 10.88.0.1. */
static void host_udp(void)
{
	struct sockaddr_in a, from;
	socklen_t len = sizeof(from);
	char got[16];
	int s, p[2];

	if (pipe(p) < 0)
		wl_fail("pipe: %m");
	udp_child = fork();
	if (udp_child < 0)
		wl_fail("fork: %m");
	if (udp_child > 0) {
		close(p[1]);
		if (read(p[0], got, 1) != 1)
			wl_fail("the host's UDP child did not start");
		close(p[0]);
		return;
	}
	close(p[0]);
	sa4(&a, "10.88.0.1", UDP_PORT);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || bind(s, (void *)&a, sizeof(a)) || write(p[1], "r", 1) != 1)
		_exit(2);
	close(p[1]);
	if (recvfrom(s, got, sizeof(got), 0, (void *)&from, &len) != 4 || memcmp(got, "ping", 4) ||
	    sendto(s, "pong", 4, 0, (void *)&from, len) != 4)
		_exit(3);
	_exit(0);
}

static void setup_veth(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "ip link add crfwlh0 mtu 1400 address 02:00:00:00:88:01 numtxqueues 2 "
		 "numrxqueues 3 type veth peer name eth0 mtu 1400 address 02:00:00:00:88:02 "
		 "numtxqueues 3 numrxqueues 2 netns %d && "
		 "ip link set crfwlh0 master crfwlbr0 up",
		 (int)getpid());
	sh_host(cmd, NULL, NULL);
	sh("ip link set lo up && ip link set eth0 up && "
	   "ip addr add 10.88.0.2/24 dev eth0 && ip addr add fd00:88::2/64 dev eth0 nodad && "
	   "ip route add default via 10.88.0.1 && ip -6 route add default via fd00:88::1 metric "
	   "50");
	write_sysctl("ipv4/conf/eth0/rp_filter", "2");
	write_sysctl("ipv6/conf/eth0/accept_ra", "0");
	write_sysctl("ipv4/neigh/eth0/retrans_time_ms", "1500");
	/* The link-local addresses' duplicate address detection, both ends. */
	for (int i = 0; i < 500; i++) {
		char out[4096] = "";
		size_t at = 0;

		capture("ip -6 addr show tentative", out, &at);
		sh_host("ip -6 addr show dev crfwlh0 tentative", out, &at);
		if (!strstr(out, "inet6"))
			return;
		usleep(10000);
	}
	wl_fail("the link-local addresses stay tentative");
}

static void check_veth(void)
{
	struct sockaddr_in a;
	char got[8] = "";
	int s, status;

	sa4(&a, "10.88.0.1", UDP_PORT);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	WL_CHECK(s >= 0 && sendto(s, "ping", 4, 0, (void *)&a, sizeof(a)) == 4,
		 "send to 10.88.0.1 across the veth: %m");
	WL_CHECK(recv(s, got, sizeof(got), 0) == 4 && !memcmp(got, "pong", 4),
		 "no answer from 10.88.0.1 across the veth: %m");
	close(s);
	WL_CHECK(waitpid(udp_child, &status, 0) == udp_child && WIFEXITED(status) &&
			 WEXITSTATUS(status) == 0,
		 "the host's UDP child: status %#x", status);
}

/* A connection both of whose ends are in the namespace, over lo. */
static void setup_tcp(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int one = 1;

	sh("ip link set lo up");
	sa4(&a, "127.0.0.1", 0);
	listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listener < 0 || setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(listener, (void *)&a, sizeof(a)) || listen(listener, 8) ||
	    getsockname(listener, (void *)&a, &len))
		wl_fail("TCP listener: %m");
	conn[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (conn[0] < 0 || connect(conn[0], (void *)&a, sizeof(a)) ||
	    (conn[1] = accept(listener, NULL, NULL)) < 0)
		wl_fail("TCP connection: %m");
}

static void check_tcp(void)
{
	char got[8] = "";

	WL_CHECK(write(conn[0], "abc", 3) == 3 && read(conn[1], got, sizeof(got)) == 3 &&
			 !memcmp(got, "abc", 3),
		 "the connection over lo: %m");
}

/*
 * A user namespace of our own, root in it mapped to root, made before the
 * net namespace, which it then owns: what its sysctls read (the gids of
 * ping_group_range) is what that namespace sees.
 */
static void own_userns(void)
{
	char path[64];
	int fd;

	if (unshare(CLONE_NEWUSER) < 0)
		wl_fail("unshare(CLONE_NEWUSER): %m");
	for (int i = 0; i < 3; i++) {
		static const char *const files[] = {"setgroups", "uid_map", "gid_map"};
		const char *text = i ? "0 0 1" : "deny";

		snprintf(path, sizeof(path), "/proc/self/%s", files[i]);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
			wl_fail("%s: %m", path);
		close(fd);
	}
}

/*
 * The host's tcp_child_ehash_entries, the size of the TCP hash table of a
 * namespace it makes: 128 for ours (@set), then back as it was, through
 * the fd opened in the host's namespace.  Ours then has a read-only
 * tcp_ehash_entries that a fresh one does not.
 */
static void child_ehash(bool set)
{
	static char old[32];
	static int fd = -1;
	ssize_t n;

	if (set) {
		fd = open("/proc/sys/net/ipv4/tcp_child_ehash_entries", O_RDWR | O_CLOEXEC);
		if (fd < 0 || (n = read(fd, old, sizeof(old) - 1)) <= 0)
			wl_fail("tcp_child_ehash_entries: %m");
		old[n] = '\0';
	}
	if (lseek(fd, 0, SEEK_SET) < 0 || (set && write(fd, "128", 3) != 3) ||
	    (!set && write(fd, old, strlen(old)) != (ssize_t)strlen(old)))
		wl_fail("writing tcp_child_ehash_entries: %m");
	if (!set)
		close(fd);
}

/* Fail naming the first line that differs, and the command it came from. */
static _Noreturn void differs(void)
{
	size_t at = 0, line = 0, cmd = 0;

	while (before[at] && before[at] == after[at]) {
		if (before[at] == '\n') {
			line = at + 1;
			if (before[line] == '$')
				cmd = line;
		}
		at++;
	}
	wl_fail("the namespace differs after '%.*s': before '%.*s', after '%.*s'",
		(int)strcspn(before + cmd, "\n"), before + cmd, (int)strcspn(before + line, "\n"),
		before + line, (int)strcspn(after + line, "\n"), after + line);
}

int main(int argc, char **argv)
{
	wl_init("netns");
	if (argc != 2)
		wl_fail("usage: wl-netns "
			"lo|veth|veth-neigh|veth-noarp|veth-managed|veth-peer-gso|veth-extern|"
			"vxlan|bridge|veth-"
			"inside|"
			"rule|rule-hidden|tcp|lifetime|qdisc|proxy|sysctl-"
			"ro");
	mode = argv[1];
	if (!strcmp(mode, "veth"))
		host_udp();
	if (!strcmp(mode, "sysctl-ro"))
		child_ehash(true);
	if (!strcmp(mode, "userns"))
		own_userns();
	if (unshare(CLONE_NEWNET) < 0)
		wl_fail("unshare(CLONE_NEWNET): %m");
	if (!strcmp(mode, "sysctl-ro"))
		child_ehash(false);
	if (!strcmp(mode, "lo")) {
		setup_lo();
		sockets();
	} else if (!strcmp(mode, "veth")) {
		setup_veth();
	} else if (!strcmp(mode, "vxlan")) {
		sh("ip link set lo up && ip link add crfvx0 type vxlan id 42 dstport 4789");
	} else if (!strcmp(mode, "veth-neigh")) {
		setup_veth();
		sh("ip neigh add 10.88.0.9 lladdr 02:00:00:00:88:09 dev eth0 nud permanent");
	} else if (!strcmp(mode, "userns")) {
		sh("ip link set lo up && ip addr add 10.77.0.1/24 dev lo");
		/* ping_group_range left as it is: "1 0", which reads "65534 0" in here. */
		write_sysctl("core/somaxconn", "555");
		write_sysctl("ipv4/conf/lo/arp_announce", "2");
	} else if (!strcmp(mode, "bridge")) {
		sh("ip link set lo up && ip link add crfbr1 type bridge");
	} else if (!strcmp(mode, "veth-noarp")) {
		setup_veth();
		sh("ip neigh add 10.88.0.10 lladdr 02:00:00:00:88:0a dev eth0 nud noarp");
	} else if (!strcmp(mode, "veth-peer-gso")) {
		setup_veth();
		sh_host("ip link set crfwlh0 gso_max_size 32768", NULL, NULL);
	} else if (!strcmp(mode, "veth-managed")) {
		setup_veth();
		sh("ip neigh add 10.88.0.11 dev eth0 managed");
	} else if (!strcmp(mode, "veth-extern")) {
		setup_veth();
		sh("ip neigh add 10.88.0.12 lladdr 02:00:00:00:88:0c dev eth0 nud stale "
		   "extern_learn");
	} else if (!strcmp(mode, "veth-inside")) {
		sh("ip link set lo up && ip link add crfva type veth peer name crfvb");
	} else if (!strcmp(mode, "rule")) {
		sh("ip rule add from 10.77.0.0/24 table 100 priority 100");
	} else if (!strcmp(mode, "rule-hidden")) {
		/* The same as the default one, but for what libnl does not print. */
		sh("ip rule del pref 32766 && "
		   "ip rule add pref 32766 uidrange 1-2 lookup main protocol kernel");
	} else if (!strcmp(mode, "tcp")) {
		setup_tcp();
	} else if (!strcmp(mode, "lifetime")) {
		sh("ip link set lo up && "
		   "ip addr add 10.77.0.1/24 dev lo valid_lft 1000 preferred_lft 1000");
	} else if (!strcmp(mode, "qdisc")) {
		sh("ip link set lo up && tc qdisc add dev lo root pfifo");
	} else if (!strcmp(mode, "link-gso")) {
		sh("ip link set lo up gso_max_size 32768");
	} else if (!strcmp(mode, "link-multicast")) {
		sh("ip link set lo up multicast on");
	} else if (!strcmp(mode, "link-altname")) {
		sh("ip link set lo up && ip link property add dev lo altname crfloalt");
	} else if (!strcmp(mode, "xfrm")) {
		sh("ip link set lo up && "
		   "ip xfrm policy add src 10.77.0.0/24 dst 10.78.0.0/24 dir out");
	} else if (!strcmp(mode, "xfrm-default")) {
		sh("ip link set lo up && ip xfrm policy setdefault fwd block");
	} else if (!strcmp(mode, "xfrm-hthresh")) {
		sh("ip link set lo up && ip xfrm policy set hthresh4 24 16");
	} else if (!strcmp(mode, "sysctl-ro")) {
		sh("ip link set lo up");
	} else if (!strcmp(mode, "proxy")) {
		sh("ip link set lo up && ip neigh add proxy 10.77.0.9 dev lo");
	} else {
		wl_fail("unknown mode '%s'", mode);
	}
	snapshot(before);
	wl_ready();
	wl_wait_verify();
	snapshot(after);
	if (strcmp(before, after))
		differs();
	if (!strcmp(mode, "lo"))
		check_sockets();
	if (!strcmp(mode, "tcp"))
		check_tcp();
	if (!strcmp(mode, "veth"))
		check_veth();
	return 0;
}
