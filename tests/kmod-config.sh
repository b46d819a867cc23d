#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The libkmod collector (ht_collect_kmod) on --root trees: nf_conntrack's
# state (loaded, builtin, available, absent), its sysfs parameters, and the
# options modprobe.d gives it, merged as libkmod merges them. Then the live
# host, read only.
. "$(dirname "$0")/lib.sh"

REL=6.1.0-18-amd64

# collect ROOT: the facts of ROOT as JSON in $TMP/f.json; stderr in $TMP/err
collect() {
	"$HOSTTUNE" --no-measure --root "$1" --format json facts >"$TMP/f.json" 2>"$TMP/err"
	expect_eq "$2: facts exits 0" 0 $?
}
val() { jget "$TMP/f.json" ".facts[\"$1\"].value"; }
err() { jget "$TMP/f.json" ".facts[\"$1\"].error"; }
src() { jget "$TMP/f.json" ".facts[\"$1\"].source"; }
unit() { jget "$TMP/f.json" ".facts[\"$1\"].unit"; }

# ---- one modprobe.d file, module loaded (initstate "live") ----
collect "$FIXTURES/kmod-options/root" "kmod-options"
expect_eq "options: hashsize from etc/modprobe.d/x.conf" 16384 \
	"$(val modprobe.nf_conntrack.hashsize)"
expect_eq "options: unit" buckets "$(unit modprobe.nf_conntrack.hashsize)"
expect_eq "options: the option string" "hashsize=16384" "$(val modprobe.nf_conntrack.options)"
expect_eq "options: source" "libkmod modprobe.d options" "$(src modprobe.nf_conntrack.options)"
expect_eq "options: initstate live -> loaded" loaded "$(val conntrack.module)"
expect_eq "options: conntrack.loaded" true "$(val conntrack.loaded)"
expect_eq "options: sysfs hashsize as a number" 16384 "$(val module.nf_conntrack.hashsize)"
expect_eq "options: hashsize keeps the sysfs path as source" \
	/sys/module/nf_conntrack/parameters/hashsize "$(src module.nf_conntrack.hashsize)"
# nf_conntrack_expect_init(): expect buckets = hashsize / 256 = 16384 / 256 = 64
expect_eq "options: expect_hashsize" 64 "$(val module.nf_conntrack.expect_hashsize)"
expect_eq "options: expect_hashsize unit" buckets "$(unit module.nf_conntrack.expect_hashsize)"
expect_eq "options: a bool parameter stays a string" N "$(val module.nf_conntrack.acct)"
expect_eq "options: no unit on acct" null "$(unit module.nf_conntrack.acct)"
expect_eq "options: nothing on stderr" "" "$(cat "$TMP/err")"

# ---- several files and directories merge; module absent from /sys ----
# libkmod sorts the file names of all four directories together; for one
# name the first directory wins (/etc, /run, /usr/local/lib, /lib), so
# lib/modprobe.d/60-hosttune.conf (hashsize=999) is shadowed by run's, and
# 80-ignored.txt is not a .conf. Order: 50-acct (etc), 60-hosttune (run),
# 70-override (lib, "nf-conntrack" is the same module). The last hashsize=
# wins: 131072.
collect "$FIXTURES/kmod-merge/root" "kmod-merge"
expect_eq "merge: options in file-name order" \
	"acct=1 hashsize=65536 expect_hashsize=256 hashsize=131072" \
	"$(val modprobe.nf_conntrack.options)"
expect_eq "merge: last hashsize= wins" 131072 "$(val modprobe.nf_conntrack.hashsize)"
expect_eq "merge: no /sys/module/nf_conntrack -> not loaded" false "$(val conntrack.loaded)"
expect_eq "merge: no modules.dep.bin -> state unknown" ENOENT "$(err conntrack.module)"
expect_eq "merge: no sysfs hashsize" ENOENT "$(err module.nf_conntrack.hashsize)"

# ---- no modprobe.d at all ----
collect "$FIXTURES/kmod-none/root" "kmod-none"
expect_eq "none: empty option string" "" "$(val modprobe.nf_conntrack.options)"
expect_eq "none: hashsize not given" ENOENT "$(err modprobe.nf_conntrack.hashsize)"
expect_eq "none: hashsize unit kept" buckets "$(unit modprobe.nf_conntrack.hashsize)"
expect_eq "none: not loaded" false "$(val conntrack.loaded)"

# ---- built in: modules.builtin lists it, /sys/module has no initstate ----
collect "$FIXTURES/kmod-builtin/root" "kmod-builtin"
expect_eq "builtin: state" builtin "$(val conntrack.module)"
expect_eq "builtin: source" "/lib/modules/$REL/modules.builtin" "$(src conntrack.module)"
expect_eq "builtin: loaded" true "$(val conntrack.loaded)"
expect_eq "builtin: sysfs hashsize" 262144 "$(val module.nf_conntrack.hashsize)"

# ---- option values as the kernel parses them (kstrtouint base 0, quotes) ----
mkroot() {
	rm -rf "$TMP/r"
	mkdir -p "$TMP/r/etc/modprobe.d" "$TMP/r/proc/sys/kernel"
	echo "$REL" >"$TMP/r/proc/sys/kernel/osrelease"
}
opt_case() { # DESCRIPTION OPTIONS-LINE FIELD EXPECTED
	mkroot
	printf '%s\n' "$2" >"$TMP/r/etc/modprobe.d/t.conf"
	collect "$TMP/r" "$1"
	expect_eq "$1" "$4" "$($3 modprobe.nf_conntrack.hashsize)"
}
# 0x4000 = 4 x 16^3 = 16384
opt_case "hex value" "options nf_conntrack hashsize=0x4000" val 16384
# 0100 octal = 64
opt_case "octal value" "options nf_conntrack hashsize=0100" val 64
opt_case "quoted value" 'options nf_conntrack hashsize="32768" acct=1' val 32768
opt_case "dash in the parameter name" "options nf_conntrack hash-size=1 hashsize=8192" val 8192
opt_case "not a number" "options nf_conntrack hashsize=lots" err EINVAL
# 2^32 = 4294967296 > UINT_MAX 4294967295
opt_case "above unsigned int" "options nf_conntrack hashsize=4294967296" err ERANGE
opt_case "negative" "options nf_conntrack hashsize=-1" err EINVAL
opt_case "another module's options" "options nf_conntrack_ftp ports=21" err ENOENT
# libkmod reports bad lines on stderr from inside kmod_new(); the collector must not print.
opt_case "bad modprobe.d lines are skipped" \
	"$(printf 'bogus nf_conntrack\ninclude /etc/other.conf\noptions\noptions nf_conntrack hashsize=2048')" \
	val 2048
expect_eq "bad modprobe.d lines: nothing on stderr" "" "$(cat "$TMP/err")"

# ---- a parameter that cannot be read is unavailable with its errno ----
mkroot
mkdir -p "$TMP/r/sys/module/nf_conntrack/parameters/odd"
echo 4096 >"$TMP/r/sys/module/nf_conntrack/parameters/hashsize"
collect "$TMP/r" "unreadable parameter"
expect_eq "unreadable parameter: read(2) of a directory" EISDIR "$(err module.nf_conntrack.odd)"
expect_eq "unreadable parameter: the others still read" 4096 "$(val module.nf_conntrack.hashsize)"
expect_eq "no initstate, not in modules.builtin -> loaded" loaded "$(val conntrack.module)"

# ---- available / absent: needs depmod and a C compiler for a stand-in module ----
cc=${CC:-cc}
if command -v depmod >/dev/null 2>&1 && command -v "$cc" >/dev/null 2>&1; then
	# A relocatable object with a .modinfo section is all depmod needs to index it.
	cat >"$TMP/m.c" <<-'EOF'
	__attribute__((section(".modinfo"), used)) static const char l[] = "license=GPL";
	EOF
	for mod in nf_conntrack nf_tables; do
		mkroot
		dir=$TMP/r/lib/modules/$REL/kernel/net/netfilter
		mkdir -p "$dir"
		"$cc" -c "$TMP/m.c" -o "$dir/$mod.ko"
		depmod -b "$TMP/r" "$REL" 2>/dev/null
		collect "$TMP/r" "modules.dep with $mod"
		if [ "$mod" = nf_conntrack ]; then want=available; else want=absent; fi
		expect_eq "modules.dep with $mod.ko -> $want" "$want" "$(val conntrack.module)"
		expect_eq "modules.dep with $mod.ko: not loaded" false "$(val conntrack.loaded)"
		expect_eq "modules.dep with $mod.ko: source" \
			"libkmod /lib/modules/$REL/modules.dep" "$(src conntrack.module)"
	done
else
	echo "# SKIP available/absent: no depmod or $cc"
fi

# ---- libkmod adds the live /proc/cmdline's options; under --root they are cut ----
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
	echo "quiet nf_conntrack.hashsize=4096 nf-conntrack.acct=1 x.y" >"$TMP/cmdline"
	unshare -m sh -c '
		mount --bind "$1" /proc/cmdline || exit 1
		"$2" --no-measure --root "$3" --format json facts >"$4/root.json" &&
		"$2" --no-measure --format json facts >"$4/live.json"' \
		sh "$TMP/cmdline" "$HOSTTUNE" "$FIXTURES/kmod-options/root" "$TMP"
	expect_eq "kernel command line: unshare -m and a bind mount work" 0 $?
	expect_eq "kernel command line: not in a --root tree's options" "hashsize=16384" \
		"$(jget "$TMP/root.json" '.facts["modprobe.nf_conntrack.options"].value')"
	# Live, libkmod appends them after this host's own modprobe.d options.
	live_opts=$(jget "$TMP/live.json" '.facts["modprobe.nf_conntrack.options"].value')
	case $live_opts in
	"hashsize=4096 acct=1" | *" hashsize=4096 acct=1") ok "kernel command line: live options" ;;
	*) not_ok "kernel command line: live options" "got: $live_opts" ;;
	esac
else
	echo "# SKIP kernel command line: needs root and unshare -m"
fi

# ---- the live host, read only ----
"$HOSTTUNE" --no-measure --format json facts >"$TMP/f.json" 2>"$TMP/err"
expect_eq "live: facts exits 0" 0 $?
expect_eq "live: nothing on stderr" "" "$(cat "$TMP/err")"
state=$(val conntrack.module)
case $state in
builtin | loaded) expect_eq "live: $state -> conntrack.loaded" true "$(val conntrack.loaded)" ;;
available | absent) expect_eq "live: $state -> conntrack.loaded" false "$(val conntrack.loaded)" ;;
null) expect_contains "live: conntrack.module unavailable with an errno" E "$(err conntrack.module)" ;;
*) not_ok "live: conntrack.module is a known state" "got: $state" ;;
esac
echo "# live: conntrack.module = $state ($(src conntrack.module))"
# Only when the module was loaded at hosttune's reading: a netns test's
# first ct rule may load it in between (make -j2 on a fresh machine).
if [ -r /sys/module/nf_conntrack/parameters/hashsize ] &&
	{ [ "$state" = loaded ] || [ "$state" = builtin ]; }; then
	expect_eq "live: module.nf_conntrack.hashsize is the sysfs value" \
		"$(cat /sys/module/nf_conntrack/parameters/hashsize)" \
		"$(val module.nf_conntrack.hashsize)"
fi
expect_eq "live: options are a string" string \
	"$(jget "$TMP/f.json" '.facts["modprobe.nf_conntrack.options"].value | type')"

finish
