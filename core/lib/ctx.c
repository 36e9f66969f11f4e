// SPDX-License-Identifier: GPL-2.0-only
/* What a hook can ask of its context, and running a hook. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crf-private.h"

static const char *const stage_names[CRF_STAGE__COUNT] = {
	[CRF_STAGE_PROBE] = "probe",
	[CRF_STAGE_DUMP_PREPARE] = "dump-prepare",
	[CRF_STAGE_DUMP_TASK] = "dump-task",
	[CRF_STAGE_DUMP_FINISH] = "dump-finish",
	[CRF_STAGE_DUMP_CLEANUP] = "dump-cleanup",
	[CRF_STAGE_RESTORE_PREPARE] = "restore-prepare",
	[CRF_STAGE_RESTORE_TASK] = "restore-task",
	[CRF_STAGE_RESTORE_FINISH] = "restore-finish",
	[CRF_STAGE_RESTORE_CLEANUP] = "restore-cleanup",
	[CRF_STAGE_RESTORE_SESSION] = "restore-session",
	[CRF_STAGE_DUMP_TASK_DATA] = "dump-task-data",
	[CRF_STAGE_RESTORE_PREMAP] = "restore-premap",
	[CRF_STAGE_DUMP_PAUSE] = "dump-pause",
	[CRF_STAGE_DUMP_FROZEN] = "dump-frozen",
	[CRF_STAGE_DUMP_UNDO] = "dump-undo",
	[CRF_STAGE_DUMP_RESUME] = "dump-resume",
	[CRF_STAGE_RESTORE_RESUME] = "restore-resume",
	[CRF_STAGE_RESTORE_UNDO] = "restore-undo",
	[CRF_STAGE_DUMP_LIVE] = "dump-live",
};

bool crf__stage_is_restore(enum crf_stage stage)
{
	switch (stage) {
	case CRF_STAGE_RESTORE_PREPARE:
	case CRF_STAGE_RESTORE_TASK:
	case CRF_STAGE_RESTORE_FINISH:
	case CRF_STAGE_RESTORE_CLEANUP:
	case CRF_STAGE_RESTORE_SESSION:
	case CRF_STAGE_RESTORE_PREMAP:
	case CRF_STAGE_RESTORE_RESUME:
	case CRF_STAGE_RESTORE_UNDO:
		return true;
	default:
		return false;
	}
}

const char *crf_stage_name(enum crf_stage stage)
{
	if ((unsigned)stage >= CRF_STAGE__COUNT)
		return "unknown";
	return stage_names[stage];
}

enum crf_stage crf_ctx_stage(const struct crf_ctx *ctx)
{
	return ctx->stage;
}

const char *crf_ctx_plugin(const struct crf_ctx *ctx)
{
	return ctx->plugin ? ctx->plugin->name : NULL;
}

const char *crf_ctx_config(const struct crf_ctx *ctx, const char *key)
{
	const struct crf_plugin_state *p = ctx->plugin;

	if (!p)
		return NULL;
	for (size_t i = 0; i < p->n_config; i++)
		if (!strcmp(p->config[i].key, key))
			return p->config[i].value;
	return NULL;
}

void *crf_ctx_priv(const struct crf_ctx *ctx)
{
	return ctx->plugin ? ctx->plugin->priv : NULL;
}

void crf_ctx_set_priv(struct crf_ctx *ctx, void *priv)
{
	if (ctx->plugin)
		ctx->plugin->priv = priv;
}

struct crf_imgdir *crf_ctx_images(const struct crf_ctx *ctx)
{
	return ctx->images;
}

pid_t crf_ctx_pid(const struct crf_ctx *ctx)
{
	return ctx->pid;
}

void crf_probe_feature(struct crf_ctx *ctx, const char *feature, bool supported, bool required,
		       const char *why, ...)
{
	struct crf_plugin_state *p = ctx->plugin;
	struct crf_probe_result *r;
	char buf[512] = "";
	va_list ap;

	if (why) {
		va_start(ap, why);
		vsnprintf(buf, sizeof(buf), why, ap);
		va_end(ap);
	}
	crf_debug("probe %s: %s%s%s", feature, supported ? "supported" : "missing",
		  buf[0] ? ": " : "", buf);
	if (!p)
		return;
	r = realloc(p->probes, (p->n_probes + 1) * sizeof(*r));
	if (!r) {
		crf_error("out of memory recording probe %s", feature);
		return;
	}
	p->probes = r;
	r += p->n_probes;
	r->feature = strdup(feature);
	r->why = strdup(buf);
	if (!r->feature || !r->why) {
		free(r->feature);
		free(r->why);
		crf_error("out of memory recording probe %s", feature);
		return;
	}
	r->supported = supported;
	r->required = required;
	p->n_probes++;
}

void crf__probe_results_free(struct crf_plugin_state *p)
{
	for (size_t i = 0; i < p->n_probes; i++) {
		free(p->probes[i].feature);
		free(p->probes[i].why);
	}
	free(p->probes);
	p->probes = NULL;
	p->n_probes = 0;
}

int crf__run_hook(struct crf_ctx *ctx, struct crf_plugin_state *plugin)
{
	const struct crf_plugin *d = plugin->desc;
	const char *old;
	crf_hook_fn fn;
	int r;

	if (!d || !d->hooks || (unsigned)ctx->stage >= d->n_hooks)
		return 0;
	fn = d->hooks[ctx->stage];
	if (!fn)
		return 0;
	ctx->plugin = plugin;
	old = crf__log_set_origin(plugin->name);
	r = fn(ctx);
	if (r > 0)
		r = 0;
	crf__log_set_origin(old);
	return r;
}
