// SPDX-License-Identifier: GPL-2.0-only
/*
 * img-tamper DIR FILE EDIT...: rewrite one record image of a real dump as a
 * hostile one would be, for hostile-images.sh.  The image is read and
 * written again through libcrf, so every frame and checksum is right: only
 * what the restore checks of the records themselves can stop it.
 *
 * Each EDIT, applied in order:
 *
 *   N:PATH=VALUE   set field PATH of record N (from 0) to VALUE: PATH is
 *                  dotted field names, a repeated field with its index
 *                  ("threads[1].tid", "vma.start", "pages.runs[0].off");
 *                  integers in C notation (0x...), strings and bytes as they are; a
 *                  field of a oneof only in the record that has it set
 *   N:PATH+=VALUE  add VALUE to an integer field
 *   dup:N:AT       insert a copy of record N before record AT
 *
 * The schemas are the core's and the plugins': the header's type names one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/image.h>

#include "cgroup.pb-c.h"
#include "core.pb-c.h"
#include "cpu.pb-c.h"
#include "files.pb-c.h"
#include "inet.pb-c.h"
#include "mm.pb-c.h"
#include "ns.pb-c.h"
#include "netns.pb-c.h"
#include "pstree.pb-c.h"
#include "time.pb-c.h"
#include "unix.pb-c.h"

static const ProtobufCMessageDescriptor *const schemas[] = {
	&crf__core__process__descriptor,    &crf__core__task_core__descriptor,
	&crf__core__cpu__descriptor,	    &crf__mem__mm_entry__descriptor,
	&crf__mem__shmem_entry__descriptor, &crf__files__fd__descriptor,
	&crf__files__pipe__descriptor,	    &crf__files__shared_fd__descriptor,
	&crf__files__tty__descriptor,	    &crf__files__unlinked_file__descriptor,
	&crf__files__external__descriptor,  &crf__cgroup__task_cgroups__descriptor,
	&crf__ns__ns_claim__descriptor,	    &crf__ns__time_ns__descriptor,
	&crf__net__unix_sk__descriptor,	    &crf__net__net_lock__descriptor,
	&crf__net__net_ns__descriptor,
};

struct recs {
	ProtobufCMessage **v;
	size_t n;
};

static const ProtobufCMessageDescriptor *schema(const char *type)
{
	for (size_t i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++)
		if (!strcmp(schemas[i]->name, type))
			return schemas[i];
	return NULL;
}

/* The field named @name of @m, with its index "[i]" if repeated; the address of its value. */
static void *field(ProtobufCMessage *m, const char *name, const ProtobufCFieldDescriptor **out)
{
	char base[64];
	size_t idx = 0, len = strcspn(name, "[");
	const ProtobufCFieldDescriptor *f;
	uint8_t *p = (uint8_t *)m;

	if (len >= sizeof(base))
		return NULL;
	memcpy(base, name, len);
	base[len] = 0;
	if (name[len] == '[')
		idx = strtoul(name + len + 1, NULL, 0);
	f = protobuf_c_message_descriptor_get_field_by_name(m->descriptor, base);
	if (!f)
		return NULL;
	*out = f;
	if (f->label == PROTOBUF_C_LABEL_REPEATED) {
		size_t n = *(size_t *)(p + f->quantifier_offset);
		size_t sz = f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING
				    ? sizeof(void *)
			    : f->type == PROTOBUF_C_TYPE_BYTES ? sizeof(ProtobufCBinaryData)
			    : f->type == PROTOBUF_C_TYPE_UINT64 ||
					    f->type == PROTOBUF_C_TYPE_INT64 ||
					    f->type == PROTOBUF_C_TYPE_SINT64
				    ? 8
				    : 4;

		if (idx >= n)
			return NULL;
		return *(uint8_t **)(p + f->offset) + idx * sz;
	}
	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
		if (*(uint32_t *)(p + f->quantifier_offset) != f->id)
			return NULL;
	} else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->type != PROTOBUF_C_TYPE_MESSAGE &&
		   f->type != PROTOBUF_C_TYPE_STRING) {
		*(protobuf_c_boolean *)(p + f->quantifier_offset) = 1;
	}
	return p + f->offset;
}

static int set(ProtobufCMessage *m, const char *path, const char *value, bool add)
{
	const ProtobufCFieldDescriptor *f = NULL;
	char first[128];
	size_t len = strcspn(path, ".");
	long long v = strtoll(value, NULL, 0);
	void *at;

	if (len >= sizeof(first))
		return -1;
	memcpy(first, path, len);
	first[len] = 0;
	at = field(m, first, &f);
	if (!at)
		return -1;
	if (path[len] == '.')
		return f->type == PROTOBUF_C_TYPE_MESSAGE && *(void **)at
			       ? set(*(ProtobufCMessage **)at, path + len + 1, value, add)
			       : -1;
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_ENUM:
		*(int32_t *)at = (int32_t)((add ? *(int32_t *)at : 0) + v);
		return 0;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		*(uint64_t *)at = (add ? *(uint64_t *)at : 0) + (uint64_t)v;
		return 0;
	case PROTOBUF_C_TYPE_BOOL:
		*(protobuf_c_boolean *)at = v != 0;
		return 0;
	case PROTOBUF_C_TYPE_STRING:
		/* Freed with the record by protobuf-c's allocator (malloc). */
		if (*(char **)at != f->default_value)
			free(*(char **)at);
		*(char **)at = strdup(value);
		return *(char **)at ? 0 : -1;
	case PROTOBUF_C_TYPE_BYTES: {
		/* The bytes of the string as they are. */
		ProtobufCBinaryData *b = at;
		const ProtobufCBinaryData *def = f->default_value;

		if (!def || b->data != def->data)
			free(b->data);
		b->len = strlen(value);
		b->data = (uint8_t *)strdup(value);
		return b->data ? 0 : -1;
	}
	default:
		return -1;
	}
}

/* A deep copy, through the wire format. */
static ProtobufCMessage *copy(const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(n ? n : 1);
	ProtobufCMessage *c;

	if (!buf)
		return NULL;
	protobuf_c_message_pack(m, buf);
	c = protobuf_c_message_unpack(m->descriptor, NULL, n, buf);
	free(buf);
	return c;
}

static int edit(struct recs *r, const char *e)
{
	unsigned long n, at;
	char path[256];
	const char *eq;
	bool add;

	if (sscanf(e, "dup:%lu:%lu", &n, &at) == 2) {
		ProtobufCMessage **v = realloc(r->v, (r->n + 1) * sizeof(*v));

		if (!v || n >= r->n || at > r->n)
			return -1;
		r->v = v;
		memmove(v + at + 1, v + at, (r->n - at) * sizeof(*v));
		v[at] = copy(v[n < at ? n : n + 1]);
		r->n++;
		return v[at] ? 0 : -1;
	}
	eq = strchr(e, '=');
	if (sscanf(e, "%lu:", &n) != 1 || !eq || n >= r->n || !strchr(e, ':'))
		return -1;
	add = eq[-1] == '+';
	snprintf(path, sizeof(path), "%.*s", (int)(eq - add - strchr(e, ':') - 1),
		 strchr(e, ':') + 1);
	return set(r->v[n], path, eq + 1, add);
}

int main(int argc, char **argv)
{
	struct crf_imgdir *dir = NULL, *out = NULL;
	const ProtobufCMessageDescriptor *d;
	char tmp[4096], from[4200], to[4200];
	struct recs r = {0};
	struct crf_img *img;
	ProtobufCMessage *m;
	int ret = 1, rr;

	if (argc < 4) {
		fprintf(stderr, "usage: img-tamper DIR FILE EDIT...\n");
		return 2;
	}
	snprintf(tmp, sizeof(tmp), "%s/.tamper", argv[1]);
	if (crf_imgdir_open(argv[1], CRF_IMGDIR_READ, &dir) < 0)
		return 1;
	if (crf_img_open_any(dir, argv[2], &img) < 0) {
		crf_imgdir_close(dir);
		return 1;
	}
	d = schema(crf_img_type(img));
	crf_img_close(img);
	if (!d || crf_img_open(dir, argv[2], d, &img) < 0) {
		fprintf(stderr, "img-tamper: %s: no schema here\n", argv[2]);
		crf_imgdir_close(dir);
		return 1;
	}
	while ((rr = crf_img_read(img, &m)) > 0) {
		ProtobufCMessage **v = realloc(r.v, (r.n + 1) * sizeof(*v));

		if (!v) {
			protobuf_c_message_free_unpacked(m, NULL);
			rr = -1;
			break;
		}
		r.v = v;
		r.v[r.n++] = m;
	}
	crf_img_close(img);
	if (rr < 0)
		goto done;
	for (int i = 3; i < argc; i++)
		if (edit(&r, argv[i]) < 0) {
			fprintf(stderr, "img-tamper: %s: cannot apply '%s'\n", argv[2], argv[i]);
			goto done;
		}
	if (crf_imgdir_open(tmp, CRF_IMGDIR_WRITE, &out) < 0 ||
	    crf_img_create(out, argv[2], d, &img) < 0)
		goto done;
	rr = 0;
	for (size_t i = 0; rr >= 0 && i < r.n; i++)
		rr = crf_img_write(img, r.v[i]);
	if (crf_img_finish(img, rr) < 0)
		goto done;
	snprintf(from, sizeof(from), "%s/%s", tmp, argv[2]);
	snprintf(to, sizeof(to), "%s/%s", argv[1], argv[2]);
	ret = rename(from, to) < 0;
done:
	for (size_t i = 0; i < r.n; i++)
		protobuf_c_message_free_unpacked(r.v[i], NULL);
	free(r.v);
	if (out)
		crf_imgdir_close(out);
	crf_imgdir_close(dir);
	rmdir(tmp);
	return ret;
}
