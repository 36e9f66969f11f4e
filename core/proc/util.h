/* SPDX-License-Identifier: GPL-2.0-only */
/* Small helpers of the core: string lists; the cleanup attributes are crf/cleanup.h's. */
#ifndef CRF_UTIL_H
#define CRF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <crf/cleanup.h>

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
