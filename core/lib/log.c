// SPDX-License-Identifier: GPL-2.0-only
/* Logging: one line per message, prefixed with the plugin that said it. */
#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crf-private.h"

static enum crf_log_level log_level = CRF_LOG_WARN;
static FILE *log_file;
static __thread const char *log_origin;
/*
 * The plugin whose hook runs, for threads the plugin starts itself (their
 * thread-local origin is unset): hooks run one at a time.
 */
static const char *_Atomic log_hook_origin;
/* crf__log_capture(): messages are kept here, not written; the first error only. */
static bool log_capturing;
static char log_captured[256];

static const char *const level_label[] = {
	[CRF_LOG_ERROR] = "error: ",
	[CRF_LOG_WARN] = "warning: ",
	[CRF_LOG_INFO] = "",
	[CRF_LOG_DEBUG] = "debug: ",
};

int crf__log_setup(enum crf_log_level level, const char *path)
{
	log_level = level;
	crf__log_close();
	if (!path)
		return 0;
	log_file = fopen(path, "ae");
	if (!log_file)
		return crf_log_errno(CRF_LOG_ERROR, errno, "cannot open log file %s", path);
	setvbuf(log_file, NULL, _IOLBF, 0);
	return 0;
}

void crf__log_close(void)
{
	if (log_file)
		fclose(log_file);
	log_file = NULL;
}

void crf__log_capture(bool close_file)
{
	/* Not closed: its fd is another task's to close (a shared fd table). */
	if (close_file)
		crf__log_close();
	log_file = NULL;
	log_capturing = true;
	log_captured[0] = '\0';
}

const char *crf__log_captured(void)
{
	return log_capturing && log_captured[0] ? log_captured : NULL;
}

enum crf_log_level crf__log_level(void)
{
	return log_level;
}

const char *crf__log_set_origin(const char *plugin)
{
	const char *old = log_origin;

	log_origin = plugin;
	log_hook_origin = plugin;
	return old;
}

int crf_log_enabled(enum crf_log_level level)
{
	return level <= log_level || level == CRF_LOG_ERROR;
}

static void emit(FILE *f, enum crf_log_level level, const char *msg)
{
	const char *origin = log_origin ? log_origin : log_hook_origin;
	size_t n = strlen(msg);

	if (origin)
		fprintf(f, "crf[%s]: %s%s%s", origin, level_label[level], msg,
			n && msg[n - 1] == '\n' ? "" : "\n");
	else
		fprintf(f, "crf: %s%s%s", level_label[level], msg,
			n && msg[n - 1] == '\n' ? "" : "\n");
}

static void capture(const char *msg)
{
	const char *origin = log_origin ? log_origin : log_hook_origin;
	size_t n = 0, len;

	if (origin)
		n = (size_t)snprintf(log_captured, sizeof(log_captured), "%s: ", origin);
	if (n >= sizeof(log_captured))
		return;
	len = strnlen(msg, sizeof(log_captured) - n - 1);
	memcpy(log_captured + n, msg, len);
	log_captured[n + len] = '\0';
}

void crf_logv(enum crf_log_level level, const char *fmt, va_list ap)
{
	char buf[2048];
	int saved = errno;

	if (level > CRF_LOG_DEBUG)
		level = CRF_LOG_DEBUG;
	if (!crf_log_enabled(level))
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (log_capturing) {
		if (level == CRF_LOG_ERROR && !log_captured[0])
			capture(buf);
		errno = saved;
		return;
	}
	/* Errors always reach stderr; with a log file, the rest goes there only. */
	if (level == CRF_LOG_ERROR || !log_file)
		emit(stderr, level, buf);
	if (log_file)
		emit(log_file, level, buf);
	errno = saved;
}

void crf_log(enum crf_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	crf_logv(level, fmt, ap);
	va_end(ap);
}

/* Progress lines: when the operation began, when the line was last drawn. */
static double progress_start, progress_last;
static bool progress_shown;
static int progress_mode;
static int progress_tty; /* 1 a terminal, -1 not, 0 not asked yet */

void crf__log_set_progress(int mode)
{
	progress_mode = mode;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void crf_progress(const char *what, uint64_t done, uint64_t total)
{
	const char *origin;
	double now;

	if (progress_mode < 0 || log_level < CRF_LOG_WARN)
		return;
	/*
	 * Called for every batch of pages: ask whether stderr is a terminal
	 * once, and read the clock only when a line may be drawn.
	 */
	if (!progress_tty)
		progress_tty = isatty(STDERR_FILENO) ? 1 : -1;
	if (!progress_mode && progress_tty < 0)
		return;
	now = mono_s();
	if (!progress_start)
		progress_start = now;
	if ((!progress_mode && now - progress_start < 0.5) || now - progress_last < 0.1)
		return;
	progress_last = now;
	progress_shown = true;
	origin = log_origin ? log_origin : log_hook_origin;
	if (total)
		fprintf(stderr, "\r\033[Kcrf%s%s%s: %s: %llu of %llu MiB", origin ? "[" : "",
			origin ? origin : "", origin ? "]" : "", what,
			(unsigned long long)(done >> 20), (unsigned long long)(total >> 20));
	else
		fprintf(stderr, "\r\033[Kcrf%s%s%s: %s: %llu MiB", origin ? "[" : "",
			origin ? origin : "", origin ? "]" : "", what,
			(unsigned long long)(done >> 20));
	fflush(stderr);
}

void crf_progress_end(void)
{
	if (progress_shown)
		fputs("\r\033[K", stderr);
	progress_shown = false;
	progress_start = progress_last = 0;
}

static volatile sig_atomic_t stop_signal;

void crf__request_stop(int sig)
{
	if (!stop_signal)
		stop_signal = sig;
}

int crf__stop_signal(void)
{
	return stop_signal;
}

bool crf_stop_requested(void)
{
	return stop_signal != 0;
}

int crf_log_errno(enum crf_log_level level, int err, const char *fmt, ...)
{
	char buf[1536];
	va_list ap;

	if (err < 0)
		err = -err;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	crf_log(level, "%s: %s", buf, strerror(err));
	return err ? -err : -EIO;
}
