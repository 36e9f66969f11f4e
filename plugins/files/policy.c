// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pure rules of the files plugin, which the unit tests build in too: the
 * words of --inherit-fd, and whether a regular file that changed since the
 * dump may still be reopened (--file-validation).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int files_inherit_parse(const char *word, int *fd, const char **name)
{
	const char *p = word;
	char *end;
	long v;

	if (strncmp(p, "fd[", 3))
		return -EINVAL;
	p += 3;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || v > INT_MAX || end[0] != ']' || end[1] != ':' || !end[2])
		return -EINVAL;
	*fd = (int)v;
	*name = end + 2;
	return 0;
}

int files_validation_parse(const char *value, enum files_validation *v)
{
	if (!value || !strcmp(value, "lax"))
		*v = FILES_VALIDATE_LAX;
	else if (!strcmp(value, "strict"))
		*v = FILES_VALIDATE_STRICT;
	else
		return -EINVAL;
	return 0;
}

/*
 * A description that writes without O_APPEND writes at its own offset:
 * bytes another writer added past it would be overwritten or leave the
 * program's view of the file wrong, so only readers and appenders (which
 * write at the end, wherever it is now) may meet a file that grew.  An
 * O_PATH fd neither reads nor writes.
 */
static bool may_grow(unsigned int flags)
{
	return (flags & O_PATH) || (flags & O_ACCMODE) == O_RDONLY || (flags & O_APPEND);
}

const char *files_change_refusal(const struct files_file_id *was, const struct files_file_id *is,
				 unsigned int flags, enum files_validation v, char *buf, size_t len)
{
	if (was->dev != is->dev || was->ino != is->ino)
		snprintf(buf, len, "replaced by another file (inode %" PRIu64 " -> %" PRIu64 ")",
			 was->ino, is->ino);
	else if (is->size < was->size)
		snprintf(buf, len, "shrank from %" PRIu64 " to %" PRIu64 " bytes", was->size,
			 is->size);
	else if (v == FILES_VALIDATE_STRICT && is->size != was->size)
		snprintf(buf, len, "grew from %" PRIu64 " to %" PRIu64 " bytes (strict validation)",
			 was->size, is->size);
	else if (v == FILES_VALIDATE_STRICT &&
		 (is->mtime_sec != was->mtime_sec || is->mtime_nsec != was->mtime_nsec))
		snprintf(buf, len,
			 "was modified (mtime %" PRId64 ".%09u -> %" PRId64 ".%09u, "
			 "strict validation)",
			 was->mtime_sec, was->mtime_nsec, is->mtime_sec, is->mtime_nsec);
	else if (is->size > was->size && !may_grow(flags))
		snprintf(buf, len,
			 "grew from %" PRIu64 " to %" PRIu64 " bytes, and the fd writes "
			 "to it without O_APPEND",
			 was->size, is->size);
	else
		return NULL;
	return buf;
}
