/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Raw x86-64 system calls for the freestanding blobs (parasite, restorer).
 * No libc: every call returns the kernel's value, a negative errno on error.
 */
#ifndef CRF_SYSCALL_H
#define CRF_SYSCALL_H

#include <asm/unistd.h>

static inline long sys6(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	register long r10 __asm__("r10") = a3;
	register long r8 __asm__("r8") = a4;
	register long r9 __asm__("r9") = a5;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#define sys0(nr)		sys6((nr), 0, 0, 0, 0, 0, 0)
#define sys1(nr, a)		sys6((nr), (long)(a), 0, 0, 0, 0, 0)
#define sys2(nr, a, b)		sys6((nr), (long)(a), (long)(b), 0, 0, 0, 0)
#define sys3(nr, a, b, c)	sys6((nr), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define sys4(nr, a, b, c, d)	sys6((nr), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define sys5(nr, a, b, c, d, e) sys6((nr), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)

#endif
