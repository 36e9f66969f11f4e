/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The freestanding blobs embedded in crf, generated at build time from
 * parasite/ (see parasite/meson.build).  Each is a flat image whose first
 * byte is its entry point.
 */
#ifndef CRF_BLOBS_H
#define CRF_BLOBS_H

#include <stddef.h>

extern const unsigned char crf_parasite_blob[];
extern const size_t crf_parasite_blob_size;

extern const unsigned char crf_restorer_blob[];
extern const size_t crf_restorer_blob_size;

#endif
