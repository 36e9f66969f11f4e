/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * packet.h - what packet.c and packet-diag.c share: a packet socket as
 * packet_diag describes it.
 */
#ifndef CRF_PLUGIN_NET_PACKET_H
#define CRF_PLUGIN_NET_PACKET_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/packet_diag.h>

#include "packet.pb-c.h"

/* The most memberships one socket may have here. */
#define PACKET_MC_MAX 64

struct packet_diag {
	uint8_t type;
	uint16_t protocol; /* host order */
	struct packet_diag_info info;
	bool has_rx, has_tx;
	struct packet_diag_ring rx, tx;
	bool has_fanout;
	uint32_t fanout;
	struct packet_diag_mclist mc[PACKET_MC_MAX];
	unsigned n_mc;
};

/* The handlers of the kind "packet" (packet.c). */
struct crf_ctx;
struct crf_object;
int packet_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int packet_restore(struct crf_ctx *ctx, const struct crf_object *obj);

/* Socket @copy (inode @ino) as packet_diag lists it in its namespace. */
int packet_diag_get(int copy, uint32_t ino, struct packet_diag *d, const char *what);

#endif
