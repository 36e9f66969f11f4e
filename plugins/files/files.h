/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * files.h - what the files of the files plugin share.
 */
#ifndef CRF_PLUGIN_FILES_H
#define CRF_PLUGIN_FILES_H

#include <crf/plugin.h>

/* The probe hook: taking fds from a task, comparing them, reading their state. */
int files_probe(struct crf_ctx *ctx);

#endif
