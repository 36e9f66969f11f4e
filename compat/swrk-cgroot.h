/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef CRF_SWRK_CGROOT_H
#define CRF_SWRK_CGROOT_H

#include <stddef.h>

#include "criu-rpc.pb-c.h"
#include "util.h"

/*
 * RESTORE's cg_root (CRIU's: the root task's cgroup becomes PATH) as crf
 * restore --cgroup-root words (crf's: the dump's root becomes PATH) for
 * the dump in @dir, pushed onto @argv.  0, or -errno with @why.
 */
int swrk_cg_roots(const CriuOpts *o, const char *dir, struct strv *argv, char *why, size_t len);

#endif
