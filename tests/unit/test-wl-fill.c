// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl_cmp_fill(), the comparison almost every workload's content check goes
 * through: every corruption a restore can make must be reported, at the
 * first byte that differs, and an intact buffer must pass.  A page run saved
 * one word off once passed it (a bad word was compared with the next word of
 * the sequence), so shifted runs come first.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../workloads/wl.h"
#include "helpers.h"

#define SEED 0x5eedULL

/* Sizes around the 8-byte word and the page, with and without a tail. */
static const size_t sizes[] = {1, 7, 8, 9, 15, 16, 63, 4096, 4099, 65536 + 5, (1 << 20) + 3};

static unsigned char *filled(size_t n)
{
	unsigned char *b = malloc(n + 16);

	assert_non_null(b);
	wl_fill(b, n, SEED);
	return b;
}

/* The first byte of @p that differs from wl_fill(SEED), found byte by byte. */
static ssize_t first_diff(const unsigned char *p, size_t n)
{
	unsigned char *want = filled(n);
	ssize_t at = -1;

	for (size_t i = 0; i < n && at < 0; i++)
		if (p[i] != want[i])
			at = (ssize_t)i;
	free(want);
	return at;
}

/* @p really differs from the fill, and wl_cmp_fill() names its first different byte. */
static void assert_reported(const unsigned char *p, size_t n)
{
	ssize_t at = first_diff(p, n);

	assert_true(at >= 0);
	assert_int_equal(wl_cmp_fill(p, n, SEED), at);
}

static void test_intact(void **state)
{
	unsigned char b[1] = {0};

	(void)state;
	assert_int_equal(wl_cmp_fill(b, 0, SEED), -1);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *p = filled(sizes[i]);

		assert_int_equal(wl_cmp_fill(p, sizes[i], SEED), -1);
		free(p);
	}
}

/* Another seed's fill is another sequence. */
static void test_other_seed(void **state)
{
	unsigned char *p = filled(4096);

	(void)state;
	assert_int_equal(wl_cmp_fill(p, 4096, SEED + 1), 0);
	free(p);
}

/*
 * The run one word late (byte i holds what belongs at i + 8, the last word
 * is zero) and one word early (byte i + 8 holds what belongs at i); also a
 * byte and a page off.
 */
static void test_shifted(void **state)
{
	const size_t shifts[] = {1, 8, 16, 4096};

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];

		for (size_t s = 0; s < sizeof(shifts) / sizeof(shifts[0]); s++) {
			size_t k = shifts[s];
			unsigned char *p, *want;

			if (k >= n)
				continue;
			want = filled(n + k);
			p = malloc(n);
			assert_non_null(p);
			memcpy(p, want + k, n);
			assert_reported(p, n);
			memset(p, 0, k);
			memcpy(p + k, want, n - k);
			assert_reported(p, n);
			free(p);
			free(want);
		}
	}
}

/* 1 MiB shifted by one word with its second half zeroed. */
static void test_shifted_half_zeroed(void **state)
{
	size_t n = 1 << 20;
	unsigned char *want = filled(n + 8), *p = malloc(n);

	(void)state;
	assert_non_null(p);
	memcpy(p, want + 8, n);
	memset(p + n / 2, 0, n / 2);
	assert_reported(p, n);
	assert_true(wl_cmp_fill(p, n, SEED) < 8);
	free(p);
	free(want);
}

/* Only the first LEN bytes arrived (the rest is zero), or the rest is another seed's. */
static void test_truncated(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		size_t cuts[] = {0, n / 2, n > 8 ? n - 8 : 0, n - 1};

		for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
			unsigned char *p = filled(n);
			size_t cut = cuts[c];

			memset(p + cut, 0, n - cut);
			assert_reported(p, n);
			assert_true(wl_cmp_fill(p, n, SEED) >= (ssize_t)cut);
			wl_fill(p + cut, n - cut, SEED ^ 0xffff);
			assert_reported(p, n);
			free(p);
		}
	}
}

/* A page or a word of zeros in the middle, and the whole buffer zeroed. */
static void test_zeroed(void **state)
{
	size_t n = 64 * 4096 + 5;
	unsigned char *p = filled(n), *want = filled(n);
	ssize_t bad;

	(void)state;
	memset(p + 7 * 4096, 0, 4096);
	assert_reported(p, n);
	bad = wl_cmp_fill(p, n, SEED);
	assert_true(bad >= 7 * 4096 && bad < 8 * 4096);
	memcpy(p, want, n);
	memset(p + 800, 0, 8);
	assert_reported(p, n);
	memcpy(p, want, n);
	memset(p + n - 3, 0, 3);
	assert_reported(p, n);
	memset(p, 0, n);
	assert_reported(p, n);
	free(p);
	free(want);
}

/* Every single bit of a small buffer, and bits across a large one, its tail included. */
static void test_bit_flips(void **state)
{
	size_t n = 8 * 9 + 5, big = (1 << 20) + 3;
	unsigned char *p = filled(n), *q = filled(big);
	const size_t at[] = {0, 7, 8, 4095, 4096, 65537, (1 << 20) - 1, (1 << 20), big - 1};

	(void)state;
	for (size_t i = 0; i < n; i++) {
		for (int bit = 0; bit < 8; bit++) {
			p[i] ^= (unsigned char)(1u << bit);
			assert_int_equal(wl_cmp_fill(p, n, SEED), (ssize_t)i);
			p[i] ^= (unsigned char)(1u << bit);
		}
	}
	assert_int_equal(wl_cmp_fill(p, n, SEED), -1);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		q[at[i]] ^= 0x80;
		assert_int_equal(wl_cmp_fill(q, big, SEED), (ssize_t)at[i]);
		q[at[i]] ^= 0x80;
	}
	free(p);
	free(q);
}

/* Two differences: the first is reported. */
static void test_first_difference(void **state)
{
	size_t n = 4096;
	unsigned char *p = filled(n);

	(void)state;
	p[3000] ^= 1;
	p[100] ^= 1;
	assert_int_equal(wl_cmp_fill(p, n, SEED), 100);
	free(p);
}

int main(void)
{
	/* One test a line reads best. */
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intact),
		cmocka_unit_test(test_other_seed),
		cmocka_unit_test(test_shifted),
		cmocka_unit_test(test_shifted_half_zeroed),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_zeroed),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_first_difference),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
