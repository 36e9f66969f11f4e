#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Install dependencies, build crf, and show what it finds on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[[ -d build ]] || meson setup build -Dwerror=true >/dev/null
ninja -C build >/dev/null
echo "== crf plugins: the plugin graph, both orders"
build/core/crf plugins
echo
echo "== crf check: the kernel features each plugin needs"
build/core/crf check
