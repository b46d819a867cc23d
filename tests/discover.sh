#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Finding one's way: hosttune COMMAND --help; explain with a finding's name
# as the table shows it (RULE[INSTANCE]); rules without the named values
# unless --all; durations as systemd.time(7) writes them; the bash
# completion (complete -p, compgen).
. "$(dirname "$0")/lib.sh"

COMMANDS="audit facts explain rules profiles plan apply revert verify watch"

# ---- COMMAND --help ----------------------------------------------------------
# The global help's table "  CMD  --opt --opt ..." lists what each command
# takes besides the options of every command; CMD --help lists those same
# options, one line each, and no other.
"$HOSTTUNE" --help >"$TMP/help"
for c in $COMMANDS; do
	"$HOSTTUNE" "$c" --help >"$TMP/help.$c"
	rc=$?
	expect_eq "$c --help: exit 0, its own usage line" "0 Usage: hosttune [OPTIONS] $c" \
		"$rc $(head -n 1 "$TMP/help.$c" | sed 's/ RULE$//')"
	want=$(sed -n '/^the other options only these commands/,/^$/p' "$TMP/help" |
		awk -v c="$c" '$1 == c { on = 1; $1 = "" } on && /^  [a-z]/ && $1 != c && $1 != "" { if (!/^   /) on = 0 }
			on { print }' | grep -oE -- '--[a-z-]+' | sort -u)
	got=$(sed -n "/^Options of $c:/,/^\$/p" "$TMP/help.$c" | grep -oE -- '^ +(-[a-zA-Z], )? *--[a-z-]+' |
		grep -oE -- '--[a-z-]+' | sort)
	expect_eq "$c --help: the options the global table gives $c" "$want" "$got"
done
expect_contains "audit --help: -v" "-v, --verbose" "$(cat "$TMP/help.audit")"
expect_contains "explain --help: RULE[INSTANCE]" "listen.backlog[2024]" "$(cat "$TMP/help.explain")"
expect_contains "watch --help: TIME as systemd.time(7)" "TIME is a duration as systemd.time(7)" \
	"$(cat "$TMP/help.watch")"
expect_eq "audit --help: --sample TIME, and what TIME is" "1 1" \
	"$(grep -c -- '--sample TIME' "$TMP/help.audit") $(grep -c 'TIME is' "$TMP/help.audit")"
expect_eq "rules --help says nothing of TIME (no such option)" 0 "$(grep -c 'TIME is' "$TMP/help.rules")"
expect_contains "every command's help names --config" "--config FILE, --no-config" "$(cat "$TMP/help.rules")"
# --help before the command, and with other options: the same.
expect_eq "--help audit = audit --help" "$(cat "$TMP/help.audit")" \
	"$("$HOSTTUNE" --help --profile garage audit)"
"$HOSTTUNE" --help nosuch >/dev/null 2>"$TMP/err"
expect_eq "--help with an unknown command: usage error" \
	"2 hosttune: unknown command 'nosuch' (hosttune --help lists the usage)" "$? $(cat "$TMP/err")"

# ---- explain RULE[INSTANCE] ------------------------------------------------------
# The formulas only (--no-evaluate): this machine's own numbers are no fixture.
ht --no-evaluate explain listen.backlog >"$TMP/plain"
ht --no-evaluate explain 'listen.backlog[2024]' >"$TMP/inst"
expect_eq "explain RULE[INSTANCE]: exit 0" 0 $?
expect_eq "explain RULE[INSTANCE]: the rule's text and one instance line" \
	"$(cat "$TMP/plain")" "$(grep -v '^  instance ' "$TMP/inst")"
expect_eq "explain RULE[INSTANCE]: the instance line" \
	"  instance   2024 (the rule is evaluated for each listening port)" "$(grep '^  instance ' "$TMP/inst")"
expect_eq "explain nic.queues[eth0] --format json" "nic.queues eth0" \
	"$(ht --format json --no-evaluate explain 'nic.queues[eth0]' | jq -r '"\(.rule.id) \(.instance)"')"
ht explain 'conntrack.max[eth0]' >/dev/null 2>"$TMP/err"
expect_eq "an instance for a rule without any: exit 2" \
	"2 hosttune: conntrack.max[eth0]: the rule has no instances, '[eth0]' names none (explain conntrack.max)" \
	"$? $(cat "$TMP/err")"
ht explain 'nosuch[1]' >/dev/null 2>"$TMP/err"
expect_eq "no such rule, with an instance" "2 hosttune: no rule 'nosuch' (hosttune rules lists them)" \
	"$? $(cat "$TMP/err")"
# Every finding name of an audit explains (the table's first column).
ht --root "$FIXTURES/listen-host/root" audit 2>/dev/null | sed -n '/^RULE /,/^$/p' | sed '1d;$d' |
	awk '{ print $1 }' >"$TMP/names"
bad=
while read -r n; do
	ht --root "$FIXTURES/listen-host/root" explain "$n" >/dev/null 2>&1 || bad="$bad $n"
done <"$TMP/names"
expect_eq "every name in an audit table explains ($(wc -l <"$TMP/names") names, $(grep -c '\[' "$TMP/names") with an instance)" "" "$bad"

# ---- rules and rules --all ------------------------------------------------------
ht rules >"$TMP/rules"
ht rules --all >"$TMP/rules-all"
expect_eq "rules: no named value" 0 "$(awk '$2 == "value"' "$TMP/rules" | wc -l)"
expect_eq "rules: every rule of --all that is not a value" \
	"$(awk '$2 != "value"' "$TMP/rules-all")" "$(cat "$TMP/rules")"
expect_eq "rules --format json: the same ids" "$(awk '{ print $1 }' "$TMP/rules")" \
	"$(ht --format json rules | jq -r '.rules[].id')"
expect_eq "rules --all --format json: every rule" "$(wc -l <"$TMP/rules-all")" \
	"$(ht --format json rules --all | jq '.rules | length')"
echo "# rules: $(wc -l <"$TMP/rules") lines; --all: $(wc -l <"$TMP/rules-all")"

# ---- durations --------------------------------------------------------------------
# Accepted: the run goes on to the --root check (a missing tree, exit 2).
for t in 90 250ms 5m "1h 30min" "2min 5s" 1h30m 1.5h; do
	"$HOSTTUNE" --root "$TMP/nope" --wait "$t" revert >/dev/null 2>"$TMP/err"
	expect_eq "--wait '$t' accepted" "2 hosttune: --root $TMP/nope: No such file or directory" \
		"$? $(cat "$TMP/err")"
done
"$HOSTTUNE" --root "$TMP/nope" --duration "1h 30min" --interval "2min 5s" watch >/dev/null 2>"$TMP/err"
expect_eq "watch --duration '1h 30min' --interval '2min 5s' accepted" \
	"2 hosttune: --root $TMP/nope: No such file or directory" "$? $(cat "$TMP/err")"
"$HOSTTUNE" --root "$TMP/nope" --wait "5 parsecs" revert >/dev/null 2>"$TMP/err"
expect_eq "--wait '5 parsecs' refused" \
	"2 hosttune: --wait: expected a time such as 10s, 2min or 1min 30s (0: do not wait; at most 1 day), got '5 parsecs' (hosttune --help lists the usage)" \
	"$? $(cat "$TMP/err")"
# 1d 1s = 86401 s, one second over a day.
"$HOSTTUNE" --root "$TMP/nope" --interval "1d 1s" watch >/dev/null 2>"$TMP/err"
expect_eq "--interval '1d 1s' refused (over a day)" 2 $?

# ---- bash completion ----------------------------------------------------------------
if ! command -v bash >/dev/null 2>&1; then
	echo "# no bash: the completion checks are skipped"
	finish
	exit
fi
COMP=${HT_COMPLETION:-$HT_TESTS_DIR/../completion/hosttune.in}
sed -e "s|@PKGDATADIR@|$TMP/share|g" -e "s|@SYSCONFDIR@|/etc|g" "$COMP" >"$TMP/completion"
# A fake installed tree: the profiles from the source rules.
mkdir -p "$TMP/share/rules" && cp -r "$HT_RULES_DIR/profiles" "$TMP/share/rules/"
mkdir -p "$TMP/bin" && printf '#!/bin/sh\nexec "%s" "$@"\n' "$HOSTTUNE" >"$TMP/bin/hosttune" &&
	chmod +x "$TMP/bin/hosttune"
# comp WORD...: what the completion offers for the last word, sorted, on one line.
cat >"$TMP/comp.bash" <<EOT
. "$TMP/completion"
PATH="$TMP/bin:\$PATH"
comp() {
	COMP_WORDS=("\$@"); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=()
	_hosttune
	printf '%s\n' "\${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ \$//'
}
EOT
cb() { bash -c ". '$TMP/comp.bash'; $1"; }
expect_eq "complete -p: registered" "complete -F _hosttune hosttune" "$(cb 'complete -p hosttune')"
expect_eq "commands" "apply audit explain facts plan profiles revert rules verify watch" "$(cb 'comp hosttune ""')"
expect_eq "commands starting with a" "apply audit" "$(cb 'comp hosttune a')"
# audit's own options and those of every command (audit --help).
expect_eq "audit --" "$("$HOSTTUNE" audit --help | grep -oE -- '--[a-z][a-z-]*' | sort -u | grep -v -- '--dry-run' | tr '\n' ' ' | sed 's/ $//')" \
	"$(cb 'comp hosttune audit --')"
expect_eq "audit --f" "--facts --facts-max-age --fail-on --format" "$(cb 'comp hosttune audit --f')"
expect_eq "watch --: no audit option" "" "$(cb 'comp hosttune watch --' | tr ' ' '\n' | grep -x -- '--observed\|--fail-on')"
expect_eq "rules --a" "--all" "$(cb 'comp hosttune rules --a')"
# A duration (systemd.time(7)): nothing to list, not the files here.
for opt in --sample --interval --duration --wait; do
	expect_eq "$opt: a duration, no file offered" "" "$(cd "$TMP" && cb "comp hosttune audit $opt ''")"
done
expect_eq "--format values" "json prometheus text" "$(cb 'comp hosttune --format ""')"
expect_eq "--format=j (split at =)" "json" "$(cb 'comp hosttune --format = j')"
expect_eq "--fail-on values" "critical info warning" "$(cb 'comp hosttune audit --fail-on ""')"
expect_eq "--profile: the installed profiles" "default garage minio registry" \
	"$(cb 'comp hosttune --profile ""')"
mkdir -p "$TMP/site/profiles" && : >"$TMP/site/profiles/lab.profile"
expect_eq "--profile with --rules DIR: that directory's" "lab" \
	"$(cb "comp hosttune --rules '$TMP/site' audit --profile ''")"
expect_eq "--set names from the profiles" "workload.conn_rate=" \
	"$(cb 'comp hosttune audit --set workload.con')"
# Rule ids: hosttune rules (no named values), with the --rules given.
expect_eq "explain: the rule ids of hosttune rules" \
	"$(awk '{ print $1 }' "$TMP/rules" | sort | tr '\n' ' ' | sed 's/ $//')" \
	"$(cb "comp hosttune --rules '$HT_RULES_DIR' explain ''")"
expect_eq "explain list<TAB>" "listen.backlog listen.somaxconn" \
	"$(cb "comp hosttune --rules '$HT_RULES_DIR' explain list")"
expect_eq "explain RULE <TAB>: one rule only" "" \
	"$(cb "comp hosttune --rules '$HT_RULES_DIR' explain conntrack.max ''")"
expect_eq "--only: after the comma" "conntrack.max,conntrack.buckets" \
	"$(cb "comp hosttune --rules '$HT_RULES_DIR' plan --only conntrack.max,conntrack.bu")"
mkdir -p "$TMP/dirs/alpha" && : >"$TMP/dirs/afile"
expect_eq "--root: directories" "$TMP/dirs/alpha" "$(cb "comp hosttune --root '$TMP/dirs/a'")"
expect_eq "--facts: files" "$TMP/dirs/afile $TMP/dirs/alpha" "$(cb "comp hosttune audit --facts '$TMP/dirs/a'")"
# The word after an option's value is the command: --profile garage a<TAB>.
expect_eq "after --profile VALUE: commands" "apply audit" "$(cb 'comp hosttune --profile garage a')"
# compgen through the registered function, as bash runs it.
expect_eq "compgen through complete -F" "audit" \
	"$(bash -c ". '$TMP/comp.bash'; COMP_WORDS=(hosttune au); COMP_CWORD=1; _hosttune; compgen -W \"\${COMPREPLY[*]}\" -- au")"

finish
