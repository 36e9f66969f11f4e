// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe of the devices this plugin handles itself.  tun/tap is optional: a
 * tree without tun fds dumps fine on a kernel without the tun driver.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/if_tun.h>

#include <crf/cleanup.h>

#include "devices.h"

/*
 * Opening /dev/net/tun creates no interface (that takes TUNSETIFF), so the
 * open and a TUNGETFEATURES leave nothing behind.
 */
static void probe_tun(struct crf_ctx *ctx)
{
	unsigned int features = 0;
	_cleanup_close_ int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		crf_probe_feature(ctx, "tun", false, false, "open /dev/net/tun: %s",
				  strerror(errno));
		return;
	}
	if (ioctl(fd, TUNGETFEATURES, &features))
		crf_probe_feature(ctx, "tun", false, false, "TUNGETFEATURES: %s", strerror(errno));
	else
		crf_probe_feature(ctx, "tun", true, false,
				  "opened /dev/net/tun; TUNGETFEATURES %#x%s%s%s", features,
				  features & IFF_TUN ? " tun" : "",
				  features & IFF_TAP ? " tap" : "",
				  features & IFF_MULTI_QUEUE ? " multi-queue" : "");
}

int devices_probe(struct crf_ctx *ctx)
{
	probe_tun(ctx);
	return 0;
}
