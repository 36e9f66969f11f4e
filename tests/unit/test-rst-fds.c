// SPDX-License-Identifier: GPL-2.0-only
/*
 * rst_move_fds (core/restore/rst-fds.c): the program fds a task was given are
 * permuted in place to their numbers, whatever the numbers they sit at:
 * a swap, a three-cycle, a chain ending on a free number, an fd already
 * at its number, fds 0-2; close-on-exec as asked; every other fd of crf
 * closed, its 0-2 too;
 * the restorer's fds kept and moved above every program number.
 *
 * Each case runs in a child, since the call closes the caller's fds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "rst-task.h"

struct want {
	int at;	    /* where the fd sits before the call */
	int number; /* the program's number for it */
	bool cloexec;
};

/* In the child: a memfd (its own inode) at each @w[i].at; exit status 0 when all went right. */
static int run_case(const struct want *w, size_t n, int stray)
{
	struct crf_rst_task t;
	struct crf_rst_args a;
	struct stat st;
	ino_t ino[16];
	int pipefd[2];

	rst_task_init(&t);
	memset(&a, 0, sizeof(a));
	a.exe_fd = a.go_fd = a.mem_fd = -1;
	for (size_t i = 0; i < n; i++) {
		int fd = memfd_create("rst-fds", MFD_CLOEXEC);

		if (fd < 0 ||
		    (fd != w[i].at && (dup3(fd, w[i].at, O_CLOEXEC) < 0 || close(fd) < 0)) ||
		    fstat(w[i].at, &st) < 0)
			return 10;
		ino[i] = st.st_ino;
	}
	if (stray >= 0 && dup2(0, stray) < 0)
		return 11;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return 12;
	a.status_fd = pipefd[1];
	for (size_t i = 0; i < n; i++)
		if (rst_task_keep_fd(&t, w[i].at, w[i].number, w[i].cloexec) < 0)
			return 13;
	if (rst_move_fds(&t, &a) < 0)
		return 14;
	for (size_t i = 0; i < n; i++) {
		int fl = fcntl(w[i].number, F_GETFD);

		if (fstat(w[i].number, &st) < 0 || st.st_ino != ino[i]) {
			dprintf(2, "fd %d is not the memfd placed from %d\n", w[i].number, w[i].at);
			return 20;
		}
		if (fl < 0 || !!(fl & FD_CLOEXEC) != w[i].cloexec) {
			dprintf(2, "fd %d: close-on-exec %d\n", w[i].number, fl);
			return 21;
		}
	}
	if (stray >= 0 && fcntl(stray, F_GETFD) >= 0) {
		dprintf(2, "fd %d of crf is still open\n", stray);
		return 22;
	}
	/* The restorer's status fd survives, above every program number. */
	if (a.status_fd < CRF_RST_FD_BASE || fstat(a.status_fd, &st) < 0 || !S_ISFIFO(st.st_mode))
		return 23;
	return 0;
}

static void check_case(const struct want *w, size_t n, int stray)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(run_case(w, n, stray));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_swap(void **state)
{
	const struct want w[] = {{100, 101, false}, {101, 100, true}};

	check_case(w, 2, 140);
}

static void test_three_cycle(void **state)
{
	const struct want w[] = {{110, 111, false}, {111, 112, false}, {112, 110, true}};

	check_case(w, 3, -1);
}

static void test_chain_to_free_number(void **state)
{
	const struct want w[] = {{120, 121, true}, {121, 122, false}, {122, 300, false}};

	check_case(w, 3, 150);
}

static void test_in_place_and_low(void **state)
{
	/* Already at its number (close-on-exec changed), and numbers below crf's own. */
	const struct want w[] = {
		{130, 130, false}, {131, 3, true}, {132, 4, false}, {4, 131, false}};

	check_case(w, 4, 5);
}

static void test_stdio(void **state)
{
	/* The program's own 0 and 2, crf's fd 0 in the way; crf's fd 1 is closed. */
	const struct want w[] = {{0, 2, false}, {141, 0, false}};

	check_case(w, 2, 1);
}

static void test_many(void **state)
{
	struct want w[16];

	/* Fifteen fds that all take the number of the next: one long cycle. */
	for (int i = 0; i < 15; i++)
		w[i] = (struct want){200 + i, 200 + (i + 1) % 15, i % 2};
	check_case(w, 15, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swap),
		cmocka_unit_test(test_three_cycle),
		cmocka_unit_test(test_chain_to_free_number),
		cmocka_unit_test(test_in_place_and_low),
		cmocka_unit_test(test_stdio),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
