// SPDX-License-Identifier: GPL-2.0-only
/*
 * Established TCP connections leave repair mode once the whole tree is made.
 *
 * tcp_repair_restore() leaves each restored connection in repair mode, in
 * the task that holds it.  Until the tree is complete the restore can still
 * fail (a later fd, a later task, a plugin's later stage); the processes it
 * made are then killed, and a socket in repair mode dies silently: no FIN
 * or RST reaches the peer, no TIME-WAIT keeps the four-tuple, so the peer
 * outside the tree keeps its connection and the same dump restores again.
 * Out of repair mode the socket would close as any does.
 *
 * So the kind's check (restore-prepare, in crf) notes every established
 * connection's task, fd and record; at restore-resume, every task in its
 * restorer and none of the program run yet, crf takes a copy of each socket
 * (pidfd_getfd, the same open file description) and finishes it
 * (tcp_repair_finish()), all of them at the first task, before any
 * network lock is dropped.  Restore-undo, should a later step fail, puts
 * them back into repair mode before the processes are killed.  crf holds
 * no copy between the stages: a tree of a thousand connections would
 * otherwise take crf past FD_SETSIZE, which libnftables needs below.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "inet.h"

static struct conn {
	pid_t pid;
	int fd;
	Crf__Net__InetSk *sk;
	bool finished;
} * conns;
static size_t n_conns;
static bool resumed;

int tcp_resume_note(pid_t pid, int fd, const void *payload, size_t len)
{
	Crf__Net__InetSk *sk = crf__net__inet_sk__unpack(NULL, len, payload);
	struct conn *v;

	if (!sk)
		return -EBADMSG;
	if (sk->proto != CRF__NET__PROTO__TCP || sk->state != CRF__NET__STATE__ESTABLISHED) {
		inet_sk_free(sk);
		return 0;
	}
	for (size_t i = 0; i < n_conns; i++)
		if (conns[i].pid == pid && conns[i].fd == fd) {
			inet_sk_free(sk);
			return 0;
		}
	v = realloc(conns, (n_conns + 1) * sizeof(*v));
	if (!v) {
		inet_sk_free(sk);
		return -ENOMEM;
	}
	conns = v;
	conns[n_conns++] = (struct conn){.pid = pid, .fd = fd, .sk = sk};
	return 0;
}

/* A pidfd of the task last asked for: the connections come task by task. */
struct taker {
	pid_t pid;
	int pidfd;
};

/* crf's copy of fd @c->fd of task @c->pid; -errno (logged, naming @name) if it cannot. */
static int take(struct taker *t, const struct conn *c, const char *name)
{
	int fd;

	if (t->pid != c->pid) {
		if (t->pidfd >= 0)
			close(t->pidfd);
		t->pid = c->pid;
		t->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
	}
	fd = t->pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, t->pidfd, c->fd, 0);
	if (fd < 0)
		return crf_error_errno(errno, "%s: crf's copy of the socket", name);
	return fd;
}

static void taker_done(struct taker *t)
{
	if (t->pidfd >= 0)
		close(t->pidfd);
}

static void conn_name(const struct conn *c, char *buf, size_t len)
{
	char sk_name[INET_NAME_MAX];

	snprintf(buf, len, "pid %d: fd %d: %s", (int)c->pid, c->fd, inet_sk_name(c->sk, sk_name));
}

int tcp_resume(struct crf_ctx *ctx)
{
	(void)ctx;
	if (resumed)
		return 0;
	resumed = true;
	struct taker t = {.pid = 0, .pidfd = -1};

	for (size_t i = 0; i < n_conns; i++) {
		char name[INET_NAME_MAX + 48];
		int fd, r;

		conn_name(&conns[i], name, sizeof(name));
		fd = take(&t, &conns[i], name);
		r = fd < 0 ? fd : tcp_repair_finish(fd, conns[i].sk, name);
		if (fd >= 0)
			close(fd);
		/* Even on failure: it may be out of repair mode, and undo puts it back. */
		conns[i].finished = true;
		if (r < 0) {
			taker_done(&t);
			tcp_resume_undo();
			return r;
		}
		crf_debug("%s out of repair mode", name);
	}
	taker_done(&t);
	return 0;
}

void tcp_resume_undo(void)
{
	struct taker t = {.pid = 0, .pidfd = -1};

	for (size_t i = 0; i < n_conns; i++) {
		char name[INET_NAME_MAX + 48];
		int fd, on = TCP_REPAIR_ON;

		if (!conns[i].finished)
			continue;
		conns[i].finished = false;
		conn_name(&conns[i], name, sizeof(name));
		fd = take(&t, &conns[i], name);
		if (fd < 0)
			continue;
		if (setsockopt(fd, SOL_TCP, TCP_REPAIR, &on, sizeof(on)))
			crf_warn("%s: back into repair mode: %s", name, strerror(errno));
		close(fd);
	}
	taker_done(&t);
}

void tcp_resume_cleanup(void)
{
	for (size_t i = 0; i < n_conns; i++)
		inet_sk_free(conns[i].sk);
	free(conns);
	conns = NULL;
	n_conns = 0;
	resumed = false;
}
