// SPDX-License-Identifier: GPL-2.0-only
/* crf dump -t PID -D DIR */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "privs.h"
#include "stop.h"
#include "dump.h"
#include "rst-tree.h"

enum {
	OPT_LEAVE_RUNNING = OPT_COMMAND_BASE,
	OPT_FREEZE,
	OPT_SYNC,
	OPT_SHELL_JOB,
	OPT_INHERIT_STDIO,
	OPT_EXTERNAL,
	OPT_TCP_ESTABLISHED,
	OPT_SKIP_IN_FLIGHT,
	OPT_TCP_CLOSE,
	OPT_UNIX_PEERCRED_CRF,
	OPT_LIVE,
};

static const char help[] =
	"Usage: crf dump -t PID -D DIR [OPTIONS]\n\n"
	"Checkpoint the process tree rooted at PID into the image directory DIR.\n\n"
	"  -t, --tree PID         root of the tree to dump\n"
	"  -D, --images-dir DIR   where to write the images\n"
	"      --leave-running    let the tree run on after the dump\n"
	"      --live             with --leave-running: freeze only to write-protect the\n"
	"                         tree's private memory, copy it while the tree runs on\n"
	"                         (the image is still the instant of the freeze)\n"
	"      --freeze=MODE      auto, cgroup or ptrace\n"
	"      --sync             with --leave-running, write the images to disk\n"
	"                         (syncfs) before returning; a dump that kills the\n"
	"                         tree always does, before the kill\n"
	"      --shell-job        the tree may have fds on a terminal it does not own\n"
	"                         (its shell's): save them, to be restored with\n"
	"                         crf restore --shell-job on that command's terminal\n"
	"      --external mnt[MP]:KEY  the mount at MP (a place in the task's mount\n"
	"                         namespace) is external: not saved, bound again at\n"
	"                         the restore from crf restore --external mnt[KEY]:PATH\n"
	"      --external net[INODE]:KEY  the namespace net:[INODE] (also uts, ipc,\n"
	"                         cgroup) is external: not saved, the restored\n"
	"                         processes join crf restore --inherit-fd fd[N]:KEY's\n"
	"      --external RES     the pipe or FIFO RES (pipe:[INODE], fifo:[INODE]), which\n"
	"                         a process outside the tree holds too, is saved as\n"
	"                         external: crf restore --inherit-fd fd[N]:RES will\n"
	"                         connect an fd of its own in its place (repeatable)\n"
	"      --inherit-stdio    do not save fds 0-2 that are not terminals: they will\n"
	"                         be crf restore --inherit-stdio's own\n"
	"      --tcp-established  save established TCP connections (in repair mode, with\n"
	"                         a network lock); without it they are refused\n"
	"      --skip-in-flight   leave out TCP connections not yet accepted (their\n"
	"                         peers see a reset); without it they are refused\n"
	"      --tcp-close        save TCP connections to be restored closed (the fd\n"
	"                         is there, reads end of file, writes fail)\n"
	"      --unix-peercred-crf\n"
	"                         restore unix listeners and connections although their\n"
	"                         SO_PEERCRED will name crf restore's process, not the\n"
	"                         peer; without it they are refused (socketpairs come\n"
	"                         back made by their makers, exact)\n";

struct dump_args {
	pid_t pid;
	const char *dir;
	const char *freeze;
	bool leave_running;
	bool sync;
	struct crf_opts *o;
};

/* A PID argument: a positive decimal number and nothing else. */

static int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT_MAX)
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

static int handle(void *data, int c, const char *arg)
{
	struct dump_args *a = data;

	switch (c) {
	case 't':
		if (parse_pid(arg, &a->pid) < 0)
			return crf_usage_error(a->o, "'%s' is not a PID", arg);
		return 0;
	case 'D':
		a->dir = arg;
		return 0;
	case OPT_LEAVE_RUNNING:
		a->leave_running = true;
		return 0;
	case OPT_LIVE:
		a->o->live = true;
		return 0;
	case OPT_SYNC:
		a->sync = true;
		return 0;
	case OPT_SHELL_JOB:
		a->o->shell_job = true;
		return 0;
	case OPT_INHERIT_STDIO:
		a->o->inherit_stdio = true;
		return 0;
	case OPT_EXTERNAL: {
		int ns = strncmp(arg, "mnt[", 4) ? opts_external_ns(a->o, arg) : 0;

		if (!strncmp(arg, "mnt[", 4))
			return opts_external_mnt(a->o, arg);
		if (ns)
			return ns < 0 ? ns : 0;
		if (strncmp(arg, "pipe:[", 6) && strncmp(arg, "fifo:[", 6))
			return crf_usage_error(
				a->o, "--external %s: not pipe:[INODE] or fifo:[INODE]", arg);
		return strv_push(&a->o->external, arg) < 0 ? -ENOMEM : 0;
	}
	case OPT_TCP_ESTABLISHED:
		a->o->tcp_established = true;
		return 0;
	case OPT_SKIP_IN_FLIGHT:
		a->o->skip_in_flight = true;
		return 0;
	case OPT_TCP_CLOSE:
		a->o->tcp_close = true;
		return 0;
	case OPT_UNIX_PEERCRED_CRF:
		a->o->unix_peercred_crf = true;
		return 0;
	case OPT_FREEZE:
		if (strcmp(arg, "auto") && strcmp(arg, "cgroup") && strcmp(arg, "ptrace"))
			return crf_usage_error(a->o, "--freeze must be auto, cgroup or ptrace");
		a->freeze = arg;
		return 0;
	}
	return -EINVAL;
}

int cmd_dump(struct crf_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"tree", required_argument, NULL, 't'},
		{"images-dir", required_argument, NULL, 'D'},
		{"leave-running", no_argument, NULL, OPT_LEAVE_RUNNING},
		{"freeze", required_argument, NULL, OPT_FREEZE},
		{"sync", no_argument, NULL, OPT_SYNC},
		{"live", no_argument, NULL, OPT_LIVE},
		{"shell-job", no_argument, NULL, OPT_SHELL_JOB},
		{"inherit-stdio", no_argument, NULL, OPT_INHERIT_STDIO},
		{"external", required_argument, NULL, OPT_EXTERNAL},
		{"tcp-established", no_argument, NULL, OPT_TCP_ESTABLISHED},
		{"skip-in-flight", no_argument, NULL, OPT_SKIP_IN_FLIGHT},
		{"tcp-close", no_argument, NULL, OPT_TCP_CLOSE},
		{"unix-peercred-crf", no_argument, NULL, OPT_UNIX_PEERCRED_CRF},
		{0},
	};
	struct dump_args a = {.o = o, .freeze = "auto"};
	struct crf_config conf = {0};
	struct crf_plugin_set set = {0};
	int r;

	r = parse_command(o, argc, argv, "t:D:", longopts, help, handle, &a);
	if (r)
		return r > 0 ? CRF_EXIT_OK : CRF_EXIT_USAGE;
	if (optind < argc)
		return crf_usage_error(o, "unexpected argument '%s'", argv[optind]), CRF_EXIT_USAGE;
	if (!a.pid)
		return crf_usage_error(o, "no process given (-t PID)"), CRF_EXIT_USAGE;
	if (!a.dir)
		return crf_usage_error(o, "no image directory given (-D DIR)"), CRF_EXIT_USAGE;
	/* A dump that kills the tree gains nothing from letting it run meanwhile. */
	if (o->live && !a.leave_running)
		return crf_usage_error(o, "--live needs --leave-running: a dump that kills the "
					  "tree keeps it frozen to the end anyway"),
		       CRF_EXIT_USAGE;
	if (kill(a.pid, 0) < 0 && errno == ESRCH) {
		crf_error("no process with PID %d", (int)a.pid);
		return CRF_EXIT_FAIL;
	}
	if (crf_require_privileges("crf dump") < 0 || stop_handlers_install() < 0)
		return CRF_EXIT_FAIL;
	r = crf_setup(o, &conf, &set, 0);
	if (r >= 0 && plugin_set_probe(&set, false) != 0)
		r = -ENOTSUP;
	if (r >= 0) {
		struct crf_dump_opts d = {
			.pid = a.pid,
			.dir = a.dir,
			.freeze = a.freeze,
			.leave_running = a.leave_running,
			.sync = a.sync,
			.live = o->live,
			.check_tree = rst_plan_check,
			.notify = crf_rpc_hooks.notify,
			.notify_arg = crf_rpc_hooks.arg,
		};

		r = crf_dump(&d, &set);
	}
	plugin_set_free(&set);
	config_free(&conf);
	crf_rpc_hooks.err = r < 0 ? r : 0;
	return r < 0 ? CRF_EXIT_FAIL : CRF_EXIT_OK;
}
