// SPDX-License-Identifier: GPL-2.0-only
/*
 * The mm fields a task's memory is described by besides its mappings: the
 * code, data, brk, argument and environment bounds, the auxiliary vector and
 * the executable.  /proc/PID/stat shows the bounds only to a reader that may
 * ptrace the task, which crf may.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/log.h>
#include <crf/restore.h>

#include "mmfields.h"

/* Fields of /proc/PID/stat, numbered as in proc(5). */
enum {
	STAT_START_CODE = 26,
	STAT_END_CODE = 27,
	STAT_START_STACK = 28,
	STAT_START_DATA = 45,
	STAT_END_DATA = 46,
	STAT_START_BRK = 47,
	STAT_ARG_START = 48,
	STAT_ARG_END = 49,
	STAT_ENV_START = 50,
	STAT_ENV_END = 51,
};

static uint64_t *stat_field(struct crf_rst_mm *mm, int field)
{
	switch (field) {
	case STAT_START_CODE:
		return &mm->start_code;
	case STAT_END_CODE:
		return &mm->end_code;
	case STAT_START_STACK:
		return &mm->start_stack;
	case STAT_START_DATA:
		return &mm->start_data;
	case STAT_END_DATA:
		return &mm->end_data;
	case STAT_START_BRK:
		return &mm->start_brk;
	case STAT_ARG_START:
		return &mm->arg_start;
	case STAT_ARG_END:
		return &mm->arg_end;
	case STAT_ENV_START:
		return &mm->env_start;
	case STAT_ENV_END:
		return &mm->env_end;
	default:
		return NULL;
	}
}

int mem_parse_stat(const char *text, struct crf_rst_mm *mm)
{
	/* The command name (field 2) may hold spaces and ')': skip to the last ')'. */
	const char *p = strrchr(text, ')');
	int field = 3, found = 0;
	unsigned long long v;
	uint64_t *dst;
	char *end;

	if (!p)
		return -EINVAL;
	for (p++; *p && field <= STAT_ENV_END; field++) {
		while (*p == ' ')
			p++;
		dst = stat_field(mm, field);
		if (dst) {
			errno = 0;
			v = strtoull(p, &end, 10);
			if (errno || end == p)
				return -EINVAL;
			*dst = v;
			found++;
		}
		p += strcspn(p, " \n");
	}
	return found == 10 ? 0 : -EINVAL;
}

static int read_stat(pid_t pid, struct crf_rst_mm *mm)
{
	_cleanup_close_ int fd = -1;
	char path[64], buf[2048];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "open %s", path);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return crf_error_errno(errno, "read %s", path);
	buf[n] = '\0';
	if (mem_parse_stat(buf, mm))
		return crf_error_errno(EINVAL, "%s: fewer than 51 fields", path);
	return 0;
}

static int read_auxv(pid_t pid, struct crf_rst_mm *mm)
{
	char path[64];
	size_t max = sizeof(mm->auxv), got = 0;
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "open %s", path);
	while ((n = read(fd, (char *)mm->auxv + got, max - got)) > 0)
		got += n;
	if (n < 0)
		return crf_error_errno(errno, "read %s", path);
	/* The vector ends at the first AT_NULL pair. */
	for (size_t i = 0; i + 1 < got / sizeof(uint64_t); i += 2) {
		if (mm->auxv[i] == 0) {
			mm->auxv_len = i + 2;
			return 0;
		}
	}
	return crf_error_errno(E2BIG, "%s: no AT_NULL within %zu entries", path,
			       max / (2 * sizeof(uint64_t)));
}

int mem_read_mm(pid_t pid, struct crf_rst_mm *mm)
{
	int r;

	memset(mm, 0, sizeof(*mm));
	mm->exe_fd = -1;
	r = read_stat(pid, mm);
	if (r < 0)
		return r;
	return read_auxv(pid, mm);
}

static void fileref_set_stat(Crf__Mem__FileRef *ref, const struct stat *st)
{
	ref->dev = st->st_dev;
	ref->inode = st->st_ino;
	ref->size = st->st_size;
	ref->mtime_sec = st->st_mtim.tv_sec;
	ref->mtime_nsec = st->st_mtim.tv_nsec;
}

int mem_fileref_read(const char *link, Crf__Mem__FileRef **out)
{
	Crf__Mem__FileRef *ref;
	char path[PATH_MAX];
	struct stat st;
	ssize_t n;

	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return crf_error_errno(errno, "readlink %s", link);
	path[n] = '\0';
	if (stat(link, &st))
		return crf_error_errno(errno, "stat %s (%s)", link, path);
	ref = malloc(sizeof(*ref));
	if (!ref)
		return crf_error_errno(ENOMEM, "%s", link);
	crf__mem__file_ref__init(ref);
	ref->path = strdup(path);
	if (!ref->path) {
		free(ref);
		return crf_error_errno(ENOMEM, "%s", link);
	}
	fileref_set_stat(ref, &st);
	*out = ref;
	return 0;
}

void mem_fileref_free(Crf__Mem__FileRef *ref)
{
	if (!ref)
		return;
	free(ref->path);
	free(ref);
}

/* Name the first difference between the dump's file and this one; 0 if none. */
static int fileref_compare(const Crf__Mem__FileRef *ref, const struct stat *st)
{
	Crf__Mem__FileRef now = CRF__MEM__FILE_REF__INIT;

	fileref_set_stat(&now, st);
	if (now.size != ref->size)
		crf_error("%s changed since the dump (size %llu -> %llu)", ref->path,
			  (unsigned long long)ref->size, (unsigned long long)now.size);
	else if (now.mtime_sec != ref->mtime_sec || now.mtime_nsec != ref->mtime_nsec)
		crf_error("%s changed since the dump (mtime %lld.%09u -> %lld.%09u)", ref->path,
			  (long long)ref->mtime_sec, ref->mtime_nsec, (long long)now.mtime_sec,
			  now.mtime_nsec);
	else if (now.inode != ref->inode || now.dev != ref->dev)
		crf_error("%s changed since the dump (device %#llx inode %llu -> device %#llx "
			  "inode %llu)",
			  ref->path, (unsigned long long)ref->dev, (unsigned long long)ref->inode,
			  (unsigned long long)now.dev, (unsigned long long)now.inode);
	else
		return 0;
	return -ESTALE;
}

int mem_fileref_open(const Crf__Mem__FileRef *ref, int flags)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r;

	fd = open(ref->path, flags | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "open %s", ref->path);
	if (fstat(fd, &st))
		return crf_error_errno(errno, "fstat %s", ref->path);
	r = fileref_compare(ref, &st);
	if (r < 0)
		return r;
	return TAKE_FD(fd);
}
