// SPDX-License-Identifier: GPL-2.0-only
/*
 * CRC32C (Castagnoli, reflected polynomial 0x82F63B78) for image checksums.
 *
 * Gigabytes of page data go through this, so on x86-64 it uses the SSE4.2
 * crc32 instruction, which computes exactly this polynomial.  The
 * instruction has a latency of three cycles but a throughput of one, so a
 * single dependent chain wastes two thirds of it: long buffers are cut into
 * three lanes computed side by side and the lanes' results are merged with
 * a precomputed "append HW_LANE zero bytes" operator.  Elsewhere a
 * slicing-by-8 table does eight bytes per step.
 */
#include <endian.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

#include "image-internal.h"

#define CRC32C_POLY 0x82f63b78u

/* Bytes per lane in the three-lane hardware loop. */
#define HW_LANE 1024u

static bool use_hw;
static uint32_t sw_table[8][256];
/* shift_table[k][b]: the register b << 8k advanced over HW_LANE zero bytes. */
static uint32_t shift_table[4][256];

/*
 * The tables are a pure function of the polynomial.  Filling them from a
 * constructor makes them ready before any thread can call us, with no
 * locking on the hot path.
 */
__attribute__((constructor)) static void crc32c_init(void)
{
#if defined(__x86_64__)
	/* Needed when constructors run before libgcc's own CPU probe. */
	__builtin_cpu_init();
	use_hw = __builtin_cpu_supports("sse4.2");
#endif
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (CRC32C_POLY & -(c & 1));
		sw_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			sw_table[k][i] =
				(sw_table[k - 1][i] >> 8) ^ sw_table[0][sw_table[k - 1][i] & 0xff];

	/* The register update is linear, so the operator is fixed by its
	 * effect on each of the 32 basis bits. */
	uint32_t basis[32];

	for (int bit = 0; bit < 32; bit++) {
		uint32_t r = 1u << bit;

		for (unsigned n = 0; n < HW_LANE; n++)
			r = (r >> 8) ^ sw_table[0][r & 0xff];
		basis[bit] = r;
	}
	for (int k = 0; k < 4; k++) {
		for (uint32_t b = 0; b < 256; b++) {
			uint32_t v = 0;

			for (int j = 0; j < 8; j++)
				if (b & (1u << j))
					v ^= basis[8 * k + j];
			shift_table[k][b] = v;
		}
	}
}

static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/* The raw register update (no pre/post inversion), eight bytes per step. */
static uint32_t sw_update(uint32_t c, const uint8_t *p, size_t n)
{
	while (n && ((uintptr_t)p & 7)) {
		c = (c >> 8) ^ sw_table[0][(c ^ *p++) & 0xff];
		n--;
	}
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t v = load_le64(p) ^ c;

		c = sw_table[7][v & 0xff] ^ sw_table[6][(v >> 8) & 0xff] ^
		    sw_table[5][(v >> 16) & 0xff] ^ sw_table[4][(v >> 24) & 0xff] ^
		    sw_table[3][(v >> 32) & 0xff] ^ sw_table[2][(v >> 40) & 0xff] ^
		    sw_table[1][(v >> 48) & 0xff] ^ sw_table[0][v >> 56];
	}
	while (n--)
		c = (c >> 8) ^ sw_table[0][(c ^ *p++) & 0xff];
	return c;
}

uint32_t crf__crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	return ~sw_update(~crc, buf, len);
}

#if defined(__x86_64__)

static inline uint32_t shift_lane(uint32_t c)
{
	return shift_table[0][c & 0xff] ^ shift_table[1][(c >> 8) & 0xff] ^
	       shift_table[2][(c >> 16) & 0xff] ^ shift_table[3][c >> 24];
}

__attribute__((target("sse4.2"))) static uint32_t hw_update(uint32_t c, const uint8_t *p, size_t n)
{
	while (n && ((uintptr_t)p & 7)) {
		c = _mm_crc32_u8(c, *p++);
		n--;
	}
	/* Lanes b and d start from a zero register; a's register is carried
	 * over the following lanes by shifting, then the parts are xored. */
	for (; n >= 3 * HW_LANE; n -= 3 * HW_LANE, p += 3 * HW_LANE) {
		uint64_t a = c, b = 0, d = 0;

		for (unsigned i = 0; i < HW_LANE; i += 8) {
			a = _mm_crc32_u64(a, load_le64(p + i));
			b = _mm_crc32_u64(b, load_le64(p + HW_LANE + i));
			d = _mm_crc32_u64(d, load_le64(p + 2 * HW_LANE + i));
		}
		c = shift_lane(shift_lane((uint32_t)a) ^ (uint32_t)b) ^ (uint32_t)d;
	}
	for (; n >= 8; n -= 8, p += 8)
		c = (uint32_t)_mm_crc32_u64(c, load_le64(p));
	while (n--)
		c = _mm_crc32_u8(c, *p++);
	return c;
}

bool crf__crc32c_hw_available(void)
{
	return use_hw;
}

uint32_t crf__crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	return ~hw_update(~crc, buf, len);
}

#else

bool crf__crc32c_hw_available(void)
{
	return use_hw;
}

uint32_t crf__crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	return crf__crc32c_sw(crc, buf, len);
}

#endif

uint32_t crf_crc32c(uint32_t crc, const void *buf, size_t len)
{
	if (use_hw)
		return crf__crc32c_hw(crc, buf, len);
	return crf__crc32c_sw(crc, buf, len);
}
