// SPDX-License-Identifier: GPL-2.0-only
/*
 * harness: run one end-to-end checkpoint/restore test.
 *
 *   harness [--mode kill|leave|twice] [--timeout S] [--keep] [--name NAME]
 *           [--expect-dump-fail REGEX] [--dump-arg ARG]... [--counter-lines]
 *           [--settle MS] [--pause MS] [--own-cgroup] [--own-cgroups-v1] [--pty]
 *           [--restore-arg ARG]... [--expect-stopped]
 *           [--expect-restore-fail REGEX] [--expect-verify-fail REGEX]
 *           [--outside-pipe FD | --outside-fifo FD] [--max-image-kb N]
 *           [--restore-fault POINT] --crf PATH --dir DIR -- WORKLOAD [ARGS...]
 *
 * The workload (tests/workloads) sets up its state, creates the file named
 * by CRF_TEST_READY, and verifies its state when the file named by
 * CRF_TEST_VERIFY appears, exiting 0 if everything is intact.  Between the
 * two, the harness checkpoints and restores it:
 *
 *   kill   crf dump (the workload must die of SIGKILL, and the images be
 *          on disk: no page of them dirty or under writeback), crf restore
 *          -d (the same PID must come back, running, as our child), verify
 *   leave  crf dump --leave-running (the workload must still run, neither
 *          stopped nor traced; with --dump-arg=--sync, the images on disk),
 *          verify
 *   twice  dump, restore, dump the restored process into DIR.2, restore
 *          that, verify
 *   --settle MS: wait MS ms between ready and the first dump
 *   --pause MS: (mode kill) wait MS ms between the dump and the restore, as
 *          an operator might: what lies outside the tree goes on meanwhile
 *   --counter-lines: the "counter: N" lines the workload printed into
 *          the log (before the dump, and after the restore: its fds 1
 *          and 2 are the log again, appended to) must count 1, 2, 3...
 *          without a gap or a repeat
 *   --dump-arg ARG: pass ARG to every crf dump (e.g. --freeze=ptrace)
 *   --restore-arg ARG: pass ARG to every crf restore (e.g. --shell-job)
 *   --own-cgroup: the workload runs alone in a scratch cgroup v2, a child
 *          of ours, removed at the end (with whatever the workload made in it)
 *   --own-cgroups-v1: the same in every cgroup v1 hierarchy mounted (none on
 *          a host with only cgroup v2)
 *   --pty: the harness plays an interactive shell (pty.h): the workload
 *          runs on a terminal it owns, as the foreground job, with fds
 *          0-2 on it; crf restore runs there too (its fd 0), in the
 *          foreground; when a dump killed the workload, the harness takes
 *          the terminal back as a shell does (its own settings, and
 *          another window size, as a new terminal); the verification
 *          request is followed by the line "line-after-restore" typed on
 *          the terminal
 *   --outside-pipe FD, --outside-fifo FD: the workload's fd FD is the
 *          write end of a pipe (a FIFO in the work directory) whose read
 *          end the harness holds: a process outside the tree.  crf restore
 *          gets the same write end at FD, and "%PIPE%" in a --dump-arg or
 *          --restore-arg becomes the pipe's name (pipe:[INODE],
 *          fifo:[INODE]).  What the harness reads must be the lines
 *          "outside: 1", "outside: 2"... "outside: N", "outside: done N"
 *   --expect-restore-fail REGEX: (mode kill) the restore must fail with
 *          output matching REGEX and leave no process behind
 *   --expect-dump-fail REGEX: the dump must fail, its output must match
 *          REGEX (extended, case-insensitive), and the workload must still
 *          run unharmed; then verify
 *   --expect-stopped: the workload stops itself (SIGSTOP) once it is ready:
 *          the harness dumps it only once it is stopped, and after the
 *          restore (or the --leave-running dump) it must be stopped, every
 *          thread of it; SIGCONT then resumes it before the verification
 *   --expect-restore-fail REGEX with --mode leave: dump with
 *          --leave-running, then the restore must fail before it creates
 *          anything (the workload still runs at the PID), its output
 *          matching REGEX; then verify
 *   --restore-fault POINT: (mode kill) a first crf restore fails at the
 *          fault point named POINT (CRF_FAULT=fail@POINT, core/lib/fault.c,
 *          e.g. "releasing the tree"): it must exit 1 saying so and leave
 *          nothing behind; then the restore proper, of the same images
 *   --max-image-kb N: each dump's image directory must hold at most N KiB
 *          (a 1 GiB sparse file must not make a 1 GiB image)
 *   --expect-verify-fail REGEX: the workload's verification must fail (exit
 *          status 1) with a "wl-NAME: FAIL: ..." line that matches REGEX:
 *          the harness self-test's fake crf corrupts memory on purpose, and
 *          only the workload's noticing it may fail the test
 *
 * The harness is a child subreaper, so the restored process (and anything
 * crf leaves behind) becomes its child and is reaped: a zombie would keep
 * its PID, and a restore into that PID would fail.  On any failure, or when
 * the timeout (default 60 s) passes, it prints one "FAIL" line with the
 * reason and the tails of the logs, kills and reaps everything it started,
 * and exits 1; on success it prints "PASS NAME MODE" and exits 0.  It never
 * skips.  The image directories and the work directory (logs, the
 * workload's files) are removed unless --keep.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "harness.h"
#include "pty.h"
#include "util.h"

const char *const mode_names[3] = {"kill", "leave", "twice"};

struct harness h;

static void usage(void)
{
	fprintf(stderr,
		"usage: harness [--mode kill|leave|twice] [--timeout S] [--keep] [--name NAME]\n"
		"               [--expect-dump-fail REGEX] [--dump-arg ARG]... [--counter-lines]\n"
		"               [--settle MS] [--pause MS] [--own-cgroup] [--own-cgroups-v1] "
		"[--pty]\n"
		"               [--restore-arg ARG]... [--expect-stopped]\n"
		"               [--expect-restore-fail REGEX]\n"
		"               [--expect-verify-fail REGEX] [--max-image-kb N]\n"
		"               [--outside-pipe FD | --outside-fifo FD] [--restore-fault POINT]\n"
		"               --crf PATH --dir DIR -- WORKLOAD [ARGS...]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"mode", required_argument, NULL, 'm'},
		{"timeout", required_argument, NULL, 't'},
		{"crf", required_argument, NULL, 'c'},
		{"dir", required_argument, NULL, 'D'},
		{"keep", no_argument, NULL, 'k'},
		{"name", required_argument, NULL, 'n'},
		{"expect-dump-fail", required_argument, NULL, 'f'},
		{"dump-arg", required_argument, NULL, 'a'},
		{"counter-lines", no_argument, NULL, 'l'},
		{"settle", required_argument, NULL, 's'},
		{"pause", required_argument, NULL, 'P'},
		{"own-cgroup", no_argument, NULL, 'g'},
		{"own-cgroups-v1", no_argument, NULL, 'G'},
		{"pty", no_argument, NULL, 'p'},
		{"restore-arg", required_argument, NULL, 'r'},
		{"expect-verify-fail", required_argument, NULL, 'v'},
		{"max-image-kb", required_argument, NULL, 'M'},
		{"expect-stopped", no_argument, NULL, 'S'},
		{"expect-restore-fail", required_argument, NULL, 'R'},
		{"outside-pipe", required_argument, NULL, 'o'},
		{"outside-fifo", required_argument, NULL, 'O'},
		{"restore-fault", required_argument, NULL, 'F'},
		{NULL, 0, NULL, 0},
	};
	const char *base;
	int c;

	h.timeout_s = 60;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			for (c = 0; c < 3 && strcmp(optarg, mode_names[c]); c++)
				;
			if (c == 3)
				usage();
			h.mode = (enum mode)c;
			break;
		case 't':
			h.timeout_s = atoi(optarg);
			if (h.timeout_s <= 0)
				usage();
			break;
		case 'c':
			h.crf = optarg;
			break;
		case 'D':
			h.dir = optarg;
			break;
		case 'k':
			h.keep = true;
			break;
		case 'n':
			h.name = optarg;
			break;
		case 'f':
			h.expect_fail = optarg;
			break;
		case 'l':
			h.counter_lines = true;
			break;
		case 's':
			h.settle_ms = atoi(optarg);
			break;
		case 'P':
			h.pause_ms = atoi(optarg);
			break;
		case 'g':
			h.own_cgroup = true;
			break;
		case 'G':
			h.own_cgroups_v1 = true;
			break;
		case 'p':
			h.pty = true;
			break;
		case 'v':
			h.expect_verify_fail = optarg;
			break;
		case 'M':
			h.max_image_kb = atol(optarg);
			if (h.max_image_kb <= 0)
				usage();
			break;
		case 'S':
			h.expect_stopped = true;
			break;
		case 'R':
			h.expect_restore_fail = optarg;
			break;
		case 'F':
			h.restore_fault = optarg;
			break;
		case 'o':
		case 'O':
			h.outside_fd = atoi(optarg);
			h.outside_fifo = c == 'O';
			if (h.outside_fd < 3)
				usage();
			break;
		case 'r':
			if (h.nrestore_args ==
			    (int)(sizeof(h.restore_args) / sizeof(h.restore_args[0])))
				usage();
			h.restore_args[h.nrestore_args++] = optarg;
			break;
		case 'a':
			if (h.ndump_args == (int)(sizeof(h.dump_args) / sizeof(h.dump_args[0])))
				usage();
			h.dump_args[h.ndump_args++] = optarg;
			break;
		default:
			usage();
		}
	}
	if (!h.crf || !h.dir || !h.dir[0] || optind >= argc)
		usage();
	h.workload = argv + optind;
	if (!h.name) {
		base = strrchr(h.workload[0], '/');
		base = base ? base + 1 : h.workload[0];
		h.name = strncmp(base, "wl-", 3) ? base : base + 3;
	}
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/crf-e2e-XXXXXX";

	parse(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (h.pty) {
		int r = pty_setup();

		if (r < 0) {
			fprintf(stderr, "FAIL %s: cannot set up a terminal: %s\n", h.name,
				strerror(-r));
			return 1;
		}
	}
	h.deadline_ms = now_ms() + (int64_t)h.timeout_s * 1000;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		fail("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	if (!mkdtemp(tmpl))
		fail("mkdtemp: %s", strerror(errno));
	snprintf(h.work, sizeof(h.work), "%s", tmpl);
	snprintf(h.log, sizeof(h.log), "%s/workload.log", h.work);
	snprintf(h.ready, sizeof(h.ready), "%s/ready", h.work);
	snprintf(h.verify, sizeof(h.verify), "%s/verify", h.work);
	snprintf(h.dir2, sizeof(h.dir2), "%s.2", h.dir);
	outside_setup();

	run();
	if (h.counter_lines)
		check_counter_lines();
	if (h.outside_fd && !h.expect_restore_fail)
		check_outside();
	print_notes();
	printf("  %s\n", h.timings);
	printf("PASS %s %s\n", h.name, test_mode());
	clean_up(false);
	return 0;
}
