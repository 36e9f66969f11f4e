/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wl-container: a whole container, made by the workload itself (see
 * wl-container.c for the outside, the "runtime", and wl-container-in.c for
 * what runs inside).  What both halves share.
 */
#ifndef CRF_TESTS_WL_CONTAINER_H
#define CRF_TESTS_WL_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

/* The veth pair: the host's end and its address, the container's. */
#define CTR_HOST_IF	  "crfctrh0"
#define CTR_HOST_IP	  "10.89.0.1"
#define CTR_IN_IP	  "10.89.0.2"
#define CTR_UDP_PORT	  7791
#define CTR_TCP_HOST_PORT 7792
#define CTR_TCP_IN_PORT	  7793
#define CTR_LISTEN_PORT	  7790
#define CTR_HOSTNAME	  "crf-ctr"
#define CTR_DOMAIN	  "ctr.test"
/* The user namespace of the counting shell: root inside is this outside. */
#define CTR_UID_BASE  100000
#define CTR_UID_COUNT 65536
#define CTR_IPC_KEY   0xc7a000

/*
 * The pieces that can be switched on and off (argument PIECES of both
 * halves, a comma list: "+tcp" adds, "-udp" removes, from the default set).
 */
struct ctr_pieces {
	bool udp;      /* a UDP socket inside, a datagram to the host across the veth */
	bool listener; /* a TCP listener inside, connected to after the restore */
	bool tcp;      /* a TCP connection over lo inside */
	bool tcp_host; /* a TCP connection to the host across the veth */
	bool sysv;     /* SysV message queue and semaphore set */
	bool shm;      /* a SysV shared memory segment with contents */
	bool shmat;    /* ... attached by the container's init */
	bool mqueue;   /* a POSIX message queue with messages */
	bool mqmount;  /* an mqueue filesystem mounted at /dev/mqueue */
	bool userns;   /* the counting shell in a user namespace of its own */
	bool pidns;    /* a nested PID namespace (an init and its child) */
	bool cgroup;   /* cgroups with limits, and a cgroup namespace */
	bool timens;   /* a time namespace with offsets */
	/*
	 * fds shared across processes inside: 0-2 of every process on the
	 * init's descriptions (/dev/null, /data/init.log), the shell waiting
	 * with usleep children (else each process opens its own, the shell
	 * waits with read -t on a FIFO)
	 */
	bool shared;
	bool shared_sock;  /* the init's sockets kept by the nested init (refused) */
	const char *vxlan; /* refused-vxlan: a vxlan link inside */
	const char *block; /* refused-block=DEV: DEV's ext4 mounted at /mnt */
};

/* Parse PIECES into @p (the defaults first); exits on a bad word. */
void ctr_pieces(struct ctr_pieces *p, const char *spec);

/* A file's whole contents (up to @size - 1 bytes, NUL-terminated), or fail. */
void ctr_slurp(const char *path, char *buf, size_t size);

/* Create (or truncate) @path with @text. */
void ctr_put(const char *path, const char *text);

/* Wait (10 ms steps, at most @secs) for @path to exist; false on timeout. */
bool ctr_wait_file(const char *path, int secs);

/* Unless @p->shared: fd 0 on /dev/null, 1 and 2 on @path, descriptions of our own. */
void ctr_own_log(const struct ctr_pieces *p, const char *path);

/* The inside: argv "init PIECES" after the exec in the container. */
int ctr_inside(int argc, char **argv);

#endif
