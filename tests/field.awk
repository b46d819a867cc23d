# SPDX-License-Identifier: LGPL-2.1-or-later
# field.awk: judges one field case (tests/field/README.md).
# Input: the case's `expected`; -v findings=FILE the audit's findings, one a
# line (tests/field.sh writes them with jq): SEVERITY-RANK TAB WAIVED TAB RULE
# TAB INSTANCE TAB TEXT TAB FIXTEXT,
# the rank -1 for n/a, 0 ok, 1 info, 2 warning, 3 critical, WAIVED 1 or 0,
# TEXT the title, explanation and remedy, FIXTEXT the fix's file, line, live
# path, restart, the remedy and the fix of the finding its lever names, all
# lower-cased; -v rules=FILE the ids of the rules hosttune ships, one a line
# (a RULE that matches none of them is an error: a typo).
# Output: one line, "CLASS" or "CLASS<TAB>REASON; REASON...": the class of the
# first failed directive by SILENT, WRONG, UNUSABLE-FIX, FALSE-ALARM, else RIGHT.
# A directive the language does not have is an error (exit 2, FILE:LINE).
BEGIN {
	FS = "\t"
	rank["n/a"] = -1; rank["ok"] = 0; rank["info"] = 1; rank["warning"] = 2; rank["critical"] = 3
	order["SILENT"] = 1; order["WRONG"] = 2; order["UNUSABLE-FIX"] = 3; order["FALSE-ALARM"] = 4
	n = 0; worst = ""; reasons = ""; directives = 0; nrules = 0
	if (findings == "") {
		print "field.awk: -v findings=FILE is missing" > "/dev/stderr"
		error = 1
		exit 2
	}
	while ((getline line < findings) > 0) {
		split(line, x, "\t")
		n++
		f_rank[n] = x[1] + 0; f_waived[n] = x[2] + 0; f_rule[n] = x[3]; f_inst[n] = x[4]
		f_text[n] = x[5]; f_fix[n] = x[6]
	}
	close(findings)
	# The rules hosttune ships (-v rules=FILE, one id a line): a RULE that names none is a typo.
	if (rules != "") {
		while ((getline line < rules) > 0)
			if (line != "")
				known[++nrules] = line
		close(rules)
	}
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
		if (substr(line, 1, RSTART - 1) !~ /^[ \t]*$/)
			bad("words outside the quoted strings: " substr(line, 1, RSTART - 1))
		s = substr(line, RSTART + 1, RLENGTH - 2)
		gsub(/\\"/, "\"", s)
		if (s == "") bad("an empty TEXT matches every text")
		t[++k] = tolower(s)
		line = substr(line, RSTART + RLENGTH)
	}
	if (line !~ /^[ \t]*$/) bad("text after the quoted strings: " line)
	return k
}
# known_rule PATTERN: a shipped rule matches PATTERN's rule part (a typo matches none).
function known_rule(pat,    p, r, i) {
	if (nrules == 0) return 1
	p = index(pat, "[")
	r = p && substr(pat, length(pat)) == "]" ? substr(pat, 1, p - 1) : pat
	for (i = 1; i <= nrules; i++) if (known[i] ~ glob_re(r)) return 1
	bad("no rule hosttune ships matches " pat)
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
	sub(/\r$/, "")
	sub(/#.*/, "")
	if ($0 ~ /^[ \t]*$/) next
	line = $0
	sub(/^[ \t]+/, "", line)
	sub(/[ \t]+$/, "", line)
	verb = line; sub(/[ \t].*/, "", verb)
	rest = substr(line, length(verb) + 1); sub(/^[ \t]+/, "", rest)
	if (verb == "profile") {
		if (rest == "" || rest ~ /[ \t]/) bad("profile takes one NAME")
		next
	}
	directives++
	if (verb == "expect" || verb == "at-most") {
		split(rest, w, /[ \t]+/)
		if (!(w[1] in rank) || w[1] == "n/a" || w[1] == "ok" && verb == "expect" || w[2] == "" || w[3] != "")
			bad(verb " takes a severity (info, warning, critical) and one RULE")
		known_rule(w[2])
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
		known_rule(pat)
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
	if (directives == 0) {
		printf "%s: no directive: a case must expect or rule out something\n", FILENAME != "" ? FILENAME : ARGV[1] > "/dev/stderr"
		exit 2
	}
	if (worst == "") print "RIGHT"
	else print worst "\t" reasons
}
