#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The sysctl.d reader (src/shared/bootconf-sysctl.c, printed by tests/bootconf-dump) against
# systemd itself, on every tests/fixtures/bootconf-*/root tree.
#
# 1. The files and their order: systemd 252's systemd-sysctl has --cat-config
#    but no --root (it only shows the host's files), so this asks
#    `systemd-analyze cat-config sysctl.d --root=ROOT`, which lists the files
#    with the same conf_files_list_strv() and directories, and prints each as
#    "# PATH" and its content (the headers parse as comments). The later-wins
#    rule of sysctl.d(5) is applied to that text here, in awk, written from the
#    man page rather than from the C code; glob keys are expanded with the
#    shell's globbing against ROOT/proc/sys.
# 2. The values: when we are root and unshare(1) works, systemd-sysctl itself
#    runs in a private mount and network namespace, with the fixture's etc/
#    bound over /etc, its run, usr/local/lib and usr/lib sysctl.d directories
#    over the host's, and an emptied copy of ROOT/proc/sys over /proc/sys. What
#    it wrote there is compared with the reader's values for the keys that
#    exist in ROOT/proc/sys (systemd cannot write any other). The copy carries a
#    marker file, and systemd-sysctl runs only once /proc/sys shows it: the
#    host's settings are never touched. A fixture with a real lib/sysctl.d is
#    left out of this part when the host's /lib is a link, as it cannot be
#    bound apart from /usr/lib then.
. "$(dirname "$0")/lib.sh"

: "${HT_BUILD_TESTS_DIR:=$(dirname "$HOSTTUNE")/../tests}"
DUMP=$HT_BUILD_TESTS_DIR/bootconf-dump

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "# SKIP systemd-analyze is not installed"
	exit 77
fi
if ! systemd-analyze cat-config --help 2>/dev/null | grep -q -e '--root'; then
	echo "# SKIP systemd-analyze cat-config has no --root"
	exit 77
fi
if [ ! -x "$DUMP" ]; then
	not_ok "bootconf-dump is built" "missing: $DUMP"
	finish
	exit 1
fi

SYSCTL_BIN=
for b in /lib/systemd/systemd-sysctl /usr/lib/systemd/systemd-sysctl; do
	if [ -x "$b" ]; then SYSCTL_BIN=$b; break; fi
done

# later_wins: sysctl.d text on stdin -> lines "E KEY<tab>VALUE" (named keys,
# path form), "N KEY" (a "-key" line without '=': excluded from globs, not
# written) and "G POS PATTERN<tab>VALUE" (globs, POS the order systemd applies
# them in: a glob given again with the same value keeps its place, with
# another value it moves to the end).
later_wins() {
	awk '
	function strip(s) {
		sub(/^[ \t\r\n]+/, "", s)
		sub(/[ \t\r\n]+$/, "", s)
		return s
	}
	function swap(s,   i, c, out) {
		out = ""
		for (i = 1; i <= length(s); i++) {
			c = substr(s, i, 1)
			out = out (c == "." ? "/" : c == "/" ? "." : c)
		}
		return out
	}
	# sysctl.d(5): when the first separator is a dot, dots and slashes swap.
	function pathform(k,   first, n, i, parts, res) {
		first = match(k, /[.\/]/) ? substr(k, RSTART, 1) : ""
		if (first == ".")
			k = swap(k)
		n = split(k, parts, "/")
		res = ""
		for (i = 1; i <= n; i++)
			if (parts[i] != "" && parts[i] != ".")
				res = res (res == "" ? "" : "/") parts[i]
		return res
	}
	{
		line = strip($0)
		if (line == "" || line ~ /^[#;]/)
			next
		eq = index(line, "=")
		if (eq == 0 && substr(line, 1, 1) != "-")
			next
		if (eq == 0) {
			key = pathform(strip(substr(line, 2)))
			val = "\001"
		} else {
			key = strip(substr(line, 1, eq - 1))
			if (substr(key, 1, 1) == "-")
				key = strip(substr(key, 2))
			key = pathform(key)
			val = strip(substr(line, eq + 1))
		}
		if (key ~ /[*?[]/) {
			if (!(key in gval) || gval[key] != val)
				gpos[key] = ++npos
			gval[key] = val
		} else {
			eval[key] = val
		}
	}
	END {
		for (k in eval)
			if (eval[k] == "\001")
				print "N " k
			else
				print "E " k "\t" eval[k]
		for (k in gval)
			if (gval[k] != "\001")
				print "G " gpos[k] " " k "\t" gval[k]
	}'
}

# effective ROOT < later_wins output: "key = value" lines, dotted, sorted
effective() {
	root=$1
	cat >"$TMP/lw"
	grep '^[EN] ' "$TMP/lw" | sed 's/^. //; s/\t.*//' >"$TMP/named"
	: >"$TMP/globbed"
	grep '^G ' "$TMP/lw" | sort -n -k2,2 | while IFS= read -r g; do
		rest=${g#G * }
		pat=${rest%%"$(printf '\t')"*}
		val=${rest#*"$(printf '\t')"}
		for f in "$root"/proc/sys/$pat; do
			[ -f "$f" ] || continue
			key=${f#"$root"/proc/sys/}
			grep -qxF "$key" "$TMP/named" && continue
			printf '%s\t%s\n' "$key" "$val" >>"$TMP/globbed"
		done
	done
	{
		grep '^E ' "$TMP/lw" | sed 's/^E //'
		# the last glob to reach a key wins
		awk -F '\t' '{ v[$1] = $0 } END { for (k in v) print v[k] }' "$TMP/globbed"
	} | while IFS= read -r kv; do
		key=${kv%%"$(printf '\t')"*}
		printf '%s = %s\n' "$(printf '%s' "$key" | tr './' '/.')" "${kv#*"$(printf '\t')"}"
	done | LC_ALL=C sort
}

# by_systemd_sysctl ROOT: runs systemd-sysctl on ROOT's files in a private
# namespace, prints "key = value" for what it wrote; returns 77 when the
# mounts fail here, 99 when /proc/sys is not the copy (systemd-sysctl not run).
by_systemd_sysctl() {
	root=$1
	ps=$TMP/procsys
	rm -rf "$ps" "$TMP/empty"
	mkdir -p "$TMP/empty"
	if [ -d "$root/proc/sys" ]; then cp -R "$root/proc/sys" "$ps"; else mkdir -p "$ps"; fi
	find "$ps" -type f -exec sh -c 'for f; do : >"$f"; done' sh {} +
	: >"$ps/.hosttune-fixture"
	src() { if [ -d "$root/$1" ]; then echo "$root/$1"; else echo "$TMP/empty"; fi; }
	unshare -mn sh -c '
		mount --bind "$1" /etc &&
		mount --bind "$2" /usr/lib/sysctl.d &&
		mount -t tmpfs tmpfs /run &&
		mkdir /run/sysctl.d &&
		mount --bind "$3" /run/sysctl.d &&
		mount -t tmpfs tmpfs /usr/local/lib &&
		mkdir /usr/local/lib/sysctl.d &&
		mount --bind "$4" /usr/local/lib/sysctl.d &&
		mount --bind "$5" /proc/sys || exit 77
		test -e /proc/sys/.hosttune-fixture || exit 99
		env -i SYSTEMD_LOG_TARGET=console SYSTEMD_LOG_LEVEL=err "$6" || :
	' sh "$(src etc)" "$(src usr/lib/sysctl.d)" "$(src run/sysctl.d)" \
		"$(src usr/local/lib/sysctl.d)" "$ps" "$SYSCTL_BIN" 2>"$TMP/sysctl.err"
	rc=$?
	[ "$rc" -eq 0 ] || return "$rc"
	(cd "$ps" && find . -type f ! -name .hosttune-fixture -size +0c) | sed 's|^\./||' |
		while IFS= read -r f; do
			# each write starts at offset 0 and ends in a newline: line 1 is the last
			key=$(printf '%s' "$f" | tr './' '/.')
			printf '%s = %s\n' "$key" "$(head -n 1 "$ps/$f")"
		done | LC_ALL=C sort
}

# existing ROOT: keeps the "key = value" lines whose key is a file in ROOT/proc/sys
existing() {
	while IFS= read -r kv; do
		path=$(printf '%s' "${kv%% = *}" | tr './' '/.')
		[ -f "$1/proc/sys/$path" ] && printf '%s\n' "$kv"
	done
}

ns_ok=
if [ -n "$SYSCTL_BIN" ] && [ "$(id -u)" -eq 0 ] && unshare -mn true 2>/dev/null &&
	[ -d /usr/lib/sysctl.d ] && [ -d /usr/local/lib ] && [ -d /run ]; then
	ns_ok=1
else
	echo "# skip part 2 (systemd-sysctl in a namespace): needs root, unshare and systemd-sysctl"
fi

for dir in "$FIXTURES"/bootconf-*/root; do
	name=${dir%/root}
	name=${name##*/}
	"$DUMP" "$dir" >"$TMP/ours" 2>"$TMP/ours.err"
	expect_eq "$name: bootconf-dump exits 0" 0 $?
	systemd-analyze cat-config sysctl.d --root="$dir" --no-pager 2>"$TMP/cat.err" |
		later_wins | effective "$dir" >"$TMP/cat"
	expect_eq "$name: same values as systemd-analyze cat-config + later wins" \
		"$(cat "$TMP/cat")" "$(cat "$TMP/ours")"

	[ -n "$ns_ok" ] || continue
	if [ -d "$dir/lib/sysctl.d" ] && [ ! -L "$dir/lib" ] && [ -L /lib ]; then
		echo "# $name: skip part 2, a real lib/sysctl.d cannot be bound apart" \
			"from /usr/lib here"
		continue
	fi
	by_systemd_sysctl "$dir" >"$TMP/sd"
	rc=$?
	if [ "$rc" -eq 77 ]; then
		echo "# $name: skip part 2, the namespace's mounts failed:" \
			"$(head -n 1 "$TMP/sysctl.err")"
		continue
	fi
	if [ "$rc" -ne 0 ]; then
		not_ok "$name: systemd-sysctl ran in a namespace" "exit $rc" \
			"$(cat "$TMP/sysctl.err")"
		continue
	fi
	existing "$dir" <"$TMP/ours" >"$TMP/ours.existing"
	expect_eq "$name: same values as systemd-sysctl wrote" \
		"$(cat "$TMP/sd")" "$(cat "$TMP/ours.existing")"
done

# The host itself, read only: part 1 alone.
"$DUMP" / >"$TMP/ours" 2>"$TMP/ours.err"
expect_eq "host: bootconf-dump exits 0" 0 $?
systemd-analyze cat-config sysctl.d --no-pager 2>"$TMP/cat.err" | later_wins | effective "" \
	>"$TMP/cat"
expect_eq "host: same values as systemd-analyze cat-config + later wins" \
	"$(cat "$TMP/cat")" "$(cat "$TMP/ours")"

# The comparisons must not pass on two empty outputs. bootconf-sysctl has
# 18 effective values: fs.inotify.max_user_watches, kernel.domainname,
# kernel.pid_max, net.core.netdev_max_backlog, net.core.somaxconn (5), the
# rp_filter of default, eth0, eth0.100 and lo (4; "all" is excluded), the
# accept_source_route of eth0 and lo (2), eth0.100 forwarding,
# ip_local_port_range, tcp_fin_timeout, tcp_max_syn_backlog (4), the two
# net.netfilter keys (2) and vm.swappiness (1): 5 + 4 + 2 + 4 + 2 + 1 = 18.
# All but the two net.netfilter keys exist in its proc/sys (nf_conntrack is
# not loaded in that tree): 18 - 2 = 16.
"$DUMP" "$FIXTURES/bootconf-sysctl/root" >"$TMP/ours"
expect_eq "bootconf-sysctl: 18 effective values" 18 "$(wc -l <"$TMP/ours" | tr -d ' ')"
existing "$FIXTURES/bootconf-sysctl/root" <"$TMP/ours" >"$TMP/ours.existing"
expect_eq "bootconf-sysctl: 16 of them exist in its proc/sys" 16 \
	"$(wc -l <"$TMP/ours.existing" | tr -d ' ')"

finish
