// SPDX-License-Identifier: GPL-2.0-only
/*
 * The /proc/PID/smaps parser, and what a mapping's line means to a dump.
 *
 * A mapping is a maps line, "start-end perms offset major:minor inode
 * [name]", which smaps follows with "Key: value" lines; the only one read is
 * VmFlags.  Field lines start with an upper-case key and mapping lines with a
 * lower-case hex address, which tells them apart.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <crf/log.h>

#include "smaps.h"

static const struct {
	char name[3];
	uint32_t bit;
} vmflag_names[] = {
	{"sh", VMF_SH}, {"mw", VMF_MW}, {"gd", VMF_GD}, {"pf", VMF_PF}, {"lo", VMF_LO},
	{"io", VMF_IO}, {"sr", VMF_SR}, {"rr", VMF_RR}, {"dc", VMF_DC}, {"lf", VMF_LF},
	{"nr", VMF_NR}, {"ht", VMF_HT}, {"wf", VMF_WF}, {"dd", VMF_DD}, {"hg", VMF_HG},
	{"nh", VMF_NH}, {"mg", VMF_MG}, {"um", VMF_UM}, {"uw", VMF_UW}, {"ss", VMF_SS},
};

uint32_t smaps_vmflags(const char *text)
{
	uint32_t bits = 0;
	const char *p = text;
	size_t len;

	/* Mnemonics come and go with kernel versions; unknown ones are ignored. */
	while (*p) {
		while (*p == ' ' || *p == '\t')
			p++;
		len = strcspn(p, " \t");
		if (len == 2)
			for (size_t i = 0; i < sizeof(vmflag_names) / sizeof(vmflag_names[0]); i++)
				if (!memcmp(p, vmflag_names[i].name, 2))
					bits |= vmflag_names[i].bit;
		p += len;
	}
	return bits;
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
	if (colon - line != 7 || memcmp(line, "VmFlags", 7))
		return 0;
	v = &s->v[s->n - 1];
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
	v->vmflags = smaps_vmflags(colon);
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
 * Shared anonymous memory: mmap(MAP_SHARED | MAP_ANONYMOUS), shown as
 * "/dev/zero (deleted)" or, once named, "[anon_shmem:NAME]", backed by a
 * shmem object (a nonzero inode), saved once for the whole tree: sharing
 * with processes outside the dumped tree is not preserved.
 */
static int anon_shared_kind(const struct smaps_vma *v, const char **why)
{
	if (!v->shared || !v->inode) {
		*why = "a private mapping of shared anonymous memory (not supported)";
		return -ENOTSUP;
	}
	if (v->vmflags & (VMF_IO | VMF_PF | VMF_HT | VMF_SS)) {
		*why = "shared anonymous memory with flags the plugin does not support";
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
		if (v->vmflags & (VMF_IO | VMF_PF | VMF_HT | VMF_SS))
			*why = "anonymous memory with flags the plugin does not support";
		else if (v->shared)
			*why = "shared memory named as private anonymous memory";
		else
			return MEM_ANON_PRIVATE;
		return -ENOTSUP;
	}
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
	if (name_ends(v->name, " (deleted)"))
		return "a mapping of a deleted file (not supported yet)";
	return NULL;
}

int mem_vma_kind(const struct smaps_vma *v, const char **why)
{
	/* The vDSO's data pages are raw page frames; known by name, they come first. */
	if (v->name[0] == '[')
		return special_kind(v, why);
	if (v->vmflags & (VMF_IO | VMF_PF)) {
		*why = "device memory (VM_IO or VM_PFNMAP)";
		return -ENOTSUP;
	}
	if (v->vmflags & VMF_HT) {
		*why = "hugetlbfs memory (not supported yet)";
		return -ENOTSUP;
	}
	if (v->vmflags & VMF_SS) {
		*why = "a shadow stack (not supported yet)";
		return -ENOTSUP;
	}
	if (v->name[0] == '\0' && v->shared) {
		*why = "shared memory with no name (not supported)";
		return -ENOTSUP;
	}
	if (v->name[0] == '\0')
		return MEM_ANON_PRIVATE;
	if (!strcmp(v->name, "/dev/zero (deleted)"))
		return anon_shared_kind(v, why);
	if (name_starts(v->name, "/memfd:") && v->shared && v->inode &&
	    !(v->vmflags & (VMF_IO | VMF_PF | VMF_HT | VMF_SS)))
		return MEM_MEMFD;
	/* The inode of a segment's file is its shmid. */
	if (name_starts(v->name, "/SYSV") && v->shared && v->inode <= INT32_MAX &&
	    !(v->vmflags & (VMF_IO | VMF_PF | VMF_HT | VMF_SS | VMF_GD)))
		return MEM_SYSV;
	if ((*why = no_file_why(v)))
		return -ENOTSUP;
	if (v->name[0] != '/' || !v->inode) {
		*why = "a mapping of something other than a file";
		return -ENOTSUP;
	}
	return v->shared ? MEM_FILE_SHARED : MEM_FILE_PRIVATE;
}

int mem_vma_map_flags(enum mem_kind kind, uint32_t vmflags)
{
	bool shared = kind == MEM_FILE_SHARED || kind == MEM_ANON_SHARED || kind == MEM_MEMFD;
	int flags = shared ? MAP_SHARED : MAP_PRIVATE;

	/* shmat() takes no mmap flags: the segment decides. */
	if (kind == MEM_SYSV)
		return MAP_SHARED;

	if (kind == MEM_ANON_PRIVATE || kind == MEM_ANON_SHARED)
		flags |= MAP_ANONYMOUS;
	if (vmflags & VMF_GD)
		flags |= MAP_GROWSDOWN;
	if (vmflags & VMF_NR)
		flags |= MAP_NORESERVE;
	if (vmflags & VMF_LO)
		flags |= MAP_LOCKED;
	return flags;
}

uint64_t mem_vma_madv(uint32_t vmflags)
{
	static const struct {
		uint32_t vmf;
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
