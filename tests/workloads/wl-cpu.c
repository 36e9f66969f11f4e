// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-cpu: register state survives a checkpoint taken in the middle of a
 * loop that makes no system call.
 *
 * usage: wl-cpu [ITERATIONS_PER_BLOCK]   (default 100000000)
 *
 * Each block is one asm statement: it loads known patterns into eleven
 * general purpose registers (rbx, rsi, rdi, r8-r15), all sixteen ymm
 * registers, MXCSR (round toward zero, DAZ), the x87 control word and
 * st(0), spins ITERATIONS times advancing a counter in rax, r15 by r14 and
 * ymm15 by ymm14 (so registers change while the checkpoint lands), then
 * stores everything and puts MXCSR and the x87 control word back.  Where
 * the CPU and kernel support AVX-512, a second block does the same with
 * zmm16-zmm31 and the mask registers k1-k7.  Every block is compared with
 * the expected values; blocks run until the verify file appears, checked
 * once per block, so a checkpoint almost always lands inside a block.
 */
#include "wl.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct regs {
	uint64_t gpr[11]; /* rbx rsi rdi r8 r9 r10 r11 r12 r13 r14 r15 */
	uint64_t rax;
	uint32_t mxcsr;
	uint16_t fcw;
	uint16_t pad0;
	uint64_t pad1;
	unsigned char st0[16]; /* 10 bytes used */
	unsigned char ymm[16][32];
};

struct block {
	struct regs in, out;
	uint64_t iters;
	uint32_t saved_mxcsr;
	uint16_t saved_fcw;
};

/* The asm below uses these offsets literally. */
_Static_assert(offsetof(struct regs, rax) == 88, "layout");
_Static_assert(offsetof(struct regs, mxcsr) == 96, "layout");
_Static_assert(offsetof(struct regs, fcw) == 100, "layout");
_Static_assert(offsetof(struct regs, st0) == 112, "layout");
_Static_assert(offsetof(struct regs, ymm) == 128, "layout");
_Static_assert(offsetof(struct block, out) == 640, "layout");
_Static_assert(offsetof(struct block, iters) == 1280, "layout");
_Static_assert(offsetof(struct block, saved_mxcsr) == 1288, "layout");
_Static_assert(offsetof(struct block, saved_fcw) == 1292, "layout");

static const char *const gpr_names[11] = {"rbx", "rsi", "rdi", "r8",  "r9", "r10",
					  "r11", "r12", "r13", "r14", "r15"};

/* clang-format off */
#define LOADY(i)  "vmovdqu (128+32*" #i ")(%%rdx), %%ymm" #i "\n\t"
#define STOREY(i) "vmovdqu %%ymm" #i ", (640+128+32*" #i ")(%%rdx)\n\t"

static void run_block(struct block *b)
{
	__asm__ volatile(
		"stmxcsr 1288(%%rdx)\n\t"
		"fnstcw 1292(%%rdx)\n\t"
		"ldmxcsr 96(%%rdx)\n\t"
		"fldcw 100(%%rdx)\n\t"
		"fldt 112(%%rdx)\n\t"
		"mov 0(%%rdx), %%rbx\n\t"
		"mov 8(%%rdx), %%rsi\n\t"
		"mov 16(%%rdx), %%rdi\n\t"
		"mov 24(%%rdx), %%r8\n\t"
		"mov 32(%%rdx), %%r9\n\t"
		"mov 40(%%rdx), %%r10\n\t"
		"mov 48(%%rdx), %%r11\n\t"
		"mov 56(%%rdx), %%r12\n\t"
		"mov 64(%%rdx), %%r13\n\t"
		"mov 72(%%rdx), %%r14\n\t"
		"mov 80(%%rdx), %%r15\n\t"
		LOADY(0) LOADY(1) LOADY(2) LOADY(3) LOADY(4) LOADY(5) LOADY(6) LOADY(7)
		LOADY(8) LOADY(9) LOADY(10) LOADY(11) LOADY(12) LOADY(13) LOADY(14) LOADY(15)
		"mov 1280(%%rdx), %%rcx\n\t"
		"xor %%eax, %%eax\n\t"
		"1:\n\t"
		"inc %%rax\n\t"
		"add %%r14, %%r15\n\t"
		"vpaddq %%ymm14, %%ymm15, %%ymm15\n\t"
		"dec %%rcx\n\t"
		"jnz 1b\n\t"
		"mov %%rbx, 640+0(%%rdx)\n\t"
		"mov %%rsi, 640+8(%%rdx)\n\t"
		"mov %%rdi, 640+16(%%rdx)\n\t"
		"mov %%r8, 640+24(%%rdx)\n\t"
		"mov %%r9, 640+32(%%rdx)\n\t"
		"mov %%r10, 640+40(%%rdx)\n\t"
		"mov %%r11, 640+48(%%rdx)\n\t"
		"mov %%r12, 640+56(%%rdx)\n\t"
		"mov %%r13, 640+64(%%rdx)\n\t"
		"mov %%r14, 640+72(%%rdx)\n\t"
		"mov %%r15, 640+80(%%rdx)\n\t"
		"mov %%rax, 640+88(%%rdx)\n\t"
		STOREY(0) STOREY(1) STOREY(2) STOREY(3) STOREY(4) STOREY(5) STOREY(6) STOREY(7)
		STOREY(8) STOREY(9) STOREY(10) STOREY(11) STOREY(12) STOREY(13) STOREY(14)
		STOREY(15)
		"stmxcsr 640+96(%%rdx)\n\t"
		"fnstcw 640+100(%%rdx)\n\t"
		"fstpt 640+112(%%rdx)\n\t"
		"ldmxcsr 1288(%%rdx)\n\t"
		"fldcw 1292(%%rdx)\n\t"
		"vzeroupper\n\t"
		:
		: "d"(b)
		: "rax", "rbx", "rcx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
		  "r15", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
		  "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc");
}
/* clang-format on */

struct block512 {
	unsigned char zmm[16][64]; /* zmm16..zmm31, in */
	unsigned char zout[16][64];
	uint16_t k[8], kout[8]; /* k1..k7 in [1..7] */
	uint64_t iters, rax;
};

_Static_assert(offsetof(struct block512, zout) == 1024, "layout");
_Static_assert(offsetof(struct block512, k) == 2048, "layout");
_Static_assert(offsetof(struct block512, kout) == 2064, "layout");
_Static_assert(offsetof(struct block512, iters) == 2080, "layout");
_Static_assert(offsetof(struct block512, rax) == 2088, "layout");

/* clang-format off */
#define LOADZ(i, r) "vmovdqu64 (64*" #i ")(%%rdx), %%zmm" #r "\n\t"
#define STOREZ(i, r) "vmovdqu64 %%zmm" #r ", (1024+64*" #i ")(%%rdx)\n\t"
#define LOADK(i) "kmovw (2048+2*" #i ")(%%rdx), %%k" #i "\n\t"
#define STOREK(i) "kmovw %%k" #i ", (2064+2*" #i ")(%%rdx)\n\t"

__attribute__((target("avx512f"))) static void run_block512(struct block512 *b)
{
	__asm__ volatile(
		LOADZ(0, 16) LOADZ(1, 17) LOADZ(2, 18) LOADZ(3, 19) LOADZ(4, 20) LOADZ(5, 21)
		LOADZ(6, 22) LOADZ(7, 23) LOADZ(8, 24) LOADZ(9, 25) LOADZ(10, 26) LOADZ(11, 27)
		LOADZ(12, 28) LOADZ(13, 29) LOADZ(14, 30) LOADZ(15, 31)
		LOADK(1) LOADK(2) LOADK(3) LOADK(4) LOADK(5) LOADK(6) LOADK(7)
		"mov 2080(%%rdx), %%rcx\n\t"
		"xor %%eax, %%eax\n\t"
		"1:\n\t"
		"inc %%rax\n\t"
		"vpaddq %%zmm30, %%zmm31, %%zmm31\n\t"
		"dec %%rcx\n\t"
		"jnz 1b\n\t"
		"mov %%rax, 2088(%%rdx)\n\t"
		STOREZ(0, 16) STOREZ(1, 17) STOREZ(2, 18) STOREZ(3, 19) STOREZ(4, 20)
		STOREZ(5, 21) STOREZ(6, 22) STOREZ(7, 23) STOREZ(8, 24) STOREZ(9, 25)
		STOREZ(10, 26) STOREZ(11, 27) STOREZ(12, 28) STOREZ(13, 29) STOREZ(14, 30)
		STOREZ(15, 31)
		STOREK(1) STOREK(2) STOREK(3) STOREK(4) STOREK(5) STOREK(6) STOREK(7)
		"vzeroupper\n\t"
		:
		: "d"(b)
		: "rax", "rcx", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22",
		  "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30",
		  "xmm31", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "memory", "cc");
}
/* clang-format on */

static void lanes_add(unsigned char *acc, const unsigned char *step, size_t bytes, uint64_t n)
{
	for (size_t i = 0; i < bytes; i += 8) {
		uint64_t a, s;

		memcpy(&a, acc + i, 8);
		memcpy(&s, step + i, 8);
		a += s * n;
		memcpy(acc + i, &a, 8);
	}
}

static void check_block(const struct block *b, uint64_t round)
{
	const struct regs *in = &b->in, *out = &b->out;
	unsigned char want[32];

	if (out->rax != b->iters)
		wl_fail("round %llu: the loop counter (rax) is %llu, wanted %llu",
			(unsigned long long)round, (unsigned long long)out->rax,
			(unsigned long long)b->iters);
	for (int i = 0; i < 11; i++) {
		uint64_t w = in->gpr[i] + (i == 10 ? in->gpr[9] * b->iters : 0);

		if (out->gpr[i] != w)
			wl_fail("round %llu: %s is %#llx, wanted %#llx", (unsigned long long)round,
				gpr_names[i], (unsigned long long)out->gpr[i],
				(unsigned long long)w);
	}
	for (int i = 0; i < 16; i++) {
		memcpy(want, in->ymm[i], 32);
		if (i == 15)
			lanes_add(want, in->ymm[14], 32, b->iters);
		if (memcmp(out->ymm[i], want, 32))
			wl_fail("round %llu: ymm%d differs", (unsigned long long)round, i);
	}
	if (out->mxcsr != in->mxcsr)
		wl_fail("round %llu: MXCSR is %#x, wanted %#x", (unsigned long long)round,
			out->mxcsr, in->mxcsr);
	if (out->fcw != in->fcw)
		wl_fail("round %llu: the x87 control word is %#x, wanted %#x",
			(unsigned long long)round, out->fcw, in->fcw);
	if (memcmp(out->st0, in->st0, 10))
		wl_fail("round %llu: x87 st(0) differs", (unsigned long long)round);
}

static void check_block512(const struct block512 *b, uint64_t round)
{
	unsigned char want[64];

	if (b->rax != b->iters)
		wl_fail("round %llu: the AVX-512 loop counter is %llu, wanted %llu",
			(unsigned long long)round, (unsigned long long)b->rax,
			(unsigned long long)b->iters);
	for (int i = 0; i < 16; i++) {
		memcpy(want, b->zmm[i], 64);
		if (i == 15)
			lanes_add(want, b->zmm[14], 64, b->iters);
		if (memcmp(b->zout[i], want, 64))
			wl_fail("round %llu: zmm%d differs", (unsigned long long)round, 16 + i);
	}
	for (int i = 1; i < 8; i++)
		if (b->kout[i] != b->k[i])
			wl_fail("round %llu: k%d is %#x, wanted %#x", (unsigned long long)round, i,
				b->kout[i], b->k[i]);
}

int main(int argc, char **argv)
{
	static struct block b __attribute__((aligned(64)));
	static struct block512 z __attribute__((aligned(64)));
	uint64_t iters = argc > 1 ? strtoull(argv[1], NULL, 0) : 100000000ULL;
	long double st0 = -12345.678901234567890123L;
	bool avx512;
	uint64_t round;

	wl_init("cpu");
	if (!iters)
		wl_fail("usage: wl-cpu [ITERATIONS_PER_BLOCK]");
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx2"))
		wl_fail("this CPU has no AVX2");
	avx512 = __builtin_cpu_supports("avx512f");
	if (!avx512)
		wl_downgrade("this CPU has no AVX-512: zmm16-31 and k1-7 are not checked");

	wl_fill(&b.in, offsetof(struct regs, rax), 42);
	wl_fill(b.in.ymm, sizeof(b.in.ymm), 43);
	b.in.mxcsr = 0x7fc0; /* all exceptions masked, round toward zero, DAZ */
	b.in.fcw = 0x0f7f;   /* 64-bit precision, round toward zero */
	memcpy(b.in.st0, &st0, 10);
	b.iters = iters;
	wl_fill(z.zmm, sizeof(z.zmm), 44);
	for (int i = 1; i < 8; i++)
		z.k[i] = (uint16_t)(0x1111 * i + 0x0f0f);
	z.iters = iters;

	/* One round before ready, so a broken workload fails without crf. */
	run_block(&b);
	check_block(&b, 0);
	if (avx512) {
		run_block512(&z);
		check_block512(&z, 0);
	}
	wl_ready();
	for (round = 1;; round++) {
		run_block(&b);
		check_block(&b, round);
		if (avx512) {
			run_block512(&z);
			check_block512(&z, round);
		}
		if (wl_verify_requested())
			break;
	}
	wl_note("%llu rounds of %llu iterations (ymm%s): registers intact",
		(unsigned long long)round, (unsigned long long)iters, avx512 ? ", zmm, k" : "");
	return 0;
}
