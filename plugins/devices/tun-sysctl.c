// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-device sysctls of a tun/tap interface.  A device made anew takes its
 * values from the "default" directory beside it (net/ipv4/conf/default...),
 * so what the dump saves is every writable value of the device's four
 * directories that differs from "default" there; the restore writes a
 * saved value only where the new device's differs (a tun device's own
 * defaults, accept_dad -1, need no write), and reads each back.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "tun.h"

static const char *const dirs[] = {"ipv4/conf", "ipv6/conf", "ipv4/neigh", "ipv6/neigh"};

/* The value of sysctl file @path, without its trailing newline; -errno. */
static int read_value(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return (size_t)n == size - 1 ? -E2BIG : 0;
}

static int add(Crf__Devices__TunLink *l, const char *path, const char *value)
{
	Crf__Devices__TunSysctl **v, *s;

	v = realloc(l->sysctls, (l->n_sysctls + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->sysctls = v;
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	crf__devices__tun_sysctl__init(s);
	s->path = strdup(path);
	s->value = strdup(value);
	v[l->n_sysctls++] = s;
	return s->path && s->value ? 0 : -ENOMEM;
}

static int read_dir(const char *what, const char *name, const char *dir, Crf__Devices__TunLink *l)
{
	char path[320], def[320], rel[320], val[512], dval[512];
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *e;
	struct stat st;
	int r, rd;

	snprintf(path, sizeof(path), "/proc/sys/net/%s/%s", dir, name);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : crf_error_errno(errno, "%s: %s", what, path);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/sys/net/%s/%s/%s", dir, name, e->d_name);
		if (stat(path, &st) < 0)
			return crf_error_errno(errno, "%s: %s", what, path);
		if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IWUSR))
			continue;
		r = read_value(path, val, sizeof(val));
		if (r == -EIO || r == -EPERM || r == -EACCES)
			continue; /* write-only while unset (stable_secret) */
		if (r < 0)
			return crf_error_errno(-r, "%s: %s", what, path);
		snprintf(def, sizeof(def), "/proc/sys/net/%s/default/%s", dir, e->d_name);
		rd = read_value(def, dval, sizeof(dval));
		if (rd == 0 && !strcmp(val, dval))
			continue;
		snprintf(rel, sizeof(rel), "%s/%s", dir, e->d_name);
		if (add(l, rel, val) < 0)
			return crf_error_errno(ENOMEM, "%s: sysctls", what);
	}
	return 0;
}

int tun_sysctl_read(const char *what, const char *name, Crf__Devices__TunLink *l)
{
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		int r = read_dir(what, name, dirs[i], l);

		if (r < 0)
			return r;
	}
	return 0;
}

/* @s's file for device @name: "ipv4/conf/forwarding" -> .../conf/NAME/forwarding. */
static int sysctl_path(const Crf__Devices__TunSysctl *s, const char *name, char *buf, size_t size)
{
	const char *file = strrchr(s->path, '/');

	if (!file || file == s->path || strstr(s->path, ".."))
		return -EINVAL;
	snprintf(buf, size, "/proc/sys/net/%.*s/%s%s", (int)(file - s->path), s->path, name, file);
	return 0;
}

int tun_sysctl_apply(const char *what, const char *name, const Crf__Devices__TunLink *l)
{
	char path[256], now[512];

	for (size_t i = 0; i < l->n_sysctls; i++) {
		const Crf__Devices__TunSysctl *s = l->sysctls[i];
		_cleanup_close_ int fd = -1;
		size_t len = strlen(s->value);

		if (sysctl_path(s, name, path, sizeof(path)) < 0)
			return crf_error_errno(EBADMSG, "%s: sysctl '%s' in the image", what,
					       s->path);
		if (read_value(path, now, sizeof(now)) == 0 && !strcmp(now, s->value))
			continue;
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, s->value, len) != (ssize_t)len)
			return crf_error_errno(errno, "%s: write '%s' to %s", what, s->value, path);
		if (read_value(path, now, sizeof(now)) < 0 || strcmp(now, s->value))
			return crf_error_errno(EIO, "%s: %s is '%s' after writing '%s'", what, path,
					       now, s->value);
	}
	return 0;
}

void tun_sysctl_free(Crf__Devices__TunLink *l)
{
	for (size_t i = 0; i < l->n_sysctls; i++) {
		free(l->sysctls[i]->path);
		free(l->sysctls[i]->value);
		free(l->sysctls[i]);
	}
	free(l->sysctls);
	l->sysctls = NULL;
	l->n_sysctls = 0;
}
