/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz-plugins.h - the plugins' images as the fuzzer reaches them: for each
 * plugin, the schemas its descriptor declares (the same descriptors) and
 * the validate function its restore-prepare runs first.  A plugin with
 * images of its own adds one line to fuzz-plugins.c.
 */
#ifndef CRF_FUZZ_PLUGINS_H
#define CRF_FUZZ_PLUGINS_H

#include <protobuf-c/protobuf-c.h>

struct crf_imgdir;

struct fuzz_plugin {
	const char *name;
	const ProtobufCMessageDescriptor *const *schemas; /* NULL-terminated */
	int (*validate)(struct crf_imgdir *dir);
};

/* Terminated by an entry without a name. */
extern const struct fuzz_plugin fuzz_plugins[];

#endif
