// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CPU a dump's registers depend on: cpu.img at dump, the up-front
 * check at restore, and the per-process XSAVE permissions (cpu.h).
 *
 * AMX tile data is a dynamic feature: a process gets it with
 * ARCH_REQ_XCOMP_PERM and the kernel enlarges a thread's fpstate at its
 * first tile instruction.  The permission is restored; live tile registers
 * are refused at dump (cpu_dump_task, in dump/task-dump.c), since the
 * restorer's signal frame is sized for the default fpstate (xsave.h) and
 * could not carry them.
 */
#include <asm/prctl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cpu.h"
#include "cpu.pb-c.h"
#include "util.h"
#include "xsave.h"

int cpu_write(struct crf_imgdir *dir)
{
	const struct crf_xsave_layout *l = xsave_host();
	Crf__Core__XsaveFeature f[CRF_XFEATURES], *fp[CRF_XFEATURES];
	Crf__Core__Cpu cpu = CRF__CORE__CPU__INIT;
	struct crf_img *img;
	int r;

	if (!l)
		return 0; /* no XSAVE: no area to check either */
	cpu.vendor = (char *)l->vendor;
	cpu.model = (char *)l->model;
	cpu.xcr0 = l->xcr0;
	cpu.features = fp;
	for (unsigned int bit = 2; bit < CRF_XFEATURES; bit++) {
		if (!(l->xcr0 & (1ull << bit)))
			continue;
		Crf__Core__XsaveFeature *e = &f[cpu.n_features];

		crf__core__xsave_feature__init(e);
		e->bit = bit;
		e->offset = l->offset[bit];
		e->size = l->size[bit];
		fp[cpu.n_features++] = e;
	}
	r = crf_img_create(dir, CRF_IMG_CPU, &crf__core__cpu__descriptor, &img);
	if (r < 0)
		return r;
	r = crf_img_write(img, &cpu.base);
	if (r < 0) {
		crf_img_abort(img);
		return r;
	}
	return crf_img_close(img);
}

static int layout_from_image(const Crf__Core__Cpu *cpu, struct crf_xsave_layout *l)
{
	memset(l, 0, sizeof(*l));
	snprintf(l->vendor, sizeof(l->vendor), "%s", cpu->vendor);
	snprintf(l->model, sizeof(l->model), "%s", cpu->model);
	l->xcr0 = cpu->xcr0;
	for (size_t i = 0; i < cpu->n_features; i++) {
		const Crf__Core__XsaveFeature *f = cpu->features[i];

		if (f->bit < 2 || f->bit >= CRF_XFEATURES || !(cpu->xcr0 & (1ull << f->bit)))
			return -EBADMSG;
		l->offset[f->bit] = f->offset;
		l->size[f->bit] = f->size;
	}
	return 0;
}

/* The dump's layout from cpu.img; a dump made before cpu.img existed: this CPU's. */
static int image_layout(struct crf_imgdir *dir, const struct crf_xsave_layout *host,
			struct crf_xsave_layout *l)
{
	ProtobufCMessage *msg = NULL;
	struct crf_img *img;
	int r;

	if (faccessat(crf_imgdir_fd(dir), CRF_IMG_CPU, F_OK, 0) < 0) {
		*l = *host;
		return 0;
	}
	r = crf_img_open(dir, CRF_IMG_CPU, &crf__core__cpu__descriptor, &img);
	if (r < 0)
		return r;
	r = crf_img_read(img, &msg);
	crf_img_close(img);
	if (r == 0)
		r = -EBADMSG;
	if (r > 0)
		r = layout_from_image((const Crf__Core__Cpu *)msg, l);
	if (msg)
		protobuf_c_message_free_unpacked(msg, NULL);
	if (r < 0)
		return crf_error_errno(EBADMSG, "%s/%s: not a valid CPU record",
				       crf_imgdir_path(dir), CRF_IMG_CPU);
	return 0;
}

/* Every feature the dump's CPU enabled must be enabled here. */
static int check_features(const struct crf_xsave_layout *img, const struct crf_xsave_layout *host)
{
	uint64_t missing = img->xcr0 & ~host->xcr0;
	char name[64];

	for (unsigned int bit = 0; bit < CRF_XFEATURES; bit++) {
		if (!(missing & (1ull << bit)))
			continue;
		xfeature_name(bit, name, sizeof(name));
		crf_error("the dump was made on a CPU with %s (%s), which this CPU (%s) lacks: "
			  "the program may use it",
			  name, img->model, host->model[0] ? host->model : host->vendor);
		return -ENOTSUP;
	}
	return 0;
}

static int check_area(const struct crf_xsave_layout *img, const struct crf_xsave_layout *host,
		      pid_t pid, pid_t tid, const ProtobufCBinaryData *xsave)
{
	char why[256];
	int r;

	/* The leader's own thread record leaves its registers to TaskCore's. */
	if (!xsave->len)
		return 0;
	r = xsave_check(img, host, xsave->data, xsave->len, why, sizeof(why));
	if (r < 0)
		crf_error("pid %d: thread %d: its saved XSAVE area cannot be restored here: %s",
			  (int)pid, (int)tid, why);
	return r;
}

/* ARCH_GET_XCOMP_SUPP: the dynamic features this kernel and CPU can grant. */
static uint64_t host_dynamic(void)
{
	uint64_t supp = 0;

	if (syscall(SYS_arch_prctl, ARCH_GET_XCOMP_SUPP, &supp) < 0)
		return 0;
	return supp & CRF_XFEATURES_DYNAMIC;
}

static int check_task(const struct crf_xsave_layout *img, const struct crf_xsave_layout *host,
		      const Crf__Core__TaskCore *tc)
{
	uint64_t want = tc->xcomp_perm & CRF_XFEATURES_DYNAMIC & ~host_dynamic();
	char name[64];
	int r;

	if (tc->has_xcomp_perm && want) {
		xfeature_name((unsigned int)__builtin_ctzll(want), name, sizeof(name));
		crf_error("pid %d was permitted %s, which this CPU or kernel cannot grant",
			  (int)tc->pid, name);
		return -ENOTSUP;
	}
	r = check_area(img, host, tc->pid, tc->pid, &tc->xsave);
	for (size_t i = 0; r >= 0 && i < tc->n_threads; i++)
		r = check_area(img, host, tc->pid, tc->threads[i]->tid, &tc->threads[i]->xsave);
	return r;
}

int cpu_check_tree(struct crf_imgdir *dir, Crf__Core__TaskCore *const *tcs, size_t n)
{
	const struct crf_xsave_layout *host = xsave_host();
	struct crf_xsave_layout img;
	int r;

	if (!host) {
		for (size_t i = 0; i < n; i++)
			if (tcs[i] && tcs[i]->xsave.len > CRF_XSAVE_LEGACY)
				return crf_error_errno(ENOTSUP,
						       "pid %d has XSAVE state, and this CPU "
						       "or kernel has no XSAVE",
						       (int)tcs[i]->pid);
		return 0;
	}
	r = image_layout(dir, host, &img);
	if (r >= 0)
		r = check_features(&img, host);
	for (size_t i = 0; r >= 0 && i < n; i++)
		if (tcs[i])
			r = check_task(&img, host, tcs[i]);
	return r;
}

int cpu_apply_task(const Crf__Core__TaskCore *tc)
{
	uint64_t want = tc->has_xcomp_perm ? tc->xcomp_perm & CRF_XFEATURES_DYNAMIC : 0;

	for (unsigned int bit = 0; bit < CRF_XFEATURES; bit++)
		if ((want & (1ull << bit)) && syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, bit) < 0)
			return crf_error_errno(errno, "arch_prctl(ARCH_REQ_XCOMP_PERM, %u)", bit);
	return 0;
}
