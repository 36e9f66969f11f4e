// SPDX-License-Identifier: GPL-2.0-only
/*
 * Damaged images: every truncation, every single-bit flip of a record image
 * and of the framing of a blob image, random flips, appended garbage and
 * payloads that pass their checksum but do not decode.  Each damaged image
 * must be refused with a negative error and exactly one line on stderr that
 * names the file, and must never crash the reader.  The PRNG has a fixed
 * seed, so a failure reproduces.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include "image-internal.h"
#include "inventory.pb-c.h"

#define REC	   "rec.img"
#define BLOB	   "blob.img"
#define BLOB_BYTES (4 * IMG_MIN_CHUNK + 1000)

struct fuzz {
	char path[64];
	struct crf_imgdir *dir;
	char err_path[80];
	int err_fd; /* what the readers' stderr goes to */
	int real_stderr;
	uint8_t *rec, *blob; /* the intact images */
	size_t rec_size, blob_size;
	uint8_t *work;
	unsigned long cases;
};

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void put_file(struct fuzz *f, const char *name, const uint8_t *buf, size_t n)
{
	int fd =
		openat(crf_imgdir_fd(f->dir), name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, n), (ssize_t)n);
	assert_int_equal(close(fd), 0);
}

static uint8_t *get_file(struct fuzz *f, const char *name, size_t *size)
{
	int fd = openat(crf_imgdir_fd(f->dir), name, O_RDONLY | O_CLOEXEC);
	off_t n = lseek(fd, 0, SEEK_END);
	uint8_t *buf = malloc(n);

	assert_true(fd >= 0 && n > 0);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, n, 0), n);
	close(fd);
	*size = n;
	return buf;
}

static void write_images(struct fuzz *f)
{
	char *files[] = {"a.img", "b\tc.img", ""};
	Crf__Core__PluginVersion pv, *pvp[] = {&pv, &pv};
	Crf__Core__Inventory inv = CRF__CORE__INVENTORY__INIT;
	uint8_t data[BLOB_BYTES];
	struct crf_img *img;

	crf__core__plugin_version__init(&pv);
	pv.name = "mem";
	pv.version = "1.0";
	inv.crf_version = "0.1.0";
	inv.kernel_release = "6.18";
	inv.arch = "x86_64";
	inv.timestamp = 1700000000;
	inv.plugins = pvp;
	inv.files = files;
	assert_int_equal(crf_img_create(f->dir, REC, &crf__core__inventory__descriptor, &img), 0);
	for (int i = 0; i < 4; i++) {
		inv.root_pid = i;
		inv.n_plugins = i % 3;
		inv.n_files = i;
		assert_int_equal(crf_img_write(img, &inv.base), 0);
	}
	assert_int_equal(crf_img_close(img), 0);
	f->rec = get_file(f, REC, &f->rec_size);

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = rnd();
	assert_int_equal(crf__blob_create_chunked(f->dir, BLOB, IMG_MIN_CHUNK, &img), 0);
	assert_int_equal(crf_blob_write(img, data, sizeof(data)), 0);
	assert_int_equal(crf_img_close(img), 0);
	f->blob = get_file(f, BLOB, &f->blob_size);
}

static int setup(void **state)
{
	struct fuzz *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->path, "/tmp/crf-test-fuzz-XXXXXX");
	assert_non_null(mkdtemp(f->path));
	assert_int_equal(crf_imgdir_open(f->path, CRF_IMGDIR_WRITE, &f->dir), 0);
	snprintf(f->err_path, sizeof(f->err_path), "%s.stderr", f->path);
	f->err_fd = open(f->err_path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	assert_true(f->err_fd >= 0);
	f->real_stderr = dup(STDERR_FILENO);
	assert_true(f->real_stderr >= 0);
	/* A sanitizer report during a read lands in there. */
	print_message("readers' stderr goes to %s (kept if the test dies)\n", f->err_path);
	write_images(f);
	f->work = malloc(f->blob_size + f->rec_size + 4096);
	assert_non_null(f->work);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fuzz *f = *state;

	print_message("%lu damaged images refused\n", f->cases);
	unlinkat(crf_imgdir_fd(f->dir), REC, 0);
	unlinkat(crf_imgdir_fd(f->dir), BLOB, 0);
	crf_imgdir_close(f->dir);
	rmdir(f->path);
	close(f->err_fd);
	close(f->real_stderr);
	unlink(f->err_path);
	free(f->rec);
	free(f->blob);
	free(f->work);
	free(f);
	return 0;
}

/* Read all of image @name the way @how says; 0 or the reader's error. */
static int read_all(struct fuzz *f, const char *name, int how)
{
	struct crf_img *img;
	int r;

	if (how == 0)
		r = crf_img_open_any(f->dir, name, &img);
	else if (!strcmp(name, REC))
		r = crf_img_open(f->dir, name, &crf__core__inventory__descriptor, &img);
	else
		r = crf_blob_open(f->dir, name, &img);
	if (r < 0)
		return r;
	if (how == 0) {
		r = crf_img_verify(img);
	} else if (!strcmp(name, REC)) {
		ProtobufCMessage *msg;

		while ((r = crf_img_read(img, &msg)) > 0)
			protobuf_c_message_free_unpacked(msg, NULL);
	} else {
		uint8_t *buf = malloc(crf_blob_size(img) + 1);

		r = buf ? crf_blob_pread(img, buf, crf_blob_size(img), 0) : -ENOMEM;
		free(buf);
	}
	crf_img_close(img);
	return r;
}

/* Run the reader with stderr captured; returns its result, fills @msg. */
static int run_captured(struct fuzz *f, const char *name, int how, char *msg, size_t size)
{
	ssize_t n;
	int r;

	assert_int_equal(ftruncate(f->err_fd, 0), 0);
	fflush(stderr);
	assert_true(dup2(f->err_fd, STDERR_FILENO) >= 0);
	r = read_all(f, name, how);
	fflush(stderr);
	assert_true(dup2(f->real_stderr, STDERR_FILENO) >= 0);
	n = pread(f->err_fd, msg, size - 1, 0);
	assert_true(n >= 0);
	msg[n] = '\0';
	return r;
}

/*
 * The damaged image now under @name must be refused, with one line naming
 * it.  Readers alternate between a plain verify and a typed read.
 */
static void expect_refused_how(struct fuzz *f, const char *name, const char *what, int how)
{
	char msg[1024];
	int r = run_captured(f, name, how, msg, sizeof(msg));
	char *nl = strchr(msg, '\n');

	f->cases++;
	if (r == -EBADMSG || r == -ENODATA || r == -EPROTONOSUPPORT) {
		if (nl && !nl[1] && strstr(msg, name))
			return;
		fail_msg("%s (case %lu): the error is not one line naming %s: \"%s\"", what,
			 f->cases, name, msg);
	}
	fail_msg("%s (case %lu, how %d): reader returned %d; stderr: \"%s\"", what, f->cases, how,
		 r, msg);
}

static void expect_refused(struct fuzz *f, const char *name, const char *what)
{
	expect_refused_how(f, name, what, f->cases % 2);
}

static void test_intact(void **state)
{
	struct fuzz *f = *state;
	char msg[256];

	for (int how = 0; how < 2; how++) {
		assert_int_equal(run_captured(f, REC, how, msg, sizeof(msg)), 0);
		assert_string_equal(msg, "");
		assert_int_equal(run_captured(f, BLOB, how, msg, sizeof(msg)), 0);
		assert_string_equal(msg, "");
	}
}

static void truncate_every_length(struct fuzz *f, const char *name, const uint8_t *img, size_t size)
{
	int fd;

	put_file(f, name, img, size);
	fd = openat(crf_imgdir_fd(f->dir), name, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (size_t len = size; len-- > 0;) {
		assert_int_equal(ftruncate(fd, len), 0);
		expect_refused(f, name, "truncated");
	}
	close(fd);
}

static void test_truncated(void **state)
{
	struct fuzz *f = *state;

	truncate_every_length(f, REC, f->rec, f->rec_size);
	truncate_every_length(f, BLOB, f->blob, f->blob_size);
}

static void flip_bit(struct fuzz *f, const char *name, const uint8_t *img, size_t size, size_t bit)
{
	memcpy(f->work, img, size);
	f->work[bit / 8] ^= 1u << (bit % 8);
	put_file(f, name, f->work, size);
	expect_refused(f, name, "bit flip");
}

static void test_bitflips(void **state)
{
	struct fuzz *f = *state;
	size_t hdr = IMG_FIXED_HDR + 4 + 4, frame = IMG_FRAME + IMG_MIN_CHUNK;

	/* Every bit of the record image. */
	for (size_t bit = 0; bit < f->rec_size * 8; bit++)
		flip_bit(f, REC, f->rec, f->rec_size, bit);
	/* Every bit of the blob's header, chunk frames and end marker. */
	for (size_t bit = 0; bit < hdr * 8; bit++)
		flip_bit(f, BLOB, f->blob, f->blob_size, bit);
	for (size_t at = hdr; at < f->blob_size - IMG_END_SIZE; at += frame)
		for (size_t bit = 0; bit < IMG_FRAME * 8; bit++)
			flip_bit(f, BLOB, f->blob, f->blob_size, at * 8 + bit);
	for (size_t bit = 0; bit < IMG_END_SIZE * 8; bit++)
		flip_bit(f, BLOB, f->blob, f->blob_size, (f->blob_size - IMG_END_SIZE) * 8 + bit);
	/* And anywhere in its data. */
	for (int i = 0; i < 1500; i++)
		flip_bit(f, BLOB, f->blob, f->blob_size, rnd() % (f->blob_size * 8));
}

static void append_garbage(struct fuzz *f, const char *name, const uint8_t *img, size_t size)
{
	size_t n = 1 + rnd() % 64;

	memcpy(f->work, img, size);
	switch (rnd() % 4) {
	case 0: /* the end marker, twice */
		memcpy(f->work + size, img + size - IMG_END_SIZE, IMG_END_SIZE);
		n = IMG_END_SIZE;
		break;
	case 1: /* an empty frame */
		memset(f->work + size, 0, IMG_FRAME);
		n = IMG_FRAME;
		break;
	default:
		for (size_t i = 0; i < n; i++)
			f->work[size + i] = rnd();
	}
	put_file(f, name, f->work, size + n);
	expect_refused(f, name, "trailing garbage");
}

static void test_garbage(void **state)
{
	struct fuzz *f = *state;

	for (int i = 0; i < 400; i++) {
		append_garbage(f, REC, f->rec, f->rec_size);
		append_garbage(f, BLOB, f->blob, f->blob_size);
	}
}

/* Frames with valid checksums around payloads protobuf-c must refuse. */
static void test_bad_payload(void **state)
{
	struct fuzz *f = *state;
	size_t first = IMG_FIXED_HDR + strlen("crf.core.Inventory") + 4;
	uint32_t len = get_le32(f->rec + first);
	uint8_t *p = f->work + first;

	for (int i = 0; i < 300; i++) {
		memcpy(f->work, f->rec, f->rec_size);
		for (uint32_t k = 0; k < len; k++)
			p[IMG_FRAME + k] = i % 2 ? rnd() : 0xff;
		put_le32(p + 4, crf_crc32c(crf_crc32c(0, p, 4), p + IMG_FRAME, len));
		put_file(f, REC, f->work, f->rec_size);
		/* Only a typed read decodes. */
		expect_refused_how(f, REC, "undecodable payload", 1);
	}
}

/* A few mutations at once, anywhere. */
static void test_random_mix(void **state)
{
	struct fuzz *f = *state;

	for (int i = 0; i < 3000; i++) {
		bool rec = i % 2;
		const char *name = rec ? REC : BLOB;
		const uint8_t *img = rec ? f->rec : f->blob;
		size_t size = rec ? f->rec_size : f->blob_size;
		int n = 1 + rnd() % 3;

		memcpy(f->work, img, size);
		while (n--) {
			switch (rnd() % 4) {
			case 0:
				size = rnd() % size + 1;
				break;
			case 1:
				size += rnd() % 32;
				break;
			default:
				f->work[rnd() % size] ^= 1u << (rnd() % 8);
			}
		}
		if (size == (rec ? f->rec_size : f->blob_size) && !memcmp(f->work, img, size))
			continue;
		put_file(f, name, f->work, size);
		expect_refused(f, name, "mixed damage");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intact),	    cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bitflips),    cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_bad_payload), cmocka_unit_test(test_random_mix),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
