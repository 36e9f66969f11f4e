#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Command-line tests: every error path of the foundation gives one clear
# message and the right exit status (0 ok, 1 failure, 2 usage).
#
# usage: cli-test.sh CRF MKIMAGE TEST_PLUGIN_DIR
set -u
CRF=$1 MKIMAGE=$2 TPD=$3
T=$(mktemp -d /tmp/crf-cli-XXXXXX)
trap 'rm -rf "$T"' EXIT
passed=0 failed=0

# expect STATUS REGEX CMD...: run CMD, check its status and that its output
# (stdout and stderr together) matches the extended REGEX.
expect() {
	local want=$1 re=$2 got
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	got=$?
	cat "$T/out" "$T/err" >"$T/all"
	if [[ $got -ne $want ]] || ! grep -Eq -- "$re" "$T/all"; then
		echo "FAIL: $* (status $got, wanted $want; output must match /$re/)"
		sed 's/^/    | /' "$T/all" | head -20
		failed=$((failed + 1))
		return 1
	fi
	passed=$((passed + 1))
}

# one_error: the last command printed exactly one line on stderr.
one_error() {
	local n
	n=$(wc -l <"$T/err")
	if [[ $n -ne 1 ]]; then
		echo "FAIL: expected one error line, got $n:"
		sed 's/^/    | /' "$T/err"
		failed=$((failed + 1))
		return 1
	fi
	passed=$((passed + 1))
}

# A configuration directory of test plugins: conf NAME <<< INI
conf() {
	mkdir -p "$T/$1/plugins.d"
	cat >"$T/$1/crf.conf"
}

# --- usage -------------------------------------------------------------
expect 0 'Usage: crf COMMAND' "$CRF" --help
expect 0 '^crf [0-9.]+ \(plugin ABI 1\.5, image format 1\.0\)' "$CRF" --version
expect 2 'Usage: crf COMMAND' "$CRF"
expect 2 "crf: unknown command 'frobnicate'" "$CRF" frobnicate && one_error
expect 2 "crf plugins: unknown option '--bogus'" "$CRF" plugins --bogus && one_error
expect 2 "crf dump: unknown option '-z'" "$CRF" dump -z && one_error
expect 2 "crf dump: option '--tree' needs an argument" "$CRF" dump --tree && one_error
expect 2 "crf dump: no process given \(-t PID\)" "$CRF" dump -D "$T/d" && one_error
expect 2 "crf dump: 'abc' is not a PID" "$CRF" dump -t abc -D "$T/d" && one_error
expect 2 "crf dump: --freeze must be auto, cgroup or ptrace" "$CRF" dump -t 1 -D "$T/d" --freeze=magic
expect 2 "crf restore: no image directory given" "$CRF" restore && one_error
expect 2 "crf dump: --progress must be auto, always or never" "$CRF" dump -t 1 -D "$T/d" --progress=sometimes && one_error
expect 2 "crf show: no dump directory given" "$CRF" show && one_error
expect 2 "crf dump: --external bogus: not pipe:\[INODE\] or fifo:\[INODE\]" \
	"$CRF" dump -t 1 -D "$T/d" --external bogus && one_error
expect 2 "crf restore: --inherit-fd pipe:\[1\]: not fd\[N\]:RESOURCE" \
	"$CRF" restore -D "$T/d" --inherit-fd 'pipe:[1]' && one_error
expect 2 "crf restore: --inherit-fd fd\[77\]:pipe:\[1\]: crf restore has no fd 77" \
	"$CRF" restore -D "$T/d" --inherit-fd 'fd[77]:pipe:[1]' && one_error
expect 2 "crf restore: --file-validation must be strict or lax" \
	"$CRF" restore -D "$T/d" --file-validation=loose && one_error
expect 2 "crf check: unexpected argument 'extra'" "$CRF" check extra
for cmd in dump restore check plugins show; do
	expect 0 "Usage: crf $cmd" "$CRF" "$cmd" --help
done

# --- the real plugins ---------------------------------------------------
expect 0 'dump order: ' "$CRF" plugins
for p in mem files net ns cgroup devices; do
	grep -Eq "^$p +[0-9.]+ +enabled +[0-9]+ +[0-9]+ " "$T/out" ||
		{ echo "FAIL: plugin $p not listed as enabled with positions"; failed=$((failed + 1)); }
done
grep -q '^restore order: ' "$T/out" || { echo "FAIL: no restore order"; failed=$((failed + 1)); }
expect 0 'digraph crf_plugins' "$CRF" plugins --dot
expect 0 'all required kernel features are present' "$CRF" check
expect 0 'mem +pagemap' "$CRF" check
# An optional feature's probe must not misreport either: tun is supported
# exactly where /dev/net/tun opens (a probe saying "missing" would make a
# dump refuse what it could save).
if (exec 3<>/dev/net/tun) 2>/dev/null; then
	expect 0 '^devices +tun +supported ' "$CRF" check
else
	echo "NOTE cli: /dev/net/tun does not open here: only the tun probe's refusal is checked"
	expect 0 '^devices +tun +missing \(optional\) ' "$CRF" check
fi
expect 1 "plugin 'net' requires plugin 'ns', which is disabled by --disable" \
	"$CRF" check --disable ns && one_error
expect 1 "plugin '[a-z]+' requires plugin '[a-z]+', which is disabled: not listed in --plugins" \
	"$CRF" check --plugins net
expect 1 "crf: error: --plugins: unknown plugin 'nosuch'" "$CRF" check --plugins nosuch && one_error
expect 0 '^devices +[0-9.]+ +disabled' "$CRF" plugins --disable devices
expect 0 'disabled by --disable' "$CRF" plugins --disable devices
expect 1 "crf: error: no process with PID 999999999" "$CRF" dump -t 999999999 -D "$T/d" && one_error
[[ ! -e $T/d ]] || { echo "FAIL: a failed dump left $T/d"; failed=$((failed + 1)); }

# --- configuration errors ----------------------------------------------
printf '[mem]\nthis is not ini\n' >"$T/bad.conf"
expect 1 "$T/bad.conf:2: malformed line" "$CRF" plugins --config "$T/bad.conf" && one_error
printf '[mem]\ncolour = blue\n' >"$T/unknown.conf"
expect 0 "crf: warning: $T/unknown.conf:2: unknown key 'colour' for plugin 'mem'" \
	"$CRF" plugins --config "$T/unknown.conf"
expect 0 '^PLUGIN' "$CRF" plugins --config "$T/unknown.conf" -q
grep -q warning "$T/err" && { echo "FAIL: -q printed a warning"; failed=$((failed + 1)); }
printf '[mem]\ndump-after = files\n[files]\ndump-after = mem\n' >"$T/cycle.conf"
expect 1 "cycle in the dump order: (files -> mem -> files|mem -> files -> mem)" \
	"$CRF" check --config "$T/cycle.conf"
printf '[mem]\nenabled = no\n' >"$T/off.conf"
expect 0 "disabled by $T/off.conf:2" "$CRF" plugins --config "$T/off.conf"

# --- plugin loading errors ---------------------------------------------
conf abi <<<"[future]
so = crf-test-future.so"
expect 1 "plugin 'future': .*crf-test-future.so: built against plugin ABI 2\.0, crf provides 1\.5" \
	"$CRF" check --config-dir "$T/abi" --plugin-dir "$TPD" && one_error
echo 'not an ELF file' >"$T/junk.so"
conf junk <<<"[junk]
so = $T/junk.so"
expect 1 "plugin 'junk': cannot load: .*junk.so" "$CRF" check --config-dir "$T/junk" && one_error
conf ghost <<<"[ghost]
so = crf-ghost.so"
expect 1 "plugin 'ghost': crf-ghost.so not found in" "$CRF" check --config-dir "$T/ghost" && one_error
conf nodesc <<<"[nodesc]
so = crf-test-nodesc.so"
expect 1 "crf-test-nodesc.so is not a crf plugin" \
	"$CRF" check --config-dir "$T/nodesc" --plugin-dir "$TPD" && one_error
expect 1 "crf-test-nodesc.so is not a crf plugin" \
	"$CRF" plugins --config-dir "$T/nodesc" --plugin-dir "$TPD"
conf probe <<<"[alpha]
so = crf-test-alpha.so
probe-missing = yes"
expect 1 "crf\[alpha\]: error: required kernel feature 'test-feature' is missing" \
	"$CRF" check --config-dir "$T/probe" --plugin-dir "$TPD"
grep -q 'MISSING (required)' "$T/out" || { echo "FAIL: check table"; failed=$((failed + 1)); }
expect 1 "no process with PID" "$CRF" dump -t 999999999 -D "$T/d2" --config-dir "$T/probe" --plugin-dir "$TPD"
expect 1 'configuration directory /nonexistent' "$CRF" plugins --config-dir /nonexistent

# --- logging ------------------------------------------------------------
expect 0 'dump order' "$CRF" plugins -vv --log-file "$T/log" --config "$T/unknown.conf"
grep -q "unknown key 'colour'" "$T/log" || { echo "FAIL: log file lacks the warning"; failed=$((failed + 1)); }
grep -q "crf\[mem\]: debug: probe pagemap" "$T/log" ||
	{ echo "FAIL: log file lacks the plugin-prefixed debug line"; failed=$((failed + 1)); }

# --- images: show and restore's verification ----------------------------
"$MKIMAGE" "$T/img" mem files || { echo "FAIL: mkimage"; failed=$((failed + 1)); }
expect 0 '"type": *"crf.core.Inventory"' "$CRF" show "$T/img"
python3 -m json.tool "$T/out" >/dev/null || { echo "FAIL: show printed invalid JSON"; failed=$((failed + 1)); }
expect 0 '"kind": *"blob"' "$CRF" show "$T/img" pages-1.img
expect 1 'core-1.img' "$CRF" restore -D "$T/img" -v
grep -q 'every image verified' "$T/err" || { echo "FAIL: restore did not verify"; failed=$((failed + 1)); }
expect 2 "crf dump: unknown option" "$CRF" dump --no-such -t 1 -D "$T/img"

# A flipped bit anywhere is reported with the file and the offset.
cp -r "$T/img" "$T/flip"
python3 - "$T/flip/pages-1.img" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
b[len(b) // 2] ^= 0x10
open(p, 'wb').write(b)
PY
expect 1 'pages-1.img.*offset [0-9]+' "$CRF" restore -D "$T/flip" && one_error
expect 1 'pages-1.img.*offset [0-9]+' "$CRF" show "$T/flip" pages-1.img
cp -r "$T/img" "$T/trunc"
truncate -s -5 "$T/trunc/test-records.img"
expect 1 'test-records.img.*offset [0-9]+' "$CRF" restore -D "$T/trunc" && one_error
cp -r "$T/img" "$T/noinv"
rm "$T/noinv/inventory.img"
expect 1 "no inventory.img: not a complete dump" "$CRF" restore -D "$T/noinv" && one_error
cp -r "$T/img" "$T/missing"
rm "$T/missing/test-records.img"
expect 1 "image test-records.img listed in the inventory is missing" "$CRF" restore -D "$T/missing"
"$MKIMAGE" "$T/img2" mem gamma
expect 1 "written with plugin 'gamma' 0.1.0, which is not configured here" "$CRF" restore -D "$T/img2" && one_error
"$MKIMAGE" "$T/img3" mem:7
expect 1 "written with plugin 'mem' of ABI 7\.0" "$CRF" restore -D "$T/img3" && one_error
expect 1 "written with plugin 'files' 0.1.0, which is disabled by --disable" \
	"$CRF" restore -D "$T/img" --disable files,net,devices
# The restore's plugin set is the dump's: one whose version cannot read it,
# or whose object cannot be loaded, is refused up front, naming both; a
# plugin the dump did not use is not even loaded.
"$MKIMAGE" "$T/img4" mem files:1:0.2.0
expect 1 "written with plugin 'files' 0\.2\.0; .*crf-files\.so is version 0\.1\.0, which cannot read it" \
	"$CRF" restore -D "$T/img4" && one_error
printf '[mem]\nso = crf-no-such-plugin.so\n[net]\nso = crf-no-such-plugin.so\n' >"$T/broken.conf"
expect 1 "written with plugin 'mem' 0\.1\.0, which cannot be used here: crf-no-such-plugin\.so not found" \
	"$CRF" restore -D "$T/img" --config "$T/broken.conf" && one_error
"$MKIMAGE" "$T/img5" files
printf '[net]\nso = crf-no-such-plugin.so\n' >"$T/broken-net.conf"
expect 1 'core-1.img' "$CRF" restore -D "$T/img5" --config "$T/broken-net.conf" && one_error
expect 1 "no-such-dir" "$CRF" restore -D "$T/no-such-dir" && one_error
expect 1 "no-such-dir" "$CRF" show "$T/no-such-dir"

# Not root: dump and restore say so once, instead of blaming kernel features.
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
expect 1 "crf dump needs root \(CAP_SYS_ADMIN and CAP_SYS_PTRACE\); this process lacks CAP_SYS_ADMIN, CAP_SYS_PTRACE" \
	"${nobody[@]}" "$CRF" dump -t $$ -D "$T/nobody" && one_error
[[ ! -e $T/nobody ]] || { echo "FAIL: a refused dump made $T/nobody"; failed=$((failed + 1)); }
expect 1 "crf restore needs root \(CAP_SYS_ADMIN and CAP_SYS_PTRACE\)" \
	"${nobody[@]}" "$CRF" restore -D "$T/img" && one_error
expect 1 "warning: not run as root \(lacks CAP_SYS_ADMIN, CAP_SYS_PTRACE\)" "${nobody[@]}" "$CRF" check

echo "cli: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
