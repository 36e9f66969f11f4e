/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * crf-private.h - what libcrf shares with the crf binary and the in-tree
 * tests, and never with plugins.  Functions named crf__* are exported in
 * the CRF_PRIVATE version node of libcrf.
 */
#ifndef CRF_PRIVATE_H
#define CRF_PRIVATE_H

#include <stdio.h>

#include <crf/image.h>
#include <crf/log.h>
#include <crf/plugin.h>

/* A key of a plugin's INI section as handed to the plugin. */
struct crf_kv {
	const char *key;
	const char *value;
};

struct crf_probe_result {
	char *feature;
	char *why;
	bool supported;
	bool required;
};

/* One plugin as the services see it; owned by the core's plugin set. */
struct crf_plugin_state {
	const char *name;
	const struct crf_plugin *desc; /* NULL when its object was not loaded */
	bool enabled;
	const char *why_off;	     /* set when !enabled or not loaded */
	const struct crf_kv *config; /* the keys the plugin declared */
	size_t n_config;
	void *priv;
	struct crf_probe_result *probes;
	size_t n_probes;
	/* Kinds of the plugin switched off (disable-kinds, --disable P:KIND). */
	const struct crf_kind_off {
		const char *kind;
		const char *why; /* "switched off by FILE:LINE" */
	} * kinds_off;
	size_t n_kinds_off;
};

/* Handlers of every plugin, enabled ones first in dump order. */
struct crf_registry {
	struct crf_registry_entry {
		const struct crf_kind *kind;
		struct crf_plugin_state *owner;
	} * entries;
	size_t n, cap;
};

struct crf_rst_vma;
struct crf_rst_mm;

/* The objects of crf_rst_object (objects.c); zero-initialised, sorted by key. */
struct crf_objects {
	struct crf_object_ent {
		char *key;
		int fd; /* the table's own, O_CLOEXEC */
	} * v;
	size_t n, cap;
};

/* crf_rst_object on table @o; the fd or -errno (logged). */
int crf__objects_get(struct crf_objects *o, const char *key, int (*create)(void *arg), void *arg,
		     bool *created);
/* Close every object's fd and empty @o. */
void crf__objects_free(struct crf_objects *o);

/*
 * What the core does for the services of crf/parasite.h and crf/restore.h;
 * @task is the core's own per-task state.  A NULL member answers -ENOTCONN.
 */
struct crf_host_ops {
	long (*parasite_syscall)(void *task, long nr, const long args[6]);
	int (*parasite_scratch)(void *task, uint64_t *addr, size_t *size);
	int (*parasite_rw)(void *task, uint64_t addr, void *buf, size_t len, bool write);
	int (*rst_add_vma)(void *task, const struct crf_rst_vma *vma);
	int (*rst_add_pages)(void *task, struct crf_img *blob, uint64_t vaddr, uint64_t len,
			     uint64_t off);
	int (*rst_set_mm)(void *task, const struct crf_rst_mm *mm);
	int (*rst_set_vdso)(void *task, uint64_t vdso);
	int (*parasite_mapping)(void *task, uint64_t *start, uint64_t *len);
	int (*rst_keep_fd)(void *task, int fd, int number, bool cloexec);
	int (*rst_at_fds_placed)(void *task, int (*fn)(void *arg), void *arg,
				 void (*release)(void *arg));
	int (*rst_object)(void *task, const char *key, int (*create)(void *arg), void *arg,
			  bool *created);
};

struct crf_ctx {
	enum crf_stage stage;
	struct crf_plugin_state *plugin;
	struct crf_registry *registry;
	struct crf_imgdir *images;
	pid_t pid;
	const struct crf_host_ops *ops;
	void *task;
};

/* Logging set-up: level, optional log file (NULL: none), the "crf" program name. */
int crf__log_setup(enum crf_log_level level, const char *log_file);
/* Progress lines: 0 auto (a terminal, after half a second), 1 always, -1 never. */
void crf__log_set_progress(int mode);
void crf__log_close(void);
enum crf_log_level crf__log_level(void);
/* Name the plugin whose code runs on this thread (NULL: the core); returns the old one. */
const char *crf__log_set_origin(const char *plugin);
/*
 * From now on, write no message anywhere: keep the first error's text
 * (with its origin) for crf__log_captured(), NULL until there is one.  For
 * a restored task once the program's fds are at their numbers: its fd 2 is
 * the program's then, and a message written to it would land in the
 * program's log, pipe or terminal.
 */
void crf__log_capture(bool close_file);
const char *crf__log_captured(void);

/*
 * Stop requests (crf_stop_requested): crf__request_stop() is
 * async-signal-safe, for a signal handler; crf__stop_signal() says which
 * signal asked (0: none yet).
 */
void crf__request_stop(int sig);
int crf__stop_signal(void);

/*
 * A fault point (core/lib/fault.c, CRF_FAULT in the environment): 0, or
 * -EIO (logged) when the tests asked this point to fail.  @parasite_in: the
 * point lies where the parasite is in a task (for the trace).
 */
int crf__fault(const char *name, bool parasite_in);

/*
 * A fine fault point ("image write", "parasite call": @what, then @name,
 * the image or the command), counted only with CRF_FAULT_FINE=1.
 */
int crf__fault_fine(const char *what, const char *name, bool parasite_in);

/* Whether a stage belongs to a restore (its hooks run in restore order). */
bool crf__stage_is_restore(enum crf_stage stage);

/* The cgroup v2 directory fd process @pid is to be cloned into (crf_rst_clone_into_cgroup), or -1.
 */
int crf__clone_cgroup_fd(pid_t pid);

/* Add every kind of @owner's descriptor; 0 or -ENOMEM. */
int crf__registry_add(struct crf_registry *reg, struct crf_plugin_state *owner);
void crf__registry_free(struct crf_registry *reg);
/*
 * The entry (handler and owner) that claims @obj, as crf_kind_find()
 * finds it; NULL after logging the same one error.
 */
const struct crf_registry_entry *crf__registry_find(const struct crf_registry *reg,
						    const struct crf_object *obj);

/* Run @plugin's hook for @ctx->stage with the log origin set; 0 when it has none. */
int crf__run_hook(struct crf_ctx *ctx, struct crf_plugin_state *plugin);
void crf__probe_results_free(struct crf_plugin_state *plugin);

#endif
