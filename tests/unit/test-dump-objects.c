// SPDX-License-Identifier: GPL-2.0-only
/*
 * The core's classifiers of what it dispatches before infecting a task:
 * mappings by their /proc/PID/maps name, /proc/PID/cgroup lines; and the
 * rule by which a plugin's version reads a dump's images.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dump-objects.h"
#include "inventory.h"

static void test_vma_kinds(void **state)
{
	static const struct {
		const char *name;
		bool shared;
		const char *kind;
	} cases[] = {
		{"", false, "anon"},
		{"", true, "shmem"},
		{"[heap]", false, "anon"},
		{"[stack]", false, "anon"},
		{"[stack:1234]", false, "anon"},
		{"[anon:my arena]", false, "anon"},
		{"[anon_shmem:shared]", true, "shmem"},
		{"/dev/zero (deleted)", true, "shmem"},
		{"[vdso]", false, "vdso"},
		{"[vvar]", false, "vdso"},
		{"[vvar_vclock]", false, "vdso"},
		{"[vsyscall]", false, "vsyscall"},
		{"/memfd:buf (deleted)", true, "memfd"},
		{"/SYSV0000abcd (deleted)", true, "sysv"},
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", false, "file"},
		{"/tmp/a file (deleted)", false, "file"},
		{"/dev/zero", false, "file"},
		/* Unknown special mappings keep their own name: no plugin claims them. */
		{"[uprobes]", false, "[uprobes]"},
		{"anon_inode:[io_uring]", true, "anon_inode:[io_uring]"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(crf_vma_kind(cases[i].name, cases[i].shared), cases[i].kind);
}

static void test_cgroup_line(void **state)
{
	char v2[] = "0::/a/b", v1[] = "3:cpu,cpuacct:/x:y", bad1[] = "0:/", bad2[] = ":a:/",
	     bad3[] = "1:a:b";
	const char *c, *p;

	(void)state;
	assert_int_equal(cgroup_line_split(v2, &c, &p), 0);
	assert_string_equal(c, "");
	assert_string_equal(p, "/a/b");
	assert_int_equal(cgroup_line_split(v1, &c, &p), 0);
	assert_string_equal(c, "cpu,cpuacct");
	assert_string_equal(p, "/x:y");
	assert_int_equal(cgroup_line_split(bad1, &c, &p), -EINVAL);
	assert_int_equal(cgroup_line_split(bad2, &c, &p), -EINVAL);
	assert_int_equal(cgroup_line_split(bad3, &c, &p), -EINVAL);
}

/* Same major; a minor at least the dump's; while 0.x, the same minor. */
static void test_plugin_versions(void **state)
{
	(void)state;
	assert_true(plugin_version_reads("0.1.0", "0.1.0"));
	assert_true(plugin_version_reads("0.1.3", "0.1.0"));
	assert_true(plugin_version_reads("0.1.0", "0.1.7"));
	assert_false(plugin_version_reads("0.2.0", "0.1.0"));
	assert_false(plugin_version_reads("0.1.0", "0.2.0"));
	assert_true(plugin_version_reads("1.3.0", "1.2.9"));
	assert_true(plugin_version_reads("1.2", "1.2.1"));
	assert_false(plugin_version_reads("1.2.0", "1.3.0"));
	assert_false(plugin_version_reads("2.0.0", "1.9.0"));
	assert_false(plugin_version_reads("1.0.0", "0.1.0"));
	/* Versions not of the form MAJOR.MINOR must match exactly. */
	assert_true(plugin_version_reads("git-abc", "git-abc"));
	assert_false(plugin_version_reads("git-abc", "git-abd"));
	assert_false(plugin_version_reads("1", "1.0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vma_kinds),
		cmocka_unit_test(test_cgroup_line),
		cmocka_unit_test(test_plugin_versions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
