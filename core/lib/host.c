// SPDX-License-Identifier: GPL-2.0-only
/*
 * The services of crf/parasite.h and crf/restore.h: libcrf hands each call
 * to the core through the host table of the context, so plugins link only
 * against libcrf and the core keeps its task state to itself.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <crf/parasite.h>
#include <crf/restore.h>

#include "crf-private.h"

#define HOST_CALL(ctx, fn, ...)                                                                    \
	((ctx)->ops && (ctx)->ops->fn ? (ctx)->ops->fn((ctx)->task, __VA_ARGS__) : -ENOTCONN)

long crf_parasite_syscall(struct crf_ctx *ctx, long nr, const long args[6])
{
	return HOST_CALL(ctx, parasite_syscall, nr, args);
}

int crf_parasite_scratch(struct crf_ctx *ctx, uint64_t *addr, size_t *size)
{
	return HOST_CALL(ctx, parasite_scratch, addr, size);
}

int crf_parasite_write(struct crf_ctx *ctx, uint64_t addr, const void *buf, size_t len)
{
	return HOST_CALL(ctx, parasite_rw, addr, (void *)buf, len, true);
}

int crf_parasite_read(struct crf_ctx *ctx, uint64_t addr, void *buf, size_t len)
{
	return HOST_CALL(ctx, parasite_rw, addr, buf, len, false);
}

int crf_parasite_mapping(struct crf_ctx *ctx, uint64_t *start, uint64_t *len)
{
	return HOST_CALL(ctx, parasite_mapping, start, len);
}

/* The ABI minor the calling plugin was built against (the core's own for the core). */
static unsigned int caller_minor(const struct crf_ctx *ctx)
{
	const struct crf_plugin_state *p = ctx->plugin;

	return p && p->desc ? p->desc->abi_minor : CRF_PLUGIN_ABI_MINOR;
}

/*
 * A plugin built before ABI 1.4 passes a struct crf_rst_vma (crf_rst_mm)
 * without the fields appended since: only its own part is read, the rest
 * is zero.
 */
int crf_rst_add_vma(struct crf_ctx *ctx, const struct crf_rst_vma *vma)
{
	struct crf_rst_vma v = {0};

	memcpy(&v, vma, caller_minor(ctx) >= 4 ? sizeof(v) : offsetof(struct crf_rst_vma, vm));
	return HOST_CALL(ctx, rst_add_vma, &v);
}

int crf_rst_add_pages(struct crf_ctx *ctx, struct crf_img *blob, uint64_t vaddr, uint64_t len,
		      uint64_t off)
{
	return HOST_CALL(ctx, rst_add_pages, blob, vaddr, len, off);
}

int crf_rst_set_mm(struct crf_ctx *ctx, const struct crf_rst_mm *mm)
{
	struct crf_rst_mm m = {0};

	memcpy(&m, mm, caller_minor(ctx) >= 4 ? sizeof(m) : offsetof(struct crf_rst_mm, mlockall));
	return HOST_CALL(ctx, rst_set_mm, &m);
}

int crf_rst_set_vdso(struct crf_ctx *ctx, uint64_t vdso)
{
	return HOST_CALL(ctx, rst_set_vdso, vdso);
}

int crf_rst_keep_fd(struct crf_ctx *ctx, int fd, int number, bool cloexec)
{
	int r = HOST_CALL(ctx, rst_keep_fd, fd, number, cloexec);

	/* Without a host nobody else will close it. */
	if (r == -ENOTCONN && fd >= 0)
		close(fd);
	return r;
}

int crf_rst_at_fds_placed(struct crf_ctx *ctx, int (*fn)(void *arg), void *arg,
			  void (*release)(void *arg))
{
	int r = HOST_CALL(ctx, rst_at_fds_placed, fn, arg, release);

	/* Without a host nobody else will release it. */
	if (r == -ENOTCONN && release)
		release(arg);
	return r;
}

int crf_rst_object(struct crf_ctx *ctx, const char *key, int (*create)(void *arg), void *arg,
		   bool *created)
{
	int r = HOST_CALL(ctx, rst_object, key, create, arg, created);

	if (r == -ENOTCONN)
		crf_error("object %s: no shared objects in stage %s", key ? key : "(null)",
			  crf_stage_name(ctx->stage));
	return r;
}
