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

/*
 * A fresh temporary directory, its name malloc'd (each call its own: a
 * static buffer let a second call rename the first one's directory, which
 * was then never removed); tmpdir_done() removes it and frees the name.
 */
char *tmpdir_make(void);
void tmpdir_done(char *dir);
/* Remove the tree at @dir. */
void tmpdir_remove(const char *dir);
/* Write @text to DIR/NAME, returning the path (static buffer, one of 8). */
const char *write_file(const char *dir, const char *name, const char *text);

/*
 * Skip the running test because the machine lacks something it needs
 * (printed with "SKIP: "), and remember it: cmocka counts a skipped test as
 * passed, so main() returns tests_result(cmocka_run_group_tests(...)),
 * which turns a run with no failure but a skip into exit status 77, and
 * meson shows SKIP rather than OK.
 */
#define test_skip(...)                                                                             \
	do {                                                                                       \
		test_skip_note(__VA_ARGS__);                                                       \
		skip();                                                                            \
	} while (0)
void test_skip_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tests_result(int failed);

/* Count the lines of @s. */
int count_lines(const char *s);

#define assert_contains(hay, needle)                                                               \
	do {                                                                                       \
		const char *h_ = (hay), *n_ = (needle);                                            \
		if (!strstr(h_, n_))                                                               \
			fail_msg("'%s' not found in:\n%s", n_, h_);                                \
	} while (0)

#endif
