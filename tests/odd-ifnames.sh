#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Interface names the kernel allows but a fact name cannot hold as they are
# (a+b, a@b, é0, a,b, a backslash, an ESC, an underscore, a byte that is not
# UTF-8): each is escaped into its nic.IF.* facts (shared/escape.h,
# ht_name_escape(): letters, digits, '.' and '-' stay, '_' is "__", any other
# byte "_HH"), reads back from a facts file to the same audit, and its rows
# name it as the kernel does (escaped for the terminal only where a byte
# must be). First in --root trees (the nic-counters fixture with eth1
# renamed: its rx errors make nic.errors a warning), then on veth pairs in
# a private network namespace (root and unshare -n; skipped without them).
# audit, facts, --format json and --format prometheus never exit 2.
. "$(dirname "$0")/lib.sh"

# NAME (a printf format) ESCAPED SHOWN (the text report's spelling), one a line.
# Escapes worked out by hand from the bytes: '+' 0x2b, '@' 0x40, 'é' 0xc3 0xa9,
# ',' 0x2c, '\' 0x5c, ESC 0x1b, '[' 0x5b, 0xff.
cat >"$TMP/names" <<'EOF'
a+b a_2bb a+b
a@b a_40b a@b
\303\2510 _c3_a90 é0
a,b a_2cb a,b
a\\x41 a_5cx41 a\x41
e\033[m e_1b_5bm e\x1b[m
a_b a__b a_b
\377x _ffx \xffx
EOF

# row FILE RULE[NAME]: that row of a text report, its columns one space apart.
row() {
	# From the environment: awk -v would read the backslashes as escapes.
	K=$2 awk 'index($0, ENVIRON["K"] " ") == 1 { $1 = $1; print; exit }' "$1"
}

rc_ok() { # LABEL RC: exit 0 or 1, never 2
	case $2 in 0 | 1) ok "$1: exit $2" ;; *) not_ok "$1: exit $2, expected 0 or 1" ;; esac
}

# ---- --root trees: /sys/class/net/NAME ----
i=0
while read -r fmt esc shown; do
	i=$((i + 1))
	name=$(printf "$fmt")
	R=$TMP/root$i
	cp -a "$FIXTURES/nic-counters/root" "$R"
	mv "$R/sys/class/net/eth1" "$R/sys/class/net/$name"

	ht --root "$R" audit >"$TMP/audit$i" 2>"$TMP/err$i"
	expect_eq "root $shown: audit exits 1 (its errors a warning)" 1 $?
	expect_eq "root $shown: nothing on stderr" "" "$(cat "$TMP/err$i")"
	# eth1's counters: rx_errors 1234 + rx_missed_errors 66 = 1300 bad frames.
	expect_eq "root $shown: its row, named as the kernel does" \
		"nic.errors[$shown] 1300 packets - warning" "$(row "$TMP/audit$i" "nic.errors[$shown]")"
	expect_contains "root $shown: the explanation names it" "The link of $shown went down" \
		"$(cat "$TMP/audit$i")"

	ht --root "$R" facts >"$TMP/facts$i"
	expect_eq "root $shown: facts exits 0" 0 $?
	expect_contains "root $shown: its counter under the escaped name" \
		"nic.$esc.stats.rx_errors = 1234 packets from" "$(cat "$TMP/facts$i")"
	# In the order of the names' bytes, with eth0 and vxlan0: a name that starts
	# with a byte past ASCII (its escape with "_") sorts last.
	case $esc in
	_*) list="eth0 vxlan0 $esc" ;;
	*) list="$esc eth0 vxlan0" ;;
	esac
	expect_contains "root $shown: nic.list has the escaped name" "nic.list = \"$list\" from" \
		"$(cat "$TMP/facts$i")"

	# Read back: the same audit, but for the heading that names the source.
	ht --facts "$TMP/facts$i" audit >"$TMP/back$i" 2>&1
	expect_eq "root $shown: --facts audit exits 1 too" 1 $?
	expect_eq "root $shown: the facts file gives the same audit" \
		"$(sed 1d "$TMP/audit$i")" "$(sed 1d "$TMP/back$i")"

	ht --root "$R" --format json audit >"$TMP/json$i"
	rc_ok "root $shown: json" $?
	if [ "$shown" = '\xffx' ]; then
		# No JSON string holds the byte 0xff: the document must still parse.
		expect_eq "root $shown: json parses" true "$(jq 'has("findings")' "$TMP/json$i")"
	else
		expect_eq "root $shown: json instance is the name itself" "$name" \
			"$(jq -r '.findings[] | select(.rule == "nic.errors") | .instance' "$TMP/json$i")"
	fi

	ht --root "$R" --format prometheus audit >"$TMP/prom$i"
	rc_ok "root $shown: prometheus" $?
	# 1300 / (1300 + 2000000 rx_packets) = 0.000649578..., "%.6g"; the label as the
	# text format spells it: the report's spelling with each backslash doubled.
	label=$(printf '%s' "$shown" | sed 's/\\/\\\\/g')
	expect_contains "root $shown: device label" \
		"hosttune_nic_bad_frame_ratio{device=\"$label\"} 0.000649578" "$(cat "$TMP/prom$i")"
done <"$TMP/names"

# A waiver names the interface as the kernel does; one for a name the host
# lacks lists the names it has, the same way ($TMP/root1 has a+b for eth1).
printf '[waive]\nnic.errors[a+b] = a known bad cable\nnic.flaps[zz] = a typo\n' >"$TMP/waive.conf"
ht --root "$TMP/root1" --config "$TMP/waive.conf" audit >"$TMP/waived" 2>"$TMP/waived.err"
expect_eq "waiver: the row of a+b waived" "nic.errors[a+b] 1300 packets - warning (waived)" \
	"$(row "$TMP/waived" "nic.errors[a+b]")"
expect_eq "waiver: the one warning names the interfaces as they are" \
	"hosttune: warning: $TMP/waive.conf:3:1: waiver for 'nic.flaps[zz]': this host has no interface zz (nic.list: a+b eth0 vxlan0)" \
	"$(cat "$TMP/waived.err")"

# A tree entry no interface can have (the kernel refuses ':'): skipped, named,
# and the audit does not pass; eth1 beside it is still judged.
R=$TMP/colon
cp -a "$FIXTURES/nic-counters/root" "$R"
cp -a "$R/sys/class/net/eth1" "$R/sys/class/net/a:b"
ht --root "$R" --format json audit >"$TMP/colon.json"
expect_eq "root a:b: audit exits 1" 1 $?
expect_eq "root a:b: nic.coverage warns" "warning 1" \
	"$(jq -r '.findings[] | select(.rule == "nic.coverage") | "\(.severity) \(.current)"' "$TMP/colon.json")"
expect_contains "root a:b: the warning names it" "/sys/class/net: a:b" \
	"$(jq -r '.findings[] | select(.rule == "nic.coverage") | .explanation' "$TMP/colon.json")"
expect_eq "root a:b: eth1 still judged" warning \
	"$(jq -r '.findings[] | select(.rule == "nic.errors" and .instance == "eth1") | .severity' "$TMP/colon.json")"
# A regular file and a FIFO among them: no interface either, counted the same.
R=$TMP/files
cp -a "$FIXTURES/nic-counters/root" "$R"
: >"$R/sys/class/net/plainfile"
mkfifo "$R/sys/class/net/fifo0"
ht --root "$R" facts >"$TMP/files.facts"
expect_eq "a file and a FIFO in /sys/class/net: not in nic.list" "" \
	"$(grep '^nic.list = ' "$TMP/files.facts" | grep -o 'plainfile\|fifo0')"
expect_eq "a file and a FIFO: nic.skipped 2" "2" \
	"$(sed -n 's/^nic.skipped = \([0-9]*\) .*/\1/p' "$TMP/files.facts")"
ht --root "$FIXTURES/nic-counters/root" --format json audit >"$TMP/plain.json"
expect_eq "the fixture as it is: no nic.coverage finding" "" \
	"$(jq -r '.findings[] | select(.rule == "nic.coverage") | .severity' "$TMP/plain.json")"

# ---- veth pairs in a private network namespace ----
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null || ! command -v ip >/dev/null ||
	! unshare -n true 2>/dev/null; then
	echo "# SKIP the veth part: needs root, ip and unshare -n"
	finish
fi
# Run inside: one pair a name (peer pI), both up, the peer taken down and up
# twice (2 + 4 carrier changes: nic.flaps, info), then each command. $1:
# "sysfs" mounts this namespace's own sysfs (libudev lists the names), else
# /sys stays the host's (the kernel's if_nameindex(3) lists them).
cat >"$TMP/inner.sh" <<'EOF'
set -u
H="$HOSTTUNE --rules $HT_RULES_DIR --no-config --no-measure"
if [ "$1" = sysfs ]; then
	mount -t sysfs sysfs /sys || exit 1
	if [ -d /run/udev ]; then mount -t tmpfs tmpfs /run/udev || exit 1; fi
fi
ip link set lo up
i=0
while read -r fmt esc shown; do
	i=$((i + 1))
	name=$(printf "$fmt")
	ip link add name "$name" type veth peer name "p$i" || exit 77
	ip link set dev "$name" up && ip link set dev "p$i" up || exit 1
	for k in 1 2; do ip link set dev "p$i" down && ip link set dev "p$i" up || exit 1; done
done <"$TMP/names"
$H audit >"$TMP/$1.audit" 2>&1; echo $? >"$TMP/$1.audit.rc"
$H facts >"$TMP/$1.facts" 2>"$TMP/$1.facts.err"; echo $? >"$TMP/$1.facts.rc"
$H --format json audit >"$TMP/$1.json" 2>&1; echo $? >"$TMP/$1.json.rc"
$H --format prometheus audit >"$TMP/$1.prom" 2>&1; echo $? >"$TMP/$1.prom.rc"
EOF
export HOSTTUNE HT_RULES_DIR TMP
for how in hostsys sysfs; do
	if [ $how = sysfs ]; then unshare -nm sh "$TMP/inner.sh" $how; else unshare -n sh "$TMP/inner.sh" $how; fi
	r=$?
	if [ $r = 77 ]; then
		echo "# SKIP the veth part: no veth"
		finish
	fi
	expect_eq "veth ($how): the namespace's script ran" 0 $r
	rc_ok "veth ($how): audit" "$(cat "$TMP/$how.audit.rc")"
	expect_eq "veth ($how): facts exits 0" 0 "$(cat "$TMP/$how.facts.rc")"
	rc_ok "veth ($how): json" "$(cat "$TMP/$how.json.rc")"
	rc_ok "veth ($how): prometheus" "$(cat "$TMP/$how.prom.rc")"
	# The findings of the interfaces, live and read back from the facts file.
	nicrows() { jq -r '.findings[] | select(.rule | startswith("nic.")) | "\(.rule) \(.instance) \(.severity)"' "$1" | sort; }
	ht --facts "$TMP/$how.facts" --no-config --format json audit >"$TMP/$how.back.json" 2>/dev/null
	rc_ok "veth ($how): --facts json" $?
	expect_eq "veth ($how): the facts file gives the same findings" "$(nicrows "$TMP/$how.json")" \
		"$(nicrows "$TMP/$how.back.json")"
	facts=$(cat "$TMP/$how.facts")
	while read -r fmt esc shown; do
		# 2 changes bringing the pair up, 2 for each of the peer's two downs and ups.
		expect_contains "veth ($how) $shown: carrier changes under the escaped name" \
			"nic.$esc.stats.carrier_changes = 6 changes from" "$facts"
		expect_eq "veth ($how) $shown: its flaps row in the report" \
			"nic.flaps[$shown] 6 changes - info" "$(row "$TMP/$how.audit" "nic.flaps[$shown]")"
	done <"$TMP/names"
done

finish
