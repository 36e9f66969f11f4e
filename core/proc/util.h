/* SPDX-License-Identifier: GPL-2.0-only */
/* Small helpers of the core: cleanup attributes, string lists. */
#ifndef CRF_UTIL_H
#define CRF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_free_ __attribute__((cleanup(freep)))
#define _cleanup_close_ __attribute__((cleanup(closep)))
#define _cleanup_fclose_ __attribute__((cleanup(fclosep)))

/* Take ownership out of a cleanup variable. */
#define TAKE_PTR(p)                                                            \
	({                                                                     \
		__typeof__(p) _p = (p);                                        \
		(p) = NULL;                                                    \
		_p;                                                            \
	})

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A growable list of strings, owned. */
struct strv {
	char **v;
	size_t n;
};

int strv_push(struct strv *s, const char *str);
bool strv_contains(const struct strv *s, const char *str);
void strv_free(struct strv *s);
/* Split @list at commas and blanks into @s, skipping empty items. */
int strv_split(struct strv *s, const char *list);
/* "a -> b -> c" style joining into a malloc'd string (NULL on ENOMEM). */
char *strv_join(const struct strv *s, const char *sep);

/* CLOCK_MONOTONIC in milliseconds (deadlines, durations in the log). */
double now_ms(void);

/* strdup that reports nothing; callers log -ENOMEM. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
