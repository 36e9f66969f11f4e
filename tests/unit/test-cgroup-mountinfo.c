// SPDX-License-Identifier: GPL-2.0-only
/* libcrf's cgroup mountinfo parsers, fed sample texts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <crf/mountinfo.h>

static int parse(const char *text, char *path, size_t len)
{
	FILE *f;
	int r;

	/* fmemopen() refuses an empty buffer, and /dev/null reads as nothing. */
	f = *text ? fmemopen((void *)text, strlen(text), "r") : fopen("/dev/null", "r");
	assert_non_null(f);
	r = crf_cgroup2_mount_from_mountinfo(f, path, len);
	fclose(f);
	return r;
}

/* A hybrid host: v1 hierarchies next to the v2 one at .../unified. */
static const char hybrid[] =
	"24 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
	"31 24 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
	"42 30 0:39 / /tmp rw,nosuid shared:9 master:2 - tmpfs tmpfs rw\n";

static void test_hybrid(void **state)
{
	char path[64];

	(void)state;
	assert_int_equal(parse(hybrid, path, sizeof(path)), 0);
	assert_string_equal(path, "/sys/fs/cgroup/unified");
}

/* Optional fields of any number, and the v2 mount alone at the usual place. */
static void test_optional_fields(void **state)
{
	static const char text[] = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
				   "35 25 0:30 / /sys/fs/cgroup rw,nosuid shared:9 master:4 "
				   "propagate_from:2 - cgroup2 cgroup2 rw,nsdelegate\n";
	char path[64];

	(void)state;
	assert_int_equal(parse(text, path, sizeof(path)), 0);
	assert_string_equal(path, "/sys/fs/cgroup");
}

/* Spaces, tabs and backslashes in mount points come as \ooo escapes. */
static void test_escapes(void **state)
{
	static const char text[] =
		"22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
		"50 22 0:40 / /mnt/my\\040cgroup\\011v2\\134x rw - cgroup2 none rw\n";
	char path[64];

	(void)state;
	assert_int_equal(parse(text, path, sizeof(path)), 0);
	assert_string_equal(path, "/mnt/my cgroup\tv2\\x");
}

/* A bind mount of a subtree comes first; the mount of the whole tree wins. */
static void test_prefers_root(void **state)
{
	static const char text[] = "60 22 0:40 /user.slice /mnt/sub rw - cgroup2 cgroup2 rw\n"
				   "61 22 0:40 /system.slice /mnt/sub2 rw - cgroup2 cgroup2 rw\n"
				   "62 22 0:40 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
				   "63 22 0:40 / /mnt/again rw - cgroup2 cgroup2 rw\n";
	char path[64];

	(void)state;
	assert_int_equal(parse(text, path, sizeof(path)), 0);
	assert_string_equal(path, "/sys/fs/cgroup");
}

/* With subtrees only, the first one is the answer. */
static void test_subtrees_only(void **state)
{
	static const char text[] = "60 22 0:40 /user.slice /mnt/sub rw - cgroup2 cgroup2 rw\n"
				   "61 22 0:40 /system.slice /mnt/sub2 rw - cgroup2 cgroup2 rw\n";
	char path[64];

	(void)state;
	assert_int_equal(parse(text, path, sizeof(path)), 0);
	assert_string_equal(path, "/mnt/sub");
}

/* "cgroup2" elsewhere on a line (mount point, source, options) is no cgroup2 mount. */
static void test_none(void **state)
{
	static const char text[] = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
				   "31 22 0:28 / /cgroup2 rw - tmpfs cgroup2 rw,cgroup2\n"
				   "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
	char path[64] = "untouched";

	(void)state;
	assert_int_equal(parse(text, path, sizeof(path)), -ENOENT);
	assert_string_equal(path, "untouched");
}

static void test_empty(void **state)
{
	char path[64];

	(void)state;
	assert_int_equal(parse("", path, sizeof(path)), -ENOENT);
	assert_int_equal(parse("\n\n", path, sizeof(path)), -ENOENT);
}

static void test_too_long(void **state)
{
	char path[64];
	size_t fits = sizeof("/sys/fs/cgroup/unified");

	(void)state;
	/* One byte short: no room for the terminator. */
	assert_int_equal(parse(hybrid, path, fits - 1), -ENAMETOOLONG);
	assert_int_equal(parse(hybrid, path, 0), -ENAMETOOLONG);
	/* Exactly enough room, terminator included. */
	assert_int_equal(parse(hybrid, path, fits), 0);
	assert_string_equal(path, "/sys/fs/cgroup/unified");
}

static void test_malformed(void **state)
{
	char path[64];

	(void)state;
	/* No "-" separator. */
	assert_int_equal(parse("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 ext3 /dev/root rw\n",
			       path, sizeof(path)),
			 -EINVAL);
	/* Too few fields. */
	assert_int_equal(parse("36 35 98:0 /\n", path, sizeof(path)), -EINVAL);
	/* Nothing after the separator. */
	assert_int_equal(parse("36 35 98:0 / /mnt rw -\n", path, sizeof(path)), -EINVAL);
	/* Escapes the kernel never writes. */
	assert_int_equal(parse("1 0 0:1 / /a\\04x rw - cgroup2 cgroup2 rw\n", path, sizeof(path)),
			 -EINVAL);
	assert_int_equal(parse("1 0 0:1 / /a\\000 rw - cgroup2 cgroup2 rw\n", path, sizeof(path)),
			 -EINVAL);
	assert_int_equal(parse("1 0 0:1 / /a\\ rw - cgroup2 cgroup2 rw\n", path, sizeof(path)),
			 -EINVAL);
}

static int dir_of(const char *text, const char *controllers, const char *cg, char *dir, size_t len)
{
	FILE *f = *text ? fmemopen((void *)text, strlen(text), "r") : fopen("/dev/null", "r");
	int r;

	assert_non_null(f);
	r = crf_cgroup_dir_from_mountinfo(f, controllers, cg, dir, len);
	fclose(f);
	return r;
}

static const char v1_hosts[] =
	"31 24 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
	"33 31 0:30 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
	"34 31 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

/* Each hierarchy by the name /proc/PID/cgroup gives it; never a fixed path. */
static void test_dir_hierarchies(void **state)
{
	char dir[128];

	(void)state;
	assert_int_equal(dir_of(v1_hosts, "", "/a/b", dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/sys/fs/cgroup/unified/a/b");
	assert_int_equal(dir_of(v1_hosts, "cpu,cpuacct", "/a", dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/sys/fs/cgroup/cpu,cpuacct/a");
	assert_int_equal(dir_of(v1_hosts, "name=systemd", "/user.slice", dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/sys/fs/cgroup/systemd/user.slice");
	/* "memory" is not "mem", nor "pids" "pid". */
	assert_int_equal(dir_of(v1_hosts, "mem", "/", dir, sizeof(dir)), -ENOENT);
	assert_int_equal(dir_of(v1_hosts, "pid", "/", dir, sizeof(dir)), -ENOENT);
	assert_int_equal(dir_of(v1_hosts, "pids", "/", dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/sys/fs/cgroup/pids/");
	assert_int_equal(dir_of(v1_hosts, "freezer", "/x", dir, sizeof(dir)), -ENOENT);
	assert_int_equal(dir_of(hybrid, "", "/", dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/sys/fs/cgroup/unified/");
}

/* A mount of a subtree holds only the cgroups below its root. */
static void test_dir_roots(void **state)
{
	static const char text[] = "60 22 0:40 /user.slice /mnt/sub rw - cgroup2 cgroup2 rw\n"
				   "61 22 0:40 /sys /mnt/s rw - cgroup2 cgroup2 rw\n"
				   "62 22 0:41 / / rw - cgroup cgroup rw,pids\n";
	char dir[128];

	(void)state;
	assert_int_equal(dir_of(text, "", "/user.slice/a", dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/mnt/sub/a");
	assert_int_equal(dir_of(text, "", "/user.slice", dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/mnt/sub");
	/* "/system.slice" is not below "/sys". */
	assert_int_equal(dir_of(text, "", "/system.slice", dir, sizeof(dir)), -EXDEV);
	assert_int_equal(dir_of(text, "", "/sys/x", dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/mnt/s/x");
	/* A hierarchy mounted at / gives no double slash. */
	assert_int_equal(dir_of(text, "pids", "/a", dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/a");
	assert_int_equal(dir_of("", "", "/a", dir, sizeof(dir)), -ENOENT);
}

static void test_dir_escapes_and_length(void **state)
{
	static const char text[] = "50 22 0:40 /my\\040root /mnt/my\\040cg rw - cgroup2 none rw\n";
	char dir[64];

	(void)state;
	assert_int_equal(dir_of(text, "", "/my root/x y", dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/mnt/my cg/x y");
	assert_int_equal(dir_of(text, "", "/my root/x y", dir, sizeof("/mnt/my cg/x y") - 1),
			 -ENAMETOOLONG);
	assert_int_equal(
		dir_of("1 0 0:1 / /a\\04x rw - cgroup2 cgroup2 rw\n", "", "/", dir, sizeof(dir)),
		-EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hybrid),	      cmocka_unit_test(test_optional_fields),
		cmocka_unit_test(test_escapes),	      cmocka_unit_test(test_prefers_root),
		cmocka_unit_test(test_subtrees_only), cmocka_unit_test(test_none),
		cmocka_unit_test(test_empty),	      cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_malformed),     cmocka_unit_test(test_dir_hierarchies),
		cmocka_unit_test(test_dir_roots),     cmocka_unit_test(test_dir_escapes_and_length),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
