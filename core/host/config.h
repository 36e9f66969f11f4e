/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The INI configuration: crf.conf, then the drop-ins in plugins.d/ in name order, then
 * --config FILE, then command-line choices.  A key set again later replaces
 * the earlier value (later wins), and every value remembers where it came
 * from ("etc/plugins.d/50-net.conf:4", "--disable") so that messages can say.
 */
#ifndef CRF_CONFIG_H
#define CRF_CONFIG_H

#include <stddef.h>

struct crf_conf_key {
	char *key;
	char *value;
	char *origin;
};

struct crf_conf_section {
	char *name;
	char *origin; /* where the section first appeared */
	struct crf_conf_key *keys;
	size_t n_keys;
};

struct crf_config {
	struct crf_conf_section *sections;
	size_t n;
};

/* The section of global settings; every other section is a plugin. */
#define CRF_CONF_GLOBAL "crf"

/* Parse one file.  A malformed line is an error naming file:line. */
int config_load_file(struct crf_config *conf, const char *path);
/*
 * Parse every *.conf of @dir in name order.  @missing_ok: a directory that
 * does not exist is not an error.
 */
int config_load_dir(struct crf_config *conf, const char *dir, int missing_ok);

/* Set (or replace) a key; @origin says who set it. */
int config_set(struct crf_config *conf, const char *section, const char *key, const char *value,
	       const char *origin);
struct crf_conf_section *config_section(const struct crf_config *conf, const char *name);
const struct crf_conf_key *config_get(const struct crf_config *conf, const char *section,
				      const char *key);
void config_free(struct crf_config *conf);

/* Parse a boolean ("yes", "no", "true", "false", "on", "off", "1", "0"). */
int parse_bool(const char *s);

#endif
