#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check a linked blob: no relocations, no undefined symbols, entry at 0, within budget.

A blob is copied to an address the kernel picks and run without a loader, so
any relocation (an absolute address in code or data) or undefined symbol
would make it crash in someone else's process.
"""
import subprocess
import sys


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: check-blob.py READELF NM BLOB.elf BUDGET")
    readelf, nm, elf, budget = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    errors = []

    relocs = run(readelf, "-W", "-r", elf)
    if "There are no relocations" not in relocs:
        errors.append("relocations (an absolute address was used):\n" + relocs)
    undef = run(nm, "-u", elf).strip()
    if undef:
        errors.append("undefined symbols:\n" + undef)
    syms = {}
    for line in run(nm, elf).splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms[parts[2]] = int(parts[0], 16)
    if syms.get("crf_blob_start") != 0:
        errors.append("the blob does not start at address 0")
    size = syms.get("crf_blob_end", 0)
    if size > budget:
        errors.append(f"{size} bytes, over the budget of {budget}")
    header = run(readelf, "-W", "-h", elf)
    if "Entry point address:               0x0" not in header:
        errors.append("entry point is not at offset 0")
    if errors:
        print(f"{elf}:\n" + "\n".join(errors))
        sys.exit(1)
    print(f"{elf}: {size} bytes (budget {budget}), no relocations, no undefined symbols")


if __name__ == "__main__":
    main()
