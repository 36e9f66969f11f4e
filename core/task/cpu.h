/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cpu.h - what a dump's registers need of the CPU (xsave.h has the layout).
 *
 * A dump writes cpu.img (the XSAVE layout it was made with) and records per
 * process the dynamic XSAVE features it was permitted (AMX); a restore
 * checks, before anything is forked, that this CPU can hold every saved
 * XSAVE area, and gives each restored process its permissions back.
 */
#ifndef CRF_CPU_H
#define CRF_CPU_H

#include <stddef.h>

#include "core.pb-c.h"
#include "crf-private.h"

#define CRF_IMG_CPU "cpu.img"

/* Write cpu.img with this CPU's XSAVE layout. */
int cpu_write(struct crf_imgdir *dir);

/*
 * Before the tree is forked: every XSAVE area of @tcs (@n records, NULL for
 * zombies) must fit this CPU — each feature it uses enabled here at the
 * dump's offset and size — and every feature the dump's CPU enabled must be
 * here too (a program may have checked for it).  0, or -ENOTSUP naming the
 * task and the feature.
 */
int cpu_check_tree(struct crf_imgdir *dir, Crf__Core__TaskCore *const *tcs, size_t n);

/* In the restored process, before the restorer: its XSAVE permissions. */
int cpu_apply_task(const Crf__Core__TaskCore *tc);

#endif
