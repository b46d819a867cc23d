# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers for hosttune's integration tests (sourced, not run).
# The test harness exports HOSTTUNE (the built binary), HT_TESTS_DIR,
# HT_RULES_DIR and HT_FIXTURES_DIR; run by hand as:
# HOSTTUNE=src/hosttune sh tests/NAME.sh
set -u
# What the tests assert does not depend on the caller's environment: files
# made as Debian makes them for root (a hardened umask of 027 or 077 hides
# fixture trees from nobody and facts files' lines from messages), no
# NO_COLOR inherited (tests/terminal.sh sets it where it tests it), and a
# locale every Debian has (a LANG or LC_ALL naming one the machine lacks
# makes perl and bash print warnings into the output under test).
umask 022
unset NO_COLOR
LC_ALL=C.UTF-8
export LC_ALL

: "${HT_TESTS_DIR:=$(cd "$(dirname "$0")" && pwd)}"
: "${HT_RULES_DIR:=$HT_TESTS_DIR/../rules}"
: "${HOSTTUNE:=$HT_TESTS_DIR/../src/hosttune}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hosttune-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# The fixtures as the tests read them: tests/fixtures copied with its links
# made and every file owner-writable (tests/make-fixtures.sh; make check makes
# one copy, BUILDDIR/tests/fixtures-built, and a test run by hand its own).
# Tests read them and copy what they change into $TMP.
if [ -n "${HT_FIXTURES_DIR:-}" ]; then
	FIXTURES=$HT_FIXTURES_DIR
else
	FIXTURES=$TMP/fixtures
	sh "$HT_TESTS_DIR/make-fixtures.sh" "$HT_TESTS_DIR/fixtures" "$FIXTURES" || exit 99
fi
passed=0
failed=0

# host_lock WHAT: this test uses something the whole host shares (WHAT names
# it, for the log), so it runs alone among the tests that call host_lock:
# in this build tree, in any other (a worktree, make distcheck's) and under
# make -j. It holds flock(1) on $HT_TEST_LOCK (default
# /run/lock/hosttune-tests.lock, made if missing; in ${TMPDIR:-/tmp} when
# /run/lock is not there) from the call to its exit, through descriptor 7,
# which the processes it starts inherit; they all end with the test. Then,
# holding it, it waits for $HT_BENCH_LOCK (default
# /run/hosttune-conntrack-storm.lock, the directory bench/conntrack-storm
# --lower-global-max and bench/watch-rate hold while the global
# nf_conntrack_max may be lowered) to go. Each wait lasts at most
# $HT_TEST_LOCK_WAIT seconds (default 1800), after which the test fails
# (exit 99). Without flock(1) it runs unlocked and says so.
# The tests that call it, and why: bench-storm.sh (named network
# namespaces, veth pairs in the host's namespace, the global conntrack
# sysctls), netns-apply.sh (the global nf_conntrack_max and the host's
# TIME_WAIT, hosttune's own lock on /), metrics.sh (a port of the host's
# 127.0.0.1), cpu-measure.sh (every CPU kept busy, cipher speeds) and
# netns-watch.sh (connection rates against the clock, the global
# nf_conntrack_max).
host_lock() {
	if ! command -v flock >/dev/null 2>&1; then
		echo "# host lock: no flock(1), running unlocked ($1)"
		return 0
	fi
	if [ -z "${HT_TEST_LOCK:-}" ]; then
		if [ -d /run/lock ]; then
			HT_TEST_LOCK=/run/lock/hosttune-tests.lock
		else
			HT_TEST_LOCK=${TMPDIR:-/tmp}/hosttune-tests.lock
		fi
	fi
	: "${HT_BENCH_LOCK:=/run/hosttune-conntrack-storm.lock}"
	: "${HT_TEST_LOCK_WAIT:=1800}"
	[ -e "$HT_TEST_LOCK" ] || : >>"$HT_TEST_LOCK" 2>/dev/null
	if [ ! -r "$HT_TEST_LOCK" ]; then
		echo "# host lock: cannot read $HT_TEST_LOCK ($1)"
		exit 99
	fi
	exec 7<"$HT_TEST_LOCK"
	lock_t0=$(date +%s)
	if ! flock -w "$HT_TEST_LOCK_WAIT" 7; then
		echo "# host lock: $HT_TEST_LOCK still held after $HT_TEST_LOCK_WAIT s ($1)"
		exit 99
	fi
	while [ -d "$HT_BENCH_LOCK" ]; do
		if [ $(($(date +%s) - lock_t0)) -ge "$HT_TEST_LOCK_WAIT" ]; then
			echo "# host lock: $HT_BENCH_LOCK (a conntrack bench) still there after $HT_TEST_LOCK_WAIT s ($1)"
			exit 99
		fi
		sleep 1
	done
	echo "# host lock $HT_TEST_LOCK held after $(($(date +%s) - lock_t0)) s: $1"
}

# name_lock NAME: this test starts processes named NAME and reads hosttune's
# verdict on them, which is by name over the whole PID namespace: a NAME of
# another test (make -j, in another network namespace) would be judged too.
# It runs alone among the tests that call name_lock NAME (host_lock on a
# lock file of NAME's own, beside the host lock; the host-wide tests go on).
name_lock() {
	if [ -d /run/lock ]; then
		HT_TEST_LOCK=/run/lock/hosttune-tests-$1.lock
	else
		HT_TEST_LOCK=${TMPDIR:-/tmp}/hosttune-tests-$1.lock
	fi
	host_lock "processes named $1, judged by name host-wide"
}

# need_strace: skips the test (exit 77) unless strace(1) is installed and
# may trace here; LeakSanitizer cannot run under ptrace, so leak checks are
# off for what it starts.
need_strace() {
	if ! command -v strace >/dev/null; then
		echo "# SKIP: strace is not installed"
		exit 77
	fi
	if ! strace -f -qq -o /dev/null -e trace=none true 2>/dev/null; then
		echo "# SKIP: ptrace is not permitted here (strace cannot trace)"
		exit 77
	fi
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
}

# tree_sums DIR: every directory, file and symlink of DIR with modes and
# content hashes, sorted: two trees are the same when these are. One line
# each: "link PATH -> TARGET", "dir MODE PATH", "file MODE SHA256 PATH".
# Two find(1) runs and one sha256sum(1) for the whole tree, not three
# programs a file (the Garage VM tree, 31 entries: 2.5 s on a loaded
# 2-CPU machine, now 0.3 s).
tree_sums() {
	(cd "$1" && {
		find . ! -type d ! -type l -exec sha256sum {} + | sed 's/^/h /'
		find . -printf '%y %m %p\t%l\n'
	} | awk '
		$1 == "h" { hash[substr($0, 69)] = $2; next }
		{
			t = $1; m = $2; p = substr($0, length(t) + length(m) + 3)
			l = p; sub(/\t.*/, "", p); sub(/^[^\t]*\t/, "", l)
			if (t == "l") print p "\tlink " p " -> " l
			else if (t == "d") print p "\tdir " m " " p
			else print p "\tfile " m " " hash[p] " " p
		}' | LC_ALL=C sort | cut -f2-)
}

ht() {
	"$HOSTTUNE" --rules "$HT_RULES_DIR" "$@"
}

ok() {
	passed=$((passed + 1))
	printf 'ok %d - %s\n' "$((passed + failed))" "$1"
}

not_ok() {
	failed=$((failed + 1))
	printf 'not ok %d - %s\n' "$((passed + failed))" "$1"
	shift
	for l in "$@"; do printf '#   %s\n' "$l"; done
}

# expect_eq DESCRIPTION EXPECTED ACTUAL
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected: $2" "got:      $3"; fi
}

# expect_match DESCRIPTION FIXED-STRING TEXT: TEXT contains the string
expect_contains() {
	case "$3" in
	*"$2"*) ok "$1" ;;
	*) not_ok "$1" "expected to contain: $2" "in: $(printf '%s' "$3" | head -c 2000)" ;;
	esac
}

# jget FILE JQ-FILTER: raw jq output (numbers as JSON prints them)
jget() {
	jq -r "$2" "$1"
}

finish() {
	printf '%d passed, %d failed\n' "$passed" "$failed"
	[ "$failed" -eq 0 ]
}

# facts_file PATH: writes a facts file from "NAME = VALUE" lines on stdin
# vary BASE OUT NAME=VALUE...: the facts file BASE with each NAME's line
# replaced by "NAME = VALUE" ("-" as VALUE drops it), written to OUT.
# One awk run, leaving what a grep -v "^NAME = " and an append for each
# NAME=VALUE in turn would: BASE's lines that no NAME's pattern matches, then
# each "NAME = VALUE" that no later NAME's pattern matches.
vary() {
	base=$1 out=$2
	shift 2
	awk '
		BEGIN {
			for (i = 1; i < ARGC; i++) {
				if (ARGV[i] == "--") { start = i + 1; break }
			}
			for (i = start; i < ARGC; i++) {
				kv = ARGV[i]; n = index(kv, "=")
				name[i] = n ? substr(kv, 1, n - 1) : kv
				value[i] = n ? substr(kv, n + 1) : kv
				# grep(1)'"'"'s basic regular expression as awk'"'"'s extended one
				re = name[i]; gsub(/[+?|(){}]/, "\\\\&", re)
				pat[i] = "^" re " = "
				ARGV[i] = ""
			}
			ARGV[start - 1] = ""; end = ARGC
		}
		{
			for (i = start; i < end; i++) if ($0 ~ pat[i]) next
			print
		}
		END {
			for (j = start; j < end; j++) {
				if (value[j] == "-") continue
				line = name[j] " = " value[j]
				for (i = j + 1; i < end; i++) if (line ~ pat[i]) break
				if (i == end) print line
			}
		}' "$base" -- "$@" >"$out.tmp" && mv "$out.tmp" "$out"
}

facts_file() {
	{ echo "# hosttune facts 1"; cat; } >"$1"
}

# netns_tree DIR: a --root tree whose /proc/self and PID 1 are in the
# initial network namespace, 4026531840 (the namespace hosttune leaves out).
netns_tree() {
	mkdir -p "$1/proc/sys/kernel" "$1/proc/self/ns" "$1/proc/1/ns"
	printf '6.1.0-13-amd64\n' >"$1/proc/sys/kernel/osrelease"
	ln -s 'net:[4026531840]' "$1/proc/self/ns/net"
	ln -s 'net:[4026531840]' "$1/proc/1/ns/net"
}

# netns_facts INO PID COMM CGROUP MANAGER: the lines of a facts file for a
# host whose one network namespace other than its own is INO, its lowest
# PID a process COMM in CGROUP made by MANAGER (3 processes in it).
netns_facts() {
	cat <<EOT
netns.initial = true from mode of /proc/sys/net/netfilter/nf_conntrack_max
netns.list = "$1" from /proc/PID/ns/net of every process
netns.skipped = 0 processes from /proc/PID/ns/net
netns.$1.pid = $2 from /proc/PID/ns/net
netns.$1.process = "$3" from /proc/$2/comm
netns.$1.processes = 3 processes from /proc/PID/ns/net
netns.$1.cgroup = "$4" from /proc/$2/cgroup
netns.$1.manager = "$5" from /proc/$2/cgroup
EOT
}

# ct_ruleset FILE: an nftables ruleset with a ct expression on input and
# output, so that loopback traffic in a namespace goes through conntrack (a
# ct expression registers conntrack's hooks in that namespace).
ct_ruleset() {
	cat >"$1" <<'EOT'
table inet hosttune_test {
	chain in { type filter hook input priority 0; ct state new,established accept; }
	chain out { type filter hook output priority 0; ct state new,established accept; }
}
EOT
}
