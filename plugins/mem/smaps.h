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
 * VmFlags mnemonics, as bits of our own: every one show_smap_vma_flags()
 * (fs/proc/task_mmu.c) prints on x86-64 up to Linux 6.18.  A mapping with a
 * mnemonic outside this list is refused (smaps_vma.unknown names it): a flag
 * crf does not know is state it would not restore.
 */
enum smaps_vmflag {
	VMF_SH = 1ull << 0,  /* "sh" VM_SHARED: shared and writable */
	VMF_MW = 1ull << 1,  /* "mw" VM_MAYWRITE: may be made writable */
	VMF_GD = 1ull << 2,  /* "gd" VM_GROWSDOWN: a stack that grows down */
	VMF_PF = 1ull << 3,  /* "pf" VM_PFNMAP: raw page frames, device memory */
	VMF_LO = 1ull << 4,  /* "lo" VM_LOCKED: mlock()ed */
	VMF_IO = 1ull << 5,  /* "io" VM_IO: memory-mapped I/O */
	VMF_SR = 1ull << 6,  /* "sr" MADV_SEQUENTIAL */
	VMF_RR = 1ull << 7,  /* "rr" MADV_RANDOM */
	VMF_DC = 1ull << 8,  /* "dc" VM_DONTCOPY: MADV_DONTFORK */
	VMF_LF = 1ull << 9,  /* "lf" VM_LOCKONFAULT: mlock2(MLOCK_ONFAULT) */
	VMF_NR = 1ull << 10, /* "nr" VM_NORESERVE: MAP_NORESERVE */
	VMF_HT = 1ull << 11, /* "ht" VM_HUGETLB: hugetlbfs pages */
	VMF_WF = 1ull << 12, /* "wf" VM_WIPEONFORK: MADV_WIPEONFORK */
	VMF_DD = 1ull << 13, /* "dd" VM_DONTDUMP: MADV_DONTDUMP */
	VMF_HG = 1ull << 14, /* "hg" MADV_HUGEPAGE */
	VMF_NH = 1ull << 15, /* "nh" MADV_NOHUGEPAGE (and MAP_STACK) */
	VMF_MG = 1ull << 16, /* "mg" MADV_MERGEABLE */
	VMF_UM = 1ull << 17, /* "um" userfaultfd missing-page tracking */
	VMF_UW = 1ull << 18, /* "uw" userfaultfd write-protect tracking */
	VMF_SS = 1ull << 19, /* "ss" shadow stack */
	VMF_RD = 1ull << 20, /* "rd" VM_READ */
	VMF_WR = 1ull << 21, /* "wr" VM_WRITE */
	VMF_EX = 1ull << 22, /* "ex" VM_EXEC */
	VMF_MR = 1ull << 23, /* "mr" VM_MAYREAD */
	VMF_ME = 1ull << 24, /* "me" VM_MAYEXEC */
	VMF_MS = 1ull << 25, /* "ms" VM_MAYSHARE */
	VMF_DE = 1ull << 26, /* "de" VM_DONTEXPAND: a driver's or the kernel's mapping */
	VMF_AC = 1ull << 27, /* "ac" VM_ACCOUNT: charged to the commit limit */
	VMF_SF = 1ull << 28, /* "sf" VM_SYNC: MAP_SYNC of a DAX file */
	VMF_AR = 1ull << 29, /* "ar" VM_ARCH_1: VM_PAT, device memory */
	VMF_SD = 1ull << 30, /* "sd" VM_SOFTDIRTY */
	VMF_MM = 1ull << 31, /* "mm" VM_MIXEDMAP: device memory */
	VMF_UI = 1ull << 32, /* "ui" userfaultfd minor-fault tracking */
	VMF_DP = 1ull << 33, /* "dp" VM_DROPPABLE: MAP_DROPPABLE */
	VMF_SL = 1ull << 34, /* "sl" VM_SEALED: mseal() */
	VMF_GU = 1ull << 35, /* "gu" guard regions were installed (MADV_GUARD_INSTALL) */
};

/* mmap()'s MAP_DROPPABLE (Linux 6.11), a mapping type like MAP_PRIVATE. */
#ifndef MAP_DROPPABLE
#define MAP_DROPPABLE 0x08
#endif

/* One line of maps, with the VmFlags of smaps when there were some. */
struct smaps_vma {
	uint64_t start, end;
	uint64_t pgoff; /* file offset in bytes */
	uint64_t inode;
	unsigned int dev_major, dev_minor;
	int prot;	    /* PROT_READ | PROT_WRITE | PROT_EXEC */
	bool shared;	    /* 's' in the perms: VM_MAYSHARE */
	bool has_vmflags;   /* a VmFlags line was seen */
	uint64_t vmflags;   /* enum smaps_vmflag */
	char unknown[8];    /* the first VmFlags mnemonic not in enum smaps_vmflag, or "" */
	unsigned int pkey;  /* "ProtectionKey:" (pkey_mprotect), 0 without one */
	char *name;	    /* path, "[heap]"..., or "" for none */
	char *vmflags_text; /* the VmFlags line's value, or NULL */
	bool has_rss;	    /* "Rss:" and "Swap:" were seen */
	uint64_t rss_kb, swap_kb;
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

/*
 * Bits of enum smaps_vmflag for a VmFlags value ("rd wr mr mw me ac").  The
 * first mnemonic the enum lacks goes to @unknown (8 bytes, "" if none) when
 * @unknown is not NULL.
 */
uint64_t smaps_vmflags(const char *text, char *unknown);

/* The mnemonic of one bit of enum smaps_vmflag ("lo"), or "??". */
const char *smaps_vmflag_name(uint64_t bit);

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
	MEM_FOREIGN,	 /* claimed by another plugin's handler: only recorded */
};

/*
 * What kind of mapping @v is.  Returns the kind, or -ENOTSUP with @why set
 * to the reason when the plugin cannot restore it (yet), a VmFlags flag it
 * cannot set again included.
 */
int mem_vma_kind(const struct smaps_vma *v, const char **why);

/*
 * The VmFlags bits of @vmflags that a mapping of @kind cannot have back
 * after a restore (0: none).  @why names the first one and what it is.
 */
uint64_t mem_vma_lost_flags(enum mem_kind kind, uint64_t vmflags, const char **why);

/* The flags of mmap() that recreate a mapping of @kind with @vmflags. */
int mem_vma_map_flags(enum mem_kind kind, uint64_t vmflags);

/* The advice to apply again, as a mask of (1 << MADV_x). */
uint64_t mem_vma_madv(uint64_t vmflags);

/*
 * Whether a mapping of @kind, @prot and @vmflags may keep pages shared
 * copy-on-write with the parent: a plain writable private anonymous mapping,
 * which the restore can make in the parent before it forks the child and
 * move into place (no stack, lock, guard region or MAP_DROPPABLE).  The dump
 * and the restore must agree on it.
 */
bool mem_vma_cow_eligible(enum mem_kind kind, int prot, uint64_t vmflags);

/* The CRF_RST_VM_* bits of crf/restore.h that @vmflags asks for (restore side). */
uint32_t mem_vma_rst_vm(uint64_t vmflags);

#endif
