// SPDX-License-Identifier: GPL-2.0-only
/* Building the plugin set from the configuration and running its stages. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin-set.h"
#include "stop.h"

static const char *const core_keys[] = {
	"so", "enabled", "requires", "dump-after", "restore-after", "disable-kinds",
};

static const char *const global_keys[] = {
	"plugin-dir",
};

static bool in_list(const char *const *list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

static bool declared_key(const struct crf_plugin *d, const char *key)
{
	for (const char *const *k = d->config_keys; k && *k; k++)
		if (!strcmp(*k, key))
			return true;
	return false;
}

struct crf_plugin_info *plugin_set_find(struct crf_plugin_set *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->p[i].st.name, name))
			return &set->p[i];
	return NULL;
}

/* The plugin part of a --disable/--enable name: "files" of "files:eventpoll". */
static bool names_plugin(const char *name, const char *plugin)
{
	size_t n = strcspn(name, ":");

	return strlen(plugin) == n && !strncmp(name, plugin, n);
}

/*
 * Every name the command line mentions must be a configured plugin;
 * --disable and --enable also take PLUGIN:KIND, one handler of a plugin.
 */
static int check_selection(const struct crf_config *conf, const struct crf_select *sel)
{
	const struct {
		const struct strv *list;
		const char *option;
	} lists[] = {
		{&sel->only, "--plugins"},
		{&sel->disable, "--disable"},
		{&sel->enable, "--enable"},
	};

	for (size_t l = 0; l < ARRAY_SIZE(lists); l++)
		for (size_t i = 0; i < lists[l].list->n; i++) {
			const char *name = lists[l].list->v[i];
			const char *colon = l ? strchr(name, ':') : NULL;
			char *plugin = colon ? strndup(name, (size_t)(colon - name)) : NULL;
			bool known;

			if (colon && !plugin)
				return -ENOMEM;
			known = strcmp(plugin ? plugin : name, CRF_CONF_GLOBAL) &&
				config_section(conf, plugin ? plugin : name);
			free(plugin);
			if (!known || (colon && !colon[1])) {
				crf_error("%s: unknown plugin '%.*s'", lists[l].option,
					  (int)strcspn(name, ":"), name);
				return -ENOENT;
			}
		}
	return 0;
}

static int set_enabled(struct crf_plugin_info *pi, const struct crf_conf_section *s,
		       const struct crf_select *sel)
{
	const char *name = s->name;

	pi->st.enabled = true;
	for (size_t i = 0; i < s->n_keys; i++) {
		const struct crf_conf_key *k = &s->keys[i];
		int b;

		if (strcmp(k->key, "enabled"))
			continue;
		b = parse_bool(k->value);
		if (b < 0) {
			crf_error("%s: 'enabled' must be yes or no, not '%s'", k->origin, k->value);
			return -EINVAL;
		}
		if (!b) {
			pi->st.enabled = false;
			pi->why_off = xasprintf("disabled by %s", k->origin);
		}
	}
	if (sel->only_set && !strv_contains(&sel->only, name)) {
		pi->st.enabled = false;
		free(pi->why_off);
		pi->why_off = strdup("disabled: not listed in --plugins");
	}
	if (strv_contains(&sel->enable, name)) {
		pi->st.enabled = true;
		free(pi->why_off);
		pi->why_off = NULL;
	}
	if (strv_contains(&sel->disable, name)) {
		pi->st.enabled = false;
		free(pi->why_off);
		pi->why_off = strdup("disabled by --disable");
	}
	if (sel->image_set && !strv_contains(&sel->image, name)) {
		pi->st.enabled = false;
		free(pi->why_off);
		pi->why_off = strdup("off: the dump was written without it");
	}
	if (!pi->st.enabled && !pi->why_off)
		return -ENOMEM;
	pi->st.why_off = pi->why_off;
	return 0;
}

static int read_section(struct crf_plugin_set *set, size_t idx, const struct crf_conf_section *s,
			const struct crf_select *sel)
{
	struct crf_plugin_info *pi = &set->p[idx];
	struct crf_graph_node *node = &set->graph.nodes[idx];
	static const char *const list_keys[] = {"requires", "dump-after", "restore-after"};
	struct strv *lists[] = {&node->requires, &node->after[CRF_ORDER_DUMP],
				&node->after[CRF_ORDER_RESTORE]};
	int r;

	pi->st.name = s->name;
	node->name = s->name;
	for (size_t l = 0; l < ARRAY_SIZE(list_keys); l++) {
		const struct crf_conf_key *k = NULL;

		for (size_t i = 0; i < s->n_keys; i++)
			if (!strcmp(s->keys[i].key, list_keys[l]))
				k = &s->keys[i];
		if (k && (r = strv_split(lists[l], k->value)) < 0)
			return crf_error_errno(r, "%s: %s", k->origin, list_keys[l]);
	}
	for (size_t i = 0; i < s->n_keys; i++)
		if (!strcmp(s->keys[i].key, "so") && *s->keys[i].value)
			pi->so = strdup(s->keys[i].value);
	if (!pi->so) {
		crf_error("%s: plugin '%s' has no 'so' key naming its shared object", s->origin,
			  s->name);
		return -EINVAL;
	}
	r = set_enabled(pi, s, sel);
	if (r < 0)
		return r;
	node->enabled = pi->st.enabled;
	node->why_off = pi->st.why_off;
	return 0;
}

static bool has_kind(const struct crf_plugin *d, const char *kind)
{
	for (const struct crf_kind *k = d->kinds; k && k->name; k++)
		if (!strcmp(k->name, kind))
			return true;
	return false;
}

/* Switch kind @kind of @pi off (@why set) or back on (@why NULL). */
static int set_kind_off(struct crf_plugin_info *pi, const char *kind, const char *origin, char *why)
{
	struct crf_kind_off *v;
	size_t i;

	if (pi->st.desc && !has_kind(pi->st.desc, kind)) {
		free(why);
		crf_error("%s: plugin '%s' has no kind '%s' (see crf plugins)", origin, pi->st.name,
			  kind);
		return -EINVAL;
	}
	for (i = 0; i < pi->n_off && strcmp(pi->off[i].kind, kind); i++)
		;
	if (i < pi->n_off) {
		free((char *)pi->off[i].why);
		if (why) {
			pi->off[i].why = why;
			return 0;
		}
		free((char *)pi->off[i].kind);
		pi->off[i] = pi->off[--pi->n_off];
		return 0;
	}
	if (!why)
		return 0;
	v = reallocarray(pi->off, pi->n_off + 1, sizeof(*v));
	if (!v || !(v[pi->n_off].kind = strdup(kind))) {
		if (v)
			pi->off = v;
		free(why);
		return -ENOMEM;
	}
	pi->off = v;
	v[pi->n_off++].why = why;
	return 0;
}

/*
 * The handlers switched off: disable-kinds in the plugin's sections, then
 * --disable PLUGIN:KIND, and --enable PLUGIN:KIND switching one back on.
 */
static int kinds_off(struct crf_plugin_info *pi, const struct crf_conf_section *s,
		     const struct crf_select *sel)
{
	int r = 0;

	for (size_t i = 0; s && i < s->n_keys && r == 0; i++) {
		const struct crf_conf_key *k = &s->keys[i];
		struct strv kinds = {0};

		if (strcmp(k->key, "disable-kinds"))
			continue;
		r = strv_split(&kinds, k->value);
		for (size_t j = 0; j < kinds.n && r == 0; j++) {
			char *why = xasprintf("switched off by %s", k->origin);

			r = why ? set_kind_off(pi, kinds.v[j], k->origin, why) : -ENOMEM;
		}
		strv_free(&kinds);
	}
	for (int l = 0; l < 2 && r == 0; l++) {
		const struct strv *list = l ? &sel->enable : &sel->disable;

		for (size_t i = 0; i < list->n && r == 0; i++) {
			const char *name = list->v[i];
			char *why = NULL;

			if (!strchr(name, ':') || !names_plugin(name, pi->st.name))
				continue;
			if (!l && !(why = xasprintf("switched off by --disable %s", name)))
				return -ENOMEM;
			r = set_kind_off(pi, strchr(name, ':') + 1, l ? "--enable" : "--disable",
					 why);
		}
	}
	pi->st.kinds_off = pi->off;
	pi->st.n_kinds_off = pi->n_off;
	return r;
}

/* Hand the plugin the keys it declared; warn about keys nobody knows. */
static int plugin_keys(struct crf_plugin_info *pi, const struct crf_conf_section *s)
{
	pi->kv = calloc(s->n_keys ? s->n_keys : 1, sizeof(*pi->kv));
	if (!pi->kv)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_keys; i++) {
		const struct crf_conf_key *k = &s->keys[i];

		if (in_list(core_keys, ARRAY_SIZE(core_keys), k->key))
			continue;
		if (pi->st.desc && declared_key(pi->st.desc, k->key))
			pi->kv[pi->n_kv++] = (struct crf_kv){k->key, k->value};
		else if (pi->st.desc)
			crf_warn("%s: unknown key '%s' for plugin '%s'", k->origin, k->key,
				 s->name);
	}
	pi->st.config = pi->kv;
	pi->st.n_config = pi->n_kv;
	return 0;
}

static void check_global_keys(const struct crf_config *conf)
{
	const struct crf_conf_section *s = config_section(conf, CRF_CONF_GLOBAL);

	for (size_t i = 0; s && i < s->n_keys; i++)
		if (!in_list(global_keys, ARRAY_SIZE(global_keys), s->keys[i].key))
			crf_warn("%s: unknown key '%s' in [%s]", s->keys[i].origin, s->keys[i].key,
				 CRF_CONF_GLOBAL);
}

static int collect_schemas(struct crf_plugin_set *set)
{
	size_t n = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < set->n; i++) {
			const struct crf_plugin *d = set->p[i].st.desc;

			for (const ProtobufCMessageDescriptor *const *s = d ? d->schemas : NULL;
			     s && *s; s++) {
				if (pass)
					set->schemas[n] = *s;
				n++;
			}
		}
		if (!pass) {
			set->schemas = calloc(n + 1, sizeof(*set->schemas));
			if (!set->schemas)
				return -ENOMEM;
			n = 0;
		}
	}
	return 0;
}

/* Enabled plugins first, in dump order, so the first claim wins in that order. */
static int fill_registry(struct crf_plugin_set *set)
{
	int r;

	for (size_t i = 0; i < set->graph.n_order; i++) {
		r = crf__registry_add(&set->registry,
				      &set->p[set->graph.order[CRF_ORDER_DUMP][i]].st);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < set->n; i++)
		if (!set->p[i].st.enabled &&
		    (r = crf__registry_add(&set->registry, &set->p[i].st)) < 0)
			return r;
	return 0;
}

static int load_all(struct crf_plugin_set *set, const struct crf_config *conf,
		    const struct strv *dirs, const struct crf_select *sel, unsigned flags)
{
	int first = 0;

	for (size_t i = 0; i < set->n; i++) {
		struct crf_plugin_info *pi = &set->p[i];
		bool defer = flags & CRF_SET_DEFER_LOAD;
		int r = plugin_load(pi, dirs, pi->st.enabled && !defer);

		if (r < 0 && pi->st.enabled && !defer) {
			if (!(flags & CRF_SET_TOLERANT))
				return r;
			if (!first)
				first = r;
		}
		r = plugin_keys(pi, config_section(conf, pi->st.name));
		if (r < 0)
			return crf_error_errno(r, "plugin '%s'", pi->st.name);
		r = kinds_off(pi, config_section(conf, pi->st.name), sel);
		if (r == -ENOMEM)
			return crf_error_errno(r, "plugin '%s'", pi->st.name);
		if (r < 0)
			return r;
	}
	return first;
}

int plugin_set_build(struct crf_plugin_set *set, const struct crf_config *conf,
		     const struct strv *dirs, const struct crf_select *sel, unsigned flags)
{
	size_t n = 0;
	int r, first;

	memset(set, 0, sizeof(*set));
	r = check_selection(conf, sel);
	if (r < 0)
		return r;
	check_global_keys(conf);
	set->p = calloc(conf->n ? conf->n : 1, sizeof(*set->p));
	set->graph.nodes = calloc(conf->n ? conf->n : 1, sizeof(*set->graph.nodes));
	if (!set->p || !set->graph.nodes)
		return crf_error_errno(ENOMEM, "plugin set");
	for (size_t i = 0; i < conf->n; i++) {
		if (!strcmp(conf->sections[i].name, CRF_CONF_GLOBAL))
			continue;
		set->n = set->graph.n = n + 1;
		r = read_section(set, n++, &conf->sections[i], sel);
		if (r < 0)
			return r;
	}
	first = load_all(set, conf, dirs, sel, flags);
	if (first < 0 && !(flags & CRF_SET_TOLERANT))
		return first;
	r = graph_resolve(&set->graph);
	if (r < 0)
		return first < 0 ? first : r;
	r = fill_registry(set);
	if (r >= 0)
		r = collect_schemas(set);
	if (r < 0)
		return crf_error_errno(r, "plugin set");
	return first;
}

void plugin_set_free(struct crf_plugin_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		struct crf_plugin_info *pi = &set->p[i];

		plugin_unload(pi);
		crf__probe_results_free(&pi->st);
		free(pi->so);
		free(pi->path);
		free(pi->load_error);
		free(pi->why_off);
		free(pi->kv);
		for (size_t j = 0; j < pi->n_off; j++) {
			free((char *)pi->off[j].kind);
			free((char *)pi->off[j].why);
		}
		free(pi->off);
	}
	graph_clear(&set->graph);
	free(set->graph.nodes);
	free(set->p);
	crf__registry_free(&set->registry);
	free(set->schemas);
	memset(set, 0, sizeof(*set));
}

static struct crf_ctx make_ctx(struct crf_plugin_set *set, enum crf_stage stage,
			       struct crf_imgdir *images, pid_t pid)
{
	return (struct crf_ctx){
		.stage = stage,
		.registry = &set->registry,
		.images = images,
		.pid = pid,
	};
}

int plugin_set_probe(struct crf_plugin_set *set, bool quiet)
{
	struct crf_ctx ctx = make_ctx(set, CRF_STAGE_PROBE, NULL, 0);
	int missing = 0;

	for (size_t i = 0; i < set->graph.n_order; i++) {
		struct crf_plugin_info *pi = &set->p[set->graph.order[CRF_ORDER_DUMP][i]];
		const char *old;
		int r;

		crf__probe_results_free(&pi->st);
		if (!pi->st.desc)
			continue;
		r = crf__run_hook(&ctx, &pi->st);
		if (r < 0)
			return crf_error_errno(r, "plugin '%s': probe failed", pi->st.name);
		old = crf__log_set_origin(pi->st.name);
		for (size_t j = 0; j < pi->st.n_probes; j++) {
			const struct crf_probe_result *p = &pi->st.probes[j];

			if (p->supported || !p->required)
				continue;
			missing++;
			if (!quiet)
				crf_error("required kernel feature '%s' is missing: %s", p->feature,
					  p->why);
		}
		crf__log_set_origin(old);
	}
	return missing;
}

int plugin_set_run(struct crf_plugin_set *set, enum crf_stage stage, struct crf_imgdir *images,
		   pid_t pid)
{
	return plugin_set_run_task(set, stage, images, pid, NULL, NULL);
}

/* Hooks that run inside restored tasks count no fault points: crf's clock is its own. */
static bool in_task(enum crf_stage stage)
{
	return stage == CRF_STAGE_RESTORE_TASK || stage == CRF_STAGE_RESTORE_SESSION ||
	       stage == CRF_STAGE_RESTORE_PREMAP;
}

/* Undo paths run in reverse, every hook of them, whatever the others return. */
static bool reverse_stage(enum crf_stage stage)
{
	switch (stage) {
	case CRF_STAGE_DUMP_CLEANUP:
	case CRF_STAGE_RESTORE_CLEANUP:
	case CRF_STAGE_DUMP_UNDO:
	case CRF_STAGE_DUMP_RESUME:
	case CRF_STAGE_RESTORE_UNDO:
		return true;
	default:
		return false;
	}
}

/*
 * The device stages (ABI 1.5): which flag of @pi a stage's hook sets when
 * it succeeds (@take), or which one it needs and clears (a give-back
 * stage); NULL for the other stages.
 */
static bool *owed(struct crf_plugin_info *pi, enum crf_stage stage, bool *take)
{
	*take = stage == CRF_STAGE_DUMP_PAUSE || stage == CRF_STAGE_DUMP_FROZEN ||
		stage == CRF_STAGE_RESTORE_RESUME;
	switch (stage) {
	case CRF_STAGE_DUMP_PAUSE:
	case CRF_STAGE_DUMP_FROZEN:
	case CRF_STAGE_DUMP_UNDO:
	case CRF_STAGE_DUMP_RESUME:
		return &pi->owes_dump;
	case CRF_STAGE_RESTORE_RESUME:
	case CRF_STAGE_RESTORE_UNDO:
		return &pi->owes_restore;
	default:
		return NULL;
	}
}

static int hook_fault(enum crf_stage stage, const char *plugin)
{
	char name[96];

	snprintf(name, sizeof(name), "%s of %s", crf_stage_name(stage), plugin);
	return crf__fault(name, stage == CRF_STAGE_DUMP_TASK);
}

int plugin_set_run_task(struct crf_plugin_set *set, enum crf_stage stage, struct crf_imgdir *images,
			pid_t pid, const struct crf_host_ops *ops, void *task)
{
	struct crf_ctx ctx = make_ctx(set, stage, images, pid);
	enum crf_order o = crf__stage_is_restore(stage) ? CRF_ORDER_RESTORE : CRF_ORDER_DUMP;
	size_t n = set->graph.n_order;
	int first = 0;

	ctx.ops = ops;
	ctx.task = task;
	for (size_t i = 0; i < n; i++) {
		bool reverse = reverse_stage(stage), take;
		size_t idx = set->graph.order[o][reverse ? n - 1 - i : i];
		struct crf_plugin_info *pi = &set->p[idx];
		bool *owes = owed(pi, stage, &take);
		int r;

		bool point = pi->hooks[stage] && !in_task(stage);

		if (owes && !take) {
			/* Given back once, by the plugins that hold the device only. */
			if (!*owes)
				continue;
			*owes = false;
		}

		/*
		 * A stop request ends a dump between two hooks; cleanups still run,
		 * every one of them, their fault point failing after the hook.
		 */
		r = reverse || crf__stage_is_restore(stage) ? 0 : stop_check();
		if (r >= 0 && point && !reverse)
			r = hook_fault(stage, pi->st.name);
		if (r < 0)
			return r;
		r = crf__run_hook(&ctx, &pi->st);
		if (r >= 0 && owes && take && pi->hooks[stage])
			*owes = true;
		if (r >= 0 && point && reverse && hook_fault(stage, pi->st.name) < 0 && !first)
			first = -EIO;
		if (r >= 0)
			continue;
		/* A hook that gave up because crf was asked to stop: say why once. */
		if (r == -EINTR)
			stop_check();
		crf_error("plugin '%s': %s failed: %s", pi->st.name, crf_stage_name(stage),
			  strerror(-r));
		if (!reverse)
			return r;
		if (!first)
			first = r;
	}
	return first;
}

int plugin_set_dispatch(struct crf_plugin_set *set, struct crf_imgdir *images,
			const struct crf_object *obj)
{
	struct crf_ctx ctx = make_ctx(set, CRF_STAGE_DUMP_TASK, images, obj->pid);
	const struct crf_registry_entry *e = crf__registry_find(&set->registry, obj);
	const char *old;
	int r;

	if (!e)
		return -ENOTSUP;
	if (!e->kind->dump)
		return 0;
	ctx.plugin = e->owner;
	old = crf__log_set_origin(e->owner->name);
	r = e->kind->dump(&ctx, obj);
	crf__log_set_origin(old);
	return r > 0 ? 0 : r;
}
