// SPDX-License-Identifier: GPL-2.0-only
/* The fdinfo parser of the files plugin, on samples and on fds of our own. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

static void test_lock_lines(void **state)
{
	const char *text = "pos:\t0\nflags:\t02\nlock:\t1: POSIX  ADVISORY  WRITE 25286 "
			   "fe:00:10977362 10 29\nlock:\t2: OFDLCK ADVISORY  READ -1 "
			   "08:1f:77 50 EOF\nlock:\t3: FLOCK  ADVISORY  WRITE 9 fe:00:5 0 EOF\n";
	const char *cursor = text, *v, *what;
	struct files_lock l;

	v = files_fdinfo_next(&cursor, "lock");
	assert_non_null(v);
	assert_int_equal(files_fdinfo_lock(v, &l, &what), 0);
	assert_int_equal(l.kind, FILES_LOCK_POSIX);
	assert_true(l.write);
	assert_int_equal(l.pid, 25286);
	assert_int_equal(l.major, 0xfe);
	assert_int_equal(l.minor, 0);
	assert_int_equal(l.ino, 10977362);
	assert_int_equal(l.start, 10);
	assert_int_equal(l.end, 29);
	assert_false(l.to_eof);

	v = files_fdinfo_next(&cursor, "lock");
	assert_int_equal(files_fdinfo_lock(v, &l, &what), 0);
	assert_int_equal(l.kind, FILES_LOCK_OFD);
	assert_false(l.write);
	assert_int_equal(l.pid, -1);
	assert_int_equal(l.major, 8);
	assert_int_equal(l.minor, 0x1f);
	assert_int_equal(l.start, 50);
	assert_true(l.to_eof);

	v = files_fdinfo_next(&cursor, "lock");
	assert_int_equal(files_fdinfo_lock(v, &l, &what), 0);
	assert_int_equal(l.kind, FILES_LOCK_FLOCK);
	assert_true(l.write);
	assert_null(files_fdinfo_next(&cursor, "lock"));
}

static void test_lock_refused(void **state)
{
	static const struct {
		const char *line, *what;
	} refused[] = {
		{"1: LEASE  ACTIVE    READ 12 fe:00:5 0 EOF", "a lease"},
		{"1: LEASE  BREAKING  UNLCK 12 fe:00:5 0 EOF", "a lease"},
		{"1: DELEG  ACTIVE    READ 12 fe:00:5 0 EOF", "a delegation"},
		{"1: POSIX  MANDATORY WRITE 12 fe:00:5 0 EOF", "a mandatory lock"},
		{"1: ACCESS ADVISORY  READ 12 fe:00:5 0 EOF", "a lock of an unknown kind"},
	};
	struct files_lock l;
	const char *what;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(files_fdinfo_lock(refused[i].line, &l, &what), -ENOTSUP);
		assert_string_equal(what, refused[i].what);
	}
	/* A blocked waiter, as /proc/locks shows one: ignored. */
	assert_int_equal(
		files_fdinfo_lock("1: -> POSIX  ADVISORY  WRITE 12 fe:00:5 0 EOF", &l, &what), 1);
}

static void test_lock_broken(void **state)
{
	static const char *const bad[] = {
		"",
		"1:",
		"1 POSIX  ADVISORY  WRITE 12 fe:00:5 0 EOF",
		"1: POSIX  ADVISORY  WRITE 12 fe:00:5 0",
		"1: POSIX  ADVISORY  WRITE 12 fe:00:5 9 8",
		"1: POSIX  ADVISORY  UNLCK 12 fe:00:5 0 EOF",
		"1: POSIX  ADVISORY  WRITE x fe:00:5 0 EOF",
		"1: POSIX  ADVISORY  WRITE 12 fe:00 0 EOF",
		"1: POSIX  ADVISORY  WRITE 12 fe:00:5x 0 EOF",
		"1: POSIX  ADVISORY  WRITE 12 fe:00:5 -1 EOF",
		"1: POSIX  ADVISORY  WRITE 12 fe:00:5 0 EOF extra",
	};
	struct files_lock l;
	const char *what;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(files_fdinfo_lock(bad[i], &l, &what), -EBADMSG);
}

/* Our own locks, as the kernel prints them. */
static void test_lock_self(void **state)
{
	char path[] = "/tmp/crf-test-fdinfo-XXXXXX", text[4096];
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 7, .l_len = 5};
	int fd = mkstemp(path), dup_fd;
	const char *cursor = text, *v, *what;
	struct files_lock l;
	struct stat st;
	int n = 0;

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(fcntl(fd, F_SETLK, &fl), 0);
	assert_int_equal(flock(fd, LOCK_SH), 0);
	dup_fd = dup(fd);
	assert_true(dup_fd >= 0);
	assert_int_equal(files_fdinfo_read_text(getpid(), dup_fd, text, sizeof(text)), 0);
	while ((v = files_fdinfo_next(&cursor, "lock"))) {
		n++;
		assert_int_equal(files_fdinfo_lock(v, &l, &what), 0);
		assert_int_equal(l.major, major(st.st_dev));
		assert_int_equal(l.minor, minor(st.st_dev));
		assert_int_equal(l.ino, st.st_ino);
		if (l.kind == FILES_LOCK_FLOCK) {
			assert_false(l.write);
			continue;
		}
		assert_int_equal(l.kind, FILES_LOCK_POSIX);
		assert_true(l.write);
		assert_int_equal(l.pid, getpid());
		assert_int_equal(l.start, 7);
		assert_int_equal(l.end, 11);
	}
	/* The dup shows them too: they were taken through its description. */
	assert_int_equal(n, 2);
	close(dup_fd);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample),	    cmocka_unit_test(test_large_pos),
		cmocka_unit_test(test_broken),	    cmocka_unit_test(test_self),
		cmocka_unit_test(test_lock_lines),  cmocka_unit_test(test_lock_refused),
		cmocka_unit_test(test_lock_broken), cmocka_unit_test(test_lock_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
