/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * inet-proc.h - a socket's line in /proc/PID/net/{raw,raw6,icmp,icmp6}.
 *
 * getpeername() says ENOTCONN for a raw or ping socket connected with port
 * 0 (the kernel reads a peer port of 0 as "not connected"), so the state
 * and the peer come from the table of the socket's net namespace instead.
 * Pure: the caller reads the file.
 */
#ifndef CRF_PLUGIN_NET_INET_PROC_H
#define CRF_PLUGIN_NET_INET_PROC_H

#include <stdint.h>

struct inet_proc_sk {
	uint8_t local[16], peer[16]; /* network order; addr_len bytes of each */
	unsigned addr_len;	     /* 4 or 16 */
	unsigned local_port, peer_port;
	unsigned state;	   /* the kernel's sk_state: 1 (TCP_ESTABLISHED) connected, 7 not */
	unsigned rx_queue; /* bytes the receive queue holds */
};

/*
 * Socket inode @ino's line in @text (the whole file): 1 found and in @out, 0
 * not in it, -EBADMSG for a line that is not of the format.
 */
int inet_proc_find(const char *text, unsigned long ino, struct inet_proc_sk *out);

#endif
