// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-creds: a process that is not root keeps its credentials.
 *
 * Every other workload runs as root, where a restore that skipped the
 * uid change would go unnoticed.  The root process (which talks to the
 * harness: its files are in a directory only root may enter) forks a child
 * that drops to uids 1000/1001/1002 (real, effective, saved; fsuid 1002),
 * gids 2000/2001/2002 (fsgid 2002), supplementary groups 3000, 3001 and
 * 65534, keeps some capabilities (permitted CHOWN, KILL, NET_BIND_SERVICE;
 * effective KILL, NET_BIND_SERVICE; inheritable and ambient
 * NET_BIND_SERVICE), has CAP_SYS_BOOT out of its bounding set and
 * SECBIT_NOROOT set, clears keep-caps again (as a daemon does once it has
 * switched) and sets no_new_privs: without CAP_SETPCAP it could not change
 * its securebits itself.  A thread of the child shares it all.
 *
 * After restore the child and its thread compare: getresuid, getresgid,
 * fsuid, fsgid, the groups, the Uid/Gid/Groups and five Cap lines of
 * /proc/self/status, the securebits and no_new_privs.
 */
#include "wl.h"

#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/securebits.h>

#define UID_R 1000
#define UID_E 1001
#define UID_S 1002
#define GID_R 2000
#define GID_E 2001
#define GID_S 2002

static const gid_t groups[] = {3000, 3001, 65534};
static const char *const fields[] = {"Uid",    "Gid",	 "Groups", "CapInh",
				     "CapPrm", "CapEff", "CapBnd", "CapAmb"};
#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

struct creds {
	uid_t uid[4]; /* real, effective, saved, fs */
	gid_t gid[4];
	gid_t groups[32];
	int n_groups;
	char status[N_FIELDS][128];
	int securebits, no_new_privs;
};

/* This thread's own view: raw system calls, which answer for the caller only. */
static void snap(struct creds *c)
{
	char text[4096];

	memset(c, 0, sizeof(*c));
	WL_CHECK(syscall(SYS_getresuid, &c->uid[0], &c->uid[1], &c->uid[2]) == 0, "getresuid: %s",
		 strerror(errno));
	WL_CHECK(syscall(SYS_getresgid, &c->gid[0], &c->gid[1], &c->gid[2]) == 0, "getresgid: %s",
		 strerror(errno));
	/* setfsuid returns the old value; -1 changes nothing. */
	c->uid[3] = (uid_t)syscall(SYS_setfsuid, -1);
	c->gid[3] = (gid_t)syscall(SYS_setfsgid, -1);
	c->n_groups = (int)syscall(SYS_getgroups, 32, c->groups);
	WL_CHECK(c->n_groups >= 0, "getgroups: %s", strerror(errno));
	c->securebits = prctl(PR_GET_SECUREBITS);
	c->no_new_privs = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	WL_CHECK(wl_read_file("/proc/thread-self/status", text, sizeof(text)) > 0,
		 "read /proc/thread-self/status: %s", strerror(errno));
	for (size_t i = 0; i < N_FIELDS; i++) {
		size_t len = strlen(fields[i]);
		char *line;

		for (line = text; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
			if (!strncmp(line, fields[i], len) && line[len] == ':')
				break;
		WL_CHECK(line, "no %s in /proc/thread-self/status", fields[i]);
		line += len + 1;
		line += strspn(line, " \t");
		snprintf(c->status[i], sizeof(c->status[i]), "%.*s", (int)strcspn(line, "\n"),
			 line);
	}
}

static void compare(const char *who, const struct creds *a, const struct creds *b)
{
	static const char *const id_names[4] = {"real", "effective", "saved", "fs"};

	for (int i = 0; i < 4; i++) {
		WL_CHECK(a->uid[i] == b->uid[i], "%s: %s uid %u, was %u", who, id_names[i],
			 (unsigned)b->uid[i], (unsigned)a->uid[i]);
		WL_CHECK(a->gid[i] == b->gid[i], "%s: %s gid %u, was %u", who, id_names[i],
			 (unsigned)b->gid[i], (unsigned)a->gid[i]);
	}
	WL_CHECK(a->n_groups == b->n_groups &&
			 !memcmp(a->groups, b->groups, sizeof(gid_t) * (size_t)a->n_groups),
		 "%s: %d supplementary groups, had %d (%s)", who, b->n_groups, a->n_groups,
		 b->status[2]);
	for (size_t i = 0; i < N_FIELDS; i++)
		WL_CHECK(!strcmp(a->status[i], b->status[i]), "%s: %s is \"%s\", was \"%s\"", who,
			 fields[i], b->status[i], a->status[i]);
	WL_CHECK(a->securebits == b->securebits, "%s: securebits %#x, were %#x", who, b->securebits,
		 a->securebits);
	WL_CHECK(a->no_new_privs == b->no_new_privs, "%s: no_new_privs %d, was %d", who,
		 b->no_new_privs, a->no_new_privs);
}

static void set_caps(void)
{
	const cap_value_t prm[] = {CAP_CHOWN, CAP_KILL, CAP_NET_BIND_SERVICE};
	const cap_value_t eff[] = {CAP_KILL, CAP_NET_BIND_SERVICE};
	const cap_value_t inh[] = {CAP_NET_BIND_SERVICE};
	cap_t caps = cap_init();

	WL_CHECK(caps, "cap_init: %s", strerror(errno));
	WL_CHECK(cap_set_flag(caps, CAP_PERMITTED, 3, prm, CAP_SET) == 0 &&
			 cap_set_flag(caps, CAP_EFFECTIVE, 2, eff, CAP_SET) == 0 &&
			 cap_set_flag(caps, CAP_INHERITABLE, 1, inh, CAP_SET) == 0 &&
			 cap_set_proc(caps) == 0,
		 "capset: %s", strerror(errno));
	cap_free(caps);
	WL_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE, 0, 0) == 0,
		 "raise ambient CAP_NET_BIND_SERVICE: %s", strerror(errno));
}

/* As root: the bounding set, the groups and gids, then the uids keeping capabilities. */
static void drop_privileges(void)
{
	WL_CHECK(prctl(PR_SET_SECUREBITS, SECBIT_NOROOT, 0, 0, 0) == 0, "securebits: %s",
		 strerror(errno));
	WL_CHECK(prctl(PR_CAPBSET_DROP, CAP_SYS_BOOT, 0, 0, 0) == 0,
		 "drop CAP_SYS_BOOT from the bounding set: %s", strerror(errno));
	WL_CHECK(setgroups(sizeof(groups) / sizeof(groups[0]), groups) == 0, "setgroups: %s",
		 strerror(errno));
	WL_CHECK(setresgid(GID_R, GID_E, GID_S) == 0, "setresgid: %s", strerror(errno));
	setfsgid(GID_S);
	WL_CHECK(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == 0, "PR_SET_KEEPCAPS: %s", strerror(errno));
	WL_CHECK(setresuid(UID_R, UID_E, UID_S) == 0, "setresuid: %s", strerror(errno));
	setfsuid(UID_S);
	set_caps();
	WL_CHECK(prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) == 0, "clear keep-caps: %s", strerror(errno));
	WL_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "PR_SET_NO_NEW_PRIVS: %s",
		 strerror(errno));
}

static struct creds thread_before;
static atomic_int thread_set_up;
static int go_fd;

static void *thread_main(void *arg)
{
	struct creds now;
	char c;

	(void)arg;
	snap(&thread_before);
	atomic_store(&thread_set_up, 1);
	/* The child's main thread reads the go byte and passes it on through here. */
	WL_CHECK(read(go_fd, &c, 1) == 1, "thread: read the go byte: %s", strerror(errno));
	snap(&now);
	compare("the child's thread", &thread_before, &now);
	return NULL;
}

static _Noreturn void child(int ready_wr, int go_rd)
{
	struct creds before, after;
	int pass[2];
	pthread_t t;
	char c = 'r';

	drop_privileges();
	snap(&before);
	WL_CHECK(before.uid[0] == UID_R && before.uid[1] == UID_E && before.uid[2] == UID_S &&
			 before.uid[3] == UID_S && before.gid[3] == GID_S && before.n_groups == 3 &&
			 before.no_new_privs == 1,
		 "the child's credentials are not what it set: uids %u %u %u %u, %d groups",
		 (unsigned)before.uid[0], (unsigned)before.uid[1], (unsigned)before.uid[2],
		 (unsigned)before.uid[3], before.n_groups);
	WL_CHECK(pipe(pass) == 0, "pipe: %s", strerror(errno));
	go_fd = pass[0];
	WL_CHECK(pthread_create(&t, NULL, thread_main, NULL) == 0, "pthread_create");
	while (!atomic_load(&thread_set_up))
		usleep(1000);
	compare("the child's thread before the dump", &before, &thread_before);
	WL_CHECK(write(ready_wr, &c, 1) == 1, "child: write ready: %s", strerror(errno));
	WL_CHECK(read(go_rd, &c, 1) == 1, "child: read go: %s", strerror(errno));
	snap(&after);
	compare("the child", &before, &after);
	WL_CHECK(write(pass[1], &c, 1) == 1, "pass the go byte on: %s", strerror(errno));
	WL_CHECK(pthread_join(t, NULL) == 0, "pthread_join");
	exit(0);
}

int main(void)
{
	int ready[2], go[2], st;
	pid_t pid;
	char c;

	wl_init("creds");
	if (geteuid() != 0)
		wl_fail("must run as root: it drops a child to uid %d", UID_R);
	WL_CHECK(pipe(ready) == 0 && pipe(go) == 0, "pipe: %s", strerror(errno));
	pid = fork();
	WL_CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		child(ready[1], go[0]);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1) {
		waitpid(pid, &st, 0);
		wl_fail("the child did not get ready (status %#x)", st);
	}
	wl_ready();
	wl_wait_verify();
	WL_CHECK(write(go[1], &c, 1) == 1, "write go: %s", strerror(errno));
	WL_CHECK(waitpid(pid, &st, 0) == pid, "waitpid: %s", strerror(errno));
	WL_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child failed (status %#x)", st);
	wl_note("uids %d/%d/%d, gids %d/%d/%d, 3 groups, capabilities, securebits, "
		"no_new_privs of a child and its thread: intact",
		UID_R, UID_E, UID_S, GID_R, GID_E, GID_S);
	return 0;
}
