#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The command line against its documentation (issue 10, defect 13): every
# option --help lists is in hosttune(8) and accepted, no short option is
# accepted that --help does not list, a missing argument names the option,
# and every command refuses the options hosttune(8)'s OPTIONS BY COMMAND
# table does not give it: one line naming the option and the commands it
# applies to, exit 2. revert --format json prints one JSON object.
# Nothing here runs a command against this host: every accepted option is
# probed with a --root (or --facts) that does not exist, which stops the run
# before anything is read or written.
. "$(dirname "$0")/lib.sh"

MAN=$HT_TESTS_DIR/../man/hosttune.8.scd
U=" (hosttune --help lists the usage)"
COMMANDS="audit facts explain rules profiles plan apply revert verify watch"
"$HOSTTUNE" --help >"$TMP/help"
expect_eq "--help exits 0" 0 $?

# run ARGS...: $out (stdout), $err (stderr), $rc
run() {
	out=$("$HOSTTUNE" "$@" 2>"$TMP/err")
	rc=$?
	err=$(cat "$TMP/err")
}
# refused DESCRIPTION EXPECTED-STDERR ARGS...: exit 2, that one line, nothing on stdout
refused() {
	d=$1
	e=$2
	shift 2
	run "$@"
	expect_eq "$d: exit 2" 2 "$rc"
	expect_eq "$d: message" "$e" "$err"
	expect_eq "$d: nothing on stdout" "" "$out"
}

# ---- the options --help lists, and hosttune(8) ----
# "  -p, --profile NAME    ..." or "      --rules DIR       ...": the option
# lines of --help's Options section, up to its first blank line.
sed -n '/^Options:$/,/^$/p' "$TMP/help" | grep -E '^ +(-[a-zA-Z], )?--[a-z-]+' >"$TMP/optlines"
LONGS=$(sed -E 's/^ +(-[a-zA-Z], )?--([a-z-]+).*/\2/' "$TMP/optlines")
# those followed by an argument word in capitals: "--profile NAME"
WITH_ARG=$(sed -nE 's/^ +(-[a-zA-Z], )?--([a-z-]+) [A-Z].*/\2/p' "$TMP/optlines")
# 33 with --no-evaluate (explain) and --facts-max-age (audit of old facts).
expect_eq "--help lists 33 options" 33 "$(echo "$LONGS" | wc -l)"
for l in $LONGS; do
	if grep -q -- "\*--$l\*\|\*-[a-zA-Z], --$l\*" "$MAN"; then ok "--$l: in hosttune(8) OPTIONS"
	else not_ok "--$l: in hosttune(8) OPTIONS"; fi
done
# And the other way: every --NAME in bold in hosttune(8)'s OPTIONS is in --help.
sed -n '/^# OPTIONS$/,/^## OPTIONS BY COMMAND$/p' "$MAN" | grep -oE '^\*(-[a-zA-Z], )?--[a-z-]+' |
	sed -E 's/.*--//' | sort -u >"$TMP/man-longs"
for l in $(cat "$TMP/man-longs") $(grep -oE '^\*--[a-z-]+\*, \*--[a-z-]+' "$MAN" | sed -E 's/.*--//'); do
	case " $(echo $LONGS) " in
	*" $l "*) ok "hosttune(8) --$l: in --help" ;;
	*) not_ok "hosttune(8) --$l: in --help" ;;
	esac
done

# ---- short options: exactly the letters --help lists ----
SHORTS=$(sed -nE 's/^ +-([a-zA-Z]), --.*/\1/p' "$TMP/optlines" | tr -d '\n')
expect_eq "short options --help lists" "rfFpsvqnhV" "$(echo "$SHORTS" | tr -d ' ')"
for c in a b c d e f g h i j k l m n o p q r s t u v w x y z \
	A B C D E F G H I J K L M N O P Q R S T U V W X Y Z 0 1 2 3 4 5 6 7 8 9; do
	run -"$c" x rules
	case $SHORTS in
	*"$c"*)
		case $err in
		"hosttune: unknown option"*) not_ok "-$c is documented and accepted" "$err" ;;
		*) ok "-$c is documented and accepted" ;;
		esac ;;
	*)
		expect_eq "-$c is not documented: refused" "2 hosttune: unknown option '-$c'$U" \
			"$rc $err" ;;
	esac
done

# ---- a missing argument names the long option, for the short form too ----
expect_eq "options with an argument" "root rules format color facts profile set fail-on facts-max-age output observed only state wait interval sample duration record config" \
	"$(echo $WITH_ARG)"
for l in $WITH_ARG; do
	refused "--$l without its argument" "hosttune: --$l: missing argument$U" --"$l"
	refused "--$l without its argument, after the command" "hosttune: --$l: missing argument$U" \
		audit --"$l"
	s=$(sed -nE "s/^ +-([a-zA-Z]), --$l .*/\1/p" "$TMP/optlines")
	[ -n "$s" ] && refused "-$s without its argument" "hosttune: --$l: missing argument$U" -"$s"
done
# An option that takes no argument given one with '='.
for l in $LONGS; do
	case " $(echo $WITH_ARG) " in *" $l "*) continue ;; esac
	refused "--$l=yes" "hosttune: --$l: takes no argument, got 'yes'$U" --"$l"=yes audit
done
# An abbreviation of two options: --p is --profile or --persist-only (--help order).
refused "ambiguous --p" "hosttune: ambiguous option '--p': --profile, --persist-only$U" --p x audit
refused "unknown --bogus=1" "hosttune: unknown option '--bogus=1'$U" --bogus=1 audit
refused "abbreviation with an argument it does not take" \
	"hosttune: --force: takes no argument, got 'yes'$U" --forc=yes apply
# Inside a cluster of short options, after a long option: still the letter.
refused "-z inside -nz after --force" "hosttune: unknown option '-z'$U" --force -nz apply
refused "-R (--rules has no short form) after --force" "hosttune: unknown option '-R'$U" \
	--force -R x apply

# ---- which command takes which option: hosttune(8) against the binary ----
# The list "*COMMAND*" then a tab and "*--opt* *--opt* ..." in OPTIONS BY COMMAND.
sed -n '/^## OPTIONS BY COMMAND$/,/^# /p' "$MAN" | awk '
	/^\*[a-z]+\*$/ { cmd = $1; gsub(/\*/, "", cmd) }
	/^\t/ && cmd != "" { line = cmd
		for (i = 1; i <= NF; i++) { w = $i; gsub(/\*/, "", w); if (w ~ /^--/) line = line " " w }
		print line; cmd = "" }' >"$TMP/table"
expect_eq "hosttune(8) has a row for each command" "$COMMANDS" "$(cut -d' ' -f1 "$TMP/table" | tr '\n' ' ' | sed 's/ $//')"
# --help's table: "  apply     --profile ... (--dry-run: --facts)", continued lines indented.
sed -n '/^the other options only these commands/,/^$/p' "$TMP/help" | sed 1d | awk '
	/^  [a-z]/ { if (line != "") print line; line = $1 }
	{ for (i = 1; i <= NF; i++) if ($i ~ /^--[a-z-]+$/) line = line " " $i }
	END { if (line != "") print line }' >"$TMP/help-table"
# --help adds "(--dry-run: --facts)" to apply; hosttune(8) says it in prose.
sed 's/^\(apply .*\) --facts$/\1/' "$TMP/help-table" >"$TMP/help-table2"
if cmp -s "$TMP/table" "$TMP/help-table2"; then ok "--help's table is hosttune(8)'s"
else not_ok "--help's table is hosttune(8)'s" "$(diff "$TMP/table" "$TMP/help-table2")"; fi
expect_contains "--help: apply --dry-run takes --facts" "(--dry-run: --facts)" "$(cat "$TMP/help")"

# takes CMD OPT: hosttune(8) gives OPT to CMD (or every command takes it).
# The table's row of each command is read once into ROW_<command>, the row
# a grep "^CMD " of the table gave (every probe below asks it, and
# applies_to asks it for each command: 1,800 greps).
NL='
'
while IFS= read -r row; do
	c=${row%% *}
	eval "prev=\${ROW_$c-}"
	if [ -n "$prev" ]; then eval "ROW_$c=\$prev\$NL\$row"; else eval "ROW_$c=\$row"; fi
done <"$TMP/table"
takes() {
	eval "row=\${ROW_$1-}"
	case " $row " in *" $2 "*) return 0 ;; esac
	return 1
}
# applies_to OPT: "audit, facts and plan": the commands whose row has OPT, in
# the table's order, and "apply --dry-run" when plan takes it and apply does not.
applies_to() {
	set -- "$1" $(for c in $COMMANDS; do takes "$c" "$1" && echo "$c"; done)
	o=$1
	shift
	if takes plan "$o" && ! takes apply "$o"; then set -- "$@" "apply --dry-run"; fi
	list=
	i=0
	for c in "$@"; do
		i=$((i + 1))
		if [ $i -eq 1 ]; then list=$c
		elif [ $i -eq $# ]; then list="$list and $c"
		else list="$list, $c"; fi
	done
	echo "$list"
}
# arg OPT: a valid argument for OPT, or nothing
arg() {
	case $1 in
	--facts) echo "$TMP/nope.facts" ;;
	--profile) echo default ;;
	--set) echo workload.burst=2 ;;
	--fail-on) echo warning ;;
	--observed | --state | --record | --output) echo "$TMP/file" ;;
	--only) echo conntrack.max ;;
	--interval | --duration | --wait | --sample | --facts-max-age) echo 1s ;;
	esac
}
GLOBAL="--root --rules --format --color --config --no-config --help --version"
# Every option with every command; on an AddressSanitizer build (the
# distcheck run, whose runs are slower and which looks for memory errors on
# the same code paths) each option with the first command that takes it
# and the first that refuses it: the option's own argument parsing and
# both outcomes of the table's lookup (CLI_OPTIONS_ALL=1: every command).
if [ "${CLI_OPTIONS_ALL:-}" != 1 ] && grep -aq __asan_init "$HOSTTUNE" 2>/dev/null; then
	PAIRS=sample
else PAIRS=all; fi
for o in $LONGS; do
	o=--$o
	case " $GLOBAL " in *" $o "*) continue ;; esac
	a=$(arg "$o")
	took= refusedby=
	for c in $COMMANDS; do
		if [ $PAIRS = sample ]; then
			if takes "$c" "$o"; then [ -z "$took" ] || continue; took=$c
			else [ -z "$refusedby" ] || continue; refusedby=$c; fi
		fi
		x=
		[ "$c" = explain ] && x=conntrack.max
		# The probe: a --facts file or a --root that does not exist: exit 2
		# before anything is read, when the option is accepted.
		if [ "$o" = --facts ]; then
			probe="--rules $HT_RULES_DIR"
			accepted="hosttune: $TMP/nope.facts: No such file or directory"
		else
			probe="--root $TMP/nope"
			accepted="hosttune: --root $TMP/nope: No such file or directory"
		fi
		# shellcheck disable=SC2086
		run $probe $o $a "$c" $x
		if takes "$c" "$o"; then
			expect_eq "$c takes $o" "2 $accepted" "$rc $err"
		else
			expect_eq "$c refuses $o" "2 hosttune: $o applies to $(applies_to "$o"), not to $c$U" \
				"$rc $err"
		fi
	done
done
# apply --dry-run is plan: it takes --facts (here a missing file: exit 2 on reading it).
run --rules "$HT_RULES_DIR" --facts "$TMP/nope.facts" --dry-run apply
expect_eq "apply --dry-run takes --facts" "2 hosttune: $TMP/nope.facts: No such file or directory" \
	"$rc $err"
# The examples of the issue, with their messages spelled out.
refused "audit --interval" "hosttune: --interval applies to watch, not to audit$U" --interval 5s audit
refused "audit --force" "hosttune: --force applies to apply, not to audit$U" audit --force
refused "watch --observed" "hosttune: --observed applies to audit, plan, apply and verify, not to watch$U" \
	--observed x watch
refused "facts --observed" "hosttune: --observed applies to audit, plan, apply and verify, not to facts$U" \
	--observed x facts
refused "audit --record" "hosttune: --record applies to watch, not to audit$U" --record x audit
# audit reads the drop counters of the last apply from the state file.
refused "facts --state" "hosttune: --state applies to audit, apply, revert and verify, not to facts$U" \
	--state x facts
refused "verify --only" "hosttune: --only applies to plan and apply, not to verify$U" --only x verify
refused "verify --facts" \
	"hosttune: --facts applies to audit, facts, explain, profiles, plan and apply --dry-run, not to verify$U" \
	--facts x verify
refused "-n with audit (the long name)" "hosttune: --dry-run applies to apply, not to audit$U" -n audit
# The first option given that the command does not take is the one named.
refused "two options audit does not take" "hosttune: --duration applies to watch, not to audit$U" \
	--duration 5s --force audit
# --format json: every command prints JSON; rules lists the rules (id, title,
# kind, target), explain one rule with its keys' text (issue 13: they refused).
run --rules "$HT_RULES_DIR" --format json rules
expect_eq "rules --format json: exit 0" 0 "$rc"
printf '%s\n' "$out" >"$TMP/rules.json"
expect_eq "rules --format json: every rule, as rules lists them" \
	"$("$HOSTTUNE" --rules "$HT_RULES_DIR" rules | awk '{print $1}')" \
	"$(jq -r '.rules[].id' "$TMP/rules.json")"
run --rules "$HT_RULES_DIR" --format json --no-evaluate explain conntrack.max
expect_eq "explain --format json: exit 0" 0 "$rc"
printf '%s\n' "$out" >"$TMP/explain.json"
expect_eq "explain --format json: the rule's target and where it is defined" \
	"conntrack.max sysctl net.netfilter.nf_conntrack_max conntrack.rules" \
	"$(jq -r '.rule | "\(.id) \(.kind) \(.target) \(.file | split("/") | last)"' "$TMP/explain.json")"
run --rules "$HT_RULES_DIR" --format text rules
expect_eq "rules --format text: exit 0" 0 "$rc"

# ---- revert --format json: what was reverted, as one object ----
# The Garage VM's tree: apply sets nf_conntrack_max, TIME_WAIT and hashsize
# and writes three files (apply-garage.sh); revert restores the three live
# values to the fixture's own (read from it here) and removes the files.
cp -a "$FIXTURES/garage-vm/root" "$TMP/g"
NF=proc/sys/net/netfilter
max0=$(cat "$TMP/g/$NF/nf_conntrack_max")
tw0=$(cat "$TMP/g/$NF/nf_conntrack_tcp_timeout_time_wait")
hs0=$(cat "$TMP/g/sys/module/nf_conntrack/parameters/hashsize")
"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/g" --profile garage apply >/dev/null
expect_eq "apply on the Garage tree: exit 0" 0 $?
run --rules "$HT_RULES_DIR" --root "$TMP/g" --format json revert
expect_eq "revert --format json: exit 0" 0 "$rc"
expect_eq "revert --format json: nothing on stderr" "" "$err"
printf '%s\n' "$out" >"$TMP/revert.json"
if jq -e . "$TMP/revert.json" >/dev/null 2>&1; then ok "revert --format json: valid JSON"
else not_ok "revert --format json: valid JSON" "$out"; fi
expect_eq "revert JSON: changed, complete, root" "true true $TMP/g" \
	"$(jget "$TMP/revert.json" '"\(.changed) \(.complete) \(.root)"')"
expect_eq "revert JSON: the live values restored to the fixture's" \
	"module.nf_conntrack.hashsize=$hs0 net.netfilter.nf_conntrack_max=$max0 net.netfilter.nf_conntrack_tcp_timeout_time_wait=$tw0" \
	"$(jget "$TMP/revert.json" '[.actions[] | select(.kind == "live" and .action == "restored") | "\(.target)=\(.value)"] | sort | join(" ")')"
expect_eq "revert JSON: the three files removed" \
	"/etc/modprobe.d/hosttune.conf /etc/modules-load.d/hosttune.conf /etc/sysctl.d/90-hosttune.conf" \
	"$(jget "$TMP/revert.json" '[.actions[] | select(.kind == "file" and .action == "removed") | .target] | sort | join(" ")')"
expect_eq "revert JSON: the tree's live files are back" "$max0 $tw0 $hs0" \
	"$(cat "$TMP/g/$NF/nf_conntrack_max") $(cat "$TMP/g/$NF/nf_conntrack_tcp_timeout_time_wait") $(cat "$TMP/g/sys/module/nf_conntrack/parameters/hashsize")"
expect_eq "revert JSON: no action of an unknown form" "0" \
	"$(jget "$TMP/revert.json" '[.actions[] | select(.action == "other" or .kind == null or .target == null)] | length')"
# Each action is a line of the text output: the same revert in text, line for line.
cp -a "$FIXTURES/garage-vm/root" "$TMP/t"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/t" --profile garage apply >/dev/null
"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/t" revert | sed 1d >"$TMP/revert.txt"
jget "$TMP/revert.json" '.actions[].message' >"$TMP/revert.msgs"
if cmp -s "$TMP/revert.txt" "$TMP/revert.msgs"; then ok "revert JSON: one action a text line, in order"
else not_ok "revert JSON: one action a text line, in order" "$(diff "$TMP/revert.txt" "$TMP/revert.msgs")"; fi
# A file edited since apply is left, with the reason.
"$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$TMP/g" --profile garage apply >/dev/null
echo "# local edit" >>"$TMP/g/etc/sysctl.d/90-hosttune.conf"
run --rules "$HT_RULES_DIR" --root "$TMP/g" --format json revert
printf '%s\n' "$out" >"$TMP/revert2.json"
expect_eq "revert JSON: an edited file is left, with why" \
	"left file /etc/sysctl.d/90-hosttune.conf edited since hosttune wrote it" \
	"$(jget "$TMP/revert2.json" '.actions[] | select(.action == "left" and .kind == "file") | "\(.action) \(.kind) \(.target) \(.reason)"')"
# Nothing to revert: for automation "ok, nothing changed" (issue 13; exit 2
# before): exit 0, nothing on stderr, one object that changed nothing.
run --rules "$HT_RULES_DIR" --root "$TMP/g" --format json revert
expect_eq "revert --format json with nothing to revert: exit 0, nothing on stderr" "0 " "$rc $err"
printf '%s\n' "$out" >"$TMP/revert3.json"
expect_eq "revert --format json with nothing to revert: changed false, complete, no action" \
	"1 false true 0" \
	"$(jq -rs '"\(length) \(.[0].changed) \(.[0].complete) \(.[0].actions | length)"' "$TMP/revert3.json")"
run --rules "$HT_RULES_DIR" --root "$TMP/g" revert
expect_eq "revert with nothing to revert: exit 0, one line saying so" \
	"0 $TMP/g/var/lib/hosttune/state: no state file: nothing to revert" "$rc $out"

finish
