// SPDX-License-Identifier: GPL-2.0-only
/*
 * Packet sockets (AF_PACKET) as the fd kind "packet": SOCK_RAW and
 * SOCK_DGRAM, and the old SOCK_PACKET.  What makes one: its type, the
 * ethertype it receives and the interface it is bound to (getsockname,
 * packet_diag), whether it receives at all, its options (SOL_SOCKET and
 * SOL_PACKET ones that differ from a fresh socket's, sockopt.c; a classic
 * BPF filter among them), its memberships (PACKET_ADD_MEMBERSHIP: promisc,
 * allmulti, multicast and unicast addresses, each as many times as added),
 * its fanout group, PACKET_COPY_THRESH, and its rings' configuration.
 * packet_diag tells what getsockopt does not (packet-diag.c).
 *
 * The restore makes the socket receiving nothing (protocol 0), sets the
 * options and the filter, makes the rings, and only then binds it to its
 * interface and ethertype, so that no packet lands before the filter;
 * then the memberships and the fanout group (which needs a bound socket).
 * The interface is the same index: in a net namespace of the tree's own,
 * the netns plugin made each device again at its index.
 *
 * Refused, naming the socket: a packet waiting in its receive queue (it
 * could not be queued again to this socket alone), a ring with a frame in
 * use (a packet the program has not read, or one it asked to send) or
 * that the tree has mapped (the position the kernel writes at next is
 * nowhere to be read; a ring never mapped and with every frame free has
 * never been written to), a TPACKET_V3 transmit ring, a fanout group that
 * steers by a BPF program (not readable), and a socket bound with a
 * protocol that receives nothing (its interface went away).
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/if_packet.h>

#include <crf/cleanup.h>

#include "inet.h"
#include "net.h"
#include "packet.h"

static const char *type_name(uint32_t type)
{
	return type == SOCK_RAW ? "raw" : type == SOCK_DGRAM ? "dgram" : "packet";
}

static void sk_name(const Crf__Net__PacketSk *sk, char *buf, size_t len)
{
	if (sk->device)
		snprintf(buf, len, "packet %s 0x%04x on %s", type_name(sk->type), sk->protocol,
			 sk->device);
	else
		snprintf(buf, len, "packet %s 0x%04x ifindex %u", type_name(sk->type), sk->protocol,
			 sk->ifindex);
}

/* The status word of frame @i of a TPACKET_V1/V2 ring at @ring. */
static uint32_t frame_status(const uint8_t *ring, const struct packet_diag_ring *r, uint32_t i)
{
	uint32_t per_block = r->pdr_block_size / r->pdr_frame_size;
	uint32_t status;

	memcpy(&status,
	       ring + (size_t)(i / per_block) * r->pdr_block_size +
		       (size_t)(i % per_block) * r->pdr_frame_size,
	       sizeof(status));
	return status;
}

/* A TPACKET_V3 receive block's status (struct tpacket_block_desc's hdr.bh1.block_status). */
static uint32_t block_status(const uint8_t *ring, const struct packet_diag_ring *r, uint32_t b)
{
	uint32_t status;

	memcpy(&status, ring + (size_t)b * r->pdr_block_size + 8, sizeof(status));
	return status;
}

/* Why a ring cannot be made again as it is, or NULL: every frame must be free. */
static const char *ring_refusal(const uint8_t *ring, const struct packet_diag_ring *r,
				uint32_t version, bool tx)
{
	if (!r->pdr_block_size || !r->pdr_frame_size || r->pdr_frame_size > r->pdr_block_size)
		return "a ring of a size crf does not read";
	if (version == TPACKET_V3 && tx)
		return "a TPACKET_V3 transmit ring, which crf does not read";
	if (version == TPACKET_V3) {
		for (uint32_t b = 0; b < r->pdr_block_nr; b++)
			if (block_status(ring, r, b) != TP_STATUS_KERNEL)
				return "a receive ring with packets the program has not read";
		return NULL;
	}
	for (uint32_t i = 0; i < r->pdr_frame_nr; i++)
		if (frame_status(ring, r, i) != (tx ? TP_STATUS_AVAILABLE : TP_STATUS_KERNEL))
			return tx ? "a transmit ring with frames the program asked to send"
				  : "a receive ring with packets the program has not read";
	return NULL;
}

static Crf__Net__PacketRing *ring_new(const struct packet_diag_ring *r)
{
	Crf__Net__PacketRing *p = malloc(sizeof(*p));

	if (!p)
		return NULL;
	crf__net__packet_ring__init(p);
	p->block_size = r->pdr_block_size;
	p->block_nr = r->pdr_block_nr;
	p->frame_size = r->pdr_frame_size;
	p->frame_nr = r->pdr_frame_nr;
	p->retire_tmo = r->pdr_retire_tmo;
	p->sizeof_priv = r->pdr_sizeof_priv;
	p->features = r->pdr_features;
	return p;
}

/*
 * The rings, read through a mapping of crf's own (the receive ring first,
 * the transmit ring after it, as the kernel maps them).
 */
static int rings(int fd, const struct packet_diag *d, Crf__Net__PacketSk *sk, const char *what)
{
	size_t rx = d->has_rx ? (size_t)d->rx.pdr_block_size * d->rx.pdr_block_nr : 0;
	size_t tx = d->has_tx ? (size_t)d->tx.pdr_block_size * d->tx.pdr_block_nr : 0;
	const char *why = NULL;
	uint8_t *map;

	if (!rx && !tx)
		return 0;
	map = mmap(NULL, rx + tx, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return crf_error_errno(errno, "%s: mapping its rings", what);
	if (rx)
		why = ring_refusal(map, &d->rx, d->info.pdi_version, false);
	if (!why && tx)
		why = ring_refusal(map + rx, &d->tx, d->info.pdi_version, true);
	munmap(map, rx + tx);
	if (why)
		return crf_error_errno(ENOTSUP, "%s: %s", what, why);
	if (rx && !(sk->rx_ring = ring_new(&d->rx)))
		return -ENOMEM;
	if (tx && !(sk->tx_ring = ring_new(&d->tx)))
		return -ENOMEM;
	return 0;
}

static int memberships(const struct packet_diag *d, Crf__Net__PacketSk *sk)
{
	for (unsigned i = 0; i < d->n_mc; i++) {
		const struct packet_diag_mclist *m = &d->mc[i];
		Crf__Net__PacketMc *mc = inet_push(&sk->mclist, &sk->n_mclist, sizeof(*mc));

		if (!mc)
			return -ENOMEM;
		crf__net__packet_mc__init(mc);
		mc->ifindex = m->pdmc_index;
		mc->type = m->pdmc_type;
		mc->count = m->pdmc_count;
		mc->addr.len =
			m->pdmc_alen > sizeof(m->pdmc_addr) ? sizeof(m->pdmc_addr) : m->pdmc_alen;
		mc->addr.data = inet_memdup(m->pdmc_addr, mc->addr.len);
		if (!mc->addr.data)
			return -ENOMEM;
	}
	return 0;
}

static int describe(int fd, const struct packet_diag *d, Crf__Net__PacketSk *sk, char *what,
		    size_t what_len)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	const char *why;
	struct pollfd p = {.fd = fd, .events = POLLIN};

	sk->type = d->type;
	sk->protocol = d->protocol;
	sk->ifindex = d->info.pdi_index;
	sk->running = d->info.pdi_flags & PDI_RUNNING;
	if (sk->type == SOCK_PACKET) {
		const struct sockaddr *sa = (const void *)&ss;

		if (getsockname(fd, (struct sockaddr *)&ss, &len))
			return crf_error_errno(errno, "%s: getsockname", what);
		sk->device = strndup(sa->sa_data, sizeof(sa->sa_data));
		if (!sk->device)
			return -ENOMEM;
	}
	sk_name(sk, what + strlen(what), what_len - strlen(what));
	if (sk->protocol && !sk->running)
		return crf_error_errno(ENOTSUP,
				       "%s: bound with a protocol but receiving nothing (its "
				       "interface went away)",
				       what);
	why = sockopt_refusal(fd, true);
	if (!why && poll(&p, 1, 0) == 1 && (p.revents & POLLIN))
		why = "packets waiting in its receive queue, which could not be queued again "
		      "to this socket alone";
	if (!why && d->has_fanout && ((d->fanout >> 16) & 0xff) >= PACKET_FANOUT_CBPF &&
	    ((d->fanout >> 16) & 0xff) <= PACKET_FANOUT_EBPF)
		why = "in a fanout group steered by a BPF program, which crf cannot read back";
	if (why)
		return crf_error_errno(ENOTSUP, "%s: %s", what, why);
	if (d->has_fanout) {
		uint32_t v = 0;
		socklen_t vl = sizeof(v);

		/* getsockopt's value has the flags too, packet_diag's not. */
		if (getsockopt(fd, SOL_PACKET, PACKET_FANOUT, &v, &vl))
			return crf_error_errno(errno, "%s: PACKET_FANOUT", what);
		/* A unique id the kernel chose is set again as an id of the program's. */
		sk->has_fanout = true;
		sk->fanout = v & ~((uint32_t)PACKET_FANOUT_FLAG_UNIQUEID << 16);
	}
	if (d->info.pdi_copy_thresh) {
		sk->has_copy_thresh = true;
		sk->copy_thresh = d->info.pdi_copy_thresh;
	}
	return memberships(d, sk);
}

int packet_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;
	Crf__Net__PacketSk sk = CRF__NET__PACKET_SK__INIT;
	_cleanup_free_ uint8_t *buf = NULL;
	struct packet_diag d;
	char what[192];
	struct stat st;
	size_t len;
	int fd, r;

	if (!info)
		return crf_error_errno(EINVAL, "fd %d: no fd information", obj->id);
	fd = info->copy; /* the files plugin's, which closes it */
	snprintf(what, sizeof(what), "pid %d: fd %d (%s)", (int)obj->pid, obj->id, obj->desc);
	r = fstat(fd, &st) ? crf_error_errno(errno, "%s: fstat", what) : 0;
	if (r == 0)
		r = packet_diag_get(fd, (uint32_t)st.st_ino, &d, what);
	if (r == 0) {
		snprintf(what, sizeof(what), "pid %d: fd %d: ", (int)obj->pid, obj->id);
		r = describe(fd, &d, &sk, what, sizeof(what));
	}
	if (r == 0)
		r = rings(fd, &d, &sk, what);
	if (r == 0)
		r = sockopt_dump_list(fd, AF_PACKET, (int)sk.type, 0, 0, &sk.opts, &sk.n_opts,
				      what);
	if (r == 0) {
		len = crf__net__packet_sk__get_packed_size(&sk);
		buf = malloc(len ? len : 1);
		r = buf ? 0 : -ENOMEM;
	}
	if (r == 0) {
		crf__net__packet_sk__pack(&sk, buf);
		r = crf_fd_save_payload(ctx, obj, buf, len);
	}
	for (size_t i = 0; i < sk.n_opts; i++)
		protobuf_c_message_free_unpacked(&sk.opts[i]->base, NULL);
	free(sk.opts);
	for (size_t i = 0; i < sk.n_mclist; i++)
		protobuf_c_message_free_unpacked(&sk.mclist[i]->base, NULL);
	free(sk.mclist);
	free(sk.rx_ring);
	free(sk.tx_ring);
	free(sk.device);
	return r;
}

static int set_ring(int fd, int name, const Crf__Net__PacketRing *r, const char *what)
{
	struct tpacket_req3 req = {
		.tp_block_size = r->block_size,
		.tp_block_nr = r->block_nr,
		.tp_frame_size = r->frame_size,
		.tp_frame_nr = r->frame_nr,
		.tp_retire_blk_tov = r->retire_tmo,
		.tp_sizeof_priv = r->sizeof_priv,
		.tp_feature_req_word = r->features,
	};
	int version = 0;
	socklen_t len = sizeof(version);

	if (getsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, &len))
		return crf_error_errno(errno, "%s: PACKET_VERSION", what);
	if (setsockopt(fd, SOL_PACKET, name, &req,
		       version == TPACKET_V3 ? sizeof(req) : sizeof(struct tpacket_req)))
		return crf_error_errno(errno, "%s: %s", what,
				       name == PACKET_RX_RING ? "PACKET_RX_RING"
							      : "PACKET_TX_RING");
	return 0;
}

/* Bound to its interface and ethertype: from here on it receives. */
static int bind_it(int fd, const Crf__Net__PacketSk *sk, const char *what)
{
	struct sockaddr_ll ll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons((uint16_t)sk->protocol),
		.sll_ifindex = (int)sk->ifindex,
	};
	struct sockaddr pkt = {.sa_family = AF_PACKET};

	if (sk->type == SOCK_PACKET) {
		if (!sk->device || !sk->device[0])
			return 0;
		memcpy(pkt.sa_data, sk->device, strnlen(sk->device, sizeof(pkt.sa_data)));
		if (bind(fd, &pkt, sizeof(pkt)))
			return crf_error_errno(errno, "%s: bind to %s", what, sk->device);
		return 0;
	}
	if (!sk->protocol && !sk->ifindex)
		return 0;
	if (bind(fd, (struct sockaddr *)&ll, sizeof(ll)))
		return crf_error_errno(errno, "%s: bind", what);
	return 0;
}

static int make(int fd, const Crf__Net__PacketSk *sk, const char *what)
{
	int r = sockopt_restore_list(fd, sk->opts, sk->n_opts, what);

	if (r == 0 && sk->has_copy_thresh &&
	    setsockopt(fd, SOL_PACKET, PACKET_COPY_THRESH, &sk->copy_thresh,
		       sizeof(sk->copy_thresh)))
		r = crf_error_errno(errno, "%s: PACKET_COPY_THRESH", what);
	if (r == 0 && sk->rx_ring)
		r = set_ring(fd, PACKET_RX_RING, sk->rx_ring, what);
	if (r == 0 && sk->tx_ring)
		r = set_ring(fd, PACKET_TX_RING, sk->tx_ring, what);
	if (r == 0)
		r = bind_it(fd, sk, what);
	for (size_t i = 0; r == 0 && i < sk->n_mclist; i++) {
		const Crf__Net__PacketMc *m = sk->mclist[i];
		struct packet_mreq mr = {
			.mr_ifindex = (int)m->ifindex,
			.mr_type = (unsigned short)m->type,
			.mr_alen = (unsigned short)m->addr.len,
		};

		if (m->addr.len > sizeof(mr.mr_address))
			return crf_error_errno(EBADMSG, "%s: a membership's address of %zu bytes",
					       what, m->addr.len);
		if (m->addr.len)
			memcpy(mr.mr_address, m->addr.data, m->addr.len);
		for (uint32_t n = 0; r == 0 && n < m->count; n++)
			if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)))
				r = crf_error_errno(errno, "%s: PACKET_ADD_MEMBERSHIP", what);
	}
	if (r == 0 && sk->has_fanout &&
	    setsockopt(fd, SOL_PACKET, PACKET_FANOUT, &sk->fanout, sizeof(sk->fanout)))
		r = crf_error_errno(errno, "%s: PACKET_FANOUT %#x", what, sk->fanout);
	if (r == 0)
		r = sockopt_restore_buf_lock(fd, sk->opts, sk->n_opts, what);
	return r;
}

int packet_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;
	Crf__Net__PacketSk *sk;
	char what[192];
	int fd, r;

	(void)ctx;
	if (!info || !info->payload_len)
		return crf_error_errno(EBADMSG, "fd %d: no packet socket saved", obj->id);
	sk = crf__net__packet_sk__unpack(NULL, info->payload_len, info->payload);
	if (!sk || (sk->type != SOCK_RAW && sk->type != SOCK_DGRAM && sk->type != SOCK_PACKET) ||
	    sk->protocol > 0xffff) {
		if (sk)
			crf__net__packet_sk__free_unpacked(sk, NULL);
		return crf_error_errno(EBADMSG, "fd %d: the packet socket's record does not decode",
				       obj->id);
	}
	snprintf(what, sizeof(what), "fd %d: ", obj->id);
	sk_name(sk, what + strlen(what), sizeof(what) - strlen(what));
	/* Protocol 0: receiving nothing until bound. */
	fd = socket(AF_PACKET,
		    (int)sk->type | SOCK_CLOEXEC | (info->flags & O_NONBLOCK ? SOCK_NONBLOCK : 0),
		    sk->type == SOCK_PACKET ? htons((uint16_t)sk->protocol) : 0);
	r = fd < 0 ? crf_error_errno(errno, "%s: socket", what) : make(fd, sk, what);
	crf__net__packet_sk__free_unpacked(sk, NULL);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	crf_debug("%s restored", what);
	return fd;
}
