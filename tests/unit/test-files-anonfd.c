// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fdinfo parsers of the files plugin's anonymous-inode kinds, on the
 * kernel's samples and on fds of our own.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../plugins/files/anonfd.h"
#include "../../plugins/files/fdinfo.h"
#include "helpers.h"

static void test_eventfd_sample(void **state)
{
	struct files_anon_info ai;

	assert_int_equal(
		files_anon_parse("eventfd",
				 "pos:\t0\nflags:\t04002\neventfd-count:"
				 "               1f\neventfd-id: 1\neventfd-semaphore: 1\n",
				 &ai),
		0);
	assert_int_equal(ai.count, 0x1f);
	assert_true(ai.semaphore);
	assert_int_equal(files_anon_parse("eventfd", "eventfd-count: 0\n", &ai), 0);
	assert_false(ai.semaphore);
	assert_int_equal(files_anon_parse("eventfd", "eventfd-id: 1\n", &ai), -EBADMSG);
	assert_int_equal(
		files_anon_parse("eventfd", "eventfd-count: 1\neventfd-semaphore: 2\n", &ai),
		-EBADMSG);
}

static void test_timerfd_sample(void **state)
{
	struct files_anon_info ai;

	assert_int_equal(files_anon_parse("timerfd",
					  "clockid: 7\nticks: 12\nsettime flags: 03\n"
					  "it_value: (0, 0)\nit_interval: (2, 0)\n",
					  &ai),
			 0);
	assert_int_equal(ai.clockid, 7);
	assert_int_equal(ai.ticks, 12);
	assert_int_equal(ai.settime_flags, 3);
	assert_int_equal(files_anon_parse("timerfd", "clockid: 1\nticks: 1\n", &ai), -EBADMSG);
	assert_int_equal(
		files_anon_parse("timerfd", "clockid: x\nticks: 1\nsettime flags: 0\n", &ai),
		-EBADMSG);
}

static void test_signalfd_pidfd_sample(void **state)
{
	struct files_anon_info ai;
	int v[4];

	assert_int_equal(files_anon_parse("signalfd", "sigmask:\t0000000000000802\n", &ai), 0);
	assert_int_equal(ai.sigmask, 0x802);
	assert_int_equal(files_anon_parse("pidfd", "Pid:\t25640\nNSpid:\t25640\t7\n", &ai), 0);
	assert_int_equal(ai.pid, 25640);
	assert_int_equal(files_anon_parse("pidfd", "Pid:\t-1\nNSpid:\t-1\n", &ai), 0);
	assert_int_equal(ai.pid, -1);
	assert_int_equal(files_anon_parse("pidfd", "Pid:\tx\n", &ai), -EBADMSG);
	assert_int_equal(files_anon_parse_nspid("Pid:\t9\nNSpid:\t25640\t7\t1\n", v, 4), 3);
	assert_int_equal(v[0], 25640);
	assert_int_equal(v[2], 1);
	assert_int_equal(files_anon_parse_nspid("NSpid:\t1\t2\n", v, 1), -EBADMSG);
	assert_int_equal(files_anon_parse_nspid("NSpid:\t-1\n", v, 4), -EBADMSG);
}

static void test_memfd_name(void **state)
{
	char buf[16];

	assert_string_equal(files_memfd_name("/memfd:a b (deleted)", buf, sizeof(buf)), "a b");
	assert_string_equal(files_memfd_name("/memfd: (deleted)", buf, sizeof(buf)), "");
	assert_null(files_memfd_name("/memfd:x", buf, sizeof(buf)));
	assert_null(files_memfd_name("/tmp/x (deleted)", buf, sizeof(buf)));
	assert_null(files_memfd_name("/memfd:0123456789abcdef (deleted)", buf, sizeof(buf)));
}

/* What this kernel prints for fds of our own. */
static void test_own_fds(void **state)
{
	struct itimerspec its = {.it_interval = {5, 0}, .it_value = {5, 0}};
	struct files_anon_info ai;
	char text[4096];
	sigset_t mask;
	int ev = eventfd(5, EFD_SEMAPHORE), tm = timerfd_create(CLOCK_BOOTTIME, 0), sig;

	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	sig = signalfd(-1, &mask, 0);
	assert_true(ev >= 0 && tm >= 0 && sig >= 0);
	assert_int_equal(timerfd_settime(tm, TFD_TIMER_CANCEL_ON_SET, &its, NULL), 0);
	assert_int_equal(files_fdinfo_read_text(getpid(), ev, text, sizeof(text)), 0);
	assert_int_equal(files_anon_parse("eventfd", text, &ai), 0);
	assert_int_equal(ai.count, 5);
	assert_true(ai.semaphore);
	assert_int_equal(files_fdinfo_read_text(getpid(), tm, text, sizeof(text)), 0);
	assert_int_equal(files_anon_parse("timerfd", text, &ai), 0);
	assert_int_equal(ai.clockid, CLOCK_BOOTTIME);
	assert_int_equal(ai.ticks, 0);
	assert_int_equal(files_fdinfo_read_text(getpid(), sig, text, sizeof(text)), 0);
	assert_int_equal(files_anon_parse("signalfd", text, &ai), 0);
	assert_int_equal(ai.sigmask, 1ull << (SIGUSR2 - 1));
	close(ev);
	close(tm);
	close(sig);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eventfd_sample),
		cmocka_unit_test(test_timerfd_sample),
		cmocka_unit_test(test_signalfd_pidfd_sample),
		cmocka_unit_test(test_memfd_name),
		cmocka_unit_test(test_own_fds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
