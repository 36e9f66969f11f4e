/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * xsave.h - the x86 XSAVE area: its layout on a CPU, what an area uses, and
 * the signal-frame form the restorer returns into the program with.
 *
 * PTRACE_GETREGSET NT_X86_XSTATE gives an area in the standard
 * (non-compacted) format sized for every feature the kernel enabled in XCR0,
 * AMX tile data included.  rt_sigreturn restores a frame's extended state
 * only when the frame's fx_sw_bytes.xstate_size is at most the size of the
 * task's own fpstate; a task that never asked for AMX has the smaller
 * default one, and a larger claim makes the kernel silently restore the
 * legacy FXSAVE part only (the upper halves of YMM/ZMM lost).  So the
 * restorer's frame is built with the size the kernel gives that task's own
 * signal frames: xsave_frame_size().
 */
#ifndef CRF_XSAVE_H
#define CRF_XSAVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRF_XFEATURES 64

/* The legacy FXSAVE area, the XSAVE header after it, XSTATE_BV in the header. */
#define CRF_XSAVE_LEGACY   512
#define CRF_XSAVE_HDR_END  576
#define CRF_XSAVE_SW_BYTES 464

/* Dynamic (permission-gated) features: AMX tile data. */
#define CRF_XFEATURE_XTILEDATA 18
#define CRF_XFEATURES_DYNAMIC  (1ull << CRF_XFEATURE_XTILEDATA)

/* A CPU's XSAVE layout: what the kernel enabled, and where each component lies. */
struct crf_xsave_layout {
	uint64_t xcr0;
	uint32_t offset[CRF_XFEATURES], size[CRF_XFEATURES]; /* bits >= 2 */
	char vendor[13];
	char model[49];
};

/*
 * This CPU's layout (CPUID leaf 0xd, XGETBV), read once.  NULL when the
 * CPU or the kernel has no XSAVE.
 */
const struct crf_xsave_layout *xsave_host(void);

/* Read this CPU's layout into @l; -ENOTSUP without XSAVE. */
int xsave_layout_read(struct crf_xsave_layout *l);

/* "AVX-512 ZMM_Hi256" for bit 6, "feature 27" for an unknown one. */
const char *xfeature_name(unsigned int bit, char *buf, size_t len);

/* The features an area holds state of (its XSTATE_BV); 0 for a legacy-only area. */
uint64_t xsave_used(const void *area, size_t len);

/*
 * The features and the size of the XSAVE part of the signal frames the
 * kernel gives a task on CPU @l that holds no dynamic feature's state:
 * every enabled feature but AMX tile data, the standard format up to the
 * end of the last one.
 */
uint64_t xsave_frame_features(const struct crf_xsave_layout *l);
uint32_t xsave_frame_size(const struct crf_xsave_layout *l);

/*
 * Can a task on CPU @host return into the state of @area, saved on CPU @img?
 * Every feature the area uses must be enabled on @host, at the same offset
 * and size, and not be a dynamic one (a frame of the default size cannot
 * carry it).  0, or -ENOTSUP with the reason in @why.
 */
int xsave_check(const struct crf_xsave_layout *img, const struct crf_xsave_layout *host,
		const void *area, size_t len, char *why, size_t n);

/*
 * The restorer's frame area for @area on CPU @host: xsave_frame_size()
 * bytes at @out (the restorer puts FP_XSTATE_MAGIC2 right after them), the
 * saved components copied as far as they fit, the rest zero (its features
 * are in their init state: XSTATE_BV says so), and the software bytes
 * claiming exactly that size and the frame features.  Returns the size.  An
 * area of the legacy part only is copied as it is (its length returned).
 */
size_t xsave_to_frame(const struct crf_xsave_layout *host, const void *area, size_t len, void *out);

#endif
