#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# mkcorpus.sh BUILD [OUT]: make the fuzzer's seed corpus (default
# tests/fuzz/corpus) from real dumps with BUILD's crf (build-test), as root:
# a sleeper, a small tree holding most kinds of state the plugins save
# (tests/e2e/rich-tree.c), and a process holding sockets of most kinds the
# net plugin saves, queued data in them.  Each dump becomes one input
# (mkseed.py); the dumped processes are killed by the dump.
set -euo pipefail
CRF=$(realpath "$1/core/crf")
RICH_TREE=$(realpath "$1/tests/e2e/rich-tree")
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${2:-$HERE/corpus}
TMP=$(mktemp -d /tmp/crf-mkcorpus-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"

# seed NAME CMD...: start CMD in a session of its own (no fd of ours),
# let it settle, dump it (with $DUMP_ARGS), and turn the dump into $OUT/NAME.
seed() {
	local name=$1 pid
	shift
	setsid python3 -c 'import os, sys; os.closerange(3, 4096); os.execvp(sys.argv[1], sys.argv[1:])' \
		"$@" </dev/null >/dev/null 2>&1 &
	pid=$!
	sleep 1
	"$CRF" dump -t "$pid" -D "$TMP/$name" ${DUMP_ARGS:-} >/dev/null
	wait "$pid" 2>/dev/null || true
	python3 "$HERE/mkseed.py" "$TMP/$name" "$OUT/$name"
	# A killing dump of TCP connections leaves its network lock for the
	# restore, which never comes here.
	if [[ -f $TMP/$name/netlock.img ]]; then
		nft delete table inet "$("$CRF" show "$TMP/$name" netlock.img |
			python3 -c 'import json, sys; print(json.load(sys.stdin)["records"][0]["table"])')"
	fi
	echo "mkcorpus: $OUT/$name: $(stat -c %s "$OUT/$name") bytes"
}

seed sleeper sleep 1000
seed tree "$RICH_TREE"

# Sockets of most kinds the net plugin saves (hold-sockets.py).
DUMP_ARGS="--tcp-established --unix-peercred-crf" seed sockets python3 "$HERE/../e2e/hold-sockets.py"
