/* SPDX-License-Identifier: GPL-2.0-only */
/* Building a plugin set from INI text and the test plugins. */
#ifndef CRF_TEST_SETFIX_H
#define CRF_TEST_SETFIX_H

#include "plugin-set.h"

struct setfix {
	char *dir;
	const char *conf_path;
	struct crf_config conf;
	struct crf_plugin_set set;
	struct crf_select sel;
	struct strv dirs;
};

/* Write @ini, load it, build the set with the test plugin dir; returns build's result. */
int setfix_build(struct setfix *f, const char *ini, unsigned flags);
void setfix_free(struct setfix *f);
/* The names of the enabled plugins in order @o, space-separated (static buffer). */
const char *setfix_order(const struct setfix *f, enum crf_order o);

#endif
