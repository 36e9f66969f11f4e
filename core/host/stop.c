// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "crf-private.h"
#include "stop.h"

static void on_stop(int sig)
{
	crf__request_stop(sig);
}

/*
 * Without SA_RESTART: a wait in progress (poll on cgroup.events, waitpid
 * for a stopping thread) returns EINTR and fails its step at once.
 */
int stop_handlers_install(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa = {.sa_handler = on_stop};

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return crf_error_errno(errno, "sigaction(%s)", strsignal(sigs[i]));
	return 0;
}

int stop_check(void)
{
	static bool said;
	int sig = crf__stop_signal();

	if (!sig)
		return 0;
	if (!said)
		crf_error("interrupted by signal %d (%s): the dump stops, the tree is put back as "
			  "it was",
			  sig, strsignal(sig));
	said = true;
	return -EINTR;
}
