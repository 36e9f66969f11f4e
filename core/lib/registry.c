// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dispatch table of object-kind handlers.  Plugins are added enabled
 * first, in dump order, then the disabled ones: those are never called, but
 * they let an error say which plugin would have handled an object.  A kind
 * an operator switched off (disable-kinds) is passed over the same way, so
 * another plugin may claim it; if none does, the error names the handler
 * and who switched it off.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "crf-private.h"

static const char *const class_names[CRF_OBJ__COUNT] = {
	[CRF_OBJ_FD] = "fd",	     [CRF_OBJ_VMA] = "vma",	    [CRF_OBJ_NS] = "ns",
	[CRF_OBJ_CGROUP] = "cgroup", [CRF_OBJ_FDTABLE] = "fdtable",
};

const char *crf_object_class_name(enum crf_object_class cls)
{
	if ((unsigned)cls >= CRF_OBJ__COUNT)
		return "object";
	return class_names[cls];
}

int crf__registry_add(struct crf_registry *reg, struct crf_plugin_state *owner)
{
	const struct crf_kind *k;

	if (!owner->desc || !owner->desc->kinds)
		return 0;
	for (k = owner->desc->kinds; k->name; k++) {
		if (reg->n == reg->cap) {
			size_t cap = reg->cap ? reg->cap * 2 : 16;
			struct crf_registry_entry *e = realloc(reg->entries, cap * sizeof(*e));

			if (!e)
				return -ENOMEM;
			reg->entries = e;
			reg->cap = cap;
		}
		reg->entries[reg->n].kind = k;
		reg->entries[reg->n].owner = owner;
		reg->n++;
	}
	return 0;
}

void crf__registry_free(struct crf_registry *reg)
{
	free(reg->entries);
	reg->entries = NULL;
	reg->n = reg->cap = 0;
}

static bool kind_claims(const struct crf_kind *k, const struct crf_object *obj)
{
	if (k->cls != obj->cls)
		return false;
	if (k->match)
		return k->match(obj);
	return obj->kind && !strcmp(k->name, obj->kind);
}

/* Why kind @k of @owner is switched off, or NULL when it is on. */
static const char *kind_off(const struct crf_plugin_state *owner, const struct crf_kind *k)
{
	for (size_t i = 0; i < owner->n_kinds_off; i++)
		if (!strcmp(owner->kinds_off[i].kind, k->name))
			return owner->kinds_off[i].why;
	return NULL;
}

/*
 * The object as a message names it.  An fd by its number, a mapping by its
 * range and file, a namespace by the kernel's name for it ("net:[4026532281]"),
 * a cgroup by its hierarchy and path, an fd table by its lowest fd.
 */
static void describe(const struct crf_object *obj, char *buf, size_t len)
{
	const char *desc = obj->desc ? obj->desc : "?";
	const char *name = obj->kind ? obj->kind : "unknown";

	switch (obj->cls) {
	case CRF_OBJ_VMA:
		snprintf(buf, len, "mapping %s (kind '%s')", desc, name);
		break;
	case CRF_OBJ_NS:
		snprintf(buf, len, "namespace %s (kind '%s')", desc, name);
		break;
	case CRF_OBJ_CGROUP:
		snprintf(buf, len, "cgroup %s (kind '%s')", desc, name);
		break;
	case CRF_OBJ_FDTABLE:
		snprintf(buf, len, "fd table: %s (kind '%s')", desc, name);
		break;
	default:
		snprintf(buf, len, "%s %d (%s, kind '%s')", crf_object_class_name(obj->cls),
			 obj->id, desc, name);
		break;
	}
}

/* No plugin at all declares the kind: one error naming the object. */
static void no_handler(const struct crf_object *obj, const char *what)
{
	/*
	 * The core dispatches a namespace only when it is not crf's own, so a
	 * task in it would come back in crf restore's: say why it matters.
	 */
	if (obj->cls == CRF_OBJ_NS)
		crf_error("pid %d: namespace %s is not the one crf runs in, and no plugin handles "
			  "namespaces of kind '%s'",
			  (int)obj->pid, obj->desc ? obj->desc : "?",
			  obj->kind ? obj->kind : "unknown");
	else
		crf_error("pid %d: %s: no plugin handles this kind", (int)obj->pid, what);
}

static const struct crf_registry_entry *find_entry(const struct crf_registry *reg,
						   const struct crf_object *obj,
						   const struct crf_registry_entry **off)
{
	*off = NULL;
	/* ABI 1.5: handlers with a match first, so that a match beats a name. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; reg && i < reg->n; i++) {
			const struct crf_registry_entry *e = &reg->entries[i];

			if ((e->kind->match != NULL) != (pass == 0) || !kind_claims(e->kind, obj))
				continue;
			if (e->owner->enabled && !kind_off(e->owner, e->kind))
				return e;
			if (!*off)
				*off = e;
			if (!e->owner->enabled)
				break;
		}
	return NULL;
}

const struct crf_registry_entry *crf__registry_find(const struct crf_registry *reg,
						    const struct crf_object *obj)
{
	const struct crf_registry_entry *off, *e = find_entry(reg, obj, &off);
	char what[768];

	if (e)
		return e;
	describe(obj, what, sizeof(what));
	if (!off)
		no_handler(obj, what);
	else if (off->owner->enabled)
		crf_error("pid %d: %s is handled by plugin '%s', whose '%s' handler is %s",
			  (int)obj->pid, what, off->owner->name, off->kind->name,
			  kind_off(off->owner, off->kind));
	else
		crf_error("pid %d: %s is handled by plugin '%s', which is %s", (int)obj->pid, what,
			  off->owner->name, off->owner->why_off ? off->owner->why_off : "disabled");
	return NULL;
}

int crf_kind_find(struct crf_ctx *ctx, const struct crf_object *obj, const struct crf_kind **kind)
{
	const struct crf_registry_entry *e = crf__registry_find(ctx->registry, obj);

	if (!e)
		return -ENOTSUP;
	*kind = e->kind;
	return 0;
}

/* ---- ABI 1.5: VMA and namespace objects --------------------------------- */

const char *crf_vma_kind(const char *name, bool shared)
{
	static const char *const vdso[] = {"[vdso]", "[vvar]", "[vvar_vclock]"};

	if (!*name)
		return shared ? "shmem" : "anon";
	if (name[0] == '[') {
		if (!strcmp(name, "[heap]") || !strncmp(name, "[stack", 6) ||
		    !strncmp(name, "[anon:", 6))
			return "anon";
		if (!strncmp(name, "[anon_shmem:", 12))
			return "shmem";
		for (size_t i = 0; i < sizeof(vdso) / sizeof(vdso[0]); i++)
			if (!strcmp(name, vdso[i]))
				return "vdso";
		return strcmp(name, "[vsyscall]") ? name : "vsyscall";
	}
	if (name[0] != '/')
		return name;
	if (!strcmp(name, "/dev/zero (deleted)"))
		return "shmem";
	if (!strncmp(name, "/memfd:", 7))
		return "memfd";
	if (!strncmp(name, "/SYSV", 5))
		return "sysv";
	return "file";
}

void crf_vma_object(const struct crf_vma_info *vi, pid_t pid, int index, char *desc, size_t len,
		    struct crf_object *obj)
{
	const char *path = vi->path ? vi->path : "";

	/* As /proc/PID/maps writes the range: at least 8 hex digits each. */
	snprintf(desc, len, "%08llx-%08llx %s", (unsigned long long)vi->start,
		 (unsigned long long)vi->end, *path ? path : "(anonymous)");
	*obj = (struct crf_object){
		.cls = CRF_OBJ_VMA,
		.kind = crf_vma_kind(path, vi->flags == MAP_SHARED),
		.desc = desc,
		.pid = pid,
		.id = index,
		.data = vi,
	};
}

void crf_ns_object(const struct crf_ns_info *ni, const char *link, pid_t pid, char *desc,
		   size_t len, struct crf_object *obj)
{
	bool empty = !strcmp(link, "pid:[?]");
	const char *children =
		!strstr(ni->kind, "_for_children") ? ""
		: empty ? " (for its children: made by unshare, no process in it yet)"
			: " (for its children)";

	if (ni->tid == pid)
		snprintf(desc, len, "%s%s", link, children);
	else
		snprintf(desc, len, "%s%s of thread %d", link, children, (int)ni->tid);
	*obj = (struct crf_object){
		.cls = CRF_OBJ_NS,
		.kind = ni->kind,
		.desc = desc,
		.pid = pid,
		.id = ni->tid,
		.data = ni,
	};
}

int crf_kind_owner(struct crf_ctx *ctx, const struct crf_object *obj, struct crf_kind_owner *out)
{
	const struct crf_registry_entry *e;

	/* Driven outside crf (a unit test): there is nobody else to ask. */
	if (!ctx->registry)
		return -ENOENT;
	e = crf__registry_find(ctx->registry, obj);
	if (!e)
		return -ENOTSUP;
	out->kind = e->kind;
	out->plugin = e->owner->name;
	out->version = e->owner->desc ? e->owner->desc->version : "";
	return 0;
}

/* ---- ABI 1.5: recording and restoring by kind --------------------------- */

static const struct crf_registry_entry *entry_of(const struct crf_registry *reg,
						 const struct crf_kind *kind)
{
	for (size_t i = 0; reg && kind && i < reg->n; i++)
		if (reg->entries[i].kind == kind)
			return &reg->entries[i];
	return NULL;
}

const char *crf_kind_plugin(const struct crf_ctx *ctx, const struct crf_kind *kind,
			    const char **version)
{
	const struct crf_registry_entry *e = entry_of(ctx->registry, kind);

	if (version)
		*version = e && e->owner->desc ? e->owner->desc->version : NULL;
	return e ? e->owner->name : NULL;
}

/* Run @fn of handler @e on @obj with the context and log origin of its plugin. */
static int call_as_owner(struct crf_ctx *ctx, const struct crf_registry_entry *e,
			 int (*fn)(struct crf_ctx *, const struct crf_object *),
			 const struct crf_object *obj)
{
	struct crf_ctx own = *ctx;
	const char *old;
	int r;

	own.plugin = e->owner;
	old = crf__log_set_origin(e->owner->name);
	r = fn(&own, obj);
	crf__log_set_origin(old);
	return r;
}

int crf_kind_dump(struct crf_ctx *ctx, const struct crf_object *obj, const struct crf_kind *kind)
{
	const struct crf_registry_entry *e = entry_of(ctx->registry, kind);
	int r;

	if (!e)
		return crf_error_errno(EINVAL, "pid %d: %s %d: a handler not in the registry",
				       (int)obj->pid, crf_object_class_name(obj->cls), obj->id);
	if (!kind->dump)
		return 0;
	r = call_as_owner(ctx, e, kind->dump, obj);
	return r > 0 ? 0 : r;
}

/*
 * The handler that restores @obj, dumped by @plugin (NULL: any): the first
 * entry of @obj's class whose name is @obj->kind, of @plugin, enabled, not
 * switched off, with a ->restore.  NULL after logging why there is none.
 */
static const struct crf_registry_entry *
find_restore(const struct crf_registry *reg, const struct crf_object *obj, const char *plugin)
{
	const struct crf_registry_entry *off = NULL;
	char what[768], by[160] = "";

	for (size_t i = 0; reg && obj->kind && i < reg->n; i++) {
		const struct crf_registry_entry *e = &reg->entries[i];

		if (e->kind->cls != obj->cls || strcmp(e->kind->name, obj->kind))
			continue;
		if (plugin && strcmp(e->owner->name, plugin))
			continue;
		if (e->owner->enabled && !kind_off(e->owner, e->kind) && e->kind->restore)
			return e;
		if (!off)
			off = e;
	}
	describe(obj, what, sizeof(what));
	if (plugin)
		snprintf(by, sizeof(by), ", dumped by plugin '%s',", plugin);
	if (!off)
		crf_error("pid %d: %s%s cannot be restored: %s", (int)obj->pid, what, by,
			  plugin ? "that plugin is not loaded, or has no handler of this kind"
				 : "no plugin handles this kind");
	else if (!off->owner->enabled)
		crf_error("pid %d: %s%s cannot be restored: plugin '%s' is %s", (int)obj->pid, what,
			  by, off->owner->name,
			  off->owner->why_off ? off->owner->why_off : "disabled");
	else if (kind_off(off->owner, off->kind))
		crf_error("pid %d: %s%s cannot be restored: the '%s' handler of plugin '%s' is %s",
			  (int)obj->pid, what, by, off->kind->name, off->owner->name,
			  kind_off(off->owner, off->kind));
	else
		crf_error("pid %d: %s%s cannot be restored: the '%s' handler of plugin '%s' has no "
			  "restore",
			  (int)obj->pid, what, by, off->kind->name, off->owner->name);
	return NULL;
}

int crf_kind_check(struct crf_ctx *ctx, const struct crf_object *obj, const char *plugin)
{
	const struct crf_registry_entry *e = find_restore(ctx->registry, obj, plugin);
	const struct crf_kind_check *c;

	if (!e)
		return -ENOTSUP;
	for (c = e->owner->desc ? e->owner->desc->checks : NULL; c && c->name; c++)
		if (c->cls == e->kind->cls && !strcmp(c->name, e->kind->name) && c->check)
			return call_as_owner(ctx, e, c->check, obj);
	return 0;
}

int crf_kind_restore(struct crf_ctx *ctx, const struct crf_object *obj, const char *plugin)
{
	const struct crf_registry_entry *e = find_restore(ctx->registry, obj, plugin);

	if (!e)
		return -ENOTSUP;
	return call_as_owner(ctx, e, e->kind->restore, obj);
}

int crf_fd_save_payload(struct crf_ctx *ctx, const struct crf_object *obj, const void *buf,
			size_t len)
{
	const struct crf_fd_info *info = obj ? obj->data : NULL;
	void *copy;

	(void)ctx;
	if (!obj || obj->cls != CRF_OBJ_FD || !info || !info->saved || (len && !buf))
		return crf_error_errno(EINVAL, "crf_fd_save_payload: not an fd being dumped");
	if (len > CRF_FD_PAYLOAD_MAX)
		return crf_error_errno(E2BIG, "pid %d: fd %d: a payload of %zu bytes (at most %u)",
				       (int)obj->pid, obj->id, len, CRF_FD_PAYLOAD_MAX);
	copy = malloc(len ? len : 1);
	if (!copy)
		return crf_error_errno(ENOMEM, "pid %d: fd %d: payload", (int)obj->pid, obj->id);
	if (len)
		memcpy(copy, buf, len);
	free(info->saved->buf);
	info->saved->buf = copy;
	info->saved->len = len;
	return 0;
}
