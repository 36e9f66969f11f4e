// SPDX-License-Identifier: GPL-2.0-only
/* Object-kind dispatch: by name, by match, first claim wins, disabled owners named. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "setfix.h"

static struct setfix f;

static int teardown(void **state)
{
	setfix_free(&f);
	return 0;
}

#define INI                                                                                        \
	"[alpha]\nso = crf-test-alpha.so\n"                                                        \
	"[beta]\nso = crf-test-beta.so\n"                                                          \
	"[gamma]\nso = crf-test-gamma.so\nenabled = no\n"

static struct crf_ctx ctx_of(struct setfix *sf)
{
	return (struct crf_ctx){.stage = CRF_STAGE_DUMP_TASK, .registry = &sf->set.registry};
}

static void test_by_name(void **state)
{
	struct crf_object obj = {.cls = CRF_OBJ_FD, .kind = "beta-fd", .desc = "x", .pid = 7};
	const struct crf_kind *k = NULL;
	struct crf_ctx ctx;

	assert_int_equal(setfix_build(&f, INI, 0), 0);
	ctx = ctx_of(&f);
	assert_int_equal(crf_kind_find(&ctx, &obj, &k), 0);
	assert_string_equal(k->name, "beta-fd");
	assert_int_equal(k->dump(&ctx, &obj), 0);
}

static void test_by_match(void **state)
{
	struct crf_object obj = {.cls = CRF_OBJ_FD, .kind = "chr", .desc = "/dev/alpha0"};
	const struct crf_kind *k = NULL;
	struct crf_ctx ctx;

	assert_int_equal(setfix_build(&f, INI, 0), 0);
	ctx = ctx_of(&f);
	assert_int_equal(crf_kind_find(&ctx, &obj, &k), 0);
	assert_string_equal(k->name, "alpha-dev");
}

static void test_class_must_match(void **state)
{
	struct crf_object obj = {.cls = CRF_OBJ_VMA, .kind = "alpha-fd", .desc = "v", .id = 3};
	const struct crf_kind *k = NULL;
	struct crf_ctx ctx;
	const char *out;

	assert_int_equal(setfix_build(&f, INI, 0), 0);
	ctx = ctx_of(&f);
	capture_begin();
	assert_int_equal(crf_kind_find(&ctx, &obj, &k), -ENOTSUP);
	out = capture_end();
	assert_contains(out, "mapping v (kind 'alpha-fd'): no plugin handles this kind");
}

static void test_disabled_owner_named(void **state)
{
	struct crf_object obj = {.cls = CRF_OBJ_FD,
				 .kind = "gamma-fd",
				 .desc = "anon_inode:[gamma]",
				 .pid = 42,
				 .id = 5};
	const struct crf_kind *k = NULL;
	struct crf_ctx ctx;
	const char *out;

	assert_int_equal(setfix_build(&f, INI, 0), 0);
	ctx = ctx_of(&f);
	capture_begin();
	assert_int_equal(crf_kind_find(&ctx, &obj, &k), -ENOTSUP);
	out = capture_end();
	assert_contains(out, "pid 42: fd 5 (anon_inode:[gamma], kind 'gamma-fd') is handled by "
			     "plugin 'gamma', which is disabled by ");
	assert_contains(out, "test.conf:7");
	assert_int_equal(count_lines(out), 1);
}

static void test_unknown_kind(void **state)
{
	struct crf_object obj = {.cls = CRF_OBJ_FD,
				 .kind = "userfaultfd",
				 .desc = "anon_inode:[userfaultfd]",
				 .pid = 9,
				 .id = 4};
	const struct crf_kind *k = NULL;
	struct crf_ctx ctx;
	const char *out;

	assert_int_equal(setfix_build(&f, INI, 0), 0);
	ctx = ctx_of(&f);
	capture_begin();
	assert_int_equal(crf_kind_find(&ctx, &obj, &k), -ENOTSUP);
	out = capture_end();
	assert_contains(out, "pid 9: fd 4 (anon_inode:[userfaultfd], kind 'userfaultfd'): "
			     "no plugin handles this kind");
}

static void test_first_in_dump_order_wins(void **state)
{
	/* The table follows dump order: beta's kinds come before alpha's. */
	struct crf_object obj = {.cls = CRF_OBJ_FD, .kind = "alpha-fd", .desc = "x"};
	const struct crf_kind *k = NULL;
	struct crf_ctx ctx;

	assert_int_equal(setfix_build(&f, INI "[alpha]\ndump-after = beta\n", 0), 0);
	ctx = ctx_of(&f);
	assert_string_equal(f.set.registry.entries[0].owner->name, "beta");
	assert_int_equal(crf_kind_find(&ctx, &obj, &k), 0);
	assert_string_equal(k->name, "alpha-fd");
	/* Disabled plugins' kinds come last. */
	assert_string_equal(f.set.registry.entries[f.set.registry.n - 1].owner->name, "gamma");
}

static void test_kind_switched_off_in_ini(void **state)
{
	struct crf_object obj = {
		.cls = CRF_OBJ_FD, .kind = "alpha-fd", .desc = "x", .pid = 3, .id = 8};
	const struct crf_kind *k = NULL;
	struct crf_ctx ctx;
	const char *out;

	assert_int_equal(setfix_build(&f, INI "[alpha]\ndisable-kinds = alpha-fd\n", 0), 0);
	ctx = ctx_of(&f);
	capture_begin();
	assert_int_equal(crf_kind_find(&ctx, &obj, &k), -ENOTSUP);
	out = capture_end();
	assert_contains(out, "pid 3: fd 8 (x, kind 'alpha-fd') is handled by plugin 'alpha', "
			     "whose 'alpha-fd' handler is switched off by ");
	assert_contains(out, "test.conf:9");
	assert_int_equal(count_lines(out), 1);
	/* The plugin's other kinds still work. */
	obj.kind = "chr";
	obj.desc = "/dev/alpha0";
	assert_int_equal(crf_kind_find(&ctx, &obj, &k), 0);
	assert_string_equal(k->name, "alpha-dev");
}

static void test_kind_switched_off_on_command_line(void **state)
{
	struct crf_object obj = {.cls = CRF_OBJ_FD, .kind = "beta-fd", .desc = "y", .id = 4};
	const struct crf_kind *k = NULL;
	struct crf_ctx ctx;
	const char *out;

	assert_int_equal(strv_push(&f.sel.disable, "beta:beta-fd"), 0);
	assert_int_equal(setfix_build(&f, INI, 0), 0);
	ctx = ctx_of(&f);
	capture_begin();
	assert_int_equal(crf_kind_find(&ctx, &obj, &k), -ENOTSUP);
	out = capture_end();
	assert_contains(out, "whose 'beta-fd' handler is switched off by --disable beta:beta-fd");
	setfix_free(&f);

	/* --enable switches back on what an INI file switched off. */
	assert_int_equal(strv_push(&f.sel.enable, "beta:beta-fd"), 0);
	assert_int_equal(setfix_build(&f, INI "[beta]\ndisable-kinds = beta-fd\n", 0), 0);
	ctx = ctx_of(&f);
	assert_int_equal(crf_kind_find(&ctx, &obj, &k), 0);
	assert_string_equal(k->name, "beta-fd");
}

static void test_kind_off_names_checked(void **state)
{
	const char *out;

	capture_begin();
	assert_int_equal(setfix_build(&f, INI "[alpha]\ndisable-kinds = alpha-fd, nope\n", 0),
			 -EINVAL);
	out = capture_end();
	assert_contains(out, "test.conf:9: plugin 'alpha' has no kind 'nope'");
	setfix_free(&f);

	assert_int_equal(strv_push(&f.sel.disable, "delta:x"), 0);
	capture_begin();
	assert_int_equal(setfix_build(&f, INI, 0), -ENOENT);
	out = capture_end();
	assert_contains(out, "--disable: unknown plugin 'delta'");
}

/* Each class of object the core dispatches reads as what it is. */
static void test_objects_named(void **state)
{
	const struct {
		struct crf_object obj;
		const char *says;
	} cases[] = {
		{{.cls = CRF_OBJ_NS, .kind = "net", .desc = "net:[4026532281]", .pid = 42},
		 "pid 42: namespace net:[4026532281] is not the one crf runs in, and no plugin "
		 "handles namespaces of kind 'net'"},
		{{.cls = CRF_OBJ_VMA,
		  .kind = "[uprobes]",
		  .desc = "7fff0000-7fff1000 [uprobes]",
		  .pid = 5},
		 "pid 5: mapping 7fff0000-7fff1000 [uprobes] (kind '[uprobes]'): no plugin handles "
		 "this kind"},
		{{.cls = CRF_OBJ_CGROUP, .kind = "v2", .desc = "v2:/a/b", .pid = 6},
		 "pid 6: cgroup v2:/a/b (kind 'v2'): no plugin handles this kind"},
		{{.cls = CRF_OBJ_FDTABLE,
		  .kind = "fdtable",
		  .desc = "fd 0 (/dev/null) and 2 more",
		  .pid = 7},
		 "pid 7: fd table: fd 0 (/dev/null) and 2 more (kind 'fdtable'): no plugin handles "
		 "this kind"},
	};
	const struct crf_kind *k = NULL;
	struct crf_ctx ctx;
	const char *out;

	assert_int_equal(setfix_build(&f, INI, 0), 0);
	ctx = ctx_of(&f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		capture_begin();
		assert_int_equal(crf_kind_find(&ctx, &cases[i].obj, &k), -ENOTSUP);
		out = capture_end();
		assert_contains(out, cases[i].says);
		assert_int_equal(count_lines(out), 1);
	}
}

/* The core's dispatch runs the claiming handler's dump, or refuses. */
static void test_dispatch(void **state)
{
	struct crf_object obj = {.cls = CRF_OBJ_FD, .kind = "beta-fd", .desc = "x", .pid = 7};
	const char *out;

	assert_int_equal(setfix_build(&f, INI, 0), 0);
	assert_int_equal(plugin_set_dispatch(&f.set, NULL, &obj), 0);
	obj.kind = "gamma-fd";
	capture_begin();
	assert_int_equal(plugin_set_dispatch(&f.set, NULL, &obj), -ENOTSUP);
	out = capture_end();
	assert_contains(out, "is handled by plugin 'gamma', which is disabled by ");
}

/* A restore's set: the dump's plugins keep their state, the others are off. */
static void test_image_selection(void **state)
{
	assert_int_equal(strv_push(&f.sel.image, "alpha"), 0);
	assert_int_equal(strv_push(&f.sel.image, "gamma"), 0);
	f.sel.image_set = true;
	assert_int_equal(setfix_build(&f, INI, 0), 0);
	assert_true(plugin_set_find(&f.set, "alpha")->st.enabled);
	assert_false(plugin_set_find(&f.set, "beta")->st.enabled);
	assert_string_equal(plugin_set_find(&f.set, "beta")->st.why_off,
			    "off: the dump was written without it");
	/* gamma wrote the dump but is disabled by the configuration: the inventory check refuses
	 * it. */
	assert_false(plugin_set_find(&f.set, "gamma")->st.enabled);
	assert_non_null(strstr(plugin_set_find(&f.set, "gamma")->st.why_off, "test.conf"));
}

static void test_class_names(void **state)
{
	assert_string_equal(crf_object_class_name(CRF_OBJ_FD), "fd");
	assert_string_equal(crf_object_class_name(CRF_OBJ_VMA), "vma");
	assert_string_equal(crf_object_class_name(CRF_OBJ_NS), "ns");
	assert_string_equal(crf_object_class_name(CRF_OBJ_CGROUP), "cgroup");
	assert_string_equal(crf_object_class_name(CRF_OBJ_FDTABLE), "fdtable");
	assert_string_equal(crf_object_class_name(CRF_OBJ__COUNT), "object");
	assert_string_equal(crf_stage_name(CRF_STAGE_RESTORE_FINISH), "restore-finish");
	assert_string_equal(crf_stage_name(CRF_STAGE__COUNT), "unknown");
}

#define T(fn) cmocka_unit_test_teardown(fn, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_by_name),
		T(test_by_match),
		T(test_class_must_match),
		T(test_disabled_owner_named),
		T(test_unknown_kind),
		T(test_first_in_dump_order_wins),
		T(test_kind_switched_off_in_ini),
		T(test_kind_switched_off_on_command_line),
		T(test_kind_off_names_checked),
		T(test_objects_named),
		T(test_dispatch),
		T(test_image_selection),
		T(test_class_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
