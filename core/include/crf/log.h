/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * crf/log.h - logging for the core and for plugins.
 *
 * Every message is prefixed by the core with the name of the plugin whose
 * hook is running ("crf[mem]: error: ..."), so a plugin never formats its own
 * name.  Errors always reach stderr; everything at or above the chosen level
 * also goes to the log file when one is set (--log-file).
 */
#ifndef CRF_LOG_H
#define CRF_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum crf_log_level {
	CRF_LOG_ERROR = 0,
	CRF_LOG_WARN = 1,
	CRF_LOG_INFO = 2,
	CRF_LOG_DEBUG = 3,
};

/* Log one message.  A trailing newline is added when missing. */
void crf_log(enum crf_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void crf_logv(enum crf_log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/*
 * Log a message followed by ": <strerror(err)>" and return -|err|, so that a
 * failing call can be logged and propagated in one statement:
 *
 *	if (fd < 0)
 *		return crf_log_errno(CRF_LOG_ERROR, errno, "open %s", path);
 */
int crf_log_errno(enum crf_log_level level, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Progress of a long operation (dumping gigabytes), on a terminal only: the
 * line "crf[plugin]: WHAT: DONE of TOTAL MiB" is rewritten in place at most
 * ten times a second, starting once the operation has run for half a
 * second; @total 0 if unknown.  Nothing is printed when stderr is not a
 * terminal or with --quiet (--progress=always|never overrides: always
 * prints from the start, terminal or not).  crf_progress_end() clears the
 * line.
 */
void crf_progress(const char *what, uint64_t done, uint64_t total);
void crf_progress_end(void);

/*
 * ABI 1.4: true once crf was asked to stop (SIGINT, SIGTERM or SIGHUP during
 * a dump).  A long operation (a page copy) asks between batches and gives
 * up with -EINTR; the core then cures and resumes the tree and removes what
 * the dump wrote.
 */
bool crf_stop_requested(void);

/* True when messages of @level are printed anywhere (skip costly formatting). */
int crf_log_enabled(enum crf_log_level level);

#define crf_error(...)		  crf_log(CRF_LOG_ERROR, __VA_ARGS__)
#define crf_warn(...)		  crf_log(CRF_LOG_WARN, __VA_ARGS__)
#define crf_info(...)		  crf_log(CRF_LOG_INFO, __VA_ARGS__)
#define crf_debug(...)		  crf_log(CRF_LOG_DEBUG, __VA_ARGS__)
#define crf_error_errno(err, ...) crf_log_errno(CRF_LOG_ERROR, (err), __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif
