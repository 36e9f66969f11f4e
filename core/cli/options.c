// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crf-private.h"
#include "options.h"

const char crf_common_help[] =
	"Common options:\n"
	"  -v, --verbose          more messages (-vv for debug)\n"
	"  -q, --quiet            errors only\n"
	"      --log-file FILE    also write messages to FILE\n"
	"      --config FILE      read FILE after crf.conf and plugins.d/\n"
	"      --config-dir DIR   read DIR/crf.conf and DIR/plugins.d/*.conf\n"
	"      --plugin-dir DIR   look for plugin objects in DIR first (repeatable)\n"
	"      --plugins A,B      enable only these plugins\n"
	"      --disable A,B      disable these plugins; PLUGIN:KIND switches off one\n"
	"                         kind of a plugin (see crf plugins)\n"
	"      --enable A,B       enable these plugins (or PLUGIN:KIND)\n"
	"      --progress=WHEN    progress of long operations: auto (on a terminal),\n"
	"                         always, never\n"
	"  -h, --help             this help\n";

int crf_usage_error(const struct crf_opts *o, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (o->cmd)
		fprintf(stderr, "crf %s: %s (see 'crf %s --help')\n", o->cmd, buf, o->cmd);
	else
		fprintf(stderr, "crf: %s (see 'crf --help')\n", buf);
	return -EINVAL;
}

int opts_common(struct crf_opts *o, int c, const char *arg, char *const argv[])
{
	switch (c) {
	case 'h':
		o->help = true;
		return 1;
	case 'v':
		if (o->verbosity < 2)
			o->verbosity++;
		return 1;
	case 'q':
		o->verbosity = -1;
		return 1;
	case OPT_LOG_FILE:
		free(o->log_file);
		o->log_file = strdup(arg);
		return o->log_file ? 1 : -ENOMEM;
	case OPT_CONFIG:
		return strv_push(&o->config_files, arg) < 0 ? -ENOMEM : 1;
	case OPT_CONFIG_DIR:
		free(o->config_dir);
		o->config_dir = strdup(arg);
		return o->config_dir ? 1 : -ENOMEM;
	case OPT_PLUGIN_DIR:
		return strv_push(&o->plugin_dirs, arg) < 0 ? -ENOMEM : 1;
	case OPT_PLUGINS:
		o->sel.only_set = true;
		return strv_split(&o->sel.only, arg) < 0 ? -ENOMEM : 1;
	case OPT_DISABLE:
		return strv_split(&o->sel.disable, arg) < 0 ? -ENOMEM : 1;
	case OPT_ENABLE:
		return strv_split(&o->sel.enable, arg) < 0 ? -ENOMEM : 1;
	case OPT_PROGRESS:
		if (!strcmp(arg, "auto"))
			o->progress = 0;
		else if (!strcmp(arg, "always"))
			o->progress = 1;
		else if (!strcmp(arg, "never"))
			o->progress = -1;
		else
			return crf_usage_error(o, "--progress must be auto, always or never");
		return 1;
	case ':':
		return crf_usage_error(o, "option '%s' needs an argument", argv[optind - 1]);
	case '?':
		if (optopt)
			return crf_usage_error(o, "unknown option '-%c'", optopt);
		return crf_usage_error(o, "unknown option '%s'", argv[optind - 1]);
	}
	return 0;
}

int opts_apply_logging(const struct crf_opts *o)
{
	enum crf_log_level level = CRF_LOG_WARN;

	if (o->verbosity < 0)
		level = CRF_LOG_ERROR;
	else if (o->verbosity == 1)
		level = CRF_LOG_INFO;
	else if (o->verbosity >= 2)
		level = CRF_LOG_DEBUG;
	crf__log_set_progress(o->progress);
	return crf__log_setup(level, o->log_file);
}

/*
 * A crf run from its build tree uses the source tree's etc/ and the build
 * tree's plugins, so that it works before (and without) `meson install`.
 */
static bool in_build_tree(void)
{
	char exe[PATH_MAX], build[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0 || !realpath(CRF_BUILD_ROOT, build))
		return false;
	exe[n] = '\0';
	return !strncmp(exe, build, strlen(build)) && exe[strlen(build)] == '/';
}

const char *crf_default_config_dir(void)
{
	return in_build_tree() ? CRF_SOURCE_ROOT "/etc" : CRF_CONFDIR;
}

int crf_default_plugin_dirs(struct strv *dirs)
{
	struct dirent **list;
	int n, r = 0;

	if (!in_build_tree())
		return strv_push(dirs, CRF_PLUGINDIR);
	n = scandir(CRF_BUILD_ROOT "/plugins", &list, NULL, alphasort);
	if (n < 0)
		return crf_error_errno(errno, "cannot read %s", CRF_BUILD_ROOT "/plugins");
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *path = NULL;

		if (r >= 0 && list[i]->d_name[0] != '.' && list[i]->d_type == DT_DIR) {
			path = xasprintf("%s/plugins/%s", CRF_BUILD_ROOT, list[i]->d_name);
			r = path ? strv_push(dirs, path) : -ENOMEM;
		}
		free(list[i]);
	}
	free(list);
	return r;
}

static int load_config(const struct crf_opts *o, struct crf_config *conf)
{
	const char *dir = o->config_dir ? o->config_dir : crf_default_config_dir();
	_cleanup_free_ char *main_conf = xasprintf("%s/crf.conf", dir);
	_cleanup_free_ char *dropins = xasprintf("%s/plugins.d", dir);
	struct stat st;
	int r;

	if (!main_conf || !dropins)
		return -ENOMEM;
	if (stat(dir, &st) < 0)
		return crf_error_errno(errno, "configuration directory %s", dir);
	if (access(main_conf, F_OK) == 0) {
		r = config_load_file(conf, main_conf);
		if (r < 0)
			return r;
	}
	r = config_load_dir(conf, dropins, 1);
	if (r < 0)
		return r;
	for (size_t i = 0; i < o->config_files.n; i++) {
		r = config_load_file(conf, o->config_files.v[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A list option as a key of the files plugin: its words joined by spaces. */
static int set_files_list(struct crf_config *conf, const char *key, const struct strv *v,
			  const char *option)
{
	_cleanup_free_ char *value = NULL;

	if (!v->n)
		return 0;
	value = strv_join(v, " ");
	if (!value)
		return crf_error_errno(ENOMEM, "%s", option);
	return config_set(conf, "files", key, value, option);
}

/*
 * Terminals, fds 0-2 and what lies outside the tree are the files
 * plugin's: the options are its INI keys, so that a configuration can say
 * them once for every dump and restore.
 */
static int set_files_keys(const struct crf_opts *o, struct crf_config *conf)
{
	int r = 0;

	if (o->shell_job)
		r = config_set(conf, "files", "shell-job", "yes", "--shell-job");
	if (r >= 0 && o->inherit_stdio)
		r = config_set(conf, "files", "inherit-stdio", "yes", "--inherit-stdio");
	if (r >= 0 && o->file_validation)
		r = config_set(conf, "files", "file-validation", o->file_validation,
			       "--file-validation");
	if (r >= 0)
		r = set_files_list(conf, "external", &o->external, "--external");
	if (r >= 0)
		r = set_files_list(conf, "inherit-fd", &o->inherit_fd, "--inherit-fd");
	/* Sockets are the net plugin's. */
	if (r >= 0 && o->tcp_established)
		r = config_set(conf, "net", "tcp-established", "yes", "--tcp-established");
	if (r >= 0 && o->skip_in_flight)
		r = config_set(conf, "net", "skip-in-flight", "yes", "--skip-in-flight");
	if (r >= 0 && o->tcp_close)
		r = config_set(conf, "net", "tcp-close", "yes", "--tcp-close");
	/* A live dump's pages are the mem plugin's (docs/live.md). */
	if (r >= 0 && o->live)
		r = config_set(conf, "mem", "live", "yes", "--live");
	if (r >= 0 && o->unix_peercred_crf)
		r = config_set(conf, "net", "unix-peercred-crf", "yes", "--unix-peercred-crf");
	/* Cgroups are the cgroup plugin's. */
	if (r >= 0 && o->manage_cgroups)
		r = config_set(conf, "cgroup", "manage-cgroups", o->manage_cgroups,
			       "--manage-cgroups");
	if (r >= 0 && o->cgroup_root.n) {
		_cleanup_free_ char *v = strv_join(&o->cgroup_root, " ");

		r = v ? config_set(conf, "cgroup", "cgroup-root", v, "--cgroup-root")
		      : crf_error_errno(ENOMEM, "--cgroup-root");
	}
	if (r >= 0 && o->cgroup_root_from.n) {
		_cleanup_free_ char *v = strv_join(&o->cgroup_root_from, " ");

		r = v ? config_set(conf, "cgroup", "cgroup-root-from", v, "--cgroup-root-from")
		      : crf_error_errno(ENOMEM, "--cgroup-root-from");
	}
	/* Mount namespaces are the ns plugin's. */
	if (r >= 0 && o->external_mnt.n) {
		_cleanup_free_ char *value = strv_join(&o->external_mnt, " ");

		r = value ? config_set(conf, "ns", "external-mnt", value, "--external mnt[...]")
			  : crf_error_errno(ENOMEM, "--external");
	}
	if (r >= 0 && o->root)
		r = config_set(conf, "ns", "root", o->root, "--root");
	/* External namespaces too. */
	if (r >= 0 && o->external_ns.n) {
		_cleanup_free_ char *v = strv_join(&o->external_ns, " ");

		r = v ? config_set(conf, "ns", "external-ns", v, "--external KIND[INODE]:KEY")
		      : crf_error_errno(ENOMEM, "--external");
	}
	if (r >= 0 && o->inherit_ns.n) {
		_cleanup_free_ char *v = strv_join(&o->inherit_ns, " ");

		r = v ? config_set(conf, "ns", "inherit-fd", v, "--inherit-fd")
		      : crf_error_errno(ENOMEM, "--inherit-fd");
	}
	return r;
}

int opts_external_ns(struct crf_opts *o, const char *arg)
{
	static const char *const kinds[] = {"net", "uts", "ipc", "cgroup"};
	unsigned long long ino = 0;
	int n = 0;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t len = strlen(kinds[i]);
		_cleanup_free_ char *w = NULL;

		if (strncmp(arg, kinds[i], len) || arg[len] != '[')
			continue;
		if (sscanf(arg + len, "[%llu]:%n", &ino, &n) != 1 || !n || !ino || !arg[len + n] ||
		    strpbrk(arg, " \t\n"))
			return crf_usage_error(o, "--external %s: not %s[INODE]:KEY (no spaces)",
					       arg, kinds[i]);
		if (asprintf(&w, "%s:%llu:%s", kinds[i], ino, arg + len + n) < 0)
			return -ENOMEM;
		return strv_push(&o->external_ns, w) < 0 ? -ENOMEM : 1;
	}
	return 0;
}

int opts_inherit_ns(struct crf_opts *o, const char *arg, int fd)
{
	/* NS_GET_NSTYPE: only a namespace file answers it. */
	if (ioctl(fd, _IO(0xb7, 0x3)) < 0)
		return 0;
	return strv_push(&o->inherit_ns, arg) < 0 ? -ENOMEM : 1;
}

/*
 * --external mnt[A]:B (dump: A a mount point, B a key; restore: A a key, B a
 * path) as the word "A:B" of the ns plugin's external-mnt key; neither part
 * empty, no space or colon in A, no space in B.
 */
int opts_external_mnt(struct crf_opts *o, const char *arg)
{
	const char *close = strstr(arg, "]:");

	if (strncmp(arg, "mnt[", 4) || !close || close == arg + 4 || !close[2] ||
	    strpbrk(arg, " \t\n") || memchr(arg + 4, ':', (size_t)(close - arg - 4)))
		return crf_usage_error(o, "--external %s: not mnt[A]:B (no spaces, no ':' in A)",
				       arg);
	{
		_cleanup_free_ char *w = NULL;

		if (asprintf(&w, "%.*s:%s", (int)(close - arg - 4), arg + 4, close + 2) < 0)
			return -ENOMEM;
		return strv_push(&o->external_mnt, w) < 0 ? -ENOMEM : 0;
	}
}

int crf_setup(const struct crf_opts *o, struct crf_config *conf, struct crf_plugin_set *set,
	      unsigned flags)
{
	const struct crf_conf_key *extra;
	struct strv dirs = {0};
	int r;

	r = load_config(o, conf);
	if (r >= 0)
		r = set_files_keys(o, conf);
	if (r < 0)
		return r;
	for (size_t i = 0; i < o->plugin_dirs.n && r >= 0; i++)
		r = strv_push(&dirs, o->plugin_dirs.v[i]);
	extra = config_get(conf, CRF_CONF_GLOBAL, "plugin-dir");
	if (r >= 0 && extra)
		r = strv_split(&dirs, extra->value);
	if (r >= 0)
		r = crf_default_plugin_dirs(&dirs);
	if (r < 0) {
		strv_free(&dirs);
		return crf_error_errno(r, "plugin directories");
	}
	r = plugin_set_build(set, conf, &dirs, &o->sel, flags);
	strv_free(&dirs);
	return r;
}

void opts_free(struct crf_opts *o)
{
	free(o->log_file);
	free(o->config_dir);
	strv_free(&o->config_files);
	strv_free(&o->plugin_dirs);
	strv_free(&o->sel.only);
	strv_free(&o->sel.disable);
	strv_free(&o->sel.enable);
	strv_free(&o->sel.image);
	strv_free(&o->external);
	strv_free(&o->external_mnt);
	strv_free(&o->external_ns);
	strv_free(&o->inherit_ns);
	strv_free(&o->inherit_fd);
	strv_free(&o->cgroup_root);
	strv_free(&o->cgroup_root_from);
	crf__log_close();
}
