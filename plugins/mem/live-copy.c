// SPDX-License-Identifier: GPL-2.0-only
/*
 * A live dump's copy, after the thaw (docs/live.md, live.c): the big
 * mappings' pages looked up by their uffd-wp bits, then every live page
 * read in batches through mem_pages, the side buffer's bytes taken for
 * pages the program wrote first, the userfaultfds served between batches.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "live.h"
#include "live-priv.h"
#include "mem.h"
#include "pages.h"

struct copy {
	struct mem_live *L;
	struct live_task *t;
};

/*
 * Read run [@orig, @orig + @len) of mapping @v (every page PG_NEED or
 * PG_SAVED when the batch was made) into @buf.
 */
static int copy_run(struct mem_live *L, struct live_task *t, struct live_vma *v, char *buf,
		    uint64_t orig, size_t len)
{
	size_t ps = L->ps, done = 0;
	int r = 0, ok;

	while (r >= 0 && done < len) {
		size_t j = (orig + done - v->start) / ps, k = 0;
		uint64_t room, cur;

		if (v->st[j] == PG_SAVED) {
			memcpy(buf + done, live_slot_ptr(L, v->slot[j]), ps);
			done += ps;
			continue;
		}
		cur = live_to_cur(t, orig + done, &room);
		if (!cur || v->st[j] != PG_NEED)
			return crf_error_errno(ESTALE, "pid %d: the page at %#llx is gone uncopied",
					       (int)t->pid, (unsigned long long)(orig + done));
		while (done + k < len && k < room && v->st[j + k / ps] == PG_NEED)
			k += ps;
		r = live_read_at(t, buf + done, k, cur);
		if (r < 0)
			return r;
		ok = live_still_protected(t, cur, k, ps);
		if (ok < 0)
			return ok;
		if (!ok) {
			/* An event not read yet may say what happened: then retry these pages. */
			r = live_serve(L);
			if (r >= 0 && v->st[j] == PG_NEED &&
			    live_to_cur(t, orig + done, &room) == cur)
				return crf_error_errno(ESTALE,
						       "pid %d: the pages at %#llx changed before "
						       "crf could copy them (the program discarded "
						       "or moved them)",
						       (int)t->pid,
						       (unsigned long long)(orig + done));
			continue;
		}
		done += k;
	}
	return r;
}

/* Once copied, a page is the image's: let writes to it go on. */
static int release_run(struct mem_live *L, struct live_task *t, struct live_vma *v, uint64_t orig,
		       size_t len)
{
	size_t ps = L->ps;
	int r = 0;

	for (size_t done = 0; done < len; done += ps) {
		size_t j = (orig + done - v->start) / ps;

		if (v->st[j] == PG_SAVED)
			live_slot_put(L, v->slot[j]);
		v->st[j] = PG_DONE;
	}
	for (size_t done = 0; r >= 0 && done < len;) {
		uint64_t room, cur = live_to_cur(t, orig + done, &room);
		size_t k = len - done < room ? len - done : room;

		if (!cur) {
			done += ps;
			continue;
		}
		r = live_wp(t->uffd, cur, k, false);
		/* An event not read yet: read it (it may move these pages), then again. */
		if (r == -EAGAIN) {
			r = live_serve(L);
			if (r >= 0)
				continue;
		}
		if (r == -ENOENT)
			r = 0;
		if (r < 0)
			r = crf_error_errno(-r, "pid %d: lift the write-protection at %#llx",
					    (int)t->pid, (unsigned long long)cur);
		done += k;
	}
	return r;
}

/* mem_pages' read of a batch, for live mappings. */
static int read_batch(void *arg, struct mem_pages *p)
{
	struct copy *c = arg;
	char *buf = p->buf;
	int r = live_serve(c->L);

	for (size_t i = 0; r >= 0 && i < p->n_batch; i++) {
		uint64_t a = (uintptr_t)p->batch[i].iov_base;
		size_t len = p->batch[i].iov_len, j;
		struct live_vma *v = live_page_of(c->t, a, c->L->ps, &j);

		if (!v)
			return crf_error_errno(EINVAL, "pid %d: %#llx is not live", (int)c->t->pid,
					       (unsigned long long)a);
		r = copy_run(c->L, c->t, v, buf, a, len);
		if (r >= 0)
			r = release_run(c->L, c->t, v, a, len);
		buf += len;
		c->L->copied += len;
	}
	if (r >= 0)
		r = live_serve(c->L);
	return r;
}

struct ranges {
	uint64_t (*r)[2];
	size_t n;
};

/* The mappings of @pid now, in address order, into @m. */
static int read_maps(pid_t pid, struct ranges *m)
{
	char path[64];
	unsigned long long a, b;
	size_t cap = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return crf_error_errno(errno, "open %s", path);
	while (fscanf(f, "%llx-%llx%*[^\n]", &a, &b) == 2) {
		if (m->n == cap) {
			void *n = realloc(m->r, (cap = cap * 2 + 64) * sizeof(*m->r));

			if (!n)
				return crf_error_errno(ENOMEM, "%s", path);
			m->r = n;
		}
		m->r[m->n][0] = a;
		m->r[m->n++][1] = b;
	}
	return ferror(f) ? crf_error_errno(EIO, "read %s", path) : 0;
}

static bool mapped(const struct ranges *m, uint64_t a)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a < m->r[mid][0])
			hi = mid;
		else if (a >= m->r[mid][1])
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/*
 * The window of @k pages from page @j of @v, at @cur now, read from the
 * pagemap into @e: a page with the uffd-wp bit set at the freeze held
 * data then.  One without it was empty then only if it is still mapped:
 * munmap posts UNMAP after the pages are gone, so the read may have seen
 * the hole an unmap made, and the maps, read after the pagemap, tell.
 */
static int sort_window(struct live_task *t, struct live_vma *v, size_t j, size_t k, uint64_t cur,
		       size_t ps, const uint64_t *e)
{
	struct ranges m = {0};
	bool read = false;
	int r = 0;

	for (size_t i = 0; r >= 0 && i < k; i++) {
		if (v->st[j + i] != PG_UNKNOWN)
			continue;
		if (live_existed(e[i])) {
			v->st[j + i] = PG_NEED;
			continue;
		}
		if (!read) {
			r = read_maps(t->pid, &m);
			read = true;
			if (r < 0)
				break;
		}
		if (mapped(&m, cur + i * ps))
			v->st[j + i] = PG_NONE;
		else
			r = crf_error_errno(
				ESTALE,
				"pid %d unmapped the page at %#llx during the live dump "
				"before crf could tell whether it held data at the freeze "
				"(the program runs on unaffected)",
				(int)t->pid, (unsigned long long)(v->start + (j + i) * ps));
	}
	free(m.r);
	return r;
}

/* Look up the pages of @v not looked at while frozen, serving faults between windows. */
static int classify_vma(struct mem_live *L, struct live_task *t, struct live_vma *v)
{
	size_t np = (v->end - v->start) / L->ps;
	uint64_t e[CLASSIFY_PAGES];
	int r = 0;

	for (size_t j = 0; r >= 0 && j < np;) {
		uint64_t room, cur = live_to_cur(t, v->start + j * L->ps, &room);
		size_t k = np - j;

		if (v->st[j] != PG_UNKNOWN) {
			j++;
			continue;
		}
		if (!cur)
			return crf_error_errno(ESTALE, "pid %d: the page at %#llx is gone unseen",
					       (int)t->pid,
					       (unsigned long long)(v->start + j * L->ps));
		if (k > CLASSIFY_PAGES)
			k = CLASSIFY_PAGES;
		if (k > room / L->ps)
			k = room / L->ps;
		r = live_read_pagemap(t, cur, k, L->ps, e);
		if (r >= 0)
			r = sort_window(t, v, j, k, cur, L->ps, e);
		j += k;
		if (r >= 0)
			r = live_serve(L);
	}
	return r;
}

int mem_live_classify(struct mem_live *L)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && L && i < L->n; i++)
		for (size_t k = 0; r >= 0 && k < L->t[i].n; k++)
			r = classify_vma(L, &L->t[i], &L->t[i].v[k]);
	return r;
}

int mem_live_copy(struct mem_live *L, pid_t pid, size_t idx, struct mem_pages *p)
{
	struct live_task *t = live_find_task(L, pid);
	struct copy c = {L, t};
	struct live_vma *v;
	size_t np;
	int r = 0;

	if (!t || idx >= t->n)
		return crf_error_errno(EINVAL, "pid %d: no live mapping %zu", (int)pid, idx);
	v = &t->v[idx];
	np = (v->end - v->start) / L->ps;
	mem_pages_begin(p, true, true);
	p->read_hook = read_batch;
	p->read_arg = &c;
	for (size_t j = 0; r >= 0 && j < np;) {
		size_t k = j;

		while (k < np && (v->st[k] == PG_NEED || v->st[k] == PG_SAVED))
			k++;
		if (k > j)
			r = mem_pages_add(p, v->start + j * L->ps, v->start + k * L->ps, false);
		j = k + 1;
	}
	if (r >= 0)
		r = mem_pages_flush(p);
	p->read_hook = NULL;
	p->read_arg = NULL;
	return r;
}

int mem_live_end(struct mem_live *L)
{
	int r;

	if (!L)
		return 0;
	r = live_serve(L);
	crf_info("live dump: %llu MiB copied while the tree ran, %llu write faults served, "
		 "%llu discards, %llu moves followed; side buffer peak %zu pages (%.1f MiB)",
		 (unsigned long long)(L->copied >> 20), (unsigned long long)L->faults,
		 (unsigned long long)L->removed, (unsigned long long)L->remapped, L->peak,
		 L->peak * (double)L->ps / (1 << 20));
	return r;
}
