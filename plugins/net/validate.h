/* SPDX-License-Identifier: GPL-2.0-only */
/* validate.h - the net plugin's images checked before the tree is forked. */
#ifndef CRF_PLUGIN_NET_VALIDATE_H
#define CRF_PLUGIN_NET_VALIDATE_H

#include <stddef.h>

struct crf_ctx;
struct crf_imgdir;
struct crf_object;

/*
 * The net plugin's own images of @dir: every record of unix-sk.img (each
 * socket once, its type, names no longer than sun_path, every socket it
 * names one of the image), of netlock.img (the table one crf makes, not
 * nftables commands; addresses of their family's length) and of every
 * netns-ID.img (link names, addresses, routes, sysctl paths below
 * /proc/sys/net).  Reads @dir only.  0 or -errno (logged: file, record,
 * field).  The first step of restore-prepare, and the fuzzer's.
 */
int net_validate(struct crf_imgdir *dir);

/*
 * The payload of a socket fd of kind @kind ("tcp", "unix"...), as its
 * restore handler will decode and trust it; @what names the fd in the
 * message.  0 or -EBADMSG (logged).
 */
int net_payload_check(const char *kind, const void *data, size_t len, const char *what);

#endif
