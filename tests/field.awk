# SPDX-License-Identifier: LGPL-2.1-or-later
# field.awk: judges one field case (tests/field/README.md).
# Input: first the audit's findings, one a line (tests/field.sh writes them
# with jq): SEVERITY-RANK TAB WAIVED TAB RULE TAB INSTANCE TAB TEXT TAB FIXTEXT,
# the rank -1 for n/a, 0 ok, 1 info, 2 warning, 3 critical, WAIVED 1 or 0,
# TEXT the title, explanation and remedy, FIXTEXT the fix's file, line, live
# path, restart, the remedy and the fix of the finding its lever names, all
# lower-cased; then the case's `expected`.
# Output: one line, "CLASS" or "CLASS<TAB>REASON; REASON...": the class of the
# first failed directive by SILENT, WRONG, UNUSABLE-FIX, FALSE-ALARM, else RIGHT.
# A directive the language does not have is an error (exit 2, FILE:LINE).
BEGIN {
	FS = "\t"
	rank["n/a"] = -1; rank["ok"] = 0; rank["info"] = 1; rank["warning"] = 2; rank["critical"] = 3
	order["SILENT"] = 1; order["WRONG"] = 2; order["UNUSABLE-FIX"] = 3; order["FALSE-ALARM"] = 4
	n = 0; worst = ""; reasons = ""
}
FNR == NR {
	n++
	f_rank[n] = $1 + 0; f_waived[n] = $2 + 0; f_rule[n] = $3; f_inst[n] = $4
	f_text[n] = $5; f_fix[n] = $6
	next
}
# glob_re GLOB: the anchored regular expression of a shell glob (* and ?).
function glob_re(g,    out, i, c) {
	out = "^"
	for (i = 1; i <= length(g); i++) {
		c = substr(g, i, 1)
		if (c == "*") out = out ".*"
		else if (c == "?") out = out "."
		else if (index("\\^$.[]|()+{}/", c)) out = out "\\" c
		else out = out c
	}
	return out "$"
}
# matches I PATTERN: finding I is one of PATTERN's (RULE or RULE[INSTANCE]).
function matches(i, pat,    r, inst, p) {
	p = index(pat, "[")
	if (p && substr(pat, length(pat)) == "]") {
		r = substr(pat, 1, p - 1)
		inst = substr(pat, p + 1, length(pat) - p - 1)
		return f_rule[i] ~ glob_re(r) && f_inst[i] ~ glob_re(inst)
	}
	return f_rule[i] ~ glob_re(pat)
}
function name(i) {
	return f_inst[i] == "" ? f_rule[i] : f_rule[i] "[" f_inst[i] "]"
}
function sevname(r) {
	return r == 3 ? "critical" : r == 2 ? "warning" : r == 1 ? "info" : r == 0 ? "ok" : "n/a"
}
function fail(class, why) {
	if (worst == "" || order[class] < order[worst]) worst = class
	reasons = reasons (reasons == "" ? "" : "; ") why
}
function bad(why) {
	printf "%s:%d: %s\n", FILENAME, FNR, why > "/dev/stderr"
	error = 1
	exit 2
}
# texts LINE: the double-quoted strings of LINE in t[1..k], lower-cased; k.
function texts(line,    k, s) {
	k = 0
	while (match(line, /"([^"\\]|\\.)*"/)) {
		s = substr(line, RSTART + 1, RLENGTH - 2)
		gsub(/\\"/, "\"", s)
		t[++k] = tolower(s)
		line = substr(line, RSTART + RLENGTH)
	}
	if (line !~ /^[ \t]*$/) bad("text after the quoted strings: " line)
	return k
}
# any TEXT-OF-FINDING K: one of t[1..K] is in it.
function any(s, k,    j) {
	for (j = 1; j <= k; j++) if (index(s, t[j])) return 1
	return 0
}
function quoted(k,    j, s) {
	s = ""
	for (j = 1; j <= k; j++) s = s (j > 1 ? " or " : "") "\"" t[j] "\""
	return s
}
# seen PATTERN: what the audit has of PATTERN, for a reason.
function seen(pat,    i, s) {
	s = ""
	for (i = 1; i <= n; i++) if (matches(i, pat)) s = s (s == "" ? "" : ", ") name(i) " " sevname(f_rank[i]) (f_waived[i] ? " (waived)" : "")
	return s == "" ? "no such finding" : s
}
{
	sub(/#.*/, "")
	if ($0 ~ /^[ \t]*$/) next
	line = $0
	sub(/^[ \t]+/, "", line)
	verb = line; sub(/[ \t].*/, "", verb)
	rest = substr(line, length(verb) + 1); sub(/^[ \t]+/, "", rest)
	if (verb == "profile") next
	if (verb == "expect" || verb == "at-most") {
		split(rest, w, /[ \t]+/)
		if (!(w[1] in rank) || w[1] == "n/a" || w[1] == "ok" && verb == "expect" || w[2] == "" || w[3] != "")
			bad(verb " takes a severity (info, warning, critical) and one RULE")
		hit = 0
		for (i = 1; i <= n; i++) {
			if (!matches(i, w[2])) continue
			if (verb == "expect" && f_rank[i] >= rank[w[1]] && !f_waived[i]) hit = 1
			if (verb == "at-most" && f_rank[i] > rank[w[1]] && !f_waived[i]) {
				hit = 1
				fail("FALSE-ALARM", "at-most " w[1] " " w[2] ": " name(i) " is " sevname(f_rank[i]))
			}
		}
		if (verb == "expect" && !hit)
			fail("SILENT", "expect " w[1] " " w[2] ": " seen(w[2]))
		next
	}
	if (verb == "says" || verb == "fix") {
		pat = rest; sub(/[ \t].*/, "", pat)
		k = texts(substr(rest, length(pat) + 1))
		if (pat == "" || substr(pat, 1, 1) == "\"" || k == 0) bad(verb " takes a RULE and one or more quoted TEXTs")
		hit = 0; cand = 0
		for (i = 1; i <= n; i++) {
			if (!matches(i, pat) || f_rank[i] < 1) continue
			cand++
			if (any(verb == "says" ? f_text[i] : f_fix[i], k)) hit = 1
		}
		if (!hit) {
			why = verb " " pat " " quoted(k) ": " (cand ? "not in " cand " finding(s) at info or above" : seen(pat))
			fail(verb == "says" ? "WRONG" : "UNUSABLE-FIX", why)
		}
		next
	}
	if (verb == "never-says" || verb == "never-fix") {
		k = texts(rest)
		if (k == 0) bad(verb " takes one or more quoted TEXTs")
		for (i = 1; i <= n; i++) {
			if (f_rank[i] < 2 || f_waived[i]) continue
			if (any(verb == "never-says" ? f_text[i] : f_fix[i], k))
				fail(verb == "never-says" ? "WRONG" : "UNUSABLE-FIX", verb " " quoted(k) ": " name(i) " " sevname(f_rank[i]) " does")
		}
		next
	}
	bad("unknown directive '" verb "' (profile, expect, says, fix, never-says, never-fix, at-most)")
}
END {
	if (error) exit 2
	if (worst == "") print "RIGHT"
	else print worst "\t" reasons
}
