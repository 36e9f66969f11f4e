// SPDX-License-Identifier: GPL-2.0-only
/*
 * The /proc/PID/smaps parser, and what a mapping's line means to a dump.
 *
 * A mapping is a maps line, "start-end perms offset major:minor inode
 * [name]", which smaps follows with "Key: value" lines; the only one read is
 * VmFlags (and ProtectionKey).  Field lines start with an upper-case key and mapping lines with a
 * lower-case hex address, which tells them apart.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <crf/log.h>
#include <crf/restore.h>

#include "smaps.h"

static const struct {
	char name[3];
	uint64_t bit;
} vmflag_names[] = {
	{"rd", VMF_RD}, {"wr", VMF_WR}, {"ex", VMF_EX}, {"sh", VMF_SH}, {"mr", VMF_MR},
	{"mw", VMF_MW}, {"me", VMF_ME}, {"ms", VMF_MS}, {"gd", VMF_GD}, {"pf", VMF_PF},
	{"lo", VMF_LO}, {"io", VMF_IO}, {"sr", VMF_SR}, {"rr", VMF_RR}, {"dc", VMF_DC},
	{"de", VMF_DE}, {"lf", VMF_LF}, {"ac", VMF_AC}, {"nr", VMF_NR}, {"ht", VMF_HT},
	{"sf", VMF_SF}, {"ar", VMF_AR}, {"wf", VMF_WF}, {"dd", VMF_DD}, {"sd", VMF_SD},
	{"mm", VMF_MM}, {"hg", VMF_HG}, {"nh", VMF_NH}, {"mg", VMF_MG}, {"um", VMF_UM},
	{"uw", VMF_UW}, {"ui", VMF_UI}, {"ss", VMF_SS}, {"dp", VMF_DP}, {"sl", VMF_SL},
	{"gu", VMF_GU},
};

#define N_NAMES (sizeof(vmflag_names) / sizeof(vmflag_names[0]))

uint64_t smaps_vmflags(const char *text, char *unknown)
{
	uint64_t bits = 0, bit;
	const char *p = text;
	size_t len;

	if (unknown)
		unknown[0] = '\0';
	while (*p) {
		while (*p == ' ' || *p == '\t')
			p++;
		len = strcspn(p, " \t");
		bit = 0;
		for (size_t i = 0; len == 2 && i < N_NAMES; i++)
			if (!memcmp(p, vmflag_names[i].name, 2))
				bit = vmflag_names[i].bit;
		if (len && !bit && unknown && !unknown[0])
			snprintf(unknown, 8, "%.*s", (int)(len < 7 ? len : 7), p);
		bits |= bit;
		p += len;
	}
	return bits;
}

const char *smaps_vmflag_name(uint64_t bit)
{
	for (size_t i = 0; i < N_NAMES; i++)
		if (vmflag_names[i].bit == bit)
			return vmflag_names[i].name;
	return "??";
}

void smaps_free(struct smaps *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].vmflags_text);
	}
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static struct smaps_vma *smaps_append(struct smaps *s)
{
	struct smaps_vma *v;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;

		v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	v = &s->v[s->n++];
	memset(v, 0, sizeof(*v));
	return v;
}

static int parse_perms(const char *perms, struct smaps_vma *v)
{
	static const char want[4][2] = {{'r', '-'}, {'w', '-'}, {'x', '-'}, {'s', 'p'}};

	if (strlen(perms) != 4)
		return -EINVAL;
	for (int i = 0; i < 4; i++)
		if (perms[i] != want[i][0] && perms[i] != want[i][1])
			return -EINVAL;
	v->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	v->shared = perms[3] == 's';
	return 0;
}

/* A mapping line, newline already stripped. */
static int parse_mapping(char *line, struct smaps *s)
{
	struct smaps_vma *v;
	char perms[8];
	int pos = -1;

	v = smaps_append(s);
	if (!v)
		return -ENOMEM;
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 "%n", &v->start,
		   &v->end, perms, &v->pgoff, &v->dev_major, &v->dev_minor, &v->inode, &pos) != 7 ||
	    pos < 0 || (line[pos] && line[pos] != ' ') || v->start >= v->end)
		goto bad;
	if (parse_perms(perms, v))
		goto bad;
	/* The name is the rest of the line after the padding; it may hold spaces. */
	while (line[pos] == ' ')
		pos++;
	v->name = strdup(line + pos);
	if (!v->name) {
		s->n--;
		return -ENOMEM;
	}
	return 0;
bad:
	s->n--;
	return -EINVAL;
}

/* A "Key: value" line of the last mapping. */
static int parse_field(char *line, struct smaps *s)
{
	char *colon = strchr(line, ':');
	struct smaps_vma *v;
	size_t len;

	if (!colon || !s->n)
		return -EINVAL;
	v = &s->v[s->n - 1];
	if (colon - line == 13 && !memcmp(line, "ProtectionKey", 13)) {
		v->pkey = (unsigned int)strtoul(colon + 1, NULL, 10);
		return 0;
	}
	if (colon - line == 3 && !memcmp(line, "Rss", 3)) {
		v->rss_kb = strtoull(colon + 1, NULL, 10);
		v->has_rss = true;
		return 0;
	}
	if (colon - line == 4 && !memcmp(line, "Swap", 4)) {
		v->swap_kb = strtoull(colon + 1, NULL, 10);
		return 0;
	}
	if (colon - line != 7 || memcmp(line, "VmFlags", 7))
		return 0;
	colon++;
	while (*colon == ' ')
		colon++;
	len = strlen(colon);
	while (len && colon[len - 1] == ' ')
		colon[--len] = '\0';
	free(v->vmflags_text);
	v->vmflags_text = strdup(colon);
	if (!v->vmflags_text)
		return -ENOMEM;
	v->vmflags = smaps_vmflags(colon, v->unknown);
	v->has_vmflags = true;
	return 0;
}

int smaps_parse(FILE *f, struct smaps *out)
{
	unsigned int lineno = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int r = 0;

	smaps_free(out);
	while ((len = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (isdigit((unsigned char)line[0]) || (line[0] >= 'a' && line[0] <= 'f'))
			r = parse_mapping(line, out);
		else if (isupper((unsigned char)line[0]))
			r = parse_field(line, out);
		else
			r = -EINVAL;
		if (r == -EINVAL)
			crf_error("smaps line %u is not a mapping or a field: '%.80s'", lineno,
				  line);
		if (r < 0)
			break;
	}
	if (!r && ferror(f))
		r = crf_error_errno(EIO, "reading smaps");
	free(line);
	if (r < 0)
		smaps_free(out);
	return r;
}

/* Insert a copy of mapping @i after it; 0 or -ENOMEM. */
static int smaps_dup(struct smaps *s, size_t i)
{
	struct smaps_vma copy = s->v[i];

	copy.name = strdup(copy.name);
	copy.vmflags_text = copy.vmflags_text ? strdup(copy.vmflags_text) : NULL;
	if (!copy.name || (s->v[i].vmflags_text && !copy.vmflags_text) || !smaps_append(s)) {
		free(copy.name);
		free(copy.vmflags_text);
		return -ENOMEM;
	}
	memmove(&s->v[i + 2], &s->v[i + 1], (s->n - i - 2) * sizeof(s->v[0]));
	s->v[i + 1] = copy;
	return 0;
}

static void smaps_remove(struct smaps *s, size_t i)
{
	free(s->v[i].name);
	free(s->v[i].vmflags_text);
	memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof(s->v[0]));
	s->n--;
}

int smaps_punch(struct smaps *s, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < s->n; i++) {
		struct smaps_vma *v = &s->v[i];

		if (v->end <= start || end <= v->start)
			continue;
		if (start <= v->start && v->end <= end) {
			smaps_remove(s, i--);
		} else if (start <= v->start) {
			v->pgoff += end - v->start;
			v->start = end;
		} else if (v->end <= end) {
			v->end = start;
		} else {
			/* The hole is inside: split, then trim both halves. */
			if (smaps_dup(s, i))
				return -ENOMEM;
			s->v[i].end = start;
			s->v[i + 1].pgoff += end - s->v[i + 1].start;
			s->v[i + 1].start = end;
			i++;
		}
	}
	return 0;
}

static bool name_starts(const char *name, const char *prefix)
{
	return !strncmp(name, prefix, strlen(prefix));
}

static bool name_ends(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return n >= k && !strcmp(name + n - k, suffix);
}

/*
 * Flags no restore can give a mapping back, and what they say it is.  The
 * first ones make a mapping something else than memory (device memory,
 * hugetlbfs pages, a shadow stack); the userfaultfd ones name a registration
 * that belongs to a userfaultfd the tree holds.
 */
static const struct {
	uint64_t bit;
	const char *why;
} never_restored[] = {
	{VMF_IO, "device memory (VmFlags 'io', VM_IO)"},
	{VMF_PF, "device memory (VmFlags 'pf', VM_PFNMAP)"},
	{VMF_MM, "device memory (VmFlags 'mm', VM_MIXEDMAP)"},
	{VMF_AR, "device memory (VmFlags 'ar', VM_PAT)"},
	{VMF_HT, "hugetlbfs memory (VmFlags 'ht', not supported yet)"},
	{VMF_SS, "a shadow stack (VmFlags 'ss', not supported yet)"},
	{VMF_SF, "a MAP_SYNC mapping of a DAX file (VmFlags 'sf', not supported)"},
	{VMF_DE, "a mapping made by a driver or the kernel (VmFlags 'de', VM_DONTEXPAND)"},
	{VMF_UM, "registered with a userfaultfd for missing pages (VmFlags 'um', not restored)"},
	{VMF_UW, "registered with a userfaultfd for write protection (VmFlags 'uw', not restored)"},
	{VMF_UI, "registered with a userfaultfd for minor faults (VmFlags 'ui', not restored)"},
};

/* What the kernel shows on every mapping, from its protection and kind. */
#define VMF_PLAIN (VMF_RD | VMF_WR | VMF_EX | VMF_MR | VMF_MW | VMF_ME | VMF_SD)
/* What a program sets on a mapping, and the restore sets again. */
#define VMF_SETTABLE                                                                               \
	(VMF_GD | VMF_LO | VMF_LF | VMF_SR | VMF_RR | VMF_DC | VMF_NR | VMF_DD | VMF_HG | VMF_NH | \
	 VMF_SL | VMF_GU)
/* Only a private mapping has these: accounting, WIPEONFORK, KSM, MAP_DROPPABLE. */
#define VMF_PRIVATE_ONLY (VMF_AC | VMF_WF | VMF_MG | VMF_DP)
/* The kernel's own vDSO and vvar areas. */
#define VMF_VDSO (VMF_PLAIN | VMF_DE | VMF_DD | VMF_PF | VMF_IO | VMF_MM)

static uint64_t restorable_flags(enum mem_kind kind)
{
	switch (kind) {
	case MEM_SKIP:
		return ~0ull;
	case MEM_VDSO:
	case MEM_VVAR:
	case MEM_VVAR_VCLOCK:
		return VMF_VDSO;
	case MEM_ANON_PRIVATE:
	case MEM_FILE_PRIVATE:
		return VMF_PLAIN | VMF_SETTABLE | VMF_PRIVATE_ONLY;
	default:
		return VMF_PLAIN | VMF_SETTABLE | VMF_SH | VMF_MS;
	}
}

uint64_t mem_vma_lost_flags(enum mem_kind kind, uint64_t vmflags, const char **why)
{
	uint64_t lost = vmflags & ~restorable_flags(kind);

	if (!lost)
		return 0;
	*why = "a VmFlags flag this kind of mapping cannot have again";
	for (size_t i = 0; i < sizeof(never_restored) / sizeof(never_restored[0]); i++)
		if (lost & never_restored[i].bit) {
			*why = never_restored[i].why;
			break;
		}
	if (kind == MEM_VDSO && (lost & VMF_SL))
		*why = "a sealed vDSO (VmFlags 'sl', not supported)";
	return lost;
}

/*
 * Shared anonymous memory: mmap(MAP_SHARED | MAP_ANONYMOUS), shown as
 * "/dev/zero (deleted)" or, once named, "[anon_shmem:NAME]", backed by a
 * shmem object (a nonzero inode), saved once for the whole tree: sharing
 * with processes outside the dumped tree is not preserved.  A private
 * mapping of such an object (mmap of its /proc/PID/map_files entry with
 * MAP_PRIVATE) would need the object and a private copy of its pages both.
 */
static int anon_shared_kind(const struct smaps_vma *v, const char **why)
{
	if (!v->shared || !v->inode) {
		*why = "a private mapping of shared anonymous memory (not supported)";
		return -ENOTSUP;
	}
	return MEM_ANON_SHARED;
}

/* Kernel-made mappings by name: the vDSO's, and the ones left alone. */
static int special_kind(const struct smaps_vma *v, const char **why)
{
	if (!strcmp(v->name, "[vdso]"))
		return MEM_VDSO;
	if (!strcmp(v->name, "[vvar]"))
		return MEM_VVAR;
	if (!strcmp(v->name, "[vvar_vclock]"))
		return MEM_VVAR_VCLOCK;
	if (!strcmp(v->name, "[vsyscall]"))
		return MEM_SKIP;
	if (name_starts(v->name, "[anon_shmem:"))
		return anon_shared_kind(v, why);
	if (name_starts(v->name, "[anon:") || !strcmp(v->name, "[heap]") ||
	    name_starts(v->name, "[stack")) {
		if (!v->shared)
			return MEM_ANON_PRIVATE;
		*why = "shared memory named as private anonymous memory";
		return -ENOTSUP;
	}
	if (!strcmp(v->name, "[uprobes]"))
		*why = "the kernel's uprobes area (not supported)";
	else
		*why = "a special mapping of the kernel the plugin does not know";
	return -ENOTSUP;
}

/* Memory with no file to map again after the dump, other than shared anonymous. */
static const char *no_file_why(const struct smaps_vma *v)
{
	if (name_starts(v->name, "/SYSV"))
		return "System V shared memory with flags the plugin does not support";
	if (name_starts(v->name, "/memfd:"))
		return "a private mapping of a memfd (not supported yet)";
	if (!strcmp(v->name, "/[aio] (deleted)"))
		return "an aio ring of io_setup() (not supported)";
	if (name_starts(v->name, "/anon_hugepage"))
		return "hugetlbfs memory (MAP_HUGETLB, not supported yet)";
	if (!strcmp(v->name, "/secretmem (deleted)"))
		return "secret memory of memfd_secret() (not supported)";
	if (name_ends(v->name, " (deleted)"))
		return "a mapping of a deleted file (not supported yet)";
	return NULL;
}

static int plain_kind(const struct smaps_vma *v, const char **why)
{
	if (v->name[0] == '\0' && v->shared) {
		*why = "shared memory with no name (not supported)";
		return -ENOTSUP;
	}
	if (v->name[0] == '\0')
		return MEM_ANON_PRIVATE;
	if (!strcmp(v->name, "/dev/zero (deleted)"))
		return anon_shared_kind(v, why);
	if (name_starts(v->name, "/memfd:") && v->shared && v->inode)
		return MEM_MEMFD;
	/* The inode of a segment's file is its shmid. */
	if (name_starts(v->name, "/SYSV") && v->shared && v->inode <= INT32_MAX &&
	    !(v->vmflags & VMF_GD))
		return MEM_SYSV;
	if ((*why = no_file_why(v)))
		return -ENOTSUP;
	if (!strcmp(v->name, "anon_inode:[io_uring]")) {
		*why = "the rings of an io_uring instance (not supported)";
		return -ENOTSUP;
	}
	if (!strcmp(v->name, "anon_inode:[perf_event]")) {
		*why = "a perf event's ring buffer (not supported)";
		return -ENOTSUP;
	}
	if (name_starts(v->name, "anon_inode:")) {
		*why = "a mapping of an anonymous inode's fd, a driver's or the kernel's (not "
		       "supported)";
		return -ENOTSUP;
	}
	if (v->name[0] != '/' || !v->inode) {
		*why = "a mapping of something other than a file";
		return -ENOTSUP;
	}
	return v->shared ? MEM_FILE_SHARED : MEM_FILE_PRIVATE;
}

int mem_vma_kind(const struct smaps_vma *v, const char **why)
{
	int kind;

	/* By name first: what a mapping is says more than its flags do. */
	if (v->name[0] == '[')
		kind = special_kind(v, why);
	else
		kind = plain_kind(v, why);
	if (kind >= 0 && mem_vma_lost_flags(kind, v->vmflags, why))
		return -ENOTSUP;
	return kind;
}

int mem_vma_map_flags(enum mem_kind kind, uint64_t vmflags)
{
	bool shared = kind == MEM_FILE_SHARED || kind == MEM_ANON_SHARED || kind == MEM_MEMFD;
	int flags = shared ? MAP_SHARED : MAP_PRIVATE;

	/* shmat() takes no mmap flags: the segment decides. */
	if (kind == MEM_SYSV)
		return MAP_SHARED;

	if (kind == MEM_ANON_PRIVATE || kind == MEM_ANON_SHARED)
		flags |= MAP_ANONYMOUS;
	/* A mapping type of its own, which also sets "nr", "wf" and "dd". */
	if (kind == MEM_ANON_PRIVATE && (vmflags & VMF_DP))
		flags = (flags & ~MAP_PRIVATE) | MAP_DROPPABLE;
	if (vmflags & VMF_GD)
		flags |= MAP_GROWSDOWN;
	if (vmflags & VMF_NR)
		flags |= MAP_NORESERVE;
	if (vmflags & VMF_LO)
		flags |= MAP_LOCKED;
	return flags;
}

uint64_t mem_vma_madv(uint64_t vmflags)
{
	static const struct {
		uint64_t vmf;
		int advice;
	} map[] = {
		{VMF_SR, MADV_SEQUENTIAL}, {VMF_RR, MADV_RANDOM},    {VMF_DC, MADV_DONTFORK},
		{VMF_WF, MADV_WIPEONFORK}, {VMF_DD, MADV_DONTDUMP},  {VMF_HG, MADV_HUGEPAGE},
		{VMF_NH, MADV_NOHUGEPAGE}, {VMF_MG, MADV_MERGEABLE},
	};
	uint64_t madv = 0;

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (vmflags & map[i].vmf)
			madv |= 1ULL << map[i].advice;
	return madv;
}

bool mem_vma_cow_eligible(enum mem_kind kind, int prot, uint64_t vmflags)
{
	return kind == MEM_ANON_PRIVATE && (prot & PROT_WRITE) &&
	       !(vmflags & (VMF_GD | VMF_LO | VMF_LF | VMF_GU | VMF_DP | VMF_SH | VMF_MS));
}

uint32_t mem_vma_rst_vm(uint64_t vmflags)
{
	uint32_t vm = CRF_RST_VM_EXACT;

	if (vmflags & VMF_AC)
		vm |= CRF_RST_VM_ACCOUNT;
	if ((vmflags & (VMF_LO | VMF_LF)) == (VMF_LO | VMF_LF))
		vm |= CRF_RST_VM_LOCKONFAULT;
	if (vmflags & VMF_SL)
		vm |= CRF_RST_VM_SEALED;
	if (vmflags & VMF_GU)
		vm |= CRF_RST_VM_GUARD;
	return vm;
}
