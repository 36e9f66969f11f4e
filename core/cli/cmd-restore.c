// SPDX-License-Identifier: GPL-2.0-only
/* crf restore -D DIR */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "privs.h"
#include "inventory.h"
#include "restore.h"

enum {
	OPT_PID_WAIT = OPT_COMMAND_BASE,
	OPT_SHELL_JOB,
	OPT_INHERIT_STDIO,
	OPT_INHERIT_FD,
	OPT_FILE_VALIDATION,
	OPT_MANAGE_CGROUPS,
	OPT_CGROUP_ROOT,
	OPT_CGROUP_ROOT_FROM,
	OPT_EXTERNAL,
	OPT_ROOT,
};

static const char help[] =
	"Usage: crf restore -D DIR [OPTIONS]\n\n"
	"Restore the process tree saved in the image directory DIR, with its\n"
	"original PIDs.  The inventory and every image are verified (checksums,\n"
	"plugins) before anything is created.  Without -d, crf waits for the\n"
	"restored tree and exits with its exit status (128+N if killed by signal N).\n"
	"The restored processes' fds, 0-2 included, are what they were at the dump.\n\n"
	"  -D, --images-dir DIR   the dump to restore\n"
	"  -d, --detach           return once the tree runs\n"
	"      --pid-wait=MS      wait this long for a zombie holding a PID (default 5000)\n"
	"      --shell-job        a tree dumped with --shell-job: its fds on its shell's\n"
	"                         terminal are opened on crf restore's terminal, which\n"
	"                         gets the job's settings and window size, and its\n"
	"                         group gets the foreground back if it had it (run\n"
	"                         without -d then: crf restore waits for the job as\n"
	"                         its shell did)\n"
	"      --inherit-fd fd[N]:RES  a dump with RES saved as external (crf dump\n"
	"                         --external): crf restore's fd N takes its place\n"
	"                         (repeatable); when fd N is a namespace, the\n"
	"                         processes that were in external namespace RES join it\n"
	"      --inherit-stdio    a dump made with --inherit-stdio: its processes' fds\n"
	"                         0-2 are crf restore's own\n"
	"      --external mnt[KEY]:PATH  a dump with a mount saved as external KEY (crf\n"
	"                         dump --external mnt[MP]:KEY): PATH is bound there\n"
	"      --root DIR         a container whose root was a directory: DIR is its\n"
	"                         root now\n"
	"      --file-validation=strict|lax\n"
	"                         how a file reopened by path may have changed since\n"
	"                         the dump: lax (the default) accepts one that only\n"
	"                         grew, for fds that read or append; strict accepts\n"
	"                         no change of size or mtime\n"
	"      --manage-cgroups[=MODE]\n"
	"                         the tree's cgroups and their settings (docs/cgroup.md):\n"
	"                         none (must exist, settings as saved), props (must\n"
	"                         exist, settings written), soft (the default: made\n"
	"                         if gone, settings written to those made), full (made\n"
	"                         if gone, settings written), strict (must be gone)\n"
	"      --cgroup-root [CONTROLLER:]PATH\n"
	"                         the tree's cgroups under PATH instead of where they\n"
	"                         were (CONTROLLER v2, cpu, ...: that hierarchy only)\n"
	"      --cgroup-root-from [CONTROLLER:]PATH\n"
	"                         the saved cgroup --cgroup-root's PATH replaces, with\n"
	"                         what is below it (default: where the tree's cgroups\n"
	"                         branch off crf's)\n";

struct restore_args {
	struct crf_restore_opts ro;
	struct crf_opts *o;
};

/*
 * --inherit-fd fd[N]:RESOURCE: fd N must be open now, before crf opens
 * anything that could take its number.
 */
static int inherit_fd(struct crf_opts *o, const char *arg)
{
	int fd = -1, n = 0;

	if (sscanf(arg, "fd[%d]:%n", &fd, &n) != 1 || !n || fd < 0 || !arg[n])
		return crf_usage_error(o, "--inherit-fd %s: not fd[N]:RESOURCE", arg);
	if (fcntl(fd, F_GETFD) < 0)
		return crf_usage_error(o, "--inherit-fd %s: crf restore has no fd %d", arg, fd);
	/* A namespace is the ns plugin's (crf dump --external net[INODE]:KEY). */
	n = opts_inherit_ns(o, arg, fd);
	if (n)
		return n < 0 ? n : 0;
	return strv_push(&o->inherit_fd, arg) < 0 ? -ENOMEM : 0;
}

static int handle(void *data, int c, const char *arg)
{
	struct restore_args *a = data;
	char *end;
	long v;

	switch (c) {
	case 'D':
		a->ro.dir = arg;
		return 0;
	case 'd':
		a->ro.detach = true;
		return 0;
	case OPT_PID_WAIT:
		v = strtol(arg, &end, 10);
		if (*end || end == arg || v < 0 || v > INT_MAX)
			return crf_usage_error(a->o, "--pid-wait needs milliseconds, not '%s'",
					       arg);
		a->ro.pid_wait_ms = (unsigned int)(v ? v : 1);
		return 0;
	case OPT_SHELL_JOB:
		a->o->shell_job = true;
		return 0;
	case OPT_INHERIT_STDIO:
		a->o->inherit_stdio = true;
		return 0;
	case OPT_INHERIT_FD:
		return inherit_fd(a->o, arg);
	case OPT_EXTERNAL:
		return opts_external_mnt(a->o, arg);
	case OPT_ROOT:
		a->o->root = arg;
		return 0;
	case OPT_FILE_VALIDATION:
		if (strcmp(arg, "strict") && strcmp(arg, "lax"))
			return crf_usage_error(a->o, "--file-validation must be strict or lax");
		a->o->file_validation = arg;
		return 0;
	case OPT_MANAGE_CGROUPS:
		if (arg && strcmp(arg, "none") && strcmp(arg, "props") && strcmp(arg, "soft") &&
		    strcmp(arg, "full") && strcmp(arg, "strict"))
			return crf_usage_error(a->o, "--manage-cgroups must be none, props, soft, "
						     "full or strict");
		a->o->manage_cgroups = arg ? arg : "soft";
		return 0;
	case OPT_CGROUP_ROOT:
		if (!strchr(arg, '/') || strchr(arg, ' '))
			return crf_usage_error(a->o, "--cgroup-root %s: not [CONTROLLER:]/PATH",
					       arg);
		return strv_push(&a->o->cgroup_root, arg) < 0 ? -ENOMEM : 0;
	case OPT_CGROUP_ROOT_FROM:
		if (!strchr(arg, '/') || strchr(arg, ' '))
			return crf_usage_error(
				a->o, "--cgroup-root-from %s: not [CONTROLLER:]/PATH", arg);
		return strv_push(&a->o->cgroup_root_from, arg) < 0 ? -ENOMEM : 0;
	}
	return -EINVAL;
}

int cmd_restore(struct crf_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"images-dir", required_argument, NULL, 'D'},
		{"detach", no_argument, NULL, 'd'},
		{"pid-wait", required_argument, NULL, OPT_PID_WAIT},
		{"shell-job", no_argument, NULL, OPT_SHELL_JOB},
		{"inherit-stdio", no_argument, NULL, OPT_INHERIT_STDIO},
		{"inherit-fd", required_argument, NULL, OPT_INHERIT_FD},
		{"file-validation", required_argument, NULL, OPT_FILE_VALIDATION},
		{"manage-cgroups", optional_argument, NULL, OPT_MANAGE_CGROUPS},
		{"cgroup-root", required_argument, NULL, OPT_CGROUP_ROOT},
		{"cgroup-root-from", required_argument, NULL, OPT_CGROUP_ROOT_FROM},
		{"external", required_argument, NULL, OPT_EXTERNAL},
		{"root", required_argument, NULL, OPT_ROOT},
		{0},
	};
	struct restore_args a = {.o = o};
	struct crf_config conf = {0};
	struct crf_plugin_set set = {0};
	struct crf_imgdir *dir = NULL;
	pid_t root = 0;
	int r;

	r = parse_command(o, argc, argv, "D:d", longopts, help, handle, &a);
	if (r)
		return r > 0 ? CRF_EXIT_OK : CRF_EXIT_USAGE;
	if (optind < argc)
		return crf_usage_error(o, "unexpected argument '%s'", argv[optind]), CRF_EXIT_USAGE;
	if (!a.ro.dir)
		return crf_usage_error(o, "no image directory given (-D DIR)"), CRF_EXIT_USAGE;
	if (crf_require_privileges("crf restore") < 0)
		return CRF_EXIT_FAIL;
	/* The shell, not crf, decides who has the terminal once crf restore exits. */
	if (a.ro.detach && o->shell_job)
		crf_warn("-d with --shell-job: once crf restore exits, an interactive shell takes "
			 "its terminal back, and a job that had the foreground is left in the "
			 "background (stopped when it reads the terminal); restore such a job "
			 "without -d to keep it in the foreground");
	/*
	 * The plugin set is the dump's own: the plugins its inventory names,
	 * each checked (enabled, loaded, a version that reads it) before
	 * anything is created; the others are left out.
	 */
	r = crf_imgdir_open(a.ro.dir, CRF_IMGDIR_READ, &dir);
	if (r >= 0)
		r = inventory_plugins(dir, &o->sel.image);
	o->sel.image_set = true;
	if (r >= 0)
		r = crf_setup(o, &conf, &set, CRF_SET_DEFER_LOAD);
	if (r >= 0)
		r = inventory_check(dir, &set, &root);
	if (r >= 0 && plugin_set_probe(&set, false) != 0)
		r = -ENOTSUP;
	if (r >= 0) {
		crf_info("%s: inventory and every image verified", a.ro.dir);
		a.ro.sibling = crf_rpc_hooks.sibling;
		a.ro.notify = crf_rpc_hooks.notify;
		a.ro.notify_arg = crf_rpc_hooks.arg;
		crf_rpc_hooks.root = root;
		r = crf_restore(&a.ro, &set, dir, root);
	}
	crf_rpc_hooks.err = r < 0 ? r : 0;
	if (dir)
		crf_imgdir_close(dir);
	plugin_set_free(&set);
	config_free(&conf);
	if (r < 0)
		return CRF_EXIT_FAIL;
	return r;
}
