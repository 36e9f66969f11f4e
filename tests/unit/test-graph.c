// SPDX-License-Identifier: GPL-2.0-only
/* The plugin graph: orders, ties, separate dump/restore orders, cycles, requires. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "graph.h"
#include "helpers.h"

#define MAXN 8

struct fixture {
	struct crf_graph g;
	struct crf_graph_node nodes[MAXN];
};

static struct fixture fx;

/* Add a node: "name" with dump-after, restore-after and requires lists. */
static struct crf_graph_node *node(const char *name, const char *dump_after,
				   const char *restore_after, const char *requires)
{
	struct crf_graph_node *n = &fx.nodes[fx.g.n++];

	n->name = name;
	n->enabled = true;
	assert_int_equal(strv_split(&n->after[CRF_ORDER_DUMP], dump_after), 0);
	assert_int_equal(strv_split(&n->after[CRF_ORDER_RESTORE], restore_after), 0);
	assert_int_equal(strv_split(&n->requires, requires), 0);
	return n;
}

static int setup(void **state)
{
	memset(&fx, 0, sizeof(fx));
	fx.g.nodes = fx.nodes;
	return 0;
}

static int teardown(void **state)
{
	graph_clear(&fx.g);
	return 0;
}

static void order_is(enum crf_order o, const char *expect)
{
	char buf[256] = "";

	for (size_t i = 0; i < fx.g.n_order; i++) {
		if (i)
			strcat(buf, " ");
		strcat(buf, fx.g.nodes[fx.g.order[o][i]].name);
	}
	assert_string_equal(buf, expect);
}

static void test_chain(void **state)
{
	node("c", "b", "b", "");
	node("b", "a", "a", "");
	node("a", "", "", "");
	assert_int_equal(graph_resolve(&fx.g), 0);
	order_is(CRF_ORDER_DUMP, "a b c");
	order_is(CRF_ORDER_RESTORE, "a b c");
	assert_int_equal(fx.nodes[0].pos[CRF_ORDER_DUMP], 3);
}

static void test_diamond(void **state)
{
	node("d", "b, c", "b c", "");
	node("c", "a", "a", "");
	node("b", "a", "a", "");
	node("a", "", "", "");
	assert_int_equal(graph_resolve(&fx.g), 0);
	order_is(CRF_ORDER_DUMP, "a b c d");
}

static void test_ties_by_name(void **state)
{
	node("zeta", "", "", "");
	node("alpha", "", "", "");
	node("mid", "", "", "");
	assert_int_equal(graph_resolve(&fx.g), 0);
	order_is(CRF_ORDER_DUMP, "alpha mid zeta");
}

static void test_separate_orders(void **state)
{
	/* Namespaces first on restore, memory last; dump order differs. */
	node("mem", "", "ns files", "");
	node("files", "", "ns", "");
	node("ns", "mem files", "", "");
	assert_int_equal(graph_resolve(&fx.g), 0);
	order_is(CRF_ORDER_DUMP, "files mem ns");
	order_is(CRF_ORDER_RESTORE, "ns files mem");
}

static void test_disabled_edges_ignored(void **state)
{
	struct crf_graph_node *b;

	node("a", "b", "", "");
	b = node("b", "a", "", ""); /* would be a cycle if b were on */
	b->enabled = false;
	b->why_off = "disabled by test";
	assert_int_equal(graph_resolve(&fx.g), 0);
	order_is(CRF_ORDER_DUMP, "a");
	assert_int_equal(b->pos[CRF_ORDER_DUMP], 0);
}

static void expect_cycle(enum crf_order o, const char *text)
{
	const char *err;

	capture_begin();
	assert_int_equal(graph_resolve(&fx.g), -ELOOP);
	err = capture_end();
	assert_contains(err, o == CRF_ORDER_DUMP ? "cycle in the dump order"
						 : "cycle in the restore order");
	assert_contains(err, text);
	assert_int_equal(count_lines(err), 1);
}

static void test_cycle_named_in_order(void **state)
{
	node("a", "c", "", "");
	node("b", "a", "", "");
	node("c", "b", "", "");
	node("x", "", "", "");
	expect_cycle(CRF_ORDER_DUMP, ": b -> c -> a -> b\n");
}

static void test_restore_cycle(void **state)
{
	node("a", "", "b", "");
	node("b", "", "a", "");
	expect_cycle(CRF_ORDER_RESTORE, ": b -> a -> b\n");
}

static void test_self_cycle(void **state)
{
	node("a", "a", "", "");
	expect_cycle(CRF_ORDER_DUMP, ": a -> a\n");
}

static void test_requires_missing(void **state)
{
	const char *err;

	node("net", "", "", "ns");
	capture_begin();
	assert_int_equal(graph_resolve(&fx.g), -ENOENT);
	err = capture_end();
	assert_contains(err, "plugin 'net' requires plugin 'ns', which is not configured");
}

static void test_requires_disabled(void **state)
{
	struct crf_graph_node *ns;
	const char *err;

	node("net", "", "", "ns");
	ns = node("ns", "", "", "");
	ns->enabled = false;
	ns->why_off = "disabled by --disable";
	capture_begin();
	assert_int_equal(graph_resolve(&fx.g), -EPERM);
	err = capture_end();
	assert_contains(err, "plugin 'net' requires plugin 'ns', which is disabled by --disable");
}

static void test_disabled_requirer_is_fine(void **state)
{
	struct crf_graph_node *net = node("net", "", "", "ns");

	net->enabled = false;
	net->why_off = "off";
	assert_int_equal(graph_resolve(&fx.g), 0);
	assert_int_equal(fx.g.n_order, 0);
}

static void test_dot(void **state)
{
	char buf[4096] = "";
	FILE *f;

	node("b", "a", "", "c");
	node("a", "", "b", "")->enabled = false;
	node("c", "", "", "");
	fx.nodes[1].why_off = "off";
	assert_int_equal(graph_resolve(&fx.g), 0);
	f = fmemopen(buf, sizeof(buf) - 1, "w");
	graph_dot(&fx.g, f);
	fclose(f);
	assert_contains(buf, "digraph crf_plugins {");
	assert_contains(buf, "\"a\" -> \"b\" [color=blue, label=\"dump\"]");
	assert_contains(buf, "\"b\" -> \"a\" [color=darkgreen, label=\"restore\"]");
	assert_contains(buf, "\"b\" -> \"c\" [style=bold, label=\"requires\"]");
	assert_contains(buf, "(disabled)");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_chain),
		T(test_diamond),
		T(test_ties_by_name),
		T(test_separate_orders),
		T(test_disabled_edges_ignored),
		T(test_cycle_named_in_order),
		T(test_restore_cycle),
		T(test_self_cycle),
		T(test_requires_missing),
		T(test_requires_disabled),
		T(test_disabled_requirer_is_fine),
		T(test_dot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
