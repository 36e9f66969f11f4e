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
 * is gone gets a helper process with the leader's PID that makes it.
 *
 * A process whose parent is in another session (it was reparented to a
 * subreaper or a namespace's init when the process that forked it exited)
 * is forked by a process of its own session with CLONE_PARENT: the kernel
 * gives the child the session and group of the process that forks it, and
 * the parent of that process.  That forker is its session's leader when
 * that is its sibling, or a session helper with the gone leader's PID.
 * Anything else is refused here, before anything is created.
 */
#include <errno.h>
#include <stdlib.h>

#include "rst-tree.h"
#include "util.h"

/* Sessions as the plan sees them: a leader's index, inherited, or not made yet. */
#define SESSION_INHERITED (-1)
#define SESSION_GONE	  (-2)

static struct crf_rst_proc proc_init(const struct crf_proc *p, ssize_t forker)
{
	return (struct crf_rst_proc){.p = p,
				     .forker = forker,
				     .first_kid = -1,
				     .next_sibling = -1,
				     .status = {-1, -1},
				     .go = {-1, -1},
				     .pidfd = -1,
				     .fdt = -1,
				     .fdt_wait = {-1, -1}};
}

/* @k is forked by @forker, after the children it forks already. */
static void append_kid(struct crf_rst_proc *rp, ssize_t forker, ssize_t k)
{
	ssize_t *kid;

	for (kid = &rp[forker].first_kid; *kid >= 0; kid = &rp[*kid].next_sibling)
		;
	*kid = k;
	rp[k].next_sibling = -1;
	rp[k].forker = forker;
}

/* @k is forked by its sibling @by, with CLONE_PARENT: born in @by's session. */
static void fork_by_sibling(struct crf_rst_proc *rp, ssize_t k, ssize_t by)
{
	ssize_t *kid;

	for (kid = &rp[rp[k].forker].first_kid; *kid != k; kid = &rp[*kid].next_sibling)
		;
	*kid = rp[k].next_sibling;
	append_kid(rp, by, k);
	rp[k].clone_parent = true;
}

static void link_kids(const struct crf_pstree *t, struct crf_rst_proc *rp)
{
	rp[0] = proc_init(&t->procs[0], -1);
	/* Keep the children in the order of the image, the order they were found. */
	for (size_t i = 1; i < t->n; i++) {
		rp[i] = proc_init(&t->procs[i], pstree_index(t, t->procs[i].ppid));
		append_kid(rp, rp[i].forker, (ssize_t)i);
	}
}

/* The session a process must end up in: a leader's index, inherited, or gone. */
static ssize_t target_session(const struct crf_pstree *t, size_t i)
{
	const struct crf_proc *p = &t->procs[i], *root = &t->procs[0];
	ssize_t leader;

	if (p->sid == p->pid)
		return (ssize_t)i;
	if (i == 0 || p->sid == root->sid)
		return root->sid == root->pid ? 0 : SESSION_INHERITED;
	leader = pstree_index(t, p->sid);
	if (leader >= 0 && t->procs[leader].sid == p->sid)
		return leader;
	return SESSION_GONE;
}

/* The helper already planned with PID @pid, or -1. */
static ssize_t helper_of(const struct crf_rst_tree *rt, pid_t pid)
{
	for (size_t h = rt->t->n; h < rt->n; h++)
		if (rt->procs[h].p->pid == pid)
			return (ssize_t)h;
	return -1;
}

/* A helper with PID @pid, child of @parent, forked by @forker. */
static ssize_t add_helper(struct crf_rst_tree *rt, pid_t pid, pid_t sid, ssize_t parent,
			  ssize_t forker)
{
	struct crf_proc *hp = &rt->helper_procs[rt->n - rt->t->n];
	ssize_t h = (ssize_t)rt->n++;

	*hp = (struct crf_proc){
		.pid = pid, .ppid = rt->procs[parent].p->pid, .pgid = pid, .sid = sid};
	rt->procs[h] = proc_init(hp, forker);
	rt->procs[h].helper = true;
	append_kid(rt->procs, forker, h);
	return h;
}

/*
 * Process @i's parent is in another session and did not just leave it:
 * @i must be forked by a process of its session, with CLONE_PARENT so that
 * its parent stays its parent.  That is its session's leader when it is
 * @i's sibling, or a helper with the gone leader's PID, which calls setsid
 * and exits once the members are in place (they stay its parent's).
 */
static int born_in_session(struct crf_rst_tree *rt, size_t i, ssize_t parent, ssize_t *sess)
{
	const struct crf_proc *p = &rt->t->procs[i];
	struct crf_rst_proc *rp = rt->procs;
	ssize_t by = sess[i];

	if (by == SESSION_GONE && pstree_index(rt->t, p->sid) >= 0)
		return crf_error_errno(ENOTSUP,
				       "pid %d is in session %d, whose leader is gone and whose "
				       "PID is now another process's",
				       (int)p->pid, (int)p->sid);
	if (by == SESSION_GONE) {
		by = add_helper(rt, p->sid, p->sid, parent, parent);
		rp[by].setsid = true;
		sess[by] = by;
		crf_info("pid %d is in session %d, whose leader is gone: a helper with PID %d "
			 "will make it",
			 (int)p->pid, (int)p->sid, (int)p->sid);
	}
	if (by >= 0 && rp[by].p->ppid == p->ppid) {
		sess[i] = by;
		fork_by_sibling(rp, (ssize_t)i, by);
		return 0;
	}
	if (by >= 0 && rp[by].helper)
		return crf_error_errno(
			ENOTSUP,
			"session %d, whose leader is gone, has members under %d "
			"and %d: one helper cannot stand in for its leader under both",
			(int)p->sid, (int)rp[by].p->ppid, (int)p->ppid);
	return crf_error_errno(ENOTSUP,
			       "pid %d is in session %d, but its parent %d is in session %d and "
			       "no sibling of pid %d leads session %d",
			       (int)p->pid, (int)p->sid, (int)p->ppid,
			       (int)rt->t->procs[parent].sid, (int)p->pid, (int)p->sid);
}

static int plan_session(struct crf_rst_tree *rt, size_t i, ssize_t *sess, ssize_t *born)
{
	const struct crf_proc *p = &rt->t->procs[i];
	struct crf_rst_proc *rp = rt->procs;
	ssize_t parent = rp[i].forker;

	sess[i] = target_session(rt->t, i);
	rp[i].setsid = sess[i] == (ssize_t)i;
	if (sess[i] == SESSION_GONE && helper_of(rt, p->sid) >= 0)
		sess[i] = helper_of(rt, p->sid);
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
	born[i] = sess[i];
	return born_in_session(rt, i, parent, sess);
}

/*
 * A helper for the group @pgid of member @i, whose leader is gone: forked
 * the way @i is, so in @i's session (before the parent's setsid if @i is).
 */
static void add_group_helper(struct crf_rst_tree *rt, size_t i, pid_t pgid, ssize_t *sess)
{
	const struct crf_rst_proc *rp = &rt->procs[i];
	ssize_t parent = pstree_index(rt->t, rp->p->ppid);
	ssize_t h = add_helper(rt, pgid, rp->p->sid, parent, rp->forker);

	rt->procs[h].lead_group = true;
	rt->procs[h].clone_parent = rp->clone_parent;
	rt->procs[h].before_setsid = rp->before_setsid;
	sess[h] = sess[i];
	crf_info("pid %d is in process group %d, whose leader is gone: a helper with PID %d "
		 "will make it",
		 (int)rp->p->pid, (int)pgid, (int)pgid);
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
	leader = pstree_index(t, p->pgid);
	if (leader < 0) {
		leader = helper_of(rt, p->pgid);
		if (leader < 0) {
			add_group_helper(rt, i, p->pgid, sess);
			return 0;
		}
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

/*
 * A process one PID namespace level below its parent is the init of a new
 * namespace (PID 1 there): forked with CLONE_NEWPID.  A process forked into
 * a namespace its parent only made for its children (unshare) would need
 * setns first: refused.  Helpers and CLONE_PARENT stay out of namespaces:
 * an init cannot use CLONE_PARENT, and a helper's inner PID is not saved.
 */
static int plan_pidns(struct crf_rst_tree *rt, size_t i)
{
	struct crf_rst_proc *rp = &rt->procs[i];
	const struct crf_proc *p = rp->p;
	unsigned int lv = crf_proc_levels(p), plv = 1;

	if (i)
		plv = crf_proc_levels(&rt->t->procs[pstree_index(rt->t, p->ppid)]);
	if ((rp->helper && plv > 1) || (lv > 1 && rp->clone_parent))
		return crf_error_errno(ENOTSUP,
				       "pid %d is in a nested PID namespace and its session or "
				       "group needs a helper: not supported there yet",
				       (int)(rp->helper ? p->ppid : p->pid));
	if (rp->helper)
		return 0;
	if (lv == plv + 1 && p->ns_pid[lv - 1] == 1)
		rp->new_pidns = true;
	else if (lv != plv)
		return crf_error_errno(
			ENOTSUP,
			"pid %d is in a PID namespace (PID %d there) that its parent "
			"%d is not in, and is not its init: not supported",
			(int)p->pid, (int)p->ns_pid[lv - 1], (int)p->ppid);
	return 0;
}

/* Who forks process @i, in words, for a message. */
static const char *forker_kind(const struct crf_rst_tree *rt, size_t i)
{
	const struct crf_rst_proc *rp = &rt->procs[i];

	if (rp->forker < 0)
		return "crf";
	if (rt->procs[rp->forker].helper)
		return "a helper for its session or group, PID";
	return rp->clone_parent ? "its sibling" : "its parent";
}

/*
 * Processes that share one fd table must be created sharing it: each with
 * CLONE_FILES by one that has it already, but for the first, whose forker
 * has a table of its own.  So they must form one subtree of who forks whom.
 * (The table's fds are placed by the process whose files image holds them,
 * whichever it is: rst-fdtable.c.)
 */
static int plan_fdtables(struct crf_rst_tree *rt)
{
	_cleanup_free_ ssize_t *top = malloc(rt->t->n * sizeof(*top));
	struct crf_rst_proc *rp = rt->procs;

	if (!top)
		return crf_error_errno(ENOMEM, "restore plan");
	for (size_t i = 0; i < rt->t->n; i++) {
		ssize_t f = rp[i].p->files_of ? pstree_index(rt->t, rp[i].p->files_of) : -1;

		top[i] = -1;
		if (f < 0)
			continue;
		rp[i].fdt = rp[f].fdt = f;
		rp[f].fdt_sharers++;
	}
	for (size_t i = 0; i < rt->t->n; i++) {
		ssize_t g = rp[i].fdt, by = rp[i].forker;

		if (g < 0)
			continue;
		if (by >= 0 && rp[by].fdt == g) {
			rp[i].clone_files = true;
			continue;
		}
		if (top[g] < 0) {
			top[g] = (ssize_t)i;
			continue;
		}
		return crf_error_errno(ENOTSUP,
				       "pid %d and pid %d share one fd table, but pid %d is "
				       "created by %s %d, which does not share it: the restore can "
				       "only create them sharing it with CLONE_FILES from one that "
				       "has it",
				       (int)rp[top[g]].p->pid, (int)rp[i].p->pid, (int)rp[i].p->pid,
				       forker_kind(rt, i), by >= 0 ? (int)rp[by].p->pid : 0);
	}
	return 0;
}

/* Room for the tree and two helpers per process at most: a session's and a group's. */
static int plan_alloc(const struct crf_pstree *t, struct crf_rst_tree *rt)
{
	*rt = (struct crf_rst_tree){
		.t = t, .n = t->n, .events = {-1, -1}, .barrier = {{-1, -1}, {-1, -1}}};
	rt->procs = calloc(3 * t->n, sizeof(*rt->procs));
	rt->helper_procs = calloc(2 * t->n, sizeof(*rt->helper_procs));
	if (!rt->procs || !rt->helper_procs) {
		rst_tree_free(rt);
		return crf_error_errno(ENOMEM, "restore plan");
	}
	return 0;
}

int rst_plan(const struct crf_pstree *t, struct crf_rst_tree *rt)
{
	_cleanup_free_ ssize_t *sess = calloc(3 * t->n, sizeof(*sess));
	_cleanup_free_ ssize_t *born = calloc(t->n, sizeof(*born));
	int r;

	if (!sess || !born)
		return crf_error_errno(ENOMEM, "restore plan");
	r = plan_alloc(t, rt);
	if (r < 0)
		return r;
	link_kids(t, rt->procs);
	/* Parents come first in the tree, so their plan is ready for their children. */
	for (size_t i = 0; r >= 0 && i < t->n; i++)
		r = plan_session(rt, i, sess, born);
	for (size_t i = 0; r >= 0 && i < t->n; i++)
		r = plan_group(rt, i, sess);
	for (size_t i = 0; r >= 0 && i < rt->n; i++)
		r = plan_pidns(rt, i);
	if (r >= 0)
		r = plan_fdtables(rt);
	if (r < 0)
		rst_tree_free(rt);
	return r;
}

int rst_plan_check(const struct crf_pstree *t)
{
	struct crf_rst_tree rt;
	int r = rst_plan(t, &rt);

	if (r >= 0)
		rst_tree_free(&rt);
	return r;
}

ssize_t rst_tree_index(const struct crf_rst_tree *rt, pid_t pid)
{
	for (size_t i = 0; i < rt->n; i++)
		if (rt->procs[i].p->pid == pid)
			return (ssize_t)i;
	return -1;
}

void rst_tree_free(struct crf_rst_tree *rt)
{
	free(rt->procs);
	free(rt->helper_procs);
	rt->procs = NULL;
	rt->helper_procs = NULL;
}
