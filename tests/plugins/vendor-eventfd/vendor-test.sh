#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A vendor's replacement of a built-in fd kind.  Install crf into a scratch
# root, build tests/plugins/vendor-eventfd against the installed headers
# and crf-plugin.pc only (make + pkg-config, as a vendor would), and with
# the installed crf and that plugin check, on wl-anonfds (two eventfds,
# one a semaphore, one with a dup, counts 7 and 3):
#
#  1. dump with --disable files:eventfd: the vendor plugin dumps both
#     eventfds (its log), their records name it and carry its payload,
#     not the files plugin's eventfd state; the restore (without any
#     option) goes through it too, and the counters survive (the
#     workload verifies them);
#  2. without --disable, the files plugin (first in dump order) handles
#     them, and the vendor plugin does not run;
#  3. a dump by the vendor plugin, restored with its kind switched off or
#     the plugin disabled: refused before anything is made, naming the
#     fd, the kind and the plugin (the core names the plugin it lacks).
#
# usage: vendor-test.sh BUILD_DIR SOURCE_DIR HARNESS WL_ANONFDS
set -eu
BUILD=$1 SRC=$2 HARNESS=$3 WL=$4
T=$(mktemp -d /tmp/crf-vendor-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

meson install -C "$BUILD" --no-rebuild --destdir "$T/root" >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log"; exit 1; }
pc=$(dirname "$(find "$T/root" -name crf-plugin.pc | head -1)")
[[ -f $pc/crf-plugin.pc ]] || fail "crf-plugin.pc not installed"
cp -r "$SRC/tests/plugins/vendor-eventfd" "$T/vendor"
rm -f "$T/vendor/vendor-test.sh"
PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$T/root \
	make -C "$T/vendor" CFLAGS="-O2 -Wall -Wextra -Werror" >"$T/make.log" 2>&1 ||
	{ cat "$T/make.log"; fail "the vendor plugin did not build"; }

libdir=$(dirname "$(find "$T/root" -name 'libcrf.so.1' | head -1)")
crf=$(find "$T/root" -path '*/bin/crf' | head -1)
confdir=$(find "$T/root" -type d -path '*/etc/crf' | head -1)
plugindir=$(dirname "$(find "$T/root" -name crf-files.so | head -1)")
[[ -x $crf && -d $confdir && -d $plugindir ]] || fail "crf not installed"
cp "$T/vendor/vendor-eventfd.conf" "$confdir/plugins.d/90-vendor-eventfd.conf"
echo "log = $T/vendor.log" >>"$confdir/plugins.d/90-vendor-eventfd.conf"

# The installed crf with the vendor plugin, for the harness; every dump's
# images are kept in $T/saved for a look afterwards.
cat >"$T/crf" <<EOS
#!/bin/bash
LD_LIBRARY_PATH=$libdir "$crf" "\$@" --config-dir "$confdir" \\
	--plugin-dir "$T/vendor" --plugin-dir "$plugindir"
rc=\$?
if [[ \$1 == dump && \$rc == 0 ]]; then rm -rf "$T/saved"; cp -r "\$5" "$T/saved"; fi
exit \$rc
EOS
chmod +x "$T/crf"

out=$("$T/crf" plugins 2>&1) || { echo "$out"; fail "crf plugins"; }
grep -Eq '^vendor-eventfd +2\.3\.4 +enabled' <<<"$out" || { echo "$out"; fail "not loaded"; }

# The eventfd records of the last dump as "FD PLUGIN KIND-FIELD PAYLOAD" lines.
records() {
	"$T/crf" show "$T/saved" $(cd "$T/saved" && ls files-*.img) >"$T/show.json" 2>&1 ||
		{ cat "$T/show.json"; fail "crf show"; }
	python3 - "$T/show.json" <<'EOP'
import json, sys
text = open(sys.argv[1]).read()
dec = json.JSONDecoder()
i, recs = 0, []
def walk(o):
    if isinstance(o, dict):
        if 'fd' in o and 'path' in o and 'flags' in o:
            recs.append(o)
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
while i < len(text):
    if text[i].isspace():
        i += 1
        continue
    o, i = dec.raw_decode(text, i)
    walk(o)
for r in recs:
    if r.get('kind') == 'eventfd':
        print(r['fd'], r.get('plugin'), r.get('pluginVersion', r.get('plugin_version')),
              'eventfd' in r, 'payload' in r, 'sameAs' in r or 'same_as' in r)
EOP
}

run() {
	"$HARNESS" --timeout 60 --crf "$T/crf" --dir "$T/img" "$@" -- "$WL" >"$T/harness.log" 2>&1 ||
		{ cat "$T/harness.log"; fail "harness $*"; }
}

# 1. The vendor's handler, at the dump and at the restore.
rm -f "$T/vendor.log"
run --mode kill --name vendor-eventfd --dump-arg=--disable=files:eventfd
recs=$(records)
echo "$recs"
[[ $(grep -c . <<<"$recs") == 3 ]] || fail "wanted 3 eventfd records (2 + a dup)"
grep -Eq '^[0-9]+ vendor-eventfd 2\.3\.4 False True False$' <<<"$recs" ||
	fail "no eventfd record of the vendor plugin with its payload and without files' state"
! grep -Eq '^[0-9]+ [^ ]+ [^ ]+ True' <<<"$recs" || fail "the files plugin saved an eventfd"
! grep -Eqv '^[0-9]+ vendor-eventfd ' <<<"$recs" || fail "an eventfd of another plugin"
cat "$T/vendor.log"
grep -Eq '^dump pid [0-9]+ fd [0-9]+ count 7 flags 0x800$' "$T/vendor.log" ||
	fail "the vendor plugin did not dump the eventfd of count 7 (O_NONBLOCK)"
grep -Eq '^dump pid [0-9]+ fd [0-9]+ count 3 flags 0x801$' "$T/vendor.log" ||
	fail "the vendor plugin did not dump the semaphore eventfd of count 3"
grep -Eq '^restore pid [0-9]+ fd [0-9]+ count 7 flags 0x800$' "$T/vendor.log" ||
	fail "the vendor plugin did not restore the eventfd of count 7"
grep -Eq '^restore pid [0-9]+ fd [0-9]+ count 3 flags 0x801$' "$T/vendor.log" ||
	fail "the vendor plugin did not restore the semaphore eventfd"
[[ $(grep -c . "$T/vendor.log") == 4 ]] || fail "the vendor plugin ran more than twice each way"

# 2. Without --disable, the built-in handler: first in dump order.
rm -f "$T/vendor.log"
run --mode kill --name vendor-eventfd-builtin
recs=$(records)
echo "$recs"
[[ $(grep -c . <<<"$recs") == 3 ]] || fail "wanted 3 eventfd records (2 + a dup)"
! grep -Eqv '^[0-9]+ files [^ ]+ ' <<<"$recs" || fail "an eventfd not of the files plugin"
grep -Eq '^[0-9]+ files [^ ]+ True False False$' <<<"$recs" ||
	fail "the files plugin's record lacks its eventfd state"
[[ ! -s $T/vendor.log ]] || { cat "$T/vendor.log"; fail "the vendor plugin ran"; }

# 3. Dumped by the vendor plugin, restored with its kind switched off, or
# without it: refused up front (files' own eventfd handler never reads the
# vendor's record), naming the fd, the kind and the plugin.
run --mode leave --name vendor-eventfd-off --dump-arg=--disable=files:eventfd \
	--restore-arg=--disable=vendor-eventfd:eventfd --expect-restore-fail \
	"fd [0-9]+ \(anon_inode:\[eventfd\], kind .eventfd.\), dumped by plugin .vendor-eventfd., cannot be restored: the .eventfd. handler of plugin .vendor-eventfd. is switched off by --disable vendor-eventfd:eventfd"
run --mode leave --name vendor-eventfd-disabled --dump-arg=--disable=files:eventfd \
	--restore-arg=--disable=vendor-eventfd --expect-restore-fail \
	"the dump was written with plugin .vendor-eventfd. 2\.3\.4, which is disabled by --disable"
echo "vendor-eventfd: 4 passed, 0 failed"
