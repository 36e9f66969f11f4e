/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vdso.h - the layout of the vDSO and its data pages, at the dump and here.
 */
#ifndef CRF_PLUGIN_MEM_VDSO_H
#define CRF_PLUGIN_MEM_VDSO_H

#include <stddef.h>
#include <stdint.h>

#include "smaps.h"

enum { VDSO_VVAR, VDSO_VVAR_VCLOCK, VDSO_VDSO, VDSO__N };

/* "[vvar]", "[vvar_vclock]", "[vdso]": the areas' names in maps. */
extern const char *const mem_vdso_area_names[VDSO__N];

/* Where each area is; end == 0 when the task has none. */
struct mem_vdso_layout {
	struct {
		uint64_t start, end;
	} a[VDSO__N];
};

/* Record a mapping of kind MEM_VDSO, MEM_VVAR or MEM_VVAR_VCLOCK (others are ignored). */
void mem_vdso_layout_add(struct mem_vdso_layout *l, enum mem_kind kind, uint64_t start,
			 uint64_t end);

/* This process's layout, from /proc/self/maps; 0 or -errno (logged). */
int mem_vdso_layout_self(struct mem_vdso_layout *l);

/*
 * Whether the vDSO can be put back as the dump had it: each area of the same
 * size, at the same offset from [vdso].  0, or -ENOTSUP with the first
 * difference written to @why ("the dump's [vvar] is 16 KiB, this kernel's
 * 12 KiB").
 */
int mem_vdso_layout_check(const struct mem_vdso_layout *dump, const struct mem_vdso_layout *here,
			  char *why, size_t len);

#endif
