// SPDX-License-Identifier: GPL-2.0-only
/*
 * hello: a template crf plugin, built out of tree against the installed
 * headers and pkg-config file:
 *
 *	cc -shared -fPIC -Wl,-z,defs -o crf-hello.so hello.c \
 *		$(pkg-config --cflags --libs crf-plugin)
 *
 * Copy it, rename it, and fill in the hooks your kind of state needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <crf/plugin.h>

/* Probe: check, for real, every kernel feature the plugin will use. */
static int hello_probe(struct crf_ctx *ctx)
{
	const char *greeting = crf_ctx_config(ctx, "greeting");
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	crf_probe_feature(ctx, "proc-status", fd >= 0, true, "%s",
			  fd >= 0 ? "/proc/self/status readable" : strerror(errno));
	if (fd >= 0)
		close(fd);
	crf_info("%s", greeting ? greeting : "hello from an out-of-tree plugin");
	return 0;
}

/* Per task, with the tree frozen: save what this plugin owns. */
static int hello_dump_task(struct crf_ctx *ctx)
{
	crf_debug("would dump pid %d", (int)crf_ctx_pid(ctx));
	return 0;
}

/*
 * A new fd kind: /dev/full (character device 1:7), which no built-in kind
 * handles.  The fd table walk names a character device "chr:MAJOR:MINOR";
 * @match claims this one.  The files plugin keeps the fd table and saves
 * what every fd has (number, flags, offset, path, close-on-exec); the
 * kind saves what is its own with crf_fd_save_payload() and makes the
 * open file description again at restore from obj->data.
 */
static bool full_match(const struct crf_object *obj)
{
	return obj->cls == CRF_OBJ_FD && obj->kind && !strcmp(obj->kind, "chr:1:7");
}

/* What this kind keeps of an fd: here only a tag, to show the round trip. */
#define FULL_TAG "hello-full-1"

static int full_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;

	crf_info("dump fd %d of pid %d (%s, flags %#o)", obj->id, (int)obj->pid, info->path,
		 info->flags);
	return crf_fd_save_payload(ctx, obj, FULL_TAG, strlen(FULL_TAG));
}

/*
 * The check of a saved fd (ABI 1.7): run by the files plugin's
 * restore-prepare on every record of this kind, before the tree is forked,
 * so that a record ->restore cannot use is refused before anything is made.
 */
static int full_check(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;

	(void)ctx;
	if (info->payload_len != strlen(FULL_TAG) ||
	    memcmp(info->payload, FULL_TAG, info->payload_len))
		return crf_error_errno(EBADMSG, "pid %d: fd %d: not a record of this kind",
				       (int)obj->pid, obj->id);
	return 0;
}

/* Return a new fd, O_CLOEXEC: the files plugin puts it at its number. */
static int full_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;
	int fd;

	(void)ctx;
	fd = open("/dev/full",
		  (int)(info->flags & (O_ACCMODE | O_APPEND | O_NONBLOCK)) | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return crf_error_errno(errno, "fd %d: /dev/full", obj->id);
	crf_info("restored fd %d of pid %d (%s)", obj->id, (int)obj->pid, info->path);
	return fd;
}

CRF_PLUGIN(.name = "hello", .version = "1.0.0", .description = "template plugin built out of tree",
	   .hooks = CRF_HOOKS([CRF_STAGE_PROBE] = hello_probe,
			      [CRF_STAGE_DUMP_TASK] = hello_dump_task, ),
	   /* Its name is what the images record: restored by this plugin's "full". */
	   .kinds = CRF_KINDS({.cls = CRF_OBJ_FD,
			       .name = "full",
			       .match = full_match,
			       .dump = full_dump,
			       .restore = full_restore}),
	   .checks = CRF_CHECKS({.cls = CRF_OBJ_FD, .name = "full", .check = full_check}),
	   .config_keys = CRF_STRINGS("greeting"), );
