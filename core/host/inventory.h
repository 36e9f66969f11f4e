/* SPDX-License-Identifier: GPL-2.0-only */
/* The inventory: the last image a dump writes, the first a restore reads. */
#ifndef CRF_INVENTORY_H
#define CRF_INVENTORY_H

#include <stdbool.h>
#include <sys/types.h>

#include "plugin-set.h"

/* Write inventory.img naming the enabled plugins (dump order) and @root. */
int inventory_write(struct crf_imgdir *dir, const struct crf_plugin_set *set, pid_t root);

/*
 * The names of the plugins that wrote the dump in @dir, from its inventory
 * (read and verified), appended to @names: a restore runs exactly these.
 * 0 or -errno (logged).
 */
int inventory_plugins(struct crf_imgdir *dir, struct strv *names);

/*
 * May a plugin of version @here restore the images a version @written
 * wrote?  Versions are "MAJOR.MINOR[.PATCH...]": the same major, and a
 * minor of @here at least @written's; while the major is 0 (the image
 * format not settled yet), the same minor.  The patch level never
 * matters.  Versions not of that form must be equal.
 */
bool plugin_version_reads(const char *here, const char *written);

/*
 * Check a dump directory before restoring: the inventory exists and is
 * intact, every plugin that wrote the dump is enabled and loaded here, with
 * the same ABI major and a version that reads its images
 * (plugin_version_reads), and every image file it lists verifies (all
 * checksums), and the core's own images hold their types.  @set NULL (the
 * fuzzer): the plugins are not checked.
 * Returns 0 and the root PID of the saved tree in @root, or -errno after
 * one error naming what is wrong.
 */
int inventory_check(struct crf_imgdir *dir, const struct crf_plugin_set *set, pid_t *root);

#endif
