#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Out of memory, on every command: tests/failmalloc.so (LD_PRELOAD) makes
# the Nth memory allocation of a run and every later one fail, as memory
# that has run out for good. For each command, in text and in JSON, a clean
# run counts its allocations (K); then runs fail from N = 1 to 12 and at 30
# more points up to K (OOM_POINTS). Each run either
# - exits 3 with the one line "hosttune: out of memory" on stderr (apply and
#   revert: their line that says what became of the tree, ending in "out of
#   memory"; exit 5 when they are complete and the report could not be
#   made), and with --format json exactly one JSON document on stdout, the
#   error object of that line and exit status; or
# - ran out of nothing that mattered: the clean run's exit status, stdout
#   (the metrics' timestamp and the facts' time aside) and stderr.
# Every command has runs of the first kind, but a usage error in JSON, which
# needs no memory to say so. OOM_ONLY='revert*' (a pattern of the names
# below) narrows a manual run.
# apply and revert run on fresh copies of a --root tree, and the tree after
# the run must be what its line says: the original one after an apply that
# failed (rolled back, or nothing changed), the applied one after a revert
# that changed nothing; after "could not roll everything back" or "revert
# incomplete", a clean revert returns the original tree.
# Some outcomes come from where hosttune's CLI cannot mend them, and are
# counted and shown ("#   known, ...") rather than failed:
# - persist/apply.c judges the state file with what memory it had: a state
#   file it could not parse or check for want of it is refused, "nothing was
#   changed" (exit 2, the tree unchanged);
# - persist/apply.c leaves the reasons of a rollback that ran out empty, and
#   may leave a temp name (.NAME.hosttune-XXXXXX) after "every change rolled
#   back" without saying so (the next apply or revert removes it);
# - a crash in persist/apply.c, which hands json-c an object memory did not
#   make (json-c aborts), or in json-c 0.16's parser, which crashes when a
#   key's strdup() fails (json-c issue 857, fixed in 0.18). The shim writes
#   the crash's stack; addr2line(1) names hosttune's frames in it.
# Any other crash fails.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
[ -n "${TMP:-}" ] && [ -d "$TMP" ] || exit 99

SHIM=${HT_FAILMALLOC:-${HT_BUILD_TESTS_DIR:+$HT_BUILD_TESTS_DIR/failmalloc.so}}
if [ -z "$SHIM" ] || [ ! -f "$SHIM" ]; then
	echo "# SKIP: tests/failmalloc.so not built (HT_BUILD_TESTS_DIR or HT_FAILMALLOC)"
	exit 77
fi
# AddressSanitizer's allocator replaces glibc's, which the shim stands in front of.
if grep -aq __asan_init "$HOSTTUNE" 2>/dev/null; then
	echo "# SKIP: an AddressSanitizer build: its allocator is not glibc's"
	exit 77
fi
POINTS=${OOM_POINTS:-30}
GARAGE=$FIXTURES/garage-vm/root
# The Garage VM's facts, collected "now": the fixture's 2000-01-01 would
# put audit's warning of facts collected long ago before the one line an
# exhausted memory leaves.
FACTS=$TMP/garage-vm.facts
sed "s/^host.collected_at = .*/host.collected_at = \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\" from time(2)/" \
	"$FIXTURES/garage-vm/expected.facts" >"$FACTS"
HT=("$HOSTTUNE" --rules "$HT_RULES_DIR")

# run_counted N OUT ERR ARGS...: hosttune ARGS with allocations failing from
# the Nth on (0: none), its allocation count in $TMP/count. Sets rc.
run_counted() {
	local n=$1 out=$2 err=$3
	shift 3
	rm -f "$TMP/count" "$TMP/crash"
	export HT_FAILMALLOC_CRASH=$TMP/crash
	# The shell's own "Segmentation fault" line is not the run's: braces and /dev/null.
	if [ "$n" = 0 ]; then
		{ HT_FAILMALLOC_COUNT=$TMP/count LD_PRELOAD=$SHIM "${HT[@]}" "$@" >"$out" 2>"$err"; } \
			2>/dev/null
	else
		{ HT_FAILMALLOC=$n HT_FAILMALLOC_COUNT=$TMP/count LD_PRELOAD=$SHIM "${HT[@]}" "$@" \
			>"$out" 2>"$err"; } 2>/dev/null
	fi
	rc=$?
	# The metrics' run time and the facts' host.collected_at are the clock's, not the run's.
	sed -i -e '/^hosttune_last_run_timestamp_seconds /d' \
		-e 's/"[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z"/"TIME"/g' "$out"
}

# The points: 1 to 12, then POINTS more spread up to K.
points() {
	local k=$1
	seq 1 $((k < 12 ? k : 12))
	if [ "$k" -gt 12 ]; then
		awk -v k="$k" -v p="$POINTS" 'BEGIN { for (i = 1; i <= p; i++) { n = int(12 + (k - 12) * i / p); if (n > 12) print n } }' |
			uniq
	fi
}

snap() { (cd "$1" && find . -printf '%y %m %p\n' -type f -exec sha256sum {} + | LC_ALL=C sort); }

# check NAME MODE ARGS...: MODE is "plain", or "apply"/"revert" (ARGS' --root
# is $TMP/t, made fresh before each run: the original tree for apply, the
# applied one for revert), "watch" (its stdout has times: not compared), or
# "nomemory" (a usage error in JSON: allocations it may do without).
ALL_HITS=0
check() {
	local name=$1 mode=$2 k n bad=0 hit=0 same=0 known=0 line json
	shift 2
	case $name in ${OOM_ONLY:-*}) ;; *) return ;; esac
	prepare "$mode"
	run_counted 0 "$TMP/clean.out" "$TMP/clean.err" "$@"
	local crc=$rc
	k=$(cat "$TMP/count" 2>/dev/null || echo 0)
	if [ "$k" -lt 1 ]; then
		not_ok "$name: a clean run counts its allocations" "exit $crc, count '$k'"
		return
	fi
	case " $* " in *" --format json "*) json=yes ;; *) json=no ;; esac
	for n in $(points "$k"); do
		prepare "$mode"
		run_counted "$n" "$TMP/out" "$TMP/err" "$@"
		line=$(tail -n 1 "$TMP/err")
		local why=""
		if { [ "$mode" = apply ] || [ "$mode" = revert ]; } && ! beside_intact; then
			why="the run changed what is beside its --root tree (\$TMP/beside, \$TMP/t)"
		elif { [ "$rc" = 3 ] || { [ "$rc" = 5 ] && unreported "$mode" "$line"; }; } &&
			[ "$(wc -l <"$TMP/err")" = 1 ] && oom_line "$mode" "$line"; then
			if [ $json = yes ]; then
				local got
				got=$(jq -rs 'if length != 1 then "\(length) documents" else .[0] | "\(.schema)|\(.error.exit)|\(.error.message)" end' \
					"$TMP/out" 2>&1 | head -c 300)
				[ "$got" = "1|$rc|${line#hosttune: }" ] || why="stdout is not the error object: $got"
			fi
			[ -z "$why" ] && [ "$mode" != plain ] && [ "$mode" != watch ] && why=$(tree_after "$line")
			if [ -z "$why" ]; then
				hit=$((hit + 1))
			elif k_why=$(known_outcome "$mode"); then
				known=$((known + 1))
				echo "#   known, $name, allocations failing from $n: $k_why"
				why=""
			fi
		elif [ "$rc" = "$crc" ] && cmp -s "$TMP/err" "$TMP/clean.err" &&
			{ [ "$mode" = watch ] || cmp -s "$TMP/out" "$TMP/clean.out"; }; then
			same=$((same + 1))
		elif k_why=$(known_outcome "$mode"); then
			known=$((known + 1))
			echo "#   known, $name, allocations failing from $n: $k_why"
		else
			why="exit $rc, stderr: $(head -c 300 "$TMP/err"), stdout: $(head -c 200 "$TMP/out")"
		fi
		if [ -n "$why" ]; then
			bad=$((bad + 1))
			[ $bad -le 3 ] && echo "#   $name, allocations failing from $n of $k: $why"
		fi
	done
	ALL_HITS=$((ALL_HITS + hit))
	if [ $bad = 0 ] && { [ $hit -gt 0 ] || [ "$mode" = nomemory ]; }; then
		ok "$name: $hit runs out of memory said so (exit 3), $same ran as the clean one, $known known ($k allocations)"
	else
		not_ok "$name: every run out of memory says so in one line, exit 3" \
			"$bad wrong, $hit right, $same as the clean run, $known known, of $k allocations"
	fi
}

# known_outcome MODE: says which known outcome of persist/apply.c or json-c
# the last run had (see the top), and succeeds; fails for any other.
known_outcome() {
	local line
	line=$(tail -n 1 "$TMP/err")
	if [ "$rc" -ge 128 ]; then
		if grep -q json_tokener_parse "$TMP/crash" 2>/dev/null; then
			echo "signal $((rc - 128)) in json-c's json_tokener_parse() (json-c issue 857)"
			return 0
		fi
		local at
		at=$(crash_in)
		case $at in
		*src/persist/apply.c:*)
			echo "signal $((rc - 128)) in persist/apply.c: $at"
			return 0 ;;
		esac
		echo "#   crash: $at" >&2
		return 1
	fi
	case $1.$rc.$line in
	apply.2."hosttune: apply refused, nothing was changed: "* | \
	revert.2."hosttune: revert refused, nothing was changed: "*)
		[ -z "$(tree_after "hosttune: $1 failed, nothing was changed")" ] || return 1
		echo "persist/apply.c: a state file judged for want of memory, exit 2: $line"
		return 0 ;;
	apply.3."hosttune: apply failed, every change rolled back: "*)
		# What a temp name holds aside, the tree is the original.
		snap "$GARAGE" | grep -v '/\.[^/]*\.hosttune-[A-Za-z0-9]\{6\}' >"$TMP/a.snap"
		snap "$TMP/t" | grep -v '/\.[^/]*\.hosttune-[A-Za-z0-9]\{6\}' >"$TMP/b.snap"
		cmp -s "$TMP/a.snap" "$TMP/b.snap" || return 1
		echo "persist/apply.c: rolled back, but a temp name is left unsaid: $(cd "$TMP/t" && find . -name '.*.hosttune-??????' | tr '\n' ' ')"
		return 0 ;;
	apply.3."hosttune: apply failed and could not roll everything back: "*)
		[ -z "$(tree_after "$line")" ] || return 1
		echo "persist/apply.c: a rollback that ran out of memory, its reasons empty: $line"
		return 0 ;;
	esac
	return 1
}

# crash_in: hosttune's frames of the crash's stack, "FUNCTION FILE:LINE" each (addr2line).
crash_in() {
	command -v addr2line >/dev/null 2>&1 || { echo "(no addr2line)"; return; }
	sed -n "s|^$HOSTTUNE(+\(0x[0-9a-f]*\)).*|\1|p" "$TMP/crash" 2>/dev/null |
		xargs -r addr2line -f -e "$HOSTTUNE" | paste -d' ' - - | tr '\n' ';'
}

# unreported MODE LINE: LINE is that of a complete apply or revert whose report was lost.
unreported() {
	case $2 in "hosttune: $1 is complete, but the report could not be written: out of memory") return 0 ;; esac
	return 1
}

# oom_line MODE LINE: LINE says memory ran out, as MODE's line must.
oom_line() {
	[ "$2" = "hosttune: out of memory" ] && return 0
	case $1.$2 in
	apply."hosttune: apply "*": out of memory" | revert."hosttune: revert "*": out of memory") return 0 ;;
	esac
	return 1
}
# beside_intact: the file beside the --root tree $TMP/t, and the tree, are still there.
beside_intact() {
	[ "$(cat "$TMP/beside" 2>/dev/null)" = beside ] && [ -d "$TMP/t/proc" ]
}
# prepare MODE: a fresh $TMP/t for apply (the original tree) and revert (applied).
prepare() {
	echo beside >"$TMP/beside"
	case $1 in
	apply | revert)
		rm -rf "$TMP/t"
		cp -a "$GARAGE" "$TMP/t"
		if [ "$1" = revert ]; then
			"${HT[@]}" --root "$TMP/t" --no-measure apply >/dev/null 2>&1 || echo "# apply for revert failed"
		fi
		;;
	esac
}
# same_tree A B: "" when the trees A and B are the same, the state file aside
# (apply's own record, not the tree's content).
same_tree() {
	snap "$1" | grep -v '/var/lib/hosttune/state$' >"$TMP/a.snap"
	snap "$2" | grep -v '/var/lib/hosttune/state$' >"$TMP/b.snap"
	cmp -s "$TMP/a.snap" "$TMP/b.snap" || echo "differs"
}
# tree_after LINE: "" when the tree is what the failed apply or revert's LINE says.
tree_after() {
	local before
	if [ "$mode" = apply ]; then before=$GARAGE; else before=$TMP/applied; fi
	case $1 in
	*"nothing was changed"* | *"every change rolled back"* | "hosttune: out of memory")
		[ -z "$(same_tree "$before" "$TMP/t")" ] || echo "the tree is not what '$1' says"
		;;
	*"apply is complete, but the report could not be written"*)
		[ -z "$(same_tree "$TMP/applied" "$TMP/t")" ] || echo "the tree is not what '$1' says"
		;;
	*"revert is complete, but the report could not be written"*)
		[ -z "$(same_tree "$GARAGE" "$TMP/t")" ] || echo "the tree is not what '$1' says"
		;;
	*"could not roll everything back"* | "hosttune: revert incomplete: "*)
		# The state file keeps the rest: a clean revert finishes.
		"${HT[@]}" --root "$TMP/t" revert >/dev/null 2>&1 || echo "after '$1' a clean revert fails"
		beside_intact || echo "after '$1' a clean revert changed what is beside the tree"
		[ -z "$(same_tree "$GARAGE" "$TMP/t")" ] || echo "after '$1' and a clean revert the tree is not the original"
		;;
	*) echo "not a line of apply or revert: $1" ;;
	esac
}
# The applied tree, for revert's check.
rm -rf "$TMP/applied"
cp -a "$GARAGE" "$TMP/applied"
"${HT[@]}" --root "$TMP/applied" --no-measure apply >/dev/null 2>&1 || echo "# the reference apply failed"

# Without HT_FAILMALLOC the shim changes nothing, and with it it does fail.
run_counted 0 "$TMP/a.out" "$TMP/a.err" --facts "$FACTS" audit
"${HT[@]}" --facts "$FACTS" audit >"$TMP/b.out" 2>"$TMP/b.err"
expect_eq "the shim alone changes nothing" "yes" "$(cmp -s "$TMP/a.out" "$TMP/b.out" && echo yes)"
run_counted 1 "$TMP/a.out" "$TMP/a.err" --facts "$FACTS" audit
expect_eq "the shim fails the first allocation: exit 3" 3 "$rc"

for fmt in text json; do
	F=(--format "$fmt")
	check "audit --root ($fmt)" plain "${F[@]}" --root "$GARAGE" audit
	check "audit --facts ($fmt)" plain "${F[@]}" --facts "$FACTS" --profile garage audit
	check "audit of two hosts ($fmt)" plain "${F[@]}" --facts "$FACTS" \
		--facts "$FIXTURES/home-server/host.facts" audit
	check "facts --root ($fmt)" plain "${F[@]}" --root "$GARAGE" --no-measure facts
	check "plan --root ($fmt)" plain "${F[@]}" --root "$GARAGE" plan
	check "verify --root ($fmt)" plain "${F[@]}" --root "$GARAGE" verify
	check "rules ($fmt)" plain "${F[@]}" rules
	check "explain ($fmt)" plain "${F[@]}" --facts "$FACTS" explain process.limit_nofile
	check "profiles ($fmt)" plain "${F[@]}" --facts "$FACTS" profiles
	check "watch --root ($fmt)" watch "${F[@]}" --root "$GARAGE" --interval 10ms --duration 20ms watch
	check "apply --root ($fmt)" apply "${F[@]}" --root "$TMP/t" --no-measure apply
	check "revert --root ($fmt)" revert "${F[@]}" --root "$TMP/t" revert
	check "a usage error ($fmt)" "$([ $fmt = json ] && echo nomemory || echo plain)" "${F[@]}" \
		--interval 1s audit
done
check "audit --format prometheus" plain --format prometheus --facts "$FACTS" audit
check "audit of two hosts --format prometheus" plain --format prometheus --host-label \
	--facts "$FACTS" --facts "$FIXTURES/home-server/host.facts" audit
check "audit --output" plain --facts "$FACTS" --output "$TMP/report.txt" audit
if [ "$ALL_HITS" -gt 0 ]; then ok "runs ran out of memory ($ALL_HITS)"
else not_ok "runs ran out of memory" "none: the shim failed no allocation"; fi

finish
