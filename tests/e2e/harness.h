/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The end-to-end harness's state and the functions its files share
 * (harness.c: the options and main; run.c: the run modes; procs.c: the
 * processes it starts and reaps; checks.c: the workload seen from outside;
 * output.c: logs, verdicts and the outside pipe).
 */
#ifndef CRF_E2E_HARNESS_H
#define CRF_E2E_HARNESS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum mode { MODE_KILL, MODE_LEAVE, MODE_TWICE };

extern const char *const mode_names[3];

struct exited {
	pid_t pid;
	int status;
};

struct harness {
	enum mode mode;
	int timeout_s;
	int settle_ms;
	int pause_ms;	   /* --pause: between a dump that killed the workload and its restore */
	long max_image_kb; /* 0: no limit */
	bool keep, counter_lines, own_cgroup, own_cgroups_v1, pty, expect_stopped;
	char cgroup[PATH_MAX];	   /* --own-cgroup: the workload's scratch cgroup v2 */
	char cgroups_v1[16][4096]; /* --own-cgroups-v1: one per v1 hierarchy */
	int n_cgroups_v1;
	const char *name, *crf, *dir, *expect_fail, *expect_verify_fail, *expect_restore_fail;
	const char *restore_fault; /* --restore-fault: a fault point's name */
	const char *dump_args[16], *restore_args[8];
	int ndump_args, nrestore_args;
	char **workload;

	char dir2[PATH_MAX];
	char work[64];	    /* logs, ready and verify files, the workload's files */
	char log[PATH_MAX]; /* the workload's stdout and stderr, and crf restore's */
	char ready[PATH_MAX], verify[PATH_MAX];
	char crf_log[PATH_MAX]; /* the last crf dump's output */
	pid_t pid;		/* the workload */
	int64_t deadline_ms;
	/* --outside-pipe/--outside-fifo: the workload's fd, our ends, the name, what we read */
	int outside_fd;
	bool outside_fifo;
	int out_r, out_w;
	char out_name[64];
	char out_log[PATH_MAX];
	char subst[32][256]; /* the arguments with %PIPE% replaced */
	struct exited exited[256];
	int nexited;
	char timings[512];
};

/* The one harness run of this process (harness.c). */
extern struct harness h;

/* run.c: the test, in the mode the options chose. */
void run(void);

/* procs.c */
/* Consume the recorded exit of @pid (a restored process reuses the PID). */
bool take_exit(pid_t pid, int *status);
/* Wait for @pid (our child) to end, within the deadline; its wait status. */
int wait_exit(pid_t pid, const char *what);
/*
 * Start @argv with stdin from /dev/null and stdout and stderr into @out;
 * @workload: with the test's environment and cgroups; @terminal: on the
 * --pty terminal; @outside: with the outside pipe's write end.
 */
pid_t spawn(char *const argv[], const char *out, bool append, bool workload, bool terminal,
	    bool outside);
/* Run crf with @args; its wait status, the time it took in *@took_ms. */
int run_crf(const char *const args[], const char *out, bool append, bool terminal, bool outside,
	    int64_t *took_ms);
/* Add "@what N ms" to the timings line. */
void note_time(const char *what, int64_t ms);
/*
 * Kill and reap everything, remove the cgroups, images and work directory (not
 * with --keep); @failed: the network lock a killing dump left, too.
 */
void clean_up(bool failed);

/* checks.c */
/* --expect-stopped: wait until the workload has stopped itself. */
void wait_stopped(void);
/* @pid is alive, running (--expect-stopped: stopped, every thread) and not traced. */
void check_running(pid_t pid, const char *when);
/* The workload's maps are still @before (read_maps). */
void check_maps_unchanged(const char *before, const char *when);
/* --max-image-kb: the files of @dir take at most that much. */
void check_image_size(const char *dir);
/* No page of an image in @dir is dirty or under writeback (the dump synced them). */
void check_images_synced(const char *dir);

/* output.c */
/* "kill", "leave", "twice", "expect-dump-fail" or "expect-restore-fail". */
const char *test_mode(void);
/* Print "FAIL NAME MODE: ..." and the tails of the logs, clean up, exit 1. */
__attribute__((format(printf, 1, 2))) _Noreturn void fail(const char *fmt, ...);
/* Append to the workload's log. */
__attribute__((format(printf, 1, 2))) void append_log(const char *fmt, ...);
/* @text matches @re (extended, case-insensitive). */
bool matches(const char *text, const char *re);
/* The last crf's output (h.crf_log) matches the expected refusal. */
void check_refusal(void);
/* A "wl-NAME: FAIL: ..." line of the workload's log matches @re. */
void check_verify_failure(const char *re);
/* --counter-lines: the "counter: N" lines count 1, 2, 3... */
void check_counter_lines(void);
/* --outside-pipe/--outside-fifo: make the pipe; keep what comes out; check it all came. */
void outside_setup(void);
void outside_drain(void);
void check_outside(void);
/* Echo the workload's notes; repeat its downgrades as "NOTE NAME MODE: ...". */
void print_notes(void);

#endif
