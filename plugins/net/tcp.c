// SPDX-License-Identifier: GPL-2.0-only
/*
 * TCP sockets: never connected (bound or not), listening, and connected
 * (tcp-repair.c): established, or closing one way or both (FIN-WAIT-1/2,
 * CLOSE-WAIT, LAST-ACK, CLOSING: tcp-fin.c), shut down for reading or not.
 * Refused, named by addresses and state: SYN-SENT, and a socket closed
 * after a connection (reset, refused, timed out, or gone through
 * TIME-WAIT: TCP_CLOSE, shut down both ways), whose peer the kernel no
 * longer tells.
 *
 * A listener's backlog and the connections waiting in it come from
 * TCP_INFO, which reports them for a listening socket in tcpi_sacked and
 * tcpi_unacked.  Connections not yet accepted are not restored: the dump
 * refuses them by name, or with --skip-in-flight leaves them out (their
 * peers see the connection reset).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <crf/cleanup.h>

#include "inet.h"

static const char *const state_names[] = {
	[TCP_ESTABLISHED] = "established",
	[TCP_SYN_SENT] = "syn-sent",
	[TCP_SYN_RECV] = "syn-recv",
	[TCP_FIN_WAIT1] = "fin-wait-1",
	[TCP_FIN_WAIT2] = "fin-wait-2",
	[TCP_TIME_WAIT] = "time-wait",
	[TCP_CLOSE] = "close",
	[TCP_CLOSE_WAIT] = "close-wait",
	[TCP_LAST_ACK] = "last-ack",
	[TCP_LISTEN] = "listening",
	[TCP_CLOSING] = "closing",
};

static const char *state_name(unsigned s)
{
	return s < sizeof(state_names) / sizeof(state_names[0]) && state_names[s] ? state_names[s]
										  : "unknown state";
}

/* Shut down for reading (by the program, or by the peer's FIN): POLLRDHUP. */
static int rd_hup(int fd, bool *hup)
{
	struct pollfd p = {.fd = fd, .events = POLLRDHUP};

	if (poll(&p, 1, 0) < 0)
		return -errno;
	*hup = p.revents & POLLRDHUP;
	return 0;
}

int tcp_check_state(int fd, const Crf__Net__InetSk *sk, const char *name)
{
	unsigned want = sk->tcp->has_state ? sk->tcp->state : TCP_ESTABLISHED;
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, SOL_TCP, TCP_INFO, &ti, &len))
		return crf_error_errno(errno, "%s: TCP_INFO", name);
	if (ti.tcpi_state != want)
		return crf_error_errno(EPROTO, "%s: restored %s, not %s as dumped", name,
				       state_name(ti.tcpi_state), state_name(want));
	return 0;
}

int tcp_dump(int fd, Crf__Net__InetSk *sk, const struct inet_opts *o, const char *name)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	bool hup = false;
	int r;

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, SOL_TCP, TCP_INFO, &ti, &len))
		return crf_error_errno(errno, "%s: TCP_INFO", name);
	r = rd_hup(fd, &hup);
	if (r < 0)
		return crf_error_errno(-r, "%s: poll", name);
	switch (ti.tcpi_state) {
	case TCP_CLOSE:
		/*
		 * Shut down: closed after a connection (or shutdown() unconnected);
		 * with --tcp-close restored as it restores connections.
		 */
		if (hup && o->tcp_close) {
			sk->state = CRF__NET__STATE__CLOSED;
			return 0;
		}
		if (hup)
			return crf_error_errno(EOPNOTSUPP,
					       "%s, closed: the connection it had is over (reset, "
					       "refused, timed out or closed both ways) or it was "
					       "shut down, which crf does not restore",
					       name);
		sk->state = CRF__NET__STATE__UNCONNECTED;
		return 0;
	case TCP_LISTEN:
		if (ti.tcpi_unacked && !o->skip_in_flight)
			return crf_error_errno(EOPNOTSUPP,
					       "%s, listening: %u connection%s not yet accepted "
					       "(--skip-in-flight leaves them out)",
					       name, ti.tcpi_unacked,
					       ti.tcpi_unacked == 1 ? "" : "s");
		if (ti.tcpi_unacked)
			crf_warn("%s, listening: %u connection%s not yet accepted left out "
				 "(--skip-in-flight)",
				 name, ti.tcpi_unacked, ti.tcpi_unacked == 1 ? "" : "s");
		sk->state = CRF__NET__STATE__LISTEN;
		sk->has_backlog = true;
		sk->backlog = ti.tcpi_sacked;
		return 0;
	case TCP_ESTABLISHED:
	case TCP_FIN_WAIT1:
	case TCP_FIN_WAIT2:
	case TCP_CLOSE_WAIT:
	case TCP_LAST_ACK:
	case TCP_CLOSING:
		/* Restored closed (--tcp-close, as CRIU's): nothing of the connection saved. */
		if (o->tcp_close) {
			sk->state = CRF__NET__STATE__CLOSED;
			return 0;
		}
		if (!o->tcp_established)
			return crf_error_errno(EOPNOTSUPP,
					       "%s, %s: crf dump --tcp-established "
					       "saves established connections",
					       name, state_name(ti.tcpi_state));
		sk->state = CRF__NET__STATE__ESTABLISHED;
		return tcp_repair_dump(fd, sk, ti.tcpi_state, hup, name);
	}
	return crf_error_errno(EOPNOTSUPP,
			       "%s, %s: crf restores TCP sockets only unconnected, "
			       "listening, or connected (established or closing)",
			       name, state_name(ti.tcpi_state));
}

/*
 * bind() in repair mode: the kernel then lets the socket share its port
 * with any other (SK_FORCE_REUSE), as the original did with the
 * connections it accepted, whichever of them is made first.
 */
int tcp_bind_repair(int fd, const Crf__Net__InetSk *sk, const char *name)
{
	int on = TCP_REPAIR_ON, off = TCP_REPAIR_OFF_NO_WP;
	struct sockaddr_storage ss;
	socklen_t len;

	inet_addr_to_sa(sk->family, sk->local, &ss, &len);
	if (setsockopt(fd, SOL_TCP, TCP_REPAIR, &on, sizeof(on)))
		return crf_error_errno(errno, "%s: TCP_REPAIR", name);
	if (bind(fd, (struct sockaddr *)&ss, len))
		return crf_error_errno(errno, "%s: bind", name);
	if (setsockopt(fd, SOL_TCP, TCP_REPAIR, &off, sizeof(off)))
		return crf_error_errno(errno, "%s: TCP_REPAIR off", name);
	return 0;
}

int tcp_restore(const Crf__Net__InetSk *sk, int nonblock, const char *name)
{
	_cleanup_close_ int fd =
		socket(sk->family, SOCK_STREAM | SOCK_CLOEXEC | nonblock, IPPROTO_TCP);
	int r;

	if (fd < 0)
		return crf_error_errno(errno, "%s: socket", name);
	if (sk->state == CRF__NET__STATE__ESTABLISHED) {
		r = netlock_restore_here(name);
		if (r >= 0)
			r = tcp_repair_restore(fd, sk, name);
	} else {
		r = sockopt_restore(fd, sk, name);
	}
	if (r < 0)
		return r;
	if (sk->state == CRF__NET__STATE__ESTABLISHED)
		return TAKE_FD(fd);
	if (sk->local->port || !inet_addr_is_any(sk->local)) {
		r = tcp_bind_repair(fd, sk, name);
		if (r >= 0)
			r = sockopt_restore_reuse(fd, sk, name);
		if (r < 0)
			return r;
	}
	if (sk->state == CRF__NET__STATE__LISTEN && listen(fd, (int)sk->backlog))
		return crf_error_errno(errno, "%s: listen", name);
	/*
	 * --tcp-close: bound to its address and port, shut down both ways,
	 * never connected: reads give end of file, writes EPIPE, getpeername()
	 * ENOTCONN, TCP_INFO TCP_CLOSE.
	 */
	if (sk->state == CRF__NET__STATE__CLOSED && shutdown(fd, SHUT_RDWR) < 0 &&
	    errno != ENOTCONN)
		return crf_error_errno(errno, "%s: shutdown", name);
	return TAKE_FD(fd);
}
