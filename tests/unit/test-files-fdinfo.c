// SPDX-License-Identifier: GPL-2.0-only
/* The fdinfo parser of the files plugin, on samples and on fds of our own. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../plugins/files/fdinfo.h"
#include "helpers.h"

static void test_sample(void **state)
{
	struct files_fdinfo fi;

	assert_int_equal(files_fdinfo_parse("pos:\t1000\nflags:\t02102002\nmnt_id:\t27\n"
					    "ino:\t1234\n",
					    &fi),
			 0);
	assert_int_equal(fi.pos, 1000);
	assert_int_equal(fi.flags, 02102002);
	assert_true(fi.flags & O_CLOEXEC);
	assert_true(fi.flags & O_APPEND);
	assert_int_equal(fi.flags & O_ACCMODE, O_RDWR);
	assert_int_equal(fi.mnt_id, 27);
}

static void test_large_pos(void **state)
{
	struct files_fdinfo fi;

	assert_int_equal(files_fdinfo_parse("pos:\t18446744073709551615\nflags:\t0100000\n", &fi),
			 0);
	assert_true(fi.pos == UINT64_MAX);
	assert_int_equal(fi.mnt_id, 0);
}

static void test_broken(void **state)
{
	static const char *const bad[] = {
		"",
		"flags:\t02\n",
		"pos:\t1\n",
		"pos:\tx\nflags:\t02\n",
		"pos:\t1\nflags:\t09\n",
		"pos:\t1\nflags:\t-2\n",
		"pos:\t1\nflags:\t777777777777\n",
		"pos:\t1\nflags:\t02\nmnt_id:\tz\n",
		"xpos:\t1\nflags:\t02\n",
	};
	struct files_fdinfo fi;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(files_fdinfo_parse(bad[i], &fi), -EBADMSG);
}

static void test_self(void **state)
{
	struct files_fdinfo fi;
	int fd = open("/dev/null", O_WRONLY | O_APPEND | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(files_fdinfo_read(getpid(), fd, &fi), 0);
	assert_int_equal(fi.flags & O_ACCMODE, O_WRONLY);
	assert_true(fi.flags & O_APPEND);
	assert_true(fi.flags & O_CLOEXEC);
	assert_true(fi.mnt_id > 0);
	close(fd);
	assert_int_equal(files_fdinfo_read(getpid(), fd, &fi), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample),
		cmocka_unit_test(test_large_pos),
		cmocka_unit_test(test_broken),
		cmocka_unit_test(test_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
