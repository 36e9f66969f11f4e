// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz-images: a libFuzzer target whose inputs are whole image directories.
 *
 * The input is a list of files (tests/fuzz/README.md has the layout): for
 * each, a name, a type name (none: a blob) and its records, or a blob's
 * size.  The harness frames them as crf writes images, with every length
 * and checksum right, into a directory of its own, so that libFuzzer's
 * mutations reach the decoders and the checks behind the checksums, and
 * runs on it every consumer a restore runs before it forks, in the
 * restore's order, as far as each gets:
 *
 *   crf show            every image decoded with every schema
 *   the inventory       its files, their framing, the core's image types
 *   the core            pstree.img and its plan, core-PID.img, cpu.img
 *   every plugin        its validate function (the one restore-prepare runs)
 *                       and its kinds' checks of the fd records' payloads
 *
 * Nothing here forks, maps or creates anything outside that directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/image.h>

#include "core.pb-c.h"
#include "cpu.pb-c.h"
#include "crf-private.h"
#include "fuzz-plugins.h"
#include "inventory.h"
#include "inventory.pb-c.h"
#include "pstree.pb-c.h"
#include "show.h"
#include "util.h"
#include "validate.h"

/* Blobs are zeros: what is checked is their size, and writing them costs time. */
#define MAX_BLOB  (4u << 20)
#define MAX_FILES 64

static char dir_path[256];
static FILE *devnull;

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A cursor over the input; reads past its end give zeros and set @short_. */
struct in {
	const uint8_t *p;
	size_t n;
	bool short_;
};

static const uint8_t *take(struct in *in, size_t n)
{
	const uint8_t *p = in->p;

	if (n > in->n) {
		in->short_ = true;
		return NULL;
	}
	in->p += n;
	in->n -= n;
	return p;
}

static uint32_t take32(struct in *in)
{
	const uint8_t *p = take(in, 4);

	return p ? (uint32_t)p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24 : 0;
}

static int write_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The header of docs/image-format.md; @type NULL for a blob. */
static int write_header(int fd, const char *type, size_t tlen)
{
	uint8_t h[16 + 255 + 4];
	size_t at = 12 + tlen;

	memcpy(h, "CRFI", 4);
	put16(h + 4, 1);
	put16(h + 6, 0);
	put16(h + 8, type ? 1 : 2);
	put16(h + 10, (uint16_t)tlen);
	memcpy(h + 12, type ? type : "", tlen);
	if (!type) {
		put32(h + at, 262144);
		at += 4;
	}
	put32(h + at, crf_crc32c(0, h, at));
	return write_all(fd, h, at + 4);
}

static int write_frame(int fd, const uint8_t *data, uint32_t len)
{
	uint8_t f[8];

	put32(f, len);
	put32(f + 4, crf_crc32c(crf_crc32c(0, f, 4), data, len));
	return write_all(fd, f, 8) < 0 || write_all(fd, data, len) < 0 ? -1 : 0;
}

static int write_end(int fd, uint64_t count)
{
	uint8_t m[16];

	put32(m, 0xffffffffu);
	put64(m + 4, count);
	put32(m + 12, crf_crc32c(0, m, 12));
	return write_all(fd, m, 16);
}

static int write_blob(int fd, uint32_t size)
{
	static uint8_t zero[262144];
	uint32_t left = size;

	if (write_header(fd, NULL, 0) < 0)
		return -1;
	while (left) {
		uint32_t n = left < sizeof(zero) ? left : sizeof(zero);

		if (write_frame(fd, zero, n) < 0)
			return -1;
		left -= n;
	}
	return write_end(fd, size);
}

/* Name bytes the image store accepts (no '/', not hidden) ending in ".img". */
static bool name_ok(const char *s, size_t n)
{
	if (n < 5 || s[0] == '.' || strcmp(s + n - 4, ".img"))
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f || s[i] == '/')
			return false;
	return true;
}

/* One file of the input into the directory; false at the end of the input. */
static bool write_file(int dfd, struct in *in, unsigned int *seen)
{
	const uint8_t *nl = take(in, 1), *name, *tl, *type;
	char fname[256], tname[256];
	uint32_t count;
	int fd;

	name = nl ? take(in, *nl) : NULL;
	tl = name ? take(in, 1) : NULL;
	type = tl ? take(in, *tl) : NULL;
	if (!type || in->short_)
		return false;
	memcpy(fname, name, *nl);
	fname[*nl] = 0;
	memcpy(tname, type, *tl);
	tname[*tl] = 0;
	count = take32(in);
	if (in->short_ || !name_ok(fname, *nl) || strlen(tname) != *tl || ++*seen > MAX_FILES)
		return false;
	fd = openat(dfd, fname, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	if (!*tl) {
		write_blob(fd, count % (MAX_BLOB + 1));
	} else if (write_header(fd, tname, *tl) == 0) {
		uint32_t n = 0;

		for (; n < count && !in->short_; n++) {
			uint32_t len = take32(in);
			const uint8_t *rec = take(in, len);

			if (!rec || write_frame(fd, rec, len) < 0)
				break;
		}
		write_end(fd, n);
	}
	close(fd);
	return !in->short_;
}

static void empty_dir(void)
{
	DIR *d = opendir(dir_path);
	struct dirent *de;

	if (!d)
		abort();
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void remove_dir(void)
{
	empty_dir();
	rmdir(dir_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR") ?: "/tmp";

	snprintf(dir_path, sizeof(dir_path), "%s/crf-fuzz-%d", tmp, (int)getpid());
	if (mkdir(dir_path, 0700) < 0 && errno != EEXIST)
		abort();
	atexit(remove_dir);
	devnull = fopen("/dev/null", "w");
	/* Errors are what most inputs get: CRF_FUZZ_LOG=1 shows them. */
	if (!getenv("CRF_FUZZ_LOG"))
		crf__log_capture(false);
	return 0;
}

/* What crf restore runs before it forks, in its order; each consumer as far as it gets. */
static void consume(struct crf_imgdir *dir)
{
	static const ProtobufCMessageDescriptor *core[] = {
		&crf__core__inventory__descriptor, &crf__core__plugin_version__descriptor,
		&crf__core__process__descriptor,   &crf__core__task_core__descriptor,
		&crf__core__cpu__descriptor,
	};
	const ProtobufCMessageDescriptor *schemas[64];
	struct strv names = {0};
	size_t n = 0;
	pid_t root = 0;

	for (size_t i = 0; i < sizeof(core) / sizeof(core[0]); i++)
		schemas[n++] = core[i];
	for (const struct fuzz_plugin *p = fuzz_plugins; p->name; p++)
		for (size_t i = 0; p->schemas[i] && n < 63; i++)
			schemas[n++] = p->schemas[i];
	schemas[n] = NULL;
	show_dir(devnull, dir, schemas);
	inventory_plugins(dir, &names);
	strv_free(&names);
	if (inventory_check(dir, NULL, &root) < 0)
		return;
	/*
	 * A restore stops at the first that fails; here each runs whatever
	 * the others said, so that an input refused by one check (the CPU a
	 * seed was dumped on, a page image cut to MAX_BLOB) still reaches
	 * the rest.  They read the directory only and must hold on any input.
	 */
	crf_restore_validate(dir, root);
	fuzz_plugins_validate(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = {data, size, false};
	struct crf_imgdir *dir;
	unsigned int files = 0;
	int dfd;

	empty_dir();
	dfd = open(dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		abort();
	while (write_file(dfd, &in, &files))
		;
	close(dfd);
	if (crf_imgdir_open(dir_path, CRF_IMGDIR_READ, &dir) < 0)
		return 0;
	consume(dir);
	crf_imgdir_close(dir);
	return 0;
}
