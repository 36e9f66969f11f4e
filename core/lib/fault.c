// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fault injection for the tests: CRF_FAULT in the environment.
 *
 * Every step of a dump or a restore that the tests want to break passes a
 * fault point (crf__fault()), in a fixed order for a given tree, so the
 * points count like a clock:
 *
 *   CRF_FAULT=trace     print "crf fault point N: NAME" for each point
 *   CRF_FAULT=fail@N    the N-th point fails (-EIO, said once)
 *   CRF_FAULT=term@N    crf gets SIGTERM at the N-th point
 *   CRF_FAULT=kill@N    crf gets SIGKILL at the N-th point
 *
 * In place of N, a point's NAME (fail@releasing the tree): the first point
 * of that name, whatever its number, for a test that aims at one step of
 * a tree whose count of points it does not know.
 *
 * With CRF_FAULT_FINE=1 as well, the fine points count too, in the same
 * order (crf__fault_fine): every write to an image, every image created,
 * renamed into place or opened, every read of one, every parasite call.
 * Without it they cost one branch and count nothing, so the phase points
 * keep their numbers.
 *
 * Unset (always, outside tests) it costs one branch per point.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crf-private.h"

enum action { NONE, TRACE, FAIL, TERM, KILL };

static enum action action = NONE;
static unsigned long at, count;
static const char *at_name; /* fail@NAME...: the point's name, not its number */
static bool parsed, fine, done;

static void parse(void)
{
	static const struct {
		const char *name;
		enum action a;
	} names[] = {{"fail@", FAIL}, {"term@", TERM}, {"kill@", KILL}};
	const char *v = getenv("CRF_FAULT");

	parsed = true;
	fine = getenv("CRF_FAULT_FINE") && !strcmp(getenv("CRF_FAULT_FINE"), "1");
	if (!v || !*v)
		return;
	if (!strcmp(v, "trace")) {
		action = TRACE;
		return;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i].name);
		char *end;

		if (strncmp(v, names[i].name, n))
			continue;
		at = strtoul(v + n, &end, 10);
		if (at && !*end)
			action = names[i].a;
		else if (v[n] && !(v[n] >= '0' && v[n] <= '9')) {
			at_name = v + n;
			action = names[i].a;
		}
	}
	if (action == NONE)
		crf_warn("CRF_FAULT=%s: expected trace, fail@N, term@N or kill@N; ignored", v);
}

int crf__fault(const char *name, bool parasite_in)
{
	if (!parsed)
		parse();
	if (action == NONE)
		return 0;
	count++;
	if (action == TRACE) {
		fprintf(stderr, "crf fault point %lu: %s%s\n", count, name,
			parasite_in ? " (parasite in)" : "");
		return 0;
	}
	if (at_name ? done || strcmp(name, at_name) : count != at)
		return 0;
	done = true;
	switch (action) {
	case KILL:
		raise(SIGKILL);
		break;
	case TERM:
		raise(SIGTERM);
		break;
	default:
		return crf_error_errno(EIO, "fault injected at point %lu (%s)", count, name);
	}
	return 0;
}

int crf__fault_fine(const char *what, const char *name, bool parasite_in)
{
	char point[320];

	if (!parsed)
		parse();
	if (action == NONE || !fine)
		return 0;
	snprintf(point, sizeof(point), "%s %s", what, name);
	return crf__fault(point, parasite_in);
}
