#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# crf with a hard RLIMIT_MSGQUEUE (4096 bytes) below its tree's (the
# kernel's default, 819200), for a test of the dump's refusal of a task in
# a user namespace whose hard limit the restorer could not set there.
# $CRF_REAL is the crf to run.
exec prlimit --msgqueue=4096:4096 "$CRF_REAL" "$@"
