/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Parsers of /proc/PID files the core reads while dumping.  Each works on
 * the text of the file, so the unit tests can feed it samples.
 */
#ifndef CRF_PROCFS_H
#define CRF_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CRF_MAX_GROUPS 256

struct crf_proc_status {
	char state;
	uint32_t umask;
	uint32_t uid[4], gid[4]; /* real, effective, saved, fs */
	uint32_t groups[CRF_MAX_GROUPS];
	size_t n_groups;
	uint64_t sig_blk, sig_pnd, shd_pnd;
	uint64_t cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
	uint32_t no_new_privs;
	int threads;
};

/* Parse the text of /proc/PID/status; 0 or -EINVAL (a required field missing). */
int parse_status(const char *text, struct crf_proc_status *st);

#define CRF_NLIMITS 16
struct crf_proc_limit {
	uint64_t cur, max; /* RLIM_INFINITY for "unlimited" */
};

/* Parse /proc/PID/limits into limits indexed by RLIMIT_*; 0 or -EINVAL. */
int parse_limits(const char *text, struct crf_proc_limit lim[CRF_NLIMITS]);

struct crf_proc_timer {
	int id;
	int signo;
	uint64_t value; /* sigev_value */
	int notify;	/* SIGEV_SIGNAL, SIGEV_NONE, SIGEV_THREAD_ID (| SIGEV_SIGNAL) */
	int notify_tid;
	int clock;
};

/* Parse /proc/PID/timers; returns the number of timers (at most @max) or -EINVAL. */
int parse_timers(const char *text, struct crf_proc_timer *t, size_t max);

/*
 * The NSpid line of /proc/PID[/task/TID]/status: the ID in each PID
 * namespace level, the reader's own first, into @ids.  Returns the number
 * of levels (0: no such line, a kernel without it) or -EINVAL (more than @max).
 */
int parse_nspid(const char *text, pid_t *ids, size_t max);

/* Read a whole (small) file into a malloc'd NUL-terminated buffer; 0 or -errno. */
int crf_read_file(const char *path, char **text);

/* Threads listed in /proc/@pid/task (freeze, the restore's release); malloc'd. */
int list_tids(pid_t pid, pid_t **tids, size_t *n);

#endif
