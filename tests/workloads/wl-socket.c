// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-socket: holds state crf cannot dump yet (a unix socketpair with data
 * queued in it), for the refusal test: the dump must fail with a clear
 * message and leave this process exactly as it was.
 *
 * After the failed dump: no tracer is attached, 1 MiB of PRNG data is
 * unchanged (its address is published as corrupt_addr), the bytes queued
 * before the dump are still queued and the pair still carries new data
 * both ways.
 */
#include "wl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define DATA_BYTES (1 << 20)

static void xfer(int from, int to, const char *what, const char *queued)
{
	char got[64];
	size_t want = strlen(queued) + strlen(what);
	ssize_t n;

	if (write(from, what, strlen(what)) != (ssize_t)strlen(what))
		wl_fail("write to the socket: %s", strerror(errno));
	n = recv(to, got, sizeof(got) - 1, MSG_DONTWAIT);
	if (n < 0)
		wl_fail("read from the socket: %s", strerror(errno));
	got[n] = '\0';
	if ((size_t)n != want || strncmp(got, queued, strlen(queued)) ||
	    strcmp(got + strlen(queued), what))
		wl_fail("the socket gave \"%s\", wanted \"%s%s\"", got, queued, what);
}

int main(void)
{
	unsigned char *data = malloc(DATA_BYTES);
	ssize_t off;
	int sv[2];

	wl_init("socket");
	if (!data)
		wl_fail("out of memory");
	wl_fill(data, DATA_BYTES, 7);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		wl_fail("socketpair: %s", strerror(errno));
	if (write(sv[0], "queued-a;", 9) != 9 || write(sv[1], "queued-b;", 9) != 9)
		wl_fail("write to the socket: %s", strerror(errno));
	wl_publish("corrupt_addr", "%p", (void *)(data + 4096));
	wl_ready();
	wl_wait_verify();

	wl_check_untraced();
	off = wl_cmp_fill(data, DATA_BYTES, 7);
	if (off >= 0)
		wl_fail("memory: byte %zd differs", off);
	xfer(sv[0], sv[1], "ping", "queued-a;");
	xfer(sv[1], sv[0], "pong", "queued-b;");
	wl_note("socketpair and memory intact after the refused dump");
	return 0;
}
