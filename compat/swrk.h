/* SPDX-License-Identifier: GPL-2.0-only */
/* crf swrk's parts: the socket (swrk.c), the requests that run crf (swrk-req.c). */
#ifndef CRF_SWRK_H
#define CRF_SWRK_H

#include <stdarg.h>
#include <stdbool.h>
#include <sys/types.h>

#include "criu-rpc.pb-c.h"

struct swrk {
	int sk;	     /* the caller's socket */
	pid_t peer;  /* the caller (SO_PEERCRED): whose fd numbers the requests give */
	bool failed; /* a success false was answered: crf swrk exits 1 */
	int log_fd;  /* the request's log_file, once open; -1 */
};

/* One message each way; 0 or -errno.  swrk_recv: -EPIPE at the end, -EBADMSG garbage. */
int swrk_send(struct swrk *s, const CriuResp *resp);
int swrk_recv(struct swrk *s, CriuReq **req);
/* Answer @type with success false, cr_errno @err, cr_errmsg the message (also logged). */
int swrk_fail(struct swrk *s, CriuReqType type, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* CHECK, and DUMP or RESTORE (answered; 0, or -errno when the answer could not be sent). */
int swrk_check(struct swrk *s, const CriuReq *req);
int swrk_operation(struct swrk *s, const CriuReq *req);

#endif
