/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wl-tcp.h: what wl-tcp and wl-tcp-ns share: two streams whose byte N is
 * (N * 7 + direction) mod 251, so that a gap or a repeat shows, and the
 * peer outside the tree that keeps sending through the checkpoint.
 * Header only (static functions).
 */
#ifndef CRF_TESTS_WL_TCP_H
#define CRF_TESTS_WL_TCP_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wl.h"

static inline unsigned char pattern(int dir, uint64_t n)
{
	return (unsigned char)((n * 7 + (uint64_t)dir) % 251);
}

static inline void wr(int fd, int dir, uint64_t *pos, size_t n)
{
	unsigned char buf[4096];

	while (n) {
		size_t k = n < sizeof(buf) ? n : sizeof(buf);
		ssize_t w;

		for (size_t i = 0; i < k; i++)
			buf[i] = pattern(dir, *pos + i);
		w = write(fd, buf, k);
		if (w <= 0)
			wl_fail("write to stream %d at %llu: %s", dir, (unsigned long long)*pos,
				strerror(errno));
		*pos += (uint64_t)w;
		n -= (size_t)w;
	}
}

static inline void rd(int fd, int dir, uint64_t *pos, size_t n)
{
	unsigned char buf[4096];
	struct pollfd p = {.fd = fd, .events = POLLIN};

	while (n) {
		ssize_t r;

		if (poll(&p, 1, 20000) != 1)
			wl_fail("stream %d: nothing to read at %llu for 20 s", dir,
				(unsigned long long)*pos);
		r = recv(fd, buf, n < sizeof(buf) ? n : sizeof(buf), MSG_DONTWAIT);
		if (r < 0 && errno == EAGAIN)
			continue;
		if (r <= 0)
			wl_fail("stream %d: read at %llu: %s", dir, (unsigned long long)*pos,
				r ? strerror(errno) : "end of stream");
		for (ssize_t i = 0; i < r; i++)
			if (buf[i] != pattern(dir, *pos + (uint64_t)i))
				wl_fail("stream %d: byte %llu is %u, wanted %u", dir,
					(unsigned long long)(*pos + (uint64_t)i), buf[i],
					pattern(dir, *pos + (uint64_t)i));
		*pos += (uint64_t)r;
		n -= (size_t)r;
	}
}

static inline void nothing_more(int fd, int dir)
{
	char c;

	if (recv(fd, &c, 1, MSG_DONTWAIT) >= 0 || errno != EAGAIN)
		wl_fail("stream %d: more data than was sent", dir);
}

/*
 * The peer outside the tree, on connected socket @fd: send stream 1 until
 * stream 0 ends, check stream 0, write the verdict to @result.
 */
static inline _Noreturn void wl_tcp_peer(int fd, const char *result)
{
	uint64_t w = 0, r = 0;
	int ok = 1;
	char why[160] = "";
	FILE *f;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 60000; i++) {
		unsigned char buf[4096];
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (w < 2000000) {
			unsigned char out[100];

			for (int k = 0; k < 100; k++)
				out[k] = pattern(1, w + (uint64_t)k);
			n = send(fd, out, sizeof(out), MSG_NOSIGNAL);
			if (n > 0)
				w += (uint64_t)n;
			else if (n < 0 && errno != EAGAIN) {
				snprintf(why, sizeof(why), "send at %llu: %s",
					 (unsigned long long)w, strerror(errno));
				ok = 0;
				break;
			}
		}
		if (poll(&p, 1, 10) != 1)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n == 0)
			break;
		if (n < 0 && errno == EAGAIN)
			continue;
		if (n < 0) {
			snprintf(why, sizeof(why), "recv at %llu: %s", (unsigned long long)r,
				 strerror(errno));
			ok = 0;
			break;
		}
		for (ssize_t k = 0; k < n && ok; k++)
			if (buf[k] != pattern(0, r + (uint64_t)k)) {
				snprintf(why, sizeof(why), "stream 0: byte %llu differs",
					 (unsigned long long)(r + (uint64_t)k));
				ok = 0;
			}
		r += (uint64_t)n;
		if (!ok)
			break;
	}
	f = fopen(result, "we");
	if (f) {
		if (ok)
			fprintf(f, "ok %llu %llu\n", (unsigned long long)r, (unsigned long long)w);
		else
			fprintf(f, "FAIL %s\n", why);
		fclose(f);
	}
	if (ok)
		shutdown(fd, SHUT_WR);
	_exit(0);
}

/*
 * The workload's end of the peer's connection @fd after the restore (*@w
 * and *@r written and read so far): 3000 bytes more, its FIN, the peer's
 * stream to its end, and the peer's verdict in @result.
 */
static inline void wl_tcp_peer_end(int fd, uint64_t *w, uint64_t *r, const char *result)
{
	char text[256] = "";
	unsigned long long got = 0, sent = 0;

	wr(fd, 0, w, 3000);
	shutdown(fd, SHUT_WR);
	for (;;) {
		unsigned char buf[4096];
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_PEEK);

		if (n < 0)
			wl_fail("stream 1: read at %llu: %s", (unsigned long long)*r,
				strerror(errno));
		if (n == 0)
			break;
		rd(fd, 1, r, (size_t)n);
	}
	if (wl_read_file(result, text, sizeof(text)) < 0)
		wl_fail("the peer outside the tree left no verdict in %s", result);
	unlink(result);
	if (sscanf(text, "ok %llu %llu", &got, &sent) != 2)
		wl_fail("the peer outside the tree: %s", text);
	if (got != *w || sent != *r)
		wl_fail("the peer got %llu bytes of %llu, sent %llu of which %llu arrived", got,
			(unsigned long long)*w, sent, (unsigned long long)*r);
}

#endif
