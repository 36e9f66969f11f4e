// SPDX-License-Identifier: GPL-2.0-only
/*
 * The settings of a cgroup that crf does not write back (docs/cgroup.md,
 * "Every other setting"): at the dump, each must read as in a cgroup made
 * new in the same place, or the dump is refused by name.
 *
 * A setting is any regular file of the cgroup that can be read and written,
 * whatever the kernel calls it, less the memberships (cgroup.procs, tasks),
 * the counters a write resets (memory.failcnt, cpuacct.usage, ...), the
 * pressure files (a write there makes a trigger of the open file) and
 * cpu.weight.nice (cpu.weight, saved).  What a new cgroup has is read from
 * a scratch cgroup made beside it, under the same parent, for the time of
 * the check and always removed again: it inherits what a cgroup made there
 * at restore would (memory.swappiness, notify_on_release, the v1 device
 * list...).  Where no scratch cgroup can be made, a table of known defaults
 * says; a setting it does not know refuses.
 *
 * Every such setting's value goes into Dir.checked: the restore reads each
 * again, in every mode, and refuses where it differs (manage.c).  With
 * manage-cgroups = none or props at the dump (the cgroups are to be taken
 * as they are), a setting that differs from the new cgroup's is saved and
 * not refused: the restore then needs the cgroup as it was.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crf/cleanup.h>
#include <crf/log.h>

#include "props.h"

/*
 * Where an entry applies: @ctl NULL, cgroup v2; "" every v1 hierarchy; else
 * a v1 hierarchy with that controller.
 */
static bool applies(const char *ctl, const char *hier)
{
	if (!ctl)
		return !*hier;
	return *hier && (!*ctl || cg_v1_has(hier, ctl));
}

/* Files that are no settings: read and writable, but not a state to keep. */
static const struct {
	const char *pattern, *ctl;
} not_settings[] = {
	{"cgroup.procs", NULL},
	{"cgroup.threads", NULL},
	{"cgroup.procs", ""},
	{"tasks", ""},
	{"cpu.pressure", NULL},
	{"io.pressure", NULL},
	{"memory.pressure", NULL},
	{"irq.pressure", NULL},
	{"memory.peak", NULL},
	{"memory.swap.peak", NULL},
	{"cpu.weight.nice", NULL},
	{"memory.*failcnt", "memory"},
	{"memory.*max_usage_in_bytes", "memory"},
	{"hugetlb.*failcnt", "hugetlb"},
	{"hugetlb.*max_usage_in_bytes", "hugetlb"},
	{"cpuacct.usage", "cpuacct"},
};

/*
 * What a new cgroup has, where no scratch cgroup says: @ok as in
 * reads_ok(), or "=" for the parent's value (a new cgroup inherits it).
 * @rule: checked by @ok even where a scratch cgroup is there (the line of a
 * saved setting, or a counter among the lines).
 */
static const struct unsaved {
	const char *pattern, *ctl, *ok;
	bool rule;
} known[] = {
	{"cgroup.freeze", NULL, "0"},
	{"cgroup.pressure", NULL, "1"},
	{"hugetlb.*.max", NULL, "max"},
	{"hugetlb.*.rsvd.max", NULL, "max"},
	{"io.latency", NULL, ""},
	{"rdma.max", NULL, ""},
	{"cpu.max.burst", NULL, "0"},
	{"cpu.idle", NULL, "0"},
	{"cpu.uclamp.min", NULL, "0.00"},
	{"cpu.uclamp.max", NULL, "max"},
	{"cpuset.cpus.exclusive", NULL, ""},
	{"memory.swap.high", NULL, "max"},
	{"memory.zswap.max", NULL, "max"},
	{"memory.zswap.writeback", NULL, "="},
	{"io.bfq.weight", NULL, "default 100"},
	{"io.prio.class", NULL, "no-change"},
	{"cgroup.clone_children", "", "="},
	{"notify_on_release", "", "="},
	{"blkio.throttle.*_device", "blkio", ""},
	{"blkio.weight_device", "blkio", "^default ", true},
	{"blkio.bfq.weight_device", "blkio", "^default ", true},
	{"hugetlb.*.limit_in_bytes", "hugetlb", "9223372036854771712"},
	{"memory.oom_control", "memory", "~oom_kill_disable 0", true},
	{"memory.kmem.limit_in_bytes", "memory", "9223372036854771712"},
	{"memory.kmem.tcp.limit_in_bytes", "memory", "9223372036854771712"},
	{"memory.move_charge_at_immigrate", "memory", "0"},
	{"memory.swappiness", "memory", "="},
	{"memory.use_hierarchy", "memory", "1"},
	{"cpu.rt_runtime_us", "cpu", "0"},
	{"cpu.rt_period_us", "cpu", "1000000"},
	{"cpu.cfs_burst_us", "cpu", "0"},
	{"cpu.idle", "cpu", "0"},
	{"cpuset.cpu_exclusive", "cpuset", "0"},
	{"cpuset.mem_exclusive", "cpuset", "0"},
	{"cpuset.mem_hardwall", "cpuset", "0"},
	{"cpuset.memory_migrate", "cpuset", "0"},
	{"cpuset.memory_spread_page", "cpuset", "="},
	{"cpuset.memory_spread_slab", "cpuset", "="},
	{"cpuset.sched_load_balance", "cpuset", "1"},
	{"cpuset.sched_relax_domain_level", "cpuset", "-1"},
	{"net_cls.classid", "net_cls", "0"},
	{"net_prio.ifpriomap", "net_prio", "="},
	{"freezer.state", "freezer", "THAWED"},
};

static const struct unsaved *find_known(const char *hier, const char *name)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (applies(known[i].ctl, hier) && !fnmatch(known[i].pattern, name, 0))
			return &known[i];
	return NULL;
}

static bool not_setting(const char *hier, const char *name)
{
	for (size_t i = 0; i < sizeof(not_settings) / sizeof(not_settings[0]); i++)
		if (applies(not_settings[i].ctl, hier) &&
		    !fnmatch(not_settings[i].pattern, name, 0))
			return true;
	return false;
}

/*
 * Does @value read as @ok says: equal; '~' a line equal to the rest;
 * '^' every line starting with the rest.
 */
static bool reads_ok(const char *value, const char *ok)
{
	size_t len = strlen(ok + 1);

	for (const char *s = value; *ok == '^' || *ok == '~';) {
		size_t n = strcspn(s, "\n");

		if (!*s)
			return *ok == '^';
		if (*ok == '^' && n && strncmp(s, ok + 1, len))
			return false;
		if (*ok == '~' && n == len && !strncmp(s, ok + 1, n))
			return true;
		s += n + (s[n] == '\n');
	}
	return !strcmp(value, ok);
}

/* A scratch cgroup beside the one checked: its directory, or "" when none could be made. */
struct scratch {
	char dir[4200];
	char why[128];
};

static void scratch_drop(struct scratch *s)
{
	if (*s->dir && rmdir(s->dir) < 0)
		crf_log_errno(CRF_LOG_WARN, errno, "cannot remove the scratch cgroup %s", s->dir);
	*s->dir = '\0';
}

static void scratch_make(struct scratch *s, const char *dir)
{
	const char *slash = strrchr(dir, '/');

	*s->dir = '\0';
	snprintf(s->dir, sizeof(s->dir), "%.*s/crf-scratch-%d", (int)(slash - dir), dir,
		 (int)getpid());
	/* One left by a crf of this PID that was killed meanwhile is empty: made again. */
	if (mkdir(s->dir, 0755) < 0 &&
	    (errno != EEXIST || rmdir(s->dir) < 0 || mkdir(s->dir, 0755) < 0)) {
		snprintf(s->why, sizeof(s->why), "no cgroup could be made beside it: %s",
			 strerror(errno));
		*s->dir = '\0';
	}
}

/* The parent's value of @name: what a new cgroup inherits. */
static int parent_value(const char *dir, const char *name, char **out)
{
	const char *slash = strrchr(dir, '/');
	char file[4400];

	snprintf(file, sizeof(file), "%.*s/%s", (int)(slash - dir), dir, name);
	return cg_read_value(file, out);
}

/*
 * What a new cgroup beside @dir has in @name: 0 with *@out; -ENOENT when
 * crf cannot tell (@why says why).
 */
static int default_of(const struct scratch *s, const char *dir, const char *name,
		      const struct unsaved *k, char **out, const char **why)
{
	char file[4400];
	int r;

	*why = s->why;
	if (*s->dir && !(k && k->rule)) {
		snprintf(file, sizeof(file), "%s/%s", s->dir, name);
		r = cg_read_value(file, out);
		if (r != -ENOENT)
			return r;
		*why = "a cgroup made beside it has no such file";
	}
	if (!k)
		return -ENOENT;
	if (!strcmp(k->ok, "="))
		return parent_value(dir, name, out);
	/* A rule's text, as a message shows it. */
	*out = strdup(*k->ok == '~' ? k->ok + 1 : *k->ok == '^' ? "default N" : k->ok);
	return *out ? 0 : -ENOMEM;
}

/* Does @value read as a new cgroup has it? */
static bool as_new(const char *value, const char *dflt, const struct unsaved *k, bool scratch)
{
	if (k && (k->rule || (!scratch && strcmp(k->ok, "="))))
		return reads_ok(value, k->ok);
	return !strcmp(value, dflt);
}

/* One value for a message: its lines joined with ','. */
static void one_line(char *text)
{
	for (char *c = text; (c = strchr(c, '\n'));)
		*c = ',';
}

static int check_file(Crf__Cgroup__Dir *d, const struct scratch *s, const char *dir,
		      const char *hier, const char *name, const char *file, pid_t pid, bool keep)
{
	const struct unsaved *k = find_known(hier, file);
	_cleanup_free_ char *value = NULL, *dflt = NULL;
	char path[4400];
	const char *why;
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	r = cg_read_value(path, &value);
	if (r == -ENOENT)
		return 0; /* gone meanwhile: a file of a controller switched off */
	if (r < 0)
		return crf_log_errno(CRF_LOG_ERROR, -r, "pid %d: cgroup %s: cannot read %s",
				     (int)pid, name, path);
	r = default_of(s, dir, file, k, &dflt, &why);
	if (r == -ENOENT) {
		one_line(value);
		crf_error("pid %d: cgroup %s: %s reads \"%.200s\", and what a new cgroup has is "
			  "not known (%s): crf does not restore this setting (docs/cgroup.md)",
			  (int)pid, name, file, value, why);
		return -EOPNOTSUPP;
	}
	if (r < 0)
		return crf_log_errno(CRF_LOG_ERROR, -r,
				     "pid %d: cgroup %s: %s: cannot read what a new cgroup has",
				     (int)pid, name, file);
	if (!keep && !as_new(value, dflt, k, *s->dir)) {
		one_line(value);
		one_line(dflt);
		crf_error("pid %d: cgroup %s: %s reads \"%.200s\", not \"%.200s\" as in a new "
			  "cgroup: crf does not restore this setting (docs/cgroup.md)",
			  (int)pid, name, file, value, dflt);
		return -EOPNOTSUPP;
	}
	return cg_add_prop(&d->checked, &d->n_checked, file, TAKE_PTR(value));
}

/* A regular file that may be read and written, not a saved setting nor a counter. */
static bool candidate(int dfd, const char *hier, const char *file)
{
	struct stat st;

	if (file[0] == '.' || cg_prop_index(hier, file) >= 0 || not_setting(hier, file))
		return false;
	if (fstatat(dfd, file, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return false;
	return (st.st_mode & S_IRUSR) && (st.st_mode & S_IWUSR);
}

int cg_check_unsaved(Crf__Cgroup__Dir *d, const char *dir, const char *hier, const char *name,
		     pid_t pid, bool keep)
{
	_cleanup_closedir_ DIR *dd = opendir(dir);
	struct scratch s;
	struct dirent *e;
	int r = 0;

	if (!dd)
		return crf_log_errno(CRF_LOG_ERROR, errno, "cgroup %s: %s", name, dir);
	scratch_make(&s, dir);
	if (!*s.dir)
		crf_debug("cgroup %s: %s: the defaults are crf's table's", name, s.why);
	while (r >= 0 && (e = readdir(dd)))
		if (candidate(dirfd(dd), hier, e->d_name))
			r = check_file(d, &s, dir, hier, name, e->d_name, pid, keep);
	scratch_drop(&s);
	return r;
}
