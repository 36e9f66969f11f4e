// SPDX-License-Identifier: GPL-2.0-only
/*
 * The network lock: while an established connection is frozen, dumped, and
 * until its restore is done, its packets are dropped both ways, so that
 * neither the peer nor the restored socket ever answers one with a reset
 * (a segment to a port with no socket gets one: the window probe of a
 * restored socket whose peer in the tree is not made yet, a peer's
 * retransmission between a killing dump and the restore).  Dropped
 * segments are retransmitted once the lock is gone.
 *
 * The lock is an nftables table of family inet, crf_lock_PID (the dumping
 * crf's PID), with a set of 4-tuples per IP version holding both
 * directions of each connection and a drop rule for each set in the
 * output and input hooks (loopback traffic passes both), made through
 * libnftables.  The dump takes it connection by connection, before repair
 * mode; DUMP_UNDO and DUMP_RESUME drop it; after a dump that killed the
 * tree it stays, and netlock.img says what it holds: the restore takes it
 * again from that in restore-prepare (the same table, made anew in one
 * transaction) and drops it in restore-cleanup, whether the restore
 * succeeded or not.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/sockios.h>

#include <nftables/libnftables.h>

#include <crf/cleanup.h>
#include <crf/image.h>

#include "inet.h"

#define NETLOCK_IMG "netlock.img"
#define SCRIPT_MAX  8192

/* A net namespace not crf's that holds a copy of the lock's table. */
struct lock_ns {
	int fd;
	ino_t ino;
};

static struct {
	char table[64];
	bool held;
	Crf__Net__LockedConn **conns;
	size_t n_conns;
	/* The namespaces of the locked connections that are not crf's. */
	struct lock_ns *ns;
	size_t n_ns;
} dump_lock;

static char restore_table[64];
/*
 * The restore's: netlock.img, crf's own namespace, and the namespaces
 * (not crf's) locked in this process and unlocked by restore-resume.
 */
static Crf__Net__NetLock *restore_nl;
static ino_t restore_host_ino, restore_locked_ino;
static ino_t *restore_unlocked;
static size_t n_restore_unlocked;

/*
 * Run the nft commands of @script with libnftables, in the net namespace
 * @nsfd (-1: the caller's); 0, or -errno with nftables' own message logged.
 * With the library, not the nft tool: a restored task pivoted into its
 * container has no nft to run, and an exec per connection cost ~10 ms.  In
 * a forked child whose only fds are 0-3 when crf holds nearly FD_SETSIZE
 * fds (a tree of many sockets): libnftables waits on its netlink socket with
 * select(), and a socket numbered past 1023 aborted crf.
 */
/* Does the lowest free fd leave room below FD_SETSIZE for libnftables' own? */
static bool low_fds_free(void)
{
	int t = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (t >= 0)
		close(t);
	return t >= 0 && t < FD_SETSIZE - 64;
}

static struct nft_ctx *nft_new(void)
{
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);

	if (nft && (nft_ctx_buffer_output(nft) || nft_ctx_buffer_error(nft))) {
		nft_ctx_free(nft);
		nft = NULL;
	}
	return nft;
}

/* libnftables on @script with @nft; 0, or -1 with its message in @msg. */
static int nft_run(struct nft_ctx *nft, const char *script, char *msg, size_t len)
{
	const char *err;
	int rc;

	if (!nft) {
		snprintf(msg, len, "libnftables: no context");
		return -1;
	}
	rc = nft_run_cmd_from_buffer(nft, script);
	err = nft_ctx_get_error_buffer(nft);
	snprintf(msg, len, "%s", rc && err ? err : "");
	msg[strcspn(msg, "\n")] = '\0';
	return rc ? -1 : 0;
}

/*
 * This process's context for crf's own net namespace, kept: made while crf
 * holds few fds, its netlink socket stays below FD_SETSIZE however many it
 * holds later (a dump keeps every socket it put in repair mode).  A forked
 * process (a restored task) makes its own: the socket is not shared.
 */
static struct nft_ctx *own_ctx;
static pid_t own_ctx_pid;

static struct nft_ctx *own_nft(void)
{
	if (own_ctx && own_ctx_pid == getpid())
		return own_ctx;
	own_ctx = low_fds_free() ? nft_new() : NULL;
	own_ctx_pid = getpid();
	return own_ctx;
}

void netlock_nft_close(void)
{
	if (own_ctx && own_ctx_pid == getpid())
		nft_ctx_free(own_ctx);
	own_ctx = NULL;
}

/* The child of nft_in() where crf holds many fds: only 0-2 and @msg are left. */
static _Noreturn void nft_child(int nsfd, int msg, const char *script)
{
	char text[512];

	if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET) < 0) {
		dprintf(msg, "cannot enter the net namespace: %s", strerror(errno));
		_exit(1);
	}
	if (dup2(msg, 3) < 0 || syscall(SYS_close_range, 4, ~0u, 0) < 0)
		_exit(1);
	if (nft_run(nft_new(), script, text, sizeof(text)) < 0) {
		dprintf(3, "%s", text);
		_exit(1);
	}
	_exit(0);
}

static int nft_in(int nsfd, const char *script, const char *what)
{
	_cleanup_close_ int own = -1;
	char text[512] = "";
	ssize_t n, got = 0;
	int p[2], status, r;
	pid_t pid;

	if (nsfd < 0 && own_nft()) {
		r = nft_run(own_nft(), script, text, sizeof(text));
		return r < 0 ? crf_error_errno(EIO, "%s: nftables: %s", what,
					       text[0] ? text : "failed")
			     : 0;
	}
	if (nsfd >= 0 && low_fds_free()) {
		struct nft_ctx *nft;

		/* Its netlink socket is made in the namespace the thread is in. */
		own = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (own < 0 || setns(nsfd, CLONE_NEWNET) < 0)
			return crf_error_errno(errno, "%s: entering the net namespace", what);
		nft = nft_new();
		r = nft_run(nft, script, text, sizeof(text));
		if (nft)
			nft_ctx_free(nft);
		if (setns(own, CLONE_NEWNET) < 0)
			return crf_error_errno(errno, "%s: back to crf's net namespace", what);
		return r < 0 ? crf_error_errno(EIO, "%s: nftables: %s", what,
					       text[0] ? text : "failed")
			     : 0;
	}
	if (pipe2(p, O_CLOEXEC))
		return crf_error_errno(errno, "%s: pipe", what);
	pid = fork();
	if (pid == 0)
		nft_child(nsfd, p[1], script);
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return crf_error_errno(errno, "%s: fork", what);
	}
	while ((n = read(p[0], text + got, sizeof(text) - 1 - (size_t)got)) > 0)
		got += n;
	close(p[0]);
	text[got > 0 ? got : 0] = '\0';
	if (waitpid(pid, &status, 0) < 0)
		return crf_error_errno(errno, "%s: waiting for the nftables child", what);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return crf_error_errno(EIO, "%s: nftables: %s", what, got ? text : "failed");
	return 0;
}

static int nft(const char *script, const char *what)
{
	return nft_in(-1, script, what);
}

static int ns_ino(int fd, ino_t *ino)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	*ino = st.st_ino;
	return 0;
}

/* The inode of the calling thread's net namespace, or 0. */
static ino_t own_ns_ino(void)
{
	struct stat st;

	return stat("/proc/thread-self/ns/net", &st) < 0 ? 0 : st.st_ino;
}

/*
 * "A . P . B . Q, B . Q . A . P": both directions of connection @c as
 * elements of the set of its family; @v6 says which.
 */
static void elements(char *buf, size_t len, const Crf__Net__LockedConn *c, bool *v6)
{
	const uint8_t *pa = c->local->addr.data, *pb = c->peer->addr.data;
	char sa[INET6_ADDRSTRLEN], sb[INET6_ADDRSTRLEN];
	int fam = c->local->addr.len == 16 ? AF_INET6 : AF_INET;

	if (inet_addr_is_mapped(c->local) && inet_addr_is_mapped(c->peer)) {
		fam = AF_INET;
		pa += 12;
		pb += 12;
	}
	inet_ntop(fam, pa, sa, sizeof(sa));
	inet_ntop(fam, pb, sb, sizeof(sb));
	*v6 = fam == AF_INET6;
	snprintf(buf, len, "%s . %u . %s . %u, %s . %u . %s . %u", sa, c->local->port, sb,
		 c->peer->port, sb, c->peer->port, sa, c->local->port);
}

/* snprintf at *@at of @buf (@len), or -E2BIG. */
static int put(char *buf, size_t len, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= len - *at)
		return -E2BIG;
	*at += (size_t)w;
	return 0;
}

/*
 * The commands that add the table @table (with @chains: its two sets of
 * 4-tuples, conns4 and conns6, its chains and their four rules, which drop
 * what the sets hold but for the segments crf makes, tcp-fin.c) and the
 * elements of @conns.  The rules do not grow with the connections: adding
 * one costs the same at the thousandth as at the first.
 */
static int script(char *buf, size_t len, const char *table, Crf__Net__LockedConn *const *conns,
		  size_t n, bool chains)
{
	static const char *const hooks[] = {"output", "input"};
	char e[4 * INET6_ADDRSTRLEN + 64];
	size_t at = 0;
	bool v6;
	int r = 0;

	buf[0] = '\0';
	if (chains) {
		r = put(buf, len, &at,
			"add table inet %s\n"
			"add set inet %s conns4 { type ipv4_addr . inet_service . ipv4_addr . "
			"inet_service; }\n"
			"add set inet %s conns6 { type ipv6_addr . inet_service . ipv6_addr . "
			"inet_service; }\n",
			table, table, table);
		for (int h = 0; r == 0 && h < 2; h++)
			r = put(buf, len, &at,
				"add chain inet %s %s { type filter hook %s priority -150; "
				"policy accept; }\n"
				"add rule inet %s %s meta mark != %#x ip saddr . tcp sport . "
				"ip daddr . tcp dport @conns4 drop\n"
				"add rule inet %s %s meta mark != %#x ip6 saddr . tcp sport . "
				"ip6 daddr . tcp dport @conns6 drop\n",
				table, hooks[h], hooks[h], table, hooks[h], NETLOCK_MARK, table,
				hooks[h], NETLOCK_MARK);
	}
	for (size_t i = 0; r == 0 && i < n; i++) {
		elements(e, sizeof(e), conns[i], &v6);
		r = put(buf, len, &at, "add element inet %s %s { %s }\n", table,
			v6 ? "conns6" : "conns4", e);
	}
	return r;
}

static Crf__Net__LockedConn *conn_of(const Crf__Net__InetSk *sk)
{
	Crf__Net__LockedConn *c = malloc(sizeof(*c));
	struct sockaddr_storage ss;
	socklen_t len;

	if (!c)
		return NULL;
	crf__net__locked_conn__init(c);
	c->family = sk->family;
	inet_addr_to_sa(sk->family, sk->local, &ss, &len);
	c->local = inet_addr_new(&ss);
	inet_addr_to_sa(sk->family, sk->peer, &ss, &len);
	c->peer = inet_addr_new(&ss);
	if (!c->local || !c->peer) {
		protobuf_c_message_free_unpacked(&c->base, NULL);
		return NULL;
	}
	return c;
}

/*
 * The namespace of socket @fd, when it is not crf's: its entry in
 * dump_lock.ns (added, with @chains true, if it is new), or NULL.
 */
static int sock_ns(int fd, struct lock_ns **out, bool *chains, const char *what)
{
	_cleanup_close_ int nsfd = ioctl(fd, SIOCGSKNS);
	struct lock_ns *n;
	ino_t ino = 0;

	*out = NULL;
	*chains = false;
	if (nsfd < 0 || ns_ino(nsfd, &ino) < 0)
		return crf_error_errno(errno, "%s: the socket's net namespace (SIOCGSKNS)", what);
	if (ino == own_ns_ino())
		return 0;
	for (size_t i = 0; i < dump_lock.n_ns; i++)
		if (dump_lock.ns[i].ino == ino) {
			*out = &dump_lock.ns[i];
			return 0;
		}
	n = realloc(dump_lock.ns, (dump_lock.n_ns + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	dump_lock.ns = n;
	*out = &n[dump_lock.n_ns];
	**out = (struct lock_ns){TAKE_FD(nsfd), ino};
	*chains = true;
	return 0;
}

/*
 * Lock @sk (socket @fd): in crf's namespace, and in the socket's own when
 * it is another (the tree's): there the connection's packets between two
 * ends in the namespace, or from a peer outside that reach it, are
 * dropped; in crf's those of a peer in crf's namespace, from the dump to
 * the restore (the namespace dies with a killed tree).
 */
int netlock_conn(int fd, const Crf__Net__InetSk *sk, const char *name)
{
	_cleanup_free_ char *buf = malloc(SCRIPT_MAX);
	Crf__Net__LockedConn **n, *c;
	char what[INET_NAME_MAX + 32];
	struct lock_ns *ns = NULL;
	bool chains = false;
	int r;

	if (!buf)
		return -ENOMEM;
	snprintf(what, sizeof(what), "%s: the network lock", name);
	if (!dump_lock.held)
		snprintf(dump_lock.table, sizeof(dump_lock.table), "crf_lock_%d", (int)getpid());
	c = conn_of(sk);
	n = c ? realloc(dump_lock.conns, (dump_lock.n_conns + 1) * sizeof(*n)) : NULL;
	if (!n) {
		if (c)
			protobuf_c_message_free_unpacked(&c->base, NULL);
		return -ENOMEM;
	}
	dump_lock.conns = n;
	r = sock_ns(fd, &ns, &chains, what);
	if (r >= 0 && ns) {
		r = script(buf, SCRIPT_MAX, dump_lock.table, &c, 1, chains);
		if (r >= 0)
			r = nft_in(ns->fd, buf, what);
		if (chains && r >= 0)
			dump_lock.n_ns++;
		else if (chains)
			close(ns->fd);
	}
	if (r >= 0)
		r = script(buf, SCRIPT_MAX, dump_lock.table, &c, 1, !dump_lock.held);
	if (r >= 0)
		r = nft(buf, what);
	if (r < 0) {
		protobuf_c_message_free_unpacked(&c->base, NULL);
		return r;
	}
	dump_lock.held = true;
	dump_lock.conns[dump_lock.n_conns++] = c;
	crf_debug("%s: locked in nftables table inet %s%s", name, dump_lock.table,
		  ns ? ", in crf's and in its own net namespace" : "");
	return 0;
}

static void forget_conns(void)
{
	for (size_t i = 0; i < dump_lock.n_conns; i++)
		protobuf_c_message_free_unpacked(&dump_lock.conns[i]->base, NULL);
	free(dump_lock.conns);
	dump_lock.conns = NULL;
	dump_lock.n_conns = 0;
}

static void drop_table(const char *table)
{
	char buf[160];

	snprintf(buf, sizeof(buf), "delete table inet %s\n", table);
	if (nft(buf, "dropping the network lock") == 0)
		crf_debug("network lock dropped: table inet %s", table);
}

/*
 * The copies in the tree's namespaces: dropped whether the tree runs on or
 * was killed (its sockets died in repair mode, silently; a namespace that
 * outlives it, bound somewhere, keeps no lock of crf's).
 */
static void drop_ns_tables(void)
{
	char buf[160];

	snprintf(buf, sizeof(buf), "delete table inet %s\n", dump_lock.table);
	for (size_t i = 0; i < dump_lock.n_ns; i++) {
		if (nft_in(dump_lock.ns[i].fd, buf, "dropping the network lock") == 0)
			crf_debug("network lock dropped in net:[%lu]",
				  (unsigned long)dump_lock.ns[i].ino);
		close(dump_lock.ns[i].fd);
	}
	free(dump_lock.ns);
	dump_lock.ns = NULL;
	dump_lock.n_ns = 0;
}

void netlock_dump_release(void)
{
	drop_ns_tables();
	if (dump_lock.held)
		drop_table(dump_lock.table);
	dump_lock.held = false;
	forget_conns();
}

void netlock_dump_forget(void)
{
	drop_ns_tables();
	if (dump_lock.held)
		crf_info("the network lock stays until the restore: nftables table inet %s",
			 dump_lock.table);
	dump_lock.held = false;
	forget_conns();
}

int netlock_dump_finish(struct crf_ctx *ctx)
{
	Crf__Net__NetLock nl = CRF__NET__NET_LOCK__INIT;
	struct crf_img *img;
	int r;

	if (!dump_lock.held)
		return 0;
	nl.table = dump_lock.table;
	nl.conns = dump_lock.conns;
	nl.n_conns = dump_lock.n_conns;
	r = crf_img_create(crf_ctx_images(ctx), NETLOCK_IMG, &crf__net__net_lock__descriptor, &img);
	if (r < 0)
		return r;
	return crf_img_finish(img, crf_img_write(img, &nl.base));
}

/* The whole lock of netlock.img, made anew in one transaction, in @nsfd (-1: the caller's). */
static int lock_all(int nsfd, const Crf__Net__NetLock *nl, const char *what)
{
	size_t at, len = SCRIPT_MAX * (nl->n_conns + 1);
	_cleanup_free_ char *buf = malloc(len);
	int r;

	if (!buf)
		return -ENOMEM;
	/* Whether or not the dump's table is still there: one transaction makes it anew. */
	at = (size_t)snprintf(buf, SCRIPT_MAX, "add table inet %s\ndelete table inet %s\n",
			      nl->table, nl->table);
	r = script(buf + at, len - at, nl->table, nl->conns, nl->n_conns, true);
	return r < 0 ? r : nft_in(nsfd, buf, what);
}

int netlock_restore_prepare(struct crf_ctx *ctx)
{
	struct crf_imgdir *dir = crf_ctx_images(ctx);
	Crf__Net__NetLock *nl = NULL;
	struct crf_img *img;
	int r;

	if (faccessat(crf_imgdir_fd(dir), NETLOCK_IMG, F_OK, 0) < 0)
		return 0;
	r = crf_img_open(dir, NETLOCK_IMG, &crf__net__net_lock__descriptor, &img);
	if (r < 0)
		return r;
	r = crf_img_read(img, (ProtobufCMessage **)&nl);
	crf_img_close(img);
	if (r <= 0)
		return r < 0 ? r : crf_error_errno(EBADMSG, NETLOCK_IMG ": empty");
	restore_host_ino = own_ns_ino();
	r = restore_host_ino ? lock_all(-1, nl, "the network lock")
			     : crf_error_errno(errno, "/proc/thread-self/ns/net");
	if (r < 0) {
		protobuf_c_message_free_unpacked(&nl->base, NULL);
		return r;
	}
	snprintf(restore_table, sizeof(restore_table), "%s", nl->table);
	crf_debug("%zu connections locked in nftables table inet %s", nl->n_conns, nl->table);
	/* Kept: a restored task in a namespace of its own takes the lock there too. */
	restore_nl = nl;
	return 0;
}

/*
 * In a restored task, before it makes a connection: a namespace that is
 * not crf's (the tree's, made in restore-premap) gets the lock too, so that
 * no end made there answers its peer's segments with a reset, nor the peer
 * the window probe of the end made first.  restore-resume drops it.
 */
int netlock_restore_here(const char *name)
{
	char what[INET_NAME_MAX + 32];
	ino_t ino;
	int r;

	if (!restore_nl)
		return 0;
	ino = own_ns_ino();
	if (!ino)
		return crf_error_errno(errno, "%s: /proc/thread-self/ns/net", name);
	if (ino == restore_host_ino || ino == restore_locked_ino)
		return 0;
	snprintf(what, sizeof(what), "%s: the network lock in net:[%lu]", name, (unsigned long)ino);
	r = lock_all(-1, restore_nl, what);
	if (r < 0)
		return r;
	restore_locked_ino = ino;
	crf_debug("%s: locked in its net namespace net:[%lu] too", name, (unsigned long)ino);
	return 0;
}

/* restore-resume, per task: drop the lock in its namespace, when it is not crf's. */
int netlock_restore_resume(pid_t pid)
{
	char path[64], buf[160], what[96];
	_cleanup_close_ int nsfd = -1;
	ino_t ino = 0, *n;
	int r;

	if (!restore_nl)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0 || ns_ino(nsfd, &ino) < 0)
		return crf_error_errno(errno, "%s", path);
	if (ino == restore_host_ino)
		return 0;
	for (size_t i = 0; i < n_restore_unlocked; i++)
		if (restore_unlocked[i] == ino)
			return 0;
	n = realloc(restore_unlocked, (n_restore_unlocked + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	restore_unlocked = n;
	/* Whether or not a task made a connection there. */
	snprintf(buf, sizeof(buf), "add table inet %s\ndelete table inet %s\n", restore_nl->table,
		 restore_nl->table);
	snprintf(what, sizeof(what), "dropping the network lock in net:[%lu]", (unsigned long)ino);
	r = nft_in(nsfd, buf, what);
	if (r < 0)
		return r;
	restore_unlocked[n_restore_unlocked++] = ino;
	return 0;
}

/*
 * A UDP socket's queue while it is taken and queued again (udp.c): what
 * comes to the socket's address and port is dropped in the input hook, but
 * for crf's own datagrams (NETLOCK_MARK), so that none from outside lands
 * before those queued again: it is lost, as on the way.  A table of its own,
 * crf_udp_PID, made before and deleted after.
 */
int netlock_udp_hold(const Crf__Net__InetSk *sk, const char *name)
{
	const Crf__Net__Addr *a = sk->local;
	char buf[512], dst[80] = "", ip[INET6_ADDRSTRLEN], what[INET_NAME_MAX + 32];
	bool v4 = a->addr.len == 4 || inet_addr_is_mapped(a);

	if (!inet_addr_is_any(a)) {
		inet_ntop(v4 ? AF_INET : AF_INET6,
			  a->addr.data + (a->addr.len == 16 && v4 ? 12 : 0), ip, sizeof(ip));
		snprintf(dst, sizeof(dst), "%s daddr %s ", v4 ? "ip" : "ip6", ip);
	} else if (sk->family == AF_INET) {
		snprintf(dst, sizeof(dst), "meta nfproto ipv4 ");
	}
	snprintf(what, sizeof(what), "%s: holding other datagrams off", name);
	snprintf(buf, sizeof(buf),
		 "add table inet crf_udp_%d\n"
		 "add chain inet crf_udp_%d input { type filter hook input priority -150; "
		 "policy accept; }\n"
		 "add rule inet crf_udp_%d input %sudp dport %u meta mark != %#x drop\n",
		 (int)getpid(), (int)getpid(), (int)getpid(), dst, a->port, NETLOCK_MARK);
	return nft(buf, what);
}

void netlock_udp_release(void)
{
	char table[64];

	snprintf(table, sizeof(table), "crf_udp_%d", (int)getpid());
	drop_table(table);
}

void netlock_restore_release(bool keep)
{
	if (restore_table[0] && keep)
		crf_info("the network lock stays until a restore succeeds: nftables table inet %s",
			 restore_table);
	else if (restore_table[0])
		drop_table(restore_table);
	restore_table[0] = '\0';
	if (restore_nl)
		protobuf_c_message_free_unpacked(&restore_nl->base, NULL);
	restore_nl = NULL;
	free(restore_unlocked);
	restore_unlocked = NULL;
	n_restore_unlocked = 0;
	restore_locked_ino = 0;
}
