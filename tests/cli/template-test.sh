#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install crf into a scratch root, build docs/plugin-template against the
# installed headers and crf-plugin.pc only, and load it.
#
# usage: template-test.sh BUILD_DIR SOURCE_DIR IMG_TAMPER
set -eu
BUILD=$1 SRC=$2 TAMPER=$3
T=$(mktemp -d /tmp/crf-template-XXXXXX)
trap 'rm -rf "$T"' EXIT

meson install -C "$BUILD" --no-rebuild --destdir "$T/root" >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log"; exit 1; }
pc=$(dirname "$(find "$T/root" -name crf-plugin.pc | head -1)")
[[ -f $pc/crf-plugin.pc ]] || { echo "FAIL: crf-plugin.pc not installed"; exit 1; }
hdr=$(find "$T/root" -path '*/include/crf/plugin.h' | head -1)
[[ -n $hdr ]] || { echo "FAIL: crf/plugin.h not installed"; exit 1; }

# Only the installed files: a copy of the template, the scratch root's pkg-config.
cp -r "$SRC/docs/plugin-template" "$T/hello"
export PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$T/root
make -C "$T/hello" CFLAGS="-O2 -Wall -Wextra -Werror" >"$T/make.log" 2>&1 ||
	{ cat "$T/make.log"; echo "FAIL: template did not build"; exit 1; }

libdir=$(dirname "$(find "$T/root" -name 'libcrf.so.1' | head -1)")
crf=$(find "$T/root" -path '*/bin/crf' | head -1)
confdir=$(find "$T/root" -type d -path '*/etc/crf' | head -1)
[[ -x $crf && -d $confdir ]] || { echo "FAIL: crf or /etc/crf not installed"; exit 1; }
# The installed crf finds its libcrf by its RUNPATH, without LD_LIBRARY_PATH.
runpath=$(readelf -d "$crf" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
[[ -n $runpath && $T/root$runpath == "$libdir" ]] ||
	{ echo "FAIL: installed crf's RUNPATH is '$runpath', not where libcrf went ($libdir)"; exit 1; }
cp "$T/hello/hello.conf" "$confdir/plugins.d/90-hello.conf"
plugindir=$(dirname "$(find "$T/root" -name crf-mem.so | head -1)")

out=$(LD_LIBRARY_PATH=$libdir "$crf" plugins --config-dir "$confdir" \
	--plugin-dir "$T/hello" --plugin-dir "$plugindir" 2>&1) ||
	{ echo "$out"; echo "FAIL: installed crf plugins failed"; exit 1; }
echo "$out"
grep -Eq '^hello +1\.0\.0 +enabled' <<<"$out" || { echo "FAIL: hello not loaded"; exit 1; }
out=$(LD_LIBRARY_PATH=$libdir "$crf" check -v --config-dir "$confdir" \
	--plugin-dir "$T/hello" --plugin-dir "$plugindir" 2>&1) || { echo "$out"; exit 1; }
grep -q 'crf\[hello\]: hello from the template plugin' <<<"$out" ||
	{ echo "$out"; echo "FAIL: plugin config key not handed over"; exit 1; }
grep -Eq '^hello +proc-status +supported' <<<"$out" || { echo "$out"; exit 1; }

# Its fd kind, dumped and restored for real: a process with /dev/full at fd 5.
crfp() { LD_LIBRARY_PATH=$libdir "$crf" "$@" --config-dir "$confdir" \
	--plugin-dir "$T/hello" --plugin-dir "$plugindir"; }
setsid sleep 600 </dev/null >/dev/null 2>&1 5>/dev/full &
pid=$!
trap 'kill -9 $pid 2>/dev/null; rm -rf "$T"' EXIT
sleep 0.2
out=$(crfp dump -v -t $pid -D "$T/img" 2>&1) || { echo "$out"; echo "FAIL: dump of /dev/full"; exit 1; }
grep -q 'crf\[hello\]: dump fd 5 of pid '$pid' (/dev/full' <<<"$out" ||
	{ echo "$out"; echo "FAIL: hello did not dump its fd kind"; exit 1; }
wait $pid 2>/dev/null || true
# Its kind's check (ABI 1.7) refuses a damaged record before anything is forked.
cp -a "$T/img" "$T/bad"
fdrec=$(crfp show "$T/bad" "files-$pid.img" | python3 -c 'import json, sys
print(next(i for i, x in enumerate(json.load(sys.stdin)["records"]) if x.get("kind") == "full"))')
"$TAMPER" "$T/bad" "files-$pid.img" "$fdrec:payload=hello-full-2" ||
	{ echo "FAIL: img-tamper"; exit 1; }
if out=$(crfp restore -D "$T/bad" -d 2>&1); then
	echo "$out"; echo "FAIL: a damaged /dev/full record was restored"; exit 1
fi
grep -q "crf\[hello\]: error: pid $pid: fd 5: not a record of this kind" <<<"$out" ||
	{ echo "$out"; echo "FAIL: the damaged record was not refused by the kind's check"; exit 1; }
[[ ! -e /proc/$pid ]] || { echo "FAIL: the refused restore made pid $pid"; exit 1; }
out=$(crfp restore -v -D "$T/img" -d 2>&1) || { echo "$out"; echo "FAIL: restore of /dev/full"; exit 1; }
grep -q 'crf\[hello\]: restored fd 5 of pid '$pid' (/dev/full)' <<<"$out" ||
	{ echo "$out"; echo "FAIL: hello did not restore its fd kind"; exit 1; }
[[ $(readlink /proc/$pid/fd/5) == /dev/full ]] ||
	{ ls -l /proc/$pid/fd; echo "FAIL: fd 5 is not /dev/full after the restore"; exit 1; }
kill -9 $pid
echo "template: 3 passed, 0 failed"
