// SPDX-License-Identifier: GPL-2.0-only
/*
 * Work done in the net namespace of a socket of the tree (net.h): a fresh
 * socket to compare options with, a sock_diag socket, a /proc/net file,
 * each of which belongs to the namespace it is made in.  crf's thread
 * enters the namespace for the call and comes back; setns() moves the
 * calling thread only.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/sockios.h>

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
