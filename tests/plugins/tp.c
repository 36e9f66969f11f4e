// SPDX-License-Identifier: GPL-2.0-only
/*
 * A configurable test plugin, built several times under different names
 * (TP_NAME).  Its INI keys drive it:
 *   trace = FILE        append "<plugin> <stage>" for every hook called
 *   trace-state = yes   ... followed by " PID STATE TRACER SYSCALL" of the
 *                       context's task (crf_ctx_pid): its /proc/PID/stat
 *                       state letter, "traced" or "untraced", and "read"
 *                       when it waits in read() (a restorer waiting for
 *                       "go"), else /proc/PID/syscall's first word, read
 *                       once the task is blocked (for up to a second);
 *                       "-" for what cannot be read
 *   fail-stage = STAGE  fail that stage's hook with -EIO
 *   probe-missing = yes report the required feature "test-feature" missing
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <crf/plugin.h>

#ifndef TP_NAME
#error "TP_NAME must be defined"
#endif

/* The first line of /proc/PID/NAME starting with @prefix, after it, in @buf. */
static bool proc_line(pid_t pid, const char *name, const char *prefix, char *buf, size_t len)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, prefix, strlen(prefix))) {
			snprintf(buf, len, "%s", line + strlen(prefix));
			buf[strcspn(buf, "\n")] = 0;
			found = true;
		}
	fclose(f);
	return found;
}

static void trace_state(FILE *f, pid_t pid)
{
	char stat[512] = "", tracer[32] = "", sys[128] = "";
	const char *st = "-", *tr = "-", *sy = "-";
	char *p, state[2] = "";

	/* A task just woken, or about to block, "running": wait for it to block (not itself). */
	for (int i = 0;
	     i < 200 && pid != getpid() && proc_line(pid, "syscall", "", sys, sizeof(sys)); i++) {
		sys[strcspn(sys, " ")] = 0;
		sy = strcmp(sys, "running") && atol(sys) == SYS_read ? "read" : sys;
		if (strcmp(sys, "running"))
			break;
		nanosleep(&(struct timespec){0, 5000000}, NULL);
	}
	if (proc_line(pid, "stat", "", stat, sizeof(stat)) && (p = strrchr(stat, ')')) && p[1]) {
		state[0] = p[2];
		st = state;
	}
	if (proc_line(pid, "status", "TracerPid:", tracer, sizeof(tracer)))
		tr = atoi(tracer) ? "traced" : "untraced";
	fprintf(f, " %d %s %s %s", (int)pid, st, tr, sy);
}

static int tp_hook(struct crf_ctx *ctx)
{
	enum crf_stage stage = crf_ctx_stage(ctx);
	const char *trace = crf_ctx_config(ctx, "trace");
	const char *fail = crf_ctx_config(ctx, "fail-stage");
	const char *missing = crf_ctx_config(ctx, "probe-missing");
	const char *state = crf_ctx_config(ctx, "trace-state");

	if (trace) {
		FILE *f = fopen(trace, "ae");

		if (!f)
			return crf_log_errno(CRF_LOG_ERROR, errno, "open %s", trace);
		fprintf(f, "%s %s", crf_ctx_plugin(ctx), crf_stage_name(stage));
		if (state && !strcmp(state, "yes"))
			trace_state(f, crf_ctx_pid(ctx));
		fputc('\n', f);
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

CRF_PLUGIN(.name = TP_NAME, .version = "1.2.3", .description = "test plugin " TP_NAME,
	   .hooks = CRF_HOOKS(
		   [CRF_STAGE_PROBE] = tp_hook, [CRF_STAGE_DUMP_PREPARE] = tp_hook,
		   [CRF_STAGE_DUMP_TASK] = tp_hook, [CRF_STAGE_DUMP_FINISH] = tp_hook,
		   [CRF_STAGE_DUMP_CLEANUP] = tp_hook, [CRF_STAGE_RESTORE_PREPARE] = tp_hook,
		   [CRF_STAGE_RESTORE_TASK] = tp_hook, [CRF_STAGE_RESTORE_FINISH] = tp_hook,
		   [CRF_STAGE_RESTORE_CLEANUP] = tp_hook, [CRF_STAGE_DUMP_TASK_DATA] = tp_hook,
		   [CRF_STAGE_DUMP_PAUSE] = tp_hook, [CRF_STAGE_DUMP_FROZEN] = tp_hook,
		   [CRF_STAGE_DUMP_UNDO] = tp_hook, [CRF_STAGE_DUMP_RESUME] = tp_hook,
		   [CRF_STAGE_RESTORE_RESUME] = tp_hook, [CRF_STAGE_RESTORE_UNDO] = tp_hook, ),
	   .kinds = CRF_KINDS({.cls = CRF_OBJ_FD, .name = TP_NAME "-fd", .dump = tp_dump_obj},
			      {.cls = CRF_OBJ_FD,
			       .name = TP_NAME "-dev",
			       .match = tp_match_dev,
			       .dump = tp_dump_obj}),
	   .config_keys = CRF_STRINGS("trace", "trace-state", "fail-stage", "probe-missing"), );
