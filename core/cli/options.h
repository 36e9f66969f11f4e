/* SPDX-License-Identifier: GPL-2.0-only */
/* Options every command takes, and setting up config and plugins from them. */
#ifndef CRF_OPTIONS_H
#define CRF_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>

#include "config.h"
#include "plugin-set.h"
#include "util.h"

/* Exit statuses: 0 success, 1 failure, 2 bad usage. */
enum { CRF_EXIT_OK = 0, CRF_EXIT_FAIL = 1, CRF_EXIT_USAGE = 2 };

struct crf_opts {
	const char *cmd; /* "dump", "plugins", ... for messages */
	int verbosity;	 /* -1 quiet, 0 warnings, 1 info, 2 debug */
	char *log_file;
	char *config_dir;
	struct strv config_files;
	struct strv plugin_dirs;
	struct crf_select sel;
	bool help;
	int progress; /* --progress: 0 auto, 1 always, -1 never */
	/* dump and restore --shell-job: sets the files plugin's key, shell-job = yes */
	bool shell_job;
	/*
	 * What lies outside the tree, the files plugin's keys too: dump and
	 * restore --inherit-stdio (inherit-stdio = yes), dump --external
	 * (external = the words), restore --inherit-fd (inherit-fd = the
	 * words) and --file-validation (file-validation).
	 */
	bool inherit_stdio;
	struct strv external;
	struct strv inherit_fd;
	const char *file_validation;
	/* dump --tcp-established, --skip-in-flight, --unix-peercred-crf: the net
	 * plugin's keys of those names */
	bool tcp_established;
	bool live; /* crf dump --live: the mem plugin's live = yes */
	bool skip_in_flight;
	bool unix_peercred_crf;
	bool tcp_close; /* dump --tcp-close: the net plugin's tcp-close = yes */
	/* restore --manage-cgroups[=MODE], --cgroup-root: the cgroup plugin's keys of those
	 * names (cgroup-root: the words) */
	const char *manage_cgroups;
	struct strv cgroup_root;
	struct strv cgroup_root_from; /* --cgroup-root-from, words as cgroup_root's */
	/*
	 * Mount namespaces, the ns plugin's keys: dump --external mnt[MP]:KEY
	 * and restore --external mnt[KEY]:PATH (external-mnt = the words
	 * without "mnt["), restore --root DIR (root).
	 */
	struct strv external_mnt;
	const char *root;
	/*
	 * External namespaces, the ns plugin's keys: dump --external
	 * KIND[INODE]:KEY (external-ns = the words "KIND:INODE:KEY"), restore
	 * --inherit-fd fd[N]:KEY whose fd N is a namespace (inherit-fd = the words).
	 */
	struct strv external_ns;
	struct strv inherit_ns;
};

enum {
	OPT_LOG_FILE = 0x100,
	OPT_CONFIG,
	OPT_CONFIG_DIR,
	OPT_PLUGIN_DIR,
	OPT_PLUGINS,
	OPT_DISABLE,
	OPT_ENABLE,
	OPT_PROGRESS,
	OPT_COMMAND_BASE = 0x200, /* commands number their own options from here */
};

#define CRF_COMMON_SHORT "hvq"
#define CRF_COMMON_LONG                                                                            \
	{"help", no_argument, NULL, 'h'}, {"verbose", no_argument, NULL, 'v'},                     \
		{"quiet", no_argument, NULL, 'q'},                                                 \
		{"log-file", required_argument, NULL, OPT_LOG_FILE},                               \
		{"config", required_argument, NULL, OPT_CONFIG},                                   \
		{"config-dir", required_argument, NULL, OPT_CONFIG_DIR},                           \
		{"plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR},                           \
		{"plugins", required_argument, NULL, OPT_PLUGINS},                                 \
		{"disable", required_argument, NULL, OPT_DISABLE},                                 \
		{"enable", required_argument, NULL, OPT_ENABLE},                                   \
	{                                                                                          \
		"progress", required_argument, NULL, OPT_PROGRESS                                  \
	}

/* Help text for the common options. */
extern const char crf_common_help[];

/*
 * Handle one option returned by getopt_long(): 1 if it was a common option,
 * 0 if the command must handle it, < 0 on error (reported).  '?' and ':'
 * (unknown option, missing argument) are reported as usage errors here.
 */
int opts_common(struct crf_opts *o, int c, const char *arg, char *const argv[]);

/* Set up logging from -v/-q/--log-file; 0 or -errno. */
int opts_apply_logging(const struct crf_opts *o);

/*
 * Load the configuration (crf.conf, plugins.d/, --config) and build the
 * plugin set.  @conf must outlive @set.
 */
int crf_setup(const struct crf_opts *o, struct crf_config *conf, struct crf_plugin_set *set,
	      unsigned flags);

/* Where configuration and plugins are looked for by default. */
const char *crf_default_config_dir(void);
int crf_default_plugin_dirs(struct strv *dirs);

void opts_free(struct crf_opts *o);

/* dump and restore --external mnt[A]:B: the word "A:B" added to o->external_mnt. */
int opts_external_mnt(struct crf_opts *o, const char *arg);
/* dump --external KIND[INODE]:KEY of a namespace kind: 1 taken, 0 not such a word, <0. */
int opts_external_ns(struct crf_opts *o, const char *arg);
/* restore --inherit-fd fd[N]:KEY: 1 when fd N is a namespace (taken), 0 when not. */
int opts_inherit_ns(struct crf_opts *o, const char *arg, int fd);

/* Report a usage error for the command and return CRF_EXIT_USAGE. */
int crf_usage_error(const struct crf_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
