// SPDX-License-Identifier: GPL-2.0-only
/*
 * crf run as "criu" (the symlink meson -Dcriu=true installs): the CRIU
 * command line that runtimes and people use, mapped onto crf's own:
 *
 *   criu swrk FD                 crf swrk FD
 *   criu check                   crf check ("Looks good." as CRIU says it)
 *   criu --version               CRIU's version line, then crf's
 *   criu dump -t PID -D DIR ...  crf dump ...
 *   criu restore -D DIR ...      crf restore ...
 *
 * The options are listed in docs/criu-compat.md; an option crf does not
 * honour is refused by name (exit status 2), never ignored.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat.h"

enum {
	C_TCP_ESTABLISHED = 0x100,
	C_SKIP_IN_FLIGHT,
	C_EXT_UNIX_SK,
	C_INHERIT_FD,
	C_EXTERNAL,
	C_EXT_MOUNT_MAP,
	C_ROOT,
	C_MANAGE_CGROUPS,
	C_CGROUP_ROOT,
	C_PIDFILE,
	C_DISPLAY_STATS,
	C_FILE_LOCKS,
	C_EVASIVE_DEVICES,
	C_FREEZE_CGROUP,
	C_EMPTY_NS,
	C_VERSION,
	C_HELP,
};

struct cli {
	bool dump;
	const char *dir, *work_dir, *log_file, *pidfile;
	int level; /* CRIU's -v: 2 by default */
	bool display_stats, detach;
	struct strv argv;
};

static int refuse(const char *what, const char *why)
{
	fprintf(stderr, "criu (crf): option %s refused: %s\n", what, why);
	return CRF_EXIT_USAGE;
}

/* --pidfile: the restored root's PID, once it runs. */
static int write_pidfile(void *arg, const char *script, pid_t pid)
{
	const struct cli *c = arg;
	FILE *f;

	if (strcmp(script, "post-resume"))
		return 0;
	f = fopen(c->pidfile, "we");
	if (!f)
		return crf_error_errno(errno, "--pidfile %s", c->pidfile);
	fprintf(f, "%d", (int)pid);
	if (fclose(f) != 0)
		return crf_error_errno(errno, "--pidfile %s", c->pidfile);
	return 0;
}

static int option(struct cli *c, int opt, const char *arg)
{
	switch (opt) {
	case 't':
		if (!c->dump)
			return refuse("-t", "it is for a dump");
		return strv_push(&c->argv, "--tree") < 0 || strv_push(&c->argv, arg) < 0 ? -ENOMEM
											 : 0;
	case 'D':
		c->dir = arg;
		return 0;
	case 'W':
		c->work_dir = arg;
		return 0;
	case 'o':
		c->log_file = arg;
		return 0;
	case 'v':
		if (!arg)
			c->level++;
		else if (arg[strspn(arg, "v")] == '\0')
			c->level += 1 + (int)strlen(arg);
		else if (arg[strspn(arg, "0123456789")] == '\0')
			c->level = atoi(arg);
		else
			return refuse("-v", "takes a number or more v's");
		return 0;
	case 'j':
		return strv_push(&c->argv, "--shell-job");
	case 'R':
		if (!c->dump)
			return refuse("--leave-running", "it is for a dump");
		return strv_push(&c->argv, "--leave-running");
	case 'd':
		if (c->dump)
			return refuse("-d", "it is for a restore");
		c->detach = true;
		return strv_push(&c->argv, "--detach");
	case C_TCP_ESTABLISHED:
		/* A restore restores what the dump saved. */
		return c->dump ? strv_push(&c->argv, "--tcp-established") : 0;
	case C_SKIP_IN_FLIGHT:
		return c->dump ? strv_push(&c->argv, "--skip-in-flight") : 0;
	case C_EXT_UNIX_SK:
		return refuse("--ext-unix-sk",
			      "crf refuses unix sockets whose peer is outside the tree");
	case C_INHERIT_FD:
		if (c->dump)
			return refuse("--inherit-fd", "it is for a restore");
		return strv_push(&c->argv, "--inherit-fd") < 0 || strv_push(&c->argv, arg) < 0
			       ? -ENOMEM
			       : 0;
	case C_EXTERNAL:
		return strv_push(&c->argv, "--external") < 0 || strv_push(&c->argv, arg) < 0
			       ? -ENOMEM
			       : 0;
	case C_EXT_MOUNT_MAP: {
		/* -M KEY:VAL, CRIU's older spelling of --external mnt[KEY]:VAL */
		_cleanup_free_ char *e = NULL;
		const char *colon = strchr(arg, ':');

		if (!colon)
			return refuse("--ext-mount-map", "takes KEY:VALUE");
		e = xasprintf("mnt[%.*s]:%s", (int)(colon - arg), arg, colon + 1);
		return !e || strv_push(&c->argv, "--external") < 0 || strv_push(&c->argv, e) < 0
			       ? -ENOMEM
			       : 0;
	}
	case C_ROOT:
		/* A dump finds the tree's root from the tree itself. */
		if (c->dump)
			return 0;
		return strv_push(&c->argv, "--root") < 0 || strv_push(&c->argv, arg) < 0 ? -ENOMEM
											 : 0;
	case C_MANAGE_CGROUPS:
		/* A dump always saves the cgroups; the mode is the restore's. */
		if (c->dump)
			return 0;
		if (arg && !strcmp(arg, "ignore"))
			return refuse("--manage-cgroups=ignore",
				      "crf restores every task into its saved cgroups");
		return strv_push(&c->argv, "--manage-cgroups") < 0 ||
				       (arg && strv_push(&c->argv, arg) < 0)
			       ? -ENOMEM
			       : 0;
	case C_CGROUP_ROOT:
		if (c->dump)
			return refuse("--cgroup-root", "it is for a restore");
		return strv_push(&c->argv, "--cgroup-root") < 0 || strv_push(&c->argv, arg) < 0
			       ? -ENOMEM
			       : 0;
	case C_PIDFILE:
		if (c->dump)
			return refuse("--pidfile", "it is for a restore");
		c->pidfile = arg;
		return 0;
	case C_DISPLAY_STATS:
		c->display_stats = true;
		return 0;
	case C_FILE_LOCKS:	/* crf saves locks always */
	case C_EVASIVE_DEVICES: /* crf reopens devices by their saved path only */
	case C_FREEZE_CGROUP:	/* crf freezes through the tree's cgroup when it can */
		return 0;
	case C_EMPTY_NS:
		if (strcmp(arg, "net"))
			return refuse("--empty-ns", "crf takes net only");
		return 0;
	case ':':
		fprintf(stderr, "criu (crf): option %s needs an argument\n", arg);
		return CRF_EXIT_USAGE;
	default:
		fprintf(stderr,
			"criu (crf): option %s is not one crf provides "
			"(docs/criu-compat.md)\n",
			arg);
		return CRF_EXIT_USAGE;
	}
}

static int operation(bool dump, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"tree", required_argument, NULL, 't'},
		{"images-dir", required_argument, NULL, 'D'},
		{"work-dir", required_argument, NULL, 'W'},
		{"log-file", required_argument, NULL, 'o'},
		{"verbosity", optional_argument, NULL, 'v'},
		{"shell-job", no_argument, NULL, 'j'},
		{"leave-running", no_argument, NULL, 'R'},
		{"restore-detached", no_argument, NULL, 'd'},
		{"tcp-established", no_argument, NULL, C_TCP_ESTABLISHED},
		{"skip-in-flight", no_argument, NULL, C_SKIP_IN_FLIGHT},
		{"ext-unix-sk", optional_argument, NULL, C_EXT_UNIX_SK},
		{"inherit-fd", required_argument, NULL, C_INHERIT_FD},
		{"external", required_argument, NULL, C_EXTERNAL},
		{"ext-mount-map", required_argument, NULL, C_EXT_MOUNT_MAP},
		{"root", required_argument, NULL, C_ROOT},
		{"manage-cgroups", optional_argument, NULL, C_MANAGE_CGROUPS},
		{"cgroup-root", required_argument, NULL, C_CGROUP_ROOT},
		{"pidfile", required_argument, NULL, C_PIDFILE},
		{"display-stats", no_argument, NULL, C_DISPLAY_STATS},
		{"file-locks", no_argument, NULL, C_FILE_LOCKS},
		{"evasive-devices", no_argument, NULL, C_EVASIVE_DEVICES},
		{"freeze-cgroup", required_argument, NULL, C_FREEZE_CGROUP},
		{"empty-ns", required_argument, NULL, C_EMPTY_NS},
		{0},
	};
	struct cli c = {.dump = dump, .level = 2};
	_cleanup_free_ char *log = NULL;
	int opt, r = 0, status;

	r = strv_push(&c.argv, dump ? "dump" : "restore");
	opterr = 0;
	optind = 1;
	while (r == 0 &&
	       (opt = getopt_long(argc, argv, ":t:D:W:o:v::jRdlM:", longopts, NULL)) != -1) {
		if (opt == '?' || opt == ':')
			r = option(&c, opt, argv[optind - 1]);
		else if (opt == 'l')
			r = option(&c, C_FILE_LOCKS, optarg);
		else if (opt == 'M')
			r = option(&c, C_EXT_MOUNT_MAP, optarg);
		else
			r = option(&c, opt, optarg);
	}
	if (r == 0 && optind < argc)
		r = refuse(argv[optind], "an unexpected argument");
	if (r == 0 && !c.dir)
		r = refuse(dump ? "dump" : "restore", "needs -D DIR");
	if (r == 0 && c.pidfile && !c.detach)
		/* Without -d crf waits for the tree: the file is written as it runs. */
		r = 0;
	if (r == 0)
		r = strv_push(&c.argv, "--images-dir") < 0 || strv_push(&c.argv, c.dir) < 0
			    ? -ENOMEM
			    : 0;
	/* -o FILE: in the work directory (-W, else -D) unless a path. */
	if (r == 0 && c.log_file) {
		log = c.log_file[0] == '/'
			      ? strdup(c.log_file)
			      : xasprintf("%s/%s", c.work_dir ? c.work_dir : c.dir, c.log_file);
		r = !log || strv_push(&c.argv, "--log-file") < 0 || strv_push(&c.argv, log) < 0
			    ? -ENOMEM
			    : 0;
		/* CRIU's log is this run's alone; crf's --log-file appends. */
		if (r == 0 && truncate(log, 0) < 0 && errno != ENOENT) {
			fprintf(stderr, "criu (crf): -o %s: %s\n", log, strerror(errno));
			r = CRF_EXIT_FAIL;
		}
	}
	if (r == 0 && c.level <= 1)
		r = strv_push(&c.argv, "-q");
	if (r == 0 && (c.level >= 3 || c.display_stats))
		r = strv_push(&c.argv, "-v");
	if (r == 0 && c.level >= 4)
		r = strv_push(&c.argv, "-v");
	if (r != 0) {
		strv_free(&c.argv);
		if (r < 0)
			fprintf(stderr, "criu (crf): out of memory\n");
		return r < 0 ? CRF_EXIT_FAIL : r;
	}
	if (c.pidfile) {
		crf_rpc_hooks.notify = write_pidfile;
		crf_rpc_hooks.arg = &c;
	}
	status = compat_run(&c.argv);
	memset(&crf_rpc_hooks, 0, sizeof(crf_rpc_hooks));
	strv_free(&c.argv);
	return status;
}

int criu_main(int argc, char **argv)
{
	struct strv v = {0};
	int status;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fprintf(argc < 2 ? stderr : stdout,
			"Usage: criu dump|restore|check|swrk [OPTIONS]\n\n"
			"This criu is crf %s, providing CRIU %d.%d.%d's interface: the\n"
			"options crf provides and how they map onto crf's are in\n"
			"docs/criu-compat.md; 'crf dump --help' and 'crf restore --help' say\n"
			"what crf does.\n",
			CRF_VERSION, CRF_CRIU_MAJOR, CRF_CRIU_MINOR, CRF_CRIU_SUBLEVEL);
		return argc < 2 ? CRF_EXIT_USAGE : CRF_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("Version: %d.%d.%d\ncrf %s, providing CRIU %d.%d.%d's interface\n",
		       CRF_CRIU_MAJOR, CRF_CRIU_MINOR, CRF_CRIU_SUBLEVEL, CRF_VERSION,
		       CRF_CRIU_MAJOR, CRF_CRIU_MINOR, CRF_CRIU_SUBLEVEL);
		return CRF_EXIT_OK;
	}
	if (!strcmp(argv[1], "dump") || !strcmp(argv[1], "restore"))
		return operation(!strcmp(argv[1], "dump"), argc - 1, argv + 1);
	if (!strcmp(argv[1], "swrk")) {
		struct crf_opts o = {.cmd = "swrk"};

		status = cmd_swrk(&o, argc - 1, argv + 1);
		opts_free(&o);
		return status;
	}
	if (!strcmp(argv[1], "check")) {
		if (argc > 2)
			return refuse(argv[2], "crf check checks every feature its plugins need");
		if (strv_push(&v, "check") < 0)
			return CRF_EXIT_FAIL;
		status = compat_run(&v);
		strv_free(&v);
		if (status == CRF_EXIT_OK)
			printf("Looks good.\n");
		return status;
	}
	fprintf(stderr, "criu (crf): command '%s' is not one crf provides (docs/criu-compat.md)\n",
		argv[1]);
	return CRF_EXIT_USAGE;
}
