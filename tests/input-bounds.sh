#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Inputs from hosts a fleet audit may not trust are read within bounds: a
# --facts file, an --observed recording and a tree's /proc/net/tcp that are
# /dev/zero or a 10 GiB sparse file (zeros: one endless line) are refused
# with the file named, under a 512 MiB address-space limit that reading them
# whole would exceed; a facts file over 16 MiB is refused at the line that
# passes it; a line of a tree's tcp file longer than any the kernel writes
# makes the sockets' facts unavailable, naming file and line, and the rest is
# judged.
. "$(dirname "$0")/lib.sh"

# The sanitizers reserve terabytes of address space: no limit there.
limit=
if ! grep -aq __asan_init "$HOSTTUNE" 2>/dev/null; then
	limit="ulimit -v 524288;"
fi
# bounded ARGS...: hosttune under the limit; $rc, $err (stdout discarded)
bounded() {
	sh -c "$limit exec \"\$@\"" sh "$HOSTTUNE" --rules "$HT_RULES_DIR" "$@" >/dev/null 2>"$TMP/err"
	rc=$?
	err=$(cat "$TMP/err")
}

truncate -s 10G "$TMP/sparse" || { echo "1..0 # SKIP truncate(1) cannot make a sparse file here"; exit 77; }

for f in /dev/zero "$TMP/sparse"; do
	bounded --facts "$f" audit
	expect_eq "--facts $f: exit 2, file and line named" \
		"2 hosttune: $f:1: a line longer than 64 KiB: not a facts file hosttune wrote" "$rc $err"
	bounded --observed "$f" --no-measure audit
	expect_eq "--observed $f: exit 2, file and line named" \
		"2 hosttune: $f:1: a line longer than 4096 bytes: not a recording of hosttune watch" \
		"$rc $err"
done

# A facts file of valid lines past 16 MiB: the registry VM's facts, then
# sysctl lines of 58-63 bytes each until the file is 17 MiB; refused at the
# first line past 16 MiB = 16777216 bytes, counted here the same way.
cp "$FIXTURES/registry-vm/host.facts" "$TMP/big.facts"
awk 'BEGIN { for (i = 0; i < 300000; i++) printf "net.ipv4.knob%d = 1 from /proc/sys/net/ipv4/knob%d\n", i, i }' \
	>>"$TMP/big.facts"
line=$(awk '{ b += length($0) + 1; if (b > 16777216) { print NR; exit } }' "$TMP/big.facts")
bounded --facts "$TMP/big.facts" audit
expect_eq "a facts file past 16 MiB: refused at line $line" \
	"2 hosttune: $TMP/big.facts:$line: larger than 16 MiB: not a facts file hosttune wrote" "$rc $err"

# A tree whose /proc/net/tcp is a 10 GiB sparse file: the sockets' facts
# unavailable (line 1 is longer than any the kernel writes), the rest judged.
G=$TMP/tree
cp -a "$FIXTURES/listen-host/root" "$G"
rm -f "$G/proc/net/tcp"
truncate -s 10G "$G/proc/net/tcp"
sh -c "$limit exec \"\$@\"" sh "$HOSTTUNE" --rules "$HT_RULES_DIR" --root "$G" --no-measure facts \
	>"$TMP/facts" 2>"$TMP/err"
rc=$?
expect_eq "ROOT/proc/net/tcp of 10 GiB: facts exit 0, a warning naming file and line" \
	"0 hosttune: warning: not read: /proc/net/tcp: a line not as the kernel writes it (line 1); the listening sockets listed there are not judged" \
	"$rc $(cat "$TMP/err")"
expect_eq "the listeners of tcp6 still read, the note on their source" \
	'listener.list = "3900" from /proc/net/tcp6 (not read: /proc/net/tcp: a line not as the kernel writes it (line 1))' \
	"$(grep '^listener.list ' "$TMP/facts")"
expect_eq "the rest still read: net.core.somaxconn" \
	"net.core.somaxconn = 4096 entries from /proc/sys/net/core/somaxconn" \
	"$(grep '^net.core.somaxconn ' "$TMP/facts")"

finish
