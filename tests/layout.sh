#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The source tree's rule (line 2 of each folder's main header, README.md
# "Layout"): one folder per stage, and includes go one way only:
#
#   shared/   includes nothing of the project's but shared/
#   engine/   shared/, engine/
#   collect/  shared/, engine/, collect/
#   persist/  shared/, engine/, persist/
#   cli/      everything; nothing in src/ includes cli/
#
# Every project include names its folder ("engine/rules.h"), so a grep sees
# every edge; a project folder in <...> or a path with ".." is refused too.
# Two narrower rules: engine/rules-internal.h stays in engine/, and
# cli/report.c includes nothing of persist/. The second half reads the
# built objects with nm(1): no two files of the library call each other (a
# call cycle between two files is a split along the wrong line).
. "$(dirname "$0")/lib.sh"

SRC=$HT_TESTS_DIR/../src
: "${HT_BUILD_TESTS_DIR:=$HT_TESTS_DIR}"
BUILD_SRC=$HT_BUILD_TESTS_DIR/../src

allowed() {
	case "$1" in
	shared) echo "shared" ;;
	engine) echo "shared engine" ;;
	collect) echo "shared engine collect" ;;
	persist) echo "shared engine persist" ;;
	cli) echo "shared engine collect persist cli" ;;
	esac
}

# The five stages, and nothing else, under src/.
dirs=$(cd "$SRC" && find . -mindepth 1 -maxdepth 1 -type d -name '[!.]*' | sed 's|^\./||' | sort | tr '\n' ' ')
expect_eq "src/ holds one folder per stage" "cli collect engine persist shared " "$dirs"
loose=$(cd "$SRC" && find . -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \) | sort | tr '\n' ' ')
expect_eq "no source file outside a stage folder" "" "$loose"

# Each folder's main header states the rule in one line at its top (line 2,
# after the licence line), naming every folder the table above allows.
for pair in shared/util.h engine/rules.h collect/collect.h persist/persist.h cli/cli.h; do
	stage=${pair%%/*}
	line=$(sed -n 2p "$SRC/$pair")
	case "$line" in
	"/* $stage/: "*" Rule: "*" */")
		missing=""
		names=$(allowed "$stage")
		case "$line" in
		*"every stage"*"nothing in src/ includes cli/"*) [ "$stage" = cli ] && names="" ;;
		esac
		for d in $names; do
			case "$line" in *"$d/"*) ;; *) missing="$missing $d/" ;; esac
		done
		expect_eq "$pair states the rule of $stage/ in one line" "" "$missing" ;;
	*) not_ok "$pair states the rule of $stage/ in one line" "expected '/* $stage/: ... Rule: ... */' on line 2" "got: $line" ;;
	esac
done

# include_violations DIR: one word per include of DIR/*/*.{c,h} against the
# rule: "FILE:NAME" for a folder not allowed, (no folder), (..), (missing),
# or (<>) for a project folder in angle brackets.
include_violations() {
	for f in "$1"/*/*.c "$1"/*/*.h; do
		[ -f "$f" ] || continue
		stage=$(basename "$(dirname "$f")")
		ok_dirs=$(allowed "$stage")
		for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\(\(shared\|engine\|collect\|persist\|cli\)\/[^>]*\)>.*/\1/p' "$f"); do
			printf ' %s:<%s>(<>)' "${f#"$1"/}" "$inc"
		done
		for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
			case "$inc" in
			*..*) printf ' %s:"%s"(..)' "${f#"$1"/}" "$inc"; continue ;;
			*/*) dir=${inc%%/*} ;;
			*) printf ' %s:"%s"(no folder)' "${f#"$1"/}" "$inc"; continue ;;
			esac
			case " $ok_dirs " in
			*" $dir "*) [ -f "$1/$inc" ] || printf ' %s:"%s"(missing)' "${f#"$1"/}" "$inc" ;;
			*) printf ' %s:"%s"' "${f#"$1"/}" "$inc" ;;
			esac
		done
	done
}

include_violations "$SRC" >"$TMP/incl"
expect_eq "every include follows the stage rule" "" "$(cat "$TMP/incl")"
n=$(grep -h -c '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$SRC"/*/*.[ch] | awk '{ s += $1 } END { print s }')
if [ "$n" -ge 100 ]; then ok "the include check read the tree ($n project includes)"
else not_ok "the include check read the tree" "only $n includes"; fi

# The same check over a planted tree finds every way around the rule.
mkdir -p "$TMP/src/engine" "$TMP/src/cli" "$TMP/src/shared"
printf '#pragma once\n' >"$TMP/src/cli/cli.h"
printf '#pragma once\n' >"$TMP/src/engine/rules.h"
printf '%s\n' '#include "engine/rules.h"' '#include "cli/cli.h"' '#  include <cli/cli.h>' \
	'#include "engine/../cli/cli.h"' '#include "rules.h"' '#include "engine/gone.h"' \
	>"$TMP/src/engine/x.c"
printf '%s\n' '#include "engine/rules.h"' >"$TMP/src/shared/y.c"
expect_eq "a planted tree: every violation is found" \
	' engine/x.c:<cli/cli.h>(<>) engine/x.c:"cli/cli.h" engine/x.c:"engine/../cli/cli.h"(..) engine/x.c:"rules.h"(no folder) engine/x.c:"engine/gone.h"(missing) shared/y.c:"engine/rules.h"' \
	"$(include_violations "$TMP/src")"

# Two narrower rules inside what the table allows:
#   engine/rules-internal.h (the parsed form of rules) is engine/'s alone:
#     persist/ and cli/ use engine/rules.h's accessors;
#   cli/report.c prints the fixes the plan made (engine/fix.h) and includes
#     nothing of persist/, directly or through a header it includes.
# project_includes FILE: the project headers FILE names in #include "...".
project_includes() {
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"
}

# header_closure DIR FILE: FILE (relative to DIR) and every project header it
# includes, directly or through other headers, one word each.
header_closure() {
	hc_dir=$1
	todo=$2
	seen=""
	while [ -n "$todo" ]; do
		# shellcheck disable=SC2086
		set -- $todo
		f=$1
		shift
		todo="$*"
		case " $seen " in *" $f "*) continue ;; esac
		seen="$seen $f"
		[ -f "$hc_dir/$f" ] || continue
		for inc in $(project_includes "$hc_dir/$f"); do
			todo="$todo $inc"
		done
	done
	echo "$seen"
}

# narrow_violations DIR: "FILE:NAME" for each include of DIR/*/*.{c,h}
# that breaks one of the two rules above (for report.c, the header through
# which it comes in parentheses).
narrow_violations() {
	for f in "$1"/*/*.c "$1"/*/*.h; do
		[ -f "$f" ] || continue
		rel=${f#"$1"/}
		case "$rel" in engine/*) continue ;; esac
		for inc in $(project_includes "$f"); do
			if [ "$inc" = engine/rules-internal.h ]; then
				printf ' %s:"%s"' "$rel" "$inc"
			fi
		done
	done
	[ -f "$1/cli/report.c" ] || return 0
	for inc in $(project_includes "$1/cli/report.c"); do
		for h in $(header_closure "$1" "$inc"); do
			case "$h" in
			persist/*)
				if [ "$h" = "$inc" ]; then printf ' cli/report.c:"%s"' "$h"
				else printf ' cli/report.c:"%s"(via %s)' "$h" "$inc"; fi ;;
			esac
		done
	done
}

narrow_violations "$SRC" >"$TMP/narrow.out"
expect_eq "rules-internal.h only in engine/, nothing of persist/ in cli/report.c" "" \
	"$(cat "$TMP/narrow.out")"
# The walk follows the report's headers in the real tree: cli/report.h brings engine/fix.h.
case " $(header_closure "$SRC" cli/report.h) " in
*" engine/fix.h "*) ok "the report's headers are followed (cli/report.h includes engine/fix.h)" ;;
*) not_ok "the report's headers are followed" "engine/fix.h not reached from cli/report.h" ;;
esac

# The same check over a planted tree: rules-internal.h from persist/ and cli/
# (engine/'s own use is fine), and persist/ in report.c directly and through
# a cli/ header, found; persist/ in another cli/ file is not this rule's.
mkdir -p "$TMP/narrow/engine" "$TMP/narrow/persist" "$TMP/narrow/cli"
printf '#pragma once\n' >"$TMP/narrow/engine/rules-internal.h"
printf '#pragma once\n' >"$TMP/narrow/persist/persist.h"
printf '%s\n' '#include "engine/rules-internal.h"' >"$TMP/narrow/engine/rules.c"
printf '%s\n' '#include "engine/rules-internal.h"' >"$TMP/narrow/persist/plan.c"
printf '%s\n' '#include "persist/persist.h"' >"$TMP/narrow/cli/report.h"
printf '%s\n' '#include "cli/report.h"' '#include "persist/persist.h"' \
	'#include "engine/rules-internal.h"' >"$TMP/narrow/cli/report.c"
printf '%s\n' '#include "persist/persist.h"' >"$TMP/narrow/cli/cmd-audit.c"
expect_eq "a planted tree: rules-internal.h outside engine/ and persist/ in report.c are found" \
	' cli/report.c:"engine/rules-internal.h" persist/plan.c:"engine/rules-internal.h" cli/report.c:"persist/persist.h"(via cli/report.h) cli/report.c:"persist/persist.h"' \
	"$(narrow_violations "$TMP/narrow")"

# call_cycles SYMS: "a.o b.o" for each pair of objects that reach each other
# through calls, directly or through other objects (a call cycle of any
# length; SYMS lines: "OBJECT DEF|UND SYMBOL"). Floyd-Warshall over the few
# dozen objects.
call_cycles() {
	awk '
		$2 == "DEF" { def[$3] = $1; obj[$1] = 1 }
		$2 == "UND" { und[$1, $3] = 1; obj[$1] = 1 }
		END {
			n = 0
			for (o in obj) name[n++] = o
			for (k in und) {
				split(k, q, SUBSEP)
				if ((q[2] in def) && def[q[2]] != q[1]) reach[q[1], def[q[2]]] = 1
			}
			for (m = 0; m < n; m++)
				for (i = 0; i < n; i++)
					if ((name[i], name[m]) in reach)
						for (j = 0; j < n; j++)
							if ((name[m], name[j]) in reach) reach[name[i], name[j]] = 1
			for (i = 0; i < n; i++)
				for (j = 0; j < n; j++)
					if (name[i] < name[j] && ((name[i], name[j]) in reach) &&
					    ((name[j], name[i]) in reach))
						print name[i], name[j]
		}' "$1" | sort
}

# The detector finds a planted cycle of two files (as collect.c and
# collect-cpu.c were) and one of three.
printf '%s\n' "collect.o DEF ht_root_is_live" "collect.o UND ht_collect_cpu" \
	"collect-cpu.o DEF ht_collect_cpu" "collect-cpu.o UND ht_root_is_live" \
	"util.o DEF ht_root_path" "collect.o UND ht_root_path" >"$TMP/planted"
expect_eq "a planted call cycle of two files is found" "collect-cpu.o collect.o" \
	"$(call_cycles "$TMP/planted")"
printf '%s\n' "a.o DEF fa" "a.o UND fb" "b.o DEF fb" "b.o UND fc" "c.o DEF fc" "c.o UND fa" \
	"d.o DEF fd" "d.o UND fa" >"$TMP/planted3"
expect_eq "a planted call cycle of three files is found" "a.o b.o
a.o c.o
b.o c.o" "$(call_cycles "$TMP/planted3")"

# Call cycles between two files of the libraries, from the built archives.
archives=""
for a in "$BUILD_SRC/.libs/libhosttune.a" "$BUILD_SRC/.libs/libhosttune-cli.a"; do
	[ -f "$a" ] && archives="$archives $a"
done
if [ -z "$archives" ] || ! command -v nm >/dev/null 2>&1; then
	not_ok "call cycles: the built archives and nm(1) are there" "archives:${archives:-none}"
else
	# "member DEF sym" and "member UND sym", one line each; nm -A prints
	# "ARCHIVE:MEMBER:ADDRESS T sym" and "ARCHIVE:MEMBER: U sym".
	# shellcheck disable=SC2086
	nm -A $archives 2>/dev/null | awk '
		{
			n = split($1, p, ":"); m = p[2]
			sub(/^lib[a-z_]*_la-/, "", m)
			if ($2 == "U") print m, "UND", $3
			else if ($2 ~ /^[TDBRCGSV]$/) print m, "DEF", $3
		}' >"$TMP/syms"
	call_cycles "$TMP/syms" >"$TMP/cycles"
	ndef=$(grep -c ' DEF ' "$TMP/syms")
	nund=$(grep -c ' UND ' "$TMP/syms")
	[ "$ndef" -gt 100 ] && [ "$nund" -gt 100 ] && ok "nm read definitions ($ndef) and uses ($nund)" ||
		not_ok "nm read definitions and uses" "definitions $ndef, uses $nund"
	nobj=$(awk '{ print $1 }' "$TMP/syms" | sort -u | wc -l)
	expect_eq "no library files call each other, directly or in a ring ($nobj objects read)" "" "$(cat "$TMP/cycles")"
	# Every .c file but main.c is in an archive; templates.c is generated.
	nsrc=$(cd "$SRC" && ls ./*/*.c | grep -v -e '^./cli/main.c$' -e '^./persist/templates.c$' | wc -l)
	expect_eq "the archives hold every library file (sources + templates.c)" \
		"$((nsrc + 1))" "$nobj"
fi

finish
