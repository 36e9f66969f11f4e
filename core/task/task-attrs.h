/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Task attributes: loginuid, oom_score_adj, transparent huge pages
 * disabled, membarrier registrations, parent-death signals, timer slack,
 * child subreaper, dumpable, and the group stop a process is in.  Each is
 * saved and restored exactly, or refused with one message naming the task,
 * the attribute and why: at the dump where the task itself decides, at the
 * restore, before anything is forked, where it is the restoring crf or
 * machine that cannot do it.  docs/dump-restore.md lists what is refused.
 *
 * Where each is set again: loginuid, oom_score_adj, THP, membarrier,
 * subreaper and the leader's timer slack by crf's code in the forked task
 * (attrs_apply); personality, dumpable, parent-death signals and the
 * other threads' timer slack by the restorer (parasite/restorer-attrs.c),
 * the group stop by crf as it lets the task go (core/restore/rst-release.c).
 */
#ifndef CRF_TASK_ATTRS_H
#define CRF_TASK_ATTRS_H

#include <stdbool.h>
#include <sys/types.h>

#include "core.pb-c.h"

/* membarrier(2) commands (linux/membarrier.h; GET_REGISTRATIONS is 6.3+). */
#define CRF_MB_QUERY				    0
#define CRF_MB_REGISTER_GLOBAL_EXPEDITED	    (1 << 2)
#define CRF_MB_PRIVATE_EXPEDITED		    (1 << 3)
#define CRF_MB_REGISTER_PRIVATE_EXPEDITED	    (1 << 4)
#define CRF_MB_PRIVATE_EXPEDITED_SYNC_CORE	    (1 << 5)
#define CRF_MB_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE (1 << 6)
#define CRF_MB_PRIVATE_EXPEDITED_RSEQ		    (1 << 7)
#define CRF_MB_REGISTER_PRIVATE_EXPEDITED_RSEQ	    (1 << 8)
#define CRF_MB_GET_REGISTRATIONS		    (1 << 9)
#define CRF_MB_REGISTRATIONS                                                                       \
	(CRF_MB_REGISTER_GLOBAL_EXPEDITED | CRF_MB_REGISTER_PRIVATE_EXPEDITED |                    \
	 CRF_MB_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE | CRF_MB_REGISTER_PRIVATE_EXPEDITED_RSEQ)

/* prctl(PR_GET_MDWE) (6.3+; glibc 2.36's headers lack it). */
#define CRF_PR_GET_MDWE 66

/* PR_SET_THP_DISABLE's flag (6.18): disabled except where madvise asks for them. */
#define CRF_THP_DISABLE_EXCEPT_ADVISED (1 << 1)

struct crf_parasite;
struct crf_proc;
struct crf_pstree;
struct crf_rst_task;
struct crf_rst_thread_arg;

/* task-attrs-dump.c: the dump */

/*
 * The attributes of the frozen process @pr of tree @t, infected with @p,
 * into @tc, after task_collect_threads() (its threads' records are
 * read).  Refuses (-errno, logged, naming the pid) what cannot come back.
 */
int attrs_dump(const struct crf_pstree *t, const struct crf_proc *pr, struct crf_parasite *p,
	       Crf__Core__TaskCore *tc);

/* The process is to come back in a group stop of @sig (the first noted stays). */
void task_note_stop(Crf__Core__TaskCore *tc, int sig);

/* task-attrs-restore.c: the restore */

/* The attribute fields of @tc (from image @img) are in range; else -EBADMSG (logged). */
int attrs_check_image(const char *img, const Crf__Core__TaskCore *tc);

/*
 * Before anything is forked: can crf restore, on this machine, set every
 * attribute of the live processes of @t (@tcs by tree index, NULL for
 * zombies)?  @detach: crf restore -d, whose exit the root would see.
 * Tries each value that differs from crf's own in a short-lived child.
 * 0 or -errno (logged, naming the pid, the attribute and why).
 */
int attrs_check_restore(const struct crf_pstree *t, Crf__Core__TaskCore *const *tcs, bool detach);

/*
 * In the forked task, with crf's credentials, after its scheduling and
 * before it changes root: loginuid, oom_score_adj, THP, membarrier
 * registrations, subreaper, the leader's timer slack.  0 or -errno (logged).
 */
int attrs_apply(const Crf__Core__TaskCore *tc);

/* What the restorer sets (crf_rst_args): personality, dumpable, ...; 0 or -errno. */
int attrs_fill(struct crf_rst_task *t, const Crf__Core__TaskCore *tc);
/* A thread's: timer slack and parent-death signal. */
void attrs_fill_thread(struct crf_rst_thread_arg *a, const Crf__Core__ThreadCore *th);

#endif
