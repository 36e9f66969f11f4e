// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "util.h"

int strv_push(struct strv *s, const char *str)
{
	char **v = realloc(s->v, (s->n + 2) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	s->v = v;
	v[s->n] = strdup(str);
	if (!v[s->n])
		return -ENOMEM;
	v[++s->n] = NULL;
	return 0;
}

bool strv_contains(const struct strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return true;
	return false;
}

void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

int strv_split(struct strv *s, const char *list)
{
	const char *p = list;

	while (p && *p) {
		size_t len;
		char item[256];
		int r;

		p += strspn(p, ", \t");
		len = strcspn(p, ", \t");
		if (!len)
			break;
		if (len >= sizeof(item))
			return -ENAMETOOLONG;
		memcpy(item, p, len);
		item[len] = '\0';
		if (!strv_contains(s, item)) {
			r = strv_push(s, item);
			if (r < 0)
				return r;
		}
		p += len;
	}
	return 0;
}

char *strv_join(const struct strv *s, const char *sep)
{
	size_t len = 1;
	char *out;

	for (size_t i = 0; i < s->n; i++)
		len += strlen(s->v[i]) + strlen(sep);
	out = malloc(len);
	if (!out)
		return NULL;
	out[0] = '\0';
	for (size_t i = 0; i < s->n; i++) {
		if (i)
			strcat(out, sep);
		strcat(out, s->v[i]);
	}
	return out;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return r < 0 ? NULL : s;
}

double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
