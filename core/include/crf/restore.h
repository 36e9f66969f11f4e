/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * crf/restore.h - describing a task's address space for the restorer.
 *
 * During restore-task, inside the freshly forked task and before the
 * restorer takes over, plugins describe what the restorer must build: the
 * mappings, the pages to read into them, the mm fields and the vDSO place.
 * The core packs this into the restorer's arguments; the restorer then
 * unmaps crf and builds the saved address space.  Plugins also hand over
 * the program's fds and may share one kernel object by a key
 * (crf_rst_object, from restore-prepare on).
 */
#ifndef CRF_RESTORE_H
#define CRF_RESTORE_H

#include <stdbool.h>
#include <stdint.h>

#include <crf/layout.h>

#ifdef __cplusplus
extern "C" {
#endif

struct crf_ctx;
struct crf_img;

/* One mapping to create, at its saved address. */
struct crf_rst_vma {
	uint64_t start, end;
	int prot;	/* final PROT_* */
	int flags;	/* MAP_PRIVATE or MAP_SHARED, | MAP_ANONYMOUS, MAP_GROWSDOWN... */
	int fd;		/* file to map (the core takes ownership), or -1 */
	uint64_t pgoff; /* file offset in bytes */
	/* madvise() advice to apply after mapping, as a bit mask of
	 * (1 << MADV_x) for MADV_x < 64 (MADV_DONTFORK, MADV_DONTDUMP...) */
	uint64_t madv;
	/*
	 * ABI 1.1, appended: nonzero for a System V shared memory segment,
	 * attached again with shmat(shmid) at start rather than mapped, so
	 * that shm_nattch counts the task and its shmdt() works.  Then fd is
	 * -1, flags MAP_SHARED, pgoff 0 and end - start the whole segment;
	 * its contents are the segment's, so no pages may be added in it.
	 * Zero (as a designated initialiser leaves it): an ordinary mapping.
	 */
	int sysv;
	int shmid; /* the segment's id, when sysv */
	/*
	 * ABI 1.4, appended: what else the saved VMA's VmFlags said, as
	 * CRF_RST_VM_* bits; 0 (an older plugin): mapped as before.
	 */
	uint32_t vm;
	/* The name an anonymous mapping was given with
	 * prctl(PR_SET_VMA_ANON_NAME) ("[anon:NAME]" in maps), or NULL;
	 * the core copies it. */
	const char *anon_name;
	/* @n_guards page ranges [start, end) inside the mapping, as pairs,
	 * that were guard regions (MADV_GUARD_INSTALL); the core copies them.
	 * No pages may be added in them. */
	const uint64_t *guards;
	uint32_t n_guards;
	/* Nonzero: the mapping exists already, made with prot and flags at
	 * this address by the restore-premap stage (private anonymous memory,
	 * pages in), and the restorer moves it into place with mremap(); no
	 * pages may be added in it.  The range must be free in the saved
	 * address space. */
	uint64_t premap;
};

/*
 * Bits of crf_rst_vma.vm (ABI 1.4).  With CRF_RST_VM_EXACT the restorer
 * makes the mapping so that /proc/PID/smaps shows the saved VmFlags:
 *
 * CRF_RST_VM_ACCOUNT: "ac", the mapping is charged to the commit limit.  The
 * kernel sets it when a private mapping without MAP_NORESERVE is made
 * writable, and clears it again only for an anonymous mapping that never had
 * a page: so a private mapping with it is mapped writable first; one without
 * it is never made writable, and its pages are written through
 * /proc/self/mem (FOLL_FORCE), as a debugger's would be.
 * CRF_RST_VM_LOCKONFAULT: "lf", locked with mlock2(MLOCK_ONFAULT) (flags
 * then hold MAP_LOCKED too): pages not present at the dump stay out.
 * MAP_LOCKED alone is mlock(): every page is faulted in.  (A locked mapping
 * takes no guard region, so one with guards is locked after them.)
 * CRF_RST_VM_SEALED: "sl", mseal()ed once everything else is set.
 * CRF_RST_VM_GUARD: "gu", guard regions were installed in it at some time
 * (the flag stays after they are removed): set even with no guards left.
 */
#define CRF_RST_VM_EXACT       (1u << 0)
#define CRF_RST_VM_ACCOUNT     (1u << 1)
#define CRF_RST_VM_LOCKONFAULT (1u << 2)
#define CRF_RST_VM_SEALED      (1u << 3)
#define CRF_RST_VM_GUARD       (1u << 4)

/* The mm fields of prctl(PR_SET_MM_MAP) and the auxiliary vector. */
struct crf_rst_mm {
	/* start_code, end_code ... env_end: crf/layout.h's CRF_MM_FIELDS */
#define CRF_RST_MM_FIELD(name) uint64_t name;
	CRF_MM_FIELDS(CRF_RST_MM_FIELD)
#undef CRF_RST_MM_FIELD
	uint64_t auxv[2 * 64]; /* pairs, ending with AT_NULL */
	uint32_t auxv_len;     /* number of uint64_t used, including AT_NULL's pair */
	int exe_fd;	       /* the executable (the core takes ownership), or -1 */
	/* ABI 1.4, appended: mlockall() flags of mappings made later
	 * (MCL_FUTURE, MCL_ONFAULT), set last; 0: none */
	int mlockall;
};

/* Add a mapping; 0 or -errno. */
int crf_rst_add_vma(struct crf_ctx *ctx, const struct crf_rst_vma *vma);

/*
 * Read @len bytes at data offset @off of the blob image @blob into memory at
 * @vaddr (inside an added mapping).  The blob must have been verified (the
 * core verifies every image before it forks).  @blob stays open until the
 * restorer is done; the core closes it.
 */
int crf_rst_add_pages(struct crf_ctx *ctx, struct crf_img *blob, uint64_t vaddr, uint64_t len,
		      uint64_t off);

int crf_rst_set_mm(struct crf_ctx *ctx, const struct crf_rst_mm *mm);

/*
 * Put the kernel's vDSO at @vdso (the saved [vdso] start); the vvar pages go
 * where the kernel puts them relative to it, which the caller has checked
 * matches the saved layout.
 */
int crf_rst_set_vdso(struct crf_ctx *ctx, uint64_t vdso);

/*
 * ABI 1.2: give the program fd @fd (an fd of the caller, opened
 * with O_CLOEXEC at any number) the number @number, with close-on-exec as
 * @cloexec says.  The core takes ownership of @fd from the call on, even on
 * failure, and installs it only when it enters the restorer, after closing
 * its own fds: so @number may be one crf itself uses now.  Until then @fd
 * stays open at its number: the caller may still use it (dup it, register
 * it in an epoll) during its restore-task hook, but must not close it.  Any
 * number from 0 on (ABI 1.4; before, 0-2 were kept as crf restore's own and
 * refused here), each at most once: a number no plugin gives is closed in
 * the program, 0-2 included.  The restorer's fds go above the highest.  0
 * or -errno (logged).
 */
int crf_rst_keep_fd(struct crf_ctx *ctx, int fd, int number, bool cloexec);

/*
 * ABI 1.3: have @fn(@arg) called in the task once the program's fds are at
 * their numbers (crf_rst_keep_fd) and crf's own fds are closed, just before
 * the jump into the restorer; every task PID of the tree exists then.  For
 * what must be set through the program's fd numbers and stay so: a POSIX
 * record lock is dropped whenever its process closes any fd of the file,
 * as the core does while it moves fds; O_ASYNC signals carry the fd
 * number they were enabled through.  The functions run in the order they
 * were added.
 *
 * @fn must leave the fd table as it found it (closing an fd of a locked
 * file drops the lock), and it cannot reach crf's log file nor its stderr
 * any more (fd 2 is the program's): its messages are not written, and the
 * first error is reported with the task's failure (ABI 1.4).  It returns
 * 0, or -errno after logging why, which fails the restore of the task.
 * @release(@arg), when not NULL, is called
 * if the task gives up before the jump, whether @fn ran or not; after the
 * jump the address space that held @arg is gone.  0 or -errno (logged); on
 * failure @release(@arg) has been called.
 */
int crf_rst_at_fds_placed(struct crf_ctx *ctx, int (*fn)(void *arg), void *arg,
			  void (*release)(void *arg));

/*
 * ABI 1.3: one kernel object that several plugins restore, named by @key
 * (a string the plugins agree on, e.g. "memfd:DEV:INODE" with the object's
 * st_dev and st_ino at the dump).  Returns a new fd (O_CLOEXEC, owned by
 * the caller) on the object, or -errno (logged).
 *
 * The first caller for @key makes the object: @create(@arg) returns an fd
 * (O_CLOEXEC) on it, complete (contents, seals), or -errno after logging
 * why; nothing is registered then, and that is the result.  The core keeps
 * the object, and every later call for @key gets a dup of the core's fd
 * without calling @create: the caller must not fill or seal it again.
 * *@created (when @created is not NULL) says which happened.  The dup
 * shares the core's open file description: a caller that needs its own
 * offset or flags opens the object again (/proc/self/fd/N).
 *
 * Available in restore-prepare, in crf's top process: an object made there
 * is inherited by every task forked after, so every task finds it; in
 * restore-premap, in a process right after it is forked: inherited by the
 * processes it forks after; and in restore-task, inside the task: an
 * object first made there is that task's alone.  The core's fds are closed with crf's own before
 * the task enters its restorer, and in crf once restore-finish is done (before the tree runs: a
 * writable fd on a memfd would keep it from being executed).
 */
int crf_rst_object(struct crf_ctx *ctx, const char *key, int (*create)(void *arg), void *arg,
		   bool *created);

#ifdef __cplusplus
}
#endif

#endif
