#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A small tree holding most kinds of state crf's plugins save, for dumps
that are taken apart (hostile-images.sh, tests/fuzz/mkcorpus.sh): a thread,
a child, a pipe with bytes in it and epoll on it, inotify, eventfd,
timerfd, signalfd, a shared memfd and a shared anonymous mapping, an
unlinked file.  It sleeps until killed; it verifies nothing."""
import ctypes
import mmap
import os
import select
import signal
import threading
import time

os.closerange(3, 4096)
r, w = os.pipe()
os.write(w, b"queued bytes")
ep = select.epoll()
ep.register(r, select.EPOLLIN)
libc = ctypes.CDLL(None, use_errno=True)
ino = libc.inotify_init1(0)
libc.inotify_add_watch(ino, b"/usr", 0x400)  # IN_DELETE_SELF: no events
efd = os.eventfd(7)
tfd = libc.timerfd_create(1, 0)
mask = (ctypes.c_ulong * 16)(1 << (signal.SIGUSR1 - 1))
sfd = libc.signalfd(-1, mask, 8)
mfd = os.memfd_create("crf-rich")
os.ftruncate(mfd, 8192)
mm = mmap.mmap(mfd, 8192)
mm[:5] = b"memfd"
anon = mmap.mmap(-1, 4096, flags=mmap.MAP_SHARED)
anon[:4] = b"anon"
fd = os.open("/tmp", os.O_TMPFILE | os.O_RDWR)
os.write(fd, b"unlinked")
threading.Thread(target=time.sleep, args=(1000,), daemon=True).start()
if os.fork() == 0:
    time.sleep(1000)
time.sleep(1000)
