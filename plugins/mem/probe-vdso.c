// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe of the vDSO: where the kernel maps it and its data pages, and whether
 * arch_prctl(ARCH_MAP_VDSO_64) puts them at a chosen address, as the restorer
 * does when the sizes saved in an image match this kernel's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

enum { VVAR, VVAR_VCLOCK, VDSO, N_AREAS };

/* [vvar_vclock] was split out of [vvar] in Linux 6.13; older kernels lack it. */
static const char *const area_names[N_AREAS] = {
	[VVAR] = "[vvar]",
	[VVAR_VCLOCK] = "[vvar_vclock]",
	[VDSO] = "[vdso]",
};

struct area {
	uintptr_t start, end; /* end == 0: not mapped */
};

/* Find the vDSO's areas in /proc/self/maps; 0 or -errno. */
static int find_areas(struct area a[N_AREAS])
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long start, end;
	char *line = NULL, *name;
	size_t cap = 0;
	ssize_t n;
	int err;

	if (!f)
		return -errno;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		name = strrchr(line, ' ');
		if (!name || sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		for (int i = 0; i < N_AREAS; i++) {
			if (!strcmp(name + 1, area_names[i])) {
				a[i].start = start;
				a[i].end = end;
			}
		}
	}
	err = ferror(f) ? -EIO : 0;
	free(line);
	fclose(f);
	return err;
}

/* "[vvar] 16 KiB, [vvar_vclock] 8 KiB, [vdso] 8 KiB" into @buf. */
static void describe_areas(char *buf, size_t len, const struct area a[N_AREAS])
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < N_AREAS && off < len; i++) {
		if (a[i].end)
			off += snprintf(buf + off, len - off, "%s%s %zu KiB", i ? ", " : "",
					area_names[i], (size_t)(a[i].end - a[i].start) / 1024);
		else
			off += snprintf(buf + off, len - off, "%s%s absent", i ? ", " : "",
					area_names[i]);
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

static void probe_map_vdso(struct crf_ctx *ctx, const struct area a[N_AREAS])
{
	struct span sp = {.start = UINTPTR_MAX, .end = 0};
	size_t total = 0;
	int r, sig;

	for (int i = 0; i < N_AREAS; i++) {
		if (!a[i].end)
			continue;
		if (a[i].start < sp.start)
			sp.start = a[i].start;
		if (a[i].end > sp.end)
			sp.end = a[i].end;
		total += a[i].end - a[i].start;
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
	struct area a[N_AREAS] = {0};
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
	r = find_areas(a);
	if (r < 0) {
		crf_probe_feature(ctx, "vdso", false, true, "read /proc/self/maps: %s",
				  strerror(-r));
		crf_probe_feature(ctx, "arch-map-vdso", false, false, "vDSO areas unknown");
		return;
	}
	describe_areas(desc, sizeof(desc), a);
	if (a[VDSO].start != ehdr || !a[VVAR].end) {
		crf_probe_feature(ctx, "vdso", false, true,
				  "AT_SYSINFO_EHDR %#lx, but /proc/self/maps has %s",
				  (unsigned long)ehdr, desc);
		crf_probe_feature(ctx, "arch-map-vdso", false, false, "vDSO areas unknown");
		return;
	}
	crf_probe_feature(ctx, "vdso", true, true, "%s", desc);
	probe_map_vdso(ctx, a);
}
