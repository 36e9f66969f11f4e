// SPDX-License-Identifier: GPL-2.0-only
/*
 * The restore planner (core/restore/rst-plan.c) on made-up trees: who forks whom,
 * who calls setsid or makes a group, which helpers stand in for leaders
 * that are gone, and the trees it refuses, with their messages.  Nothing
 * is forked: the planner is pure.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "rst-tree.h"

#define MAXP 8

/* The caller of crf restore: its session and group, which the root inherits. */
#define CALLER_SID  40
#define CALLER_PGID 50

static struct crf_proc procs[MAXP];
static struct crf_pstree tree;
static struct crf_rst_tree rt;

static int setup(void **state)
{
	memset(procs, 0, sizeof(procs));
	tree = (struct crf_pstree){.procs = procs, .cap = MAXP};
	rt = (struct crf_rst_tree){0};
	return 0;
}

static int teardown(void **state)
{
	rst_tree_free(&rt);
	return 0;
}

static void proc(pid_t pid, pid_t ppid, pid_t sid, pid_t pgid)
{
	procs[tree.n++] = (struct crf_proc){
		.pid = pid, .ppid = ppid, .pgid = pgid, .sid = sid, .n_threads = 1};
}

static void root(void)
{
	proc(100, 1, CALLER_SID, CALLER_PGID);
}

static const struct crf_rst_proc *rp(pid_t pid)
{
	ssize_t i = rst_tree_index(&rt, pid);

	if (i < 0)
		fail_msg("pid %d is not in the plan", (int)pid);
	return &rt.procs[i];
}

/* The PIDs of @pid's children in the order they are forked, as a string. */
static const char *kids(pid_t pid)
{
	static char buf[128];
	size_t len = 0;

	buf[0] = '\0';
	for (ssize_t k = rp(pid)->first_kid; k >= 0; k = rt.procs[k].next_sibling)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d", len ? " " : "",
					(int)rt.procs[k].p->pid);
	return buf;
}

/* Plan, expecting a refusal with @err whose message holds @msg. */
static void plan_refused(int err, const char *msg)
{
	int r;

	capture_begin();
	r = rst_plan(&tree, &rt);
	assert_int_equal(r, -err);
	assert_contains(capture_end(), msg);
	assert_null(rt.procs);
}

static void test_root_inherits(void **state)
{
	root();
	assert_int_equal(rst_plan(&tree, &rt), 0);
	assert_int_equal(rt.n, 1);
	assert_false(rp(100)->setsid);
	assert_false(rp(100)->lead_group);
	/* It is born in that group already: joining it is a no-op. */
	assert_int_equal(rp(100)->join_pgid, CRF_RST_ROOT_PGID);
	assert_string_equal(kids(100), "");
}

/* The root leads its own session: it calls setsid itself. */
static void test_root_leads(void **state)
{
	proc(100, 1, 100, 100);
	proc(101, 100, 100, 100);
	assert_int_equal(rst_plan(&tree, &rt), 0);
	assert_true(rp(100)->setsid);
	assert_false(rp(100)->lead_group);
	assert_false(rp(101)->setsid);
	assert_int_equal(rp(101)->join_pgid, 100);
}

/* wl-tree's shape: a child session with a group of its own inside. */
static void test_child_session(void **state)
{
	root();
	proc(101, 100, 101, 101);		 /* A: setsid */
	proc(102, 101, 101, 101);		 /* A1 */
	proc(103, 101, 101, 103);		 /* A2: its own group */
	proc(104, 100, CALLER_SID, 104);	 /* B: its own group */
	proc(105, 104, CALLER_SID, CALLER_PGID); /* B2: back in the root's group */
	assert_int_equal(rst_plan(&tree, &rt), 0);
	assert_int_equal(rt.n, 6);
	assert_string_equal(kids(100), "101 104");
	assert_string_equal(kids(101), "102 103");
	assert_true(rp(101)->setsid);
	assert_false(rp(101)->lead_group);
	assert_int_equal(rp(102)->join_pgid, 101);
	assert_true(rp(103)->lead_group);
	assert_false(rp(103)->setsid);
	assert_true(rp(104)->lead_group);
	assert_int_equal(rp(105)->join_pgid, CRF_RST_ROOT_PGID);
	for (size_t i = 0; i < rt.n; i++)
		assert_false(rt.procs[i].before_setsid || rt.procs[i].helper);
}

/* A child that stayed in its parent's old session is forked before the setsid. */
static void test_before_setsid(void **state)
{
	root();
	proc(101, 100, 101, 101);
	proc(102, 101, CALLER_SID, CALLER_PGID);
	proc(103, 101, 101, 101);
	assert_int_equal(rst_plan(&tree, &rt), 0);
	assert_true(rp(102)->before_setsid);
	assert_false(rp(103)->before_setsid);
	assert_int_equal(rp(102)->join_pgid, CRF_RST_ROOT_PGID);
}

/* Two members of a group whose leader 102 is gone: one helper, under their parent. */
static void test_group_helper(void **state)
{
	root();
	proc(101, 100, CALLER_SID, 101);
	proc(103, 101, CALLER_SID, 102);
	proc(104, 101, CALLER_SID, 102);
	assert_int_equal(rst_plan(&tree, &rt), 0);
	assert_int_equal(rt.n, 5);
	assert_true(rp(102)->helper);
	assert_true(rp(102)->lead_group);
	assert_int_equal(rp(102)->p->ppid, 101);
	assert_int_equal(rp(102)->p->sid, CALLER_SID);
	assert_string_equal(kids(101), "103 104 102");
	assert_int_equal(rp(103)->join_pgid, 102);
	assert_int_equal(rp(104)->join_pgid, 102);
	assert_false(crf_rst_proc_runs(rp(102)));
}

/* The helper of a member forked before its parent's setsid is too. */
static void test_group_helper_before_setsid(void **state)
{
	root();
	proc(101, 100, 101, 101);
	proc(103, 101, CALLER_SID, 102);
	assert_int_equal(rst_plan(&tree, &rt), 0);
	assert_true(rp(103)->before_setsid);
	assert_true(rp(102)->helper);
	assert_true(rp(102)->before_setsid);
}

/* A zombie keeps its place; it does not run on to a restorer. */
static void test_zombie(void **state)
{
	root();
	proc(101, 100, CALLER_SID, CALLER_PGID);
	procs[1].zombie = true;
	assert_int_equal(rst_plan(&tree, &rt), 0);
	assert_false(crf_rst_proc_runs(rp(101)));
	assert_true(crf_rst_proc_runs(rp(100)));
	assert_int_equal(rp(101)->join_pgid, CRF_RST_ROOT_PGID);
}

/*
 * Session 101's leader exited and its members went to the root (a
 * subreaper): a helper with PID 101 under the root calls setsid and forks
 * them with CLONE_PARENT; the group of 102 is the helper's.
 */
static void test_session_helper(void **state)
{
	root();
	proc(102, 100, 101, 101);
	proc(103, 102, 101, 103);
	proc(104, 100, 101, 101);
	assert_int_equal(rst_plan(&tree, &rt), 0);
	assert_int_equal(rt.n, 5);
	assert_true(rp(101)->helper);
	assert_true(rp(101)->setsid);
	assert_false(rp(101)->lead_group);
	assert_false(rp(101)->clone_parent);
	assert_int_equal(rp(101)->p->ppid, 100);
	assert_false(crf_rst_proc_runs(rp(101)));
	assert_string_equal(kids(100), "101");
	assert_string_equal(kids(101), "102 104");
	assert_string_equal(kids(102), "103");
	assert_true(rp(102)->clone_parent);
	assert_true(rp(104)->clone_parent);
	assert_false(rp(103)->clone_parent);
	assert_int_equal(rp(102)->join_pgid, 101);
	assert_true(rp(103)->lead_group);
}

/* Session 101's leader lives, a sibling of its member 102: it forks 102. */
static void test_session_leader_sibling(void **state)
{
	root();
	proc(101, 100, 101, 101);
	proc(102, 100, 101, 101);
	assert_int_equal(rst_plan(&tree, &rt), 0);
	assert_int_equal(rt.n, 3);
	assert_string_equal(kids(100), "101");
	assert_string_equal(kids(101), "102");
	assert_true(rp(102)->clone_parent);
	assert_true(rp(101)->setsid);
}

/* In a helper's session, a group whose leader is gone: its helper is forked the same way. */
static void test_group_helper_in_session_helper(void **state)
{
	root();
	proc(102, 100, 101, 105);
	assert_int_equal(rst_plan(&tree, &rt), 0);
	assert_int_equal(rt.n, 4);
	assert_string_equal(kids(101), "102 105");
	assert_true(rp(105)->helper);
	assert_true(rp(105)->lead_group);
	assert_true(rp(105)->clone_parent);
	assert_int_equal(rp(105)->p->ppid, 100);
	assert_int_equal(rp(105)->p->sid, 101);
}

static void test_refuse_session_two_parents(void **state)
{
	root();
	proc(101, 100, CALLER_SID, 101);
	proc(102, 100, CALLER_SID, 102);
	proc(103, 101, 99, 99);
	proc(104, 102, 99, 99);
	plan_refused(ENOTSUP, "session 99, whose leader is gone, has members under 101 and 102");
}

static void test_refuse_session_pid_reused(void **state)
{
	root();
	proc(99, 100, CALLER_SID, CALLER_PGID);
	proc(103, 100, 99, 103);
	plan_refused(ENOTSUP, "pid 103 is in session 99, whose leader is gone and whose PID is "
			      "now another process's");
}

static void levels(pid_t pid, pid_t inner)
{
	for (size_t i = 0; i < tree.n; i++)
		if (procs[i].pid == pid)
			procs[i] = (struct crf_proc){
				procs[i].pid,		procs[i].ppid, procs[i].pgid, procs[i].sid,
				.ns_pid = {pid, inner}, .n_levels = 2, .n_threads = 1};
}

/* 101 is PID 1 of a new PID namespace, 102 PID 2 there. */
static void test_pidns_init(void **state)
{
	root();
	proc(101, 100, CALLER_SID, CALLER_PGID);
	proc(102, 101, CALLER_SID, CALLER_PGID);
	levels(101, 1);
	levels(102, 2);
	assert_int_equal(rst_plan(&tree, &rt), 0);
	assert_true(rp(101)->new_pidns);
	assert_false(rp(102)->new_pidns);
	assert_false(rp(100)->new_pidns);
	assert_string_equal(kids(101), "102");
}

/* 102 went into a namespace whose init is not its parent (unshare, then fork twice). */
static void test_refuse_pidns_not_init(void **state)
{
	root();
	proc(101, 100, CALLER_SID, CALLER_PGID);
	proc(102, 100, CALLER_SID, CALLER_PGID);
	levels(101, 1);
	levels(102, 2);
	plan_refused(ENOTSUP, "pid 102 is in a PID namespace (PID 2 there) that its parent 100 "
			      "is not in, and is not its init");
}

/* 103's parent 102 is in session 101 and does not lead it: 103 cannot get session 40. */
static void test_refuse_parent_other_session(void **state)
{
	root();
	proc(101, 100, 101, 101);
	proc(102, 101, 101, 101);
	proc(103, 102, CALLER_SID, CALLER_PGID);
	plan_refused(ENOTSUP, "pid 103 is in session 40, but its parent 102 is in session 101 "
			      "and no sibling of pid 103 leads session 40");
}

/* Group 103's leader is gone and its PID is now a process in another group. */
static void test_refuse_group_pid_reused(void **state)
{
	root();
	proc(102, 100, CALLER_SID, 103);
	proc(103, 100, CALLER_SID, CALLER_PGID);
	plan_refused(ENOTSUP, "pid 102 is in process group 103, whose leader is gone and whose "
			      "PID is now another process's");
}

/* A group cannot span two sessions: a corrupt or impossible image. */
/* A parent, its child and grandchild on one fd table, another child on its own. */
static void test_fdtable_chain(void **state)
{
	root();
	proc(101, 100, CALLER_SID, CALLER_PGID);
	proc(102, 101, CALLER_SID, CALLER_PGID);
	proc(103, 100, CALLER_SID, CALLER_PGID);
	procs[0].fd_table_end = 7;
	procs[1].files_of = procs[2].files_of = 100;
	assert_int_equal(rst_plan(&tree, &rt), 0);
	assert_false(rp(100)->clone_files);
	assert_true(rp(101)->clone_files);
	assert_true(rp(102)->clone_files);
	assert_false(rp(103)->clone_files);
	assert_int_equal(rp(100)->fdt, 0);
	assert_int_equal(rp(101)->fdt, 0);
	assert_int_equal(rp(102)->fdt, 0);
	assert_int_equal(rp(103)->fdt, -1);
	assert_int_equal(rp(100)->fdt_sharers, 2);
}

/* A session leader forks its sibling with CLONE_PARENT, on its own fd table. */
static void test_fdtable_clone_parent(void **state)
{
	root();
	proc(101, 100, 101, 101);
	proc(102, 100, 101, 101);
	procs[1].fd_table_end = 4;
	procs[2].files_of = 101;
	assert_int_equal(rst_plan(&tree, &rt), 0);
	assert_true(rp(102)->clone_parent);
	assert_true(rp(102)->clone_files);
	assert_false(rp(101)->clone_files);
}

/* Two siblings on one table, forked by their parent, which has its own: refused. */
static void test_refuse_fdtable_two_tops(void **state)
{
	root();
	proc(101, 100, CALLER_SID, CALLER_PGID);
	proc(102, 100, CALLER_SID, CALLER_PGID);
	procs[1].fd_table_end = 4;
	procs[2].files_of = 101;
	plan_refused(ENOTSUP, "pid 101 and pid 102 share one fd table, but pid 102 is created "
			      "by its parent 100, which does not share it");
}

/* A member forked by a session helper cannot share its forker's table: refused. */
static void test_refuse_fdtable_helper(void **state)
{
	root();
	proc(102, 100, 101, 101);
	procs[0].fd_table_end = 4;
	procs[1].files_of = 100;
	plan_refused(ENOTSUP, "but pid 102 is created by a helper for its session or group, "
			      "PID 101");
}

static void test_refuse_group_other_session(void **state)
{
	root();
	proc(101, 100, 101, 101);
	proc(102, 100, CALLER_SID, 101);
	plan_refused(EBADMSG, "pid 102: its group 101 is in another session");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_root_inherits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_leads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_child_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_before_setsid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_helper, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_helper_before_setsid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zombie, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_helper, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_leader_sibling, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_helper_in_session_helper, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_refuse_session_two_parents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_session_pid_reused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pidns_init, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_pidns_not_init, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_parent_other_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_group_pid_reused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_group_other_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fdtable_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fdtable_clone_parent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_fdtable_two_tops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_fdtable_helper, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
