/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz-plugins.h - the plugins' images as the fuzzer reaches them: for each
 * plugin, the schemas its descriptor declares (the same descriptors) and
 * the validate function its restore-prepare runs first, and its kinds'
 * checks of the payloads they save in fd records.  A plugin with images or
 * payloads of its own adds one line to fuzz-plugins.c.
 */
#ifndef CRF_FUZZ_PLUGINS_H
#define CRF_FUZZ_PLUGINS_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

struct crf_imgdir;

struct fuzz_plugin {
	const char *name;
	const ProtobufCMessageDescriptor *const *schemas; /* NULL-terminated */
	int (*validate)(struct crf_imgdir *dir);	  /* NULL: none */
	/*
	 * Its kinds' checks of an fd record's payload (the descriptor's
	 * .checks, ABI 1.7) on the bytes: run on every record of
	 * files-PID.img that names this plugin.  NULL: none.
	 */
	int (*payload)(const char *kind, const void *data, size_t len, const char *what);
};

/* Every plugin's checks, each whatever the others found. */
void fuzz_plugins_validate(struct crf_imgdir *dir);

/* Terminated by an entry without a name. */
extern const struct fuzz_plugin fuzz_plugins[];

#endif
