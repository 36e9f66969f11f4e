/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * image-internal.h - what image.c, record.c and blob.c share: the on-disk
 * constants (docs/image-format.md), the image handle and the checked I/O
 * helpers.
 * Functions named crf__* are also used by the crf binary and the unit tests
 * (exported in libcrf's CRF_PRIVATE node); the rest stay inside libcrf.
 */
#ifndef CRF_IMAGE_INTERNAL_H
#define CRF_IMAGE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/uio.h>

#include <crf/cleanup.h>
#include <crf/image.h>

#include <crf/layout.h>

#define IMG_MAGIC     "CRFI"
#define IMG_FIXED_HDR 12u /* magic, major, minor, kind, type-name length */
#define IMG_MAX_TYPE  255u
#define IMG_MAX_HDR   (IMG_FIXED_HDR + IMG_MAX_TYPE + 4u + 4u)
#define IMG_FRAME     CRF_IMG_FRAME /* u32 length, u32 CRC32C before each record or chunk */
#define IMG_END_TAG   0xffffffffu
#define IMG_END_SIZE  16u /* u32 tag, u64 count, u32 CRC32C */
#define IMG_MIN_CHUNK 4096u
/* Read-ahead and write-behind of record images. */
#define IMG_BUF_SIZE (128u << 10)

struct crf_imgdir {
	int fd;
	enum crf_imgdir_mode mode;
	char *path;
};

struct crf_img {
	struct crf_imgdir *dir;
	char *name;
	char *path; /* dir/name, for messages */
	char *tmp;  /* writer: the hidden temporary name */
	int fd;
	bool writer;
	bool eof; /* reader: the end marker has been verified */
	int err;  /* sticky error, already logged */
	enum crf_img_kind kind;
	char type[IMG_MAX_TYPE + 1];
	const ProtobufCMessageDescriptor *desc;
	uint64_t hdr_len;
	uint64_t size;	  /* reader: the file size */
	uint64_t off;	  /* next file offset to read or write */
	uint64_t count;	  /* records so far; blob bytes (reader: all of them) */
	uint64_t rec_off; /* reader: offset of the record last returned */

	/*
	 * Records: read-ahead or write-behind buffer; buf[pos, len) are the
	 * file bytes at off (reader) or not yet written (writer, pos = 0).
	 * Blobs: one chunk with its frame; the writer fills buf + IMG_FRAME
	 * up to len bytes, the reader caches the chunk numbered @cached.
	 */
	uint8_t *buf;
	size_t cap, pos, len;
	uint32_t chunk;
	uint64_t cached;
};

static inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, v);
	put_le16(p + 2, v >> 16);
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, v);
	put_le32(p + 4, v >> 32);
}

static inline uint16_t get_le16(const uint8_t *p)
{
	return p[0] | (uint16_t)p[1] << 8;
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return get_le16(p) | (uint32_t)get_le16(p + 2) << 16;
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static inline const char *img_kind_name(enum crf_img_kind kind)
{
	return kind == CRF_IMG_BLOB ? "blob" : "record";
}

/* image.c */

/* Log "PATH: message" once, remember @err as the image's error, return it. */
int img_fail(struct crf_img *img, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Read exactly @n bytes at @off; an early end of file is -ENODATA.  Logged. */
int img_pread(struct crf_img *img, void *buf, size_t n, uint64_t off);
/* Append @n bytes at the writer's file position.  Logged. */
int img_write(struct crf_img *img, const void *buf, size_t n);
/* Append the @n buffers of @iov, which it consumes (a short write advances it).  Logged. */
int img_writev(struct crf_img *img, struct iovec *iov, int n);
/* Open @name and check its header, which must be of @kind (0: any). */
int img_open(struct crf_imgdir *dir, const char *name, enum crf_img_kind kind,
	     struct crf_img **out);
/* Create the temporary file of @name and write its header. */
int img_create(struct crf_imgdir *dir, const char *name, enum crf_img_kind kind, const char *type,
	       uint32_t chunk, struct crf_img **out);
void img_end_marker(uint8_t out[IMG_END_SIZE], uint64_t count);
/* Check the end marker @m read at @at; 0 with *@count, or -EBADMSG (logged). */
int img_check_end_marker(struct crf_img *img, const uint8_t m[IMG_END_SIZE], uint64_t at,
			 uint64_t *count);

/* record.c: write the buffered records and the end marker. */
int record_finish(struct crf_img *img);

/* blob.c */

/* Set up a blob reader after its header is read: check the end marker. */
int blob_open_body(struct crf_img *img);
/* Write the last partial chunk and the end marker. */
int blob_finish(struct crf_img *img);
int blob_verify(struct crf_img *img);

/* Shared with the crf binary and the tests. */

uint32_t crf__crc32c_sw(uint32_t crc, const void *buf, size_t len);
uint32_t crf__crc32c_hw(uint32_t crc, const void *buf, size_t len);
bool crf__crc32c_hw_available(void);

/* A blob writer with another chunk size (tests use small chunks). */
int crf__blob_create_chunked(struct crf_imgdir *dir, const char *name, uint32_t chunk,
			     struct crf_img **out);
uint32_t crf__blob_chunk_size(const struct crf_img *img);
/*
 * Where a blob reader's data lies in its file, for the restorer, which reads
 * pages with pread() on @fd: data byte D is at @hdr_len + (D / @chunk) *
 * (IMG_FRAME + @chunk) + IMG_FRAME + D % @chunk.  The fd stays the image's.
 * 0, or -EINVAL (logged) when @img is not a blob open for reading.
 */
int crf__blob_layout(const struct crf_img *img, int *fd, uint64_t *hdr_len, uint32_t *chunk);
/* Whether a directory entry is an image file: "*.img", no leading dot. */
bool crf__img_is_image_name(const char *name);
/*
 * Decode the record crf_img_read_raw() returned last as @desc; a payload
 * that does not decode is reported with the file and offset (-EBADMSG).
 */
int crf__img_unpack(struct crf_img *img, const ProtobufCMessageDescriptor *desc, const uint8_t *buf,
		    size_t len, ProtobufCMessage **msg);

#endif
