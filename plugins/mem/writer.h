/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * writer.h - a thread appending filled buffers to the pages blob, so that
 * the dump reads the task and writes the image at the same time.
 */
#ifndef CRF_PLUGIN_MEM_WRITER_H
#define CRF_PLUGIN_MEM_WRITER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct crf_img;

struct mem_writer_slot {
	char *buf;
	size_t len;
};

struct mem_writer {
	struct crf_img *blob;
	struct mem_writer_slot *slots;
	unsigned int n_slots;

	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t wake_writer, wake_reader;
	/* Under @lock: */
	unsigned int head, tail, filled;
	bool stopping;
	int err; /* the first failed write's -errno, already logged */
};

/*
 * Allocate @n_slots buffers of @buf_size bytes and start the thread, which
 * owns @blob until mem_writer_stop().  0 or -errno (logged).
 */
int mem_writer_start(struct mem_writer *w, struct crf_img *blob, size_t buf_size,
		     unsigned int n_slots);

/*
 * The next buffer to fill, waiting while all are queued.  NULL when a write
 * has failed, with its -errno in *@err (logged by libcrf).  The same buffer
 * is returned until it is handed over with mem_writer_put().
 */
char *mem_writer_get(struct mem_writer *w, int *err);

/* Queue the first @len bytes of the buffer from mem_writer_get() (0: keep it). */
void mem_writer_put(struct mem_writer *w, size_t len);

/* Write what is queued and end the thread; 0 or the first write error. */
int mem_writer_stop(struct mem_writer *w);

/* Stop the thread if it runs and free the buffers; safe on a zeroed writer. */
void mem_writer_free(struct mem_writer *w);

#endif
