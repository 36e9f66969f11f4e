// SPDX-License-Identifier: GPL-2.0-only
/*
 * `crf show` output, compared byte for byte: the inventory (with strings
 * that need escaping), a hand-written schema that has every kind of field
 * the generic printer walks, blobs, unknown types, a whole directory, and
 * a corrupt image that must print nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "crf-private.h"
#include "inventory.pb-c.h"
#include "show.h"

/*
 * A schema with every field kind, written out the way protoc-c would for
 *   enum Color { RED = 0; GREEN = 1; }
 *   message Kitchen {
 *     optional int32 opt_i32 = 1;  optional string opt_str = 2;
 *     required double d = 3;       required float fl = 4;
 *     required bool flag = 5;      required Color color = 6;
 *     optional bytes blob = 7;     repeated sint64 nums = 8;
 *     repeated Color colors = 9;   oneof choice { uint32 a = 10; string b = 11; }
 *     optional Kitchen child = 12;
 *   }
 */
typedef struct Kitchen Kitchen;
struct Kitchen {
	ProtobufCMessage base;
	protobuf_c_boolean has_opt_i32;
	int32_t opt_i32;
	char *opt_str;
	double d;
	float fl;
	protobuf_c_boolean flag;
	int color;
	protobuf_c_boolean has_blob;
	ProtobufCBinaryData blob;
	size_t n_nums;
	int64_t *nums;
	size_t n_colors;
	int *colors;
	uint32_t choice_case;
	union {
		uint32_t a;
		char *b;
	};
	Kitchen *child;
};

static const ProtobufCEnumValue color_values[] = {
	{"RED", "RED", 0},
	{"GREEN", "GREEN", 1},
};
static const ProtobufCEnumValueIndex color_by_name[] = {{"GREEN", 1}, {"RED", 0}};
static const ProtobufCIntRange color_ranges[] = {{0, 0}, {0, 2}};
static const ProtobufCEnumDescriptor color_desc = {
	PROTOBUF_C__ENUM_DESCRIPTOR_MAGIC,
	"crf.test.Color",
	"Color",
	"Color",
	"crf.test",
	2,
	color_values,
	2,
	color_by_name,
	1,
	color_ranges,
	NULL,
	NULL,
	NULL,
	NULL,
};

static const ProtobufCMessageDescriptor kitchen_desc;

#define OPT   PROTOBUF_C_LABEL_OPTIONAL
#define REQ   PROTOBUF_C_LABEL_REQUIRED
#define REP   PROTOBUF_C_LABEL_REPEATED
#define AT(f) offsetof(Kitchen, f)
static const ProtobufCFieldDescriptor kitchen_fields[] = {
	{"opt_i32", 1, OPT, PROTOBUF_C_TYPE_INT32, AT(has_opt_i32), AT(opt_i32)},
	{"opt_str", 2, OPT, PROTOBUF_C_TYPE_STRING, 0, AT(opt_str)},
	{"d", 3, REQ, PROTOBUF_C_TYPE_DOUBLE, 0, AT(d)},
	{"fl", 4, REQ, PROTOBUF_C_TYPE_FLOAT, 0, AT(fl)},
	{"flag", 5, REQ, PROTOBUF_C_TYPE_BOOL, 0, AT(flag)},
	{"color", 6, REQ, PROTOBUF_C_TYPE_ENUM, 0, AT(color), &color_desc},
	{"blob", 7, OPT, PROTOBUF_C_TYPE_BYTES, AT(has_blob), AT(blob)},
	{"nums", 8, REP, PROTOBUF_C_TYPE_SINT64, AT(n_nums), AT(nums)},
	{"colors", 9, REP, PROTOBUF_C_TYPE_ENUM, AT(n_colors), AT(colors), &color_desc},
	{"a", 10, OPT, PROTOBUF_C_TYPE_UINT32, AT(choice_case), AT(a), NULL, NULL,
	 PROTOBUF_C_FIELD_FLAG_ONEOF},
	{"b", 11, OPT, PROTOBUF_C_TYPE_STRING, AT(choice_case), AT(b), NULL, NULL,
	 PROTOBUF_C_FIELD_FLAG_ONEOF},
	{"child", 12, OPT, PROTOBUF_C_TYPE_MESSAGE, 0, AT(child), &kitchen_desc},
};
static const unsigned kitchen_by_name[] = {9, 10, 6, 11, 5, 8, 2, 3, 4, 7, 0, 1};
static const ProtobufCIntRange kitchen_ranges[] = {{1, 0}, {0, 12}};

static void kitchen_init(ProtobufCMessage *m)
{
	memset(m, 0, sizeof(Kitchen));
	m->descriptor = &kitchen_desc;
}

static const ProtobufCMessageDescriptor kitchen_desc = {
	PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC,
	"crf.test.Kitchen",
	"Kitchen",
	"Kitchen",
	"crf.test",
	sizeof(Kitchen),
	12,
	kitchen_fields,
	kitchen_by_name,
	1,
	kitchen_ranges,
	(ProtobufCMessageInit)kitchen_init,
	NULL,
	NULL,
	NULL,
};

static const ProtobufCMessageDescriptor *const schemas[] = {
	&kitchen_desc,
	&crf__core__inventory__descriptor,
	NULL,
};

struct env {
	char path[64];
	struct crf_imgdir *dir;
	char *out;
	size_t len;
	FILE *f;
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	strcpy(e->path, "/tmp/crf-test-show-XXXXXX");
	assert_non_null(mkdtemp(e->path));
	assert_int_equal(crf_imgdir_open(e->path, CRF_IMGDIR_WRITE, &e->dir), 0);
	e->f = open_memstream(&e->out, &e->len);
	assert_non_null(e->f);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	DIR *d = opendir(e->path);
	struct dirent *de;

	while (d && (de = readdir(d)))
		unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	rmdir(e->path);
	crf_imgdir_close(e->dir);
	fclose(e->f);
	free(e->out);
	free(e);
	return 0;
}

/* What has been printed so far. */
static const char *output(struct env *e)
{
	fflush(e->f);
	return e->out;
}

static void write_inventory(struct env *e)
{
	Crf__Core__PluginVersion pv[2], *pvp[] = {&pv[0], &pv[1]};
	char *files[] = {"a.img", "del\x7f", "bad\xff", "\xe2\x82\xac"};
	Crf__Core__Inventory inv;
	struct crf_img *img;

	crf__core__inventory__init(&inv);
	for (int i = 0; i < 2; i++) {
		crf__core__plugin_version__init(&pv[i]);
		pv[i].name = i ? "files" : "mem";
		pv[i].version = "1.0";
		pv[i].abi_major = 1;
		pv[i].abi_minor = i;
	}
	inv.crf_version = "0.1.0";
	inv.kernel_release = "6.18 \"rt\" \\ /";
	inv.arch = "x86_64\n\t\x01\x1f\xc3\xa9";
	inv.root_pid = -5;
	inv.timestamp = UINT64_MAX;
	inv.n_plugins = 2;
	inv.plugins = pvp;
	inv.n_files = 4;
	inv.files = files;
	assert_int_equal(
		crf_img_create(e->dir, CRF_IMG_INVENTORY, &crf__core__inventory__descriptor, &img),
		0);
	assert_int_equal(crf_img_write(img, &inv.base), 0);
	inv.n_plugins = inv.n_files = 0;
	inv.arch = "";
	assert_int_equal(crf_img_write(img, &inv.base), 0);
	assert_int_equal(crf_img_close(img), 0);
}

static const char inventory_json[] =
	"{\"file\": \"inventory.img\", \"kind\": \"records\", \"type\": \"crf.core.Inventory\", "
	"\"records\": [{\"crf_version\": \"0.1.0\", \"kernel_release\": \"6.18 \\\"rt\\\" \\\\ "
	"/\", "
	"\"arch\": \"x86_64\\n\\t\\u0001\\u001f\xc3\xa9\", \"root_pid\": -5, "
	"\"timestamp\": 18446744073709551615, \"plugins\": [{\"name\": \"mem\", \"version\": "
	"\"1.0\", \"abi_major\": 1, \"abi_minor\": 0}, {\"name\": \"files\", \"version\": \"1.0\", "
	"\"abi_major\": 1, \"abi_minor\": 1}], \"files\": [\"a.img\", \"del\\u007f\", "
	"\"bad\\ufffd\", \"\xe2\x82\xac\"]}, "
	"{\"crf_version\": \"0.1.0\", \"kernel_release\": \"6.18 \\\"rt\\\" \\\\ /\", "
	"\"arch\": \"\", \"root_pid\": -5, \"timestamp\": 18446744073709551615, "
	"\"plugins\": [], \"files\": []}]}";

static void test_inventory(void **state)
{
	struct env *e = *state;

	write_inventory(e);
	assert_int_equal(crf_show_image(e->f, e->dir, CRF_IMG_INVENTORY, schemas), 0);
	assert_string_equal(output(e), inventory_json);
}

static void test_every_field_kind(void **state)
{
	struct env *e = *state;
	int64_t nums[] = {INT64_MIN, INT64_MAX, 0};
	int colors[] = {0, 7};
	uint8_t bytes[] = {0x00, 0xff, 0x10};
	Kitchen child, k;
	struct crf_img *img;

	kitchen_init(&child.base);
	child.d = NAN;
	child.fl = -INFINITY;
	kitchen_init(&k.base);
	k.has_opt_i32 = 1;
	k.opt_i32 = -1;
	k.d = 0.1;
	k.fl = 1.5f;
	k.flag = 1;
	k.color = 1;
	k.has_blob = 1;
	k.blob = (ProtobufCBinaryData){sizeof(bytes), bytes};
	k.n_nums = 3;
	k.nums = nums;
	k.n_colors = 2;
	k.colors = colors;
	k.choice_case = 11;
	k.b = "x";
	k.child = &child;
	assert_int_equal(crf_img_create(e->dir, "k.img", &kitchen_desc, &img), 0);
	assert_int_equal(crf_img_write(img, &k.base), 0);
	kitchen_init(&k.base);
	k.opt_str = "s";
	k.d = 1e300;
	k.fl = INFINITY;
	k.choice_case = 10;
	k.a = 42;
	assert_int_equal(crf_img_write(img, &k.base), 0);
	assert_int_equal(crf_img_close(img), 0);

	assert_int_equal(crf_show_image(e->f, e->dir, "k.img", schemas), 0);
	assert_string_equal(
		output(e),
		"{\"file\": \"k.img\", \"kind\": \"records\", \"type\": \"crf.test.Kitchen\", "
		"\"records\": [{\"opt_i32\": -1, \"d\": 0.10000000000000001, \"fl\": 1.5, "
		"\"flag\": true, \"color\": \"GREEN\", \"blob\": \"00ff10\", "
		"\"nums\": [-9223372036854775808, 9223372036854775807, 0], "
		"\"colors\": [\"RED\", 7], \"b\": \"x\", \"child\": {\"d\": \"nan\", "
		"\"fl\": \"-inf\", \"flag\": false, \"color\": \"RED\", \"nums\": [], "
		"\"colors\": []}}, "
		"{\"opt_str\": \"s\", \"d\": 1.0000000000000001e+300, \"fl\": \"inf\", "
		"\"flag\": false, \"color\": \"RED\", \"nums\": [], \"colors\": [], \"a\": 42}]}");
}

static void test_blob_unknown_and_dir(void **state)
{
	struct env *e = *state;
	static uint8_t data[300000];
	Crf__Core__PluginVersion pv;
	struct crf_img *img;
	const char *out;

	assert_int_equal(crf_blob_create(e->dir, "pages-1.img", &img), 0);
	assert_int_equal(crf_blob_write(img, data, sizeof(data)), 0);
	assert_int_equal(crf_img_close(img), 0);
	crf__core__plugin_version__init(&pv);
	pv.name = pv.version = "v";
	assert_int_equal(
		crf_img_create(e->dir, "pv.img", &crf__core__plugin_version__descriptor, &img), 0);
	assert_int_equal(crf_img_write(img, &pv.base), 0);
	assert_int_equal(crf_img_close(img), 0);
	write_inventory(e);
	/* Not an image: ignored by the directory listing. */
	close(openat(crf_imgdir_fd(e->dir), "notes.txt", O_CREAT | O_WRONLY | O_CLOEXEC, 0600));

	assert_int_equal(show_dir(e->f, e->dir, schemas), 0);
	out = output(e);
	assert_true(!strncmp(out, "{\"images\": [\n", 13));
	out += 13;
	assert_true(!strncmp(out, inventory_json, strlen(inventory_json)));
	out += strlen(inventory_json);
	assert_string_equal(out, ",\n{\"file\": \"pages-1.img\", \"kind\": \"blob\", \"size\": "
				 "300000, \"chunks\": 2},\n"
				 "{\"file\": \"pv.img\", \"kind\": \"records\", \"type\": "
				 "\"crf.core.PluginVersion\", "
				 "\"records\": [{\"size\": 10, \"unknown_type\": true}]}\n]}\n");
}

static void test_corrupt_prints_nothing(void **state)
{
	struct env *e = *state;
	int fd;

	write_inventory(e);
	fd = openat(crf_imgdir_fd(e->dir), CRF_IMG_INVENTORY, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	/* A byte in the second record's payload. */
	assert_int_equal(pwrite(fd, "?", 1, 200), 1);
	close(fd);
	assert_int_equal(crf_show_image(e->f, e->dir, CRF_IMG_INVENTORY, schemas), -EBADMSG);
	assert_int_equal(show_dir(e->f, e->dir, schemas), -EBADMSG);
	assert_string_equal(output(e), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_inventory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_field_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blob_unknown_and_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_prints_nothing, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
