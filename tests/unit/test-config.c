// SPDX-License-Identifier: GPL-2.0-only
/* INI parsing: values, origins, later-wins, drop-in order, errors with file:line. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "helpers.h"

static void test_values_and_origins(void **state)
{
	char *dir = tmpdir_make();
	const char *path = write_file(dir, "a.conf",
				      "# comment\n"
				      "[mem]\n"
				      "so = crf-mem.so\n"
				      "\n"
				      "requires = files, ns\n"
				      "[crf]\n"
				      "plugin-dir = /x\n");
	struct crf_config conf = {0};
	const struct crf_conf_key *k;
	char origin[600];

	assert_int_equal(config_load_file(&conf, path), 0);
	assert_int_equal(conf.n, 2);
	k = config_get(&conf, "mem", "requires");
	assert_non_null(k);
	assert_string_equal(k->value, "files, ns");
	snprintf(origin, sizeof(origin), "%s:5", path);
	assert_string_equal(k->origin, origin);
	assert_string_equal(config_get(&conf, "crf", "plugin-dir")->value, "/x");
	assert_null(config_get(&conf, "mem", "nope"));
	assert_null(config_get(&conf, "nope", "so"));
	config_free(&conf);
	tmpdir_done(dir);
}

static void test_later_file_wins(void **state)
{
	char *dir = tmpdir_make();
	const char *a = write_file(dir, "a.conf", "[net]\nenabled = yes\nso = a.so\n");
	const char *b = write_file(dir, "b.conf", "[net]\nenabled = no\n");
	struct crf_config conf = {0};
	char origin[600];

	assert_int_equal(config_load_file(&conf, a), 0);
	assert_int_equal(config_load_file(&conf, b), 0);
	assert_string_equal(config_get(&conf, "net", "enabled")->value, "no");
	snprintf(origin, sizeof(origin), "%s:2", b);
	assert_string_equal(config_get(&conf, "net", "enabled")->origin, origin);
	assert_string_equal(config_get(&conf, "net", "so")->value, "a.so");
	config_free(&conf);
	tmpdir_done(dir);
}

static void test_dropins_in_name_order(void **state)
{
	char *dir = tmpdir_make();
	char sub[600];
	struct crf_config conf = {0};

	snprintf(sub, sizeof(sub), "%s/plugins.d", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	/* Written in the "wrong" order: the name decides, not creation. */
	write_file(sub, "90-late.conf", "[x]\nvalue = late\n");
	write_file(sub, "10-early.conf", "[x]\nvalue = early\nonly-early = 1\n");
	write_file(sub, "50-mid.conf", "[x]\nvalue = mid\n");
	write_file(sub, "README", "[x]\nvalue = not a conf file\n");
	write_file(sub, ".hidden.conf", "[x]\nvalue = hidden\n");
	assert_int_equal(config_load_dir(&conf, sub, 0), 0);
	assert_string_equal(config_get(&conf, "x", "value")->value, "late");
	assert_string_equal(config_get(&conf, "x", "only-early")->value, "1");
	config_free(&conf);
	tmpdir_done(dir);
}

static void test_missing_dir(void **state)
{
	struct crf_config conf = {0};
	const char *err;

	assert_int_equal(config_load_dir(&conf, "/nonexistent/crf", 1), 0);
	capture_begin();
	assert_int_equal(config_load_dir(&conf, "/nonexistent/crf", 0), -ENOENT);
	err = capture_end();
	assert_contains(err, "/nonexistent/crf");
	assert_int_equal(count_lines(err), 1);
	config_free(&conf);
}

static void expect_error(const char *text, int line, const char *what)
{
	char *dir = tmpdir_make();
	const char *path = write_file(dir, "bad.conf", text);
	struct crf_config conf = {0};
	char where[600];
	const char *err;

	capture_begin();
	assert_int_equal(config_load_file(&conf, path), -EINVAL);
	err = capture_end();
	snprintf(where, sizeof(where), "%s:%d: ", path, line);
	assert_contains(err, where);
	assert_contains(err, what);
	assert_int_equal(count_lines(err), 1);
	config_free(&conf);
	tmpdir_done(dir);
}

static void test_malformed_line(void **state)
{
	expect_error("[mem]\nso = x.so\nthis line has no equals sign\n", 3, "malformed line");
	expect_error("[mem\nso = x.so\n", 1, "malformed line");
}

static void test_key_outside_section(void **state)
{
	expect_error("# header\nso = x.so\n", 2, "outside of any [section]");
}

static void test_bad_section_name(void **state)
{
	expect_error("[Mem Plugin]\nso = x.so\n", 2, "invalid section name");
}

static void test_unreadable_file(void **state)
{
	struct crf_config conf = {0};
	const char *err;

	capture_begin();
	assert_int_equal(config_load_file(&conf, "/nonexistent/crf.conf"), -ENOENT);
	err = capture_end();
	assert_contains(err, "cannot read configuration /nonexistent/crf.conf");
}

static void test_parse_bool(void **state)
{
	assert_int_equal(parse_bool("yes"), 1);
	assert_int_equal(parse_bool("TRUE"), 1);
	assert_int_equal(parse_bool("1"), 1);
	assert_int_equal(parse_bool("off"), 0);
	assert_int_equal(parse_bool("no"), 0);
	assert_int_equal(parse_bool("maybe"), -EINVAL);
	assert_int_equal(parse_bool(""), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_and_origins),
		cmocka_unit_test(test_later_file_wins),
		cmocka_unit_test(test_dropins_in_name_order),
		cmocka_unit_test(test_missing_dir),
		cmocka_unit_test(test_malformed_line),
		cmocka_unit_test(test_key_outside_section),
		cmocka_unit_test(test_bad_section_name),
		cmocka_unit_test(test_unreadable_file),
		cmocka_unit_test(test_parse_bool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
