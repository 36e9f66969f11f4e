// SPDX-License-Identifier: GPL-2.0-only
/* Parsers of /proc/PID/status, limits and timers, on samples and on ourselves. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "procfs.h"

static const char status_sample[] =
	"Name:\tcat\nUmask:\t0027\nState:\tS (sleeping)\nTgid:\t42\n"
	"Uid:\t1000\t1001\t1002\t1003\nGid:\t10\t11\t12\t13\n"
	"FDSize:\t64\nGroups:\t4 24 27 \nThreads:\t3\n"
	"SigQ:\t0/15000\nSigPnd:\t0000000000000200\nShdPnd:\t0000000000000001\n"
	"SigBlk:\t0000000000010000\nSigIgn:\t0\nSigCgt:\t0\n"
	"CapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\nCapEff:\t000001fffffffffe\n"
	"CapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\n";

static void test_status_sample(void **state)
{
	struct crf_proc_status st;

	assert_int_equal(parse_status(status_sample, &st), 0);
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.umask, 027);
	assert_int_equal(st.uid[2], 1002);
	assert_int_equal(st.gid[3], 13);
	assert_int_equal(st.n_groups, 3);
	assert_int_equal(st.groups[2], 27);
	assert_int_equal(st.threads, 3);
	assert_int_equal(st.sig_pnd, 0x200);
	assert_int_equal(st.shd_pnd, 1);
	assert_int_equal(st.sig_blk, 0x10000);
	assert_int_equal(st.cap_eff, 0x1fffffffffeull);
	assert_int_equal(st.no_new_privs, 1);
}

static void test_status_self(void **state)
{
	struct crf_proc_status st;
	char *text;

	umask(022);
	assert_int_equal(crf_read_file("/proc/self/status", &text), 0);
	assert_int_equal(parse_status(text, &st), 0);
	free(text);
	assert_int_equal(st.umask, 022);
	assert_int_equal(st.uid[0], getuid());
	assert_int_equal(st.threads, 1);
}

static void test_status_broken(void **state)
{
	struct crf_proc_status st;

	assert_int_equal(parse_status("Name:\tx\n", &st), -EINVAL);
	assert_int_equal(parse_status("", &st), -EINVAL);
}

static void test_limits_self(void **state)
{
	struct crf_proc_limit lim[CRF_NLIMITS];
	struct rlimit rl = {123, 456}, got;
	char *text;

	assert_int_equal(setrlimit(RLIMIT_CORE, &rl), 0);
	assert_int_equal(crf_read_file("/proc/self/limits", &text), 0);
	assert_int_equal(parse_limits(text, lim), 0);
	free(text);
	assert_int_equal(lim[RLIMIT_CORE].cur, 123);
	assert_int_equal(lim[RLIMIT_CORE].max, 456);
	for (int i = 0; i < CRF_NLIMITS; i++) {
		assert_int_equal(getrlimit(i, &got), 0);
		assert_int_equal(lim[i].cur, got.rlim_cur);
		assert_int_equal(lim[i].max, got.rlim_max);
	}
	assert_int_equal(parse_limits("Limit  Soft\n", lim), -EINVAL);
}

static void test_timers_self(void **state)
{
	struct sigevent se = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN + 1};
	/* Signalling one thread: "signal/tid.N", which once read as process-directed. */
	struct sigevent st = {.sigev_notify = SIGEV_SIGNAL | SIGEV_THREAD_ID,
			      .sigev_signo = SIGUSR2};
	struct crf_proc_timer t[4];
	timer_t a, b, c;
	char *text;
	int n;

	se.sigev_value.sival_ptr = (void *)0xabcdef;
	st._sigev_un._tid = gettid();
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &se, &a), 0);
	assert_int_equal(timer_create(CLOCK_REALTIME, NULL, &b), 0);
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &st, &c), 0);
	assert_int_equal(crf_read_file("/proc/self/timers", &text), 0);
	n = parse_timers(text, t, 4);
	free(text);
	assert_int_equal(n, 3);
	/* Listed newest first. */
	assert_int_equal(t[0].notify, SIGEV_SIGNAL | SIGEV_THREAD_ID);
	assert_int_equal(t[0].notify_tid, gettid());
	assert_int_equal(t[0].signo, SIGUSR2);
	memmove(t, t + 1, 2 * sizeof(t[0]));
	timer_delete(c);
	assert_int_equal(t[1].id, (int)(intptr_t)a);
	assert_int_equal(t[1].signo, SIGRTMIN + 1);
	assert_int_equal(t[1].value, 0xabcdef);
	assert_int_equal(t[1].notify, SIGEV_SIGNAL);
	assert_int_equal(t[1].notify_tid, getpid());
	assert_int_equal(t[1].clock, CLOCK_MONOTONIC);
	assert_int_equal(t[0].signo, SIGALRM);
	assert_int_equal(t[0].clock, CLOCK_REALTIME);
	assert_int_equal(parse_timers("ID: 1\nsignal: x\n", t, 4), -EINVAL);
	assert_int_equal(parse_timers("", t, 4), 0);
	timer_delete(a);
	timer_delete(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_sample), cmocka_unit_test(test_status_self),
		cmocka_unit_test(test_status_broken), cmocka_unit_test(test_limits_self),
		cmocka_unit_test(test_timers_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
