/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared helpers of the unit tests. */
#ifndef CRF_TEST_HELPERS_H
#define CRF_TEST_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

/* Redirect stderr into a temporary file until capture_end(). */
void capture_begin(void);
/* Restore stderr; returns what was written (static buffer). */
const char *capture_end(void);

/* A fresh temporary directory (static buffer); removed by tmpdir_remove(). */
const char *tmpdir_make(void);
void tmpdir_remove(const char *dir);
/* Write @text to DIR/NAME, returning the path (static buffer, one of 8). */
const char *write_file(const char *dir, const char *name, const char *text);

/* Count the lines of @s. */
int count_lines(const char *s);

#define assert_contains(hay, needle)                                           \
	do {                                                                   \
		const char *h_ = (hay), *n_ = (needle);                        \
		if (!strstr(h_, n_))                                           \
			fail_msg("'%s' not found in:\n%s", n_, h_);            \
	} while (0)

#endif
