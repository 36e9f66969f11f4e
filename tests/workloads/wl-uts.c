// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-uts: a UTS namespace of the tree's own, restored by the ns plugin.
 *
 * A child "outside" is forked first and stays in the namespace the
 * workload started in.  Then the workload unshares a UTS namespace, names
 * it (hostname "crf-wl-uts-PID", a domain name), and forks a child
 * "inside", which inherits it.  After the restore: the workload and
 * "inside" share one namespace, not the one the workload started in, with
 * the same names; "outside" is in the one the workload started in (the
 * e2e test runs it from crf's), whose hostname is not ours.
 *
 * wl-uts owned: a child unshares a user and a UTS namespace, names it, and
 * the workload joins that UTS namespace (owned by the child's user
 * namespace, neither crf's nor the workload's) before the child exits: the
 * dump is refused, and after the refusal the same checks hold.
 *
 * wl-uts siblings: a child "inside" unshares a UTS namespace and names it,
 * and a second child joins it with setns: neither's parent is in it; the
 * restore makes it in the first and the second joins it (plugins/ns/share.c):
 * after it both children are in one namespace, the workload in the one it
 * started in.
 */
#include "wl.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

static void link_of(pid_t pid, char *out, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/ns/uts", (int)pid);
	n = readlink(path, out, len - 1);
	if (n < 0)
		wl_fail("readlink %s: %m", path);
	out[n] = '\0';
}

static pid_t idle_child(void)
{
	pid_t pid = fork();

	if (pid < 0)
		wl_fail("fork: %m");
	if (pid == 0)
		for (;;)
			pause();
	return pid;
}

static void reap(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	if (waitpid(pid, &st, 0) != pid)
		wl_fail("waitpid: %m");
}

/* A child that unshares a UTS namespace, names it, and idles. */
static pid_t named_child(const char *host, const char *domain)
{
	int ready[2];
	pid_t pid;
	char c;

	if (pipe(ready) < 0)
		wl_fail("pipe: %m");
	pid = fork();
	if (pid < 0)
		wl_fail("fork: %m");
	if (pid == 0) {
		close(ready[0]);
		if (unshare(CLONE_NEWUTS) < 0 || sethostname(host, strlen(host)) < 0 ||
		    setdomainname(domain, strlen(domain)) < 0 || write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		wl_fail("the child's UTS namespace: %m");
	close(ready[0]);
	return pid;
}

/* A child that joins the UTS namespace of @of with setns, and idles. */
static pid_t joined_child(pid_t of)
{
	char path[64];
	int fd;
	pid_t pid;

	snprintf(path, sizeof(path), "/proc/%d/ns/uts", (int)of);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		wl_fail("open %s: %m", path);
	pid = fork();
	if (pid < 0)
		wl_fail("fork: %m");
	if (pid == 0) {
		if (setns(fd, CLONE_NEWUTS) < 0)
			_exit(1);
		close(fd);
		for (;;)
			pause();
	}
	close(fd);
	return pid;
}

/* wl-uts siblings: see the top. */
static int siblings(const char *start, const char *host, const char *domain)
{
	char now[96], a[96], b[96];
	pid_t inside = named_child(host, domain), joined = joined_child(inside);
	struct utsname u;

	wl_ready();
	wl_wait_verify();
	link_of(getpid(), now, sizeof(now));
	WL_CHECK(!strcmp(now, start), "the workload is in %s, not %s where it was", now, start);
	link_of(inside, a, sizeof(a));
	link_of(joined, b, sizeof(b));
	WL_CHECK(strcmp(a, start), "child 'inside' is in %s, the workload's", a);
	WL_CHECK(!strcmp(a, b), "child 'inside' is in %s, the one that joined it in %s", a, b);
	if (uname(&u) < 0)
		wl_fail("uname: %m");
	WL_CHECK(strcmp(u.nodename, host), "the workload's hostname is '%s'", u.nodename);
	reap(inside);
	reap(joined);
	return 0;
}

/* A child makes a user and a UTS namespace and names it; we join the UTS one. */
static void join_owned(const char *host, const char *domain)
{
	int ready[2], done[2], fd;
	char path[64], c;
	pid_t pid;

	if (pipe(ready) < 0 || pipe(done) < 0)
		wl_fail("pipe: %m");
	pid = fork();
	if (pid < 0)
		wl_fail("fork: %m");
	if (pid == 0) {
		close(ready[0]);
		close(done[1]);
		if (unshare(CLONE_NEWUSER | CLONE_NEWUTS) < 0 ||
		    sethostname(host, strlen(host)) < 0 ||
		    setdomainname(domain, strlen(domain)) < 0 || write(ready[1], "r", 1) != 1)
			_exit(1);
		_exit(read(done[0], &c, 1) < 0);
	}
	close(ready[1]);
	close(done[0]);
	if (read(ready[0], &c, 1) != 1)
		wl_fail("the child's namespaces: %m");
	snprintf(path, sizeof(path), "/proc/%d/ns/uts", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWUTS) < 0)
		wl_fail("join %s: %m", path);
	close(fd);
	close(done[1]);
	close(ready[0]);
	if (waitpid(pid, NULL, 0) != pid)
		wl_fail("waitpid: %m");
}

int main(int argc, char **argv)
{
	char host[65], domain[65], start[96], now[96], link[96];
	bool owned = argc > 1 && !strcmp(argv[1], "owned");
	bool sibs = argc > 1 && !strcmp(argv[1], "siblings");
	pid_t outside, inside;
	struct utsname u;

	wl_init("uts");
	if (argc > 2 || (argc > 1 && !owned && !sibs))
		wl_fail("usage: wl-uts [owned|siblings]");
	link_of(getpid(), start, sizeof(start));
	snprintf(host, sizeof(host), "crf-wl-uts-%d", (int)getpid());
	snprintf(domain, sizeof(domain), "dom-wl-uts-%d.example", (int)getpid());
	if (sibs)
		return siblings(start, host, domain);
	outside = idle_child();
	if (owned)
		join_owned(host, domain);
	else if (unshare(CLONE_NEWUTS) < 0)
		wl_fail("unshare(CLONE_NEWUTS): %m");
	if (!owned &&
	    (sethostname(host, strlen(host)) < 0 || setdomainname(domain, strlen(domain)) < 0))
		wl_fail("sethostname: %m");
	inside = idle_child();
	wl_ready();
	wl_wait_verify();
	link_of(getpid(), now, sizeof(now));
	WL_CHECK(strcmp(now, start), "in the UTS namespace it started in, %s", now);
	link_of(inside, link, sizeof(link));
	WL_CHECK(!strcmp(link, now), "child 'inside' is in %s, its parent in %s", link, now);
	link_of(outside, link, sizeof(link));
	WL_CHECK(!strcmp(link, start), "child 'outside' is in %s, not %s where it was", link,
		 start);
	if (uname(&u) < 0)
		wl_fail("uname: %m");
	WL_CHECK(!strcmp(u.nodename, host), "hostname is '%s', not '%s'", u.nodename, host);
	WL_CHECK(!strcmp(u.domainname, domain), "domain name is '%s', not '%s'", u.domainname,
		 domain);
	reap(inside);
	reap(outside);
	return 0;
}
