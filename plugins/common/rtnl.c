// SPDX-License-Identifier: GPL-2.0-only
/* rtnetlink helpers the net and devices plugins share (rtnl.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/netlink.h>

#include <crf/log.h>

#include "rtnl.h"

int common_rtnl_open(struct nl_sock **sk, const char *what)
{
	int r;

	*sk = nl_socket_alloc();
	if (!*sk)
		return crf_error_errno(ENOMEM, "%s: netlink socket", what);
	r = nl_connect(*sk, NETLINK_ROUTE);
	if (r < 0) {
		nl_socket_free(*sk);
		*sk = NULL;
		return crf_error_errno(EIO, "%s: rtnetlink: %s", what, nl_geterror(r));
	}
	return 0;
}

int common_rtnl_copy_addr(ProtobufCBinaryData *b, struct nl_addr *a)
{
	b->len = nl_addr_get_len(a);
	b->data = malloc(b->len ? b->len : 1);
	if (!b->data)
		return -ENOMEM;
	memcpy(b->data, nl_addr_get_binary_addr(a), b->len);
	return 0;
}
