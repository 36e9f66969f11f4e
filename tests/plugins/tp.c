// SPDX-License-Identifier: GPL-2.0-only
/*
 * A configurable test plugin, built several times under different names
 * (TP_NAME).  Its INI keys drive it:
 *   trace = FILE        append "<plugin> <stage>" for every hook called
 *   fail-stage = STAGE  fail that stage's hook with -EIO
 *   probe-missing = yes report the required feature "test-feature" missing
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <crf/plugin.h>

#ifndef TP_NAME
#error "TP_NAME must be defined"
#endif

static int tp_hook(struct crf_ctx *ctx)
{
	enum crf_stage stage = crf_ctx_stage(ctx);
	const char *trace = crf_ctx_config(ctx, "trace");
	const char *fail = crf_ctx_config(ctx, "fail-stage");
	const char *missing = crf_ctx_config(ctx, "probe-missing");

	if (trace) {
		FILE *f = fopen(trace, "ae");

		if (!f)
			return crf_log_errno(CRF_LOG_ERROR, errno, "open %s", trace);
		fprintf(f, "%s %s\n", crf_ctx_plugin(ctx), crf_stage_name(stage));
		fclose(f);
	}
	if (stage == CRF_STAGE_PROBE) {
		bool ok = !missing || strcmp(missing, "yes");

		crf_probe_feature(ctx, "test-feature", ok, true, "%s",
				  ok ? "present" : "switched off by probe-missing");
		crf_probe_feature(ctx, "test-optional", false, false, "never present");
	}
	if (fail && !strcmp(fail, crf_stage_name(stage))) {
		crf_error("failing %s as configured", crf_stage_name(stage));
		return -EIO;
	}
	return 0;
}

static int tp_dump_obj(struct crf_ctx *ctx, const struct crf_object *obj)
{
	return 0;
}

static bool tp_match_dev(const struct crf_object *obj)
{
	return obj->desc && !strncmp(obj->desc, "/dev/" TP_NAME, strlen("/dev/" TP_NAME));
}

CRF_PLUGIN(
	.name = TP_NAME,
	.version = "1.2.3",
	.description = "test plugin " TP_NAME,
	.hooks = CRF_HOOKS(
		[CRF_STAGE_PROBE] = tp_hook,
		[CRF_STAGE_DUMP_PREPARE] = tp_hook,
		[CRF_STAGE_DUMP_TASK] = tp_hook,
		[CRF_STAGE_DUMP_FINISH] = tp_hook,
		[CRF_STAGE_DUMP_CLEANUP] = tp_hook,
		[CRF_STAGE_RESTORE_PREPARE] = tp_hook,
		[CRF_STAGE_RESTORE_TASK] = tp_hook,
		[CRF_STAGE_RESTORE_FINISH] = tp_hook,
		[CRF_STAGE_RESTORE_CLEANUP] = tp_hook,
	),
	.kinds = CRF_KINDS(
		{ .cls = CRF_OBJ_FD, .name = TP_NAME "-fd", .dump = tp_dump_obj },
		{ .cls = CRF_OBJ_FD, .name = TP_NAME "-dev", .match = tp_match_dev,
		  .dump = tp_dump_obj }
	),
	.config_keys = CRF_STRINGS("trace", "fail-stage", "probe-missing"),
);
