// SPDX-License-Identifier: GPL-2.0-only
/*
 * Finding the cgroup v2 mount in mountinfo text.  Nothing here but reading
 * the stream it is given, so the unit test can feed it any text.
 *
 * The mount point is searched for, never assumed: depending on the system it
 * is /sys/fs/cgroup, /sys/fs/cgroup/unified next to v1 hierarchies, or
 * wherever a container runtime put it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <crf/mountinfo.h>

/* The fixed fields that open a mountinfo line (see proc_pid_mountinfo(5)). */
enum { F_ID, F_PARENT, F_DEV, F_ROOT, F_MOUNT_POINT, F_OPTIONS, N_FIXED };

struct mount_line {
	char *root;
	char *mount_point;
	const char *fstype;
	const char *options; /* the superblock's */
};

static const char *const separators = " \n";

/* Split @line into the fields we need; -EINVAL when it is not a mountinfo line. */
static int split_line(char *line, struct mount_line *m)
{
	char *field[N_FIXED], *tok, *save;

	for (int i = 0; i < N_FIXED; i++) {
		field[i] = strtok_r(i ? NULL : line, separators, &save);
		if (!field[i])
			return -EINVAL;
	}
	/* Zero or more optional fields (shared:N, master:N...) end with a lone "-". */
	do
		tok = strtok_r(NULL, separators, &save);
	while (tok && strcmp(tok, "-"));
	if (!tok)
		return -EINVAL;
	m->fstype = strtok_r(NULL, separators, &save);
	/* Then the mount source and the superblock options, always present. */
	if (!m->fstype || !strtok_r(NULL, separators, &save) ||
	    !(m->options = strtok_r(NULL, separators, &save)))
		return -EINVAL;
	m->root = field[F_ROOT];
	m->mount_point = field[F_MOUNT_POINT];
	return 0;
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/*
 * The kernel writes ' ', '\t', '\n' and '\\' in paths as \ooo; undo that in
 * place.  Anything else after a backslash, or a byte out of range or NUL, is
 * not something the kernel writes: -EINVAL.
 */
static int unescape(char *s)
{
	char *out = s;
	int c;

	for (; *s; s++) {
		if (*s != '\\') {
			*out++ = *s;
			continue;
		}
		if (!is_octal(s[1]) || !is_octal(s[2]) || !is_octal(s[3]))
			return -EINVAL;
		c = (s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0');
		if (c == 0 || c > 0xff)
			return -EINVAL;
		*out++ = (char)c;
		s += 3;
	}
	*out = '\0';
	return 0;
}

int crf_cgroup2_mount_from_mountinfo(FILE *f, char *path, size_t len)
{
	bool found = false, found_root = false;
	struct mount_line m;
	char *line = NULL;
	size_t cap = 0;
	int r = 0;

	while (!found_root && getline(&line, &cap, f) >= 0) {
		if (!line[strspn(line, separators)])
			continue;
		r = split_line(line, &m);
		if (r < 0)
			break;
		if (strcmp(m.fstype, "cgroup2"))
			continue;
		/* Keep the first cgroup2 mount unless a later one shows the whole tree. */
		if (found && strcmp(m.root, "/"))
			continue;
		r = unescape(m.mount_point);
		if (r < 0)
			break;
		if (strlen(m.mount_point) >= len) {
			r = -ENAMETOOLONG;
			break;
		}
		strcpy(path, m.mount_point);
		found = true;
		found_root = !strcmp(m.root, "/");
	}
	free(line);
	if (r < 0)
		return r;
	if (ferror(f))
		return -EIO;
	return found ? 0 : -ENOENT;
}

/* Are the @n bytes at @item one of the comma-separated items of @list? */
static bool in_list(const char *item, size_t n, const char *list)
{
	for (const char *l = list; *l;) {
		size_t k = strcspn(l, ",");

		if (k == n && !strncmp(l, item, n))
			return true;
		l += k + (l[k] == ',');
	}
	return false;
}

/* Is every comma-separated item of @want one of @have's? */
static bool all_in(const char *want, const char *have)
{
	for (const char *w = want; *w;) {
		size_t n = strcspn(w, ",");

		if (!in_list(w, n, have))
			return false;
		w += n + (w[n] == ',');
	}
	return true;
}

static bool is_hierarchy(const struct mount_line *m, const char *controllers)
{
	if (!*controllers)
		return !strcmp(m->fstype, "cgroup2");
	return !strcmp(m->fstype, "cgroup") && all_in(controllers, m->options);
}

/* The part of @path below the mount's @root, or NULL when @root does not hold it. */
static const char *below_root(const char *root, const char *path)
{
	size_t n = strlen(root);

	if (!strcmp(root, "/"))
		return path;
	if (strncmp(path, root, n) || (path[n] && path[n] != '/'))
		return NULL;
	return path + n;
}

/* @mnt followed by @rest ("/a/b" or ""), without a double slash. */
static int join(char *dir, size_t len, const char *mnt, const char *rest)
{
	if (!strcmp(mnt, "/") && *rest)
		mnt = "";
	if ((size_t)snprintf(dir, len, "%s%s", mnt, rest) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int crf_cgroup_dir_from_mountinfo(FILE *f, const char *controllers, const char *path, char *dir,
				  size_t len)
{
	bool mounted = false, found = false;
	struct mount_line m;
	char *line = NULL;
	const char *rest;
	size_t cap = 0;
	int r = 0;

	while (!found && getline(&line, &cap, f) >= 0) {
		if (!line[strspn(line, separators)])
			continue;
		r = split_line(line, &m);
		if (r >= 0 && is_hierarchy(&m, controllers)) {
			mounted = true;
			r = unescape(m.root);
			if (r >= 0)
				r = unescape(m.mount_point);
			rest = r >= 0 ? below_root(m.root, path) : NULL;
			if (rest)
				r = join(dir, len, m.mount_point, rest);
			found = rest != NULL;
		}
		if (r < 0)
			break;
	}
	free(line);
	if (r < 0)
		return r;
	if (ferror(f))
		return -EIO;
	if (found)
		return 0;
	return mounted ? -EXDEV : -ENOENT;
}
