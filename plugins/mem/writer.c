// SPDX-License-Identifier: GPL-2.0-only
/*
 * The page writer: a thread that checksums and appends filled buffers to the
 * pages blob while the dumping thread reads the next ones from the task.
 *
 * Reading a task's memory and writing the image each keep one CPU busy for
 * about as long as the other, and the task is frozen for their sum when
 * they take turns; overlapped, it is frozen for the longer of the two.
 *
 * The buffers form a ring: the dumping thread fills slot @head, the writer
 * drains slot @tail.  From mem_writer_start() to mem_writer_stop() only the
 * writer thread touches the blob.  libcrf logs a failed write (it names the
 * file); the error is kept and handed to the dumping thread, which stops.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <crf/image.h>
#include <crf/log.h>

#include "writer.h"

static void *writer_main(void *arg)
{
	struct mem_writer *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct mem_writer_slot *s = &w->slots[w->tail];
		int r = 0;

		while (!w->filled && !w->stopping)
			pthread_cond_wait(&w->wake_writer, &w->lock);
		if (!w->filled)
			break;
		pthread_mutex_unlock(&w->lock);
		/* After an error the rest is dropped: the image is void anyway. */
		if (!w->err)
			r = crf_blob_write(w->blob, s->buf, s->len);
		pthread_mutex_lock(&w->lock);
		if (r < 0)
			w->err = r;
		w->tail = (w->tail + 1) % w->n_slots;
		w->filled--;
		pthread_cond_signal(&w->wake_reader);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int mem_writer_start(struct mem_writer *w, struct crf_img *blob, size_t buf_size,
		     unsigned int n_slots)
{
	int r;

	*w = (struct mem_writer){.blob = blob, .n_slots = n_slots};
	w->slots = calloc(n_slots, sizeof(*w->slots));
	if (!w->slots)
		return crf_error_errno(ENOMEM, "page writer");
	for (unsigned int i = 0; i < n_slots; i++) {
		w->slots[i].buf = malloc(buf_size);
		if (!w->slots[i].buf) {
			mem_writer_free(w);
			return crf_error_errno(ENOMEM, "page writer buffers");
		}
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->wake_writer, NULL);
	pthread_cond_init(&w->wake_reader, NULL);
	r = pthread_create(&w->thread, NULL, writer_main, w);
	if (r) {
		mem_writer_free(w);
		return crf_error_errno(r, "cannot start the page writer thread");
	}
	w->running = true;
	return 0;
}

char *mem_writer_get(struct mem_writer *w, int *err)
{
	char *buf;

	pthread_mutex_lock(&w->lock);
	while (w->filled == w->n_slots && !w->err)
		pthread_cond_wait(&w->wake_reader, &w->lock);
	*err = w->err;
	buf = w->slots[w->head].buf;
	pthread_mutex_unlock(&w->lock);
	return *err ? NULL : buf;
}

void mem_writer_put(struct mem_writer *w, size_t len)
{
	if (!len)
		return;
	pthread_mutex_lock(&w->lock);
	w->slots[w->head].len = len;
	w->head = (w->head + 1) % w->n_slots;
	w->filled++;
	pthread_cond_signal(&w->wake_writer);
	pthread_mutex_unlock(&w->lock);
}

int mem_writer_stop(struct mem_writer *w)
{
	if (w->running) {
		pthread_mutex_lock(&w->lock);
		w->stopping = true;
		pthread_cond_signal(&w->wake_writer);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
		w->running = false;
	}
	return w->err;
}

void mem_writer_free(struct mem_writer *w)
{
	if (!w->slots)
		return;
	mem_writer_stop(w);
	for (unsigned int i = 0; i < w->n_slots; i++)
		free(w->slots[i].buf);
	free(w->slots);
	w->slots = NULL;
}
