/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The plugin graph: requirement edges (requires) are kept apart from
 * ordering edges (dump-after, restore-after), as systemd keeps Requires=
 * apart from After=.  An ordering edge to a plugin that is not enabled is
 * ignored; a requirement on one is an error.  Ties in the topological order
 * are broken by name, so the order never depends on file or load order.
 */
#ifndef CRF_GRAPH_H
#define CRF_GRAPH_H

#include <stdbool.h>
#include <stdio.h>

#include "util.h"

enum crf_order {
	CRF_ORDER_DUMP = 0,
	CRF_ORDER_RESTORE,
	CRF_ORDER__COUNT,
};

struct crf_graph_node {
	const char *name;
	bool enabled;
	const char *why_off; /* for messages when !enabled */
	struct strv requires;
	struct strv after[CRF_ORDER__COUNT];
	/* Filled by crf_graph_sort(): 1-based position, 0 when not enabled. */
	int pos[CRF_ORDER__COUNT];
};

struct crf_graph {
	struct crf_graph_node *nodes;
	size_t n;
	/* Indices into nodes of enabled plugins, in each order. */
	size_t *order[CRF_ORDER__COUNT];
	size_t n_order;
};

const char *crf_order_name(enum crf_order o);

/*
 * Check requirements, then sort both orders.  Errors (each logged once):
 * -ENOENT a required plugin is not configured, -EPERM it is disabled,
 * -ELOOP a cycle (the message lists it in order: "a -> b -> a").
 */
int graph_resolve(struct crf_graph *g);

/* Graphviz description of the whole graph, disabled plugins included. */
void graph_dot(const struct crf_graph *g, FILE *out);

/* Frees the orders and the nodes' lists (the nodes array is the caller's). */
void graph_clear(struct crf_graph *g);

#endif
