// SPDX-License-Identifier: GPL-2.0-only
/*
 * INI files through inih.  Debian's inih does not pass line numbers to the
 * handler, so files are fed through ini_parse_stream() with a reader that
 * counts lines: when the handler runs, the count is the line being handled.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include <crf/log.h>

#include "config.h"
#include "util.h"

struct parse_state {
	struct crf_config *conf;
	const char *path;
	FILE *f;
	int line;
	int error; /* first error seen by the handler (-errno) */
	int error_line;
	char message[512]; /* its message, printed unless inih saw an earlier one */
};

static char *count_lines_reader(char *buf, int size, void *stream)
{
	struct parse_state *ps = stream;
	char *r = fgets(buf, size, ps->f);

	if (r)
		ps->line++;
	return r;
}

static int valid_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '-' &&
		    *s != '_')
			return 0;
	return 1;
}

static int handle_key(void *user, const char *section, const char *key, const char *value)
{
	struct parse_state *ps = user;
	_cleanup_free_ char *origin = NULL;
	int r;

	if (ps->error)
		return 0;
	if (!*section) {
		snprintf(ps->message, sizeof(ps->message),
			 "%s:%d: key '%s' outside of any [section]", ps->path, ps->line, key);
		ps->error = -EINVAL;
		ps->error_line = ps->line;
		return 0;
	}
	if (!valid_name(section)) {
		snprintf(ps->message, sizeof(ps->message),
			 "%s:%d: invalid section name [%s] (use a-z, 0-9, '-' and '_')", ps->path,
			 ps->line, section);
		ps->error = -EINVAL;
		ps->error_line = ps->line;
		return 0;
	}
	origin = xasprintf("%s:%d", ps->path, ps->line);
	r = origin ? config_set(ps->conf, section, key, value, origin) : -ENOMEM;
	if (r < 0) {
		snprintf(ps->message, sizeof(ps->message), "%s:%d: %s", ps->path, ps->line,
			 strerror(-r));
		ps->error = r;
		ps->error_line = ps->line;
		return 0;
	}
	return 1;
}

int config_load_file(struct crf_config *conf, const char *path)
{
	struct parse_state ps = {.conf = conf, .path = path};
	int r;

	ps.f = fopen(path, "re");
	if (!ps.f)
		return crf_error_errno(errno, "cannot read configuration %s", path);
	r = ini_parse_stream(count_lines_reader, &ps, handle_key, &ps);
	fclose(ps.f);
	/* inih goes on after a syntax error: report whichever came first. */
	if (ps.error && (r <= 0 || ps.error_line <= r)) {
		if (ps.message[0])
			crf_error("%s", ps.message);
		return ps.error;
	}
	if (r > 0) {
		crf_error("%s:%d: malformed line (expected [section], key = value or a comment)",
			  path, r);
		return -EINVAL;
	}
	if (r < 0)
		return crf_error_errno(ENOMEM, "parsing %s", path);
	return 0;
}

static int conf_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 5 && !strcmp(d->d_name + n - 5, ".conf");
}

int config_load_dir(struct crf_config *conf, const char *dir, int missing_ok)
{
	struct dirent **list;
	int n, r = 0;

	n = scandir(dir, &list, conf_filter, alphasort);
	if (n < 0) {
		if (errno == ENOENT && missing_ok)
			return 0;
		return crf_error_errno(errno, "cannot read configuration directory %s", dir);
	}
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *path = NULL;

		if (r >= 0) {
			path = xasprintf("%s/%s", dir, list[i]->d_name);
			r = path ? config_load_file(conf, path) : -ENOMEM;
		}
		free(list[i]);
	}
	free(list);
	return r;
}

struct crf_conf_section *config_section(const struct crf_config *conf, const char *name)
{
	for (size_t i = 0; i < conf->n; i++)
		if (!strcmp(conf->sections[i].name, name))
			return &conf->sections[i];
	return NULL;
}

static struct crf_conf_section *add_section(struct crf_config *conf, const char *name,
					    const char *origin)
{
	struct crf_conf_section *s = realloc(conf->sections, (conf->n + 1) * sizeof(*s));

	if (!s)
		return NULL;
	conf->sections = s;
	s += conf->n;
	*s = (struct crf_conf_section){.name = strdup(name), .origin = strdup(origin)};
	if (!s->name || !s->origin) {
		free(s->name);
		free(s->origin);
		return NULL;
	}
	conf->n++;
	return s;
}

int config_set(struct crf_config *conf, const char *section, const char *key, const char *value,
	       const char *origin)
{
	struct crf_conf_section *s = config_section(conf, section);
	struct crf_conf_key *k = NULL;
	char *v, *o;

	if (!s)
		s = add_section(conf, section, origin);
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_keys; i++)
		if (!strcmp(s->keys[i].key, key))
			k = &s->keys[i];
	v = strdup(value);
	o = strdup(origin);
	if (!v || !o)
		goto nomem;
	if (!k) {
		k = realloc(s->keys, (s->n_keys + 1) * sizeof(*k));
		if (!k)
			goto nomem;
		s->keys = k;
		k += s->n_keys;
		k->key = strdup(key);
		if (!k->key)
			goto nomem;
		s->n_keys++;
	} else {
		free(k->value);
		free(k->origin);
	}
	k->value = v;
	k->origin = o;
	return 0;
nomem:
	free(v);
	free(o);
	return -ENOMEM;
}

const struct crf_conf_key *config_get(const struct crf_config *conf, const char *section,
				      const char *key)
{
	const struct crf_conf_section *s = config_section(conf, section);

	if (!s)
		return NULL;
	for (size_t i = 0; i < s->n_keys; i++)
		if (!strcmp(s->keys[i].key, key))
			return &s->keys[i];
	return NULL;
}

void config_free(struct crf_config *conf)
{
	for (size_t i = 0; i < conf->n; i++) {
		struct crf_conf_section *s = &conf->sections[i];

		for (size_t j = 0; j < s->n_keys; j++) {
			free(s->keys[j].key);
			free(s->keys[j].value);
			free(s->keys[j].origin);
		}
		free(s->keys);
		free(s->name);
		free(s->origin);
	}
	free(conf->sections);
	conf->sections = NULL;
	conf->n = 0;
}

int parse_bool(const char *s)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(s, yes[i]))
			return 1;
		if (!strcasecmp(s, no[i]))
			return 0;
	}
	return -EINVAL;
}
