// SPDX-License-Identifier: GPL-2.0-only
/* placeholder, filled below */
#include "ns.h"

bool ns_external_id(const char *kind, uint64_t id)
{
	(void)kind;
	(void)id;
	return false;
}
