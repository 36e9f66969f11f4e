#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""mkseed.py DUMP_DIR OUT: one fuzz-images input (tests/fuzz/README.md) from a
real dump: every image of DUMP_DIR, its records as they are, a blob as its
size (the harness writes zeros).  The framing is read as docs/image-format.md
describes it; checksums are not needed: the harness writes new ones."""
import os
import struct
import sys


def image(path):
    data = open(path, "rb").read()
    if data[:4] != b"CRFI":
        raise SystemExit(f"{path}: not an image")
    kind, n = struct.unpack_from("<HH", data, 8)
    if kind == 2:
        (size,) = struct.unpack_from("<Q", data, len(data) - 12)
        return b"", size, []
    type_name, at, records = data[12:12 + n], 16 + n, []
    while True:
        (length,) = struct.unpack_from("<I", data, at)
        if length == 0xFFFFFFFF:
            break
        records.append(data[at + 8:at + 8 + length])
        at += 8 + length
    return type_name, len(records), records


def main():
    src, out = sys.argv[1], sys.argv[2]
    buf = bytearray()
    for name in sorted(os.listdir(src)):
        if not name.endswith(".img") or name.startswith("."):
            continue
        type_name, count, records = image(os.path.join(src, name))
        buf += bytes([len(name)]) + name.encode() + bytes([len(type_name)]) + type_name
        buf += struct.pack("<I", count)
        for r in records:
            buf += struct.pack("<I", len(r)) + r
    with open(out, "wb") as f:
        f.write(buf)


if __name__ == "__main__":
    main()
