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

/* Read /proc/@pid/fdinfo/@fd into @buf, NUL-terminated; 0 or -errno (not logged). */
int files_fdinfo_read_text(int pid, int fd, char *buf, size_t size);

/* Read and parse /proc/@pid/fdinfo/@fd; 0 or -errno (not logged). */
int files_fdinfo_read(int pid, int fd, struct files_fdinfo *out);

#endif
