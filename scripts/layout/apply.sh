#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The core's layout by phase (docs/core-layout.md), as a script the lead can
# rerun after merging a branch written against the flat core/:
#
#   scripts/layout/apply.sh moves   git mv every core/OLD of moves.txt to core/NEW
#   scripts/layout/apply.sh paths   rewrite references to the old paths (docs,
#                                   scripts, comments, #include of renamed headers)
#   scripts/layout/apply.sh names   the function renames of names.sed, over the C tree
#
# Each step is idempotent: a second run changes nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=scripts/layout
map() { grep -v '^#' "$here/moves.txt" | grep -v '^$'; }

# Text files the path and name rewrites may touch: tracked, not this folder.
files() { git ls-files -- "$@" | grep -v "^$here/" | while read -r f; do
	[ -f "$f" ] && grep -Iq . "$f" && echo "$f"; done; }

case "${1:-}" in
moves)
	map | while read -r old new; do
		if [ -e "core/$old" ] && [ ! -e "core/$new" ]; then
			mkdir -p "$(dirname "core/$new")"
			git mv "core/$old" "core/$new"
		fi
	done
	;;
paths)
	script=$(mktemp)
	trap 'rm -f "$script"' EXIT
	map | while read -r old new; do
		o=${old//./\\.}
		# core/OLD anywhere (docs, mutants.sh, comments).
		echo "s#(^|[^-a-zA-Z0-9_/.])core/$o\\b#\\1core/$new#g"
		# A file whose name changed: its bare name too (comments, #include).
		if [ "$(basename "$old")" != "$(basename "$new")" ]; then
			echo "s#(^|[^-a-zA-Z0-9_/.])$o\\b#\\1$(basename "$new")#g"
		fi
	done >"$script"
	files '*.c' '*.h' '*.md' '*.sh' '*.py' | xargs sed -E -i -f "$script"
	;;
names)
	files '*.c' '*.h' '*.S' '*.md' '*.sym' '*.sh' | xargs sed -E -i -f "$here/names.sed"
	;;
*)
	echo "usage: $0 moves|paths|names" >&2
	exit 2
	;;
esac
