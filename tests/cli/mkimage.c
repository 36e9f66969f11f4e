// SPDX-License-Identifier: GPL-2.0-only
/*
 * mkimage DIR PLUGIN[:ABI_MAJOR[:VERSION]]...: write a small but complete
 * dump directory with libcrf (an inventory naming the given plugins, of ABI
 * 1 and version 0.1.0 unless given, a record image and a 1 MiB blob) for
 * the command-line tests of show and restore.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <crf/image.h>

#include "inventory.pb-c.h"

static int write_records(struct crf_imgdir *dir)
{
	Crf__Core__PluginVersion pv = CRF__CORE__PLUGIN_VERSION__INIT;
	struct crf_img *img;
	char name[32];

	if (crf_img_create(dir, "test-records.img", &crf__core__plugin_version__descriptor, &img) <
	    0)
		return -1;
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "record \"%d\"\n", i);
		pv.name = name;
		pv.version = "v";
		pv.abi_major = (uint32_t)i;
		if (crf_img_write(img, &pv.base) < 0) {
			crf_img_abort(img);
			return -1;
		}
	}
	return crf_img_close(img);
}

static int write_blob(struct crf_imgdir *dir)
{
	static unsigned char buf[1 << 20];
	struct crf_img *img;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + (i >> 12));
	if (crf_blob_create(dir, "pages-1.img", &img) < 0)
		return -1;
	if (crf_blob_write(img, buf, sizeof(buf)) < 0) {
		crf_img_abort(img);
		return -1;
	}
	return crf_img_close(img);
}

int main(int argc, char **argv)
{
	Crf__Core__Inventory inv = CRF__CORE__INVENTORY__INIT;
	Crf__Core__PluginVersion pv[16], *pvp[16];
	char *files[] = {"pages-1.img", "test-records.img"};
	struct crf_imgdir *dir;
	struct crf_img *img;
	struct utsname u;

	if (argc < 2 || argc - 2 > 16) {
		fprintf(stderr, "usage: mkimage DIR PLUGIN[:ABI[:VERSION]]...\n");
		return 2;
	}
	if (uname(&u) < 0 || crf_imgdir_open(argv[1], CRF_IMGDIR_WRITE, &dir) < 0)
		return 1;
	for (int i = 2; i < argc; i++) {
		char *colon = strchr(argv[i], ':');
		char *version = colon ? strchr(colon + 1, ':') : NULL;

		crf__core__plugin_version__init(&pv[i - 2]);
		pv[i - 2].abi_major = colon ? (uint32_t)atoi(colon + 1) : 1;
		if (colon)
			*colon = '\0';
		pv[i - 2].name = argv[i];
		pv[i - 2].version = version ? version + 1 : "0.1.0";
		pvp[i - 2] = &pv[i - 2];
	}
	inv.crf_version = "test";
	inv.kernel_release = u.release;
	inv.arch = u.machine;
	inv.root_pid = 1;
	inv.n_plugins = (size_t)(argc - 2);
	inv.plugins = pvp;
	inv.n_files = 2;
	inv.files = files;
	if (write_records(dir) < 0 || write_blob(dir) < 0 ||
	    crf_img_create(dir, CRF_IMG_INVENTORY, &crf__core__inventory__descriptor, &img) < 0)
		return 1;
	if (crf_img_write(img, &inv.base) < 0 || crf_img_close(img) < 0)
		return 1;
	crf_imgdir_close(dir);
	return 0;
}
