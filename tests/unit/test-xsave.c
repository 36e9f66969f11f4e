// SPDX-License-Identifier: GPL-2.0-only
/*
 * The XSAVE layout and the restorer's signal-frame form of a saved area:
 * checked against a real frame the kernel builds on this CPU, and on
 * layouts of CPUs this test may not run on (AMX, no AVX-512).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "helpers.h"
#include "xsave.h"

/* struct _fpx_sw_bytes, at CRF_XSAVE_SW_BYTES of an XSAVE area. */
struct sw_bytes {
	uint32_t magic1, extended_size;
	uint64_t xfeatures;
	uint32_t xstate_size;
};

static struct sw_bytes frame_sw;
static uint64_t frame_bv;

static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
	const ucontext_t *uc = ctx;
	const char *fp = (const char *)uc->uc_mcontext.fpregs;

	(void)sig;
	(void)si;
	memcpy(&frame_sw.magic1, fp + CRF_XSAVE_SW_BYTES, 4);
	memcpy(&frame_sw.extended_size, fp + CRF_XSAVE_SW_BYTES + 4, 4);
	memcpy(&frame_sw.xfeatures, fp + CRF_XSAVE_SW_BYTES + 8, 8);
	memcpy(&frame_sw.xstate_size, fp + CRF_XSAVE_SW_BYTES + 16, 4);
	memcpy(&frame_bv, fp + CRF_XSAVE_LEGACY, 8);
}

/* What the kernel puts in this process's own signal frames is what crf computes. */
static void test_kernel_frame(void **state)
{
	const struct crf_xsave_layout *host = xsave_host();
	struct sigaction sa = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO};

	(void)state;
	assert_non_null(host);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	assert_int_equal(raise(SIGUSR1), 0);
	assert_int_equal(frame_sw.magic1, 0x46505853u); /* FP_XSTATE_MAGIC1 */
	assert_int_equal(frame_sw.xstate_size, xsave_frame_size(host));
	assert_int_equal(frame_sw.extended_size, xsave_frame_size(host) + 4);
	assert_int_equal(frame_sw.xfeatures, xsave_frame_features(host));
	assert_true((host->xcr0 & 7) == 7 || (host->xcr0 & 3) == 3);
}

/* A Sapphire Rapids-like layout: AVX-512, PKRU and AMX. */
static void amx_layout(struct crf_xsave_layout *l)
{
	static const uint32_t off[] = {[2] = 576,  [5] = 1088,	[6] = 1152, [7] = 1664,
				       [9] = 2688, [17] = 2752, [18] = 2816};
	static const uint32_t size[] = {
		[2] = 256, [5] = 64, [6] = 512, [7] = 1024, [9] = 8, [17] = 64, [18] = 8192};

	memset(l, 0, sizeof(*l));
	l->xcr0 = 0x602e7;
	for (unsigned int i = 2; i < sizeof(off) / sizeof(off[0]); i++) {
		l->offset[i] = off[i];
		l->size[i] = size[i];
	}
	strcpy(l->model, "test AMX CPU");
}

/* An AVX2-only layout: no AVX-512, no PKRU. */
static void avx2_layout(struct crf_xsave_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->xcr0 = 0x7;
	l->offset[2] = 576;
	l->size[2] = 256;
	strcpy(l->model, "test AVX2 CPU");
}

static uint8_t *area_with(size_t len, uint64_t bv)
{
	uint8_t *a = malloc(len);

	assert_non_null(a);
	for (size_t i = 0; i < len; i++)
		a[i] = (uint8_t)(i * 7 + 1);
	memset(a + CRF_XSAVE_LEGACY, 0, 64);
	memcpy(a + CRF_XSAVE_LEGACY, &bv, sizeof(bv));
	return a;
}

static void read_sw(const uint8_t *x, struct sw_bytes *sw)
{
	memcpy(&sw->magic1, x + CRF_XSAVE_SW_BYTES, 4);
	memcpy(&sw->extended_size, x + CRF_XSAVE_SW_BYTES + 4, 4);
	memcpy(&sw->xfeatures, x + CRF_XSAVE_SW_BYTES + 8, 8);
	memcpy(&sw->xstate_size, x + CRF_XSAVE_SW_BYTES + 16, 4);
}

/* ptrace's area on an AMX CPU is 11008 bytes; the task's frames are 2816. */
static void test_frame_amx_truncates(void **state)
{
	struct crf_xsave_layout l;
	uint8_t *a, *out;
	struct sw_bytes sw;
	uint64_t bv;

	(void)state;
	amx_layout(&l);
	assert_int_equal(xsave_frame_size(&l), 2816);
	assert_int_equal(xsave_frame_features(&l), 0x202e7);
	a = area_with(11008, 0xe6);
	out = calloc(1, 11008);
	assert_int_equal(xsave_to_frame(&l, a, 11008, out), 2816);
	read_sw(out, &sw);
	assert_int_equal(sw.magic1, 0x46505853u);
	assert_int_equal(sw.xstate_size, 2816);
	assert_int_equal(sw.extended_size, 2820);
	assert_int_equal(sw.xfeatures, 0x202e7);
	memcpy(&bv, out + CRF_XSAVE_LEGACY, 8);
	assert_int_equal(bv, 0xe6);
	/* The registers themselves are copied as they were. */
	assert_memory_equal(out, a, CRF_XSAVE_SW_BYTES);
	assert_memory_equal(out + CRF_XSAVE_HDR_END, a + CRF_XSAVE_HDR_END, 2816 - 576);
	for (size_t i = 2816; i < 11008; i++)
		assert_int_equal(out[i], 0);
	free(a);
	free(out);
}

/* An area from a CPU with fewer components: the rest is zero, in its init state. */
static void test_frame_pads(void **state)
{
	struct crf_xsave_layout l;
	uint8_t *a, *out;

	(void)state;
	amx_layout(&l);
	a = area_with(2696, 0x6);
	out = malloc(2816);
	memset(out, 0xaa, 2816);
	assert_int_equal(xsave_to_frame(&l, a, 2696, out), 2816);
	assert_memory_equal(out + CRF_XSAVE_HDR_END, a + CRF_XSAVE_HDR_END, 2696 - 576);
	for (size_t i = 2696; i < 2816; i++)
		assert_int_equal(out[i], 0);
	free(a);
	free(out);
}

static void test_check(void **state)
{
	struct crf_xsave_layout amx, avx2, moved;
	char why[256];
	uint8_t *zmm = area_with(11008, 0xc7), *ymm = area_with(11008, 0x7);
	uint8_t *tiles = area_with(11008, 0x40007);

	(void)state;
	amx_layout(&amx);
	avx2_layout(&avx2);
	assert_int_equal(xsave_check(&amx, &amx, zmm, 11008, why, sizeof(why)), 0);
	assert_int_equal(xsave_check(&amx, &avx2, ymm, 11008, why, sizeof(why)), 0);
	/* AVX-512 state on a CPU without it: refused, naming the feature. */
	assert_int_equal(xsave_check(&amx, &avx2, zmm, 11008, why, sizeof(why)), -ENOTSUP);
	assert_non_null(strstr(why, "AVX-512 ZMM_Hi256"));
	assert_non_null(strstr(why, "test AVX2 CPU"));
	/* Live tile data cannot go through a default-sized frame. */
	assert_int_equal(xsave_check(&amx, &amx, tiles, 11008, why, sizeof(why)), -ENOTSUP);
	assert_non_null(strstr(why, "AMX tile data"));
	/* The same feature elsewhere in the layout. */
	moved = amx;
	moved.offset[6] = 1216;
	assert_int_equal(xsave_check(&amx, &moved, zmm, 11008, why, sizeof(why)), -ENOTSUP);
	assert_non_null(strstr(why, "offset 1152"));
	/* A truncated area. */
	assert_int_equal(xsave_check(&amx, &amx, zmm, 1200, why, sizeof(why)), -EBADMSG);
	assert_int_equal(xsave_check(&amx, &amx, zmm, 100, why, sizeof(why)), -EBADMSG);
	free(zmm);
	free(ymm);
	free(tiles);
}

/* Legacy-only areas (no XSAVE header) are passed through untouched. */
static void test_legacy(void **state)
{
	struct crf_xsave_layout l;
	uint8_t a[512], out[512];

	(void)state;
	amx_layout(&l);
	memset(a, 0x5a, sizeof(a));
	assert_int_equal(xsave_to_frame(&l, a, sizeof(a), out), sizeof(a));
	assert_memory_equal(a, out, sizeof(a));
	assert_int_equal(xsave_used(a, sizeof(a)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_frame), cmocka_unit_test(test_frame_amx_truncates),
		cmocka_unit_test(test_frame_pads),   cmocka_unit_test(test_check),
		cmocka_unit_test(test_legacy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
