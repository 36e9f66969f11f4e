// SPDX-License-Identifier: GPL-2.0-only
/*
 * swrk-client CRF WL-COUNTER TMPDIR: drives `crf swrk` as libcriu and runc
 * do (a SOCK_SEQPACKET socketpair, `crf swrk 3`, one criu_req per packet),
 * with a real workload:
 *
 *   VERSION, FEATURE_CHECK (mem_track and lazy_pages false), CHECK;
 *   bad requests answered with success false: a garbage packet, an unknown
 *   type, DUMP without pid, PRE_DUMP, an option crf refuses (by name), an
 *   inherit_fd key crf does not connect, a log_file with a '/';
 *   DUMP with notify_scripts whose post-dump the client fails: refused,
 *   the workload counts on, no image left;
 *   DUMP leave_running (images_dir_fd, work_dir_fd, log_file), the notify
 *   order checked; the workload counts on;
 *   DUMP (kill) then RESTORE with rst_sibling and inherit_fd of the
 *   workload's stdout pipe (fd 1 of swrk, as runc passes it): the notify
 *   order, the pid in the response, the restored root a child of this
 *   client, its "counter: N" lines going on without a gap, and its own
 *   verdict (exit 0) once the verify file exists.
 *
 * Prints "ok: ..." per check; "FAIL: ..." and exit 1 on the first failure.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "criu-rpc.pb-c.h"

static const char *crf, *wl, *tmp;
static pid_t wl_pid;
static int out_r = -1, out_w = -1; /* the workload's stdout */
static unsigned long long last_counter;
static pid_t parent_at_resume; /* the restored root's parent, read at post-resume */

/* The workload, if it runs, and TMPDIR (images, logs) go, whatever happened. */
static void cleanup(void)
{
	char cmd[600];

	if (wl_pid > 0) {
		kill(wl_pid, SIGKILL);
		waitpid(wl_pid, NULL, 0);
	}
	wl_pid = 0;
	if (tmp && snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp) < (int)sizeof(cmd) &&
	    system(cmd) != 0)
		printf("could not remove %s\n", tmp);
}

static _Noreturn void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	cleanup();
	exit(1);
}

static void ok(const char *what)
{
	printf("ok: %s\n", what);
	fflush(stdout);
}

struct swrk {
	int sk;
	pid_t pid;
};

/* socketpair, fork, `crf swrk 3`; @stdout_fd: the child's fd 1 (-1: ours). */
static struct swrk start_swrk(int stdout_fd)
{
	struct swrk s;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		fail("socketpair: %m");
	s.pid = fork();
	if (s.pid < 0)
		fail("fork: %m");
	if (s.pid == 0) {
		if (dup2(sv[1], 3) < 0 || (stdout_fd >= 0 && dup2(stdout_fd, 1) < 0))
			_exit(126);
		execl(crf, crf, "swrk", "3", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	s.sk = sv[0];
	return s;
}

static int end_swrk(struct swrk *s)
{
	int st;

	close(s->sk);
	if (waitpid(s->pid, &st, 0) != s->pid)
		fail("waitpid swrk: %m");
	return st;
}

static void send_req(struct swrk *s, const CriuReq *req)
{
	size_t len = criu_req__get_packed_size(req);
	uint8_t *buf = malloc(len + 1);

	criu_req__pack(req, buf);
	if (send(s->sk, buf, len, MSG_NOSIGNAL) != (ssize_t)len)
		fail("send: %m");
	free(buf);
}

static CriuResp *recv_resp(struct swrk *s)
{
	uint8_t buf[8192];
	struct pollfd p = {.fd = s->sk, .events = POLLIN};
	ssize_t n;
	CriuResp *r;

	if (poll(&p, 1, 120000) != 1)
		fail("no answer from crf swrk in 120 s");
	n = recv(s->sk, buf, sizeof(buf), 0);
	if (n <= 0)
		fail("crf swrk closed the socket without an answer (%zd)", n);
	r = criu_resp__unpack(NULL, (size_t)n, buf);
	if (!r)
		fail("crf swrk's answer is not a criu_resp");
	return r;
}

/* One request on a fresh swrk; its one answer. */
static CriuResp *one(CriuReq *req)
{
	struct swrk s = start_swrk(-1);
	CriuResp *r;

	send_req(&s, req);
	r = recv_resp(&s);
	end_swrk(&s);
	return r;
}

static void expect_refusal(CriuResp *r, const char *what, const char *needle)
{
	char line[512];

	if (r->success)
		fail("%s: answered success", what);
	if (!r->has_cr_errno || r->cr_errno <= 0)
		fail("%s: no cr_errno", what);
	if (!r->cr_errmsg || !strstr(r->cr_errmsg, needle))
		fail("%s: cr_errmsg '%s' does not say '%s'", what, r->cr_errmsg ?: "(none)",
		     needle);
	snprintf(line, sizeof(line), "%s answered success:false, errno %d: %s", what, r->cr_errno,
		 r->cr_errmsg);
	ok(line);
	criu_resp__free_unpacked(r, NULL);
}

/* ---- the workload ---- */

static char ready_path[512], verify_path[512], img[512], work[512];

static void start_workload(void)
{
	int p[2];
	char env_ready[600], env_verify[600], env_tmp[600];
	struct stat st;

	unlink(ready_path);
	unlink(verify_path);
	if (out_r < 0) {
		if (pipe2(p, O_CLOEXEC) < 0)
			fail("pipe: %m");
		out_r = p[0];
		out_w = p[1];
		fcntl(out_r, F_SETFL, O_NONBLOCK);
	}
	last_counter = 0;
	wl_pid = fork();
	if (wl_pid < 0)
		fail("fork: %m");
	if (wl_pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		char err[600];
		int efd;

		snprintf(err, sizeof(err), "%s/wl.err", tmp);
		efd = open(err, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (null < 0 || efd < 0 || dup2(null, 0) < 0 || dup2(out_w, 1) < 0 ||
		    dup2(efd, 2) < 0)
			_exit(126);
		close(null);
		close(efd);
		snprintf(env_ready, sizeof(env_ready), "CRF_TEST_READY=%s", ready_path);
		snprintf(env_verify, sizeof(env_verify), "CRF_TEST_VERIFY=%s", verify_path);
		snprintf(env_tmp, sizeof(env_tmp), "CRF_TEST_TMPDIR=%s", tmp);
		putenv(env_ready);
		putenv(env_verify);
		putenv(env_tmp);
		putenv("CRF_TEST_TIMEOUT=120");
		execl(wl, wl, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 1000 && stat(ready_path, &st) < 0; i++)
		usleep(10000);
	if (stat(ready_path, &st) < 0)
		fail("the workload did not get ready");
}

/* Read what the workload printed: each line one more than the last. */
static int drain(void)
{
	static char buf[65536];
	static size_t have;
	int lines = 0;
	ssize_t n;

	while ((n = read(out_r, buf + have, sizeof(buf) - have - 1)) > 0)
		have += (size_t)n;
	for (;;) {
		char *nl = memchr(buf, '\n', have);
		unsigned long long v;

		if (!nl)
			break;
		*nl = '\0';
		if (sscanf(buf, "counter: %llu", &v) != 1)
			fail("workload printed '%s'", buf);
		if (v != last_counter + 1)
			fail("workload printed counter %llu after %llu", v, last_counter);
		last_counter = v;
		lines++;
		have -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, have);
	}
	return lines;
}

/* The workload runs and counts on: a line in the next two seconds. */
static void expect_counting(const char *when)
{
	char what[256];

	drain();
	for (int i = 0; i < 200; i++) {
		usleep(10000);
		if (drain() > 0) {
			snprintf(what, sizeof(what), "%s: the workload counts on (at %llu)", when,
				 last_counter);
			ok(what);
			return;
		}
	}
	fail("%s: the workload printed nothing for 2 s", when);
}

static bool dir_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool empty = true;

	if (!d)
		return true;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(d);
	return empty;
}

static void clear_dir(const char *path)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", path, path);
	if (system(cmd) != 0)
		fail("%s", cmd);
}

static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	int fd, ppid = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

/*
 * A DUMP or RESTORE with the notify hand-shake: the scripts in order into
 * @order (comma-separated); the answer to @fail_at is failure.
 */
static CriuResp *operation(CriuReq *req, int stdout_fd, const char *fail_at, char *order,
			   size_t len)
{
	struct swrk s = start_swrk(stdout_fd);
	CriuResp *r;

	order[0] = '\0';
	send_req(&s, req);
	for (;;) {
		CriuReq ans = CRIU_REQ__INIT;

		r = recv_resp(&s);
		if (r->type != CRIU_REQ_TYPE__NOTIFY)
			break;
		if (!r->notify || !r->notify->script)
			fail("NOTIFY without a script");
		snprintf(order + strlen(order), len - strlen(order), "%s%s", order[0] ? "," : "",
			 r->notify->script);
		if (!r->notify->has_pid || r->notify->pid != wl_pid)
			fail("notify %s: pid %d, not %d", r->notify->script, r->notify->pid,
			     (int)wl_pid);
		/* crf swrk waits for this answer: it is alive, its child would be its own. */
		if (!strcmp(r->notify->script, "post-resume"))
			parent_at_resume = parent_of(r->notify->pid);
		ans.type = CRIU_REQ_TYPE__NOTIFY;
		ans.has_notify_success = true;
		ans.notify_success = !fail_at || strcmp(fail_at, r->notify->script);
		criu_resp__free_unpacked(r, NULL);
		send_req(&s, &ans);
	}
	if (WEXITSTATUS(end_swrk(&s)) != (r->success ? 0 : 1))
		fail("crf swrk's exit status does not match its answer");
	return r;
}

static void opts_dir(CriuOpts *o, int img_fd, int work_fd, const char *log)
{
	o->images_dir_fd = img_fd;
	o->has_work_dir_fd = true;
	o->work_dir_fd = work_fd;
	o->log_file = (char *)log;
	o->has_log_level = true;
	o->log_level = 4;
	o->has_notify_scripts = true;
	o->notify_scripts = true;
}

int main(int argc, char **argv)
{
	CriuReq req = CRIU_REQ__INIT;
	CriuOpts o = CRIU_OPTS__INIT;
	CriuFeatures f = CRIU_FEATURES__INIT;
	CriuResp *r;
	char order[512], what[1024], log[1100];
	int img_fd, work_fd, st;
	struct stat sb;

	if (argc != 4) {
		fprintf(stderr, "usage: swrk-client CRF WL-COUNTER TMPDIR\n");
		return 2;
	}
	crf = argv[1];
	wl = argv[2];
	tmp = argv[3];
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The restored root is born our child (rst_sibling); what else is left, too. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	snprintf(ready_path, sizeof(ready_path), "%s/ready", tmp);
	snprintf(verify_path, sizeof(verify_path), "%s/verify", tmp);
	snprintf(img, sizeof(img), "%s/img", tmp);
	snprintf(work, sizeof(work), "%s/work", tmp);
	clear_dir(img);
	clear_dir(work);

	/* VERSION */
	req.type = CRIU_REQ_TYPE__VERSION;
	r = one(&req);
	if (!r->success || !r->version || r->version->major_number != 3 ||
	    r->version->minor_number != 17)
		fail("VERSION: not success with 3.17");
	snprintf(what, sizeof(what), "VERSION: %d.%d.%d (%s)", r->version->major_number,
		 r->version->minor_number, r->version->sublevel, r->version->name ?: "");
	ok(what);
	criu_resp__free_unpacked(r, NULL);

	/* FEATURE_CHECK: the truth */
	req.type = CRIU_REQ_TYPE__FEATURE_CHECK;
	f.has_mem_track = f.mem_track = true;
	f.has_lazy_pages = f.lazy_pages = true;
	req.features = &f;
	r = one(&req);
	if (!r->success || !r->features || !r->features->has_mem_track || r->features->mem_track ||
	    !r->features->has_lazy_pages || r->features->lazy_pages)
		fail("FEATURE_CHECK: not mem_track false, lazy_pages false");
	ok("FEATURE_CHECK: mem_track false, lazy_pages false");
	criu_resp__free_unpacked(r, NULL);
	req.features = NULL;

	/* CHECK */
	req.type = CRIU_REQ_TYPE__CHECK;
	r = one(&req);
	if (!r->success)
		fail("CHECK: %s", r->cr_errmsg ?: "failed");
	ok("CHECK: success");
	criu_resp__free_unpacked(r, NULL);

	/* Bad requests */
	{
		struct swrk s = start_swrk(-1);
		const uint8_t garbage[] = {0xff, 0xff, 0xff, 0x07, 0x01};

		if (send(s.sk, garbage, sizeof(garbage), 0) != sizeof(garbage))
			fail("send: %m");
		expect_refusal(recv_resp(&s), "a garbage packet", "not a criu_req");
		end_swrk(&s);
	}
	req.type = (CriuReqType)77;
	expect_refusal(one(&req), "request type 77", "unknown request type 77");
	req.type = CRIU_REQ_TYPE__PRE_DUMP;
	img_fd = open(img, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	work_fd = open(work, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (img_fd < 0 || work_fd < 0)
		fail("open %s, %s: %m", img, work);
	o.images_dir_fd = img_fd;
	req.opts = &o;
	expect_refusal(one(&req), "PRE_DUMP", "PRE_DUMP");
	req.type = CRIU_REQ_TYPE__DUMP;
	expect_refusal(one(&req), "DUMP without pid", "opts.pid");

	start_workload();
	ok("workload started");
	o.has_pid = true;
	o.pid = wl_pid;
	o.has_lazy_pages = o.lazy_pages = true;
	expect_refusal(one(&req), "DUMP with lazy_pages", "option lazy_pages refused");
	o.has_lazy_pages = o.lazy_pages = false;
	o.log_file = "../x.log";
	expect_refusal(one(&req), "DUMP with log_file ../x.log", "without '/'");
	o.log_file = NULL;
	{
		InheritFd ifd = INHERIT_FD__INIT, *ifds[] = {&ifd};

		ifd.key = "extRootNetNS";
		ifd.fd = 1;
		o.n_inherit_fd = 1;
		o.inherit_fd = ifds;
		req.type = CRIU_REQ_TYPE__RESTORE;
		expect_refusal(one(&req), "RESTORE with inherit_fd extRootNetNS",
			       "inherit_fd extRootNetNS refused");
		o.n_inherit_fd = 0;
		o.inherit_fd = NULL;
	}
	if (kill(wl_pid, 0) < 0 || !dir_empty(img))
		fail("the refusals touched the workload or left images");
	expect_counting("after the refused requests");

	/* A failing answer to post-dump fails the dump cleanly. */
	req.type = CRIU_REQ_TYPE__DUMP;
	opts_dir(&o, img_fd, work_fd, "dump.log");
	r = operation(&req, -1, "post-dump", order, sizeof(order));
	if (strcmp(order, "pre-dump,network-lock,query-ext-files,post-dump"))
		fail("dump notify order: %s", order);
	expect_refusal(r, "DUMP whose post-dump the caller fails", "post-dump");
	if (waitpid(wl_pid, &st, WNOHANG) != 0 || !dir_empty(img))
		fail("after a failed post-dump: the workload is gone or images are left");
	expect_counting("after the failed post-dump");

	/* leave_running */
	o.has_leave_running = o.leave_running = true;
	r = operation(&req, -1, NULL, order, sizeof(order));
	if (!r->success)
		fail("DUMP leave_running: %s", r->cr_errmsg);
	if (strcmp(order, "pre-dump,network-lock,query-ext-files,post-dump"))
		fail("dump notify order: %s", order);
	snprintf(what, sizeof(what), "DUMP leave_running: success, notify %s", order);
	ok(what);
	criu_resp__free_unpacked(r, NULL);
	snprintf(log, sizeof(log), "%s/dump.log", work);
	if (stat(log, &sb) < 0 || sb.st_size == 0)
		fail("no log_file %s in the work directory", log);
	ok("log_file dump.log written in the work directory");
	if (waitpid(wl_pid, &st, WNOHANG) != 0 || dir_empty(img))
		fail("after DUMP leave_running: the workload is gone or no images");
	expect_counting("after DUMP leave_running");
	clear_dir(img);
	close(img_fd);
	img_fd = open(img, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (img_fd < 0)
		fail("open %s: %m", img);

	/* DUMP, the workload killed; RESTORE as runc does. */
	o.has_leave_running = o.leave_running = false;
	opts_dir(&o, img_fd, work_fd, "dump.log");
	r = operation(&req, -1, NULL, order, sizeof(order));
	if (!r->success)
		fail("DUMP: %s", r->cr_errmsg);
	criu_resp__free_unpacked(r, NULL);
	if (waitpid(wl_pid, &st, 0) != wl_pid || !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
		fail("after DUMP the workload did not die of SIGKILL");
	drain();
	snprintf(what, sizeof(what), "DUMP: success, the workload killed at counter %llu",
		 last_counter);
	ok(what);
	{
		InheritFd ifd = INHERIT_FD__INIT, *ifds[] = {&ifd};
		char key[64], link[64];
		ssize_t n;

		snprintf(key, sizeof(key), "/proc/self/fd/%d", out_w);
		n = readlink(key, link, sizeof(link) - 1);
		if (n <= 0)
			fail("readlink %s: %m", key);
		link[n] = '\0';
		ifd.key = link;
		ifd.fd = 1; /* the workload's pipe is fd 1 of crf swrk, as runc passes stdio */
		memset(&o, 0, sizeof(o));
		criu_opts__init(&o);
		opts_dir(&o, img_fd, work_fd, "restore.log");
		o.has_rst_sibling = o.rst_sibling = true;
		o.n_inherit_fd = 1;
		o.inherit_fd = ifds;
		req.type = CRIU_REQ_TYPE__RESTORE;
		req.opts = &o;
		r = operation(&req, out_w, NULL, order, sizeof(order));
	}
	if (!r->success)
		fail("RESTORE: %s", r->cr_errmsg);
	if (strcmp(order, "pre-restore,setup-namespaces,post-setup-namespaces,post-restore,"
			  "network-unlock,pre-resume,post-resume"))
		fail("restore notify order: %s", order);
	if (!r->restore || r->restore->pid != wl_pid)
		fail("RESTORE answered pid %d, not %d", r->restore ? r->restore->pid : -1,
		     (int)wl_pid);
	snprintf(what, sizeof(what), "RESTORE: success, pid %d, notify %s", r->restore->pid, order);
	ok(what);
	criu_resp__free_unpacked(r, NULL);
	snprintf(log, sizeof(log), "%s/restore.log", work);
	if (stat(log, &sb) < 0 || sb.st_size == 0)
		fail("no log_file %s in the work directory", log);
	if (parent_at_resume != getpid())
		fail("rst_sibling: at post-resume the restored root's parent was %d, not the "
		     "caller %d",
		     (int)parent_at_resume, (int)getpid());
	if (waitpid(wl_pid, &st, WNOHANG) != 0)
		fail("the restored root is not a running child of the caller (rst_sibling)");
	ok("rst_sibling: the restored root is the caller's child");
	expect_counting("after RESTORE (inherit_fd: the same pipe, no gap)");
	{
		int fd = open(verify_path, O_WRONLY | O_CREAT, 0644);

		if (fd < 0)
			fail("create %s: %m", verify_path);
		close(fd);
	}
	if (waitpid(wl_pid, &st, 0) != wl_pid)
		fail("waitpid restored: %m");
	wl_pid = 0;
	drain();
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail("the restored workload's verdict: status 0x%x (see %s/wl.err)", st, tmp);
	snprintf(what, sizeof(what), "the restored workload verified itself (counted to %llu)",
		 last_counter);
	ok(what);
	close(img_fd);
	close(work_fd);
	cleanup();
	return 0;
}
