/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wl-unix.h: what wl-unix.c (the helpers, the socketpair modes, main) and
 * wl-unix-named.c (names, listeners and the refused modes) share.
 */
#ifndef CRF_TESTS_WL_UNIX_H
#define CRF_TESTS_WL_UNIX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

/* The names of a socket: getsockname, getpeername. */
struct names {
	struct sockaddr_un self, peer;
	socklen_t self_len, peer_len;
};

/* The sockets of the named modes (bound-path, abstract). */
struct named {
	int l, c1, s1, c2, d, du, dn, dc, p[2], gone, dl;
	struct names names[10];
	struct stat file;
};

/* wl-unix.c's helpers. */
void pair(int type, int sv[2]);
void xsend(int fd, const void *p, size_t len, const char *what);
void expect(int fd, const void *want, size_t len, const char *what);
void expect_bytes(int fd, const void *want, size_t len, const char *what);
void expect_empty(int fd, const char *what);
void expect_creds(int fd, const char *want, size_t len, pid_t pid, const char *what);
int sockopt(int fd, int opt);
void get_names(int fd, struct names *n, const char *what);
void check_names(int fd, int type, const struct names *was, const char *what);
void ping(int a, int b, int type, const char *what);

/* wl-unix-named.c's modes. */
void outside(void);
void setup_named(bool abstract, struct named *n);
void verify_named(bool abstract, struct named *n);
void refused_listener(bool closed);
void in_flight(void);
void chrooted(void);
void creds(void);

#endif
