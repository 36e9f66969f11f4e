// SPDX-License-Identifier: GPL-2.0-only
/*
 * One pass of reads over /proc/sys/net, the namespace's whole sysctl tree
 * as the calling thread's (or process's) namespace has it: /proc/sys/net
 * is the opener's namespace, at each open.  The order is the one the
 * restore writes in: a directory's files before its subdirectories (so
 * ipv4/ip_forward comes before ipv4/conf/), names sorted, except that in
 * conf/ and neigh/ "all" comes first and "default" second: a write there
 * is copied to the devices, whose own values must be written after.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/nsfs.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "netns-sysctl.h"

#define DEPTH_MAX 6

static void put(struct sysctl_tree *t, char kind, const char *path, const char *value)
{
	size_t lp = strlen(path) + 1, lv = strlen(value) + 1;

	if (t->err)
		return;
	if (t->len + 1 + lp + lv > t->cap) {
		t->err = E2BIG;
		return;
	}
	t->buf[t->len++] = kind;
	memcpy(t->buf + t->len, path, lp);
	t->len += lp;
	memcpy(t->buf + t->len, value, lv);
	t->len += lv;
}

static int rank(const char *dir, const char *name)
{
	const char *base = strrchr(dir, '/');

	base = base ? base + 1 : dir;
	if (strcmp(base, "conf") && strcmp(base, "neigh"))
		return 2;
	return !strcmp(name, "all") ? 0 : !strcmp(name, "default") ? 1 : 2;
}

static int by_order(const void *a, const void *b, void *dir)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	int rx = rank(dir, x), ry = rank(dir, y);

	return rx != ry ? rx - ry : strcmp(x, y);
}

static void read_file(struct sysctl_tree *t, int dfd, const char *name, const char *path)
{
	_cleanup_close_ int fd = -1;
	char value[SYSCTL_VALUE_MAX];
	struct stat st;
	size_t len = 0;
	ssize_t n = 1;

	if (fstatat(dfd, name, &st, 0) < 0) {
		t->err = errno;
		return;
	}
	/* Write-only files (route/flush) hold nothing. */
	if (!(st.st_mode & 0444))
		return;
	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && len < sizeof(value) - 1 &&
	       (n = read(fd, value + len, sizeof(value) - 1 - len)) > 0)
		len += (size_t)n;
	if (fd < 0 || n < 0) {
		/* stable_secret is EIO while unset. */
		put(t, SYSCTL_UNREADABLE, path, strerror(errno));
		return;
	}
	if (len >= sizeof(value) - 1) {
		t->err = E2BIG;
		return;
	}
	value[len] = '\0';
	while (len > 0 && value[len - 1] == '\n')
		value[--len] = '\0';
	put(t, st.st_mode & 0222 ? SYSCTL_WRITABLE : SYSCTL_READONLY, path, value);
}

static void walk_dir(struct sysctl_tree *t, int dfd, const char *dir, int depth)
{
	DIR *d = fdopendir(dfd);
	char **names = NULL, path[SYSCTL_PATH_MAX];
	size_t n = 0;
	struct dirent *e;

	if (!d) {
		close(dfd);
		t->err = errno;
		return;
	}
	while (!t->err && (e = readdir(d))) {
		char **grown;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		grown = realloc(names, (n + 1) * sizeof(*names));
		if (!grown || !(grown[n] = strdup(e->d_name))) {
			names = grown ? grown : names;
			t->err = ENOMEM;
			break;
		}
		names = grown;
		n++;
	}
	if (names)
		qsort_r(names, n, sizeof(*names), by_order, (void *)dir);
	/* Files first, then directories. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; !t->err && i < n; i++) {
			struct stat st;

			if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
				t->err = errno;
				break;
			}
			if (snprintf(path, sizeof(path), "%s%s%s", dir, *dir ? "/" : "",
				     names[i]) >= (int)sizeof(path)) {
				t->err = ENAMETOOLONG;
				break;
			}
			if (pass == 0 && S_ISREG(st.st_mode)) {
				read_file(t, dirfd(d), names[i], path);
			} else if (pass == 1 && S_ISDIR(st.st_mode)) {
				int sub = openat(dirfd(d), names[i],
						 O_RDONLY | O_DIRECTORY | O_CLOEXEC);

				if (sub < 0 || depth >= DEPTH_MAX) {
					t->err = sub < 0 ? errno : ELOOP;
					if (sub >= 0)
						close(sub);
					break;
				}
				walk_dir(t, sub, path, depth + 1);
			}
		}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
}

static void walk(struct sysctl_tree *t)
{
	int fd = open("/proc/sys/net", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	t->len = 0;
	t->err = 0;
	if (fd < 0)
		t->err = errno;
	else
		walk_dir(t, fd, "", 0);
}

static int tree_map(struct sysctl_tree *t)
{
	void *p = mmap(NULL, SYSCTL_TREE_MAX, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	*t = (struct sysctl_tree){.buf = p, .cap = SYSCTL_TREE_MAX - sizeof(*t)};
	return 0;
}

void sysctl_tree_free(struct sysctl_tree *t)
{
	if (t->buf)
		munmap(t->buf, SYSCTL_TREE_MAX);
	free(t->ents);
	*t = (struct sysctl_tree){0};
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct sysctl_ent *)a)->path, ((const struct sysctl_ent *)b)->path);
}

/* Where the entry after the one at @at begins: kind, path, value. */
static size_t next_ent(const char *buf, size_t at)
{
	at++;
	at += strlen(buf + at) + 1;
	return at + strlen(buf + at) + 1;
}

/* The entries of t->buf, in walk order (and, with @sorted, sorted by path). */
static int index_tree(struct sysctl_tree *t, bool sorted)
{
	size_t n = 0;

	for (size_t at = 0; at < t->len; at = next_ent(t->buf, at))
		n++;
	t->ents = calloc(n + 1, sizeof(*t->ents));
	if (!t->ents)
		return -ENOMEM;
	for (size_t at = 0, i = 0; i < n; i++, at = next_ent(t->buf, at)) {
		struct sysctl_ent *e = &t->ents[i];

		e->kind = t->buf[at];
		e->path = t->buf + at + 1;
		e->value = e->path + strlen(e->path) + 1;
	}
	t->n = n;
	if (sorted)
		qsort(t->ents, n, sizeof(*t->ents), by_path);
	return 0;
}

const struct sysctl_ent *sysctl_tree_find(const struct sysctl_tree *t, const char *path)
{
	struct sysctl_ent key = {.path = path};

	return t->n ? bsearch(&key, t->ents, t->n, sizeof(*t->ents), by_path) : NULL;
}

/*
 * The user namespace that owns the calling thread's net namespace, as an
 * fd, where it is not crf's own (else -1 in *@fd).  The uids and gids in
 * a value (ping_group_range) read as that namespace sees them, which is
 * how the restore, from inside it, reads and writes them.
 */
static int owner_userns(int *fd, const char *what)
{
	_cleanup_close_ int net = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	struct stat a, b;

	*fd = -1;
	if (net < 0 || stat("/proc/self/ns/user", &b) < 0)
		return crf_error_errno(errno, "%s: its user namespace", what);
	*fd = ioctl(net, NS_GET_USERNS);
	if (*fd < 0 || fstat(*fd, &a) < 0)
		return crf_error_errno(errno, "%s: NS_GET_USERNS", what);
	if (a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
		close(*fd);
		*fd = -1;
	}
	return 0;
}

/*
 * Read by a child (@fresh: after it unshares a net namespace), in the
 * owner's user namespace (@userns, or -1): the dumping thread stays
 * where it is.  The child writes into the shared mapping; its length and
 * error go in the mapping's last bytes.
 */
static int tree_child(struct sysctl_tree *t, int userns, bool fresh, const char *what)
{
	struct sysctl_tree *tail;
	int r = tree_map(t), status;
	pid_t pid;

	if (r < 0)
		return crf_error_errno(-r, "%s: sysctls", what);
	tail = (struct sysctl_tree *)(t->buf + t->cap);
	tail->err = EIO;
	pid = fork();
	if (pid < 0)
		return crf_error_errno(errno, "%s: fork", what);
	if (pid == 0) {
		struct sysctl_tree c = *t;

		if ((userns >= 0 && setns(userns, CLONE_NEWUSER) < 0) ||
		    (fresh && unshare(CLONE_NEWNET) < 0)) {
			tail->err = errno;
			_exit(1);
		}
		walk(&c);
		tail->len = c.len;
		tail->err = c.err;
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || tail->err)
		return crf_error_errno(tail->err ? tail->err : EIO, "%s: reading %s /proc/sys/net",
				       what, fresh ? "a fresh net namespace's" : "its");
	t->len = tail->len;
	r = index_tree(t, fresh);
	return r < 0 ? crf_error_errno(-r, "%s: sysctls", what) : 0;
}

int sysctl_trees(struct sysctl_tree *here, struct sysctl_tree *fresh, const char *what)
{
	int userns, r = owner_userns(&userns, what);

	if (r >= 0)
		r = tree_child(here, userns, false, what);
	if (r >= 0)
		r = tree_child(fresh, userns, true, what);
	if (userns >= 0)
		close(userns);
	return r;
}
