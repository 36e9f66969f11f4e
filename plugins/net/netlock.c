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
 * crf's PID), with one drop rule per direction of each connection in the
 * output and input hooks (loopback traffic passes both), made with the
 * nft tool.  The dump takes it connection by connection, before repair
 * mode; DUMP_UNDO and DUMP_RESUME drop it; after a dump that killed the
 * tree it stays, and netlock.img says what it holds: the restore takes it
 * again from that in restore-prepare (the same table, made anew in one
 * transaction) and drops it in restore-cleanup, whether the restore
 * succeeded or not.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>

#include "inet.h"

#define NETLOCK_IMG "netlock.img"
#define SCRIPT_MAX  8192

static struct {
	char table[64];
	bool held;
	Crf__Net__LockedConn **conns;
	size_t n_conns;
} dump_lock;

static char restore_table[64];

/* Run nft -f - with @script; 0, or -errno with nft's own message logged. */
static int nft(const char *script, const char *what)
{
	int in[2], err[2], status;
	char msg[512];
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe2(in, O_CLOEXEC))
		return crf_error_errno(errno, "%s: pipe", what);
	if (pipe2(err, O_CLOEXEC)) {
		close(in[0]);
		close(in[1]);
		return crf_error_errno(errno, "%s: pipe", what);
	}
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(err[1], 1);
		dup2(err[1], 2);
		execlp("nft", "nft", "-f", "-", (char *)NULL);
		execl("/usr/sbin/nft", "nft", "-f", "-", (char *)NULL);
		dprintf(2, "cannot run nft (nftables): %s", strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(err[1]);
	if (pid < 0) {
		close(in[1]);
		close(err[0]);
		return crf_error_errno(errno, "%s: fork", what);
	}
	/* The script is far smaller than a pipe's buffer. */
	if (write(in[1], script, strlen(script)) < 0)
		crf_debug("%s: writing to nft: %s", what, strerror(errno));
	close(in[1]);
	while ((n = read(err[0], msg + got, sizeof(msg) - 1 - (size_t)got)) > 0)
		got += n;
	close(err[0]);
	msg[got > 0 ? got : 0] = '\0';
	msg[strcspn(msg, "\n")] = '\0';
	if (waitpid(pid, &status, 0) < 0)
		return crf_error_errno(errno, "%s: waiting for nft", what);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return crf_error_errno(EIO, "%s: nft failed: %s", what, got ? msg : "no message");
	return 0;
}

/* "ip saddr A ip daddr B tcp sport P tcp dport Q" for packets from @a to @b. */
static void match(char *buf, size_t len, const Crf__Net__Addr *a, const Crf__Net__Addr *b)
{
	const uint8_t *pa = a->addr.data, *pb = b->addr.data;
	char sa[INET6_ADDRSTRLEN], sb[INET6_ADDRSTRLEN];
	int fam = a->addr.len == 16 ? AF_INET6 : AF_INET;

	if (inet_addr_is_mapped(a) && inet_addr_is_mapped(b)) {
		fam = AF_INET;
		pa += 12;
		pb += 12;
	}
	inet_ntop(fam, pa, sa, sizeof(sa));
	inet_ntop(fam, pb, sb, sizeof(sb));
	snprintf(buf, len, "%s saddr %s %s daddr %s tcp sport %u tcp dport %u",
		 fam == AF_INET ? "ip" : "ip6", sa, fam == AF_INET ? "ip" : "ip6", sb, a->port,
		 b->port);
}

/* The commands that add the table @table, its chains, and the rules of @conns. */
static int script(char *buf, size_t len, const char *table, Crf__Net__LockedConn *const *conns,
		  size_t n, bool chains)
{
	static const char *const hooks[] = {"output", "input"};
	size_t at = 0;
	char m[256];
	int w;

	if (chains) {
		w = snprintf(buf, len, "add table inet %s\n", table);
		if (w < 0 || (size_t)w >= len)
			return -E2BIG;
		at = (size_t)w;
		for (int h = 0; h < 2; h++) {
			w = snprintf(buf + at, len - at,
				     "add chain inet %s %s { type filter hook %s priority -150; "
				     "policy accept; }\n",
				     table, hooks[h], hooks[h]);
			if (w < 0 || (size_t)w >= len - at)
				return -E2BIG;
			at += (size_t)w;
		}
	}
	for (size_t i = 0; i < n; i++)
		for (int h = 0; h < 2; h++)
			for (int dir = 0; dir < 2; dir++) {
				match(m, sizeof(m), dir ? conns[i]->peer : conns[i]->local,
				      dir ? conns[i]->local : conns[i]->peer);
				w = snprintf(buf + at, len - at, "add rule inet %s %s %s drop\n",
					     table, hooks[h], m);
				if (w < 0 || (size_t)w >= len - at)
					return -E2BIG;
				at += (size_t)w;
			}
	return 0;
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

int netlock_conn(const Crf__Net__InetSk *sk, const char *name)
{
	_cleanup_free_ char *buf = malloc(SCRIPT_MAX);
	Crf__Net__LockedConn **n, *c;
	char what[INET_NAME_MAX + 32];
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
	r = script(buf, SCRIPT_MAX, dump_lock.table, &c, 1, !dump_lock.held);
	if (r >= 0)
		r = nft(buf, what);
	if (r < 0) {
		protobuf_c_message_free_unpacked(&c->base, NULL);
		return r;
	}
	dump_lock.held = true;
	dump_lock.conns[dump_lock.n_conns++] = c;
	crf_debug("%s: locked in nftables table inet %s", name, dump_lock.table);
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

void netlock_dump_release(void)
{
	if (dump_lock.held)
		drop_table(dump_lock.table);
	dump_lock.held = false;
	forget_conns();
}

void netlock_dump_forget(void)
{
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

int netlock_restore_prepare(struct crf_ctx *ctx)
{
	struct crf_imgdir *dir = crf_ctx_images(ctx);
	_cleanup_free_ char *buf = NULL;
	Crf__Net__NetLock *nl = NULL;
	struct crf_img *img;
	size_t at;
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
	buf = malloc(SCRIPT_MAX * (nl->n_conns + 1));
	r = buf ? 0 : -ENOMEM;
	if (r >= 0) {
		/* Whether or not the dump's table is still there: one transaction makes it anew. */
		at = (size_t)snprintf(buf, SCRIPT_MAX, "add table inet %s\ndelete table inet %s\n",
				      nl->table, nl->table);
		r = script(buf + at, SCRIPT_MAX * (nl->n_conns + 1) - at, nl->table, nl->conns,
			   nl->n_conns, true);
	}
	if (r >= 0)
		r = nft(buf, "the network lock");
	if (r >= 0) {
		snprintf(restore_table, sizeof(restore_table), "%s", nl->table);
		crf_debug("%zu connections locked in nftables table inet %s", nl->n_conns,
			  nl->table);
	}
	protobuf_c_message_free_unpacked(&nl->base, NULL);
	return r;
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

void netlock_restore_release(void)
{
	if (restore_table[0])
		drop_table(restore_table);
	restore_table[0] = '\0';
}
