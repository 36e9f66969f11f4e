/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mmfields.h - a task's mm fields and the files its memory refers to.
 */
#ifndef CRF_PLUGIN_MEM_MMFIELDS_H
#define CRF_PLUGIN_MEM_MMFIELDS_H

#include <stdint.h>
#include <sys/types.h>

#include "mm.pb-c.h"

struct crf_rst_mm;

/*
 * Fill @mm (except brk and exe_fd) from /proc/PID/stat and /proc/PID/auxv;
 * 0 or -errno (logged).
 */
int mem_read_mm(pid_t pid, struct crf_rst_mm *mm);

/* Parse the text of /proc/PID/stat into @mm; 0 or -EINVAL. */
int mem_parse_stat(const char *text, struct crf_rst_mm *mm);

/*
 * A FileRef for the file behind @link (/proc/PID/exe, /proc/PID/map_files/
 * START-END): its path, and its identity from stat() of the link, which
 * reaches the mapped file even if it was renamed.  Free with
 * mem_fileref_free().  0 or -errno (logged).
 */
int mem_fileref_read(const char *link, Crf__Mem__FileRef **out);
void mem_fileref_free(Crf__Mem__FileRef *ref);

/*
 * Open @ref's path with @flags and check it is the file of the dump:
 * returns the fd, or -ESTALE after logging "PATH changed since the dump
 * (size X -> Y)", or another -errno (logged).
 */
int mem_fileref_open(const Crf__Mem__FileRef *ref, int flags);

#endif
