// SPDX-License-Identifier: GPL-2.0-only
/*
 * Record images: protobuf-c messages, each framed by its length and a
 * CRC32C, then the end marker with the record count.  Reads and writes go
 * through one buffer so that small records cost no system call each.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "crf-private.h"
#include "image-internal.h"

/* Writing records */

static int wbuf_flush(struct crf_img *img)
{
	int r = img_write(img, img->buf, img->len);

	img->len = 0;
	return r;
}

static int check_writer(const struct crf_img *img, enum crf_img_kind kind)
{
	if (img->writer && img->kind == kind)
		return img->err;
	crf_error("%s: not a %s image open for writing", img->path, img_kind_name(kind));
	return -EINVAL;
}

int crf_img_write(struct crf_img *img, const ProtobufCMessage *msg)
{
	_cleanup_free_ uint8_t *big = NULL;
	uint8_t *frame;
	size_t n;
	int r;

	r = check_writer(img, CRF_IMG_RECORDS);
	if (r < 0)
		return r;
	if (strcmp(msg->descriptor->name, img->type))
		return img_fail(img, -EINVAL, "cannot write a %s record into an image of %s",
				msg->descriptor->name, img->type);
	n = protobuf_c_message_get_packed_size(msg);
	if (n > CRF_IMG_MAX_RECORD)
		return img_fail(img, -EFBIG, "record of %zu bytes exceeds the limit of %u bytes", n,
				CRF_IMG_MAX_RECORD);
	if (IMG_FRAME + n > img->cap - img->len) {
		r = wbuf_flush(img);
		if (r < 0)
			return r;
	}
	if (IMG_FRAME + n <= img->cap) {
		frame = img->buf + img->len;
	} else {
		frame = big = malloc(IMG_FRAME + n);
		if (!big)
			return img->err = crf_error_errno(ENOMEM, "%s", img->path);
	}
	put_le32(frame, n);
	protobuf_c_message_pack(msg, frame + IMG_FRAME);
	put_le32(frame + 4, crf_crc32c(crf_crc32c(0, frame, 4), frame + IMG_FRAME, n));
	img->count++;
	if (big)
		return img_write(img, big, IMG_FRAME + n);
	img->len += IMG_FRAME + n;
	return 0;
}

/* Reading records */

/* Take @n bytes at img->off, which the caller checked are in the file. */
static int rbuf_take(struct crf_img *img, void *dst, size_t n)
{
	size_t k = img->len - img->pos < n ? img->len - img->pos : n;
	uint8_t *p = dst;
	int r;

	memcpy(p, img->buf + img->pos, k);
	img->pos += k;
	img->off += k;
	if (k == n)
		return 0;
	p += k;
	n -= k;
	if (n >= img->cap) {
		r = img_pread(img, p, n, img->off);
		img->off += n;
		return r;
	}
	img->pos = 0;
	img->len = img->size - img->off < img->cap ? img->size - img->off : img->cap;
	r = img_pread(img, img->buf, img->len, img->off);
	if (r < 0)
		return r;
	memcpy(p, img->buf, n);
	img->pos = n;
	img->off += n;
	return 0;
}

static int read_end(struct crf_img *img, uint8_t m[IMG_END_SIZE], uint64_t at)
{
	uint64_t count;
	int r;

	if (img->size - at < IMG_END_SIZE)
		return img_fail(img, -ENODATA,
				"truncated end marker at offset %" PRIu64
				" (%u bytes needed, %" PRIu64 " left)",
				at, IMG_END_SIZE, img->size - at);
	r = rbuf_take(img, m + 4, IMG_END_SIZE - 4);
	if (r < 0)
		return r;
	r = img_check_end_marker(img, m, at, &count);
	if (r < 0)
		return r;
	if (count != img->count)
		return img_fail(img, -EBADMSG,
				"end marker at offset %" PRIu64 " counts %" PRIu64
				" records, the image holds %" PRIu64,
				at, count, img->count);
	if (img->off != img->size)
		return img_fail(
			img, -EBADMSG,
			"%" PRIu64
			" bytes of trailing garbage after the end marker at offset %" PRIu64,
			img->size - img->off, at);
	img->eof = true;
	return 0;
}

static int check_reader(const struct crf_img *img, enum crf_img_kind kind)
{
	if (!img->writer && img->kind == kind)
		return img->err;
	crf_error("%s: not a %s image open for reading", img->path, img_kind_name(kind));
	return -EINVAL;
}

/* Checks the frame at img->off; returns the payload length or -errno. */
static int64_t read_frame(struct crf_img *img, uint8_t f[IMG_END_SIZE])
{
	uint64_t at = img->off, left = img->size - at;
	uint32_t n;
	int r;

	if (left < 4)
		return img_fail(img, -ENODATA,
				left ? "truncated record header at offset %" PRIu64
				     : "file ends at offset %" PRIu64 " without an end marker",
				at);
	r = rbuf_take(img, f, 4);
	if (r < 0)
		return r;
	n = get_le32(f);
	if (n == IMG_END_TAG)
		return read_end(img, f, at);
	if (left < IMG_FRAME)
		return img_fail(img, -ENODATA, "truncated record header at offset %" PRIu64, at);
	if (n > CRF_IMG_MAX_RECORD)
		return img_fail(img, -EBADMSG,
				"record at offset %" PRIu64
				" claims %u bytes, over the limit of %u",
				at, n, CRF_IMG_MAX_RECORD);
	if (n > left - IMG_FRAME)
		return img_fail(img, -ENODATA,
				"truncated record at offset %" PRIu64
				" (header says %u bytes, %" PRIu64 " left)",
				at, n, left - IMG_FRAME);
	r = rbuf_take(img, f + 4, 4);
	if (r < 0)
		return r;
	return n;
}

int crf_img_read_raw(struct crf_img *img, uint8_t **buf, size_t *len)
{
	_cleanup_free_ uint8_t *payload = NULL;
	uint8_t f[IMG_END_SIZE];
	uint64_t at = img->off;
	int64_t n;
	int r;

	*buf = NULL;
	*len = 0;
	r = check_reader(img, CRF_IMG_RECORDS);
	if (r < 0 || img->eof)
		return r;
	n = read_frame(img, f);
	if (n < 0 || img->eof)
		return n;
	payload = malloc(n ? n : 1);
	if (!payload)
		return img->err = crf_error_errno(ENOMEM, "%s", img->path);
	r = rbuf_take(img, payload, n);
	if (r < 0)
		return r;
	if (get_le32(f + 4) != crf_crc32c(crf_crc32c(0, f, 4), payload, n))
		return img_fail(img, -EBADMSG,
				"checksum mismatch in record %" PRIu64 " at offset %" PRIu64,
				img->count, at);
	img->rec_off = at;
	img->count++;
	*buf = payload;
	*len = n;
	payload = NULL;
	return 1;
}

int crf__img_unpack(struct crf_img *img, const ProtobufCMessageDescriptor *desc, const uint8_t *buf,
		    size_t len, ProtobufCMessage **msg)
{
	*msg = protobuf_c_message_unpack(desc, NULL, len, buf);
	if (*msg)
		return 0;
	return img_fail(img, -EBADMSG,
			"record %" PRIu64 " at offset %" PRIu64 " does not decode as %s",
			img->count - 1, img->rec_off, desc->name);
}

int crf_img_read(struct crf_img *img, ProtobufCMessage **msg)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t len;
	int r;

	*msg = NULL;
	if (!img->desc) {
		crf_error("%s: opened without a message type, read it raw", img->path);
		return -EINVAL;
	}
	r = crf_img_read_raw(img, &buf, &len);
	if (r <= 0)
		return r;
	r = crf__img_unpack(img, img->desc, buf, len, msg);
	return r < 0 ? r : 1;
}

int crf_img_verify(struct crf_img *img)
{
	int r;

	if (img->kind == CRF_IMG_BLOB)
		return blob_verify(img);
	/* With a known type, every record must also decode. */
	do {
		_cleanup_free_ uint8_t *buf = NULL;
		ProtobufCMessage *msg;
		size_t len;

		r = crf_img_read_raw(img, &buf, &len);
		if (r > 0 && img->desc) {
			int k = crf__img_unpack(img, img->desc, buf, len, &msg);

			if (k < 0)
				return k;
			protobuf_c_message_free_unpacked(msg, NULL);
		}
	} while (r > 0);
	return r;
}

int record_finish(struct crf_img *img)
{
	uint8_t m[IMG_END_SIZE];
	int r;

	img_end_marker(m, img->count);
	r = wbuf_flush(img);
	return r < 0 ? r : img_write(img, m, sizeof(m));
}
