// SPDX-License-Identifier: GPL-2.0-only
/*
 * `crf show`: images to JSON, by walking protobuf-c descriptors, so that
 * every plugin's schema is shown without code of its own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crf-private.h"
#include "image-internal.h"
#include "show.h"

static void print_message(FILE *f, const ProtobufCMessage *msg);

/* Length of the valid UTF-8 sequence at @p (RFC 3629), 0 if there is none. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		lo = p[0] == 0xe0 ? 0xa0 : lo; /* overlong */
		hi = p[0] == 0xed ? 0x9f : hi; /* surrogates */
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		lo = p[0] == 0xf0 ? 0x90 : lo; /* overlong */
		hi = p[0] == 0xf4 ? 0x8f : hi; /* past U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

static void json_char(FILE *f, unsigned char c)
{
	static const char short_esc[] = {['"'] = '"',  ['\\'] = '\\', ['\b'] = 'b', ['\f'] = 'f',
					 ['\n'] = 'n', ['\r'] = 'r',  ['\t'] = 't'};

	if (c < sizeof(short_esc) && short_esc[c])
		fprintf(f, "\\%c", short_esc[c]);
	else if (c < 0x20 || c == 0x7f)
		fprintf(f, "\\u%04x", c);
	else
		fputc(c, f);
}

/*
 * proto2 does not check that strings are UTF-8, and JSON must be: a byte
 * that starts no valid sequence is shown as U+FFFD.
 */
static void json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	fputc('"', f);
	while (n) {
		size_t len = *p < 0x80 ? 1 : utf8_len(p, n);

		if (*p < 0x80)
			json_char(f, *p);
		else if (len)
			fwrite(p, 1, len, f);
		else
			fputs("\\ufffd", f);
		len = len ? len : 1;
		p += len;
		n -= len;
	}
	fputc('"', f);
}

/*
 * Byte by byte, and without coverage in the fuzzer's build: its counters on
 * this loop were a fifth of the fuzzer's time and tell it nothing.
 */
#if defined(__clang__)
__attribute__((no_sanitize("coverage")))
#endif
static void
json_hex(FILE *f, const ProtobufCBinaryData *b)
{
	static const char digit[] = "0123456789abcdef";
	char buf[512];
	size_t at = 0;

	fputc('"', f);
	for (size_t i = 0; i < b->len; i++) {
		buf[at++] = digit[b->data[i] >> 4];
		buf[at++] = digit[b->data[i] & 15];
		if (at == sizeof(buf) || i + 1 == b->len) {
			fwrite(buf, 1, at, f);
			at = 0;
		}
	}
	fputc('"', f);
}

/* JSON has no NaN or infinities; they become strings. */
static void json_double(FILE *f, double v)
{
	if (isnan(v))
		fputs("\"nan\"", f);
	else if (isinf(v))
		fputs(v > 0 ? "\"inf\"" : "\"-inf\"", f);
	else
		fprintf(f, "%.17g", v);
}

static void json_enum(FILE *f, const ProtobufCEnumDescriptor *desc, int v)
{
	const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(desc, v);

	if (ev)
		json_string(f, ev->name);
	else
		fprintf(f, "%d", v);
}

/* Size of one element of a repeated field, as protobuf-c lays it out. */
static size_t value_size(ProtobufCType type)
{
	switch (type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return sizeof(uint32_t);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return sizeof(uint64_t);
	case PROTOBUF_C_TYPE_FLOAT:
		return sizeof(float);
	case PROTOBUF_C_TYPE_DOUBLE:
		return sizeof(double);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_ENUM:
		return sizeof(int);
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(ProtobufCMessage *);
	}
	return 0;
}

static void print_value(FILE *f, const ProtobufCFieldDescriptor *fd, const void *p)
{
	switch (fd->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		fprintf(f, "%" PRId32, *(const int32_t *)p);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		fprintf(f, "%" PRIu32, *(const uint32_t *)p);
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		fprintf(f, "%" PRId64, *(const int64_t *)p);
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		fprintf(f, "%" PRIu64, *(const uint64_t *)p);
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		json_double(f, *(const float *)p);
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		json_double(f, *(const double *)p);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		fputs(*(const protobuf_c_boolean *)p ? "true" : "false", f);
		break;
	case PROTOBUF_C_TYPE_ENUM:
		json_enum(f, fd->descriptor, *(const int *)p);
		break;
	case PROTOBUF_C_TYPE_STRING:
		if (*(char *const *)p)
			json_string(f, *(char *const *)p);
		else
			fputs("null", f);
		break;
	case PROTOBUF_C_TYPE_BYTES:
		json_hex(f, p);
		break;
	case PROTOBUF_C_TYPE_MESSAGE:
		if (*(ProtobufCMessage *const *)p)
			print_message(f, *(ProtobufCMessage *const *)p);
		else
			fputs("null", f);
		break;
	}
}

/*
 * Whether a singular field holds a value, by protobuf-c's rules: a oneof
 * member when its case is set, an optional scalar or bytes by its has_
 * flag, an optional string or message when it points somewhere other than
 * the default.  Required fields and proto3 plain fields always do.
 */
static bool field_present(const ProtobufCMessage *msg, const ProtobufCFieldDescriptor *fd)
{
	const uint8_t *base = (const uint8_t *)msg;
	bool by_pointer = fd->type == PROTOBUF_C_TYPE_STRING || fd->type == PROTOBUF_C_TYPE_MESSAGE;
	const void *ptr = by_pointer ? *(const void *const *)(base + fd->offset) : NULL;

	if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
		if (*(const uint32_t *)(base + fd->quantifier_offset) != fd->id)
			return false;
	} else if (fd->label == PROTOBUF_C_LABEL_OPTIONAL) {
		if (!by_pointer)
			return *(const protobuf_c_boolean *)(base + fd->quantifier_offset);
	} else if (fd->label != PROTOBUF_C_LABEL_NONE || fd->type != PROTOBUF_C_TYPE_MESSAGE) {
		return true;
	}
	return !by_pointer || (ptr && ptr != fd->default_value);
}

static void print_field(FILE *f, const ProtobufCMessage *msg, const ProtobufCFieldDescriptor *fd,
			bool *first)
{
	const uint8_t *base = (const uint8_t *)msg;

	if (fd->label != PROTOBUF_C_LABEL_REPEATED && !field_present(msg, fd))
		return;
	fputs(*first ? "" : ", ", f);
	*first = false;
	json_string(f, fd->name);
	fputs(": ", f);
	if (fd->label != PROTOBUF_C_LABEL_REPEATED) {
		print_value(f, fd, base + fd->offset);
		return;
	}

	size_t n = *(const size_t *)(base + fd->quantifier_offset);
	const uint8_t *v = *(const uint8_t *const *)(base + fd->offset);

	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ", " : "", f);
		print_value(f, fd, v + i * value_size(fd->type));
	}
	fputc(']', f);
}

static void print_message(FILE *f, const ProtobufCMessage *msg)
{
	const ProtobufCMessageDescriptor *desc = msg->descriptor;
	bool first = true;

	fputc('{', f);
	for (unsigned int i = 0; i < desc->n_fields; i++)
		print_field(f, msg, &desc->fields[i], &first);
	fputc('}', f);
}

static const ProtobufCMessageDescriptor *
find_schema(const ProtobufCMessageDescriptor *const *schemas, const char *type)
{
	for (; schemas && *schemas; schemas++)
		if (!strcmp((*schemas)->name, type))
			return *schemas;
	return NULL;
}

static int show_records(FILE *f, struct crf_img *img,
			const ProtobufCMessageDescriptor *const *schemas)
{
	const ProtobufCMessageDescriptor *desc = find_schema(schemas, crf_img_type(img));
	int r;

	fputs(", \"kind\": \"records\", \"type\": ", f);
	json_string(f, crf_img_type(img));
	fputs(", \"records\": [", f);
	for (size_t i = 0;; i++) {
		_cleanup_free_ uint8_t *buf = NULL;
		ProtobufCMessage *msg;
		size_t len;

		r = crf_img_read_raw(img, &buf, &len);
		if (r <= 0)
			break;
		fputs(i ? ", " : "", f);
		if (!desc) {
			fprintf(f, "{\"size\": %zu, \"unknown_type\": true}", len);
			continue;
		}
		r = crf__img_unpack(img, desc, buf, len, &msg);
		if (r < 0)
			break;
		print_message(f, msg);
		protobuf_c_message_free_unpacked(msg, NULL);
	}
	fputc(']', f);
	return r;
}

static int show_blob(FILE *f, struct crf_img *img)
{
	uint64_t size = crf_blob_size(img), chunk = crf__blob_chunk_size(img);
	int r = crf_img_verify(img);

	if (r < 0)
		return r;
	fprintf(f, ", \"kind\": \"blob\", \"size\": %" PRIu64 ", \"chunks\": %" PRIu64, size,
		(size + chunk - 1) / chunk);
	return 0;
}

static int show_image(FILE *f, struct crf_imgdir *dir, const char *name,
		      const ProtobufCMessageDescriptor *const *schemas)
{
	struct crf_img *img;
	int r;

	r = crf_img_open_any(dir, name, &img);
	if (r < 0)
		return r;
	fputs("{\"file\": ", f);
	json_string(f, name);
	if (crf_img_kind(img) == CRF_IMG_BLOB)
		r = show_blob(f, img);
	else
		r = show_records(f, img, schemas);
	fputc('}', f);
	crf_img_close(img);
	return r;
}

/* Copy what was built in memory to @out, now that all of it is verified. */
static int flush_to(FILE *out, FILE *mem, char **buf, size_t *len)
{
	if (fclose(mem) != 0) {
		free(*buf);
		*buf = NULL;
		return crf_error_errno(ENOMEM, "show");
	}
	if (fwrite(*buf, 1, *len, out) != *len)
		return crf_error_errno(errno ? errno : EIO, "cannot write the output");
	return 0;
}

int crf_show_image(FILE *out, struct crf_imgdir *dir, const char *name,
		   const ProtobufCMessageDescriptor *const *schemas)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	FILE *mem = open_memstream(&buf, &len);
	int r;

	if (!mem)
		return crf_error_errno(errno, "show");
	r = show_image(mem, dir, name, schemas);
	if (r < 0) {
		fclose(mem);
		return r;
	}
	return flush_to(out, mem, &buf, &len);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static bool is_image_entry(int dirfd, const struct dirent *de)
{
	struct stat st;

	if (!crf__img_is_image_name(de->d_name))
		return false;
	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_REG;
	return fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* The image files of @dir, sorted by name. */
static int list_images(struct crf_imgdir *dir, char ***out, size_t *count)
{
	int fd = openat(crf_imgdir_fd(dir), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	char **names = NULL;
	size_t n = 0;
	int r = 0;

	if (!d) {
		r = crf_error_errno(errno, "cannot list %s", crf_imgdir_path(dir));
		if (fd >= 0)
			close(fd);
		return r;
	}
	for (;;) {
		struct dirent *de;
		char **grown;

		errno = 0;
		de = readdir(d);
		if (!de) {
			r = errno ? crf_error_errno(errno, "cannot list %s", crf_imgdir_path(dir))
				  : 0;
			break;
		}
		if (!is_image_entry(fd, de))
			continue;
		grown = realloc(names, (n + 1) * sizeof(*names));
		if (!grown || !(grown[n] = strdup(de->d_name))) {
			names = grown ? grown : names;
			r = crf_error_errno(ENOMEM, "cannot list %s", crf_imgdir_path(dir));
			break;
		}
		names = grown;
		n++;
	}
	closedir(d);
	if (r < 0) {
		free_names(names, n);
		return r;
	}
	/* An empty directory has no list: qsort() must not see NULL. */
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	*out = names;
	*count = n;
	return 0;
}

int show_dir(FILE *out, struct crf_imgdir *dir, const ProtobufCMessageDescriptor *const *schemas)
{
	_cleanup_free_ char *buf = NULL;
	char **names = NULL;
	size_t len, n = 0;
	FILE *mem;
	int r;

	r = list_images(dir, &names, &n);
	if (r < 0)
		return r;
	mem = open_memstream(&buf, &len);
	if (!mem) {
		free_names(names, n);
		return crf_error_errno(errno, "show");
	}
	fputs("{\"images\": [", mem);
	for (size_t i = 0; i < n && r >= 0; i++) {
		fputs(i ? ",\n" : "\n", mem);
		r = show_image(mem, dir, names[i], schemas);
	}
	fputs(n ? "\n]}\n" : "]}\n", mem);
	free_names(names, n);
	if (r < 0) {
		fclose(mem);
		return r;
	}
	return flush_to(out, mem, &buf, &len);
}
