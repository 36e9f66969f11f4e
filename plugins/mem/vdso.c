// SPDX-License-Identifier: GPL-2.0-only
/*
 * The vDSO is the kernel's code and is not saved: the restorer asks this
 * kernel to map its own at the saved address.  That is only right when this
 * kernel's areas have the sizes and relative places the dumped task's had,
 * since the task's code may hold pointers into any of them.
 */
#include <errno.h>
#include <stdio.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "vdso.h"

/* [vvar_vclock] was split out of [vvar] in Linux 6.13; older kernels lack it. */
const char *const mem_vdso_area_names[VDSO__N] = {
	[VDSO_VVAR] = "[vvar]",
	[VDSO_VVAR_VCLOCK] = "[vvar_vclock]",
	[VDSO_VDSO] = "[vdso]",
};

void mem_vdso_layout_add(struct mem_vdso_layout *l, enum mem_kind kind, uint64_t start,
			 uint64_t end)
{
	int i;

	switch (kind) {
	case MEM_VVAR:
		i = VDSO_VVAR;
		break;
	case MEM_VVAR_VCLOCK:
		i = VDSO_VVAR_VCLOCK;
		break;
	case MEM_VDSO:
		i = VDSO_VDSO;
		break;
	default:
		return;
	}
	l->a[i].start = start;
	l->a[i].end = end;
}

int mem_vdso_layout_self(struct mem_vdso_layout *l)
{
	struct smaps maps = {0};
	_cleanup_fclose_ FILE *f = NULL;
	const char *why;
	int r;

	*l = (struct mem_vdso_layout){0};
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return crf_error_errno(errno, "open /proc/self/maps");
	r = smaps_parse(f, &maps);
	if (r < 0)
		return r;
	for (size_t i = 0; i < maps.n; i++) {
		r = mem_vma_kind(&maps.v[i], &why);
		if (r > 0)
			mem_vdso_layout_add(l, r, maps.v[i].start, maps.v[i].end);
	}
	smaps_free(&maps);
	return 0;
}

static void describe_size(char *buf, size_t len, uint64_t start, uint64_t end)
{
	if (end)
		snprintf(buf, len, "%llu KiB", (unsigned long long)(end - start) / 1024);
	else
		snprintf(buf, len, "absent");
}

int mem_vdso_layout_check(const struct mem_vdso_layout *dump, const struct mem_vdso_layout *here,
			  char *why, size_t len)
{
	uint64_t d0 = dump->a[VDSO_VDSO].start, h0 = here->a[VDSO_VDSO].start;
	char was[32], now[32];

	for (int i = 0; i < VDSO__N; i++) {
		uint64_t ds = dump->a[i].start, de = dump->a[i].end;
		uint64_t hs = here->a[i].start, he = here->a[i].end;

		if (de - ds == he - hs && (!de || ds - d0 == hs - h0))
			continue;
		if (de - ds != he - hs) {
			describe_size(was, sizeof(was), ds, de);
			describe_size(now, sizeof(now), hs, he);
			snprintf(why, len, "the dump's %s is %s, this kernel's %s",
				 mem_vdso_area_names[i], was, now);
		} else {
			snprintf(why, len,
				 "the dump's %s is at %+lld KiB from [vdso], this kernel's at "
				 "%+lld KiB",
				 mem_vdso_area_names[i], (long long)(ds - d0) / 1024,
				 (long long)(hs - h0) / 1024);
		}
		return -ENOTSUP;
	}
	return 0;
}
