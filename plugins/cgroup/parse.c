// SPDX-License-Identifier: GPL-2.0-only
/* /proc/PID/cgroup text as a list of hierarchies and cgroups: pure, for the unit tests. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"

void cg_members_free(struct cg_members *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].controllers);
		free(m->v[i].path);
	}
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

/* "ID:CONTROLLERS:PATH" of @len bytes; the ID is not kept (it differs between hosts). */
static int parse_line(const char *line, size_t len, struct cg_member *m)
{
	const char *c = memchr(line, ':', len);
	const char *p = c ? memchr(c + 1, ':', len - (size_t)(c + 1 - line)) : NULL;

	if (!c || c == line || strspn(line, "0123456789") != (size_t)(c - line) || !p ||
	    p + 1 == line + len || p[1] != '/')
		return -EINVAL;
	m->controllers = strndup(c + 1, (size_t)(p - c - 1));
	m->path = strndup(p + 1, len - (size_t)(p + 1 - line));
	return m->controllers && m->path ? 0 : -ENOMEM;
}

int cg_parse(const char *text, struct cg_members *out)
{
	size_t lines = 0;
	int r = 0;

	cg_members_free(out);
	for (const char *s = text; *s; s++)
		lines += *s == '\n' || !s[1];
	out->v = calloc(lines ? lines : 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (const char *s = text; *s && r >= 0;) {
		size_t len = strcspn(s, "\n");

		if (len) {
			r = parse_line(s, len, &out->v[out->n]);
			out->n++;
		}
		s += len + (s[len] == '\n');
	}
	if (r < 0)
		cg_members_free(out);
	return r;
}

const struct cg_member *cg_find(const struct cg_members *m, const char *controllers)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].controllers, controllers))
			return &m->v[i];
	return NULL;
}

bool cg_same(const struct cg_members *a, const struct cg_members *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		const struct cg_member *o = cg_find(b, a->v[i].controllers);

		if (!o || strcmp(o->path, a->v[i].path))
			return false;
	}
	return true;
}

const char *cg_name(const char *controllers, const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%s", *controllers ? controllers : "v2", path);
	return buf;
}
