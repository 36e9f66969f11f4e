// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "crf-private.h"
#include "privs.h"

bool crf_privileged(char *missing, size_t len)
{
	static const struct {
		int cap;
		const char *name;
	} need[] = {{CAP_SYS_ADMIN, "CAP_SYS_ADMIN"}, {CAP_SYS_PTRACE, "CAP_SYS_PTRACE"}};
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {0};
	uint64_t eff;
	size_t used = 0;

	missing[0] = '\0';
	if (syscall(SYS_capget, &h, d) < 0) {
		snprintf(missing, len, "capabilities unreadable: %s", strerror(errno));
		return false;
	}
	eff = (uint64_t)d[1].effective << 32 | d[0].effective;
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!(eff & (1ull << need[i].cap)) && used < len)
			used += (size_t)snprintf(missing + used, len - used, "%s%s",
						 used ? ", " : "", need[i].name);
	return !missing[0];
}

int crf_require_privileges(const char *cmd)
{
	char missing[128];

	if (crf_privileged(missing, sizeof(missing)))
		return 0;
	crf_error("%s needs root (CAP_SYS_ADMIN and CAP_SYS_PTRACE); this process lacks %s", cmd,
		  missing);
	return -EPERM;
}
