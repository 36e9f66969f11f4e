#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# criu-cli.sh CRIU: crf's criu command line outside dump/restore (those run
# through the harness, criu-as-crf.sh): --version, check, and options crf
# does not honour refused by name with exit status 2, touching nothing.
set -uo pipefail
criu=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
expect() { # expect STATUS REGEX CMD...: its status and output
	local want=$1 re=$2 out st
	shift 2
	out=$("$@" 2>&1)
	st=$?
	if [[ $st -ne $want ]] || ! grep -Eq -- "$re" <<<"$out"; then
		echo "FAIL: $*: status $st (want $want), output: $out"
		fails=$((fails + 1))
	else
		echo "ok: $* -> $st: $(grep -E -m1 -- "$re" <<<"$out")"
	fi
}
expect 0 '^Version: 3\.17\.1$' "$criu" --version
expect 0 '^Looks good\.$' "$criu" check
expect 2 'option --ext-unix-sk refused' "$criu" dump -t 1 -D "$tmp/img" --ext-unix-sk
expect 2 'option --pidfile refused' "$criu" dump -t 1 -D "$tmp/img" --pidfile "$tmp/p"
expect 2 'option --manage-cgroups=ignore refused' "$criu" restore -D "$tmp/img" \
	--manage-cgroups=ignore
expect 2 'is not one crf provides' "$criu" dump -t 1 -D "$tmp/img" --lazy-pages
expect 2 "command 'page-server' is not one crf provides" "$criu" page-server
expect 2 'needs -D DIR' "$criu" restore -d
[[ ! -e $tmp/img ]] || {
	echo "FAIL: a refused command made $tmp/img"
	fails=$((fails + 1))
}
exit $((fails ? 1 : 0))
