#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A state file tampered with after apply, on copies of the Garage VM's --root
# tree: revert refuses it (exit 2, one line naming the state file and the
# entry, the tree as it was) or reports what it leaves, and never writes
# what the tampered entry says. Each case runs twice: as tampered, and with
# a "checksum" member recomputed over the tampered entries (sha256 of the
# files and live arrays), which must change nothing: what revert takes is
# judged by what it says, not by a sum beside it.
. "$(dirname "$0")/lib.sh"

G="--profile garage --no-measure"
S=var/lib/hosttune/state
SYS=/etc/sysctl.d/90-hosttune.conf
MOD=/etc/modprobe.d/hosttune.conf
SSH=/etc/systemd/system/ssh.service.d/90-hosttune.conf
MAX=proc/sys/net/netfilter/nf_conntrack_max
H="# This file is managed by hosttune (profile garage)."

# One apply, kept: each case starts from a copy of the tree it left (at the
# same path: the state records its tree).
cp -a "$FIXTURES/garage-vm/root" "$TMP/g"
ht --root "$TMP/g" $G apply >/dev/null || not_ok "apply of the fixture tree"
cp -a "$TMP/g" "$TMP/applied"
fresh() {
	rm -rf "$TMP/g"
	cp -a "$TMP/applied" "$TMP/g"
}
# tamper FILTER CHECKSUM: the state rewritten with a jq filter (mode and
# owner kept); with CHECKSUM "sum" a "checksum" of the result added.
tamper() {
	jq "$1" "$TMP/g/$S" >"$TMP/state.new" || not_ok "jq $1"
	if [ "$2" = sum ]; then
		sum=$(jq -c '[.files, .live]' "$TMP/state.new" | sha256sum | cut -d' ' -f1)
		jq --arg s "$sum" '.checksum = $s' "$TMP/state.new" >"$TMP/state.sum" &&
			mv "$TMP/state.sum" "$TMP/state.new"
	fi
	cat "$TMP/state.new" >"$TMP/g/$S"
}
# refused WHAT TEXT: revert exits 2 with one line naming the state file and
# holding TEXT, and changes nothing.
refused() {
	tree_sums "$TMP/g" >"$TMP/before.sums"
	ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
	expect_eq "$1: revert exits 2 with one line" "2 1" "$? $(wc -l <"$TMP/err")"
	expect_contains "$1: names the state file and the entry" \
		"hosttune: revert refused, nothing was changed: $TMP/g/$S: $2" "$(cat "$TMP/err")"
	tree_sums "$TMP/g" >"$TMP/after.sums"
	if cmp -s "$TMP/before.sums" "$TMP/after.sums"; then ok "$1: the tree as it was"
	else not_ok "$1: the tree as it was" "$(diff "$TMP/before.sums" "$TMP/after.sums" | head)"; fi
}

for c in plain sum; do
	# A drop-in for a unit apply never wrote, running a command: refused.
	fresh
	tamper ".files += [{\"path\": \"$SSH\", \"existed\": true, \"mode\": 420, \"written\": null,
		\"content\": \"$H\n[Service]\nExecStartPre=/bin/touch /tmp/pwned\n\"}]" $c
	refused "$c: an ExecStartPre= drop-in for ssh.service" \
		"files entry 4: \"content\" line 3 'ExecStartPre=/bin/touch /tmp/pwned' is not a line hosttune writes in $SSH"
	# One that holds only what a drop-in of hosttune's may: no unit of it
	# has one now, so revert creates none and says so.
	tamper ".files[3].content = \"$H\n[Service]\nLimitNOFILE=1024:4096\n\"" $c
	ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
	expect_eq "$c: a LimitNOFILE= drop-in for ssh.service: revert exits 0" "0" "$?$(cat "$TMP/err")"
	expect_contains "$c: a drop-in for ssh.service: reported" \
		"left $SSH absent: hosttune creates no drop-in for a unit that has none of its now" \
		"$(cat "$TMP/out")"
	if [ -e "$TMP/g/etc/systemd" ]; then not_ok "$c: no drop-in for ssh.service created"
	else ok "$c: no drop-in for ssh.service created"; fi

	# A sysctl file piping cores to a program; a modprobe install line.
	fresh
	tamper ".files[0].content = \"$H\nkernel.core_pattern = |/x\n\"" $c
	refused "$c: kernel.core_pattern = |/x in the sysctl file" \
		"files entry 1: \"content\" line 2 'kernel.core_pattern = |/x' is not a line hosttune writes in $SYS"
	fresh
	tamper ".files[1].content = \"$H\n\ninstall nf_conntrack /bin/sh -c 'touch /tmp/pwned'\n\"" $c
	refused "$c: a modprobe install line" \
		"files entry 2: \"content\" line 3 'install nf_conntrack /bin/sh -c 'touch /tmp/pwned'' is not a line hosttune writes in $MOD"
	# The same line continued from a comment (modprobe.d joins it with the next).
	fresh
	tamper ".files[1].content = \"$H\n# \\\\\ninstall nf_conntrack /bin/true\n\"" $c
	refused "$c: a comment continued into the next line" \
		"files entry 2: \"content\" line 2 '# \\' is not a line hosttune writes in $MOD"
	# What apply wrote, tampered: refused the same.
	fresh
	tamper ".files[0].written = \"$H\nkernel.core_pattern = |/x\n\"" $c
	refused "$c: \"written\" with kernel.core_pattern" \
		"files entry 1: \"written\" line 2 'kernel.core_pattern = |/x' is not a line hosttune writes in $SYS"
	# Without the header: taken as a file --force took over, restored only
	# from the copy apply kept; there is none, so the file stays hosttune's.
	fresh
	cp "$TMP/g$SYS" "$TMP/sysctl.applied"
	tamper ".files[0].content = \"kernel.core_pattern = |/x\n\"" $c
	ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
	expect_contains "$c: a foreign content without its copy: reported" \
		"left $SYS: the state's earlier content is not hosttune's and $SYS.hosttune-orig does not hold it" \
		"$(cat "$TMP/out")"
	if cmp -s "$TMP/sysctl.applied" "$TMP/g$SYS"; then ok "$c: a foreign content: the file stays as apply wrote it"
	else not_ok "$c: a foreign content: the file stays as apply wrote it" "$(cat "$TMP/g$SYS")"; fi

	# A live entry without "written" while an admin has set another value
	# since (apply set 32768, it was 4096): reported, the admin's stays.
	fresh
	echo 65536 >"$TMP/g/$MAX"
	tamper '(.live[] | select(.key == "net.netfilter.nf_conntrack_max")) |= del(.written)' $c
	ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
	expect_contains "$c: a live entry without \"written\": reported" \
		"left net.netfilter.nf_conntrack_max at 65536: the state file does not say what hosttune set (it was 4096 before)" \
		"$(cat "$TMP/out")"
	expect_eq "$c: a live entry without \"written\": the admin's value stays" 65536 "$(cat "$TMP/g/$MAX")"
	# ... and with "written" null.
	fresh
	echo 65536 >"$TMP/g/$MAX"
	tamper '(.live[] | select(.key == "net.netfilter.nf_conntrack_max")).written = null' $c
	ht --root "$TMP/g" revert >"$TMP/out" 2>"$TMP/err"
	expect_eq "$c: \"written\" null: the admin's value stays" 65536 "$(cat "$TMP/g/$MAX")"

	# The key twice: a second entry (another "old", "written" the admin's
	# value), and one member twice in an entry (json-c keeps the last).
	fresh
	echo 65536 >"$TMP/g/$MAX"
	tamper '.live += [(.live[] | select(.key == "net.netfilter.nf_conntrack_max")
		| .old = "1024" | .written = "65536")]' $c
	refused "$c: a live key twice" "live entry 4: key net.netfilter.nf_conntrack_max again"
	fresh
	echo 65536 >"$TMP/g/$MAX"
	tamper '.' $c
	sed 's/"written": "32768"/"written": "32768", "written": "65536"/' "$TMP/g/$S" >"$TMP/state.new"
	cat "$TMP/state.new" >"$TMP/g/$S"
	refused "$c: \"written\" twice in one entry" "an object names \"written\" twice"
done
# Text after the object apply wrote (a second JSON document): not apply's.
fresh
printf '{}\n' >>"$TMP/g/$S"
refused "text after the state's object" ""
finish
