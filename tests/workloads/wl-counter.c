// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl-counter: the demo program.  Prints "counter: N" on stdout every
 * 200 ms; after a restore it must go on from where it was.
 *
 * Each tick checks that the counter moved by exactly one since the last
 * tick, comparing it with a copy kept in a separate page, so a restore that
 * lost or mixed up memory shows.  With the harness it exits 0 once the
 * verify file exists and three more ticks passed; alone it counts for ever.
 * The harness's --counter-lines option checks the printed sequence too.
 */
#include "wl.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

int main(void)
{
	const struct timespec tick = {0, 200 * 1000 * 1000};
	unsigned long long counter = 0, *shadow, after_verify = 0;
	uint64_t last_ns, now;

	wl_init("counter");
	shadow = mmap(NULL, WL_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (shadow == MAP_FAILED)
		wl_fail("mmap: %m");
	*shadow = 0;
	wl_publish("corrupt_addr", "%p", (void *)shadow);
	wl_ready();
	last_ns = wl_now_ns();
	for (;;) {
		nanosleep(&tick, NULL);
		if (counter != *shadow)
			wl_fail("counter is %llu but its copy says %llu", counter, *shadow);
		counter++;
		*shadow = counter;
		printf("counter: %llu\n", counter);
		fflush(stdout);
		now = wl_now_ns();
		if (now - last_ns > 1000000000ULL)
			wl_note("resumed at %llu after a %.1f s gap", counter,
				(double)(now - last_ns) / 1e9);
		last_ns = now;
		if ((after_verify || wl_verify_requested()) && ++after_verify > 3)
			break;
	}
	wl_note("counted to %llu without a gap in the sequence", counter);
	return 0;
}
