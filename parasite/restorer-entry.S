/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The restorer's entry, at offset 0 of the blob.  crf jumps here with %rdi
 * holding the address of struct crf_rst_args and %rsp inside the blob's own
 * mapping.  crf_restorer_main() never returns: it either sigreturns into the
 * restored program or exits the task.
 */
	.section .text.entry, "ax", @progbits
	.globl	crf_restorer_entry
	.type	crf_restorer_entry, @function
crf_restorer_entry:
	andq	$-16, %rsp
	xorl	%ebp, %ebp
	call	crf_restorer_main
	ud2
	.size	crf_restorer_entry, . - crf_restorer_entry

/*
 * A lone `syscall`: crf points the task here, once it is back in its
 * program and stopped by ptrace, to have it munmap this blob.  It never
 * runs on its own: the ud2 only guards against a stray jump.
 */
	.text
	.globl	crf_restorer_syscall_insn
	.hidden	crf_restorer_syscall_insn
	.type	crf_restorer_syscall_insn, @function
crf_restorer_syscall_insn:
	syscall
	ud2
	.size	crf_restorer_syscall_insn, . - crf_restorer_syscall_insn

	.section .note.GNU-stack, "", @progbits
