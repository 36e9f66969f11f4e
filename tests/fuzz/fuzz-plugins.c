// SPDX-License-Identifier: GPL-2.0-only
/* The plugins the fuzzer drives (fuzz-plugins.h). */
#include <stdio.h>
#include <string.h>

#include <crf/cleanup.h>
#include <crf/image.h>
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
#include "../../plugins/net/validate.h"
#include "inet.pb-c.h"
#include "netlink.pb-c.h"
#include "netns.pb-c.h"
#include "packet.pb-c.h"
#include "unix.pb-c.h"

/*
 * The net plugin's checks as a restore runs them: its own images in its
 * restore-prepare, then, through the files plugin's crf_kind_check(), the
 * payload of each socket fd of files-PID.img.
 */
static int net_fd_payloads(void *arg, const char *name, pid_t pid)
{
	_cleanup_img_ struct crf_img *img = NULL;
	Crf__Files__Fd *e;
	int r = crf_img_open(arg, name, &crf__files__fd__descriptor, &img);

	while (r >= 0 && (r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0) {
		char what[64];

		snprintf(what, sizeof(what), "pid %d: fd %d", (int)pid, e->fd);
		if (!e->has_same_as && e->kind && e->plugin && !strcmp(e->plugin, "net"))
			r = net_payload_check(e->kind, e->payload.data, e->payload.len, what);
		crf__files__fd__free_unpacked(e, NULL);
	}
	return r;
}

static int net_fuzz_validate(struct crf_imgdir *dir)
{
	int r = net_validate(dir);

	return r < 0 ? r : crf_imgdir_each_task(dir, "files", net_fd_payloads, dir);
}

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
	{"net",
	 CRF_SCHEMAS(&crf__net__inet_sk__descriptor, &crf__net__net_lock__descriptor,
		     &crf__net__unix_sk__descriptor, &crf__net__netlink_sk__descriptor,
		     &crf__net__net_ns__descriptor, &crf__net__packet_sk__descriptor),
	 net_fuzz_validate},
	{0},
};
