// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe of the vDSO: where the kernel maps it and its data pages, and whether
 * arch_prctl(ARCH_MAP_VDSO_64) puts them at a chosen address, as the restorer
 * does when the sizes saved in an image match this kernel's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __x86_64__
#include <asm/prctl.h>
#endif

#include "mem.h"
#include "vdso.h"

/* "[vvar] 16 KiB, [vvar_vclock] 8 KiB, [vdso] 8 KiB" into @buf. */
static void describe_areas(char *buf, size_t len, const struct mem_vdso_layout *l)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < VDSO__N && off < len; i++) {
		if (l->a[i].end)
			off += snprintf(buf + off, len - off, "%s%s %zu KiB", i ? ", " : "",
					mem_vdso_area_names[i],
					(size_t)(l->a[i].end - l->a[i].start) / 1024);
		else
			off += snprintf(buf + off, len - off, "%s%s absent", i ? ", " : "",
					mem_vdso_area_names[i]);
	}
}

/*
 * Run @fn in a forked child that exits right after, so that it may take apart
 * its own address space.  Returns @fn's result (0 or -errno), or -EINTR with
 * @sig set when the child was killed by a signal.
 */
static int run_in_child(int (*fn)(const void *arg), const void *arg, int *sig)
{
	int status;
	pid_t pid;

	*sig = 0;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(-fn(arg));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFSIGNALED(status)) {
		*sig = WTERMSIG(status);
		return -EINTR;
	}
	return -WEXITSTATUS(status);
}

struct span {
	uintptr_t start, end;
};

/*
 * In the child: unmap the vDSO and its data pages, have the kernel map them
 * again at the same address, and check with msync(), which fails with ENOMEM
 * on a hole, that all of them are back there.  The kernel refuses to map a
 * second vDSO, hence the unmapping.  Nothing here may call into the vDSO.
 */
static int remap_vdso(const void *arg)
{
	const struct span *sp = arg;
	void *start = (void *)sp->start;
	size_t len = sp->end - sp->start;

#ifdef ARCH_MAP_VDSO_64
	if (munmap(start, len))
		return -errno;
	if (syscall(SYS_arch_prctl, ARCH_MAP_VDSO_64, sp->start) < 0)
		return -errno;
	if (msync(start, len, MS_ASYNC))
		return -errno;
	return 0;
#else
	(void)start;
	(void)len;
	return -ENOSYS;
#endif
}

static void probe_map_vdso(struct crf_ctx *ctx, const struct mem_vdso_layout *l)
{
	struct span sp = {.start = UINTPTR_MAX, .end = 0};
	size_t total = 0;
	int r, sig;

	for (int i = 0; i < VDSO__N; i++) {
		if (!l->a[i].end)
			continue;
		if (l->a[i].start < sp.start)
			sp.start = l->a[i].start;
		if (l->a[i].end > sp.end)
			sp.end = l->a[i].end;
		total += l->a[i].end - l->a[i].start;
	}
	/* Unmapping the whole span is only harmless if it holds nothing else. */
	if (sp.end - sp.start != total) {
		crf_probe_feature(ctx, "arch-map-vdso", false, false,
				  "the vDSO areas are not contiguous; not tried");
		return;
	}
	r = run_in_child(remap_vdso, &sp, &sig);
	if (sig)
		crf_probe_feature(ctx, "arch-map-vdso", false, false,
				  "the test child was killed by signal %d (%s)", sig,
				  strsignal(sig));
	else if (r)
		crf_probe_feature(ctx, "arch-map-vdso", false, false,
				  "ARCH_MAP_VDSO_64 in a child: %s", strerror(-r));
	else
		crf_probe_feature(
			ctx, "arch-map-vdso", true, false,
			"a child unmapped its vDSO and ARCH_MAP_VDSO_64 put it back in place");
}

void mem_probe_vdso(struct crf_ctx *ctx)
{
	uintptr_t ehdr = getauxval(AT_SYSINFO_EHDR);
	struct mem_vdso_layout l;
	char desc[128];
	int r;

	/* A kernel without a vDSO gives tasks none, so there is none to restore. */
	if (!ehdr) {
		crf_probe_feature(ctx, "vdso", false, false,
				  "no AT_SYSINFO_EHDR: the kernel maps no vDSO");
		crf_probe_feature(ctx, "arch-map-vdso", false, false, "no vDSO to map");
		return;
	}
	/*
	 * With a vDSO, the restorer must know the sizes of its areas to tell
	 * whether a saved layout matches this kernel's.
	 */
	r = mem_vdso_layout_self(&l);
	if (r < 0) {
		crf_probe_feature(ctx, "vdso", false, true, "parse /proc/self/maps: %s",
				  strerror(-r));
		crf_probe_feature(ctx, "arch-map-vdso", false, false, "vDSO areas unknown");
		return;
	}
	describe_areas(desc, sizeof(desc), &l);
	if (l.a[VDSO_VDSO].start != ehdr || !l.a[VDSO_VVAR].end) {
		crf_probe_feature(ctx, "vdso", false, true,
				  "AT_SYSINFO_EHDR %#lx, but /proc/self/maps has %s",
				  (unsigned long)ehdr, desc);
		crf_probe_feature(ctx, "arch-map-vdso", false, false, "vDSO areas unknown");
		return;
	}
	crf_probe_feature(ctx, "vdso", true, true, "%s", desc);
	probe_map_vdso(ctx, &l);
}
