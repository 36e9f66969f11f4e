// SPDX-License-Identifier: GPL-2.0-only
/* Loading plugins: ABI checks, dlopen failures, selection, keys, stage order. */
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

#define FOUR                                                                                       \
	"[alpha]\nso = crf-test-alpha.so\n"                                                        \
	"[beta]\nso = crf-test-beta.so\ndump-after = alpha\nrestore-after = gamma\n"               \
	"[gamma]\nso = crf-test-gamma.so\ndump-after = beta\n"                                     \
	"[delta]\nso = crf-test-delta.so\nrequires = alpha\n"

static void test_load_and_order(void **state)
{
	assert_int_equal(setfix_build(&f, FOUR, 0), 0);
	assert_int_equal(f.set.n, 4);
	assert_string_equal(setfix_order(&f, CRF_ORDER_DUMP), "alpha beta delta gamma");
	assert_string_equal(setfix_order(&f, CRF_ORDER_RESTORE), "alpha delta gamma beta");
	assert_string_equal(f.set.p[0].st.desc->version, "1.2.3");
	assert_string_equal(f.set.p[0].st.desc->description, "test plugin alpha");
	assert_non_null(strstr(f.set.p[0].path, "crf-test-alpha.so"));
}

static void expect_load_error(const char *ini, int err, const char *msg)
{
	const char *out;

	capture_begin();
	assert_int_equal(setfix_build(&f, ini, 0), err);
	out = capture_end();
	assert_contains(out, msg);
	assert_int_equal(count_lines(out), 1);
}

static void test_abi_mismatch(void **state)
{
	char msg[512];

	snprintf(msg, sizeof(msg),
		 "crf: error: plugin 'future': %s/crf-test-future.so: built against plugin ABI "
		 "%d.0, crf provides %d.%d",
		 TEST_PLUGIN_DIR, CRF_PLUGIN_ABI_MAJOR + 1, CRF_PLUGIN_ABI_MAJOR,
		 CRF_PLUGIN_ABI_MINOR);
	expect_load_error("[future]\nso = crf-test-future.so\n", -EPROTO, msg);
}

static void test_abi_check_minor(void **state)
{
	struct crf_plugin d = {
		.abi_major = CRF_PLUGIN_ABI_MAJOR,
		.abi_minor = CRF_PLUGIN_ABI_MINOR + 1,
		.size = sizeof(d),
		.name = "x",
		.version = "1",
	};
	char err[256];

	assert_int_equal(plugin_check_abi(&d, "x.so", err, sizeof(err)), -EPROTO);
	assert_contains(err, "x.so: built against plugin ABI");
	d.abi_minor = 0;
	assert_int_equal(plugin_check_abi(&d, "x.so", err, sizeof(err)), 0);
	d.size = 8;
	assert_int_equal(plugin_check_abi(&d, "x.so", err, sizeof(err)), -EPROTO);
	assert_contains(err, "descriptor is 8 bytes");
	d.size = sizeof(d);
	d.name = NULL;
	assert_int_equal(plugin_check_abi(&d, "x.so", err, sizeof(err)), -EPROTO);
	assert_contains(err, "has no name");
}

static void test_no_descriptor(void **state)
{
	expect_load_error("[nodesc]\nso = crf-test-nodesc.so\n", -ENOEXEC,
			  "crf-test-nodesc.so is not a crf plugin: ");
}

static void test_dlopen_failure(void **state)
{
	char *dir = tmpdir_make();
	char ini[700];

	write_file(dir, "bogus.so", "this is not an ELF object\n");
	snprintf(ini, sizeof(ini), "[bogus]\nso = %s/bogus.so\n", dir);
	/* dlerror() names the file and says why. */
	expect_load_error(ini, -ENOEXEC, "plugin 'bogus': cannot load: ");
	tmpdir_done(dir);
}

static void test_missing_object(void **state)
{
	expect_load_error("[ghost]\nso = crf-test-ghost.so\n", -ENOENT,
			  "plugin 'ghost': crf-test-ghost.so not found in " TEST_PLUGIN_DIR);
}

static void test_name_mismatch(void **state)
{
	expect_load_error("[epsilon]\nso = crf-test-alpha.so\n", -EPROTO,
			  "crf-test-alpha.so holds plugin 'alpha', not 'epsilon'");
}

static void test_no_so_key(void **state)
{
	expect_load_error("[alpha]\nenabled = yes\n", -EINVAL,
			  "plugin 'alpha' has no 'so' key naming its shared object");
}

static void test_bad_enabled(void **state)
{
	expect_load_error("[alpha]\nso = crf-test-alpha.so\nenabled = perhaps\n", -EINVAL,
			  "'enabled' must be yes or no, not 'perhaps'");
}

static void test_disabled_missing_is_fine(void **state)
{
	assert_int_equal(setfix_build(&f,
				      "[ghost]\nso = nope.so\nenabled = no\n"
				      "[alpha]\nso = crf-test-alpha.so\n",
				      0),
			 0);
	assert_string_equal(setfix_order(&f, CRF_ORDER_DUMP), "alpha");
	assert_non_null(f.set.p[0].load_error);
	assert_contains(f.set.p[0].why_off, "disabled by ");
	assert_contains(f.set.p[0].why_off, "test.conf:3");
}

static void test_tolerant_keeps_going(void **state)
{
	capture_begin();
	assert_int_equal(setfix_build(&f,
				      "[ghost]\nso = nope.so\n"
				      "[alpha]\nso = crf-test-alpha.so\n",
				      CRF_SET_TOLERANT),
			 -ENOENT);
	capture_end();
	assert_int_equal(f.set.n, 2);
	assert_non_null(f.set.p[1].st.desc);
}

static void test_select_disable(void **state)
{
	assert_int_equal(strv_push(&f.sel.disable, "gamma"), 0);
	assert_int_equal(setfix_build(&f, FOUR, 0), 0);
	assert_string_equal(setfix_order(&f, CRF_ORDER_DUMP), "alpha beta delta");
	assert_string_equal(plugin_set_find(&f.set, "gamma")->why_off, "disabled by --disable");
}

static void test_select_only_requires(void **state)
{
	const char *out;

	f.sel.only_set = true;
	assert_int_equal(strv_push(&f.sel.only, "delta"), 0);
	capture_begin();
	assert_int_equal(setfix_build(&f, FOUR, 0), -EPERM);
	out = capture_end();
	assert_contains(out, "plugin 'delta' requires plugin 'alpha', which is disabled: "
			     "not listed in --plugins");
}

static void test_select_unknown(void **state)
{
	const char *out;

	assert_int_equal(strv_push(&f.sel.disable, "omega"), 0);
	capture_begin();
	assert_int_equal(setfix_build(&f, FOUR, 0), -ENOENT);
	out = capture_end();
	assert_contains(out, "--disable: unknown plugin 'omega'");
}

static void test_enable_overrides_config(void **state)
{
	assert_int_equal(strv_push(&f.sel.enable, "alpha"), 0);
	assert_int_equal(setfix_build(&f, "[alpha]\nso = crf-test-alpha.so\nenabled = no\n", 0), 0);
	assert_string_equal(setfix_order(&f, CRF_ORDER_DUMP), "alpha");
}

static void test_keys(void **state)
{
	char where[600];
	const char *out;
	struct crf_ctx ctx = {0};

	capture_begin();
	assert_int_equal(setfix_build(&f,
				      "[alpha]\nso = crf-test-alpha.so\ntrace = /x\n"
				      "colour = red\n",
				      0),
			 0);
	out = capture_end();
	snprintf(where, sizeof(where),
		 "crf: warning: %s:4: unknown key 'colour' for plugin 'alpha'", f.conf_path);
	assert_contains(out, where);
	ctx.plugin = &f.set.p[0].st;
	assert_string_equal(crf_ctx_config(&ctx, "trace"), "/x");
	assert_null(crf_ctx_config(&ctx, "colour"));
	assert_null(crf_ctx_config(&ctx, "so"));
}

static const char *read_trace(const char *path)
{
	static char buf[2048];
	FILE *t = fopen(path, "r");
	size_t n;

	assert_non_null(t);
	n = fread(buf, 1, sizeof(buf) - 1, t);
	buf[n] = '\0';
	fclose(t);
	remove(path);
	return buf;
}

static void build_traced(const char *fail_plugin, const char *fail_stage, char *trace)
{
	char ini[1024];

	snprintf(trace, 128, "/tmp/crf-unit-trace-%d", (int)getpid());
	snprintf(ini, sizeof(ini),
		 "[alpha]\nso = crf-test-alpha.so\ntrace = %s\n"
		 "[beta]\nso = crf-test-beta.so\ntrace = %s\ndump-after = alpha\n"
		 "restore-after = gamma\n"
		 "[gamma]\nso = crf-test-gamma.so\ntrace = %s\ndump-after = beta\n"
		 "[%s]\nfail-stage = %s\n",
		 trace, trace, trace, fail_plugin, fail_stage);
	assert_int_equal(setfix_build(&f, ini, 0), 0);
}

static void test_stage_order(void **state)
{
	char trace[128];

	build_traced("alpha", "none", trace);
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_TASK, NULL, 1), 0);
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_CLEANUP, NULL, 0), 0);
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_RESTORE_PREPARE, NULL, 0), 0);
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_RESTORE_CLEANUP, NULL, 0), 0);
	assert_string_equal(read_trace(trace), "alpha dump-task\nbeta dump-task\ngamma dump-task\n"
					       "gamma dump-cleanup\nbeta dump-cleanup\n"
					       "alpha dump-cleanup\n"
					       "alpha restore-prepare\ngamma restore-prepare\n"
					       "beta restore-prepare\n"
					       "beta restore-cleanup\ngamma restore-cleanup\n"
					       "alpha restore-cleanup\n");
}

static void test_stage_failure(void **state)
{
	char trace[128];
	const char *out;

	build_traced("beta", "dump-finish", trace);
	capture_begin();
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_FINISH, NULL, 0), -EIO);
	out = capture_end();
	assert_contains(out, "crf[beta]: error: failing dump-finish as configured\n");
	assert_contains(out, "crf: error: plugin 'beta': dump-finish failed: Input/output error\n");
	/* gamma comes after beta: never called. */
	assert_string_equal(read_trace(trace), "alpha dump-finish\nbeta dump-finish\n");
}

static void test_cleanup_runs_all(void **state)
{
	char trace[128];

	build_traced("gamma", "dump-cleanup", trace);
	capture_begin();
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_CLEANUP, NULL, 0), -EIO);
	capture_end();
	assert_string_equal(read_trace(trace),
			    "gamma dump-cleanup\nbeta dump-cleanup\nalpha dump-cleanup\n");
}

/*
 * The device stages (ABI 1.5): dump-undo and dump-resume go, once and in
 * reverse dump order, to the plugins whose dump-pause or a dump-frozen
 * hook succeeded; restore-undo to those with a restore-resume that did.
 */
static void test_device_undo(void **state)
{
	char trace[128];

	build_traced("beta", "dump-pause", trace);
	capture_begin();
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_PAUSE, NULL, 1), -EIO);
	capture_end();
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_UNDO, NULL, 1), 0);
	/* Given back once only. */
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_UNDO, NULL, 1), 0);
	assert_string_equal(read_trace(trace), "alpha dump-pause\nbeta dump-pause\n"
					       "alpha dump-undo\n");
}

static void test_device_frozen_undo(void **state)
{
	char trace[128];

	build_traced("gamma", "dump-frozen", trace);
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_PAUSE, NULL, 1), 0);
	capture_begin();
	assert_int_equal(plugin_set_run_task(&f.set, CRF_STAGE_DUMP_FROZEN, NULL, 2, NULL, NULL),
			 -EIO);
	capture_end();
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_UNDO, NULL, 1), 0);
	assert_string_equal(read_trace(trace),
			    "alpha dump-pause\nbeta dump-pause\ngamma dump-pause\n"
			    "alpha dump-frozen\nbeta dump-frozen\ngamma dump-frozen\n"
			    "gamma dump-undo\nbeta dump-undo\nalpha dump-undo\n");
}

static void test_device_resume(void **state)
{
	char trace[128];

	/* A failing give-back hook does not stop the others. */
	build_traced("beta", "dump-resume", trace);
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_PAUSE, NULL, 1), 0);
	capture_begin();
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_RESUME, NULL, 1), -EIO);
	capture_end();
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_UNDO, NULL, 1), 0);
	/* Nothing owed without a restore-resume. */
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_RESTORE_UNDO, NULL, 1), 0);
	assert_int_equal(plugin_set_run_task(&f.set, CRF_STAGE_RESTORE_RESUME, NULL, 2, NULL, NULL),
			 0);
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_RESTORE_UNDO, NULL, 1), 0);
	assert_string_equal(read_trace(trace),
			    "alpha dump-pause\nbeta dump-pause\ngamma dump-pause\n"
			    "gamma dump-resume\nbeta dump-resume\nalpha dump-resume\n"
			    "alpha restore-resume\ngamma restore-resume\nbeta restore-resume\n"
			    "beta restore-undo\ngamma restore-undo\nalpha restore-undo\n");
}

/* Every stage has its own name, which `crf` prints in its messages. */
static void test_stage_names(void **state)
{
	for (int i = 0; i < CRF_STAGE__COUNT; i++) {
		assert_string_not_equal(crf_stage_name(i), "unknown");
		for (int j = 0; j < i; j++)
			assert_string_not_equal(crf_stage_name(i), crf_stage_name(j));
	}
	assert_string_equal(crf_stage_name(CRF_STAGE_DUMP_PAUSE), "dump-pause");
	assert_string_equal(crf_stage_name(CRF_STAGE_RESTORE_UNDO), "restore-undo");
	assert_string_equal(crf_stage_name(CRF_STAGE__COUNT), "unknown");
}

/* A plugin built against ABI 1.4 (fewer hook slots) loads and runs, with no device hooks. */
static void test_old_minor(void **state)
{
	char trace[128], ini[512];

	snprintf(trace, sizeof(trace), "/tmp/crf-unit-trace-%d", (int)getpid());
	snprintf(ini, sizeof(ini), "[old14]\nso = crf-test-old14.so\ntrace = %s\n", trace);
	assert_int_equal(setfix_build(&f, ini, 0), 0);
	assert_int_equal(f.set.p[0].st.desc->abi_minor, 4);
	for (int s = CRF_STAGE_RESTORE_PREMAP + 1; s < CRF_STAGE__COUNT; s++)
		assert_null(f.set.p[0].hooks[s]);
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_PREPARE, NULL, 7), 0);
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_PAUSE, NULL, 7), 0);
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_UNDO, NULL, 7), 0);
	assert_int_equal(plugin_set_run(&f.set, CRF_STAGE_DUMP_CLEANUP, NULL, 7), 0);
	assert_string_equal(read_trace(trace), "old14 dump-prepare 7\nold14 dump-cleanup 7\n");
}

static void test_probe(void **state)
{
	const char *out;

	assert_int_equal(setfix_build(&f, FOUR "[beta]\nprobe-missing = yes\n", 0), 0);
	capture_begin();
	assert_int_equal(plugin_set_probe(&f.set, false), 1);
	out = capture_end();
	assert_contains(out, "crf[beta]: error: required kernel feature 'test-feature' is "
			     "missing: switched off by probe-missing");
	assert_int_equal(count_lines(out), 1);
	assert_int_equal(f.set.p[1].st.n_probes, 2);
	assert_false(f.set.p[1].st.probes[1].required);
}

#define T(fn) cmocka_unit_test_teardown(fn, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_load_and_order),
		T(test_abi_mismatch),
		T(test_abi_check_minor),
		T(test_no_descriptor),
		T(test_dlopen_failure),
		T(test_missing_object),
		T(test_name_mismatch),
		T(test_no_so_key),
		T(test_bad_enabled),
		T(test_disabled_missing_is_fine),
		T(test_tolerant_keeps_going),
		T(test_select_disable),
		T(test_select_only_requires),
		T(test_select_unknown),
		T(test_enable_overrides_config),
		T(test_keys),
		T(test_stage_order),
		T(test_stage_failure),
		T(test_cleanup_runs_all),
		T(test_probe),
		T(test_device_undo),
		T(test_device_frozen_undo),
		T(test_device_resume),
		T(test_stage_names),
		T(test_old_minor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
