/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the restorer's source files share: restorer.c (the address space and
 * the per-task state) and restorer-threads.c (the threads and the return
 * into the program).  All of it has hidden visibility (-fvisibility=hidden),
 * so calls between the files are PC-relative and the blob keeps no
 * relocations.
 */
#ifndef CRF_RESTORER_PRIV_H
#define CRF_RESTORER_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "crf-restorer.h"

/* GCC may emit calls to these even in freestanding code. */
void *memset(void *s, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);

static inline void *at(const struct crf_rst_args *a, uint64_t off)
{
	return (char *)a + off;
}

/* Every array must lie inside the block crf built. */
static inline int crf_rst_array_ok(const struct crf_rst_args *a, uint64_t off, uint64_t n,
				   uint64_t size)
{
	return off <= a->args_len && n <= (a->args_len - off) / size;
}

/*
 * Report "@what [@addr]" with @err on the status fd and end the task.
 * @addr is printed only when @with_addr; crf turns the errno into text.
 */
void crf_rst_fail(struct crf_rst_args *a, long err, const char *what, uint64_t addr, int with_addr)
	__attribute__((noreturn));

#define FAIL(a, err, what)	    crf_rst_fail((a), (err), (what), 0, 0)
#define FAIL_AT(a, err, what, addr) crf_rst_fail((a), (err), (what), (addr), 1)

/* The alternate stack's flags to set; SS_ONSTACK is a state, not a setting. */
int32_t crf_rst_sas_flags(uint64_t size, int32_t flags);

/*
 * The process's credentials, set by each thread for itself (restorer.c).
 * The capabilities of @keep stay permitted and effective, and
 * no_new_privs off, until crf_rst_restore_creds_kept() (@keep 0: none).
 */
void crf_rst_restore_creds(struct crf_rst_args *a, const struct crf_rst_creds *c, uint64_t keep);
/* The rest of @c once what @keep was kept for is done. */
void crf_rst_restore_creds_kept(struct crf_rst_args *a, const struct crf_rst_creds *c,
				uint64_t keep);

/* restorer-vma.c */

/* The mapping arrays lie inside the block. */
void crf_rst_check_vmas(struct crf_rst_args *a);
/* Map every saved mapping at its address (restorer-vma.c says how). */
void crf_rst_map_vmas(struct crf_rst_args *a);
/* Read the saved pages into them. */
void crf_rst_read_pages(struct crf_rst_args *a);
/* Protection, advice, guard regions, locks and seals, in that order. */
void crf_rst_finish_vmas(struct crf_rst_args *a);

/* restorer-threads.c */

/* The thread array and every thread's arguments lie inside the block. */
void crf_rst_check_threads(struct crf_rst_args *a);
/* The leader's own clear_tid and robust list. */
void crf_rst_leader_thread(struct crf_rst_args *a);
/* Create the other threads; they set their state and wait for release. */
void crf_rst_create_threads(struct crf_rst_args *a);
/* Wait until every created thread has reported its state set. */
void crf_rst_wait_threads(struct crf_rst_args *a);
/* Let the threads return into the program. */
void crf_rst_release_threads(struct crf_rst_args *a);
/* Return the leader into the program with its saved registers. */
void crf_rst_leader_return(struct crf_rst_args *a) __attribute__((noreturn));

/* restorer-attrs.c: task attributes (see there) */

/* The attribute fields of the block are in range. */
int crf_rst_attrs_ok(const struct crf_rst_args *a);
/* personality(), once the mappings are built. */
void crf_rst_set_personality(struct crf_rst_args *a);
/* The dumpable flag and the leader's parent-death signal, after its credentials. */
void crf_rst_after_creds(struct crf_rst_args *a);
/* A thread's parent-death signal, after its credentials. */
void crf_rst_thread_after_creds(struct crf_rst_args *a, const struct crf_rst_thread_arg *t);
/* A thread's timer slack, after its scheduling. */
void crf_rst_thread_slack(struct crf_rst_args *a, const struct crf_rst_thread_arg *t);
/* After "go": the stop reports and SIGCHLD of the stopped children. */
void crf_rst_take_stop_reports(struct crf_rst_args *a);
/* restorer-seccomp.c: see there; all after go but the first two. */

/* The filter table and every thread's seccomp step lie inside the block. */
void crf_rst_check_seccomp(struct crf_rst_args *a);
/* Whether any thread gets seccomp state (crf must trace the release with suspension). */
uint32_t crf_rst_seccomp_any(const struct crf_rst_args *a);
/* What crf_rst_restore_creds() must keep for the thread's step @s (the leader's: @leader). */
uint64_t crf_rst_seccomp_keep(const struct crf_rst_args *a, const struct crf_rst_seccomp_arg *s,
			      int leader);
/* The leader: the filters every thread holds, with TSYNC, before the threads go. */
void crf_rst_seccomp_shared(struct crf_rst_args *a);
/* Each thread: its own filters, the credentials kept back (@c, @keep), strict mode. */
void crf_rst_seccomp_own(struct crf_rst_args *a, const struct crf_rst_seccomp_arg *s,
			 const struct crf_rst_creds *c, uint64_t keep);

#endif
