/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * net.h - what the files of the net plugin share.
 */
#ifndef CRF_PLUGIN_NET_H
#define CRF_PLUGIN_NET_H

#include <crf/plugin.h>

/* The probe hook: TCP repair, sock_diag, and rtnetlink through libnl. */
int net_probe(struct crf_ctx *ctx);

/* unix_diag and inet_diag, each tried on a socket of our own. */
void net_probe_diag(struct crf_ctx *ctx);

#endif
