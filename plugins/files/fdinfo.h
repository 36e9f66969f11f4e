/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fdinfo.h - the common fields of /proc/PID/fdinfo/N.
 */
#ifndef CRF_PLUGIN_FILES_FDINFO_H
#define CRF_PLUGIN_FILES_FDINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct files_fdinfo {
	uint64_t pos;
	unsigned int flags; /* O_* of the description, with O_CLOEXEC for the fd */
	int mnt_id;
};

/*
 * Parse the text of an fdinfo file (NUL-terminated).  0, or -EBADMSG when
 * "pos:" or "flags:" is missing or malformed.  Other lines are ignored.
 */
int files_fdinfo_parse(const char *text, struct files_fdinfo *out);

/* The value after "@key:" at the start of a line of @text, or NULL. */
const char *files_fdinfo_field(const char *text, const char *key);

/* The number after "@key:" in @base; 0, or -EBADMSG when missing or malformed. */
int files_fdinfo_u64(const char *text, const char *key, int base, uint64_t *out);

/*
 * One "lock:" line of fdinfo, as fs/locks.c prints it: "N: KIND MODE TYPE
 * PID MAJ:MIN:INO START END", END being "EOF" for a lock to the end of the
 * file.  Only the locks the fd's process or description owns are listed,
 * and no blocked waiter.
 */
enum files_lock_kind {
	FILES_LOCK_POSIX = 1, /* fcntl F_SETLK: owned by the process */
	FILES_LOCK_OFD,	      /* fcntl F_OFD_SETLK: owned by the description */
	FILES_LOCK_FLOCK,     /* flock(2): owned by the description */
};

struct files_lock {
	enum files_lock_kind kind;
	bool write; /* else a read (shared) lock */
	int pid;    /* as printed: -1 for an OFD lock */
	unsigned int major, minor;
	uint64_t ino;
	uint64_t start, end; /* bytes start..end, both included */
	bool to_eof;	     /* end is EOF (then end is 0) */
};

/* The value of the next "@key:" line of @*cursor, which moves past it; NULL at the end. */
const char *files_fdinfo_next(const char **cursor, const char *key);

/*
 * Parse the value of a "lock:" line.  0; 1 for a blocked waiter ("->"),
 * which is to be ignored; -ENOTSUP for a lock crf does not restore, with
 * *@what naming it ("a lease", "a delegation", "a mandatory lock"...);
 * -EBADMSG when malformed.
 */
int files_fdinfo_lock(const char *value, struct files_lock *out, const char **what);

/*
 * The whole of /proc/@pid/fdinfo/@fd, NUL-terminated, in *@text (malloc'd,
 * freed by the caller); 0 or -errno (not logged).
 */
int files_fdinfo_read_all(int pid, int fd, char **text);

/* Read a small /proc file into @buf, NUL-terminated; 0 or -errno (not logged). */
int files_proc_read(const char *path, char *buf, size_t size);

/* Read /proc/@pid/fdinfo/@fd into @buf, NUL-terminated; 0 or -errno (not logged). */
int files_fdinfo_read_text(int pid, int fd, char *buf, size_t size);

/* Read and parse /proc/@pid/fdinfo/@fd; 0 or -errno (not logged). */
int files_fdinfo_read(int pid, int fd, struct files_fdinfo *out);

#endif
