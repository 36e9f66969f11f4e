// SPDX-License-Identifier: GPL-2.0-only
/* Round trips through the image store, its refusals, and CRC32C. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include <cmocka.h>

#include "crf-private.h"
#include "image-internal.h"
#include "inventory.pb-c.h"

struct env {
	char path[64];
	struct crf_imgdir *dir;
};

static void rm_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	rmdir(path);
}

/* Number of entries of @path other than . and .. */
static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	strcpy(e->path, "/tmp/crf-test-image-XXXXXX");
	assert_non_null(mkdtemp(e->path));
	assert_int_equal(crf_imgdir_open(e->path, CRF_IMGDIR_WRITE, &e->dir), 0);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	crf_imgdir_close(e->dir);
	rm_dir(e->path);
	free(e);
	return 0;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill_random(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = rnd();
}

/* CRC32C */

static void test_crc32c_vectors(void **state)
{
	uint8_t buf[32];

	assert_int_equal(crf_crc32c(0, "123456789", 9), 0xe3069283);
	assert_int_equal(crf__crc32c_sw(0, "123456789", 9), 0xe3069283);
	assert_int_equal(crf_crc32c(0, "", 0), 0);
	/* RFC 3720, B.4 */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(crf_crc32c(0, buf, sizeof(buf)), 0x8a9136aa);
	memset(buf, 0xff, sizeof(buf));
	assert_int_equal(crf_crc32c(0, buf, sizeof(buf)), 0x62a8ab43);
	for (int i = 0; i < 32; i++)
		buf[i] = i;
	assert_int_equal(crf_crc32c(0, buf, sizeof(buf)), 0x46dd794e);
	assert_int_equal(crf_crc32c(crf_crc32c(0, "1234", 4), "56789", 5), 0xe3069283);
}

static void test_crc32c_hw_equals_sw(void **state)
{
	size_t cap = 200000;
	uint8_t *buf = malloc(cap);

	assert_non_null(buf);
	fill_random(buf, cap);
	if (!crf__crc32c_hw_available())
		print_message("no SSE4.2 here: only the software CRC32C is checked\n");
	for (int i = 0; i < 2000; i++) {
		size_t align = rnd() % 16;
		size_t len = i < 1000 ? rnd() % 64 : rnd() % (cap - 16);
		uint32_t seed = i & 1 ? (uint32_t)rnd() : 0;
		uint32_t sw = crf__crc32c_sw(seed, buf + align, len);

		assert_int_equal(crf__crc32c_hw(seed, buf + align, len), sw);
		assert_int_equal(crf_crc32c(seed, buf + align, len), sw);
		/* Chaining at any split gives the CRC of the whole. */
		size_t cut = len ? rnd() % len : 0;

		assert_int_equal(crf_crc32c(crf_crc32c(seed, buf + align, cut), buf + align + cut,
					    len - cut),
				 sw);
	}
	free(buf);
}

/* Record images */

static void fill_inventory(Crf__Core__Inventory *inv, Crf__Core__PluginVersion *pv,
			   Crf__Core__PluginVersion **pvp, size_t n_plugins, char **files,
			   size_t n_files)
{
	static char *names[] = {"mem", "files", "net \"quoted\"", "ns"};

	crf__core__inventory__init(inv);
	inv->crf_version = "0.1.0";
	inv->kernel_release = "6.18.0";
	inv->arch = "x86_64";
	inv->root_pid = 4242;
	inv->timestamp = 0xfedcba9876543210ull;
	for (size_t i = 0; i < n_plugins; i++) {
		crf__core__plugin_version__init(&pv[i]);
		pv[i].name = names[i % 4];
		pv[i].version = "1.2.3";
		pv[i].abi_major = 1;
		pv[i].abi_minor = i;
		pvp[i] = &pv[i];
	}
	inv->n_plugins = n_plugins;
	inv->plugins = pvp;
	inv->n_files = n_files;
	inv->files = files;
}

static void check_inventory(const Crf__Core__Inventory *a, const Crf__Core__Inventory *b)
{
	assert_string_equal(a->crf_version, b->crf_version);
	assert_string_equal(a->kernel_release, b->kernel_release);
	assert_string_equal(a->arch, b->arch);
	assert_int_equal(a->root_pid, b->root_pid);
	assert_true(a->timestamp == b->timestamp);
	assert_int_equal(a->n_plugins, b->n_plugins);
	for (size_t i = 0; i < a->n_plugins; i++) {
		assert_string_equal(a->plugins[i]->name, b->plugins[i]->name);
		assert_string_equal(a->plugins[i]->version, b->plugins[i]->version);
		assert_int_equal(a->plugins[i]->abi_minor, b->plugins[i]->abi_minor);
	}
	assert_int_equal(a->n_files, b->n_files);
	for (size_t i = 0; i < a->n_files; i++)
		assert_string_equal(a->files[i], b->files[i]);
}

static Crf__Core__Inventory *read_inventory(struct crf_img *img)
{
	ProtobufCMessage *msg;

	assert_int_equal(crf_img_read(img, &msg), 1);
	return (Crf__Core__Inventory *)msg;
}

static void test_inventory_roundtrip(void **state)
{
	struct env *e = *state;
	char *files[] = {"mm-1.img", "pages-1.img", "fds-1.img"};
	Crf__Core__PluginVersion pv[4], *pvp[4];
	Crf__Core__Inventory inv, *got;
	ProtobufCMessage *msg;
	struct crf_img *img;

	fill_inventory(&inv, pv, pvp, 4, files, 3);
	assert_int_equal(
		crf_img_create(e->dir, CRF_IMG_INVENTORY, &crf__core__inventory__descriptor, &img),
		0);
	assert_int_equal(crf_img_write(img, &inv.base), 0);
	inv.root_pid = 1;
	assert_int_equal(crf_img_write(img, &inv.base), 0);
	/* Not visible under its name before it is complete. */
	assert_int_equal(faccessat(crf_imgdir_fd(e->dir), CRF_IMG_INVENTORY, F_OK, 0), -1);
	assert_int_equal(crf_img_close(img), 0);

	assert_int_equal(
		crf_img_open(e->dir, CRF_IMG_INVENTORY, &crf__core__inventory__descriptor, &img),
		0);
	assert_string_equal(crf_img_name(img), CRF_IMG_INVENTORY);
	assert_string_equal(crf_img_type(img), "crf.core.Inventory");
	assert_int_equal(crf_img_kind(img), CRF_IMG_RECORDS);
	got = read_inventory(img);
	inv.root_pid = 4242;
	check_inventory(got, &inv);
	protobuf_c_message_free_unpacked(&got->base, NULL);
	got = read_inventory(img);
	assert_int_equal(got->root_pid, 1);
	protobuf_c_message_free_unpacked(&got->base, NULL);
	assert_int_equal(crf_img_read(img, &msg), 0);
	assert_null(msg);
	assert_int_equal(crf_img_read(img, &msg), 0);
	assert_int_equal(crf_img_close(img), 0);
	assert_int_equal(count_entries(e->path), 1);
}

static void test_empty_image(void **state)
{
	struct env *e = *state;
	ProtobufCMessage *msg;
	struct crf_img *img;
	uint8_t *buf;
	size_t len;

	assert_int_equal(
		crf_img_create(e->dir, "empty.img", &crf__core__inventory__descriptor, &img), 0);
	assert_int_equal(crf_img_close(img), 0);
	assert_int_equal(crf_img_open(e->dir, "empty.img", &crf__core__inventory__descriptor, &img),
			 0);
	assert_int_equal(crf_img_read(img, &msg), 0);
	assert_int_equal(crf_img_close(img), 0);
	assert_int_equal(crf_img_open_any(e->dir, "empty.img", &img), 0);
	assert_int_equal(crf_img_read_raw(img, &buf, &len), 0);
	assert_int_equal(crf_img_verify(img), 0);
	assert_int_equal(crf_img_close(img), 0);
}

static void test_many_records(void **state)
{
	struct env *e = *state;
	Crf__Core__PluginVersion pv, *got;
	struct crf_img *img;
	const int n = 20000;

	assert_int_equal(
		crf_img_create(e->dir, "many.img", &crf__core__plugin_version__descriptor, &img),
		0);
	crf__core__plugin_version__init(&pv);
	pv.version = "x";
	for (int i = 0; i < n; i++) {
		/* Varying sizes move the frames across the buffer's edges. */
		char name[64];

		snprintf(name, sizeof(name), "%.*s%d", i % 37,
			 "abcdefghijklmnopqrstuvwxyz0123456789", i);
		pv.name = name;
		pv.abi_major = i;
		assert_int_equal(crf_img_write(img, &pv.base), 0);
	}
	assert_int_equal(crf_img_close(img), 0);

	assert_int_equal(
		crf_img_open(e->dir, "many.img", &crf__core__plugin_version__descriptor, &img), 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(crf_img_read(img, (ProtobufCMessage **)&got), 1);
		assert_int_equal(got->abi_major, i);
		protobuf_c_message_free_unpacked(&got->base, NULL);
	}
	assert_int_equal(crf_img_read(img, (ProtobufCMessage **)&got), 0);
	assert_int_equal(crf_img_close(img), 0);
	assert_int_equal(crf_img_open_any(e->dir, "many.img", &img), 0);
	assert_int_equal(crf_img_verify(img), 0);
	assert_int_equal(crf_img_close(img), 0);
}

static void test_large_record(void **state)
{
	struct env *e = *state;
	enum { N_FILES = 3500, LEN = 1000 };
	char **files = calloc(N_FILES, sizeof(*files));
	Crf__Core__PluginVersion pv[1], *pvp[1];
	Crf__Core__Inventory inv, *got;
	struct crf_img *img;

	assert_non_null(files);
	for (int i = 0; i < N_FILES; i++) {
		files[i] = malloc(LEN + 1);
		assert_non_null(files[i]);
		memset(files[i], 'a' + i % 26, LEN);
		files[i][LEN] = '\0';
	}
	fill_inventory(&inv, pv, pvp, 1, files, N_FILES);
	assert_true(protobuf_c_message_get_packed_size(&inv.base) > (3u << 20));
	assert_int_equal(
		crf_img_create(e->dir, "large.img", &crf__core__inventory__descriptor, &img), 0);
	/* Small, large, small: the large one bypasses the buffer in order. */
	assert_int_equal(crf_img_write(img, &inv.base), 0);
	inv.n_files = 1;
	assert_int_equal(crf_img_write(img, &inv.base), 0);
	inv.n_files = N_FILES;
	assert_int_equal(crf_img_write(img, &inv.base), 0);
	assert_int_equal(crf_img_close(img), 0);

	assert_int_equal(crf_img_open(e->dir, "large.img", &crf__core__inventory__descriptor, &img),
			 0);
	for (int k = 0; k < 3; k++) {
		inv.n_files = k == 1 ? 1 : N_FILES;
		got = read_inventory(img);
		check_inventory(got, &inv);
		protobuf_c_message_free_unpacked(&got->base, NULL);
	}
	assert_int_equal(crf_img_verify(img), 0);
	assert_int_equal(crf_img_close(img), 0);
	for (int i = 0; i < N_FILES; i++)
		free(files[i]);
	free(files);
}

/* Blob images */

static void write_blob(struct env *e, const char *name, const uint8_t *data, size_t size)
{
	struct crf_img *img;
	size_t done = 0;

	assert_int_equal(crf_blob_create(e->dir, name, &img), 0);
	/* Odd piece sizes, and sometimes whole chunks from an empty buffer. */
	while (done < size) {
		size_t k = rnd() % 3 == 0 ? CRF_IMG_BLOB_CHUNK : rnd() % 100000;

		k = k < size - done ? k : size - done;
		assert_int_equal(crf_blob_write(img, data + done, k), 0);
		done += k;
	}
	assert_int_equal(crf_blob_size(img), size);
	assert_int_equal(crf_img_close(img), 0);
}

static void check_blob(struct env *e, const char *name, const uint8_t *data, size_t size)
{
	uint8_t *out = malloc(size + 1);
	struct crf_img *img;
	const size_t chunk = CRF_IMG_BLOB_CHUNK;

	assert_non_null(out);
	assert_int_equal(crf_blob_open(e->dir, name, &img), 0);
	assert_int_equal(crf_img_kind(img), CRF_IMG_BLOB);
	assert_string_equal(crf_img_type(img), "");
	assert_true(crf_blob_size(img) == size);
	assert_int_equal(crf_blob_pread(img, out, size, 0), 0);
	assert_memory_equal(out, data, size);
	for (int i = 0; size && i < 200; i++) {
		uint64_t off = rnd() % size;
		size_t len = rnd() % (size - off + 1);

		if (i % 3 == 0 && size > chunk) {
			/* Straddle a chunk boundary. */
			uint64_t b = chunk * (1 + rnd() % (size / chunk));

			off = b - 1 - rnd() % 64;
			len = rnd() % 128;
			len = off + len <= size ? len : size - off;
		}
		memset(out, 0, len);
		assert_int_equal(crf_blob_pread(img, out, len, off), 0);
		assert_memory_equal(out, data + off, len);
	}
	assert_int_equal(crf_blob_pread(img, out, 0, size), 0);
	assert_int_equal(crf_blob_pread(img, out, 1, size), -ERANGE);
	assert_int_equal(crf_blob_pread(img, out, 0, size + 1), -ERANGE);
	assert_int_equal(crf_img_verify(img), 0);
	assert_int_equal(crf_img_close(img), 0);
	free(out);
}

static void test_blob_roundtrip(void **state)
{
	struct env *e = *state;
	const size_t sizes[] = {0,
				1,
				4095,
				CRF_IMG_BLOB_CHUNK,
				CRF_IMG_BLOB_CHUNK + 1,
				2 * CRF_IMG_BLOB_CHUNK,
				(5u << 20) + 12345};
	uint8_t *data = malloc(sizes[6]);

	assert_non_null(data);
	fill_random(data, sizes[6]);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char name[32];

		snprintf(name, sizeof(name), "blob-%zu.img", i);
		write_blob(e, name, data, sizes[i]);
		check_blob(e, name, data, sizes[i]);
	}
	free(data);
}

static void test_blob_small_chunks(void **state)
{
	struct env *e = *state;
	uint8_t data[5 * IMG_MIN_CHUNK + 7], out[sizeof(data)];
	struct crf_img *img;

	fill_random(data, sizeof(data));
	assert_int_equal(crf__blob_create_chunked(e->dir, "small.img", 100, &img), -EINVAL);
	assert_int_equal(crf__blob_create_chunked(e->dir, "small.img", IMG_MIN_CHUNK, &img), 0);
	for (size_t i = 0; i < sizeof(data); i += 1000)
		assert_int_equal(crf_blob_write(img, data + i,
						sizeof(data) - i < 1000 ? sizeof(data) - i : 1000),
				 0);
	assert_int_equal(crf_img_close(img), 0);
	assert_int_equal(crf_img_open_any(e->dir, "small.img", &img), 0);
	assert_int_equal(crf__blob_chunk_size(img), IMG_MIN_CHUNK);
	assert_int_equal(crf_blob_pread(img, out, sizeof(out), 0), 0);
	assert_memory_equal(out, data, sizeof(data));
	assert_int_equal(crf_img_close(img), 0);
}

/* Refusals */

static void test_type_mismatch(void **state)
{
	struct env *e = *state;
	Crf__Core__PluginVersion pv;
	struct crf_img *img;

	assert_int_equal(crf_img_create(e->dir, "inv.img", &crf__core__inventory__descriptor, &img),
			 0);
	crf__core__plugin_version__init(&pv);
	pv.name = pv.version = "x";
	assert_int_equal(crf_img_write(img, &pv.base), -EINVAL);
	/* The failed writer drops its file. */
	assert_int_equal(crf_img_close(img), -EINVAL);
	assert_int_equal(count_entries(e->path), 0);

	assert_int_equal(crf_img_create(e->dir, "inv.img", &crf__core__inventory__descriptor, &img),
			 0);
	assert_int_equal(crf_img_close(img), 0);
	assert_int_equal(
		crf_img_open(e->dir, "inv.img", &crf__core__plugin_version__descriptor, &img),
		-EMEDIUMTYPE);
	assert_null(img);
	assert_int_equal(crf_blob_open(e->dir, "inv.img", &img), -EMEDIUMTYPE);
	write_blob(e, "b.img", (const uint8_t *)"abc", 3);
	assert_int_equal(crf_img_open(e->dir, "b.img", &crf__core__inventory__descriptor, &img),
			 -EMEDIUMTYPE);
	assert_int_equal(
		crf_img_open(e->dir, "missing.img", &crf__core__inventory__descriptor, &img),
		-ENOENT);
}

static void test_dir_modes(void **state)
{
	struct env *e = *state;
	struct crf_imgdir *dir;
	struct crf_img *img;
	char sub[128];
	struct stat st;

	snprintf(sub, sizeof(sub), "%s/new", e->path);
	assert_int_equal(crf_imgdir_open(sub, CRF_IMGDIR_READ, &dir), -ENOENT);
	assert_int_equal(crf_imgdir_open(sub, CRF_IMGDIR_WRITE, &dir), 0);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_string_equal(crf_imgdir_path(dir), sub);
	assert_int_equal(crf_blob_create(dir, "x.img", &img), 0);
	assert_int_equal(crf_img_close(img), 0);
	crf_imgdir_close(dir);

	/* Another dump into the same directory is refused; reading is fine. */
	assert_int_equal(crf_imgdir_open(sub, CRF_IMGDIR_WRITE, &dir), -EEXIST);
	assert_null(dir);
	assert_int_equal(crf_imgdir_open(sub, CRF_IMGDIR_READ, &dir), 0);
	assert_int_equal(crf_blob_create(dir, "y.img", &img), -EBADF);
	crf_imgdir_close(dir);
	assert_int_equal(unlink(strcat(sub, "/x.img")), 0);
	sub[strlen(sub) - strlen("/x.img")] = '\0';
	assert_int_equal(rmdir(sub), 0);

	/* Names are plain file names, never hidden. */
	assert_int_equal(crf_blob_create(e->dir, "../x.img", &img), -EINVAL);
	assert_int_equal(crf_blob_create(e->dir, ".x.img", &img), -EINVAL);
	assert_int_equal(crf_blob_create(e->dir, "", &img), -EINVAL);
}

static void test_abort_and_duplicates(void **state)
{
	struct env *e = *state;
	struct crf_img *img, *img2;

	assert_int_equal(crf_blob_create(e->dir, "a.img", &img), 0);
	assert_int_equal(crf_blob_write(img, "data", 4), 0);
	assert_int_equal(count_entries(e->path), 1);
	/* A second writer of the same name is refused while the first runs. */
	assert_int_equal(crf_blob_create(e->dir, "a.img", &img2), -EEXIST);
	crf_img_abort(img);
	assert_int_equal(count_entries(e->path), 0);

	assert_int_equal(crf_blob_create(e->dir, "a.img", &img), 0);
	assert_int_equal(crf_img_close(img), 0);
	assert_int_equal(crf_blob_create(e->dir, "a.img", &img), -EEXIST);
	assert_int_equal(count_entries(e->path), 1);
	crf_img_abort(NULL);
	assert_int_equal(crf_img_close(NULL), 0);
}

/* A writer left in a _cleanup_img_ variable is aborted; one taken out is not. */
static int write_scoped(struct crf_imgdir *dir, const char *name, bool keep)
{
	_cleanup_img_ struct crf_img *img = NULL;
	int r = crf_blob_create(dir, name, &img);

	if (r >= 0)
		r = crf_blob_write(img, "data", 4);
	if (r < 0 || !keep)
		return r < 0 ? r : -ECANCELED;
	return crf_img_close(TAKE_PTR(img));
}

static void test_finish_and_cleanup(void **state)
{
	struct env *e = *state;
	struct crf_img *img;

	/* ABI 1.5: close when the writing went well, abort when it did not. */
	assert_int_equal(crf_blob_create(e->dir, "ok.img", &img), 0);
	assert_int_equal(crf_img_finish(img, 7), 0);
	assert_int_equal(crf_blob_create(e->dir, "bad.img", &img), 0);
	assert_int_equal(crf_blob_write(img, "data", 4), 0);
	assert_int_equal(crf_img_finish(img, -EIO), -EIO);
	assert_int_equal(count_entries(e->path), 1);
	assert_int_equal(crf_blob_open(e->dir, "ok.img", &img), 0);
	assert_int_equal(crf_img_finish(img, 0), 0);
	assert_int_equal(crf_img_finish(NULL, -EIO), -EIO);
	assert_int_equal(crf_img_finish(NULL, 0), 0);

	assert_int_equal(write_scoped(e->dir, "dropped.img", false), -ECANCELED);
	assert_int_equal(count_entries(e->path), 1);
	assert_int_equal(write_scoped(e->dir, "kept.img", true), 0);
	assert_int_equal(count_entries(e->path), 2);
	assert_int_equal(crf_blob_open(e->dir, "kept.img", &img), 0);
	assert_int_equal(crf_blob_size(img), 4);
	crf_img_close(img);
}

struct seen {
	pid_t pids[8];
	int n, stop_at;
};

static int note_task(void *arg, const char *name, pid_t pid)
{
	struct seen *s = arg;
	char want[64];

	snprintf(want, sizeof(want), "mm-%d.img", (int)pid);
	assert_string_equal(name, want);
	assert_true(s->n < 8);
	s->pids[s->n++] = pid;
	return pid == s->stop_at ? -EIO : 1;
}

/* ABI 1.5: the per-task images of one prefix, in PID order, and nothing else. */
static void test_each_task(void **state)
{
	static const char *const names[] = {"mm-300.img", "mm-20.img",	  "mm-1000.img",
					    "mm-020.img", "mm-7.img.tmp", "mmx-5.img",
					    "mm-.img",	  "files-20.img", "mm--4.img"};
	struct env *e = *state;
	struct seen s = {.stop_at = -1};
	struct crf_img *img;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(crf_blob_create(e->dir, names[i], &img), 0);
		assert_int_equal(crf_img_close(img), 0);
	}
	assert_int_equal(crf_imgdir_each_task(e->dir, "mm", note_task, &s), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.pids[0], 20);
	assert_int_equal(s.pids[1], 300);
	assert_int_equal(s.pids[2], 1000);
	s = (struct seen){.stop_at = 300};
	assert_int_equal(crf_imgdir_each_task(e->dir, "mm", note_task, &s), -EIO);
	assert_int_equal(s.n, 2);
	s = (struct seen){.stop_at = -1};
	assert_int_equal(crf_imgdir_each_task(e->dir, "pipes", note_task, &s), 0);
	assert_int_equal(s.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c_vectors),
		cmocka_unit_test(test_crc32c_hw_equals_sw),
		cmocka_unit_test_setup_teardown(test_inventory_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_image, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blob_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blob_small_chunks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_type_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_modes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_and_duplicates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finish_and_cleanup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_each_task, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
