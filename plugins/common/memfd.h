/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * memfd.h - making a memfd again at restore, with the mode and exec rights
 * it had.  Both the files plugin (a memfd held as an fd) and the mem plugin
 * (one mapped) may be the first to make a memfd the tree has (crf_rst_object,
 * "memfd:DEV:INODE"), so both make it with this one function.
 */
#ifndef CRF_PLUGIN_COMMON_MEMFD_H
#define CRF_PLUGIN_COMMON_MEMFD_H

#include <stdbool.h>
#include <stdint.h>

#ifndef MFD_EXEC
#define MFD_NOEXEC_SEAL 0x0008U /* Linux 6.3 */
#define MFD_EXEC	0x0010U
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020 /* Linux 6.3 */
#endif

/*
 * A new memfd named @name (O_CLOEXEC, sealing allowed) that can be run, or
 * never, as the saved one with mode @mode and seals @seals could: made
 * with MFD_NOEXEC_SEAL when it had F_SEAL_EXEC and no exec bit, else with
 * MFD_EXEC, so that this host's vm.memfd_noexec does not decide; then given
 * @mode.  Without @has_mode (an older image) it gets the host's default.
 * The caller fills it, then adds @seals.  The fd, or -errno (logged).
 */
int common_memfd_create(const char *name, bool has_mode, uint32_t mode, uint32_t seals);

#endif
