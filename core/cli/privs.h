/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * privs.h - whether crf runs with what a dump and a restore need.
 *
 * Freezing, infecting and restoring other people's processes needs
 * CAP_SYS_ADMIN and CAP_SYS_PTRACE (in practice: root).  Without them the
 * plugins' probes fail one by one ("EPERM") and would read as missing
 * kernel features; the commands say what is really missing first.
 */
#ifndef CRF_PRIVS_H
#define CRF_PRIVS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * True when crf's effective set holds CAP_SYS_ADMIN and CAP_SYS_PTRACE;
 * otherwise the names of those it lacks go to @missing.
 */
bool crf_privileged(char *missing, size_t len);

/* 0, or -EPERM after one error saying that @cmd ("crf dump") needs root. */
int crf_require_privileges(const char *cmd);

#endif
