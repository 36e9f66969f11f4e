// SPDX-License-Identifier: GPL-2.0-only
/*
 * The files plugin's pure rules (plugins/files/policy.c): the words of
 * --inherit-fd, and which changes of a regular file since the dump each
 * --file-validation rule lets an fd reopen it with.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../plugins/files/policy.h"
#include "helpers.h"

static void test_inherit_parse(void **state)
{
	const char *name = NULL;
	int fd = -1;

	assert_int_equal(files_inherit_parse("fd[7]:pipe:[123456]", &fd, &name), 0);
	assert_int_equal(fd, 7);
	assert_string_equal(name, "pipe:[123456]");
	assert_int_equal(files_inherit_parse("fd[0]:stdio", &fd, &name), 0);
	assert_int_equal(fd, 0);
	assert_string_equal(name, "stdio");
	assert_int_equal(files_inherit_parse("fd[12]:fifo:[9]", &fd, &name), 0);
	assert_int_equal(fd, 12);
	assert_string_equal(name, "fifo:[9]");
	/* Anything else is not a word of --inherit-fd. */
	assert_int_equal(files_inherit_parse("fd[7]:", &fd, &name), -EINVAL);
	assert_int_equal(files_inherit_parse("fd[7]pipe:[1]", &fd, &name), -EINVAL);
	assert_int_equal(files_inherit_parse("fd[]:pipe:[1]", &fd, &name), -EINVAL);
	assert_int_equal(files_inherit_parse("fd[-1]:pipe:[1]", &fd, &name), -EINVAL);
	assert_int_equal(files_inherit_parse("fd[x]:pipe:[1]", &fd, &name), -EINVAL);
	assert_int_equal(files_inherit_parse("fd[99999999999]:pipe:[1]", &fd, &name), -EINVAL);
	assert_int_equal(files_inherit_parse("7:pipe:[1]", &fd, &name), -EINVAL);
	assert_int_equal(files_inherit_parse("", &fd, &name), -EINVAL);
}

static void test_validation_parse(void **state)
{
	enum files_validation v = FILES_VALIDATE_STRICT;

	assert_int_equal(files_validation_parse(NULL, &v), 0);
	assert_int_equal(v, FILES_VALIDATE_LAX);
	assert_int_equal(files_validation_parse("strict", &v), 0);
	assert_int_equal(v, FILES_VALIDATE_STRICT);
	assert_int_equal(files_validation_parse("lax", &v), 0);
	assert_int_equal(v, FILES_VALIDATE_LAX);
	assert_int_equal(files_validation_parse("Strict", &v), -EINVAL);
	assert_int_equal(files_validation_parse("", &v), -EINVAL);
}

static const struct files_file_id was = {
	.dev = 8, .ino = 100, .size = 1000, .mtime_sec = 50, .mtime_nsec = 7};

/* The verdict for a file found as @is through an fd of @flags: NULL, or what changed. */
static const char *verdict(const struct files_file_id *is, unsigned int flags,
			   enum files_validation v)
{
	static char buf[160];

	return files_change_refusal(&was, is, flags, v, buf, sizeof(buf));
}

static void test_unchanged(void **state)
{
	assert_null(verdict(&was, O_RDWR, FILES_VALIDATE_LAX));
	assert_null(verdict(&was, O_RDWR, FILES_VALIDATE_STRICT));
}

static void test_grown(void **state)
{
	struct files_file_id is = was;

	is.size = 1500;
	is.mtime_sec = 60;
	/* lax: readers and appenders meet the new bytes where they belong... */
	assert_null(verdict(&is, O_RDONLY, FILES_VALIDATE_LAX));
	assert_null(verdict(&is, O_WRONLY | O_APPEND, FILES_VALIDATE_LAX));
	assert_null(verdict(&is, O_RDWR | O_APPEND, FILES_VALIDATE_LAX));
	assert_null(verdict(&is, O_PATH, FILES_VALIDATE_LAX));
	/* ...a writer at its own offset does not. */
	assert_string_equal(
		verdict(&is, O_WRONLY, FILES_VALIDATE_LAX),
		"grew from 1000 to 1500 bytes, and the fd writes to it without O_APPEND");
	assert_non_null(verdict(&is, O_RDWR, FILES_VALIDATE_LAX));
	/* strict: no growth at all. */
	assert_string_equal(verdict(&is, O_RDONLY, FILES_VALIDATE_STRICT),
			    "grew from 1000 to 1500 bytes (strict validation)");
}

static void test_shrunk_replaced(void **state)
{
	struct files_file_id is = was;

	is.size = 10;
	assert_string_equal(verdict(&is, O_RDONLY, FILES_VALIDATE_LAX),
			    "shrank from 1000 to 10 bytes");
	assert_non_null(verdict(&is, O_WRONLY | O_APPEND, FILES_VALIDATE_LAX));
	is = was;
	is.ino = 101;
	assert_string_equal(verdict(&is, O_RDONLY, FILES_VALIDATE_LAX),
			    "replaced by another file (inode 100 -> 101)");
	is = was;
	is.dev = 9;
	assert_non_null(verdict(&is, O_RDONLY, FILES_VALIDATE_LAX));
}

static void test_modified_same_size(void **state)
{
	struct files_file_id is = was;

	is.mtime_nsec = 8;
	/* lax looks at the size only; strict at the mtime too. */
	assert_null(verdict(&is, O_RDWR, FILES_VALIDATE_LAX));
	assert_string_equal(verdict(&is, O_RDONLY, FILES_VALIDATE_STRICT),
			    "was modified (mtime 50.000000007 -> 50.000000008, strict validation)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inherit_parse),	cmocka_unit_test(test_validation_parse),
		cmocka_unit_test(test_unchanged),	cmocka_unit_test(test_grown),
		cmocka_unit_test(test_shrunk_replaced), cmocka_unit_test(test_modified_same_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
