// SPDX-License-Identifier: GPL-2.0-only
/*
 * A live dump's private anonymous memory (docs/live.md).
 *
 * While the tree is frozen each task is made to create a userfaultfd for
 * its own mm (through the parasite: the fd's mm is its creator's), which
 * crf takes with pidfd_getfd() before the task's fd is closed again.  Every
 * private anonymous mapping that the kernel lets be registered is
 * registered for write-protect faults in synchronous mode, the pages
 * present at the freeze are noted and write-protected.  Then the tree
 * runs, and crf copies those pages in batches; between batches it reads
 * the userfaultfds: a write to a page not copied yet waits in the kernel
 * while crf reads the page (a read does not fault: it still holds the
 * bytes of the freeze) into a side buffer and only then lifts the
 * protection of that page, which wakes the writer.  A batch takes the side
 * buffer's bytes for such pages, so the image is the instant of the freeze.
 *
 * The program may move (mremap: REMAP), discard (madvise: REMOVE) or unmap
 * (munmap: UNMAP) live memory meanwhile: a moved range is followed; a
 * discarded one is saved as the event is read, and proved still the
 * freeze's (below); an unmapped one is gone before its event comes, so a
 * page of it not saved yet fails the dump, the program unaffected.
 *
 * Every page read from the task is checked after the read: its pagemap
 * entry must still carry the uffd-wp bit crf set at the freeze (a page
 * discarded and faulted in again, or memory mapped where a moved range
 * was, has none), else crf reads the events once more and, if that does
 * not explain the page, fails the dump rather than save bytes of a later
 * instant.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <crf/log.h>
#include <crf/parasite.h>
#include <crf/plugin.h>

#include "live.h"
#include "mem.h"
#include "pagemap.h"
#include "pages.h"
#include "smaps.h"

#include "live-priv.h"

bool mem_live_wanted(struct crf_ctx *ctx)
{
	const char *v = crf_ctx_config(ctx, "live");

	return v && (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1"));
}

struct live_task *live_find_task(struct mem_live *L, pid_t pid)
{
	for (size_t i = 0; L && i < L->n; i++)
		if (L->t[i].pid == pid)
			return &L->t[i];
	return NULL;
}

/* A userfaultfd the tree holds already: its faults would be crf's, or crf's its. */
static int check_fds(pid_t pid)
{
	char path[64], link[384], target[64];
	struct dirent *e;
	DIR *d;
	ssize_t n;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return crf_error_errno(errno, "open %s", path);
	while (r == 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", path, e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = 0;
		if (!strcmp(target, "anon_inode:[userfaultfd]"))
			r = crf_error_errno(ENOTSUP,
					    "pid %d: fd %s is a userfaultfd: a live dump (--live) "
					    "cannot write-protect the memory of a program that "
					    "handles its own faults",
					    (int)pid, e->d_name);
	}
	closedir(d);
	return r;
}

static int add_task(struct mem_live *L, pid_t pid, struct live_task **out)
{
	char path[64];

	if (L->n == L->cap) {
		size_t cap = L->cap ? 2 * L->cap : 4;
		struct live_task *t = realloc(L->t, cap * sizeof(*t));

		if (!t)
			return crf_error_errno(ENOMEM, "live dump of task %d", (int)pid);
		L->t = t;
		L->cap = cap;
	}
	*out = &L->t[L->n++];
	**out = (struct live_task){.pid = pid, .uffd = -1, .mem_fd = -1, .pm_fd = -1};
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	(*out)->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	if ((*out)->mem_fd < 0)
		return crf_error_errno(errno, "open %s", path);
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	(*out)->pm_fd = open(path, O_RDONLY | O_CLOEXEC);
	if ((*out)->pm_fd < 0)
		return crf_error_errno(errno, "open %s", path);
	return 0;
}

/* The task's own userfaultfd, taken into crf; its fd number is free again after. */
static int take_uffd(struct crf_ctx *ctx, struct live_task *t)
{
	long args[6] = {O_CLOEXEC | O_NONBLOCK};
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_UNMAP |
			    UFFD_FEATURE_EVENT_REMAP,
	};
	char link[64], target[64];
	long fd, c;
	int pidfd, r = 0;

	fd = crf_parasite_syscall(ctx, __NR_userfaultfd, args);
	if (fd == -EPERM)
		return crf_error_errno(EPERM,
				       "pid %d: a live dump (--live) needs a userfaultfd that also "
				       "takes the kernel's writes (read(2) into memory), which the "
				       "kernel gives only to a process with CAP_SYS_PTRACE or with "
				       "vm.unprivileged_userfaultfd = 1; pid %d has neither",
				       (int)t->pid, (int)t->pid);
	if (fd < 0)
		return crf_error_errno((int)-fd, "userfaultfd() in task %d", (int)t->pid);
	pidfd = (int)syscall(SYS_pidfd_open, t->pid, 0);
	if (pidfd < 0)
		r = crf_error_errno(errno, "pidfd_open(%d)", (int)t->pid);
	if (r >= 0) {
		t->uffd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)fd, 0);
		if (t->uffd < 0)
			r = crf_error_errno(errno, "pidfd_getfd of task %d's userfaultfd",
					    (int)t->pid);
	}
	if (pidfd >= 0)
		close(pidfd);
	/* The task's fd table as it was: whatever happened above. */
	args[0] = fd;
	c = crf_parasite_syscall(ctx, __NR_close, args);
	if (c < 0 && r >= 0)
		r = crf_error_errno((int)-c, "close(%ld) in task %d", fd, (int)t->pid);
	snprintf(link, sizeof(link), "/proc/%d/fd/%ld", (int)t->pid, fd);
	if (r >= 0 && readlink(link, target, sizeof(target)) >= 0)
		r = crf_error_errno(EEXIST, "task %d still has fd %ld after closing it",
				    (int)t->pid, fd);
	if (r < 0)
		return r;
	if (ioctl(t->uffd, UFFDIO_API, &api) < 0)
		return crf_error_errno(errno, "UFFDIO_API on task %d's userfaultfd", (int)t->pid);
	return 0;
}

int mem_live_task_open(struct crf_ctx *ctx, struct mem_live **L)
{
	struct live_task *t = NULL;
	pid_t pid = crf_ctx_pid(ctx);
	int r;

	r = check_fds(pid);
	if (r < 0)
		return r;
	if (!*L) {
		*L = calloc(1, sizeof(**L));
		if (!*L)
			return crf_error_errno(ENOMEM, "live dump");
		(*L)->ps = mem_page_size();
	}
	if (live_find_task(*L, pid))
		return 0;
	r = add_task(*L, pid, &t);
	if (r >= 0)
		r = take_uffd(ctx, t);
	return r;
}

int live_wp(int uffd, uint64_t start, uint64_t len, bool on)
{
	struct uffdio_writeprotect w = {
		.range = {.start = start, .len = len},
		.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	return ioctl(uffd, UFFDIO_WRITEPROTECT, &w) < 0 ? -errno : 0;
}

struct wp_slice {
	pthread_t th;
	bool threaded;
	int uffd, r;
	uint64_t start, len;
};

static void *wp_thread(void *arg)
{
	struct wp_slice *w = arg;

	w->r = live_wp(w->uffd, w->start, w->len, true);
	return NULL;
}

/*
 * Write-protect [@start, @start + @len): the kernel walks every page table
 * entry while the tree is frozen, under the mmap lock taken shared, so a
 * big mapping is cut into slices of whole page tables (2 MiB), one thread
 * each.  0 or -errno.
 */
#define WP_SLICE_MIN (16u << 20)
#define WP_THREADS   8
static int wp_parallel(int uffd, uint64_t start, uint64_t len)
{
	struct wp_slice w[WP_THREADS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = len / WP_SLICE_MIN, started = 0;
	uint64_t at = start, step;
	int r = 0;

	if (n > WP_THREADS)
		n = WP_THREADS;
	if (cpus > 0 && n > (size_t)cpus)
		n = (size_t)cpus;
	if (n < 2)
		return live_wp(uffd, start, len, true);
	step = (len / n + (2u << 20) - 1) & ~(uint64_t)((2u << 20) - 1);
	for (size_t i = 0; i < n && at < start + len; i++) {
		w[i] = (struct wp_slice){.uffd = uffd, .start = at};
		w[i].len = start + len - at < step ? start + len - at : step;
		at += w[i].len;
		w[i].threaded = !pthread_create(&w[i].th, NULL, wp_thread, &w[i]);
		/* No thread: this one does the slice. */
		if (!w[i].threaded)
			w[i].r = live_wp(uffd, w[i].start, w[i].len, true);
		started++;
	}
	for (size_t i = 0; i < started; i++) {
		if (w[i].threaded)
			pthread_join(w[i].th, NULL);
		if (w[i].r < 0 && r >= 0)
			r = w[i].r;
	}
	return r;
}

struct mark {
	struct live_vma *v;
	size_t ps;
};

/* Pages with data of their own at the freeze are the ones to copy. */
static int mark_present(void *arg, uint64_t start, uint64_t end, bool zero)
{
	struct mark *m = arg;

	if (!zero)
		memset(m->v->st + (start - m->v->start) / m->ps, PG_NEED, (end - start) / m->ps);
	return 0;
}

int mem_live_vma(struct mem_live *L, pid_t pid, const struct smaps_vma *v, struct mem_pagemap *pm,
		 size_t *idx)
{
	struct live_task *t = live_find_task(L, pid);
	struct uffdio_register reg = {
		.range = {.start = v->start, .len = v->end - v->start},
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	struct live_vma *lv;
	size_t np = (v->end - v->start) / L->ps;
	struct mark m;
	int r;

	/* What a fork does not snapshot, and what the kernel keeps from faulting, is copied now. */
	if (!t || v->shared || (v->vmflags & (VMF_LO | VMF_DC | VMF_WF | VMF_HT | VMF_DP)))
		return 0;
	if (ioctl(t->uffd, UFFDIO_REGISTER, &reg) < 0) {
		crf_debug("pid %d: %llx-%llx copied while frozen: UFFDIO_REGISTER: %s", (int)pid,
			  (unsigned long long)v->start, (unsigned long long)v->end,
			  strerror(errno));
		return 0;
	}
	if (!(reg.ioctls & (1ull << _UFFDIO_WRITEPROTECT)))
		return crf_error_errno(ENOTSUP, "pid %d: %llx: no UFFDIO_WRITEPROTECT", (int)pid,
				       (unsigned long long)v->start);
	if (t->n == t->cap || t->n_seg == t->cap_seg) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct live_vma *nv = realloc(t->v, cap * sizeof(*nv));
		struct live_seg *ns = nv ? realloc(t->seg, cap * sizeof(*ns)) : NULL;

		if (nv)
			t->v = nv;
		if (!ns)
			return crf_error_errno(ENOMEM, "live mappings of task %d", (int)pid);
		t->seg = ns;
		t->cap = t->cap_seg = cap;
	}
	lv = &t->v[t->n];
	*lv = (struct live_vma){.start = v->start, .end = v->end};
	lv->st = calloc(np, 1);
	lv->slot = calloc(np, sizeof(*lv->slot));
	if (!lv->st || !lv->slot) {
		free(lv->st);
		free(lv->slot);
		return crf_error_errno(ENOMEM, "live mapping %llx of task %d",
				       (unsigned long long)v->start, (int)pid);
	}
	t->n++;
	t->seg[t->n_seg++] = (struct live_seg){v->start, v->start, v->end - v->start};
	m = (struct mark){lv, L->ps};
	r = 0;
	/* Nothing resident or swapped: nothing to copy (zero pages read as zero). */
	if (v->has_rss && !v->rss_kb && !v->swap_kb)
		;
	else if (v->end - v->start <= EAGER_BYTES)
		r = mem_pagemap_walk(pm, v->start, v->end, mark_present, &m);
	else
		memset(lv->st, PG_UNKNOWN, np);
	if (r < 0)
		return r;
	r = wp_parallel(t->uffd, v->start, v->end - v->start);
	if (r < 0)
		return crf_error_errno(-r, "pid %d: write-protect %llx-%llx", (int)pid,
				       (unsigned long long)v->start, (unsigned long long)v->end);
	*idx = t->n - 1;
	return 1;
}

/* The live mapping and page of freeze address @a, or NULL. */
struct live_vma *live_page_of(struct live_task *t, uint64_t a, size_t ps, size_t *j)
{
	for (size_t i = 0; i < t->n; i++)
		if (a >= t->v[i].start && a < t->v[i].end) {
			*j = (a - t->v[i].start) / ps;
			return &t->v[i];
		}
	return NULL;
}

/* Where freeze address @orig is now (0: unmapped), and how far that holds. */
uint64_t live_to_cur(const struct live_task *t, uint64_t orig, uint64_t *room)
{
	for (size_t i = 0; i < t->n_seg; i++) {
		const struct live_seg *s = &t->seg[i];

		if (orig >= s->orig && orig < s->orig + s->len) {
			*room = s->orig + s->len - orig;
			return s->cur + (orig - s->orig);
		}
	}
	*room = 0;
	return 0;
}

/* The freeze address of what is at @cur now (0: none crf follows). */
static uint64_t to_orig(const struct live_task *t, uint64_t cur)
{
	for (size_t i = 0; i < t->n_seg; i++) {
		const struct live_seg *s = &t->seg[i];

		if (cur >= s->cur && cur < s->cur + s->len)
			return s->orig + (cur - s->cur);
	}
	return 0;
}

char *live_slot_ptr(struct mem_live *L, uint32_t s)
{
	return L->blocks[s / SLOTS_BLOCK] + (size_t)(s % SLOTS_BLOCK) * L->ps;
}

static int slot_get(struct mem_live *L, uint32_t *s)
{
	if (!L->n_free) {
		char **b = realloc(L->blocks, (L->n_blocks + 1) * sizeof(*b));
		uint32_t *f =
			b ? realloc(L->free_slots, (L->n_slots + SLOTS_BLOCK) * sizeof(*f)) : NULL;

		if (b)
			L->blocks = b;
		if (f)
			L->free_slots = f;
		if (!b || !f || !(L->blocks[L->n_blocks] = malloc(SLOTS_BLOCK * L->ps)))
			return crf_error_errno(ENOMEM, "side buffer of the live dump");
		for (uint32_t k = SLOTS_BLOCK; k-- > 0;)
			L->free_slots[L->n_free++] = (uint32_t)(L->n_blocks * SLOTS_BLOCK + k);
		L->n_blocks++;
		L->n_slots += SLOTS_BLOCK;
	}
	*s = L->free_slots[--L->n_free];
	if (++L->held > L->peak)
		L->peak = L->held;
	return 0;
}

void live_slot_put(struct mem_live *L, uint32_t s)
{
	L->free_slots[L->n_free++] = s;
	L->held--;
}

/*
 * Whether [@cur, @cur + @len) is still write-protected as crf left it at
 * the freeze: 1 yes, 0 not every page, -errno.
 */
int live_still_protected(struct live_task *t, uint64_t cur, size_t len, size_t ps)
{
	uint64_t e[256];
	size_t n = len / ps, done = 0;
	ssize_t got;

	while (done < n) {
		size_t k = n - done < 256 ? n - done : 256;

		got = pread(t->pm_fd, e, k * sizeof(*e), (off_t)((cur / ps + done) * sizeof(*e)));
		if (got < 0)
			return crf_error_errno(errno, "read /proc/%d/pagemap", (int)t->pid);
		if ((size_t)got != k * sizeof(*e))
			return 0;
		for (size_t i = 0; i < k; i++)
			if (!live_existed(e[i]))
				return 0;
		done += k;
	}
	return 1;
}

int live_read_at(struct live_task *t, char *buf, size_t len, uint64_t cur)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(t->mem_fd, buf + done, len - done, (off_t)(cur + done));
		if (n <= 0)
			return crf_error_errno(n < 0 ? errno : EFAULT, "read /proc/%d/mem at %#llx",
					       (int)t->pid, (unsigned long long)(cur + done));
		done += n;
	}
	return 0;
}

/* Keep the freeze bytes of page @j of @v, now at @cur, before anything may write it. */
static int save_page(struct mem_live *L, struct live_task *t, struct live_vma *v, size_t j,
		     uint64_t cur)
{
	uint32_t s = 0;
	int r = slot_get(L, &s);

	if (r < 0)
		return r;
	r = live_read_at(t, live_slot_ptr(L, s), L->ps, cur);
	if (r >= 0)
		r = live_still_protected(t, cur, L->ps, L->ps);
	if (r <= 0) {
		live_slot_put(L, s);
		return r < 0 ? r
			     : crf_error_errno(ESTALE,
					       "pid %d: the page at %#llx changed before crf could "
					       "copy it (the program discarded or moved it): the "
					       "live dump cannot hold the freeze's bytes",
					       (int)t->pid,
					       (unsigned long long)(v->start + j * L->ps));
	}
	v->st[j] = PG_SAVED;
	v->slot[j] = s;
	return 0;
}

static int push_retry(struct live_task *t, uint64_t cur)
{
	if (t->n_retry == t->cap_retry) {
		size_t cap = t->cap_retry ? 2 * t->cap_retry : 64;
		uint64_t *v = realloc(t->retry, cap * sizeof(*v));

		if (!v)
			return crf_error_errno(ENOMEM, "faults of task %d", (int)t->pid);
		t->retry = v;
		t->cap_retry = cap;
	}
	t->retry[t->n_retry++] = cur;
	return 0;
}

/* Lift what EAGAIN held back; -EAGAIN while some remain. */
static int do_retries(struct mem_live *L, struct live_task *t)
{
	size_t k = 0;
	int r = 0;

	for (size_t i = 0; i < t->n_retry; i++) {
		int w = r < 0 ? r : live_wp(t->uffd, t->retry[i], L->ps, false);

		if (w == -EAGAIN || (w < 0 && r < 0))
			t->retry[k++] = t->retry[i];
		else if (w < 0 && w != -ENOENT)
			r = crf_error_errno(-w, "pid %d: lift the write-protection at %#llx",
					    (int)t->pid, (unsigned long long)t->retry[i]);
	}
	t->n_retry = k;
	return r < 0 ? r : k ? -EAGAIN : 0;
}

/* A write fault: save the page first, then let the write go on. */
static int on_fault(struct mem_live *L, struct live_task *t, uint64_t addr)
{
	uint64_t cur = addr & ~(uint64_t)(L->ps - 1), orig = to_orig(t, cur);
	struct live_vma *v = orig ? live_page_of(t, orig, L->ps, &(size_t){0}) : NULL;
	size_t j = v ? (orig - v->start) / L->ps : 0;
	int r = 0;

	L->faults++;
	/* A write-protect fault: the page existed at the freeze. */
	if (v && (v->st[j] == PG_NEED || v->st[j] == PG_UNKNOWN))
		r = save_page(L, t, v, j, cur);
	if (r >= 0) {
		r = live_wp(t->uffd, cur, L->ps, false);
		/* Unmapped meanwhile: the unmap woke it. */
		if (r == -ENOENT)
			r = 0;
		if (r == -EAGAIN)
			r = push_retry(t, cur);
		if (r < 0)
			r = crf_error_errno(-r, "pid %d: lift the write-protection at %#llx",
					    (int)t->pid, (unsigned long long)cur);
	}
	return r;
}

/* The uffd-wp bits of the @n pagemap entries from current address @cur, into @e. */
int live_read_pagemap(struct live_task *t, uint64_t cur, size_t n, size_t ps, uint64_t *e)
{
	ssize_t got = pread(t->pm_fd, e, n * sizeof(*e), (off_t)(cur / ps * sizeof(*e)));

	if (got < 0)
		return crf_error_errno(errno, "read /proc/%d/pagemap", (int)t->pid);
	if ((size_t)got != n * sizeof(*e))
		return crf_error_errno(EIO, "read /proc/%d/pagemap: short", (int)t->pid);
	return 0;
}

bool live_existed(uint64_t e)
{
	return (e & (PM_PRESENT | PM_SWAPPED)) && (e & PM_UFFD_WP);
}

/* A page not looked at yet that the program is about to take away: look now. */
static int classify_page(struct mem_live *L, struct live_task *t, struct live_vma *v, size_t j,
			 uint64_t cur, const char *how)
{
	uint64_t e;
	int r = live_read_pagemap(t, cur, 1, L->ps, &e);

	if (r < 0)
		return r;
	if (live_existed(e)) {
		v->st[j] = PG_NEED;
		return 0;
	}
	return crf_error_errno(ESTALE,
			       "pid %d %s the page at %#llx during the live dump before crf could "
			       "tell whether it held data at the freeze (the program runs on "
			       "unaffected)",
			       (int)t->pid, how, (unsigned long long)(v->start + j * L->ps));
}

/* madvise(DONTNEED...) of [start, end): the pages go once the event is read. */
static int on_remove(struct mem_live *L, struct live_task *t, uint64_t start, uint64_t end)
{
	int r = 0;

	L->removed++;
	for (uint64_t cur = start; r >= 0 && cur < end; cur += L->ps) {
		uint64_t orig = to_orig(t, cur);
		size_t j;
		struct live_vma *v = orig ? live_page_of(t, orig, L->ps, &j) : NULL;

		if (v && v->st[j] == PG_UNKNOWN)
			r = classify_page(L, t, v, j, cur, "discarded (madvise)");
		if (r >= 0 && v && v->st[j] == PG_NEED)
			r = save_page(L, t, v, j, cur);
	}
	return r;
}

/* Cut [start, end) (current addresses) out of the segments, moving it by @delta if @keep. */
static int move_segs(struct live_task *t, uint64_t start, uint64_t end, bool keep, int64_t delta)
{
	struct live_seg *ns;
	size_t n = 0, cap = t->n_seg * 3 + 1;

	ns = calloc(cap, sizeof(*ns));
	if (!ns)
		return crf_error_errno(ENOMEM, "live mappings of task %d", (int)t->pid);
	for (size_t i = 0; i < t->n_seg; i++) {
		struct live_seg s = t->seg[i];
		uint64_t a = s.cur > start ? s.cur : start;
		uint64_t b = s.cur + s.len < end ? s.cur + s.len : end;

		if (a >= b) {
			ns[n++] = s;
			continue;
		}
		if (s.cur < a)
			ns[n++] = (struct live_seg){s.orig, s.cur, a - s.cur};
		if (keep)
			ns[n++] = (struct live_seg){s.orig + (a - s.cur), a + delta, b - a};
		if (b < s.cur + s.len)
			ns[n++] = (struct live_seg){s.orig + (b - s.cur), b, s.cur + s.len - b};
	}
	free(t->seg);
	t->seg = ns;
	t->n_seg = n;
	t->cap_seg = cap;
	return 0;
}

/* munmap() of [start, end): already gone; any page of it not saved is lost. */
static int on_unmap(struct mem_live *L, struct live_task *t, uint64_t start, uint64_t end)
{
	for (uint64_t cur = start; cur < end; cur += L->ps) {
		uint64_t orig = to_orig(t, cur);
		size_t j;
		struct live_vma *v = orig ? live_page_of(t, orig, L->ps, &j) : NULL;

		if (v && (v->st[j] == PG_NEED || v->st[j] == PG_UNKNOWN))
			return crf_error_errno(
				ESTALE,
				"pid %d unmapped %#llx-%#llx during the live dump, "
				"before crf copied the page at %#llx%s: the image "
				"cannot hold the freeze's bytes (the program runs on "
				"unaffected)",
				(int)t->pid, (unsigned long long)start, (unsigned long long)end,
				(unsigned long long)orig,
				v->st[j] == PG_UNKNOWN ? " or could tell whether it held data"
						       : "");
	}
	return move_segs(t, start, end, false, 0);
}

static int serve_msg(struct mem_live *L, struct live_task *t, const struct uffd_msg *m)
{
	switch (m->event) {
	case UFFD_EVENT_PAGEFAULT:
		return on_fault(L, t, m->arg.pagefault.address);
	case UFFD_EVENT_REMOVE:
		return on_remove(L, t, m->arg.remove.start, m->arg.remove.end);
	case UFFD_EVENT_UNMAP:
		return on_unmap(L, t, m->arg.remove.start, m->arg.remove.end);
	case UFFD_EVENT_REMAP:
		L->remapped++;
		return move_segs(t, m->arg.remap.from, m->arg.remap.from + m->arg.remap.len, true,
				 (int64_t)(m->arg.remap.to - m->arg.remap.from));
	default:
		return 0;
	}
}

/*
 * Read every task's userfaultfd dry.  Within one read, the events (which
 * say where memory went) are taken before the faults, whose addresses may
 * lie where it went to.
 */
int live_serve(struct mem_live *L)
{
	struct uffd_msg m[MSGS];
	ssize_t n;
	int r = 0;

	if (L->err)
		return L->err;
	for (size_t i = 0; r >= 0 && i < L->n; i++) {
		struct live_task *t = &L->t[i];

		for (unsigned spins = 0; r >= 0;) {
			n = read(t->uffd, m, sizeof(m));
			if (n > 0) {
				size_t k = n / sizeof(*m);

				for (size_t pass = 0; r >= 0 && pass < 2; pass++)
					for (size_t x = 0; r >= 0 && x < k; x++)
						if ((m[x].event == UFFD_EVENT_PAGEFAULT) ==
						    (pass == 1))
							r = serve_msg(L, t, &m[x]);
				continue;
			}
			if (n < 0 && errno != EAGAIN) {
				r = crf_error_errno(errno, "read task %d's userfaultfd",
						    (int)t->pid);
				break;
			}
			/* Dry: what the kernel held back goes now, or after the event it waits for.
			 */
			r = do_retries(L, t);
			if (r != -EAGAIN)
				break;
			r = 0;
			if (++spins > 100000) {
				r = crf_error_errno(EAGAIN,
						    "pid %d: the kernel keeps refusing to lift "
						    "the write-protection",
						    (int)t->pid);
				break;
			}
			sched_yield();
		}
	}
	if (r < 0)
		L->err = r;
	return r;
}

void mem_live_free(struct mem_live *L)
{
	if (!L)
		return;
	for (size_t i = 0; i < L->n; i++) {
		struct live_task *t = &L->t[i];

		/* Closing the last reference drops every registration and wakes every fault. */
		if (t->uffd >= 0)
			close(t->uffd);
		if (t->mem_fd >= 0)
			close(t->mem_fd);
		if (t->pm_fd >= 0)
			close(t->pm_fd);
		for (size_t k = 0; k < t->n; k++) {
			free(t->v[k].st);
			free(t->v[k].slot);
		}
		free(t->v);
		free(t->seg);
		free(t->retry);
	}
	for (size_t b = 0; b < L->n_blocks; b++)
		free(L->blocks[b]);
	free(L->blocks);
	free(L->free_slots);
	free(L->t);
	free(L);
}
