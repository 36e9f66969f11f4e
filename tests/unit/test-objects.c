// SPDX-License-Identifier: GPL-2.0-only
/*
 * crf_rst_object's table (core/lib/objects.c): the first caller of a key
 * creates, later ones get the same object without creating; a failed
 * create registers nothing; many keys in any order each find their own;
 * freeing closes the table's fds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/restore.h>

#include "crf-private.h"
#include "helpers.h"

static int n_created;

static int make(void *arg)
{
	int fd = memfd_create(arg ? arg : "test-objects", MFD_CLOEXEC);

	n_created++;
	return fd < 0 ? -errno : fd;
}

static int make_fails(void *arg)
{
	n_created++;
	return -EIO;
}

static ino_t inode_of(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_ino;
}

static void test_first_creates(void **state)
{
	struct crf_objects o = {0};
	bool created = false;
	int a, b, c;

	n_created = 0;
	a = crf__objects_get(&o, "memfd:1:2", make, NULL, &created);
	assert_true(a >= 3);
	assert_true(created);
	b = crf__objects_get(&o, "memfd:1:2", make, NULL, &created);
	assert_true(b >= 3 && b != a);
	assert_false(created);
	assert_int_equal(n_created, 1);
	assert_int_equal(inode_of(a), inode_of(b));
	assert_int_equal(fcntl(b, F_GETFD), FD_CLOEXEC);
	c = crf__objects_get(&o, "memfd:1:3", make, NULL, NULL);
	assert_true(c >= 3);
	assert_int_equal(n_created, 2);
	assert_true(inode_of(c) != inode_of(a));
	close(a);
	close(b);
	close(c);
	crf__objects_free(&o);
}

static void test_failed_create(void **state)
{
	struct crf_objects o = {0};
	bool created = true;
	int fd;

	n_created = 0;
	assert_int_equal(crf__objects_get(&o, "k", make_fails, NULL, &created), -EIO);
	assert_int_equal(o.n, 0);
	fd = crf__objects_get(&o, "k", make, NULL, &created);
	assert_true(fd >= 3);
	assert_true(created);
	assert_int_equal(n_created, 2);
	close(fd);
	crf__objects_free(&o);
}

/* 200 keys inserted out of order: each finds its own object, named by its key. */
static void test_many_keys(void **state)
{
	struct crf_objects o = {0};
	char key[32], link[64], path[96], want[64];
	int table_fds[200];

	n_created = 0;
	for (int i = 0; i < 200; i++) {
		int k = (i * 73) % 200, fd;

		snprintf(key, sizeof(key), "memfd:%d:%d", k % 7, k);
		fd = crf__objects_get(&o, key, make, key, NULL);
		assert_true(fd >= 3);
		close(fd);
	}
	assert_int_equal(n_created, 200);
	assert_int_equal(o.n, 200);
	for (size_t i = 1; i < o.n; i++)
		assert_true(strcmp(o.v[i - 1].key, o.v[i].key) < 0);
	for (int k = 0; k < 200; k++) {
		ssize_t n;
		int fd;

		snprintf(key, sizeof(key), "memfd:%d:%d", k % 7, k);
		fd = crf__objects_get(&o, key, make_fails, NULL, NULL);
		assert_true(fd >= 3);
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, path, sizeof(path) - 1);
		assert_true(n > 0);
		path[n] = '\0';
		snprintf(want, sizeof(want), "/memfd:%s (deleted)", key);
		assert_string_equal(path, want);
		close(fd);
	}
	assert_int_equal(n_created, 200);
	for (size_t i = 0; i < o.n; i++)
		table_fds[i] = o.v[i].fd;
	crf__objects_free(&o);
	assert_int_equal(o.n, 0);
	for (int i = 0; i < 200; i++)
		assert_int_equal(fcntl(table_fds[i], F_GETFD), -1);
}

/* Outside restore-prepare and restore-task there is no table. */
static void test_no_host(void **state)
{
	struct crf_ctx ctx = {.stage = CRF_STAGE_RESTORE_FINISH};

	n_created = 0;
	capture_begin();
	assert_int_equal(crf_rst_object(&ctx, "k", make, NULL, NULL), -ENOTCONN);
	assert_contains(capture_end(), "no shared objects in stage restore-finish");
	assert_int_equal(n_created, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_creates),
		cmocka_unit_test(test_failed_create),
		cmocka_unit_test(test_many_keys),
		cmocka_unit_test(test_no_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
