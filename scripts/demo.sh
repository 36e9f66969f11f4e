#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Install dependencies, build crf, then checkpoint a running counter, kill
# it, restore it, and show it counting on from where it was, with its PID,
# into its own log: its fds 0-2 come back as they were.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[[ -d build ]] || meson setup build -Dwerror=true >/dev/null
ninja -C build >/dev/null
CRF=build/core/crf
D=$(mktemp -d /tmp/crf-demo-XXXXXX)
pid=
cleanup() {
	[[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null || true
	rm -rf "$D"
}
trap cleanup EXIT

echo "== crf check: the kernel features the plugins need"
$CRF check | tail -1
echo
# The counter must hold no fd but 0-2 (a pipe this shell inherited would
# lead outside the tree, which crf refuses): close whatever it inherited.
for fd in $(ls /proc/$$/fd); do
	((fd > 2)) && eval "exec $fd>&-" 2>/dev/null
done
echo "== start a counter (prints 'counter: N' every 200 ms, appended to $D/counter.log)"
: >"$D/counter.log"
build/tests/workloads/wl-counter </dev/null >>"$D/counter.log" 2>&1 &
pid=$!
sleep 1.5
tail -n 2 "$D/counter.log" | sed 's/^/   | /'
echo
echo "== crf dump -t $pid -D $D/img   (the dump kills it)"
$CRF dump -t "$pid" -D "$D/img" -v 2>&1 | sed 's/^/   | /'
{ wait "$pid"; } 2>/dev/null || true
kill -0 "$pid" 2>/dev/null && { echo "pid $pid still runs"; exit 1; }
echo "   pid $pid is gone; the images:"
ls -l "$D/img" | tail -n +2 | sed 's/^/   | /'
echo
echo "== crf restore -D $D/img -d   (its fds 0-2 are restored: it writes on into counter.log)"
$CRF restore -D "$D/img" -d -v 2>&1 | sed 's/^/   | /'
sleep 1.5
echo "   pid $pid runs again: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
tail -n 8 "$D/counter.log" | sed 's/^/   | /'
echo
echo "The counter went on from where it was dumped, in the same process (pid $pid),"
echo "writing into the log it had (fd 1: $(readlink "/proc/$pid/fd/1"))."
kill -KILL "$pid"
pid=
