// SPDX-License-Identifier: GPL-2.0-only
/*
 * core-tamper DIR PID cpu BIT | area BIT | regs LEN: rewrite the core's
 * images of a real dump as another CPU, or a hostile image, would have
 * them, for core-refused.sh.
 *
 * BIT "missing" is the lowest feature this CPU lacks.
 *
 *   cpu BIT    cpu.img claims XSAVE feature BIT was enabled on the dump's
 *              CPU (at a made-up place after the others)
 *   area BIT   the leader's saved XSAVE area (core-PID.img) holds state of
 *              feature BIT: its XSTATE_BV has the bit set
 *   regs LEN   the leader's general registers (core-PID.img) are LEN bytes
 *
 * The images are rewritten through libcrf, so every checksum is right: only
 * crf's own checks of what the records say can stop the restore.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crf/image.h>

#include "core.pb-c.h"
#include "cpu.pb-c.h"
#include "xsave.h"

/*
 * Read the one record of @name, let @edit change it, and put it back: an
 * image directory is written once, so the new image is written into a
 * fresh one beside it and renamed over the old.
 */
static int rewrite(const char *path, const char *name, const ProtobufCMessageDescriptor *d,
		   int (*edit)(ProtobufCMessage *msg, unsigned int bit), unsigned int bit)
{
	struct crf_imgdir *dir = NULL, *out = NULL;
	ProtobufCMessage *msg = NULL;
	char tmp[4096], from[4200], to[4200];
	struct crf_img *img;
	int r = -1;

	snprintf(tmp, sizeof(tmp), "%s/.tamper", path);
	if (crf_imgdir_open(path, CRF_IMGDIR_READ, &dir) < 0 ||
	    crf_img_open(dir, name, d, &img) < 0)
		goto out;
	r = crf_img_read(img, &msg);
	crf_img_close(img);
	if (r <= 0 || edit(msg, bit) < 0 || crf_imgdir_open(tmp, CRF_IMGDIR_WRITE, &out) < 0 ||
	    crf_img_create(out, name, d, &img) < 0) {
		r = -1;
		goto out;
	}
	r = crf_img_write(img, msg);
	if (r < 0)
		crf_img_abort(img);
	else
		r = crf_img_close(img);
	snprintf(from, sizeof(from), "%s/%s", tmp, name);
	snprintf(to, sizeof(to), "%s/%s", path, name);
	if (r >= 0 && rename(from, to) < 0)
		r = -1;
out:
	if (msg)
		protobuf_c_message_free_unpacked(msg, NULL);
	if (out)
		crf_imgdir_close(out);
	if (dir)
		crf_imgdir_close(dir);
	rmdir(tmp);
	return r;
}

static int add_cpu_feature(ProtobufCMessage *msg, unsigned int bit)
{
	Crf__Core__Cpu *cpu = (Crf__Core__Cpu *)msg;
	static Crf__Core__XsaveFeature f = CRF__CORE__XSAVE_FEATURE__INIT;
	Crf__Core__XsaveFeature **v;
	uint32_t end = 576;

	for (size_t i = 0; i < cpu->n_features; i++)
		if (cpu->features[i]->offset + cpu->features[i]->size > end)
			end = cpu->features[i]->offset + cpu->features[i]->size;
	v = realloc(cpu->features, (cpu->n_features + 1) * sizeof(*v));
	if (!v)
		return -1;
	f.bit = bit;
	f.offset = end;
	f.size = 64;
	/* The record is freed with protobuf-c's allocator: give it a copy. */
	v[cpu->n_features] = malloc(sizeof(f));
	if (!v[cpu->n_features])
		return -1;
	*v[cpu->n_features] = f;
	cpu->features = v;
	cpu->n_features++;
	cpu->xcr0 |= 1ull << bit;
	return 0;
}

static int use_area_feature(ProtobufCMessage *msg, unsigned int bit)
{
	Crf__Core__TaskCore *tc = (Crf__Core__TaskCore *)msg;
	uint64_t bv;

	if (tc->xsave.len < 576)
		return -1;
	memcpy(&bv, tc->xsave.data + 512, sizeof(bv));
	bv |= 1ull << bit;
	memcpy(tc->xsave.data + 512, &bv, sizeof(bv));
	return 0;
}

static unsigned int missing_feature(void)
{
	const struct crf_xsave_layout *host = xsave_host();
	unsigned int bit = 2;

	while (host && bit < 63 && (host->xcr0 & (1ull << bit)))
		bit++;
	return bit;
}

static int set_regs_len(ProtobufCMessage *msg, unsigned int len)
{
	Crf__Core__TaskCore *tc = (Crf__Core__TaskCore *)msg;
	uint8_t *p = realloc(tc->regs.data, len ?: 1);

	if (!p)
		return -1;
	if (len > tc->regs.len)
		memset(p + tc->regs.len, 0, len - tc->regs.len);
	tc->regs.data = p;
	tc->regs.len = len;
	return 0;
}

int main(int argc, char **argv)
{
	char name[64];
	unsigned int bit;
	int r;

	if (argc != 5 ||
	    (strcmp(argv[3], "cpu") && strcmp(argv[3], "area") && strcmp(argv[3], "regs"))) {
		fprintf(stderr, "usage: core-tamper DIR PID cpu|area|regs N\n");
		return 2;
	}
	snprintf(name, sizeof(name), "core-%s.img", argv[2]);
	if (!strcmp(argv[3], "regs"))
		return rewrite(argv[1], name, &crf__core__task_core__descriptor, set_regs_len,
			       (unsigned int)atoi(argv[4])) < 0;
	bit = strcmp(argv[4], "missing") ? (unsigned int)atoi(argv[4]) : missing_feature();
	if (bit < 2 || bit > 63)
		return 2;
	if (!strcmp(argv[3], "cpu"))
		r = rewrite(argv[1], "cpu.img", &crf__core__cpu__descriptor, add_cpu_feature, bit);
	else
		r = rewrite(argv[1], name, &crf__core__task_core__descriptor, use_area_feature,
			    bit);
	return r < 0 ? 1 : 0;
}
