/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dump-objects.h - the objects the core meets in a frozen task before it
 * infects it: its namespaces and cgroups (per thread), its fd table, its
 * mappings.  Each is handed to the kind registry, so that state no enabled
 * plugin saves stops the dump with one message naming the task, the object
 * and the plugin that would have handled it (crf/plugin.h lists what each
 * class of object looks like).
 */
#ifndef CRF_DUMP_OBJECTS_H
#define CRF_DUMP_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "plugin-set.h"

/*
 * Dispatch every object of the frozen process @pid, namespaces first (a
 * task in a namespace crf cannot restore is refused before anything else
 * is looked at).  0, or the first dispatch's error (logged).
 */
int crf_dump_task_objects(struct crf_plugin_set *set, struct crf_imgdir *dir, pid_t pid);

/* crf_vma_kind(), the classifier of mappings, is libcrf's (crf/plugin.h, ABI 1.5). */

/*
 * Split one line of /proc/PID/cgroup ("ID:CONTROLLERS:PATH", the newline
 * removed) in place: @controllers is "" for cgroup v2, @path starts with
 * '/'.  0 or -EINVAL.
 */
int cgroup_line_split(char *line, const char **controllers, const char **path);

#endif
