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
#   --check        only verify that every mutant still applies (fast: no build)
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
# Prints one line per mutant, "MUTANT NAME: caught by: TEST" or
# "MUTANT NAME: MISSED (...)", then "N caught, M missed".  A mutant whose
# text is no longer found, or that does not build, counts as missed: it no
# longer tests anything.  Exit status 0 only when none is missed.
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
mutant mem-prot plugins/mem/restore.c 'e2e-memory-kill' \
	'every mapping comes back writable (a read-only one too)' \
	'		.prot = v->prot,' '		.prot = v->prot | PROT_WRITE,'
mutant mem-shared-private plugins/mem/restore.c 'e2e-shmem-kill' \
	'shared anonymous memory comes back as each task'"'"'s own' \
	'} else if (v->has_shm_dev && v->has_shm_inode) {' \
	'} else if (v->has_shm_dev && v->has_shm_inode && v->kind != CRF__MEM__VMA_KIND__ANON_SHARED) {'
mutant mem-brk plugins/mem/restore.c 'e2e-memory-kill' \
	'the brk comes back at the start of the heap' \
	'		.brk = f->brk,' '		.brk = f->start_brk,'
mutant mem-exe plugins/mem/restore.c 'e2e-mm-kill' \
	'/proc/self/exe is left naming crf (no exe file handed to the restorer)' \
	'	if (f->exe) {' '	if (0) {'
mutant mem-environ plugins/mem/restore.c 'e2e-mm-kill' \
	'the environment starts where the command line does' \
	'		.env_start = f->env_start,' '		.env_start = f->arg_start,'

# --- the restorer (parasite/): memory, mm, signals, limits, threads, credentials ---
mutant rst-pages-shifted parasite/restorer-vma.c 'e2e-memory-kill e2e-memory-1g-kill' \
	'the restorer reads each page run of 32 MiB or more one 8-byte word late, its last word zero' \
	'	uint64_t off = p->off, left = p->len, done;' \
	'	uint64_t big = p->len >= (32u << 20) ? 8 : 0, off = p->off + big, left = p->len - big, done;'
mutant rst-cmdline parasite/restorer.c 'e2e-mm-kill' \
	'the command line runs on to the end of the environment' \
	'	m.arg_end = a->arg_end;' '	m.arg_end = a->env_end;'
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

# --- the core: task state, signals, timers, the tree ---
mutant core-oom core/task-attrs-restore.c 'e2e-taskattr-kill' \
	'oom_score_adj stays crf restore'"'"'s' \
	'	if (r >= 0 && tc->has_oom_score_adj)' '	if (0)'
mutant core-sched core/task-restore.c 'e2e-sched-kill' \
	'the main thread keeps crf'"'"'s scheduling policy' \
	'	if (sched_setscheduler(0, tc->sched_policy, &sp) < 0)' '	if (0)'
mutant core-nice core/task-restore.c 'e2e-taskstate-kill' \
	'the nice value is not set' \
	'	if (setpriority(PRIO_PROCESS, 0, tc->nice) < 0)' '	if (0)'
mutant core-affinity core/task-restore.c 'e2e-taskstate-kill' \
	'the CPU affinity is not set' \
	'	if (sched_setaffinity(0, sizeof(set), &set) < 0)' '	if (0)'
mutant core-umask core/task-restore.c 'e2e-taskstate-kill' \
	'the umask is 022' \
	'	umask((mode_t)tc->umask);' '	umask(022);'
mutant core-cwd core/task-restore.c 'e2e-taskstate-kill' \
	'the working directory stays crf restore'"'"'s' \
	'	if (chdir(tc->cwd) < 0)' '	if (0)'
mutant core-blocked core/restore.c 'e2e-signals-kill' \
	'the blocked signal mask is dropped' \
	'	a->blocked = tc->blocked;' '	a->blocked = 0;'
mutant core-sigaction core/restore.c 'e2e-signals-kill' \
	'every signal handler is reset to SIG_DFL' \
	'(struct crf_rst_sigaction_arg){ s->handler, s->flags,' \
	'(struct crf_rst_sigaction_arg){ 0, s->flags,'
mutant core-altstack core/restore.c 'e2e-signals-kill' \
	'the alternate signal stack is dropped' \
	'	a->sas_size = tc->sas_size;' '	a->sas_size = 0;'
mutant core-pending-shared core/restore.c 'e2e-signals-kill' \
	'process-wide pending signals are dropped' \
	'i < tc->n_pending_shared; i++)' 'i < 0; i++)'
mutant core-thread-mask core/restore.c 'e2e-threads-kill' \
	'threads other than the main one lose their blocked masks' \
	'	a.blocked = th->blocked;' '	a.blocked = 0;'
mutant core-itimer core/restore.c 'e2e-timers-kill' \
	'the interval timers are not armed' \
	'		a->itimer[i / 4][i % 4] = tc->itimers[i];' '		a->itimer[i / 4][i % 4] = 0;'
mutant core-posix-timer core/restore.c 'e2e-timers-kill' \
	'POSIX timers come back disarmed' \
	'.interval_ns = p->interval_ns, .value_ns = p->value_ns,' \
	'.interval_ns = p->interval_ns, .value_ns = 0,'
mutant core-xsave core/restore.c 'e2e-cpu-kill' \
	'the FPU/SSE/AVX state is dropped' \
	'crf_rst_task_set_xsave(t, tc->xsave.data, tc->xsave.len);' \
	'crf_rst_task_set_xsave(t, tc->xsave.data, 0);'
mutant core-zombie core/rst-tree.c 'e2e-zombie-kill' \
	'a zombie exits with status 0, not its own' \
	'	_exit(WEXITSTATUS(status));' '	_exit(0);'
mutant core-pgid core/rst-tree.c 'e2e-tree-kill e2e-session-kill' \
	'a group leader does not make its group' \
	'	if (rp->lead_group && setpgid(0, 0) < 0)' '	if (0 && setpgid(0, 0) < 0)'
mutant core-pidns core/rst-tree.c 'e2e-pidns-kill' \
	'the tree is not restored in a PID namespace of its own' \
	'		flags |= CLONE_NEWPID;' '		flags |= 0;'
mutant core-thaw core/freeze-cgroup.c 'infect e2e-counter-leave-auto-cgroup' \
	'a tree frozen with the cgroup freezer is never thawed' \
	'	return write_freeze(dir, "0");' '	return 0;'

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
	'	if (count && write(fd, &count, sizeof(count)) != sizeof(count)) {' '	if (0) {'
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

# --- ns, net, cgroup, devices plugins (their probes, for now) ---
mutant ns-probe plugins/ns/probe.c 'cli' \
	'every namespace kind is reported missing' \
	'crf_probe_feature(ctx, feature, true, ns_kinds[i].required, "%s -> %s", path, link);' \
	'crf_probe_feature(ctx, feature, false, ns_kinds[i].required, "%s -> %s", path, link);'
mutant net-probe plugins/net/probe-diag.c 'cli' \
	'unix_diag is reported missing where it works' \
	'		crf_probe_feature(ctx, "unix-diag", true, true,' \
	'		crf_probe_feature(ctx, "unix-diag", false, true,'
mutant cgroup-probe plugins/cgroup/probe.c 'cli' \
	'the cgroup v2 mount is reported missing where it is mounted' \
	'crf_probe_feature(ctx, "cgroup2-mount", true, true, "cgroup2 mounted at %s", mnt);' \
	'crf_probe_feature(ctx, "cgroup2-mount", false, true, "cgroup2 mounted at %s", mnt);'
mutant devices-probe plugins/devices/probe.c 'cli' \
	'tun is reported missing where /dev/net/tun works' \
	'		crf_probe_feature(ctx, "tun", true, false,' \
	'		crf_probe_feature(ctx, "tun", false, false,'

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
	local m why bad=0

	for m in "${SELECTED[@]}"; do
		cp -p "$S/${M_FILE[$m]}" "$SCRATCH/saved" 2>/dev/null
		if why=$(apply "$m"); then
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

# run_test TEST: 0 if it passes.
run_test() {
	meson test -C "$B" --no-rebuild --print-errorlogs "$1" >"$SCRATCH/test.log" 2>&1
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
	for t in ${M_TESTS[$m]}; do
		if ! run_test "$t"; then
			echo "MUTANT $m: caught by: $t"
			unapply "$m"
			return 0
		fi
	done
	echo "MUTANT $m: MISSED (${M_TESTS[$m]} passed; ${M_WHAT[$m]})"
	unapply "$m"
	return 1
}

main() {
	local m caught=0 missed=0

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
		if run_mutant "$m"; then
			caught=$((caught + 1))
		else
			missed=$((missed + 1))
		fi
	done
	echo "$caught caught, $missed missed"
	((missed == 0))
}

main "$@"; exit
