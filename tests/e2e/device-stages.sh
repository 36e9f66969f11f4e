#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The device stages (plugin ABI 1.5, docs/plugin-api.md "Device stages"),
# through the test plugins alpha and beta (dump-after alpha), which trace
# every hook with the state of its task, and old14, a plugin built against
# ABI 1.4, all next to the real plugins, on a tree of two sleeps:
#
#   a dump --leave-running: dump-prepare < dump-pause (the tree running,
#   untraced) < dump-frozen (per task, root first, the tree stopped and
#   traced) < dump-task < dump-task-data < dump-finish < dump-resume
#   (reverse dump order, the tree still stopped) < dump-cleanup; the tree
#   runs on;
#   a dump failing after the pause (beta's dump-task fails; a fault
#   injected once the parasite is out; crf asked to stop there): dump-undo
#   in reverse order, the tree still stopped, no dump-resume, and the tree
#   runs on unchanged; beta's dump-pause failing: only alpha's undo, the
#   tree was never frozen;
#   a killing dump (no undo, no resume) and its restore: restore-finish <
#   restore-resume (per task, each still waiting in its restorer for "go")
#   < restore-cleanup, and the tree runs again; a restore failing after
#   restore-resume: restore-undo, reverse restore order, nothing left;
#   old14 runs its 1.4 stages and none of the new ones.
#
# usage: device-stages.sh CRF TEST_PLUGIN_DIR IMAGE_DIR_BASE
set -u
# A child subreaper: the restored tree is reparented to this shell, which reaps it.
if [[ -z ${CRF_DEVICE_STAGES_REAPER:-} ]]; then
	export CRF_DEVICE_STAGES_REAPER=1
	exec python3 -c 'import ctypes, os, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
os.execv(sys.argv[1], sys.argv[1:])' "$0" "$@"
fi
CRF=$1 TPD=$2 BASE=$3
T=$(mktemp -d /tmp/crf-device-stages-XXXXXX)
passed=0 failed=0 root= kid=

cleanup() {
	[[ -n $kid ]] && kill -KILL "$kid" 2>/dev/null
	[[ -n $root ]] && kill -KILL "$root" 2>/dev/null
	rm -rf "$T" "$BASE".*
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	[[ -f $T/out ]] && sed 's/^/    | /' "$T/out" | tail -15
	failed=$((failed + 1))
}

ok() {
	passed=$((passed + 1))
}

cat >"$T/dev.conf" <<EOF
[alpha]
so = crf-test-alpha.so
trace = $T/trace
trace-state = yes
[beta]
so = crf-test-beta.so
trace = $T/trace
trace-state = yes
dump-after = alpha
[old14]
so = crf-test-old14.so
trace = $T/trace
dump-after = beta
restore-after = beta
EOF

# crf with the test plugins; extra --config files in $CONF.
CONF=()
crf() {
	"$CRF" "$@" --config "$T/dev.conf" "${CONF[@]}" --plugin-dir "$TPD"
}

# The traced hooks of the stages that matter here, as "PLUGIN STAGE PID[ STATE TRACER SYSCALL]".
stages() {
	grep -E ' (dump|restore)-[a-z-]+ ' "$T/trace" | grep -Ev ' restore-(task|session|premap) '
}

# "PLUGIN STAGE PID" of every line, one line: the order.
order() {
	stages | awk '{ printf "%s%s %s %s", (NR > 1 ? ", " : ""), $1, $2, $3 } END { print "" }'
}

expect_order() {
	local got
	got=$(order)
	if [[ $got != "$2" ]]; then
		fail "$1: the stages ran as
    got:  $got
    want: $2"
		return 1
	fi
}

# Every traced line of stage $2 (alpha's, beta's) says state $3 (a pattern) and tracer $4.
expect_state() {
	local bad
	bad=$(stages | awk -v st="$2" -v s="$3" -v tr="$4" '$2 == st && NF >= 6 && ($4 !~ "^(" s ")$" || $5 != tr)')
	if [[ -n $bad ]]; then
		fail "$1: $2 ran with the task in the wrong state (want $3, $4): $bad"
		return 1
	fi
	if ! stages | awk -v st="$2" '$2 == st && NF >= 6 { found = 1 } END { exit !found }'; then
		fail "$1: no $2 was traced"
		return 1
	fi
}

# The tree as it runs: PIDs, state class, tracer, masks.
snapshot() {
	local p st
	for p in $root $kid; do
		st=$(sed 's/.*) \(.\).*/\1/' "/proc/$p/stat" 2>/dev/null)
		[[ $st == [RSD] ]] && st=running
		echo "$p $st $(grep -E '^(TracerPid|SigBlk|SigIgn|SigCgt):' "/proc/$p/status" 2>/dev/null | tr '\n' ' ')"
	done
}

unchanged() {
	snapshot >"$T/now"
	if ! cmp -s "$T/before" "$T/now"; then
		fail "$1: the tree changed"
		diff "$T/before" "$T/now" | sed 's/^/    | /'
		return 1
	fi
}

start_tree() {
	local i
	setsid sh -c 'sleep 1000 & exec sleep 1001' </dev/null >/dev/null 2>&1 &
	root=$!
	for ((i = 0; i < 500; i++)); do
		kid=$(cat "/proc/$root/task/$root/children" 2>/dev/null)
		[[ -n $kid && $(cat "/proc/$root/comm") == sleep ]] && break
		sleep 0.01
	done
	kid=${kid% }
	[[ -n $kid ]] || { fail "the tree did not start"; exit 1; }
	snapshot >"$T/before"
}

# dump DESCRIPTION DIR [crf dump options...]: a dump that must fail, leaving the tree as it was.
failed_dump() {
	local what=$1 d=$2
	shift 2
	rm -f "$T/trace"
	crf dump -t "$root" -D "$d" "$@" >"$T/out" 2>&1 && { fail "$what: the dump succeeded"; return 1; }
	[[ -e $d ]] && { fail "$what: the failed dump left $d"; return 1; }
	return 0
}

F="alpha dump-frozen ROOT, beta dump-frozen ROOT, alpha dump-frozen KID, beta dump-frozen KID"
TASK="alpha dump-task ROOT, beta dump-task ROOT, old14 dump-task ROOT, alpha dump-task-data ROOT, beta dump-task-data ROOT, alpha dump-task KID, beta dump-task KID, old14 dump-task KID, alpha dump-task-data KID, beta dump-task-data KID"
PREP="alpha dump-prepare ROOT, beta dump-prepare ROOT, old14 dump-prepare ROOT, alpha dump-pause ROOT, beta dump-pause ROOT"
CLEAN="old14 dump-cleanup ROOT, beta dump-cleanup ROOT, alpha dump-cleanup ROOT"
want() {
	local s=$1
	s=${s//ROOT/$root}
	echo "${s//KID/$kid}"
}

start_tree

# 1. --leave-running: every stage in its place, dump-resume before the thaw.
rm -f "$T/trace"
CRF_FAULT=trace crf dump -t "$root" -D "$BASE.leave" --leave-running >"$T/out" 2>&1 ||
	fail "dump --leave-running"
expect_order "dump --leave-running" "$(want "$PREP, $F, $TASK, alpha dump-finish ROOT, beta dump-finish ROOT, old14 dump-finish ROOT, beta dump-resume ROOT, alpha dump-resume ROOT, $CLEAN")" && ok
expect_state "dump --leave-running" dump-pause '[RS]' untraced && ok
expect_state "dump --leave-running" dump-frozen t traced && ok
expect_state "dump --leave-running" dump-resume t traced && ok
unchanged "dump --leave-running" && ok
cured=$(sed -n 's/^crf fault point \([0-9]*\): cured$/\1/p' "$T/out" | head -1)
[[ -n $cured ]] || fail "no fault point 'cured' in the dump"
rm -rf "$BASE.leave"

# 2. A failure after the pause: undo in reverse order, the tree still stopped, then thawed.
UNDO="beta dump-undo ROOT, alpha dump-undo ROOT, $CLEAN"
printf '[beta]\nfail-stage = dump-task\n' >"$T/fail-task.conf"
CONF=(--config "$T/fail-task.conf")
if failed_dump "beta's dump-task failing" "$BASE.f1" --leave-running; then
	expect_order "beta's dump-task failing" "$(want "$PREP, $F, alpha dump-task ROOT, beta dump-task ROOT, $UNDO")" && ok
	expect_state "beta's dump-task failing" dump-undo t traced && ok
	unchanged "beta's dump-task failing" && ok
fi
CONF=()
for act in fail term; do
	what="dump with $act at the point 'cured' ($cured)"
	if [[ -n $cured ]] && CRF_FAULT=$act@$cured failed_dump "$what" "$BASE.f2"; then
		expect_order "$what" "$(want "$PREP, $F, alpha dump-task ROOT, beta dump-task ROOT, old14 dump-task ROOT, $UNDO")" && ok
		expect_state "$what" dump-undo t traced && ok
		unchanged "$what" && ok
	fi
done
printf '[beta]\nfail-stage = dump-pause\n' >"$T/fail-pause.conf"
CONF=(--config "$T/fail-pause.conf")
if failed_dump "beta's dump-pause failing" "$BASE.f3"; then
	expect_order "beta's dump-pause failing" "$(want "alpha dump-prepare ROOT, beta dump-prepare ROOT, old14 dump-prepare ROOT, alpha dump-pause ROOT, beta dump-pause ROOT, alpha dump-undo ROOT, $CLEAN")" && ok
	expect_state "beta's dump-pause failing" dump-undo '[RS]' untraced && ok
	unchanged "beta's dump-pause failing" && ok
fi
CONF=()

# 3. A killing dump: no undo, no resume; its restore resumes the devices before the tree runs.
rm -f "$T/trace"
crf dump -t "$root" -D "$BASE.kill" >"$T/out" 2>&1 || { fail "killing dump"; exit 1; }
expect_order "killing dump" "$(want "$PREP, $F, $TASK, alpha dump-finish ROOT, beta dump-finish ROOT, old14 dump-finish ROOT, $CLEAN")" && ok
for ((i = 0; i < 500; i++)); do [[ -e /proc/$root ]] || break; sleep 0.01; done
[[ -e /proc/$root ]] && fail "the killing dump left pid $root"

rm -f "$T/trace"
CRF_FAULT=trace crf restore -D "$BASE.kill" -d >"$T/out" 2>&1 || { fail "restore"; exit 1; }
expect_order "restore" "$(want "alpha restore-prepare ROOT, beta restore-prepare ROOT, old14 restore-prepare ROOT, alpha restore-finish ROOT, beta restore-finish ROOT, old14 restore-finish ROOT, alpha restore-resume ROOT, beta restore-resume ROOT, alpha restore-resume KID, beta restore-resume KID, old14 restore-cleanup ROOT, beta restore-cleanup ROOT, alpha restore-cleanup ROOT")" && ok
# In its restorer, waiting for "go" in read(): none of the program's code ran yet.
expect_state "restore" restore-resume S untraced && ok
stages | awk '$2 == "restore-resume" && $6 != "read" { bad = 1 } END { exit bad }' ||
	fail "restore-resume ran when a task no longer waited in its restorer: $(stages | grep restore-resume)"
for p in $root $kid; do
	[[ -e /proc/$p && $(cat "/proc/$p/comm") == sleep ]] || fail "pid $p did not come back"
done
unchanged "the restored tree" && ok
releasing=$(sed -n 's/^crf fault point \([0-9]*\): releasing the tree$/\1/p' "$T/out" | head -1)

# 4. A restore failing after restore-resume: restore-undo, reverse restore order, nothing left.
kill -KILL "$kid" "$root" 2>/dev/null
for ((i = 0; i < 500; i++)); do [[ -e /proc/$root || -e /proc/$kid ]] || break; sleep 0.01; done
rm -f "$T/trace"
if [[ -z $releasing ]]; then
	fail "no fault point 'releasing the tree' in the restore"
elif CRF_FAULT=fail@$releasing crf restore -D "$BASE.kill" -d >"$T/out" 2>&1; then
	fail "the restore failing at 'releasing the tree' succeeded"
else
	expect_order "restore failing after restore-resume" "$(want "alpha restore-prepare ROOT, beta restore-prepare ROOT, old14 restore-prepare ROOT, alpha restore-finish ROOT, beta restore-finish ROOT, old14 restore-finish ROOT, alpha restore-resume ROOT, beta restore-resume ROOT, alpha restore-resume KID, beta restore-resume KID, beta restore-undo ROOT, alpha restore-undo ROOT, old14 restore-cleanup ROOT, beta restore-cleanup ROOT, alpha restore-cleanup ROOT")" && ok
	expect_state "restore failing after restore-resume" restore-undo S untraced && ok
	for ((i = 0; i < 500; i++)); do [[ -e /proc/$root || -e /proc/$kid ]] || break; sleep 0.01; done
	[[ -e /proc/$root || -e /proc/$kid ]] && fail "the failed restore left a process"
fi
root= kid=
echo "device-stages: $passed passed, $failed failed"
((failed == 0))
