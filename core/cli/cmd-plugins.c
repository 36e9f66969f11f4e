// SPDX-License-Identifier: GPL-2.0-only
/* crf plugins [--dot]: every configured plugin, its state, order, probe and kinds. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

enum { OPT_DOT = OPT_COMMAND_BASE };

static const char help[] =
	"Usage: crf plugins [--dot] [OPTIONS]\n\n"
	"List every configured plugin: version, state (and what disabled it),\n"
	"position in the dump and restore orders, probe result, file, and the\n"
	"object kinds it handles (CLASS:NAME; '(off)' and a line saying why for\n"
	"a kind switched off by disable-kinds or --disable PLUGIN:KIND).\n"
	"Exits non-zero when a plugin cannot be loaded or the graph is invalid.\n\n"
	"  --dot                  print the graph in Graphviz dot format\n";

static int handle(void *data, int c, const char *arg)
{
	bool *dot = data;

	if (c != OPT_DOT)
		return -EINVAL;
	*dot = true;
	return 0;
}

static void probe_summary(const struct crf_plugin_info *pi, char *buf, size_t len)
{
	size_t missing = 0, optional = 0;

	if (!pi->st.enabled || !pi->st.desc) {
		snprintf(buf, len, "-");
		return;
	}
	for (size_t i = 0; i < pi->st.n_probes; i++) {
		if (pi->st.probes[i].supported)
			continue;
		if (pi->st.probes[i].required)
			missing++;
		else
			optional++;
	}
	if (missing)
		snprintf(buf, len, "MISSING %zu", missing);
	else if (optional)
		snprintf(buf, len, "ok (%zu optional missing)", optional);
	else
		snprintf(buf, len, "ok");
}

static void print_pos(int pos)
{
	if (pos)
		printf(" %7d", pos);
	else
		printf(" %7s", "-");
}

/* Where the listing of a plugin's kinds wraps, and how its lines start. */
#define KINDS_WIDTH  100
#define KINDS_INDENT "           "

static const struct crf_kind_off *kind_off(const struct crf_plugin_info *pi, const char *kind)
{
	for (size_t i = 0; i < pi->n_off; i++)
		if (!strcmp(pi->off[i].kind, kind))
			return &pi->off[i];
	return NULL;
}

/*
 * "kinds: fdtable, fd:pipe, fd:eventpoll (off), ...", wrapped: a kind is
 * CLASS:NAME, or only its class where the name repeats it, as the messages
 * that name an object's class and kind write them.
 */
static void print_kinds(const struct crf_plugin_info *pi)
{
	const struct crf_kind *first = pi->st.desc->kinds;
	size_t col = strlen(KINDS_INDENT "kinds:");

	printf(KINDS_INDENT "kinds:");
	if (!first || !first->name) {
		printf(" none\n");
		return;
	}
	for (const struct crf_kind *k = first; k->name; k++) {
		const char *cls = crf_object_class_name(k->cls);
		bool bare = !strcmp(cls, k->name), off = kind_off(pi, k->name);
		size_t len = (bare ? 0 : strlen(cls) + 1) + strlen(k->name) + (off ? 6 : 0);

		if (k != first && col + 2 + len > KINDS_WIDTH) {
			printf(",\n" KINDS_INDENT "      ");
			col = strlen(KINDS_INDENT "      ");
		} else if (k != first) {
			printf(",");
			col++;
		}
		printf(" %s%s%s%s", bare ? "" : cls, bare ? "" : ":", k->name, off ? " (off)" : "");
		col += 1 + len;
	}
	printf("\n");
}

static void print_table(const struct crf_plugin_set *set)
{
	printf("%-10s %-8s %-8s %7s %7s  %-26s %s\n", "PLUGIN", "VERSION", "STATE", "DUMP",
	       "RESTORE", "PROBE", "FILE");
	for (size_t i = 0; i < set->n; i++) {
		const struct crf_plugin_info *pi = &set->p[i];
		char probe[64];

		probe_summary(pi, probe, sizeof(probe));
		printf("%-10s %-8s %-8s", pi->st.name, pi->st.desc ? pi->st.desc->version : "?",
		       pi->load_error && pi->st.enabled ? "error"
		       : pi->st.enabled			? "enabled"
							: "disabled");
		print_pos(set->graph.nodes[i].pos[CRF_ORDER_DUMP]);
		print_pos(set->graph.nodes[i].pos[CRF_ORDER_RESTORE]);
		printf("  %-26s %s\n", probe, pi->path ? pi->path : pi->so);
		if (!pi->st.enabled)
			printf("           %s\n", pi->why_off);
		if (pi->load_error)
			printf("           %s\n", pi->load_error);
		else if (pi->st.desc && pi->st.desc->description)
			printf("           %s\n", pi->st.desc->description);
		if (pi->st.desc)
			print_kinds(pi);
		for (size_t j = 0; j < pi->n_off; j++)
			printf("           kind '%s' %s\n", pi->off[j].kind, pi->off[j].why);
	}
	for (int o = 0; o < CRF_ORDER__COUNT; o++) {
		printf("%s order:", crf_order_name(o));
		for (size_t i = 0; i < set->graph.n_order && set->graph.order[o]; i++)
			printf("%s %s", i ? " ->" : "", set->p[set->graph.order[o][i]].st.name);
		printf("\n");
	}
}

int cmd_plugins(struct crf_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {{"dot", no_argument, NULL, OPT_DOT}, {0}};
	struct crf_config conf = {0};
	struct crf_plugin_set set = {0};
	bool dot = false;
	int r, probe = 0;

	r = parse_command(o, argc, argv, NULL, longopts, help, handle, &dot);
	if (r)
		return r > 0 ? CRF_EXIT_OK : CRF_EXIT_USAGE;
	if (optind < argc)
		return crf_usage_error(o, "unexpected argument '%s'", argv[optind]), CRF_EXIT_USAGE;
	r = crf_setup(o, &conf, &set, CRF_SET_TOLERANT);
	/* A broken graph still lists: unordered plugins show '-' positions. */
	if (set.n && r >= 0)
		probe = plugin_set_probe(&set, true);
	if (set.n && dot)
		graph_dot(&set.graph, stdout);
	else if (set.n)
		print_table(&set);
	plugin_set_free(&set);
	config_free(&conf);
	return r < 0 || probe < 0 ? CRF_EXIT_FAIL : CRF_EXIT_OK;
}
