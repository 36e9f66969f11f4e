/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The plugin set: every plugin the configuration names, loaded, with its
 * place in both orders, its kinds in the dispatch table, and its probe
 * results.  Built once per command from the configuration and the
 * command-line selection.
 */
#ifndef CRF_PLUGIN_SET_H
#define CRF_PLUGIN_SET_H

#include <crf/plugin.h>

#include "config.h"
#include "crf-private.h"
#include "graph.h"
#include "util.h"

struct crf_plugin_info {
	struct crf_plugin_state st; /* what libcrf's services see */
	struct crf_plugin desc;	    /* the descriptor, zero-extended to our size */
	crf_hook_fn hooks[CRF_STAGE__COUNT];
	char *so;   /* the INI 'so' value */
	char *path; /* the file found for it, or NULL */
	void *handle;
	char *load_error;  /* why the object could not be used */
	char *why_off;	   /* "disabled by FILE:LINE", "disabled by --disable" */
	struct crf_kv *kv; /* config keys handed to the plugin */
	size_t n_kv;
	struct crf_kind_off *off; /* kinds switched off (strings owned) */
	size_t n_off;
	/*
	 * ABI 1.5: it holds the device: its dump-pause or a dump-frozen hook
	 * succeeded and dump-undo or dump-resume is owed; a restore-resume
	 * hook succeeded and restore-undo is owed if the restore fails.
	 */
	bool owes_dump, owes_restore;
};

/* What the command line chose. */
struct crf_select {
	struct strv only; /* --plugins: only these are enabled */
	bool only_set;
	struct strv disable; /* --disable */
	struct strv enable;  /* --enable */
	/*
	 * restore: the plugins that wrote the dump (its inventory).  Any other
	 * is switched off, whatever the configuration says; these keep the
	 * configuration's and the options' choice, which the inventory check
	 * then refuses if it is "off".
	 */
	struct strv image;
	bool image_set;
};

struct crf_plugin_set {
	struct crf_plugin_info *p;
	size_t n;
	struct crf_graph graph; /* graph.nodes[i] is p[i] */
	struct crf_registry registry;
	/* protobuf schemas of all loaded plugins, NULL-terminated */
	const ProtobufCMessageDescriptor **schemas;
};

enum {
	/* Keep going past load and graph errors (for `crf plugins`); the
	 * first error is still returned. */
	CRF_SET_TOLERANT = 1 << 0,
	/* Record why an enabled plugin's object cannot be used (load_error),
	 * but neither log it nor fail: restore names the dump with it. */
	CRF_SET_DEFER_LOAD = 1 << 1,
};

int plugin_set_build(struct crf_plugin_set *set, const struct crf_config *conf,
		     const struct strv *plugin_dirs, const struct crf_select *sel, unsigned flags);
void plugin_set_free(struct crf_plugin_set *set);

/*
 * Run every enabled plugin's probe in dump order.  Returns the number of
 * required features found missing (each logged as an error unless @quiet),
 * or a negative errno when a probe failed to run.
 */
int plugin_set_probe(struct crf_plugin_set *set, bool quiet);

/*
 * Run a stage's hooks in its order (dump order for probe and dump stages,
 * restore order for restore stages).  Stops at the first failure, except
 * the cleanup and give-back stages, which run every hook, in reverse order,
 * and return the first error.  The give-back stages (dump-undo, dump-resume,
 * restore-undo) call only the plugins that hold the device (owes_dump,
 * owes_restore), once each, and clear that.
 */
int plugin_set_run(struct crf_plugin_set *set, enum crf_stage stage, struct crf_imgdir *images,
		   pid_t pid);
/* The same for a per-task stage, with the core's services for that task. */
int plugin_set_run_task(struct crf_plugin_set *set, enum crf_stage stage, struct crf_imgdir *images,
			pid_t pid, const struct crf_host_ops *ops, void *task);

/*
 * Dispatch @obj, an object the core met in a frozen task, to the handler
 * that claims it and run the handler's dump (when it has one) as its
 * plugin, in the dump-task stage for @obj->pid.  0, -ENOTSUP after one
 * error naming the object when no enabled handler claims it, or the
 * handler's error.
 */
int plugin_set_dispatch(struct crf_plugin_set *set, struct crf_imgdir *images,
			const struct crf_object *obj);

/* The plugin named @name, or NULL. */
struct crf_plugin_info *plugin_set_find(struct crf_plugin_set *set, const char *name);

/* Load one plugin's object and check its descriptor (loader.c). */
int plugin_load(struct crf_plugin_info *pi, const struct strv *dirs, bool report);
/*
 * Check a descriptor read from @file.  0, or -EPROTO with a message in @err
 * ("FILE: built against plugin ABI 2.0, crf provides 1.0").
 */
int plugin_check_abi(const struct crf_plugin *d, const char *file, char *err, size_t len);
void plugin_unload(struct crf_plugin_info *pi);

#endif
