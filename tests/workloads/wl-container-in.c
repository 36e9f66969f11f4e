// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-container's inside: the container's init (PID 1 of its PID namespace,
 * run as /bin/wl-container from the busybox rootfs once pivoted into) and
 * what it forks.  See wl-container.c for the whole picture.
 *
 * The init sets up, inside every namespace the outside made: a file tree
 * on the tmpfs at /tmp, SysV message queue and semaphores (+ shared memory,
 * + a POSIX message queue, switches), sockets (a TCP listener, a UDP socket
 * connected to the host across the veth, TCP connections over lo and to the
 * host, switches), a shell that counts into /data/count in a user namespace
 * of its own, and the init of a nested PID namespace with a child.  It writes
 * /data/ready-init, then waits for /data/verify and checks every piece from
 * inside, byte for byte, then /data/stop for the shell; it exits 0 when all
 * is as it was and every child exited 0.  Messages go to /data/init.log.
 */
#include "wl-container.h"
#include "wl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SHM_SIZE 8192

static struct ctr_pieces P;
static int listener = -1, udp = -1, tcp_l = -1, tcp_c = -1, tcp_a = -1, tcp_h = -1;
static int msq = -1, sem = -1, shm = -1;
static void *shm_at;
static pid_t shell = -1, nested = -1;
static char table[32768], tree[8192], cgroups[4096], offsets[256], nspid[128];
static struct stat data_st;
static uint64_t mono0, boot0;

/* The counting shell (busybox ash), in its user namespace; %s: how it waits. */
static const char counter_sh[] =
	"echo \"$(id -u):$(id -g) $(cat /proc/self/uid_map)\" >/data/u-before\n"
	"i=0\n"
	"while [ ! -e /data/stop ]; do i=$((i+1)); echo $i >>/data/count; %s; done\n"
	"echo \"$(id -u):$(id -g) $(cat /proc/self/uid_map)\" >/data/u-after\n";

/* Poll /data/verify; fail once CRF_TEST_TIMEOUT (or 120 s) passed. */
static void wait_verify(void)
{
	if (!ctr_wait_file("/data/verify", getenv("CRF_TEST_TIMEOUT")
						   ? atoi(getenv("CRF_TEST_TIMEOUT")) + 30
						   : 120))
		wl_fail("no /data/verify came");
}

static void sa4(struct sockaddr_in *a, const char *ip, int port)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, ip, &a->sin_addr) != 1)
		wl_fail("address %s", ip);
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts) < 0)
		wl_fail("clock_gettime: %m");
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The mount table, canonical: per mount its place, its parent's place,
 * root, per-mount options, propagation (peer group numbers dropped), type,
 * source, superblock options, and the device for a filesystem of crf's
 * (the ones made in the container get a new one at the restore).  Sorted.
 */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void read_table(char *out, size_t len)
{
	static char text[32768];
	char *lines[256], *canon[256], *save = NULL, *l;
	unsigned int ids[256];
	char places[256][512];
	size_t n = 0;

	ctr_slurp("/proc/self/mountinfo", text, sizeof(text));
	for (l = strtok_r(text, "\n", &save); l && n < 256; l = strtok_r(NULL, "\n", &save)) {
		lines[n] = l;
		if (sscanf(l, "%u %*u %*s %*s %511s", &ids[n], places[n]) != 2)
			wl_fail("mountinfo line %s", l);
		n++;
	}
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char root[512], opts[512], dev[64], tags[512] = "", prop[512] = "";
		const char *pmp = "-", *dash = strstr(lines[i], " - "), *p = lines[i];
		unsigned int parent;
		char line[4096], *tok, *s2 = NULL;

		if (!dash ||
		    sscanf(lines[i], "%*u %u %63s %511s %*s %511s", &parent, dev, root, opts) != 4)
			wl_fail("mountinfo line %s", lines[i]);
		for (size_t k = 0; k < n; k++)
			if (ids[k] == parent)
				pmp = places[k];
		for (int f = 0; f < 6; f++)
			p = strchr(p, ' ') + 1;
		if (p < dash)
			snprintf(tags, sizeof(tags), "%.*s", (int)(dash - p), p);
		for (tok = strtok_r(tags, " ", &s2); tok; tok = strtok_r(NULL, " ", &s2)) {
			strcat(prop, !strncmp(tok, "shared:", 7) ? "shared" : tok);
			strcat(prop, ",");
		}
		if (!strncmp(dash + 3, "tmpfs ", 6) || !strncmp(dash + 3, "proc ", 5) ||
		    !strncmp(dash + 3, "mqueue ", 7))
			strcpy(dev, "new");
		snprintf(line, sizeof(line), "%.500s [%.500s] %.500s %.500s %.500s %s %.1000s\n",
			 places[i], pmp, root, opts, prop, dev, dash + 3);
		canon[i] = strdup(line);
		if (!canon[i])
			wl_fail("strdup");
	}
	qsort(canon, n, sizeof(canon[0]), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (strlen(out) + strlen(canon[i]) + 1 > len)
			wl_fail("mount table too long");
		strcat(out, canon[i]);
		free(canon[i]);
	}
}

/* /tmp's tree: a directory, files with modes, owners and times, a symlink. */
static void make_tree(void)
{
	struct timespec ts[2] = {{1600000000, 5}, {1600000100, 123456789}};
	char buf[3000];
	int fd;

	wl_fill(buf, sizeof(buf), 21);
	if (mkdir("/tmp/d", 0750) < 0 || chown("/tmp/d", 7, 8) < 0)
		wl_fail("mkdir /tmp/d: %m");
	fd = open("/tmp/d/f", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || close(fd) < 0 ||
	    chown("/tmp/d/f", 7, 8) < 0 || utimensat(AT_FDCWD, "/tmp/d/f", ts, 0) < 0)
		wl_fail("create /tmp/d/f: %m");
	if (symlink("d/f", "/tmp/l") < 0)
		wl_fail("symlink /tmp/l: %m");
}

static void list_tree(char *out, size_t len)
{
	static const char *const paths[] = {"/tmp", "/tmp/d", "/tmp/d/f", "/tmp/l"};
	char buf[4096], t[256];

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct stat st;
		size_t at = strlen(out);

		if (lstat(paths[i], &st) < 0)
			wl_fail("lstat %s: %m", paths[i]);
		snprintf(out + at, len - at, "%s %o %u:%u m%lld.%09ld", paths[i], st.st_mode,
			 st.st_uid, st.st_gid, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
		at = strlen(out);
		if (S_ISREG(st.st_mode)) {
			int fd = open(paths[i], O_RDONLY | O_NOATIME | O_CLOEXEC);
			ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));

			if (n < 0)
				wl_fail("read %s: %m", paths[i]);
			close(fd);
			snprintf(out + at, len - at, " %zd:%016llx", n,
				 (unsigned long long)wl_hash(buf, (size_t)n));
		} else if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(paths[i], t, sizeof(t) - 1);

			if (n < 0)
				wl_fail("readlink %s: %m", paths[i]);
			t[n] = '\0';
			snprintf(out + at, len - at, " -> %s", t);
		}
		at = strlen(out);
		snprintf(out + at, len - at, "\n");
	}
}

struct ctr_msg {
	long mtype;
	char mtext[32];
};

static void setup_ipc(void)
{
	struct ctr_msg m1 = {1, "first message"}, m2 = {7, "second, type 7"};
	unsigned short vals[3] = {1, 20, 300};

	if (P.sysv) {
		msq = msgget(CTR_IPC_KEY + 1, IPC_CREAT | IPC_EXCL | 0640);
		if (msq < 0 || msgsnd(msq, &m1, strlen(m1.mtext) + 1, 0) < 0 ||
		    msgsnd(msq, &m2, strlen(m2.mtext) + 1, 0) < 0)
			wl_fail("SysV message queue: %m");
		sem = semget(CTR_IPC_KEY + 2, 3, IPC_CREAT | IPC_EXCL | 0600);
		if (sem < 0 || semctl(sem, 0, SETALL, vals) < 0)
			wl_fail("SysV semaphores: %m");
	}
	if (P.shm) {
		shm = shmget(CTR_IPC_KEY + 3, SHM_SIZE, IPC_CREAT | IPC_EXCL | 0600);
		shm_at = shm < 0 ? (void *)-1 : shmat(shm, NULL, 0);
		if (shm_at == (void *)-1)
			wl_fail("SysV shared memory: %m");
		wl_fill(shm_at, SHM_SIZE, 31);
		if (!P.shmat && shmdt(shm_at) < 0)
			wl_fail("shmdt: %m");
	}
	if (P.mqueue) {
		struct mq_attr a = {.mq_maxmsg = 4, .mq_msgsize = 64};
		mqd_t q = mq_open("/crf-ctr", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600, &a);

		if (q == (mqd_t)-1 || mq_send(q, "low", 4, 1) < 0 || mq_send(q, "high", 5, 9) < 0 ||
		    mq_close(q) < 0)
			wl_fail("POSIX message queue: %m");
	}
}

static void check_ipc(void)
{
	if (P.sysv) {
		struct ctr_msg m;
		unsigned short vals[3];
		struct msqid_ds ds;

		WL_CHECK(msgctl(msq, IPC_STAT, &ds) == 0 && ds.msg_qnum == 2 &&
				 (ds.msg_perm.mode & 0777) == 0640 &&
				 ds.msg_perm.__key == CTR_IPC_KEY + 1,
			 "message queue %d: %m", msq);
		WL_CHECK(msgrcv(msq, &m, sizeof(m.mtext), 0, IPC_NOWAIT) > 0 && m.mtype == 1 &&
				 !strcmp(m.mtext, "first message"),
			 "first message: %m");
		WL_CHECK(msgrcv(msq, &m, sizeof(m.mtext), 0, IPC_NOWAIT) > 0 && m.mtype == 7 &&
				 !strcmp(m.mtext, "second, type 7"),
			 "second message: %m");
		WL_CHECK(semctl(sem, 0, GETALL, vals) == 0 && vals[0] == 1 && vals[1] == 20 &&
				 vals[2] == 300,
			 "semaphores: %m");
		WL_CHECK(msgctl(msq, IPC_RMID, NULL) == 0 && semctl(sem, 0, IPC_RMID) == 0,
			 "remove: %m");
	}
	if (P.shm) {
		void *at = P.shmat ? shm_at : shmat(shm, NULL, SHM_RDONLY);
		ssize_t off;

		WL_CHECK(at != (void *)-1, "shmat %d: %m", shm);
		off = wl_cmp_fill(at, SHM_SIZE, 31);
		WL_CHECK(off < 0, "shared memory: byte %zd differs", off);
		WL_CHECK(shmdt(at) == 0 && shmctl(shm, IPC_RMID, NULL) == 0, "shm: %m");
	}
	if (P.mqueue) {
		mqd_t q = mq_open("/crf-ctr", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		struct mq_attr a;
		char buf[64];
		unsigned int prio;

		WL_CHECK(q != (mqd_t)-1 && mq_getattr(q, &a) == 0 && a.mq_curmsgs == 2 &&
				 a.mq_maxmsg == 4 && a.mq_msgsize == 64,
			 "POSIX message queue: %m");
		WL_CHECK(mq_receive(q, buf, sizeof(buf), &prio) == 5 && prio == 9 &&
				 !strcmp(buf, "high"),
			 "first POSIX message: %m");
		WL_CHECK(mq_receive(q, buf, sizeof(buf), &prio) == 4 && prio == 1 &&
				 !strcmp(buf, "low"),
			 "second POSIX message: %m");
		mq_close(q);
		mq_unlink("/crf-ctr");
	}
}

static void setup_sockets(void)
{
	struct sockaddr_in a;
	int one = 1;

	if (P.listener) {
		sa4(&a, CTR_IN_IP, CTR_LISTEN_PORT);
		listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (listener < 0 || setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, 4) ||
		    bind(listener, (void *)&a, sizeof(a)) || listen(listener, 4))
			wl_fail("TCP listener: %m");
	}
	if (P.udp) {
		udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		sa4(&a, CTR_IN_IP, CTR_UDP_PORT);
		if (udp < 0 || bind(udp, (void *)&a, sizeof(a)))
			wl_fail("UDP socket: %m");
		sa4(&a, CTR_HOST_IP, CTR_UDP_PORT);
		if (connect(udp, (void *)&a, sizeof(a)))
			wl_fail("UDP connect: %m");
	}
	if (P.tcp) {
		sa4(&a, "127.0.0.1", CTR_TCP_IN_PORT);
		tcp_l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (tcp_l < 0 || setsockopt(tcp_l, SOL_SOCKET, SO_REUSEADDR, &one, 4) ||
		    bind(tcp_l, (void *)&a, sizeof(a)) || listen(tcp_l, 4))
			wl_fail("TCP listener on lo: %m");
		tcp_c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (tcp_c < 0 || connect(tcp_c, (void *)&a, sizeof(a)) ||
		    (tcp_a = accept4(tcp_l, NULL, NULL, SOCK_CLOEXEC)) < 0)
			wl_fail("TCP connection over lo: %m");
		/* Data queued both ways across the dump. */
		if (write(tcp_c, "c-to-a", 6) != 6 || write(tcp_a, "a-to-c", 6) != 6)
			wl_fail("TCP write: %m");
	}
	if (P.tcp_host) {
		sa4(&a, CTR_HOST_IP, CTR_TCP_HOST_PORT);
		tcp_h = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (tcp_h < 0 || connect(tcp_h, (void *)&a, sizeof(a)) ||
		    write(tcp_h, "c2h", 3) != 3)
			wl_fail("TCP connection to the host: %m");
	}
}

static void read_exact(int fd, const char *want, const char *what)
{
	char buf[64];
	size_t n = strlen(want), got = 0;
	struct timeval tv = {10, 0};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (got < n) {
		ssize_t k = read(fd, buf + got, n - got);

		if (k <= 0)
			wl_fail("%s: read: %s", what, k < 0 ? strerror(errno) : "end of file");
		got += (size_t)k;
	}
	if (memcmp(buf, want, n))
		wl_fail("%s: read '%.*s', want '%s'", what, (int)n, buf, want);
}

static void check_sockets(void)
{
	struct sockaddr_in a;

	if (P.listener) {
		int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), s;

		sa4(&a, CTR_IN_IP, CTR_LISTEN_PORT);
		WL_CHECK(c >= 0 && connect(c, (void *)&a, sizeof(a)) == 0,
			 "connect to the listener: %m");
		s = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
		WL_CHECK(s >= 0 && write(c, "hi", 2) == 2, "accept: %m");
		read_exact(s, "hi", "the listener's connection");
		close(s);
		close(c);
	}
	if (P.udp) {
		char got[8] = "";
		struct timeval tv = {10, 0};

		WL_CHECK(setsockopt(udp, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0 &&
				 send(udp, "ping", 4, 0) == 4,
			 "UDP send across the veth: %m");
		WL_CHECK(recv(udp, got, sizeof(got), 0) == 4 && !memcmp(got, "pong", 4),
			 "no UDP answer from %s across the veth: %m", CTR_HOST_IP);
	}
	if (P.tcp) {
		read_exact(tcp_a, "c-to-a", "TCP over lo, accepted end");
		read_exact(tcp_c, "a-to-c", "TCP over lo, connecting end");
		WL_CHECK(write(tcp_c, "more", 4) == 4, "TCP write: %m");
		read_exact(tcp_a, "more", "TCP over lo after the restore");
	}
	if (P.tcp_host) {
		read_exact(tcp_h, "h2c", "TCP from the host");
		WL_CHECK(write(tcp_h, "bye", 3) == 3, "TCP write to the host: %m");
	}
}

/* NSpid of /proc/self/status. */
static void read_nspid(char *out, size_t len)
{
	wl_status_field("NSpid", out, len);
}

/* The nested PID namespace's init and its child: their NSpid must stay. */
static int nested_init(void)
{
	char before[128], now[128];
	pid_t child;
	int status;

	wl_init("container-nested");
	ctr_own_log(&P, "/data/nested.log");
	if (!P.shared_sock && syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
		wl_fail("close_range: %m");
	child = fork();
	if (child < 0)
		wl_fail("fork: %m");
	read_nspid(before, sizeof(before));
	if (child == 0) {
		wl_init("container-nested-child");
		ctr_own_log(&P, "/data/nested-child.log");
		wait_verify();
		read_nspid(now, sizeof(now));
		if (strcmp(now, before))
			wl_fail("NSpid is '%s', was '%s'", now, before);
		_exit(0);
	}
	if (getpid() != 1)
		wl_fail("the nested init is pid %d, not 1", (int)getpid());
	wait_verify();
	read_nspid(now, sizeof(now));
	if (strcmp(now, before))
		wl_fail("NSpid is '%s', was '%s'", now, before);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		wl_fail("its child: status %#x", status);
	return 0;
}

/* A shell in a user namespace of its own (the init writes its maps). */
static void start_shell(void)
{
	int up[2], down[2];
	char c, p[64], map[64], script[1024];

	if (pipe2(up, O_CLOEXEC) < 0 || pipe2(down, O_CLOEXEC) < 0)
		wl_fail("pipe: %m");
	shell = fork();
	if (shell < 0)
		wl_fail("fork: %m");
	if (shell == 0) {
		if (P.userns && unshare(CLONE_NEWUSER) < 0)
			wl_fail("unshare(CLONE_NEWUSER): %m");
		if (write(up[1], "u", 1) != 1 || read(down[0], &c, 1) != 1)
			wl_fail("shell: pipe: %m");
		if (P.userns &&
		    (setgroups(0, NULL) < 0 || setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0))
			wl_fail("shell: become root of its namespace: %m");
		/* Its (and its usleep children's) fds 1-2 on /dev/null, of its own. */
		ctr_own_log(&P, "/dev/null");
		snprintf(script, sizeof(script), counter_sh,
			 P.shared ? "usleep 20000" : "read -t 0.02 x <>/data/tick");
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		wl_fail("exec /bin/sh: %m");
	}
	if (read(up[0], &c, 1) != 1)
		wl_fail("the shell did not start");
	if (P.userns) {
		snprintf(map, sizeof(map), "0 %d %d\n", CTR_UID_BASE, CTR_UID_COUNT);
		snprintf(p, sizeof(p), "/proc/%d/uid_map", (int)shell);
		ctr_put(p, map);
		snprintf(p, sizeof(p), "/proc/%d/gid_map", (int)shell);
		ctr_put(p, map);
	}
	if (write(down[1], "m", 1) != 1)
		wl_fail("pipe: %m");
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}

static void snapshot(void)
{
	read_table(table, sizeof(table));
	list_tree(tree, sizeof(tree));
	ctr_slurp("/proc/self/cgroup", cgroups, sizeof(cgroups));
	ctr_slurp("/proc/self/timens_offsets", offsets, sizeof(offsets));
	read_nspid(nspid, sizeof(nspid));
	if (stat("/data", &data_st) < 0)
		wl_fail("stat /data: %m");
	mono0 = clock_ns(CLOCK_MONOTONIC);
	boot0 = clock_ns(CLOCK_BOOTTIME);
}

static void check_all(void)
{
	static char now[32768];
	char name[128];
	struct stat st;

	read_table(now, sizeof(now));
	if (strcmp(now, table))
		wl_fail("mount table:\n%s\nwas:\n%s", now, table);
	list_tree(now, sizeof(now));
	if (strcmp(now, tree))
		wl_fail("/tmp:\n%s\nwas:\n%s", now, tree);
	ctr_slurp("/proc/self/cgroup", now, sizeof(now));
	if (strcmp(now, cgroups))
		wl_fail("/proc/self/cgroup:\n%s\nwas:\n%s", now, cgroups);
	ctr_slurp("/proc/self/timens_offsets", now, sizeof(now));
	if (strcmp(now, offsets))
		wl_fail("timens_offsets:\n%s\nwas:\n%s", now, offsets);
	WL_CHECK(clock_ns(CLOCK_MONOTONIC) >= mono0 && clock_ns(CLOCK_BOOTTIME) >= boot0,
		 "a clock went back");
	read_nspid(now, 128);
	WL_CHECK(!strcmp(now, nspid) && !strcmp(now, "1"), "NSpid '%s', was '%s'", now, nspid);
	WL_CHECK(stat("/data", &st) == 0 && st.st_dev == data_st.st_dev &&
			 st.st_ino == data_st.st_ino,
		 "/data is another directory");
	WL_CHECK(gethostname(name, sizeof(name)) == 0 && !strcmp(name, CTR_HOSTNAME),
		 "hostname '%s'", name);
	WL_CHECK(getdomainname(name, sizeof(name)) == 0 && !strcmp(name, CTR_DOMAIN),
		 "domainname '%s'", name);
	check_ipc();
	check_sockets();
}

int ctr_inside(int argc, char **argv)
{
	char pids[64];
	int status;

	wl_init("container-init");
	ctr_pieces(&P, argc > 2 ? argv[2] : "");
	if (getpid() != 1)
		wl_fail("the container's init is pid %d, not 1", (int)getpid());
	make_tree();
	setup_ipc();
	setup_sockets();
	start_shell();
	if (P.pidns) {
		nested = (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, NULL);
		if (nested < 0)
			wl_fail("clone(CLONE_NEWPID): %m");
		if (nested == 0)
			_exit(nested_init());
	}
	snprintf(pids, sizeof(pids), "%d %d\n", (int)shell, (int)nested);
	ctr_put("/data/pids", pids);
	/* Once the shell counts (and wrote its ids), and the clocks ran a little. */
	if (!ctr_wait_file("/data/u-before", 10) || !ctr_wait_file("/data/count", 10))
		wl_fail("the shell does not count");
	snapshot();
	ctr_put("/data/ready-init", "");
	wait_verify();
	check_all();
	ctr_put("/data/stop", "");
	if (waitpid(shell, &status, 0) != shell || !WIFEXITED(status) || WEXITSTATUS(status))
		wl_fail("the counting shell: status %#x", status);
	if (nested > 0 &&
	    (waitpid(nested, &status, 0) != nested || !WIFEXITED(status) || WEXITSTATUS(status)))
		wl_fail("the nested PID namespace's init: status %#x", status);
	return 0;
}
