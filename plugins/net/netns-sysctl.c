// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sysctls of a network namespace that container runtimes commonly set
 * (docs/ns-net.md has the list).  /proc/sys/net is the opener's namespace
 * (the thread's, at open), so both sides read and write it from inside.
 * The order is the list's: ip_forward and conf/all/ before conf/default/
 * before each link's, since writing the first ones changes the others.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "netns.h"

static const char *const global[] = {
	"ipv4/ip_forward",
	"ipv4/ip_unprivileged_port_start",
	"ipv4/ping_group_range",
	"ipv4/ip_local_port_range",
	"core/somaxconn",
	"ipv4/tcp_syncookies",
	"ipv4/tcp_keepalive_time",
	"ipv4/tcp_keepalive_intvl",
	"ipv4/tcp_keepalive_probes",
	"ipv4/tcp_fin_timeout",
	"ipv4/tcp_tw_reuse",
	"ipv4/tcp_timestamps",
	"ipv4/tcp_sack",
	"ipv4/tcp_window_scaling",
	"ipv4/tcp_rmem",
	"ipv4/tcp_wmem",
	"ipv4/tcp_mtu_probing",
	"ipv4/tcp_ecn",
};

/* Per device: ipv4/conf/DEV/NAME and ipv6/conf/DEV/NAME. */
static const struct {
	const char *family, *name;
} per_dev[] = {
	{"ipv4", "forwarding"},
	{"ipv4", "rp_filter"},
	{"ipv6", "disable_ipv6"},
	{"ipv6", "forwarding"},
};

#define VALUE_MAX 256

/* Read /proc/sys/net/@path; 1 with @buf, 0 where this kernel has none. */
static int read_one(const char *path, char *buf, size_t len, const char *what)
{
	_cleanup_close_ int fd = -1;
	char full[160];
	ssize_t n;

	snprintf(full, sizeof(full), "/proc/sys/net/%s", path);
	fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : crf_error_errno(errno, "%s: %s", what, full);
	n = read(fd, buf, len - 1);
	if (n < 0)
		return crf_error_errno(errno, "%s: %s", what, full);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return 1;
}

static int save(Crf__Net__NetNs *ns, const char *path, const char *what)
{
	Crf__Net__NsSysctl *s;
	char value[VALUE_MAX];
	int r = read_one(path, value, sizeof(value), what);

	if (r <= 0)
		return r;
	s = malloc(sizeof(*s));
	if (!s)
		return crf_error_errno(ENOMEM, "%s: sysctls", what);
	crf__net__ns_sysctl__init(s);
	r = netns_push((void ***)&ns->sysctls, &ns->n_sysctls, s);
	if (r < 0) {
		free(s);
		return crf_error_errno(ENOMEM, "%s: sysctls", what);
	}
	s->path = strdup(path);
	s->value = strdup(value);
	return s->path && s->value ? 0 : crf_error_errno(ENOMEM, "%s: sysctls", what);
}

static int save_dev(Crf__Net__NetNs *ns, const char *dev, const char *what)
{
	char path[128];
	int r = 0;

	for (size_t i = 0; r >= 0 && i < sizeof(per_dev) / sizeof(per_dev[0]); i++) {
		snprintf(path, sizeof(path), "%s/conf/%s/%s", per_dev[i].family, dev,
			 per_dev[i].name);
		r = save(ns, path, what);
	}
	return r;
}

int netns_sysctl_dump(Crf__Net__NetNs *ns, const char *what)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < sizeof(global) / sizeof(global[0]); i++)
		r = save(ns, global[i], what);
	if (r >= 0)
		r = save_dev(ns, "all", what);
	if (r >= 0)
		r = save_dev(ns, "default", what);
	for (size_t i = 0; r >= 0 && i < ns->n_links; i++)
		r = save_dev(ns, ns->links[i]->name, what);
	return r;
}

static int write_one(const Crf__Net__NsSysctl *s, const char *what)
{
	_cleanup_close_ int fd = -1;
	size_t len = strlen(s->value);
	char full[160];

	if (strstr(s->path, "..") || s->path[0] == '/')
		return crf_error_errno(EBADMSG, "%s: sysctl path '%s'", what, s->path);
	snprintf(full, sizeof(full), "/proc/sys/net/%s", s->path);
	fd = open(full, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, s->value, len) != (ssize_t)len)
		return crf_error_errno(errno ? errno : EIO, "%s: writing '%s' to %s", what,
				       s->value, full);
	return 0;
}

/* After all the writes: a later one may have changed an earlier one. */
static int check_one(const Crf__Net__NsSysctl *s, const char *what)
{
	char back[VALUE_MAX];
	int r = read_one(s->path, back, sizeof(back), what);

	if (r >= 0 && (r == 0 || strcmp(back, s->value)))
		r = crf_error_errno(EIO,
				    "%s: /proc/sys/net/%s reads '%s' after the restore, "
				    "not '%s'",
				    what, s->path, r ? back : "(none)", s->value);
	return r;
}

int netns_sysctl_restore(const Crf__Net__NetNs *ns, const char *what)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < ns->n_sysctls; i++)
		r = write_one(ns->sysctls[i], what);
	return r;
}

int netns_sysctl_check(const Crf__Net__NetNs *ns, const char *what)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < ns->n_sysctls; i++)
		r = check_one(ns->sysctls[i], what);
	return r;
}
