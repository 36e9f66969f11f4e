// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <crf/log.h>

#include "procfs.h"
#include "util.h"

int crf_read_file(const char *path, char **text)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0, cap = 4096;
	char *buf;

	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *b = realloc(buf, cap * 2);

			if (!b) {
				free(buf);
				return -ENOMEM;
			}
			buf = b;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			free(buf);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*text = buf;
	return 0;
}

/* The value after "Key:\t" at the start of a line, or NULL. */
static const char *field(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, n) && p[n] == ':')
			return p + n + 1;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static int hex64(const char *text, const char *key, uint64_t *v)
{
	const char *f = field(text, key);

	if (!f || sscanf(f, " %" SCNx64, v) != 1)
		return -EINVAL;
	return 0;
}

static int ids4(const char *text, const char *key, uint32_t v[4])
{
	const char *f = field(text, key);

	if (!f || sscanf(f, " %u %u %u %u", &v[0], &v[1], &v[2], &v[3]) != 4)
		return -EINVAL;
	return 0;
}

static int groups(const char *text, struct crf_proc_status *st)
{
	const char *f = field(text, "Groups");
	char *end;

	if (!f)
		return -EINVAL;
	st->n_groups = 0;
	for (;;) {
		unsigned long g;

		while (*f == ' ' || *f == '\t')
			f++;
		if (*f == '\n' || !*f)
			return 0;
		g = strtoul(f, &end, 10);
		if (end == f || st->n_groups == CRF_MAX_GROUPS)
			return -EINVAL;
		st->groups[st->n_groups++] = (uint32_t)g;
		f = end;
	}
}

int parse_status(const char *text, struct crf_proc_status *st)
{
	const char *f;
	uint64_t nnp = 0;

	memset(st, 0, sizeof(*st));
	f = field(text, "State");
	if (!f || sscanf(f, " %c", &st->state) != 1)
		return -EINVAL;
	f = field(text, "Umask");
	if (!f || sscanf(f, " %o", &st->umask) != 1)
		return -EINVAL;
	f = field(text, "Threads");
	if (!f || sscanf(f, " %d", &st->threads) != 1)
		return -EINVAL;
	if (ids4(text, "Uid", st->uid) || ids4(text, "Gid", st->gid) || groups(text, st))
		return -EINVAL;
	if (hex64(text, "SigBlk", &st->sig_blk) || hex64(text, "SigPnd", &st->sig_pnd) ||
	    hex64(text, "ShdPnd", &st->shd_pnd) || hex64(text, "CapInh", &st->cap_inh) ||
	    hex64(text, "CapPrm", &st->cap_prm) || hex64(text, "CapEff", &st->cap_eff) ||
	    hex64(text, "CapBnd", &st->cap_bnd) || hex64(text, "CapAmb", &st->cap_amb))
		return -EINVAL;
	f = field(text, "NoNewPrivs");
	if (f && sscanf(f, " %" SCNu64, &nnp) != 1)
		return -EINVAL;
	st->no_new_privs = (uint32_t)nnp;
	return 0;
}

int parse_nspid(const char *text, pid_t *ids, size_t max)
{
	const char *line = field(text, "NSpid");
	size_t n = 0;
	char *end;

	if (!line)
		return 0;
	for (;;) {
		long v;

		while (*line == ' ' || *line == '\t')
			line++;
		if (*line == '\n' || !*line)
			return (int)n;
		v = strtol(line, &end, 10);
		if (end == line || n == max)
			return -EINVAL;
		ids[n++] = (pid_t)v;
		line = end;
	}
}

/* The kernel's names of the limits, in RLIMIT_* order (fs/proc/base.c). */
static const char *const limit_names[CRF_NLIMITS] = {
	[RLIMIT_CPU] = "Max cpu time",
	[RLIMIT_FSIZE] = "Max file size",
	[RLIMIT_DATA] = "Max data size",
	[RLIMIT_STACK] = "Max stack size",
	[RLIMIT_CORE] = "Max core file size",
	[RLIMIT_RSS] = "Max resident set",
	[RLIMIT_NPROC] = "Max processes",
	[RLIMIT_NOFILE] = "Max open files",
	[RLIMIT_MEMLOCK] = "Max locked memory",
	[RLIMIT_AS] = "Max address space",
	[RLIMIT_LOCKS] = "Max file locks",
	[RLIMIT_SIGPENDING] = "Max pending signals",
	[RLIMIT_MSGQUEUE] = "Max msgqueue size",
	[RLIMIT_NICE] = "Max nice priority",
	[RLIMIT_RTPRIO] = "Max realtime priority",
	[RLIMIT_RTTIME] = "Max realtime timeout",
};

static int limit_value(const char *s, uint64_t *v, const char **end)
{
	char *e;

	while (*s == ' ')
		s++;
	if (!strncmp(s, "unlimited", 9)) {
		*v = RLIM_INFINITY;
		*end = s + 9;
		return 0;
	}
	errno = 0;
	*v = strtoull(s, &e, 10);
	if (e == s || errno)
		return -EINVAL;
	*end = e;
	return 0;
}

int parse_limits(const char *text, struct crf_proc_limit lim[CRF_NLIMITS])
{
	for (int i = 0; i < CRF_NLIMITS; i++) {
		const char *p = strstr(text, limit_names[i]), *end;

		/* Columns are padded to 26 characters after the name. */
		if (!p || strlen(p) < 26)
			return -EINVAL;
		p += 26;
		if (limit_value(p, &lim[i].cur, &end) || limit_value(end, &lim[i].max, &end))
			return -EINVAL;
	}
	return 0;
}

/*
 * "HOW/WHO.ID": HOW is sigev_notify without SIGEV_THREAD_ID ("signal",
 * "none", "thread": SIGEV_THREAD, which the kernel signals as SIGEV_SIGNAL),
 * WHO "tid" when SIGEV_THREAD_ID is set (a timer_create() with
 * SIGEV_THREAD_ID, glibc's SIGEV_THREAD helper's too), else "pid".
 */
static int timer_notify(const char *s, struct crf_proc_timer *t)
{
	char how[16], who[8];

	if (sscanf(s, " %15[a-z]/%7[a-z].%d", how, who, &t->notify_tid) != 3)
		return -EINVAL;
	if (!strcmp(how, "signal"))
		t->notify = SIGEV_SIGNAL;
	else if (!strcmp(how, "thread"))
		t->notify = SIGEV_THREAD;
	else if (!strcmp(how, "none"))
		t->notify = SIGEV_NONE;
	else
		return -EINVAL;
	if (!strcmp(who, "tid"))
		t->notify |= SIGEV_THREAD_ID;
	else if (strcmp(who, "pid"))
		return -EINVAL;
	return 0;
}

/* Records start with "ID: " at the start of a line ("ClockID: " does not). */
static const char *next_timer(const char *text, const char *from)
{
	const char *p;

	if (from == text && !strncmp(text, "ID: ", 4))
		return text;
	p = strstr(from, "\nID: ");
	return p ? p + 1 : NULL;
}

int parse_timers(const char *text, struct crf_proc_timer *t, size_t max)
{
	size_t n = 0;

	for (const char *p = next_timer(text, text); p; p = next_timer(text, p + 4)) {
		const char *sig = strstr(p, "\nsignal: "), *notify = strstr(p, "\nnotify: ");
		const char *clock = strstr(p, "\nClockID: ");

		if (n == max || !sig || !notify || !clock)
			return -EINVAL;
		if (sscanf(p, "ID: %d", &t[n].id) != 1 ||
		    sscanf(sig, "\nsignal: %d/%" SCNx64, &t[n].signo, &t[n].value) != 2 ||
		    timer_notify(notify + 9, &t[n]) < 0 ||
		    sscanf(clock, "\nClockID: %d", &t[n].clock) != 1)
			return -EINVAL;
		n++;
	}
	return (int)n;
}

int list_tids(pid_t pid, pid_t **tids, size_t *n)
{
	char path[64];
	struct dirent *e;
	size_t cap = 0;
	DIR *d;

	*tids = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : crf_error_errno(errno, "%s", path);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (*n == cap) {
			pid_t *t = realloc(*tids, (cap = cap ? cap * 2 : 16) * sizeof(**tids));

			if (!t) {
				closedir(d);
				return crf_error_errno(ENOMEM, "%s", path);
			}
			*tids = t;
		}
		(*tids)[(*n)++] = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return 0;
}
