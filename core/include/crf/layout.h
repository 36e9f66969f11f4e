/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * crf/layout.h - layouts that crf, libcrf, plugins and the freestanding parasite and
 * restorer share, each defined once here.  Macros only: no libc, no types.
 */
#ifndef CRF_LAYOUT_H
#define CRF_LAYOUT_H

/*
 * The mm fields of prctl(PR_SET_MM_MAP) a restore sets, in struct
 * prctl_mm_map's order: X(name) for each.  struct crf_rst_mm (crf/restore.h,
 * the plugins' ABI) and struct crf_rst_args carry them as uint64_t.
 */
/* One field a line: clang-format 14 does not settle on a layout of the list. */
/* clang-format off */
#define CRF_MM_FIELDS(X)                                                                           \
	X(start_code)                                                                              \
	X(end_code)                                                                                \
	X(start_data)                                                                              \
	X(end_data)                                                                                \
	X(start_brk)                                                                               \
	X(brk)                                                                                     \
	X(start_stack)                                                                             \
	X(arg_start)                                                                               \
	X(arg_end)                                                                                 \
	X(env_start)                                                                               \
	X(env_end)
/* clang-format on */

/*
 * The interval timers, ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF: each as
 * interval seconds, microseconds, value seconds, microseconds, in
 * TaskCore.itimers (CRF_ITIMER_VALUES, flat) and crf_rst_args.itimer.
 */
#define CRF_ITIMERS	  3
#define CRF_ITIMER_WORDS  4
#define CRF_ITIMER_VALUES (CRF_ITIMERS * CRF_ITIMER_WORDS)

/*
 * Image framing (docs/image-format.md): a u32 length and a u32 CRC32C
 * before each record and each blob chunk.  Chunk @idx of a blob whose
 * chunks are @chunk bytes starts (frame first) at CRF_BLOB_CHUNK_OFF.
 */
#define CRF_IMG_FRAME 8u
#define CRF_BLOB_CHUNK_OFF(hdr_len, chunk, idx)                                                    \
	((hdr_len) + (idx) * ((uint64_t)CRF_IMG_FRAME + (chunk)))

#endif
