// SPDX-License-Identifier: GPL-2.0-only
/*
 * The /proc/net/{raw,raw6,icmp,icmp6} line parser of the net plugin
 * (plugins/net/inet-proc.c), on samples and on a socket of our own.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../plugins/net/inet-proc.h"

static const char header[] = "  sl  local_address rem_address   st tx_queue rx_queue tr "
			     "tm->when retrnsmt   uid  timeout inode ref pointer drops\n";

static void test_v4(void **state)
{
	char text[1024];
	struct inet_proc_sk s;
	uint8_t want[4];
	uint32_t local, peer;

	/* 127.0.0.12 and 127.0.0.1 as this host prints them. */
	inet_pton(AF_INET, "127.0.0.12", &local);
	inet_pton(AF_INET, "127.0.0.1", &peer);
	snprintf(text, sizeof(text),
		 "%s  1: %08X:00FD %08X:0000 01 00000000:00000340 00:00000000 00000000     0 "
		 "       0 4242 2 0000000000000000 0\n"
		 " 12: 00000000:0011 00000000:0000 07 00000000:00000000 00:00000000 00000000     "
		 "0        0 99 2 0000000000000000 0\n",
		 header, local, peer);
	assert_int_equal(inet_proc_find(text, 4242, &s), 1);
	assert_int_equal(s.addr_len, 4);
	inet_pton(AF_INET, "127.0.0.12", want);
	assert_memory_equal(s.local, want, 4);
	inet_pton(AF_INET, "127.0.0.1", want);
	assert_memory_equal(s.peer, want, 4);
	assert_int_equal(s.local_port, 253);
	assert_int_equal(s.peer_port, 0);
	assert_int_equal(s.state, 1);
	assert_int_equal(s.rx_queue, 0x340);
	assert_int_equal(inet_proc_find(text, 99, &s), 1);
	assert_int_equal(s.state, 7);
	assert_int_equal(s.local_port, 17);
	assert_int_equal(inet_proc_find(text, 100, &s), 0);
}

static void test_v6(void **state)
{
	char text[1024];
	struct inet_proc_sk s;
	uint8_t want[16];
	uint32_t w[4];

	inet_pton(AF_INET6, "fd00:77::1", w);
	snprintf(text, sizeof(text),
		 "%s   5: %08X%08X%08X%08X:0309 00000000000000000000000000000000:0000 07 "
		 "00000000:00000000 00:00000000 00000000     0        0 777 2 0000000000000000 0\n",
		 header, w[0], w[1], w[2], w[3]);
	assert_int_equal(inet_proc_find(text, 777, &s), 1);
	assert_int_equal(s.addr_len, 16);
	inet_pton(AF_INET6, "fd00:77::1", want);
	assert_memory_equal(s.local, want, 16);
	assert_int_equal(s.local_port, 777);
}

static void test_broken(void **state)
{
	struct inet_proc_sk s;
	char text[512];

	/* No header, no lines: nothing found. */
	assert_int_equal(inet_proc_find("", 1, &s), 0);
	assert_int_equal(inet_proc_find(header, 1, &s), 0);
	snprintf(text, sizeof(text), "%s  1: 0100007F:0011 garbage\n", header);
	assert_int_equal(inet_proc_find(text, 1, &s), -EBADMSG);
	/* Addresses of two lengths on one line. */
	snprintf(text, sizeof(text),
		 "%s  1: 0100007F:0011 00000000000000000000000000000000:0000 07 00000000:00000000 "
		 "00:00000000 00000000     0        0 5 2 0000000000000000 0\n",
		 header);
	assert_int_equal(inet_proc_find(text, 5, &s), -EBADMSG);
	/* A port past 16 bits. */
	snprintf(text, sizeof(text),
		 "%s  1: 0100007F:10011 00000000:0000 07 00000000:00000000 "
		 "00:00000000 00000000     0        0 5 2 0000000000000000 0\n",
		 header);
	assert_int_equal(inet_proc_find(text, 5, &s), -EBADMSG);
}

/* A raw socket of our own, as the kernel lists it (skipped without CAP_NET_RAW). */
static void test_self(void **state)
{
	struct sockaddr_in in = {.sin_family = AF_INET};
	struct inet_proc_sk s;
	char text[1 << 16];
	struct stat st;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, 253), f;
	uint8_t want[4];

	if (fd < 0)
		skip();
	inet_pton(AF_INET, "127.0.0.9", &in.sin_addr);
	assert_int_equal(bind(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	assert_int_equal(fstat(fd, &st), 0);
	f = open("/proc/self/net/raw", O_RDONLY | O_CLOEXEC);
	assert_true(f >= 0);
	n = read(f, text, sizeof(text) - 1);
	assert_true(n > 0);
	text[n] = '\0';
	close(f);
	assert_int_equal(inet_proc_find(text, (unsigned long)st.st_ino, &s), 1);
	inet_pton(AF_INET, "127.0.0.9", want);
	assert_memory_equal(s.local, want, 4);
	assert_int_equal(s.local_port, 253);
	assert_int_equal(s.state, 7);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4),
		cmocka_unit_test(test_v6),
		cmocka_unit_test(test_broken),
		cmocka_unit_test(test_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
