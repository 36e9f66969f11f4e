/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ns.h - what the files of the ns plugin share.
 */
#ifndef CRF_PLUGIN_NS_H
#define CRF_PLUGIN_NS_H

#include <crf/plugin.h>

/* The probe hook: namespace files, entering them by pidfd, choosing PIDs. */
int ns_probe(struct crf_ctx *ctx);

#endif
