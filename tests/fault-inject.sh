#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Fault injection (issue 11): apply and revert on copies of the Garage VM's
# --root tree (tests/fixtures/garage-vm/root: no etc/ and no var/, so apply
# creates directories) and of the same tree with a foreign 0600 modprobe.d
# file taken over with --force. For every syscall apply and revert use to
# change the tree (those a clean run makes, from a fixed list), strace fails
# the Nth call with a realistic errno, once (when=N) and sticky (when=N+),
# or kills the process there (signal=KILL). After each run: the exit status
# is one hosttune(8) documents, the outcome it claims holds (exit 0: the tree
# is the applied one; "every change rolled back": the tree is the original;
# a revert that keeps the state file can be finished), a clean revert exits
# 0 or 2 (after a kill, a clean apply and revert follow), and then the tree is
# byte for byte the original one: same paths, types, modes and contents, no
# .NAME.hosttune-XXXXXX temp file, no directory that was not there. Then
# concurrent apply/apply, apply/revert and revert/revert, stale temp files
# from a crash, and an apply whose report cannot be written.
#
# N counts only the calls from apply's or revert's first change of the tree
# on (from the --root walk before the first write; the lock too): calls before it
# belong to collecting facts and reading rules, where a failure ends the run
# before anything changes; the first and the last of those are still
# injected once, as a sample. Runs two cases at a time.
# FAULT_KINDS="once sticky kill" (the default) selects kinds; FAULT_EVERY=N
# keeps the first, the last and every Nth case of each syscall (1, all of
# them, by default; 6 under ASan); FAULT_ONLY=S (a syscall name) and
# FAULT_SCENARIOS="garage force" narrow a manual run; FAULT_LIST=1 prints the
# cases and stops. strace runs with --seccomp-bpf but for the kill cases: the
# traced process stops at the traced syscalls only, not at every one (the
# same calls are counted and injected; without it an apply under strace took
# twice as long here); strace 6.1 delivers no injected signal with it.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh" || exit 99
# Every path below is in $TMP: never go on without it.
[ -n "${TMP:-}" ] && [ -d "$TMP" ] || exit 99

need_strace

asan=no
if grep -aq __asan_init "$HOSTTUNE" 2>/dev/null; then asan=yes; fi
# Under ASan every run is slower: no sticky runs there (the same code paths
# as once, with more failures); FAULT_KINDS overrides.
# Of the cases of each syscall, kind and operation, the first, the last and
# every FAULT_EVERY-th between (see "the cases" below): 6 under ASan, 1 (all)
# otherwise.
if [ "$asan" = yes ]; then KINDS=${FAULT_KINDS:-once kill} EVERY=${FAULT_EVERY:-6}
else KINDS=${FAULT_KINDS:-once sticky kill} EVERY=${FAULT_EVERY:-1}; fi
SCENARIOS=${FAULT_SCENARIOS:-garage force}
G=(--profile garage --set workload.conn_rate=570)
HT=("$HOSTTUNE" --rules "$HT_RULES_DIR")
# The syscalls that change the tree or decide whether it changes; only those
# a clean run makes are injected.
CANDIDATES="openat open creat write pwrite64 writev fallocate fsync fdatasync syncfs
rename renameat renameat2 mkdir mkdirat unlink unlinkat rmdir fchmod fchmodat chmod
ftruncate truncate flock link linkat symlink symlinkat close"
errno_for() {
	case $1 in
	write | pwrite64 | writev | fallocate) echo ENOSPC ;;
	fsync | fdatasync | syncfs | ftruncate | truncate | close) echo EIO ;;
	mkdir | mkdirat | rename | renameat | renameat2) echo EROFS ;;
	fchmod | fchmodat | chmod) echo EPERM ;;
	flock) echo ENOLCK ;;
	*) echo EACCES ;;
	esac
}

# The exit statuses hosttune(8) documents: the *N* items of EXIT STATUS.
MAN=$HT_TESTS_DIR/../man/hosttune.8.scd
DOCUMENTED=$(sed -n '/^# EXIT STATUS/,/^# /p' "$MAN" | sed -n 's/^\*\([0-9][0-9]*\)\*$/\1/p' | tr '\n' ' ')
documented() {
	case " $DOCUMENTED " in *" $1 "*) return 0 ;; esac
	return 1
}
echo "# exit statuses documented in hosttune(8): $DOCUMENTED"

# snap DIR: every path with its type and mode (symlinks with their target),
# and the SHA-256 of every regular file; sorted.
snap() {
	(cd "$1" && find . -printf '%y %m %p -> %l\n' -type f -exec sha256sum {} + | LC_ALL=C sort)
}
# The same with the state file's content left out (apply's own record: it
# names the tree, so two copies of one tree differ there), sorted again.
snap_nostate() {
	snap "$1" | sed 's|^[0-9a-f]\{64\}  \./var/lib/hosttune/state$|(state)  ./var/lib/hosttune/state|' |
		LC_ALL=C sort
}

# scenario_tree NAME DIR: a fresh copy of the scenario's tree at DIR.
scenario_tree() {
	rm -rf "$2"
	cp -a "$FIXTURES/garage-vm/root" "$2"
	case $1 in
	force)
		mkdir -p "$2/etc/modprobe.d"
		printf 'options nf_conntrack hashsize=1024\n' >"$2/etc/modprobe.d/hosttune.conf"
		chmod 600 "$2/etc/modprobe.d/hosttune.conf"
		;;
	esac
}
scenario_args() {
	case $1 in
	force) echo "--force" ;;
	*) echo "" ;;
	esac
}
# The command line for OP on DIR, as words.
op_cmd() { # SCENARIO OP DIR
	if [ "$2" = apply ]; then
		echo "${HT[*]} --root $3 ${G[*]} $(scenario_args "$1") apply"
	else
		echo "${HT[*]} --root $3 revert"
	fi
}

# ---- reference trees and clean-run counts ----
# phase_counts TRACE ROOT: "SYSCALL TOTAL BEFORE CHANGING KEY" for every
# syscall in the trace. BEFORE calls come before the first change of the
# tree (before the walk from ROOT that leads to it); the lock (flock) is
# always in.
# CHANGING lists the N (comma-separated, "-" for none) whose call changes
# the tree (creates, writes to a file, renames, removes, changes a mode) or
# takes a lock. KEY lists, for openat, the N that open ROOT (each walk to a
# file starts there: by its name, or again from the descriptor hosttune
# holds of it, openat(FD, ".")) and, for close, the N that close a
# descriptor opened for writing.
phase_counts() {
	awk -v root="$2" '
	/resumed>/ { next }
	match($0, /^[0-9]+ +[a-z0-9_]+\(/) {
		s = substr($0, RSTART, RLENGTH); sub(/^[0-9]+ +/, "", s); sub(/\($/, "", s)
		n++; name[n] = s; idx[n] = ++cnt[s]
		a = $0; sub(/^[0-9]+ +[a-z0-9_]+\(/, "", a)
		ret = $0; sub(/.*\) += /, "", ret); ret = ret + 0
		m = 0
		if (s ~ /^(mkdir|mkdirat|unlink|unlinkat|rmdir|rename|renameat|renameat2|fchmod|fchmodat|chmod|ftruncate|truncate|fallocate|link|linkat|symlink|symlinkat|flock)$/) m = 1
		if (s ~ /^(openat|open)$/ && $0 ~ /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_TMPFILE/) m = 1
		if (s == "creat") m = 1
		if (s ~ /^(write|pwrite64|writev)$/ && a + 0 > 2) m = 1
		if (s ~ /^(openat|open|creat)$/ && ret >= 0) wfd[ret] = m
		if (s == "openat" && index($0, "(AT_FDCWD, \"" root "\", ")) { rootopen[n] = 1; key[n] = 1; rootfd = ret }
		# The tree opened once (its descriptor pinned), each walk from it: openat(FD, ".").
		if (s == "openat" && rootfd != "" && index($0, "(" rootfd ", \".\", ")) { rootopen[n] = 1; key[n] = 1 }
		if (s == "close" && wfd[a + 0]) key[n] = 1
		mut[n] = m
		if (m && !first && s != "flock") first = n
	}
	END {
		start = first ? first : n + 1
		for (i = first - 1; i > 0; i--) if (rootopen[i]) { start = i; break }
		for (i = 1; i <= n; i++) {
			if (i < start && name[i] != "flock") { pre[name[i]]++; continue }
			if (mut[i]) muts[name[i]] = muts[name[i]] "," idx[i]
			if (key[i]) keys[name[i]] = keys[name[i]] "," idx[i]
		}
		for (s in cnt) print s, cnt[s], pre[s] + 0, (muts[s] == "" ? "-" : substr(muts[s], 2)),
			(keys[s] == "" ? "-" : substr(keys[s], 2))
	}' "$1"
}

TRACESET=$(echo $CANDIDATES | tr ' ' ',')
declare -A TOTAL PRE MUTS KEYS
# References for both scenarios (the later checks use the garage one).
for sc in garage force; do
	d=$TMP/ref-$sc
	scenario_tree "$sc" "$d"
	snap "$d" >"$TMP/$sc.before"
	strace -f --seccomp-bpf -qq -o "$TMP/$sc.apply.trace" -e trace="$TRACESET" $(op_cmd "$sc" apply "$d") \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	expect_eq "$sc: clean apply under strace exits 0" 0 "$rc"
	snap_nostate "$d" >"$TMP/$sc.applied"
	strace -f --seccomp-bpf -qq -o "$TMP/$sc.revert.trace" -e trace="$TRACESET" $(op_cmd "$sc" revert "$d") \
		>"$TMP/out" 2>"$TMP/err"
	expect_eq "$sc: clean revert under strace exits 0" 0 $?
	snap "$d" >"$TMP/now"
	if cmp -s "$TMP/$sc.before" "$TMP/now"; then ok "$sc: clean apply and revert restore the tree"
	else not_ok "$sc: clean apply and revert restore the tree" "$(diff "$TMP/$sc.before" "$TMP/now" | head -20)"; fi
	if cmp -s "$TMP/$sc.before" "$TMP/$sc.applied"; then
		not_ok "$sc: apply changes the tree"
	else
		ok "$sc: apply changes the tree"
	fi
	for op in apply revert; do
		echo "# $sc $op, clean run: syscall, calls, calls before the first change; N that change the tree; N that open the root / close a written file"
		while read -r s tot pre muts keys; do
			TOTAL[$sc.$op.$s]=$tot
			PRE[$sc.$op.$s]=$pre
			MUTS[$sc.$op.$s]=$muts
			KEYS[$sc.$op.$s]=$keys
			printf '#   %-10s %4d %4d; %s; %s\n' "$s" "$tot" "$pre" "$muts" "$keys"
		done < <(phase_counts "$TMP/$sc.$op.trace" "$d" | LC_ALL=C sort)
	done
done

# ---- the cases ----
# Every syscall S of a clean run, N from the first change on: once (when=N),
# sticky (when=N+) and SIGKILL. Three reductions, each keeping every
# distinct outcome:
# - SIGKILL only where the Nth call changes the tree (or locks): what a kill
#   leaves depends only on the changes made before it, so a kill at any
#   other call leaves what a kill at the next changing call leaves.
# - openat sticky only where the call changes the tree or opens the root:
#   every other openat is a step of a walk from the root to a file, and a
#   sticky failure anywhere in a walk fails that step and every later one
#   the same way (the rollback's walks included).
# - close(2) once, and only of a descriptor opened for writing (EIO: an
#   earlier write's error reported late); the descriptor is gone either
#   way, so sticky is the same run.
# The force scenario (a foreign file taken over, its .hosttune-orig copy)
# repeats only the calls that act on files (not openat and close), once and
# SIGKILL (not sticky), unless FAULT_FULL=1.
# Under ASan (FAULT_EVERY=6), which looks for memory errors on the code
# paths the plain run checks the outcomes of, each scenario, operation,
# syscall and kind keeps its first and last N and every sixth between: the
# Nth call of a syscall is the same step of apply or revert on another file
# (another kill point of the same step, another file's write failing), and
# the runs between run the same code as those kept. The samples from before
# the first change are all kept.
CASES=$TMP/cases
: >"$CASES.all"
for sc in $SCENARIOS; do
	for op in apply revert; do
		for s in $CANDIDATES; do
			[ -n "${FAULT_ONLY:-}" ] && [ "$s" != "$FAULT_ONLY" ] && continue
			if [ "$sc" = force ] && [ "${FAULT_FULL:-0}" != 1 ]; then
				case $s in openat | open | close) continue ;; esac
			fi
			tot=${TOTAL[$sc.$op.$s]:-0}
			pre=${PRE[$sc.$op.$s]:-0}
			muts=,${MUTS[$sc.$op.$s]:--},
			keys=,${KEYS[$sc.$op.$s]:--},
			[ "$tot" -gt 0 ] || continue
			# Samples from before the first change: the first and the last call.
			if [ "$pre" -gt 0 ]; then
				echo "$sc $op $s 1 once pre" >>"$CASES.all"
				[ "$pre" -gt 1 ] && echo "$sc $op $s $pre once pre" >>"$CASES.all"
			fi
			for n in $(seq $((pre + 1)) "$tot"); do
				mut=no key=no
				[ "${muts#*,$n,}" != "$muts" ] && mut=yes
				[ "${keys#*,$n,}" != "$keys" ] && key=yes
				for k in $KINDS; do
					case $s.$k in
					*.kill) [ $mut = yes ] || continue ;;
					openat.sticky | open.sticky) [ $mut = yes ] || [ $key = yes ] || continue ;;
					close.once) [ $key = yes ] || continue ;;
					close.*) continue ;;
					esac
					[ "$sc.$k" = force.sticky ] && [ "${FAULT_FULL:-0}" != 1 ] && continue
					echo "$sc $op $s $n $k" >>"$CASES.all"
				done
			done
		done
	done
done
# Two passes: the count of each group's cases, then the cases kept.
awk -v every="$EVERY" '
	NF == 6 { if (FNR == NR) next; print $1, $2, $3, $4, $5; next }
	{ g = $1 " " $2 " " $3 " " $5 }
	FNR == NR { total[g]++; next }
	{ i = ++seen[g]; if ((i - 1) % every == 0 || i == total[g]) print }
' "$CASES.all" "$CASES.all" >"$CASES"
echo "# $(wc -l <"$CASES") injected runs ($(grep -c ' once$' "$CASES") once, $(grep -c ' sticky$' "$CASES") sticky, $(grep -c ' kill$' "$CASES") SIGKILL) of $(wc -l <"$CASES.all"); kinds: $KINDS; every $EVERY; ASan build: $asan"
if [ "${FAULT_LIST:-0}" = 1 ]; then cat "$CASES"; echo "# SKIP: FAULT_LIST=1 lists the cases only"; exit 77; fi

# run_case WORKDIR RESULTS SCENARIO OP SYSCALL N KIND: one injected run and
# its checks; appends "PASS ..." or "MISS ... | symptoms" to RESULTS and,
# on a miss, the details to RESULTS.details.
run_case() {
	local w=$1 res=$2 sc=$3 op=$4 s=$5 n=$6 k=$7
	local d=$w/t e inj rc crc sym="" cmd setup="" log=$w/log
	e=$(errno_for "$s")
	case $k in
	once) inj="$s:error=$e:when=$n" ;;
	sticky) inj="$s:error=$e:when=$n+" ;;
	kill) inj="$s:signal=KILL:when=$n" ;;
	esac
	scenario_tree "$sc" "$d"
	: >"$log"
	if [ "$op" = revert ]; then
		setup="$(op_cmd "$sc" apply '$T') >/dev/null; "
		$(op_cmd "$sc" apply "$d") >/dev/null 2>>"$log" || sym="$sym setup-apply-failed"
		snap "$d" >"$w/setup"
	fi
	# A signal is not delivered under --seccomp-bpf (strace 6.1 returns the
	# call as if nothing was injected): the kill cases stop at every call.
	bpf=--seccomp-bpf; [ "$k" = kill ] && bpf=
	cmd="strace -f $bpf -qq -o /dev/null -e trace=$s -e inject=$inj $(op_cmd "$sc" "$op" "$d")"
	(timeout 120 $cmd >"$w/out" 2>"$w/err"; exit $?) 2>/dev/null
	rc=$?
	{ echo "injected: exit $rc"; echo "stdout:"; head -20 "$w/out"; echo "stderr:"; head -20 "$w/err"; } >>"$log"
	if [ "$k" = kill ] && [ "$rc" = 137 ]; then :
	elif [ "$k" = kill ]; then sym="$sym kill-not-reached:exit-$rc"
	elif ! documented "$rc"; then sym="$sym undocumented-exit-$rc"
	fi
	# What the run claims (hosttune(8), EXIT STATUS; the messages of cli/cmd-apply.c).
	local must_finish=no unchanged=""
	case $op.$rc in
	apply.0 | apply.1 | apply.5)
		snap_nostate "$d" >"$w/now"
		cmp -s "$TMP/$sc.applied" "$w/now" || sym="$sym exit-$rc-but-tree-not-the-applied-one"
		must_finish=yes
		;;
	apply.2 | apply.4) unchanged=$TMP/$sc.before ;;
	apply.3)
		if grep -q 'every change rolled back\|nothing was changed' "$w/err"; then
			unchanged=$TMP/$sc.before
		elif grep -q 'could not roll everything back' "$w/err"; then
			must_finish=yes
		fi
		;;
	revert.0 | revert.5) unchanged=$TMP/$sc.before ;;
	revert.2 | revert.4) unchanged=$w/setup ;;
	revert.3)
		# "kept in the state file for another revert": the next one finishes.
		# Other exit 3 messages ("the next apply or revert removes it") say
		# nothing of the state file: only the final tree is checked.
		if grep -q 'nothing was changed' "$w/err"; then unchanged=$w/setup
		elif grep -q 'kept in the state file' "$w/err"; then must_finish=yes; fi
		;;
	esac
	if [ -n "$unchanged" ]; then
		snap "$d" >"$w/now"
		# A temp tree the run could not remove and says so ("X is left, and
		# the next apply or revert removes it") is not a change it hides.
		if grep -q 'is left, and the next apply or revert removes it' "$w/err"; then
			grep -v '/\.[^/]*\.hosttune-[A-Za-z0-9]\{6\}\( \|/\|$\)' "$w/now" >"$w/now.f"
			mv "$w/now.f" "$w/now"
		fi
		cmp -s "$unchanged" "$w/now" ||
			sym="$sym exit-$rc-claims-$([ "$unchanged" = "$w/setup" ] && echo unchanged || echo original)-but-tree-differs"
	fi
	# A clean revert; after a kill, a clean apply and revert too.
	$(op_cmd "$sc" revert "$d") >"$w/out" 2>"$w/err"
	crc=$?
	{ echo "clean revert: exit $crc"; head -20 "$w/err"; } >>"$log"
	if [ "$must_finish" = yes ] && [ "$crc" != 0 ]; then sym="$sym says-state-kept-but-next-revert-exit-$crc"
	elif [ "$crc" != 0 ] && [ "$crc" != 2 ]; then sym="$sym clean-revert-exit-$crc"
	fi
	local after=""
	if [ "$k" = kill ]; then
		after="; $(op_cmd "$sc" apply '$T'); $(op_cmd "$sc" revert '$T')"
		$(op_cmd "$sc" apply "$d") >"$w/out" 2>"$w/err"
		crc=$?
		{ echo "clean apply after the kill: exit $crc"; head -20 "$w/err"; } >>"$log"
		if [ "$crc" = 0 ]; then
			snap_nostate "$d" >"$w/now"
			cmp -s "$TMP/$sc.applied" "$w/now" || sym="$sym apply-after-kill-tree-not-the-applied-one"
		else
			sym="$sym apply-after-kill-exit-$crc"
		fi
		$(op_cmd "$sc" revert "$d") >"$w/out" 2>"$w/err"
		crc=$?
		{ echo "clean revert after that: exit $crc"; head -20 "$w/err"; } >>"$log"
		[ "$crc" = 0 ] || sym="$sym revert-after-kill-exit-$crc"
	fi
	snap "$d" >"$w/now"
	if ! cmp -s "$TMP/$sc.before" "$w/now"; then
		diff "$TMP/$sc.before" "$w/now" >"$w/diff"
		grep -q '^> .*\.hosttune-[A-Za-z0-9]\{6\}' "$w/diff" && sym="$sym temp-file-left"
		grep -q '^> d .*\.hosttune-[A-Za-z0-9]\{6\}' "$w/diff" && sym="$sym temp-dir-left"
		grep -q '^> d ' "$w/diff" && sym="$sym directory-left"
		grep -q '^> f .*/var/lib/hosttune/state ' "$w/diff" && sym="$sym state-file-left"
		grep -q '^< ' "$w/diff" && sym="$sym original-changed-or-missing"
		grep -v '\.hosttune-[A-Za-z0-9]\{6\}\|^> d \|/var/lib/hosttune/state\|^[0-9,]*[acd][0-9,]*$\|^---$' \
			"$w/diff" | grep -q '^> f ' && sym="$sym file-left"
		[ -n "$sym" ] || sym=" tree-differs"
	fi
	local what="$sc $op $s N=$n $k ($inj)"
	if [ -z "$sym" ]; then
		echo "PASS $what" >>"$res"
	else
		echo "MISS $what |$sym" >>"$res"
		{
			echo "== MISS $what:$sym"
			echo "   reproduce: T=\$(mktemp -d)/t; $(scenario_repro "$sc"); $setup$(echo "$cmd" | sed "s|$d|\$T|g"); echo \$?; $(op_cmd "$sc" revert '$T')$after"
			sed 's/^/   /' "$log"
			if [ -s "$w/diff" ] && ! cmp -s "$TMP/$sc.before" "$w/now"; then
				echo "   tree against the original (< original, > now):"
				head -20 "$w/diff" | sed 's/^/   /'
			fi
		} >>"$res.details"
	fi
	rm -f "$w/diff"
}
scenario_repro() {
	case $1 in
	force) echo "cp -a tests/fixtures/garage-vm/root \$T && mkdir -p \$T/etc/modprobe.d && echo 'options nf_conntrack hashsize=1024' >\$T/etc/modprobe.d/hosttune.conf && chmod 600 \$T/etc/modprobe.d/hosttune.conf" ;;
	*) echo "cp -a tests/fixtures/garage-vm/root \$T" ;;
	esac
}

# Two workers, each taking every other case.
for wk in 0 1; do
	(
		mkdir -p "$TMP/w$wk"
		: >"$TMP/w$wk/results"
		i=0
		while read -r sc op s n k; do
			if [ $((i % 2)) = "$wk" ]; then
				run_case "$TMP/w$wk" "$TMP/w$wk/results" "$sc" "$op" "$s" "$n" "$k"
			fi
			i=$((i + 1))
		done <"$CASES"
	) &
done
wait
cat "$TMP/w0/results" "$TMP/w1/results" >"$TMP/results"
cat "$TMP/w0/results.details" "$TMP/w1/results.details" 2>/dev/null >"$TMP/details"
runs=$(wc -l <"$TMP/results")
restored=$(grep -c '^PASS' "$TMP/results")
misses=$(grep -c '^MISS' "$TMP/results")
echo "# injected runs: $runs; restored byte for byte with every claim true: $restored; misses: $misses"
if [ "$misses" -gt 0 ]; then
	cat "$TMP/details"
	echo "# misses by class (scenario op syscall kind | symptoms: N...):"
	sed -n 's/^MISS \([^ ]*\) \([^ ]*\) \([^ ]*\) N=\([0-9]*\) \([a-z]*\) ([^)]*) |\(.*\)$/\1 \2 \3 \5 |\6|\4/p' \
		"$TMP/results" | sort -t'|' -k1,2 -k3n |
		awk -F'|' '{ key = $1 "|" $2; if (!(key in seen)) { seen[key] = 1; order[++m] = key } ns[key] = ns[key] " " $3 }
		END { for (i = 1; i <= m; i++) { split(order[i], p, "|"); printf "#   %s|%s: N=%s\n", p[1], p[2], ns[order[i]] } }'
fi
expect_eq "every injected run restored byte for byte, every claim true" "$runs" "$restored"

# ---- concurrent runs on one tree ----
# The first run is slowed (every fsync returns 0.2 s late); the second starts
# once the first has changed the tree. Whatever the order they end up in,
# each exits with a documented status and the tree ends as one of the two
# whole states: applied (the plan's files, a state file, verify exits 0) or
# the original; never a mix.
APPLY_G=(--profile garage --set workload.conn_rate=570 apply)
SLOW=(strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_exit=200000)
C=$TMP/c
# started_changing OP: waits (up to 30 s) until the slowed OP has changed $C.
started_changing() {
	for _ in $(seq 300); do
		if [ "$1" = apply ]; then [ -d "$C/var" ] && return 0
		else [ -e "$C/etc/modules-load.d/hosttune.conf" ] || return 0; fi
		sleep 0.1
	done
	return 1
}
# end_state: "applied", "original" or "mixed"
end_state() {
	snap "$C" >"$TMP/c.now"
	if cmp -s "$TMP/garage.before" "$TMP/c.now"; then echo original; return; fi
	snap_nostate "$C" >"$TMP/c.now"
	if cmp -s "$TMP/garage.applied" "$TMP/c.now" &&
		"${HT[@]}" --root "$C" verify >/dev/null 2>&1; then echo applied; return; fi
	echo mixed
}
# concurrent FIRST SECOND: FIRST (slowed) and SECOND, each "apply" or "revert".
concurrent() {
	local name="$1 (slowed) & $2" r1 r2 st
	scenario_tree garage "$C"
	if [ "$1" = revert ]; then "${HT[@]}" --root "$C" "${APPLY_G[@]}" >/dev/null; fi
	if [ "$1" = apply ]; then "${SLOW[@]}" "${HT[@]}" --root "$C" "${APPLY_G[@]}" >"$TMP/c1.out" 2>"$TMP/c1.err" &
	else "${SLOW[@]}" "${HT[@]}" --root "$C" revert >"$TMP/c1.out" 2>"$TMP/c1.err" & fi
	local pid=$!
	if ! started_changing "$1"; then not_ok "$name: the slowed $1 changes the tree"; fi
	if [ "$2" = apply ]; then "${HT[@]}" --root "$C" "${APPLY_G[@]}" >"$TMP/c2.out" 2>"$TMP/c2.err"
	else "${HT[@]}" --root "$C" revert >"$TMP/c2.out" 2>"$TMP/c2.err"; fi
	r2=$?
	wait "$pid"
	r1=$?
	local detail="first exit $r1: $(head -c 600 "$TMP/c1.err"); second exit $r2: $(head -c 600 "$TMP/c2.err")"
	if documented "$r1" && documented "$r2"; then ok "$name: documented exit statuses ($r1, $r2)"
	else not_ok "$name: documented exit statuses" "$detail"; fi
	st=$(end_state)
	case "$1.$2.$st" in
	apply.apply.applied | apply.revert.applied | apply.revert.original | revert.apply.applied | \
	revert.apply.original | revert.revert.original)
		ok "$name: ends $st" ;;
	*)
		not_ok "$name: ends applied or original, not $st" "$detail" "$(diff "$TMP/garage.before" "$TMP/c.now" | head -20)" ;;
	esac
	# The runs' own word: an exit 0 apply that is not what is left, or two
	# reverts that both say they reverted, is a lost update.
	case "$1.$2" in
	revert.revert)
		# "nothing to revert" exits 0 too (issue 13): a revert that reverted
		# exits 0 without saying that.
		if [ "$r1" = 0 ] && [ "$r2" = 0 ] && ! grep -q 'nothing to revert' "$TMP/c1.out" &&
			! grep -q 'nothing to revert' "$TMP/c2.out"; then
			not_ok "$name: one revert reverts, the other has nothing to revert" "$detail"
		else ok "$name: one revert reverts, the other has nothing to revert ($r1, $r2)"; fi ;;
	apply.apply)
		"${HT[@]}" --root "$C" revert >/dev/null 2>&1
		expect_eq "$name: then one revert exits 0" 0 $?
		expect_eq "$name: and restores the tree" original "$(end_state)" ;;
	esac
}
concurrent apply apply
concurrent apply revert
concurrent revert apply
concurrent revert revert

# ---- --wait 0: a run that finds the tree locked does not wait ----
# It exits 4 with one line and changes nothing; the slowed apply finishes.
for second in apply revert; do
	scenario_tree garage "$C"
	"${SLOW[@]}" "${HT[@]}" --root "$C" "${APPLY_G[@]}" >/dev/null 2>"$TMP/c1.err" &
	pid=$!
	started_changing apply || not_ok "--wait 0: the slowed apply changes the tree"
	if [ "$second" = apply ]; then
		"${HT[@]}" --root "$C" --wait 0 "${APPLY_G[@]}" >/dev/null 2>"$TMP/c2.err"
	else
		"${HT[@]}" --root "$C" --wait 0 revert >/dev/null 2>"$TMP/c2.err"
	fi
	r2=$?
	wait "$pid"
	r1=$?
	expect_eq "--wait 0 $second during a slowed apply: exit 4" 4 "$r2"
	expect_eq "--wait 0 $second during a slowed apply: one line on stderr" 1 "$(wc -l <"$TMP/c2.err")"
	expect_eq "--wait 0 $second during a slowed apply: that apply exits 0" 0 "$r1"
	expect_eq "--wait 0 $second during a slowed apply: the tree ends applied" applied "$(end_state)"
done

# ---- stale temp files from a crash: the next apply or revert removes them ----
# In hosttune's directories and their parents up to the root; a name that is
# not hosttune's pattern (no leading dot) stays.
S=$TMP/stale
plant() {
	printf 'half\n' >"$S/etc/sysctl.d/.90-hosttune.conf.hosttune-Ab12Cd"
	chmod 600 "$S/etc/sysctl.d/.90-hosttune.conf.hosttune-Ab12Cd"
	printf '{"ver' >"$S/var/lib/hosttune/.state.hosttune-Zz9Yy8"
	printf 'half\n' >"$S/etc/modprobe.d/.hosttune.conf.hosttune-Qq1Ww3"
	mkdir -p "$S/etc/.modules-load.d.hosttune-Dd4Ee5"
	printf 'x\n' >"$S/.var.hosttune-Rr5Tt6"
}
stale_left() {
	(cd "$S" && find . -name '.*.hosttune-??????' | LC_ALL=C sort | tr '\n' ' ')
}
scenario_tree garage "$S"
mkdir -p "$S/etc/sysctl.d" "$S/etc/modprobe.d" "$S/var/lib/hosttune"
printf 'mine\n' >"$S/etc/sysctl.d/notes.hosttune-Ab12Cd"
# A directory under a file's temp name is none of hosttune's (it builds only
# the directories it creates under temp names): it stays.
mkdir -p "$S/etc/modprobe.d/.hosttune.conf.hosttune-Qq1Ww2"
KEPT="./etc/modprobe.d/.hosttune.conf.hosttune-Qq1Ww2 "
snap "$S" >"$TMP/stale.before"
plant
"${HT[@]}" --root "$S" "${APPLY_G[@]}" >/dev/null 2>"$TMP/err"
expect_eq "stale temp files: apply exits 0" 0 $?
expect_eq "stale temp files: apply removes them (not a directory under a file's temp name)" \
	"$KEPT" "$(stale_left)"
"${HT[@]}" --root "$S" revert >/dev/null 2>"$TMP/err"
expect_eq "stale temp files: then revert exits 0" 0 $?
snap "$S" >"$TMP/now"
if cmp -s "$TMP/stale.before" "$TMP/now"; then ok "stale temp files: apply, revert: the tree as before, notes.hosttune-Ab12Cd and the directory kept"
else not_ok "stale temp files: apply, revert: the tree as before" "$(diff "$TMP/stale.before" "$TMP/now" | head -20)"; fi
"${HT[@]}" --root "$S" "${APPLY_G[@]}" >/dev/null 2>"$TMP/err"
plant
"${HT[@]}" --root "$S" revert >/dev/null 2>"$TMP/err"
expect_eq "stale temp files: revert exits 0" 0 $?
snap "$S" >"$TMP/now"
if cmp -s "$TMP/stale.before" "$TMP/now"; then ok "stale temp files: revert removes them, the tree as before"
else not_ok "stale temp files: revert removes them, the tree as before" "$(diff "$TMP/stale.before" "$TMP/now" | head -20)"; fi

# ---- a complete apply whose report cannot be written: exit 5, not 3 ----
R=$TMP/report
scenario_tree garage "$R"
if [ -w /dev/full ]; then
	"${HT[@]}" --root "$R" "${APPLY_G[@]}" >/dev/full 2>"$TMP/err"
	expect_eq "report lost (stdout /dev/full): exit 5" 5 $?
	snap_nostate "$R" >"$TMP/now"
	if cmp -s "$TMP/garage.applied" "$TMP/now"; then ok "report lost: the tree is the applied one"
	else not_ok "report lost: the tree is the applied one" "$(diff "$TMP/garage.applied" "$TMP/now" | head -20)"; fi
	"${HT[@]}" --root "$R" revert >/dev/null 2>&1
	expect_eq "report lost: revert exits 0" 0 $?
	snap "$R" >"$TMP/now"
	if cmp -s "$TMP/garage.before" "$TMP/now"; then ok "report lost: revert restores the tree"
	else not_ok "report lost: revert restores the tree" "$(diff "$TMP/garage.before" "$TMP/now" | head -20)"; fi
	expect_eq "exit 5 is documented in hosttune(8)" yes "$(documented 5 && echo yes || echo no)"
else
	echo "# SKIP report lost: no /dev/full"
fi

finish
