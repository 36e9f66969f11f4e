// SPDX-License-Identifier: GPL-2.0-only
/* The pure parts of core/dump/seccomp-dump.c: status lines, chain sharing, USER_NOTIF scan. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <string.h>

#include "helpers.h"
#include "seccomp.h"

static void test_parse_status(void **state)
{
	int mode, n;

	assert_int_equal(seccomp_parse_status("Name:\tx\nSeccomp:\t2\nSeccomp_filters:\t3\n"
					      "Speculation_Store_Bypass:\tvulnerable\n",
					      &mode, &n),
			 0);
	assert_int_equal(mode, 2);
	assert_int_equal(n, 3);
	assert_int_equal(seccomp_parse_status("Name:\tx\nSeccomp:\t1\n", &mode, &n), 0);
	assert_int_equal(mode, 1);
	assert_int_equal(n, 0);
	assert_int_equal(seccomp_parse_status("Name:\tx\nNoNewPrivs:\t0\n", &mode, &n), -ENOENT);
}

/* Programs "a", "b", "c" as one-instruction stand-ins; flags as given. */
static const ProtobufCBinaryData A = {1, (uint8_t *)"a"}, B = {1, (uint8_t *)"b"},
				 C = {1, (uint8_t *)"c"};

static struct crf_seccomp_chain chain(pid_t tid, const ProtobufCBinaryData *code,
				      const uint32_t *flags, size_t n)
{
	return (struct crf_seccomp_chain){tid, n ? 2 : 0, code, flags, n};
}

static void test_common(void **state)
{
	const ProtobufCBinaryData ab[] = {A, B}, a[] = {A}, ac[] = {A, C}, b[] = {B};
	const uint32_t f0[] = {0, 0}, f2[] = {SECCOMP_FILTER_FLAG_LOG, 0};
	struct crf_seccomp_chain c[3];
	size_t x, y;

	/* TSYNC'd A everywhere, B of thread 3's own: one shared, no clash. */
	c[0] = chain(1, a, f0, 1);
	c[1] = chain(2, a, f0, 1);
	c[2] = chain(3, ab, f0, 2);
	assert_int_equal(seccomp_common(c, 3), 1);
	assert_int_equal(seccomp_own_clash(c, 3, 1, &x, &y), 0);
	/* One thread alone: all of its chain is "shared". */
	assert_int_equal(seccomp_common(&c[2], 1), 2);
	/* A thread without filters: nothing shared; A's in two threads clash. */
	c[0] = chain(1, NULL, NULL, 0);
	assert_int_equal(seccomp_common(c, 3), 0);
	assert_int_equal(seccomp_own_clash(c, 3, 0, &x, &y), -EBUSY);
	assert_int_equal(x, 1);
	assert_int_equal(y, 2);
	/* Same code, other flags: not the same filter. */
	c[0] = chain(1, a, f2, 1);
	assert_int_equal(seccomp_common(c, 3), 0);
	/* Own filters that differ from their first one: no clash. */
	c[0] = chain(1, a, f0, 1);
	c[1] = chain(2, ac, f0, 2);
	assert_int_equal(seccomp_common(c, 3), 1);
	assert_int_equal(seccomp_own_clash(c, 3, 1, &x, &y), 0);
	/* Different roots. */
	c[1] = chain(2, b, f0, 1);
	assert_int_equal(seccomp_common(c, 3), 0);
	assert_int_equal(seccomp_own_clash(c, 3, 0, &x, &y), -EBUSY);
	assert_int_equal(x, 0);
	assert_int_equal(y, 2);
	assert_int_equal(seccomp_common(c, 0), 0);
}

static void test_may_notify(void **state)
{
	struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	struct sock_filter err[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1234),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter notif[] = {
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter ret_a[] = {
		BPF_STMT(BPF_LD | BPF_IMM, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};

	assert_false(seccomp_may_notify(allow, sizeof(allow)));
	assert_false(seccomp_may_notify(err, sizeof(err)));
	assert_true(seccomp_may_notify(notif, sizeof(notif)));
	assert_true(seccomp_may_notify(ret_a, sizeof(ret_a)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_status),
		cmocka_unit_test(test_common),
		cmocka_unit_test(test_may_notify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
