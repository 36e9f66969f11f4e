// SPDX-License-Identifier: GPL-2.0-only
/*
 * Queued signals, both ways.  Dump: PTRACE_PEEKSIGINFO copies a thread's
 * private queue or the process's shared one, in queue order, without
 * dequeuing anything.  Restore: every record must be a whole siginfo of a
 * signal the restorer can queue again, checked before anything is forked.
 *
 * How many there can be: a real-time signal sent with its data takes one
 * queue entry each, up to RLIMIT_SIGPENDING of the receiver (the count is
 * the user's, across its processes); a standard signal is queued once,
 * whatever the limit.  So a queue holds at most the limit plus one entry
 * per standard signal.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>

#include "task-image.h"
#include "util.h"

/* Entries read per PTRACE_PEEKSIGINFO. */
#define PEEK_BATCH 64
/* The kernel's signals: 1 to 64, the standard ones below 32. */
#define KERNEL_NSIG   64
#define STANDARD_SIGS 31
/* However high the limit: 128 MiB of siginfo per queue. */
#define PENDING_MAX (UINT64_C(1) << 20)

uint64_t task_pending_cap(const Crf__Core__TaskCore *tc)
{
	for (size_t i = 0; i < tc->n_rlimits; i++)
		if (tc->rlimits[i]->resource == RLIMIT_SIGPENDING)
			return tc->rlimits[i]->cur < PENDING_MAX - STANDARD_SIGS
				       ? tc->rlimits[i]->cur + STANDARD_SIGS
				       : PENDING_MAX;
	return PENDING_MAX;
}

/*
 * Append @si to @out (which has room); a SIGSTOP is taken out and noted in
 * *@stop: queued again it would stop the restorer, and the task stops
 * anyway when it is let go (see task_read_pending()).
 */
static int keep(const siginfo_t *si, ProtobufCBinaryData *out, size_t *n, bool *stop)
{
	if (si->si_signo == SIGSTOP) {
		*stop = true;
		return 0;
	}
	out[*n].data = malloc(sizeof(*si));
	if (!out[*n].data)
		return -ENOMEM;
	memcpy(out[*n].data, si, sizeof(*si));
	out[*n].len = sizeof(*si);
	(*n)++;
	return 0;
}

int task_read_pending(pid_t tid, bool shared, uint64_t cap, ProtobufCBinaryData **out, size_t *n,
		      bool *stop)
{
	siginfo_t si[PEEK_BATCH];
	uint64_t off = 0;
	size_t room = 0;
	int r = 0;

	*out = NULL;
	*n = 0;
	for (;;) {
		struct {
			uint64_t off;
			uint32_t flags;
			int32_t nr;
		} arg = {off, shared ? PTRACE_PEEKSIGINFO_SHARED : 0, PEEK_BATCH};
		long got = ptrace(PTRACE_PEEKSIGINFO, tid, &arg, si);

		if (got < 0)
			return crf_error_errno(errno, "thread %d: PTRACE_PEEKSIGINFO", (int)tid);
		if (got == 0)
			return 0;
		off += (uint64_t)got;
		if (off > cap)
			return crf_error_errno(E2BIG,
					       "thread %d: more than %llu signals queued %s: more "
					       "than the kernel lets it queue",
					       (int)tid, (unsigned long long)cap,
					       shared ? "for the process" : "for the thread");
		if (*n + (size_t)got > room) {
			size_t want = room * 2 > *n + (size_t)got ? room * 2 : *n + (size_t)got;
			ProtobufCBinaryData *v = reallocarray(*out, want, sizeof(*v));

			if (!v)
				return -ENOMEM;
			*out = v;
			room = want;
		}
		for (long i = 0; r >= 0 && i < got; i++)
			r = keep(&si[i], *out, n, stop);
		if (r < 0)
			return r;
	}
}

int task_check_pending(const char *img, const char *field, const ProtobufCBinaryData *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int32_t sig;

		if (v[i].len != sizeof(siginfo_t))
			return crf_error_errno(EBADMSG, "%s: %s[%zu]: %zu bytes, expected %zu", img,
					       field, i, v[i].len, sizeof(siginfo_t));
		memcpy(&sig, v[i].data, sizeof(sig));
		if (sig < 1 || sig > KERNEL_NSIG || sig == SIGKILL || sig == SIGSTOP)
			return crf_error_errno(EBADMSG, "%s: %s[%zu]: signal %d cannot be queued",
					       img, field, i, (int)sig);
	}
	return 0;
}
