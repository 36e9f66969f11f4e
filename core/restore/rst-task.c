// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the restorer must build for one task, as plugins (through
 * crf/restore.h) and the core describe it.  Everything is checked here,
 * where it can still be logged: the restorer itself can only report a
 * failed system call.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util.h"
#include "image-internal.h"
#include "rst-task.h"
#include "xsave.h"

#define PAGE_SIZE UINT64_C(4096)
/* mmap()'s mapping types; MAP_DROPPABLE is Linux 6.11's. */
#define MAP_TYPE_MASK 0x0f
#ifndef MAP_DROPPABLE
#define MAP_DROPPABLE 0x08
#endif
#define USER_END UINT64_C(0x00fffffffffff000) /* 5-level paging's task size */

/* Flags a saved mapping may carry; MAP_FIXED is the restorer's to add. */
#define VMA_FLAGS                                                                                  \
	(MAP_SHARED | MAP_PRIVATE | MAP_DROPPABLE | MAP_ANONYMOUS | MAP_GROWSDOWN |                \
	 MAP_NORESERVE | MAP_LOCKED | MAP_STACK)
/* The bits of crf_rst_vma.vm this core knows. */
#define VM_KNOWN                                                                                   \
	(CRF_RST_VM_EXACT | CRF_RST_VM_ACCOUNT | CRF_RST_VM_LOCKONFAULT | CRF_RST_VM_SEALED |      \
	 CRF_RST_VM_GUARD)
/* Advice that only sets a property of the mapping (never drops data). */
#define MADV_OK                                                                                    \
	(UINT64_C(1) << MADV_RANDOM | UINT64_C(1) << MADV_SEQUENTIAL |                             \
	 UINT64_C(1) << MADV_DONTFORK | UINT64_C(1) << MADV_MERGEABLE |                            \
	 UINT64_C(1) << MADV_HUGEPAGE | UINT64_C(1) << MADV_NOHUGEPAGE |                           \
	 UINT64_C(1) << MADV_DONTDUMP | UINT64_C(1) << MADV_WIPEONFORK)

void rst_task_init(struct crf_rst_task *t)
{
	memset(t, 0, sizeof(*t));
	t->mm.exe_fd = -1;
	t->mem_fd = -1;
	t->a.exe_fd = -1;
	t->a.sas_flags = SS_DISABLE;
	t->fdt.wait_fd = -1;
	t->a.dumpable = -1;
}

void rst_task_free(struct crf_rst_task *t)
{
	for (size_t i = 0; i < t->n_vmas; i++)
		if (t->vmas[i].fd >= 0)
			close(t->vmas[i].fd);
	for (size_t i = 0; i < t->n_blobs; i++)
		crf_img_close(t->blobs[i]);
	if (t->mm.exe_fd >= 0)
		close(t->mm.exe_fd);
	if (t->mem_fd >= 0)
		close(t->mem_fd);
	for (size_t i = 0; i < t->n_fds; i++)
		if (t->fds[i].fd >= 0)
			close(t->fds[i].fd);
	free(t->fds);
	for (size_t i = 0; i < t->n_hooks; i++)
		if (t->hooks[i].release)
			t->hooks[i].release(t->hooks[i].arg);
	free(t->hooks);
	free(t->vmas);
	free(t->guards);
	free(t->names);
	free(t->pages);
	free(t->blobs);
	free(t->timers);
	free(t->pending);
	free(t->xsave);
	free(t->seccomp_buf);
	for (size_t i = 0; i < t->n_threads; i++) {
		free(t->threads[i].xsave);
		free(t->threads[i].pending);
	}
	free(t->threads);
	free(t->stop_waits);
	rst_task_init(t);
}

int rst_open_mem(struct crf_rst_task *t)
{
	t->mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (t->mem_fd < 0)
		return crf_error_errno(errno, "open /proc/self/mem");
	return 0;
}

/* Make room for one more of @size bytes in *@v; 0 or -ENOMEM (not logged). */
static int grow(void *v, size_t n, size_t *cap, size_t size)
{
	void **p = v;
	size_t ncap = *cap ? *cap * 2 : 16;
	void *q;

	if (n < *cap)
		return 0;
	q = reallocarray(*p, ncap, size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = ncap;
	return 0;
}

/* A segment is attached whole, at offset 0, with nothing but its id. */
static int check_sysv(const struct crf_rst_vma *v)
{
	if (v->shmid < 0 || v->fd >= 0 || v->flags != MAP_SHARED || v->pgoff)
		return crf_error_errno(
			EINVAL,
			"mapping %#" PRIx64 "-%#" PRIx64
			": System V segment %d with fd %d, flags %#x or offset %#" PRIx64,
			v->start, v->end, v->shmid, v->fd, v->flags, v->pgoff);
	return 0;
}

static int check_vma(const struct crf_rst_vma *v)
{
	int share = v->flags & MAP_TYPE_MASK;

	if (v->start >= v->end || v->end > USER_END || (v->start | v->end) % PAGE_SIZE)
		return crf_error_errno(EINVAL, "mapping %#" PRIx64 "-%#" PRIx64 ": bad range",
				       v->start, v->end);
	if (v->prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC) || v->flags & ~VMA_FLAGS ||
	    (share != MAP_SHARED && share != MAP_PRIVATE &&
	     !(share == MAP_DROPPABLE && (v->flags & MAP_ANONYMOUS))))
		return crf_error_errno(EINVAL,
				       "mapping %#" PRIx64 "-%#" PRIx64
				       ": bad protection %#x or flags %#x",
				       v->start, v->end, v->prot, v->flags);
	if (v->sysv)
		return check_sysv(v);
	if ((v->fd < 0) != !!(v->flags & MAP_ANONYMOUS) || v->pgoff % PAGE_SIZE)
		return crf_error_errno(EINVAL,
				       "mapping %#" PRIx64 "-%#" PRIx64
				       ": fd %d does not match flags %#x or offset %#" PRIx64,
				       v->start, v->end, v->fd, v->flags, v->pgoff);
	if (v->madv & ~MADV_OK)
		return crf_error_errno(EINVAL,
				       "mapping %#" PRIx64 "-%#" PRIx64
				       ": unsupported advice mask %#" PRIx64,
				       v->start, v->end, v->madv & ~MADV_OK);
	return 0;
}

/* The guard regions lie inside the mapping, page-aligned, in order. */
static int check_guards(const struct crf_rst_vma *v)
{
	uint64_t last = v->start;

	if (v->n_guards && !v->guards)
		return crf_error_errno(EINVAL, "mapping %#" PRIx64 ": no guard regions given",
				       v->start);
	for (uint32_t i = 0; i < v->n_guards; i++) {
		uint64_t start = v->guards[2 * i], end = v->guards[2 * i + 1];

		if (start < last || start >= end || end > v->end || (start | end) % PAGE_SIZE)
			return crf_error_errno(EINVAL,
					       "mapping %#" PRIx64 "-%#" PRIx64
					       ": guard region %#" PRIx64 "-%#" PRIx64
					       " outside it or out of order",
					       v->start, v->end, start, end);
		last = end;
	}
	return 0;
}

/* What crf_rst_vma's ABI 1.4 fields ask: known bits, guards and a name that fit. */
static int check_vm(const struct crf_rst_vma *v)
{
	if (v->vm & ~VM_KNOWN || (v->vm && !(v->vm & CRF_RST_VM_EXACT)))
		return crf_error_errno(EINVAL, "mapping %#" PRIx64 ": unknown flags %#x", v->start,
				       v->vm);
	if (v->premap && ((v->premap % PAGE_SIZE) || v->fd >= 0 || v->sysv ||
			  (v->flags & MAP_TYPE_MASK) != MAP_PRIVATE || v->premap > USER_END))
		return crf_error_errno(EINVAL,
				       "mapping %#" PRIx64 ": made before at %#" PRIx64
				       ", but not as private anonymous memory",
				       v->start, v->premap);
	if (v->anon_name && (!v->anon_name[0] || strlen(v->anon_name) > CRF_RST_ANON_NAME_MAX))
		return crf_error_errno(EINVAL, "mapping %#" PRIx64 ": bad name '%.100s'", v->start,
				       v->anon_name);
	return check_guards(v);
}

/* Copy @vma's guard regions and name into @t; 0 or -ENOMEM (not logged). */
static int keep_vm_extras(struct crf_rst_task *t, const struct crf_rst_vma *vma)
{
	struct crf_rst_range_arg *g;
	struct crf_rst_name_arg *n;

	if (vma->n_guards) {
		g = reallocarray(t->guards, t->n_guards + vma->n_guards, sizeof(*g));
		if (!g)
			return -ENOMEM;
		t->guards = g;
		for (uint32_t i = 0; i < vma->n_guards; i++)
			t->guards[t->n_guards++] = (struct crf_rst_range_arg){
				vma->guards[2 * i], vma->guards[2 * i + 1]};
	}
	if (vma->anon_name) {
		n = reallocarray(t->names, t->n_names + 1, sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->names = n;
		n = &t->names[t->n_names++];
		*n = (struct crf_rst_name_arg){.start = vma->start, .end = vma->end};
		memcpy(n->name, vma->anon_name, strlen(vma->anon_name) + 1);
	}
	return 0;
}

int rst_task_add_vma(struct crf_rst_task *t, const struct crf_rst_vma *vma)
{
	struct crf_rst_vma_arg *v;
	int r;

	r = check_vma(vma);
	if (r == 0)
		r = check_vm(vma);
	if (r == 0 &&
	    (grow(&t->vmas, t->n_vmas, &t->cap_vmas, sizeof(*t->vmas)) || keep_vm_extras(t, vma)))
		r = crf_error_errno(ENOMEM, "mapping %#" PRIx64, vma->start);
	if (r < 0) {
		if (vma->fd >= 0)
			close(vma->fd);
		return r;
	}
	v = &t->vmas[t->n_vmas++];
	*v = (struct crf_rst_vma_arg){
		.start = vma->start,
		.end = vma->end,
		.pgoff = vma->fd >= 0 ? vma->pgoff : 0,
		.madv = vma->madv,
		.prot = vma->prot,
		.flags = vma->flags,
		.fd = vma->fd,
		.shmid = vma->sysv ? vma->shmid : -1,
		.vm = vma->vm,
		.premap = vma->premap,
	};
	/* The steps that do not depend on the pages; rst_exec() adds the rest. */
	if (vma->flags & MAP_LOCKED)
		v->steps |= CRF_RST_STEP_LOCK |
			    (vma->vm & CRF_RST_VM_LOCKONFAULT ? CRF_RST_STEP_LOCK_ONFAULT : 0);
	if (vma->vm & CRF_RST_VM_SEALED)
		v->steps |= CRF_RST_STEP_SEAL;
	if ((vma->vm & CRF_RST_VM_GUARD) && !vma->n_guards)
		v->steps |= CRF_RST_STEP_MARK_GUARD;
	if (vma->n_guards)
		v->steps |= CRF_RST_STEP_GUARDS;
	return 0;
}

/* Remember @blob once, to close it with the task. */
static int own_blob(struct crf_rst_task *t, struct crf_img *blob)
{
	for (size_t i = 0; i < t->n_blobs; i++)
		if (t->blobs[i] == blob)
			return 0;
	if (grow(&t->blobs, t->n_blobs, &t->cap_blobs, sizeof(*t->blobs)))
		return crf_error_errno(ENOMEM, "%s", crf_img_name(blob));
	t->blobs[t->n_blobs++] = blob;
	return 0;
}

int rst_task_add_pages(struct crf_rst_task *t, struct crf_img *blob, uint64_t vaddr, uint64_t len,
		       uint64_t off)
{
	struct crf_rst_pages_arg *p;
	uint64_t hdr_len;
	uint32_t chunk;
	int fd, r;

	r = crf__blob_layout(blob, &fd, &hdr_len, &chunk);
	if (r < 0)
		return r;
	r = own_blob(t, blob);
	if (r < 0)
		return r;
	if (!len || vaddr + len < vaddr || vaddr + len > USER_END || off > crf_blob_size(blob) ||
	    len > crf_blob_size(blob) - off)
		return crf_error_errno(ERANGE,
				       "%s: %" PRIu64 " bytes at data offset %" PRIu64
				       " for %#" PRIx64 ": out of range",
				       crf_img_name(blob), len, off, vaddr);
	if (grow(&t->pages, t->n_pages, &t->cap_pages, sizeof(*t->pages)))
		return crf_error_errno(ENOMEM, "pages at %#" PRIx64, vaddr);
	p = &t->pages[t->n_pages++];
	*p = (struct crf_rst_pages_arg){
		.vaddr = vaddr,
		.len = len,
		.off = off,
		.hdr_len = hdr_len,
		.chunk = chunk,
		.fd = fd,
	};
	return 0;
}

int rst_task_set_mm(struct crf_rst_task *t, const struct crf_rst_mm *mm)
{
	size_t n = mm->auxv_len;

	if (n < 2 || n > ARRAY_SIZE(mm->auxv) || n % 2 || mm->auxv[n - 2] != 0) {
		if (mm->exe_fd >= 0)
			close(mm->exe_fd);
		return crf_error_errno(EINVAL, "mm: auxv of %zu words does not end with AT_NULL",
				       n);
	}
	if (t->mm.exe_fd >= 0)
		close(t->mm.exe_fd);
	t->mm = *mm;
	t->have_mm = true;
	return 0;
}

int rst_task_set_vdso(struct crf_rst_task *t, uint64_t vdso)
{
	if (!vdso || vdso % PAGE_SIZE || vdso >= USER_END)
		return crf_error_errno(EINVAL, "vDSO address %#" PRIx64, vdso);
	t->vdso = vdso;
	return 0;
}

int rst_task_add_timer(struct crf_rst_task *t, const struct crf_rst_timer_arg *timer)
{
	struct crf_rst_timer_arg *v;

	v = reallocarray(t->timers, t->n_timers + 1, sizeof(*v));
	if (!v)
		return crf_error_errno(ENOMEM, "POSIX timer %d", timer->id);
	t->timers = v;
	t->timers[t->n_timers++] = *timer;
	return 0;
}

int rst_task_add_pending(struct crf_rst_task *t, const void *siginfo, bool shared)
{
	/* The restorer queues the process-wide ones first (crf_rst_args.n_pending_shared). */
	if (shared && t->n_pending > t->a.n_pending_shared)
		return crf_error_errno(EINVAL, "a process-wide pending signal after the leader's");
	if (grow(&t->pending, t->n_pending, &t->cap_pending, sizeof(*t->pending)))
		return crf_error_errno(ENOMEM, "pending signal");
	memcpy(t->pending[t->n_pending++], siginfo, sizeof(*t->pending));
	if (shared)
		t->a.n_pending_shared++;
	return 0;
}

/*
 * The signal-frame form of a saved XSAVE area (xsave.h): sized as this
 * CPU's kernel sizes the task's own frames, or rt_sigreturn would restore
 * the legacy part only.  @out is malloc'd; its length goes to @out_len.
 */
static int frame_xsave(const void *xsave, size_t len, uint8_t **out, size_t *out_len)
{
	const struct crf_xsave_layout *host = xsave_host();
	size_t size = host && len >= CRF_XSAVE_HDR_END ? xsave_frame_size(host) : len;

	*out = malloc(size ?: 1);
	if (!*out)
		return -ENOMEM;
	if (host) {
		*out_len = xsave_to_frame(host, xsave, len, *out);
		return 0;
	}
	memcpy(*out, xsave, len);
	*out_len = len;
	return 0;
}

int rst_task_set_xsave(struct crf_rst_task *t, const void *xsave, size_t len)
{
	uint8_t *p;
	size_t n;

	/* The legacy area alone is 512 bytes; the kernel's largest is far below 1 MiB. */
	if (len < 512 || len > (1u << 20))
		return crf_error_errno(EINVAL, "xsave area of %zu bytes", len);
	if (frame_xsave(xsave, len, &p, &n) < 0)
		return crf_error_errno(ENOMEM, "xsave area");
	free(t->xsave);
	t->xsave = p;
	t->xsave_len = n;
	return 0;
}

int rst_task_keep_fd(struct crf_rst_task *t, int fd, int number, bool cloexec)
{
	int r = 0;

	/* A number given twice is found by rst_exec(), sorting: n log n, not n². */
	if (fd < 0 || number < 0)
		r = crf_error_errno(EBADF, "program fd %d (from fd %d): not a number to restore",
				    number, fd);
	if (r == 0 && grow(&t->fds, t->n_fds, &t->cap_fds, sizeof(*t->fds)))
		r = crf_error_errno(ENOMEM, "program fd %d", number);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	t->fds[t->n_fds++] = (struct crf_rst_fd){fd, number, cloexec};
	return 0;
}

int rst_task_at_fds_placed(struct crf_rst_task *t, int (*fn)(void *arg), void *arg,
			   void (*release)(void *arg))
{
	struct crf_rst_hook *v = NULL;
	int r = 0;

	if (!fn)
		r = crf_error_errno(EINVAL,
				    "a function to run once the fds are placed: none given");
	else if (!(v = reallocarray(t->hooks, t->n_hooks + 1, sizeof(*v))))
		r = crf_error_errno(ENOMEM, "a function to run once the fds are placed");
	if (r < 0) {
		if (release)
			release(arg);
		return r;
	}
	t->hooks = v;
	t->hooks[t->n_hooks++] = (struct crf_rst_hook){fn, arg, release};
	return 0;
}

/* The host table: ctx->task is a struct crf_rst_task. */

static int host_add_vma(void *task, const struct crf_rst_vma *vma)
{
	return rst_task_add_vma(task, vma);
}

static int host_add_pages(void *task, struct crf_img *blob, uint64_t vaddr, uint64_t len,
			  uint64_t off)
{
	return rst_task_add_pages(task, blob, vaddr, len, off);
}

static int host_set_mm(void *task, const struct crf_rst_mm *mm)
{
	return rst_task_set_mm(task, mm);
}

static int host_set_vdso(void *task, uint64_t vdso)
{
	return rst_task_set_vdso(task, vdso);
}

static int host_keep_fd(void *task, int fd, int number, bool cloexec)
{
	return rst_task_keep_fd(task, fd, number, cloexec);
}

static int host_at_fds_placed(void *task, int (*fn)(void *arg), void *arg,
			      void (*release)(void *arg))
{
	return rst_task_at_fds_placed(task, fn, arg, release);
}

static int host_object(void *task, const char *key, int (*create)(void *arg), void *arg,
		       bool *created)
{
	struct crf_rst_task *t = task;

	if (!t->objects)
		return crf_error_errno(ENOTCONN, "object %s: no table of shared objects", key);
	return crf__objects_get(t->objects, key, create, arg, created);
}

const struct crf_host_ops crf_restore_host_ops = {
	.rst_object = host_object,
	.rst_at_fds_placed = host_at_fds_placed,
	.rst_keep_fd = host_keep_fd,
	.rst_add_vma = host_add_vma,
	.rst_add_pages = host_add_pages,
	.rst_set_mm = host_set_mm,
	.rst_set_vdso = host_set_vdso,
};

int rst_task_add_thread(struct crf_rst_task *t, const struct crf_rst_thread_arg *arg,
			const void *xsave, size_t xsave_len, const void *pending, size_t n_pending)
{
	struct crf_rst_thread *th, *v;

	if (xsave_len > (1u << 20))
		return crf_error_errno(EINVAL, "thread %d: %zu bytes of XSAVE",
				       (int)arg->set_tid[0], xsave_len);
	v = reallocarray(t->threads, t->n_threads + 1, sizeof(*v));
	if (!v)
		return crf_error_errno(ENOMEM, "thread %d", (int)arg->set_tid[0]);
	t->threads = v;
	th = &v[t->n_threads];
	memset(th, 0, sizeof(*th));
	th->a = *arg;
	th->pending = n_pending ? reallocarray(NULL, n_pending, sizeof(*th->pending)) : NULL;
	if ((xsave_len && frame_xsave(xsave, xsave_len, &th->xsave, &th->xsave_len) < 0) ||
	    (n_pending && !th->pending)) {
		free(th->xsave);
		free(th->pending);
		return crf_error_errno(ENOMEM, "thread %d", (int)arg->set_tid[0]);
	}
	if (n_pending)
		memcpy(th->pending, pending, n_pending * sizeof(*th->pending));
	th->n_pending = n_pending;
	t->n_threads++;
	return 0;
}
