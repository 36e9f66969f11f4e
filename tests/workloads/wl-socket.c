// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-socket: holds state crf cannot dump (an AF_VSOCK socket, or AF_XDP
 * where this kernel has no vsock: a family no handler knows) next to a unix
 * socketpair with data queued in it, which crf dumps (and reads, without
 * consuming it) before it meets the other socket: the dump must fail with a clear message and leave
 * this process exactly as it was.
 *
 * After the failed dump: no tracer is attached, 1 MiB of PRNG data is
 * unchanged (its address is published as corrupt_addr), the bytes queued
 * before the dump are still queued, the pair still carries new data both
 * ways, and the other socket is still open.
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
	int sv[2], other, other_type, type = 0;
	socklen_t sl = sizeof(type);

	wl_init("socket");
	if (!data)
		wl_fail("out of memory");
	wl_fill(data, DATA_BYTES, 7);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		wl_fail("socketpair: %s", strerror(errno));
	if (write(sv[0], "queued-a;", 9) != 9 || write(sv[1], "queued-b;", 9) != 9)
		wl_fail("write to the socket: %s", strerror(errno));
	other = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
	other_type = SOCK_STREAM;
	if (other < 0) {
		other = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
		other_type = SOCK_RAW;
	}
	if (other < 0)
		wl_fail("neither an AF_VSOCK nor an AF_XDP socket: %s", strerror(errno));
	wl_publish("corrupt_addr", "%p", (void *)(data + 4096));
	wl_ready();
	wl_wait_verify();

	wl_check_untraced();
	off = wl_cmp_fill(data, DATA_BYTES, 7);
	if (off >= 0)
		wl_fail("memory: byte %zd differs", off);
	if (getsockopt(other, SOL_SOCKET, SO_TYPE, &type, &sl) || type != other_type)
		wl_fail("the AF_VSOCK or AF_XDP socket: %s", strerror(errno));
	xfer(sv[0], sv[1], "ping", "queued-a;");
	xfer(sv[1], sv[0], "pong", "queued-b;");
	wl_note("sockets and memory intact after the refused dump");
	return 0;
}
