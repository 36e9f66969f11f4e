// SPDX-License-Identifier: GPL-2.0-only
/* crf check: does this kernel have what the enabled plugins need? */
#include <stdio.h>

#include "commands.h"
#include "privs.h"

static const char help[] =
	"Usage: crf check [OPTIONS]\n\n"
	"Run every enabled plugin's probe and print, per kernel feature, whether it\n"
	"is supported and why.  Exits non-zero if a feature that an enabled plugin\n"
	"requires is missing.\n";

int cmd_check(struct crf_opts *o, int argc, char **argv)
{
	struct crf_config conf = {0};
	struct crf_plugin_set set = {0};
	char lacks[128];
	int r, missing = 0;

	r = parse_command(o, argc, argv, NULL, NULL, help, NULL, NULL);
	if (r)
		return r > 0 ? CRF_EXIT_OK : CRF_EXIT_USAGE;
	if (optind < argc)
		return crf_usage_error(o, "unexpected argument '%s'", argv[optind]), CRF_EXIT_USAGE;
	if (!crf_privileged(lacks, sizeof(lacks)))
		crf_warn("not run as root (lacks %s): the features that need privileges "
			 "read as missing; crf dump and restore need root",
			 lacks);
	r = crf_setup(o, &conf, &set, 0);
	if (r >= 0)
		missing = plugin_set_probe(&set, false);
	for (size_t i = 0; r >= 0 && missing >= 0 && i < set.graph.n_order; i++) {
		const struct crf_plugin_info *pi = &set.p[set.graph.order[CRF_ORDER_DUMP][i]];

		/* What the plugin saves, and what not yet: the probes alone would not say. */
		if (pi->st.desc && pi->st.desc->description)
			printf("%-8s %s\n", pi->st.name, pi->st.desc->description);

		for (size_t j = 0; j < pi->st.n_probes; j++) {
			const struct crf_probe_result *p = &pi->st.probes[j];

			printf("%-8s %-24s %-20s %s\n", pi->st.name, p->feature,
			       p->supported  ? "supported"
			       : p->required ? "MISSING (required)"
					     : "missing (optional)",
			       p->why);
		}
	}
	if (r >= 0 && missing == 0)
		printf("crf check: all required kernel features are present\n");
	else if (r >= 0 && missing > 0)
		printf("crf check: %d required kernel feature%s missing\n", missing,
		       missing == 1 ? " is" : "s are");
	plugin_set_free(&set);
	config_free(&conf);
	return r < 0 || missing != 0 ? CRF_EXIT_FAIL : CRF_EXIT_OK;
}
