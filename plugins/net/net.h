/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * net.h - what the files of the net plugin share.
 */
#ifndef CRF_PLUGIN_NET_H
#define CRF_PLUGIN_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <netlink/handlers.h>

#include <crf/plugin.h>

/* The probe hook: TCP repair, sock_diag, and rtnetlink through libnl. */
int net_probe(struct crf_ctx *ctx);

/* unix_diag and inet_diag, each tried on a socket of our own. */
void net_probe_diag(struct crf_ctx *ctx);

/*
 * The plugin's private state (crf_ctx_priv), from the first hook that needs
 * it to the cleanup stages; one member per group of files.
 */
struct net_state {
	struct unix_table *unix_sk; /* unix*.c */
	/*
	 * raw.c: the last /proc/PID/net/{raw,raw6,icmp,icmp6} read of each
	 * kind, and the net namespace it lists: a tree with many raw sockets
	 * reads each table once, not once a socket.
	 */
	struct net_proc_table {
		ino_t ns;
		char *text;
	} proc[4];
};

/* The state, allocated on first use; NULL when out of memory. */
struct net_state *net_state(struct crf_ctx *ctx);

/* dump-cleanup and restore-cleanup: free the state. */
int net_cleanup(struct crf_ctx *ctx);

/*
 * Why a socket is refused whatever its family (sockopt.c): an error pending
 * or queued, an eBPF program attached (SO_ATTACH_BPF), a classic filter
 * (SO_ATTACH_FILTER) unless @saves_filter (the kind saves its options,
 * sockopt_dump_list); NULL when none of these.
 */
const char *sockopt_refusal(int fd, bool saves_filter);

/*
 * @fn(@arg) called with crf's thread in the net namespace of socket @fd
 * (skns.c): its result, or an error entering it.
 */
int net_in_sk_ns(int fd, int (*fn)(void *arg), void *arg, const char *name);

/*
 * A sock_diag dump (SOCK_DIAG_BY_FAMILY, NLM_F_DUMP) of request @req
 * (@len bytes), asked in the net namespace of socket @fd: each answer to
 * @cb(msg, @arg); 0, or the kernel's or libnl's error, reported.
 */
int net_diag_dump(int fd, const void *req, size_t len, nl_recvmsg_msg_cb_t cb, void *arg,
		  const char *what);

/* unix*.c: the unix sockets of the dump or of the restore. */
struct unix_table;

#endif
