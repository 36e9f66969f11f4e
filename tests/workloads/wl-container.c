// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-container ROOTFS HOSTDIR [PIECES]: a whole container, made here as a
 * runtime makes one, and checked from outside and from inside.
 *
 * This process (the "runtime", in the host's namespaces, the root of the
 * dumped tree) clones the container's init I into a new PID namespace,
 * puts it into cgroups of its own with limits (cgroup v2 and the v1
 * memory, pids and cpu hierarchies, below its own: tests/e2e/container.sh
 * runs it with the harness's --own-cgroup --own-cgroups-v1), and I unshares
 * mount, net, UTS, IPC, cgroup and time namespaces (offsets monotonic +1000 s,
 * boottime +2000 s; I joins it), sets its host and domain names.  The runtime
 * then makes a veth pair, CTR_HOST_IF with 10.89.0.1/24 here and eth0 with
 * 10.89.0.2/24 and a default route inside (ip(8) through nsenter, as a CNI
 * plugin does), and forks H, its peer on the host (a UDP socket, a TCP
 * listener).  I pivots into ROOTFS (a busybox rootfs, tests/lib/busybox-
 * rootfs.sh, with this program copied to /bin/wl-container: it is static),
 * bound on itself, with a fresh /proc, a tmpfs at /tmp, HOSTDIR bound at
 * /data, /dev/null bound, and execs /bin/wl-container init PIECES
 * (wl-container-in.c: the rest is made inside).
 *
 * Checked from outside, before the dump and after the restore (the same
 * text): every container process's NSpid, ids, namespaces (which are the
 * same as which, as labels), cgroups; the shell's uid and gid maps; I's time
 * offsets; the host's end of the veth and the container's links, addresses
 * and routes seen from here; the host name; the cgroups' limits.  Then the
 * shell's count goes on after the restore, is 1, 2, 3... without a gap or a
 * repeat, and its ids and maps as it saw them inside are the same at its end
 * as at its start; H gets the container's datagram (and TCP data) and
 * answers; I's own checks pass (its exit status).
 *
 * PIECES (wl-container.h): a comma list of +NAME / -NAME changing the
 * default set; refused-vxlan adds a vxlan link inside, refused-block=DEV
 * mounts DEV (an ext4) at /mnt inside.
 */
#include "wl-container.h"
#include "wl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define SNAP_MAX (128 * 1024)

static struct ctr_pieces P;
static const char *rootfs, *hostdir, *spec;
static pid_t init_pid = -1, peer_pid = -1;
static int host_udp = -1, host_tcp = -1;
static char before[SNAP_MAX], after[SNAP_MAX];
/* The cgroups made: directory and the limits written there. */
static char cg_dirs[4][2100];
static int n_cg;

void ctr_pieces(struct ctr_pieces *p, const char *s)
{
	char buf[1024], *save = NULL;

	*p = (struct ctr_pieces){.udp = true,
				 .listener = true,
				 .sysv = true,
				 .userns = true,
				 .pidns = true,
				 .cgroup = true,
				 .timens = true};
	snprintf(buf, sizeof(buf), "%s", s ? s : "");
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		bool on = *w != '-';
		const char *n = (*w == '+' || *w == '-') ? w + 1 : w;
		static const struct {
			const char *name;
			size_t off;
		} names[] = {
#define PIECE(f) {#f, offsetof(struct ctr_pieces, f)}
			PIECE(udp),    PIECE(listener), PIECE(tcp),    PIECE(shm),   PIECE(shmat),
			PIECE(mqueue), PIECE(mqmount),	PIECE(userns), PIECE(pidns), PIECE(cgroup),
			PIECE(timens), PIECE(sysv),	PIECE(shared),
#undef PIECE
		};
		size_t i;

		if (!strcmp(n, "tcp-host")) {
			p->tcp_host = on;
			continue;
		}
		if (!strcmp(n, "shared-sock")) {
			p->shared_sock = on;
			continue;
		}
		if (!strcmp(n, "refused-vxlan")) {
			p->vxlan = "crfctrvx0";
			continue;
		}
		if (!strncmp(n, "refused-block=", 14)) {
			p->block = strdup(n + 14);
			continue;
		}
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(n, names[i].name)) {
				*(bool *)((char *)p + names[i].off) = on;
				break;
			}
		if (i == sizeof(names) / sizeof(names[0]))
			wl_fail("unknown piece '%s'", w);
	}
	if (p->shmat)
		p->shm = true;
}

void ctr_slurp(const char *path, char *buf, size_t size)
{
	ssize_t n = wl_read_file(path, buf, size);

	if (n < 0)
		wl_fail("read %s: %s", path, strerror((int)-n));
}

void ctr_put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t n = strlen(text);

	if (fd < 0 || write(fd, text, n) != (ssize_t)n || close(fd) < 0)
		wl_fail("write %s: %m", path);
}

void ctr_own_log(const struct ctr_pieces *p, const char *path)
{
	int fd;

	if (p->shared)
		return;
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || dup2(fd, 0) < 0 || close(fd) < 0)
		wl_fail("fd 0 on /dev/null: %m");
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || close(fd) < 0)
		wl_fail("fds 1-2 on %s: %m", path);
}

bool ctr_wait_file(const char *path, int secs)
{
	for (long i = 0; i < secs * 100L; i++) {
		if (access(path, F_OK) == 0)
			return true;
		usleep(10000);
	}
	return false;
}

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	r = system(cmd);
	if (r != 0)
		wl_fail("'%s' exited with %d", cmd, r);
}

/* The output of @cmd appended to @buf. */
static void capture(const char *cmd, char *buf)
{
	size_t at = strlen(buf), n;
	FILE *p = popen(cmd, "r");

	if (!p)
		wl_fail("popen %s: %m", cmd);
	at += (size_t)snprintf(buf + at, SNAP_MAX - at, "$ %s\n", cmd);
	while (at < SNAP_MAX - 1 && (n = fread(buf + at, 1, SNAP_MAX - 1 - at, p)) > 0)
		at += n;
	buf[at] = '\0';
	if (pclose(p) != 0)
		wl_fail("'%s' failed", cmd);
}

static void appendf(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void appendf(char *buf, const char *fmt, ...)
{
	size_t at = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + at, SNAP_MAX - at, fmt, ap);
	va_end(ap);
}

static void host_path(char *out, size_t len, const char *rel)
{
	snprintf(out, len, "%s/%s", hostdir, rel);
}

/* ---- cgroups ---- */

/* The mount point of cgroup2 (@ctl NULL) or of the v1 hierarchy with @ctl. */
static bool cg_mount(const char *ctl, char *out, size_t len)
{
	static char text[65536];
	char *save = NULL;

	ctr_slurp("/proc/self/mountinfo", text, sizeof(text));
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char mp[1024], type[64], src[256], opts[1024], *dash = strstr(l, " - "), want[80];

		if (!dash || sscanf(l, "%*s %*s %*s %*s %1023s", mp) != 1 ||
		    sscanf(dash + 3, "%63s %255s %1023s", type, src, opts) != 3)
			continue;
		snprintf(want, sizeof(want), ",%s,", ctl ? ctl : "");
		memmove(opts + 1, opts, strlen(opts) + 1);
		opts[0] = ',';
		strcat(opts, ",");
		if ((!ctl && !strcmp(type, "cgroup2")) ||
		    (ctl && !strcmp(type, "cgroup") && strstr(opts, want))) {
			snprintf(out, len, "%s", mp);
			return true;
		}
	}
	return false;
}

/* Our cgroup in the hierarchy of @ctl (NULL: v2), from /proc/self/cgroup. */
static bool cg_own(const char *ctl, char *out, size_t len)
{
	static char text[8192];
	char *save = NULL;

	ctr_slurp("/proc/self/cgroup", text, sizeof(text));
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, want[80];

		if (!c2)
			continue;
		*c2 = '\0';
		snprintf(want, sizeof(want), ",%s,", ctl ? ctl : "");
		char ctls[256];

		snprintf(ctls, sizeof(ctls), ",%s,", c1 + 1);
		if ((!ctl && !strcmp(c1 + 1, "")) || (ctl && strstr(ctls, want))) {
			snprintf(out, len, "%s", !strcmp(c2 + 1, "/") ? "" : c2 + 1);
			return true;
		}
	}
	return false;
}

static const struct {
	const char *ctl; /* NULL: cgroup v2 */
	const char *files[2][2];
} cg_limits[] = {
	{NULL, {{"cgroup.max.descendants", "2"}, {"cgroup.max.depth", "1"}}},
	{"memory",
	 {{"memory.limit_in_bytes", "268435456"}, {"memory.soft_limit_in_bytes", "134217728"}}},
	{"pids", {{"pids.max", "64"}, {NULL, NULL}}},
	{"cpu", {{"cpu.shares", "512"}, {"cpu.cfs_quota_us", "50000"}}},
};

static void make_cgroups(void)
{
	for (size_t i = 0; i < sizeof(cg_limits) / sizeof(cg_limits[0]); i++) {
		char mnt[1024], own[1024], p[2200];

		if (!cg_mount(cg_limits[i].ctl, mnt, sizeof(mnt)) ||
		    !cg_own(cg_limits[i].ctl, own, sizeof(own))) {
			wl_downgrade("no cgroup hierarchy %s here", cg_limits[i].ctl ?: "v2");
			continue;
		}
		snprintf(cg_dirs[n_cg], sizeof(cg_dirs[0]), "%s%s/crf-ctr", mnt, own);
		if (mkdir(cg_dirs[n_cg], 0755) < 0)
			wl_fail("mkdir %s: %m", cg_dirs[n_cg]);
		for (int k = 0; k < 2 && cg_limits[i].files[k][0]; k++) {
			snprintf(p, sizeof(p), "%s/%s", cg_dirs[n_cg], cg_limits[i].files[k][0]);
			ctr_put(p, cg_limits[i].files[k][1]);
		}
		n_cg++;
	}
}

static void enter_cgroups(pid_t pid)
{
	char p[2200], v[32];

	snprintf(v, sizeof(v), "%d", (int)pid);
	for (int i = 0; i < n_cg; i++) {
		snprintf(p, sizeof(p), "%.2000s/cgroup.procs", cg_dirs[i]);
		ctr_put(p, v);
	}
}

static void remove_cgroups(void)
{
	for (int i = 0; i < n_cg; i++)
		for (int k = 0; k < 200 && rmdir(cg_dirs[i]) < 0 && errno == EBUSY; k++)
			usleep(10000);
}

/* ---- the container's init, before its exec ---- */

static _Noreturn void container_init(int rd, int wr)
{
	char c, p[4096], log[4096];
	int fd, flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC;

	if (read(rd, &c, 1) != 1) /* in its cgroups */
		_exit(1);
	if (P.cgroup)
		flags |= CLONE_NEWCGROUP;
	if (unshare(flags) < 0)
		wl_fail("unshare(%#x): %m", flags);
	if (P.timens) {
		if (unshare(CLONE_NEWTIME) < 0)
			wl_fail("unshare(CLONE_NEWTIME): %m");
		ctr_put("/proc/self/timens_offsets", "monotonic 1000 0\nboottime 2000 0\n");
		fd = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, CLONE_NEWTIME) < 0 || close(fd) < 0)
			wl_fail("join its time namespace: %m");
	}
	if (sethostname(CTR_HOSTNAME, strlen(CTR_HOSTNAME)) < 0 ||
	    setdomainname(CTR_DOMAIN, strlen(CTR_DOMAIN)) < 0)
		wl_fail("set the names: %m");
	if (write(wr, "n", 1) != 1 || read(rd, &c, 1) != 1) /* the veth is there */
		_exit(1);

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(rootfs, rootfs, NULL, MS_BIND, NULL) < 0)
		wl_fail("bind %s: %m", rootfs);
	snprintf(p, sizeof(p), "%s/proc", rootfs);
	if (mount("ctr-proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		wl_fail("mount proc: %m");
	snprintf(p, sizeof(p), "%s/tmp", rootfs);
	if (mount("ctr-tmp", p, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=1777") < 0)
		wl_fail("mount tmpfs: %m");
	snprintf(p, sizeof(p), "%s/data", rootfs);
	if (mount(hostdir, p, NULL, MS_BIND, NULL) < 0)
		wl_fail("bind %s: %m", hostdir);
	snprintf(p, sizeof(p), "%s/dev/null", rootfs);
	if (close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0 ||
	    mount("/dev/null", p, NULL, MS_BIND, NULL) < 0)
		wl_fail("bind /dev/null: %m");
	if (P.mqmount) {
		snprintf(p, sizeof(p), "%s/dev/mqueue", rootfs);
		if ((mkdir(p, 0755) < 0 && errno != EEXIST) ||
		    mount("ctr-mqueue", p, "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
			wl_fail("mount mqueue: %m");
	}
	if (P.block) {
		snprintf(p, sizeof(p), "%s/mnt", rootfs);
		if ((mkdir(p, 0755) < 0 && errno != EEXIST) ||
		    mount(P.block, p, "ext4", 0, NULL) < 0)
			wl_fail("mount %s: %m", P.block);
	}
	if (chdir(rootfs) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		wl_fail("pivot_root %s: %m", rootfs);
	/* fds 0-2 reopened in the container, as a runtime sets them up. */
	snprintf(log, sizeof(log), "/data/init.log");
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || dup2(fd, 0) < 0 || close(fd) < 0)
		wl_fail("reopen fd 0: %m");
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0666);
	if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || close(fd) < 0)
		wl_fail("reopen fds 1-2 on %s: %m", log);
	/* Nothing of the host's open in the container (a runtime closes all). */
	if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
		wl_fail("close_range: %m");
	execl("/bin/wl-container", "wl-container", "init", spec, (char *)NULL);
	wl_fail("exec /bin/wl-container: %m");
}

/* ---- the network ---- */

static void setup_veth(void)
{
	char nsn[64];

	snprintf(nsn, sizeof(nsn), "nsenter --net=/proc/%d/ns/net", (int)init_pid);
	sh("ip link add " CTR_HOST_IF " type veth peer name eth0 netns %d && "
	   "ip addr add " CTR_HOST_IP "/24 dev " CTR_HOST_IF " && ip link set " CTR_HOST_IF " up",
	   (int)init_pid);
	sh("%s sh -c 'ip link set lo up && ip link set eth0 up && "
	   "ip addr add " CTR_IN_IP "/24 dev eth0 && ip route add default via " CTR_HOST_IP "'",
	   nsn);
	if (P.vxlan)
		sh("%s ip link add %s type vxlan id 42 dstport 4789", nsn, P.vxlan);
	/* Both ends' link-local addresses out of duplicate address detection. */
	for (int i = 0; i < 500; i++) {
		char out[SNAP_MAX] = "", cmd[256];

		capture("ip -6 addr show dev " CTR_HOST_IF " tentative", out);
		snprintf(cmd, sizeof(cmd), "%s ip -6 addr show tentative", nsn);
		capture(cmd, out);
		if (!strstr(out, "inet6"))
			return;
		usleep(10000);
	}
	wl_fail("the veth's link-local addresses stay tentative");
}

static void sa4(struct sockaddr_in *a, const char *ip, int port)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, ip, &a->sin_addr);
}

/* H: the container's peer on the host, on the sockets made before its fork. */
static _Noreturn void host_peer(void)
{
	struct sockaddr_in from;
	socklen_t len = sizeof(from);
	struct timeval tv = {20, 0};
	char got[8], p[4096];
	int conn = -1;

	wl_init("container-host-peer");
	if (host_tcp >= 0) {
		setsockopt(host_tcp, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		conn = accept(host_tcp, NULL, NULL);
		if (conn < 0)
			wl_fail("accept the container's connection: %m");
	}
	host_path(p, sizeof(p), "verify");
	if (!ctr_wait_file(p, 600))
		wl_fail("no verify");
	if (host_udp >= 0) {
		setsockopt(host_udp, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (recvfrom(host_udp, got, sizeof(got), 0, (void *)&from, &len) != 4 ||
		    memcmp(got, "ping", 4) ||
		    sendto(host_udp, "pong", 4, 0, (void *)&from, len) != 4)
			wl_fail("the container's datagram: %m");
	}
	if (conn >= 0) {
		setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (read(conn, got, 3) != 3 || memcmp(got, "c2h", 3) ||
		    write(conn, "h2c", 3) != 3 || read(conn, got, 3) != 3 || memcmp(got, "bye", 3))
			wl_fail("the container's TCP connection: %m");
	}
	_exit(0);
}

static void start_peer(void)
{
	struct sockaddr_in a;
	int one = 1;

	if (P.udp) {
		sa4(&a, CTR_HOST_IP, CTR_UDP_PORT);
		host_udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (host_udp < 0 || bind(host_udp, (void *)&a, sizeof(a)))
			wl_fail("host UDP socket: %m");
	}
	if (P.tcp_host) {
		sa4(&a, CTR_HOST_IP, CTR_TCP_HOST_PORT);
		host_tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (host_tcp < 0 || setsockopt(host_tcp, SOL_SOCKET, SO_REUSEADDR, &one, 4) ||
		    bind(host_tcp, (void *)&a, sizeof(a)) || listen(host_tcp, 1))
			wl_fail("host TCP listener: %m");
	}
	peer_pid = fork();
	if (peer_pid < 0)
		wl_fail("fork: %m");
	if (peer_pid == 0)
		host_peer();
	if (host_udp >= 0)
		close(host_udp);
	if (host_tcp >= 0)
		close(host_tcp);
}

/* ---- from outside ---- */

static const char *const ns_kinds[] = {"mnt", "net", "uts", "ipc", "cgroup", "time", "pid", "user"};
static char ns_seen[64][64];
static int n_ns_seen;

/* A label for the namespace @pid is in (the same namespace, the same label). */
static int ns_label(pid_t pid, const char *kind)
{
	char p[64], link[64];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/ns/%s", (int)pid, kind);
	n = readlink(p, link, sizeof(link) - 1);
	if (n < 0)
		wl_fail("readlink %s: %m", p);
	link[n] = '\0';
	for (int i = 0; i < n_ns_seen; i++)
		if (!strcmp(ns_seen[i], link))
			return i;
	if (n_ns_seen == 64)
		wl_fail("too many namespaces");
	snprintf(ns_seen[n_ns_seen], sizeof(ns_seen[0]), "%s", link);
	return n_ns_seen++;
}

static void outside_proc(char *buf, pid_t pid, const char *who)
{
	char p[64], text[4096], v[256];

	appendf(buf, "== %s\n", who);
	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	ctr_slurp(p, text, sizeof(text));
	for (const char *k = "NSpid:\0Uid:\0Gid:\0Groups:\0"; *k; k += strlen(k) + 1) {
		char *l = strstr(text, k);

		if (!l)
			wl_fail("%s: no %s", p, k);
		snprintf(v, sizeof(v), "%.*s", (int)strcspn(l, "\n"), l);
		appendf(buf, "%s\n", v);
	}
	for (size_t i = 0; i < sizeof(ns_kinds) / sizeof(ns_kinds[0]); i++)
		appendf(buf, "%s:%d ", ns_kinds[i], ns_label(pid, ns_kinds[i]));
	appendf(buf, "\n");
	snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pid);
	ctr_slurp(p, text, sizeof(text));
	appendf(buf, "%s", text);
}

/* The host PID of the child of @parent whose PID in @parent's namespace is @inner. */
static pid_t child_by_inner(pid_t parent, int inner)
{
	char p[64], text[1024], st[4096];
	char *save = NULL;

	snprintf(p, sizeof(p), "/proc/%d/task/%d/children", (int)parent, (int)parent);
	ctr_slurp(p, text, sizeof(text));
	for (char *w = strtok_r(text, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
		int host = atoi(w), a, b;
		char *l;

		snprintf(p, sizeof(p), "/proc/%d/status", host);
		ctr_slurp(p, st, sizeof(st));
		l = strstr(st, "NSpid:");
		if (l && sscanf(l, "NSpid: %d %d", &a, &b) == 2 && b == inner)
			return host;
	}
	wl_fail("no child %d of %d", inner, (int)parent);
}

static void outside(char *buf)
{
	char p[4200], text[4096], nsn[96];
	int shell_in, nested_in;
	pid_t shell, nested = -1;

	buf[0] = '\0';
	n_ns_seen = 0;
	outside_proc(buf, getpid(), "runtime");
	outside_proc(buf, init_pid, "init");
	host_path(p, sizeof(p), "pids");
	ctr_slurp(p, text, sizeof(text));
	if (sscanf(text, "%d %d", &shell_in, &nested_in) != 2)
		wl_fail("%s: '%s'", p, text);
	shell = child_by_inner(init_pid, shell_in);
	outside_proc(buf, shell, "shell");
	for (const char *f = "uid_map\0gid_map\0setgroups\0"; *f; f += strlen(f) + 1) {
		snprintf(p, sizeof(p), "/proc/%d/%s", (int)shell, f);
		ctr_slurp(p, text, sizeof(text));
		appendf(buf, "%s: %s", f, text);
	}
	if (nested_in > 0) {
		nested = child_by_inner(init_pid, nested_in);
		outside_proc(buf, nested, "nested init");
		snprintf(p, sizeof(p), "/proc/%d/task/%d/children", (int)nested, (int)nested);
		ctr_slurp(p, text, sizeof(text));
		outside_proc(buf, atoi(text), "nested child");
	}
	snprintf(p, sizeof(p), "/proc/%d/timens_offsets", (int)init_pid);
	ctr_slurp(p, text, sizeof(text));
	appendf(buf, "timens_offsets: %s", text);
	capture("ip -br link show dev " CTR_HOST_IF "; ip -br -4 addr show dev " CTR_HOST_IF
		"; ip -4 route show dev " CTR_HOST_IF,
		buf);
	snprintf(nsn, sizeof(nsn), "nsenter --net=/proc/%d/ns/net", (int)init_pid);
	snprintf(p, sizeof(p), "%s ip -br link; %s ip -br -4 addr; %s ip -4 route", nsn, nsn, nsn);
	capture(p, buf);
	snprintf(p, sizeof(p), "nsenter --uts=/proc/%d/ns/uts sh -c 'hostname; domainname'",
		 (int)init_pid);
	capture(p, buf);
	for (int i = 0; i < n_cg; i++)
		for (size_t k = 0; k < sizeof(cg_limits) / sizeof(cg_limits[0]); k++)
			for (int f = 0; f < 2 && cg_limits[k].files[f][0]; f++) {
				snprintf(p, sizeof(p), "%.2000s/%s", cg_dirs[i],
					 cg_limits[k].files[f][0]);
				if (access(p, F_OK) < 0)
					continue;
				ctr_slurp(p, text, sizeof(text));
				appendf(buf, "%s: %s", p, text);
			}
}

static void fail_with_log(const char *fmt, const char *arg)
{
	char p[4096], log[3][2048] = {"", "", ""};

	host_path(p, sizeof(p), "init.log");
	wl_read_file(p, log[0], sizeof(log[0]));
	host_path(p, sizeof(p), "nested.log");
	wl_read_file(p, log[1], sizeof(log[1]));
	host_path(p, sizeof(p), "nested-child.log");
	wl_read_file(p, log[2], sizeof(log[2]));
	wl_fail("%s %s; the container's logs:\n%s%s%s", fmt, arg, log[0], log[1], log[2]);
}

/* Lines 1, 2, 3... N of the shell's count; N. */
static long check_count(void)
{
	static char text[1 << 20];
	char p[4096], *save = NULL;
	long want = 1;

	host_path(p, sizeof(p), "count");
	ctr_slurp(p, text, sizeof(text));
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save), want++)
		if (atol(l) != want)
			wl_fail("the shell's count: line %ld is '%s'", want, l);
	return want - 1;
}

static pid_t wait_child(pid_t pid, int secs, int *status)
{
	for (int i = 0; i < secs * 100; i++) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r != 0)
			return r;
		usleep(10000);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const files[] = {
		"count",    "ready-init", "verify",	      "stop", "u-before", "u-after",
		"init.log", "nested.log", "nested-child.log", "pids"};
	int down[2], up[2], status;
	char p[4096], a[256], b[256], c;
	long n0, n1;

	if (argc > 1 && !strcmp(argv[1], "init"))
		return ctr_inside(argc, argv);
	wl_init("container");
	if (argc < 3)
		wl_fail("usage: wl-container ROOTFS HOSTDIR [PIECES]");
	rootfs = argv[1];
	hostdir = argv[2];
	spec = argc > 3 ? argv[3] : "";
	ctr_pieces(&P, spec);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		host_path(p, sizeof(p), files[i]);
		if (unlink(p) < 0 && errno != ENOENT)
			wl_fail("unlink %s: %m", p);
	}
	/* The shell waits on this FIFO between counts (read -t: no child). */
	host_path(p, sizeof(p), "tick");
	if ((unlink(p) < 0 && errno != ENOENT) || mkfifo(p, 0666) < 0)
		wl_fail("mkfifo %s: %m", p);
	/* The shell writes here as uid 100000. */
	if (chmod(hostdir, 0777) < 0)
		wl_fail("chmod %s: %m", hostdir);
	if (P.cgroup)
		make_cgroups();
	if (pipe2(down, O_CLOEXEC) < 0 || pipe2(up, O_CLOEXEC) < 0)
		wl_fail("pipe: %m");
	init_pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, NULL);
	if (init_pid < 0)
		wl_fail("clone(CLONE_NEWPID): %m");
	if (init_pid == 0)
		container_init(down[0], up[1]);
	enter_cgroups(init_pid);
	if (write(down[1], "c", 1) != 1 || read(up[0], &c, 1) != 1)
		fail_with_log("the container's init died", "before its namespaces were made");
	setup_veth();
	start_peer();
	if (write(down[1], "v", 1) != 1)
		wl_fail("pipe: %m");
	close(down[0]);
	close(down[1]);
	close(up[0]);
	close(up[1]);
	host_path(p, sizeof(p), "ready-init");
	for (int i = 0; access(p, F_OK) < 0; i++) {
		if (i > 3000 || waitpid(init_pid, &status, WNOHANG) == init_pid)
			fail_with_log("the container did not get ready", "");
		usleep(10000);
	}
	outside(before);
	wl_ready();
	wl_wait_verify();
	outside(after);
	if (strcmp(before, after))
		wl_fail("from outside:\n%s\nwas:\n%s", after, before);
	/* The shell counts on after the restore. */
	n0 = check_count();
	for (int i = 0; (n1 = check_count()) < n0 + 5; i++) {
		if (i > 1000)
			wl_fail("the shell's count stays at %ld", n1);
		usleep(10000);
	}
	host_path(p, sizeof(p), "verify");
	ctr_put(p, "");
	if (wait_child(init_pid, 60, &status) != init_pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		fail_with_log("the container's init failed:", "its checks inside");
	if (wait_child(peer_pid, 30, &status) != peer_pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		wl_fail("the host's peer: status %#x", status);
	check_count();
	host_path(p, sizeof(p), "u-before");
	ctr_slurp(p, a, sizeof(a));
	host_path(p, sizeof(p), "u-after");
	ctr_slurp(p, b, sizeof(b));
	snprintf(p, sizeof(p), "%d", CTR_UID_BASE);
	if (strcmp(a, b) || (P.userns && (strncmp(a, "0:0 ", 4) || !strstr(a, p))))
		wl_fail("the shell's ids and map: '%s' at its end, '%s' at its start", b, a);
	remove_cgroups();
	return 0;
}
