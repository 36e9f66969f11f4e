// SPDX-License-Identifier: GPL-2.0-only
/*
 * Handing a forked task over to the restorer: one mapping, free in both
 * crf's and the saved address space, holds the blob, its argument block
 * and its stack; the restorer's fds move out of the program's way; then a
 * jump with no way back.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "crf-blobs.h"
#include "rst-task.h"
#include "util.h"

#define PAGE_SIZE  UINT64_C(4096)
#define STACK_SIZE (UINT64_C(64) << 10)
/* Keep clear of neighbours: a stack's guard gap is 1 MiB by default. */
#define GAP_GUARD (UINT64_C(1) << 20)
#define GAP_FLOOR (UINT64_C(16) << 20)
#define TASK_END  UINT64_C(0x7ffffffff000)

#define ALIGN(x, a) (((x) + (a)-1) & ~((uint64_t)(a)-1))
/* The restorer's buffer for pages written through /proc/self/mem. */
#define BOUNCE_SIZE (UINT64_C(64) << 10)
/* mmap()'s mapping types (MAP_SHARED, MAP_PRIVATE, MAP_DROPPABLE). */
#define MAP_TYPE_MASK 0x0f

struct span {
	uint64_t start, end;
};

struct spans {
	struct span *v;
	size_t n, cap;
};

static int spans_add(struct spans *s, uint64_t start, uint64_t end)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct span *v = reallocarray(s->v, cap, sizeof(*v));

		if (!v)
			return crf_error_errno(ENOMEM, "address space map");
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct span){start, end};
	return 0;
}

/* crf's own vDSO span: [vvar] (and [vvar_vclock]) and [vdso]. */
struct own_vdso {
	struct span span, text;
};

static void note_vdso(struct own_vdso *o, const char *name, uint64_t start, uint64_t end)
{
	if (strcmp(name, "[vdso]") && strcmp(name, "[vvar]") && strcmp(name, "[vvar_vclock]"))
		return;
	if (!strcmp(name, "[vdso]"))
		o->text = (struct span){start, end};
	if (!o->span.end || start < o->span.start)
		o->span.start = start;
	if (end > o->span.end)
		o->span.end = end;
}

/* Every mapping of crf now (ASan's shadow included). */
static int read_own_maps(struct spans *s, struct own_vdso *o)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/maps", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	int r;

	if (!f)
		return crf_error_errno(errno, "/proc/self/maps");
	while (getline(&line, &cap, f) > 0) {
		unsigned long start, end;
		char name[64] = "";

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %63s", &start, &end, name) < 2)
			continue;
		note_vdso(o, name, start, end);
		r = spans_add(s, start, end);
		if (r < 0)
			return r;
	}
	return 0;
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The lowest address from GAP_FLOOR with @len bytes free around it. */
static int find_gap(struct spans *s, uint64_t len, uint64_t *out)
{
	uint64_t cand = GAP_FLOOR;

	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_span);
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].start >= cand + len + GAP_GUARD)
			break;
		if (s->v[i].end + GAP_GUARD > cand)
			cand = ALIGN(s->v[i].end + GAP_GUARD, PAGE_SIZE);
	}
	if (cand + len > TASK_END)
		return crf_error_errno(ENOMEM, "no room of %" PRIu64 " KiB for the restorer",
				       len >> 10);
	*out = cand;
	return 0;
}

/* Where things go in the restorer's mapping, as offsets from the args block. */
struct layout {
	uint64_t blob_len, args_len, total;
	uint64_t vmas, pages, timers, pending, xsave, frame, threads, stop_waits;
	uint64_t seccomp;
	uint64_t guards, names, bounce, bounce_len;
};

/* Each thread's own arrays after @off; their offsets go into the thread's args. */
static uint64_t plan_threads(struct crf_rst_task *t, uint64_t off)
{
	for (size_t i = 0; i < t->n_threads; i++) {
		struct crf_rst_thread *th = &t->threads[i];

		th->a.xsave_off = off = ALIGN(off, 64);
		th->a.xsave_len = (uint32_t)th->xsave_len;
		off += th->xsave_len + 4;
		th->a.frame_off = off = ALIGN(off, 64);
		off += CRF_RST_FRAME_SIZE;
		th->a.pending_off = off;
		th->a.n_pending = (uint32_t)th->n_pending;
		off += th->n_pending * 128;
	}
	return off;
}

static void plan(struct crf_rst_task *t, struct layout *l)
{
	uint64_t off = ALIGN(sizeof(struct crf_rst_args), 64);

	l->blob_len = ALIGN(crf_restorer_blob_size, PAGE_SIZE);
	l->vmas = off;
	off += t->n_vmas * sizeof(struct crf_rst_vma_arg);
	l->pages = off;
	off += t->n_pages * sizeof(struct crf_rst_pages_arg);
	l->timers = off;
	off += t->n_timers * sizeof(struct crf_rst_timer_arg);
	l->pending = off;
	off += t->n_pending * 128;
	l->xsave = off = ALIGN(off, 64);
	off += t->xsave_len + 4; /* FP_XSTATE_MAGIC2 goes after it */
	l->frame = off = ALIGN(off, 64);
	off += CRF_RST_FRAME_SIZE;
	off = plan_threads(t, off);
	l->threads = off = ALIGN(off, 64);
	off += t->n_threads * sizeof(struct crf_rst_thread_arg);
	l->stop_waits = off;
	off += t->n_stop_waits * sizeof(*t->stop_waits);
	l->seccomp = off = ALIGN(off, 64);
	off += t->seccomp_len;
	l->guards = off;
	off += t->n_guards * sizeof(struct crf_rst_range_arg);
	l->names = off;
	off += t->n_names * sizeof(struct crf_rst_name_arg);
	l->bounce_len = 0;
	/* Pages written through /proc/self/mem: forced ones, and the page a guard mark drops. */
	for (size_t i = 0; i < t->n_vmas; i++)
		if (t->vmas[i].steps & (CRF_RST_STEP_FORCE | CRF_RST_STEP_MARK_GUARD))
			l->bounce_len = BOUNCE_SIZE;
	l->bounce = off = ALIGN(off, PAGE_SIZE);
	off += l->bounce_len;
	l->args_len = off;
	/* Thread stacks between the block and the leader's stack, at the top. */
	for (size_t i = 0; i < t->n_threads; i++)
		t->threads[i].a.stack_top_off =
			ALIGN(off, PAGE_SIZE) + (i + 1) * CRF_RST_THREAD_STACK;
	l->total = l->blob_len + ALIGN(off, PAGE_SIZE) + t->n_threads * CRF_RST_THREAD_STACK +
		   STACK_SIZE;
}

static int cmp_vma(const void *a, const void *b)
{
	const struct crf_rst_vma_arg *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static struct crf_rst_vma_arg *vma_of(struct crf_rst_task *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n_vmas;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->vmas[mid].end <= addr)
			lo = mid + 1;
		else if (t->vmas[mid].start > addr)
			hi = mid;
		else
			return &t->vmas[mid];
	}
	return NULL;
}

/*
 * How each mapping gets its saved VmFlags (crf/restore.h, CRF_RST_VM_*):
 * the protection to map it with, and the steps that depend on whether
 * pages are read into it.  A private mapping without MAP_NORESERVE is
 * charged ("ac") once it is writable: mapped writable when it was charged,
 * never when it was not (its pages then go through /proc/self/mem).
 */
static void plan_vma(struct crf_rst_vma_arg *v)
{
	bool charged = (v->flags & MAP_TYPE_MASK) == MAP_PRIVATE && !(v->flags & MAP_NORESERVE);

	v->map_prot = v->prot;
	if (v->shmid >= 0 || (v->prot & PROT_WRITE))
		return;
	/* An older plugin's mapping, as before: writable while filled. */
	if (!(v->vm & CRF_RST_VM_EXACT) || !charged) {
		if (v->fill)
			v->map_prot |= PROT_WRITE;
	} else if (v->vm & CRF_RST_VM_ACCOUNT) {
		v->map_prot |= PROT_WRITE;
		if (!v->fill && (v->flags & MAP_ANONYMOUS))
			v->steps |= CRF_RST_STEP_ANON_VMA;
	} else if (v->fill) {
		v->steps |= CRF_RST_STEP_FORCE;
	}
}

/* Guard regions inside one mapping each, no page read into them. */
static int check_guards(struct crf_rst_task *t)
{
	for (size_t i = 0; i < t->n_guards; i++) {
		const struct crf_rst_range_arg *g = &t->guards[i];

		for (size_t k = 0; k < t->n_pages; k++) {
			const struct crf_rst_pages_arg *p = &t->pages[k];

			if (p->vaddr < g->end && g->start < p->vaddr + p->len)
				return crf_error_errno(
					EINVAL,
					"pages %#" PRIx64 "-%#" PRIx64
					" are in guard region %#" PRIx64 "-%#" PRIx64,
					p->vaddr, p->vaddr + p->len, g->start, g->end);
		}
	}
	return 0;
}

/*
 * The mappings made before the fork lie outside the saved address space:
 * moving one into place must not land on another not moved yet.  Their
 * span goes to the restorer, which keeps it while it unmaps crf.
 */
static int check_premaps(struct crf_rst_task *t)
{
	t->a.premap_start = t->a.premap_end = 0;
	for (size_t i = 0; i < t->n_vmas; i++) {
		const struct crf_rst_vma_arg *v = &t->vmas[i];
		uint64_t len = v->end - v->start;

		if (!v->premap)
			continue;
		for (size_t k = 0; k < t->n_vmas; k++)
			if (v->premap < t->vmas[k].end && t->vmas[k].start < v->premap + len)
				return crf_error_errno(EINVAL,
						       "mapping %#" PRIx64 " made at %#" PRIx64
						       ", inside saved mapping %#" PRIx64,
						       v->start, v->premap, t->vmas[k].start);
		if (!t->a.premap_end || v->premap < t->a.premap_start)
			t->a.premap_start = v->premap;
		if (v->premap + len > t->a.premap_end)
			t->a.premap_end = v->premap + len;
	}
	return 0;
}

/* Sort the mappings, refuse overlaps, mark those pages are read into, plan each. */
static int check_layout(struct crf_rst_task *t)
{
	int r;

	if (t->n_vmas)
		qsort(t->vmas, t->n_vmas, sizeof(*t->vmas), cmp_vma);
	for (size_t i = 1; i < t->n_vmas; i++)
		if (t->vmas[i].start < t->vmas[i - 1].end)
			return crf_error_errno(EINVAL,
					       "mappings %#" PRIx64 "-%#" PRIx64 " and %#" PRIx64
					       "-%#" PRIx64 " overlap",
					       t->vmas[i - 1].start, t->vmas[i - 1].end,
					       t->vmas[i].start, t->vmas[i].end);
	for (size_t i = 0; i < t->n_pages; i++) {
		const struct crf_rst_pages_arg *p = &t->pages[i];
		struct crf_rst_vma_arg *v = vma_of(t, p->vaddr);

		if (!v || p->vaddr + p->len > v->end)
			return crf_error_errno(EINVAL,
					       "pages %#" PRIx64 "-%#" PRIx64
					       " are not inside one mapping",
					       p->vaddr, p->vaddr + p->len);
		/* Writing them would write the file or the segment. */
		if ((v->flags & MAP_SHARED) && (v->fd >= 0 || v->shmid >= 0))
			return crf_error_errno(EINVAL,
					       "pages %#" PRIx64 " are in a shared file mapping",
					       p->vaddr);
		if (v->premap)
			return crf_error_errno(EINVAL,
					       "pages %#" PRIx64 " are in a mapping made before",
					       p->vaddr);
		v->fill = 1;
	}
	for (size_t i = 0; i < t->n_vmas; i++)
		plan_vma(&t->vmas[i]);
	r = check_premaps(t);
	return r < 0 ? r : check_guards(t);
}

/* The saved vDSO, moved to where ARCH_MAP_VDSO_64 wants it on this kernel. */
static int place_vdso(struct crf_rst_task *t, const struct own_vdso *o, struct spans *s)
{
	uint64_t head = o->text.start - o->span.start;

	if (!t->vdso)
		return 0;
	if (!o->text.end)
		return crf_error_errno(ENOENT, "crf has no vDSO of its own to measure");
	if (t->vdso < head)
		return crf_error_errno(EINVAL, "vDSO address %#" PRIx64 " too low", t->vdso);
	t->a.vdso = t->vdso - head;
	t->a.vdso_len = o->span.end - o->span.start;
	return spans_add(s, t->a.vdso, t->a.vdso + t->a.vdso_len);
}

static void fill_mm(struct crf_rst_args *a, const struct crf_rst_mm *mm)
{
#define COPY(f) a->f = mm->f;
	CRF_MM_FIELDS(COPY)
#undef COPY
	memcpy(a->auxv, mm->auxv, sizeof(a->auxv));
	a->auxv_len = mm->auxv_len;
	a->exe_fd = mm->exe_fd;
}

/* Build the argument block at @a (inside the new mapping at @base). */
/* An empty array may have no storage at all: memcpy must not see NULL. */
static void copy_array(char *dst, const void *src, size_t len)
{
	if (len)
		memcpy(dst, src, len);
}

static void pack_threads(const struct crf_rst_task *t, const struct layout *l, char *p)
{
	struct crf_rst_thread_arg *ta = (void *)(p + l->threads);

	for (size_t i = 0; i < t->n_threads; i++) {
		const struct crf_rst_thread *th = &t->threads[i];

		ta[i] = th->a;
		copy_array(p + th->a.xsave_off, th->xsave, th->xsave_len);
		copy_array(p + th->a.pending_off, th->pending, th->n_pending * 128);
	}
}

/* The filter table and its code (rst-task.h), their offsets made the block's. */
static void pack_seccomp(const struct crf_rst_task *t, const struct layout *l,
			 struct crf_rst_args *a)
{
	struct crf_rst_seccomp_filter *f = (void *)((char *)a + l->seccomp);

	copy_array((char *)f, t->seccomp_buf, t->seccomp_len);
	a->seccomp_filters_off = l->seccomp;
	for (uint32_t i = 0; i < a->n_seccomp_filters; i++)
		f[i].code_off += l->seccomp;
}

static void pack(struct crf_rst_task *t, const struct layout *l, uint64_t base,
		 struct crf_rst_args *a)
{
	char *p = (char *)a;

	*a = t->a;
	a->magic = CRF_RST_MAGIC;
	a->blob_start = base;
	a->blob_len = l->total;
	a->args_len = l->args_len;
	a->n_vmas = t->n_vmas;
	a->n_pages = t->n_pages;
	a->n_timers = t->n_timers;
	a->n_pending = t->n_pending;
	a->vmas_off = l->vmas;
	a->pages_off = l->pages;
	a->timers_off = l->timers;
	a->pending_off = l->pending;
	a->xsave_off = l->xsave;
	a->xsave_len = t->xsave_len;
	a->frame_off = l->frame;
	if (t->have_mm)
		fill_mm(a, &t->mm);
	else
		a->auxv_len = 0, a->exe_fd = -1;
	copy_array(p + l->vmas, t->vmas, t->n_vmas * sizeof(*t->vmas));
	copy_array(p + l->pages, t->pages, t->n_pages * sizeof(*t->pages));
	copy_array(p + l->timers, t->timers, t->n_timers * sizeof(*t->timers));
	copy_array(p + l->pending, t->pending, t->n_pending * 128);
	copy_array(p + l->xsave, t->xsave, t->xsave_len);
	a->n_guards = (uint32_t)t->n_guards;
	a->guards_off = l->guards;
	copy_array(p + l->guards, t->guards, t->n_guards * sizeof(*t->guards));
	a->n_names = (uint32_t)t->n_names;
	a->names_off = l->names;
	copy_array(p + l->names, t->names, t->n_names * sizeof(*t->names));
	a->bounce_off = l->bounce;
	a->bounce_len = l->bounce_len;
	a->mem_fd = l->bounce_len ? t->mem_fd : -1;
	a->mlockall = t->have_mm ? (uint32_t)t->mm.mlockall : 0;
	a->n_threads = (uint32_t)t->n_threads;
	a->threads_off = l->threads;
	a->threads_ready = a->threads_go = 0;
	pack_threads(t, l, p);
	a->n_stop_waits = (uint32_t)t->n_stop_waits;
	a->stop_waits_off = l->stop_waits;
	copy_array(p + l->stop_waits, t->stop_waits, t->n_stop_waits * sizeof(*t->stop_waits));
	pack_seccomp(t, l, a);
}

/*
 * glibc registered this thread's rseq area, and the kernel would keep
 * writing to it after the restorer has unmapped it.
 */
static int rseq_unregister(void)
{
	void *area = (char *)__builtin_thread_pointer() + __rseq_offset;

	if (!__rseq_size)
		return 0;
	if (syscall(SYS_rseq, area, 32, RSEQ_FLAG_UNREGISTER, RSEQ_SIG) == 0 ||
	    syscall(SYS_rseq, area, __rseq_size, RSEQ_FLAG_UNREGISTER, RSEQ_SIG) == 0)
		return 0;
	return crf_error_errno(errno, "unregister glibc's rseq area");
}

static void __attribute__((noreturn)) jump(uint64_t entry, struct crf_rst_args *a, uint64_t sp)
{
	__asm__ volatile("movq %0, %%rsp\n\t"
			 "xorl %%ebp, %%ebp\n\t"
			 "jmpq *%1"
			 :
			 : "r"(sp), "r"(entry), "D"(a)
			 : "memory");
	__builtin_unreachable();
}

/* Map the restorer's area, copy the blob, pack the arguments; returns the area. */
static int setup_area(struct crf_rst_task *t, struct layout *l, struct crf_rst_args **out)
{
	struct spans s = {0};
	struct own_vdso own = {0};
	uint64_t base = 0;
	void *m;
	int r;

	r = read_own_maps(&s, &own);
	for (size_t i = 0; r == 0 && i < t->n_vmas; i++)
		r = spans_add(&s, t->vmas[i].start, t->vmas[i].end);
	if (r == 0)
		r = place_vdso(t, &own, &s);
	plan(t, l);
	if (r == 0)
		r = find_gap(&s, l->total, &base);
	free(s.v);
	if (r < 0)
		return r;
	m = mmap((void *)base, l->total, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (m == MAP_FAILED)
		return crf_error_errno(errno, "map the restorer at %#" PRIx64, base);
	memcpy(m, crf_restorer_blob, crf_restorer_blob_size);
	*out = (struct crf_rst_args *)((char *)m + l->blob_len);
	pack(t, l, base, *out);
	if (mprotect(m, l->blob_len, PROT_READ | PROT_EXEC))
		return crf_error_errno(errno, "protect the restorer at %#" PRIx64, base);
	return 0;
}

/*
 * The placer of a table other tasks share waits until their restorers are
 * ready: until then their fds, and crf's they need, are in the table.
 */
static int wait_sharers(const struct crf_rst_task *t)
{
	ssize_t n;
	char c;

	if (t->fdt.wait_fd < 0)
		return 0;
	do
		n = read(t->fdt.wait_fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		return crf_error_errno(n < 0 ? errno : EPIPE,
				       "waiting for the tasks that share the fd table");
	return 0;
}

int rst_exec(struct crf_rst_task *t, int status_fd, int go_fd)
{
	struct crf_rst_args *a = NULL;
	struct layout l;
	uint64_t all = ~0ull;
	int r;

	r = check_layout(t);
	if (r < 0)
		return r;
	t->a.status_fd = status_fd;
	t->a.go_fd = go_fd;
	r = setup_area(t, &l, &a);
	if (r < 0)
		return r;
	r = wait_sharers(t);
	/*
	 * crf's log file and stderr go with crf's fds: a message written to
	 * them later would land in the program fd that took the number (its
	 * fd 2 is the program's own).  The first error is kept for the report
	 * on @status_fd instead.  In a table another task places, that task
	 * closes the log file.
	 */
	crf__log_capture(!t->fdt.sharer);
	if (r == 0)
		r = rst_move_fds(t, a);
	for (size_t i = 0; r == 0 && i < t->n_hooks; i++)
		r = t->hooks[i].fn(t->hooks[i].arg);
	if (r == 0)
		r = rseq_unregister();
	if (r < 0) {
		/* The caller reports on @status_fd, which has moved. */
		if (a->status_fd != status_fd && dup2(a->status_fd, status_fd) < 0)
			crf_error_errno(errno, "status fd %d", status_fd);
		return r;
	}
	/* Nothing of crf's may run from here on, not even a signal handler. */
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, sizeof(all));
	jump(a->blob_start, a, a->blob_start + a->blob_len);
}
