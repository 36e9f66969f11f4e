// SPDX-License-Identifier: GPL-2.0-only
/*
 * A helper for the checks a restore runs on the images before the first fork
 * (ABI 1.5, crf/image.h): whether a PID an image names is a live process of
 * the dumped tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <crf/image.h>
#include <crf/log.h>

int crf_img_check_task(struct crf_imgdir *dir, const char *img, pid_t pid)
{
	char core[64];

	snprintf(core, sizeof(core), "core-%d.img", (int)pid);
	if (pid > 0 && faccessat(crf_imgdir_fd(dir), core, F_OK, 0) == 0)
		return 0;
	return crf_error_errno(EBADMSG, "%s/%s: PID %d is not a live process of the dump (no %s)",
			       crf_imgdir_path(dir), img, (int)pid, core);
}
