/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgroup.h - what the files of the cgroup plugin share.
 */
#ifndef CRF_PLUGIN_CGROUP_H
#define CRF_PLUGIN_CGROUP_H

#include <crf/plugin.h>

/* The probe hook: the cgroup v2 hierarchy, our place in it, its freezer. */
int cgroup_probe(struct crf_ctx *ctx);

#endif
