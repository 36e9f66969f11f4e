// SPDX-License-Identifier: GPL-2.0-only
/*
 * The receive queue of a unix socket, read at the dump without consuming
 * it and queued again at the restore.
 *
 * MSG_PEEK alone always reads from the head of the queue; SO_PEEK_OFF
 * makes each peek start where the last one ended, so successive peeks walk
 * the queue: byte after byte on a stream socket, message after message on
 * a datagram or seqpacket one (each peek returns one message, so the
 * boundaries are kept).  The socket is the task's own (a pidfd_getfd copy
 * shares it), so its SO_PEEK_OFF is put back as it was.
 *
 * A message's length is learnt first with a zero-length peek and
 * MSG_TRUNC, which does not move the offset.  A zero-length message is
 * marked peeked by the kernel and passed over by the next peek at the
 * same offset, so it is read once, by that first peek.  The end of the
 * queue is EAGAIN; on a socket shut down for reading, a read of 0 bytes,
 * as an empty message from an unnamed sender also is.  There SO_TIMESTAMP
 * tells them apart: with it on, every message comes with an SCM_TIMESTAMP,
 * the end of the queue with none; it is put back off afterwards.
 *
 * A message carries its sender's credentials when the sender asked for
 * them (SCM_CREDENTIALS) or either socket had SO_PASSCRED at the send;
 * the receiver sees them only with SO_PASSCRED on, but may turn it on at
 * any time, also after the restore, and a stream read then stops where
 * they change.  crf cannot send a message again with credentials of a
 * process that does not exist yet (restore-prepare runs before the tree
 * is forked), so the walk turns SO_PASSCRED on (put back afterwards) to
 * see which messages carry some (a pid), and those are refused; the
 * others are queued again without, as they were.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <crf/log.h>

#include "unix.h"

/* From <linux/socket.h> of 6.5, which the libc headers may lack. */
#ifndef SCM_PIDFD
#define SCM_PIDFD 0x04
#endif

/* A flag of peek(): SO_TIMESTAMP is on, and a read without a timestamp is the end. */
#define PEEK_STAMPED (1 << 30)

/* SCM_MAX_FD: the most fds one message carries. */
#define MAX_FDS 253

/* What the peeks of one walk of a queue found besides the data. */
struct walk {
	int in_flight;	 /* fds (SCM_RIGHTS) */
	bool creds;	 /* the last peek's data carries credentials */
	size_t credited; /* bytes (stream) or messages that carry credentials */
};

/*
 * Close what a peek installed in crf (SCM_RIGHTS, SCM_PIDFD); the number of
 * fds in flight.  *@stamped: an SCM_TIMESTAMP came; *@creds: credentials
 * with a pid (without, the kernel sends pid 0: none were attached).
 */
static int close_passed(struct msghdr *mh, bool *stamped, bool *creds)
{
	int n = 0;

	*stamped = *creds = false;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t len;

		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMP)
			*stamped = true;
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			struct ucred u;

			memcpy(&u, CMSG_DATA(c), sizeof(u));
			*creds = u.pid != 0;
		}
		if (c->cmsg_level != SOL_SOCKET ||
		    (c->cmsg_type != SCM_RIGHTS && c->cmsg_type != SCM_PIDFD))
			continue;
		len = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < len; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			close(fd);
		}
		if (c->cmsg_type == SCM_RIGHTS)
			n += (int)len;
	}
	return n;
}

/*
 * One peek into @buf (@len bytes, may be 0); the length or -errno, 0 with
 * *@end at the end.  The sender's address goes to @from (when not NULL).
 */
static ssize_t peek(int fd, void *buf, size_t len, int flags, struct walk *w, bool *end,
		    ProtobufCBinaryData *from)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(MAX_FDS * sizeof(int)) + 256];
	} ctl;
	struct sockaddr_un from_addr;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr mh = {
		.msg_name = &from_addr,
		.msg_namelen = sizeof(from_addr),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	bool stamped;
	ssize_t n;

	*end = false;
	n = recvmsg(fd, &mh, MSG_PEEK | MSG_DONTWAIT | MSG_CMSG_CLOEXEC | (flags & ~PEEK_STAMPED));
	if (n < 0) {
		if (errno != EAGAIN)
			return -errno;
		*end = true;
		return 0;
	}
	w->in_flight += close_passed(&mh, &stamped, &w->creds);
	if (mh.msg_flags & MSG_CTRUNC)
		w->in_flight += MAX_FDS;
	if (n == 0 && (flags & PEEK_STAMPED) && !stamped)
		*end = true;
	if (from && !*end) {
		size_t alen = mh.msg_namelen > offsetof(struct sockaddr_un, sun_path)
				      ? mh.msg_namelen - offsetof(struct sockaddr_un, sun_path)
				      : 0;

		from->len = alen;
		from->data = malloc(alen ? alen : 1);
		if (!from->data)
			return -ENOMEM;
		memcpy(from->data, from_addr.sun_path, alen);
	}
	return n;
}

static int add_bytes(ProtobufCBinaryData **v, size_t *n, ProtobufCBinaryData b)
{
	ProtobufCBinaryData *p = realloc(*v, (*n + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	*v = p;
	p[(*n)++] = b;
	return 0;
}

static int add_message(Crf__Net__UnixSk *m, void *data, size_t len)
{
	return add_bytes(&m->rqueue, &m->n_rqueue, (ProtobufCBinaryData){.len = len, .data = data});
}

static int read_stream(int fd, Crf__Net__UnixSk *m, struct walk *w)
{
	size_t cap = 65536, len = 0;
	uint8_t *buf = malloc(cap), *p;
	bool end = false;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	while (!end) {
		if (cap - len < 65536) {
			p = realloc(buf, cap * 2);
			if (!p) {
				free(buf);
				return -ENOMEM;
			}
			buf = p;
			cap *= 2;
		}
		n = peek(fd, buf + len, cap - len, 0, w, &end, NULL);
		if (n < 0) {
			free(buf);
			return (int)n;
		}
		/* With SO_PASSCRED a peek stops where the credentials change. */
		if (w->creds)
			w->credited += (size_t)n;
		/* 0: the peer shut down its side and everything is read. */
		end = end || n == 0;
		len += (size_t)n;
	}
	if (!len) {
		free(buf);
		return 0;
	}
	if (add_message(m, buf, len) < 0) {
		free(buf);
		return -ENOMEM;
	}
	return 0;
}

static int read_messages(int fd, Crf__Net__UnixSk *m, int stamped, struct walk *w)
{
	bool dgram = m->type == SOCK_DGRAM;

	for (;;) {
		ProtobufCBinaryData from = {0};
		bool end;
		ssize_t len = peek(fd, NULL, 0, MSG_TRUNC | stamped, w, &end, dgram ? &from : NULL),
			n;
		uint8_t *buf;

		if (len < 0 || end)
			return len < 0 ? (int)len : 0;
		if (w->creds)
			w->credited++;
		if (dgram && add_bytes(&m->senders, &m->n_senders, from) < 0) {
			free(from.data);
			return -ENOMEM;
		}
		buf = malloc(len ? (size_t)len : 1);
		if (!buf)
			return -ENOMEM;
		/* An empty message was read by the first peek; a second would pass it over. */
		n = len ? peek(fd, buf, (size_t)len, stamped, w, &end, NULL) : 0;
		if (n != len) {
			free(buf);
			return n < 0 ? (int)n : -EAGAIN;
		}
		if (add_message(m, buf, (size_t)len) < 0) {
			free(buf);
			return -ENOMEM;
		}
	}
}

/* Messages of a socket that may be shut down for reading (see the top). */
static int read_shut(int fd, Crf__Net__UnixSk *m, struct walk *w, const char *what)
{
	int was = 0, on = 1, r;
	socklen_t sl = sizeof(was);

	if (!(m->shutdown & 1))
		return read_messages(fd, m, 0, w);
	if (getsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &was, &sl) ||
	    (!was && setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &on, sizeof(on))))
		return crf_error_errno(errno, "%s: SO_TIMESTAMP", what);
	r = read_messages(fd, m, PEEK_STAMPED, w);
	if (!was && setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &was, sizeof(was)) && r == 0)
		r = crf_error_errno(errno, "%s: putting SO_TIMESTAMP back off", what);
	return r;
}

/* SO_PASSCRED of @fd to @on; 0 or -errno (logged). */
static int passcred(int fd, int on, const char *what)
{
	if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)))
		return crf_error_errno(errno, "%s: %s SO_PASSCRED", what,
				       on ? "turning on" : "putting back off");
	return 0;
}

/* The walk of the queue, SO_PEEK_OFF at 0 and SO_PASSCRED on; put back after. */
static int walk(int fd, Crf__Net__UnixSk *m, struct walk *w, const char *what)
{
	int zero = 0, r, p;

	if (setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &zero, sizeof(zero)))
		return crf_error_errno(errno, "%s: setsockopt(SO_PEEK_OFF)", what);
	r = m->passcred ? 0 : passcred(fd, 1, what);
	if (r == 0 && m->type == SOCK_STREAM)
		r = read_stream(fd, m, w);
	else if (r == 0)
		r = read_shut(fd, m, w, what);
	if (r < 0)
		r = crf_error_errno(-r, "%s: reading the receive queue with MSG_PEEK", what);
	p = m->passcred ? 0 : passcred(fd, 0, what);
	if (r == 0)
		r = p;
	if (setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &m->peek_off, sizeof(m->peek_off)) && r == 0)
		r = crf_error_errno(errno, "%s: putting SO_PEEK_OFF back to %d", what, m->peek_off);
	return r;
}

int unix_queue_read(int fd, Crf__Net__UnixSk *m, const char *what)
{
	struct walk w = {0};
	int off = -1, r;
	socklen_t sl = sizeof(off);

	if (getsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &off, &sl))
		return crf_error_errno(errno, "%s: getsockopt(SO_PEEK_OFF)", what);
	m->peek_off = off;
	r = walk(fd, m, &w, what);
	if (r == 0 && w.in_flight)
		r = crf_error_errno(ENOTSUP,
				    "%s: %s%d fd%s in flight (SCM_RIGHTS, not received yet), "
				    "which crf does not restore",
				    what, w.in_flight >= MAX_FDS ? "at least " : "", w.in_flight,
				    w.in_flight == 1 ? "" : "s");
	if (r == 0 && w.credited)
		r = crf_error_errno(
			ENOTSUP,
			"%s: %zu %s queued with the credentials of their sender "
			"(SO_PASSCRED or SCM_CREDENTIALS at the send), which crf cannot "
			"send again before the sender exists",
			what, w.credited, m->type == SOCK_STREAM ? "bytes" : "messages");
	return r;
}

void unix_queue_free(Crf__Net__UnixSk *m)
{
	for (size_t i = 0; i < m->n_rqueue; i++)
		free(m->rqueue[i].data);
	for (size_t i = 0; i < m->n_senders; i++)
		free(m->senders[i].data);
	free(m->rqueue);
	free(m->senders);
	m->rqueue = m->senders = NULL;
	m->n_rqueue = m->n_senders = 0;
}

int unix_queue_send(int from, const Crf__Net__UnixSk *m, size_t i, bool to_name, const char *what)
{
	struct sockaddr_un to = {.sun_family = AF_UNIX};
	const uint8_t *p = m->rqueue[i].data;
	size_t left = m->rqueue[i].len;
	socklen_t tl = 0;

	if (to_name) {
		if (!m->has_name || m->name.len > sizeof(to.sun_path))
			return crf_error_errno(EINVAL, "%s: no address to queue message %zu at",
					       what, i + 1);
		memcpy(to.sun_path, m->name.data, m->name.len);
		tl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + m->name.len);
	}
	do {
		ssize_t n = sendto(from, p, left, MSG_DONTWAIT | MSG_NOSIGNAL,
				   to_name ? (struct sockaddr *)&to : NULL, tl);

		if (n < 0)
			return crf_error_errno(errno,
					       "%s: queueing message %zu of %zu (%zu bytes) "
					       "again",
					       what, i + 1, m->n_rqueue, m->rqueue[i].len);
		/* A datagram goes whole or not at all; a stream may take part. */
		if (m->type != SOCK_STREAM && (size_t)n != left)
			return crf_error_errno(EMSGSIZE, "%s: message %zu queued short", what,
					       i + 1);
		p += n;
		left -= (size_t)n;
	} while (left);
	return 0;
}

int unix_queue_write(int peer, const Crf__Net__UnixSk *m, const char *what)
{
	for (size_t i = 0; i < m->n_rqueue; i++) {
		int r = unix_queue_send(peer, m, i, false, what);

		if (r < 0)
			return r;
	}
	return 0;
}
