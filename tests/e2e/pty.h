/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The harness's --pty: it stands in for an interactive shell.  It leads a
 * session whose controlling terminal is a pty it creates; the workload and
 * crf restore run on that terminal, each in its own process group made the
 * foreground before it runs (as a shell runs a foreground job), and the
 * harness reads what they write on the master into the log and types on it.
 */
#ifndef CRF_E2E_PTY_H
#define CRF_E2E_PTY_H

#include <stdbool.h>

/*
 * Lead a session (forking first when the harness leads a process group:
 * the parent waits and exits with the child's status) and take a new pty
 * as its controlling terminal.  0 or -errno.
 */
int pty_setup(void);

/*
 * In a child about to exec: its own process group, the foreground of the
 * terminal; fds 0-2 on the terminal when @all, else fd 0 only.  0 or -errno.
 */
int pty_child(bool all);

/* Append what waits on the master to the file @log. */
void pty_drain(const char *log);

/* Type @text on the terminal; 0 or -errno. */
int pty_type(const char *text);

/*
 * The foreground job ended (a dump killed it): as a shell does, take the
 * terminal back and put the shell's own settings on it, here with another
 * window size, as a new terminal would have.  0 or -errno.
 */
int pty_shell_resume(void);

#endif
