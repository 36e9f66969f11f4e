/* SPDX-License-Identifier: GPL-2.0-only */
/* cgns.h - the cgroup namespace kind (cgns.c) and the dump's state it shares with dump.c. */
#ifndef CRF_PLUGIN_CGROUP_CGNS_H
#define CRF_PLUGIN_CGROUP_CGNS_H

#include "cgprops.pb-c.h"
#include "cgroup.h"

#define CG_NS_IMG "cgns.img"

struct cg_restore;

/* The dump's state: cgroup.img, every cgroup a task of the tree was seen in, the namespaces. */
struct cg_dump {
	struct crf_img *img;
	struct cg_members seen;
	Crf__Cgroup__CgroupNs **ns;
	size_t n_ns;
};

/* The CRF_OBJ_NS "cgroup" handler. */
int cg_ns_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int cg_ns_restore(struct crf_ctx *ctx, const struct crf_object *obj);
/* dump-finish: cgns.img from @d's namespaces. */
int cg_ns_write(struct crf_ctx *ctx, struct cg_dump *d);
void cg_ns_free_all(Crf__Cgroup__CgroupNs **v, size_t n);
/* restore-prepare: cgns.img into @rs (none: 0). */
int cg_ns_load(struct crf_ctx *ctx, struct cg_restore *rs);

#endif
