#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The judge of the field cases (tests/field.awk) on findings written here by
# hand: each directive of tests/field/README.md holds and fails as it says,
# the class is the first failed one by SILENT, WRONG, UNUSABLE-FIX,
# FALSE-ALARM, a waived finding counts for neither an expectation nor an
# alarm, and a malformed line is refused with its file and line.
. "$(dirname "$0")/lib.sh"

# Ranks: 3 critical, 2 warning, 1 info, 0 ok, -1 n/a.
T=$(printf '\t')
cat >"$TMP/findings" <<EOF
3${T}0${T}conntrack.max${T}${T}the table is full: kube-proxy wrote 131072${T}--conntrack-max-per-core 65536
2${T}0${T}process.limit_nofile${T}minio${T}minio (pid 812) holds 1000 of 1024${T}/etc/systemd/system/minio.service.d/90-hosttune.conf limitnofile=1048576
2${T}1${T}nic.queues${T}eth0${T}one queue of 4${T}ethtool -l eth0 combined 4
1${T}0${T}conntrack.time_wait${T}headroom${T}net.netfilter.nf_conntrack_tcp_timeout_time_wait = 30
0${T}0${T}listen.somaxconn${T}${T}somaxconn 4096${T}
-1${T}0${T}cpu.aes${T}${T}not measured${T}
EOF

# The rules the expectations may name (a RULE matching none of them is a typo).
printf '%s\n' conntrack.max conntrack.time_wait process.limit_nofile nic.queues listen.somaxconn \
	cpu.aes garage.fsync >"$TMP/rules"

# judge NAME EXPECTED-CLASS: field.awk's class for $TMP/NAME.exp (stdin).
judge() {
	cat >"$TMP/$1.exp"
	got=$(awk -v findings="$TMP/findings" -v rules="$TMP/rules" -f "$HT_TESTS_DIR/field.awk" "$TMP/$1.exp" 2>&1)
	expect_eq "$1" "$2" "${got%%	*}"
}

judge right RIGHT <<'EOF'
# a comment, and a blank line

profile garage
expect critical conntrack.max
expect warning process.*            # a glob
expect warning process.limit_nofile[minio]
expect info conntrack.time_wait
says conntrack.max "KUBE-PROXY"     # case-insensitive
says process.* "nobody" "pid 812"   # any of them
fix conntrack.max "--conntrack-max-per-core"
fix process.limit_nofile "LimitNOFILE"
never-says "somaxconn"              # the ok row says it: only warning and above count
never-fix "ethtool"                 # nic.queues is waived
at-most info listen.*
at-most info nic.*                  # waived: no alarm
at-most ok cpu.aes                  # n/a is below ok
EOF
judge silent-missing SILENT <<'EOF'
expect warning garage.*
EOF
judge silent-below SILENT <<'EOF'
expect warning conntrack.time_wait
EOF
judge silent-waived SILENT <<'EOF'
expect warning nic.queues
EOF
judge silent-instance SILENT <<'EOF'
expect warning process.limit_nofile[garage]
EOF
judge wrong-says WRONG <<'EOF'
expect critical conntrack.max
says conntrack.max "nfsd"
EOF
judge wrong-says-ok-only WRONG <<'EOF'
says listen.somaxconn "somaxconn"
EOF
judge wrong-never-says WRONG <<'EOF'
never-says "holds 1000"
EOF
judge fix-missing UNUSABLE-FIX <<'EOF'
fix process.limit_nofile "garage.toml"
EOF
judge never-fix UNUSABLE-FIX <<'EOF'
never-fix "90-hosttune.conf"
EOF
judge false-alarm FALSE-ALARM <<'EOF'
at-most info conntrack.*
EOF
judge false-alarm-all FALSE-ALARM <<'EOF'
at-most info *
EOF
# The first failed directive by class order, whatever the line order.
judge order-silent SILENT <<'EOF'
at-most info *
never-fix "conntrack"
says conntrack.max "nfsd"
expect warning garage.*
EOF
judge order-wrong WRONG <<'EOF'
at-most info *
fix process.limit_nofile "garage.toml"
never-says "kube-proxy"
EOF
judge order-fix UNUSABLE-FIX <<'EOF'
at-most info *
fix process.limit_nofile "garage.toml"
EOF
# Every failed directive is a reason.
cat >"$TMP/two.exp" <<'EOF'
expect warning garage.*
at-most info conntrack.max
EOF
got=$(awk -v findings="$TMP/findings" -v rules="$TMP/rules" -f "$HT_TESTS_DIR/field.awk" "$TMP/two.exp")
expect_contains "reasons: the missing rule" "expect warning garage.*: no such finding" "$got"
expect_contains "reasons: the alarm" "at-most info conntrack.max: conntrack.max is critical" "$got"

# Malformed lines: exit 2, FILE:LINE.
bad() {
	printf '%s\n' "profile default" "$2" >"$TMP/bad.exp"
	rc=0
	got=$(awk -v findings="$TMP/findings" -v rules="$TMP/rules" -f "$HT_TESTS_DIR/field.awk" "$TMP/bad.exp" 2>&1) || rc=$?
	expect_eq "$1: exit 2" 2 "$rc"
	expect_contains "$1: file and line" "$TMP/bad.exp:2: " "$got"
}
bad "unknown directive" 'warn conntrack.max'
bad "expect without a rule" 'expect warning'
bad "expect ok" 'expect ok conntrack.max'
bad "a severity that is none" 'at-most high *'
bad "says without a text" 'says conntrack.max'
bad "says with an unquoted text" 'says conntrack.max "full" kube'
bad "never-says without a text" 'never-says'
bad "a misspelt rule" 'at-most info conntrak.max'
bad "a misspelt rule in says" 'says conntrak.max "x"'
bad "a word before the texts" 'says conntrack.max warning "x"'
bad "a word between the texts" 'says conntrack.max "a" junk "b"'
bad "a rule where never-says takes texts" 'never-says conntrack.max "x"'
bad "an empty text" 'says conntrack.max ""'
bad "a profile without a name" 'profile'
# A CRLF line reads as its LF twin.
printf 'expect critical conntrack.max\r\n' >"$TMP/crlf.exp"
expect_eq "CRLF lines" RIGHT "$(awk -v findings="$TMP/findings" -v rules="$TMP/rules" -f "$HT_TESTS_DIR/field.awk" "$TMP/crlf.exp")"
# Nothing to check is no verdict; nor is an empty findings file a way around one.
for e in '' '# only a comment' 'profile garage'; do
	printf '%s\n' "$e" >"$TMP/empty.exp"
	rc=0
	got=$(awk -v findings="$TMP/findings" -v rules="$TMP/rules" -f "$HT_TESTS_DIR/field.awk" "$TMP/empty.exp" 2>&1) || rc=$?
	expect_eq "no directive ('$e'): exit 2" 2 "$rc"
	expect_contains "no directive ('$e'): said" "no directive" "$got"
done
: >"$TMP/none"
printf 'expect warning conntrack.max\n' >"$TMP/one.exp"
expect_eq "no findings: the expectation fails" SILENT \
	"$(awk -v findings="$TMP/none" -v rules="$TMP/rules" -f "$HT_TESTS_DIR/field.awk" "$TMP/one.exp" | cut -f1)"
finish
