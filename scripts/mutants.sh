#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Mutation testing: break crf on purpose, one small change at a time, and
# check that the tests which claim that state notice.  A test suite that
# passes a crf which drops a page, an offset or a uid proves nothing.
#
# usage: scripts/mutants.sh [--list] [--check] [--keep] [--no-baseline] [NAME...]
#
#   (no NAME)      every mutant; NAME...: only those
#   --list         print the mutants and exit
#   --check        only verify that every mutant still applies and that the
#                  tests it names exist (in build-test, where there is one; fast)
#   --keep         keep the scratch directory (its path is printed)
#   --no-baseline  skip the run of every listed test on the unmutated tree
#
# The tree (tracked and untracked files, not ignored ones) is copied into a
# scratch directory under /tmp; the real tree is never modified.  One plain
# build (release, no sanitizers) there serves every mutant: each mutant
# changes one file, ninja rebuilds what depends on it, the mutant's tests run
# in order until one fails, and the file is put back.  First, unless
# --no-baseline, every test named below must pass on the unmutated copy.
#
# Prints one line per mutant, "MUTANT NAME: caught by: TEST (HOW)" or
# "MUTANT NAME: MISSED (...)", then "N caught, M missed"; HOW is the first
# FAIL line of the test's output (the workload's, where it has one).  A
# mutant whose text is no longer found, or that does not build, counts as
# missed: it no longer tests anything.  A mutant all of whose tests skip
# here (exit 77: an AMX mutant on a CPU without AMX) is "not run here",
# counted apart.  Exit status 0 only when none is missed.
#
# Too slow for every CI run (tens of minutes): run it before resolving an
# issue that adds state, with its new mutant, and quote its last line.
set -uo pipefail

# ---------------------------------------------------------------------------
# The mutants.  One call each:
#
#   mutant NAME FILE 'TESTS' 'WHAT IT BREAKS' 'FROM' 'TO' ['FROM' 'TO']...
#
# FILE is relative to the top of the tree; each FROM must occur exactly once
# in it and is replaced by TO (plain text, no regular expressions).  TESTS
# are meson test names, tried in that order; the first that fails catches
# the mutant.  New state comes with its mutant: add a line here.
# ---------------------------------------------------------------------------
MUTANTS=()
declare -A M_FILE M_TESTS M_WHAT M_EDITS

mutant() {
	local name=$1 file=$2 tests=$3 what=$4
	shift 4
	if (($# == 0 || $# % 2)); then
		echo "mutants.sh: mutant $name: FROM and TO come in pairs" >&2
		exit 2
	fi
	MUTANTS+=("$name")
	M_FILE[$name]=$file
	M_TESTS[$name]=$tests
	M_WHAT[$name]=$what
	# The pairs, NUL-separated, for apply().
	M_EDITS[$name]=$(printf '%s\0' "$@" | base64 -w0)
}

# --- mem plugin: pages, mappings, mm fields ---
mutant mem-pages-shifted plugins/mem/pages.c 'e2e-memory-kill' \
	'the dump saves each whole 1 MiB batch of pages one 8-byte word late (the shift wl_cmp_fill passed)' \
	'	if (*out != from)
		memmove(p->buf + *out, p->buf + from, len);' \
	'	if (*out != from || len >= (1u << 20))
		memmove(p->buf + *out, p->buf + from + (len >= (1u << 20) ? 8 : 0),
			len - (len >= (1u << 20) ? 8 : 0));'
mutant mem-pages-lost plugins/mem/pages.c 'e2e-memory-kill' \
	'the dump takes every page for a zero page and saves none' \
	'if (!p->skip_zero || !mem_is_zero(p->buf + at + done, p->page_size)) {' \
	'if (!p->skip_zero) {'
# A live dump (--live, live.c): the crf-side proof that a page read is still
# the freeze's (its uffd-wp bit) is switched off too, so that the workload's
# own check of one instant is what must notice.
mutant mem-live-saved-after-write plugins/mem/live.c 'e2e-live' \
	'a page the program writes during the live copy is saved after its write goes on, not before' \
	'	if (v && (v->st[j] == PG_NEED || v->st[j] == PG_UNKNOWN))
		r = save_page(L, t, v, j, cur);
	if (r >= 0) {
		r = live_wp(t->uffd, cur, L->ps, false);' \
	'	if (r >= 0) {
		r = live_wp(t->uffd, cur, L->ps, false);
		usleep(200);
		if (r >= 0 && v && (v->st[j] == PG_NEED || v->st[j] == PG_UNKNOWN))
			r = save_page(L, t, v, j, cur);' \
	'			if (!live_existed(e[i]))
				return 0;' '			(void)e[i];'
mutant mem-live-not-protected plugins/mem/live.c 'e2e-live' \
	'the live pages are registered but not write-protected at the freeze' \
	'	r = wp_parallel(t->uffd, v->start, v->end - v->start);' '	r = 0;' \
	'			if (!live_existed(e[i]))
				return 0;' '			(void)e[i];'
mutant mem-live-left-registered plugins/mem/live.c 'e2e-live' \
	'the task keeps its userfaultfd (not closed after pidfd_getfd): the registration outlives the dump' \
	'	c = crf_parasite_syscall(ctx, __NR_close, args);' '	c = 0;' \
	'	if (r >= 0 && readlink(link, target, sizeof(target)) >= 0)' '	if (0)'
mutant mem-prot plugins/mem/restore.c 'e2e-memory-kill' \
	'every mapping comes back writable (a read-only one too)' \
	'		.prot = v->prot,' '		.prot = v->prot | PROT_WRITE,'
mutant mem-shared-private plugins/mem/restore.c 'e2e-shmem-kill' \
	'shared anonymous memory comes back as each task'"'"'s own' \
	'} else if (v->has_shm_dev && v->has_shm_inode) {' \
	'} else if (v->has_shm_dev && v->has_shm_inode && v->kind != CRF__MEM__VMA_KIND__ANON_SHARED) {'
mutant mem-brk plugins/mem/restore.c 'e2e-memory-kill' \
	'the brk comes back at the start of the heap' \
	'	memcpy(mm.auxv, f->auxv, f->n_auxv * sizeof(mm.auxv[0]));' \
	'	mm.brk = f->start_brk;
	memcpy(mm.auxv, f->auxv, f->n_auxv * sizeof(mm.auxv[0]));'
mutant mem-exe plugins/mem/restore.c 'e2e-mm-kill' \
	'/proc/self/exe is left naming crf (no exe file handed to the restorer)' \
	'	if (f->exe) {' '	if (0) {'
mutant mem-environ plugins/mem/restore.c 'e2e-mm-kill' \
	'the environment starts where the command line does' \
	'	mm.auxv_len = f->n_auxv;' \
	'	mm.auxv_len = f->n_auxv;
	mm.env_start = f->arg_start;'

mutant mem-madv-dontfork plugins/mem/smaps.c 'e2e-madvise-kill' \
	'a mapping with MADV_DONTFORK ("dc") comes back without it' \
	'{VMF_RR, MADV_RANDOM},    {VMF_DC, MADV_DONTFORK},' '{VMF_RR, MADV_RANDOM},'
mutant mem-cow-dump plugins/mem/cow.c 'e2e-cow-kill' \
	'the dump finds no page still shared copy-on-write with the parent' \
	'			if (same_page(a[i], b[i]))' '			if (0 && same_page(a[i], b[i]))'
mutant mem-cow-restore plugins/mem/premap.c 'e2e-cow-kill' \
	'the restore makes a child'"'"'s copy-on-write pages afresh, not its parent'"'"'s' \
	'		if (hdr->mm->has_cow_parent && hdr->mm->cow_parent > 0)' '		if (0)'
mutant mem-special-deleted plugins/mem/smaps.c 'e2e-mem-private-deleted-refused' \
	'a mapping of a deleted file is dumped as a file mapping, not refused' \
	'	if (name_ends(v->name, " (deleted)"))
		return "a mapping of a deleted file (not supported yet)";' \
	'	if (0)
		return "a mapping of a deleted file (not supported yet)";'
mutant memfd-mode plugins/common/memfd.c 'e2e-memfd-exec-kill' \
	'a memfd comes back without its group and other read bits (0642 -> 0602)' \
	'	if (has_mode && fchmod(fd, mode & 07777) < 0)' \
	'	if (has_mode && fchmod(fd, mode & 07777 & ~044) < 0)'
mutant memfd-exec plugins/common/memfd.c 'e2e-memfd-exec-kill' \
	'a memfd that could be run comes back without its exec bits' \
	'	if (has_mode && fchmod(fd, mode & 07777) < 0)' \
	'	if (has_mode && fchmod(fd, mode & 07666) < 0)'

# --- the restorer (parasite/): memory, mm, signals, limits, threads, credentials ---
mutant rst-pages-shifted parasite/restorer-vma.c 'e2e-memory-kill e2e-memory-1g-kill' \
	'the restorer reads each page run of 32 MiB or more one 8-byte word late, its last word zero' \
	'	uint64_t off = p->off, left = p->len, done;' \
	'	uint64_t big = p->len >= (32u << 20) ? 8 : 0, off = p->off + big, left = p->len - big, done;'
mutant rst-cmdline parasite/restorer.c 'e2e-mm-kill' \
	'the command line runs on to the end of the environment' \
	'#undef SET' '	m.arg_end = a->env_end;'
mutant rst-auxv parasite/restorer.c 'e2e-mm-kill' \
	'the auxiliary vector stays crf restore'"'"'s' \
	'	m.auxv_size = a->auxv_len * sizeof(a->auxv[0]);' '	m.auxv_size = 0;'
mutant rst-rlimits parasite/restorer.c 'e2e-taskstate-kill' \
	'no resource limit is restored' \
	'for (uint32_t i = 0; i < a->n_rlimits && i < 16; i++) {' \
	'for (uint32_t i = 16; i < a->n_rlimits && i < 16; i++) {'
mutant rst-rseq parasite/restorer.c 'e2e-rseq-robust-kill' \
	'the main thread'"'"'s rseq area is not registered again' \
	'	queue_pending(a);
	if (a->rseq_len) {' \
	'	queue_pending(a);
	if (0) {'
mutant rst-setresuid parasite/restorer.c 'e2e-creds-kill' \
	'the uids are not set (the task stays root)' \
	'	r = sys3(__NR_setresuid, c->uid, c->euid, c->suid);' '	r = 0;'
mutant rst-groups parasite/restorer.c 'e2e-creds-kill' \
	'the supplementary groups are not set' \
	'	r = sys2(__NR_setgroups, c->n_groups, c->groups);' '	r = 0;'
mutant rst-fsuid parasite/restorer.c 'e2e-creds-kill' \
	'the fsuid is the effective uid' \
	'	sys1(__NR_setfsuid, c->fsuid);
	if ((uint32_t)sys1(__NR_setfsuid, -1) != c->fsuid)' \
	'	sys1(__NR_setfsuid, c->euid);
	if ((uint32_t)sys1(__NR_setfsuid, -1) != c->euid)'
mutant rst-cap-eff parasite/restorer.c 'e2e-creds-kill' \
	'every permitted capability is left effective' \
	'	capset(a, c, c->cap_eff | keep, c->cap_prm | keep);' \
	'	capset(a, c, c->cap_prm | keep, c->cap_prm | keep);' \
	'	capset(a, c, c->cap_eff, c->cap_prm);' '	capset(a, c, c->cap_prm, c->cap_prm);'
mutant rst-ambient parasite/restorer.c 'e2e-creds-kill' \
	'no ambient capability is raised' \
	'		if (!(c->cap_amb & (1ull << cap)))' '		if (1)'
mutant rst-bounding parasite/restorer.c 'e2e-taskstate-kill e2e-creds-kill' \
	'nothing is dropped from the bounding set' \
	'		if (r == 0 || (c->cap_bnd & (1ull << cap)))' '		if (r == 0 || (c->cap_bnd | 1))'
mutant rst-securebits parasite/restorer.c 'e2e-creds-kill' \
	'the securebits stay as the uid change left them' \
	'	if ((uint64_t)sys1(__NR_prctl, PR_GET_SECUREBITS) != c->securebits) {' \
	'	if (0) {'
mutant rst-no-new-privs parasite/restorer.c 'e2e-creds-kill' \
	'no_new_privs is not set again' \
	'	if (c->no_new_privs) {' '	if (0) {'
mutant rst-thread-creds parasite/restorer-threads.c 'e2e-threads-kill' \
	'a thread with credentials of its own gets the process'"'"'s' \
	'const struct crf_rst_creds *creds = t->own_creds ? &t->creds : &a->creds;' \
	'const struct crf_rst_creds *creds = &a->creds;'
mutant rst-thread-sched parasite/restorer-threads.c 'e2e-sched-kill' \
	'threads keep the main thread'"'"'s scheduling policy and priority' \
	'	r = sys3(__NR_sched_setscheduler, 0, t->sched_policy, &prio);' \
	'	r = sys3(__NR_sched_getparam, 0, &prio, 0);'
mutant rst-thread-nice parasite/restorer-threads.c 'e2e-sched-kill' \
	'threads keep the main thread'"'"'s nice value' \
	'	r = sys3(__NR_setpriority, PRIO_PROCESS, 0, t->nice);' '	r = 0;'
mutant rst-thread-rseq parasite/restorer-threads.c 'e2e-rseq-robust-kill' \
	'threads other than the main one have no rseq area registered' \
	'	if (t->rseq_len) {' '	if (0) {'
mutant rst-thread-robust parasite/restorer-threads.c 'e2e-rseq-robust-kill' \
	'threads other than the main one have no robust list' \
	'	if (t->robust_head) {' '	if (0) {'
mutant rst-leader-robust parasite/restorer-threads.c 'e2e-rseq-robust-kill' \
	'the main thread keeps crf restore'"'"'s robust list' \
	'	if (!a->robust_head)
		return;' \
	'	if (1)
		return;'
mutant rst-thread-comm parasite/restorer-threads.c 'e2e-threads-kill' \
	'threads lose their names' \
	'	r = sys2(__NR_prctl, PR_SET_NAME, t->comm);' '	r = 0;'
mutant rst-thread-pending parasite/restorer-threads.c 'e2e-threads-kill' \
	'a thread'"'"'s private pending signals are dropped' \
	'	for (uint32_t i = 0; i < t->n_pending; i++, info += 128) {' \
	'	for (uint32_t i = t->n_pending; i < t->n_pending; i++, info += 128) {'
mutant rst-register parasite/restorer-threads.c 'e2e-cpu-kill e2e-threads-kill' \
	'r12 comes back zero' \
	'uc->r12 = g[R12],' 'uc->r12 = 0,'
mutant rst-pdeath parasite/restorer-attrs.c 'e2e-taskattr-kill' \
	'no parent-death signal is set again' \
	'	r = sys2(__NR_prctl, PR_SET_PDEATHSIG, sig);' '	r = 0;'
mutant rst-dumpable parasite/restorer-attrs.c 'e2e-taskattr-kill' \
	'the dumpable flag stays as the credential change left it' \
	'	if (a->dumpable >= 0) {' '	if (0) {'
mutant rst-timer-slack parasite/restorer-attrs.c 'e2e-taskattr-kill' \
	'threads lose their timer slack' \
	'	r = sys2(__NR_prctl, PR_SET_TIMERSLACK, t->timer_slack_ns);' '	r = 0;'
mutant rst-seccomp-shared parasite/restorer-seccomp.c 'e2e-seccomp-kill' \
	'the seccomp filters the threads share are not installed' \
	'	for (uint32_t i = 0; i < a->n_seccomp_shared; i++)' \
	'	for (uint32_t i = a->n_seccomp_shared; i < a->n_seccomp_shared; i++)'
mutant rst-seccomp-strict parasite/restorer-seccomp.c 'e2e-seccomp-kill' \
	'a thread in seccomp strict mode comes back without it' \
	'	if (s->mode == SECCOMP_MODE_STRICT) {' '	if (0) {'

mutant rst-mlock parasite/restorer-vma.c 'e2e-madvise-kill' \
	'no mapping is locked again (mlock, mlock2 MLOCK_ONFAULT, MAP_LOCKED)' \
	'	if (!(v->steps & CRF_RST_STEP_LOCK))
		return;' \
	'	if (v->steps || !v->steps)
		return;'
mutant rst-guards parasite/restorer-vma.c 'e2e-madvise-kill' \
	'no guard region is installed again' \
	'		if (g->start < v->start || g->end > v->end)
			continue;' \
	'		if (g->start < v->start || g->end > v->end || g->start)
			continue;'

# --- the core: task state, signals, timers, the tree ---
mutant core-oom core/restore/task-attrs-restore.c 'e2e-taskattr-kill' \
	'oom_score_adj stays crf restore'"'"'s' \
	'	if (r >= 0 && tc->has_oom_score_adj)' '	if (0)'
mutant core-sched core/restore/rst-apply.c 'e2e-sched-kill' \
	'the main thread keeps crf'"'"'s scheduling policy' \
	'	if (sched_setscheduler(0, tc->sched_policy, &sp) < 0)' '	if (0)'
mutant core-nice core/restore/rst-apply.c 'e2e-taskstate-kill' \
	'the nice value is not set' \
	'	if (setpriority(PRIO_PROCESS, 0, tc->nice) < 0)' '	if (0)'
mutant core-affinity core/restore/rst-apply.c 'e2e-taskstate-kill' \
	'the CPU affinity is not set' \
	'	if (sched_setaffinity(0, sizeof(set), &set) < 0)' '	if (0)'
mutant core-umask core/restore/rst-apply.c 'e2e-taskstate-kill' \
	'the umask is 022' \
	'	umask((mode_t)tc->umask);' '	umask(022);'
mutant core-cwd core/restore/rst-apply.c 'e2e-taskstate-kill' \
	'the working directory stays crf restore'"'"'s' \
	'	if (chdir(tc->cwd) < 0)' '	if (0)'
mutant core-blocked core/restore/restore.c 'e2e-signals-kill' \
	'the blocked signal mask is dropped' \
	'	a->blocked = tc->blocked;' '	a->blocked = 0;'
mutant core-sigaction core/restore/restore.c 'e2e-signals-kill' \
	'every signal handler is reset to SIG_DFL' \
	'(struct crf_rst_sigaction_arg){s->handler, s->flags,' \
	'(struct crf_rst_sigaction_arg){0, s->flags,'
mutant core-altstack core/restore/restore.c 'e2e-signals-kill' \
	'the alternate signal stack is dropped' \
	'	a->sas_size = tc->sas_size;' '	a->sas_size = 0;'
mutant core-pending-shared core/restore/restore.c 'e2e-signals-kill' \
	'process-wide pending signals are dropped' \
	'i < tc->n_pending_shared; i++)' 'i < 0; i++)'
mutant core-thread-mask core/restore/restore.c 'e2e-threads-kill' \
	'threads other than the main one lose their blocked masks' \
	'	a.blocked = th->blocked;' '	a.blocked = 0;'
mutant core-itimer core/restore/restore.c 'e2e-timers-kill' \
	'the interval timers are not armed' \
	'		a->itimer[i / CRF_ITIMER_WORDS][i % CRF_ITIMER_WORDS] = tc->itimers[i];' \
	'		a->itimer[i / CRF_ITIMER_WORDS][i % CRF_ITIMER_WORDS] = 0;'
mutant core-posix-timer core/restore/restore.c 'e2e-timers-kill' \
	'POSIX timers come back disarmed' \
	'			.value_ns = p->value_ns,' \
	'			.value_ns = 0,'
mutant core-xsave core/restore/restore.c 'e2e-cpu-kill' \
	'the FPU/SSE/AVX state is dropped' \
	'rst_task_set_xsave(t, tc->xsave.data, tc->xsave.len);' \
	'rst_task_set_xsave(t, tc->xsave.data, 0);'
mutant core-zombie core/restore/rst-tree.c 'e2e-zombie-kill' \
	'a zombie exits with status 0, not its own' \
	'	_exit(WEXITSTATUS(status));' '	_exit(0);'
mutant core-pgid core/restore/rst-tree.c 'e2e-tree-kill e2e-session-kill' \
	'a group leader does not make its group' \
	'	if (rp->lead_group && setpgid(0, 0) < 0)' '	if (0 && setpgid(0, 0) < 0)'
mutant core-pidns core/restore/rst-tree.c 'e2e-pidns-kill' \
	'the tree is not restored in a PID namespace of its own' \
	'		flags |= CLONE_NEWPID;' '		flags |= 0;'
mutant core-thaw core/dump/freeze-cgroup.c 'infect e2e-counter-leave-auto-cgroup' \
	'a tree frozen with the cgroup freezer is never thawed' \
	'	return write_freeze(dir, "0");' '	return 0;'
mutant core-tree-cgroup-freeze core/dump/pstree-freeze.c 'e2e-cgroup-freeze-tree-kill e2e-cgroup-freeze' \
	'a tree alone in its cgroup v2 is not frozen through it' \
	'	r = freeze_by_cgroup(root, mode, t);' '	r = 0;'
mutant core-tree-cgroup-outsider core/dump/freeze-cgroup.c 'e2e-cgroup-freeze' \
	'a tree whose cgroup holds an outsider is frozen through it (the outsider too)' \
	'		if (!cgroup_pids_has(&tree, in.v[i])) {' '		if (0) {' \
	'		if (!cgroup_pids_has(tree, in.v[i])) {' '		if (0) {'
mutant core-tree-cgroup-thaw core/dump/pstree-freeze.c 'e2e-cgroup-freeze e2e-cgroup-freeze-tree-leave' \
	'a tree frozen through its cgroup is left frozen' \
	'	c = cgroup_thaw(dir);' '	c = 0;'
mutant core-frozen-refused core/dump/freeze-cgroup.c 'e2e-cgroup-freeze' \
	'a tree in a cgroup frozen before crf came is not refused (crf waits on it for ever)' \
	'	if (rel && snprintf(dir, sizeof(dir), "%s%s", v2mnt, rel) < (int)sizeof(dir) &&' \
	'	if (0 && snprintf(dir, sizeof(dir), "%s%s", v2mnt, rel) < (int)sizeof(dir) &&' \
	'		if (crf_cgroup_dir_from_mountinfo(f, c + 1, p + 1, dir, sizeof(dir)) >= 0 &&' \
	'		if (0 && crf_cgroup_dir_from_mountinfo(f, c + 1, p + 1, dir, sizeof(dir)) >= 0 &&'

mutant core-xsave-frame-size core/task/xsave.c 'e2e-cpu-kill' \
	'the restorer'"'"'s XSAVE frame claims 64 bytes more than the task'"'"'s fpstate (the kernel then restores the legacy part only)' \
	'	return size;
}

static int check_one' \
	'	return size + 64;
}

static int check_one'
mutant core-xsave-frame-features core/task/xsave.c 'e2e-cpu-kill' \
	'the restorer'"'"'s XSAVE frame says it carries x87 and SSE state only' \
	'		.xfeatures = features,' '		.xfeatures = features & 3,'
mutant core-amx-perm core/task/cpu.c 'e2e-amx' \
	'the AMX tile data permission is not asked for again on restore (AMX CPUs only)' \
	'	uint64_t want = tc->has_xcomp_perm ? tc->xcomp_perm & CRF_XFEATURES_DYNAMIC : 0;' \
	'	uint64_t want = 0;'
mutant core-amx-live core/dump/task-dump.c 'e2e-amx' \
	'a thread with live AMX tile data is dumped, its tiles lost on restore (AMX CPUs only)' \
	'	if (!(xsave_used(xsave->data, xsave->len) & CRF_XFEATURES_DYNAMIC))' \
	'	if (1)'
mutant core-cpu-features core/task/cpu.c 'e2e-core-refused' \
	'a dump made on a CPU with a feature this one lacks is restored' \
	'		r = check_features(&img, host);' '		r = 0;'
mutant core-cpu-area core/task/cpu.c 'e2e-core-refused' \
	'a saved XSAVE area with state of a feature this CPU lacks is restored' \
	'	r = check_area(img, host, tc->pid, tc->pid, &tc->xsave);' '	r = 0;'
mutant core-stdio-closed core/restore/rst-fds.c 'e2e-stdio-closed-kill e2e-stdio-daemon-kill' \
	'crf restore'"'"'s fds 0-2 stay open in a task that had them closed' \
	'	int next = 0;' '	int next = 3;'
mutant core-ns-refused core/dump/dump-objects.c 'e2e-netns-vxlan-refused e2e-ns-uts-disabled-refused e2e-ns-mnt-refused' \
	'every namespace is taken for crf'"'"'s own: none is refused' \
	'	else if (mine && !strcmp(link, mine))
		return 0;' \
	'	else if (mine)
		return 0;'
mutant core-ns-pid-children core/dump/dump-objects.c 'e2e-pidns-nested-pending-kill e2e-pidns-nested-unshare-kill' \
	'a PID namespace made for the children (unshare) is not dispatched: nobody restores it' \
	'		r = check_ns(o, tid, "pid_for_children", own_pid);' '		r = 0;'
# --- ns plugin: user namespaces, pid_for_children; nested PID namespaces ---
mutant userns-map-line-lost plugins/ns/userns-restore.c 'e2e-userns-kill' \
	'only the first line of a restored uid or gid map is written' \
	'	for (size_t i = 0; i < n && i < MAX_EXTENTS; i++)
		len +=' \
	'	for (size_t i = 0; i < n && i < 1; i++)
		len +='
mutant userns-setgroups-flipped plugins/ns/userns-restore.c 'e2e-userns-kill e2e-userns-deny-kill' \
	'a restored user namespace gets setgroups "deny" where it had "allow" and back' \
	'	if (!u->setgroups_allow) {' '	if (u->setgroups_allow) {'
mutant userns-owner plugins/ns/userns-restore.c 'e2e-userns-kill' \
	'a restored user namespace is owned by crf restore'"'"'s uid, not the one that made it' \
	'	    (geteuid() != owner && setresuid((uid_t)-1, owner, (uid_t)-1) < 0) ||' ''
mutant userns-not-joined plugins/ns/userns-restore.c 'e2e-userns-kill' \
	'a task never joins its restored user namespace (its ids are set in crf'"'"'s)' \
	'	if (r >= 0 && setns(fd, CLONE_NEWUSER) < 0)' '	if (r >= 0 && 0)'
mutant userns-creds-outside core/dump/creds-userns.c 'e2e-userns-kill' \
	'the ids of a task in a user namespace are saved as crf sees them, not as its namespace does' \
	'	if (mine.st_ino == its.st_ino && mine.st_dev == its.st_dev)' '	if (1)'
mutant userns-deny-groups parasite/restorer.c 'e2e-userns-deny-kill' \
	'the restorer fails on setgroups in a user namespace whose setgroups is "deny"' \
	'	if (r == -EPERM && !c->n_groups' '	if (0 && !c->n_groups'
mutant userns-nested plugins/ns/userns-restore.c 'e2e-userns-nested-kill' \
	'a nested user namespace is made in crf'"'"'s, not inside its restored parent' \
	'	    (parent_fd >= 0 && setns(parent_fd, CLONE_NEWUSER) < 0) ||
	    (parent_fd >= 0 && setresgid' \
	'	    (parent_fd >= 0 && setresgid'
mutant userns-owned plugins/ns/userns.c 'e2e-userns-owned-refused' \
	'a PID namespace owned by a restored user namespace is not refused' \
	'		if (owner == its_user && userns_inside_flag(kind))' '		if (owner == its_user)'
mutant userns-owned-outside plugins/ns/userns-restore.c 'e2e-userns-uts-kill' \
	'a namespace its restored user namespace owned is made outside it (owned by crf'"'"'s)' \
	'		r = setns(us.fd, CLONE_NEWUSER) < 0
			    ?' \
	'		r = 0
			    ?'
mutant userns-threads plugins/ns/userns.c 'e2e-userns-threads-refused' \
	'a task with threads in a user namespace is not refused' \
	'	if (threads > 1)' '	if (threads > 2)'
mutant userns-siblings plugins/ns/share.c 'e2e-userns-siblings-refused' \
	'two processes in one user namespace, neither'"'"'s parent in it, are not refused (the restore makes two)' \
	'		if (!ns_share_joinable(kind) || o->tfc_only || tfc_only)' '		if (0)'
mutant share-join plugins/ns/share.c 'e2e-nsjoin-uts-kill e2e-uts-siblings-kill e2e-ipc-siblings-kill' \
	'a process that joined a namespace with setns gets one of its own at the restore' \
	'	if (e->pid == pid)
		return 1;' '	if (1)
		return 1;'
mutant share-time-join plugins/ns/time.c 'e2e-nsjoin-time-kill' \
	'a process that joined a time namespace is not known to be in it: the handler makes another' \
	'	made[n_made].id = id;
	made[n_made++].fd = fd;
	return 0;
}' '	(void)id;
	(void)fd;
	return 0;
}'
mutant share-restore-check plugins/ns/share.c 'e2e-nsjoin-mnt-kill' \
	'the maker'"'"'s published namespace is not the one it restored (its crf one instead)' \
	'		snprintf(path, sizeof(path), "/proc/self/ns/%s", kind);
		fd = open(path, O_RDONLY | O_CLOEXEC);' '		snprintf(path, sizeof(path), "/proc/1/ns/%s", kind);
		fd = open(path, O_RDONLY | O_CLOEXEC);'
mutant ns-outside plugins/ns/outside.c 'e2e-nsjoin-uts-outside-refused e2e-nsjoin-net-outside-refused' \
	'a namespace of the tree that a process outside it is in too is not refused' \
	'		if (!root || ns_external_id(kind, id))' '		if (1)'
mutant ns-outside-mount plugins/ns/outside.c 'e2e-nsext-net' \
	'a namespace of the tree held by a mount outside it (ip netns add) is not refused' \
	'		owner = claimed(root, &kind);' '		owner = 0;'
mutant ns-outside-fd plugins/ns/outside.c 'e2e-nsjoin-ipc-outside-fd-refused' \
	'a namespace of the tree an outside process holds an fd of is not refused' \
	'		root = claimed(link, &kind);' '		root = 0;'
mutant ns-external-join plugins/ns/external.c 'e2e-nsext-net' \
	'a process of an external namespace does not join the one crf restore --inherit-fd gives' \
	'	if (setns(e->fd, nstype_of(ni->kind)) < 0)' '	if (0)'
mutant ns-external-nofd plugins/ns/external.c 'e2e-nsext-net' \
	'a restore of an external namespace without its --inherit-fd is not refused before the fork' \
	'	for (size_t i = 0; r >= 0 && i < n_ext; i++)' '	for (size_t i = 0; r >= 0 && i < 0; i++)'
mutant userns-nested-elsewhere plugins/ns/userns.c 'e2e-userns-elsewhere-refused' \
	'a nested user namespace whose first process'"'"'s parent is not in its parent is not refused at dump' \
	'	if (!parent)
		return 0;' '	if (1)
		return 0;'
mutant userns-rlimit plugins/ns/userns.c 'e2e-userns-rlimit-refused' \
	'a task in a user namespace with a hard rlimit above crf'"'"'s is not refused at dump' \
	'	groups = check_rlimits(pid, ni);' '	groups = 0;'
mutant pidfc-init plugins/ns/userns-pid.c 'e2e-pidns-nested-unshare-kill' \
	'a process'"'"'s pid_for_children (its child'"'"'s namespace) is not joined again' \
	'	if (fc.init && !after_user)' '	if (0)'
mutant pidfc-pending plugins/ns/userns-pid.c 'e2e-pidns-nested-pending-kill' \
	'a pid_for_children made by unshare with no process yet is not made again' \
	'	if (!fc.init && after_user)' '	if (0)'
mutant core-pidns-nested-level core/restore/rst-tree.c 'e2e-pidns-nested-kill' \
	'a process three PID namespace levels deep gets its middle level'"'"'s PID one off' \
	'		set_tid[l] = lv > 1 ? rp->p->ns_pid[lv - 1 - l] : rp->p->pid;' \
	'		set_tid[l] = lv > 1 ? rp->p->ns_pid[lv - 1 - l] + (lv > 2 && l == 1) : rp->p->pid;'
mutant vmans-foreign-vma-skipped plugins/mem/restore.c 'e2e-special-vma-kill' \
	'a mapping another plugin claimed is not restored (its handler'"'"'s restore is not called)' \
	'		return restore_foreign(s, v);' '		return 0;'
mutant vmans-foreign-vma-mem plugins/mem/dump.c 'e2e-special-vma-kill' \
	'mem takes every mapping for its own, whoever the registry says claims it' \
	'	return strcmp(d->claims[i].plugin, crf_ctx_plugin(d->ctx)) != 0;' '	return 0;'
mutant vmans-match-first core/lib/registry.c 'e2e-special-vma-kill' \
	'a handler with a match no longer beats one that claims by name (mem'"'"'s "memfd")' \
	'	for (int pass = 0; pass < 2; pass++)' '	for (int pass = 1; pass < 2; pass++)'
mutant vmans-vma-upfront plugins/mem/restore-check.c 'e2e-special-vma-kind-off-refused' \
	'a restore whose mapping'"'"'s handler is switched off is not refused before the fork' \
	'			r = crf_kind_check(ctx, &obj, v->claim_plugin);' '			r = 0;'
mutant vmans-ns-restore-skipped plugins/ns/claims.c 'e2e-special-uts-kill' \
	'a namespace another plugin claimed is not restored (the task comes back in crf'"'"'s)' \
	'	r = crf_kind_restore(ctx, &obj, c->claim_plugin);' '	r = 0;'
mutant vmans-ns-inherited plugins/ns/claims.c 'e2e-special-uts-kill' \
	'a child is never told it inherited its parent'"'"'s restored namespace (it makes its own)' \
	'	bool inherited = p->s->now[k] == c->id;' \
	'	bool inherited = false;'
mutant vmans-ns-upfront plugins/ns/claims.c 'e2e-special-uts-kind-off-refused' \
	'a restore whose namespace'"'"'s handler is switched off is not refused before the fork' \
	'	return each_claim(ctx, pid, check_claim, NULL);' '	return 0;'
mutant core-plugin-refusal core/host/plugin-set.c 'e2e-plugins-mem-off-refused e2e-cgroup-off-refused' \
	'an object no enabled plugin handles is let through (a dump with --disable mem has no memory)' \
	'	if (!e)
		return -ENOTSUP;
	if (!e->kind->dump)' \
	'	if (!e)
		return 0;
	if (!e->kind->dump)'
mutant core-inventory-plugins core/cli/cmd-restore.c 'e2e-plugins-subset-kill' \
	'the restore takes the plugin set from its options, not from the inventory' \
	'		r = inventory_plugins(dir, &o->sel.image);' '		r = 0;'
mutant core-loginuid core/restore/task-attrs-restore.c 'e2e-taskattr-kill' \
	'the loginuid stays crf restore'"'"'s' \
	'		r = set_proc("loginuid", tc->loginuid);' '		r = 0;'
mutant core-thp-disable core/restore/task-attrs-restore.c 'e2e-taskattr-kill' \
	'PR_SET_THP_DISABLE is cleared' \
	'prctl(PR_SET_THP_DISABLE, tc->thp_disable & 1, thp_flags, 0, 0) < 0)' \
	'prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0) < 0)'
mutant core-membarrier core/restore/task-attrs-restore.c 'e2e-taskattr-kill' \
	'no membarrier registration is made again' \
	'	if (r >= 0 && tc->membarrier)
		r = set_membarrier(tc->membarrier);' \
	'	if (0)
		r = set_membarrier(tc->membarrier);'
mutant core-subreaper core/restore/task-attrs-restore.c 'e2e-taskattr-kill' \
	'a child subreaper comes back as none (its orphans go to init)' \
	'prctl(PR_SET_CHILD_SUBREAPER, tc->child_subreaper ? 1 : 0, 0, 0, 0) < 0)' \
	'prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) < 0)'
mutant core-personality core/restore/task-attrs-restore.c 'e2e-taskattr-kill' \
	'the personality is reset to PER_LINUX' \
	'	t->a.personality = tc->personality;' '	t->a.personality = 0;'
mutant core-group-stop core/restore/task-attrs-restore.c 'e2e-stopped-kill' \
	'a process stopped by SIGSTOP comes back running' \
	'	t->a.stop_signal = (int32_t)tc->stop_signal;' '	t->a.stop_signal = 0;'
mutant core-stop-reports core/restore/task-attrs-restore.c 'e2e-stopped-kill' \
	'the stop reports the parent had taken (waitpid WUNTRACED) are reported again' \
	'	if (!tc->n_stop_waited)
		return 0;' \
	'	if (tc->n_stop_waited || !tc->n_stop_waited)
		return 0;'
mutant core-pending-64 core/task/task-pending.c 'e2e-taskattr-kill' \
	'only the first 64 queued signals of a queue are saved' \
	'		if (got == 0)
			return 0;' \
	'		if (got == 0 || off)
			return 0;'
mutant core-sigsuspend-mask core/dump/dump.c 'e2e-sigwait-kill' \
	'a leader stopped in sigsuspend comes back with the call'"'"'s temporary mask' \
	'	if (r >= 0)
		tc.blocked = parasite_blocked(p);' \
	'	if (0)
		tc.blocked = parasite_blocked(p);'
mutant core-clone-files core/restore/rst-tree.c 'e2e-clonefiles-kill' \
	'processes that shared an fd table are forked with tables of their own' \
	'		flags |= CLONE_FILES;' '		flags |= 0;'
mutant core-clonefiles-outside core/dump/pstree-fs.c 'e2e-clonefiles-outside-refused' \
	'an fd table the tree shares with a process outside it is not refused' \
	'		if (!c)
			return crf_error_errno(' \
	'		if (0)
			return crf_error_errno('
mutant core-cwd-deleted core/dump/pstree-fs.c 'e2e-cwd-deleted-refused e2e-cwd-deleted-root-refused' \
	'a deleted cwd or root is not refused' \
	'	if (st.st_nlink == 0 ||
	    (n > (ssize_t)strlen(DELETED) && !strcmp(path + n - strlen(DELETED), DELETED)))' \
	'	if (0)'

# --- the core: a dump that is interrupted, or killed (issue 15) ---
mutant core-guardian-remove core/dump/guardian.c 'e2e-fault-walk' \
	'the images of a dump whose crf was killed are left behind' \
	'	if (!w.done && !w.keep && w.owned)
		remove_images(imgdir, created);' \
	'	if (0)
		remove_images(imgdir, created);'
mutant core-guardian-thaw core/dump/guardian.c 'e2e-fault-walk' \
	'a tree frozen with the cgroup freezer stays frozen when crf is killed' \
	'	if (!w.done && w.frozen[0])
		thaw(w.frozen);' \
	'	if (0)
		thaw(w.frozen);'
mutant core-stop-request core/host/stop.c 'e2e-fault-walk' \
	'SIGTERM, SIGINT and SIGHUP do not stop a dump' \
	'	if (!sig)
		return 0;' \
	'	if (sig >= 0)
		return 0;'
mutant core-psite-error-lost core/dump/task-dump.c 'e2e-fault-walk' \
	'a failed parasite call for the alternate stack or the itimers is ignored' \
	'		ret = parasite_get_itimers(p, it);
	if (ret < 0)
		return (int)ret;' \
	'		ret = parasite_get_itimers(p, it);
	if (ret < 0)
		memset(it, 0, sizeof(it));
	memset(&ss, 0, sizeof(ss));'
mutant core-img-finish-error-lost core/lib/image.c 'e2e-fault-walk' \
	'an image whose last write failed is renamed into place all the same' \
	'	r = img->kind == CRF_IMG_BLOB ? blob_finish(img) : record_finish(img);
	if (r < 0)
		return r;' \
	'	r = img->kind == CRF_IMG_BLOB ? blob_finish(img) : record_finish(img);
	img->err = 0;'
mutant core-dump-data-order core/dump/dump.c 'e2e-fault-walk' \
	'the plugins'"'"' dump-task-data (the page copy) runs with the parasite still in the task' \
	'		r = plugin_set_run_task(set, CRF_STAGE_DUMP_TASK, dir, pid, &crf_dump_host_ops, p);
	seccomp_free(&tc);' \
	'		r = plugin_set_run_task(set, CRF_STAGE_DUMP_TASK, dir, pid, &crf_dump_host_ops, p);
	if (r >= 0)
		r = plugin_set_run_task(set, CRF_STAGE_DUMP_TASK_DATA, dir, pid, NULL, NULL);
	seccomp_free(&tc);' \
	'	if (r >= 0)
		r = plugin_set_run_task(set, CRF_STAGE_DUMP_TASK_DATA, dir, pid, NULL, NULL);
	return r;' \
	'	return r;'
mutant core-sync-kill core/dump/dump.c 'e2e-memory-kill e2e-counter-kill' \
	'a killing dump does not sync its images before the kill' \
	'	if (r >= 0 && (o->sync || !o->leave_running))' '	if (r >= 0 && o->sync)'
mutant core-sync-leave core/dump/dump.c 'e2e-counter-leave-sync' \
	'dump --leave-running --sync returns before its images are on disk' \
	'	if (r >= 0 && (o->sync || !o->leave_running))' '	if (r >= 0 && !o->leave_running)'

# --- the restore: hostile images refused before the first fork (issue 15) ---
mutant validate-thread-twice core/restore/validate.c 'e2e-hostile-images' \
	'a core image whose process lists one thread twice is only refused in the forked tree' \
	'		if (tc->threads[j]->tid == th->tid)' '		if (0)'
mutant validate-core-stranger core/restore/validate.c 'e2e-hostile-images' \
	'a core-PID.img of a PID the tree lacks is not refused' \
	'	if (!p || p->zombie)
		return crf_error_errno(EBADMSG,' \
	'	if (0)
		return crf_error_errno(EBADMSG,'
mutant validate-cgroup-path plugins/cgroup/validate.c 'e2e-hostile-images' \
	'a cgroup path with ".." components (outside its hierarchy'"'"'s mount) is not refused' \
	'		if (!cg_path_ok(m[j]->path))' '		if (0)'

mutant validate-vma-overlap plugins/mem/validate.c 'e2e-hostile-images' \
	'a mapping that overlaps the one before it is not refused before the fork' \
	'	if (v->start < w->last_end)' '	if (0)'
mutant validate-fd-limit plugins/files/validate.c 'e2e-hostile-images' \
	'an fd number above fs.nr_open is not refused before the fork' \
	'	if (e->fd < 0 || e->fd >= t->nr_open)' '	if (e->fd < 0)'
mutant validate-net-lock-table plugins/net/validate.c 'e2e-hostile-images' \
	'a network lock table name that is not crf_lock_DIGITS goes into an nft command line' \
	'	if (strncmp(p, "crf_lock_", 9) || !p[9] || strlen(p) > 32 ||' \
	'	if (0 && (strncmp(p, "crf_lock_", 9) || !p[9] || strlen(p) > 32) &&'
mutant validate-net-unix-ref plugins/net/validate.c 'e2e-hostile-images' \
	'a unix socket whose peer is not in unix-sk.img is looked up past the table' \
	'	return have_ino(v, ino) ? 0' '	return 1 ? 0'
mutant validate-net-unix-name plugins/net/validate.c 'e2e-hostile-images' \
	'a unix socket name longer than sun_path is not refused before the fork' \
	'	if (name->len > sizeof(((struct sockaddr_un *)0)->sun_path))' '	if (0)'
mutant validate-tun-payload plugins/devices/tun-check.c 'e2e-hostile-images' \
	'a tun fd whose payload does not decode is only refused in the forked tree' \
	'	if (!t)
		return crf_error_errno(EBADMSG, "%s: payload: no crf.devices.Tun' \
	'	if (!t)
		return 0;
	if (0)
		return crf_error_errno(EBADMSG, "%s: payload: no crf.devices.Tun'
mutant kind-check-skipped core/lib/registry.c 'e2e-hostile-images plugin-template' \
	'a plugin'"'"'s check of its kind (ABI 1.7) is never called: damaged socket payloads reach the forked tree' \
	'			return call_as_owner(ctx, e, c->check, obj);' '			return 0;'

# --- the core: the device stages of plugin ABI 1.5 (issue 10) ---
mutant dev-undo-missing core/dump/dump.c 'e2e-device-stages' \
	'a failed dump gives no device back: dump-undo is never called' \
	'	if (r < 0 || o->leave_running) {
		c = plugin_set_run(set,' \
	'	if (r >= 0 && o->leave_running) {
		c = plugin_set_run(set,'
mutant dev-undo-after-thaw core/dump/dump.c 'e2e-device-stages' \
	'dump-undo and dump-resume run once the tree is thawed (the program runs before its device)' \
	'	if (r < 0 || o->leave_running) {
		c = plugin_set_run(set, r < 0 ? CRF_STAGE_DUMP_UNDO : CRF_STAGE_DUMP_RESUME, dir,
				   o->pid);
		if (r >= 0)
			r = c;
	}
	if (frozen && (r < 0' \
	'	if (frozen && (r < 0' \
	'	pstree_free(&tree);' \
	'	if (r < 0 || o->leave_running) {
		c = plugin_set_run(set, r < 0 ? CRF_STAGE_DUMP_UNDO : CRF_STAGE_DUMP_RESUME, dir,
				   o->pid);
		if (r >= 0)
			r = c;
	}
	pstree_free(&tree);'
mutant dev-pause-after-freeze core/dump/dump.c 'e2e-device-stages' \
	'dump-pause runs once the tree is frozen' \
	'		r = plugin_set_run(set, CRF_STAGE_DUMP_PAUSE, dir, o->pid);
	if (r >= 0)
		r = pstree_freeze(o->pid, freeze_mode_parse(o->freeze), &tree);' \
	'		r = pstree_freeze(o->pid, freeze_mode_parse(o->freeze), &tree);
	if (r >= 0)
		r = plugin_set_run(set, CRF_STAGE_DUMP_PAUSE, dir, o->pid);'
mutant dev-frozen-after-parasite core/dump/dump.c 'e2e-device-stages' \
	'dump-frozen runs after the parasite was in the tasks' \
	'	for (size_t i = 0; r >= 0 && i < t->n; i++)
		if (!t->procs[i].zombie)
			r = plugin_set_run_task(set, CRF_STAGE_DUMP_FROZEN, dir, t->procs[i].pid,
						NULL, NULL);' \
	'' \
	'	if (r >= 0)
		r = pstree_write(dir, t);' \
	'	for (size_t i = 0; r >= 0 && i < t->n; i++)
		if (!t->procs[i].zombie)
			r = plugin_set_run_task(set, CRF_STAGE_DUMP_FROZEN, dir, t->procs[i].pid,
						NULL, NULL);
	if (r >= 0)
		r = pstree_write(dir, t);'
mutant dev-resume-after-release core/restore/restore.c 'e2e-device-stages' \
	'restore-resume runs once the tree was let go (the program runs before its device)' \
	'	if (r >= 0)
		r = crf__fault("releasing the tree", false);
	if (r >= 0)
		r = rst_tree_release(rt);' \
	'	if (r >= 0)
		r = crf__fault("releasing the tree", false);
	if (r >= 0)
		r = rst_tree_release(rt);
	for (size_t i = 0; r >= 0 && i < rt->t->n; i++)
		if (!rt->t->procs[i].zombie)
			r = plugin_set_run_task(set, CRF_STAGE_RESTORE_RESUME, dir,
						rt->t->procs[i].pid, NULL, NULL);' \
	'	for (size_t i = 0; r >= 0 && i < rt->t->n; i++)
		if (!rt->t->procs[i].zombie)
			r = plugin_set_run_task(set, CRF_STAGE_RESTORE_RESUME, dir,
						rt->t->procs[i].pid, NULL, NULL);
	if (r >= 0)
		r = crf__fault("releasing the tree", false);' \
	'	if (r >= 0)
		r = crf__fault("releasing the tree", false);'
mutant dev-restore-undo-missing core/restore/restore.c 'e2e-device-stages' \
	'a failed restore never calls restore-undo' \
	'		plugin_set_run(set, CRF_STAGE_RESTORE_UNDO, dir, root);' ''
mutant dev-undo-everyone core/host/plugin-set.c 'loader e2e-device-stages' \
	'dump-undo goes to every plugin, also those that paused nothing' \
	'			if (!*owes)
				continue;' \
	'			if (false)
				continue;'
mutant dev-undo-forward core/host/plugin-set.c 'loader e2e-device-stages' \
	'dump-undo runs in dump order, not in reverse' \
	'	case CRF_STAGE_DUMP_UNDO:
	case CRF_STAGE_DUMP_RESUME:
	case CRF_STAGE_RESTORE_UNDO:
		return true;' \
	'	case CRF_STAGE_DUMP_RESUME:
	case CRF_STAGE_RESTORE_UNDO:
		return true;'
mutant dev-old-hooks core/host/loader.c 'loader e2e-device-stages' \
	'a plugin of an older minor has as many hook slots read as the core has stages' \
	'	size_t nh = d->n_hooks < CRF_STAGE__COUNT ? d->n_hooks : CRF_STAGE__COUNT;' \
	'	size_t nh = CRF_STAGE__COUNT;'

# --- files plugin: fds, offsets, flags, pipes, anonymous fds, locks ---
mutant files-offset plugins/files/restore.c 'e2e-files-kill' \
	'every regular file is back at offset 0' \
	'lseek(fd, (off_t)e->pos, SEEK_SET)' 'lseek(fd, 0, SEEK_SET)'
mutant files-cloexec plugins/files/restore.c 'e2e-files-kill' \
	'close-on-exec is dropped' \
	'	r = crf_rst_keep_fd(ctx, fd, e->fd, e->cloexec);' \
	'	r = crf_rst_keep_fd(ctx, fd, e->fd, false);'
mutant files-append plugins/files/restore.c 'e2e-files-kill' \
	'O_APPEND is dropped when a file is opened again' \
	'	unsigned int fl = e->flags & ~(unsigned int)OPEN_ONLY;' \
	'	unsigned int fl = e->flags & ~(unsigned int)(OPEN_ONLY | O_APPEND);'
mutant files-shared-desc plugins/files/restore.c 'e2e-files-kill' \
	'a dup of an fd gets a description of its own' \
	'	if (e->has_same_as && !e->has_same_pid) {' '	if (0) {'
mutant files-sync plugins/files/sync.c 'e2e-dirty-leave' \
	'the filesystems the tree wrote to are not synced' \
	'		if (syncfs(s->fs[i].fd) < 0)' '		if (0)'
# A restore that fails late: its connections die in repair mode, the lock stays.
mutant net-tcp-repair-early plugins/net/tcp-repair.c 'e2e-hostile-images' \
	'restored connections leave repair mode in their task, before the tree is complete: a failed restore closes them with a FIN' \
	'	return r < 0 ? crf_error_errno(-r, "%s: %s in repair mode", name, step) : 0;' \
	'	return r < 0 ? crf_error_errno(-r, "%s: %s in repair mode", name, step)
		     : set_int(fd, TCP_REPAIR, TCP_REPAIR_OFF);'
mutant net-tcp-undo-skipped plugins/net/tcp-resume.c 'e2e-tcp-established-failed-late e2e-hostile-images' \
	'a restore that fails after restore-resume kills connections out of repair mode: FIN to the peer, TIME-WAIT on the four-tuple' \
	'		if (!conns[i].finished)
			continue;' \
	'		if (1)
			continue;'
mutant net-lock-dropped-on-failure plugins/net/netlock.c 'e2e-hostile-images' \
	'a failed restore drops the network lock: the peer'"'"'s retransmission meets a reset before the next restore' \
	'	if (restore_table[0] && keep)' '	if (0)'
mutant net-netlink-groups plugins/net/netlink.c 'e2e-netlink-kill' \
	'a restored netlink socket joins none of its multicast groups' \
	'			if (!(sk->groups[w] & (1u << b)))' '			if (1)'
mutant net-netlink-port plugins/net/netlink.c 'e2e-netlink-kill' \
	'a restored netlink socket is not bound to its port id' \
	'	if (sk->portid && bind(fd' '	if (0 && bind(fd'
mutant net-netlink-opts plugins/net/netlink.c 'e2e-netlink-kill' \
	'a restored netlink socket loses its options' \
	'		r = sockopt_restore_list(fd, sk->opts, sk->n_opts, what);' '		r = 0;'
mutant net-netlink-queued plugins/net/netlink.c 'e2e-netlink-queued-refused' \
	'a netlink socket with the kernel'"'"'s messages waiting is dumped, and they are lost' \
	'	if (p.revents & POLLIN)' '	if (0)'
mutant net-filter-ignored plugins/net/sockopt.c 'e2e-udp-filters-kill e2e-netlink-filter-kill' \
	'a socket'"'"'s BPF filter is not saved, and the restored socket has none' \
	'	return filter_dump(fd, opts, n, name);' '	return 0;'
mutant net-filter-unlocked plugins/net/sockopt.c 'e2e-udp-filters-kill' \
	'a locked BPF filter comes back unlocked' \
	'	SO(SO_LOCK_FILTER),' ''
mutant net-filter-requeued plugins/net/udp.c 'e2e-udp-filter-refused' \
	'datagrams waiting behind a BPF filter are queued again through it' \
	'	if (r > 0 && has_filter(sk))' '	if (0)'
mutant net-raw-unbound plugins/net/raw.c 'e2e-rawping-kill' \
	'a restored raw or ping socket is not bound: another address, another echo identifier' \
	'	r = inet_bind_connect(fd, sk, &a, name);' '	r = 0;'
mutant net-raw-unconnected plugins/net/raw.c 'e2e-rawping-kill' \
	'a raw socket connected with port 0 comes back unconnected (getpeername says ENOTCONN)' \
	'	if (p.state != 1) { /* TCP_ESTABLISHED: connect() */' '	if (1) {'
mutant net-raw-queue plugins/net/raw.c 'e2e-rawping-queued-refused' \
	'a raw socket'"'"'s queued packets are dropped' \
	'	if (p.rx_queue || (poll(&pf, 1, 0) == 1 && (pf.revents & POLLIN)))' '	if (0)'
mutant net-raw-opts plugins/net/sockopt.c 'e2e-rawping-kill' \
	'a raw socket'"'"'s ICMP_FILTER and IP_HDRINCL are lost' \
	'	RAW(SOL_IP, IP_HDRINCL, false),' '' '	RAW(SOL_RAW, ICMP_FILTER, false),' ''
mutant net-packet-mclist plugins/net/packet.c 'e2e-packet-kill' \
	'a restored packet socket has each membership once, however often it was added' \
	'		for (uint32_t n = 0; r == 0 && n < m->count; n++)' '		for (uint32_t n = 0; r == 0 && n < 1; n++)'
mutant net-packet-fanout plugins/net/packet.c 'e2e-packet-kill' \
	'a restored packet socket is in no fanout group' \
	'	if (r == 0 && sk->has_fanout &&' '	if (0 && sk->has_fanout &&'
mutant net-packet-rings plugins/net/packet.c 'e2e-packet-kill' \
	'a restored packet socket has no receive ring' \
	'	if (r == 0 && sk->rx_ring)' '	if (0)'
mutant net-packet-unbound plugins/net/packet.c 'e2e-packet-kill' \
	'a restored packet socket is not bound to its interface' \
	'	if (!sk->protocol && !sk->ifindex)' '	if (1)'
mutant net-packet-queue plugins/net/packet.c 'e2e-packet-queued-refused' \
	'a packet socket'"'"'s queued packets are dropped' \
	'	if (!why && poll(&p, 1, 0) == 1 && (p.revents & POLLIN))' '	if (0)'
mutant net-packet-opts plugins/net/sockopt.c 'e2e-packet-kill' \
	'a packet socket loses PACKET_RESERVE and PACKET_AUXDATA' \
	'	PK(PACKET_RESERVE),' '' '	PK(PACKET_AUXDATA),' ''
mutant net-error-ignored plugins/net/sockopt.c 'e2e-udp-error-refused' \
	'a socket'"'"'s pending error is not noticed, and lost by the restore' \
	'	if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR))' '	if (0)'
mutant net-peercred-maker plugins/net/unix-peercred.c 'e2e-peercred-kill' \
	'socketpairs are made in crf restore'"'"'s process again, not by their makers' \
	'			m->has_made_by = true;' '			m->has_made_by = false;' \
	'				p->has_made_by = true;' '				p->has_made_by = false;'
mutant net-peercred-creds plugins/net/unix-restore.c 'e2e-peercred-kill' \
	'a pair is made again with crf'"'"'s euid and egid, not its maker'"'"'s' \
	'	    setresgid(-1, m->peer_gid, -1) || setresuid(-1, m->peer_uid, -1))' \
	'	    setresgid(-1, egid, -1) || setresuid(-1, euid, -1))'
mutant net-peercred-groups plugins/net/unix-restore.c 'e2e-peercred-kill' \
	'a pair is made again with crf'"'"'s groups, not its maker'"'"'s' \
	'	if (setgroups(m->n_peer_groups, (const gid_t *)m->peer_groups) ||' \
	'	if (setgroups((size_t)n, groups) ||'
mutant net-peercred-stray plugins/net/unix-peercred.c 'e2e-peercred-stray-refused' \
	'a pair held outside its maker'"'"'s descendants is not refused (it would not be made for them)' \
	'		if (t->held[i].ino == ino && !descends(t->held[i].pid, maker))' \
	'		if (t->held[i].ino == ino && 0)'
mutant files-pipe-byte plugins/files/pipe.c 'e2e-pipes-kill' \
	'the last byte buffered in each pipe is lost' \
	'	for (done = 0; r == 0 && done < m->data.len; done += (size_t)n) {
		n = splice(tmp[0], NULL, wr, NULL, m->data.len - done, SPLICE_F_NONBLOCK);' \
	'	for (done = 0; r == 0 && done + 1 < m->data.len; done += (size_t)n) {
		n = splice(tmp[0], NULL, wr, NULL, m->data.len - done - 1, SPLICE_F_NONBLOCK);'
mutant files-pipe-size plugins/files/pipe.c 'e2e-pipes-kill' \
	'a resized pipe comes back at the default size' \
	'	if (fcntl(p->ends[O_WRONLY], F_GETPIPE_SZ) != (int)m->capacity &&' '	if (0 &&'
mutant files-eventfd plugins/files/anonfd-restore.c 'e2e-anonfds-kill' \
	'an eventfd counter comes back zero' \
	'	if (count && write(fd, &count, sizeof(count)) != sizeof(count))' '	if (0)'
mutant files-timerfd-interval plugins/files/anonfd-restore.c 'e2e-anonfds-kill' \
	'a timerfd loses its interval' \
	'.it_interval = ns_ts(t->interval_ns)' '.it_interval = ns_ts(0)'
mutant files-epoll-events plugins/files/epoll.c 'e2e-epoll-kill' \
	'epoll targets lose edge-triggered mode' \
	'struct epoll_event ev = {.events = t->events, .data.u64 = t->data};' \
	'struct epoll_event ev = {.events = t->events & ~EPOLLET, .data.u64 = t->data};'
mutant files-inotify plugins/files/inotify.c 'e2e-epoll-kill' \
	'every inotify watch waits for IN_MODIFY only' \
	'inotify_add_watch(fd, w->path, w->mask);' 'inotify_add_watch(fd, w->path, IN_MODIFY);'
mutant files-locks plugins/files/fdattr.c 'e2e-locks-kill' \
	'no file lock is taken again' \
	'			r = files_locks_take(l->pid, l->v[i]);' '			r = 0;'
mutant files-owner plugins/files/fdattr.c 'e2e-locks-kill' \
	'no fd gets its signal owner back' \
	'		r = files_owner_set(l->pid, l->v[i]);' '		r = 0;'
mutant files-termios plugins/files/tty-restore.c 'e2e-tty-kill' \
	'a terminal keeps the default settings' \
	'if (tcsetattr(fd, TCSANOW, tio) < 0 || ioctl(fd, TIOCSWINSZ, ws) < 0)' \
	'if (ioctl(fd, TIOCSWINSZ, ws) < 0)'

mutant files-stdio-unsaved plugins/files/fdtable.c 'e2e-stdio-pipeline-kill' \
	'fds 0-2 are not saved (as with --inherit-stdio)' \
	'	if (d->inherit_stdio && fd <= 2 && !files_is_tty(&obj))' \
	'	if (fd <= 2 && !files_is_tty(&obj))'
mutant files-stdio-crf plugins/files/restore.c 'e2e-stdio-daemon-kill e2e-stdio-closed-kill' \
	'an fd 0-2 the program had closed is crf restore'"'"'s own' \
	'	if (!tree || !files_ext_old_dump(tree->ext))
		return 0;' \
	'	if (!tree)
		return 0;'
mutant files-pipe-outside plugins/files/pipe.c 'e2e-stdio-outside-refused e2e-stdio-outside-fifo-refused' \
	'a pipe whose other end a process outside the tree holds is not refused' \
	'		if (pipe_half(&ps->v[i]) && v[k++].pid)' \
	'		if (pipe_half(&ps->v[i]) && v[k++].pid && 0)'
mutant files-inherit-fd plugins/files/pipe.c 'e2e-stdio-outside-kill' \
	'an external pipe is made afresh, not connected to the --inherit-fd one' \
	'		else if (m->has_external && m->external)
			r = pipe_connect(tree, p, m);' \
	'		else if (0)
			r = pipe_connect(tree, p, m);'
mutant files-validation-grow plugins/files/policy.c 'e2e-stdio-grow-refused' \
	'a file that grew is reopened for a writer without O_APPEND' \
	'	return (flags & O_PATH) || (flags & O_ACCMODE) == O_RDONLY || (flags & O_APPEND);' \
	'	return (flags & O_PATH) || (flags & O_ACCMODE) == O_RDONLY || (flags & O_APPEND) || 1;'
mutant files-validation-strict plugins/files/policy.c 'e2e-stdio-strict-refused' \
	'--file-validation=strict is taken for lax' \
	'	else if (!strcmp(value, "strict"))
		*v = FILES_VALIDATE_STRICT;' \
	'	else if (!strcmp(value, "strict"))
		*v = FILES_VALIDATE_LAX;'
mutant files-unlinked-holes plugins/files/unlinked.c 'e2e-unlinked-kill' \
	'an unlinked file is saved from its first data byte to its end, holes and all' \
	'		hole = data < 0 ? -1 : lseek(fd, data, SEEK_HOLE);' \
	'		hole = data < 0 ? -1 : (off_t)size;'
mutant files-unlinked-once plugins/files/unlinked.c 'e2e-unlinked-kill' \
	'an unlinked file behind several descriptions or names is saved for each' \
	'	if (!k)
		return NULL;
	*id = (*k)->i;' \
	'	if (k || !k)
		return NULL;
	*id = (*k)->i;'
mutant files-unlinked-owner plugins/files/unlinked-restore.c 'e2e-unlinked-kill' \
	'an unlinked file comes back owned by root' \
	'	if (rec && fchown(fd, rec->uid, rec->gid) < 0)' '	if (0 && fchown(fd, rec->uid, rec->gid) < 0)'
mutant files-unlinked-mode plugins/files/unlinked-restore.c 'e2e-unlinked-kill' \
	'an unlinked file loses its set-user-ID, set-group-ID and sticky bits' \
	'	if (fchmod(fd, s->mode & 07777) < 0)' '	if (fchmod(fd, s->mode & 0777) < 0)'
mutant files-unlinked-times plugins/files/unlinked-restore.c 'e2e-unlinked-kill' \
	'an unlinked file gets the restore'"'"'s atime and mtime' \
	'	if (futimens(fd, t) < 0)' '	if (0)'
mutant files-pipe-nonblock plugins/files/pipe.c 'e2e-pipedesc-kill e2e-pipes-kill' \
	'every description of a pipe loses O_NONBLOCK' \
	'	v[p->n_descs] = (struct pipe_desc){d->pid, e->fd, e->flags, -1};' \
	'	v[p->n_descs] = (struct pipe_desc){d->pid, e->fd, e->flags & ~(unsigned int)O_NONBLOCK, -1};'
mutant files-pty-owner plugins/files/tty-restore.c 'e2e-tty-kill' \
	'a pty'"'"'s slave comes back owned by root' \
	'	if (chown(t->slave, m->uid, m->gid) < 0 ||' '	if (chown(t->slave, 0, 0) < 0 ||'
mutant files-pty-queued plugins/files/tty.c 'e2e-tty-queued-refused' \
	'bytes buffered in a pty are not refused (they are lost)' \
	'	if (t->in_queued || t->out_queued)' '	if (0)'
mutant files-inotify-pending plugins/files/inotify.c 'e2e-epoll-inotify-pending-refused' \
	'an inotify fd with events not read yet is not refused (they are lost)' \
	'	if (n > 0)
		return crf_error_errno(ENOTSUP,' \
	'	if (0)
		return crf_error_errno(ENOTSUP,'
mutant files-shell-termios plugins/files/tty-restore.c 'e2e-tty-shell-kill' \
	'a shell job'"'"'s terminal keeps the shell'"'"'s settings and size, not the job'"'"'s' \
	'		if (r == 0 && t->rec->external)
			r = give_settings(ttys, t->rec);' \
	'		if (0)
			r = give_settings(ttys, t->rec);'
mutant files-shell-foreground plugins/files/tty-restore.c 'e2e-tty-shell-kill' \
	'a shell job that had the foreground of its terminal comes back in the background' \
	'		if (r == 0 && t->rec->external && t->rec->has_fg_pid)' '		if (0)'

# --- ns, net, cgroup, devices plugins: their probes; cgroup membership ---
mutant ns-probe plugins/ns/probe.c 'cli' \
	'every namespace kind is reported missing' \
	'crf_probe_feature(ctx, feature, true, probe_kinds[i].required, "%s -> %s", path,' \
	'crf_probe_feature(ctx, feature, false, probe_kinds[i].required, "%s -> %s", path,'
mutant net-probe plugins/net/probe-diag.c 'cli' \
	'unix_diag is reported missing where it works' \
	'		crf_probe_feature(ctx, "unix-diag", true, true,' \
	'		crf_probe_feature(ctx, "unix-diag", false, true,'
# net: TCP and UDP sockets (docs/net.md)
mutant net-udp-datagram plugins/net/udp.c 'e2e-udp-kill' \
	'the oldest datagram of each UDP receive queue is not queued again (dump and restore)' \
	'	for (size_t i = 0; i < sk->n_rcvq; i++) {
		int e = inject(sk, sk->rcvq[i], name);' \
	'	for (size_t i = 1; i < sk->n_rcvq; i++) {
		int e = inject(sk, sk->rcvq[i], name);'
mutant net-udp-hold plugins/net/netlock.c 'e2e-udp-outside-leave e2e-udp-outside-kill' \
	'datagrams from outside land before the UDP queue the dump and the restore put back' \
	'	bool v4 = a->addr.len == 4 || inet_addr_is_mapped(a);
' \
	'	bool v4 = a->addr.len == 4 || inet_addr_is_mapped(a);
	return 0;
'
mutant net-udp-hold-restore plugins/net/udp.c 'e2e-udp-outside-kill' \
	'datagrams from outside land before the UDP queue the restore puts back' \
	'	if (sk->n_rcvq && (r = netlock_udp_hold(sk, name)) < 0)' \
	'	if (0 && sk->n_rcvq && (r = netlock_udp_hold(sk, name)) < 0)'
mutant net-sockopt plugins/net/sockopt.c 'e2e-udp-kill e2e-tcp-established-kill' \
	'the first saved socket option is not set again' \
	'		for (size_t i = 0; i < n; i++) {
			const Crf__Net__SockOpt *o = opts[i];
			const char *label' \
	'		for (size_t i = 1; i < n; i++) {
			const Crf__Net__SockOpt *o = opts[i];
			const char *label'
mutant net-buf-lock plugins/net/sockopt.c 'e2e-tcp-established-kill' \
	'the buffer size locks are not set as saved: setting a size locks it, autotuning stays off' \
	'	if (!bufs && !lock)
		return 0;' \
	'	return 0;'
mutant net-tcp-sendq plugins/net/tcp-repair.c 'e2e-tcp-established-kill' \
	'the sent but unacknowledged part of a TCP send queue is not restored' \
	'	if (write_queue(fd, TCP_SEND_QUEUE, c->send_queue.data, sent) < 0)' \
	'	if (0)'
mutant net-tcp-seq plugins/net/tcp-repair.c 'e2e-tcp-established-kill' \
	'a restored connection expects the byte after the one its peer sends next' \
	'	    set_int(fd, TCP_QUEUE_SEQ, (int)c->rcv_seq) < 0)' \
	'	    set_int(fd, TCP_QUEUE_SEQ, (int)c->rcv_seq + 1) < 0)'
mutant net-lock plugins/net/netlock.c 'e2e-tcp-outside-kill e2e-tcp-established-kill' \
	'no network lock: the peer outside the tree, still sending, is answered with a reset' \
	'	if (!buf)
		return -ENOMEM;
	snprintf(what, sizeof(what), "%s: the network lock", name);' \
	'	return 0;'
mutant cgroup-probe plugins/cgroup/probe.c 'cli' \
	'the cgroup v2 mount is reported missing where it is mounted' \
	'crf_probe_feature(ctx, "cgroup2-mount", true, true, "cgroup2 mounted at %s", mnt);' \
	'crf_probe_feature(ctx, "cgroup2-mount", false, true, "cgroup2 mounted at %s", mnt);'
mutant devices-probe plugins/devices/probe.c 'cli' \
	'tun is reported missing where /dev/net/tun works' \
	'		crf_probe_feature(ctx, "tun", true, false,' \
	'		crf_probe_feature(ctx, "tun", false, false,'

mutant cgroup-join plugins/cgroup/restore.c 'e2e-cgroup-kill e2e-cgroup-v1-kill' \
	'a process comes back in crf restore'"'"'s cgroups' \
	'		if (rs->moves[i].pid == pid && !rs->moves[i].tid && rs->moves[i].fd < 0)' '		if (0)'
mutant cgroup-thread-join plugins/cgroup/restore.c 'e2e-cgroup-thread-kill' \
	'a thread in a cgroup of its own comes back in its process'"'"'s' \
	'		if (!rs->moves[i].tid)
			continue;' \
	'		if (rs->moves[i].tid || !rs->moves[i].tid)
			continue;'

# --- cgroup settings, --manage-cgroups, --cgroup-root (issue 12) ---
mutant cgroup-props-dump plugins/cgroup/props.c 'e2e-cgroup-props' \
	'pids.max is not saved: a cgroup made again has no limit' \
	'		r = cg_add_prop(&d->props, &d->n_props, prop, text);' \
	'		r = strcmp(prop, "pids.max") && strcmp(prop, "cgroup.max.descendants") ? cg_add_prop(&d->props, &d->n_props, prop, text) : (free(text), 0);'
mutant cgroup-clone-into plugins/cgroup/prepare.c 'e2e-cgroup-kill e2e-cgroup-props' \
	'a process is not created in its cgroup v2 (CLONE_INTO_CGROUP), nor moved there' \
	'	r = crf_rst_clone_into_cgroup(ctx, m->pid, m->fd);' '	r = 0;'
mutant core-clone-into-cgroup core/restore/rst-fork.c 'e2e-cgroup-kill e2e-cgroup-props' \
	'clone3 ignores the cgroup a plugin asked a process to be created in' \
	'		.flags = flags | (cgroup >= 0 ? CLONE_INTO_CGROUP : 0),' '		.flags = flags,'
mutant cgroup-ns-root plugins/cgroup/cgns.c 'e2e-cgroup-props' \
	'the cgroup namespace is made in crf restore'"'"'s cgroups, not in its root' \
	'		r = enter(rs, ns->roots[i]->controllers, ns->roots[i]->path, obj->pid);' \
	'		r = 0;'
mutant cgroup-ns-check plugins/cgroup/cgns.c 'e2e-cgroup-props' \
	'the restored cgroup namespace is not checked from inside (a wrong root passes)' \
	'		if (!m || !want || strcmp(m->path, want)) {' '		if (0) {' \
	'		r = enter(rs, ns->roots[i]->controllers, ns->roots[i]->path, obj->pid);' \
	'		r = 0;'
mutant cgroup-unsaved-refused plugins/cgroup/unsaved.c 'e2e-cgroup-props e2e-cgroup-settings' \
	'a setting crf does not restore (memory.oom_control, memory.swappiness) is dumped without a word' \
	'	if (!keep && !as_new(value, dflt, k, *s->dir)) {' '	if (0) {'
mutant cgroup-unsaved-any-file plugins/cgroup/unsaved.c 'e2e-cgroup-settings' \
	'only the settings of crf'"'"'s table are checked, not every writable file (memory.swappiness, cgroup.pressure)' \
	'	return (st.st_mode & S_IRUSR) && (st.st_mode & S_IWUSR);' '	return false;'
mutant cgroup-unsaved-table plugins/cgroup/unsaved.c 'e2e-cgroup-settings' \
	'with no scratch cgroup, the table takes a changed cgroup.pressure for the default' \
	'	{"cgroup.pressure", NULL, "1"},' '	{"cgroup.pressure", NULL, "0"},'
mutant cgroup-scratch-left plugins/cgroup/unsaved.c 'e2e-cgroup-settings' \
	'the scratch cgroup made beside a cgroup of the tree is left behind' \
	'	scratch_drop(&s);
	return r;' '	return r;'
mutant cgroup-checked-saved plugins/cgroup/unsaved.c 'e2e-cgroup-settings' \
	'the other settings are not saved: the restore cannot check them' \
	'	return cg_add_prop(&d->checked, &d->n_checked, file, TAKE_PTR(value));' '	return 0;'
mutant cgroup-checked-verify plugins/cgroup/manage.c 'e2e-cgroup-settings' \
	'a setting crf does not write that differs at restore from the dump'"'"'s is not refused' \
	'		if (strcmp(now, p->value)) {' '		if (0) {'
mutant cgroup-dump-keep plugins/cgroup/props.c 'e2e-cgroup-settings' \
	'manage-cgroups = none at the dump still refuses a setting that differs' \
	'	bool keep = mode && (!strcmp(mode, "none") || !strcmp(mode, "props"));' \
	'	bool keep = mode && 0;'
mutant cgroup-props-write plugins/cgroup/manage.c 'e2e-cgroup-props' \
	'the saved settings are never written back' \
	'		r = write_prop(dir, d->props[i]);' '		r = 0;'
mutant cgroup-props-verify plugins/cgroup/manage.c 'e2e-cgroup-props' \
	'a setting that differs from the saved one is not refused' \
	'		if (!strcmp(now, p->value))
			continue;' '		continue;'
mutant cgroup-manage-default plugins/cgroup/manage.c 'e2e-cgroup-props' \
	'the default mode is props (a cgroup that is gone is refused), not soft' \
	'	rs->mode = CG_SOFT;' '	rs->mode = CG_PROPS;'
mutant cgroup-root-ignored plugins/cgroup/manage.c 'e2e-cgroup-props' \
	'--cgroup-root is ignored: the tree comes back where it was' \
	'		if (strcmp(rs->hiers[i]->controllers, controllers) || !nr)' '		if (1)'
mutant cgroup-unmake plugins/cgroup/manage.c 'e2e-cgroup-props' \
	'a refused restore leaves the cgroups it made' \
	'		for (int i = 0; rmdir(dir) < 0 && errno == EBUSY && i < 200; i++)' \
	'		for (int i = 0; 0 && errno == EBUSY && i < 200; i++)'

# --- the integrated container test (tests/e2e/container.sh, docs/containers.md) ---
mutant container-cgns-join-by-path plugins/cgroup/cgns.c 'e2e-container-kill' \
	'the cgroup namespace handler joins its roots by crf'"'"'s paths, which a process pivoted into its container cannot reach' \
	'	fd = cg_open_at_mount(rs, file, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) < 0)' \
	'	fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) < 0)'
mutant container-mnt-fds-root plugins/cgroup/mntfd.c 'e2e-container-kill e2e-cgroup-props' \
	'a cgroup mount'"'"'s own root (a cgroup namespace root "/") is opened as an absolute path' \
	'	for (rest = file + len; *rest == '"'"'/'"'"'; rest++)' '	for (rest = file + len; 0; rest++)'
mutant container-shared-socket plugins/files/kinds.c 'e2e-container-shared-socket-refused' \
	'a socket two processes of a net namespace not crf'"'"'s hold is let through (and made in crf'"'"'s)' \
	'		if (strcmp(link, self))' '		if (0)'

# --- fd kinds through the registry (issue 10) ---
mutant registry-restore-any-plugin core/lib/registry.c 'e2e-vendor-eventfd' \
	'the restore takes the first enabled handler of the kind, not the recorded plugin'"'"'s' \
	'		if (plugin && strcmp(e->owner->name, plugin))' '		if (0)'
mutant registry-restore-any-kind core/lib/registry.c 'e2e-anonfds-kill' \
	'the restore calls the first handler of the class, whatever the kind' \
	'		if (e->kind->cls != obj->cls || strcmp(e->kind->name, obj->kind))' \
	'		if (e->kind->cls != obj->cls)'
mutant registry-owner-ctx core/lib/registry.c 'e2e-vendor-eventfd' \
	'a kind'"'"'s handler runs with the caller'"'"'s context (its config and priv), not its plugin'"'"'s' \
	'	own.plugin = e->owner;' '	(void)e;'
mutant files-kind-not-recorded plugins/files/fdattr.c 'e2e-vendor-eventfd' \
	'the fd records lose the kind and plugin they were dumped by' \
	'	if (!e->kind && d->cur_kind) {' '	if (0) {'
mutant files-payload-lost plugins/files/kinds.c 'e2e-vendor-eventfd' \
	'the payload another plugin'"'"'s kind saves is not written to the fd'"'"'s record' \
	'		if (r == 0 && saved.buf) {' '		if (0) {'
mutant files-foreign-direct plugins/files/fdtable.c 'e2e-vendor-eventfd' \
	'another plugin'"'"'s fd kind is called as if it were the files plugin'"'"'s own' \
	'		if (d->cur_plugin && strcmp(d->cur_plugin, crf_ctx_plugin(ctx)))' '		if (0)'
mutant files-kinds-check-skipped plugins/files/fdtable.c 'e2e-eventfd-kind-off-restore' \
	'restore-prepare does not check the fds'"'"' kinds: a switched-off one fails after the fork' \
	'		r = files_kinds_check(ctx);' '		r = 0;'
# --- crf plugins' kinds, libcrf's version nodes, the loader's ABI checks ---
mutant plugins-kinds-off-unmarked core/cli/cmd-plugins.c 'cli' \
	'crf plugins lists a switched-off kind like any other' \
	'off = kind_off(pi, k->name);' 'off = false;'
mutant plugins-kinds-off-omitted core/cli/cmd-plugins.c 'cli' \
	'crf plugins leaves switched-off kinds out of the listing' \
	'	for (const struct crf_kind *k = first; k->name; k++) {' \
	'	for (const struct crf_kind *k = first; k->name; k++) {
		if (kind_off(pi, k->name))
			continue;'
mutant loader-newer-minor core/host/loader.c 'loader' \
	'the loader accepts a plugin built against a newer ABI minor' \
	'd->abi_minor > CRF_PLUGIN_ABI_MINOR)' 'd->abi_minor > CRF_PLUGIN_ABI_MINOR + 1)'
mutant loader-newer-libcrf core/host/loader.c 'cli' \
	'a plugin that needs a newer libcrf version node gets only dlopen'"'"'s words' \
	'		if (newer_libcrf(pi->path, e, msg, sizeof(msg)))' \
	'		if (0 && newer_libcrf(pi->path, e, msg, sizeof(msg)))'
mutant libcrf-node-missing core/lib/libcrf.sym 'cli' \
	'libcrf has no version node for the newest ABI minor' \
	'CRF_1.5 {' 'CRF_1.9 {' '} CRF_1.5;' '} CRF_1.9;'
mutant img-finish-closes-failed core/lib/image.c 'image' \
	'crf_img_finish() keeps the image a failed writer wrote' \
	'	if (r >= 0)
		return crf_img_close(img);' \
	'	if (r >= 0 || r == -EIO)
		return crf_img_close(img);'
mutant unix-queue-dropped plugins/net/unix-queue.c 'e2e-unix-pair-stream-kill' \
	'the data queued on a unix socket is not queued again at restore' \
	'	for (size_t i = 0; i < m->n_rqueue; i++) {
		int r = unix_queue_send(peer, m, i, false, what);' \
	'	for (size_t i = 0; i < 0 * m->n_rqueue; i++) {
		int r = unix_queue_send(peer, m, i, false, what);'
mutant unix-boundaries-merged plugins/net/unix-queue.c 'e2e-unix-pair-seqpacket-kill' \
	'a seqpacket queue is read as a byte stream: its messages run into one' \
	'	if (r == 0 && m->type == SOCK_STREAM)
		r = read_stream(fd, m, w);' \
	'	if (r == 0 && m->type != SOCK_DGRAM)
		r = read_stream(fd, m, w);'
mutant unix-peek-off-kept plugins/net/unix-queue.c 'e2e-unix-pair-stream-leave' \
	'the dump leaves SO_PEEK_OFF where its peeks moved it' \
	'	if (setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &m->peek_off, sizeof(m->peek_off)) && r == 0)' \
	'	if (0 && r == 0)'
mutant unix-shutdown-lost plugins/net/unix-make.c 'e2e-unix-pair-stream-kill' \
	'a unix socket comes back without its shutdown state' \
	'	if (m->shutdown & 3 && shutdown(fd, how[m->shutdown & 3]))' \
	'	if (0 && shutdown(fd, how[m->shutdown & 3]))'
mutant unix-name-lost plugins/net/unix-make.c 'e2e-unix-abstract-kill e2e-unix-bound-path-kill' \
	'a unix socket comes back without the name it was bound to' \
	'	if (!m->has_name)
		return 0;
	is_path' \
	'	if (!m->has_name || m->name.len)
		return 0;
	is_path'
mutant unix-senders-lost plugins/net/unix-restore.c 'e2e-unix-abstract-kill' \
	'every queued datagram is sent again from an unnamed socket, whoever sent it' \
	'	if (k < m->n_senders && m->senders[k].len) {' \
	'	if (0 && k < m->n_senders) {'
mutant unix-peercred-unchecked plugins/net/unix-peercred.c 'e2e-unix-peercred-refused' \
	'a listener or connection is restored without --unix-peercred-crf: its SO_PEERCRED then names crf restore' \
	'		if (accept)
			continue;' '		continue;'
mutant unix-creds-lost plugins/net/unix-queue.c 'e2e-unix-creds-refused' \
	'bytes queued with their sender'"'"'s credentials are restored without them' \
	'	if (r == 0 && w.credited)' \
	'	if (0 && w.credited)'
mutant unix-passcred-left-on plugins/net/unix-queue.c 'e2e-unix-creds-refused e2e-unix-pair-stream-leave' \
	'the dump leaves SO_PASSCRED on where its walk of the queue turned it on' \
	'	p = m->passcred ? 0 : passcred(fd, 0, what);' \
	'	p = 0;'
mutant unix-dgram-left-unconnected plugins/net/unix-restore.c 'e2e-unix-abstract-kill e2e-unix-bound-path-kill' \
	'a datagram socket connected to by one since closed comes back unconnected' \
	'			r = m->state == TCP_ESTABLISHED ? mark_connected(m, what) : 0;' \
	'			r = 0;'
mutant unix-chroot-root-ignored plugins/net/unix-dump.c 'e2e-unix-chroot-refused' \
	'a path name bound under a chrooted task'"'"'s root is bound in crf'"'"'s root at the restore' \
	'	if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)' \
	'	if (1 || a.st_ino == b.st_ino)'
# ns: UTS and time namespaces (docs/ns-uts-ipc-time.md)
mutant ns-uts-hostname plugins/ns/uts.c 'e2e-uts-kill' \
	'a restored UTS namespace loses the last byte of its hostname' \
	'sethostname(m->hostname, strlen(m->hostname))' 'sethostname(m->hostname, strlen(m->hostname) - 1)'
mutant ns-uts-domainname plugins/ns/uts.c 'e2e-uts-kill' \
	'a restored UTS namespace keeps the domain name crf had' \
	'	    setdomainname(m->domainname, strlen(m->domainname)) < 0)' '	    0)'
mutant ns-uts-inherited plugins/ns/uts.c 'e2e-uts-kill' \
	'a process that inherited its restored UTS namespace makes one of its own' \
	'	if (ni->inherited)
		return 0;
	r = uts_read_image' '	r = uts_read_image'
mutant ns-time-nsec plugins/ns/time.c 'e2e-timens-enter-kill' \
	'the offsets of a time namespace lose their nanoseconds' \
	'		off[c] = sec * NSEC + nsec;' '		off[c] = sec * NSEC;'
mutant ns-time-boottime plugins/ns/time.c 'e2e-timens-enter-kill' \
	'a restored time namespace gets its monotonic offset for CLOCK_BOOTTIME too' \
	'	saved->off[BOOT] = m->boottime_sec * NSEC + m->boottime_nsec;' \
	'	saved->off[BOOT] = m->monotonic_sec * NSEC + m->monotonic_nsec;'
mutant ns-time-raise plugins/ns/time.c 'e2e-timens-moved-enter e2e-timens-moved-children' \
	'a time namespace restored on another boot keeps its offsets: its clocks go back' \
	'		if (host + off[c] < saved->now[c])' '		if (0)'
mutant ns-time-join plugins/ns/time.c 'e2e-timens-enter-kill' \
	'a restored time namespace is made for the children only, never joined' \
	'	if (setns(fd, CLONE_NEWTIME) < 0)
		return crf_error_errno(errno, "pid %d: namespace %s: join it"' \
	'	if (0)
		return crf_error_errno(errno, "pid %d: namespace %s: join it"'
mutant ns-time-rejoin plugins/ns/time.c 'e2e-timens-both-kill' \
	'a child in the time namespace its parent left for another (unshare) stays in the other' \
	'	if (fd >= 0 && same_ns(fd, "/proc/self/ns/time"))' '	if (fd >= 0)'
mutant ns-time-children-apart plugins/ns/time.c 'e2e-timens-both-kill e2e-timens-children-kill' \
	'a time_for_children namespace apart from the time one is taken for it' \
	'	if (fd >= 0 && same_ns(fd, "/proc/self/ns/time_for_children"))
		return 0;' \
	'	if (fd >= 0 || 1)
		return 0;'
mutant ns-time-own-children plugins/ns/claims.c 'e2e-timens-children-kill' \
	'a child forked into its parent'"'"'s time_for_children, in crf'"'"'s at the dump, stays there' \
	'		if (!strcmp(ns_kinds[i], "time_for_children"))
			snprintf(path, sizeof(path), "/proc/self/ns/time");
		else if' '		if'
mutant ns-time-owner plugins/ns/time.c 'e2e-timens-owned-refused' \
	'a time namespace owned by another user namespace is restored owned by crf'"'"'s' \
	'	r = ns_check_owner(obj, fd);
	if (r >= 0)
		r = boot_id' '	r = boot_id'
mutant ns-ipc-first-msg plugins/ns/ipc.c 'e2e-ipc-kill' \
	'the first message of each SysV queue is not saved' \
	'	for (size_t i = 0; i < qnum; i++) {
		ssize_t len' '	for (size_t i = 1; i < qnum; i++) {
		ssize_t len'
mutant ns-ipc-msg-type plugins/ns/ipc.c 'e2e-ipc-kill' \
	'every saved SysV message comes back of type 1' \
	'		m->mtype = buf->mtype;' '		m->mtype = 1;'
mutant ns-ipc-copy plugins/ns/ipc.c 'e2e-ipc-leave e2e-ipc-kill' \
	'the dump takes the SysV messages off their queue (no MSG_COPY)' \
	'(long)i, IPC_NOWAIT | MSG_COPY);' '0, IPC_NOWAIT);'
mutant ns-ipc-qbytes plugins/ns/ipc-restore.c 'e2e-ipc-kill' \
	'a SysV queue comes back with the default size, not its own' \
	'	ds.msg_qbytes = q->qbytes;' ''
mutant ns-ipc-id plugins/ns/ipc-restore.c 'e2e-ipc-kill' \
	'SysV message queues come back at the ids the kernel hands out' \
	'	int id, r = ns_ipc_next_id("msg", q->perm->id);' '	int id, r = 0;'
mutant ns-ipc-creator plugins/ns/ipc-restore.c 'e2e-ipc-kill' \
	'SysV objects come back made by crf (cuid, cgid 0)' \
	'	if (setegid(p->cgid) < 0 || seteuid(p->cuid) < 0) {' '	if (0) {'
mutant ns-ipc-mode plugins/ns/ipc-restore.c 'e2e-ipc-kill' \
	'SysV objects come back with mode 0600' \
	'	to->mode = (unsigned short)(p->mode & 0777);' ''
mutant ns-ipc-sem-values plugins/ns/ipc-restore.c 'e2e-ipc-kill' \
	'semaphore sets come back with every value 0' \
	'	if (semctl(id, 0, SETALL, v) < 0 || semctl(id, 0, IPC_STAT, &ds) < 0)' \
	'	if (semctl(id, 0, IPC_STAT, &ds) < 0)'
mutant ns-ipc-sysctls plugins/ns/ipc-restore.c 'e2e-ipc-kill' \
	'the ipc sysctls of a restored namespace are a new one'"'"'s' \
	'		if (!shm_sysctl(ns->sysctls[i]->name))
			r = write_sysctl(ns->sysctls[i]->name, ns->sysctls[i]->value);' \
	'		if (!shm_sysctl(ns->sysctls[i]->name))
			r = 0;'
mutant ns-ipc-inherited plugins/ns/ipc-restore.c 'e2e-ipc-kill' \
	'a restored IPC namespace is made again in every process that inherited it' \
	'	if (ni->inherited)
		return 0;
	r = read_image(ctx, ni->id, &ns);' '	r = read_image(ctx, ni->id, &ns);'
mutant ns-ipc-owner plugins/ns/ipc.c 'e2e-ipc-owned-refused' \
	'an IPC namespace owned by the task'"'"'s user namespace is not refused (its ids would be crf'"'"'s view)' \
	'	r = ns_check_owner(obj, fd);
	if (r >= 0)
		r = read_ns' '	r = 0;
	if (r >= 0)
		r = read_ns'
mutant ns-ipc-shm-contents plugins/ns/ipc-shm.c 'e2e-ipc-shm-kill' \
	'a SysV segment of an IPC namespace comes back with every byte zero' \
	'			memcpy(p + d->offset, d->data.data, d->data.len);' '			(void)p;'
mutant ns-ipc-shm-holes-read plugins/ns/ipc-shm.c 'e2e-ipc-shm-leave' \
	'the dump reads every page of a SysV segment, holes too (the running program'"'"'s segment grows)' \
	'		r = save_one(ctx, nsid, ns->shms[i], at[i], no_swap());' \
	'		r = save_one(ctx, nsid, ns->shms[i], at[i], false);'
mutant ns-ipc-shm-lock plugins/ns/ipc-shm.c 'e2e-ipc-shm-kill' \
	'a SysV segment locked with SHM_LOCK comes back unlocked' \
	'	if (s->locked && shmctl(id, SHM_LOCK, NULL) < 0)' '	if (0 && shmctl(id, SHM_LOCK, NULL) < 0)'
mutant ns-ipc-shm-owner plugins/ns/ipc-shm.c 'e2e-ipc-shm-kill' \
	'a SysV segment comes back owned by its creator, not its owner' \
	'	ds.shm_perm.uid = s->perm->uid;' ''
mutant ns-ipc-shm-id plugins/ns/ipc-shm.c 'e2e-ipc-shm-kill' \
	'SysV segments of an IPC namespace come back at the ids the kernel hands out' \
	'	int id, r = ns_ipc_next_id("shm", s->perm->id);' '	int id, r = 0;'
mutant ns-ipc-shm-limits-first plugins/ns/ipc-restore.c 'e2e-ipc-shm-kill' \
	'kernel.shm_rmid_forced and the shm limits are written before the segments (an unattached one is destroyed)' \
	'		if (!shm_sysctl(ns->sysctls[i]->name))
			r = write_sysctl' '		if (1)
			r = write_sysctl' \
	'		if (shm_sysctl(ns->sysctls[i]->name))
			r = write_sysctl' '		if (0)
			r = write_sysctl'
mutant ns-ipc-shm-dest-let-through plugins/ns/ipc-shm.c 'e2e-ipc-shm-dest-refused' \
	'a SysV segment removed while attached, in an IPC namespace, is not refused (and comes back not removed)' \
	'	if (ds->shm_perm.mode & SHM_DEST)' '	if (0)'
mutant ns-ipc-shm-forced-let-through plugins/ns/ipc-shm.c 'e2e-ipc-shm-forced-refused' \
	'an unattached SysV segment under shm_rmid_forced is not refused (its creator is not restored)' \
	'	if (rmid_forced && !ds->shm_nattch)' '	if (0)'
mutant mem-sysv-ns-as-crfs plugins/mem/sysv.c 'e2e-ipc-shm-kill' \
	'mem looks a segment of the task'"'"'s IPC namespace up in crf'"'"'s' \
	'	if (ns)
		return ns_segment(pid, v, shmid);' ''
mutant ns-ipc-mq-prio plugins/ns/ipc-mq.c 'e2e-ipc-mqueue-kill' \
	'POSIX messages come back all of priority 0, in the order they were saved' \
	'			    q->msgs[i]->data.len, q->msgs[i]->prio) < 0)' \
	'			    q->msgs[i]->data.len, 0) < 0)'
mutant ns-ipc-mq-first-lost plugins/ns/ipc-mq.c 'e2e-ipc-mqueue-leave e2e-ipc-mqueue-kill' \
	'the dump puts every POSIX message back but the first (and does not notice)' \
	'	for (size_t i = 0; i < q->n_msgs; i++)
		if (mq_send(mqd,' '	for (size_t i = 1; i < q->n_msgs; i++)
		if (mq_send(mqd,' \
	'	if (r >= 0 && (mq_getattr(mqd, &a) < 0 || a.mq_curmsgs != cur))' \
	'	if (r >= 0 && mq_getattr(mqd, &a) < 0)'
mutant ns-ipc-mq-sizes plugins/ns/ipc-mq.c 'e2e-ipc-mqueue-kill' \
	'POSIX queues come back with the default mq_maxmsg and mq_msgsize' \
	'O_NONBLOCK | O_CLOEXEC, 0600, &a);' 'O_NONBLOCK | O_CLOEXEC, 0600, NULL);'
mutant ns-ipc-mq-mode plugins/ns/ipc-mq.c 'e2e-ipc-mqueue-kill' \
	'POSIX queues come back owned by root, mode 0600' \
	'	if (r >= 0 && (fchown(mqd, q->uid, q->gid) < 0 || fchmod(mqd, q->mode) < 0))' \
	'	if (0)'
mutant ns-ipc-mq-notify-let-through plugins/ns/ipc-mq.c 'e2e-ipc-mqueue-notify-refused' \
	'a POSIX queue with an mq_notify registration is not refused (nor the registration restored)' \
	'	if (r >= 0 && pid)
		return' '	if (0)
		return'
mutant files-mqueue-as-file plugins/files/fdtable.c 'e2e-ipc-mqueue-fd-kill e2e-ipc-mqueue-host-refused' \
	'an open POSIX message queue is taken for a regular file (reopened by its name in crf'"'"'s root)' \
	'	if (S_ISREG(st->st_mode) && is_mqueue(d, fd))' '	if (0)'
mutant ns-ipc-mqfd-nonblock plugins/ns/ipc-mqfd.c 'e2e-ipc-mqueue-fd-kill' \
	'an open POSIX queue comes back blocking' \
	'	m = mq_open(fi->path, (int)(fi->flags & MQ_FLAGS));' \
	'	m = mq_open(fi->path, (int)(fi->flags & O_ACCMODE));'
mutant ns-ipc-mqfd-shared-let-through plugins/ns/ipc-mqfd.c 'e2e-ipc-mqueue-fd-shared-refused' \
	'an open POSIX queue shared by two processes is not refused at the dump (the restore fails)' \
	'	if (r > 0)
		return crf_error_errno(ENOTSUP,' '	if (0)
		return crf_error_errno(ENOTSUP,'
mutant ns-ipc-mqfd-unlinked-let-through plugins/ns/ipc-mqfd.c 'e2e-ipc-mqueue-unlinked-refused' \
	'an open POSIX queue unlinked since is not refused' \
	'	if (id.dev != st.st_dev || id.ino != st.st_ino)' '	if (0)'
mutant ns-ipc-mqfd-other-ns plugins/ns/ipc-mqfd.c 'e2e-ipc-mqueue-host-refused' \
	'an open POSIX queue of crf'"'"'s namespace held by a task in another is not told apart' \
	'	if (id.fs != st.st_dev)' '	if (0)'
mutant ns-ipc-mqfd-cloexec-let-through plugins/ns/ipc-mqfd.c 'e2e-ipc-mqueue-fd-cloexec-refused' \
	'an open POSIX queue opened with O_CLOEXEC is not refused (its fd comes back close-on-exec, maybe wrongly)' \
	'	if (r & O_CLOEXEC)' '	if (0)'
mutant special-uts-match tests/plugins/special.c 'e2e-special-uts-kind-off-refused' \
	'the test plugin'"'"'s UTS handler no longer matches: ns claims its namespace by name' \
	'	return obj->data && uts_read(obj->pid, &u) >= 0 &&' '	return !obj->data && uts_read(obj->pid, &u) >= 0 &&'

# --- ns plugin: mount namespaces (plugins/ns/mnt*.c, docs/ns-mnt.md) ---
mutant ns-mnt-tmpfs-file-lost plugins/ns/mnt-tmpfs.c 'e2e-mnt-kill' \
	'a tmpfs file comes back empty (its contents are not written)' \
	'		for (size_t off = 0; off < n->data.len;) {' \
	'		for (size_t off = n->data.len; off < n->data.len;) {'
mutant ns-mnt-dir-times-lost plugins/ns/mnt-tmpfs.c 'e2e-mnt-kill' \
	'a tmpfs directory keeps the times of its restore, not of the dump' \
	'		if (r >= 0)
			r = set_times(root, dirs[i].path, dirs[i].ts, where);' \
	'		if (0)
			r = set_times(root, dirs[i].path, dirs[i].ts, where);'
mutant ns-mnt-flag-lost plugins/ns/mnt-restore.c 'e2e-mnt-kill' \
	'noexec is dropped from every mount'"'"'s flags at the restore' \
	'	a.attr_set = attr;' '	a.attr_set = attr & ~(uint64_t)MOUNT_ATTR_NOEXEC;'
mutant ns-mnt-propagation-lost plugins/ns/mnt-restore.c 'e2e-mnt-kill' \
	'a shared mount comes back private' \
	'		if (e->shared && mount(' '		if (0 && e->shared && mount('
mutant ns-mnt-unmount-skipped plugins/ns/mnt-restore.c 'e2e-mnt-slave' \
	'a mount of crf'"'"'s the namespace did not have stays in the restored one' \
	'		if (keep[k])
			continue;' \
	'		if (1)
			continue;'
mutant ns-mnt-bind-source-wrong plugins/ns/mnt.c 'e2e-mnt-kill' \
	'a bind mount'"'"'s source is taken as its filesystem'"'"'s mount point, unchecked' \
	'		rest = strcmp(c->root, "/") ? m->root + rl : m->root;' '		rest = "";' \
	'		if (stat(src, &sst) == 0 && sst.st_dev == st->st_dev && sst.st_ino == st->st_ino) {' \
	'		if (stat(src, &sst) == 0) {'
mutant ns-mnt-fd-on-new-fs plugins/ns/mnt.c 'e2e-mnt-fd-refused' \
	'an fd on a tmpfs the restore makes anew is not refused' \
	'	if (r >= 0)
		r = check_files(&d);' \
	'	if (0)
		r = check_files(&d);'
mutant ns-mnt-pivot-skipped plugins/ns/mnt-restore.c 'e2e-mnt-container-kill' \
	'a container'"'"'s tree is built but not pivoted into: the task stays in crf'"'"'s root' \
	'	if (r >= 0 && s.stage)
		r = pivot(&s);' \
	'	if (0)
		r = pivot(&s);'
mutant ns-mnt-outside-fd plugins/ns/mnt.c 'e2e-mnt-container-outside-fd-refused' \
	'an fd of a container'"'"'s task on a mount outside the container is not refused' \
	'	return mnt_table_find(&d->t, *id) == NULL;' '	return 0;'
mutant ns-mnt-external-not-marked plugins/ns/mnt.c 'e2e-mnt-external' \
	'crf dump --external mnt[MP]:KEY is ignored: the mount is saved as a bind' \
	'	d->src[i] = mnt_external(d->ctx, m->mount_point, &r);' '	d->src[i] = mnt_external(d->ctx, "", &r);'
mutant ns-mnt-root-ignored plugins/ns/mnt-restore.c 'e2e-mnt-external' \
	'crf restore --root DIR is ignored: the container comes back in its old rootfs' \
	'		if (i == 0 && s->root)
			src = s->root;' \
	'		if (0)
			src = s->root;'
mutant ns-mnt-foreign-fs-as-bind plugins/ns/mnt.c 'e2e-mnt-loop-refused e2e-mnt-ramfs-refused' \
	'a filesystem made in the namespace of a type crf does not make is taken for a bind' \
	'	if (!theirs)
		return refuse(' \
	'	if (0)
		return refuse('
# runc's container (tests/e2e/runc-mnt.sh): devpts, binds of parts of new filesystems, order
mutant ns-mnt-devpts-pty-kept plugins/ns/mnt.c 'e2e-mnt-devpts-refused e2e-runc-mnt-pty-refused' \
	'a devpts of its own with a pty in it is not refused (it comes back empty)' \
	'			return strcmp(m->fstype, "devpts") ? 0 : devpts_empty(d, m);' \
	'			return 0;'
mutant ns-mnt-newbind-root-lost plugins/ns/mnt-restore.c 'e2e-runc-mnt-exact e2e-mnt-kill' \
	'a bind of a part of a filesystem made in the namespace comes back as a bind of all of it' \
	'	s->fd[i] = (int)syscall(SYS_open_tree, s->fd[k], strcmp(e->root, "/") ? e->root + 1 : "",' \
	'	s->fd[i] = (int)syscall(SYS_open_tree, s->fd[k], "",' \
	'					(strcmp(e->root, "/") ? 0 : AT_EMPTY_PATH));' \
	'					AT_EMPTY_PATH);'
mutant ns-mnt-strictatime-lost plugins/ns/mnt-info.c 'e2e-runc-mnt-exact' \
	'a mount with strictatime (no atime option shown: runc'"'"'s /dev) comes back relatime' \
	'		*attr |= MOUNT_ATTR_STRICTATIME;' '		*attr |= 0;'
mutant ns-mnt-before-net plugins/ns/kinds.c 'e2e-runc-mnt-exact' \
	'the mount namespace is restored before the net one: its sysfs is crf'"'"'s net namespace'"'"'s' \
	'	"user",
	"net",' \
	'	"user",
	"mnt",
	"net",' \
	'	/* After net, ipc, cgroup: its sysfs, mqueue, cgroup mounts are theirs (mnt-fs.c). */
	"mnt",' \
	''
mutant ns-mnt-before-ipc plugins/ns/kinds.c 'e2e-runc-mnt-exact' \
	'the mount namespace is restored before the IPC one: its mqueue is crf'"'"'s IPC namespace'"'"'s' \
	'	"ipc",
	"cgroup",' \
	'	"cgroup",' \
	'	"mnt",
	"time",' \
	'	"mnt",
	"ipc",
	"time",'
mutant cgroup-v1-join-by-path plugins/cgroup/restore.c 'e2e-runc-mnt-exact e2e-container-kill' \
	'a v1 cgroup is joined by its path in the restored mount namespace (a container'"'"'s: read-only, or not there)' \
	'	fd = m->procs >= 0 ? dup(m->procs) : cg_open_at_mount(rs, file, O_WRONLY | O_CLOEXEC);' \
	'	fd = open(file, O_WRONLY | O_CLOEXEC);'
# net: network namespaces (docs/ns-net.md)
mutant netns-addr-label plugins/net/netns.c 'e2e-netns-lo-kill' \
	'an IPv4 address'"'"'s label is not saved: the restored address has none' \
	'	if (r >= 0 && rtnl_addr_get_label(a) && s->family == AF_INET) {' \
	'	if (0 && r >= 0 && rtnl_addr_get_label(a) && s->family == AF_INET) {'
mutant netns-lifetime plugins/net/netns.c 'e2e-netns-lifetime-refused' \
	'an address with a lifetime is saved as a permanent one' \
	'	if (rtnl_addr_get_valid_lifetime(a) != 0xffffffffu ||
	    rtnl_addr_get_preferred_lifetime(a) != 0xffffffffu)' \
	'	if (0)'
mutant netns-link-kind plugins/net/netns.c 'e2e-netns-vxlan-refused' \
	'a link of any kind is taken for lo' \
	'		return "veth";
	return NULL;' \
	'		return "veth";
	return "loopback";'
mutant netns-mtu plugins/net/netns-restore.c 'e2e-netns-lo-kill' \
	'a link'"'"'s MTU and queue length are not set again (nor checked)' \
	'		rtnl_link_set_mtu(chg, ln->mtu);
		rtnl_link_set_txqlen(chg, ln->txqlen);' \
	'' \
	'		if (!l || rtnl_link_get_mtu(l) != ln->mtu ||
		    rtnl_link_get_txqlen(l) != ln->txqlen ||' \
	'		if (!l ||'
mutant netns-route-table plugins/net/netns-route.c 'e2e-netns-lo-kill' \
	'the routes of table 100 are not saved' \
	'	if (w->r < 0 || (rtnl_route_get_flags(r) & RTM_F_CLONED))' \
	'	if (w->r < 0 || (rtnl_route_get_flags(r) & RTM_F_CLONED) || rtnl_route_get_table(r) == 100)'
mutant netns-sysctl plugins/net/netns-sysctl.c 'e2e-netns-lo-kill' \
	'the sysctls are not written at restore (only checked)' \
	'	if (r == 0 && !strcmp(cur, s->value))
		return 0;' \
	'	if (1)
		return 0;'
mutant netns-sysctl-same plugins/net/netns-sysctl.c 'e2e-netns-lo-kill' \
	'only the sysctls that differ from a fresh namespace'"'"'s are saved: conf/lo/forwarding 0 comes back 1 (copied from all/)' \
	'	*differ += !same;' '	if (same)
		return 0;'
mutant netns-sysctl-ro plugins/net/netns-sysctl.c 'e2e-netns-sysctl-ro-refused' \
	'a read-only sysctl that differs from a fresh namespace'"'"'s is not refused' \
	'		if (ref && !same)' '		if (0)'
mutant netns-nft plugins/net/netns-check.c 'e2e-netns-lo-kill' \
	'the nftables ruleset is not replayed at restore' \
	'	if (!ns->nft_ruleset)
		return 0;' \
	'	if (1 || !ns->nft_ruleset)
		return 0;'
mutant netns-rules plugins/net/netns-check.c 'e2e-netns-rule-refused' \
	'routing rules of its own are not refused (nor restored)' \
	'	if (have->over || have->raw_len != fresh->raw_len ||' '	if (0 &&'
mutant netns-rules-raw plugins/net/netns-check.c 'e2e-netns-rule-hidden-refused' \
	'the routing rules are compared by the text libnl prints, which has no uid range' \
	'	if (have->over || have->raw_len != fresh->raw_len ||
	    memcmp(have->raw, fresh->raw, have->raw_len))' \
	'	if (strcmp(have->text, fresh->text))'
mutant netns-proxy plugins/net/netns-check.c 'e2e-netns-proxy-refused' \
	'a proxy neighbour entry is not refused (nor restored)' \
	'	return r < 0 ? r : check_proxy(links, what);' \
	'	return r < 0 ? r : 0 * check_proxy(links, what);'
mutant netns-qdisc plugins/net/netns-check.c 'e2e-netns-qdisc-refused' \
	'a tc qdisc of its own on a link is not refused (nor restored)' \
	'	if (w->r < 0 || (kind && (!strcmp(kind, "noqueue") || !strcmp(kind, "noop"))))' \
	'	if (1)'
mutant netns-veth-master plugins/net/netns-veth.c 'e2e-netns-veth-kill' \
	'a veth'"'"'s peer is not made a port of its bridge again' \
	'		if (br)
			rtnl_link_set_master' \
	'		if (0 && br)
			rtnl_link_set_master'
mutant netns-veth-ifindex plugins/net/netns-veth.c 'e2e-netns-veth-kill' \
	'the ends of a veth get new ifindexes' \
	'	rtnl_link_set_ifindex(l, (int)ln->ifindex);' ''
mutant netns-veth-mac plugins/net/netns-veth.c 'e2e-netns-veth-kill' \
	'the ends of a veth get new MAC addresses' \
	'		rtnl_link_set_addr(l, mac);' ''
mutant netns-veth-queues plugins/net/netns-veth.c 'e2e-netns-veth-kill' \
	'the ends of a veth get the default numbers of queues' \
	'	if (ln->has_tx_queues)' '	if (0)'
mutant netns-veth-inside plugins/net/netns-veth.c 'e2e-netns-veth-inside-refused' \
	'a veth with both ends in the namespace is not refused as such' \
	'	if (rtnl_link_get_link_netnsid(l, &link_nsid) < 0)' '	if (0)'
mutant netns-neigh plugins/net/netns-neigh.c 'e2e-netns-neigh-refused' \
	'a permanent neighbour entry is not refused (nor restored)' \
	'	if (n->state & NUD_PERMANENT)' '	if (0)'
mutant netns-neigh-noarp plugins/net/netns-neigh.c 'e2e-netns-noarp-refused e2e-netns-veth-kill' \
	'a noarp neighbour entry added by hand is taken for one the kernel makes' \
	'	if ((n->state & NUD_NOARP) && !kernel_noarp(n, links, addrs))' '	if (0)'
mutant netns-neigh-managed plugins/net/netns-neigh.c 'e2e-netns-managed-refused' \
	'a managed neighbour entry is not refused (nor restored)' \
	'	if (n->flags_ext & NTF_EXT_MANAGED)' '	if (0)'
mutant netns-neigh-extern plugins/net/netns-neigh.c 'e2e-netns-extern-refused' \
	'an extern_learn neighbour entry is not refused (nor restored)' \
	'	if (n->flags & NTF_EXT_LEARNED)' '	if (0)'
mutant netns-link-attrs plugins/net/netns-link.c 'e2e-netns-link-gso-refused e2e-netns-link-altname-refused' \
	'a link'"'"'s attributes the restore does not set (gso_max_size, alternative names...) are not compared with a new link'"'"'s' \
	'		if (skipped(t, veth) || same(l->tb[t], ref->tb[t]))' '		if (1)'
mutant netns-link-flags plugins/net/netns-link.c 'e2e-netns-link-multicast-refused' \
	'a link'"'"'s flags are not compared with a new link'"'"'s (multicast on lo comes back off)' \
	'	if (fl != fr)' '	if (0)'
mutant netns-link-peer plugins/net/netns.c 'e2e-netns-peer-gso-refused' \
	'a veth peer'"'"'s attributes are not compared with a new veth'"'"'s' \
	'	return r < 0 ? r : netns_check_peer_attrs(ns, what);' '	return r;'
mutant netns-sysctl-userns plugins/net/netns-sysctl-walk.c 'e2e-netns-userns-kill' \
	'the sysctls are read from crf'"'"'s user namespace, not the net namespace owner'"'"'s (ping_group_range reads otherwise)' \
	'		if ((userns >= 0 && setns(userns, CLONE_NEWUSER) < 0) ||' \
	'		if ((userns >= 0 && 0) ||'
mutant netns-xfrm-policy plugins/net/netns-xfrm.c 'e2e-netns-xfrm-refused' \
	'an IPsec (xfrm) policy in the namespace is not refused (nor restored)' \
	'		r = first_of(fd, XFRM_MSG_GETPOLICY,' '		r = first_of(fd, XFRM_MSG_GETSA,'
mutant netns-xfrm-default plugins/net/netns-xfrm.c 'e2e-netns-xfrm-default-refused' \
	'a default xfrm policy of block is not refused (nor restored)' \
	'	if (r < (int)sizeof(d))' '	if (1)'
mutant netns-xfrm-hthresh plugins/net/netns-xfrm.c 'e2e-netns-xfrm-hthresh-refused' \
	'xfrm policy hash thresholds of its own are not refused (nor restored)' \
	'		if (t->lbits != want || t->rbits != want)' '		if (0)'
mutant net-inet-proto plugins/net/inet.c 'e2e-udp-lite-refused' \
	'a UDP-Lite socket is dumped and restored as a UDP one' \
	'	if (proto == IPPROTO_UDP)' '	if (proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE)'
mutant attrs-ioprio-leader core/restore/rst-apply.c 'e2e-taskmodes-kill' \
	'a restored process keeps crf'"'"'s I/O priority' \
	'	if (tc->has_ioprio && syscall(SYS_ioprio_set' '	if (0 && syscall(SYS_ioprio_set'
mutant attrs-ioprio-thread parasite/restorer-threads.c 'e2e-taskmodes-kill' \
	'a restored thread keeps the leader'"'"'s I/O priority' \
	'	if (t->ioprio >= 0 && (r = sys3(__NR_ioprio_set' '	if (0 && (r = sys3(__NR_ioprio_set'
mutant attrs-coredump-filter core/restore/rst-apply.c 'e2e-taskmodes-kill' \
	'a restored process has crf'"'"'s core dump filter' \
	'	if (!tc->has_coredump_filter)' '	if (1)'
mutant attrs-tsc core/dump/task-attrs-dump.c 'e2e-taskmodes-tsc-refused' \
	'rdtsc faulting is dropped by the dump' \
	'	if (tsc != PR_TSC_ENABLE && !seccomp_strict(pid))' '	if (0)'
mutant attrs-mce core/dump/task-attrs-dump.c 'e2e-taskmodes-mce-refused' \
	'a machine-check kill policy is dropped by the dump' \
	'	if (mce >= 0 && mce != PR_MCE_KILL_DEFAULT)' '	if (0)'
mutant attrs-mdwe core/dump/infect.c 'e2e-taskmodes-mdwe-refused' \
	'memory-deny-write-execute is refused as an unexplained EACCES' \
	'	if (ok && ret == -EACCES) {' '	if (0) {'
mutant net-udp-mcast plugins/net/udp.c 'e2e-udp-kill' \
	'a restored UDP socket is in none of the multicast groups it joined' \
	'	r = udp_mcast_dump(fd, sk, name);' '	r = 0;'
mutant net-udp-mcast-filter plugins/net/udp-mcast.c 'e2e-udp-kill' \
	'a restored multicast membership loses its source filter' \
	'		if (m->fmode == MCAST_EXCLUDE && !m->n_sources)' '		if (1)'
mutant ns-mnt-devnode-fd plugins/ns/mnt.c 'e2e-mnt-kill' \
	'an fd on a device node of a tmpfs made anew is refused again' \
	'		if (!S_ISCHR(st.st_mode) && (e = new_dev(d, st.st_dev)))' '		if ((e = new_dev(d, st.st_dev)))'
mutant files-shared-mntns plugins/files/shared.c 'e2e-container-twice' \
	'a description a container'"'"'s processes share is opened again by its path in crf'"'"'s mount namespace' \
	'		s->in_maker = true;' '		s->in_maker = false;'
mutant cgroup-devices-list plugins/cgroup/manage.c 'e2e-cgroup-props' \
	'the v1 device list is written back like any setting (devices.list cannot be written)' \
	'	if (!strcmp(p->name, "devices.list")) {' '	if (0) {'
mutant swrk-cgroot-rename compat/swrk-cgroot.c 'compat-podman' \
	'a container restored under another name (podman --import --name) keeps the old cgroup names' \
	'			if (r >= 0)
				r = strv_push(argv, from);' '			if (0)
				r = strv_push(argv, from);'
mutant tun-index plugins/devices/tun-link.c 'e2e-tun-kill' \
	'a tun/tap interface made anew keeps the index the kernel gave it' \
	'	if (cur != (int)l->ifindex && (r = set_index(' '	if (0 && (r = set_index('
mutant tun-sysctl plugins/devices/tun-link.c 'e2e-tun-kill' \
	'a tun/tap interface made anew loses its per-device sysctls' \
	'		r = tun_sysctl_apply(what, name, l);' '		r = 0;'
mutant tun-queue plugins/devices/tun-restore.c 'e2e-tun-kill' \
	'a restored tun/tap queue loses its sndbuf' \
	'	int r = set_ptr(what, fd, TUNSETSNDBUF, "TUNSETSNDBUF", t->sndbuf);' '	int r = 0;'
mutant tun-queued plugins/devices/tun.c 'e2e-tun-queued-refused' \
	'frames waiting in a tap are dropped by the dump' \
	'	if (p.revents & POLLIN)' '	if (0)'
mutant tun-route plugins/devices/tun-link.c 'e2e-tun-route-refused' \
	'a route added through a tun/tap interface is dropped' \
	'		if (via && rtnl_route_get_protocol(rt) != RTPROT_KERNEL)' '		if (0)'
mutant netns-tcp-orphan plugins/net/netns-check.c 'e2e-tcp-ns-orphan-refused' \
	'a TCP connection in the namespace that no fd holds (closed, FIN-WAIT-2) is not refused' \
	'			if (m->idiag_inode || queued || found)' \
	'			if (1 || m->idiag_inode || queued || found)'
mutant net-lock-ns-restore plugins/net/tcp.c 'e2e-tcp-ns-lo-kill' \
	'no network lock in the restored namespace: an end made first is reset by its peer'"'"'s port' \
	'		r = netlock_restore_here(name);' '		r = 0;'
mutant net-lock-ns-resume plugins/net/netlock.c 'e2e-tcp-ns-lo-kill' \
	'the network lock stays in the restored namespace: the connections there carry nothing' \
	'	r = nft_in(nsfd, buf, what);
	if (r < 0)
		return r;
	restore_unlocked' '	r = 0;
	if (r < 0)
		return r;
	restore_unlocked'
mutant net-lock-ns-release plugins/net/netlock.c 'e2e-tcp-ns-lo-leave' \
	'the network lock stays in the namespace of a tree left running' \
	'		if (nft_in(dump_lock.ns[i].fd, buf, "dropping the network lock") == 0)' \
	'		if (0)'
mutant net-tcp-fin-ours plugins/net/tcp-fin.c 'e2e-tcp-fin-wait-1-kill e2e-tcp-closing-kill' \
	'a connection that sent its FIN comes back without it' \
	'		*step = "our FIN";
		r = our_fin(fd);
		if (r >= 0)
			r = await(fd, TCP_FIN_WAIT1);' '		*step = "our FIN";'
mutant net-tcp-fin-peer plugins/net/tcp-fin.c 'e2e-tcp-fin-wait-2-kill e2e-tcp-last-ack-kill' \
	'a connection that received its peer'"'"'s FIN comes back without it' \
	'		r = inject(sk, TH_FIN | TH_ACK, rcv_nxt, c->snd_seq, win);' '		r = 0;'
mutant net-tcp-fin-seq plugins/net/tcp-repair.c 'e2e-tcp-fin-wait-2-kill e2e-tcp-fin-wait-2-leave' \
	'the peer'"'"'s FIN is counted as a byte of the receive queue'"'"'s' \
	'	c->rcv_seq -= (uint32_t)inq + (received ? 1 : 0);' '	c->rcv_seq -= (uint32_t)inq;'
mutant net-tcp-fin-unsent plugins/net/tcp-fin.c 'e2e-tcp-fin-wait-1-full-kill' \
	'the data never sent before a FIN is lost' \
	'	if (tcp_fin_sent(st) && c->send_unsent) {' '	if (0) {'
mutant net-tcp-shut-rd plugins/net/tcp-repair.c 'e2e-tcp-shut-rd-kill' \
	'a connection shut down for reading comes back open' \
	'	if (sk->tcp->shut_rd && shutdown(fd, SHUT_RD) < 0)' '	if (0 && shutdown(fd, SHUT_RD) < 0)'
mutant net-tcp-closed plugins/net/tcp.c 'e2e-tcp-closed-refused' \
	'a socket whose connection is over (reset) is restored as a fresh one' \
	'		if (hup)
			return crf_error_errno(EOPNOTSUPP,
					       "%s, closed:' '		if (0)
			return crf_error_errno(EOPNOTSUPP,
					       "%s, closed:'
mutant net-tcp-sndbuf plugins/net/tcp-repair.c 'e2e-tcp-fin-wait-1-full-kill' \
	'data never sent, more than the send buffer holds, is not written back' \
	'	if (len && big > sndbuf &&' '	if (0 &&'
mutant net-tcp-close plugins/net/tcp.c 'e2e-tcp-close-kill' \
	'--tcp-close restores a connection as a fresh socket, not shut down' \
	'	if (sk->state == CRF__NET__STATE__CLOSED && shutdown(fd, SHUT_RDWR) < 0 &&' \
	'	if (0 && shutdown(fd, SHUT_RDWR) < 0 &&'
mutant net-tcp-v6only plugins/net/tcp-repair.c 'e2e-tcp-fin-wait-2-v6-kill' \
	'a restored IPv6 client connection reads IPV6_V6ONLY 1 (its bind set it)' \
	'	return sk->family == AF_INET6 && !inet_addr_is_mapped(sk->local) &&' \
	'	return false && sk->family == AF_INET6 && !inet_addr_is_mapped(sk->local) &&'
mutant net-sk-ns plugins/net/inet.c 'e2e-tcp-ns-foreign-refused' \
	'a socket of another namespace than its task'"'"'s is dumped (and made in the task'"'"'s)' \
	'	if (sk_st.st_ino == task_st.st_ino)' '	if (1 || sk_st.st_ino == task_st.st_ino)'

# crf swrk and the criu command line (compat/, docs/criu-compat.md)
mutant swrk-notify-answer compat/swrk-req.c 'compat-swrk' \
	'a failing answer to a notify script does not fail the dump' \
	'	else if (!req->has_notify_success || !req->notify_success)' '	else if (0)'
mutant swrk-notify-post-dump core/dump/dump.c 'compat-swrk' \
	'post-dump is never notified' \
	'		r = o->notify(o->notify_arg, "post-dump", o->pid);' '		r = 0;'
mutant swrk-sibling core/restore/rst-tree.c 'compat-swrk' \
	'rst_sibling: the restored root is crf swrk'"'"'s child, not the caller'"'"'s' \
	'(k == 0 && rt->sibling)' '(k == 0 && 0)'
mutant swrk-restore-pid compat/swrk-req.c 'compat-swrk' \
	'RESTORE answers pid 0' \
	'		rr.pid = crf_rpc_hooks.root;' '		rr.pid = 0;'
mutant swrk-refuse-lazy compat/swrk-req.c 'compat-swrk' \
	'lazy_pages is ignored instead of refused by name' \
	'	NO_TRUE(lazy_pages, "crf has no lazy pages")' ''
mutant swrk-stdio-external compat/swrk-req.c 'compat-swrk' \
	'the root'"'"'s stdio pipes are not saved as external: the dump refuses them' \
	'		if (strncmp(link, "pipe:[", 6))
			continue;' '		if (1)
			continue;'
mutant swrk-inherit-twice compat/swrk-req.c 'compat-runc' \
	'runc'"'"'s inherit_fd given for fds 1 and 2 of one pipe is passed twice to crf restore' \
	'		return (int)j;' '		return -1;'
mutant swrk-cgroot compat/swrk-cgroot.c 'compat-runc' \
	'cg_root taken in crf'"'"'s sense (the dump'"'"'s root), not CRIU'"'"'s (the root task'"'"'s cgroup)' \
	'keep ? (int)keep : 1, keep ? want->path : "/"' '(int)strlen(want->path), want->path'
mutant criu-pidfile compat/criu-cli.c 'compat-criu-counter-kill' \
	'criu restore --pidfile is never written' \
	'	if (strcmp(script, "post-resume"))' '	if (1)'

# ---------------------------------------------------------------------------
# Everything below is in functions, called from the last line: bash reads a
# script as it runs, and a run takes long enough for someone to edit this one.

usage() {
	sed -n '8,14s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

parse_args() {
	local arg

	LIST=0 CHECK=0 KEEP=0 BASELINE=1
	SELECTED=()
	for arg; do
		case $arg in
		--list) LIST=1 ;;
		--check) CHECK=1 ;;
		--keep) KEEP=1 ;;
		--no-baseline) BASELINE=0 ;;
		-*) usage ;;
		*)
			[[ -n ${M_FILE[$arg]+x} ]] ||
				{ echo "mutants.sh: no mutant '$arg' (--list)" >&2; exit 2; }
			SELECTED+=("$arg")
			;;
		esac
	done
	((${#SELECTED[@]})) || SELECTED=("${MUTANTS[@]}")
}

list() {
	local m

	for m in "${SELECTED[@]}"; do
		printf '%-24s %-30s %s\n%24s   (%s)\n' "$m" "${M_FILE[$m]}" "${M_WHAT[$m]}" "" \
			"${M_TESTS[$m]}"
	done
}

cleanup() {
	if ((KEEP)); then
		echo "kept: $SCRATCH"
	else
		rm -rf "$SCRATCH"
	fi
}

# The tracked and untracked (not ignored) files of the tree, into $S.
copy_tree() {
	SRC=$(cd "$(dirname "$0")/.." && pwd)
	git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1 ||
		{ echo "mutants.sh: $SRC is not a git checkout (its files are listed with git)" >&2
		  exit 2; }
	SCRATCH=$(mktemp -d /tmp/crf-mutants-XXXXXX)
	S=$SCRATCH/src B=$SCRATCH/build
	# Some tests run crf as nobody: it must reach the build.
	chmod 755 "$SCRATCH"
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	mkdir -p "$S"
	git -C "$SRC" ls-files -z -co --exclude-standard |
		tar -C "$SRC" --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -C "$S" -xf - ||
		{ echo "mutants.sh: cannot copy the tree into $S" >&2; exit 2; }
}

# apply NAME: edit the scratch copy of the mutant's file; 0, or 1 with why on stdout.
apply() {
	python3 - "$S/${M_FILE[$1]}" "${M_EDITS[$1]}" <<'PY'
import base64, sys
path, edits = sys.argv[1], base64.b64decode(sys.argv[2]).decode().split("\0")[:-1]
try:
    text = open(path).read()
except OSError as e:
    print(f"cannot read {path}: {e.strerror}")
    sys.exit(1)
for old, new in zip(edits[0::2], edits[1::2]):
    n = text.count(old)
    if n != 1:
        first = old.splitlines()[0].strip()
        print(f"'{first}' occurs {n} times, not once")
        sys.exit(1)
    text = text.replace(old, new)
open(path, "w").write(text)
PY
}

# Put NAME's file back, newer than what was built from the mutant.
unapply() {
	cp "$SCRATCH/saved" "$S/${M_FILE[$1]}"
	touch "$S/${M_FILE[$1]}"
}

check_all() {
	local m why bad=0 t tests='' build

	# The tests each mutant names must exist, where a build lists them:
	# a name no test has would fail, and so count as catching.
	build=$(cd "$(dirname "$0")/.." && pwd)/build-test
	[[ -d $build ]] && tests=$(meson test -C "$build" --list 2>/dev/null | sed 's/.* \/ //')
	for m in "${SELECTED[@]}"; do
		cp -p "$S/${M_FILE[$m]}" "$SCRATCH/saved" 2>/dev/null
		why=
		for t in ${M_TESTS[$m]}; do
			[[ -z $tests ]] || grep -qx -- "$t" <<<"$tests" || why="no test $t"
		done
		if [[ -z $why ]] && why=$(apply "$m"); then
			echo "MUTANT $m: applies"
		else
			echo "MUTANT $m: NOT APPLIED ($why in ${M_FILE[$m]})"
			bad=$((bad + 1))
		fi
		cp -p "$SCRATCH/saved" "$S/${M_FILE[$m]}" 2>/dev/null
	done
	echo "${#SELECTED[@]} mutants, $bad not applied"
	((bad == 0))
}

build() {
	echo "scratch copy: $S; build: $B"
	if ! meson setup "$B" "$S" -Dbuildtype=release -Dwerror=false >"$SCRATCH/setup.log" 2>&1 ||
		! ninja -C "$B" >"$SCRATCH/build.log" 2>&1; then
		tail -20 "$SCRATCH/setup.log" "$SCRATCH/build.log" 2>/dev/null
		echo "mutants.sh: the unmutated tree does not build" >&2
		exit 2
	fi
}

# run_test TEST: 0 if it passes (or skips: see skipped).
run_test() {
	meson test -C "$B" --no-rebuild --verbose "$1" >"$SCRATCH/test.log" 2>&1
}

# skipped: the last test skipped (exit 77: this machine lacks what it needs).
skipped() {
	grep -qE '^ *[0-9]+/[0-9]+ .* SKIP ' "$SCRATCH/test.log"
}

# Every test a mutant names must pass before any mutant is applied.
baseline() {
	local -A seen
	local m t

	for m in "${SELECTED[@]}"; do
		for t in ${M_TESTS[$m]}; do
			[[ -n ${seen[$t]+x} ]] && continue
			seen[$t]=1
			if ! run_test "$t"; then
				tail -30 "$SCRATCH/test.log"
				echo "mutants.sh: baseline: $t fails with no mutant applied; fix that first" >&2
				exit 2
			fi
		done
	done
	echo "baseline: ${#seen[@]} tests pass on the unmutated tree"
}

# How the last test failed, in one line: the workload's FAIL line, the
# harness's or a script's, or crf's first error.
failure_line() {
	local line
	line=$(grep -m1 -E 'wl-[a-z0-9-]+: FAIL: ' "$SCRATCH/test.log" ||
		grep -m1 -E '^ *FAIL' "$SCRATCH/test.log" ||
		grep -m1 -E 'error|FAIL' "$SCRATCH/test.log")
	line=${line#"${line%%[![:space:]|]*}"}
	echo "${line:0:160}"
}

# run_mutant NAME: prints its line; 0 if caught.
run_mutant() {
	local m=$1 why t

	cp -p "$S/${M_FILE[$m]}" "$SCRATCH/saved"
	if ! why=$(apply "$m"); then
		echo "MUTANT $m: MISSED (not applied: $why in ${M_FILE[$m]})"
		return 1
	fi
	if ! ninja -C "$B" >"$SCRATCH/build.log" 2>&1; then
		echo "MUTANT $m: MISSED (does not build: $(grep -m1 'error:' "$SCRATCH/build.log"))"
		unapply "$m"
		return 1
	fi
	local ran=0 skip=""
	for t in ${M_TESTS[$m]}; do
		if ! run_test "$t"; then
			echo "MUTANT $m: caught by: $t ($(failure_line))"
			unapply "$m"
			return 0
		fi
		if skipped; then
			skip=$(grep -m1 -E '^SKIP: ' "$SCRATCH/test.log")
			skip="$t: ${skip#SKIP: }"
		else
			ran=1
		fi
	done
	unapply "$m"
	# Every test that would notice skips here (an AMX mutant on a CPU
	# without AMX): not a miss, and not a catch either.
	if ((!ran)); then
		echo "MUTANT $m: not run here (${skip:-its tests skip})"
		return 2
	fi
	echo "MUTANT $m: MISSED (${M_TESTS[$m]} passed; ${M_WHAT[$m]})"
	return 1
}

main() {
	local m r caught=0 missed=0 notrun=0

	parse_args "$@"
	if ((LIST)); then
		list
		return 0
	fi
	copy_tree
	if ((CHECK)); then
		check_all
		return
	fi
	build
	((BASELINE)) && baseline
	for m in "${SELECTED[@]}"; do
		run_mutant "$m"
		r=$?
		case $r in
		0) caught=$((caught + 1)) ;;
		2) notrun=$((notrun + 1)) ;;
		*) missed=$((missed + 1)) ;;
		esac
	done
	if ((notrun)); then
		echo "$caught caught, $missed missed, $notrun not run here (their tests skip)"
	else
		echo "$caught caught, $missed missed"
	fi
	((missed == 0))
}

main "$@"; exit
