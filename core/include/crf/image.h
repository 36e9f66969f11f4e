/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * crf/image.h - the image store.
 *
 * A dump is a directory.  Each kind of state is one image file: a header
 * (magic, format version, image type, the protobuf message type of its
 * records), then records, each a length, a CRC32C and a protobuf-c message,
 * then an end marker with the record count.  Raw data (memory pages, file
 * contents) lives in blob images: the same header, then fixed-size chunks,
 * each with its own CRC32C, then an end marker with the byte count.  The
 * layout is documented byte by byte in docs/image-format.md.
 *
 * Every reader checks every length against the file size and a sane maximum
 * and verifies every checksum before handing data back.  Any inconsistency
 * is reported as one error naming the file and the byte offset, and the call
 * returns -EBADMSG (corrupt) or -ENODATA (truncated); nothing is trusted
 * before it has been checked.
 */
#ifndef CRF_IMAGE_H
#define CRF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <protobuf-c/protobuf-c.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Format version of the container (header, framing); not of the schemas. */
#define CRF_IMG_FORMAT_MAJOR 1
#define CRF_IMG_FORMAT_MINOR 0

/* Largest record a reader accepts, and the chunk size of blob images. */
#define CRF_IMG_MAX_RECORD (64u << 20)
#define CRF_IMG_BLOB_CHUNK (256u << 10)

/* File names the core owns. */
#define CRF_IMG_INVENTORY "inventory.img"

struct crf_imgdir;
struct crf_img;

enum crf_imgdir_mode {
	CRF_IMGDIR_READ,
	CRF_IMGDIR_WRITE, /* creates the directory if needed; it must hold no images */
};

/* Open an image directory.  0 or -errno (logged). */
int crf_imgdir_open(const char *path, enum crf_imgdir_mode mode, struct crf_imgdir **out);
void crf_imgdir_close(struct crf_imgdir *dir);
/*
 * Make every image written to @dir durable (syncfs, then the directory
 * itself).  Images are not synced one by one; `crf dump --sync` calls this
 * once before it kills the tree, the only other copy of the state.
 */
int crf_imgdir_sync(struct crf_imgdir *dir);
const char *crf_imgdir_path(const struct crf_imgdir *dir);
int crf_imgdir_fd(const struct crf_imgdir *dir);

/*
 * ABI 1.5: call @fn(@arg, NAME, PID) for every per-task image of @dir named
 * "PREFIX-PID.img" (@prefix "mm" finds mm-1234.img, not mm-01234.img nor
 * mm-1234.img.tmp), in increasing PID order.  Stops at the first @fn that
 * returns < 0 and returns that; 0 when every call returned >= 0; -errno
 * (logged) when the directory cannot be read.
 */
int crf_imgdir_each_task(struct crf_imgdir *dir, const char *prefix,
			 int (*fn)(void *arg, const char *name, pid_t pid), void *arg);

/*
 * Record images.  @name is a file name inside the directory ("mm-1234.img");
 * @type is the full protobuf name of the records' message, which readers
 * check ("crf.core.Inventory").  Writers are atomic: records go to a hidden
 * temporary file, renamed into place by crf_img_close(), so a failed dump
 * never leaves a half-written image under the real name.
 */
int crf_img_create(struct crf_imgdir *dir, const char *name, const ProtobufCMessageDescriptor *type,
		   struct crf_img **out);
int crf_img_write(struct crf_img *img, const ProtobufCMessage *msg);

/* Open for reading; checks the header and that @type matches. */
int crf_img_open(struct crf_imgdir *dir, const char *name, const ProtobufCMessageDescriptor *type,
		 struct crf_img **out);
/*
 * Read the next record.  Returns 1 and sets *@msg (free it with
 * protobuf_c_message_free_unpacked(*msg, NULL)), 0 at the verified end
 * marker, or a negative errno (logged).
 */
int crf_img_read(struct crf_img *img, ProtobufCMessage **msg);

/*
 * Blob images: raw bytes, chunked and checksummed.  Appends to a blob are
 * sequential; reads may seek (crf_img_pread) since chunks have a fixed size.
 */
int crf_blob_create(struct crf_imgdir *dir, const char *name, struct crf_img **out);
int crf_blob_write(struct crf_img *img, const void *buf, size_t len);
int crf_blob_open(struct crf_imgdir *dir, const char *name, struct crf_img **out);
/* Bytes of data in an open blob (from its verified end marker). */
uint64_t crf_blob_size(const struct crf_img *img);
/* Read @len bytes at data offset @off, verifying every chunk it touches.
 * Returns 0 or -errno (logged); reading past the end is -ERANGE. */
int crf_blob_pread(struct crf_img *img, void *buf, size_t len, uint64_t off);

/*
 * Finish an image.  For writers: write the end marker, fsync, and rename the
 * file into place; returns 0 or -errno.  For readers: returns 0.  Always frees
 * @img.  crf_img_abort() drops a writer's temporary file instead.
 */
int crf_img_close(struct crf_img *img);
void crf_img_abort(struct crf_img *img);

/*
 * ABI 1.5: the end of a function that wrote @img, where @r says how the
 * writing went: r >= 0 closes @img (crf_img_close) and returns its result
 * (0 or -errno), r < 0 aborts it (crf_img_abort) and returns @r.  Always
 * frees @img; NULL is closed as nothing (0).  So a writer ends with
 * `return crf_img_finish(img, r);`.
 */
int crf_img_finish(struct crf_img *img, int r);

/*
 * ABI 1.5 (header only): an image variable aborted when it goes out of
 * scope (crf/cleanup.h): a writer's temporary file is removed, a reader is
 * closed.  Hand it on with TAKE_PTR: `return crf_img_close(TAKE_PTR(img));`.
 */
static inline void crf_img_abortp(struct crf_img **img)
{
	crf_img_abort(*img);
}
#define _cleanup_img_ __attribute__((cleanup(crf_img_abortp)))

/* The file name and the protobuf type name recorded in the header ("" for blobs). */
const char *crf_img_name(const struct crf_img *img);
const char *crf_img_type(const struct crf_img *img);

/* Image kinds, as recorded in the header. */
enum crf_img_kind {
	CRF_IMG_RECORDS = 1,
	CRF_IMG_BLOB = 2,
};

/*
 * Open any image without knowing its schema (for `crf show` and for
 * verification): sets @kind and the header's type name.  Records are then
 * read raw with crf_img_read_raw().
 */
int crf_img_open_any(struct crf_imgdir *dir, const char *name, struct crf_img **out);
enum crf_img_kind crf_img_kind(const struct crf_img *img);
/* Returns 1 with a malloc'd payload in @buf and its size in @len, 0 at the end, or -errno. */
int crf_img_read_raw(struct crf_img *img, uint8_t **buf, size_t *len);
/* Walk a whole open image (any kind), verifying everything; 0 or -errno. */
int crf_img_verify(struct crf_img *img);

/*
 * ABI 1.5: for a restore's checks before the first fork (docs/image-format.md,
 * "What restore validates"): is @pid, named by @img (the image, and the
 * record if it is one of several: "cgroup.img: record 3"), a live process
 * of the dump (the core checked that exactly those have a core-PID.img)?
 * 0, or -EBADMSG after logging @img and the PID.
 */
int crf_img_check_task(struct crf_imgdir *dir, const char *img, pid_t pid);

/* CRC32C (Castagnoli), as used in every image: crc = crf_crc32c(0, p, n). */
uint32_t crf_crc32c(uint32_t crc, const void *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
