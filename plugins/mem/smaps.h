/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * smaps.h - /proc/PID/smaps (or maps) as a list of mappings, and what each
 * mapping means to the dump: its kind, its mmap() flags and its advice.
 *
 * Pure functions over text and structs, so that they can be tested on
 * sample texts.
 */
#ifndef CRF_PLUGIN_MEM_SMAPS_H
#define CRF_PLUGIN_MEM_SMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * VmFlags mnemonics the plugin acts on, as bits of our own (the kernel's
 * list is show_smap_vma_flags() in fs/proc/task_mmu.c).
 */
enum smaps_vmflag {
	VMF_SH = 1u << 0,  /* "sh" VM_SHARED: shared and writable */
	VMF_MW = 1u << 1,  /* "mw" VM_MAYWRITE: may be made writable */
	VMF_GD = 1u << 2,  /* "gd" VM_GROWSDOWN: a stack that grows down */
	VMF_PF = 1u << 3,  /* "pf" VM_PFNMAP: raw page frames, device memory */
	VMF_LO = 1u << 4,  /* "lo" VM_LOCKED: mlock()ed */
	VMF_IO = 1u << 5,  /* "io" VM_IO: memory-mapped I/O */
	VMF_SR = 1u << 6,  /* "sr" MADV_SEQUENTIAL */
	VMF_RR = 1u << 7,  /* "rr" MADV_RANDOM */
	VMF_DC = 1u << 8,  /* "dc" VM_DONTCOPY: MADV_DONTFORK */
	VMF_LF = 1u << 9,  /* "lf" VM_LOCKONFAULT: mlock2(MLOCK_ONFAULT) */
	VMF_NR = 1u << 10, /* "nr" VM_NORESERVE: MAP_NORESERVE */
	VMF_HT = 1u << 11, /* "ht" VM_HUGETLB: hugetlbfs pages */
	VMF_WF = 1u << 12, /* "wf" VM_WIPEONFORK: MADV_WIPEONFORK */
	VMF_DD = 1u << 13, /* "dd" VM_DONTDUMP: MADV_DONTDUMP */
	VMF_HG = 1u << 14, /* "hg" MADV_HUGEPAGE */
	VMF_NH = 1u << 15, /* "nh" MADV_NOHUGEPAGE */
	VMF_MG = 1u << 16, /* "mg" MADV_MERGEABLE */
	VMF_UM = 1u << 17, /* "um" userfaultfd missing-page tracking */
	VMF_UW = 1u << 18, /* "uw" userfaultfd write-protect tracking */
	VMF_SS = 1u << 19, /* "ss" shadow stack */
};

/* One line of maps, with the VmFlags of smaps when there were some. */
struct smaps_vma {
	uint64_t start, end;
	uint64_t pgoff; /* file offset in bytes */
	uint64_t inode;
	unsigned int dev_major, dev_minor;
	int prot;	    /* PROT_READ | PROT_WRITE | PROT_EXEC */
	bool shared;	    /* 's' in the perms: VM_MAYSHARE */
	bool has_vmflags;   /* a VmFlags line was seen */
	uint32_t vmflags;   /* enum smaps_vmflag */
	char *name;	    /* path, "[heap]"..., or "" for none */
	char *vmflags_text; /* the VmFlags line's value, or NULL */
};

struct smaps {
	struct smaps_vma *v;
	size_t n, cap;
};

/*
 * Read every mapping of an smaps or maps text.  0, -ENOMEM, or -EINVAL for a
 * line that is neither a mapping nor a "Key: value" line (logged with its
 * line number).  @out is emptied first; free it with smaps_free().
 */
int smaps_parse(FILE *f, struct smaps *out);
void smaps_free(struct smaps *s);

/*
 * Remove [@start, @end) from the mappings: drop those inside it, trim those
 * it overlaps and split one it falls inside.  0 or -ENOMEM.
 */
int smaps_punch(struct smaps *s, uint64_t start, uint64_t end);

/* Bits of enum smaps_vmflag for a VmFlags value ("rd wr mr mw me ac"). */
uint32_t smaps_vmflags(const char *text);

enum mem_kind {
	MEM_SKIP = 0,	  /* [vsyscall]: the kernel's, at a fixed place */
	MEM_ANON_PRIVATE, /* heap, stacks, private anonymous mmap()s */
	MEM_FILE_PRIVATE, /* private file mapping: only modified pages saved */
	MEM_FILE_SHARED,  /* shared file mapping: the file holds the data */
	MEM_VDSO,	  /* the vDSO and its data pages: no pages saved */
	MEM_VVAR,
	MEM_VVAR_VCLOCK,
	MEM_ANON_SHARED, /* MAP_SHARED | MAP_ANONYMOUS: a shmem object */
	MEM_MEMFD,	 /* MAP_SHARED of a memfd */
	MEM_SYSV,	 /* a System V shared memory segment, attached whole */
};

/*
 * What kind of mapping @v is.  Returns the kind, or -ENOTSUP with @why set
 * to the reason when the plugin cannot restore it yet.
 */
int mem_vma_kind(const struct smaps_vma *v, const char **why);

/* The flags of mmap() that recreate a mapping of @kind with @vmflags. */
int mem_vma_map_flags(enum mem_kind kind, uint32_t vmflags);

/* The advice to apply again, as a mask of (1 << MADV_x). */
uint64_t mem_vma_madv(uint32_t vmflags);

#endif
