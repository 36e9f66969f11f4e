// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "helpers.h"
#include "setfix.h"

int setfix_build(struct setfix *f, const char *ini, unsigned flags)
{
	f->dir = tmpdir_make();
	f->conf_path = write_file(f->dir, "test.conf", ini);
	assert_int_equal(config_load_file(&f->conf, f->conf_path), 0);
	if (!f->dirs.n)
		assert_int_equal(strv_push(&f->dirs, TEST_PLUGIN_DIR), 0);
	return plugin_set_build(&f->set, &f->conf, &f->dirs, &f->sel, flags);
}

void setfix_free(struct setfix *f)
{
	plugin_set_free(&f->set);
	config_free(&f->conf);
	strv_free(&f->dirs);
	strv_free(&f->sel.only);
	strv_free(&f->sel.disable);
	strv_free(&f->sel.enable);
	strv_free(&f->sel.image);
	if (f->dir)
		tmpdir_done(f->dir);
	memset(f, 0, sizeof(*f));
}

const char *setfix_order(const struct setfix *f, enum crf_order o)
{
	static char buf[512];

	buf[0] = '\0';
	for (size_t i = 0; i < f->set.graph.n_order; i++) {
		if (i)
			strcat(buf, " ");
		strcat(buf, f->set.p[f->set.graph.order[o][i]].st.name);
	}
	return buf;
}
