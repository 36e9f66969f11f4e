/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * live-priv.h - what live.c (the userfaultfd, faults and events) and
 * live-copy.c (the copy after the thaw) share.
 */
#ifndef CRF_PLUGIN_MEM_LIVE_PRIV_H
#define CRF_PLUGIN_MEM_LIVE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "scan-uapi.h" /* PM_PRESENT, PM_SWAPPED */

#define PM_UFFD_WP  (1ull << 57) /* a pagemap entry's bit: write-protected by a userfaultfd */
#define SLOTS_BLOCK 256u	 /* side-buffer pages allocated at a time */
#define MSGS	    64

enum page_state {
	PG_NONE,    /* absent or the zero page at the freeze: nothing to copy */
	PG_NEED,    /* present at the freeze, not copied yet, write-protected */
	PG_SAVED,   /* written to since: its freeze bytes are in the side buffer */
	PG_DONE,    /* copied */
	PG_UNKNOWN, /* not looked at while frozen: its uffd-wp bit will say */
};

/*
 * While frozen, the pages of a mapping up to this size are looked up in the
 * pagemap; a bigger one is looked up after the thaw, before any copy: a
 * page that carries the uffd-wp bit set at the freeze existed then (every
 * page the program adds later has none).  That walk of the page tables is
 * then paid while the program runs.
 */
#define EAGER_BYTES    (16u << 20)
#define CLASSIFY_PAGES 1024

struct live_vma {
	uint64_t start, end; /* at the freeze: the image's addresses */
	uint8_t *st;	     /* enum page_state of each page */
	uint32_t *slot;	     /* side-buffer slot of each PG_SAVED page */
};

/* [orig, orig + len) of the freeze lies at cur now (mremap moves it). */
struct live_seg {
	uint64_t orig, cur, len;
};

struct live_task {
	pid_t pid;
	int uffd, mem_fd, pm_fd;
	struct live_vma *v;
	size_t n, cap;
	struct live_seg *seg;
	size_t n_seg, cap_seg;
	/*
	 * Faulting pages whose protection the kernel would not lift yet
	 * (EAGAIN: an event of the program's mm changing is not read yet).
	 */
	uint64_t *retry;
	size_t n_retry, cap_retry;
};

struct mem_live {
	struct live_task *t;
	size_t n, cap;
	size_t ps;
	char **blocks; /* side buffer: SLOTS_BLOCK pages each */
	size_t n_blocks;
	uint32_t *free_slots;
	size_t n_free, n_slots, held, peak;
	uint64_t faults, removed, remapped, copied;
	int err; /* a failure found while reading events */
};

struct live_task *live_find_task(struct mem_live *L, pid_t pid);
struct live_vma *live_page_of(struct live_task *t, uint64_t a, size_t ps, size_t *j);
uint64_t live_to_cur(const struct live_task *t, uint64_t orig, uint64_t *room);
char *live_slot_ptr(struct mem_live *L, uint32_t s);
void live_slot_put(struct mem_live *L, uint32_t s);
int live_still_protected(struct live_task *t, uint64_t cur, size_t len, size_t ps);
int live_read_at(struct live_task *t, char *buf, size_t len, uint64_t cur);
int live_wp(int uffd, uint64_t start, uint64_t len, bool on);
int live_read_pagemap(struct live_task *t, uint64_t cur, size_t n, size_t ps, uint64_t *e);
bool live_existed(uint64_t e);
int live_serve(struct mem_live *L);

#endif
