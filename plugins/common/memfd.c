// SPDX-License-Identifier: GPL-2.0-only
/*
 * A memfd made again with its mode and exec rights (memfd.h).
 *
 * Since Linux 6.3 a memfd is executable (mode 0777) or not (MFD_NOEXEC_SEAL:
 * mode 0666 and F_SEAL_EXEC, so no exec bit can be set again), and
 * vm.memfd_noexec picks one when memfd_create() is given neither flag: so
 * the flag is always given.  Value 2 of the sysctl refuses MFD_EXEC, and a
 * memfd that could be run before cannot be made so here.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "memfd.h"

int common_memfd_create(const char *name, bool has_mode, uint32_t mode, uint32_t seals)
{
	bool noexec = (seals & F_SEAL_EXEC) && !(mode & 0111);
	unsigned int flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
	_cleanup_close_ int fd = -1;

	if (has_mode)
		fd = memfd_create(name, flags | (noexec ? MFD_NOEXEC_SEAL : MFD_EXEC));
	else
		fd = memfd_create(name, flags);
	/* Before 6.3 there is no such flag, and every memfd may be run. */
	if (fd < 0 && errno == EINVAL && has_mode)
		fd = memfd_create(name, flags);
	if (fd < 0 && errno == EACCES && has_mode && !noexec)
		return crf_error_errno(EACCES,
				       "memfd %s could be run (mode %04o), and this host's "
				       "vm.memfd_noexec = 2 forbids that",
				       name, mode);
	if (fd < 0)
		return crf_error_errno(errno, "memfd_create %s", name);
	if (has_mode && fchmod(fd, mode & 07777) < 0)
		return crf_error_errno(errno, "memfd %s: mode %04o", name, mode & 07777);
	return TAKE_FD(fd);
}
