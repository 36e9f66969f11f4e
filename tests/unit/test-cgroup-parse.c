// SPDX-License-Identifier: GPL-2.0-only
/* The cgroup plugin's reading of /proc/PID/cgroup, fed sample texts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../plugins/cgroup/cgroup.h"

/* A hybrid host: the ID of each line differs between hosts, the rest is kept. */
static const char hybrid[] = "9:name=systemd:/\n"
			     "4:memory:/process_api/2f33\n"
			     "2:cpu,cpuacct:/a:b c\n"
			     "0::/crf-e2e-1/t\n";

static void test_parse(void **state)
{
	struct cg_members m = {0};
	char name[64];

	(void)state;
	assert_int_equal(cg_parse(hybrid, &m), 0);
	assert_int_equal(m.n, 4);
	assert_string_equal(m.v[0].controllers, "name=systemd");
	assert_string_equal(m.v[0].path, "/");
	/* A path may hold ':' and blanks: everything after the second colon. */
	assert_string_equal(m.v[2].controllers, "cpu,cpuacct");
	assert_string_equal(m.v[2].path, "/a:b c");
	assert_string_equal(m.v[3].controllers, "");
	assert_string_equal(cg_find(&m, "")->path, "/crf-e2e-1/t");
	assert_null(cg_find(&m, "cpu"));
	assert_string_equal(cg_name("", "/x", name, sizeof(name)), "v2:/x");
	assert_string_equal(cg_name("memory", "/x", name, sizeof(name)), "memory:/x");
	cg_members_free(&m);
}

/* No trailing newline, empty text, and the same cgroups in another order. */
static void test_same(void **state)
{
	struct cg_members a = {0}, b = {0};

	(void)state;
	assert_int_equal(cg_parse("1:pids:/a\n0::/b", &a), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(cg_parse("0::/b\n7:pids:/a\n", &b), 0);
	assert_true(cg_same(&a, &b));
	assert_int_equal(cg_parse("0::/b\n7:pids:/a/t\n", &b), 0);
	assert_false(cg_same(&a, &b));
	assert_int_equal(cg_parse("0::/b\n", &b), 0);
	assert_false(cg_same(&a, &b));
	assert_int_equal(cg_parse("", &b), 0);
	assert_int_equal(b.n, 0);
	cg_members_free(&a);
	cg_members_free(&b);
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
		"0:/\n", ":cpu:/a\n", "x:cpu:/a\n", "1:cpu:\n", "1:cpu:a\n", "0::/a\n1\n",
	};
	struct cg_members m = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(cg_parse(bad[i], &m), -EINVAL);
		assert_int_equal(m.n, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_same),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
