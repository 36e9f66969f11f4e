// SPDX-License-Identifier: GPL-2.0-only
/* Finding, dlopen()ing and checking one plugin's shared object. */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <crf/log.h>

#include "plugin-set.h"

/* The smallest descriptor ABI 1.0 ever had: everything up to schemas. */
#define DESC_MIN_SIZE (offsetof(struct crf_plugin, schemas) + sizeof(void *))

int plugin_check_abi(const struct crf_plugin *d, const char *file, char *err, size_t len)
{
	if (d->abi_major != CRF_PLUGIN_ABI_MAJOR || d->abi_minor > CRF_PLUGIN_ABI_MINOR) {
		snprintf(err, len, "%s: built against plugin ABI %u.%u, crf provides %u.%u", file,
			 d->abi_major, d->abi_minor, CRF_PLUGIN_ABI_MAJOR, CRF_PLUGIN_ABI_MINOR);
		return -EPROTO;
	}
	if (d->size < DESC_MIN_SIZE) {
		snprintf(err, len,
			 "%s: plugin descriptor is %u bytes, ABI %u.%u needs at least %zu", file,
			 d->size, d->abi_major, d->abi_minor, (size_t)DESC_MIN_SIZE);
		return -EPROTO;
	}
	if (!d->name || !d->version) {
		snprintf(err, len, "%s: plugin descriptor has no %s", file,
			 d->name ? "version" : "name");
		return -EPROTO;
	}
	return 0;
}

/* A bare name is looked up in each plugin directory; a path is used as is. */
static char *resolve(const char *so, const struct strv *dirs)
{
	if (strchr(so, '/'))
		return strdup(so);
	for (size_t i = 0; i < dirs->n; i++) {
		char *path = xasprintf("%s/%s", dirs->v[i], so);

		if (path && access(path, F_OK) == 0)
			return path;
		free(path);
	}
	return NULL;
}

/*
 * libcrf has one symbol version node per ABI minor (libcrf.sym), so a plugin
 * that calls a function of a newer minor than this libcrf has is refused by
 * dlopen() itself: "LIB: version `CRF_1.5' not found (required by PLUGIN)".
 * Say it in the plugin's terms.  False when @e is another error.
 */
static bool newer_libcrf(const char *path, const char *e, char *msg, size_t len)
{
	const char *v = strstr(e, ": version `");
	unsigned major, minor;
	Dl_info lib = {0};
	int n;

	if (!v)
		v = strstr(e, ": version '");
	if (!v || sscanf(v + strlen(": version `"), "CRF_%u.%u%n", &major, &minor, &n) != 2 ||
	    !strchr("`'", v[strlen(": version `") + (size_t)n]))
		return false;
	if (!dladdr((void *)crf_log, &lib) || !lib.dli_fname)
		lib.dli_fname = "libcrf";
	snprintf(msg, len,
		 "%s needs libcrf version CRF_%u.%u (plugin ABI %u.%u), which crf's %s lacks: it "
		 "has CRF_%u.0 to CRF_%u.%u (plugin ABI %u.%u); the plugin was built against a "
		 "newer crf: rebuild it against this one",
		 path, major, minor, major, minor, lib.dli_fname, CRF_PLUGIN_ABI_MAJOR,
		 CRF_PLUGIN_ABI_MAJOR, CRF_PLUGIN_ABI_MINOR, CRF_PLUGIN_ABI_MAJOR,
		 CRF_PLUGIN_ABI_MINOR);
	return true;
}

static int fail(struct crf_plugin_info *pi, bool report, int err, const char *msg)
{
	free(pi->load_error);
	pi->load_error = strdup(msg);
	if (report)
		crf_error("plugin '%s': %s", pi->st.name, msg);
	return err;
}

/*
 * Copy the descriptor and its hook array into full-size zeroed copies, so a
 * plugin built against an older minor (shorter struct, fewer hooks) is read
 * without running off its end.
 */
static void copy_descriptor(struct crf_plugin_info *pi, const struct crf_plugin *d)
{
	size_t n = d->size < sizeof(pi->desc) ? d->size : sizeof(pi->desc);
	size_t nh = d->n_hooks < CRF_STAGE__COUNT ? d->n_hooks : CRF_STAGE__COUNT;

	memset(&pi->desc, 0, sizeof(pi->desc));
	memcpy(&pi->desc, d, n);
	memset(pi->hooks, 0, sizeof(pi->hooks));
	if (d->hooks)
		memcpy(pi->hooks, d->hooks, nh * sizeof(pi->hooks[0]));
	pi->desc.hooks = pi->hooks;
	pi->desc.n_hooks = CRF_STAGE__COUNT;
	pi->st.desc = &pi->desc;
}

int plugin_load(struct crf_plugin_info *pi, const struct strv *dirs, bool report)
{
	const struct crf_plugin *d;
	char msg[1024];
	int r;

	pi->path = resolve(pi->so, dirs);
	if (!pi->path) {
		_cleanup_free_ char *where = strv_join(dirs, ":");

		snprintf(msg, sizeof(msg), "%s not found in %s", pi->so,
			 where && *where ? where : "(no plugin directory)");
		return fail(pi, report, -ENOENT, msg);
	}
	pi->handle = dlopen(pi->path, RTLD_NOW | RTLD_LOCAL);
	if (!pi->handle) {
		const char *e = dlerror();

		if (!e)
			e = "unknown error";
		if (newer_libcrf(pi->path, e, msg, sizeof(msg)))
			return fail(pi, report, -EPROTO, msg);
		snprintf(msg, sizeof(msg), "cannot load: %s", e);
		return fail(pi, report, -ENOEXEC, msg);
	}
	dlerror();
	d = dlsym(pi->handle, CRF_PLUGIN_SYMBOL);
	if (!d) {
		const char *e = dlerror();

		snprintf(msg, sizeof(msg), "%s is not a crf plugin: %s", pi->path,
			 e ? e : "no " CRF_PLUGIN_SYMBOL);
		return fail(pi, report, -ENOEXEC, msg);
	}
	r = plugin_check_abi(d, pi->path, msg, sizeof(msg));
	if (r < 0)
		return fail(pi, report, r, msg);
	if (strcmp(d->name, pi->st.name)) {
		snprintf(msg, sizeof(msg), "%s holds plugin '%s', not '%s'", pi->path, d->name,
			 pi->st.name);
		return fail(pi, report, -EPROTO, msg);
	}
	copy_descriptor(pi, d);
	return 0;
}

void plugin_unload(struct crf_plugin_info *pi)
{
	pi->st.desc = NULL;
	if (pi->handle)
		dlclose(pi->handle);
	pi->handle = NULL;
}
