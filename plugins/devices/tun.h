/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tun.h - the tun/tap fd kind (tun.c, tun-link.c, tun-sysctl.c,
 * tun-restore.c).
 */
#ifndef CRF_PLUGIN_DEVICES_TUN_H
#define CRF_PLUGIN_DEVICES_TUN_H

#include <stdbool.h>
#include <stddef.h>

#include <linux/if_tun.h>

#include <crf/plugin.h>

#include "tun.pb-c.h"

/* The flags TUNSETIFF takes (the kernel's TUN_FEATURES); IFF_PERSIST is TUNSETPERSIST's. */
#define TUN_SETIFF_FLAGS                                                                           \
	(IFF_TUN | IFF_TAP | IFF_NO_PI | IFF_ONE_QUEUE | IFF_VNET_HDR | IFF_MULTI_QUEUE |          \
	 IFF_NAPI | IFF_NAPI_FRAGS)

/* The kind: an fd on /dev/net/tun (character device 10:200). */
bool tun_match(const struct crf_object *obj);
int tun_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int tun_restore(struct crf_ctx *ctx, const struct crf_object *obj);

/*
 * tun-check.c: the kind's check (ABI 1.7), before the restore forks: the
 * fd's payload decodes, and its name, flags, addresses and sysctls are ones
 * tun_restore() can use.  tun_payload_check() is the same on the bytes (for
 * the fuzzer), tun_record_check() on the decoded record; 0 or -EBADMSG
 * after one error naming @what and the field.
 */
int tun_check(struct crf_ctx *ctx, const struct crf_object *obj);
int tun_payload_check(const void *data, size_t len, const char *what);
int tun_record_check(const Crf__Devices__Tun *t, const char *what);

/*
 * The interface @name (index @ifindex) in crf's network namespace: its
 * settings, addresses and per-device sysctls into @l, refusing (logged,
 * naming @what) what a device made anew would not get back: a master, an
 * XDP program, routes or neighbours added by hand, qdiscs not the
 * kernel's, addresses with lifetimes.  Free @l with tun_link_free().
 */
int tun_link_read(const char *what, const char *name, int ifindex, Crf__Devices__TunLink *l);
void tun_link_free(Crf__Devices__TunLink *l);

/*
 * Set interface @name, just made by TUNSETIFF, as @l says: its index (by a
 * round trip through a scratch network namespace), settings, sysctls and
 * addresses, and up last if it was; then read it back and compare.
 */
int tun_link_apply(const char *what, const char *name, const Crf__Devices__TunLink *l);

/* tun-sysctl.c: the per-device sysctls that differ from "default". */
int tun_sysctl_read(const char *what, const char *name, Crf__Devices__TunLink *l);
int tun_sysctl_apply(const char *what, const char *name, const Crf__Devices__TunLink *l);
void tun_sysctl_free(Crf__Devices__TunLink *l);

#endif
