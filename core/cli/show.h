/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * show.h - decode images to JSON for `crf show`.
 *
 * The decoding is generic: records are printed by walking the protobuf-c
 * descriptor of their message type, found by name in @schemas (a
 * NULL-terminated array).  A record whose type no schema describes is
 * printed as {"size": N, "unknown_type": true}.
 *
 * Every checksum of an image is verified before anything of it is printed,
 * so a corrupt image prints nothing: the error is logged (file and offset)
 * and returned.
 */
#ifndef CRF_SHOW_H
#define CRF_SHOW_H

#include <stdio.h>

#include <protobuf-c/protobuf-c.h>

struct crf_imgdir;

/*
 * Print image @name of @dir as one JSON object, without a trailing newline:
 *   {"file": NAME, "kind": "records", "type": TYPE, "records": [...]}
 *   {"file": NAME, "kind": "blob", "size": BYTES, "chunks": N}
 * Returns 0 or -errno (logged).
 */
int crf_show_image(FILE *out, struct crf_imgdir *dir, const char *name,
		   const ProtobufCMessageDescriptor *const *schemas);

/*
 * Print {"images": [...]} with one object as above for every image file of
 * @dir in name order, and a newline.  Stops at the first error and returns
 * it (logged); then nothing is printed.
 */
int show_dir(FILE *out, struct crf_imgdir *dir, const ProtobufCMessageDescriptor *const *schemas);

#endif
