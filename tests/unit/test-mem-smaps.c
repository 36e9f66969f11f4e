// SPDX-License-Identifier: GPL-2.0-only
/* The mem plugin's pure parts: the smaps parser, mapping kinds, stat, vDSO layouts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include <crf/restore.h>

#include "../../plugins/mem/mmfields.h"
#include "../../plugins/mem/smaps.h"
#include "../../plugins/mem/sysv.h"
#include "../../plugins/mem/vdso.h"
#include "helpers.h"

static int parse(const char *text, struct smaps *s)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int r;

	assert_non_null(f);
	r = smaps_parse(f, s);
	fclose(f);
	return r;
}

static const char sample[] =
	"55da3f7e7000-55da3f7e9000 r--p 00000000 fe:00 247134                     "
	"/usr/bin/cat\n"
	"Size:                  8 kB\n"
	"Rss:                   8 kB\n"
	"THPeligible:           0\n"
	"VmFlags: rd mr mw me \n"
	"55da40000000-55da40021000 rw-p 00000000 00:00 0                          [heap]\n"
	"Size:                132 kB\n"
	"VmFlags: rd wr mr mw me ac dd \n"
	"7f0000000000-7f0000400000 rw-p 00000000 00:00 0 \n"
	"VmFlags: rd wr mr mw me ac dc wf hg sr zz \n"
	"7f0000400000-7f0000404000 ---p 00000000 00:00 0 \n"
	"VmFlags: mr mw me ac \n"
	"7f0000500000-7f0000502000 rw-s 00001000 08:01 1234                       "
	"/tmp/with space/f\n"
	"VmFlags: rd wr sh mr mw me ms \n"
	"7f0000600000-7f0000601000 rw-s 00000000 00:01 2048                       "
	"/dev/zero (deleted)\n"
	"VmFlags: rd wr sh mr mw me ms \n"
	"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n"
	"VmFlags: rd wr mr mw me gd ac \n"
	"7ffc00100000-7ffc00104000 r--p 00000000 00:00 0                          [vvar]\n"
	"VmFlags: rd mr pf io de dd \n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  "
	"[vsyscall]\n"
	"VmFlags: ex \n";

static void test_parse(void **state)
{
	struct smaps s = {0};

	(void)state;
	assert_int_equal(parse(sample, &s), 0);
	assert_int_equal(s.n, 9);
	assert_true(s.v[0].start == 0x55da3f7e7000ULL && s.v[0].end == 0x55da3f7e9000ULL);
	assert_int_equal(s.v[0].prot, PROT_READ);
	assert_false(s.v[0].shared);
	assert_int_equal(s.v[0].dev_major, 0xfe);
	assert_true(s.v[0].inode == 247134);
	assert_string_equal(s.v[0].name, "/usr/bin/cat");
	assert_string_equal(s.v[0].vmflags_text, "rd mr mw me");
	assert_true(s.v[0].vmflags == (VMF_RD | VMF_MR | VMF_MW | VMF_ME));
	assert_string_equal(s.v[0].unknown, "");
	assert_string_equal(s.v[2].unknown, "zz");
	assert_int_equal(s.v[1].vmflags & VMF_DD, VMF_DD);
	assert_string_equal(s.v[2].name, "");
	assert_int_equal(s.v[2].vmflags & (VMF_DC | VMF_WF | VMF_HG | VMF_SR),
			 VMF_DC | VMF_WF | VMF_HG | VMF_SR);
	assert_int_equal(s.v[3].prot, PROT_NONE);
	assert_true(s.v[4].shared && s.v[4].pgoff == 0x1000 && s.v[4].dev_minor == 1);
	assert_string_equal(s.v[4].name, "/tmp/with space/f");
	assert_true(s.v[6].vmflags & VMF_GD);
	smaps_free(&s);
}

/* maps has no VmFlags lines; they are optional to the parser. */
static void test_plain_maps(void **state)
{
	static const char text[] = "00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/dbus\n"
				   "7fff6a9c8000-7fff6a9c9000 r-xp 00000000 00:00 0 [vdso]\n";
	struct smaps s = {0};

	(void)state;
	assert_int_equal(parse(text, &s), 0);
	assert_int_equal(s.n, 2);
	assert_false(s.v[0].has_vmflags);
	assert_string_equal(s.v[1].name, "[vdso]");
	smaps_free(&s);
}

static void test_bad_lines(void **state)
{
	static const char *const bad[] = {
		"zzzz-1000 r--p 0 00:00 0\n",
		"1000-2000 r--q 00000000 00:00 0\n",
		"2000-1000 r--p 00000000 00:00 0\n",
		"1000-2000 r--p 00000000 00:00\n",
		"VmFlags: rd\n", /* a field before any mapping */
		"1000-2000 r--p 00000000 00:00 0\n\n",
	};
	struct smaps s = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		capture_begin();
		assert_int_equal(parse(bad[i], &s), -EINVAL);
		assert_contains(capture_end(), "smaps line");
		assert_int_equal(s.n, 0);
	}
}

static void test_kinds(void **state)
{
	static const int want[] = {MEM_FILE_PRIVATE, MEM_ANON_PRIVATE, MEM_ANON_PRIVATE,
				   MEM_ANON_PRIVATE, MEM_FILE_SHARED,  MEM_ANON_SHARED,
				   MEM_ANON_PRIVATE, MEM_VVAR,	       MEM_SKIP};
	struct smaps s = {0};
	const char *why;

	(void)state;
	assert_int_equal(parse(sample, &s), 0);
	for (size_t i = 0; i < s.n; i++)
		assert_int_equal(mem_vma_kind(&s.v[i], &why), want[i]);
	/* Device memory is refused, but [vvar], raw page frames too, is the vDSO's. */
	s.v[2].vmflags |= VMF_PF;
	assert_int_equal(mem_vma_kind(&s.v[2], &why), -ENOTSUP);
	assert_contains(why, "device memory");
	s.v[2].vmflags &= ~VMF_PF;

	assert_int_equal(mem_vma_map_flags(MEM_ANON_PRIVATE, s.v[6].vmflags),
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN);
	assert_int_equal(mem_vma_map_flags(MEM_FILE_SHARED, s.v[4].vmflags), MAP_SHARED);
	assert_int_equal(mem_vma_map_flags(MEM_ANON_SHARED, s.v[5].vmflags),
			 MAP_SHARED | MAP_ANONYMOUS);
	assert_int_equal(mem_vma_map_flags(MEM_FILE_PRIVATE, VMF_LO | VMF_NR),
			 MAP_PRIVATE | MAP_LOCKED | MAP_NORESERVE);
	assert_true(mem_vma_madv(s.v[2].vmflags) ==
		    ((1ULL << MADV_DONTFORK) | (1ULL << MADV_WIPEONFORK) | (1ULL << MADV_HUGEPAGE) |
		     (1ULL << MADV_SEQUENTIAL)));
	assert_true(mem_vma_madv(s.v[1].vmflags) == 1ULL << MADV_DONTDUMP);
	smaps_free(&s);
}

/* Every flag a program can set comes back; the others, and unknown ones, are named. */
static void test_vmflags(void **state)
{
	static const struct {
		const char *line, *flags;
		int kind;
		const char *why;
	} cases[] = {
		{"7f00-7f01 rw-p 00000000 00:00 0 ", "rd wr mr mw me lo lf ac sl gu",
		 MEM_ANON_PRIVATE},
		{"7f00-7f01 rw-p 00000000 00:00 0 ", "rd wr mr mw me nr wf dd dp",
		 MEM_ANON_PRIVATE},
		{"7f00-7f01 rw-p 00000000 00:00 0 ", "rd wr mr mw me ac um", -ENOTSUP,
		 "userfaultfd"},
		{"7f00-7f01 rw-s 00000000 00:01 9 /memfd:x (deleted)", "rd wr sh mr mw me ms ac",
		 -ENOTSUP, "cannot have again"},
		{"7f00-7f01 r-xp 00000000 00:00 0 [vdso]", "rd ex mr mw me de sl", -ENOTSUP,
		 "sealed"},
		{"7f00-7f01 rw-s 00000000 00:0f 9 /[aio] (deleted)", "rd wr sh mr mw me ms de",
		 -ENOTSUP, "aio ring"},
		{"7f00-7f01 rw-p 00000000 00:0f 9 /anon_hugepage (deleted)", "rd wr mr mw me ht",
		 -ENOTSUP, "hugetlbfs"},
		{"7f00-7f01 rw-s 00000000 00:0f 9 /memfd:h (deleted)", "rd wr sh mr mw me ms ht",
		 -ENOTSUP, "hugetlbfs"},
		{"7f00-7f01 rw-s 00000000 00:0f 9 anon_inode:[io_uring]", "rd wr sh mr mw me ms de",
		 -ENOTSUP, "io_uring"},
		{"7f00-7f01 rw-s 00000000 00:0f 9 anon_inode:[foo]", "rd wr sh mr mw me ms de",
		 -ENOTSUP, "anonymous inode"},
		{"7f00-7f01 rw-s 00000000 00:0e 9 /secretmem (deleted)", "rd wr sh mr mw ms lo dd",
		 -ENOTSUP, "memfd_secret"},
		{"7f00-7f01 rw-s 00000000 08:01 9 /dev/fb0", "rd wr sh mr mw me ms io pf de",
		 -ENOTSUP, "device memory"},
	};
	struct smaps s = {0};
	char text[200];
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "%s\nVmFlags: %s \n", cases[i].line, cases[i].flags);
		assert_int_equal(parse(text, &s), 0);
		why = NULL;
		assert_int_equal(mem_vma_kind(&s.v[0], &why), cases[i].kind);
		if (cases[i].why)
			assert_contains(why, cases[i].why);
		smaps_free(&s);
	}
	assert_true(mem_vma_rst_vm(smaps_vmflags("rd wr lo lf ac sl gu", NULL)) ==
		    (CRF_RST_VM_EXACT | CRF_RST_VM_ACCOUNT | CRF_RST_VM_LOCKONFAULT |
		     CRF_RST_VM_SEALED | CRF_RST_VM_GUARD));
	assert_true(mem_vma_rst_vm(smaps_vmflags("rd mr lf", NULL)) == CRF_RST_VM_EXACT);
	assert_int_equal(mem_vma_map_flags(MEM_ANON_PRIVATE, VMF_DP | VMF_NR),
			 MAP_DROPPABLE | MAP_ANONYMOUS | MAP_NORESERVE);
	assert_int_equal(mem_vma_map_flags(MEM_ANON_PRIVATE, VMF_LO | VMF_LF),
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED);
	assert_string_equal(smaps_vmflag_name(VMF_GU), "gu");
	smaps_vmflags("rd wr xy ?? ac", text);
	assert_string_equal(text, "xy");
	assert_int_equal(parse("7f00-7f01 rw-p 00000000 00:00 0 \nProtectionKey:        3\n"
			       "VmFlags: rd wr mr mw me ac \n",
			       &s),
			 0);
	assert_int_equal(s.v[0].pkey, 3);
	smaps_free(&s);
}

/* Shared memory with no file: shared anonymous memory and shared memfd mappings are dumped. */
static void test_shared_kinds(void **state)
{
	static const struct {
		const char *line;
		int kind;
		const char *why;
	} cases[] = {
		{"7f00-7f01 rw-s 00000000 00:01 2048 /dev/zero (deleted)", MEM_ANON_SHARED},
		{"7f00-7f01 r--s 00002000 00:01 2048 /dev/zero (deleted)", MEM_ANON_SHARED},
		{"7f00-7f01 rw-s 00000000 00:01 2048 [anon_shmem:ring]", MEM_ANON_SHARED},
		{"7f00-7f01 rw-p 00000000 00:01 2048 /dev/zero (deleted)", -ENOTSUP, "private"},
		{"7f00-7f01 rw-s 00000000 00:01 0 /dev/zero (deleted)", -ENOTSUP, "private"},
		{"7f00-7f01 rw-s 00000000 00:01 32770 /SYSV00000000 (deleted)", MEM_SYSV},
		{"7f00-7f01 rw-p 00000000 00:01 32770 /SYSV00000000 (deleted)", -ENOTSUP,
		 "System V"},
		{"7f00-7f01 rw-s 00000000 00:01 1031 /memfd:buf (deleted)", MEM_MEMFD},
		{"7f00-7f01 rw-p 00000000 00:01 1031 /memfd:buf (deleted)", -ENOTSUP, "memfd"},
		{"7f00-7f01 rw-s 00000000 08:01 1234 /tmp/gone (deleted)", -ENOTSUP,
		 "deleted file"},
		{"7f00-7f01 rw-s 00000000 00:00 0 ", -ENOTSUP, "no name"},
	};
	struct smaps s = {0};
	char text[160];
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "%s\nVmFlags: rd wr sh mr mw me ms \n", cases[i].line);
		assert_int_equal(parse(text, &s), 0);
		assert_int_equal(s.n, 1);
		why = NULL;
		assert_int_equal(mem_vma_kind(&s.v[0], &why), cases[i].kind);
		if (cases[i].why)
			assert_contains(why, cases[i].why);
		smaps_free(&s);
	}
}

static void test_stat(void **state)
{
	/* A name with spaces and a ')' inside, and fields 3 to 52. */
	static const char text[] =
		"42 (a b) c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123 4096 100 "
		"18446744073709551615 4194304 4198400 140737488347136 0 0 0 0 0 0 0 0 0 17 1 0 0 "
		"0 0 0 6295552 6295600 6299648 140737488348000 140737488348100 140737488348100 "
		"140737488349000 0\n";
	struct crf_rst_mm mm = {0};

	(void)state;
	assert_int_equal(mem_parse_stat(text, &mm), 0);
	assert_true(mm.start_code == 4194304 && mm.end_code == 4198400);
	assert_true(mm.start_stack == 140737488347136ULL);
	assert_true(mm.start_data == 6295552 && mm.end_data == 6295600);
	assert_true(mm.start_brk == 6299648);
	assert_true(mm.arg_start == 140737488348000ULL && mm.arg_end == 140737488348100ULL);
	assert_true(mm.env_start == 140737488348100ULL && mm.env_end == 140737488349000ULL);
	assert_int_equal(mem_parse_stat("1 (x) S 1 2 3\n", &mm), -EINVAL);
	assert_int_equal(mem_parse_stat("no parenthesis", &mm), -EINVAL);
}

static void test_vdso_layout(void **state)
{
	struct mem_vdso_layout dump = {0}, here = {0};
	char why[160];

	(void)state;
	mem_vdso_layout_add(&dump, MEM_VVAR, 0x1000, 0x5000);
	mem_vdso_layout_add(&dump, MEM_VVAR_VCLOCK, 0x5000, 0x7000);
	mem_vdso_layout_add(&dump, MEM_VDSO, 0x7000, 0x9000);
	/* The same layout elsewhere matches. */
	mem_vdso_layout_add(&here, MEM_VVAR, 0x11000, 0x15000);
	mem_vdso_layout_add(&here, MEM_VVAR_VCLOCK, 0x15000, 0x17000);
	mem_vdso_layout_add(&here, MEM_VDSO, 0x17000, 0x19000);
	assert_int_equal(mem_vdso_layout_check(&dump, &here, why, sizeof(why)), 0);

	mem_vdso_layout_add(&here, MEM_VVAR, 0x12000, 0x15000);
	assert_int_equal(mem_vdso_layout_check(&dump, &here, why, sizeof(why)), -ENOTSUP);
	assert_string_equal(why, "the dump's [vvar] is 16 KiB, this kernel's 12 KiB");

	here = (struct mem_vdso_layout){0};
	mem_vdso_layout_add(&here, MEM_VVAR, 0x11000, 0x15000);
	mem_vdso_layout_add(&here, MEM_VDSO, 0x17000, 0x19000);
	assert_int_equal(mem_vdso_layout_check(&dump, &here, why, sizeof(why)), -ENOTSUP);
	assert_string_equal(why, "the dump's [vvar_vclock] is 8 KiB, this kernel's absent");

	mem_vdso_layout_add(&here, MEM_VVAR_VCLOCK, 0x19000, 0x1b000);
	assert_int_equal(mem_vdso_layout_check(&dump, &here, why, sizeof(why)), -ENOTSUP);
	assert_string_equal(
		why, "the dump's [vvar_vclock] is at -8 KiB from [vdso], this kernel's at +8 KiB");

	/* Our own layout is well-formed: a [vdso] with a [vvar] before it. */
	assert_int_equal(mem_vdso_layout_self(&here), 0);
	assert_true(here.a[VDSO_VDSO].end > here.a[VDSO_VDSO].start);
	assert_true(here.a[VDSO_VVAR].end && here.a[VDSO_VVAR].end <= here.a[VDSO_VDSO].start);
}

static void test_punch(void **state)
{
	static const char text[] = "1000-5000 rw-p 00000000 00:00 0 \n"
				   "VmFlags: rd wr\n"
				   "6000-9000 r--p 00002000 08:01 12 /lib/x\n"
				   "a000-b000 rw-p 00000000 00:00 0 [heap]\n";
	struct smaps s = {0};

	(void)state;
	assert_int_equal(parse(text, &s), 0);
	/* Inside the first: split in two, flags kept on both halves. */
	assert_int_equal(smaps_punch(&s, 0x2000, 0x3000), 0);
	assert_int_equal(s.n, 4);
	assert_true(s.v[0].start == 0x1000 && s.v[0].end == 0x2000);
	assert_true(s.v[1].start == 0x3000 && s.v[1].end == 0x5000);
	assert_string_equal(s.v[1].vmflags_text, "rd wr");
	/* Over the end of one and the start of the next: the file offset follows. */
	assert_int_equal(smaps_punch(&s, 0x4000, 0x7000), 0);
	assert_true(s.v[1].end == 0x4000);
	assert_true(s.v[2].start == 0x7000 && s.v[2].pgoff == 0x3000);
	/* All of one: gone. */
	assert_int_equal(smaps_punch(&s, 0xa000, 0xb000), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.v[2].name, "/lib/x");
	smaps_free(&s);
}

/* /proc/sysvipc/shm: the header is skipped, a segment is found by id. */
static void test_sysv_table(void **state)
{
	static const char table[] = "       key      shmid perms                  size  cpid  lpid "
				    "nattch   uid   gid  cuid  cgid      atime      dtime      "
				    "ctime                   rss                  swap\n"
				    "2046822899         11   640                 16384  2547  2547 "
				    "     2  1000   100     0     0 1700000000          0 "
				    "1700000000                 16384                     0\n"
				    "         0         12  1600                  8192  2600  2600 "
				    "     1     0     0     0     0 1700000000          0 "
				    "1700000000                  8192                     0\n";
	struct mem_sysv_seg s;
	FILE *f;

	(void)state;
	assert_int_equal(mem_sysv_parse("       key      shmid perms\n", &s), -EINVAL);
	assert_int_equal(mem_sysv_parse("garbage\n", &s), -EINVAL);
	f = fmemopen((void *)table, sizeof(table) - 1, "r");
	assert_non_null(f);
	assert_int_equal(mem_sysv_find(f, 12, &s), 0);
	assert_int_equal(s.key, 0);
	assert_int_equal(s.mode, 01600); /* SHM_DEST: removed */
	assert_int_equal(s.size, 8192);
	assert_int_equal(s.nattch, 1);
	rewind(f);
	assert_int_equal(mem_sysv_find(f, 11, &s), 0);
	assert_int_equal(s.key, 0x7a0009f3);
	assert_int_equal(s.mode, 0640);
	assert_int_equal(s.size, 16384);
	assert_int_equal(s.nattch, 2);
	assert_int_equal(s.uid, 1000);
	assert_int_equal(s.gid, 100);
	rewind(f);
	assert_int_equal(mem_sysv_find(f, 13, &s), -ENOENT);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),	  cmocka_unit_test(test_plain_maps),
		cmocka_unit_test(test_bad_lines), cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_vmflags),	  cmocka_unit_test(test_shared_kinds),
		cmocka_unit_test(test_stat),	  cmocka_unit_test(test_vdso_layout),
		cmocka_unit_test(test_punch),	  cmocka_unit_test(test_sysv_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
