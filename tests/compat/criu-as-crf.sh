#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# criu-as-crf.sh: the e2e harness's --crf for the compat-criu-* tests.  The
# harness runs "crf dump -t PID -D DIR [--leave-running]" and "crf restore
# -D DIR -d"; this runs the same through the criu command line (CRF_CRIU:
# crf's criu symlink), with the options a person or a runtime gives CRIU:
# -o LOG -v4 in a work directory (-W), --display-stats, --pidfile.
set -euo pipefail
criu=${CRF_CRIU:?CRF_CRIU names the criu symlink}
cmd=$1
shift
args=() dir=
while (($#)); do
	case $1 in
	-t | -D)
		[[ $1 == -D ]] && dir=$2
		args+=("$1" "$2")
		shift 2
		;;
	*)
		args+=("$1")
		shift
		;;
	esac
done
[[ -n $dir ]] || {
	echo "criu-as-crf: no -D" >&2
	exit 2
}
# The logs and the pid file in the image directory, which the harness removes
# (synced, as the harness wants every file there after a dump).
case $cmd in
dump)
	st=0
	"$criu" dump "${args[@]}" -W "$dir" -o criu-dump.log -v4 --display-stats || st=$?
	[[ ! -e $dir/criu-dump.log ]] || sync "$dir/criu-dump.log"
	exit $st
	;;
restore)
	pidfile=$dir/criu-restore.pid
	rm -f "$pidfile"
	"$criu" restore "${args[@]}" -W "$dir" -o criu-restore.log -v4 --pidfile "$pidfile"
	# --pidfile: the restored root's PID, as the harness will check it
	[[ -s $pidfile ]] && [[ $(cat "$pidfile") =~ ^[0-9]+$ ]] || {
		echo "criu-as-crf: --pidfile $pidfile not written" >&2
		exit 1
	}
	;;
*)
	echo "criu-as-crf: $cmd: not a command of the harness" >&2
	exit 2
	;;
esac
