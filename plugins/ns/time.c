// SPDX-License-Identifier: GPL-2.0-only
/*
 * Time namespaces (the ns plugin's own "time" and "time_for_children"
 * handlers): the offsets of CLOCK_MONOTONIC and CLOCK_BOOTTIME, saved once
 * per namespace in timens-ID.img with the namespace's two clocks at the dump
 * and the host's boot id.  A child of crf that joins the namespace reads
 * them (/proc/PID/timens_offsets shows a task's time_for_children, which
 * need not be its time namespace).
 *
 * Restore, in the restored process right after its fork (single-threaded,
 * as setns into a time namespace requires): unshare(CLONE_NEWTIME) makes a
 * namespace for the process's children, its offsets are written before
 * anything is in it, and for "time" the process joins it by setns.  The
 * clocks inside must never go back: on the same boot of the same host
 * (boot id) the host's clocks only went on, and the offsets are the dump's
 * exactly; on another boot (or host) each offset is raised, where needed,
 * so that the namespace's clock is at least what it was at the dump.
 *
 * The namespaces made are kept in a table in the process's memory, with an
 * fd of each, inherited by the processes it forks: a child that was in a
 * namespace at the dump its parent left since (the parent unshared a new
 * one for its children) joins it back by setns, and one that was in crf's
 * is taken back there by claims.c.  Refused: a namespace owned by a user
 * namespace not crf's; a time_for_children namespace that another process
 * restored already, where the process is in another time namespace (no
 * call sets a process's time_for_children to an existing namespace but its
 * own time namespace).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/image.h>
#include <crf/log.h>
#include <crf/plugin.h>

#include "ns.h"
#include "time.pb-c.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define NSEC	    1000000000LL
#define MAX_MADE    64
#define OFFSETS_LEN 256

enum { MONO, BOOT, N_CLOCKS };

static const clockid_t clock_ids[N_CLOCKS] = {CLOCK_MONOTONIC, CLOCK_BOOTTIME};
static const char *const clock_names[N_CLOCKS] = {"monotonic", "boottime"};

/* What a namespace's offsets and clocks are: offsets in ns from the host's clocks. */
struct timens_val {
	int64_t off[N_CLOCKS];
	int64_t now[N_CLOCKS];
};

/* The namespaces this process (or an ancestor in the restore) made: inherited through fork. */
static struct {
	uint64_t id; /* at the dump */
	int fd;
} made[MAX_MADE];
static size_t n_made;

/* Parse timens_offsets: "monotonic SEC NSEC" lines (or the clock's number). */
static int parse_offsets(const char *text, int64_t off[N_CLOCKS])
{
	int seen = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char name[16];
		long long sec;
		long nsec;
		int c;

		if (sscanf(p, "%15s %lld %ld", name, &sec, &nsec) != 3)
			return -EBADMSG;
		if (!strcmp(name, "monotonic") || !strcmp(name, "1"))
			c = MONO;
		else if (!strcmp(name, "boottime") || !strcmp(name, "7"))
			c = BOOT;
		else
			return -EBADMSG;
		off[c] = sec * NSEC + nsec;
		seen |= 1 << c;
	}
	return seen == 3 ? 0 : -EBADMSG;
}

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	/* The syscall, not the vDSO: right after a setns, as the kernel has it. */
	if (syscall(SYS_clock_gettime, id, &ts) < 0)
		return -errno;
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

static int read_self(struct timens_val *v)
{
	char text[OFFSETS_LEN];
	_cleanup_close_ int fd = open("/proc/self/timens_offsets", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof(text) - 1);

	if (n < 0)
		return -errno;
	text[n] = '\0';
	for (int c = 0; c < N_CLOCKS; c++)
		if ((v->now[c] = clock_ns(clock_ids[c])) < 0)
			return (int)v->now[c];
	return parse_offsets(text, v->off);
}

/* In a child of crf that joined the namespace (its time and time_for_children). */
static int timens_child(int out, void *arg)
{
	struct timens_val v;
	int r = read_self(&v);

	(void)arg;
	if (r < 0)
		return r;
	return write(out, &v, sizeof(v)) == sizeof(v) ? 0 : -EIO;
}

static int boot_id(char *buf, size_t len)
{
	_cleanup_close_ int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (n < 0)
		return crf_error_errno(errno, "/proc/sys/kernel/random/boot_id");
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return 0;
}

static void timens_image(char *buf, size_t len, uint64_t id)
{
	snprintf(buf, len, "timens-%llu.img", (unsigned long long)id);
}

/* Both kinds: the namespace @obj names (the task's time or time_for_children). */
int ns_time_dump(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	Crf__Ns__TimeNs m = CRF__NS__TIME_NS__INIT;
	_cleanup_img_ struct crf_img *img = NULL;
	_cleanup_close_ int fd = -1;
	struct timens_val v;
	char name[64], boot[64];
	int r;

	timens_image(name, sizeof(name), ni->id);
	if (faccessat(crf_imgdir_fd(crf_ctx_images(ctx)), name, F_OK, 0) == 0)
		return 0;
	fd = ns_open_of(obj, ni->kind);
	if (fd < 0)
		return fd;
	r = ns_check_owner(obj, fd);
	if (r >= 0)
		r = boot_id(boot, sizeof(boot));
	if (r < 0)
		return r;
	r = ns_in_child(fd, CLONE_NEWTIME, timens_child, NULL, &v, sizeof(v));
	if (r < 0)
		return crf_error_errno(r,
				       "pid %d: namespace %s: cannot read its offsets and clocks "
				       "from inside",
				       (int)obj->pid, obj->desc);
	m.monotonic_sec = v.off[MONO] / NSEC;
	m.monotonic_nsec = v.off[MONO] % NSEC;
	m.boottime_sec = v.off[BOOT] / NSEC;
	m.boottime_nsec = v.off[BOOT] % NSEC;
	m.monotonic_ns = (uint64_t)v.now[MONO];
	m.boottime_ns = (uint64_t)v.now[BOOT];
	m.boot_id = boot;
	r = crf_img_create(crf_ctx_images(ctx), name, &crf__ns__time_ns__descriptor, &img);
	if (r >= 0)
		r = crf_img_write(img, &m.base);
	if (r < 0)
		return r;
	crf_info("namespace %s: offsets monotonic %lld ns, boottime %lld ns", obj->desc,
		 (long long)v.off[MONO], (long long)v.off[BOOT]);
	return crf_img_close(TAKE_PTR(img));
}

static int read_image(struct crf_ctx *ctx, uint64_t id, struct timens_val *saved, char *boot,
		      size_t len)
{
	_cleanup_img_ struct crf_img *img = NULL;
	Crf__Ns__TimeNs *m = NULL;
	char name[64];
	int r;

	timens_image(name, sizeof(name), id);
	r = crf_img_open(crf_ctx_images(ctx), name, &crf__ns__time_ns__descriptor, &img);
	if (r >= 0)
		r = crf_img_read(img, (ProtobufCMessage **)&m);
	if (r == 0)
		return crf_error_errno(EBADMSG, "%s: no record", name);
	if (r < 0)
		return r;
	if (m->monotonic_nsec <= -NSEC || m->monotonic_nsec >= NSEC || m->boottime_nsec <= -NSEC ||
	    m->boottime_nsec >= NSEC || m->monotonic_sec > INT32_MAX ||
	    m->monotonic_sec < -(int64_t)INT32_MAX || m->boottime_sec > INT32_MAX ||
	    m->boottime_sec < -(int64_t)INT32_MAX || m->monotonic_ns > INT64_MAX / 2 ||
	    m->boottime_ns > INT64_MAX / 2)
		r = crf_error_errno(EBADMSG, "%s: TimeNs: an offset or clock out of range", name);
	saved->off[MONO] = m->monotonic_sec * NSEC + m->monotonic_nsec;
	saved->off[BOOT] = m->boottime_sec * NSEC + m->boottime_nsec;
	saved->now[MONO] = (int64_t)m->monotonic_ns;
	saved->now[BOOT] = (int64_t)m->boottime_ns;
	snprintf(boot, len, "%s", m->boot_id);
	protobuf_c_message_free_unpacked(&m->base, NULL);
	return r < 0 ? r : crf_img_close(TAKE_PTR(img));
}

/*
 * The offsets to give the namespace: the dump's on the same boot; else
 * each raised, where needed, so that the clock starts where it was.
 */
static int choose_offsets(const char *desc, const struct timens_val *saved, const char *boot,
			  int64_t off[N_CLOCKS])
{
	struct timens_val self;
	char mine[64];
	int r = boot_id(mine, sizeof(mine));

	if (r < 0)
		return r;
	memcpy(off, saved->off, sizeof(saved->off));
	if (!strcmp(mine, boot))
		return 0;
	/* Before any unshare: this process's time namespace is its time_for_children. */
	r = read_self(&self);
	if (r < 0)
		return crf_error_errno(r, "/proc/self/timens_offsets");
	for (int c = 0; c < N_CLOCKS; c++) {
		int64_t host = self.now[c] - self.off[c];

		if (host + off[c] < saved->now[c])
			off[c] = saved->now[c] - host;
	}
	crf_info("namespace %s: dumped on boot %s, this is %s: offsets monotonic %lld ns, "
		 "boottime %lld ns (were %lld, %lld)",
		 desc, boot, mine, (long long)off[MONO], (long long)off[BOOT],
		 (long long)saved->off[MONO], (long long)saved->off[BOOT]);
	return 0;
}

static int write_offsets(const int64_t off[N_CLOCKS])
{
	char text[OFFSETS_LEN];
	size_t len = 0;
	_cleanup_close_ int fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (int c = 0; c < N_CLOCKS; c++) {
		/* The kernel wants 0 <= nsec < 1 s: floor division. */
		int64_t sec = off[c] / NSEC, nsec = off[c] % NSEC;

		if (nsec < 0) {
			sec--;
			nsec += NSEC;
		}
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s %lld %lld\n",
					clock_names[c], (long long)sec, (long long)nsec);
	}
	if (write(fd, text, len) != (ssize_t)len)
		return -errno;
	return 0;
}

static int find_made(uint64_t id)
{
	for (size_t i = 0; i < n_made; i++)
		if (made[i].id == id)
			return made[i].fd;
	return -1;
}

static bool same_ns(int fd, const char *self)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat(self, &b) == 0 && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

/* A new namespace for this process's children with the offsets of dump-time @id. */
static int make_timens(struct crf_ctx *ctx, const struct crf_object *obj, uint64_t id)
{
	struct timens_val saved = {0};
	int64_t off[N_CLOCKS];
	char boot[64];
	int r, fd;

	if (n_made == MAX_MADE)
		return crf_error_errno(ENOSPC,
				       "pid %d: namespace %s: more than %d time "
				       "namespaces",
				       (int)obj->pid, obj->desc, MAX_MADE);
	r = read_image(ctx, id, &saved, boot, sizeof(boot));
	if (r >= 0)
		r = choose_offsets(obj->desc, &saved, boot, off);
	if (r < 0)
		return r;
	if (unshare(CLONE_NEWTIME) < 0)
		return crf_error_errno(errno, "pid %d: namespace %s: unshare(CLONE_NEWTIME)",
				       (int)obj->pid, obj->desc);
	r = write_offsets(off);
	if (r < 0)
		return crf_error_errno(r, "pid %d: namespace %s: write its offsets", (int)obj->pid,
				       obj->desc);
	fd = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return crf_error_errno(errno,
				       "pid %d: namespace %s: /proc/self/ns/time_for_children",
				       (int)obj->pid, obj->desc);
	made[n_made].id = id;
	made[n_made++].fd = fd;
	return fd;
}

int ns_time_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	int fd = find_made(ni->id);

	if (fd >= 0 && same_ns(fd, "/proc/self/ns/time"))
		return 0;
	if (fd < 0)
		fd = make_timens(ctx, obj, ni->id);
	if (fd < 0)
		return fd;
	if (setns(fd, CLONE_NEWTIME) < 0)
		return crf_error_errno(errno, "pid %d: namespace %s: join it", (int)obj->pid,
				       obj->desc);
	return 0;
}

int ns_timefc_restore(struct crf_ctx *ctx, const struct crf_object *obj)
{
	const struct crf_ns_info *ni = obj->data;
	int fd = find_made(ni->id);

	if (fd >= 0 && same_ns(fd, "/proc/self/ns/time_for_children"))
		return 0;
	if (fd >= 0)
		return crf_error_errno(
			ENOTSUP,
			"pid %d: namespace %s: restored already for another process, "
			"and this one is in another time namespace: no call makes it "
			"the namespace of its children only",
			(int)obj->pid, obj->desc);
	fd = make_timens(ctx, obj, ni->id);
	return fd < 0 ? fd : 0;
}

int ns_time_joined(uint64_t id, int fd)
{
	if (n_made == MAX_MADE)
		return crf_error_errno(ENOSPC, "more than %d time namespaces", MAX_MADE);
	made[n_made].id = id;
	made[n_made++].fd = fd;
	return 0;
}
