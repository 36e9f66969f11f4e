// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the harness reads and says: the verdict line and its failure, the
 * logs (crf's output, the workload's notes and counter lines), expected
 * refusals and verification failures, and the outside pipe (harness.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "util.h"

const char *test_mode(void)
{
	if (h.expect_restore_fail)
		return "expect-restore-fail";
	return h.expect_fail ? "expect-dump-fail" : mode_names[h.mode];
}

__attribute__((format(printf, 1, 2))) _Noreturn void fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "FAIL %s %s: ", h.name, test_mode());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (h.crf_log[0])
		print_tail("last crf dump (or refused restore) output", h.crf_log);
	if (h.log[0])
		print_tail("workload and crf restore output", h.log);
	clean_up(true);
	exit(1);
}

void append_log(const char *fmt, ...)
{
	va_list ap;
	FILE *f = fopen(h.log, "ae");

	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

/* True if @text matches @re (extended, case-insensitive). */
bool matches(const char *text, const char *re)
{
	regex_t rx;
	int err;

	if (regcomp(&rx, re, REG_EXTENDED | REG_ICASE | REG_NOSUB))
		fail("bad regular expression '%s'", re);
	err = regexec(&rx, text, 0, NULL, 0);
	regfree(&rx);
	return !err;
}

/* The last crf's output must match the expected refusal. */
void check_refusal(void)
{
	const char *re = h.expect_fail ? h.expect_fail : h.expect_restore_fail;
	char out[16384];
	ssize_t n;
	int fd;

	fd = open(h.crf_log, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, out, sizeof(out) - 1);
	if (fd >= 0)
		close(fd);
	out[n > 0 ? n : 0] = '\0';
	if (!matches(out, re))
		fail("the refused %s's output does not match /%s/",
		     h.expect_fail ? "dump" : "restore", re);
}

/* A "wl-NAME: FAIL: ..." line of the workload's log must match @re. */
void check_verify_failure(const char *re)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen(h.log, "re");

	if (!f)
		fail("open %s: %s", h.log, strerror(errno));
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "wl-", 3) && strstr(line, ": FAIL: ") && matches(line, re);
	fclose(f);
	if (!found)
		fail("the workload failed, but no FAIL line of it matches /%s/", re);
}

/* The "counter: N" lines of the log must count 1, 2, 3... without a gap. */
void check_counter_lines(void)
{
	unsigned long long want = 1, got;
	bool after_restore = false, counted_before = false, counted_after = false;
	char line[512];
	FILE *f = fopen(h.log, "re");

	if (!f)
		fail("open %s: %s", h.log, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "--- harness: ", 13) && strstr(line, " restore "))
			after_restore = true;
		if (sscanf(line, "counter: %llu", &got) != 1)
			continue;
		if (got != want) {
			fclose(f);
			fail("the printed counter went from %llu to %llu", want - 1, got);
		}
		want++;
		counted_before |= !after_restore;
		counted_after |= after_restore;
	}
	fclose(f);
	if (h.mode == MODE_LEAVE || h.expect_fail)
		return;
	if (!counted_before)
		fail("the counter printed nothing before the checkpoint (use --settle)");
	if (!counted_after)
		fail("the restored counter printed nothing into the log after the restore");
}

/* Append what the workload wrote into the outside pipe to out_log. */
void outside_drain(void)
{
	char buf[4096];
	ssize_t n;
	int fd = -1;

	if (h.out_r < 0)
		return;
	while ((n = read(h.out_r, buf, sizeof(buf))) > 0) {
		if (fd < 0)
			fd = open(h.out_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, buf, (size_t)n) != n)
			break;
	}
	if (fd >= 0)
		close(fd);
}

/* --outside-pipe: "outside: 1" ... "outside: N", "outside: done N", and nothing else. */
void check_outside(void)
{
	unsigned long want = 1, got;
	char line[256];
	bool done = false;
	FILE *f;

	outside_drain();
	f = fopen(h.out_log, "re");
	if (!f)
		fail("the outside pipe brought nothing (%s: %s)", h.out_log, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (done || (sscanf(line, "outside: done %lu", &got) == 1 && got != want - 1) ||
		    (!strstr(line, "done") &&
		     (sscanf(line, "outside: %lu", &got) != 1 || got != want++))) {
			fclose(f);
			fail("the outside pipe brought '%.*s' after line %lu",
			     (int)strcspn(line, "\n"), line, want - 1);
		}
		done = strstr(line, "done") != NULL;
	}
	fclose(f);
	if (!done)
		fail("the outside pipe brought no 'done' line (%lu lines)", want - 1);
	printf("  the process outside the tree received all %lu lines\n", want - 1);
}

/* --outside-pipe/--outside-fifo: a pipe from the workload's fd to us, or a FIFO. */
void outside_setup(void)
{
	struct stat st;
	int fds[2];

	h.out_r = h.out_w = -1;
	if (!h.outside_fd)
		return;
	snprintf(h.out_log, sizeof(h.out_log), "%s/outside.log", h.work);
	if (h.outside_fifo) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/outside.fifo", h.work);
		if (mkfifo(path, 0600) < 0)
			fail("mkfifo %s: %s", path, strerror(errno));
		fds[0] = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		fds[1] = fds[0] < 0 ? -1 : open(path, O_WRONLY | O_CLOEXEC);
	} else if (pipe2(fds, O_CLOEXEC) < 0) {
		fds[0] = fds[1] = -1;
	} else if (fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0) {
		fail("F_SETFL: %s", strerror(errno));
	}
	if (fds[0] < 0 || fds[1] < 0 || fstat(fds[1], &st) < 0)
		fail("the outside pipe: %s", strerror(errno));
	h.out_r = fds[0];
	h.out_w = fds[1];
	snprintf(h.out_name, sizeof(h.out_name), "%s:[%llu]", h.outside_fifo ? "fifo" : "pipe",
		 (unsigned long long)st.st_ino);
}

/*
 * Echo the workload's own notes ("wl-NAME: ...") on success.  A downgrade
 * ("wl-NAME: NOTE: ...", the workload checked less than it says) is repeated
 * as "NOTE NAME MODE: ..." at the start of a line, where scripts/test.sh
 * collects it for its summary.
 */
void print_notes(void)
{
	char line[512], *note;
	FILE *f = fopen(h.log, "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "wl-", 3))
			continue;
		printf("  %s", line);
		note = strstr(line, ": NOTE: ");
		if (note)
			printf("NOTE %s %s: %s", h.name, test_mode(), note + 8);
	}
	if (f)
		fclose(f);
}
