// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core.pb-c.h"
#include "cpu.pb-c.h"
#include "inventory.h"
#include "inventory.pb-c.h"
#include "pstree.pb-c.h"

static int is_image(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 4 && !strcmp(d->d_name + n - 4, ".img") &&
	       strcmp(d->d_name, CRF_IMG_INVENTORY);
}

/* The image files already in @dir (sorted), for the inventory's file list. */
static int list_images(struct crf_imgdir *dir, struct strv *files)
{
	struct dirent **list;
	int n, r = 0;

	n = scandir(crf_imgdir_path(dir), &list, is_image, alphasort);
	if (n < 0)
		return crf_error_errno(errno, "cannot list %s", crf_imgdir_path(dir));
	for (int i = 0; i < n; i++) {
		if (r >= 0)
			r = strv_push(files, list[i]->d_name);
		free(list[i]);
	}
	free(list);
	return r;
}

int inventory_write(struct crf_imgdir *dir, const struct crf_plugin_set *set, pid_t root)
{
	Crf__Core__Inventory inv = CRF__CORE__INVENTORY__INIT;
	Crf__Core__PluginVersion *pv = NULL, **pvp = NULL;
	struct strv files = {0};
	struct crf_img *img;
	struct utsname u;
	int r;

	if (uname(&u) < 0)
		return crf_error_errno(errno, "uname");
	r = list_images(dir, &files);
	pv = calloc(set->graph.n_order + 1, sizeof(*pv));
	pvp = calloc(set->graph.n_order + 1, sizeof(*pvp));
	if (r >= 0 && (!pv || !pvp))
		r = -ENOMEM;
	for (size_t i = 0; r >= 0 && i < set->graph.n_order; i++) {
		const struct crf_plugin_info *pi = &set->p[set->graph.order[CRF_ORDER_DUMP][i]];

		crf__core__plugin_version__init(&pv[i]);
		pv[i].name = (char *)pi->st.name;
		pv[i].version = (char *)pi->st.desc->version;
		pv[i].abi_major = pi->st.desc->abi_major;
		pv[i].abi_minor = pi->st.desc->abi_minor;
		pvp[i] = &pv[i];
	}
	inv.crf_version = CRF_VERSION;
	inv.kernel_release = u.release;
	inv.arch = u.machine;
	inv.root_pid = root;
	inv.timestamp = (uint64_t)time(NULL);
	inv.n_plugins = set->graph.n_order;
	inv.plugins = pvp;
	inv.n_files = files.n;
	inv.files = files.v;
	if (r >= 0)
		r = crf_img_create(dir, CRF_IMG_INVENTORY, &crf__core__inventory__descriptor, &img);
	if (r >= 0) {
		r = crf_img_write(img, &inv.base);
		if (r < 0)
			crf_img_abort(img);
		else
			r = crf_img_close(img);
	}
	free(pv);
	free(pvp);
	strv_free(&files);
	return r < 0 ? r : 0;
}

static int read_inventory(struct crf_imgdir *dir, Crf__Core__Inventory **inv)
{
	ProtobufCMessage *msg = NULL;
	struct crf_img *img;
	int r;

	if (faccessat(crf_imgdir_fd(dir), CRF_IMG_INVENTORY, F_OK, 0) < 0) {
		crf_error("%s: no %s: not a complete dump (was the dump interrupted?)",
			  crf_imgdir_path(dir), CRF_IMG_INVENTORY);
		return -ENOENT;
	}
	r = crf_img_open(dir, CRF_IMG_INVENTORY, &crf__core__inventory__descriptor, &img);
	if (r < 0)
		return r;
	r = crf_img_read(img, &msg);
	if (r == 0) {
		crf_error("%s/%s: holds no inventory record", crf_imgdir_path(dir),
			  CRF_IMG_INVENTORY);
		r = -EBADMSG;
	}
	if (r > 0)
		r = crf_img_verify(img);
	crf_img_close(img);
	if (r < 0) {
		if (msg)
			protobuf_c_message_free_unpacked(msg, NULL);
		return r;
	}
	*inv = (Crf__Core__Inventory *)msg;
	return 0;
}

/* "MAJOR.MINOR..." into two numbers; false when @v does not start so. */
static bool parse_version(const char *v, unsigned long *major, unsigned long *minor)
{
	char *end;

	if (*v < '0' || *v > '9')
		return false;
	*major = strtoul(v, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return false;
	*minor = strtoul(end + 1, &end, 10);
	return true;
}

bool plugin_version_reads(const char *here, const char *written)
{
	unsigned long hmaj, hmin, wmaj, wmin;

	if (!parse_version(here, &hmaj, &hmin) || !parse_version(written, &wmaj, &wmin))
		return !strcmp(here, written);
	if (hmaj != wmaj)
		return false;
	return hmaj == 0 ? hmin == wmin : hmin >= wmin;
}

static int check_plugin(const struct crf_plugin_set *set, const Crf__Core__PluginVersion *pv)
{
	const struct crf_plugin_info *pi = NULL;

	for (size_t i = 0; i < set->n && !pi; i++)
		if (!strcmp(set->p[i].st.name, pv->name))
			pi = &set->p[i];
	if (!pi) {
		crf_error("the dump was written with plugin '%s' %s, which is not configured here",
			  pv->name, pv->version);
		return -ENOPKG;
	}
	if (!pi->st.enabled) {
		crf_error("the dump was written with plugin '%s' %s, which is %s", pv->name,
			  pv->version, pi->why_off);
		return -ENOPKG;
	}
	if (!pi->st.desc) {
		crf_error("the dump was written with plugin '%s' %s, which cannot be used here: %s",
			  pv->name, pv->version, pi->load_error ? pi->load_error : "not loaded");
		return -ENOPKG;
	}
	if (pi->st.desc->abi_major != pv->abi_major) {
		crf_error("the dump was written with plugin '%s' of ABI %u.%u; %s has ABI %u.%u",
			  pv->name, pv->abi_major, pv->abi_minor, pi->path, pi->st.desc->abi_major,
			  pi->st.desc->abi_minor);
		return -EPROTO;
	}
	if (!plugin_version_reads(pi->st.desc->version, pv->version)) {
		crf_error(
			"the dump was written with plugin '%s' %s; %s is version %s, which cannot "
			"read it (a plugin reads the images of its own major version and of its "
			"own or an older minor one; a 0.x version only those of its own minor)",
			pv->name, pv->version, pi->path, pi->st.desc->version);
		return -EPROTO;
	}
	return 0;
}

int inventory_plugins(struct crf_imgdir *dir, struct strv *names)
{
	Crf__Core__Inventory *inv = NULL;
	int r = read_inventory(dir, &inv);

	for (size_t i = 0; r >= 0 && i < inv->n_plugins; i++)
		r = strv_push(names, inv->plugins[i]->name);
	if (inv)
		protobuf_c_message_free_unpacked(&inv->base, NULL);
	return r < 0 ? r : 0;
}

/*
 * The type the core's image @name must hold, or NULL for a plugin's image
 * (its plugin checks it in restore-prepare).
 */
static const ProtobufCMessageDescriptor *core_type(const char *name)
{
	char again[64];
	int pid;

	if (!strcmp(name, CRF_IMG_INVENTORY))
		return &crf__core__inventory__descriptor;
	if (!strcmp(name, "pstree.img"))
		return &crf__core__process__descriptor;
	if (!strcmp(name, "cpu.img"))
		return &crf__core__cpu__descriptor;
	if (sscanf(name, "core-%d.img", &pid) == 1) {
		snprintf(again, sizeof(again), "core-%d.img", pid);
		if (!strcmp(again, name))
			return &crf__core__task_core__descriptor;
	}
	return NULL;
}

/* Framing and checksums of every frame; for the core's images, their type. */
static int verify_file(struct crf_imgdir *dir, const char *name)
{
	const ProtobufCMessageDescriptor *want = core_type(name);
	struct crf_img *img;
	int r = crf_img_open_any(dir, name, &img);

	if (r < 0)
		return r;
	if (want && (crf_img_kind(img) != CRF_IMG_RECORDS || strcmp(crf_img_type(img), want->name)))
		r = crf_error_errno(
			EMEDIUMTYPE, "%s/%s: holds %s, not %s", crf_imgdir_path(dir), name,
			crf_img_kind(img) == CRF_IMG_RECORDS ? crf_img_type(img) : "a blob",
			want->name);
	if (r >= 0)
		r = crf_img_verify(img);
	crf_img_close(img);
	return r;
}

int inventory_check(struct crf_imgdir *dir, const struct crf_plugin_set *set, pid_t *root)
{
	Crf__Core__Inventory *inv = NULL;
	int r = read_inventory(dir, &inv);

	if (r < 0)
		return r;
	*root = inv->root_pid;
	for (size_t i = 0; set && r >= 0 && i < inv->n_plugins; i++)
		r = check_plugin(set, inv->plugins[i]);
	for (size_t i = 0; r >= 0 && i < inv->n_files; i++) {
		if (strchr(inv->files[i], '/')) {
			crf_error("%s/%s: lists an invalid file name '%s'", crf_imgdir_path(dir),
				  CRF_IMG_INVENTORY, inv->files[i]);
			r = -EBADMSG;
			break;
		}
		if (faccessat(crf_imgdir_fd(dir), inv->files[i], F_OK, 0) < 0) {
			crf_error("%s: image %s listed in the inventory is missing",
				  crf_imgdir_path(dir), inv->files[i]);
			r = -ENOENT;
			break;
		}
		r = verify_file(dir, inv->files[i]);
	}
	protobuf_c_message_free_unpacked(&inv->base, NULL);
	return r;
}
