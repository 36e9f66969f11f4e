// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/PID/mountinfo, all of it: the core's crf/mountinfo.h finds cgroup
 * hierarchies only, and libmount would bring a dependency for the one
 * format.  Fields: ID PARENT MAJOR:MINOR ROOT MOUNT-POINT OPTS [TAG...] -
 * FSTYPE SOURCE SUPER-OPTS, the strings with octal escapes (\040).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/log.h>

#include "mnt.h"

static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

static char *field(char **p)
{
	char *s = *p, *e;

	while (*s == ' ')
		s++;
	if (!*s)
		return NULL;
	e = strchr(s, ' ');
	if (e) {
		*e = '\0';
		*p = e + 1;
	} else {
		*p = s + strlen(s);
	}
	return s;
}

static int parse_line(char *line, struct mnt_line *m)
{
	char *p = line, *f[6], *tag;

	memset(m, 0, sizeof(*m));
	for (int i = 0; i < 6; i++)
		if (!(f[i] = field(&p)))
			return -EBADMSG;
	if (sscanf(f[0], "%u", &m->id) != 1 || sscanf(f[1], "%u", &m->parent) != 1 ||
	    sscanf(f[2], "%u:%u", &m->major, &m->minor) != 2)
		return -EBADMSG;
	m->root = f[3];
	m->mount_point = f[4];
	m->opts = f[5];
	while ((tag = field(&p)) && strcmp(tag, "-")) {
		if (!strncmp(tag, "shared:", 7))
			m->shared = (unsigned int)strtoul(tag + 7, NULL, 10);
		else if (!strncmp(tag, "master:", 7))
			m->master = (unsigned int)strtoul(tag + 7, NULL, 10);
		else if (!strcmp(tag, "unbindable"))
			m->unbindable = true;
		/* propagate_from:N is derived from the master's; nothing to set. */
	}
	if (!tag || !(m->fstype = field(&p)) || !(m->source = field(&p)) ||
	    !(m->super_opts = field(&p)))
		return -EBADMSG;
	unescape(m->root);
	unescape(m->mount_point);
	unescape(m->source);
	return 0;
}

/*
 * Parents before children: the kernel lists mounts in the order of its
 * namespace's list, which a move or a propagated mount can leave with a
 * child ahead of its parent.  Stable otherwise; a line whose parent is not
 * in the table is a root.
 */
static int sort_parents_first(struct mnt_table *t)
{
	struct mnt_line *out = malloc((t->n ? t->n : 1) * sizeof(*out));
	bool *done = calloc(t->n ? t->n : 1, sizeof(*done));
	size_t n = 0;
	bool progress = true;

	if (!out || !done) {
		free(out);
		free(done);
		return -ENOMEM;
	}
	while (n < t->n && progress) {
		progress = false;
		for (size_t i = 0; i < t->n; i++) {
			const struct mnt_line *p = NULL;

			if (done[i])
				continue;
			for (size_t k = 0; k < t->n; k++)
				if (k != i && t->v[k].id == t->v[i].parent)
					p = &t->v[k];
			if (p && !done[p - t->v])
				continue;
			done[i] = progress = true;
			out[n++] = t->v[i];
		}
	}
	free(done);
	if (n < t->n) {
		free(out);
		return -EBADMSG; /* a loop of parents */
	}
	free(t->v);
	t->v = out;
	return 0;
}

int mnt_table_parse(char *text, struct mnt_table *t)
{
	size_t cap = 0;
	char *line, *save = NULL;

	memset(t, 0, sizeof(*t));
	t->text = text;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (t->n == cap) {
			struct mnt_line *v;

			cap = cap ? cap * 2 : 32;
			v = realloc(t->v, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			t->v = v;
		}
		if (parse_line(line, &t->v[t->n]) < 0)
			return -EBADMSG;
		t->n++;
	}
	return sort_parents_first(t);
}

int mnt_table_read(const char *path, struct mnt_table *t)
{
	return mnt_table_read_at(AT_FDCWD, path, t);
}

int mnt_table_read_at(int dirfd, const char *path, struct mnt_table *t)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	ssize_t n;
	int fd, r;

	memset(t, 0, sizeof(*t));
	if (!buf)
		return -ENOMEM;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return crf_error_errno(errno, "%s", path);
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 4096) {
			char *b = realloc(buf, cap * 2);

			if (!b) {
				n = -1;
				errno = ENOMEM;
				break;
			}
			buf = b;
			cap *= 2;
		}
	}
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0) {
		free(buf);
		return crf_error_errno(r, "%s", path);
	}
	buf[len] = '\0';
	r = mnt_table_parse(buf, t);
	if (r < 0) {
		mnt_table_free(t);
		return crf_error_errno(r, "%s: not mountinfo", path);
	}
	return 0;
}

void mnt_table_free(struct mnt_table *t)
{
	free(t->v);
	free(t->text);
	memset(t, 0, sizeof(*t));
}

const struct mnt_line *mnt_table_find(const struct mnt_table *t, unsigned int id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].id == id)
			return &t->v[i];
	return NULL;
}

int mnt_opts_attr(const char *opts, uint64_t *attr)
{
	static const struct {
		const char *name;
		uint64_t attr;
	} known[] = {
		{"rw", 0},
		{"ro", MOUNT_ATTR_RDONLY},
		{"nosuid", MOUNT_ATTR_NOSUID},
		{"nodev", MOUNT_ATTR_NODEV},
		{"noexec", MOUNT_ATTR_NOEXEC},
		{"relatime", MOUNT_ATTR_RELATIME},
		{"noatime", MOUNT_ATTR_NOATIME},
		{"nodiratime", MOUNT_ATTR_NODIRATIME},
		{"nosymfollow", MOUNT_ATTR_NOSYMFOLLOW},
	};
	char buf[256], *tok, *save = NULL;
	bool relatime = false;

	*attr = 0;
	if (strlen(opts) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, opts);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (!strcmp(tok, known[i].name))
				break;
		if (i == sizeof(known) / sizeof(known[0]))
			return -EINVAL;
		*attr |= known[i].attr;
		relatime |= !strcmp(tok, "relatime");
	}
	/* No atime option shown: strictatime (MOUNT_ATTR_RELATIME is the 0). */
	if (!relatime && !(*attr & MOUNT_ATTR__ATIME))
		*attr |= MOUNT_ATTR_STRICTATIME;
	return 0;
}

char *mnt_external(struct crf_ctx *ctx, const char *a, int *err)
{
	const char *v = crf_ctx_config(ctx, "external-mnt");
	size_t n = strlen(a);

	*err = 0;
	for (const char *w = v; w && *w;) {
		size_t len = strcspn(w, " ");

		if (len > n && !strncmp(w, a, n) && w[n] == ':') {
			char *b = strndup(w + n + 1, len - n - 1);

			if (!b)
				*err = -ENOMEM;
			return b;
		}
		w += len;
		w += strspn(w, " ");
	}
	return NULL;
}

void mnt_image(char *buf, size_t len, uint64_t ns, unsigned int mount)
{
	if (mount)
		snprintf(buf, len, "mnt-%llu-%u.img", (unsigned long long)ns, mount);
	else
		snprintf(buf, len, "mnt-%llu.img", (unsigned long long)ns);
}
