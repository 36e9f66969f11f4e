// SPDX-License-Identifier: GPL-2.0-only
/*
 * vendor-eventfd: an out-of-tree plugin, built only against the installed
 * SDK (pkg-config crf-plugin), that declares the fd kind "eventfd".  With
 * `--disable files:eventfd` at the dump, the files plugin's handler is
 * passed over and this one claims every eventfd: its dump saves the
 * counter and the EFD_* flags as the fd's payload, its restore makes the
 * eventfd again from them.  The files plugin keeps the fd table: the
 * number, dups, close-on-exec.
 *
 * Every call appends a line to the file its INI key "log" names, so that
 * a test can tell that it ran.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <crf/plugin.h>

/* The payload: fixed size, little-endian as the host is (a dump is restored on its kind). */
struct vefd_state {
	uint32_t version;   /* 1 */
	uint32_t efd_flags; /* EFD_SEMAPHORE, EFD_NONBLOCK */
	uint64_t count;
};

static void note(struct crf_ctx *ctx, const char *what, const struct crf_object *obj,
		 const struct vefd_state *s)
{
	const char *path = crf_ctx_config(ctx, "log");
	FILE *f;

	crf_info("%s pid %d fd %d: count %" PRIu64 "%s%s", what, (int)obj->pid, obj->id, s->count,
		 s->efd_flags & EFD_SEMAPHORE ? ", semaphore" : "",
		 s->efd_flags & EFD_NONBLOCK ? ", nonblock" : "");
	if (!path)
		return;
	f = fopen(path, "ae");
	if (!f)
		return;
	fprintf(f, "%s pid %d fd %d count %" PRIu64 " flags %#x\n", what, (int)obj->pid, obj->id,
		s->count, s->efd_flags);
	fclose(f);
}

/* The counter and semaphore mode of fd @obj->id of @obj->pid, from its fdinfo. */
static int read_fdinfo(const struct crf_object *obj, struct vefd_state *s)
{
	char path[64], line[256];
	bool have_count = false;
	unsigned long long v;
	int sem;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)obj->pid, obj->id);
	f = fopen(path, "re");
	if (!f)
		return crf_error_errno(errno, "%s", path);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "eventfd-count: %llx", &v) == 1) {
			s->count = v;
			have_count = true;
		} else if (sscanf(line, "eventfd-semaphore: %d", &sem) == 1 && sem) {
			s->efd_flags |= EFD_SEMAPHORE;
		}
	}
	fclose(f);
	if (!have_count)
		return crf_error_errno(EBADMSG, "%s: no eventfd-count", path);
	return 0;
}

static int vefd_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;
	struct vefd_state s = {.version = 1};
	int r;

	if (!info)
		return crf_error_errno(EINVAL, "fd %d: no fd information", obj->id);
	r = read_fdinfo(obj, &s);
	if (r < 0)
		return r;
	if (info->flags & O_NONBLOCK)
		s.efd_flags |= EFD_NONBLOCK;
	r = crf_fd_save_payload(ctx, obj, &s, sizeof(s));
	if (r == 0)
		note(ctx, "dump", obj, &s);
	return r;
}

static int vefd_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_fd_info *info = obj->data;
	struct vefd_state s;
	int fd;

	if (!info || info->payload_len != sizeof(s))
		return crf_error_errno(EBADMSG, "fd %d: no eventfd state saved", obj->id);
	memcpy(&s, info->payload, sizeof(s));
	if (s.version != 1)
		return crf_error_errno(EBADMSG, "fd %d: eventfd state version %u", obj->id,
				       s.version);
	fd = eventfd(0, EFD_CLOEXEC | (int)(s.efd_flags & (EFD_SEMAPHORE | EFD_NONBLOCK)));
	if (fd < 0)
		return crf_error_errno(errno, "fd %d: eventfd", obj->id);
	/* eventfd() takes an unsigned int; a write adds any count below 2^64 - 1. */
	if (s.count && write(fd, &s.count, sizeof(s.count)) != (ssize_t)sizeof(s.count)) {
		int r = crf_error_errno(errno, "fd %d: eventfd count %" PRIu64, obj->id, s.count);

		close(fd);
		return r;
	}
	note(ctx, "restore", obj, &s);
	return fd;
}

CRF_PLUGIN(.name = "vendor-eventfd", .version = "2.3.4",
	   .description = "eventfds, as a vendor would save them",
	   .kinds = CRF_KINDS({.cls = CRF_OBJ_FD,
			       .name = "eventfd",
			       .dump = vefd_dump,
			       .restore = vefd_restore}),
	   .config_keys = CRF_STRINGS("log"), );
