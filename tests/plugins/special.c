// SPDX-License-Identifier: GPL-2.0-only
/*
 * crf-test-special: a plugin of the kind a vendor or a researcher writes,
 * adding a VMA kind and a namespace kind that it dumps and restores itself
 * (crf/plugin.h, ABI 1.5), with no change to mem or ns:
 *
 *   "special-memfd"  (CRF_OBJ_VMA, by @match) a mapping of a memfd named
 *                    "crf-test-special", shared or private (which mem
 *                    refuses, and a match beats mem's "memfd"): its bytes,
 *                    as the task sees them, go to the
 *                    blob special-vma-PID-START.img; the restore makes a
 *                    new memfd with them and maps it at the same address.
 *   "uts"            (CRF_OBJ_NS, by @match) a UTS namespace whose hostname
 *                    starts "crf-special" (a match beats the ns plugin's
 *                    "uts" handler, which claims the others by name): its
 *                    hostname and domain name go to special-uts-INODE.img,
 *                    once per namespace; the restore unshares one and sets
 *                    them, in the first task that has it (the others
 *                    inherit it).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <crf/image.h>
#include <crf/plugin.h>
#include <crf/restore.h>

#define MEMFD_PATH "/memfd:crf-test-special"
#define UTS_PREFIX "crf-special"

static bool special_match(const struct crf_object *obj)
{
	const struct crf_vma_info *vi = obj->data;

	return vi && !strncmp(vi->path, MEMFD_PATH, strlen(MEMFD_PATH));
}

static void vma_image(char *buf, size_t len, pid_t pid, uint64_t start)
{
	snprintf(buf, len, "special-vma-%d-%llx.img", (int)pid, (unsigned long long)start);
}

/* The mapping's bytes, read from outside: the task is frozen. */
static int vma_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_vma_info *vi = obj->data;
	size_t len = vi->end - vi->start;
	struct crf_img *blob;
	char name[96], path[64];
	char *buf = malloc(len);
	int fd, r;

	if (!buf)
		return crf_error_errno(ENOMEM, "mapping %s", obj->desc);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)obj->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, buf, len, (off_t)vi->start) != (ssize_t)len) {
		r = crf_error_errno(fd < 0 ? errno : EIO, "read mapping %s", obj->desc);
		goto out;
	}
	vma_image(name, sizeof(name), obj->pid, vi->start);
	r = crf_blob_create(crf_ctx_images(ctx), name, &blob);
	if (r >= 0) {
		r = crf_blob_write(blob, buf, len);
		if (r < 0)
			crf_img_abort(blob);
		else
			r = crf_img_close(blob);
	}
	crf_info("saved %zu bytes of mapping %s", len, obj->desc);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

/* In the restored task (mem's restore-task): a new memfd with the bytes, mapped in place. */
static int vma_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_vma_info *vi = obj->data;
	uint64_t len = vi->end - vi->start;
	struct crf_img *blob;
	char name[96];
	char *buf;
	int fd, r;

	vma_image(name, sizeof(name), obj->pid, vi->start);
	r = crf_blob_open(crf_ctx_images(ctx), name, &blob);
	if (r < 0)
		return r;
	buf = malloc(len);
	if (!buf || crf_blob_size(blob) != len) {
		crf_img_close(blob);
		free(buf);
		return crf_error_errno(buf ? EBADMSG : ENOMEM, "%s", name);
	}
	r = crf_blob_pread(blob, buf, len, 0);
	crf_img_close(blob);
	fd = r < 0 ? -1 : memfd_create("crf-test-special", MFD_CLOEXEC);
	if (r >= 0 && (fd < 0 || ftruncate(fd, (off_t)(vi->pgoff + len)) < 0 ||
		       pwrite(fd, buf, len, (off_t)vi->pgoff) != (ssize_t)len))
		r = crf_error_errno(errno ? errno : EIO, "memfd for mapping %s", obj->desc);
	free(buf);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	struct crf_rst_vma rv = {
		.start = vi->start,
		.end = vi->end,
		.prot = vi->prot,
		.flags = vi->flags,
		.fd = fd,
		.pgoff = vi->pgoff,
	};
	return crf_rst_add_vma(ctx, &rv);
}

static void uts_image(char *buf, size_t len, uint64_t id)
{
	snprintf(buf, len, "special-uts-%llu.img", (unsigned long long)id);
}

/* uname() in the task's UTS namespace, from a short-lived child that joins it. */
static int uts_read(pid_t pid, struct utsname *u)
{
	char path[64];
	int p[2], status, fd;
	pid_t child;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/ns/uts", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno, "%s", path);
	if (pipe2(p, O_CLOEXEC) < 0) {
		close(fd);
		return crf_error_errno(errno, "pipe");
	}
	child = fork();
	if (child == 0) {
		struct utsname mine;

		close(p[0]);
		if (setns(fd, CLONE_NEWUTS) < 0 || uname(&mine) < 0 ||
		    write(p[1], &mine, sizeof(mine)) != sizeof(mine))
			_exit(1);
		_exit(0);
	}
	close(fd);
	close(p[1]);
	n = child < 0 ? -1 : read(p[0], u, sizeof(*u));
	close(p[0]);
	if (child < 0)
		return crf_error_errno(errno, "fork");
	if (waitpid(child, &status, 0) != child || n != sizeof(*u) || status)
		return crf_error_errno(EIO, "pid %d: cannot read its UTS namespace", (int)pid);
	return 0;
}

/* Asked at every dispatch of a UTS namespace (and by ns, which records who claimed it). */
static bool special_uts_match(const struct crf_object *obj)
{
	struct utsname u;

	return obj->data && uts_read(obj->pid, &u) >= 0 &&
	       !strncmp(u.nodename, UTS_PREFIX, strlen(UTS_PREFIX));
}

static int uts_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	struct crf_img *blob;
	struct utsname u;
	char name[64], text[2 * sizeof(u.nodename)];
	int r, len;

	uts_image(name, sizeof(name), ni->id);
	/* Once per namespace: the tasks that share it are dispatched one by one. */
	if (faccessat(crf_imgdir_fd(crf_ctx_images(ctx)), name, F_OK, 0) == 0)
		return 0;
	r = uts_read(obj->pid, &u);
	if (r < 0)
		return r;
	len = snprintf(text, sizeof(text), "%s%c%s", u.nodename, '\0', u.domainname) + 1;
	r = crf_blob_create(crf_ctx_images(ctx), name, &blob);
	if (r < 0)
		return r;
	r = crf_blob_write(blob, text, (size_t)len);
	if (r < 0) {
		crf_img_abort(blob);
		return r;
	}
	crf_info("saved namespace %s: hostname '%s', domain name '%s'", obj->desc, u.nodename,
		 u.domainname);
	return crf_img_close(blob);
}

/* In the restored task right after its fork (ns's restore-premap). */
static int uts_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	struct crf_img *blob;
	char name[64], text[2 * 65 + 2] = "";
	uint64_t size;
	size_t host;
	int r;

	if (ni->inherited)
		return 0;
	uts_image(name, sizeof(name), ni->id);
	r = crf_blob_open(crf_ctx_images(ctx), name, &blob);
	if (r < 0)
		return r;
	size = crf_blob_size(blob);
	r = size < 2 || size > sizeof(text) ? crf_error_errno(EBADMSG, "%s", name)
					    : crf_blob_pread(blob, text, size, 0);
	crf_img_close(blob);
	if (r < 0)
		return r;
	text[sizeof(text) - 1] = '\0';
	host = strlen(text);
	if (unshare(CLONE_NEWUTS) < 0 || sethostname(text, host) < 0 ||
	    setdomainname(text + host + 1, strnlen(text + host + 1, size - host - 1)) < 0)
		return crf_error_errno(errno, "pid %d: namespace %s", (int)obj->pid, obj->desc);
	return 0;
}

/* clang-format off */
CRF_PLUGIN(
	.name = "special",
	.version = "1.0.0",
	.description = "test plugin: a memfd mapping kind and the UTS namespace kind",
	.kinds = CRF_KINDS(
		{ .cls = CRF_OBJ_VMA, .name = "special-memfd", .match = special_match,
		  .dump = vma_dump, .restore = vma_restore },
		{ .cls = CRF_OBJ_NS, .name = "uts", .match = special_uts_match,
		  .dump = uts_dump, .restore = uts_restore }
	),
);
/* clang-format on */
