#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The source tree's rule (src/*/ main headers, DESIGN.md "The layout shows
# the stages"): one folder per stage, and includes go one way only:
#
#   shared/   includes nothing of the project's but shared/
#   engine/   shared/, engine/
#   collect/  shared/, engine/, collect/
#   persist/  shared/, engine/, persist/
#   cli/      everything; nothing in src/ includes cli/
#
# Every project include names its folder ("engine/rules.h"), so a grep sees
# every edge. The second half reads the built objects with nm(1): no two
# files of the library call each other (a call cycle between two files is a
# split along the wrong line).
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

# Every #include "..." of a source file: FOLDER/NAME, with FOLDER allowed.
bad=""
nincl=0
for f in "$SRC"/*/*.c "$SRC"/*/*.h; do
	stage=$(basename "$(dirname "$f")")
	ok_dirs=$(allowed "$stage")
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		nincl=$((nincl + 1))
		case "$inc" in
		*/*) dir=${inc%%/*} ;;
		*) bad="$bad ${f#"$SRC"/}:\"$inc\"(no folder)"; continue ;;
		esac
		case " $ok_dirs " in
		*" $dir "*) [ -f "$SRC/$inc" ] || bad="$bad ${f#"$SRC"/}:\"$inc\"(missing)" ;;
		*) bad="$bad ${f#"$SRC"/}:\"$inc\"" ;;
		esac
	done
done
expect_eq "every include follows the stage rule ($nincl includes read)" "" "$bad"
# The check itself can fail: a planted include against the rule is seen.
planted=$(printf '#include "cli/cli.h"\n' | sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p')
case " $(allowed engine) " in
*" ${planted%%/*} "*) not_ok "an engine/ include of cli/ would be caught" ;;
*) ok "an engine/ include of cli/ would be caught" ;;
esac

# call_cycles SYMS: "a.o <-> b.o (sym, sym)" for each pair of objects where
# each uses a symbol the other defines (SYMS lines: "OBJECT DEF|UND SYMBOL").
call_cycles() {
	awk '
		$2 == "DEF" { def[$3] = $1 }
		$2 == "UND" { und[$1, $3] = 1 }
		END {
			for (k in und) {
				split(k, q, SUBSEP)
				if (!(q[2] in def) || def[q[2]] == q[1]) continue
				edge[q[1], def[q[2]]] = q[2]
			}
			for (k in edge) {
				split(k, q, SUBSEP)
				if (((q[2], q[1]) in edge) && q[1] < q[2])
					print q[1] " <-> " q[2] " (" edge[k] ", " edge[q[2], q[1]] ")"
			}
		}' "$1" | sort
}

# The detector itself finds a planted cycle (as collect.c and collect-cpu.c were).
printf '%s\n' "collect.o DEF ht_root_is_live" "collect.o UND ht_collect_cpu" \
	"collect-cpu.o DEF ht_collect_cpu" "collect-cpu.o UND ht_root_is_live" \
	"util.o DEF ht_root_path" "collect.o UND ht_root_path" >"$TMP/planted"
expect_eq "a planted call cycle is found" \
	"collect-cpu.o <-> collect.o (ht_root_is_live, ht_collect_cpu)" "$(call_cycles "$TMP/planted")"

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
	expect_eq "no two library files call each other ($nobj objects read)" "" "$(cat "$TMP/cycles")"
	# Every .c file but main.c is in an archive; templates.c is generated.
	nsrc=$(cd "$SRC" && ls ./*/*.c | grep -v -e '^./cli/main.c$' -e '^./persist/templates.c$' | wc -l)
	expect_eq "the archives hold every library file (sources + templates.c)" \
		"$((nsrc + 1))" "$nobj"
fi

finish
