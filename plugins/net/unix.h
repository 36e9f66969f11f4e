/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * unix.h - what the unix socket files of the net plugin share.
 *
 * The dump (unix-dump.c) learns each unix socket the fd walk meets from
 * unix_diag (unix-diag.c) and from a copy of the fd, reads its queue
 * without consuming it (unix-queue.c), and keeps a record per socket; at
 * dump-finish every peer must be one of them, and unix-sk.img is written.
 * The restore (unix-restore.c) makes every pair once in restore-prepare,
 * in crf's top process, and hands each end to the task that has it.
 */
#ifndef CRF_PLUGIN_NET_UNIX_H
#define CRF_PLUGIN_NET_UNIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <crf/plugin.h>

#include "unix.pb-c.h"

/* What unix_diag says of one socket. */
struct unix_diag_info {
	uint64_t ino;
	uint8_t type, state;
	uint64_t peer; /* 0: none */
	char name[sizeof(((struct sockaddr_un *)0)->sun_path)];
	size_t name_len; /* 0: unnamed; name[0] == 0: abstract */
	bool has_vfs;	 /* bound to a path */
	uint64_t vfs_ino;
	uint32_t vfs_dev;
	uint32_t rqlen, wqlen; /* listening: pending connections, backlog */
	/* Listening: the inodes of the sockets whose connections wait to be
	 * accepted, in accept order (malloc()ed: unix_diag_info_free). */
	uint32_t *icons, n_icons;
	bool icons_lost; /* out of memory while reading them */
	uint8_t shutdown;
};

/*
 * Ask unix_diag about socket @ino; 0, -ENOENT when it does not list it, or
 * -errno (logged).  Free @out with unix_diag_info_free().
 */
int unix_diag_get(uint64_t ino, struct unix_diag_info *out);
void unix_diag_info_free(struct unix_diag_info *d);

/*
 * Every listening unix socket of crf's net namespace, with its name and
 * waiting connections, to @each (stopping at its first error, returned).
 */
int unix_diag_listeners(int (*each)(const struct unix_diag_info *d, void *arg), void *arg);

/* "unnamed", "/path" or "@abstract", for messages, in @buf. */
const char *unix_name_str(const char *name, size_t len, char *buf, size_t size);

/* "stream", "dgram", "seqpacket". */
const char *unix_type_str(int type);

/*
 * The receive queue of @fd (a copy of the socket) into @m->rqueue, read
 * with MSG_PEEK: the socket's own SO_PEEK_OFF is put back.  @what names
 * the socket in messages.  0, or -errno after logging why (fds in flight
 * are refused).
 */
int unix_queue_read(int fd, Crf__Net__UnixSk *m, const char *what);

/* Queue @m->rqueue again on @m's socket by sending it on @peer; 0 or -errno (logged). */
int unix_queue_write(int peer, const Crf__Net__UnixSk *m, const char *what);

/* Send message @i of @m->rqueue on @from, to @m's address when @to_name; 0 or -errno (logged). */
int unix_queue_send(int from, const Crf__Net__UnixSk *m, size_t i, bool to_name, const char *what);

/* Free the queue unix_queue_read() allocated. */
void unix_queue_free(Crf__Net__UnixSk *m);

/* The unix sockets of the dump (the records of unix-sk.img) or of the restore. */
struct unix_table {
	Crf__Net__UnixSk **v;
	size_t n, cap;
	int *made;     /* restore: crf's fd on each, or -1 (unix-restore.c) */
	bool unpacked; /* the records are protobuf-c's (read from the image) */
};

/* The plugin's table, allocated on first use; NULL when out of memory. */
struct unix_table *unix_table_get(struct crf_ctx *ctx);
int unix_table_add(struct unix_table *t, Crf__Net__UnixSk *m);
/* The record of socket @ino and, in *@index when not NULL, its place; NULL: none. */
Crf__Net__UnixSk *unix_table_find(const struct unix_table *t, uint64_t ino, size_t *index);

/*
 * The socket of @type bound to @name (sun_path bytes), or NULL; of several
 * (a listener and the connections it accepted), the listener.
 */
Crf__Net__UnixSk *unix_table_named(const struct unix_table *t, uint32_t type,
				   const ProtobufCBinaryData *name);

/*
 * unix-peercred.c: dump-finish marks the pairs whose makers make them again
 * at the restore (made_by) and refuses the other sockets with peer
 * credentials (unless --unix-peercred-crf); restore-prepare checks that
 * each maker is a process of the dump.
 */
int unix_peercred_plan(struct crf_ctx *ctx, struct unix_table *t);
int unix_peercred_check(struct crf_ctx *ctx, const struct unix_table *t);

/* restore-premap: the pairs this process made at the dump, made again (unix-restore.c). */
int net_unix_restore_premap(struct crf_ctx *ctx);

/* "unix stream /tmp/x.sock" of @m in @buf. */
const char *unix_describe(const Crf__Net__UnixSk *m, char *buf, size_t size);

/* unix-make.c: making one socket as its record says; 0 or -errno (logged). */
int unix_set_before(int fd, const Crf__Net__UnixSk *m, const char *what);
int unix_bind(int fd, const Crf__Net__UnixSk *m, const char *what);
int unix_connect(int fd, const Crf__Net__UnixSk *to, const char *what);
int unix_set_after(int fd, const Crf__Net__UnixSk *m, const char *what);
/* Unlink the socket file of @m again when it was deleted at the dump. */
int unix_unlink_gone(const Crf__Net__UnixSk *m, const char *what);
/* The sockaddr of sun_path bytes @name in @a; its length. */
socklen_t unix_addr(const ProtobufCBinaryData *name, struct sockaddr_un *a);

/* The fd kind "unix" (unix-dump.c, unix-restore.c). */
int net_unix_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int net_unix_restore(struct crf_ctx *ctx, const struct crf_object *obj);

/* Stage hooks' unix parts. */
int net_unix_dump_finish(struct crf_ctx *ctx);
int net_unix_restore_prepare(struct crf_ctx *ctx);
void net_unix_cleanup(struct crf_ctx *ctx);

/* The payload of a unix socket's fd record. */
struct unix_payload {
	uint32_t version; /* 1 */
	uint32_t pad;
	uint64_t ino;
};

#define UNIX_IMG "unix-sk.img"

#endif
