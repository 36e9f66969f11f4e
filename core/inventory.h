/* SPDX-License-Identifier: GPL-2.0-only */
/* The inventory: the last image a dump writes, the first a restore reads. */
#ifndef CRF_INVENTORY_H
#define CRF_INVENTORY_H

#include <sys/types.h>

#include "plugin-set.h"

/* Write inventory.img naming the enabled plugins (dump order) and @root. */
int crf_inventory_write(struct crf_imgdir *dir, const struct crf_plugin_set *set, pid_t root);

/*
 * Check a dump directory before restoring: the inventory exists and is
 * intact, every plugin that wrote the dump is enabled here with the same ABI
 * major, and every image file it lists verifies (all checksums).
 * Returns 0 and the root PID of the saved tree in @root, or -errno after
 * one error naming what is wrong.
 */
int crf_inventory_check(struct crf_imgdir *dir, const struct crf_plugin_set *set, pid_t *root);

#endif
