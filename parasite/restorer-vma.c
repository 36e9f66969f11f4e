// SPDX-License-Identifier: GPL-2.0-only
/*
 * The restorer's address space steps: map every saved mapping at its
 * address, read the saved pages into them, then give each the protection
 * and seal it had (crf/restore.h, CRF_RST_VM_*, says why each is needed):
 *
 *	map_vmas	per mapping: mmap (or shmat) with the protection the
 *			filling needs, its advice and its lock; then names
 *	read_pages	through the mapping, or through /proc/self/mem for
 *			one that must never be writable
 *	finish_vmas	mprotect to the saved protection; guard regions, and
 *			only then the lock of a mapping that has some (a
 *			locked mapping takes none); mseal last
 *
 * "gu" is the one flag the kernel keeps on both parts when a mapping is
 * split, so it spreads to any neighbour that merges with its mapping: guard
 * regions come once every neighbour has the flags that keep it apart.  The
 * other flags only need the same end state.
 *
 * No libc, raw system calls only (restorer.c says why).
 */
#include <stddef.h>
#include <stdint.h>

#include <linux/mman.h>
#include <linux/prctl.h>
#include <linux/uio.h>

#include <crf/layout.h>
#include "crf-restorer.h"
#include "crf-syscall.h"
#include "restorer-kabi.h"
#include "restorer-priv.h"

#define PAGE 4096ul

void crf_rst_check_vmas(struct crf_rst_args *a)
{
	if (!crf_rst_array_ok(a, a->guards_off, a->n_guards, sizeof(struct crf_rst_range_arg)) ||
	    !crf_rst_array_ok(a, a->names_off, a->n_names, sizeof(struct crf_rst_name_arg)) ||
	    !crf_rst_array_ok(a, a->bounce_off, a->bounce_len, 1) ||
	    (a->mem_fd >= 0 && a->bounce_len < PAGE))
		FAIL(a, -EINVAL, "restorer: mapping arrays out of bounds");
}

/*
 * A System V segment comes back through shmat(), as the program attached
 * it: only then does shm_nattch count the task and its shmdt() work.  The
 * attachment is read-write or read-only; mprotect() gives the saved rest.
 */
static void attach_sysv(struct crf_rst_args *a, const struct crf_rst_vma_arg *v)
{
	long flags = SHM_REMAP | (v->prot & PROT_WRITE ? 0 : SHM_RDONLY);
	long r;

	r = sys3(__NR_shmat, v->shmid, v->start, flags);
	if (r < 0 || (uint64_t)r != v->start)
		FAIL_AT(a, r, "shmat of a System V segment at", v->start);
	r = sys3(__NR_mprotect, v->start, v->end - v->start, v->prot);
	if (r < 0)
		FAIL_AT(a, r, "mprotect of a System V segment at", v->start);
}

/*
 * An anonymous mapping that never had a page loses "ac" at mprotect: fault
 * one in (it is writable now) and drop it, which leaves its anon_vma.
 */
static void make_anon_vma(struct crf_rst_args *a, const struct crf_rst_vma_arg *v)
{
	long r;

	*(volatile char *)v->start = 0;
	r = sys3(__NR_madvise, v->start, PAGE, MADV_DONTNEED);
	if (r < 0)
		FAIL_AT(a, r, "madvise(MADV_DONTNEED) for \"ac\" at", v->start);
}

static void lock_vma(struct crf_rst_args *a, const struct crf_rst_vma_arg *v)
{
	long r;

	if (!(v->steps & CRF_RST_STEP_LOCK))
		return;
	r = sys3(__NR_mlock2, v->start, v->end - v->start,
		 v->steps & CRF_RST_STEP_LOCK_ONFAULT ? MLOCK_ONFAULT : 0);
	if (r < 0)
		FAIL_AT(a, r, "mlock2", v->start);
}

/* Advice and lock, right after mapping (guard regions come last). */
static void shape_vma(struct crf_rst_args *a, const struct crf_rst_vma_arg *v)
{
	uint64_t len = v->end - v->start;
	long r;

	if (v->steps & CRF_RST_STEP_ANON_VMA)
		make_anon_vma(a, v);
	for (int adv = 0; adv < 64; adv++) {
		if (!(v->madv & (1ull << adv)))
			continue;
		r = sys3(__NR_madvise, v->start, len, adv);
		if (r < 0)
			FAIL_AT(a, r, "madvise", v->start);
	}
	if (!(v->steps & (CRF_RST_STEP_MARK_GUARD | CRF_RST_STEP_GUARDS)))
		lock_vma(a, v);
}

static void name_vmas(struct crf_rst_args *a)
{
	const struct crf_rst_name_arg *n = at(a, a->names_off);

	for (uint32_t i = 0; i < a->n_names; i++, n++) {
		long r = sys5(__NR_prctl, PR_SET_VMA, PR_SET_VMA_ANON_NAME, n->start,
			      n->end - n->start, n->name);

		if (r < 0)
			FAIL_AT(a, r, "prctl(PR_SET_VMA_ANON_NAME) at", n->start);
	}
}

/*
 * The mappings made before the fork, with the pages this task still shares
 * with its parent and its children, go into place with their page tables;
 * then what is left of their span (others' mappings) goes.
 */
static void move_premapped(struct crf_rst_args *a)
{
	const struct crf_rst_vma_arg *v = at(a, a->vmas_off);
	long r;

	for (uint32_t i = 0; i < a->n_vmas; i++, v++) {
		if (!v->premap)
			continue;
		r = sys5(__NR_mremap, v->premap, v->end - v->start, v->end - v->start,
			 MREMAP_MAYMOVE | MREMAP_FIXED, v->start);
		if (r < 0 || (uint64_t)r != v->start)
			FAIL_AT(a, r, "mremap of the mapping made before the fork to", v->start);
	}
	if (a->premap_end > a->premap_start) {
		r = sys2(__NR_munmap, a->premap_start, a->premap_end - a->premap_start);
		if (r < 0)
			FAIL_AT(a, r, "munmap of the premap span", a->premap_start);
	}
}

void crf_rst_map_vmas(struct crf_rst_args *a)
{
	const struct crf_rst_vma_arg *v = at(a, a->vmas_off);

	move_premapped(a);
	for (uint32_t i = 0; i < a->n_vmas; i++, v++) {
		long r;

		if (v->shmid >= 0) {
			attach_sysv(a, v);
		} else if (!v->premap) {
			/*
			 * MAP_GROWSDOWN is kept: the VMA must grow as the
			 * saved stack did.  Its guard gap lies below start,
			 * so the whole saved range stays writable while
			 * pages are read in.  MAP_LOCKED is shape_vma's: a
			 * locked mapping takes no guard region.
			 */
			r = sys6(__NR_mmap, v->start, v->end - v->start, v->map_prot,
				 (v->flags & ~MAP_LOCKED) | MAP_FIXED, v->fd, v->pgoff);
			if (r < 0 || (uint64_t)r != v->start)
				FAIL_AT(a, r, "mmap", v->start);
		}
		shape_vma(a, v);
	}
	name_vmas(a);
}

/* Chunks read by one preadv(), their frames skipped into a scratch word. */
#define READ_CHUNKS 16

/*
 * Fault the pages of [@dst, @dst + @len) in with one call before they are
 * read into: taking the faults one by one inside preadv()'s copy costs more
 * than the copy.  Only a hint, so its failure is ignored (old kernels lack
 * MADV_POPULATE_WRITE; a real shortage fails the read that follows).
 */
static void populate(char *dst, uint64_t len)
{
	uint64_t start = (uint64_t)dst & ~(PAGE - 1),
		 end = ((uint64_t)dst + len + PAGE - 1) & ~(PAGE - 1);

	sys3(__NR_madvise, start, end - start, MADV_POPULATE_WRITE);
}

/*
 * Set up @iov for up to READ_CHUNKS chunks of the run from data offset
 * @off, @left bytes into @dst; returns the iovec count, *@want the data bytes.
 */
static int chunk_iov(const struct crf_rst_pages_arg *p, struct iovec *iov, uint64_t *frame,
		     uint64_t off, uint64_t left, char *dst, uint64_t *want)
{
	uint64_t in = off % p->chunk, got = 0;
	int n = 0;

	for (int k = 0; k < READ_CHUNKS && got < left; k++) {
		uint64_t len = p->chunk - (k ? 0 : in);

		if (len > left - got)
			len = left - got;
		if (k)
			iov[n++] = (struct iovec){.iov_base = frame, .iov_len = 8};
		iov[n++] = (struct iovec){.iov_base = dst + got, .iov_len = len};
		got += len;
	}
	*want = got;
	return n;
}

/* Data bytes among the first @r bytes that filled @iov (frames excluded). */
static uint64_t data_read(const struct iovec *iov, int n, uint64_t r, const uint64_t *frame)
{
	uint64_t done = 0;

	for (int i = 0; i < n && r; i++) {
		uint64_t k = r < iov[i].iov_len ? r : iov[i].iov_len;

		if (iov[i].iov_base != frame)
			done += k;
		r -= k;
	}
	return done;
}

/*
 * Read up to @left data bytes of @p's blob from data offset @off into @dst,
 * many chunks per call; returns how many (at least one), or fails.
 */
static uint64_t read_some(struct crf_rst_args *a, const struct crf_rst_pages_arg *p, uint64_t off,
			  uint64_t left, char *dst)
{
	struct iovec iov[2 * READ_CHUNKS];
	uint64_t frame, want, done;
	uint64_t pos = CRF_BLOB_CHUNK_OFF(p->hdr_len, p->chunk, off / p->chunk) + CRF_IMG_FRAME +
		       off % p->chunk;
	int n = chunk_iov(p, iov, &frame, off, left, dst, &want);
	long r;

	r = sys5(__NR_preadv, p->fd, iov, n, pos, 0);
	done = r > 0 ? data_read(iov, n, r, &frame) : 0;
	if (!done)
		FAIL_AT(a, r < 0 ? r : -EIO, "read pages into", (uint64_t)dst);
	return done;
}

/* Read one run of pages straight from the blob image's chunks into place. */
static void read_run(struct crf_rst_args *a, const struct crf_rst_pages_arg *p)
{
	uint64_t off = p->off, left = p->len, done;
	char *dst = (char *)p->vaddr;

	while (left) {
		populate(dst, left < p->chunk * READ_CHUNKS ? left : p->chunk * READ_CHUNKS);
		done = read_some(a, p, off, left, dst);
		dst += done;
		off += done;
		left -= done;
	}
}

/*
 * The bytes [@from, @to) of run @p (inside it) read into the bounce buffer,
 * then written through /proc/self/mem, which writes into a read-only
 * private mapping as ptrace does (a private copy of the page), leaving the
 * mapping's flags alone.
 */
static void force_range(struct crf_rst_args *a, const struct crf_rst_pages_arg *p, uint64_t from,
			uint64_t to)
{
	uint64_t off = p->off + (from - p->vaddr), left = to - from, vaddr = from;
	char *bounce = at(a, a->bounce_off);

	if (a->mem_fd < 0 || !a->bounce_len)
		FAIL_AT(a, -EINVAL, "no /proc/self/mem for the pages at", vaddr);
	while (left) {
		uint64_t n =
			read_some(a, p, off, left < a->bounce_len ? left : a->bounce_len, bounce);

		for (uint64_t w = 0; w < n;) {
			long r = sys4(__NR_pwrite64, a->mem_fd, bounce + w, n - w, vaddr + w);

			if (r <= 0)
				FAIL_AT(a, r < 0 ? r : -EIO,
					"write pages through /proc/self/mem at", vaddr + w);
			w += (uint64_t)r;
		}
		vaddr += n;
		off += n;
		left -= n;
	}
}

/* The mapping holding @addr (the array is sorted by crf), or NULL. */
static const struct crf_rst_vma_arg *vma_of(const struct crf_rst_args *a, uint64_t addr)
{
	const struct crf_rst_vma_arg *v = at(a, a->vmas_off);
	uint32_t lo = 0, hi = a->n_vmas;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (v[mid].end <= addr)
			lo = mid + 1;
		else if (v[mid].start > addr)
			hi = mid;
		else
			return &v[mid];
	}
	return 0;
}

void crf_rst_read_pages(struct crf_rst_args *a)
{
	const struct crf_rst_pages_arg *p = at(a, a->pages_off);

	for (uint32_t i = 0; i < a->n_pages; i++) {
		const struct crf_rst_vma_arg *v = vma_of(a, p[i].vaddr);

		if (!p[i].chunk)
			FAIL_AT(a, -EINVAL, "pages: zero chunk size at", p[i].vaddr);
		if (v && (v->steps & CRF_RST_STEP_FORCE))
			force_range(a, &p[i], p[i].vaddr, p[i].vaddr + p[i].len);
		else
			read_run(a, &p[i]);
	}
}

/*
 * "gu" stays on a mapping once a guard region was installed in it, even
 * after the last one is removed: install one on the first page and remove
 * it again.  Installing drops the page: its saved bytes are written again.
 */
static void mark_guard(struct crf_rst_args *a, const struct crf_rst_vma_arg *v)
{
	const struct crf_rst_pages_arg *p = at(a, a->pages_off);
	uint64_t end = v->start + PAGE;
	long r = sys3(__NR_madvise, v->start, PAGE, MADV_GUARD_INSTALL);

	if (r >= 0)
		r = sys3(__NR_madvise, v->start, PAGE, MADV_GUARD_REMOVE);
	if (r < 0)
		FAIL_AT(a, r, "madvise(MADV_GUARD_INSTALL) for \"gu\" at", v->start);
	for (uint32_t i = 0; i < a->n_pages; i++)
		if (p[i].vaddr < end && v->start < p[i].vaddr + p[i].len)
			force_range(a, &p[i], p[i].vaddr > v->start ? p[i].vaddr : v->start,
				    p[i].vaddr + p[i].len < end ? p[i].vaddr + p[i].len : end);
}

static void install_guards(struct crf_rst_args *a, const struct crf_rst_vma_arg *v)
{
	const struct crf_rst_range_arg *g = at(a, a->guards_off);

	for (uint32_t i = 0; i < a->n_guards; i++, g++) {
		long r;

		if (g->start < v->start || g->end > v->end)
			continue;
		r = sys3(__NR_madvise, g->start, g->end - g->start, MADV_GUARD_INSTALL);
		if (r < 0)
			FAIL_AT(a, r, "madvise(MADV_GUARD_INSTALL) at", g->start);
	}
}

void crf_rst_finish_vmas(struct crf_rst_args *a)
{
	const struct crf_rst_vma_arg *v = at(a, a->vmas_off);
	long r;

	for (uint32_t i = 0; i < a->n_vmas; i++) {
		if (v[i].map_prot == v[i].prot)
			continue;
		r = sys3(__NR_mprotect, v[i].start, v[i].end - v[i].start, v[i].prot);
		if (r < 0)
			FAIL_AT(a, r, "mprotect", v[i].start);
	}
	for (uint32_t i = 0; i < a->n_vmas; i++) {
		if (!(v[i].steps & (CRF_RST_STEP_MARK_GUARD | CRF_RST_STEP_GUARDS)))
			continue;
		if (v[i].steps & CRF_RST_STEP_MARK_GUARD)
			mark_guard(a, &v[i]);
		install_guards(a, &v[i]);
		lock_vma(a, &v[i]);
	}
	/* Nothing may change a sealed mapping after this. */
	for (uint32_t i = 0; i < a->n_vmas; i++) {
		if (!(v[i].steps & CRF_RST_STEP_SEAL))
			continue;
		r = sys3(__NR_mseal, v[i].start, v[i].end - v[i].start, 0);
		if (r < 0)
			FAIL_AT(a, r, "mseal", v[i].start);
	}
	/* Only mappings made from here on: the vDSO is special, never locked. */
	if (a->mlockall) {
		r = sys1(__NR_mlockall, a->mlockall);
		if (r < 0)
			FAIL_AT(a, r, "mlockall", a->mlockall);
	}
}
