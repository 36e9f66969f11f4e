// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-userns [MODE]: processes in a user namespace of their own.
 *
 *   O  the root, in the harness's user namespace: the helper that writes
 *      C's maps (a process cannot map freely the namespace it unshared)
 *   +- C  takes euid 1000 (the owner), unshare(CLONE_NEWUSER); O writes
 *      uid_map "0 1000 1, 1 200000 100", gid_map "0 1000 1, 1 300000 100"
 *      (and setgroups "deny" in mode deny); then C forks G and sets inside
 *      groups 3 4, gids 5 6 7, uids 10 11 12, and capabilities (permitted
 *      KILL NET_BIND_SERVICE SYS_CHROOT, effective KILL, inheritable
 *      NET_BIND_SERVICE)
 *      +- G  in C's namespace: groups 8, gids 21, uids 20, no capabilities
 *
 * MODE: allow (the default), deny (setgroups "deny": no supplementary
 * groups, cleared before the unshare), nested (C's child N in a user
 * namespace of its own inside C's, mapped by C, with ids of its own), uts
 * (C unshares a UTS namespace, owned by its user namespace, with a hostname:
 * the dump needs the test plugin crf-test-special, whose "uts" handler the
 * ns plugin calls inside the restored user namespace);
 * refused ones, which the dump must refuse, leaving the tree as it was:
 * owned (C's child P in a PID namespace
 * owned by C's user namespace), unmapped (C's child P keeps C's real uid,
 * 0 outside, which the namespace does not map), threads (C has a second
 * thread), siblings (O's second child S joins C's namespace with setns:
 * neither's parent is in it), elsewhere (O's second child S joins C's
 * namespace and unshares one nested in it: its parent O is not in C's).
 *
 * After the restore C and G check from inside: their ids, groups and
 * capability sets, the maps and setgroups as /proc/self shows them, the
 * owner (NS_GET_OWNER_UID) and the parent (NS_GET_PARENT: O's namespace)
 * of their namespace, G that it shares C's; O checks from outside the
 * Uid/Gid/Groups/Cap lines of C's and G's /proc/PID/status and their maps,
 * as it saw them before.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define OWNER	 1000
#define UID_MAP	 "0 1000 1\n1 200000 100\n"
#define GID_MAP	 "0 1000 1\n1 300000 100\n"
#define CAP(c)	 (1u << (c))
#define TEXT_MAX 4096
#define UTS_NAME "crf-userns-uts"

struct creds {
	uid_t uid[3];
	gid_t gid[3];
	gid_t groups[8];
	int n_groups;
	struct __user_cap_data_struct caps[2];
};

/* What C and G check after the restore. */
struct self {
	const char *name;
	struct creds c;
	char uid_map[256], gid_map[256], setgroups[16], ns_link[64], host[65];
	uid_t owner; /* of its user namespace, as it sees it */
	pid_t kid[2];
};

static const char *mode = "allow";
static uint64_t own_user; /* O's user namespace */
static int setup_w = -1;
/*
 * O asks for the verification when the harness does: C, G and N run with
 * ids that may not reach the harness's files.  EOF on this pipe, O's end
 * closed, is the request.
 */
static int verify_r = -1, verify_w = -1;

static void wait_verify(void)
{
	char c;

	if (verify_w >= 0)
		close(verify_w);
	verify_w = -1;
	if (read(verify_r, &c, 1) != 0)
		wl_fail("verify pipe: %s", strerror(errno));
}

static void read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		wl_fail("open %s: %s", path, strerror(errno));
	n = read(fd, buf, len - 1);
	if (n < 0)
		wl_fail("read %s: %s", path, strerror(errno));
	buf[n] = '\0';
	close(fd);
}

static void write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		wl_fail("write %s: %s", path, strerror(errno));
	close(fd);
}

static void get_creds(struct creds *c)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};

	if (getresuid(&c->uid[0], &c->uid[1], &c->uid[2]) < 0 ||
	    getresgid(&c->gid[0], &c->gid[1], &c->gid[2]) < 0)
		wl_fail("getres[ug]id: %s", strerror(errno));
	c->n_groups = getgroups(8, c->groups);
	if (c->n_groups < 0)
		wl_fail("getgroups: %s", strerror(errno));
	if (syscall(SYS_capget, &h, c->caps) < 0)
		wl_fail("capget: %s", strerror(errno));
}

static void set_caps(uint32_t prm, uint32_t eff, uint32_t inh)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{eff, prm, inh}, {0, 0, 0}};

	if (syscall(SYS_capset, &h, d) < 0)
		wl_fail("capset: %s", strerror(errno));
}

/* The inode of the parent of @path's user namespace (seen from outside only). */
static uint64_t ns_parent_ino(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), p;
	struct stat st;

	if (fd < 0 || (p = ioctl(fd, NS_GET_PARENT)) < 0 || fstat(p, &st) < 0)
		wl_fail("NS_GET_PARENT of %s: %s", path, strerror(errno));
	close(p);
	close(fd);
	return st.st_ino;
}

/* The inode of the user namespace that owns namespace file @path (NS_GET_USERNS). */
static uint64_t owner_ino(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), u;
	struct stat st;

	if (fd < 0 || (u = ioctl(fd, NS_GET_USERNS)) < 0 || fstat(u, &st) < 0)
		wl_fail("NS_GET_USERNS of %s: %s", path, strerror(errno));
	close(u);
	close(fd);
	return st.st_ino;
}

static uint64_t ns_ino(pid_t pid, const char *kind)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, kind);
	if (stat(path, &st) < 0)
		wl_fail("stat %s: %s", path, strerror(errno));
	return st.st_ino;
}

/* The owner of @path's user namespace, as the caller's sees it. */
static uid_t ns_owner(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uid_t u;

	if (fd < 0 || ioctl(fd, NS_GET_OWNER_UID, &u) < 0)
		wl_fail("NS_GET_OWNER_UID of %s: %s", path, strerror(errno));
	close(fd);
	return u;
}

static void self_snap(struct self *s, const char *name)
{
	ssize_t n;

	s->name = name;
	get_creds(&s->c);
	read_text("/proc/self/uid_map", s->uid_map, sizeof(s->uid_map));
	read_text("/proc/self/gid_map", s->gid_map, sizeof(s->gid_map));
	read_text("/proc/self/setgroups", s->setgroups, sizeof(s->setgroups));
	n = readlink("/proc/self/ns/user", s->ns_link, sizeof(s->ns_link) - 1);
	if (n < 0)
		wl_fail("readlink /proc/self/ns/user: %s", strerror(errno));
	s->ns_link[n] = '\0';
	s->owner = ns_owner("/proc/self/ns/user");
	if (gethostname(s->host, sizeof(s->host)) < 0)
		wl_fail("gethostname: %s", strerror(errno));
}

static void self_check(const struct self *s)
{
	struct self now = {0};
	int st;

	self_snap(&now, s->name);
	if (memcmp(&now.c, &s->c, sizeof(s->c)))
		wl_fail("%s: ids %u %u %u / %u %u %u, %d groups, caps %#x %#x %#x; were %u %u %u "
			"/ %u %u %u, %d groups, caps %#x %#x %#x",
			s->name, now.c.uid[0], now.c.uid[1], now.c.uid[2], now.c.gid[0],
			now.c.gid[1], now.c.gid[2], now.c.n_groups, now.c.caps[0].permitted,
			now.c.caps[0].effective, now.c.caps[0].inheritable, s->c.uid[0],
			s->c.uid[1], s->c.uid[2], s->c.gid[0], s->c.gid[1], s->c.gid[2],
			s->c.n_groups, s->c.caps[0].permitted, s->c.caps[0].effective,
			s->c.caps[0].inheritable);
	if (strcmp(now.uid_map, s->uid_map) || strcmp(now.gid_map, s->gid_map))
		wl_fail("%s: maps now '%s' '%s', were '%s' '%s'", s->name, now.uid_map, now.gid_map,
			s->uid_map, s->gid_map);
	if (strcmp(now.setgroups, s->setgroups))
		wl_fail("%s: setgroups now %s, was %s", s->name, now.setgroups, s->setgroups);
	if (!strcmp(mode, "pidns") && !strcmp(s->name, "C") && (getpid() != 1 || getppid() != 0))
		wl_fail("C: pid %d parent %d, not its PID namespace's init", (int)getpid(),
			(int)getppid());
	if (strcmp(now.host, s->host))
		wl_fail("%s: hostname '%s', was '%s'", s->name, now.host, s->host);
	if (now.owner != s->owner)
		wl_fail("%s: its user namespace is owned by %u inside, was %u", s->name, now.owner,
			s->owner);
	for (int k = 0; k < 2 && s->kid[k]; k++) {
		if (waitpid(s->kid[k], &st, 0) != s->kid[k])
			wl_fail("%s: waitpid: %s", s->name, strerror(errno));
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			wl_fail("%s: its child failed (status %#x)", s->name, st);
	}
}

static bool deny(void)
{
	return !strcmp(mode, "deny");
}

static _Noreturn void grandchild(const char *c_link)
{
	static const gid_t g[] = {8};
	struct self s = {0};

	if (!deny() && setgroups(1, g) < 0)
		wl_fail("G: setgroups: %s", strerror(errno));
	if (setresgid(21, 21, 21) < 0 || setresuid(20, 20, 20) < 0)
		wl_fail("G: setres[ug]id: %s", strerror(errno));
	self_snap(&s, "G");
	WL_CHECK(!strcmp(s.ns_link, c_link), "G: in %s, C in %s", s.ns_link, c_link);
	close(setup_w);
	wait_verify();
	self_check(&s);
	exit(0);
}

static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* Refused modes: the state the dump must refuse, in C. */
static void refused_state(void)
{
	pthread_t t;

	if (!strcmp(mode, "threads") && pthread_create(&t, NULL, spin, NULL))
		wl_fail("C: pthread_create");
}

/*
 * Mode nested: C's child N unshares a user namespace inside C's, whose maps
 * C writes (in C's ids: 5, 50-59 are C's 200005, 200050-200059), and sets
 * ids of its own there.
 */
static pid_t nested_child(void)
{
	static const gid_t g[] = {2};
	int ready[2], go[2];
	struct self s = {0};
	char path[64], c;
	pid_t n;

	if (pipe(ready) < 0 || pipe(go) < 0)
		wl_fail("C: pipe: %s", strerror(errno));
	n = fork();
	if (n < 0)
		wl_fail("C: fork: %s", strerror(errno));
	if (n == 0) {
		close(ready[0]);
		close(go[1]);
		/* Dumpable: its /proc files are then its euid's, C's too, not root's. */
		if (unshare(CLONE_NEWUSER) < 0 || prctl(PR_SET_DUMPABLE, 1) < 0)
			wl_fail("N: unshare(CLONE_NEWUSER): %s", strerror(errno));
		if (write(ready[1], "u", 1) != 1 || read(go[0], &c, 1) != 1)
			wl_fail("N: C did not write the maps");
		if (setgroups(1, g) < 0 || setresgid(3, 3, 3) < 0 || setresuid(4, 4, 4) < 0)
			wl_fail("N: set its ids: %s", strerror(errno));
		self_snap(&s, "N");
		close(setup_w);
		wait_verify();
		self_check(&s);
		exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1)
		wl_fail("C: N did not unshare");
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)n);
	write_text(path, "0 5 1\n1 50 10\n");
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)n);
	write_text(path, "0 5 1\n1 50 10\n");
	if (write(go[1], "g", 1) != 1)
		wl_fail("C: write: %s", strerror(errno));
	close(go[1]);
	close(ready[0]);
	return n;
}

/*
 * Mode owned: a child P in a PID namespace that C's user namespace owns;
 * mode unmapped: a child P whose real uid (C's before, 0 outside) has no
 * id inside.
 */
static pid_t refused_child(bool owned)
{
	struct clone_args ca = {.flags = owned ? CLONE_NEWPID : 0, .exit_signal = SIGCHLD};
	pid_t p = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));

	if (p < 0)
		wl_fail("C: clone3: %s", strerror(errno));
	if (p == 0) {
		if (owned && (setresgid(31, 31, 31) < 0 || setresuid(30, 30, 30) < 0))
			wl_fail("P: setres[ug]id: %s", strerror(errno));
		close(setup_w);
		wait_verify();
		exit(0);
	}
	return p;
}

static _Noreturn void child(int go)
{
	static const gid_t g[] = {3, 4};
	struct self s = {0};
	char c;

	if (deny() && setgroups(0, NULL) < 0)
		wl_fail("C: setgroups: %s", strerror(errno));
	if (setresuid((uid_t)-1, OWNER, (uid_t)-1) < 0 || unshare(CLONE_NEWUSER) < 0)
		wl_fail("C: euid %d, unshare(CLONE_NEWUSER): %s", OWNER, strerror(errno));
	if (write(setup_w, "u", 1) != 1 || read(go, &c, 1) != 1)
		wl_fail("C: the helper did not write the maps");
	close(go);
	if (!strcmp(mode, "uts") &&
	    (unshare(CLONE_NEWUTS) < 0 || sethostname(UTS_NAME, strlen(UTS_NAME)) < 0))
		wl_fail("C: a UTS namespace of its own: %s", strerror(errno));
	if (!deny() && setgroups(2, g) < 0)
		wl_fail("C: setgroups: %s", strerror(errno));
	if (setresgid(5, 6, 7) < 0)
		wl_fail("C: setresgid: %s", strerror(errno));
	s.kid[0] = fork();
	if (s.kid[0] < 0)
		wl_fail("C: fork: %s", strerror(errno));
	if (s.kid[0] == 0) {
		char link[64];
		ssize_t n = readlink("/proc/self/ns/user", link, sizeof(link) - 1);

		link[n < 0 ? 0 : n] = '\0';
		grandchild(link);
	}
	if (!strcmp(mode, "owned") || !strcmp(mode, "unmapped"))
		s.kid[1] = refused_child(!strcmp(mode, "owned"));
	if (!strcmp(mode, "nested"))
		s.kid[1] = nested_child();
	if (prctl(PR_SET_KEEPCAPS, 1) < 0 || setresuid(10, 11, 12) < 0)
		wl_fail("C: setresuid: %s", strerror(errno));
	set_caps(CAP(CAP_KILL) | CAP(CAP_NET_BIND_SERVICE) | CAP(CAP_SYS_CHROOT), CAP(CAP_KILL),
		 CAP(CAP_NET_BIND_SERVICE));
	self_snap(&s, "C");
	refused_state();
	close(setup_w);
	wait_verify();
	self_check(&s);
	exit(0);
}

/* The lines of /proc/@pid/status O compares, and the maps. */
static void outside_view(pid_t pid, char *out, size_t len)
{
	static const char *const keys[] = {"Uid",    "Gid",    "Groups", "CapInh",
					   "CapPrm", "CapEff", "CapBnd", "CapAmb"};
	char path[64], text[TEXT_MAX], *line;
	size_t used = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	read_text(path, text, sizeof(text));
	for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (!strncmp(line, keys[k], strlen(keys[k])) &&
			    line[strlen(keys[k])] == ':')
				used += (size_t)snprintf(out + used, len - used, "%s\n", line);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	read_text(path, text, sizeof(text));
	used += (size_t)snprintf(out + used, len - used, "uid_map %s", text);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
	read_text(path, text, sizeof(text));
	used += (size_t)snprintf(out + used, len - used, "gid_map %s", text);
	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
	read_text(path, text, sizeof(text));
	used += (size_t)snprintf(out + used, len - used, "setgroups %s", text);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	used += (size_t)snprintf(out + used, len - used, "owner %u parent %s\n", ns_owner(path),
				 ns_parent_ino(path) == own_user ? "O's" : "another");
	snprintf(path, sizeof(path), "/proc/%d/ns/uts", (int)pid);
	snprintf(out + used, len - used, "uts owned by %s\n",
		 owner_ino(path) == own_user		  ? "O's"
		 : owner_ino(path) == ns_ino(pid, "user") ? "its own"
							  : "another");
}

/* C's children, oldest first: G, then N or P if there is one. */
static int children_of(pid_t pid, pid_t *out, int max)
{
	char path[80], text[64], *p = text, *end;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	read_text(path, text, sizeof(text));
	for (long v; n < max && (v = strtol(p, &end, 10), end != p); p = end)
		out[n++] = (pid_t)v;
	return n;
}

/* Mode siblings: O's second child S joins C's user namespace with setns. */
static void sibling(pid_t c)
{
	char path[64];
	pid_t s = fork();
	int fd;

	if (s < 0)
		wl_fail("fork: %s", strerror(errno));
	if (s > 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)c);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWUSER) < 0 || setresgid(9, 9, 9) < 0 ||
	    setresuid(9, 9, 9) < 0)
		wl_fail("S: join C's user namespace: %s", strerror(errno));
	if (!strcmp(mode, "elsewhere") && unshare(CLONE_NEWUSER) < 0)
		wl_fail("S: a user namespace nested in C's: %s", strerror(errno));
	close(fd);
	close(setup_w);
	wait_verify();
	exit(0);
}

/* C and G share one user namespace, not O's. */
static void same_ns(pid_t c, pid_t g)
{
	char path[64], lc[64], lg[64], lo[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)c);
	n = readlink(path, lc, sizeof(lc) - 1);
	lc[n < 0 ? 0 : n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)g);
	n = readlink(path, lg, sizeof(lg) - 1);
	lg[n < 0 ? 0 : n] = '\0';
	n = readlink("/proc/self/ns/user", lo, sizeof(lo) - 1);
	lo[n < 0 ? 0 : n] = '\0';
	if (!*lc || strcmp(lc, lg) || !strcmp(lc, lo))
		wl_fail("O: C is in '%s', G in '%s', O in '%s'", lc, lg, lo);
}

int main(int argc, char **argv)
{
	static char before[3][TEXT_MAX], now[TEXT_MAX];
	int setup[2], go[2], verify[2], st, n;
	struct stat st_user;
	char path[64], c;
	pid_t kid, all[3];

	wl_init("userns");
	if (stat("/proc/self/ns/user", &st_user) < 0)
		wl_fail("stat /proc/self/ns/user: %s", strerror(errno));
	own_user = st_user.st_ino;
	if (argc > 1)
		mode = argv[1];
	if (pipe(setup) < 0 || pipe(go) < 0 || pipe(verify) < 0)
		wl_fail("pipe: %s", strerror(errno));
	verify_r = verify[0];
	verify_w = verify[1];
	setup_w = setup[1];
	if (!strcmp(mode, "pidns")) {
		struct clone_args ca = {.flags = CLONE_NEWPID, .exit_signal = SIGCHLD};

		kid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	} else {
		kid = fork();
	}
	if (kid < 0)
		wl_fail("fork: %s", strerror(errno));
	if (kid == 0) {
		close(setup[0]);
		close(go[1]);
		child(go[0]);
	}
	close(setup[1]);
	close(go[0]);
	if (read(setup[0], &c, 1) != 1)
		wl_fail("C did not unshare its user namespace");
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)kid);
	write_text(path, UID_MAP);
	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)kid);
	if (deny())
		write_text(path, "deny");
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)kid);
	write_text(path, GID_MAP);
	if (write(go[1], "g", 1) != 1)
		wl_fail("write: %s", strerror(errno));
	close(go[1]);
	if (!strcmp(mode, "siblings") || !strcmp(mode, "elsewhere"))
		sibling(kid);
	/* Every process closes its end once set up: EOF when all are. */
	while (read(setup[0], &c, 1) > 0)
		;
	close(setup[0]);
	all[0] = kid;
	n = 1 + children_of(kid, all + 1, 2);
	WL_CHECK(n > 1, "C has no child");
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)kid);
	WL_CHECK(ns_owner(path) == OWNER && ns_parent_ino(path) == own_user,
		 "C's user namespace: owner %u, parent %llu, O's %llu", ns_owner(path),
		 (unsigned long long)ns_parent_ino(path), (unsigned long long)own_user);
	for (int i = 0; i < n; i++)
		outside_view(all[i], before[i], sizeof(before[i]));
	wl_ready();
	wl_wait_verify();
	for (int i = 0; i < n; i++) {
		outside_view(all[i], now, sizeof(now));
		if (strcmp(now, before[i]))
			wl_fail("O: %s from outside is now\n%swas\n%s", i ? "a child of C" : "C",
				now, before[i]);
	}
	same_ns(kid, all[1]);
	close(verify_w);
	if (waitpid(kid, &st, 0) != kid)
		wl_fail("O: waitpid: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		wl_fail("O: C failed (status %#x)", st);
	wl_note("a user namespace (%s): maps, setgroups, owner, ids and capabilities "
		"inside and out intact",
		mode);
	return 0;
}
