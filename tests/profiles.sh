#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# hosttune profiles: every profile of the rules directory, one line each with
# its description, '*' on the one in use and where it came from (--profile,
# the configuration's FILE:LINE, the default); an unknown --profile names the
# profiles and the nearest; the profile the host's services suggest, from a
# facts file and below --root, in profiles, in audit's heading (only when it
# differs from the one in use) and in audit's JSON. The workload line of the
# heading lists only what the profile or --set changed; explain evaluates the
# rule on the host unless --no-evaluate.
. "$(dirname "$0")/lib.sh"

: "${HT_SYSCONFDIR:=$("$HOSTTUNE" --help | sed -n 's|.* \(/.*\)/hosttune/hosttune.conf and its drop-ins|\1|p')}"
VM=$FIXTURES/garage-vm/expected.facts
h() { ht --no-config --no-measure "$@"; }
# hp ARGS...: profiles, which measures nothing and takes no --no-measure
hp() { ht --no-config "$@" profiles; }

# ---- the list ----
out=$(ht --no-config profiles)
# rules/profiles holds default, garage, minio and registry: four lines and
# the active line; each line's description is the file's [profile] description.
expect_eq "profiles: one line each, the default marked, then where it came from" \
"* default   general server with modest connection churn
  garage    Garage S3 object store with one connection per object
  minio     MinIO S3 object store with one connection per object
  registry  container registry or pull-through cache
active profile: default (the default)" "$out"
out=$(ht --no-config --profile garage profiles)
expect_contains "--profile garage: marked" "* garage    Garage" "$out"
expect_contains "--profile garage: from the command line" "active profile: garage (--profile)" "$out"

# The configuration's profile: line 3 of the tree's hosttune.conf.
mkdir -p "$TMP/c$HT_SYSCONFDIR/hosttune"
printf '# site\n[hosttune]\nprofile = minio\n' >"$TMP/c$HT_SYSCONFDIR/hosttune/hosttune.conf"
out=$(ht --root "$TMP/c" profiles)
expect_contains "configuration: marked" "* minio " "$out"
expect_contains "configuration: its FILE:LINE" \
	"active profile: minio ($TMP/c$HT_SYSCONFDIR/hosttune/hosttune.conf:3)" "$out"

# A rules directory of one's own (--rules DIR): its profiles, a missing
# description said as such.
mkdir -p "$TMP/r/profiles"
cp "$HT_RULES_DIR"/*.rules "$TMP/r/"
cp "$HT_RULES_DIR"/profiles/default.profile "$TMP/r/profiles/"
printf '[profile]\ninclude = default\n[workload]\nconn_rate = 5000\n' >"$TMP/r/profiles/ingest.profile"
out=$("$HOSTTUNE" --no-config --rules "$TMP/r" profiles)
expect_eq "--rules DIR: that directory's profiles only" \
"* default  general server with modest connection churn
  ingest   (no description)
active profile: default (the default)" "$out"

# A profile that does not load is listed, and said on stderr with its
# FILE:LINE:COL (the include on line 2, its value at column 11), exit 2; a
# file whose name no --profile can name (a '-') is no profile.
printf '[profile]\ninclude = nothere\n' >"$TMP/r/profiles/broken.profile"
: >"$TMP/r/profiles/my-site.profile"
"$HOSTTUNE" --no-config --rules "$TMP/r" profiles >"$TMP/out" 2>"$TMP/err"
expect_eq "a profile that does not load: exit 2, listed, its error on stderr" \
"2|  broken   (does not load: see below)
* default  general server with modest connection churn
  ingest   (no description)
active profile: default (the default)|hosttune: $TMP/r/profiles/broken.profile:2:11: profile 'nothere' not found (looked for profiles/nothere.profile in $TMP/r)" \
	"$?|$(cat "$TMP/out")|$(cat "$TMP/err")"
# Two that do not load: each has its line on stderr.
printf '[profile]\ninclude = gone\n' >"$TMP/r/profiles/broken2.profile"
"$HOSTTUNE" --no-config --rules "$TMP/r" profiles >"$TMP/out" 2>"$TMP/err"
expect_eq "two profiles that do not load: exit 2, both errors" \
"2|hosttune: $TMP/r/profiles/broken.profile:2:11: profile 'nothere' not found (looked for profiles/nothere.profile in $TMP/r)
hosttune: $TMP/r/profiles/broken2.profile:2:11: profile 'gone' not found (looked for profiles/gone.profile in $TMP/r)" \
	"$?|$(cat "$TMP/err")"
rm "$TMP/r/profiles/broken2.profile"

# ---- an unknown profile ----
out=$(ht --no-config --profile garge profiles 2>&1)
rc=$?
expect_eq "--profile garge: exit 2" 2 "$rc"
expect_contains "--profile garge: the profiles and the nearest" \
	"the profiles are default, garage, minio, registry: did you mean garage?" "$out"
case $out in
*"not installed"*) not_ok "--profile garge: no 'not installed' note (the rules are there)" "$out" ;;
*) ok "--profile garge: no 'not installed' note (the rules are there)" ;;
esac
out=$(ht --no-config --facts "$VM" --profile xyzzy audit 2>&1)
case $out in
*"did you mean"*) not_ok "--profile xyzzy: nothing near (5 edits from each)" "$out" ;;
*) expect_contains "--profile xyzzy: the profiles still named" "the profiles are default," "$out" ;;
esac

# ---- the suggestion ----
# A MinIO host: a process named minio listens on :9000 (the profile minio's
# workload.service is "minio"; no other profile's service runs).
vary "$VM" "$TMP/minio.facts" 'process.list="minio" from /proc/PID/comm' \
	'listener.list="9000" from inet_diag' 'listener.9000.process="minio" from /proc/1/comm'
out=$(hp --facts "$TMP/minio.facts")
expect_contains "profiles: the facts suggest minio" \
	"recommended: minio (a process named minio listens on :9000)" "$out"
h --facts "$TMP/minio.facts" audit >"$TMP/a.txt"
# The default profile with nothing --set: no workload line, the suggestion is line 2.
expect_eq "audit heading: the suggestion under the default profile" \
	"recommended profile: minio (a process named minio listens on :9000): --profile minio" \
	"$(sed -n 2p "$TMP/a.txt")"
h --facts "$TMP/minio.facts" --profile minio audit >"$TMP/b.txt"
if grep -q "recommended profile" "$TMP/b.txt"; then
	not_ok "audit heading: no suggestion under the profile suggested" "$(head -n 3 "$TMP/b.txt")"
else ok "audit heading: no suggestion under the profile suggested"; fi
h --facts "$TMP/minio.facts" --format json audit >"$TMP/a.json"
expect_eq "audit JSON: recommended_profile" "minio a process named minio listens on :9000" \
	"$(jget "$TMP/a.json" '"\(.recommended_profile.name) \(.recommended_profile.evidence | join(";"))"')"
h --facts "$TMP/minio.facts" --profile minio --format json audit >"$TMP/b.json"
expect_eq "audit JSON: recommended_profile null under minio" null \
	"$(jget "$TMP/b.json" '.recommended_profile')"
hp --facts "$TMP/minio.facts" --format json >"$TMP/p.json"
# The facts file records hosttune.profile = default: that is where it came from.
expect_eq "profiles JSON: names, active, from, recommended" \
	"default,garage,minio,registry default $TMP/minio.facts: hosttune.profile minio" \
	"$(jget "$TMP/p.json" '"\([.profiles[].name] | join(",")) \(.active.name) \(.active.from) \(.recommended.name)"')"
# No service seen: no suggestion (garage-vm's facts list no process).
out=$(hp --facts "$VM")
case $out in
*recommended*) not_ok "no service: no suggestion" "$out" ;;
*) ok "no service: no suggestion" ;;
esac
# Below --root: the tree's /etc/garage.toml (garage.config) points to garage.
cp -a "$FIXTURES/garage-vm/root" "$TMP/g"
mkdir -p "$TMP/g/etc"
cp "$FIXTURES/garage/unit-c/etc/garage.toml" "$TMP/g/etc/garage.toml"
out=$(hp --root "$TMP/g")
expect_contains "--root: /etc/garage.toml suggests garage" \
	"recommended: garage (/etc/garage.toml exists)" "$out"

# ---- the workload line ----
h --facts "$VM" --profile garage audit >"$TMP/g.txt"
# garage.profile sets these 8 over default.profile (mem_budget to the same
# 0.05, still its own line), in name order; garage.* and the rest stay out.
expect_eq "workload line: what the garage profile sets" \
	"workload: burst=3, conn_rate=200, mem_budget=0.05, nofile=42000, object_rate=200, service=garage, storage=true, time_wait=30" \
	"$(sed -n 2p "$TMP/g.txt")"
h --facts "$VM" --set workload.conn_rate=570 audit >"$TMP/s.txt"
expect_eq "workload line: --set under the default profile, alone" "workload: conn_rate=570" \
	"$(sed -n 2p "$TMP/s.txt")"
h --facts "$VM" audit >"$TMP/d.txt"
expect_eq "workload line: none under the default profile" "" "$(sed -n 2p "$TMP/d.txt")"
h --facts "$VM" -v audit >"$TMP/v.txt"
expect_contains "workload line: -v shows every variable" \
	"garage.data_dir=/var/lib/garage/data" "$(sed -n 2p "$TMP/v.txt")"

# ---- explain on the host ----
# garage-vm: 480 MiB, kernel 5.15: default max 4096 (DESIGN.md's worked
# example); the default profile's working set 100/s x 120 s x 2 = 24000,
# pow2ceil 32768, under the 5% budget's 65536 and over the default 4096.
out=$(h --facts "$VM" explain conntrack.max)
expect_contains "explain: this host's current value" "  current     4096 entries" "$out"
expect_contains "explain: this host's recommendation" "  recommended 32768 entries" "$out"
expect_contains "explain: the formula is still there" "  value      max(min(pow2ceil" "$out"
out=$(h --facts "$VM" --profile garage explain conntrack.max)
# garage: 200/s x 30 s x 3 = 18000 -> 32768 too, but the heading names the profile.
expect_contains "explain --profile garage: the profile named" \
	"On facts file $VM, profile garage:" "$out"
out=$(h --facts "$VM" explain conntrack.default.buckets)
# 503316480 / 16384 / 8 = 3840, up to a multiple of 512: 4096.
expect_contains "explain: a named value's value" "  value       4096 buckets" "$out"
out=$(h --no-evaluate explain conntrack.max)
case $out in
*"On "*|*recommended*) not_ok "explain --no-evaluate: the formulas only" "$out" ;;
*) expect_contains "explain --no-evaluate: the formulas only" "  value      max(min(pow2ceil" "$out" ;;
esac
# One instance of an each rule: a Garage host's S3 port 3900 (listener.list
# "3900 3901 3903", each with its backlog); a port it does not have names
# the instances the rule found.
RAID=$FIXTURES/verdict/garage-raid6-home.facts
out=$(h --facts "$RAID" explain 'listen.backlog[3900]')
expect_contains "explain RULE[INSTANCE]: that instance" "  instance    3900" "$out"
case $out in
*"instance    3901"*) not_ok "explain RULE[INSTANCE]: no other instance" "$out" ;;
*) ok "explain RULE[INSTANCE]: no other instance" ;;
esac
out=$(h --facts "$RAID" explain 'listen.backlog[1]')
expect_contains "explain RULE[INSTANCE]: an instance the host lacks" \
	"no finding for 1: the host has no such instance, or the rule's when is false for it (findings for: 3900" "$out"
h --facts "$VM" --format json explain conntrack.max >"$TMP/e.json"
expect_eq "explain JSON: host.findings" "4096 32768" \
	"$(jget "$TMP/e.json" '"\(.host.findings[0].current) \(.host.findings[0].recommended)"')"
h --no-evaluate --format json explain conntrack.max >"$TMP/n.json"
expect_eq "explain --no-evaluate JSON: host null" null "$(jget "$TMP/n.json" '.host')"
# A facts file's own profile (hosttune.profile, recorded by the host's
# hosttune facts) is the active one for profiles too, as audit judges it.
sed 's/^hosttune.profile = .*/hosttune.profile = "minio" from --profile/' "$VM" >"$TMP/m2.facts"
out=$(hp --facts "$TMP/m2.facts")
expect_eq "profiles --facts: the host's profile active, the facts file its origin" \
	"* minio|active profile: minio ($TMP/m2.facts: hosttune.profile)" \
	"$(printf '%s\n' "$out" | grep -E '^\* |^active' | cut -c1-7 | sed '2d')|$(printf '%s\n' "$out" | tail -n 1)"
expect_eq "profiles --facts --profile garage: the command line wins" "active profile: garage (--profile)" \
	"$(hp --facts "$TMP/m2.facts" --profile garage | tail -n 1)"

finish
