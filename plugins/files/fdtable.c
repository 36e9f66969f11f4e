// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fd table walk: every open fd of the task, 0-2 included, is
 * classified into a kind and handed to the handler that claims it
 * (crf_kind_find), so that an fd no enabled plugin can save stops the
 * dump with a message naming it.  fds 0-2 are saved like any other: a
 * daemon's log file, /dev/null, a pipe to another process of the tree; a
 * closed one stays closed.
 *
 * The files plugin itself handles regular files, directories and
 * stateless character devices (regfile.c), terminals at any fd ("tty",
 * tty.c), pipes and FIFOs (pipe.c) and the anonymous-inode kinds.  With
 * --inherit-stdio (the key "inherit-stdio") an fd 0-2 that is not a
 * terminal is the "stdio" kind instead: not saved, but given crf
 * restore's own fd of its number, as crf once did for every dump.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <crf/cleanup.h>

#include "anonfd.h"
#include "fdinfo.h"
#include "files.h"
#include "files.pb-c.h"
#include "tty.h"
#include "unlinked.h"
#include "validate.h"

/* The kind of a socket, from the walk's copy of it (kept for its handler). */
static const char *socket_kind(struct files_dump *d, char *buf, size_t len)
{
	int copy = files_cur_copy(d);
	int domain = -1, type = -1, proto = -1;
	socklen_t sl = sizeof(int);

	if (copy >= 0) {
		getsockopt(copy, SOL_SOCKET, SO_DOMAIN, &domain, &sl);
		sl = sizeof(int);
		getsockopt(copy, SOL_SOCKET, SO_TYPE, &type, &sl);
		sl = sizeof(int);
		getsockopt(copy, SOL_SOCKET, SO_PROTOCOL, &proto, &sl);
	}
	if (domain == AF_UNIX)
		return "unix";
	if ((domain == AF_INET || domain == AF_INET6) && type == SOCK_STREAM)
		return "tcp";
	if ((domain == AF_INET || domain == AF_INET6) && type == SOCK_RAW)
		return "raw";
	if ((domain == AF_INET || domain == AF_INET6) && type == SOCK_DGRAM &&
	    (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6))
		return "ping";
	if ((domain == AF_INET || domain == AF_INET6) && type == SOCK_DGRAM)
		return "udp";
	if (domain == AF_NETLINK)
		return "netlink";
	if (domain == AF_PACKET)
		return "packet";
	snprintf(buf, len, "socket:%d", domain);
	return buf;
}

/* Name the kind of fd @fd of the task from its link and its inode. */
/*
 * An O_PATH fd on a FIFO, a device or a socket file only names it: it is
 * reopened by path like a regular file's, not as what it leads to.  Asked
 * only for those types, which have no fdinfo read otherwise here.
 */
static bool is_opath(struct files_dump *d, const char *link, const struct stat *st)
{
	struct files_fdinfo info;
	const char *text;

	if (link[0] != '/' || !(S_ISFIFO(st->st_mode) || S_ISCHR(st->st_mode) ||
				S_ISBLK(st->st_mode) || S_ISSOCK(st->st_mode)))
		return false;
	return files_cur_fdinfo(d, &text) == 0 && files_fdinfo_parse(text, &info) == 0 &&
	       (info.flags & O_PATH);
}

/* Is fd @fd of the task on an mqueue filesystem?  Asked through an O_PATH fd of its link. */
static bool is_mqueue(struct files_dump *d, int fd)
{
	char path[64];
	struct statfs sf;
	int pfd, r;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)d->pid, fd);
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return false;
	r = fstatfs(pfd, &sf);
	close(pfd);
	return r == 0 && sf.f_type == 0x19800202; /* MQUEUE_MAGIC */
}

static const char *fd_kind(struct files_dump *d, int fd, const char *link, const struct stat *st,
			   char *buf, size_t len)
{
	if (is_opath(d, link, st))
		return "opath";
	if (!strncmp(link, "socket:", 7))
		return socket_kind(d, buf, len);
	if (!strncmp(link, "pipe:", 5))
		return "pipe";
	if (!strncmp(link, "anon_inode:", 11)) {
		const char *name = link + 11;

		snprintf(buf, len, "%.*s", (int)strcspn(name + (*name == '['), "]"),
			 name + (*name == '['));
		return buf;
	}
	if (!strncmp(link, "/memfd:", 7))
		return "memfd";
	if (S_ISFIFO(st->st_mode))
		return "fifo";
	if (S_ISDIR(st->st_mode))
		return "dir";
	if (S_ISCHR(st->st_mode)) {
		snprintf(buf, len, "chr:%u:%u", major(st->st_rdev), minor(st->st_rdev));
		return buf;
	}
	if (S_ISBLK(st->st_mode))
		return "blk";
	/* An open POSIX message queue (the ns plugin's kind, plugins/ns/ipc-mqfd.c). */
	if (S_ISREG(st->st_mode) && is_mqueue(d, fd))
		return "mqueue";
	if (S_ISREG(st->st_mode))
		return "file";
	/* The magic link leads to the symlink itself: an O_PATH|O_NOFOLLOW fd. */
	if (S_ISLNK(st->st_mode))
		return "symlink";
	return "unknown";
}

static int dump_fd(struct crf_ctx *ctx, struct files_dump *d, int dirfd, int fd)
{
	struct crf_object obj = {.cls = CRF_OBJ_FD, .pid = crf_ctx_pid(ctx), .id = fd};
	const struct crf_kind *kind;
	char name[16], link[512], buf[64];
	ssize_t n;
	int r;

	snprintf(name, sizeof(name), "%d", fd);
	n = readlinkat(dirfd, name, link, sizeof(link) - 1);
	if (n < 0)
		return crf_log_errno(CRF_LOG_ERROR, errno, "pid %d: fd %d", (int)obj.pid, fd);
	link[n] = '\0';
	d->cur_st_ok = fstatat(dirfd, name, &d->cur_st, 0) == 0;
	if (!d->cur_st_ok)
		memset(&d->cur_st, 0, sizeof(d->cur_st));
	obj.desc = link;
	d->cur_fd = fd;
	obj.kind = fd_kind(d, fd, link, &d->cur_st, buf, sizeof(buf));
	if (d->inherit_stdio && fd <= 2 && !files_is_tty(&obj))
		obj.kind = "stdio";
	r = crf_kind_find(ctx, &obj, &kind);
	if (r == 0) {
		d->cur_kind = kind->name;
		d->cur_plugin = crf_kind_plugin(ctx, kind, &d->cur_version);
		/* Another plugin's kind: the record is still ours, its state that plugin's. */
		if (d->cur_plugin && strcmp(d->cur_plugin, crf_ctx_plugin(ctx)))
			r = files_foreign_dump(ctx, &obj, kind);
		else if (kind->dump)
			r = kind->dump(ctx, &obj);
	}
	d->cur_kind = d->cur_plugin = d->cur_version = NULL;
	free(d->cur_fdinfo);
	d->cur_fdinfo = NULL;
	if (d->cur_copy >= 0)
		close(d->cur_copy);
	d->cur_copy = -1;
	return r;
}

int files_cur_fdinfo(struct files_dump *d, const char **text)
{
	int r = 0;

	if (!d->cur_fdinfo)
		r = files_fdinfo_read_all(d->pid, d->cur_fd, &d->cur_fdinfo);
	*text = d->cur_fdinfo;
	return r;
}

int files_cur_copy(struct files_dump *d)
{
	if (d->cur_copy >= 0)
		return d->cur_copy;
	d->cur_copy = (int)syscall(SYS_pidfd_getfd, d->pidfd, d->cur_fd, 0);
	if (d->cur_copy < 0)
		return crf_error_errno(errno, "pid %d: pidfd_getfd of fd %d", d->pid, d->cur_fd);
	return d->cur_copy;
}

int files_cur_stat(struct files_dump *d, const struct stat **st)
{
	int copy;

	*st = &d->cur_st;
	if (d->cur_st_ok)
		return 0;
	copy = files_cur_copy(d);
	if (copy < 0)
		return copy;
	if (fstat(copy, &d->cur_st) < 0)
		return crf_error_errno(errno, "pid %d: fd %d", d->pid, d->cur_fd);
	d->cur_st_ok = true;
	return 0;
}

int files_fd_begin(struct crf_ctx *ctx, const struct crf_object *obj, Crf__Files__Fd *e,
		   struct files_dump **dp)
{
	struct files_dump *d = crf_ctx_priv(ctx);
	struct files_fdinfo info;
	const char *text;
	int r;

	if (!d || d->pid != obj->pid || d->cur_fd != obj->id)
		return crf_error_errno(EINVAL, "pid %d: fd %d: no fd table being dumped",
				       (int)obj->pid, obj->id);
	r = files_cur_fdinfo(d, &text);
	if (r == 0)
		r = files_fdinfo_parse(text, &info);
	if (r < 0)
		return crf_error_errno(-r, "pid %d: fdinfo of fd %d", d->pid, obj->id);
	e->fd = obj->id;
	e->cloexec = !!(info.flags & O_CLOEXEC);
	e->flags = info.flags & ~(unsigned int)O_CLOEXEC;
	e->pos = info.pos;
	e->path = (char *)obj->desc;
	*dp = d;
	return 0;
}

static int fd_number(const struct dirent *d)
{
	return d->d_name[0] >= '0' && d->d_name[0] <= '9';
}

static int walk(struct crf_ctx *ctx, struct files_dump *d, const char *path)
{
	struct dirent **list = NULL;
	_cleanup_close_ int dirfd = -1;
	int n, r = 0;

	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return crf_log_errno(CRF_LOG_ERROR, errno, "open %s", path);
	n = scandir(path, &list, fd_number, versionsort);
	if (n < 0)
		r = crf_log_errno(CRF_LOG_ERROR, errno, "list %s", path);
	for (int i = 0; i < n; i++) {
		if (r >= 0)
			r = dump_fd(ctx, d, dirfd, atoi(list[i]->d_name));
		free(list[i]);
	}
	free(list);
	return r;
}

int files_dump_task(struct crf_ctx *ctx)
{
	struct files_dump d = {.pid = (int)crf_ctx_pid(ctx),
			       .tree = files_tree_get(ctx),
			       .cur_fd = -1,
			       .cur_copy = -1};
	struct files_ext *x = files_ext_get(ctx);
	char path[64], name[64];
	int r;

	if (!d.tree || !x)
		return -ENOMEM;
	r = files_ext_note_task(x, d.pid);
	if (r < 0)
		return r;
	d.inherit_stdio = files_ext_inherit_stdio(x);

	snprintf(path, sizeof(path), "/proc/%d/fd", d.pid);
	snprintf(name, sizeof(name), "files-%d.img", d.pid);
	d.pidfd = (int)syscall(SYS_pidfd_open, d.pid, 0);
	if (d.pidfd < 0)
		return crf_log_errno(CRF_LOG_ERROR, errno, "pidfd_open %d", d.pid);
	r = crf_img_create(crf_ctx_images(ctx), name, &crf__files__fd__descriptor, &d.img);
	if (r < 0) {
		close(d.pidfd);
		return r;
	}
	crf_ctx_set_priv(ctx, &d);
	r = files_tty_note_task(&d);
	if (r >= 0)
		r = files_table_seen(&d);
	if (r == 0)
		r = walk(ctx, &d, path);
	crf_ctx_set_priv(ctx, d.tree);
	r = crf_img_finish(d.img, r);
	close(d.pidfd);
	return r;
}

struct files_tree *files_tree_get(struct crf_ctx *ctx)
{
	struct files_tree *tree = crf_ctx_priv(ctx);

	if (tree)
		return tree;
	tree = calloc(1, sizeof(*tree));
	if (!tree)
		crf_error_errno(ENOMEM, "files");
	crf_ctx_set_priv(ctx, tree);
	return tree;
}

int files_dump_finish(struct crf_ctx *ctx)
{
	int r = files_ttys_dump_finish(ctx);

	if (r >= 0)
		r = files_unlinked_dump_finish(ctx);
	if (r >= 0)
		r = files_pipes_dump_finish(ctx);
	if (r >= 0)
		r = files_ext_dump_finish(ctx);
	if (r >= 0)
		r = files_shared_dump_finish(ctx);
	return r < 0 ? r : files_syncs_dump_finish(ctx);
}

/*
 * What the dump needs from outside first, before anything is made; the
 * ptys before the shared descriptions: one of those may be a pty's slave.
 */
int files_restore_prepare(struct crf_ctx *ctx)
{
	/*
	 * Every record first (validate.c), then every fd's kind: a restore
	 * that cannot make one makes nothing.
	 */
	int r = files_validate(crf_ctx_images(ctx));

	if (r >= 0)
		r = files_kinds_check(ctx);

	if (r >= 0)
		r = files_ext_restore_prepare(ctx);

	if (r >= 0)
		r = files_pipes_restore_prepare(ctx);

	if (r >= 0)
		r = files_ttys_restore_prepare(ctx);
	/* Before the shared descriptions: one of those may be of an unlinked file. */
	if (r >= 0)
		r = files_unlinked_restore_prepare(ctx);
	return r < 0 ? r : files_shared_restore_prepare(ctx);
}

int files_cleanup(struct crf_ctx *ctx)
{
	struct files_tree *tree = crf_ctx_priv(ctx);

	if (tree) {
		files_pipes_free(tree->pipes);
		files_descs_free(tree->descs);
		files_ttys_free(tree->ttys);
		files_locks_free(tree->locks);
		files_ext_free(tree->ext);
		files_unlinked_free(tree->unlinked);
		files_syncs_free(tree->syncs);
		free(tree);
	}
	crf_ctx_set_priv(ctx, NULL);
	return 0;
}

int files_stdio_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	Crf__Files__Fd e = CRF__FILES__FD__INIT;
	struct files_dump *d = NULL;
	const struct stat *st;
	int r;

	r = files_fd_begin(ctx, obj, &e, &d);
	if (r == 0)
		r = files_cur_stat(d, &st);
	if (r < 0)
		return r;
	e.mode = st->st_mode;
	e.has_inherit_stdio = e.inherit_stdio = true;
	r = files_ext_add(d->tree->ext, "stdio", d->pid, obj->id);
	if (r == 0)
		r = files_fd_write(d, &e);
	if (r == 0)
		crf_debug("pid %d: fd %d (%s) will be crf restore's fd %d (--inherit-stdio)",
			  d->pid, obj->id, obj->desc, obj->id);
	return r;
}
