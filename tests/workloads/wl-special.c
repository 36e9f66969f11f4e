// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-special MODE: state that only the test plugin crf-test-special
 * (tests/plugins/special.c) dumps and restores, through the kind registry:
 *
 *   vma  a MAP_PRIVATE mapping of a memfd named "crf-test-special" (its fd
 *        closed), filled with a known pattern: memory the mem plugin
 *        refuses ("a private mapping of a memfd"), so only the test
 *        plugin can have saved it.  After the restore it is at the same
 *        address, still a private mapping of a memfd of that name, with
 *        the same bytes, and writable
 *   uts  unshare(CLONE_NEWUTS) with a hostname and domain name of its own,
 *        and a child forked into that namespace: after the restore both
 *        are in one UTS namespace, not the host's (the one the workload
 *        started in), with the same names
 */
#include "wl.h"

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define VMA_LEN (3 * WL_PAGE)
#define SEED	0x5bec1a1ull

static char host[64], domain[64];
static pid_t child;

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

/* The maps line of the mapping at @addr. */
static void maps_line(void *addr, char *out, size_t len)
{
	char line[512], start[32];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		wl_fail("open /proc/self/maps: %m");
	snprintf(start, sizeof(start), "%lx-", (unsigned long)addr);
	out[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, start, strlen(start)))
			snprintf(out, len, "%s", line);
	fclose(f);
}

static void run_vma(void)
{
	char line[512];
	uint64_t want;
	char *p;
	int fd = memfd_create("crf-test-special", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, VMA_LEN) < 0)
		wl_fail("memfd: %m");
	p = mmap(NULL, VMA_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		wl_fail("mmap: %m");
	close(fd);
	wl_fill(p, VMA_LEN, SEED);
	want = wl_hash(p, VMA_LEN);
	wl_publish("corrupt_addr", "%lx", (unsigned long)p + 100);
	wl_ready();
	wl_wait_verify();
	maps_line(p, line, sizeof(line));
	WL_CHECK(line[0], "no mapping at %p any more", (void *)p);
	WL_CHECK(strstr(line, " rw-p ") && strstr(line, "/memfd:crf-test-special"),
		 "the mapping at %p is now '%.200s'", (void *)p, line);
	WL_CHECK(wl_hash(p, VMA_LEN) == want, "the bytes of the mapping at %p differ", (void *)p);
	p[VMA_LEN - 1] ^= 1;
}

static void run_uts(void)
{
	char mine[96], now[96], hostns[96];
	struct utsname u;
	int status;

	link_of(getpid(), hostns, sizeof(hostns));
	if (unshare(CLONE_NEWUTS) < 0)
		wl_fail("unshare(CLONE_NEWUTS): %m");
	snprintf(host, sizeof(host), "crf-special-%d", (int)getpid());
	snprintf(domain, sizeof(domain), "dom-special-%d", (int)getpid());
	if (sethostname(host, strlen(host)) < 0 || setdomainname(domain, strlen(domain)) < 0)
		wl_fail("sethostname: %m");
	child = fork();
	if (child < 0)
		wl_fail("fork: %m");
	if (child == 0) {
		for (;;)
			pause();
	}
	link_of(getpid(), mine, sizeof(mine));
	wl_ready();
	wl_wait_verify();
	link_of(getpid(), now, sizeof(now));
	WL_CHECK(strcmp(now, hostns), "in the host's UTS namespace %s", now);
	link_of(child, mine, sizeof(mine));
	WL_CHECK(!strcmp(now, mine), "the child is in %s, its parent in %s", mine, now);
	if (uname(&u) < 0)
		wl_fail("uname: %m");
	WL_CHECK(!strcmp(u.nodename, host), "hostname is '%s', not '%s'", u.nodename, host);
	WL_CHECK(!strcmp(u.domainname, domain), "domain name is '%s', not '%s'", u.domainname,
		 domain);
	kill(child, SIGKILL);
	if (waitpid(child, &status, 0) != child)
		wl_fail("waitpid: %m");
}

int main(int argc, char **argv)
{
	wl_init("special");
	if (argc != 2)
		wl_fail("usage: wl-special vma|uts");
	if (!strcmp(argv[1], "vma"))
		run_vma();
	else if (!strcmp(argv[1], "uts"))
		run_uts();
	else
		wl_fail("unknown mode '%s'", argv[1]);
	return 0;
}
