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
#include "tun.h"
#include "inet.pb-c.h"
#include "netlink.pb-c.h"
#include "netns.pb-c.h"
#include "packet.pb-c.h"
#include "unix.pb-c.h"

/* The tun kind's check (the devices plugin's only kind with a payload). */
static int devices_payload(const char *kind, const void *data, size_t len, const char *what)
{
	return strcmp(kind, "tun") ? 0 : tun_payload_check(data, len, what);
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
	 net_validate, net_payload_check},
	{"devices", CRF_SCHEMAS(&crf__devices__tun__descriptor), NULL, devices_payload},
	{0},
};

/*
 * The kinds' checks as the files plugin's restore-prepare runs them
 * (crf_kind_check): each fd record of files-@pid.img that needs a
 * description of its own, through the check of the plugin it names.
 */
static int fd_payloads(void *arg, const char *name, pid_t pid)
{
	_cleanup_img_ struct crf_img *img = NULL;
	Crf__Files__Fd *e;
	int r = crf_img_open(arg, name, &crf__files__fd__descriptor, &img);

	while (r >= 0 && (r = crf_img_read(img, (ProtobufCMessage **)&e)) > 0) {
		char what[64];

		snprintf(what, sizeof(what), "pid %d: fd %d", (int)pid, e->fd);
		for (const struct fuzz_plugin *p = fuzz_plugins; p->name; p++)
			if (p->payload && !e->has_same_as && e->kind && e->plugin &&
			    !strcmp(e->plugin, p->name))
				p->payload(e->kind, e->payload.data, e->payload.len, what);
		crf__files__fd__free_unpacked(e, NULL);
	}
	return r;
}

void fuzz_plugins_validate(struct crf_imgdir *dir)
{
	for (const struct fuzz_plugin *p = fuzz_plugins; p->name; p++)
		if (p->validate)
			p->validate(dir);
	crf_imgdir_each_task(dir, "files", fd_payloads, dir);
}
