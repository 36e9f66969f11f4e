/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wl: the small helper every checkpoint/restore test workload uses.
 *
 * A workload follows one shape: set up state, wl_ready(), wait for the
 * checkpoint and restore (wl_wait_verify(), or poll wl_verify_requested()
 * while working), re-read the state and compare it byte for byte, exit 0.
 * Any difference ends it through wl_fail(): one line on stderr, exit 1.
 *
 * The harness talks to a workload through the environment:
 *   CRF_TEST_READY    path of the file wl_ready() creates (atomically)
 *   CRF_TEST_VERIFY   path of the file whose appearance means "verify now"
 *   CRF_TEST_TMPDIR   a directory the workload may keep files in
 *   CRF_TEST_TIMEOUT  seconds after which a workload gives up waiting
 * Without CRF_TEST_VERIFY a workload waits until it is killed (manual use).
 *
 * crf restores fds (0, 1 and 2 like the others) of regular files, directories,
 * /dev/{null,zero,random,urandom}, pipes, FIFOs, eventfd, signalfd, timerfd,
 * memfd, pidfd, terminals and unix sockets (wl-files, wl-pipes, wl-anonfds, wl-tty,
 * wl-unix); a workload holds no
 * other fd while it waits.  Every helper here closes what it opens.
 */
#ifndef CRF_TESTS_WL_H
#define CRF_TESTS_WL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define WL_PAGE 4096UL

/* Name the workload for messages; read the environment. */
void wl_init(const char *name);

/* The directory for the workload's files (CRF_TEST_TMPDIR, or /tmp). */
const char *wl_tmpdir(void);

/*
 * Add a "key=value" line to the ready file, after the "pid=N" line.
 * wl-memory publishes "corrupt_addr=0x..." here: the fake crf of the
 * harness self-test writes over that address to prove the check fails.
 */
void wl_publish(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Create the ready file (write a temporary file, then rename it). */
void wl_ready(void);

/* True once the verify file exists.  Fails when CRF_TEST_TIMEOUT passes. */
bool wl_verify_requested(void);

/* Sleep in 10 ms steps until wl_verify_requested(). */
void wl_wait_verify(void);

/* Print "wl-NAME: FAIL: ..." on stderr and exit 1. */
_Noreturn void wl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "wl-NAME: ..." on stderr. */
void wl_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A downgrade: the workload checks less than it says, because this machine
 * lacks something (a filesystem refusing O_DIRECT, a low hard limit, a CPU
 * without AVX-512).  Printed as "wl-NAME: NOTE: ..."; the harness repeats it
 * as "NOTE NAME MODE: ..." and scripts/test.sh lists every NOTE under its
 * summary, so a weaker check never passes quietly.
 */
void wl_downgrade(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* wl_fail() unless COND holds; the message names the condition's line. */
#define WL_CHECK(cond, ...)                                                                        \
	do {                                                                                       \
		if (!(cond))                                                                       \
			wl_fail_at(__FILE__, __LINE__, #cond, __VA_ARGS__);                        \
	} while (0)
_Noreturn void wl_fail_at(const char *file, int line, const char *cond, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* FNV-1a over 64-bit words (then the tail bytes): a fast content checksum. */
uint64_t wl_hash(const void *p, size_t n);

/* splitmix64: a small PRNG whose sequence is fixed by its seed. */
struct wl_rng {
	uint64_t s;
};
uint64_t wl_rng_next(struct wl_rng *r);

/* Fill N bytes with the PRNG sequence of SEED, 8 bytes at a time. */
void wl_fill(void *p, size_t n, uint64_t seed);

/* Offset of the first byte that differs from wl_fill(SEED), or -1. */
ssize_t wl_cmp_fill(const void *p, size_t n, uint64_t seed);

/* Read a whole (small, /proc) file into BUF, NUL-terminated; length or -errno. */
ssize_t wl_read_file(const char *path, char *buf, size_t size);

/* The value after "KEY:" in /proc/self/status, copied into OUT. */
void wl_status_field(const char *key, char *out, size_t size);

/* Fail if a tracer is still attached (a dump that did not detach). */
void wl_check_untraced(void);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t wl_now_ns(void);

/* A net namespace of the workload's own, with lo up (nothing else in it). */
void wl_own_netns(void);

#endif
