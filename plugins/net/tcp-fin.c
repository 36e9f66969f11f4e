// SPDX-License-Identifier: GPL-2.0-only
/*
 * TCP connections closing, one way or both: FIN-WAIT-1, FIN-WAIT-2,
 * CLOSE-WAIT, LAST-ACK, CLOSING, and a connection shut down for reading.
 *
 * Repair mode makes a connection established at once; the FINs are then
 * put where they were.  Ours, sent: shutdown(SHUT_WR) with the send queue
 * chosen, which queues the FIN as sent, not transmitted (it is
 * retransmitted if the peer does not acknowledge it).  The peer's, received:
 * a FIN segment from the peer's address and port, in sequence, made by crf
 * and sent through a raw socket (marked NETLOCK_MARK, which the network
 * lock lets through), which the socket takes as the peer's.  A FIN of ours
 * that the peer acknowledged (FIN-WAIT-2): a segment acknowledging it, the
 * same way.  The order gives each state: FIN-WAIT-1 ours; FIN-WAIT-2 ours
 * and its ack; CLOSE-WAIT the peer's; LAST-ACK the peer's, then ours;
 * CLOSING ours, then the peer's.  The window is set again as it was after
 * these segments, and the state is checked.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <crf/cleanup.h>

#include "inet.h"

bool tcp_fin_sent(unsigned state)
{
	return state == TCP_FIN_WAIT1 || state == TCP_FIN_WAIT2 || state == TCP_CLOSING ||
	       state == TCP_LAST_ACK;
}

bool tcp_fin_received(unsigned state)
{
	return state == TCP_CLOSE_WAIT || state == TCP_LAST_ACK || state == TCP_CLOSING;
}

static uint32_t sum16(const void *p, size_t len, uint32_t sum)
{
	const uint8_t *b = p;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	return sum;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

/*
 * A segment from @sk's peer to it, with @flags, @seq, @ack and @win, sent
 * through a raw socket of the calling thread's namespace.
 */
static int inject(const Crf__Net__InetSk *sk, uint8_t flags, uint32_t seq, uint32_t ack,
		  uint16_t win)
{
	const Crf__Net__Addr *src = sk->peer, *dst = sk->local;
	bool v4 = src->addr.len == 4 || (inet_addr_is_mapped(src) && inet_addr_is_mapped(dst));
	size_t off = src->addr.len == 16 && v4 ? 12 : 0, alen = v4 ? 4 : 16;
	uint8_t pkt[sizeof(struct ip6_hdr) + sizeof(struct tcphdr)];
	size_t hlen = v4 ? sizeof(struct iphdr) : sizeof(struct ip6_hdr);
	struct tcphdr *th = (void *)(pkt + hlen);
	struct sockaddr_storage to;
	_cleanup_close_ int fd = -1;
	int mark = NETLOCK_MARK;
	uint32_t sum;
	socklen_t tolen;

	memset(pkt, 0, sizeof(pkt));
	memset(&to, 0, sizeof(to));
	if (v4) {
		struct iphdr *ip = (void *)pkt;
		struct sockaddr_in *in = (void *)&to;

		ip->version = 4;
		ip->ihl = 5;
		ip->ttl = 64;
		ip->protocol = IPPROTO_TCP;
		ip->tot_len = htons((uint16_t)(hlen + sizeof(*th)));
		memcpy(&ip->saddr, src->addr.data + off, 4);
		memcpy(&ip->daddr, dst->addr.data + off, 4);
		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, &ip->daddr, 4);
		tolen = sizeof(*in);
	} else {
		struct ip6_hdr *ip6 = (void *)pkt;
		struct sockaddr_in6 *in6 = (void *)&to;

		ip6->ip6_flow = htonl(6u << 28);
		ip6->ip6_plen = htons(sizeof(*th));
		ip6->ip6_nxt = IPPROTO_TCP;
		ip6->ip6_hlim = 64;
		memcpy(&ip6->ip6_src, src->addr.data, 16);
		memcpy(&ip6->ip6_dst, dst->addr.data, 16);
		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, &ip6->ip6_dst, 16);
		tolen = sizeof(*in6);
	}
	th->source = htons((uint16_t)src->port);
	th->dest = htons((uint16_t)dst->port);
	th->seq = htonl(seq);
	th->ack_seq = htonl(ack);
	th->doff = sizeof(*th) / 4;
	((uint8_t *)th)[13] = flags;
	th->window = htons(win);
	/* The pseudo-header: both addresses, the protocol, the length. */
	sum = sum16(src->addr.data + off, alen, 0);
	sum = sum16(dst->addr.data + off, alen, sum);
	sum += IPPROTO_TCP + (uint32_t)sizeof(*th);
	th->check = fold(sum16(th, sizeof(*th), sum));

	fd = socket(v4 ? AF_INET : AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)))
		return -errno;
	if (sendto(fd, pkt, hlen + sizeof(*th), 0, (struct sockaddr *)&to, tolen) < 0)
		return -errno;
	return 0;
}

static int state_of(int fd, unsigned *state)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, SOL_TCP, TCP_INFO, &ti, &len))
		return -errno;
	*state = ti.tcpi_state;
	return 0;
}

/* Wait (at most a second) until @fd is in @want: the segment crf sent is taken in softirq. */
static int await(int fd, unsigned want)
{
	unsigned s = 0;

	for (int i = 0; i < 1000; i++) {
		int r = state_of(fd, &s);

		if (r < 0)
			return r;
		if (s == want)
			return 0;
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	return -ETIMEDOUT;
}

static int set_int(int fd, int name, int v)
{
	return setsockopt(fd, SOL_TCP, name, &v, sizeof(v)) ? -errno : 0;
}

/* Our FIN, queued as sent (in repair mode, with the send queue chosen). */
static int our_fin(int fd)
{
	if (set_int(fd, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE) < 0 || shutdown(fd, SHUT_WR) < 0)
		return -errno;
	return set_int(fd, TCP_REPAIR_QUEUE, TCP_NO_QUEUE);
}

int tcp_fin_restore(int fd, const Crf__Net__InetSk *sk, const char **step)
{
	const Crf__Net__TcpConn *c = sk->tcp;
	unsigned st = c->state;
	/* What the peer sends next, and the end of our data (our FIN's number). */
	uint32_t rcv_nxt = c->rcv_seq + (uint32_t)c->recv_queue.len;
	uint32_t snd_end = c->snd_seq + (uint32_t)c->send_queue.len;
	uint16_t win = (uint16_t)(c->snd_wnd >> (c->options & TCPI_OPT_WSCALE ? c->snd_wscale : 0));
	int r = 0;

	if (tcp_fin_sent(st) && c->send_unsent) {
		/* The data never sent goes before our FIN, as the program wrote it. */
		*step = "the data never sent, before the FIN";
		if (set_int(fd, TCP_REPAIR, TCP_REPAIR_OFF_NO_WP) < 0)
			return -errno;
		r = tcp_write_unsent(fd, c);
		if (r < 0)
			return r;
		if (set_int(fd, TCP_REPAIR, TCP_REPAIR_ON) < 0)
			return -errno;
	}
	if (st == TCP_FIN_WAIT1 || st == TCP_FIN_WAIT2 || st == TCP_CLOSING) {
		*step = "our FIN";
		r = our_fin(fd);
		if (r >= 0)
			r = await(fd, TCP_FIN_WAIT1);
	}
	if (r >= 0 && st == TCP_FIN_WAIT2) {
		/* The peer acknowledged all of it, our FIN included. */
		*step = "the peer's acknowledgement of our FIN";
		r = inject(sk, TH_ACK, rcv_nxt, snd_end + 1, win);
		if (r >= 0)
			r = await(fd, TCP_FIN_WAIT2);
	}
	if (r >= 0 && tcp_fin_received(st)) {
		*step = "the peer's FIN";
		r = inject(sk, TH_FIN | TH_ACK, rcv_nxt, c->snd_seq, win);
		if (r >= 0)
			r = await(fd, st == TCP_CLOSING ? TCP_CLOSING : TCP_CLOSE_WAIT);
	}
	if (r >= 0 && st == TCP_LAST_ACK) {
		*step = "our FIN";
		r = our_fin(fd);
		if (r >= 0)
			r = await(fd, TCP_LAST_ACK);
	}
	return r;
}
