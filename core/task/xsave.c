// SPDX-License-Identifier: GPL-2.0-only
/*
 * The XSAVE area's layout, read from the CPU, and the signal-frame form of
 * a saved area (xsave.h says why the frame's size matters).
 *
 * The kernel sizes a task's signal frame from its fpstate: every feature
 * of XCR0 except the dynamic ones the task has not taken into use (AMX tile
 * data, granted by ARCH_REQ_XCOMP_PERM and allocated at its first use), in
 * the standard format, so up to the end of the highest such component.
 * The unit test test-xsave.c compares this with a real frame's software
 * bytes on the CPU it runs on.
 */
#include <asm/sigcontext.h>
#include <cpuid.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "xsave.h"

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

static void read_ids(struct crf_xsave_layout *l)
{
	uint32_t r[12];

	memset(l->vendor, 0, sizeof(l->vendor));
	memset(l->model, 0, sizeof(l->model));
	if (__get_cpuid(0, &r[0], &r[1], &r[2], &r[3])) {
		memcpy(l->vendor, &r[1], 4);
		memcpy(l->vendor + 4, &r[3], 4);
		memcpy(l->vendor + 8, &r[2], 4);
	}
	for (unsigned int i = 0; i < 3; i++)
		if (!__get_cpuid(0x80000002 + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2],
				 &r[4 * i + 3]))
			return;
	memcpy(l->model, r, sizeof(r));
}

int xsave_layout_read(struct crf_xsave_layout *l)
{
	uint32_t a, b, c, d;

	memset(l, 0, sizeof(*l));
	read_ids(l);
	/* CPUID.1:ECX.OSXSAVE: the kernel enabled XSAVE and XGETBV works. */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)))
		return -ENOTSUP;
	l->xcr0 = xgetbv0();
	for (unsigned int bit = 2; bit < CRF_XFEATURES; bit++) {
		if (!(l->xcr0 & (1ull << bit)))
			continue;
		__cpuid_count(0xd, bit, a, b, c, d);
		l->size[bit] = a;
		l->offset[bit] = b;
	}
	return 0;
}

const struct crf_xsave_layout *xsave_host(void)
{
	static struct crf_xsave_layout host;
	static int state; /* 0 unread, 1 read, -1 none */

	if (!state)
		state = xsave_layout_read(&host) == 0 ? 1 : -1;
	return state > 0 ? &host : NULL;
}

const char *xfeature_name(unsigned int bit, char *buf, size_t len)
{
	static const char *const names[] = {
		[0] = "x87",
		[1] = "SSE",
		[2] = "AVX (YMM upper halves)",
		[3] = "MPX bound registers",
		[4] = "MPX bound configuration",
		[5] = "AVX-512 opmask",
		[6] = "AVX-512 ZMM_Hi256",
		[7] = "AVX-512 Hi16_ZMM",
		[9] = "PKRU",
		[11] = "CET user state",
		[14] = "user interrupts",
		[17] = "AMX tile configuration",
		[18] = "AMX tile data",
		[19] = "APX extended registers",
	};

	if (bit < sizeof(names) / sizeof(names[0]) && names[bit])
		snprintf(buf, len, "%s (XSAVE feature %u)", names[bit], bit);
	else
		snprintf(buf, len, "XSAVE feature %u", bit);
	return buf;
}

uint64_t xsave_used(const void *area, size_t len)
{
	uint64_t bv;

	if (len < CRF_XSAVE_HDR_END)
		return 0;
	memcpy(&bv, (const char *)area + CRF_XSAVE_LEGACY, sizeof(bv));
	return bv;
}

uint64_t xsave_frame_features(const struct crf_xsave_layout *l)
{
	return l->xcr0 & ~CRF_XFEATURES_DYNAMIC;
}

uint32_t xsave_frame_size(const struct crf_xsave_layout *l)
{
	uint64_t features = xsave_frame_features(l);
	uint32_t size = CRF_XSAVE_HDR_END;

	for (unsigned int bit = 2; bit < CRF_XFEATURES; bit++)
		if ((features & (1ull << bit)) && l->offset[bit] + l->size[bit] > size)
			size = l->offset[bit] + l->size[bit];
	return size;
}

static int check_one(const struct crf_xsave_layout *img, const struct crf_xsave_layout *host,
		     unsigned int bit, size_t len, char *why, size_t n)
{
	char name[64];

	xfeature_name(bit, name, sizeof(name));
	if (!(host->xcr0 & (1ull << bit))) {
		snprintf(why, n, "it holds state of %s, which this CPU (%s) does not have", name,
			 host->model[0] ? host->model : host->vendor);
		return -ENOTSUP;
	}
	if ((1ull << bit) & CRF_XFEATURES_DYNAMIC) {
		snprintf(why, n, "it holds state of %s, which crf cannot restore yet", name);
		return -ENOTSUP;
	}
	if (bit < 2)
		return 0;
	if (img->offset[bit] != host->offset[bit] || img->size[bit] != host->size[bit]) {
		snprintf(why, n,
			 "%s is at offset %u, %u bytes, in the image's XSAVE layout but at "
			 "offset %u, %u bytes, on this CPU",
			 name, img->offset[bit], img->size[bit], host->offset[bit],
			 host->size[bit]);
		return -ENOTSUP;
	}
	if ((uint64_t)img->offset[bit] + img->size[bit] > len) {
		snprintf(why, n, "the saved area (%zu bytes) is too short for its %s state", len,
			 name);
		return -EBADMSG;
	}
	return 0;
}

int xsave_check(const struct crf_xsave_layout *img, const struct crf_xsave_layout *host,
		const void *area, size_t len, char *why, size_t n)
{
	uint64_t used = xsave_used(area, len);
	int r;

	if (len < CRF_XSAVE_LEGACY) {
		snprintf(why, n, "the saved area is %zu bytes, less than the legacy part", len);
		return -EBADMSG;
	}
	for (unsigned int bit = 0; bit < CRF_XFEATURES; bit++) {
		if (!(used & (1ull << bit)))
			continue;
		r = check_one(img, host, bit, len, why, n);
		if (r < 0)
			return r;
	}
	return 0;
}

size_t xsave_to_frame(const struct crf_xsave_layout *host, const void *area, size_t len, void *out)
{
	uint64_t features = xsave_frame_features(host);
	size_t size = xsave_frame_size(host);
	struct _fpx_sw_bytes sw = {
		.magic1 = FP_XSTATE_MAGIC1,
		.extended_size = (uint32_t)size + FP_XSTATE_MAGIC2_SIZE,
		.xfeatures = features,
		.xstate_size = (uint32_t)size,
	};
	char *x = out;
	uint64_t bv;

	if (len < CRF_XSAVE_HDR_END) {
		memcpy(out, area, len);
		return len;
	}
	memcpy(x, area, len < size ? len : size);
	if (len < size)
		memset(x + len, 0, size - len);
	/* Only what the frame carries; xsave_check() refused the rest. */
	bv = xsave_used(x, size) & features;
	memcpy(x + CRF_XSAVE_LEGACY, &bv, sizeof(bv));
	memcpy(x + CRF_XSAVE_SW_BYTES, &sw, sizeof(sw));
	return size;
}
