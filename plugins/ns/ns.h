/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ns.h - what the files of the ns plugin share.
 */
#ifndef CRF_PLUGIN_NS_H
#define CRF_PLUGIN_NS_H

#include <crf/plugin.h>

/* The probe hook: namespace files, entering them by pidfd, choosing PIDs. */
int ns_probe(struct crf_ctx *ctx);

/*
 * Namespaces another plugin's handler claims (claims.c, ABI 1.5): recorded
 * per process at dump-task-data, checked at restore-prepare, restored by
 * their handlers at restore-premap; restore-cleanup drops the state.
 */
int ns_dump_task_data(struct crf_ctx *ctx);
int ns_restore_prepare(struct crf_ctx *ctx);
int ns_restore_premap(struct crf_ctx *ctx);
int ns_restore_cleanup(struct crf_ctx *ctx);

/* The index of namespace kind @kind ("uts") in restore order, or -1 for none crf knows. */
int ns_kind_index(const char *kind);

/* kinds.c: the kinds, in restore order (the user namespace owns the others). */
#define NS_N_KINDS 9
extern const char *const ns_kinds[NS_N_KINDS];

/*
 * validate.c: every ns-PID.img of @dir, before the tree is forked (the
 * first step of restore-prepare): a live process of the dump, each kind
 * known and once, its link "KIND:[ID]", a handler named.  0 or -EBADMSG
 * (logged: file, record, field).  Reads @dir only.
 */
struct crf_imgdir;
int ns_validate(struct crf_imgdir *dir);

/*
 * userns.c: the "user" handler (ns_userns_dump, ns_userns_restore); every process's namespaces
 * owned by a user namespace other than crf's refused at dump-task-data
 * (ns_userns_owners); the restored one joined before the restorer
 * (ns_userns_restore_task, restore-task).
 */
int ns_userns_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int ns_userns_restore(struct crf_ctx *ctx, const struct crf_object *obj);
int ns_userns_owners(struct crf_ctx *ctx, pid_t pid);
int ns_userns_restore_task(struct crf_ctx *ctx);
/*
 * Namespace @kind of process @pid is owned by its user namespace, which is
 * not crf's: 1, 0 when not, <0.
 */
int ns_userns_owns(pid_t pid, const char *kind);
/*
 * Restore-premap, when the process restores namespaces its restored user
 * namespace owns (@owned[k] for @kinds[k]): a child joins that user
 * namespace and calls @fn (which makes them there), then the process joins
 * the child's namespaces of those kinds.  0 at once when none is owned.
 */
int ns_userns_inside(struct crf_ctx *ctx, const bool *owned, const char *const *kinds, size_t n,
		     int (*fn)(struct crf_ctx *ctx, void *arg), void *arg);

/*
 * userns-pid.c: the "pid_for_children" handler; its restore-task part,
 * called before (@after_user false) and after the user namespace's.
 */
int ns_pidfc_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int ns_pidfc_restore(struct crf_ctx *ctx, const struct crf_object *obj);
int ns_pidfc_restore_task(struct crf_ctx *ctx, bool after_user);

/*
 * uts.c, time.c, ipc.c (ns-uts-ipc-time.md): the ns plugin's own handlers of
 * those kinds, and what they share.
 */
int ns_uts_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int ns_uts_restore(struct crf_ctx *ctx, const struct crf_object *obj);
int ns_time_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int ns_time_restore(struct crf_ctx *ctx, const struct crf_object *obj);
int ns_timefc_restore(struct crf_ctx *ctx, const struct crf_object *obj);
int ns_ipc_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int ns_ipc_restore(struct crf_ctx *ctx, const struct crf_object *obj);
/* ipc-mqfd.c: the "mqueue" fd kind, an open POSIX message queue. */
int ns_mqfd_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int ns_mqfd_restore(struct crf_ctx *ctx, const struct crf_object *obj);
/* The fd of namespace @kind of the thread of CRF_OBJ_NS object @obj, or -errno (logged). */
int ns_open_of(const struct crf_object *obj, const char *kind);
/*
 * userns.c: 0, or -ENOTSUP (logged) when another process of this dump is in
 * namespace @ni and neither's parent process is (the restore would make two).
 */
int ns_check_first(pid_t pid, const struct crf_ns_info *ni);
/* 0 when namespace @nsfd (of @obj) is owned by crf's user namespace, else -errno (logged). */
int ns_check_owner(const struct crf_object *obj, int nsfd);
/*
 * Run @fn in a child of crf that joined namespace @nsfd (setns @nstype):
 * it writes exactly @len bytes to @out, read into @buf.  0, or -errno (not
 * logged: -EIO when the child failed).
 */
int ns_in_child(int nsfd, int nstype, int (*fn)(int out, void *arg), void *arg, void *buf,
		size_t len);

#endif
