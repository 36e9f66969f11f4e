// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <crf/log.h>

#include "graph.h"

const char *crf_order_name(enum crf_order o)
{
	return o == CRF_ORDER_DUMP ? "dump" : "restore";
}

static struct crf_graph_node *find(const struct crf_graph *g, const char *name)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->nodes[i].name, name))
			return &g->nodes[i];
	return NULL;
}

static int check_requires(const struct crf_graph *g)
{
	for (size_t i = 0; i < g->n; i++) {
		const struct crf_graph_node *n = &g->nodes[i];

		if (!n->enabled)
			continue;
		for (size_t j = 0; j < n->requires.n; j++) {
			const char *req = n->requires.v[j];
			const struct crf_graph_node *r = find(g, req);

			if (!r) {
				crf_error(
					"plugin '%s' requires plugin '%s', which is not configured",
					n->name, req);
				return -ENOENT;
			}
			if (!r->enabled) {
				crf_error("plugin '%s' requires plugin '%s', which is %s", n->name,
					  req, r->why_off ? r->why_off : "disabled");
				return -EPERM;
			}
		}
	}
	return 0;
}

/* Does enabled node @a have to come after enabled node @b in order @o? */
static bool must_follow(const struct crf_graph *g, size_t a, size_t b, enum crf_order o)
{
	const struct crf_graph_node *na = &g->nodes[a];

	return g->nodes[b].enabled && strv_contains(&na->after[o], g->nodes[b].name);
}

/*
 * Name a cycle among the nodes left unplaced: walk from any of them along
 * "must follow" edges to unplaced nodes until a node repeats.
 */
static int report_cycle(const struct crf_graph *g, const bool *placed, enum crf_order o)
{
	size_t *path = calloc(g->n + 1, sizeof(*path));
	size_t len = 0, cur = 0, start = 0;
	struct strv names = {0};
	char *text;

	if (!path)
		return -ENOMEM;
	while (cur < g->n && (placed[cur] || !g->nodes[cur].enabled))
		cur++;
	for (;;) {
		size_t seen, next;

		for (seen = 0; seen < len && path[seen] != cur; seen++)
			;
		if (seen < len) {
			start = seen;
			break;
		}
		path[len++] = cur;
		for (next = 0; next < g->n; next++)
			if (!placed[next] && must_follow(g, cur, next, o))
				break;
		cur = next; /* every unplaced node has an unplaced predecessor */
	}
	/* The walk follows "comes after" edges; print in running order. */
	for (size_t i = len; i-- > start;)
		strv_push(&names, g->nodes[path[i]].name);
	strv_push(&names, g->nodes[path[len - 1]].name);
	text = strv_join(&names, " -> ");
	crf_error("cycle in the %s order: %s", crf_order_name(o), text ? text : "?");
	free(text);
	strv_free(&names);
	free(path);
	return -ELOOP;
}

/* Kahn's algorithm, picking the smallest name among the ready nodes. */
static int sort_order(struct crf_graph *g, enum crf_order o)
{
	bool *placed = calloc(g->n ? g->n : 1, sizeof(*placed));
	size_t *order = calloc(g->n ? g->n : 1, sizeof(*order));
	size_t n_enabled = 0, done = 0;

	if (!placed || !order) {
		free(placed);
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g->n; i++)
		n_enabled += g->nodes[i].enabled;
	while (done < n_enabled) {
		size_t best = g->n;

		for (size_t i = 0; i < g->n; i++) {
			bool ready = g->nodes[i].enabled && !placed[i];

			for (size_t j = 0; ready && j < g->n; j++)
				if (!placed[j] && must_follow(g, i, j, o))
					ready = false;
			if (ready &&
			    (best == g->n || strcmp(g->nodes[i].name, g->nodes[best].name) < 0))
				best = i;
		}
		if (best == g->n) {
			int r = report_cycle(g, placed, o);

			free(placed);
			free(order);
			return r;
		}
		placed[best] = true;
		order[done++] = best;
		g->nodes[best].pos[o] = (int)done;
	}
	free(placed);
	g->order[o] = order;
	g->n_order = n_enabled;
	return 0;
}

int graph_resolve(struct crf_graph *g)
{
	int r;

	for (size_t i = 0; i < g->n; i++)
		for (int o = 0; o < CRF_ORDER__COUNT; o++)
			g->nodes[i].pos[o] = 0;
	r = check_requires(g);
	if (r < 0)
		return r;
	for (int o = 0; o < CRF_ORDER__COUNT; o++) {
		free(g->order[o]);
		g->order[o] = NULL;
		r = sort_order(g, o);
		if (r < 0)
			return r;
	}
	return 0;
}

void graph_dot(const struct crf_graph *g, FILE *out)
{
	static const char *const colour[CRF_ORDER__COUNT] = {"blue", "darkgreen"};

	fprintf(out, "digraph crf_plugins {\n\trankdir=LR;\n\tnode [shape=box];\n");
	for (size_t i = 0; i < g->n; i++) {
		const struct crf_graph_node *n = &g->nodes[i];

		if (n->enabled)
			fprintf(out, "\t\"%s\" [label=\"%s\\ndump %d, restore %d\"];\n", n->name,
				n->name, n->pos[CRF_ORDER_DUMP], n->pos[CRF_ORDER_RESTORE]);
		else
			fprintf(out,
				"\t\"%s\" [label=\"%s\\n(disabled)\", style=dashed, color=grey];\n",
				n->name, n->name);
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct crf_graph_node *n = &g->nodes[i];

		for (size_t j = 0; j < n->requires.n; j++)
			fprintf(out, "\t\"%s\" -> \"%s\" [style=bold, label=\"requires\"];\n",
				n->name, n->requires.v[j]);
		for (int o = 0; o < CRF_ORDER__COUNT; o++)
			for (size_t j = 0; j < n->after[o].n; j++)
				fprintf(out, "\t\"%s\" -> \"%s\" [color=%s, label=\"%s\"];\n",
					n->after[o].v[j], n->name, colour[o], crf_order_name(o));
	}
	fprintf(out, "}\n");
}

void graph_clear(struct crf_graph *g)
{
	for (size_t i = 0; i < g->n; i++) {
		strv_free(&g->nodes[i].requires);
		for (int o = 0; o < CRF_ORDER__COUNT; o++)
			strv_free(&g->nodes[i].after[o]);
	}
	for (int o = 0; o < CRF_ORDER__COUNT; o++) {
		free(g->order[o]);
		g->order[o] = NULL;
	}
	g->n_order = 0;
}
