/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * policy.h - pure rules of the files plugin (policy.c), without the
 * kernel or the images, so that the unit tests can call them.
 */
#ifndef CRF_PLUGIN_FILES_POLICY_H
#define CRF_PLUGIN_FILES_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One word of --inherit-fd, "fd[N]:RESOURCE": 0 with *@fd = N and *@name
 * pointing at RESOURCE inside @word, or -EINVAL when it is not of that form.
 */
int files_inherit_parse(const char *word, int *fd, const char **name);

/*
 * crf restore --file-validation (the key "file-validation"): how a regular
 * file reopened by path must compare with the dump.  LAX, the default: it
 * is the same inode, no smaller, and it grew only under fds that read or
 * append (O_APPEND).  STRICT: neither its size nor its mtime changed.
 */
enum files_validation {
	FILES_VALIDATE_LAX,
	FILES_VALIDATE_STRICT,
};

/* "strict" or "lax" (NULL: the default, lax) into *@v; -EINVAL for anything else. */
int files_validation_parse(const char *value, enum files_validation *v);

/* What identifies a regular file's state: device, inode, size and mtime. */
struct files_file_id {
	uint64_t dev, ino, size;
	int64_t mtime_sec;
	uint32_t mtime_nsec;
};

/*
 * Whether a file saved as @was, found as @is, may be reopened by an fd of
 * description flags @flags under rule @v: NULL when it may, else what
 * changed ("shrank from 10 to 4 bytes"), written into @buf (@len bytes).
 */
const char *files_change_refusal(const struct files_file_id *was, const struct files_file_id *is,
				 unsigned int flags, enum files_validation v, char *buf,
				 size_t len);

#endif
