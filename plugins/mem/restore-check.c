// SPDX-License-Identifier: GPL-2.0-only
/*
 * restore-prepare: can this host give every saved mapping its VmFlags back?
 * Asked before the tree is forked, so that a restore that would lose a flag
 * never starts.
 *
 * What the host can do is found by trying it on memory of our own: KSM and
 * transparent huge pages may be configured out (madvise() says EINVAL),
 * mseal(), MAP_DROPPABLE and guard regions are recent, names of anonymous
 * mappings need CONFIG_ANON_VMA_NAME, MAP_NORESERVE does nothing under
 * vm.overcommit_memory = 2, and locking more than RLIMIT_MEMLOCK needs
 * CAP_IPC_LOCK.  Only when something is missing are the images read, to
 * name the first mapping that needs it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/prctl.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>
#include <crf/plugin.h>

#include "mem.h"
#include "mm.pb-c.h"
#include "restore-check.h"
#include "shmem.h"
#include "smaps.h"
#include "validate.h"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif
#ifndef SYS_mseal
#define SYS_mseal 462
#endif

/* What the host lacks, as VmFlags bits; and the lock limit without CAP_IPC_LOCK. */
struct host {
	uint64_t missing;
	const char *why[64]; /* by bit number, for what is missing */
	uint64_t memlock;    /* bytes a task may lock; ~0: no limit */
};

static void lack(struct host *h, uint64_t bits, const char *why)
{
	h->missing |= bits;
	for (int i = 0; i < 64; i++)
		if (bits & (1ull << i))
			h->why[i] = why;
}

static bool has_cap(int cap)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &hdr, d) < 0)
		return false;
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* Each advice or call on a page of our own: EINVAL where the kernel lacks it. */
static void probe_page(struct host *h, char *p, size_t ps)
{
	if (madvise(p, ps, MADV_MERGEABLE) < 0)
		lack(h, VMF_MG, "KSM (MADV_MERGEABLE) is not available");
	else
		madvise(p, ps, MADV_UNMERGEABLE);
	if (madvise(p, ps, MADV_HUGEPAGE) < 0)
		lack(h, VMF_HG | VMF_NH, "transparent huge pages are not available");
	if (madvise(p, ps, MADV_GUARD_INSTALL) < 0)
		lack(h, VMF_GU, "guard regions (MADV_GUARD_INSTALL) are not available");
	if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, p, ps, "crf") < 0)
		lack(h, 1ull << 63, "names of anonymous mappings (CONFIG_ANON_VMA_NAME) are off");
	/* A real seal could never be undone: an unaligned address asks only. */
	if (syscall(SYS_mseal, p + 1, ps, 0) < 0 && errno == ENOSYS)
		lack(h, VMF_SL, "mseal() is not available");
}

static void probe_host(struct host *h)
{
	size_t ps = mem_page_size();
	struct rlimit rl;
	char buf[16] = "";
	void *p;
	int fd;

	p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		probe_page(h, p, ps);
		munmap(p, ps);
	}
	p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_DROPPABLE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		lack(h, VMF_DP, "MAP_DROPPABLE is not available");
	else
		munmap(p, ps);
	fd = open("/proc/sys/vm/overcommit_memory", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0 && buf[0] == '2')
		lack(h, VMF_NR, "vm.overcommit_memory is 2, which ignores MAP_NORESERVE");
	if (fd >= 0)
		close(fd);
	h->memlock = ~0ull;
	if (!has_cap(CAP_IPC_LOCK) && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY)
		h->memlock = rl.rlim_cur;
}

/* The first thing mapping @v needs that the host lacks, or NULL. */
static const char *vma_need(const struct host *h, const Crf__Mem__Vma *v)
{
	uint64_t f = v->vmflags ? smaps_vmflags(v->vmflags, NULL) : 0;

	if (v->name && (!strncmp(v->name, "[anon:", 6) || !strncmp(v->name, "[anon_shmem:", 12)))
		f |= 1ull << 63;
	f &= h->missing;
	for (int i = 0; f && i < 64; i++)
		if (f & (1ull << i))
			return h->why[i];
	return NULL;
}

/* Bytes mapping @v locks: all of it, or with "lf" the pages that follow it. */
static uint64_t vma_locked(const Crf__Mem__Vma *v, bool *onfault)
{
	uint64_t f = v->vmflags ? smaps_vmflags(v->vmflags, NULL) : 0;

	*onfault = f & VMF_LF;
	return (v->flags & MAP_LOCKED) && !*onfault ? v->end - v->start : 0;
}

static uint64_t runs_len(const Crf__Mem__PageRuns *pr)
{
	uint64_t n = 0;

	for (size_t i = 0; i < pr->n_runs; i++)
		n += pr->runs[i]->len;
	return n;
}

/* One record of an mm image; 0 or -errno (logged) for a mapping the host cannot make. */
static int check_record(const struct host *h, int pid, const Crf__Mem__MmEntry *e, uint64_t *locked,
			bool *onfault)
{
	const Crf__Mem__Vma *v = e->vma;
	const char *why;

	if (e->entry_case == CRF__MEM__MM_ENTRY__ENTRY_PAGES && *onfault)
		*locked += runs_len(e->pages);
	if (e->entry_case != CRF__MEM__MM_ENTRY__ENTRY_VMA)
		return 0;
	*locked += vma_locked(v, onfault);
	*onfault = *onfault && (v->flags & MAP_LOCKED);
	why = vma_need(h, v);
	if (why)
		return crf_error_errno(ENOTSUP, "pid %d: mapping %#llx-%#llx %s: %s", pid,
				       (unsigned long long)v->start, (unsigned long long)v->end,
				       v->name ? v->name : "", why);
	return 0;
}

/* Every mapping of mm image @name: refused at the first the host cannot make. */
static int check_task(struct crf_ctx *ctx, const struct host *h, const char *name, int pid)
{
	Crf__Mem__MmEntry *e;
	struct crf_img *img;
	uint64_t locked = 0;
	bool onfault = false;
	int r;

	r = crf_img_open(crf_ctx_images(ctx), name, &crf__mem__mm_entry__descriptor, &img);
	if (r < 0)
		return r;
	while ((r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0) {
		r = check_record(h, pid, e, &locked, &onfault);
		protobuf_c_message_free_unpacked(&e->base, NULL);
		if (r < 0)
			break;
	}
	crf_img_close(img);
	if (r == 0 && locked > h->memlock)
		r = crf_error_errno(
			EPERM,
			"pid %d: %llu KiB of locked mappings, over crf's RLIMIT_MEMLOCK of "
			"%llu KiB, and crf lacks CAP_IPC_LOCK",
			pid, (unsigned long long)locked >> 10,
			(unsigned long long)h->memlock >> 10);
	return r;
}

struct check_arg {
	struct crf_ctx *ctx;
	struct host *h;
};

static int check_one(void *arg, const char *name, pid_t pid)
{
	struct check_arg *c = arg;

	return check_task(c->ctx, c->h, name, pid);
}

int mem_restore_check(struct crf_ctx *ctx)
{
	struct host h = {0};
	struct check_arg c = {ctx, &h};

	probe_host(&h);
	if (!h.missing && h.memlock == ~0ull)
		return 0;
	return crf_imgdir_each_task(crf_ctx_images(ctx), "mm", check_one, &c);
}

/*
 * Every mapping another plugin saved (FOREIGN) must have its handler here,
 * enabled, its kind on, with a restore: asked before anything is forked.
 */
static int check_foreign_task(struct crf_ctx *ctx, const char *name, int pid)
{
	Crf__Mem__MmEntry *e;
	struct crf_img *img;
	int r, idx = -1;

	r = crf_img_open(crf_ctx_images(ctx), name, &crf__mem__mm_entry__descriptor, &img);
	if (r < 0)
		return r;
	while ((r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0) {
		const Crf__Mem__Vma *v = e->vma;

		idx += e->entry_case == CRF__MEM__MM_ENTRY__ENTRY_VMA;
		if (e->entry_case == CRF__MEM__MM_ENTRY__ENTRY_VMA &&
		    v->kind == CRF__MEM__VMA_KIND__FOREIGN) {
			struct crf_vma_info vi = {.size = sizeof(vi),
						  .start = v->start,
						  .end = v->end,
						  .pgoff = v->pgoff,
						  .prot = (int)v->prot,
						  .flags = (int)v->flags,
						  .path = v->name ? v->name : ""};
			struct crf_object obj;
			char desc[4200];

			crf_vma_object(&vi, pid, idx, desc, sizeof(desc), &obj);
			obj.kind = v->claim_kind;
			r = crf_kind_check(ctx, &obj, v->claim_plugin);
		}
		protobuf_c_message_free_unpacked(&e->base, NULL);
		if (r < 0)
			break;
	}
	crf_img_close(img);
	return r;
}

static int check_foreign_one(void *ctx, const char *name, pid_t pid)
{
	return check_foreign_task(ctx, name, pid);
}

static int mem_restore_check_foreign(struct crf_ctx *ctx)
{
	return crf_imgdir_each_task(crf_ctx_images(ctx), "mm", check_foreign_one, ctx);
}

int mem_restore_prepare(struct crf_ctx *ctx)
{
	struct mem_shm *m;
	/* Every record first: a bad one is refused before anything is made. */
	int r = mem_validate(crf_ctx_images(ctx));

	if (r >= 0)
		r = mem_restore_check(ctx);
	if (r >= 0)
		r = mem_restore_check_foreign(ctx);
	if (r >= 0)
		r = mem_shm_restore_prepare(ctx);
	m = crf_ctx_priv(ctx);
	if (r >= 0 && m)
		r = mem_premap_plan(ctx, &m->premap);
	return r;
}

int mem_restore_premap(struct crf_ctx *ctx)
{
	struct mem_shm *m = crf_ctx_priv(ctx);

	return m ? mem_premap_task(ctx, m->premap) : 0;
}
