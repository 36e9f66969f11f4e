/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stop.h - a dump asked to stop (SIGINT, SIGTERM, SIGHUP).
 *
 * The handlers only note the request (crf_stop_requested() in crf/log.h);
 * the dump notices it between two steps, takes the parasite out, resumes
 * the tree and removes what it wrote, as after any other failure.
 */
#ifndef CRF_STOP_H
#define CRF_STOP_H

/* Note SIGINT, SIGTERM and SIGHUP instead of dying of them. */
int stop_handlers_install(void);

/* 0, or -EINTR once a stop was asked for (said once, naming the signal). */
int stop_check(void);

#endif
