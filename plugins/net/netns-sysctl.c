// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sysctls of a network namespace: every readable file under
 * /proc/sys/net, read in one pass from inside (by a child of the dumping
 * thread, which is in the namespace, in the user namespace that owns it),
 * and compared with a fresh namespace's (read by a child that unshares
 * one there, netns-sysctl-walk.c).
 *
 * Every writable value is saved, not only those that differ from a fresh
 * namespace's: a write to conf/all/ or conf/default/ (and ip_forward) is
 * copied to the devices, so a device's value that equals a fresh one's
 * still has to be written after them; and a kernel elsewhere may have
 * other defaults.  The restore writes, in the dump's order, each value
 * that reads otherwise, and the check after the whole build reads every
 * one back.  A read-only value (in a namespace that is not the initial
 * one, core/rmem_default, tcp_ehash_entries...) that differs from a fresh
 * namespace's cannot be given back: the dump is refused, naming it; one
 * that does not is saved to be checked at restore.  Counters are skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "netns-sysctl.h"
#include "netns.h"

/* Read-only values that count what happens: not state. */
static const char *const counters[] = {
	"netfilter/nf_conntrack_count",
};

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static bool is_counter(const char *path)
{
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		if (!strcmp(path, counters[i]))
			return true;
	return false;
}

/*
 * A fresh namespace has lo only: a device's value (ipv4/conf/eth0/NAME)
 * compares with conf/default/NAME, which a new device copies.
 */
static const struct sysctl_ent *fresh_of(const struct sysctl_tree *fresh, const char *path)
{
	const struct sysctl_ent *e = sysctl_tree_find(fresh, path);
	char dflt[SYSCTL_PATH_MAX];
	const char *dev, *name;

	if (e || (strncmp(path, "ipv4/", 5) && strncmp(path, "ipv6/", 5)))
		return e;
	if (!strncmp(path + 5, "conf/", 5))
		dev = path + 10;
	else if (!strncmp(path + 5, "neigh/", 6))
		dev = path + 11;
	else
		return NULL;
	name = strchr(dev, '/');
	if (!name || strchr(name + 1, '/'))
		return NULL;
	snprintf(dflt, sizeof(dflt), "%.*sdefault%s", (int)(dev - path), path, name);
	return sysctl_tree_find(fresh, dflt);
}

static int save(Crf__Net__NetNs *ns, const struct sysctl_ent *e, const char *what)
{
	Crf__Net__NsSysctl *s = malloc(sizeof(*s));

	if (!s)
		return crf_error_errno(ENOMEM, "%s: sysctls", what);
	crf__net__ns_sysctl__init(s);
	if (netns_push((void ***)&ns->sysctls, &ns->n_sysctls, s) < 0) {
		free(s);
		return crf_error_errno(ENOMEM, "%s: sysctls", what);
	}
	s->has_readonly = e->kind == SYSCTL_READONLY;
	s->readonly = s->has_readonly;
	s->path = strdup(e->path);
	s->value = strdup(e->value);
	return s->path && s->value ? 0 : crf_error_errno(ENOMEM, "%s: sysctls", what);
}

/* One entry of the namespace's tree, against @ref, a fresh namespace's (or NULL). */
static int dump_one(Crf__Net__NetNs *ns, const struct sysctl_ent *e, const struct sysctl_ent *ref,
		    size_t *differ, const char *what)
{
	bool same = ref && ref->kind != SYSCTL_UNREADABLE && !strcmp(ref->value, e->value);

	if (e->kind == SYSCTL_UNREADABLE) {
		if (!ref || ref->kind == SYSCTL_UNREADABLE)
			return 0;
		return crf_error_errno(EIO,
				       "%s: sysctl /proc/sys/net/%s cannot be read (%s), and a "
				       "fresh namespace's reads '%s': not restored",
				       what, e->path, e->value, ref->value);
	}
	if (e->kind == SYSCTL_READONLY) {
		if (is_counter(e->path))
			return 0;
		if (ref && !same)
			return crf_error_errno(
				ENOTSUP,
				"%s: sysctl /proc/sys/net/%s is read-only in the "
				"namespace and reads '%s', not a fresh namespace's "
				"'%s' (it depends on the host or on how the namespace "
				"was made): not restored",
				what, e->path, e->value,
				ref->kind == SYSCTL_UNREADABLE ? "(unreadable)" : ref->value);
	}
	*differ += !same;
	return save(ns, e, what);
}

int netns_sysctl_dump(Crf__Net__NetNs *ns, const char *what)
{
	struct sysctl_tree here = {0}, fresh = {0};
	struct timespec t0;
	size_t differ = 0;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = sysctl_trees(&here, &fresh, what);
	for (size_t i = 0; r >= 0 && i < here.n; i++)
		r = dump_one(ns, &here.ents[i], fresh_of(&fresh, here.ents[i].path), &differ, what);
	if (r >= 0)
		crf_debug("%s: %zu sysctls read, %zu saved, %zu differ from a fresh namespace's "
			  "(%ld ms)",
			  what, here.n, ns->n_sysctls, differ, ms_since(&t0));
	sysctl_tree_free(&here);
	sysctl_tree_free(&fresh);
	return r;
}

static int sysctl_path(const Crf__Net__NsSysctl *s, char *full, size_t len, const char *what)
{
	if (strstr(s->path, "..") || s->path[0] == '/' ||
	    snprintf(full, len, "/proc/sys/net/%s", s->path) >= (int)len)
		return crf_error_errno(EBADMSG, "%s: sysctl path '%s'", what, s->path);
	return 0;
}

/* Read @full into @buf; 0, or -errno (not logged). */
static int read_value(const char *full, char *buf, size_t len)
{
	_cleanup_close_ int fd = open(full, O_RDONLY | O_CLOEXEC);
	size_t at = 0;
	ssize_t n = 1;

	if (fd < 0)
		return -errno;
	while (at < len - 1 && (n = read(fd, buf + at, len - 1 - at)) > 0)
		at += (size_t)n;
	if (n < 0)
		return -errno;
	buf[at] = '\0';
	while (at > 0 && buf[at - 1] == '\n')
		buf[--at] = '\0';
	return 0;
}

/*
 * Write @s where it reads otherwise: 1 written, 0 not needed, -errno (not
 * logged) where the write failed (*@err the text), or logged.
 */
static int apply(const Crf__Net__NsSysctl *s, char *err, size_t len, const char *what)
{
	_cleanup_close_ int fd = -1;
	char full[SYSCTL_PATH_MAX + 16], cur[SYSCTL_VALUE_MAX];
	size_t n = strlen(s->value);
	int r = sysctl_path(s, full, sizeof(full), what);

	if (r < 0 || s->readonly)
		return r;
	r = read_value(full, cur, sizeof(cur));
	if (r == -ENOENT)
		return crf_error_errno(ENOENT, "%s: this kernel has no %s", what, full);
	/* Unreadable (stable_secret, while unset): written. */
	if (r == 0 && !strcmp(cur, s->value))
		return 0;
	fd = open(full, O_WRONLY | O_CLOEXEC);
	if (fd >= 0 && write(fd, s->value, n) == (ssize_t)n)
		return 1;
	r = errno ? -errno : -EIO;
	snprintf(err, len, "writing '%s' to %s", s->value, full);
	return r;
}

/*
 * In passes: a write may fail until another is done (addr_gen_mode 2
 * wants stable_secret, which comes after it), or undo an earlier one
 * (all/ and default/ are copied to the devices).  Until a pass writes
 * nothing, at most 4; a write that still fails in a pass that wrote
 * nothing fails the restore.
 */
int netns_sysctl_restore(const Crf__Net__NetNs *ns, const char *what)
{
	char err[SYSCTL_PATH_MAX + SYSCTL_VALUE_MAX + 32] = "";
	char e[sizeof(err)];
	struct timespec t0;
	size_t total = 0;
	int first = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int pass = 0; pass < 4; pass++) {
		size_t wrote = 0, failed = 0;

		for (size_t i = 0; i < ns->n_sysctls; i++) {
			int r;

			*e = '\0';
			r = apply(ns->sysctls[i], e, sizeof(e), what);
			if (r < 0 && !*e)
				return r;
			if (r < 0 && !failed++) {
				first = r;
				memcpy(err, e, sizeof(err));
			}
			wrote += r > 0;
		}
		total += wrote;
		if (!wrote && failed)
			return crf_error_errno(-first, "%s: %s", what, err);
		if (!wrote) {
			crf_debug("%s: %zu sysctls written, in %d passes (%ld ms)", what, total,
				  pass + 1, ms_since(&t0));
			return 0;
		}
	}
	return crf_error_errno(EIO, "%s: sysctls still change after 4 passes (%s)", what,
			       *err ? err : "each pass wrote some");
}

/* After the whole build: a later step may have changed one. */
static int check_one(const Crf__Net__NsSysctl *s, const char *what)
{
	char full[SYSCTL_PATH_MAX + 16], back[SYSCTL_VALUE_MAX];
	int r = sysctl_path(s, full, sizeof(full), what);

	if (r < 0)
		return r;
	r = read_value(full, back, sizeof(back));
	if (r < 0)
		return crf_error_errno(-r, "%s: %s after the restore", what, full);
	if (strcmp(back, s->value))
		return crf_error_errno(
			EIO, "%s: %s reads '%s' after the restore, not '%s'%s", what, full, back,
			s->value, s->readonly ? " (read-only: its value depends on the host)" : "");
	return 0;
}

int netns_sysctl_check(const Crf__Net__NetNs *ns, const char *what)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < ns->n_sysctls; i++)
		r = check_one(ns->sysctls[i], what);
	return r;
}
