// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-mm: what the kernel knows about a program's memory besides its
 * mappings survives: the executable, the command line, the environment,
 * the auxiliary vector and the code, data, brk and stack bounds.
 *
 * usage: wl-mm [ARG...]   (the e2e tests pass arguments with spaces and an
 * empty one)
 *
 * As setproctitle() does, the workload moves its command line and its
 * environment into a page of its own with prctl(PR_SET_MM_MAP): a new
 * title, and the environment with one more variable.  So a restore that
 * left the bounds at crf restore's own, or at the original stack, shows.
 *
 * After restore: /proc/self/exe names the same file (path, device, inode);
 * /proc/self/cmdline, /proc/self/environ and /proc/self/auxv read the same
 * bytes; the memory at the command line and environment bounds holds those
 * bytes; the ten bounds of /proc/self/stat and the brk are the same; the
 * original argv and environment strings are intact where they were.
 */
#include "wl.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/prctl.h>

#define TITLE	  "wl-mm: a title of its own\0with a second word\0"
#define MOVED_VAR "WL_MM_MOVED=yes"

extern char **environ;

/* /proc/PID/stat fields, numbered as in proc(5). */
static const int bound_fields[] = {26, 27, 28, 45, 46, 47, 48, 49, 50, 51};
static const char *const bound_names[] = {
	"start_code", "end_code",  "start_stack", "start_data", "end_data",
	"start_brk",  "arg_start", "arg_end",	  "env_start",	"env_end",
};
#define N_BOUNDS (sizeof(bound_fields) / sizeof(bound_fields[0]))
enum {
	START_CODE,
	END_CODE,
	START_STACK,
	START_DATA,
	END_DATA,
	START_BRK,
	ARG_START,
	ARG_END,
	ENV_START,
	ENV_END
};

struct mm {
	char exe[PATH_MAX];
	struct stat exe_st;
	char cmdline[4096], environ[65536], auxv[1024];
	ssize_t cmdline_len, environ_len, auxv_len;
	unsigned long bounds[N_BOUNDS];
	unsigned long brk;
};

static ssize_t read_bytes(const char *path, char *buf, size_t size)
{
	ssize_t n = wl_read_file(path, buf, size);

	WL_CHECK(n >= 0, "read %s: %s", path, strerror((int)-n));
	WL_CHECK((size_t)n + 1 < size, "%s: more than %zu bytes", path, size);
	return n;
}

static void read_bounds(unsigned long *out)
{
	char text[4096], *p;
	int field = 3;
	size_t k = 0;

	read_bytes("/proc/self/stat", text, sizeof(text));
	p = strrchr(text, ')');
	WL_CHECK(p, "/proc/self/stat: no command name");
	for (p += 2; *p && k < N_BOUNDS; field++) {
		if (field == bound_fields[k])
			out[k++] = strtoul(p, NULL, 10);
		p += strcspn(p, " ");
		if (*p)
			p++;
	}
	WL_CHECK(k == N_BOUNDS, "/proc/self/stat: only %zu of the bounds", k);
}

static void snap(struct mm *m)
{
	ssize_t n;

	memset(m, 0, sizeof(*m));
	n = readlink("/proc/self/exe", m->exe, sizeof(m->exe) - 1);
	WL_CHECK(n > 0, "readlink /proc/self/exe: %s", strerror(errno));
	WL_CHECK(stat("/proc/self/exe", &m->exe_st) == 0, "stat /proc/self/exe: %s",
		 strerror(errno));
	m->cmdline_len = read_bytes("/proc/self/cmdline", m->cmdline, sizeof(m->cmdline));
	m->environ_len = read_bytes("/proc/self/environ", m->environ, sizeof(m->environ));
	m->auxv_len = read_bytes("/proc/self/auxv", m->auxv, sizeof(m->auxv));
	read_bounds(m->bounds);
	m->brk = (unsigned long)syscall(SYS_brk, 0);
}

/* The bytes the kernel shows for [start, end) are the memory there. */
static void check_memory(const char *what, unsigned long start, unsigned long end,
			 const char *shown, ssize_t len)
{
	WL_CHECK(end - start == (unsigned long)len, "%s: bounds %#lx-%#lx, but %zd bytes shown",
		 what, start, end, len);
	WL_CHECK(!memcmp((const void *)start, shown, (size_t)len),
		 "%s: the memory at %#lx differs from what /proc shows", what, start);
}

static void compare(const struct mm *a, const struct mm *b)
{
	WL_CHECK(!strcmp(a->exe, b->exe), "/proc/self/exe is %s, was %s", b->exe, a->exe);
	WL_CHECK(a->exe_st.st_dev == b->exe_st.st_dev && a->exe_st.st_ino == b->exe_st.st_ino,
		 "/proc/self/exe is another file (inode %lu, was %lu)",
		 (unsigned long)b->exe_st.st_ino, (unsigned long)a->exe_st.st_ino);
	WL_CHECK(a->cmdline_len == b->cmdline_len &&
			 !memcmp(a->cmdline, b->cmdline, (size_t)a->cmdline_len),
		 "/proc/self/cmdline is \"%s\" (%zd bytes), was \"%s\" (%zd bytes)", b->cmdline,
		 b->cmdline_len, a->cmdline, a->cmdline_len);
	WL_CHECK(a->environ_len == b->environ_len &&
			 !memcmp(a->environ, b->environ, (size_t)a->environ_len),
		 "/proc/self/environ differs (%zd bytes, was %zd)", b->environ_len, a->environ_len);
	WL_CHECK(a->auxv_len == b->auxv_len && !memcmp(a->auxv, b->auxv, (size_t)a->auxv_len),
		 "/proc/self/auxv differs (%zd bytes, was %zd)", b->auxv_len, a->auxv_len);
	for (size_t i = 0; i < N_BOUNDS; i++)
		WL_CHECK(a->bounds[i] == b->bounds[i], "%s is %#lx, was %#lx", bound_names[i],
			 b->bounds[i], a->bounds[i]);
	WL_CHECK(a->brk == b->brk, "brk is %#lx, was %#lx", b->brk, a->brk);
	check_memory("command line", b->bounds[ARG_START], b->bounds[ARG_END], b->cmdline,
		     b->cmdline_len);
	check_memory("environment", b->bounds[ENV_START], b->bounds[ENV_END], b->environ,
		     b->environ_len);
}

/* The pages TITLE, the environment and MOVED_VAR take. */
static size_t moved_len(const struct mm *m)
{
	size_t len = sizeof(TITLE) - 1 + (size_t)m->environ_len + sizeof(MOVED_VAR);

	return (len + WL_PAGE - 1) & ~(WL_PAGE - 1);
}

/* Point the command line and the environment at @page (moved_len() bytes): TITLE, then the
 * environment plus one. */
static void move_args(char *page, const struct mm *m)
{
	struct prctl_mm_map map = {
		.start_code = m->bounds[START_CODE],
		.end_code = m->bounds[END_CODE],
		.start_data = m->bounds[START_DATA],
		.end_data = m->bounds[END_DATA],
		.start_brk = m->bounds[START_BRK],
		.brk = m->brk,
		.start_stack = m->bounds[START_STACK],
		.exe_fd = (uint32_t)-1,
	};
	size_t env_len = (size_t)m->environ_len;
	char *env = page + sizeof(TITLE) - 1;

	memcpy(page, TITLE, sizeof(TITLE) - 1);
	memcpy(env, m->environ, env_len);
	memcpy(env + env_len, MOVED_VAR, sizeof(MOVED_VAR));
	map.arg_start = (uint64_t)(uintptr_t)page;
	map.arg_end = (uint64_t)(uintptr_t)env;
	map.env_start = (uint64_t)(uintptr_t)env;
	map.env_end = (uint64_t)(uintptr_t)(env + env_len + sizeof(MOVED_VAR));
	WL_CHECK(prctl(PR_SET_MM, PR_SET_MM_MAP, &map, sizeof(map), 0) == 0,
		 "prctl(PR_SET_MM_MAP): %s", strerror(errno));
}

int main(int argc, char **argv)
{
	static struct mm before, after, moved;
	char **argv_copy, **env_copy, *page;
	int n_env = 0;

	wl_init("mm");
	for (char **e = environ; *e; e++)
		n_env++;
	argv_copy = calloc((size_t)argc + 1, sizeof(*argv_copy));
	env_copy = calloc((size_t)n_env + 1, sizeof(*env_copy));
	WL_CHECK(argv_copy && env_copy, "out of memory");
	for (int i = 0; i < argc; i++)
		WL_CHECK((argv_copy[i] = strdup(argv[i])), "out of memory");
	for (int i = 0; i < n_env; i++)
		WL_CHECK((env_copy[i] = strdup(environ[i])), "out of memory");

	snap(&before);
	page = mmap(NULL, moved_len(&before), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	WL_CHECK(page != MAP_FAILED, "mmap: %s", strerror(errno));
	move_args(page, &before);
	snap(&moved);
	WL_CHECK(moved.cmdline_len == sizeof(TITLE) - 1 &&
			 !memcmp(moved.cmdline, TITLE, sizeof(TITLE) - 1),
		 "the moved command line reads \"%s\"", moved.cmdline);
	WL_CHECK(moved.bounds[ARG_START] == (uintptr_t)page, "arg_start %#lx, not the page %p",
		 moved.bounds[ARG_START], (void *)page);

	wl_ready();
	wl_wait_verify();
	snap(&after);
	compare(&moved, &after);
	for (int i = 0; i < argc; i++)
		WL_CHECK(!strcmp(argv[i], argv_copy[i]), "argv[%d] is \"%s\", was \"%s\"", i,
			 argv[i], argv_copy[i]);
	for (int i = 0; i < n_env; i++)
		WL_CHECK(!strcmp(environ[i], env_copy[i]), "environ[%d] is \"%s\", was \"%s\"", i,
			 environ[i], env_copy[i]);
	wl_note("exe %s, a moved command line of %zd bytes and environment of %zd, auxv, "
		"%zu bounds and brk: intact",
		after.exe, after.cmdline_len, after.environ_len, N_BOUNDS);
	return 0;
}
