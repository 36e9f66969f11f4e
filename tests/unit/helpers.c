// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

static int saved_stderr = -1;
static int n_skipped;
static FILE *capture_file;

void capture_begin(void)
{
	fflush(stderr);
	capture_file = tmpfile();
	assert_non_null(capture_file);
	saved_stderr = dup(STDERR_FILENO);
	assert_true(saved_stderr >= 0);
	assert_true(dup2(fileno(capture_file), STDERR_FILENO) >= 0);
}

const char *capture_end(void)
{
	static char buf[16384];
	size_t n;

	fflush(stderr);
	assert_true(dup2(saved_stderr, STDERR_FILENO) >= 0);
	close(saved_stderr);
	rewind(capture_file);
	n = fread(buf, 1, sizeof(buf) - 1, capture_file);
	buf[n] = '\0';
	fclose(capture_file);
	capture_file = NULL;
	return buf;
}

char *tmpdir_make(void)
{
	char *dir = strdup("/tmp/crf-unit-XXXXXX");

	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	return dir;
}

void tmpdir_done(char *dir)
{
	tmpdir_remove(dir);
	free(dir);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

void tmpdir_remove(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *write_file(const char *dir, const char *name, const char *text)
{
	static char paths[8][512];
	static int next;
	char *path = paths[next++ % 8];
	FILE *f;

	snprintf(path, 512, "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	return path;
}

int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

void test_skip_note(const char *fmt, ...)
{
	va_list ap;

	printf("SKIP: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	n_skipped++;
}

int tests_result(int failed)
{
	if (failed)
		return failed;
	return n_skipped ? 77 : 0;
}
