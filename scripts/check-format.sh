#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Check that every C source and header of the tree is as clang-format
# (.clang-format at the top) writes it; with --fix, rewrite them so.
# The files are git's tracked ones, or every *.c/*.h outside build
# directories when the tree is not a git checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
fix=false
[[ ${1-} == --fix ]] && fix=true
command -v clang-format >/dev/null || {
	echo "check-format: clang-format is not installed (scripts/install-deps.sh)" >&2
	exit 1
}
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mapfile -t files < <(git ls-files '*.c' '*.h')
else
	mapfile -t files < <(find core plugins parasite tests bench -name '*.[ch]' | sort)
fi
if $fix; then
	clang-format -i "${files[@]}"
	exit 0
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! clang-format --dry-run --Werror "${files[@]}" 2>"$log"; then
	sed -n 's/^\([^ :]*\):[0-9]*:[0-9]*: error: .*/\1/p' "$log" | sort -u >&2
	echo "check-format: these files differ from clang-format's layout;" \
		"scripts/check-format.sh --fix rewrites them" >&2
	exit 1
fi
echo "check-format: ${#files[@]} files as clang-format writes them"
