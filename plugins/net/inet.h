/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * inet.h - what the TCP, UDP, raw and ping files of the net plugin share.
 *
 * A socket's state is a crf.net.InetSk (inet.proto), saved packed as the
 * payload of its fd record; the files plugin keeps the fd table.
 */
#ifndef CRF_PLUGIN_NET_INET_H
#define CRF_PLUGIN_NET_INET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include <crf/plugin.h>

#include "inet.pb-c.h"

/* "tcp 127.0.0.1:18777 -> 127.0.0.1:40112" and the like: the name of a socket in messages. */
#define INET_NAME_MAX 192

/* Addresses. */
void inet_addr_to_sa(int family, const Crf__Net__Addr *a, struct sockaddr_storage *ss,
		     socklen_t *len);
/* A new Addr (malloc'd, with its bytes) of @ss, or NULL. */
Crf__Net__Addr *inet_addr_new(const struct sockaddr_storage *ss);
bool inet_addr_is_any(const Crf__Net__Addr *a);
/* An IPv4-mapped IPv6 address (::ffff:a.b.c.d): it travels as IPv4. */
bool inet_addr_is_mapped(const Crf__Net__Addr *a);
/*
 * @fd bound to @local when it names an address or a port, then connected
 * to @sk's peer when @sk was connected (UDP, raw, ping).
 */
int inet_bind_connect(int fd, const Crf__Net__InetSk *sk, const Crf__Net__Addr *local,
		      const char *name);
/* "1.2.3.4:80", "[::1]:80" into @buf. */
const char *inet_addr_str(const Crf__Net__Addr *a, char *buf, size_t len);
/* "tcp LOCAL -> PEER" (or "tcp LOCAL" unconnected) into @buf (INET_NAME_MAX). */
const char *inet_sk_name(const Crf__Net__InetSk *sk, char *buf);

/*
 * Every part of a dumped InetSk is malloc'd, so that it is freed as a whole
 * like an unpacked one.
 */
void inet_sk_free(Crf__Net__InetSk *sk);
/* A malloc'd copy of @len bytes, or NULL. */
void *inet_memdup(const void *p, size_t len);
/*
 * Append a new zeroed message of @size bytes to the repeated field @v (of
 * *@n): the message, to be initialised and filled, or NULL.  It is in the
 * field at once, so that freeing the whole frees it, filled or not.
 */
void *inet_push(void *v, size_t *n, size_t size);

/*
 * Socket options (sockopt.c): those of the table that differ from a fresh
 * socket's of @family, @type, @protocol (@proto: TCP or UDP, 0 for netlink)
 * appended to *@opts (*@n of them), and set again; the InetSk forms.
 */
int sockopt_dump_list(int fd, int family, int type, int protocol, unsigned char proto,
		      Crf__Net__SockOpt ***opts, size_t *n, const char *name);
int sockopt_restore_list(int fd, Crf__Net__SockOpt *const *opts, size_t n, const char *name);
int sockopt_dump(int fd, Crf__Net__InetSk *sk, const char *name);
int sockopt_restore(int fd, const Crf__Net__InetSk *sk, const char *name);
/*
 * The buffer size locks as saved (SO_BUF_LOCK): setting SO_RCVBUF/SO_SNDBUF
 * locked them.  sockopt_restore() sets them last, but an established
 * connection's, which tcp_repair_restore() sets once it is connected.
 */
int sockopt_restore_buf_lock(int fd, Crf__Net__SockOpt *const *opts, size_t n, const char *name);
/* Set SO_REUSEADDR again as saved: leaving TCP repair mode clears it. */
int sockopt_restore_reuse(int fd, const Crf__Net__InetSk *sk, const char *name);

/* UDP (udp.c): the receive queue at the dump, the datagrams re-queued at the restore. */
int udp_dump(int fd, Crf__Net__InetSk *sk, const char *name);
int udp_restore(const Crf__Net__InetSk *sk, int nonblock, const char *name);
/* udp-mcast.c: the multicast groups it joined, with their source filters. */
int udp_mcast_dump(int fd, Crf__Net__InetSk *sk, const char *name);
int udp_mcast_restore(int fd, const Crf__Net__InetSk *sk, const char *name);

/*
 * Raw and ping sockets (raw.c): the state and peer from /proc/@pid/net (the
 * task's namespace), a packet queued refused; made again.
 */
int raw_dump(struct crf_ctx *ctx, int fd, pid_t pid, Crf__Net__InetSk *sk, const char *name);
int raw_restore(const Crf__Net__InetSk *sk, int nonblock, const char *name);

/* TCP (tcp.c, tcp-repair.c). */
struct inet_opts {
	bool tcp_established; /* --tcp-established */
	bool skip_in_flight;  /* --skip-in-flight */
	bool tcp_close;	      /* --tcp-close */
};
int tcp_dump(int fd, Crf__Net__InetSk *sk, const struct inet_opts *o, const char *name);
int tcp_restore(const Crf__Net__InetSk *sk, int nonblock, const char *name);
/* bind() to @sk->local in repair mode, which shares the port with the tree's other sockets. */
int tcp_bind_repair(int fd, const Crf__Net__InetSk *sk, const char *name);
/*
 * Connected (@state: established, or closing one way or both; @shut_rd:
 * shut down for reading): dump in repair mode (the socket is left in it),
 * restore through it.
 */
int tcp_repair_dump(int fd, Crf__Net__InetSk *sk, unsigned state, bool shut_rd, const char *name);
int tcp_repair_restore(int fd, const Crf__Net__InetSk *sk, const char *name);
/*
 * What follows repair mode, once the whole tree is made: repair off, the
 * options it clears, the data never sent, the state checked (tcp-resume.c
 * calls it in crf at restore-resume, on its copy of the task's socket).
 */
int tcp_repair_finish(int fd, const Crf__Net__InetSk *sk, const char *name);
/*
 * tcp-resume.c, restore-resume: every established connection the tree's
 * tasks hold, out of repair mode (at the first task, before any lock is
 * dropped); restore-undo: back into it, so that the processes' deaths close
 * them silently; restore-cleanup: crf's copies closed.
 */
int tcp_resume_note(pid_t pid, int fd, const void *payload, size_t len);
int tcp_resume(struct crf_ctx *ctx);
void tcp_resume_undo(void);
void tcp_resume_cleanup(void);
int tcp_write_unsent(int fd, const Crf__Net__TcpConn *c);
/* The FINs of a closing connection (tcp-fin.c), in repair mode; @step names what failed. */
bool tcp_fin_sent(unsigned state);
bool tcp_fin_received(unsigned state);
int tcp_fin_restore(int fd, const Crf__Net__InetSk *sk, const char **step);
/* The restored connection is in the state it was dumped in, or an error naming both. */
int tcp_check_state(int fd, const Crf__Net__InetSk *sk, const char *name);
/* Leave repair mode on every socket the dump put in it (DUMP_UNDO, DUMP_RESUME). */
void tcp_repair_release(void);
/* Close the dump's copies of those sockets (DUMP_CLEANUP). */
void tcp_repair_forget(void);

/* The network lock (netlock.c): drop a connection's packets while it is frozen. */
/* Lock @sk (socket @fd): in crf's namespace, and in the socket's when it is another. */
int netlock_conn(int fd, const Crf__Net__InetSk *sk, const char *name);
void netlock_dump_release(void);
/* The dump is over and the lock, if still held, stays for the restore (DUMP_CLEANUP). */
void netlock_dump_forget(void);
int netlock_dump_finish(struct crf_ctx *ctx);
int netlock_restore_prepare(struct crf_ctx *ctx);
/* In a restored task: lock its namespace too, when it is not crf's. */
int netlock_restore_here(const char *name);
/* restore-resume: drop that lock in @pid's namespace. */
int netlock_restore_resume(pid_t pid);
/* Free the libnftables context kept for crf's namespace (the plugin's cleanup). */
void netlock_nft_close(void);
/*
 * restore-cleanup: drop the lock restore-prepare made, or, @keep (the
 * restore failed), leave it as the killing dump left it, for the next.
 */
void netlock_restore_release(bool keep);
/*
 * Drop the datagrams to @sk's address and port, but for those crf sends
 * marked NETLOCK_MARK (SO_MARK), until netlock_udp_release().
 */
#define NETLOCK_MARK 0x63726621
int netlock_udp_hold(const Crf__Net__InetSk *sk, const char *name);
void netlock_udp_release(void);

/* The handlers and the hooks of their own (inet.c; plugin.c calls the rest). */
int inet_dump(struct crf_ctx *ctx, const struct crf_object *obj);
int inet_restore(struct crf_ctx *ctx, const struct crf_object *obj);
int inet_dump_pause(struct crf_ctx *ctx);
int inet_dump_undo(struct crf_ctx *ctx);

#endif
