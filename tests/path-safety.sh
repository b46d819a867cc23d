#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Path safety below --root: nothing is read, written or removed outside the
# tree, whatever links the tree holds. For each of three fixture trees (the
# Garage VM, a host with listening processes, a host with NICs in sysfs)
# a clean run of audit, facts, plan, apply, verify and revert under strace
# (-f -y -e trace=%file,%desc) gives the paths hosttune opens in the tree.
# Then each of them in turn is replaced by a symbolic link leading out of
# the tree (an absolute link: a file holding a marker, or a copy of the
# directory; a path apply creates: a link to a place outside that does not
# exist), and the six commands run again on that tree. A run fails the test
# when any descriptor of it resolves outside the tree (strace -y shows where
# each one leads), when a path outside is named by any call but readlink,
# when the marker appears in its output, or when anything outside changed.
# It prints the counts: paths tried, runs, escapes found. Each distinct
# path is taken once: a path an earlier fixture's runs met too, or another
# instance of one taken (another PID's /proc/PID/..., another interface's
# /sys/class/net/IF/...), is read by the same code (PATH_SAFETY_DISTINCT=0
# takes them all). On an AddressSanitizer build (the distcheck run), whose
# runs are slower and which looks for memory errors on the same code paths,
# a link is planted at every sixth of those (PATH_SAFETY_EVERY=N overrides:
# 1 for all). strace stops the process only at the traced calls
# (--seccomp-bpf), which changes no path it shows.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh" || exit 99
[ -n "${TMP:-}" ] && [ -d "$TMP" ] || exit 99

need_strace
if grep -aq __asan_init "$HOSTTUNE" 2>/dev/null; then
	EVERY=${PATH_SAFETY_EVERY:-6} DISTINCT=${PATH_SAFETY_DISTINCT:-1}
else EVERY=${PATH_SAFETY_EVERY:-1} DISTINCT=${PATH_SAFETY_DISTINCT:-1}; fi
declare -A taken

MARK=HT-OUTSIDE-MARKER-4711
O=$TMP/outside
T=$TMP/tree
CMDS="audit facts plan apply verify revert"
tried=0 runs=0 escapes=0 distinct=0

# outside_snap: every path outside with its type and content, to see a change
# (one sorted list: a path's line "TYPE PATH TARGET" and a file's "SHA256
# PATH" cannot be taken for one another).
outside_snap() {
	(cd "$O" && { find . -printf '%y %p %l\n'; find . -type f -exec sha256sum {} +; } | sort)
}

# run_cmds TAG PROFILE [CMD...]: the commands (the six by default) on $T,
# each traced into $TMP/TAG.CMD.trace with its output in $TMP/TAG.CMD.out.
run_cmds() {
	local tag=$1 profile=$2 cmd
	shift 2
	for cmd in ${*:-$CMDS}; do
		strace -f --seccomp-bpf -qq -y -s 256 -e trace=%file,%desc -o "$TMP/$tag.$cmd.trace" \
			"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$T" --profile "$profile" \
			--set workload.conn_rate=570 "$cmd" >"$TMP/$tag.$cmd.out" 2>&1 </dev/null
		runs=$((runs + 1))
	done
}

# escaped TAG: 0 when a run of TAG reached outside the tree (said on stdout).
# For each command run, in the order of $CMDS: a descriptor that leads
# outside; a call other than readlink naming a path outside (readlink shows
# a link's target, which is no access; openat2 with RESOLVE_IN_ROOT takes a
# link's target as a path of the tree, and where it leads is the
# descriptor's own "<...>"), the first 3 lines of each; the marker in its
# output. One awk run over the traces and outputs, not ten programs a
# command.
escaped() {
	local tag=$1 cmd found=1 files=()
	for cmd in $CMDS; do
		[ -e "$TMP/$tag.$cmd.trace" ] || continue
		files+=("$TMP/$tag.$cmd.trace" "$TMP/$tag.$cmd.out")
	done
	# (Strings through the environment: awk -v would take a backslash as an escape.)
	if [ ${#files[@]} -gt 0 ] && O=$O MARK=$MARK PRE="$TMP/$tag." awk '
		BEGIN { o = ENVIRON["O"]; mark = ENVIRON["MARK"]; pre = ENVIRON["PRE"] }
		function flush() {
			for (k = 1; k <= n1; k++) print b1[k]
			for (k = 1; k <= n2; k++) print b2[k]
			n1 = n2 = 0
		}
		FNR == 1 { flush() }
		{
			f = substr(FILENAME, length(pre) + 1); cmd = f; sub(/\.[a-z]*$/, "", cmd)
		}
		f ~ /\.trace$/ {
			if (index($0, "<" o)) { if (n1 < 3) b1[++n1] = "#   " cmd ": " $0; found = 1 }
			if (index($0, "\"" o) && !index($0, "readlink") && !index($0, "RESOLVE_IN_ROOT")) {
				if (n2 < 3) b2[++n2] = "#   " cmd ": " $0
				found = 1
			}
			next
		}
		index($0, mark) && !said[f]++ {
			flush(); print "#   " cmd ": the marker is in its output"; found = 1
		}
		END { flush(); exit !found }' "${files[@]}"; then
		found=0
	fi
	if [ "$(outside_snap)" != "$SNAP" ]; then
		echo "#   something outside the tree changed"
		found=0
	fi
	return $found
}

# paths TAG [CMD]: the paths below $T that the runs of TAG (of CMD alone,
# when given) opened, created or named (descriptors strace -y resolved into
# the tree, and openat2's paths, which are the tree's own), relative to $T,
# without $T itself.
paths() {
	local tag=$1 cmd=${2:-*}
	{
		sed -n "s|.*<$T/\([^>]*\)>.*|\1|p" "$TMP/$tag".$cmd.trace
		sed -n 's|^[0-9]* *openat2([0-9]*<'"$T"'>, "/\([^"]*\)".*|\1|p' "$TMP/$tag".$cmd.trace
		grep -ho "\"$T/[^\"]*\"" "$TMP/$tag".$cmd.trace | sed "s|^\"$T/||; s|\"\$||"
	} | grep -v '\.hosttune-' | grep -v '^\.$' | sed 's|/*$||' | sort -u
}

# cmds_for FX REL: the commands whose clean run met REL or a path below it:
# with the tree the same but for REL, the others meet nothing new. apply,
# verify and revert run together (they share the state apply writes).
# A command's clean run met REL when a path of it is REL or holds "REL/".
cmds_for() {
	local fx=$1 rel=$2 cmd files=()
	for cmd in $CMDS; do files+=("$TMP/$fx.paths.$cmd"); done
	REL=$rel CMDS=$CMDS PRE="$TMP/$fx.paths." awk '
		BEGIN { rel = ENVIRON["REL"]; cmds = ENVIRON["CMDS"]; pre = ENVIRON["PRE"] }
		$0 == rel || index($0, rel "/") { met[substr(FILENAME, length(pre) + 1)] = 1 }
		END {
			n = split(cmds, c, " ")
			for (k = 1; k <= n; k++) {
				if (!met[c[k]]) continue
				if (c[k] == "apply" || c[k] == "verify" || c[k] == "revert") chain = "apply verify revert"
				else out = out " " c[k]
			}
			print out " " chain
		}' "${files[@]}"
}

mkdir -p "$O"
printf '%s\n' "$MARK" >"$O/marker"

for spec in garage-vm:garage listen-host:default nic-sysfs:default; do
	fx=${spec%%:*} profile=${spec#*:}
	P=$TMP/pristine-$fx
	cp -a "$FIXTURES/$fx/root" "$P"
	rm -rf "$T"
	cp -a "$P" "$T"
	SNAP=$(outside_snap)
	run_cmds "$fx.clean" "$profile"
	if escaped "$fx.clean"; then
		not_ok "$fx: a clean run stays in the tree"
	fi
	list=$(paths "$fx.clean")
	for cmd in $CMDS; do paths "$fx.clean" "$cmd" >"$TMP/$fx.paths.$cmd"; done
	n=$(printf '%s\n' "$list" | grep -c .)
	echo "# $fx: $n paths in the tree"
	[ "$n" -gt 10 ] && ok "$fx: the clean runs open $n paths in the tree" ||
		not_ok "$fx: the clean runs open $n paths in the tree (expected more than 10)"
	i=0
	while IFS= read -r rel; do
		[ -n "$rel" ] || continue
		i=$((i + 1))
		if [ "$DISTINCT" = 1 ]; then
			shape=$rel
			if [[ $rel =~ ^proc/[0-9]+(/.*)?$ ]]; then shape=proc/PID${BASH_REMATCH[1]}
			elif [[ $rel =~ ^sys/class/net/[^/]+(/.*)?$ ]]; then shape=sys/class/net/IF${BASH_REMATCH[1]}; fi
			[ -z "${taken[$shape]:-}" ] || continue
			taken[$shape]=1
		fi
		distinct=$((distinct + 1))
		[ $((distinct % EVERY)) -eq 0 ] || continue
		rm -rf "$T" "$O/copy"
		cp -a "$P" "$T"
		if [ -d "$P/$rel" ] && [ ! -L "$P/$rel" ]; then
			cp -a "$P/$rel" "$O/copy"
			target=$O/copy
		elif [ -e "$P/$rel" ] || [ -L "$P/$rel" ]; then
			target=$O/marker
		else
			target=$O/absent/x
		fi
		mkdir -p "$T/$(dirname "$rel")"
		rm -rf "${T:?}/$rel"
		ln -s "$target" "$T/$rel"
		SNAP=$(outside_snap)
		tried=$((tried + 1))
		# shellcheck disable=SC2046 # the command names, one word each
		run_cmds "$fx.$i" "$profile" $(cmds_for "$fx" "$rel")
		if escaped "$fx.$i"; then
			escapes=$((escapes + 1))
			not_ok "$fx: /$rel as a link to $target: a run reached outside the tree"
		fi
		rm -f "$TMP/$fx.$i".*
	done <<EOF
$list
EOF
	rm -rf "$O/copy"
done

# The tree itself swapped for a link to a decoy outside while apply waits
# for the lock (flock(1) holds it on the tree, which is below a 0700 $TMP):
# the run stays in the directory it opened first (the tree, moved aside),
# nothing outside is opened or changed.
if command -v flock >/dev/null 2>&1; then
	rm -rf "$T" "$T.old" "$O/decoy"
	cp -a "$TMP/pristine-garage-vm" "$T"
	cp -a "$TMP/pristine-garage-vm" "$O/decoy"
	SNAP=$(outside_snap)
	flock "$T" sh -c "sleep 1; mv '$T' '$T.old'; ln -s '$O/decoy' '$T'; sleep 0.5" &
	holder=$!
	for _ in $(seq 100); do flock -n "$T" true 2>/dev/null || break; sleep 0.05; done
	strace -f -qq -y -s 256 -e trace=%file,%desc -o "$TMP/swap.apply.trace" \
		"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$T" --profile garage --wait 10 \
		--set workload.conn_rate=570 apply >"$TMP/swap.apply.out" 2>&1 </dev/null
	rc=$?
	wait "$holder"
	runs=$((runs + 1))
	if escaped swap; then
		not_ok "the tree swapped for a link while apply waits: a run reached outside the tree"
	else ok "the tree swapped for a link while apply waits: the run stays in the tree it opened"; fi
	# The Garage VM's plan writes its sysctl.d file: into the tree first opened.
	if [ $rc -eq 0 ] && [ -f "$T.old/etc/sysctl.d/90-hosttune.conf" ]; then
		ok "the tree swapped while apply waits: the writes land in the tree first opened"
	else not_ok "the tree swapped while apply waits: the writes land in the tree first opened" \
		"exit $rc: $(head -n 3 "$TMP/swap.apply.out")"; fi
	rm -rf "$T" "$T.old" "$O/decoy"
fi

echo "# paths tried: $tried (every $EVERY of $distinct$([ "$DISTINCT" = 1 ] && echo " distinct")); runs: $runs; escapes found: $escapes"
# More than 20: the three fixtures give 172 distinct paths, 28 of them at every sixth.
[ "$tried" -gt 20 ] && ok "paths tried: $tried" || not_ok "only $tried paths tried"
[ "$escapes" -eq 0 ] && ok "no run left the tree ($runs runs)" || not_ok "$escapes escapes"
finish
