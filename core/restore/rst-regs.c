// SPDX-License-Identifier: GPL-2.0-only
/*
 * Registers of a task stopped inside a system call, made to repeat the
 * call after restore.  The kernel would have done the same on its way back
 * to user space, but a dumped task never got there.
 */
#include <stdint.h>

#include "rst-task.h"

/* The kernel's internal restart codes (include/linux/errno.h). */
#define ERESTARTSYS	      512
#define ERESTARTNOINTR	      513
#define ERESTARTNOHAND	      514
#define ERESTART_RESTARTBLOCK 516

enum { REG_RAX = 10, REG_ORIG_RAX = 15, REG_RIP = 16 };

void crf_regs_fix_restart(uint64_t regs[27])
{
	int64_t rax = (int64_t)regs[REG_RAX];

	if ((int64_t)regs[REG_ORIG_RAX] < 0)
		return;
	switch (rax) {
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
	case -ERESTARTNOHAND:
	case -ERESTART_RESTARTBLOCK:
		regs[REG_RAX] = regs[REG_ORIG_RAX];
		regs[REG_RIP] -= 2;
		break;
	default:
		break;
	}
}
