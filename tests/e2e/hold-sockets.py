#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""hold-sockets.py: hold sockets of most kinds the net plugin saves, with data
queued in them, and sleep: unix stream, dgram and seqpacket (pairs; a
listener with a connection waiting in its backlog, nothing sent on it, which
crf refuses), TCP listening and established over IPv4 and IPv6, UDP with a
datagram queued, netlink; and a tun interface (the devices plugin's kind)
with an address.  Dumped with --tcp-established --unix-peercred-crf for the
fuzzer's seed (tests/fuzz/mkcorpus.sh) and hostile-images.sh."""
import fcntl
import os
import socket
import struct
import subprocess
import time

TUNSETIFF, IFF_TUN, IFF_NO_PI = 0x400454CA, 0x0001, 0x1000

a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
a.send(b"queued")
d1, d2 = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
d1.send(b"datagram")
listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
listener.bind(b"\0crf-hold-sockets-%d" % os.getpid())
listener.listen(4)
waiting = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
waiting.connect(listener.getsockname())
tcp = socket.socket()
tcp.bind(("127.0.0.1", 0))
tcp.listen(8)
client = socket.create_connection(tcp.getsockname())
server, _ = tcp.accept()
client.send(b"tcp bytes")
tcp6 = socket.socket(socket.AF_INET6)
tcp6.bind(("::1", 0))
tcp6.listen(1)
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", 0))
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"udp", udp.getsockname())
nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
nl.bind((0, 0))
# Not persistent: it goes with the process (a dump that kills, a test's kill).
tun = os.open("/dev/net/tun", os.O_RDWR)
name = "crfhs%d" % os.getpid()
fcntl.ioctl(tun, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
subprocess.run(["ip", "addr", "add", "10.213.77.1/30", "dev", name], check=True)
time.sleep(1000)
