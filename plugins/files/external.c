// SPDX-License-Identifier: GPL-2.0-only
/*
 * What lies outside the tree.  crf restores the fds of a tree exactly, 0-2
 * included; only a resource that a process outside the tree holds too (a
 * pipe to a `tee` run by the shell) cannot be recreated, since that process
 * is not restored.  The dump refuses it unless the user names it with
 * `crf dump --external RESOURCE` (the plugin's key "external"); it is then
 * listed in external.img, and the restore refuses to start unless
 * `crf restore --inherit-fd fd[N]:RESOURCE` (the key "inherit-fd") gives
 * an fd of crf restore for it.  `--inherit-stdio` on both sides (the key
 * "inherit-stdio") is the old way: fds 0-2 are not saved, and each task
 * gets crf restore's own.
 *
 * Finding who holds a pipe means reading every process's fds: it is done
 * only for pipes of which the tree lacks an end, once for all of them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>

#include "files.h"
#include "files.pb-c.h"
#include "policy.h"

#define EXTERNAL_IMG "external.img"
#define STDIO_NAME   "stdio"

struct files_inherit {
	int fd;	    /* crf restore's */
	char *name; /* the resource, as the dump names it */
	bool used;
};

struct files_ext_rec {
	char *name;
	int pid, fd;
};

struct files_ext {
	/* dump: --external, each to be met in the tree */
	char **named;
	bool *named_used;
	size_t n_named;
	/* restore: --inherit-fd */
	struct files_inherit *inh;
	size_t n_inh;
	/* dump: what external.img lists */
	struct files_ext_rec *saved;
	size_t n_saved;
	/* dump: the tree's processes, which the search for outside holders skips */
	pid_t *pids;
	size_t n_pids;
	bool inherit_stdio;
	/* restore: external.img lists "stdio"; it is missing (an old dump) */
	bool stdio_saved, old_dump;
	enum files_validation validation;
};

int files_config_bool(struct crf_ctx *ctx, const char *key)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};
	const char *v = crf_ctx_config(ctx, key);

	if (!v)
		return 0;
	for (size_t i = 0; i < 4; i++) {
		if (!strcmp(v, yes[i]))
			return 1;
		if (!strcmp(v, no[i]))
			return 0;
	}
	return crf_error_errno(EINVAL, "files: %s = '%s': not yes or no", key, v);
}

void files_ext_free(struct files_ext *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->n_named; i++)
		free(x->named[i]);
	for (size_t i = 0; i < x->n_inh; i++)
		free(x->inh[i].name);
	for (size_t i = 0; i < x->n_saved; i++)
		free(x->saved[i].name);
	free(x->named);
	free(x->named_used);
	free(x->inh);
	free(x->saved);
	free(x->pids);
	free(x);
}

/* The words of key @key, split at spaces, each passed to @add; 0 or -errno (logged). */
static int each_word(struct crf_ctx *ctx, const char *key, struct files_ext *x,
		     int (*add)(struct files_ext *x, const char *word))
{
	const char *v = crf_ctx_config(ctx, key);
	_cleanup_free_ char *copy = v ? strdup(v) : NULL;
	char *save = NULL;
	int r = 0;

	if (v && !copy)
		return crf_error_errno(ENOMEM, "files: %s", key);
	for (char *w = copy ? strtok_r(copy, " \t", &save) : NULL; w && r == 0;
	     w = strtok_r(NULL, " \t", &save))
		r = add(x, w);
	return r;
}

static int add_named(struct files_ext *x, const char *word)
{
	char **v = reallocarray(x->named, x->n_named + 1, sizeof(*v));
	bool *u;

	if (v)
		x->named = v;
	u = v ? reallocarray(x->named_used, x->n_named + 1, sizeof(*u)) : NULL;
	if (u)
		x->named_used = u;
	if (!u || !(x->named[x->n_named] = strdup(word)))
		return crf_error_errno(ENOMEM, "--external %s", word);
	x->named_used[x->n_named++] = false;
	return 0;
}

static int add_inherit(struct files_ext *x, const char *word)
{
	struct files_inherit *v;
	const char *name;
	int fd;

	if (files_inherit_parse(word, &fd, &name) < 0)
		return crf_error_errno(EINVAL,
				       "--inherit-fd %s: not fd[N]:RESOURCE "
				       "(e.g. fd[3]:pipe:[12345])",
				       word);
	for (size_t i = 0; i < x->n_inh; i++)
		if (!strcmp(x->inh[i].name, name))
			return crf_error_errno(EINVAL, "--inherit-fd: %s is given twice", name);
	if (fcntl(fd, F_GETFD) < 0)
		return crf_error_errno(errno, "--inherit-fd %s: crf restore has no fd %d", word,
				       fd);
	v = reallocarray(x->inh, x->n_inh + 1, sizeof(*v));
	if (!v)
		return crf_error_errno(ENOMEM, "--inherit-fd %s", word);
	x->inh = v;
	v[x->n_inh] = (struct files_inherit){.fd = fd, .name = strdup(name)};
	if (!v[x->n_inh].name)
		return crf_error_errno(ENOMEM, "--inherit-fd %s", word);
	x->n_inh++;
	return 0;
}

/* The keys, read once per dump or restore. */
static int ext_load(struct crf_ctx *ctx, struct files_ext *x)
{
	int r = files_config_bool(ctx, "inherit-stdio");

	if (r < 0)
		return r;
	x->inherit_stdio = r;
	if (files_validation_parse(crf_ctx_config(ctx, "file-validation"), &x->validation) < 0)
		return crf_error_errno(EINVAL, "files: file-validation = '%s': not strict or lax",
				       crf_ctx_config(ctx, "file-validation"));
	r = each_word(ctx, "external", x, add_named);
	return r < 0 ? r : each_word(ctx, "inherit-fd", x, add_inherit);
}

struct files_ext *files_ext_get(struct crf_ctx *ctx)
{
	struct files_tree *tree = files_tree_get(ctx);
	struct files_ext *x;

	if (!tree)
		return NULL;
	if (tree->ext)
		return tree->ext;
	x = calloc(1, sizeof(*x));
	if (!x) {
		crf_error_errno(ENOMEM, "files");
		return NULL;
	}
	if (ext_load(ctx, x) < 0) {
		files_ext_free(x);
		return NULL;
	}
	tree->ext = x;
	return x;
}

bool files_ext_inherit_stdio(const struct files_ext *x)
{
	return x->inherit_stdio;
}

enum files_validation files_ext_validation(const struct files_ext *x)
{
	return x ? x->validation : FILES_VALIDATE_LAX;
}

bool files_ext_named(struct files_ext *x, const char *name)
{
	for (size_t i = 0; i < x->n_named; i++)
		if (!strcmp(x->named[i], name))
			return x->named_used[i] = true;
	return false;
}

int files_ext_add(struct files_ext *x, const char *name, int pid, int fd)
{
	struct files_ext_rec *v;

	for (size_t i = 0; i < x->n_saved; i++)
		if (!strcmp(x->saved[i].name, name))
			return 0;
	v = reallocarray(x->saved, x->n_saved + 1, sizeof(*v));
	if (!v)
		return crf_error_errno(ENOMEM, "pid %d: fd %d (%s)", pid, fd, name);
	x->saved = v;
	v[x->n_saved] = (struct files_ext_rec){.name = strdup(name), .pid = pid, .fd = fd};
	if (!v[x->n_saved].name)
		return crf_error_errno(ENOMEM, "pid %d: fd %d (%s)", pid, fd, name);
	x->n_saved++;
	return 0;
}

int files_ext_note_task(struct files_ext *x, pid_t pid)
{
	pid_t *v = reallocarray(x->pids, x->n_pids + 1, sizeof(*v));

	if (!v)
		return crf_error_errno(ENOMEM, "pid %d", (int)pid);
	x->pids = v;
	v[x->n_pids++] = pid;
	return 0;
}

int files_ext_dump_finish(struct crf_ctx *ctx)
{
	struct files_ext *x = files_ext_get(ctx);
	struct crf_img *img = NULL;
	int r;

	if (!x)
		return -ENOMEM;
	for (size_t i = 0; i < x->n_named; i++)
		if (!x->named_used[i])
			return crf_error_errno(ENOENT,
					       "--external %s: the tree holds no such pipe "
					       "or FIFO",
					       x->named[i]);
	r = crf_img_create(crf_ctx_images(ctx), EXTERNAL_IMG, &crf__files__external__descriptor,
			   &img);
	for (size_t i = 0; r == 0 && i < x->n_saved; i++) {
		Crf__Files__External m = CRF__FILES__EXTERNAL__INIT;

		m.name = x->saved[i].name;
		m.has_pid = m.has_fd = true;
		m.pid = x->saved[i].pid;
		m.fd = x->saved[i].fd;
		r = crf_img_write(img, &m.base);
	}
	return crf_img_finish(img, r);
}

/* The --inherit-fd entry for @name, or NULL. */
static struct files_inherit *inherit_of(const struct files_ext *x, const char *name)
{
	for (size_t i = 0; i < x->n_inh; i++)
		if (!strcmp(x->inh[i].name, name))
			return &x->inh[i];
	return NULL;
}

int files_ext_fd(const struct files_ext *x, const char *name)
{
	const struct files_inherit *in = x ? inherit_of(x, name) : NULL;

	if (!in)
		return crf_error_errno(ENOENT,
				       "%s is external: pass --inherit-fd fd[N]:%s to "
				       "connect fd N of crf restore in its place",
				       name, name);
	return in->fd;
}

/*
 * The restore lacks an argument: the message says which, without the text
 * of an errno that would blame something else.
 */
__attribute__((format(printf, 1, 2))) static int not_given(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	crf_logv(CRF_LOG_ERROR, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* One record of external.img: what it needs must be given. */
static int check_given(struct files_ext *x, const Crf__Files__External *m)
{
	struct files_inherit *in;

	if (!strcmp(m->name, STDIO_NAME)) {
		x->stdio_saved = true;
		if (x->inherit_stdio)
			return 0;
		return not_given("the dump was made with --inherit-stdio: its fds "
				 "0-2 were not saved; pass --inherit-stdio to give its "
				 "processes crf restore's own");
	}
	in = inherit_of(x, m->name);
	if (!in)
		return not_given("pid %d: fd %d (%s) was held outside the tree "
				 "too and saved as external: pass --inherit-fd fd[N]:%s "
				 "to connect fd N of crf restore in its place",
				 m->pid, m->fd, m->name, m->name);
	in->used = true;
	return 0;
}

/*
 * Before anything is created: the dump's external resources are each given,
 * and every --inherit-fd names one of them (a typo must not go unnoticed).
 */
static int check_external_img(struct crf_ctx *ctx, struct files_ext *x)
{
	Crf__Files__External *m;
	struct crf_img *img;
	int r;

	r = crf_img_open(crf_ctx_images(ctx), EXTERNAL_IMG, &crf__files__external__descriptor,
			 &img);
	if (r < 0)
		return r;
	while ((r = crf_img_read(img, (ProtobufCMessage **)&m)) > 0) {
		r = check_given(x, m);
		crf__files__external__free_unpacked(m, NULL);
		if (r < 0)
			break;
	}
	crf_img_close(img);
	for (size_t i = 0; r == 0 && i < x->n_inh; i++)
		if (!x->inh[i].used)
			r = not_given("--inherit-fd fd[%d]:%s: the dump has no such "
				      "external resource (crf show %s lists them)",
				      x->inh[i].fd, x->inh[i].name, EXTERNAL_IMG);
	return r;
}

int files_ext_restore_prepare(struct crf_ctx *ctx)
{
	struct files_ext *x = files_ext_get(ctx);
	int r;

	if (!x)
		return -ENOMEM;
	if (faccessat(crf_imgdir_fd(crf_ctx_images(ctx)), EXTERNAL_IMG, F_OK, 0) < 0) {
		/* Dumps before external.img saved no fd 0-2 but a terminal. */
		x->stdio_saved = x->old_dump = true;
		if (x->inherit_stdio && !x->n_inh)
			return 0;
		if (x->n_inh)
			return not_given("--inherit-fd: the dump has no %s, so no "
					 "external resource",
					 EXTERNAL_IMG);
		return not_given("the dump has no %s: it was made by a crf that "
				 "did not save fds 0-2; pass --inherit-stdio to give its "
				 "processes crf restore's own, as that crf did",
				 EXTERNAL_IMG);
	}
	r = check_external_img(ctx, x);
	if (r == 0 && x->inherit_stdio && !x->stdio_saved)
		crf_warn("--inherit-stdio: the dump saved the fds 0-2 of its processes (it was "
			 "not made with --inherit-stdio): they are restored as they were");
	return r;
}

bool files_ext_old_dump(const struct files_ext *x)
{
	return x && x->old_dump;
}

/* ---- who else holds a pipe ------------------------------------------- */

static bool in_tree(const struct files_ext *x, pid_t pid)
{
	for (size_t i = 0; i < x->n_pids; i++)
		if (x->pids[i] == pid)
			return true;
	return false;
}

/* What the holder of @w is: its name and the flags of its fd. */
static void describe_holder(struct files_lookout *w, pid_t pid, int fd)
{
	char path[64], buf[256];
	ssize_t n;
	int f;

	w->pid = pid;
	w->fd = fd;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = open(path, O_RDONLY | O_CLOEXEC);
	n = f < 0 ? -1 : read(f, w->comm, sizeof(w->comm) - 1);
	if (f >= 0)
		close(f);
	w->comm[n > 0 ? n : 0] = '\0';
	w->comm[strcspn(w->comm, "\n")] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	n = f < 0 ? -1 : read(f, buf, sizeof(buf) - 1);
	if (f >= 0)
		close(f);
	buf[n > 0 ? n : 0] = '\0';
	if (!strstr(buf, "flags:") || sscanf(strstr(buf, "flags:"), "flags: %o", &w->flags) != 1)
		w->flags = O_ACCMODE;
}

/* fd @name of @pid (its /proc/PID/fd at @dirfd) against every pipe not found yet. */
static void match_fd(struct files_lookout *v, size_t n, pid_t pid, int dirfd, const char *name,
		     bool fifos)
{
	unsigned long long ino = 0;
	char link[64];
	struct stat st;
	ssize_t len;

	len = readlinkat(dirfd, name, link, sizeof(link) - 1);
	if (len <= 0)
		return;
	link[len] = '\0';
	if (sscanf(link, "pipe:[%llu]", &ino) == 1) {
		for (size_t i = 0; i < n; i++)
			if (!v[i].fifo && !v[i].pid && v[i].ino == ino)
				describe_holder(&v[i], pid, atoi(name));
		return;
	}
	if (!fifos || link[0] != '/' || fstatat(dirfd, name, &st, 0) < 0 || !S_ISFIFO(st.st_mode))
		return;
	for (size_t i = 0; i < n; i++)
		if (v[i].fifo && !v[i].pid && v[i].dev == st.st_dev && v[i].ino == st.st_ino)
			describe_holder(&v[i], pid, atoi(name));
}

static void scan_process(struct files_lookout *v, size_t n, pid_t pid, bool fifos)
{
	char path[64];
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	/* Gone meanwhile, or a kernel thread: it holds nothing. */
	if (!dir)
		return;
	while ((e = readdir(dir)))
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
			match_fd(v, n, pid, dirfd(dir), e->d_name, fifos);
	closedir(dir);
}

int files_ext_find_holders(const struct files_ext *x, struct files_lookout *v, size_t n)
{
	pid_t self = getpid();
	bool fifos = false;
	struct dirent *e;
	DIR *proc;

	for (size_t i = 0; i < n; i++)
		fifos |= v[i].fifo;
	proc = opendir("/proc");
	if (!proc)
		return crf_error_errno(errno, "open /proc");
	while ((e = readdir(proc))) {
		pid_t pid = (pid_t)atoi(e->d_name);

		if (pid > 0 && pid != self && !in_tree(x, pid))
			scan_process(v, n, pid, fifos);
	}
	closedir(proc);
	return 0;
}
