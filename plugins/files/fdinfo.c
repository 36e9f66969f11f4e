// SPDX-License-Identifier: GPL-2.0-only
/*
 * The common fields of fdinfo: the kernel prints "pos:" in decimal and
 * "flags:" in octal, one per line, before the fields of the fd's kind.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int files_fdinfo_read_text(int pid, int fd, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int f, r;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -errno;
	n = read(f, buf, size - 1);
	r = n < 0 ? -errno : 0;
	close(f);
	if (r < 0)
		return r;
	buf[n] = '\0';
	return 0;
}

int files_fdinfo_read(int pid, int fd, struct files_fdinfo *out)
{
	char buf[4096];
	int r = files_fdinfo_read_text(pid, fd, buf, sizeof(buf));

	return r < 0 ? r : files_fdinfo_parse(buf, out);
}
