// SPDX-License-Identifier: GPL-2.0-only
/*
 * A plugin as one built against plugin ABI 1.4 is: minor 4, the descriptor
 * as long as 1.4's (up to schemas), and a hook array of 1.4's
 * CRF_STAGE__COUNT slots only; a core that read slots past them would find
 * hooks there that fail every stage.  Its hooks append
 * "<plugin> <stage> <pid>" to the file its "trace" key names.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#include <crf/plugin.h>

/* CRF_STAGE__COUNT of ABI 1.4: RESTORE_PREMAP was its last stage. */
#define ABI14_STAGES (CRF_STAGE_RESTORE_PREMAP + 1)

static int old_hook(struct crf_ctx *ctx)
{
	const char *trace = crf_ctx_config(ctx, "trace");
	FILE *f;

	if (!trace)
		return 0;
	f = fopen(trace, "ae");
	if (!f)
		return crf_log_errno(CRF_LOG_ERROR, errno, "open %s", trace);
	fprintf(f, "%s %s %d\n", crf_ctx_plugin(ctx), crf_stage_name(crf_ctx_stage(ctx)),
		(int)crf_ctx_pid(ctx));
	fclose(f);
	return 0;
}

/* What a core that read past the 1.4 slots would find there and call. */
static int past_end(struct crf_ctx *ctx)
{
	crf_error("called for stage %d, which plugin ABI 1.4 does not have",
		  (int)crf_ctx_stage(ctx));
	return -EPERM;
}

static const struct {
	crf_hook_fn hooks[ABI14_STAGES];
	crf_hook_fn after[CRF_STAGE__COUNT];
} old = {
	.hooks =
		{
			[CRF_STAGE_DUMP_PREPARE] = old_hook,
			[CRF_STAGE_DUMP_TASK] = old_hook,
			[CRF_STAGE_DUMP_FINISH] = old_hook,
			[CRF_STAGE_DUMP_CLEANUP] = old_hook,
			[CRF_STAGE_RESTORE_PREPARE] = old_hook,
			[CRF_STAGE_RESTORE_FINISH] = old_hook,
			[CRF_STAGE_RESTORE_CLEANUP] = old_hook,
		},
	.after = {[0 ... CRF_STAGE__COUNT - 1] = past_end},
};

__attribute__((visibility("default"))) const struct crf_plugin crf_plugin_descriptor = {
	.abi_major = 1,
	.abi_minor = 4,
	.size = offsetof(struct crf_plugin, schemas) + sizeof(void *),
	.n_hooks = ABI14_STAGES,
	.name = "old14",
	.version = "1.0.0",
	.description = "a plugin built against plugin ABI 1.4",
	.hooks = old.hooks,
	.config_keys = CRF_STRINGS("trace"),
};
