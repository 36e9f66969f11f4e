// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fdinfo lines of anonymous-inode fds, as the kernel prints them:
 * "eventfd-count:" in hex padded with spaces, "eventfd-semaphore:" 0 or 1,
 * timerfd's "clockid:" and "ticks:" in decimal and "settime flags:" in
 * octal, signalfd's "sigmask:" in hex, and pidfd's "Pid:" (-1 once the
 * process is reaped) and "NSpid:".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anonfd.h"
#include "fdinfo.h"

static int parse_eventfd(const char *text, struct files_anon_info *out)
{
	uint64_t sem = 0;

	if (files_fdinfo_u64(text, "eventfd-count", 16, &out->count) < 0)
		return -EBADMSG;
	/* Older kernels do not print it; they had no way to ask either. */
	if (files_fdinfo_field(text, "eventfd-semaphore") &&
	    (files_fdinfo_u64(text, "eventfd-semaphore", 10, &sem) < 0 || sem > 1))
		return -EBADMSG;
	out->semaphore = sem;
	return 0;
}

static int parse_timerfd(const char *text, struct files_anon_info *out)
{
	uint64_t clk, fl;

	if (files_fdinfo_u64(text, "clockid", 10, &clk) < 0 || clk > 64 ||
	    files_fdinfo_u64(text, "ticks", 10, &out->ticks) < 0 ||
	    files_fdinfo_u64(text, "settime flags", 8, &fl) < 0 || fl > 0xffff)
		return -EBADMSG;
	out->clockid = (int)clk;
	out->settime_flags = (unsigned int)fl;
	return 0;
}

static int parse_pid(const char *text, struct files_anon_info *out)
{
	const char *v = files_fdinfo_field(text, "Pid");
	char *end;
	long pid;

	if (!v)
		return -EBADMSG;
	errno = 0;
	pid = strtol(v, &end, 10);
	if (errno || end == v || (*end && *end != '\n') || pid < -1 || pid == 0 || pid > 1 << 22)
		return -EBADMSG;
	out->pid = (int)pid;
	return 0;
}

int files_anon_parse(const char *kind, const char *text, struct files_anon_info *out)
{
	*out = (struct files_anon_info){0};
	if (!strcmp(kind, "eventfd"))
		return parse_eventfd(text, out);
	if (!strcmp(kind, "timerfd"))
		return parse_timerfd(text, out);
	if (!strcmp(kind, "signalfd"))
		return files_fdinfo_u64(text, "sigmask", 16, &out->sigmask);
	if (!strcmp(kind, "pidfd"))
		return parse_pid(text, out);
	return 0;
}

int files_anon_parse_nspid(const char *text, int *v, int max)
{
	const char *p = files_fdinfo_field(text, "NSpid");
	int n = 0;

	if (!p)
		return -EBADMSG;
	for (;;) {
		char *end;
		long pid;

		p += strspn(p, " \t");
		if (!*p || *p == '\n')
			break;
		errno = 0;
		pid = strtol(p, &end, 10);
		if (errno || end == p || pid < 1 || pid > 1 << 22 || n == max)
			return -EBADMSG;
		v[n++] = (int)pid;
		p = end;
	}
	return n ? n : -EBADMSG;
}

const char *files_memfd_name(const char *link, char *buf, size_t size)
{
	static const char prefix[] = "/memfd:", suffix[] = " (deleted)";
	size_t len = strlen(link), pl = sizeof(prefix) - 1, sl = sizeof(suffix) - 1;

	if (len < pl + sl || strncmp(link, prefix, pl) || strcmp(link + len - sl, suffix) ||
	    len - pl - sl >= size)
		return NULL;
	memcpy(buf, link + pl, len - pl - sl);
	buf[len - pl - sl] = '\0';
	return buf;
}
