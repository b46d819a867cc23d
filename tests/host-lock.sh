#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# lib.sh's host_lock, which the tests that use what the whole host shares
# call so that they run one at a time under make -j, proven on a lock file
# and a bench lock directory of its own in $TMP (never the host's): two
# scripts that take the lock at once run one after the other; one that
# cannot get it within HT_TEST_LOCK_WAIT fails with exit 99 and says why;
# and while a conntrack bench's lock directory exists the holder waits.
. "$(dirname "$0")/lib.sh"
if ! command -v flock >/dev/null 2>&1; then
	echo "# SKIP flock(1) is not installed (util-linux)"
	exit 77
fi
HT_TEST_LOCK=$TMP/lock HT_BENCH_LOCK=$TMP/bench.lock LOG=$TMP/log
export HT_TESTS_DIR HT_FIXTURES_DIR="$FIXTURES" HT_TEST_LOCK HT_BENCH_LOCK LOG
# holder.sh NAME SECONDS: a test that takes the lock and logs when it ran.
cat >"$TMP/holder.sh" <<'EOT'
. "$HT_TESTS_DIR/lib.sh"
host_lock "holder $1"
echo "start $1 $(date +%s.%N)" >>"$LOG"
sleep "$2"
echo "end $1 $(date +%s.%N)" >>"$LOG"
EOT
at() { sed -n "s/^$1 $2 //p" "$LOG"; }
# held: waits (at most 10 s) until some process holds the lock.
held() {
	for _ in $(seq 100); do
		flock -n "$HT_TEST_LOCK" true || return 0
		sleep 0.1
	done
	return 1
}
before() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && a <= b) }'; }

# Two at once: one starts when the other has ended.
sh "$TMP/holder.sh" a 0.5 >"$TMP/a.out" 2>&1 &
pa=$!
sh "$TMP/holder.sh" b 0.5 >"$TMP/b.out" 2>&1 &
pb=$!
wait "$pa"
ra=$?
wait "$pb"
expect_eq "two holders exit 0" "0 0" "$ra $?"
if before "$(at end a)" "$(at start b)" || before "$(at end b)" "$(at start a)"; then
	ok "two holders ran one after the other"
else
	not_ok "two holders ran one after the other" "$(cat "$LOG")"
fi
expect_contains "a holder says what it holds" "held after" "$(cat "$TMP/a.out")"

# Held elsewhere for longer than HT_TEST_LOCK_WAIT: exit 99, with the reason.
flock "$HT_TEST_LOCK" sleep 3 &
pf=$!
held || not_ok "the lock is taken by flock(1)"
HT_TEST_LOCK_WAIT=1 sh "$TMP/holder.sh" c 0 >"$TMP/c.out" 2>&1
expect_eq "a holder that waited too long exits 99" 99 $?
expect_contains "and says so" "still held after 1 s (holder c)" "$(cat "$TMP/c.out")"
expect_eq "it never ran" "" "$(at start c)"
wait "$pf"

# A bench's lock directory: the holder waits until it is gone.
mkdir "$HT_BENCH_LOCK"
sh "$TMP/holder.sh" d 0 >"$TMP/d.out" 2>&1 &
pd=$!
held || not_ok "the holder takes the lock first"
sleep 1.5
expect_eq "a bench's lock: the holder waits" "" "$(at start d)"
gone=$(date +%s.%N)
rmdir "$HT_BENCH_LOCK"
wait "$pd"
expect_eq "a bench's lock gone: the holder exits 0" 0 $?
if before "$gone" "$(at start d)"; then ok "it ran after the bench's lock went"
else not_ok "it ran after the bench's lock went" "gone $gone, $(cat "$LOG")"; fi

finish
