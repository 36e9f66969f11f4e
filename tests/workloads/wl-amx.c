// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-amx: a process that was granted AMX (Intel's tile registers).
 *
 * usage: wl-amx perm | live
 *
 * AMX tile data is a dynamic XSAVE feature: a process asks for it with
 * arch_prctl(ARCH_REQ_XCOMP_PERM), and the kernel enlarges a thread's
 * register state at its first tile instruction.  Both modes ask, and check
 * that a tile round trip (memory -> tmm0 -> memory) gives the bytes back.
 *
 *   perm  releases the tiles (TILERELEASE: tile data back to its initial
 *         state) and spins in blocks that carry values in ymm0/ymm1 across
 *         the checkpoint.  After the restore the permission must still be
 *         granted (ARCH_GET_XCOMP_PERM), the tiles must work, and every
 *         block's ymm result must be right: the restorer's signal frame is
 *         sized for a task whose own register state is larger than the
 *         default.
 *   live  keeps data in tmm0: crf must refuse the dump, naming the thread
 *         and the tile data, and leave the process as it was: after the
 *         refusal tmm0 still holds the bytes loaded into it.
 *
 * The test (tests/e2e/amx.sh) is skipped on a CPU without AMX.
 */
#include "wl.h"

#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARCH_GET_XCOMP_PERM 0x1022
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA  18

/* One tile: 16 rows of 64 bytes. */
#define ROWS  16
#define COLSB 64

/* The LDTILECFG operand: palette 1, tmm0 ROWS x COLSB, the others unused. */
struct tilecfg {
	uint8_t palette;
	uint8_t start_row;
	uint8_t reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
};
_Static_assert(sizeof(struct tilecfg) == 64, "LDTILECFG takes 64 bytes");

static uint8_t tile_in[ROWS * COLSB], tile_out[ROWS * COLSB];

__attribute__((target("amx-tile"))) static void tile_load(void)
{
	struct tilecfg cfg = {.palette = 1};

	cfg.colsb[0] = COLSB;
	cfg.rows[0] = ROWS;
	/* Not _tile_loadconfig(): gcc 12's takes the operand as 8 bytes and
	 * may drop the stores to the rest of cfg. */
	__asm__ volatile("ldtilecfg %0" : : "m"(cfg));
	_tile_loadd(0, tile_in, COLSB);
}

__attribute__((target("amx-tile"))) static void tile_store(void)
{
	_tile_stored(0, tile_out, COLSB);
}

__attribute__((target("amx-tile"))) static void tile_release(void)
{
	_tile_release();
}

/* tmm0 holds tile_in's bytes: store it and compare. */
static void tile_check(const char *when)
{
	memset(tile_out, 0, sizeof(tile_out));
	tile_store();
	if (memcmp(tile_in, tile_out, sizeof(tile_in)))
		wl_fail("%s: tmm0 does not hold the bytes loaded into it", when);
}

static uint64_t xcomp_perm(void)
{
	uint64_t perm = 0;

	if (syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM, &perm) < 0)
		wl_fail("arch_prctl(ARCH_GET_XCOMP_PERM): %m");
	return perm;
}

/*
 * ymm0 = a, ymm1 = b; ymm0 += b, N times, in a loop without system calls;
 * out = ymm0.  Each 64-bit lane of out must be a + N * b.
 */
__attribute__((target("avx2"))) static void ymm_block(const uint64_t a[4], const uint64_t b[4],
						      uint64_t out[4], uint64_t n)
{
	__asm__ volatile("vmovdqu (%[a]), %%ymm0\n\t"
			 "vmovdqu (%[b]), %%ymm1\n\t"
			 "mov %[n], %%rcx\n"
			 "1:\n\t"
			 "vpaddq %%ymm1, %%ymm0, %%ymm0\n\t"
			 "dec %%rcx\n\t"
			 "jnz 1b\n\t"
			 "vmovdqu %%ymm0, (%[out])\n\t"
			 "vzeroupper\n\t"
			 :
			 : [a] "r"(a), [b] "r"(b), [out] "r"(out), [n] "r"(n)
			 : "rcx", "xmm0", "xmm1", "memory", "cc");
}

static void spin_ymm(void)
{
	const uint64_t n = 50000000;
	uint64_t a[4], b[4], out[4];
	unsigned long long round = 0;

	do {
		round++;
		for (int i = 0; i < 4; i++) {
			a[i] = 0x0123456789abcdefULL * (round + (uint64_t)i);
			b[i] = 0xfedcba9876543210ULL ^ (round << 8 | (uint64_t)i);
		}
		ymm_block(a, b, out, n);
		for (int i = 0; i < 4; i++)
			if (out[i] != a[i] + n * b[i])
				wl_fail("round %llu: ymm0 lane %d is %#llx, wanted %#llx", round, i,
					(unsigned long long)out[i],
					(unsigned long long)(a[i] + n * b[i]));
	} while (!wl_verify_requested());
}

int main(int argc, char **argv)
{
	bool live = argc > 1 && !strcmp(argv[1], "live");

	wl_init("amx");
	if (argc != 2 || (!live && strcmp(argv[1], "perm")))
		wl_fail("usage: wl-amx perm | live");
	if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) < 0)
		wl_fail("arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA): %m");
	wl_fill(tile_in, sizeof(tile_in), 0xa3f);
	tile_load();
	tile_check("before the checkpoint");
	if (live) {
		wl_ready();
		wl_wait_verify();
		tile_check("after the refused dump");
		return 0;
	}
	tile_release();
	wl_ready();
	spin_ymm();
	if (!(xcomp_perm() & (1ULL << XFEATURE_XTILEDATA)))
		wl_fail("after the restore the AMX tile data permission is gone (perm %#llx)",
			(unsigned long long)xcomp_perm());
	tile_load();
	tile_check("after the restore");
	tile_release();
	return 0;
}
