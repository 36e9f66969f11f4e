/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers of the end-to-end harness that need none of its state. */
#ifndef CRF_E2E_UTIL_H
#define CRF_E2E_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

int64_t now_ms(void);
void sleep_ms(int ms);

/* Print the last lines of the file at @path to stderr under @title. */
void print_tail(const char *title, const char *path);

/* Field 4 of /proc/PID/stat (the parent; -1 if gone) and field 3 (the state). */
pid_t proc_stat(pid_t pid, char *state);

/* Remove the files of @dir and @dir; remove a whole tree. */
void remove_images(const char *dir);
void remove_tree(const char *path);

/* "exit status N", "killed by signal N (NAME)": a static buffer. */
const char *describe_status(int st);

/*
 * /proc/PID/maps in @buf, normalized (normalize_maps) for comparison; 0 or
 * -errno.
 */
int read_maps(pid_t pid, char *buf, size_t len);
void normalize_maps(char *maps);

/* The line of @text that holds offset @at, copied to @out. */
void line_at(const char *text, size_t at, char *out, size_t len);

#endif
