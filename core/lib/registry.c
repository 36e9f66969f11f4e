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
#include <stdlib.h>
#include <string.h>

#include "crf-private.h"

static const char *const class_names[CRF_OBJ__COUNT] = {
	[CRF_OBJ_FD] = "fd",
	[CRF_OBJ_VMA] = "vma",
	[CRF_OBJ_NS] = "ns",
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

int crf_kind_find(struct crf_ctx *ctx, const struct crf_object *obj,
		  const struct crf_kind **kind)
{
	const struct crf_registry *reg = ctx->registry;
	const char *cls = crf_object_class_name(obj->cls);
	const char *desc = obj->desc ? obj->desc : "?";
	const char *name = obj->kind ? obj->kind : "unknown";
	const struct crf_registry_entry *off = NULL;

	for (size_t i = 0; reg && i < reg->n; i++) {
		const struct crf_registry_entry *e = &reg->entries[i];

		if (!kind_claims(e->kind, obj))
			continue;
		if (e->owner->enabled && !kind_off(e->owner, e->kind)) {
			*kind = e->kind;
			return 0;
		}
		if (!off)
			off = e;
		if (!e->owner->enabled)
			break;
	}
	if (!off) {
		crf_error("pid %d: %s %d (%s, kind '%s'): no plugin handles this kind",
			  (int)obj->pid, cls, obj->id, desc, name);
	} else if (off->owner->enabled) {
		crf_error("pid %d: %s %d (%s, kind '%s') is handled by plugin '%s', whose '%s' "
			  "handler is %s",
			  (int)obj->pid, cls, obj->id, desc, name, off->owner->name,
			  off->kind->name, kind_off(off->owner, off->kind));
	} else {
		crf_error("pid %d: %s %d (%s, kind '%s') is handled by plugin '%s', which is %s",
			  (int)obj->pid, cls, obj->id, desc, name, off->owner->name,
			  off->owner->why_off ? off->owner->why_off : "disabled");
	}
	return -ENOTSUP;
}
