// SPDX-License-Identifier: GPL-2.0-only
/*
 * Blob images: raw bytes in fixed-size chunks, each framed like a record
 * (u32 length, u32 CRC32C, data), then the end marker with the byte count.
 * Every chunk but the last is full, so chunk i sits at a computable offset
 * and a read anywhere only touches (and verifies) the chunks it needs.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "crf-private.h"
#include "image-internal.h"

static uint64_t chunk_count(const struct crf_img *img)
{
	return img->count / img->chunk + (img->count % img->chunk != 0);
}

/* Data bytes in chunk @idx of a reader, from its verified byte count. */
static uint32_t chunk_len(const struct crf_img *img, uint64_t idx)
{
	uint64_t rest = img->count - idx * img->chunk;

	return rest < img->chunk ? rest : img->chunk;
}

static uint64_t chunk_off(const struct crf_img *img, uint64_t idx)
{
	return CRF_BLOB_CHUNK_OFF(img->hdr_len, img->chunk, idx);
}

static uint32_t frame_crc(const uint8_t frame[IMG_FRAME], const void *data, size_t n)
{
	return crf_crc32c(crf_crc32c(0, frame, 4), data, n);
}

/* Writing */

int crf__blob_create_chunked(struct crf_imgdir *dir, const char *name, uint32_t chunk,
			     struct crf_img **out)
{
	if (chunk < IMG_MIN_CHUNK || chunk > CRF_IMG_MAX_RECORD) {
		crf_error("%s: cannot create %s: chunk size %u out of range", dir->path, name,
			  chunk);
		return -EINVAL;
	}
	return img_create(dir, name, CRF_IMG_BLOB, "", chunk, out);
}

int crf_blob_create(struct crf_imgdir *dir, const char *name, struct crf_img **out)
{
	return crf__blob_create_chunked(dir, name, CRF_IMG_BLOB_CHUNK, out);
}

/* Fill in the frame of the @n bytes at @data. */
static void frame_fill(uint8_t *frame, const uint8_t *data, size_t n)
{
	put_le32(frame, n);
	put_le32(frame + 4, frame_crc(frame, data, n));
}

/* Frame and write the @n bytes of the chunk buffer. */
static int buf_flush(struct crf_img *img)
{
	frame_fill(img->buf, img->buf + IMG_FRAME, img->len);
	return img_write(img, img->buf, IMG_FRAME + img->len);
}

/*
 * Write whole chunks straight from the caller's buffer, each behind its
 * frame, with one pwritev() per BLOB_WRITEV chunks: a syscall per frame
 * would cost more than the frames' bytes.  Returns the bytes consumed.
 */
#define BLOB_WRITEV 32
static ssize_t write_chunks(struct crf_img *img, const uint8_t *p, size_t len)
{
	uint8_t frames[BLOB_WRITEV][IMG_FRAME];
	struct iovec iov[2 * BLOB_WRITEV];
	size_t n = len / img->chunk;
	int r;

	if (n > BLOB_WRITEV)
		n = BLOB_WRITEV;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *data = p + i * img->chunk;

		frame_fill(frames[i], data, img->chunk);
		iov[2 * i] = (struct iovec){.iov_base = frames[i], .iov_len = IMG_FRAME};
		iov[2 * i + 1] = (struct iovec){.iov_base = (void *)data, .iov_len = img->chunk};
	}
	r = img_writev(img, iov, 2 * n);
	return r < 0 ? r : (ssize_t)(n * img->chunk);
}

int crf_blob_write(struct crf_img *img, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	int r;

	if (!img->writer || img->kind != CRF_IMG_BLOB) {
		crf_error("%s: not a blob image open for writing", img->path);
		return -EINVAL;
	}
	if (img->err)
		return img->err;
	while (len) {
		ssize_t k;

		/* Whole chunks of the caller's buffer are written without a copy. */
		if (img->len == 0 && len >= img->chunk) {
			k = write_chunks(img, p, len);
			if (k < 0)
				return k;
		} else {
			k = img->chunk - img->len < len ? img->chunk - img->len : len;
			memcpy(img->buf + IMG_FRAME + img->len, p, k);
			img->len += k;
			if (img->len == img->chunk) {
				r = buf_flush(img);
				img->len = 0;
				if (r < 0)
					return r;
			}
		}
		p += k;
		len -= k;
		img->count += k;
	}
	return 0;
}

int blob_finish(struct crf_img *img)
{
	uint8_t m[IMG_END_SIZE];
	int r;

	if (img->len) {
		r = buf_flush(img);
		if (r < 0)
			return r;
		img->len = 0;
	}
	img_end_marker(m, img->count);
	return img_write(img, m, sizeof(m));
}

/* Opening */

static int diagnose_end(struct crf_img *img, uint64_t at, uint64_t bytes)
{
	uint8_t m[IMG_END_SIZE];
	uint64_t count;
	int r;

	if (img->size - at < IMG_END_SIZE)
		return img_fail(img, -ENODATA,
				"truncated end marker at offset %" PRIu64
				" (%u bytes needed, %" PRIu64 " left)",
				at, IMG_END_SIZE, img->size - at);
	r = img_pread(img, m, sizeof(m), at);
	if (r < 0)
		return r;
	r = img_check_end_marker(img, m, at, &count);
	if (r < 0)
		return r;
	if (count != bytes)
		return img_fail(img, -EBADMSG,
				"end marker at offset %" PRIu64 " counts %" PRIu64
				" bytes, the chunks hold %" PRIu64,
				at, count, bytes);
	if (at + IMG_END_SIZE != img->size)
		return img_fail(
			img, -EBADMSG,
			"%" PRIu64
			" bytes of trailing garbage after the end marker at offset %" PRIu64,
			img->size - at - IMG_END_SIZE, at);
	return img_fail(img, -EBADMSG, "inconsistent end marker at offset %" PRIu64, at);
}

/*
 * The end marker did not match the file size: walk the chunk frames from
 * the start to say what is wrong and where.  Always returns an error.
 */
static int diagnose(struct crf_img *img)
{
	uint64_t at = img->hdr_len, bytes = 0;
	bool short_seen = false;

	for (uint64_t idx = 0;; idx++) {
		uint64_t left = img->size - at;
		uint8_t f[4];
		uint32_t n;
		int r;

		if (left < sizeof(f))
			return img_fail(img, -ENODATA,
					left ? "truncated chunk header at offset %" PRIu64
					     : "file ends at offset %" PRIu64
					       " without an end marker",
					at);
		r = img_pread(img, f, sizeof(f), at);
		if (r < 0)
			return r;
		n = get_le32(f);
		if (n == IMG_END_TAG)
			return diagnose_end(img, at, bytes);
		if (n == 0 || n > img->chunk || short_seen)
			return img_fail(img, -EBADMSG,
					"chunk %" PRIu64 " at offset %" PRIu64
					" has a bad length %u (chunk size %u%s)",
					idx, at, n, img->chunk,
					short_seen ? ", after a short chunk" : "");
		if (left < IMG_FRAME || n > left - IMG_FRAME)
			return img_fail(img, -ENODATA,
					"truncated chunk %" PRIu64 " at offset %" PRIu64
					" (header says %u bytes, %" PRIu64 " left)",
					idx, at, n, left < IMG_FRAME ? 0 : left - IMG_FRAME);
		short_seen = n < img->chunk;
		bytes += n;
		at += IMG_FRAME + n;
	}
}

int blob_open_body(struct crf_img *img)
{
	uint64_t body = img->size - img->hdr_len, count;
	uint8_t m[IMG_END_SIZE];
	int r;

	img->cap = img->chunk;
	img->buf = malloc(IMG_FRAME + img->chunk);
	if (!img->buf)
		return crf_error_errno(ENOMEM, "%s", img->path);
	if (body < IMG_END_SIZE)
		return diagnose(img);
	/* A valid end marker whose byte count explains the file size exactly. */
	r = img_pread(img, m, sizeof(m), img->size - IMG_END_SIZE);
	if (r < 0)
		return r;
	count = get_le64(m + 4);
	if (get_le32(m) != IMG_END_TAG || get_le32(m + 12) != crf_crc32c(0, m, 12) || count > body)
		return diagnose(img);
	img->count = count;
	if (img->hdr_len + count + IMG_FRAME * chunk_count(img) + IMG_END_SIZE != img->size) {
		img->count = 0;
		return diagnose(img);
	}
	return 0;
}

int crf_blob_open(struct crf_imgdir *dir, const char *name, struct crf_img **out)
{
	return img_open(dir, name, CRF_IMG_BLOB, out);
}

uint64_t crf_blob_size(const struct crf_img *img)
{
	return img->count;
}

uint32_t crf__blob_chunk_size(const struct crf_img *img)
{
	return img->chunk;
}

/* Reading */

/* Read chunk @idx, its frame into @frame and its data into @data, and check it. */
static int chunk_read(struct crf_img *img, uint64_t idx, uint8_t *frame, uint8_t *data)
{
	uint32_t n = chunk_len(img, idx);
	uint64_t at = chunk_off(img, idx);
	int r;

	if (data == frame + IMG_FRAME) {
		r = img_pread(img, frame, IMG_FRAME + n, at);
	} else {
		r = img_pread(img, frame, IMG_FRAME, at);
		if (r == 0)
			r = img_pread(img, data, n, at + IMG_FRAME);
	}
	if (r < 0)
		return r;
	if (get_le32(frame) != n)
		return img_fail(img, -EBADMSG,
				"chunk %" PRIu64 " at offset %" PRIu64
				" has length %u, expected %u",
				idx, at, get_le32(frame), n);
	if (get_le32(frame + 4) != frame_crc(frame, data, n))
		return img_fail(img, -EBADMSG,
				"checksum mismatch in chunk %" PRIu64 " at offset %" PRIu64, idx,
				at);
	return 0;
}

/* Bring chunk @idx into the cache. */
static int chunk_load(struct crf_img *img, uint64_t idx)
{
	int r;

	if (img->cached == idx)
		return 0;
	img->cached = UINT64_MAX;
	r = chunk_read(img, idx, img->buf, img->buf + IMG_FRAME);
	if (r == 0)
		img->cached = idx;
	return r;
}

static int check_blob_reader(const struct crf_img *img)
{
	if (!img->writer && img->kind == CRF_IMG_BLOB)
		return img->err;
	crf_error("%s: not a blob image open for reading", img->path);
	return -EINVAL;
}

int crf__blob_layout(const struct crf_img *img, int *fd, uint64_t *hdr_len, uint32_t *chunk)
{
	int r = check_blob_reader(img);

	if (r < 0)
		return r;
	*fd = img->fd;
	*hdr_len = img->hdr_len;
	*chunk = img->chunk;
	return 0;
}

int crf_blob_pread(struct crf_img *img, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;
	int r;

	r = check_blob_reader(img);
	if (r < 0)
		return r;
	if (off > img->count || len > img->count - off) {
		crf_error("%s: read of %zu bytes at data offset %" PRIu64
			  " is past the end (%" PRIu64 " bytes)",
			  img->path, len, off, img->count);
		return -ERANGE;
	}
	while (len) {
		uint64_t idx = off / img->chunk;
		uint32_t in = off % img->chunk, n = chunk_len(img, idx);
		size_t k = n - in < len ? n - in : len;
		uint8_t frame[IMG_FRAME];

		/* Whole chunks go straight to the caller, verified in place. */
		if (k == n && img->cached != idx) {
			r = chunk_read(img, idx, frame, p);
		} else {
			r = chunk_load(img, idx);
			if (r == 0)
				memcpy(p, img->buf + IMG_FRAME + in, k);
		}
		if (r < 0)
			return r;
		p += k;
		off += k;
		len -= k;
	}
	return 0;
}

/*
 * Verifying a large blob is bound by how fast one CPU reads memory (the
 * page cache), not by the checksum, so its chunks are split between two
 * threads.  The threads only tell where they first failed to confirm a
 * chunk; the caller reads that chunk again the ordinary way, so a problem
 * is logged once, by one thread, and reads exactly as without threads.
 */
#define VERIFY_SPLIT_MIN (64u << 20)

struct verify_part {
	const struct crf_img *img;
	uint64_t lo, hi; /* chunk numbers */
	uint64_t bad;	 /* the first chunk not confirmed, or @hi */
};

static bool chunk_good(const struct crf_img *img, uint64_t idx, uint8_t *buf)
{
	uint32_t n = chunk_len(img, idx);
	uint64_t at = chunk_off(img, idx);
	size_t got = 0;

	while (got < IMG_FRAME + n) {
		ssize_t k = pread(img->fd, buf + got, IMG_FRAME + n - got, at + got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		got += k;
	}
	return get_le32(buf) == n && get_le32(buf + 4) == frame_crc(buf, buf + IMG_FRAME, n);
}

static void *verify_part(void *arg)
{
	struct verify_part *v = arg;
	uint8_t *buf = malloc(IMG_FRAME + v->img->chunk);

	v->bad = v->lo;
	if (!buf)
		return NULL;
	while (v->bad < v->hi && chunk_good(v->img, v->bad, buf))
		v->bad++;
	free(buf);
	return NULL;
}

/* Check chunks [@from, @to) one by one, logging the first bad one. */
static int verify_serial(struct crf_img *img, uint64_t from, uint64_t to)
{
	for (uint64_t idx = from; idx < to; idx++) {
		int r = chunk_load(img, idx);

		if (r < 0)
			return r;
	}
	return 0;
}

int blob_verify(struct crf_img *img)
{
	uint64_t n = chunk_count(img), half = n / 2;
	struct verify_part part[2] = {
		{.img = img, .lo = 0, .hi = half},
		{.img = img, .lo = half, .hi = n},
	};
	pthread_t t;
	int r;

	r = check_blob_reader(img);
	if (r < 0)
		return r;
	if (img->count < VERIFY_SPLIT_MIN || pthread_create(&t, NULL, verify_part, &part[1]))
		return verify_serial(img, 0, n);
	verify_part(&part[0]);
	pthread_join(t, NULL);
	for (int i = 0; i < 2; i++) {
		r = verify_serial(img, part[i].bad, part[i].hi);
		if (r < 0)
			return r;
	}
	return 0;
}
