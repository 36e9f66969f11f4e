/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The parasite's entry, placed at offset 0 of the blob by blob.lds (section
 * .text.entry).  crf sets %rdi = command, %rsi = the args area and %rsp = the
 * top of the parasite's stack, 16-byte aligned; the call below leaves %rsp
 * aligned as the C ABI expects at function entry.  The int3 hands the
 * thread back to crf (a SIGTRAP signal-delivery-stop), with the command's
 * result in %rax.  crf always sets %rip again, so nothing runs past it.
 */
	.section .text.entry, "ax"
	.globl crf_parasite_entry
	.type crf_parasite_entry, @function
crf_parasite_entry:
	call parasite_main
	int3
	ud2
	.size crf_parasite_entry, . - crf_parasite_entry

	.section .note.GNU-stack, "", @progbits
