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

/*
 * long crf_restorer_clone_thread(struct kclone_args *ca, size_t size,
 *				  struct crf_rst_args *a, struct crf_rst_thread_arg *t)
 * clone3() a thread; the parent gets its TID or -errno.  The child starts
 * here on the stack ca names, with every register but %rax and %rsp as
 * the parent had them, and never returns.
 */
	.globl	crf_restorer_clone_thread
	.hidden	crf_restorer_clone_thread
	.type	crf_restorer_clone_thread, @function
crf_restorer_clone_thread:
	movq	%rdx, %r8
	movq	%rcx, %r9
	movl	$435, %eax		/* __NR_clone3 */
	syscall
	testq	%rax, %rax
	jnz	1f
	movq	%r8, %rdi
	movq	%r9, %rsi
	xorl	%ebp, %ebp
	andq	$-16, %rsp
	call	crf_restorer_thread_main
	ud2
1:	ret
	.size	crf_restorer_clone_thread, . - crf_restorer_clone_thread

	.section .note.GNU-stack, "", @progbits
