// SPDX-License-Identifier: GPL-2.0-only
/*
 * The common fields of fdinfo: the kernel prints "pos:" in decimal and
 * "flags:" in octal, one per line, before the fields of the fd's kind;
 * then one "lock:" line per lock of the fd's file that its process (POSIX
 * locks) or its description (OFD locks, flock) holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/cleanup.h>

#include "fdinfo.h"

const char *files_fdinfo_field(const char *text, const char *key)
{
	size_t len = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, key, len) && l[len] == ':')
			return l + len + 1;
	return NULL;
}

static int parse_num(const char *v, int base, uint64_t *out)
{
	char *end;

	if (!v)
		return -EBADMSG;
	v += strspn(v, " \t");
	if (*v < '0' || *v > '9')
		return -EBADMSG;
	errno = 0;
	*out = strtoull(v, &end, base);
	if (errno || (*end && *end != '\n' && *end != ' ' && *end != '\t'))
		return -EBADMSG;
	return 0;
}

int files_fdinfo_u64(const char *text, const char *key, int base, uint64_t *out)
{
	return parse_num(files_fdinfo_field(text, key), base, out);
}

int files_fdinfo_parse(const char *text, struct files_fdinfo *out)
{
	uint64_t pos, flags, mnt = 0;

	if (parse_num(files_fdinfo_field(text, "pos"), 10, &pos) < 0 ||
	    parse_num(files_fdinfo_field(text, "flags"), 8, &flags) < 0 || flags > UINT32_MAX)
		return -EBADMSG;
	if (files_fdinfo_field(text, "mnt_id") &&
	    (parse_num(files_fdinfo_field(text, "mnt_id"), 10, &mnt) < 0 || mnt > INT32_MAX))
		return -EBADMSG;
	*out = (struct files_fdinfo){.pos = pos, .flags = (unsigned int)flags, .mnt_id = (int)mnt};
	return 0;
}

const char *files_fdinfo_next(const char **cursor, const char *key)
{
	const char *v = files_fdinfo_field(*cursor, key);

	*cursor = v ? v + strcspn(v, "\n") : *cursor + strlen(*cursor);
	return v;
}

/* The next word of a line at *@p (moved past it) into @buf; false at the end of the line. */
static bool word(const char **p, char *buf, size_t size)
{
	size_t n;

	*p += strspn(*p, " \t");
	n = strcspn(*p, " \t\n");
	if (!n || n >= size)
		return false;
	memcpy(buf, *p, n);
	buf[n] = '\0';
	*p += n;
	return true;
}

/* What crf does not restore, by the words the kernel prints for it. */
static const char *unsupported(const char *kind, const char *mode)
{
	if (!strcmp(kind, "LEASE"))
		return "a lease";
	if (!strcmp(kind, "DELEG"))
		return "a delegation";
	if (strcmp(kind, "POSIX") && strcmp(kind, "OFDLCK") && strcmp(kind, "FLOCK"))
		return "a lock of an unknown kind";
	if (!strcmp(mode, "MANDATORY"))
		return "a mandatory lock";
	if (strcmp(mode, "ADVISORY"))
		return "a lock of an unknown mode";
	return NULL;
}

static int lock_range(const char *start, const char *end, struct files_lock *out)
{
	char *e;

	errno = 0;
	out->start = strtoull(start, &e, 10);
	if (errno || *e || *start < '0' || *start > '9')
		return -EBADMSG;
	out->to_eof = !strcmp(end, "EOF");
	if (out->to_eof) {
		out->end = 0;
		return 0;
	}
	out->end = strtoull(end, &e, 10);
	if (errno || *e || *end < '0' || *end > '9' || out->end < out->start)
		return -EBADMSG;
	return 0;
}

int files_fdinfo_lock(const char *value, struct files_lock *out, const char **what)
{
	char id[32], kind[16], mode[16], type[16], pid[16], dev[64], start[32], end[32];
	const char *p = value;
	char *e;
	long v;

	*what = NULL;
	if (!word(&p, id, sizeof(id)) || id[strlen(id) - 1] != ':' || !word(&p, kind, sizeof(kind)))
		return -EBADMSG;
	if (!strcmp(kind, "->"))
		return 1;
	if (!word(&p, mode, sizeof(mode)) || !word(&p, type, sizeof(type)))
		return -EBADMSG;
	*what = unsupported(kind, mode);
	if (*what)
		return -ENOTSUP;
	if (!word(&p, pid, sizeof(pid)) || !word(&p, dev, sizeof(dev)) ||
	    !word(&p, start, sizeof(start)) || !word(&p, end, sizeof(end)) ||
	    word(&p, id, sizeof(id)))
		return -EBADMSG;
	memset(out, 0, sizeof(*out));
	out->kind = !strcmp(kind, "POSIX")    ? FILES_LOCK_POSIX
		    : !strcmp(kind, "OFDLCK") ? FILES_LOCK_OFD
					      : FILES_LOCK_FLOCK;
	if (strcmp(type, "READ") && strcmp(type, "WRITE"))
		return -EBADMSG;
	out->write = !strcmp(type, "WRITE");
	errno = 0;
	v = strtol(pid, &e, 10);
	if (errno || *e || v < -1 || v > INT32_MAX)
		return -EBADMSG;
	out->pid = (int)v;
	if (sscanf(dev, "%x:%x:%" SCNu64 "%s", &out->major, &out->minor, &out->ino, id) != 3)
		return -EBADMSG;
	return lock_range(start, end, out);
}

int files_proc_read(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int f = -1;
	ssize_t n;

	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -errno;
	n = read(f, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

int files_fdinfo_read_all(int pid, int fd, char **text)
{
	size_t size = 4096, len = 0;
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int f = -1;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (!buf || len + 1 >= size) {
			char *v = realloc(buf, size *= 2);

			if (!v)
				return -ENOMEM;
			buf = v;
		}
		n = read(f, buf + len, size - len - 1);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*text = TAKE_PTR(buf);
	return 0;
}

int files_fdinfo_read_text(int pid, int fd, char *buf, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	return files_proc_read(path, buf, size);
}

int files_fdinfo_read(int pid, int fd, struct files_fdinfo *out)
{
	char buf[4096];
	int r = files_fdinfo_read_text(pid, fd, buf, sizeof(buf));

	return r < 0 ? r : files_fdinfo_parse(buf, out);
}
