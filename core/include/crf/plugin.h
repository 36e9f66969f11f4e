/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * crf/plugin.h - the plugin ABI.
 *
 * A plugin is a shared object that exports exactly one descriptor, declared
 * with CRF_PLUGIN().  The core dlopen()s it, checks the ABI version, and calls
 * the descriptor's stage hooks in the order the INI graph gives.  Object-kind
 * handlers (fd kinds, VMA kinds, namespace kinds) listed in the descriptor are
 * entered into the core's dispatch table, so a new kind of kernel object is
 * one new plugin and no change to the core.
 *
 * A plugin talks to the core only through the headers in crf/ and the
 * functions of libcrf; it keeps its state in the per-plugin private pointer
 * (crf_ctx_set_priv()), never in globals shared with the core.
 *
 * Versioning: CRF_PLUGIN_ABI_MAJOR changes when a change breaks existing
 * plugins; the core refuses a plugin of another major.  CRF_PLUGIN_ABI_MINOR
 * grows when something is appended (a stage, a descriptor field, a function);
 * the core accepts plugins built against its own minor or an older one.
 * libcrf's functions carry the symbol version of the minor that added them
 * (CRF_1.0 ... CRF_1.5), so a plugin that calls one of a newer minor than
 * the libcrf it meets is not loaded, and crf names the version it lacks.
 */
#ifndef CRF_PLUGIN_H
#define CRF_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <crf/log.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CRF_PLUGIN_ABI_MAJOR 1
#define CRF_PLUGIN_ABI_MINOR 7

/* The symbol every plugin exports (CRF_PLUGIN defines it). */
#define CRF_PLUGIN_SYMBOL "crf_plugin_descriptor"

/*
 * Stages, in the order a dump and a restore meet them.  Each is an optional
 * hook with one signature; the context tells the hook what it works on.
 * New stages are only ever appended.
 */
enum crf_stage {
	/* Does this kernel support the plugin?  Report each feature with
	 * crf_probe_feature(); return < 0 only if the probe itself failed. */
	CRF_STAGE_PROBE = 0,
	CRF_STAGE_DUMP_PREPARE,	   /* global, before the tree is frozen */
	CRF_STAGE_DUMP_TASK,	   /* per task: tree frozen, parasite in place */
	CRF_STAGE_DUMP_FINISH,	   /* shared and global objects */
	CRF_STAGE_DUMP_CLEANUP,	   /* always called after a dump, success or not */
	CRF_STAGE_RESTORE_PREPARE, /* global, before the tree is forked */
	CRF_STAGE_RESTORE_TASK,	   /* inside each restored task, before the restorer */
	CRF_STAGE_RESTORE_FINISH,  /* every task ready, before the tree resumes */
	/* always called after a restore, success or not (ABI 1.1) */
	CRF_STAGE_RESTORE_CLEANUP,
	/*
	 * ABI 1.3: per task, in each restored session leader right after its
	 * setsid(), before it forks the members of its session (which inherit
	 * what it sets up now: a controlling terminal).  Groups are not made
	 * yet, and the task's fds are crf's.
	 */
	CRF_STAGE_RESTORE_SESSION,
	/*
	 * ABI 1.4: per task, after dump-task, once the parasite is out again:
	 * the tree is still frozen, the task sits in its ptrace-stop with its
	 * own registers, and crf_parasite_* answer -ENOTCONN.  For the bulk
	 * of a task's data, read from outside (pages through /proc/PID/mem,
	 * fds through pidfd_getfd): a crf killed now leaves the task as it
	 * was, whereas one killed while the parasite is in kills the task
	 * (PTRACE_O_EXITKILL, since its registers point into the parasite).
	 */
	CRF_STAGE_DUMP_TASK_DATA,
	/*
	 * ABI 1.4: per task, in each restored process (not a zombie) right
	 * after it is forked, before it forks its children, which inherit its
	 * memory as it is then: the mem plugin maps there the memory its
	 * children still share copy-on-write with it.  The task's fds are
	 * crf's; of the crf_rst_* services only crf_rst_object() is
	 * available, its objects inherited by the children (the net plugin
	 * makes a socketpair here in the process that made it).
	 */
	CRF_STAGE_RESTORE_PREMAP,
	/*
	 * ABI 1.5, the device stages (docs/plugin-api.md, "Device stages"),
	 * for plugins that hold state outside the kernel's view of the tree:
	 * a GPU's queues and memory.
	 *
	 * Global, after dump-prepare, before the tree is frozen: the tree
	 * still runs.  Pause the device work it queued, lock the device API.
	 */
	CRF_STAGE_DUMP_PAUSE,
	/*
	 * ABI 1.5: per task, every live process in tree order, once the whole
	 * tree is frozen (every thread in a ptrace-stop) and before any
	 * parasite is in: save the task's device state.
	 */
	CRF_STAGE_DUMP_FROZEN,
	/*
	 * ABI 1.5: global, only for the plugins whose dump-pause or one of
	 * whose dump-frozen hooks succeeded, in reverse dump order, each
	 * called once whatever the others return: the dump failed or was
	 * stopped after them.  The tree is still frozen (running if the
	 * freeze is what failed) and is thawed right after: give the device
	 * back as it was, so that it runs before the program does.
	 */
	CRF_STAGE_DUMP_UNDO,
	/*
	 * ABI 1.5: as dump-undo, for the same plugins, when the dump succeeded
	 * and the tree runs on (--leave-running): the images are complete, the
	 * tree is still frozen and is thawed right after.
	 */
	CRF_STAGE_DUMP_RESUME,
	/*
	 * ABI 1.5: per task, in crf, every live restored process in tree
	 * order, after restore-finish: each waits in its restorer with its
	 * memory and fds in place and runs none of its program's code until
	 * the tree is let go, right after.  Restore the device state, unlock.
	 */
	CRF_STAGE_RESTORE_RESUME,
	/*
	 * ABI 1.5: global, only for the plugins one of whose restore-resume
	 * hooks succeeded, in reverse restore order, each called once: the
	 * restore failed after them (a later hook, letting the tree go), and
	 * every process it made is killed right after.
	 */
	CRF_STAGE_RESTORE_UNDO,
	/*
	 * ABI 1.6: global, after dump-finish (and dump-resume) and before the
	 * inventory is written.  With --leave-running the tree is thawed just
	 * before it and runs meanwhile: a plugin that took a snapshot while it
	 * was frozen (mem's --live pages) completes its images now.  Without
	 * --leave-running the tree is still frozen.  A failure fails the dump
	 * (the tree keeps running; dump-cleanup follows).
	 */
	CRF_STAGE_DUMP_LIVE,
	CRF_STAGE__COUNT,
};

struct crf_ctx;			   /* opaque: what a hook works on */
struct crf_imgdir;		   /* see crf/image.h */
struct ProtobufCMessageDescriptor; /* from protobuf-c */

/* A stage hook: 0 on success, a negative errno on failure. */
typedef int (*crf_hook_fn)(struct crf_ctx *ctx);

/*
 * Classes of objects the core dispatches to kind handlers.  Before it
 * infects a task (tree frozen), the core hands the registry:
 *
 *  - CRF_OBJ_FDTABLE (ABI 1.4), kind "fdtable": the task's fd table, when
 *    it has an fd (@id the lowest, @desc "fd 0 (/dev/null) and 2 more").
 *    The plugin that claims it owns the table; its walk then dispatches
 *    every fd as a CRF_OBJ_FD of its own kind.
 *  - CRF_OBJ_VMA: every mapping, @desc "START-END NAME" as in
 *    /proc/PID/maps, @id its index there, @kind one of "anon" (private,
 *    no file: also [heap], [stack], [anon:NAME]), "shmem" (shared
 *    anonymous), "file", "memfd", "sysv", "vdso" ([vdso], [vvar],
 *    [vvar_vclock]), "vsyscall", or the bracketed name of any other
 *    special mapping ("[uprobes]").
 *  - CRF_OBJ_NS: every namespace of a thread that is not crf's own of that
 *    kind (for pid_for_children: not the task's own pid namespace), @kind
 *    the name of its /proc/PID/ns link ("net", "uts", "mnt", "ipc", "user",
 *    "cgroup", "time", "time_for_children", "pid_for_children"), @desc the
 *    link ("net:[4026532281]"), @pid the process, @id the thread.
 *    Namespaces shared by several tasks are dispatched once per task.
 *  - CRF_OBJ_CGROUP (ABI 1.4): every cgroup of a thread, in a hierarchy,
 *    that is not crf's own there, @kind "v2" or "v1", @desc
 *    "HIERARCHY:PATH" ("v2:/a/b", "memory:/a", "name=systemd:/a"), @id the
 *    thread.
 *
 * A claimed object's @dump runs when the handler has one.  The fd table,
 * cgroups and the mappings and namespaces mem and ns claim themselves are
 * saved by those plugins' dump-task hooks, so their claim only proves that
 * an enabled plugin is responsible.  A mapping or namespace another
 * plugin's handler claims is that handler's to save (@dump) and to restore
 * (@restore, ABI 1.5): mem and ns record it and call the handler back at
 * restore (see "ABI 1.5" below and docs/plugin-api.md).
 */
enum crf_object_class {
	CRF_OBJ_FD = 0,	 /* an open file descriptor */
	CRF_OBJ_VMA,	 /* a memory mapping */
	CRF_OBJ_NS,	 /* a namespace */
	CRF_OBJ_CGROUP,	 /* a task's membership of a cgroup (ABI 1.4) */
	CRF_OBJ_FDTABLE, /* a task's fd table (ABI 1.4) */
	CRF_OBJ__COUNT,
};

/*
 * An object met during a dump, as the code that found it describes it.
 * @kind is the classifier's name for it ("pipe", "eventfd", "unix", "chr:10:200",
 * "anon", "net"...), @desc a human-readable name for messages
 * ("pipe:[4026]", "/dev/net/tun"), @id the fd number or index.
 * @data points to class-specific details owned by the caller.
 */
struct crf_object {
	enum crf_object_class cls;
	const char *kind;
	const char *desc;
	pid_t pid;
	int id;
	const void *data;
};

/*
 * A handler for one kind of object.  An object is claimed by the first
 * handler of its class, in dump order of the plugins, whose @match accepts it,
 * or, when none does (ABI 1.5: handlers with @match are all asked before any
 * without), by the first handler without @match whose @name equals the
 * object's @kind.
 */
struct crf_kind {
	enum crf_object_class cls;
	const char *name;
	bool (*match)(const struct crf_object *obj);
	/* Save @obj to the images; 0 or -errno. */
	int (*dump)(struct crf_ctx *ctx, const struct crf_object *obj);
	/*
	 * Recreate @obj; >= 0 (for fds: the new fd, O_CLOEXEC) or -errno.
	 * Called through crf_kind_restore() (ABI 1.5) by the plugin that
	 * owns the object's table (for fds: files).
	 */
	int (*restore)(struct crf_ctx *ctx, const struct crf_object *obj);
};

/*
 * ABI 1.7: the check of a saved object of a kind, before anything is made.
 * The restore-prepare hook of the plugin that owns the object's table (for
 * fds: files; VMAs: mem; namespaces: ns) asks crf_kind_check() about each
 * object; that finds the handler that will restore it and, when its plugin
 * declares a check of that class and kind name (crf_plugin.checks), calls
 * it as that plugin, with @obj as crf_kind_restore() will give it to
 * ->restore (an fd's crf_fd_info with its payload).  The check decodes and
 * checks what ->restore will trust, makes nothing, and returns 0 or -errno
 * after one error naming the object and the field, so that a hostile or
 * damaged record is refused before the tree is forked.
 */
struct crf_kind_check {
	enum crf_object_class cls;
	const char *name; /* the kind's, as in crf_kind.name */
	int (*check)(struct crf_ctx *ctx, const struct crf_object *obj);
};

/*
 * The descriptor.  Fields are only ever appended (with a minor bump); the
 * core reads @size and @n_hooks so that an older plugin's shorter descriptor
 * and hook array are read safely.
 */
struct crf_plugin {
	uint32_t abi_major;
	uint32_t abi_minor;
	uint32_t size;	  /* sizeof(struct crf_plugin) when built */
	uint32_t n_hooks; /* CRF_STAGE__COUNT when built */
	const char *name; /* must equal the plugin's INI section */
	const char *version;
	const char *description;
	const crf_hook_fn *hooks;     /* indexed by enum crf_stage */
	const struct crf_kind *kinds; /* NULL or terminated by a zeroed entry */
	/* Keys of its INI section the plugin understands, NULL-terminated. */
	const char *const *config_keys;
	/* protobuf-c schemas of the images it writes, NULL-terminated, so
	 * that `crf show` can decode them. */
	const struct ProtobufCMessageDescriptor *const *schemas;
	/* ABI 1.7: checks of its kinds' saved objects, NULL or terminated by
	 * a zeroed entry (CRF_CHECKS). */
	const struct crf_kind_check *checks;
};

/*
 * Declare the plugin's descriptor:
 *
 *	CRF_PLUGIN(
 *		.name = "mem",
 *		.version = "1.0",
 *		.description = "memory mappings and pages",
 *		.hooks = CRF_HOOKS(
 *			[CRF_STAGE_PROBE] = mem_probe,
 *			[CRF_STAGE_DUMP_TASK] = mem_dump_task,
 *		),
 *		.kinds = CRF_KINDS(
 *			{ .cls = CRF_OBJ_VMA, .name = "anon", .dump = ... }
 *		),
 *	);
 *
 * CRF_KINDS, CRF_CHECKS, CRF_STRINGS and CRF_SCHEMAS add the terminating entry
 * themselves; give them no trailing comma.
 */
#define CRF_PLUGIN(...)                                                                            \
	__attribute__((visibility("default")))                                                     \
	const struct crf_plugin crf_plugin_descriptor = {.abi_major = CRF_PLUGIN_ABI_MAJOR,        \
							 .abi_minor = CRF_PLUGIN_ABI_MINOR,        \
							 .size = sizeof(struct crf_plugin),        \
							 .n_hooks = CRF_STAGE__COUNT,              \
							 __VA_ARGS__}
#define CRF_HOOKS(...)	 ((const crf_hook_fn[CRF_STAGE__COUNT]){__VA_ARGS__})
#define CRF_KINDS(...)	 ((const struct crf_kind[]){__VA_ARGS__, {0}})
#define CRF_STRINGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define CRF_CHECKS(...)	 ((const struct crf_kind_check[]){__VA_ARGS__, {0}})
#define CRF_SCHEMAS(...) ((const struct ProtobufCMessageDescriptor *const[]){__VA_ARGS__, NULL})

/* ---- services for hooks ------------------------------------------------ */

/* The stage being run and the name of the plugin whose hook runs. */
enum crf_stage crf_ctx_stage(const struct crf_ctx *ctx);
const char *crf_ctx_plugin(const struct crf_ctx *ctx);
const char *crf_stage_name(enum crf_stage stage);

/*
 * A key of the plugin's INI section, or NULL when not set.  Only keys listed
 * in the descriptor's config_keys are handed over.
 */
const char *crf_ctx_config(const struct crf_ctx *ctx, const char *key);

/* The plugin's private pointer; kept from one stage to the next. */
void *crf_ctx_priv(const struct crf_ctx *ctx);
void crf_ctx_set_priv(struct crf_ctx *ctx, void *priv);

/* The image directory of this dump or restore (NULL while probing). */
struct crf_imgdir *crf_ctx_images(const struct crf_ctx *ctx);

/* The task a per-task hook works on (0 outside dump-task/restore-task). */
pid_t crf_ctx_pid(const struct crf_ctx *ctx);

/*
 * Probe: report one kernel feature the plugin needs.  @required features that
 * are missing make `crf check` fail and stop a dump or restore; optional ones
 * are reported and the plugin carries on without them.  @why says what was
 * found (printf-style), e.g. "PAGEMAP_SCAN ioctl: EINVAL (kernel < 6.7)".
 */
void crf_probe_feature(struct crf_ctx *ctx, const char *feature, bool supported, bool required,
		       const char *why, ...) __attribute__((format(printf, 5, 6)));

/*
 * Find the handler for @obj among the enabled plugins.  Returns 0 and sets
 * @kind, or -ENOTSUP after logging one error that names the object and, when
 * a disabled or unloaded plugin would have handled it, that plugin and why it
 * is off.
 */
int crf_kind_find(struct crf_ctx *ctx, const struct crf_object *obj, const struct crf_kind **kind);

/* Name of an object class ("fd", "vma", "ns", "cgroup", "fdtable"). */
const char *crf_object_class_name(enum crf_object_class cls);

/* ---- ABI 1.5: fd kinds at restore --------------------------------------- */

/*
 * What the plugin that owns the fd table (files) knows of one fd, handed
 * as @obj->data of a CRF_OBJ_FD object to the fd kind's handler: at the
 * dump to a handler of another plugin than the table's owner, at the
 * restore to every handler.  The fd table's owner saves all of it for
 * every fd in its record, whoever handles the kind, and keeps the fd's
 * number, its dups, its sharing with other tasks, close-on-exec, locks and
 * owner: a kind's handler only saves and makes the open file description.
 *
 * @fd the number, @flags the O_* status flags without O_CLOEXEC, @pos the
 * offset, @mode the st_mode of its file, @path its /proc link at the dump.
 * @payload, @payload_len (restore): what the kind's dump handler saved
 * with crf_fd_save_payload() (NULL, 0: nothing).  @saved is the owner's,
 * for crf_fd_save_payload(): a handler leaves it alone.  @copy (dump): crf's
 * own copy of the task's fd (pidfd_getfd), the same open file description,
 * for the handler to read its state from; the owner closes it after the
 * handler returns.  -1 at the restore.
 */
struct crf_payload {
	void *buf; /* malloc()ed; the fd table's owner frees it */
	size_t len;
};

struct crf_fd_info {
	int fd;
	bool cloexec;
	unsigned int flags;
	uint64_t pos;
	mode_t mode;
	const char *path;
	const void *payload;
	size_t payload_len;
	struct crf_payload *saved;
	int copy;
};

/* The most a kind may save per fd with crf_fd_save_payload(). */
#define CRF_FD_PAYLOAD_MAX (1u << 20)

/*
 * Dump handler of an fd kind: save @len bytes of @buf (at most
 * CRF_FD_PAYLOAD_MAX) as the kind's own state of fd @obj in the fd's
 * record; the restore hands them back in crf_fd_info's @payload.  A second
 * call replaces the first.  0, or -EINVAL / -E2BIG / -ENOMEM (logged).
 */
int crf_fd_save_payload(struct crf_ctx *ctx, const struct crf_object *obj, const void *buf,
			size_t len);

/*
 * The plugin that declares handler @kind (as crf_kind_find() returned it)
 * and, in *@version when not NULL, its version; NULL when @kind is not in
 * the registry.  What an fd table's owner records with each fd.
 */
const char *crf_kind_plugin(const struct crf_ctx *ctx, const struct crf_kind *kind,
			    const char **version);

/*
 * Call @kind's ->dump on @obj (0 when it has none) as a hook of the plugin
 * that declares it: crf_ctx_priv(), crf_ctx_config() and the log's origin
 * are that plugin's.  What the owner of a table calls for each object it
 * walks.  0 or -errno.
 */
int crf_kind_dump(struct crf_ctx *ctx, const struct crf_object *obj, const struct crf_kind *kind);

/*
 * At restore, any class: the handler of the object @obj->cls and
 * @obj->kind, @obj->kind the name of the handler that dumped it (as the
 * images recorded it), and @plugin the plugin recorded with it (NULL:
 * whichever plugin, in dump order).  The handler is the enabled one of
 * that name of @plugin: another plugin's handler of the same name never
 * reads a record it did not write.
 *
 * crf_kind_check() returns 0 when there is one with a ->restore, or
 * -ENOTSUP after logging one error naming the object, the kind, @plugin
 * and why it is unavailable (not loaded, disabled, the kind switched off,
 * no restore): for a restore-prepare hook that refuses before anything is
 * made.  crf_kind_restore() checks the same and calls its ->restore on
 * @obj as a hook of that plugin (see crf_kind_dump); for an fd, the new
 * fd (O_CLOEXEC) that the caller installs, or -errno.
 */
int crf_kind_check(struct crf_ctx *ctx, const struct crf_object *obj, const char *plugin);

/*
 * ABI 1.6, restore-prepare only: create the restored process @pid (its PID
 * in crf's namespace) straight in the cgroup v2 directory @dirfd (opened
 * O_RDONLY | O_DIRECTORY, kept open by the caller until restore-cleanup):
 * clone3() with CLONE_INTO_CGROUP, so that it never runs outside it.  The
 * cgroup plugin's.  0, -EINVAL (another stage, a bad @pid or @dirfd),
 * -EEXIST (@pid has one already), -ENOMEM.
 */
int crf_rst_clone_into_cgroup(struct crf_ctx *ctx, pid_t pid, int dirfd);
int crf_kind_restore(struct crf_ctx *ctx, const struct crf_object *obj, const char *plugin);

/* ---- end of ABI 1.5 (fd kinds at restore) ------------------------------- */

/* ---- ABI 1.5: VMA and namespace kinds, dumped and restored ------------- */

/*
 * ABI 1.5: what a CRF_OBJ_VMA object's @data points to, at the dump (the
 * core's dispatch, the mem plugin's question) and at the restore (the
 * handler's @restore, from what mem recorded).  Only ever appended: read
 * @size before a field added later.
 */
struct crf_vma_info {
	uint32_t size;	     /* sizeof(struct crf_vma_info) of the writer */
	uint64_t start, end; /* the range, as in /proc/PID/maps */
	uint64_t pgoff;	     /* file offset in bytes */
	int prot;	     /* PROT_READ | PROT_WRITE | PROT_EXEC */
	int flags;	     /* MAP_SHARED or MAP_PRIVATE ('s' or 'p' in maps) */
	const char *path;    /* the name field of maps ("" for none) */
	uint32_t dev_major, dev_minor;
	uint64_t inode; /* at the dump; 0 at the restore */
};

/*
 * ABI 1.5: what a CRF_OBJ_NS object's @data points to.  At the dump @id is
 * the inode of the namespace (the number in "uts:[4026532281]") and
 * @inherited false.  At the restore (the handler's @restore, in the task,
 * see crf_kind_restore) @id is the inode it had at the dump, and
 * @inherited says whether the task, as forked, is in it already: its
 * parent restored it (or was forked into it) before forking the task, so
 * the handler has nothing to make, only to check.
 */
struct crf_ns_info {
	uint32_t size;	  /* sizeof(struct crf_ns_info) of the writer */
	const char *kind; /* "uts", "net"... as @kind of the object */
	uint64_t id;	  /* the namespace's inode at the dump */
	pid_t tid;	  /* the thread (the process itself at the restore) */
	bool inherited;
};

/*
 * ABI 1.5: the object the core dispatches for mapping @vi of process @pid
 * (@id @index): @kind as the core classifies it (crf_vma_kind), @desc
 * "START-END NAME" written to @desc (@len bytes, 4200 are enough), @data
 * @vi.  A plugin that walks mappings itself (mem) asks the registry with
 * the same object, and gets the same answer.
 */
void crf_vma_object(const struct crf_vma_info *vi, pid_t pid, int index, char *desc, size_t len,
		    struct crf_object *obj);

/*
 * ABI 1.5: the kind of a mapping from the name field of its maps line ("" for
 * none) and whether it is shared: one of the VMA kinds above, or @name
 * itself for a special mapping the classifier does not know ("[uprobes]").
 */
const char *crf_vma_kind(const char *name, bool shared);

/*
 * ABI 1.5: the object the core dispatches for namespace @ni of thread
 * @ni->tid of process @pid, whose /proc link reads @link ("uts:[4026532281]";
 * "pid:[?]" for a pid_for_children namespace that has no process yet):
 * @desc the link, and which thread and why where it matters, written to
 * @desc (@len bytes, 192 are enough), @data @ni.
 */
void crf_ns_object(const struct crf_ns_info *ni, const char *link, pid_t pid, char *desc,
		   size_t len, struct crf_object *obj);

/* ABI 1.5: who claims an object (crf_kind_owner). */
struct crf_kind_owner {
	const struct crf_kind *kind;
	const char *plugin;  /* its plugin's name */
	const char *version; /* and version */
};

/*
 * ABI 1.5: the enabled handler that claims @obj, as the dump's dispatch
 * found it, and its plugin: for a plugin that saves a class of objects
 * (mem: every mapping, ns: every namespace) to leave the objects another
 * plugin claimed to that plugin, and record who it was.  0, -ENOTSUP after
 * the registry's one error, or -ENOENT (not logged) when the context has no
 * registry (a plugin driven outside crf, as unit tests do).
 *
 * Which handler claims an object: among the enabled plugins, the handlers
 * of its class that have @match are asked first, in dump order, then those
 * without @match by @name, in dump order.  So a vendor's handler that
 * matches "/dev/foo" mappings gets them although mem declares "file", and
 * wherever its plugin sits in the dump order.
 */
int crf_kind_owner(struct crf_ctx *ctx, const struct crf_object *obj, struct crf_kind_owner *out);

/*
 * ABI 1.5: restore @obj through the handler that saved it: the handler of
 * class @obj->cls named @obj->kind (by @name, @match is not asked) of an
 * enabled plugin, its kind not switched off, first in restore order; @plugin
 * (the name recorded at the dump, or NULL for any) must own it.  Its
 * @restore runs as that plugin (its context, private pointer, INI keys and
 * log prefix), in the caller's stage and task, so it may use the services of
 * that stage (crf_rst_add_vma() in restore-task).  Returns what @restore
 * returned, or -ENOTSUP after one error naming the object, the kind and the
 * plugin when there is no such handler, its plugin is disabled or missing,
 * the kind is switched off, or it has no @restore.
 */
int crf_kind_restore(struct crf_ctx *ctx, const struct crf_object *obj, const char *plugin);

/*
 * ABI 1.5: the same check without the call, for restore-prepare: a restore
 * whose images hold an object no handler can restore is refused before
 * anything is forked.  0 or -ENOTSUP (logged as crf_kind_restore does).
 * ABI 1.7: then the handler's plugin's check of that kind, if it declares
 * one (struct crf_kind_check), and what it returned.
 */
int crf_kind_check(struct crf_ctx *ctx, const struct crf_object *obj, const char *plugin);

#ifdef __cplusplus
}
#endif

#endif
