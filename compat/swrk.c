// SPDX-License-Identifier: GPL-2.0-only
/*
 * crf swrk FD: CRIU's RPC, as runc, Podman/crun and libcriu speak it, on
 * the SOCK_SEQPACKET socket FD that the caller made and left open across
 * its exec: one criu_req per packet, one criu_resp back.  VERSION,
 * FEATURE_CHECK and CHECK are answered here; DUMP and RESTORE become crf
 * dump / crf restore run in this process (swrk-req.c), the notify
 * hand-shake in between.  Every request gets an answer, every failure a
 * criu_resp with success false, an errno and a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "compat.h"
#include "swrk.h"

struct crf_rpc_hooks crf_rpc_hooks;

static const char help[] = "Usage: crf swrk FD\n\n"
			   "Serve CRIU's RPC (criu swrk) on the SOCK_SEQPACKET socket FD: what\n"
			   "runc, Podman and libcriu run as `criu swrk FD`.  docs/criu-compat.md\n"
			   "lists the requests and options and what crf does with each.\n";

int swrk_send(struct swrk *s, const CriuResp *resp)
{
	size_t len = criu_resp__get_packed_size(resp);
	_cleanup_free_ uint8_t *buf = malloc(len ? len : 1);
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	criu_resp__pack(resp, buf);
	do
		n = send(s->sk, buf, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int swrk_recv(struct swrk *s, CriuReq **req)
{
	ssize_t n, len;
	uint8_t *buf;

	*req = NULL;
	/* The packet's whole length first: one packet is one message. */
	do
		len = recv(s->sk, NULL, 0, MSG_PEEK | MSG_TRUNC);
	while (len < 0 && errno == EINTR);
	if (len < 0)
		return -errno;
	buf = malloc(len ? (size_t)len : 1);
	if (!buf)
		return -ENOMEM;
	do
		n = recv(s->sk, buf, (size_t)len, 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		free(buf);
		/* 0 bytes: the caller closed its end (an empty packet is garbage too). */
		return n < 0 ? -errno : -EPIPE;
	}
	*req = criu_req__unpack(NULL, (size_t)n, buf);
	free(buf);
	return *req ? 0 : -EBADMSG;
}

int swrk_fail(struct swrk *s, CriuReqType type, int err, const char *fmt, ...)
{
	CriuResp resp = CRIU_RESP__INIT;
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	resp.type = type;
	resp.success = false;
	resp.has_cr_errno = true;
	resp.cr_errno = err > 0 ? err : EINVAL;
	resp.cr_errmsg = msg;
	s->failed = true;
	/*
	 * What the runtime shows, in the log it reads too; on stderr only
	 * without one (a restore's stderr is the container's, as runc passes it).
	 */
	if (s->log_fd >= 0)
		dprintf(s->log_fd, "crf: error: crf swrk: %s\n", msg);
	else
		crf_error("crf swrk: %s", msg);
	return swrk_send(s, &resp);
}

static int answer_version(struct swrk *s)
{
	CriuResp resp = CRIU_RESP__INIT;
	CriuVersion v = CRIU_VERSION__INIT;
	char name[64];

	snprintf(name, sizeof(name), "crf %s", CRF_VERSION);
	v.major_number = CRF_CRIU_MAJOR;
	v.minor_number = CRF_CRIU_MINOR;
	v.has_sublevel = true;
	v.sublevel = CRF_CRIU_SUBLEVEL;
	v.name = name;
	resp.type = CRIU_REQ_TYPE__VERSION;
	resp.success = true;
	resp.version = &v;
	return swrk_send(s, &resp);
}

/*
 * The truth: crf has no incremental dumps (no memory tracking across dumps)
 * and no lazy pages.  Only the features asked about are answered.
 */
static int answer_features(struct swrk *s, const CriuReq *req)
{
	CriuResp resp = CRIU_RESP__INIT;
	CriuFeatures f = CRIU_FEATURES__INIT;

	if (!req->features)
		return swrk_fail(s, CRIU_REQ_TYPE__FEATURE_CHECK, EINVAL,
				 "FEATURE_CHECK without features to check");
	f.has_mem_track = req->features->has_mem_track;
	f.has_lazy_pages = req->features->has_lazy_pages;
	resp.type = CRIU_REQ_TYPE__FEATURE_CHECK;
	resp.success = true;
	resp.features = &f;
	return swrk_send(s, &resp);
}

static const char *type_name(int type)
{
	const ProtobufCEnumValue *v =
		protobuf_c_enum_descriptor_get_value(&criu_req_type__descriptor, type);

	return v ? v->name : NULL;
}

/* Requests crf does not serve, and why; answered so, by name. */
static int answer_unsupported(struct swrk *s, const CriuReq *req)
{
	const char *name = type_name(req->type);
	const char *why = "crf does not provide it";

	switch (req->type) {
	case CRIU_REQ_TYPE__PRE_DUMP:
		why = "crf has no incremental dumps (FEATURE_CHECK says mem_track false)";
		break;
	case CRIU_REQ_TYPE__PAGE_SERVER:
	case CRIU_REQ_TYPE__PAGE_SERVER_CHLD:
		why = "crf has no page server";
		break;
	case CRIU_REQ_TYPE__CPUINFO_DUMP:
	case CRIU_REQ_TYPE__CPUINFO_CHECK:
		why = "crf checks the CPU itself at restore (cpu.img), and has no cpuinfo images";
		break;
	case CRIU_REQ_TYPE__NOTIFY:
		why = "no notify script was sent to be answered";
		break;
	default:
		break;
	}
	if (!name)
		return swrk_fail(s, req->type, EOPNOTSUPP, "unknown request type %d",
				 (int)req->type);
	return swrk_fail(s, req->type, EOPNOTSUPP, "request %s refused: %s", name, why);
}

/* The socket's peer: whose fd numbers images_dir_fd and work_dir_fd are. */
static int peer_pid(int sk, pid_t *pid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int type;
	socklen_t tlen = sizeof(type);

	if (getsockopt(sk, SOL_SOCKET, SO_TYPE, &type, &tlen) < 0)
		return crf_error_errno(errno, "crf swrk: fd %d is not a socket", sk);
	if (type != SOCK_SEQPACKET)
		return crf_error_errno(EINVAL, "crf swrk: fd %d is not a SOCK_SEQPACKET socket",
				       sk);
	if (getsockopt(sk, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return crf_error_errno(errno, "crf swrk: SO_PEERCRED of fd %d", sk);
	*pid = cred.pid;
	return 0;
}

int cmd_swrk(struct crf_opts *o, int argc, char **argv)
{
	struct swrk s = {.sk = -1, .log_fd = -1};
	char *end;
	long fd;
	int r;

	r = parse_command(o, argc, argv, NULL, NULL, help, NULL, NULL);
	if (r)
		return r > 0 ? CRF_EXIT_OK : CRF_EXIT_USAGE;
	if (optind + 1 != argc)
		return crf_usage_error(o, "one argument, the socket's fd number"), CRF_EXIT_USAGE;
	errno = 0;
	fd = strtol(argv[optind], &end, 10);
	if (errno || *end || end == argv[optind] || fd < 0 || fd > INT_MAX)
		return crf_usage_error(o, "'%s' is not an fd number", argv[optind]), CRF_EXIT_USAGE;
	s.sk = (int)fd;
	if (peer_pid(s.sk, &s.peer) < 0)
		return CRF_EXIT_FAIL;
	/* Not for what crf dump and restore create or restore: the caller's socket. */
	if (fcntl(s.sk, F_SETFD, FD_CLOEXEC) < 0)
		return crf_error_errno(errno, "crf swrk: fd %d", s.sk), CRF_EXIT_FAIL;
	for (;;) {
		CriuReq *req;
		bool keep_open = false;

		r = swrk_recv(&s, &req);
		if (r == -EPIPE)
			return CRF_EXIT_OK;
		/* Answered, then the end: whether to keep it open is in what is garbage. */
		if (r == -EBADMSG) {
			swrk_fail(&s, CRIU_REQ_TYPE__EMPTY, EBADMSG,
				  "the packet is not a criu_req message");
			return CRF_EXIT_FAIL;
		}
		if (r < 0)
			return crf_error_errno(-r, "crf swrk: reading a request"), CRF_EXIT_FAIL;
		switch (req->type) {
		case CRIU_REQ_TYPE__VERSION:
			r = answer_version(&s);
			break;
		case CRIU_REQ_TYPE__FEATURE_CHECK:
			r = answer_features(&s, req);
			break;
		case CRIU_REQ_TYPE__CHECK:
			r = swrk_check(&s, req);
			break;
		case CRIU_REQ_TYPE__DUMP:
		case CRIU_REQ_TYPE__RESTORE:
			/* One operation per process: CRIU's swrk ends with it too. */
			r = swrk_operation(&s, req);
			criu_req__free_unpacked(req, NULL);
			return r < 0 || s.failed ? CRF_EXIT_FAIL : CRF_EXIT_OK;
		default:
			r = answer_unsupported(&s, req);
			break;
		}
		keep_open = req->has_keep_open && req->keep_open;
		criu_req__free_unpacked(req, NULL);
		if (r < 0)
			return crf_error_errno(-r, "crf swrk: answering"), CRF_EXIT_FAIL;
		/* As CRIU: the connection ends with the answer unless keep_open. */
		if (!keep_open)
			return s.failed ? CRF_EXIT_FAIL : CRF_EXIT_OK;
	}
}
