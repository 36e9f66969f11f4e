/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * devices.h - what the files of the devices plugin share.
 */
#ifndef CRF_PLUGIN_DEVICES_H
#define CRF_PLUGIN_DEVICES_H

#include <crf/plugin.h>

/* The probe hook: the devices this plugin handles itself (tun/tap). */
int devices_probe(struct crf_ctx *ctx);

#endif
