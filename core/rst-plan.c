// SPDX-License-Identifier: GPL-2.0-only
/*
 * Planning a tree restore: which process forks which, and how each gets its
 * session and process group back with nothing but fork, setsid and setpgid.
 *
 * A process gets its session from its parent at fork time, or makes a new
 * one with setsid.  So a process's session must be its own, its parent's,
 * or - when the parent is a session leader - the one its parent was born
 * in (the child is then forked before the parent's setsid).  A group must
 * be its leader's, in the same session, or the root's own group when the
 * root is not its leader: the root inherits the group and session of crf
 * restore's caller, as a single process always did.  A group whose leader
 * is gone gets a helper process with the leader's PID that makes it.  A
 * session whose leader is gone would need a helper too, and the members
 * reparented after it exits: not done yet, refused here, before anything
 * is created.
 */
#include <errno.h>
#include <stdlib.h>

#include "rst-tree.h"
#include "util.h"

/* Sessions as the plan sees them: a leader's index, or the inherited one. */
#define SESSION_INHERITED (-1)
#define SESSION_UNKNOWN	  (-2)

/* @last: scratch, one per process (the last child linked so far). */
static void link_kids(const struct crf_pstree *t, struct crf_rst_proc *rp, ssize_t *last)
{
	for (size_t i = 0; i < t->n; i++) {
		rp[i] = (struct crf_rst_proc){.p = &t->procs[i],
					      .first_kid = -1,
					      .next_sibling = -1,
					      .status = {-1, -1},
					      .go = {-1, -1},
					      .pidfd = -1};
		last[i] = -1;
	}
	/* Keep the children in the order of the image, the order they were found. */
	for (size_t i = 1; i < t->n; i++) {
		ssize_t parent = crf_pstree_index(t, t->procs[i].ppid);

		if (last[parent] >= 0)
			rp[last[parent]].next_sibling = (ssize_t)i;
		else
			rp[parent].first_kid = (ssize_t)i;
		last[parent] = (ssize_t)i;
	}
}

/* The session a process must end up in: a leader's index, or inherited. */
static ssize_t target_session(const struct crf_pstree *t, size_t i)
{
	const struct crf_proc *p = &t->procs[i], *root = &t->procs[0];
	ssize_t leader;

	if (p->sid == p->pid)
		return (ssize_t)i;
	if (i == 0 || p->sid == root->sid)
		return root->sid == root->pid ? 0 : SESSION_INHERITED;
	leader = crf_pstree_index(t, p->sid);
	if (leader >= 0 && t->procs[leader].sid == p->sid)
		return leader;
	return SESSION_UNKNOWN;
}

static int plan_session(const struct crf_pstree *t, struct crf_rst_proc *rp, size_t i,
			ssize_t *sess, ssize_t *born)
{
	const struct crf_proc *p = &t->procs[i];
	ssize_t parent = i ? crf_pstree_index(t, p->ppid) : -1;

	sess[i] = target_session(t, i);
	rp[i].setsid = sess[i] == (ssize_t)i;
	if (sess[i] == SESSION_UNKNOWN)
		return crf_error_errno(ENOTSUP,
				       "pid %d is in session %d, whose leader (PID %d) is not in "
				       "the tree: restoring it needs a helper task standing in "
				       "for that leader, which crf does not create yet",
				       (int)p->pid, (int)p->sid, (int)p->sid);
	if (i == 0) {
		born[i] = SESSION_INHERITED;
		return 0;
	}
	born[i] = sess[parent];
	if (rp[i].setsid || sess[i] == sess[parent])
		return 0;
	if (rp[parent].setsid && sess[i] == born[parent]) {
		rp[i].before_setsid = true;
		born[i] = born[parent];
		return 0;
	}
	return crf_error_errno(ENOTSUP,
			       "pid %d is in session %d, but its parent %d is in session %d: "
			       "restoring it needs a helper task in session %d, which crf does "
			       "not create yet",
			       (int)p->pid, (int)p->sid, (int)p->ppid, (int)t->procs[parent].sid,
			       (int)p->sid);
}

/* The helper already planned for group @pgid, or -1. */
static ssize_t helper_of(const struct crf_rst_tree *rt, pid_t pgid)
{
	for (size_t h = rt->t->n; h < rt->n; h++)
		if (rt->procs[h].p->pid == pgid)
			return (ssize_t)h;
	return -1;
}

/*
 * A helper for the group @pgid of member @i, whose leader is gone: forked
 * by @i's parent, in @i's session (before the parent's setsid if @i is).
 */
static int add_helper(struct crf_rst_tree *rt, size_t i, pid_t pgid, ssize_t *sess)
{
	const struct crf_proc *p = &rt->t->procs[i];
	ssize_t parent = crf_pstree_index(rt->t, p->ppid), *kid;
	struct crf_proc *hp = &rt->helper_procs[rt->n - rt->t->n];
	size_t h = rt->n++;

	*hp = (struct crf_proc){.pid = pgid, .ppid = p->ppid, .pgid = pgid, .sid = p->sid};
	rt->procs[h] = (struct crf_rst_proc){.p = hp,
					     .first_kid = -1,
					     .next_sibling = -1,
					     .lead_group = true,
					     .helper = true,
					     .before_setsid = rt->procs[i].before_setsid,
					     .status = {-1, -1},
					     .go = {-1, -1},
					     .pidfd = -1};
	sess[h] = sess[i];
	for (kid = &rt->procs[parent].first_kid; *kid >= 0; kid = &rt->procs[*kid].next_sibling)
		;
	*kid = (ssize_t)h;
	crf_info("pid %d is in process group %d, whose leader is gone: a helper with PID %d "
		 "will make it",
		 (int)p->pid, (int)pgid, (int)pgid);
	return 0;
}

static int plan_group(struct crf_rst_tree *rt, size_t i, ssize_t *sess)
{
	const struct crf_pstree *t = rt->t;
	const struct crf_proc *p = &t->procs[i], *root = &t->procs[0];
	struct crf_rst_proc *rp = rt->procs;
	ssize_t leader;

	if (p->pgid == p->pid) {
		rp[i].lead_group = !rp[i].setsid;
		return 0;
	}
	if (p->pgid == root->pgid && root->pgid != root->pid) {
		rp[i].join_pgid = CRF_RST_ROOT_PGID;
		return 0;
	}
	rp[i].join_pgid = p->pgid;
	leader = crf_pstree_index(t, p->pgid);
	if (leader < 0) {
		leader = helper_of(rt, p->pgid);
		if (leader < 0)
			return add_helper(rt, i, p->pgid, sess);
	} else if (t->procs[leader].pgid != p->pgid) {
		return crf_error_errno(ENOTSUP,
				       "pid %d is in process group %d, whose leader is gone and "
				       "whose PID is now another process's of the tree",
				       (int)p->pid, (int)p->pgid);
	}
	if (sess[leader] != sess[i])
		return crf_error_errno(EBADMSG, "pid %d: its group %d is in another session",
				       (int)p->pid, (int)p->pgid);
	return 0;
}

/* Room for the tree and a helper per process at most. */
static int plan_alloc(const struct crf_pstree *t, struct crf_rst_tree *rt)
{
	*rt = (struct crf_rst_tree){
		.t = t, .n = t->n, .events = {-1, -1}, .barrier = {{-1, -1}, {-1, -1}}};
	rt->procs = calloc(2 * t->n, sizeof(*rt->procs));
	rt->helper_procs = calloc(t->n, sizeof(*rt->helper_procs));
	if (!rt->procs || !rt->helper_procs) {
		crf_rst_tree_free(rt);
		return crf_error_errno(ENOMEM, "restore plan");
	}
	return 0;
}

int crf_rst_plan(const struct crf_pstree *t, struct crf_rst_tree *rt)
{
	_cleanup_free_ ssize_t *sess = calloc(2 * t->n, sizeof(*sess));
	_cleanup_free_ ssize_t *born = calloc(t->n, sizeof(*born));
	_cleanup_free_ ssize_t *last = calloc(t->n, sizeof(*last));
	int r;

	if (!sess || !born || !last)
		return crf_error_errno(ENOMEM, "restore plan");
	r = plan_alloc(t, rt);
	if (r < 0)
		return r;
	link_kids(t, rt->procs, last);
	/* Parents come first in the tree, so their plan is ready for their children. */
	for (size_t i = 0; r >= 0 && i < t->n; i++)
		r = plan_session(t, rt->procs, i, sess, born);
	for (size_t i = 0; r >= 0 && i < t->n; i++)
		r = plan_group(rt, i, sess);
	if (r < 0)
		crf_rst_tree_free(rt);
	return r;
}

ssize_t crf_rst_tree_index(const struct crf_rst_tree *rt, pid_t pid)
{
	for (size_t i = 0; i < rt->n; i++)
		if (rt->procs[i].p->pid == pid)
			return (ssize_t)i;
	return -1;
}

void crf_rst_tree_free(struct crf_rst_tree *rt)
{
	free(rt->procs);
	free(rt->helper_procs);
	rt->procs = NULL;
	rt->helper_procs = NULL;
}
