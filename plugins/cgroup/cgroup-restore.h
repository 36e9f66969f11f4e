/* SPDX-License-Identifier: GPL-2.0-only */
/* cgroup-restore.h - the restore side's state, shared by prepare.c and restore.c. */
#ifndef CRF_PLUGIN_CGROUP_RESTORE_H
#define CRF_PLUGIN_CGROUP_RESTORE_H

#include "cgroup.h"
#include "cgprops.pb-c.h"
#include "cgroup.pb-c.h"

#define CG_PATH_MAX 4096

/* --manage-cgroups (docs/cgroup.md): CRIU's modes, soft the default. */
enum cg_mode { CG_NONE, CG_PROPS, CG_SOFT, CG_FULL, CG_STRICT };

/* One task (tid 0: a whole process) to be put in one cgroup. */
struct cg_move {
	pid_t pid, tid;
	char *controllers, *path; /* as saved: the hierarchy and the cgroup */
	char *dir;		  /* found through a mount of the hierarchy */
	int fd;			  /* cgroup v2, a process: @dir, which it is cloned into, or -1 */
	/*
	 * cgroup v1, a process: @dir's cgroup.procs, opened in restore-prepare
	 * in crf's mount namespace (the process writes it in restore-task,
	 * in its own restored one, where @dir may be another place or
	 * read-only: a container's), or -1.
	 */
	int procs;
};

/*
 * The plugin's private state from restore-prepare on; every restored task
 * inherits its copy with the rest of crf's memory.
 */
struct cg_restore {
	Crf__Cgroup__TaskCgroups **tasks; /* the records of cgroup.img */
	size_t n_tasks;
	struct cg_members self; /* crf restore's own cgroups */
	char *mountinfo;	/* crf restore's /proc/self/mountinfo */
	struct cg_move *moves;
	size_t n_moves, cap_moves;
	/* cgprops.img (none in a dump older than it: nothing is managed) */
	Crf__Cgroup__Hierarchy **hiers;
	size_t n_hiers;
	char **new_root; /* per hierarchy: --cgroup-root's path, or NULL */
	/* per hierarchy: --cgroup-root-from's, the saved cgroup new_root replaces
	 * (NULL: the hierarchy's root, where the tree's cgroups branch off crf's) */
	char **from_root;
	enum cg_mode mode;
	char **made; /* the directories restore-prepare created, parents first */
	size_t n_made;
	bool done;		    /* restore-finish was reached: what was made stays */
	Crf__Cgroup__CgroupNs **ns; /* cgns.img */
	size_t n_ns;
	struct cg_mnt_fd *mnt_fds; /* mntfd.c: crf's cgroup mounts, open */
	size_t n_mnt_fds;
};

/* A cgroup mount of crf restore's (its mount point) and an O_PATH fd on it. */
struct cg_mnt_fd {
	char *mp;
	int fd;
};

/* mntfd.c: open every cgroup mount of rs->mountinfo; 0 or -errno, logged. */
int cg_mnt_fds_open(struct cg_restore *rs);
/* open(@file, @flags), relative to the fd of the cgroup mount @file lies in. */
int cg_open_at_mount(const struct cg_restore *rs, const char *file, int flags);
void cg_mnt_fds_close(struct cg_restore *rs);

/*
 * restore-prepare (manage.c): read cgprops.img and the keys, then make and
 * set up the tree's cgroups as the mode says.  0 or -errno, logged, naming
 * the cgroup and the file; what it made is removed again on failure.
 */
int cg_manage_load(struct crf_ctx *ctx, struct cg_restore *rs);
int cg_manage(struct cg_restore *rs);
/* @path of the hierarchy @controllers where --cgroup-root puts it (malloc'd), NULL: ENOMEM. */
char *cg_remap(const struct cg_restore *rs, const char *controllers, const char *path);
/* Remove what restore-prepare made, children first (cleanup of a failed restore). */
void cg_unmake(struct cg_restore *rs);

/* The file a task is written to: cgroup.procs, or a thread's cgroup.threads (v2) or tasks (v1). */
static inline const char *cg_move_file(const struct cg_move *m)
{
	if (!m->tid)
		return "cgroup.procs";
	return *m->controllers ? "tasks" : "cgroup.threads";
}

#endif
