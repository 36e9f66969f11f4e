// SPDX-License-Identifier: GPL-2.0-only
/*
 * Work done in the net namespace of a socket of the tree (net.h): a fresh
 * socket to compare options with, a sock_diag socket, a /proc/net file,
 * each of which belongs to the namespace it is made in.  crf's thread
 * enters the namespace for the call and comes back; setns() moves the
 * calling thread only.  And the sock_diag dump that netlink_diag and
 * packet_diag answer, with a socket made there.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include <crf/cleanup.h>

#include "net.h"

int net_in_sk_ns(int fd, int (*fn)(void *arg), void *arg, const char *name)
{
	_cleanup_close_ int ns = ioctl(fd, SIOCGSKNS);
	_cleanup_close_ int own = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	struct stat a, b;
	bool enter;
	int r;

	if (ns < 0 || own < 0 || fstat(ns, &a) || fstat(own, &b))
		return crf_error_errno(errno, "%s: its net namespace", name);
	enter = a.st_ino != b.st_ino || a.st_dev != b.st_dev;
	if (enter && setns(ns, CLONE_NEWNET))
		return crf_error_errno(errno, "%s: entering its net namespace", name);
	r = fn(arg);
	if (enter && setns(own, CLONE_NEWNET))
		return crf_error_errno(errno, "%s: back to crf's net namespace", name);
	return r;
}

struct diag_conn {
	struct nl_sock *nl;
	const char *what;
};

static int diag_connect(void *arg)
{
	struct diag_conn *c = arg;
	int r = nl_connect(c->nl, NETLINK_SOCK_DIAG);

	if (r < 0) {
		crf_error("%s: nl_connect(NETLINK_SOCK_DIAG): %s", c->what, nl_geterror(r));
		return -EPROTO;
	}
	return 0;
}

static int diag_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	int *err = arg;

	(void)nla;
	*err = e->error;
	return NL_STOP;
}

int net_diag_dump(int fd, const void *req, size_t len, nl_recvmsg_msg_cb_t cb, void *arg,
		  const char *what)
{
	struct nl_sock *nl = nl_socket_alloc();
	struct diag_conn c = {nl, what};
	int r, err = 0;

	if (!nl)
		return crf_error_errno(ENOMEM, "%s: sock_diag", what);
	nl_socket_disable_auto_ack(nl);
	r = net_in_sk_ns(fd, diag_connect, &c, what);
	if (r == 0) {
		nl_socket_modify_cb(nl, NL_CB_VALID, NL_CB_CUSTOM, cb, arg);
		nl_socket_modify_err_cb(nl, NL_CB_CUSTOM, diag_error, &err);
		r = nl_send_simple(nl, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, (void *)req,
				   (int)len);
		if (r >= 0)
			r = nl_recvmsgs_default(nl);
		if (err)
			r = crf_error_errno(-err, "%s: sock_diag", what);
		else if (r < 0)
			r = crf_error_errno(EPROTO, "%s: sock_diag: %s", what, nl_geterror(r));
		else
			r = 0;
	}
	nl_socket_free(nl);
	return r;
}
