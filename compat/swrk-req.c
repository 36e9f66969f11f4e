// SPDX-License-Identifier: GPL-2.0-only
/*
 * crf swrk's DUMP and RESTORE: criu_opts mapped onto crf dump / crf
 * restore's command line, which then runs in this process (the notify
 * hand-shake needs the dump's and restore's own moments, and rst_sibling
 * a root forked by the process the caller started).  An option crf does
 * not honour is refused by its name before anything is done; one that
 * changes nothing crf does (a CRIU tuning crf has no use for) is accepted,
 * and docs/criu-compat.md says which and why.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat.h"
#include "swrk-cgroot.h"
#include "swrk.h"

struct op {
	struct swrk *s;
	const CriuOpts *o;
	CriuReqType type;
	struct strv argv;
	int img_fd, work_fd, log_fd;
	char log_path[64];
	char notify_error[256];
};

int compat_run(struct strv *argv)
{
	struct crf_opts o = {0};
	int r;

	o.cmd = argv->v[0];
	crf_rpc_hooks.err = 0;
	if (!strcmp(o.cmd, "dump"))
		r = cmd_dump(&o, (int)argv->n, argv->v);
	else if (!strcmp(o.cmd, "restore"))
		r = cmd_restore(&o, (int)argv->n, argv->v);
	else if (!strcmp(o.cmd, "check"))
		r = cmd_check(&o, (int)argv->n, argv->v);
	else if (!strcmp(o.cmd, "show"))
		r = cmd_show(&o, (int)argv->n, argv->v);
	else
		r = CRF_EXIT_USAGE;
	opts_free(&o);
	return r;
}

static int push(struct op *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int push(struct op *op, const char *fmt, ...)
{
	_cleanup_free_ char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		s = NULL;
		return -ENOMEM;
	}
	return strv_push(&op->argv, s);
}

/* The caller's fd @fd, a directory, as an fd of ours. */
static int caller_dir(struct op *op, const char *field, int fd, int *out)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)op->s->peer, fd);
	*out = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*out < 0)
		return swrk_fail(op->s, op->type, errno,
				 "%s %d: cannot open %s (fd %d of the caller, pid %d): %s", field,
				 fd, path, fd, (int)op->s->peer, strerror(errno)),
		       -1;
	return 0;
}

/* "why" for each option crf refuses when it is set (bools: when true). */
static const char *refused(const CriuOpts *o, bool dump, const char **name)
{
#define NO_TRUE(f, why)                                                                            \
	if (o->has_##f && o->f)                                                                    \
		return *name = #f, why;
#define NO_SET(f, why)                                                                             \
	if (o->f)                                                                                  \
		return *name = #f, why;
#define NO_REPEATED(f, why)                                                                        \
	if (o->n_##f)                                                                              \
		return *name = #f, why;
	NO_TRUE(ext_unix_sk, "crf refuses unix sockets whose peer is outside the tree")
	NO_TRUE(track_mem, "crf has no incremental dumps")
	NO_TRUE(auto_dedup, "crf has no incremental dumps")
	NO_TRUE(lazy_pages, "crf has no lazy pages")
	NO_TRUE(link_remap, "crf saves unlinked files with their contents, not by link")
	NO_TRUE(force_irmap, "crf does not look files up by inode")
	NO_TRUE(auto_ext_mnt, "crf saves a mount outside the tree only under a key given")
	NO_TRUE(ext_sharing, "crf compares the mounts' sharing itself")
	NO_TRUE(ext_masters, "crf compares the mounts' sharing itself")
	NO_TRUE(weak_sysctls, "crf writes every sysctl it saved or fails")
	NO_TRUE(tcp_close, "crf restores TCP connections or refuses them")
	NO_SET(ps, "crf has no page server")
	NO_SET(parent_img, "crf has no incremental dumps")
	NO_SET(cgroup_props, "crf restores the cgroup settings it saved")
	NO_SET(cgroup_props_file, "crf restores the cgroup settings it saved")
	NO_SET(lsm_profile, "crf does not change the tree's LSM profile")
	/* runc names /etc/criu/runc.conf always; CRIU ignores a file that is not there. */
	if (o->config_file && access(o->config_file, F_OK) == 0)
		return *name = "config_file",
		       "crf reads its own configuration (crf.conf), not CRIU's; the file exists";
	NO_REPEATED(veths, "crf restores veth pairs as saved")
	NO_REPEATED(exec_cmd, "crf swrk runs no command after a restore")
	NO_REPEATED(skip_mnt, "crf leaves no mount out")
	NO_REPEATED(enable_fs, "crf has its own list of file systems")
	NO_REPEATED(unix_sk_ino, "crf refuses unix sockets whose peer is outside the tree")
	NO_REPEATED(irmap_scan_paths, "crf does not look files up by inode")
	NO_REPEATED(join_ns, "crf restores the tree's namespaces as saved")
	NO_REPEATED(cgroup_dump_controller, "crf saves the controllers it knows")
	if (o->has_timeout)
		return *name = "timeout", "crf has no time limit on a dump or restore";
	if (o->has_status_fd)
		return *name = "status_fd", "crf swrk answers on its socket only";
	if (o->has_cpu_cap && o->cpu_cap != 0xffffffffu)
		return *name = "cpu_cap", "crf checks every CPU feature the dump uses";
	if (o->has_empty_ns && (o->empty_ns & ~(uint32_t)CLONE_NEWNET))
		return *name = "empty_ns",
		       "crf restores every namespace but the network one as saved (empty_ns "
		       "takes CLONE_NEWNET only)";
	if (o->has_manage_cgroups_mode && o->manage_cgroups_mode == CRIU_CG_MODE__IGNORE)
		return *name = "manage_cgroups_mode",
		       "IGNORE: crf restores every task into its saved cgroups";
	if (dump) {
		NO_TRUE(rst_sibling, "it is for a restore")
		NO_REPEATED(inherit_fd, "it is for a restore")
		NO_REPEATED(cg_root, "it is for a restore (crf dump saves the cgroups as they are)")
	}
	if (o->base.n_unknown_fields)
		return *name = "an option unknown to crf",
		       "field numbers past CRIU 3.17's are not provided";
	return NULL;
#undef NO_TRUE
#undef NO_SET
#undef NO_REPEATED
}

static bool external_ok(const char *e, bool dump)
{
	if (!strncmp(e, "mnt[", 4))
		return true;
	return dump && (!strncmp(e, "pipe:[", 6) || !strncmp(e, "fifo:[", 6));
}

/*
 * The root's fds 0-2 that are pipes: CRIU saves such a pipe (the
 * runtime's end of the container's stdio) and takes the runtime's
 * inherit_fd in its place at restore.  crf marks them external, so that
 * its restore takes an inherit_fd for each, or refuses.
 */
static int external_stdio(struct op *op, pid_t pid)
{
	for (int fd = 0; fd <= 2; fd++) {
		char path[64], link[64], arg[80];
		ssize_t n;
		bool listed = false;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "pipe:[", 6))
			continue;
		for (size_t i = 0; i < op->o->n_external; i++)
			listed = listed || !strcmp(op->o->external[i], link);
		snprintf(arg, sizeof(arg), "--external=%s", link);
		for (size_t i = 0; i < op->argv.n; i++)
			listed = listed || !strcmp(op->argv.v[i], arg);
		if (!listed && strv_push(&op->argv, arg) < 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * runc gives one inherit_fd per stdio fd, so a pipe that is the
 * container's fds 1 and 2 comes twice, with fds 1 and 2 of crf swrk, the
 * same pipe: the first stands for both.  The index of an earlier entry with
 * @i's key and the same file, -1 for none, -2 for the same key on another file.
 */
static int same_key(const CriuOpts *o, size_t i)
{
	struct stat a, b;

	for (size_t j = 0; j < i; j++) {
		if (strcmp(o->inherit_fd[j]->key, o->inherit_fd[i]->key))
			continue;
		if (fstat(o->inherit_fd[i]->fd, &a) < 0 || fstat(o->inherit_fd[j]->fd, &b) < 0 ||
		    a.st_dev != b.st_dev || a.st_ino != b.st_ino)
			return -2;
		return (int)j;
	}
	return -1;
}

static const char *const cg_modes[] = {
	[CRIU_CG_MODE__CG_NONE] = "none",  [CRIU_CG_MODE__PROPS] = "props",
	[CRIU_CG_MODE__SOFT] = "soft",	   [CRIU_CG_MODE__FULL] = "full",
	[CRIU_CG_MODE__STRICT] = "strict", [CRIU_CG_MODE__DEFAULT] = "soft",
};

/* The command line for crf dump or crf restore; 0, or -1 when answered already. */
static int build_argv(struct op *op)
{
	const CriuOpts *o = op->o;
	bool dump = op->type == CRIU_REQ_TYPE__DUMP;
	const char *name, *why = refused(o, dump, &name);
	int r = 0;

	if (why)
		return swrk_fail(op->s, op->type, EOPNOTSUPP, "option %s refused: %s", name, why),
		       -1;
	for (size_t i = 0; i < o->n_external; i++)
		if (!external_ok(o->external[i], dump))
			return swrk_fail(op->s, op->type, EOPNOTSUPP,
					 "option external %s refused: crf takes mnt[...]%s here",
					 o->external[i], dump ? ", pipe:[...] and fifo:[...]" : ""),
			       -1;
	for (size_t i = 0; !dump && i < o->n_inherit_fd; i++)
		if (strncmp(o->inherit_fd[i]->key, "pipe:[", 6) &&
		    strncmp(o->inherit_fd[i]->key, "fifo:[", 6))
			return swrk_fail(op->s, op->type, EOPNOTSUPP,
					 "option inherit_fd %s refused: crf connects pipes and "
					 "FIFOs only",
					 o->inherit_fd[i]->key),
			       -1;
	if (dump && (!o->has_pid || o->pid <= 0))
		return swrk_fail(op->s, op->type, EINVAL,
				 "DUMP without opts.pid: crf dumps the tree of a PID it is given, "
				 "not its caller"),
		       -1;
	if (o->log_file && (strchr(o->log_file, '/') || !o->log_file[0] ||
			    !strcmp(o->log_file, ".") || !strcmp(o->log_file, "..")))
		return swrk_fail(op->s, op->type, EINVAL,
				 "log_file %s: a name in the work directory, without '/'",
				 o->log_file),
		       -1;

	r = strv_push(&op->argv, dump ? "dump" : "restore");
	if (r >= 0)
		r = push(op, "--images-dir=/proc/self/fd/%d", op->img_fd);
	if (r >= 0)
		r = push(op, "--log-file=%s", op->log_path);
	if (r >= 0 && o->has_log_level && o->log_level <= 1)
		r = strv_push(&op->argv, "-q");
	if (r >= 0 && o->log_level >= 3)
		r = strv_push(&op->argv, "-v");
	if (r >= 0 && o->log_level >= 4)
		r = strv_push(&op->argv, "-v");
	if (r >= 0 && o->has_shell_job && o->shell_job)
		r = strv_push(&op->argv, "--shell-job");
	for (size_t i = 0; r >= 0 && i < o->n_ext_mnt; i++)
		r = push(op, "--external=mnt[%s]:%s", o->ext_mnt[i]->key, o->ext_mnt[i]->val);
	for (size_t i = 0; r >= 0 && i < o->n_external; i++)
		r = push(op, "--external=%s", o->external[i]);
	if (dump) {
		if (r >= 0)
			r = push(op, "--tree=%d", (int)o->pid);
		if (r >= 0 && o->has_leave_running && o->leave_running)
			r = strv_push(&op->argv, "--leave-running");
		if (r >= 0 && o->has_tcp_established && o->tcp_established)
			r = strv_push(&op->argv, "--tcp-established");
		if (r >= 0 && o->has_tcp_skip_in_flight && o->tcp_skip_in_flight)
			r = strv_push(&op->argv, "--skip-in-flight");
		if (r >= 0)
			r = external_stdio(op, o->pid);
	} else {
		if (r >= 0)
			r = strv_push(&op->argv, "--detach");
		if (r >= 0 && o->root)
			r = push(op, "--root=%s", o->root);
		for (size_t i = 0; r >= 0 && i < o->n_inherit_fd; i++) {
			int dup_of = same_key(o, i);
			int fd;

			if (dup_of == -2)
				return swrk_fail(op->s, op->type, EINVAL,
						 "option inherit_fd %s refused: given twice, with "
						 "fds "
						 "that are not the same file",
						 o->inherit_fd[i]->key),
				       -1;
			if (dup_of >= 0)
				continue;
			/* Above 0-2, which become /dev/null: crf's messages go to the log. */
			fd = fcntl(o->inherit_fd[i]->fd, F_DUPFD, 10);
			if (fd < 0)
				return swrk_fail(op->s, op->type, errno,
						 "inherit_fd %s: fd %d of crf swrk: %s",
						 o->inherit_fd[i]->key, o->inherit_fd[i]->fd,
						 strerror(errno)),
				       -1;
			r = push(op, "--inherit-fd=fd[%d]:%s", fd, o->inherit_fd[i]->key);
		}
		if (r >= 0 && o->has_manage_cgroups_mode)
			r = push(op, "--manage-cgroups=%s", cg_modes[o->manage_cgroups_mode]);
		else if (r >= 0 && o->has_manage_cgroups && o->manage_cgroups)
			r = strv_push(&op->argv, "--manage-cgroups=soft");
		if (r >= 0) {
			char dir[64], cg_why[1024];

			snprintf(dir, sizeof(dir), "/proc/self/fd/%d", op->img_fd);
			r = swrk_cg_roots(o, dir, &op->argv, cg_why, sizeof(cg_why));
			if (r < 0)
				return swrk_fail(op->s, op->type, -r, "%s", cg_why), -1;
		}
	}
	if (r < 0)
		return swrk_fail(op->s, op->type, -r, "out of memory"), -1;
	return 0;
}

/* The NOTIFY hand-shake: crf names the moment, the caller answers notify_success. */
static int notify(void *arg, const char *script, pid_t pid)
{
	struct op *op = arg;
	CriuResp resp = CRIU_RESP__INIT;
	CriuNotify n = CRIU_NOTIFY__INIT;
	CriuReq *req = NULL;
	int r;

	n.script = (char *)script;
	n.has_pid = true;
	n.pid = pid;
	resp.type = CRIU_REQ_TYPE__NOTIFY;
	resp.success = true;
	resp.notify = &n;
	r = swrk_send(op->s, &resp);
	if (r >= 0)
		r = swrk_recv(op->s, &req);
	if (r < 0)
		snprintf(op->notify_error, sizeof(op->notify_error),
			 "notify script %s: no answer from the caller (%s)", script, strerror(-r));
	else if (req->type != CRIU_REQ_TYPE__NOTIFY)
		r = -EPROTO, snprintf(op->notify_error, sizeof(op->notify_error),
				      "notify script %s: the caller answered with request type %d, "
				      "not NOTIFY",
				      script, (int)req->type);
	else if (!req->has_notify_success || !req->notify_success)
		r = -ECANCELED, snprintf(op->notify_error, sizeof(op->notify_error),
					 "notify script %s: the caller answered it failed", script);
	if (req)
		criu_req__free_unpacked(req, NULL);
	if (r < 0)
		return crf_error_errno(-r, "%s", op->notify_error);
	crf_info("notify script %s (pid %d): the caller answered success", script, (int)pid);
	return 0;
}

/* The first error crf logged: the response's cr_errmsg. */
static void first_error(const struct op *op, char *buf, size_t len)
{
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int fd;

	buf[0] = '\0';
	fd = open(op->log_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		char *e = strstr(line, "error: ");

		if (!e)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, len, "%s", line);
		break;
	}
	fclose(f);
}

/* fds 0-2 become /dev/null: crf's messages go to the log, not into the caller's pipes. */
static int quiet_stdio(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (int i = 0; i <= 2; i++)
		if (dup2(fd, i) < 0) {
			close(fd);
			return -errno;
		}
	if (fd > 2)
		close(fd);
	return 0;
}

static int open_log(struct op *op)
{
	const CriuOpts *o = op->o;

	if (o->log_file) {
		op->log_fd = openat(
			op->work_fd, o->log_file,
			O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (op->log_fd < 0)
			return swrk_fail(op->s, op->type, errno, "log_file %s: %s", o->log_file,
					 strerror(errno)),
			       -1;
	} else {
		/* No log asked for: one of crf's own, for cr_errmsg. */
		op->log_fd = memfd_create("crf-swrk-log", MFD_CLOEXEC);
		/* Appended to, as crf's log is: swrk's lines go after crf's. */
		if (op->log_fd >= 0 && fcntl(op->log_fd, F_SETFL, O_APPEND) < 0) {
			close(op->log_fd);
			op->log_fd = -1;
		}
		if (op->log_fd < 0)
			return swrk_fail(op->s, op->type, errno, "memfd_create: %s",
					 strerror(errno)),
			       -1;
	}
	snprintf(op->log_path, sizeof(op->log_path), "/proc/self/fd/%d", op->log_fd);
	return 0;
}

static int answer(struct op *op, int status)
{
	CriuResp resp = CRIU_RESP__INIT;
	CriuDumpResp d = CRIU_DUMP_RESP__INIT;
	CriuRestoreResp rr = CRIU_RESTORE_RESP__INIT;
	const char *what = op->type == CRIU_REQ_TYPE__DUMP ? "dump" : "restore";
	char msg[512];

	if (status != CRF_EXIT_OK) {
		int err = crf_rpc_hooks.err < 0 ? -crf_rpc_hooks.err : EIO;

		first_error(op, msg, sizeof(msg));
		if (op->notify_error[0])
			snprintf(msg, sizeof(msg), "%s", op->notify_error);
		if (!msg[0])
			snprintf(msg, sizeof(msg), "crf %s failed (exit status %d)", what, status);
		return swrk_fail(op->s, op->type, status == CRF_EXIT_USAGE ? EINVAL : err, "%s",
				 msg);
	}
	resp.type = op->type;
	resp.success = true;
	if (op->type == CRIU_REQ_TYPE__DUMP) {
		d.has_restored = true;
		resp.dump = &d;
	} else {
		rr.pid = crf_rpc_hooks.root;
		resp.restore = &rr;
	}
	return swrk_send(op->s, &resp);
}

int swrk_operation(struct swrk *s, const CriuReq *req)
{
	struct op op = {.s = s,
			.o = req->opts,
			.type = req->type,
			.img_fd = -1,
			.work_fd = -1,
			.log_fd = -1};
	int r = -1, status;

	if (!op.o) {
		return swrk_fail(s, req->type, EINVAL, "%s without opts",
				 req->type == CRIU_REQ_TYPE__DUMP ? "DUMP" : "RESTORE");
	}
	if (caller_dir(&op, "images_dir_fd", op.o->images_dir_fd, &op.img_fd) < 0)
		goto out;
	if (op.o->has_work_dir_fd &&
	    caller_dir(&op, "work_dir_fd", op.o->work_dir_fd, &op.work_fd) < 0)
		goto out;
	if (!op.o->has_work_dir_fd) {
		/* CRIU's default: the work directory is the images directory. */
		op.work_fd = fcntl(op.img_fd, F_DUPFD_CLOEXEC, 3);
		if (op.work_fd < 0) {
			r = swrk_fail(s, req->type, errno, "dup: %s", strerror(errno));
			goto out;
		}
	}
	if (open_log(&op) < 0)
		goto out;
	s->log_fd = op.log_fd;
	if (build_argv(&op) < 0)
		goto out;
	r = quiet_stdio();
	if (r < 0) {
		r = swrk_fail(s, req->type, -r, "crf swrk: /dev/null as fds 0-2: %s", strerror(-r));
		goto out;
	}
	crf_rpc_hooks.sibling =
		req->type == CRIU_REQ_TYPE__RESTORE && op.o->has_rst_sibling && op.o->rst_sibling;
	if (op.o->has_notify_scripts && op.o->notify_scripts) {
		crf_rpc_hooks.notify = notify;
		crf_rpc_hooks.arg = &op;
	}
	status = compat_run(&op.argv);
	r = answer(&op, status);
out:
	s->log_fd = -1;
	memset(&crf_rpc_hooks, 0, sizeof(crf_rpc_hooks));
	strv_free(&op.argv);
	if (op.img_fd >= 0)
		close(op.img_fd);
	if (op.work_fd >= 0)
		close(op.work_fd);
	if (op.log_fd >= 0)
		close(op.log_fd);
	return r;
}

int swrk_check(struct swrk *s, const CriuReq *req)
{
	CriuResp resp = CRIU_RESP__INIT;
	struct strv argv = {0};
	int status;

	if (strv_push(&argv, "check") < 0 || strv_push(&argv, "--quiet") < 0) {
		strv_free(&argv);
		return swrk_fail(s, req->type, ENOMEM, "out of memory");
	}
	status = quiet_stdio() < 0 ? CRF_EXIT_FAIL : compat_run(&argv);
	strv_free(&argv);
	if (status != CRF_EXIT_OK)
		return swrk_fail(s, req->type, ENOTSUP,
				 "crf check: a kernel feature an enabled plugin requires is "
				 "missing (run crf check)");
	resp.type = req->type;
	resp.success = true;
	return swrk_send(s, &resp);
}
