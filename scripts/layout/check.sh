#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The core's folders stand on those below them only (docs/core-layout.md):
#
#   cli/ -> dump/, restore/ -> task/ -> host/, proc/ -> lib/
#
# dump/ and restore/ stand side by side: neither includes the other's
# headers; task/, host/ and proc/ include nothing from above them.  Prints
# each include that breaks this and exits 1; run by `meson test core-layout`.
set -euo pipefail
core=$(cd "$(dirname "$0")/../../core" && pwd)

# Which folders a folder may include from, besides itself.
declare -A MAY=(
	[cli]="dump restore task host proc"
	[dump]="task host proc"
	[restore]="task host proc"
	[task]="host proc"
	[host]="proc"
	[proc]="host"
)
declare -A HOME_OF
for d in "${!MAY[@]}"; do
	for h in "$core/$d"/*.h; do
		[ -e "$h" ] && HOME_OF[$(basename "$h")]=$d
	done
done

bad=0
for d in "${!MAY[@]}"; do
	for f in "$core/$d"/*.[ch]; do
		while read -r inc; do
			home=${HOME_OF[$inc]:-}
			[ -z "$home" ] || [ "$home" = "$d" ] && continue
			case " ${MAY[$d]} " in
			*" $home "*) ;;
			*)
				echo "core/$d/$(basename "$f"): includes $home/$inc"
				bad=1
				;;
			esac
		done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
	done
done
exit $bad
