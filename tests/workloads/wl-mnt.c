// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-mnt [MODE]: a process in a mount namespace of its own, a copy of crf's
 * (unshare(CLONE_NEWNS), everything made private), with mounts added and
 * one removed, under its temp dir D:
 *
 *   D/t         tmpfs size=1m,mode=750, nosuid,nodev, shared (a peer group
 *               of its own): a directory, files (modes, owners, times), a
 *               symlink, a FIFO, /dev/null's device node, an empty file
 *   D/t/inner   tmpfs on a directory of D/t, ro,noexec, unbindable
 *   D/b         a bind mount of the host directory D/host, noexec: the
 *               process keeps an fd on D/b/counter and writes a counter
 *               into it until verified (and after the restore)
 *   D/bf        a bind mount of the host file D/hostfile, read-only; an fd
 *               kept on it
 *   D/p D/s D/q proc (nosuid,nodev,noexec), sysfs (ro), mqueue
 *   D/pt        devpts of its own (newinstance,ptmxmode=0666,mode=0620,gid=5)
 *   D/ps D/pu   binds of D/p's sys (read-only) and uptime
 *   /dev/shm    its copy of crf's, made noexec (per-mount flags of a copy)
 *
 * Verification, from inside: the mount table (mount IDs, peer group numbers
 * and the devices of the filesystems made anew aside) is what it was, field
 * by field; the tmpfs trees are the same byte for byte (type, mode, owner,
 * times, contents, link targets, device numbers); the fds are on the same
 * files (device, inode) and the counter file holds the last value written.
 *
 * MODE slave SHARED GONE: the same, "/" made a slave rather than private: the
 * copy of SHARED, a shared mount of crf's (tests/e2e/mnt-slave.sh makes it),
 * is a slave of it (master:N); the copy of GONE, another of crf's, is
 * unmounted (the restore must unmount it again).
 * MODE refused-ramfs: a ramfs mount (a type crf does not restore);
 * refused-devpts: a devpts instance of its own with a pty (its master kept
 * open); refused-block DEV:
 * the ext4 on block device DEV (tests/e2e/mnt-loop.sh: a loop device);
 * container: pivot_root into a directory (below); container-outside-fd: the
 * same with an fd kept on a host file opened before the pivot (refused);
 * container-ext DATA ROOT2: /data bound from DATA, a second rootfs ROOT2
 * made with the same mount points (tests/e2e/mnt-external.sh: dumped with
 * --external mnt[/data]:data, restored with --external mnt[data]:DATA
 * --root ROOT2; the root's root field not compared).
 * refused-root: pivot_root into a tmpfs (a container root crf does not
 * restore yet); refused-peers: two mounts in one peer group; refused-fd: an fd kept on a
 * file of D/t.  The dump must fail; the process checks it still runs as before.
 */
#include "wl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char base[3000], table[65536], tree_t[65536], tree_inner[8192];
static bool mask_root;	      /* the root's root field changes (crf restore --root) */
static const char *block_dev; /* refused-block DEV */
static int counter_fd = -1, file_fd = -1, tmpfs_fd = -1, pty_fd = -1, null_fd = -1;
static unsigned long counter;

/* @rel under D, or @rel itself when absolute. */
static void path_of(char *buf, size_t len, const char *rel)
{
	if (rel[0] == '/')
		snprintf(buf, len, "%s", rel);
	else
		snprintf(buf, len, "%s/%s", base, rel);
}

static void do_mount(const char *src, const char *rel, const char *type, unsigned long flags,
		     const char *data)
{
	char p[4096];

	path_of(p, sizeof(p), rel);
	if (mount(src, p, type, flags, data) < 0)
		wl_fail("mount %s on %s (%s): %m", src ? src : "-", p, type ? type : "-");
}

static void mkdir_at(const char *rel, mode_t mode)
{
	char p[4096];

	path_of(p, sizeof(p), rel);
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		wl_fail("mkdir %s: %m", p);
}

static void make_file(const char *rel, mode_t mode, uid_t uid, gid_t gid, size_t size,
		      uint64_t seed, time_t mtime)
{
	char p[4096], *buf = malloc(size ? size : 1);
	struct timespec ts[2] = {{mtime - 100, 5}, {mtime, 123456789}};
	int fd;

	path_of(p, sizeof(p), rel);
	if (!buf)
		wl_fail("malloc");
	wl_fill(buf, size, seed);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, buf, size) != (ssize_t)size || close(fd) < 0)
		wl_fail("create %s: %m", p);
	free(buf);
	if (chown(p, uid, gid) < 0 || chmod(p, mode) < 0 || utimensat(AT_FDCWD, p, ts, 0) < 0)
		wl_fail("attrs %s: %m", p);
}

/* A listing of the tree under @dir: one line per file, sorted by walk order. */
static void list_tree(const char *dir, const char *rel, char *out, size_t len)
{
	char p[4096], line[4600];
	struct dirent **names;
	struct stat st;
	int n;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	if (lstat(p, &st) < 0)
		wl_fail("lstat %s: %m", p);
	snprintf(line, sizeof(line), "%s %o %u:%u m%lld.%09ld a%lld.%09ld", rel, st.st_mode,
		 st.st_uid, st.st_gid, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
		 (long long)st.st_atim.tv_sec, st.st_atim.tv_nsec);
	if (S_ISREG(st.st_mode)) {
		char *buf = malloc((size_t)st.st_size + 1);
		int fd = open(p, O_RDONLY | O_NOATIME | O_CLOEXEC);

		if (!buf || fd < 0 || read(fd, buf, (size_t)st.st_size) != st.st_size)
			wl_fail("read %s: %m", p);
		close(fd);
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " %lld:%016llx",
			 (long long)st.st_size,
			 (unsigned long long)wl_hash(buf, (size_t)st.st_size));
		free(buf);
	} else if (S_ISLNK(st.st_mode)) {
		char t[4096];
		ssize_t k = readlink(p, t, sizeof(t) - 1);

		if (k < 0)
			wl_fail("readlink %s: %m", p);
		t[k] = '\0';
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " -> %s", t);
	} else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " %u:%u",
			 major(st.st_rdev), minor(st.st_rdev));
	}
	if (strlen(out) + strlen(line) + 2 > len)
		wl_fail("listing of %s too long", dir);
	strcat(out, line);
	strcat(out, "\n");
	if (!S_ISDIR(st.st_mode))
		return;
	n = scandir(p, &names, NULL, alphasort);
	if (n < 0)
		wl_fail("scandir %s: %m", p);
	for (int i = 0; i < n; i++) {
		char sub[4096];

		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
			snprintf(sub, sizeof(sub), "%s/%s", rel, names[i]->d_name);
			list_tree(dir, sub, out, len);
		}
		free(names[i]);
	}
	free(names);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The mount table, canonical: per mount, its place, its parent's place, root,
 * options, propagation (peer group numbers as "shared"), type, source, super
 * options, and the device unless the filesystem is one made here.
 */
static void read_table(char *out, size_t len)
{
	static char text[65536];
	char *lines[512], *canon[512], *save = NULL, *l;
	unsigned int ids[512];
	size_t n = 0;
	ssize_t got = wl_read_file("/proc/self/mountinfo", text, sizeof(text) - 1);

	if (got < 0)
		wl_fail("read mountinfo");
	text[got] = '\0';
	for (l = strtok_r(text, "\n", &save); l && n < 512; l = strtok_r(NULL, "\n", &save)) {
		lines[n] = l;
		sscanf(l, "%u", &ids[n]);
		n++;
	}
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char mp[4096], pmp[4096] = "-", root[4096], opts[512], dev[64], rest[8192];
		char prop[256] = "", *dash, *tok, *s2 = NULL, tags[512];
		unsigned int id, parent;
		char line[24000];

		if (sscanf(lines[i], "%u %u %63s %4095s %4095s %511s", &id, &parent, dev, root, mp,
			   opts) != 6)
			wl_fail("mountinfo line %s", lines[i]);
		for (size_t k = 0; k < n; k++)
			if (ids[k] == parent)
				sscanf(lines[k], "%*u %*u %*s %*s %4095s", pmp);
		dash = strstr(lines[i], " - ");
		if (!dash)
			wl_fail("mountinfo line %s", lines[i]);
		snprintf(rest, sizeof(rest), "%s", dash + 3);
		/* The optional fields: after the sixth field, up to " - ". */
		{
			const char *p = lines[i];

			for (int f = 0; f < 6; f++)
				p = strchr(p, ' ') + 1;
			snprintf(tags, sizeof(tags), "%.*s", p < dash ? (int)(dash - p) : 0, p);
		}
		for (tok = strtok_r(tags, " ", &s2); tok; tok = strtok_r(NULL, " ", &s2)) {
			strcat(prop, !strncmp(tok, "shared:", 7) ? "shared" : tok);
			strcat(prop, ",");
		}
		/* Made here (the sources all "wl-..."): a new device at the restore. */
		if (strstr(rest, " wl-") && !strstr(rest, "ext4 "))
			strcpy(dev, "new");
		if (mask_root && !strcmp(mp, "/"))
			strcpy(root, "ROOT");
		snprintf(line, sizeof(line), "%s [%s] %s %s %s %s %s\n", mp, pmp, root, opts, prop,
			 dev, rest);
		canon[i] = strdup(line);
		if (!canon[i])
			wl_fail("strdup");
	}
	/* In order of place: the kernel's order is its list's, which a restore need not keep. */
	qsort(canon, n, sizeof(canon[0]), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (strlen(out) + strlen(canon[i]) + 1 > len)
			wl_fail("mount table too long");
		strcat(out, canon[i]);
		free(canon[i]);
	}
}

static void tick(void)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%020lu\n", ++counter);

	if (pwrite(counter_fd, buf, (size_t)n, 0) != n)
		wl_fail("write counter: %m");
}

/* mkdir -p @path under @root. */
static void mkdirs(const char *root, const char *path)
{
	char p[8192];

	snprintf(p, sizeof(p), "%s%s", root, path);
	for (char *c = p + strlen(root) + 1; *c; c++)
		if (*c == '/') {
			*c = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				wl_fail("mkdir %s: %m", p);
			*c = '/';
		}
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		wl_fail("mkdir %s: %m", p);
}

/*
 * A container root: a tmpfs with a fresh proc and binds of the directories
 * the harness talks through, pivot_root'ed into, the old root detached.
 */
static void pivot_into_tmpfs(void)
{
	const char *env[] = {"CRF_TEST_READY", "CRF_TEST_VERIFY"};
	char nr[4096], p[8192];

	mkdir_at("nr", 0755);
	do_mount("wl-root", "nr", "tmpfs", 0, "size=1m");
	path_of(nr, sizeof(nr), "nr");
	for (size_t i = 0; i < 2; i++) {
		const char *f = getenv(env[i]);
		char dir[3000], *slash;

		if (!f || !*f)
			continue;
		snprintf(dir, sizeof(dir), "%s", f);
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			wl_fail("%s=%s: not a file in a directory", env[i], f);
		*slash = '\0';
		mkdirs(nr, dir);
		snprintf(p, sizeof(p), "%s%s", nr, dir);
		if (mount(dir, p, NULL, MS_BIND, NULL) < 0)
			wl_fail("bind %s: %m", dir);
	}
	mkdirs(nr, "/proc");
	mkdirs(nr, "/old");
	snprintf(p, sizeof(p), "%s/proc", nr);
	if (mount("proc", p, "proc", 0, NULL) < 0)
		wl_fail("mount proc: %m");
	snprintf(p, sizeof(p), "%s/old", nr);
	if (syscall(SYS_pivot_root, nr, p) < 0 || chdir("/") < 0 || umount2("/old", MNT_DETACH) < 0)
		wl_fail("pivot_root %s: %m", nr);
}

/*
 * @path of the host at the same place in the rootfs @rfs: bound (with
 * @bind: else only its mount point made), or the same symlink.
 */
static void host_path(const char *rfs, const char *path, bool bind)
{
	char p[8192], t[4096];
	struct stat st;
	ssize_t n;

	if (lstat(path, &st) < 0)
		return; /* not on this host */
	snprintf(p, sizeof(p), "%s%s", rfs, path);
	if (S_ISLNK(st.st_mode)) {
		n = readlink(path, t, sizeof(t) - 1);
		if (n < 0)
			wl_fail("readlink %s: %m", path);
		t[n] = '\0';
		if (symlink(t, p) < 0 && errno != EEXIST)
			wl_fail("symlink %s: %m", p);
		return;
	}
	mkdirs(rfs, path);
	if (bind && mount(path, p, NULL, MS_BIND, NULL) < 0)
		wl_fail("bind %s on %s: %m", path, p);
}

/*
 * A container: D/rootfs (a directory on the host's disk, bound on itself)
 * pivot_root'ed into, with the host's /usr, /lib*, /bin, the workload's
 * directory and the test's temp dir at their places (to run, and to talk to
 * the harness), /dev/null bound, fds 0-2 reopened inside, a fresh /proc, a
 * tmpfs at /scratch, the host directory D/host
 * at /data (the counter file: a path that exists only in the container).
 */
/* The mount points of the container in @rfs; with @bind, the host's paths bound there. */
static void skeleton(const char *rfs, bool bind)
{
	const char *keep[] = {"/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin"};
	char p[8192], exe[4096], *slash;
	ssize_t n;

	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		host_path(rfs, keep[i], bind);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		wl_fail("readlink /proc/self/exe: %m");
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	*slash = '\0';
	host_path(rfs, exe, bind);
	host_path(rfs, wl_tmpdir(), bind);
	mkdirs(rfs, "/proc");
	mkdirs(rfs, "/scratch");
	mkdirs(rfs, "/data");
	mkdirs(rfs, "/dev");
	snprintf(p, sizeof(p), "%s/dev/null", rfs);
	if (close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
		wl_fail("create %s: %m", p);
}

/*
 * A container: D/rootfs (a directory on the host's disk, bound on itself)
 * pivot_root'ed into, with the host's /usr, /lib*, /bin, the workload's
 * directory and the test's temp dir at their places (to run, and to talk to
 * the harness), /dev/null bound, fds 0-2 reopened inside, a fresh /proc, a
 * tmpfs at /scratch, the host directory @data (D/host) at /data (the counter
 * file: a path that exists only in the container).  @root2: a second rootfs
 * with the same mount points (for crf restore --root).
 */
static void container(bool outside, const char *data, const char *root2)
{
	char rfs[4096], p[8192], host[4096], log[4096];
	ssize_t n;
	int fd;

	mkdir_at("rootfs", 0755);
	path_of(rfs, sizeof(rfs), "rootfs");
	if (mount(rfs, rfs, NULL, MS_BIND, NULL) < 0)
		wl_fail("bind %s: %m", rfs);
	skeleton(rfs, true);
	if (root2) {
		skeleton(root2, false);
		snprintf(p, sizeof(p), "%s/root2-marker", root2);
		if (close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
			wl_fail("create %s: %m", p);
	}
	mkdirs(rfs, "/old");
	snprintf(p, sizeof(p), "%s/proc", rfs);
	if (mount("wl-proc", p, "proc", MS_NOSUID | MS_NODEV, NULL) < 0)
		wl_fail("mount proc: %m");
	snprintf(p, sizeof(p), "%s/scratch", rfs);
	if (mount("wl-ctmp", p, "tmpfs", MS_NOSUID, "size=1m,mode=1777") < 0)
		wl_fail("mount tmpfs: %m");
	snprintf(p, sizeof(p), "%s/data", rfs);
	if (data)
		snprintf(host, sizeof(host), "%s", data);
	else
		path_of(host, sizeof(host), "host");
	if (mount(host, p, NULL, MS_BIND, NULL) < 0)
		wl_fail("bind %s: %m", host);
	snprintf(p, sizeof(p), "%s/counter", host);
	if (close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
		wl_fail("create %s: %m", p);
	snprintf(p, sizeof(p), "%s/dev/null", rfs);
	if (mount("/dev/null", p, NULL, MS_BIND, NULL) < 0)
		wl_fail("bind /dev/null: %m");
	n = readlink("/proc/self/fd/1", log, sizeof(log) - 1);
	if (n < 0)
		wl_fail("readlink /proc/self/fd/1: %m");
	log[n] = '\0';
	if (outside) {
		path_of(p, sizeof(p), "hostfile");
		file_fd = open(p, O_RDONLY | O_CLOEXEC);
		if (file_fd < 0)
			wl_fail("open %s: %m", p);
	}
	snprintf(p, sizeof(p), "%s/old", rfs);
	if (syscall(SYS_pivot_root, rfs, p) < 0 || chdir("/") < 0 ||
	    umount2("/old", MNT_DETACH) < 0 || rmdir("/old") < 0)
		wl_fail("pivot_root %s: %m", rfs);
	/* fds 0-2 reopened in the container, as a runtime sets them up. */
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || dup2(fd, 0) < 0 || close(fd) < 0)
		wl_fail("reopen fd 0: %m");
	fd = open(log, O_WRONLY | O_APPEND);
	if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || close(fd) < 0)
		wl_fail("reopen fds 1-2 on %s: %m", log);
	make_file("/scratch/f", 0640, 7, 8, 3000, 13, 1600000000);
	counter_fd = open("/data/counter", O_WRONLY | O_CLOEXEC);
	if (counter_fd < 0)
		wl_fail("open /data/counter: %m");
	tick();
}

static void setup(const char *mode, const char *gone, const char *data, const char *root2)
{
	bool slave = !strcmp(mode, "slave");

	char p[4096], q[4096];
	time_t t0 = 1600000000;

	snprintf(base, sizeof(base), "%s/wl-mnt", wl_tmpdir());
	if (mkdir(base, 0755) < 0 && errno != EEXIST)
		wl_fail("mkdir %s: %m", base);
	mkdir_at("t", 0755);
	mkdir_at("b", 0755);
	mkdir_at("host", 0755);
	mkdir_at("p", 0755);
	mkdir_at("s", 0755);
	mkdir_at("q", 0755);
	mkdir_at("r", 0755);
	mkdir_at("pt", 0755);
	mkdir_at("ps", 0755);
	path_of(p, sizeof(p), "pu");
	if (close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
		wl_fail("create %s: %m", p);
	path_of(p, sizeof(p), "hostfile");
	if (close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
		wl_fail("create %s: %m", p);
	path_of(p, sizeof(p), "bf");
	if (close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
		wl_fail("create %s: %m", p);
	path_of(p, sizeof(p), "host/counter");
	if (close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
		wl_fail("create %s: %m", p);

	if (unshare(CLONE_NEWNS) < 0)
		wl_fail("unshare(CLONE_NEWNS): %m");
	/* slave: what is shared in crf's namespace (the test's SHARED) stays a slave of it. */
	if (mount(NULL, "/", NULL, MS_REC | (slave ? MS_SLAVE : MS_PRIVATE), NULL) < 0)
		wl_fail("make / private: %m");
	if (gone && umount(gone) < 0)
		wl_fail("umount %s: %m", gone);

	if (!strcmp(mode, "refused-ramfs")) {
		do_mount("wl-ramfs", "r", "ramfs", 0, NULL);
		return;
	}
	if (!strcmp(mode, "refused-block")) {
		if (!block_dev)
			wl_fail("refused-block needs a block device");
		do_mount(block_dev, "r", "ext4", 0, NULL);
		return;
	}
	if (!strcmp(mode, "refused-devpts")) {
		do_mount("wl-devpts", "r", "devpts", 0, "newinstance,ptmxmode=0666");
		/* A pty in it: its master open (an empty instance is restored). */
		path_of(p, sizeof(p), "r/ptmx");
		pty_fd = open(p, O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (pty_fd < 0)
			wl_fail("open %s: %m", p);
		return;
	}
	if (!strcmp(mode, "refused-root")) {
		pivot_into_tmpfs();
		return;
	}
	if (!strncmp(mode, "container", 9)) {
		container(!strcmp(mode, "container-outside-fd"), data, root2);
		return;
	}
	do_mount("wl-tmpfs", "t", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=750");
	mkdir_at("t/a", 0755);
	make_file("t/a/f", 0640, 1, 2, 5000, 7, t0);
	make_file("t/empty", 0604, 0, 0, 0, 0, t0 + 10);
	make_file("t/a/big", 04755, 1000, 1000, 300000, 9, t0 + 20);
	path_of(p, sizeof(p), "t/l");
	if (symlink("a/f", p) < 0 || lchown(p, 3, 4) < 0)
		wl_fail("symlink %s: %m", p);
	path_of(p, sizeof(p), "t/fifo");
	if (mkfifo(p, 0620) < 0)
		wl_fail("mkfifo %s: %m", p);
	path_of(p, sizeof(p), "t/null");
	if (mknod(p, S_IFCHR | 0666, makedev(1, 3)) < 0)
		wl_fail("mknod %s: %m", p);

	mkdir_at("t/inner", 0701);
	path_of(p, sizeof(p), "t/a");
	if (chown(p, 1000, 1000) < 0 || chmod(p, 0710) < 0)
		wl_fail("chown %s: %m", p);
	do_mount("wl-inner", "t/inner", "tmpfs", 0, "size=64k");
	make_file("t/inner/x", 0600, 5, 6, 100, 11, t0 + 30);
	/* Held open (t is nodev, inner is not): a device node on a tmpfs made anew. */
	path_of(p, sizeof(p), "t/inner/null");
	if (mknod(p, S_IFCHR | 0666, makedev(1, 3)) < 0)
		wl_fail("mknod %s: %m", p);
	null_fd = open(p, O_WRONLY | O_CLOEXEC);
	if (null_fd < 0)
		wl_fail("open %s: %m", p);
	do_mount(NULL, "t/inner", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOEXEC, NULL);
	do_mount(NULL, "t/inner", NULL, MS_UNBINDABLE, NULL);
	do_mount(NULL, "t", NULL, MS_SHARED, NULL);
	if (!strcmp(mode, "refused-peers")) {
		path_of(p, sizeof(p), "t");
		do_mount(p, "b", NULL, MS_BIND, NULL);
		return;
	}
	if (!strcmp(mode, "refused-fd")) {
		path_of(p, sizeof(p), "t/a/f");
		tmpfs_fd = open(p, O_RDONLY | O_CLOEXEC);
		if (tmpfs_fd < 0)
			wl_fail("open %s: %m", p);
		return;
	}
	path_of(p, sizeof(p), "host");
	do_mount(p, "b", NULL, MS_BIND, NULL);
	do_mount(NULL, "b", NULL, MS_REMOUNT | MS_BIND | MS_NOEXEC, NULL);
	path_of(q, sizeof(q), "hostfile");
	do_mount(q, "bf", NULL, MS_BIND, NULL);
	do_mount(NULL, "bf", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL);
	do_mount("wl-proc", "p", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	do_mount("wl-sysfs", "s", "sysfs", MS_RDONLY, NULL);
	do_mount("wl-mqueue", "q", "mqueue", 0, NULL);
	/* A devpts of its own, as runc makes it, and binds of parts of the proc made here. */
	do_mount("wl-devpts", "pt", "devpts", MS_NOSUID | MS_NOEXEC,
		 "newinstance,ptmxmode=0666,mode=0620,gid=5");
	path_of(p, sizeof(p), "p/sys");
	do_mount(p, "ps", NULL, MS_BIND, NULL);
	do_mount(NULL, "ps", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL);
	path_of(p, sizeof(p), "p/uptime");
	do_mount(p, "pu", NULL, MS_BIND, NULL);
	if (mount(NULL, "/dev/shm", NULL, MS_REMOUNT | MS_BIND | MS_NOEXEC, NULL) < 0)
		wl_downgrade("/dev/shm is not a mount here (%m): no copy of crf's changed");
	path_of(p, sizeof(p), "b/counter");
	counter_fd = open(p, O_WRONLY | O_CLOEXEC);
	path_of(p, sizeof(p), "bf");
	file_fd = open(p, O_RDONLY | O_CLOEXEC);
	if (counter_fd < 0 || file_fd < 0)
		wl_fail("open on the binds: %m");
	tick();
}

static void same_file(int fd, const char *rel)
{
	struct stat a, b;
	char p[4096];

	path_of(p, sizeof(p), rel);
	if (fstat(fd, &a) < 0 || stat(p, &b) < 0)
		wl_fail("stat %s: %m", p);
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		wl_fail("fd %d is not on %s any more", fd, p);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "restore";
	bool no_t = !strcmp(mode, "refused-ramfs") || !strcmp(mode, "refused-root") ||
		    !strcmp(mode, "refused-devpts") || !strcmp(mode, "refused-block");
	bool box = !strncmp(mode, "container", 9);
	const char *t_rel = box ? "/scratch" : "t",
		   *inner_rel = box ? "/proc/self/fdinfo" : "t/inner";
	const char *counter_rel = box ? "/data/counter" : "host/counter";
	static char now[65536];
	char tdir[4096];

	wl_init("mnt");
	bool ext = !strcmp(mode, "container-ext");

	mask_root = ext;
	block_dev = !strcmp(mode, "refused-block") && argc > 2 ? argv[2] : NULL;
	setup(mode, ext || argc <= 3 ? NULL : argv[3], ext && argc > 2 ? argv[2] : NULL,
	      ext && argc > 3 ? argv[3] : NULL);
	path_of(tdir, sizeof(tdir), "t");
	read_table(table, sizeof(table));
	if (!strcmp(mode, "slave") && !strstr(table, "master:"))
		wl_fail("slave: no mount is a slave of crf's (SHARED %s)",
			argc > 2 ? argv[2] : "?");
	/*
	 * Twice: the first walk reads the directories and the symlink, which sets
	 * their atimes (relatime); the second sees them as the dump will.
	 */
	for (int pass = 0; pass < 2 && !no_t; pass++) {
		tree_t[0] = tree_inner[0] = '\0';
		path_of(tdir, sizeof(tdir), t_rel);
		list_tree(tdir, ".", tree_t, sizeof(tree_t));
		path_of(tdir, sizeof(tdir), inner_rel);
		if (!box)
			list_tree(tdir, ".", tree_inner, sizeof(tree_inner));
	}
	wl_ready();
	while (!wl_verify_requested()) {
		if (counter_fd >= 0)
			tick();
		usleep(10000);
	}
	/* crf restore --root ROOT2: the root is ROOT2 now. */
	if (ext && access("/root2-marker", F_OK) < 0)
		wl_fail("the root is not ROOT2 (no /root2-marker): %m");
	read_table(now, sizeof(now));
	if (strcmp(now, table))
		wl_fail("mount table:\n%s\nwas:\n%s", now, table);
	if (!no_t) {
		now[0] = '\0';
		path_of(tdir, sizeof(tdir), t_rel);
		list_tree(tdir, ".", now, sizeof(now));
		if (strcmp(now, tree_t))
			wl_fail("tmpfs t:\n%s\nwas:\n%s", now, tree_t);
		now[0] = '\0';
		path_of(tdir, sizeof(tdir), inner_rel);
		if (!box)
			list_tree(tdir, ".", now, sizeof(now));
		if (strcmp(now, tree_inner))
			wl_fail("tmpfs t/inner:\n%s\nwas:\n%s", now, tree_inner);
	}
	if (null_fd >= 0) {
		struct stat st;

		if (fstat(null_fd, &st) < 0 || !S_ISCHR(st.st_mode) ||
		    st.st_rdev != makedev(1, 3) || write(null_fd, "x", 1) != 1)
			wl_fail("the fd on the tmpfs's t/null is not /dev/null's device: %m");
	}
	if (counter_fd >= 0) {
		char buf[64], want[64], p[4096];
		ssize_t n;

		same_file(counter_fd, counter_rel);
		if (file_fd >= 0 && !box)
			same_file(file_fd, "hostfile");
		tick();
		tick();
		path_of(p, sizeof(p), counter_rel);
		n = wl_read_file(p, buf, sizeof(buf) - 1);
		snprintf(want, sizeof(want), "%020lu\n", counter);
		if (n < 0 || (buf[n] = '\0', strcmp(buf, want)))
			wl_fail("counter file holds '%s', want '%s'", n < 0 ? "?" : buf, want);
	}
	if (tmpfs_fd >= 0)
		same_file(tmpfs_fd, "t/a/f");
	if (pty_fd >= 0)
		same_file(pty_fd, "r/ptmx");
	return 0;
}
