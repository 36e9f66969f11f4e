#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# crf as a user logged in elsewhere would run it without the right to
# change a loginuid: with a loginuid of its own (1) and without
# CAP_AUDIT_CONTROL, for a test of the restore's refusal.  $CRF_REAL is the
# crf to run.  Writing /proc/self/loginuid from the shell sets the shell's
# (an unset one takes no privilege); setpriv then drops the capability from
# the bounding set, which root's effective set follows at exec.
set -e
echo 1 >/proc/self/loginuid
exec setpriv --bounding-set=-audit_control --inh-caps=-audit_control "$CRF_REAL" "$@"
