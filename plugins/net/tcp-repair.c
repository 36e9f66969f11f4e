// SPDX-License-Identifier: GPL-2.0-only
/*
 * Established TCP connections, through the kernel's repair mode (TCP_REPAIR).
 *
 * The dump locks the connection first (netlock.c: its packets are dropped
 * both ways, so that the peer never sees a reset), then puts the socket in
 * repair mode, where it sends nothing, and reads: each queue's sequence
 * number (TCP_QUEUE_SEQ, with the queue chosen by TCP_REPAIR_QUEUE) and
 * contents (MSG_PEEK; with the send queue chosen, a peek reads the send
 * queue), the options the handshake agreed on (TCP_INFO, TCP_MAXSEG), the
 * timestamp clock (TCP_TIMESTAMP) and the window (TCP_REPAIR_WINDOW).
 * The socket stays in repair mode: a dump that kills the tree closes it so,
 * silently; DUMP_UNDO and DUMP_RESUME take it out again (its window probe
 * still dropped by the lock) before the tree is thawed.
 *
 * The restore, in repair mode: the queues' first sequence numbers, bind and
 * connect (no SYN is sent: the socket is established at once), the options,
 * the timestamp, the receive queue and the part of the send queue that was
 * sent but not acknowledged (data written to the send queue in repair mode
 * counts as sent: the peer acknowledges it, or it is retransmitted), the
 * window.  The socket stays in repair mode until the whole tree is made:
 * a restore that fails before closes it so, silently, and leaves nothing
 * behind (no FIN to the peer, no TIME-WAIT holding the four-tuple, so the
 * dump restores again).  Then, in crf at restore-resume (tcp-resume.c,
 * tcp_repair_finish()), out of repair mode, and the part never sent is
 * written as the program would have.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/sockios.h>

#include <crf/cleanup.h>

#include "inet.h"

/*
 * The dump's copies of the sockets it put in repair mode, with their
 * SO_REUSEADDR, which leaving repair mode clears.
 */
static struct repaired {
	int fd, reuse;
} * repaired;
static size_t n_repaired;

/* Data is written back in pieces the kernel allocates easily. */
#define TCP_CHUNK 65536

static int set_int(int fd, int name, int v)
{
	return setsockopt(fd, SOL_TCP, name, &v, sizeof(v)) ? -errno : 0;
}

static int get_uint(int fd, int name, uint32_t *v)
{
	socklen_t len = sizeof(*v);

	return getsockopt(fd, SOL_TCP, name, v, &len) ? -errno : 0;
}

static int remember(int fd, int reuse)
{
	struct repaired *n = realloc(repaired, (n_repaired + 1) * sizeof(*n));
	int copy;

	if (!n)
		return -ENOMEM;
	repaired = n;
	copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (copy < 0)
		return -errno;
	repaired[n_repaired++] = (struct repaired){copy, reuse};
	return 0;
}

/* Queue @q's sequence number and @len bytes of it into @seq and @data. */
static int read_queue(int fd, int q, size_t len, uint32_t *seq, ProtobufCBinaryData *data)
{
	ssize_t n;

	if (set_int(fd, TCP_REPAIR_QUEUE, q) < 0 || get_uint(fd, TCP_QUEUE_SEQ, seq) < 0)
		return -errno;
	data->data = malloc(len ? len : 1);
	if (!data->data)
		return -ENOMEM;
	data->len = len;
	if (!len)
		return 0;
	n = recv(fd, data->data, len, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static int read_conn(int fd, Crf__Net__TcpConn *c)
{
	bool sent = tcp_fin_sent(c->state), received = tcp_fin_received(c->state);
	struct tcp_repair_window w;
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	int outq, unsent, inq, r;
	size_t data;

	if (ioctl(fd, SIOCOUTQ, &outq) || ioctl(fd, SIOCOUTQNSD, &unsent) ||
	    ioctl(fd, SIOCINQ, &inq))
		return -errno;
	/*
	 * A FIN we sent is one number in the send queue's, after the data:
	 * in SIOCOUTQ until it is acknowledged (FIN-WAIT-2), in SIOCOUTQNSD
	 * until it is sent.  SIOCINQ leaves out the peer's FIN.
	 */
	if (sent &&
	    ((c->state != TCP_FIN_WAIT2 && outq < 1) || (c->state == TCP_FIN_WAIT2 && outq)))
		return -EPROTO;
	data = (size_t)outq - (sent && c->state != TCP_FIN_WAIT2 ? 1 : 0);
	c->send_unsent = (uint32_t)(sent && unsent ? unsent - 1 : unsent);
	r = read_queue(fd, TCP_SEND_QUEUE, data, &c->snd_seq, &c->send_queue);
	if (r < 0)
		return r;
	/* The queue's first byte, write_seq less what is still queued (and our FIN). */
	c->snd_seq -= (uint32_t)data + (sent ? 1 : 0);
	r = read_queue(fd, TCP_RECV_QUEUE, (size_t)inq, &c->rcv_seq, &c->recv_queue);
	if (r < 0)
		return r;
	c->rcv_seq -= (uint32_t)inq + (received ? 1 : 0);
	if (set_int(fd, TCP_REPAIR_QUEUE, TCP_NO_QUEUE) < 0)
		return -errno;
	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, SOL_TCP, TCP_INFO, &ti, &len))
		return -errno;
	c->options = ti.tcpi_options;
	c->snd_wscale = ti.tcpi_snd_wscale;
	c->rcv_wscale = ti.tcpi_rcv_wscale;
	if (get_uint(fd, TCP_MAXSEG, &c->mss) < 0 || get_uint(fd, TCP_TIMESTAMP, &c->timestamp) < 0)
		return -errno;
	len = sizeof(w);
	if (getsockopt(fd, SOL_TCP, TCP_REPAIR_WINDOW, &w, &len))
		return -errno;
	c->snd_wl1 = w.snd_wl1;
	c->snd_wnd = w.snd_wnd;
	c->max_window = w.max_window;
	c->rcv_wnd = w.rcv_wnd;
	c->rcv_wup = w.rcv_wup;
	return 0;
}

int tcp_repair_dump(int fd, Crf__Net__InetSk *sk, unsigned state, bool shut_rd, const char *name)
{
	socklen_t len;
	int reuse, r;

	if (!sk->peer)
		return crf_error_errno(EINVAL, "%s: established without a peer address", name);
	len = sizeof(reuse);
	if (getsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, &len))
		return crf_error_errno(errno, "%s: SO_REUSEADDR", name);
	r = netlock_conn(fd, sk, name);
	if (r < 0)
		return r;
	if (set_int(fd, TCP_REPAIR, TCP_REPAIR_ON) < 0)
		return crf_error_errno(errno, "%s: TCP_REPAIR", name);
	r = remember(fd, reuse);
	if (r < 0) {
		set_int(fd, TCP_REPAIR, TCP_REPAIR_OFF);
		return crf_error_errno(-r, "%s: keeping the socket", name);
	}
	sk->tcp = calloc(1, sizeof(*sk->tcp));
	if (!sk->tcp)
		return -ENOMEM;
	crf__net__tcp_conn__init(sk->tcp);
	if (state != TCP_ESTABLISHED) {
		sk->tcp->has_state = true;
		sk->tcp->state = state;
	}
	if (shut_rd && !tcp_fin_received(state)) {
		sk->tcp->has_shut_rd = true;
		sk->tcp->shut_rd = true;
	}
	r = read_conn(fd, sk->tcp);
	if (r < 0)
		return crf_error_errno(-r, "%s: reading the connection in repair mode", name);
	return 0;
}

void tcp_repair_release(void)
{
	for (size_t i = 0; i < n_repaired; i++)
		if (set_int(repaired[i].fd, TCP_REPAIR, TCP_REPAIR_OFF) < 0 ||
		    setsockopt(repaired[i].fd, SOL_SOCKET, SO_REUSEADDR, &repaired[i].reuse,
			       sizeof(repaired[i].reuse)))
			crf_warn("a socket stays in TCP repair mode: %s", strerror(errno));
	tcp_repair_forget();
}

void tcp_repair_forget(void)
{
	for (size_t i = 0; i < n_repaired; i++)
		close(repaired[i].fd);
	free(repaired);
	repaired = NULL;
	n_repaired = 0;
}

/* Write @len bytes of @p in repair mode to queue @q (the receive queue, or the send queue). */
static int write_queue(int fd, int q, const uint8_t *p, size_t len)
{
	ssize_t n;

	if (set_int(fd, TCP_REPAIR_QUEUE, q) < 0)
		return -errno;
	while (len) {
		n = send(fd, p, len < TCP_CHUNK ? len : TCP_CHUNK, 0);
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int set_options(int fd, const Crf__Net__TcpConn *c)
{
	struct tcp_repair_opt o[4];
	int n = 0;

	o[n++] = (struct tcp_repair_opt){TCPOPT_MAXSEG, c->mss};
	if (c->options & TCPI_OPT_WSCALE)
		o[n++] =
			(struct tcp_repair_opt){TCPOPT_WINDOW, c->snd_wscale | c->rcv_wscale << 16};
	if (c->options & TCPI_OPT_SACK)
		o[n++] = (struct tcp_repair_opt){TCPOPT_SACK_PERMITTED, 0};
	if (c->options & TCPI_OPT_TIMESTAMPS)
		o[n++] = (struct tcp_repair_opt){TCPOPT_TIMESTAMP, 0};
	if (setsockopt(fd, SOL_TCP, TCP_REPAIR_OPTIONS, o, (socklen_t)(n * sizeof(o[0]))))
		return -errno;
	if ((c->options & TCPI_OPT_TIMESTAMPS) && set_int(fd, TCP_TIMESTAMP, (int)c->timestamp) < 0)
		return -errno;
	return 0;
}

/*
 * The window as saved; @before_fin: before the peer's FIN is put back, its
 * number (which the saved rcv_wup may count) is not received yet.
 */
static int set_window(int fd, const Crf__Net__TcpConn *c, bool before_fin)
{
	struct tcp_repair_window w = {
		.snd_wl1 = c->snd_wl1,
		.snd_wnd = c->snd_wnd,
		.max_window = c->max_window,
		.rcv_wnd = c->rcv_wnd,
		.rcv_wup = c->rcv_wup,
	};
	uint32_t rcv_nxt = c->rcv_seq + (uint32_t)c->recv_queue.len;

	if (before_fin && (int32_t)(w.rcv_wup - rcv_nxt) > 0) {
		w.rcv_wnd += w.rcv_wup - rcv_nxt;
		w.rcv_wup = rcv_nxt;
	}
	return setsockopt(fd, SOL_TCP, TCP_REPAIR_WINDOW, &w, sizeof(w)) ? -errno : 0;
}

/*
 * bind() to an IPv6 address (not v4-mapped) sets IPV6_V6ONLY, which cannot be
 * cleared once bound: a connection whose end has it off (a client's, bound
 * by its connect()) is bound to the wildcard address with its port, and
 * connect() chooses the source address, checked against the saved one.
 */
static bool bind_any(int fd, const Crf__Net__InetSk *sk)
{
	socklen_t len = sizeof(int);
	int v6only = 1;

	return sk->family == AF_INET6 && !inet_addr_is_mapped(sk->local) &&
	       !inet_addr_is_any(sk->local) &&
	       !getsockopt(fd, SOL_IPV6, IPV6_V6ONLY, &v6only, &len) && !v6only;
}

/* The steps in repair mode, up to the window; @step names the one that failed. */
static int repair(int fd, const Crf__Net__InetSk *sk, const char **step)
{
	const Crf__Net__TcpConn *c = sk->tcp;
	size_t sent = c->send_queue.len - c->send_unsent;
	struct sockaddr_storage ss;
	socklen_t len;
	bool any;
	int r;

	*step = "TCP_REPAIR";
	if (set_int(fd, TCP_REPAIR, TCP_REPAIR_ON) < 0)
		return -errno;
	*step = "the send queue's sequence number";
	if (set_int(fd, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE) < 0 ||
	    set_int(fd, TCP_QUEUE_SEQ, (int)c->snd_seq) < 0)
		return -errno;
	*step = "the receive queue's sequence number";
	if (set_int(fd, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE) < 0 ||
	    set_int(fd, TCP_QUEUE_SEQ, (int)c->rcv_seq) < 0)
		return -errno;
	*step = "bind";
	any = bind_any(fd, sk);
	inet_addr_to_sa(sk->family, sk->local, &ss, &len);
	if (any)
		memset(&((struct sockaddr_in6 *)&ss)->sin6_addr, 0, sizeof(struct in6_addr));
	if (bind(fd, (struct sockaddr *)&ss, len))
		return -errno;
	*step = "connect";
	inet_addr_to_sa(sk->family, sk->peer, &ss, &len);
	if (connect(fd, (struct sockaddr *)&ss, len))
		return -errno;
	if (any) {
		struct sockaddr_storage got, want;

		*step = "the local address (the route gives another)";
		len = sizeof(got);
		inet_addr_to_sa(sk->family, sk->local, &want, &(socklen_t){0});
		if (getsockname(fd, (struct sockaddr *)&got, &len))
			return -errno;
		if (memcmp(&((struct sockaddr_in6 *)&got)->sin6_addr,
			   &((struct sockaddr_in6 *)&want)->sin6_addr, sizeof(struct in6_addr)))
			return -EADDRNOTAVAIL;
	}
	*step = "TCP_REPAIR_OPTIONS";
	if (set_options(fd, c) < 0)
		return -errno;
	*step = "the receive queue";
	if (write_queue(fd, TCP_RECV_QUEUE, c->recv_queue.data, c->recv_queue.len) < 0)
		return -errno;
	*step = "the send queue";
	if (write_queue(fd, TCP_SEND_QUEUE, c->send_queue.data, sent) < 0)
		return -errno;
	*step = "TCP_REPAIR_WINDOW";
	if (set_window(fd, c, tcp_fin_received(c->state)) < 0)
		return -errno;
	*step = "TCP_REPAIR_QUEUE";
	if (set_int(fd, TCP_REPAIR_QUEUE, TCP_NO_QUEUE) < 0)
		return -errno;
	if (!c->has_state)
		return 0;
	r = tcp_fin_restore(fd, sk, step);
	if (r < 0)
		return r;
	/* The window as it was after those segments. */
	*step = "TCP_REPAIR_WINDOW";
	return set_window(fd, c, false) < 0 ? -errno : 0;
}

/* The unsent tail of the send queue, written as the program wrote it. */
int tcp_write_unsent(int fd, const Crf__Net__TcpConn *c)
{
	const uint8_t *p = c->send_queue.data + c->send_queue.len - c->send_unsent;
	size_t len = c->send_unsent;
	int sndbuf = 0, lock = 0, big, r = 0;
	socklen_t sl = sizeof(sndbuf), ll = sizeof(lock);
	ssize_t n;

	/*
	 * The queue the kernel held may be over the send buffer's size (it
	 * lets a queue overshoot it): for the writes, a buffer big enough, and
	 * then the size and its lock (SO_BUF_LOCK, which setting it sets) again
	 * as they were.
	 */
	if (len && (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl) ||
		    getsockopt(fd, SOL_SOCKET, SO_BUF_LOCK, &lock, &ll)))
		return -errno;
	big = (int)(c->send_queue.len * 4 + 65536);
	if (len && big > sndbuf &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &(int){big / 2}, sizeof(int)))
		return -errno;
	while (len) {
		n = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (c->send_unsent && big > sndbuf) {
		int now = 0;

		sl = sizeof(now);
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &(int){sndbuf / 2}, sizeof(int)) ||
		    setsockopt(fd, SOL_SOCKET, SO_BUF_LOCK, &lock, sizeof(lock)) ||
		    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &now, &sl))
			return r < 0 ? r : -errno;
		/* An odd size (the kernel's tuning) cannot be set again. */
		if (r >= 0 && now != sndbuf)
			r = -ERANGE;
	}
	return r;
}

int tcp_repair_restore(int fd, const Crf__Net__InetSk *sk, const char *name)
{
	const char *step = "options";
	int r;

	if (!sk->tcp || !sk->peer || sk->tcp->send_unsent > sk->tcp->send_queue.len)
		return crf_error_errno(EBADMSG, "%s: the connection's record is incomplete", name);
	r = sockopt_restore(fd, sk, name);
	if (r >= 0)
		r = repair(fd, sk, &step);
	return r < 0 ? crf_error_errno(-r, "%s: %s in repair mode", name, step) : 0;
}

int tcp_repair_finish(int fd, const Crf__Net__InetSk *sk, const char *name)
{
	int r;

	/* Out of repair mode: its window probe is dropped while the lock holds. */
	if (set_int(fd, TCP_REPAIR, TCP_REPAIR_OFF) < 0)
		return crf_error_errno(errno, "%s: TCP_REPAIR off", name);
	r = sockopt_restore_reuse(fd, sk, name);
	if (r < 0)
		return r;
	/* Before our FIN, if it was sent (tcp-fin.c). */
	if (!tcp_fin_sent(sk->tcp->state)) {
		r = tcp_write_unsent(fd, sk->tcp);
		if (r < 0)
			return crf_error_errno(-r, "%s: %u bytes never sent", name,
					       sk->tcp->send_unsent);
	}
	/* Last: setting the send buffer's size for those writes locked it. */
	r = sockopt_restore_buf_lock(fd, sk->opts, sk->n_opts, name);
	if (r < 0)
		return r;
	if (sk->tcp->shut_rd && shutdown(fd, SHUT_RD) < 0)
		return crf_error_errno(errno, "%s: shutdown(SHUT_RD)", name);
	return tcp_check_state(fd, sk, name);
}
