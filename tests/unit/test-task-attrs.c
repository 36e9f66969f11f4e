// SPDX-License-Identifier: GPL-2.0-only
/*
 * core-PID.img records the restore must refuse before it forks (pending
 * signals that are not whole siginfo records: issue 15, bug 2), and the
 * up-front checks of task attributes (attrs_check_restore), run for
 * real: the probes fork a child that tries the value.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/user.h>
#include <unistd.h>

#include "helpers.h"
#include "pstree.h"
#include "task-attrs.h"
#include "task-dump.h"

/* A minimal valid TaskCore, with @n pending shared records of @len bytes each. */
struct fake_task {
	Crf__Core__TaskCore tc;
	Crf__Core__Creds creds;
	uint64_t regs[27];
	uint8_t info[4][128];
	ProtobufCBinaryData pending[4];
};

static void fake_init(struct fake_task *f, size_t n, size_t len, int sig)
{
	memset(f, 0, sizeof(*f));
	crf__core__task_core__init(&f->tc);
	crf__core__creds__init(&f->creds);
	f->tc.pid = getpid();
	f->tc.comm = "fake";
	f->tc.cwd = f->tc.root = "/";
	f->tc.creds = &f->creds;
	f->tc.regs = (ProtobufCBinaryData){sizeof(f->regs), (uint8_t *)f->regs};
	f->tc.xsave = (ProtobufCBinaryData){0, NULL};
	f->tc.affinity = (ProtobufCBinaryData){0, NULL};
	for (size_t i = 0; i < n; i++) {
		memcpy(f->info[i], &sig, sizeof(sig));
		f->pending[i] = (ProtobufCBinaryData){len, len ? f->info[i] : NULL};
	}
	f->tc.pending_shared = f->pending;
	f->tc.n_pending_shared = n;
}

static void refused(const Crf__Core__TaskCore *tc, const char *want)
{
	int r;

	capture_begin();
	r = task_check("DIR/core-1.img", tc);
	assert_contains(capture_end(), want);
	assert_int_equal(r, -EBADMSG);
}

static void test_pending_lengths(void **state)
{
	struct fake_task f;

	fake_init(&f, 2, 128, SIGRTMIN + 1);
	assert_int_equal(task_check("DIR/core-1.img", &f.tc), 0);
	fake_init(&f, 2, 128, SIGRTMIN + 1);
	f.pending[1].len = 1;
	refused(&f.tc, "DIR/core-1.img: TaskCore.pending_shared[1]: 1 bytes, expected 128");
	fake_init(&f, 1, 0, SIGUSR1);
	refused(&f.tc, "TaskCore.pending_shared[0]: 0 bytes, expected 128");
	fake_init(&f, 1, 129, SIGUSR1);
	refused(&f.tc, "pending_shared[0]: 129 bytes");
	fake_init(&f, 1, 128, 0);
	refused(&f.tc, "pending_shared[0]: signal 0 cannot be queued");
	fake_init(&f, 1, 128, SIGSTOP);
	refused(&f.tc, "signal 19 cannot be queued");
	fake_init(&f, 1, 128, 65);
	refused(&f.tc, "signal 65 cannot be queued");
}

static void test_thread_pending(void **state)
{
	Crf__Core__ThreadCore th = CRF__CORE__THREAD_CORE__INIT, *ths[2] = {&th, &th};
	ProtobufCBinaryData bad = {3, (uint8_t *)"abc"};
	struct fake_task f;

	fake_init(&f, 0, 0, 0);
	th.pending_private = &bad;
	th.n_pending_private = 1;
	f.tc.threads = ths;
	f.tc.n_threads = 2;
	refused(&f.tc, "TaskCore.threads[0].pending_private[0]: 3 bytes");
}

static void test_regs_and_attrs(void **state)
{
	struct fake_task f;

	fake_init(&f, 0, 0, 0);
	f.tc.regs.len = 8;
	refused(&f.tc, "DIR/core-1.img: registers of 8 bytes, expected 216 (TaskCore.regs)");
	fake_init(&f, 0, 0, 0);
	f.tc.has_stop_signal = true;
	f.tc.stop_signal = SIGUSR1;
	refused(&f.tc, "TaskCore.stop_signal: out of range");
	fake_init(&f, 0, 0, 0);
	f.tc.has_membarrier = true;
	f.tc.membarrier = 1;
	refused(&f.tc, "TaskCore.membarrier: out of range");
	fake_init(&f, 0, 0, 0);
	f.tc.has_thp_disable = true;
	f.tc.thp_disable = 2;
	refused(&f.tc, "TaskCore.thp_disable: out of range");
}

/* Through the image: task_read() refuses and leaves nothing behind (bug 1). */
static void test_read_refuses(void **state)
{
	char *path = tmpdir_make();
	Crf__Core__TaskCore *back = (void *)1;
	struct crf_imgdir *dir;
	struct fake_task f;
	int r;

	fake_init(&f, 1, 1, SIGUSR1);
	f.tc.pid = 4321;
	assert_int_equal(crf_imgdir_open(path, CRF_IMGDIR_WRITE, &dir), 0);
	assert_int_equal(task_write(dir, &f.tc), 0);
	crf_imgdir_close(dir);
	assert_int_equal(crf_imgdir_open(path, CRF_IMGDIR_READ, &dir), 0);
	capture_begin();
	r = task_read(dir, 4321, &back);
	assert_contains(capture_end(), "core-4321.img: TaskCore.pending_shared[0]: 1 bytes");
	assert_int_equal(r, -EBADMSG);
	assert_null(back);
	crf_imgdir_close(dir);
	tmpdir_done(path);
}

/* A one-process tree of this process, with @tc. */
static int check_restore(Crf__Core__TaskCore *tc, bool detach, const char **out)
{
	struct crf_proc p = {
		.pid = getpid(), .ppid = getppid(), .pgid = getpgid(0), .sid = getsid(0)};
	struct crf_pstree t = {.procs = &p, .n = 1, .cap = 1};
	Crf__Core__TaskCore *tcs[1] = {tc};
	int r;

	capture_begin();
	r = attrs_check_restore(&t, tcs, detach);
	*out = capture_end();
	return r;
}

static void test_pdeath_root_detach(void **state)
{
	struct fake_task f;
	const char *msg;

	fake_init(&f, 0, 0, 0);
	f.tc.has_pdeath_signal = true;
	f.tc.pdeath_signal = SIGTERM;
	assert_int_equal(check_restore(&f.tc, false, &msg), 0);
	assert_int_equal(check_restore(&f.tc, true, &msg), -ENOTSUP);
	assert_contains(msg, "has a parent-death signal: with -d");
}

static bool have_cap(cap_value_t cap)
{
	cap_flag_value_t v = CAP_CLEAR;
	cap_t c = cap_get_proc();

	cap_get_flag(c, cap, CAP_EFFECTIVE, &v);
	cap_free(c);
	return v == CAP_SET;
}

/*
 * Below the floor it inherited, a process without CAP_SYS_RESOURCE cannot
 * set its oom_score_adj (this machine has no CAP_SYS_RESOURCE; one with
 * it must accept).  Above, anyone can.
 */
static void test_oom_probe(void **state)
{
	struct fake_task f;
	const char *msg;
	int r;

	fake_init(&f, 0, 0, 0);
	f.tc.has_oom_score_adj = true;
	f.tc.oom_score_adj = 500;
	assert_int_equal(check_restore(&f.tc, false, &msg), 0);
	f.tc.oom_score_adj = -1000;
	r = check_restore(&f.tc, false, &msg);
	if (have_cap(CAP_SYS_RESOURCE)) {
		assert_int_equal(r, 0);
		return;
	}
	assert_true(r == -EACCES || r == -EPERM);
	assert_contains(msg, "cannot restore its oom_score_adj -1000");
}

static void test_sigchld_conflict(void **state)
{
	int32_t child = 77;
	struct fake_task f;
	const char *msg;

	fake_init(&f, 1, 128, SIGCHLD);
	f.tc.pending_private = f.tc.pending_shared;
	f.tc.n_pending_private = 1;
	f.tc.n_pending_shared = 0;
	f.tc.stopped_children = &child;
	f.tc.n_stopped_children = 1;
	assert_int_equal(check_restore(&f.tc, false, &msg), -ENOTSUP);
	assert_contains(msg, "a SIGCHLD is pending for its leader thread alone");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pending_lengths),	   cmocka_unit_test(test_thread_pending),
		cmocka_unit_test(test_regs_and_attrs),	   cmocka_unit_test(test_read_refuses),
		cmocka_unit_test(test_pdeath_root_detach), cmocka_unit_test(test_oom_probe),
		cmocka_unit_test(test_sigchld_conflict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
