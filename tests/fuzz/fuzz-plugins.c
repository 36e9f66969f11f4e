// SPDX-License-Identifier: GPL-2.0-only
/* The plugins the fuzzer drives (fuzz-plugins.h). */
#include <crf/plugin.h>

#include "cgroup.pb-c.h"
#include "files.pb-c.h"
#include "fuzz-plugins.h"
#include "mm.pb-c.h"
#include "ns.h"
#include "ns.pb-c.h"
#include "../../plugins/cgroup/validate.h"
#include "../../plugins/files/validate.h"
#include "../../plugins/mem/validate.h"

const struct fuzz_plugin fuzz_plugins[] = {
	{"cgroup", CRF_SCHEMAS(&crf__cgroup__task_cgroups__descriptor), cgroup_validate},
	{"ns", CRF_SCHEMAS(&crf__ns__ns_claim__descriptor), ns_validate},
	{"mem", CRF_SCHEMAS(&crf__mem__mm_entry__descriptor, &crf__mem__shmem_entry__descriptor),
	 mem_validate},
	{"files",
	 CRF_SCHEMAS(&crf__files__fd__descriptor, &crf__files__pipe__descriptor,
		     &crf__files__shared_fd__descriptor, &crf__files__tty__descriptor,
		     &crf__files__unlinked_file__descriptor, &crf__files__external__descriptor),
	 files_validate},
	{0},
};
