// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-ipc [shm|mqueue]: an IPC namespace of the tree's own, restored by the ns
 * plugin.  unshare(CLONE_NEWIPC), then:
 *
 *   ipc sysctls changed (msgmnb, msgmax, msgmni, sem, shm_rmid_forced,
 *   shmmax, fs/mqueue/msg_max)
 *   a message queue with a key, owner 1000:1001, mode 0640, four messages
 *   of types 5, 1, 5, 9 (one empty), qbytes lowered; a private one at id
 *   4242 made by uid 1234 / gid 2345 (its cuid/cgid), with one message
 *   a semaphore set with a key, three semaphores 0, 42, 32767, mode 0604
 *
 * After the restore: a namespace not the one it started in, the same
 * sysctls, every object at its id with its key, owner, creator, mode,
 * queue size, messages (read in order, their types and bytes) and values;
 * a child forked before the unshare still in the first namespace, one
 * forked after it in the workload's.
 * shm: SysV shared memory segments too (kernel.shm_rmid_forced left 0): one
 * with a key, owner 1000:1001, mode 0640, SHM_LOCKED, 3 pages and 100 bytes
 * of which the first and the last are written (the two between holes),
 * attached by the workload and by child 'inside'; a private one at id 777
 * made by 1234:2345, mode 0604, 4 pages with only the third written,
 * attached by no one.  After the restore each at its id with its key,
 * owner, creator, mode, size, lock, attachments (the workload's at the
 * same address), every byte, and (where the host has no swap) only the
 * written pages in memory; kernel.shmmax lowered below the first one's size
 * after it was made.
 * shm-dest: a segment removed (IPC_RMID) while attached; shm-forced: an
 * unattached one while kernel.shm_rmid_forced is 1: both refused.
 * mqueue: POSIX message queues too (their fds closed): /crf-wl-ipc (4
 * messages of 64 bytes at most, owner 1000:1001, mode 0640 beyond the
 * umask) with messages of priorities 3, 1, 3, 7 (one empty), and an empty
 * /crf-wl-ipc-empty (2 of 4000, mode 0606).  After the dump (leave-running
 * too) and the restore: each with its sizes, owner, mode, and its messages
 * in order with their priorities and bytes.
 * mqueue-fd: as mqueue, and the workload alone (after its children were
 * forked) keeps fds open on both (read-only non-blocking; write-only, made
 * not close-on-exec): after the restore each on its queue with the same
 * F_GETFL and F_GETFD.  mqueue-fd-shared: the same fds open before child
 * 'inside' is forked (one description for two processes);
 * mqueue-fd-cloexec: the write one opened with O_CLOEXEC; mqueue-unlinked:
 * an fd on a queue unlinked since;
 * mqueue-host: an fd on a queue of the first IPC namespace (crf's,
 * unlinked at once so that nothing is left behind): all refused, the
 * queues intact after it.
 * mqueue-notify: a queue registered with mq_notify (its fd open, as the
 * registration needs): refused.
 * owned: the IPC namespace is unshared with a user namespace, which owns
 * it (no object in it): refused, as its objects' ids would be restored
 * as crf's user namespace sees them.
 * siblings: a child goes back to the first namespace and its child joins
 * the workload's with setns: two processes in it, neither's parent in it,
 * refused (the restore would make two); after it the grandchild is still
 * in the workload's namespace, its parent in the first, the objects whole.
 */
#include "wl.h"

#include <fcntl.h>
#include <mqueue.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *sysctls[][2] = {
	{"kernel/msgmnb", "20000"},	 {"kernel/msgmax", "4000"},
	{"kernel/msgmni", "77"},	 {"kernel/sem", "100\t3200\t16\t64"},
	{"kernel/shm_rmid_forced", "1"}, {"kernel/shmmax", "123456789"},
	{"fs/mqueue/msg_max", "17"},
};
static const struct {
	long type;
	const char *text;
} msgs[] = {{5, "first of five"}, {1, "one"}, {5, ""}, {9, "nine, the last"}};

#define KEY_Q	0x5eed01
#define KEY_SEM 0x5eed02
#define PRIV_ID 4242

static int q, priv, sem, shm = -1;

static void set(const char *name, const char *value)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, value, strlen(value)) != (ssize_t)strlen(value))
		wl_fail("write %s: %m", path);
	close(fd);
}

static void send(int id, long type, const char *text)
{
	struct {
		long type;
		char text[64];
	} m = {type, ""};

	snprintf(m.text, sizeof(m.text), "%s", text);
	if (msgsnd(id, &m, strlen(text), IPC_NOWAIT) < 0)
		wl_fail("msgsnd: %m");
}

static void setup(void)
{
	struct msqid_ds ds;
	struct semid_ds sds;
	unsigned short v[3] = {0, 42, 32767};
	char id[16];

	for (size_t i = 0; i < sizeof(sysctls) / sizeof(sysctls[0]); i++)
		set(sysctls[i][0], sysctls[i][1]);
	q = msgget(KEY_Q, IPC_CREAT | 0600);
	if (q < 0 || msgctl(q, IPC_STAT, &ds) < 0)
		wl_fail("msgget: %m");
	ds.msg_perm.uid = 1000;
	ds.msg_perm.gid = 1001;
	ds.msg_perm.mode = 0640;
	ds.msg_qbytes = 9000;
	if (msgctl(q, IPC_SET, &ds) < 0)
		wl_fail("msgctl IPC_SET: %m");
	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
		send(q, msgs[i].type, msgs[i].text);
	snprintf(id, sizeof(id), "%d", PRIV_ID);
	set("kernel/msg_next_id", id);
	if (setegid(2345) < 0 || seteuid(1234) < 0)
		wl_fail("seteuid: %m");
	priv = msgget(IPC_PRIVATE, 0666);
	if (seteuid(0) < 0 || setegid(0) < 0)
		wl_fail("seteuid back: %m");
	if (priv != PRIV_ID)
		wl_fail("msgget at id %d: %d %m", PRIV_ID, priv);
	send(priv, 3, "private");
	sem = semget(KEY_SEM, 3, IPC_CREAT | 0600);
	if (sem < 0 || semctl(sem, 0, SETALL, v) < 0 || semctl(sem, 0, IPC_STAT, &sds) < 0)
		wl_fail("semget: %m");
	sds.sem_perm.mode = 0604;
	if (semctl(sem, 0, IPC_SET, &sds) < 0)
		wl_fail("semctl IPC_SET: %m");
}

#define KEY_SHM	 0x5eed03
#define SHM_PRIV 777
#define SHM_TAIL 100

static char *shm_at;
static int shm_priv = -1;
static long page;

static void fill_page(char *p, size_t len, int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (char)(seed + i * 7 + (i >> 8));
}

static bool is_page(const char *p, size_t len, int seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (char)(seed + i * 7 + (i >> 8)))
			return false;
	return true;
}

static bool is_zero(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

static void shm_setup(const char *mode)
{
	struct shmid_ds ds;
	char id[16], *p;

	page = sysconf(_SC_PAGESIZE);
	if (!strcmp(mode, "shm-forced")) {
		if (shmget(KEY_SHM, 8192, IPC_CREAT | 0600) < 0)
			wl_fail("shmget: %m");
		return;
	}
	shm = shmget(KEY_SHM, 3 * page + SHM_TAIL, IPC_CREAT | 0600);
	shm_at = shm < 0 ? (void *)-1 : shmat(shm, NULL, 0);
	if (shm_at == (void *)-1 || shmctl(shm, IPC_STAT, &ds) < 0)
		wl_fail("shmget/shmat: %m");
	if (!strcmp(mode, "shm-dest")) {
		if (shmctl(shm, IPC_RMID, NULL) < 0)
			wl_fail("IPC_RMID: %m");
		return;
	}
	fill_page(shm_at, page, 1);
	fill_page(shm_at + 3 * page, SHM_TAIL, 2);
	ds.shm_perm.uid = 1000;
	ds.shm_perm.gid = 1001;
	ds.shm_perm.mode = 0640;
	if (shmctl(shm, IPC_SET, &ds) < 0 || shmctl(shm, SHM_LOCK, NULL) < 0)
		wl_fail("shmctl IPC_SET/SHM_LOCK: %m");
	snprintf(id, sizeof(id), "%d", SHM_PRIV);
	set("kernel/shm_next_id", id);
	if (setegid(2345) < 0 || seteuid(1234) < 0)
		wl_fail("seteuid: %m");
	shm_priv = shmget(IPC_PRIVATE, 4 * page, 0604);
	if (seteuid(0) < 0 || setegid(0) < 0)
		wl_fail("seteuid back: %m");
	if (shm_priv != SHM_PRIV)
		wl_fail("shmget at id %d: %d %m", SHM_PRIV, shm_priv);
	p = shmat(shm_priv, NULL, 0);
	if (p == (void *)-1)
		wl_fail("shmat %d: %m", shm_priv);
	fill_page(p + 2 * page, page, 3);
	shmdt(p);
}

/* The rss column of /proc/sysvipc/shm for segment @id. */
static unsigned long long shm_rss(int id)
{
	char line[512];
	FILE *f = fopen("/proc/sysvipc/shm", "re");
	unsigned long long rss = ~0ull;
	int key, sid;

	if (!f)
		wl_fail("/proc/sysvipc/shm: %m");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%d %d %*o %*u %*d %*d %*u %*u %*u %*u %*u %*u %*u %*u %llu", &key,
			   &sid, &rss) == 3 &&
		    sid == id)
			break;
	fclose(f);
	return rss;
}

static bool host_has_swap(void)
{
	char buf[4096];
	int n = wl_read_file("/proc/swaps", buf, sizeof(buf));

	return n < 0 || strchr(buf, '\n') != strrchr(buf, '\n');
}

static void shm_check(void)
{
	struct shmid_ds ds;
	char *p;

	WL_CHECK(shmget(KEY_SHM, 0, 0) == shm, "the segment of key 0x%x is id %d, not %d", KEY_SHM,
		 shmget(KEY_SHM, 0, 0), shm);
	WL_CHECK(shmctl(shm, IPC_STAT, &ds) == 0, "segment %d: %m", shm);
	WL_CHECK(ds.shm_perm.uid == 1000 && ds.shm_perm.gid == 1001 && ds.shm_perm.cuid == 0 &&
			 (ds.shm_perm.mode & 0777) == 0640 && (ds.shm_perm.mode & SHM_LOCKED) &&
			 !(ds.shm_perm.mode & SHM_DEST) &&
			 ds.shm_segsz == (size_t)(3 * page + SHM_TAIL) && ds.shm_nattch == 2,
		 "segment %d: %u:%u by %u, mode %o, %zu bytes, %lu attached", shm, ds.shm_perm.uid,
		 ds.shm_perm.gid, ds.shm_perm.cuid, ds.shm_perm.mode, ds.shm_segsz,
		 (unsigned long)ds.shm_nattch);
	WL_CHECK(shmctl(shm_priv, IPC_STAT, &ds) == 0, "segment %d: %m", shm_priv);
	WL_CHECK(ds.shm_perm.__key == 0 && ds.shm_perm.cuid == 1234 && ds.shm_perm.cgid == 2345 &&
			 ds.shm_perm.uid == 1234 && (ds.shm_perm.mode & 0777) == 0604 &&
			 !(ds.shm_perm.mode & SHM_LOCKED) && ds.shm_segsz == (size_t)(4 * page) &&
			 ds.shm_nattch == 0,
		 "segment %d: key %d, by %u:%u, mode %o, %zu bytes, %lu attached", shm_priv,
		 ds.shm_perm.__key, ds.shm_perm.cuid, ds.shm_perm.cgid, ds.shm_perm.mode,
		 ds.shm_segsz, (unsigned long)ds.shm_nattch);
	/* Before anything reads a hole. */
	if (!host_has_swap()) {
		WL_CHECK(shm_rss(shm) == (unsigned long long)(2 * page),
			 "segment %d holds %llu bytes, not its 2 written pages", shm, shm_rss(shm));
		WL_CHECK(shm_rss(shm_priv) == (unsigned long long)page,
			 "segment %d holds %llu bytes, not its 1 written page", shm_priv,
			 shm_rss(shm_priv));
	}
	WL_CHECK(is_page(shm_at, page, 1) && is_zero(shm_at + page, 2 * page) &&
			 is_page(shm_at + 3 * page, SHM_TAIL, 2),
		 "segment %d: its bytes differ", shm);
	p = shmat(shm_priv, NULL, SHM_RDONLY);
	WL_CHECK(p != (void *)-1, "shmat %d: %m", shm_priv);
	WL_CHECK(is_zero(p, 2 * page) && is_page(p + 2 * page, page, 3) &&
			 is_zero(p + 3 * page, page),
		 "segment %d: its bytes differ", shm_priv);
	shmdt(p);
}

static const struct {
	unsigned prio;
	const char *text;
} mq_msgs[] = {{3, "kept"}, {1, "low"}, {3, "kept too"}, {7, ""}};
/* In the order mq_receive gives them: highest priority first, then by arrival. */
static const size_t mq_order[] = {3, 0, 2, 1};

static void mq_setup(void)
{
	struct mq_attr a = {.mq_maxmsg = 4, .mq_msgsize = 64},
		       b = {.mq_maxmsg = 2, .mq_msgsize = 4000};
	mqd_t m = mq_open("/crf-wl-ipc", O_CREAT | O_RDWR, 0600, &a);
	mqd_t e = mq_open("/crf-wl-ipc-empty", O_CREAT | O_RDWR, 0606, &b);

	if (m == (mqd_t)-1 || e == (mqd_t)-1)
		wl_fail("mq_open: %m");
	for (size_t i = 0; i < sizeof(mq_msgs) / sizeof(mq_msgs[0]); i++)
		if (mq_send(m, mq_msgs[i].text, strlen(mq_msgs[i].text), mq_msgs[i].prio) < 0)
			wl_fail("mq_send: %m");
	/* Modes set past the umask, which a restore must not apply either. */
	if (fchown(m, 1000, 1001) < 0 || fchmod(m, 0640) < 0 || fchmod(e, 0606) < 0)
		wl_fail("fchown/fchmod of a queue: %m");
	mq_close(m);
	mq_close(e);
}

static void mq_notify_setup(void)
{
	struct sigevent ev = {.sigev_notify = SIGEV_NONE};
	struct mq_attr a = {.mq_maxmsg = 4, .mq_msgsize = 64};
	mqd_t m = mq_open("/crf-wl-ipc", O_CREAT | O_RDWR, 0600, &a);

	/* The fd stays open: closing it would drop the registration. */
	if (m == (mqd_t)-1)
		wl_fail("mq_open: %m");
	if (mq_notify(m, &ev) < 0)
		wl_fail("mq_notify: %m");
}

static void mq_check_one(const char *name, long maxmsg, long msgsize, uid_t uid, gid_t gid,
			 mode_t mode, long cur)
{
	mqd_t m = mq_open(name, O_RDONLY | O_NONBLOCK);
	struct mq_attr a;
	struct stat st;

	WL_CHECK(m != (mqd_t)-1, "POSIX message queue %s: %m", name);
	WL_CHECK(mq_getattr(m, &a) == 0 && fstat(m, &st) == 0, "%s: %m", name);
	WL_CHECK(a.mq_maxmsg == maxmsg && a.mq_msgsize == msgsize && a.mq_curmsgs == cur &&
			 st.st_uid == uid && st.st_gid == gid && (st.st_mode & 07777) == mode,
		 "%s: %ld of %ld bytes, %ld queued, %u:%u mode %o", name, (long)a.mq_maxmsg,
		 (long)a.mq_msgsize, (long)a.mq_curmsgs, st.st_uid, st.st_gid, st.st_mode);
	for (long i = 0; i < cur; i++) {
		char buf[64];
		unsigned prio;
		ssize_t n = mq_receive(m, buf, sizeof(buf), &prio);
		size_t k = mq_order[i];

		WL_CHECK(n == (ssize_t)strlen(mq_msgs[k].text) && prio == mq_msgs[k].prio &&
				 !memcmp(buf, mq_msgs[k].text, (size_t)n),
			 "%s: message %ld is '%.*s' of priority %u, not '%s' of %u (%m)", name, i,
			 (int)(n < 0 ? 0 : n), buf, prio, mq_msgs[k].text, mq_msgs[k].prio);
	}
	mq_close(m);
}

static mqd_t mq_rd = -1, mq_wr = -1;
static int mq_rd_fl, mq_wr_fl;

/* mq_open makes both close-on-exec; the write one is made not. */
static void mq_fd_setup(bool cloexec)
{
	mq_rd = mq_open("/crf-wl-ipc", O_RDONLY | O_NONBLOCK);
	mq_wr = mq_open("/crf-wl-ipc-empty", O_WRONLY | (cloexec ? O_CLOEXEC : 0));
	if (mq_rd == (mqd_t)-1 || mq_wr == (mqd_t)-1)
		wl_fail("mq_open: %m");
	mq_rd_fl = fcntl(mq_rd, F_GETFL);
	mq_wr_fl = fcntl(mq_wr, F_GETFL);
	if (fcntl(mq_wr, F_SETFD, 0) < 0)
		wl_fail("F_SETFD: %m");
}

static void mq_fd_check_one(mqd_t fd, const char *name, int flags)
{
	mqd_t m = mq_open(name, O_RDONLY | O_NONBLOCK);
	struct stat a, b;
	struct mq_attr at;
	int now = fcntl(fd, F_GETFL);

	WL_CHECK(m != (mqd_t)-1 && fstat(m, &a) == 0 && fstat(fd, &b) == 0 &&
			 mq_getattr(fd, &at) == 0,
		 "fd %d, %s: %m", fd, name);
	WL_CHECK(a.st_dev == b.st_dev && a.st_ino == b.st_ino, "fd %d is not on queue %s", fd,
		 name);
	WL_CHECK(now == flags && (at.mq_flags & O_NONBLOCK) == (flags & O_NONBLOCK),
		 "fd %d on %s: flags %#o (mq_flags %#lo), not %#o", fd, name, now,
		 (unsigned long)at.mq_flags, flags);
	mq_close(m);
}

static void mq_check(void)
{
	if (mq_rd >= 0) {
		WL_CHECK(fcntl(mq_rd, F_GETFD) == FD_CLOEXEC && fcntl(mq_wr, F_GETFD) == 0,
			 "the queues' fds' close-on-exec: %d %d, not 1 0", fcntl(mq_rd, F_GETFD),
			 fcntl(mq_wr, F_GETFD));
		mq_fd_check_one(mq_rd, "/crf-wl-ipc", mq_rd_fl);
		mq_fd_check_one(mq_wr, "/crf-wl-ipc-empty", mq_wr_fl);
	}
	mq_check_one("/crf-wl-ipc", 4, 64, 1000, 1001, 0640, 4);
	mq_check_one("/crf-wl-ipc-empty", 2, 4000, 0, 0, 0606, 0);
}

static void check_sysctls(void)
{
	char path[96], now[128];

	for (size_t i = 0; i < sizeof(sysctls) / sizeof(sysctls[0]); i++) {
		snprintf(path, sizeof(path), "/proc/sys/%s", sysctls[i][0]);
		if (wl_read_file(path, now, sizeof(now)) < 0)
			wl_fail("read %s: %m", path);
		now[strcspn(now, "\n")] = '\0';
		WL_CHECK(!strcmp(now, sysctls[i][1]), "%s is '%s', not '%s'", sysctls[i][0], now,
			 sysctls[i][1]);
	}
}

static void check_msg(int id, long type, const char *text)
{
	struct {
		long type;
		char text[64];
	} m;
	ssize_t n = msgrcv(id, &m, sizeof(m.text), 0, IPC_NOWAIT);

	WL_CHECK(n >= 0, "queue %d: no message (%m), wanted type %ld '%s'", id, type, text);
	WL_CHECK(m.type == type && (size_t)n == strlen(text) && !memcmp(m.text, text, (size_t)n),
		 "queue %d: message type %ld '%.*s', wanted type %ld '%s'", id, m.type, (int)n,
		 m.text, type, text);
}

static void check_objects(void)
{
	struct msqid_ds ds;
	struct semid_ds sds;
	unsigned short v[3];

	WL_CHECK(msgget(KEY_Q, 0) == q, "the queue of key 0x%x is id %d, not %d", KEY_Q,
		 msgget(KEY_Q, 0), q);
	WL_CHECK(msgctl(q, IPC_STAT, &ds) == 0, "queue %d: %m", q);
	WL_CHECK(ds.msg_perm.uid == 1000 && ds.msg_perm.gid == 1001 &&
			 (ds.msg_perm.mode & 0777) == 0640 && ds.msg_qbytes == 9000 &&
			 ds.msg_qnum == 4,
		 "queue %d: %u:%u mode %o qbytes %lu qnum %lu", q, ds.msg_perm.uid, ds.msg_perm.gid,
		 ds.msg_perm.mode, (unsigned long)ds.msg_qbytes, (unsigned long)ds.msg_qnum);
	WL_CHECK(msgctl(priv, IPC_STAT, &ds) == 0, "queue %d: %m", priv);
	WL_CHECK(ds.msg_perm.cuid == 1234 && ds.msg_perm.cgid == 2345 && ds.msg_perm.__key == 0 &&
			 (ds.msg_perm.mode & 0777) == 0666,
		 "queue %d: creator %u:%u key %d mode %o", priv, ds.msg_perm.cuid, ds.msg_perm.cgid,
		 ds.msg_perm.__key, ds.msg_perm.mode);
	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
		check_msg(q, msgs[i].type, msgs[i].text);
	check_msg(priv, 3, "private");
	WL_CHECK(semget(KEY_SEM, 0, 0) == sem, "the semaphores of key 0x%x are not id %d", KEY_SEM,
		 sem);
	WL_CHECK(semctl(sem, 0, IPC_STAT, &sds) == 0 && sds.sem_nsems == 3 &&
			 (sds.sem_perm.mode & 0777) == 0604,
		 "semaphores %d: %lu, mode %o", sem, (unsigned long)sds.sem_nsems,
		 sds.sem_perm.mode);
	WL_CHECK(semctl(sem, 0, GETALL, v) == 0 && v[0] == 0 && v[1] == 42 && v[2] == 32767,
		 "semaphores %d: %u %u %u", sem, v[0], v[1], v[2]);
}

/* A child back in namespace @back, whose child joins @here again: its PID, after both moved. */
static pid_t rejoined(int back, int here, pid_t *grandchild)
{
	int p[2];
	pid_t pid;

	if (pipe(p) < 0)
		wl_fail("pipe: %m");
	pid = fork();
	if (pid < 0)
		wl_fail("fork: %m");
	if (pid == 0) {
		pid_t g;

		close(p[0]);
		if (setns(back, CLONE_NEWIPC) < 0)
			_exit(1);
		g = fork();
		if (g == 0) {
			pid_t me = getpid();

			/*
			 * Its PID once it has joined: the one message on the pipe (two,
			 * its and its parent's, could come in either order).  No fd of a
			 * namespace left open: crf's files plugin refuses those.
			 */
			if (setns(here, CLONE_NEWIPC) < 0 || close(back) < 0 || close(here) < 0 ||
			    write(p[1], &me, sizeof(me)) != sizeof(me))
				_exit(1);
			for (;;)
				pause();
		}
		if (g < 0 || close(back) < 0 || close(here) < 0 || close(p[1]) < 0)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], grandchild, sizeof(*grandchild)) != sizeof(*grandchild))
		wl_fail("the grandchild's PID once it joined: %m");
	close(p[0]);
	return pid;
}

static void link_of(pid_t pid, char *out, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", (int)pid);
	n = readlink(path, out, len - 1);
	if (n < 0)
		wl_fail("readlink %s: %m", path);
	out[n] = '\0';
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char start[96], now[96], child[96];
	pid_t outside, inside;

	wl_init("ipc");
	bool owned = !strcmp(mode, "owned"), sibs = !strcmp(mode, "siblings");
	pid_t back = -1, joined = -1;
	int start_fd;

	bool shm_mode = !strncmp(mode, "shm", 3);

	if (argc > 2 ||
	    (*mode && strcmp(mode, "shm") && strcmp(mode, "shm-dest") &&
	     strcmp(mode, "shm-forced") && strcmp(mode, "mqueue") &&
	     strcmp(mode, "mqueue-notify") && strcmp(mode, "mqueue-fd") &&
	     strcmp(mode, "mqueue-fd-shared") && strcmp(mode, "mqueue-unlinked") &&
	     strcmp(mode, "mqueue-fd-cloexec") && strcmp(mode, "mqueue-host") && !owned && !sibs))
		wl_fail("usage: wl-ipc [shm|shm-dest|shm-forced|mqueue|mqueue-fd|mqueue-fd-shared|"
			"mqueue-fd-cloexec|mqueue-unlinked|mqueue-host|mqueue-notify|owned|"
			"siblings]");
	/* Unattached segments live on only without shm_rmid_forced. */
	if (!strcmp(mode, "shm") || !strcmp(mode, "shm-dest"))
		sysctls[4][1] = "0";
	link_of(getpid(), start, sizeof(start));
	outside = fork();
	if (outside < 0)
		wl_fail("fork: %m");
	if (outside == 0)
		for (;;)
			pause();
	if (!strcmp(mode, "mqueue-host")) {
		struct mq_attr a = {.mq_maxmsg = 2, .mq_msgsize = 16};

		mq_rd = mq_open("/crf-wl-ipc-host", O_CREAT | O_EXCL | O_RDWR, 0600, &a);
		if (mq_rd == (mqd_t)-1 || mq_unlink("/crf-wl-ipc-host") < 0)
			wl_fail("mq_open /crf-wl-ipc-host: %m");
	}
	start_fd = open("/proc/self/ns/ipc", O_RDONLY | O_CLOEXEC);
	if (start_fd < 0)
		wl_fail("open /proc/self/ns/ipc: %m");
	if (unshare(CLONE_NEWIPC | (owned ? CLONE_NEWUSER : 0)) < 0)
		wl_fail("unshare(CLONE_NEWIPC): %m");
	if (!owned)
		setup();
	if (shm_mode)
		shm_setup(mode);
	/* Below the first segment's size: the restore must set it after the segments. */
	if (!strcmp(mode, "shm")) {
		sysctls[5][1] = "8192";
		set("kernel/shmmax", "8192");
	}
	if (!strncmp(mode, "mqueue-fd", 9) || !strcmp(mode, "mqueue"))
		mq_setup();
	if (!strcmp(mode, "mqueue-fd-shared"))
		mq_fd_setup(false);
	if (!strcmp(mode, "mqueue-unlinked")) {
		mq_setup();
		mq_fd_setup(false);
		if (mq_unlink("/crf-wl-ipc") < 0)
			wl_fail("mq_unlink: %m");
	}

	if (!strcmp(mode, "mqueue-notify"))
		mq_notify_setup();
	if (sibs) {
		int here = open("/proc/self/ns/ipc", O_RDONLY | O_CLOEXEC);

		if (here < 0)
			wl_fail("open /proc/self/ns/ipc: %m");
		back = rejoined(start_fd, here, &joined);
		close(here);
	}
	close(start_fd);
	inside = fork();
	if (inside < 0)
		wl_fail("fork: %m");
	if (inside == 0)
		for (;;)
			pause();
	if (!strcmp(mode, "mqueue-fd") || !strcmp(mode, "mqueue-fd-cloexec"))
		mq_fd_setup(!strcmp(mode, "mqueue-fd-cloexec"));
	wl_ready();
	wl_wait_verify();
	link_of(getpid(), now, sizeof(now));
	WL_CHECK(strcmp(now, start), "in the IPC namespace it started in, %s", now);
	link_of(inside, child, sizeof(child));
	WL_CHECK(!strcmp(now, child), "child 'inside' is in %s, its parent in %s", child, now);
	if (owned)
		return 0;
	link_of(outside, now, sizeof(now));
	WL_CHECK(!strcmp(now, start), "child 'outside' is in %s, not %s", now, start);
	if (sibs) {
		link_of(back, child, sizeof(child));
		WL_CHECK(!strcmp(child, start), "child 'back' is in %s, not %s", child, start);
		link_of(joined, child, sizeof(child));
		link_of(getpid(), now, sizeof(now));
		WL_CHECK(!strcmp(child, now), "the grandchild is in %s, not %s", child, now);
		kill(back, SIGKILL);
		kill(joined, SIGKILL);
		waitpid(back, NULL, 0);
	}
	check_sysctls();
	check_objects();
	if (!strcmp(mode, "shm"))
		shm_check();
	if (!strncmp(mode, "mqueue-fd", 9) || !strcmp(mode, "mqueue"))
		mq_check();
	kill(outside, SIGKILL);
	kill(inside, SIGKILL);
	waitpid(outside, NULL, 0);
	waitpid(inside, NULL, 0);
	return 0;
}
