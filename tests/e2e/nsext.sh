#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# An external network namespace (plugins/ns/external.c): one made by
# `ip netns add` (held by its mount under /run/netns, outside the tree)
# that wl-nsjoin net external joins.  Without --external the dump is refused,
# naming the mount; with crf dump --external net[INODE]:KEY and crf restore
# --inherit-fd fd[3]:KEY (fd 3 opened on the namespace by this script's crf
# wrapper, for the restore only) the restored processes are in that very
# namespace, twice over (the second dump also proves fd 3 did not stay in
# the tree); a restore without --inherit-fd is refused before anything is
# forked.
#
# usage: nsext.sh HARNESS CRF WL_NSJOIN IMAGE_DIR
set -u
H=$1 CRF=$2 WL=$3 DIR=$4
NS=crf-nsext-$$
T=$(mktemp -d /tmp/crf-nsext-XXXXXX)

cleanup() {
	ip netns del "$NS" 2>/dev/null
	rm -rf "$T" "$DIR"
}
trap cleanup EXIT

command -v ip >/dev/null || { echo "SKIP: no ip(8)"; exit 77; }
ip netns add "$NS" || { echo "FAIL: ip netns add $NS"; exit 1; }
INO=$(stat -L -c %i "/run/netns/$NS") || exit 1

# The wrapper: crf with the options for this namespace.
cat >"$T/crf" <<EOS
#!/bin/bash
cmd=\$1
shift
case \$cmd in
dump) exec "$CRF" dump "\$@" --external "net[$INO]:extnet" ;;
restore) [[ \${NSEXT_NO_FD:-} ]] && exec "$CRF" restore "\$@"
	exec 3<"/run/netns/$NS"
	exec "$CRF" restore "\$@" --inherit-fd "fd[3]:extnet" ;;
*) exec "$CRF" "\$cmd" "\$@" ;;
esac
EOS
chmod +x "$T/crf"

"$H" --timeout 60 --crf "$CRF" --dir "$DIR" --name nsext-refused --expect-dump-fail \
	"pid [0-9]+: net namespace net:\\[$INO\\] is also held by the mount at /run/netns/$NS" \
	-- "$WL" net external "/run/netns/$NS" || { echo "FAIL: not refused without --external"; exit 1; }
rm -rf "$DIR"
"$H" --timeout 60 --crf "$T/crf" --dir "$DIR" --name nsext --mode twice \
	-- "$WL" net external "/run/netns/$NS" || { echo "FAIL: --external / --inherit-fd"; exit 1; }
rm -rf "$DIR"
NSEXT_NO_FD=1 "$H" --timeout 60 --crf "$T/crf" --dir "$DIR" --name nsext-nofd --mode kill \
	--expect-restore-fail \
	"net namespace net:\\[$INO\\] is external \\(crf dump --external net\\[$INO\\]:extnet\\): give crf restore --inherit-fd fd\\[N\\]:extnet" \
	-- "$WL" net external "/run/netns/$NS" || { echo "FAIL: a restore without the fd"; exit 1; }
echo "PASS nsext"
