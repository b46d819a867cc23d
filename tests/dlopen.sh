#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# libkmod and libcrypto are loaded with dlopen(3) when a collector first
# needs them (src/shared/dlopen.h), never at start-up: which runs load them
# (LD_DEBUG=files, the dynamic loader's own record), and what hosttune says
# when they cannot be loaded (root: each hidden in a mount namespace of its
# own behind an empty file, or behind a library without their symbols):
# their facts are unavailable with ENOENT or ELIBACC and a source that names
# the library, the files' facts are still there, and nothing crashes.
. "$(dirname "$0")/lib.sh"

# loads LABEL ARGS...: the libraries hosttune ARGS loads, one soname a line, in $TMP/loaded
loads() {
	label=$1
	shift
	LD_DEBUG=files "$HOSTTUNE" --rules "$HT_RULES_DIR" "$@" 2>"$TMP/ld" >/dev/null
	rc=$?
	case $rc in
	0 | 1) ok "$label: exit $rc" ;;
	*) not_ok "$label: exits 0 or 1" "got $rc" ;;
	esac
	sed -n 's/.*file=\(lib[^ ]*\.so[^ ]*\) .*/\1/p' "$TMP/ld" | sort -u >"$TMP/loaded"
}
# loaded SONAME: 0 when the last loads() loaded it
loaded() { grep -qx "$1" "$TMP/loaded"; }

# ---- start-up: neither library ----
loads "--version" --version
if loaded libkmod.so.2 || loaded libcrypto.so.3; then
	not_ok "--version loads neither libkmod nor libcrypto" "$(cat "$TMP/loaded")"
else
	ok "--version loads neither libkmod nor libcrypto"
fi
expect_contains "LD_DEBUG shows the libraries linked (libc)" libc.so.6 "$(cat "$TMP/loaded")"

# ---- nf_conntrack loaded or built in: the files settle it, no libkmod ----
for tree in kmod-options kmod-builtin; do
	loads "$tree audit" --root "$FIXTURES/$tree/root" --no-measure audit
	if loaded libkmod.so.2; then not_ok "$tree: an audit does not load libkmod"; else
		ok "$tree: an audit does not load libkmod"; fi
done
# Not loaded: whether modules.dep has it is libkmod's to say.
loads "first-boot audit" --root "$FIXTURES/first-boot/root" --no-measure audit
if loaded libkmod.so.2; then ok "first-boot: an audit loads libkmod (modules.dep)"; else
	not_ok "first-boot: an audit loads libkmod (modules.dep)" "$(cat "$TMP/loaded")"; fi
loads "kmod-options facts" --root "$FIXTURES/kmod-options/root" --no-measure facts
if loaded libkmod.so.2; then ok "facts loads libkmod (modprobe.d options)"; else
	not_ok "facts loads libkmod (modprobe.d options)"; fi
if [ -d /sys/module/nf_conntrack ]; then
	loads "live audit" --no-measure audit
	if loaded libkmod.so.2 || loaded libcrypto.so.3; then
		not_ok "live, nf_conntrack in /sys/module: an idle audit loads neither library" \
			"$(cat "$TMP/loaded")"
	else
		ok "live, nf_conntrack in /sys/module: an idle audit loads neither library"
	fi
else
	echo "# SKIP live idle audit: nf_conntrack is not in /sys/module here"
fi

# ---- the libraries cannot be loaded ----
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
libfile() { "$ldconfig" -p 2>/dev/null | awk -v n="$1" '$1 == n { print $NF; exit }'; }
kmod_file=$(libfile libkmod.so.2)
crypto_file=$(libfile libcrypto.so.3)
if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null || [ -z "$kmod_file" ] ||
	[ -z "$crypto_file" ]; then
	echo "# SKIP hidden libraries: needs root, unshare -m and ldconfig -p to name both"
	finish
	exit
fi
: >"$TMP/empty"

# hidden FILE-OVER LIBFILE OUT ARGS...: hosttune ARGS --format json with FILE-OVER
# mounted over LIBFILE in a mount namespace of its own; JSON in OUT, stderr in OUT.err
hidden() {
	over=$1 lib=$2 out=$3
	shift 3
	unshare -m sh -c 'mount --bind "$1" "$2" || exit 99; shift 2; exec "$@"' sh \
		"$over" "$lib" "$HOSTTUNE" --rules "$HT_RULES_DIR" --format json "$@" \
		>"$out" 2>"$out.err"
	echo $?
}
fact() { jget "$1" ".facts[\"$2\"].$3"; }

rc=$(hidden "$TMP/empty" "$kmod_file" "$TMP/opt.json" --root "$FIXTURES/kmod-options/root" \
	--no-measure facts)
expect_eq "no libkmod: facts exits 0" 0 "$rc"
expect_eq "no libkmod: nothing on stderr" "" "$(cat "$TMP/opt.json.err")"
expect_eq "no libkmod: modprobe options unavailable ENOENT" ENOENT \
	"$(fact "$TMP/opt.json" modprobe.nf_conntrack.options error)"
expect_contains "no libkmod: the options' source names the library" \
	"libkmod modprobe.d options: " "$(fact "$TMP/opt.json" modprobe.nf_conntrack.options source)"
expect_contains "no libkmod: the options' source names the file" "libkmod.so.2" \
	"$(fact "$TMP/opt.json" modprobe.nf_conntrack.options source)"
expect_eq "no libkmod: hashsize unavailable ENOENT" ENOENT \
	"$(fact "$TMP/opt.json" modprobe.nf_conntrack.hashsize error)"
expect_eq "no libkmod: the state from initstate still" loaded \
	"$(fact "$TMP/opt.json" conntrack.module value)"
expect_eq "no libkmod: the sysfs parameters still" 16384 \
	"$(fact "$TMP/opt.json" module.nf_conntrack.hashsize value)"

rc=$(hidden "$TMP/empty" "$kmod_file" "$TMP/fb.json" --root "$FIXTURES/first-boot/root" \
	--no-measure facts)
expect_eq "no libkmod, module not loaded: facts exits 0" 0 "$rc"
expect_eq "no libkmod, module not loaded: state unavailable ENOENT" ENOENT \
	"$(fact "$TMP/fb.json" conntrack.module error)"
expect_contains "no libkmod, module not loaded: its source names the library" \
	"libkmod.so.2" "$(fact "$TMP/fb.json" conntrack.module source)"
expect_eq "no libkmod, module not loaded: conntrack.loaded from /sys/module" false \
	"$(fact "$TMP/fb.json" conntrack.loaded value)"
rc=$(hidden "$TMP/empty" "$kmod_file" "$TMP/fba.json" --root "$FIXTURES/first-boot/root" \
	--no-measure audit)
case $rc in
0 | 1) ok "no libkmod, module not loaded: audit exits $rc" ;;
*) not_ok "no libkmod, module not loaded: audit exits 0 or 1" "got $rc: $(cat "$TMP/fba.json.err")" ;;
esac

rc=$(hidden "$TMP/empty" "$crypto_file" "$TMP/cpu.json" facts)
expect_eq "no libcrypto: facts (measuring) exits 0" 0 "$rc"
for f in cpu.aes.gcm_mbps cpu.chacha.mbps cpu.aes.hw; do
	expect_eq "no libcrypto: $f unavailable ENOENT" ENOENT "$(fact "$TMP/cpu.json" "$f" error)"
done
expect_contains "no libcrypto: the measurement's source names the library" "libcrypto.so.3" \
	"$(fact "$TMP/cpu.json" cpu.aes.gcm_mbps source)"
expect_eq "no libcrypto: the CPU flags still" true \
	"$(jget "$TMP/cpu.json" '.facts["cpu.aes.flag"] | has("value")')"

# ---- a library without the symbols (another version): ELIBACC, the symbol named ----
cc=${CC:-cc}
if command -v "$cc" >/dev/null 2>&1 &&
	echo 'int ht_stub(void); int ht_stub(void) { return 0; }' >"$TMP/stub.c" &&
	"$cc" -shared -fPIC -o "$TMP/stub.so" "$TMP/stub.c" 2>/dev/null; then
	rc=$(hidden "$TMP/stub.so" "$kmod_file" "$TMP/sk.json" --root "$FIXTURES/kmod-options/root" \
		--no-measure facts)
	expect_eq "libkmod without its symbols: facts exits 0" 0 "$rc"
	expect_eq "libkmod without its symbols: options unavailable ELIBACC" ELIBACC \
		"$(fact "$TMP/sk.json" modprobe.nf_conntrack.options error)"
	expect_contains "libkmod without its symbols: the symbol named" "kmod_new" \
		"$(fact "$TMP/sk.json" modprobe.nf_conntrack.options source)"
	rc=$(hidden "$TMP/stub.so" "$crypto_file" "$TMP/sc.json" facts)
	expect_eq "libcrypto without its symbols: facts exits 0" 0 "$rc"
	expect_eq "libcrypto without its symbols: ELIBACC" ELIBACC \
		"$(fact "$TMP/sc.json" cpu.aes.gcm_mbps error)"
	expect_contains "libcrypto without its symbols: the symbol named" "EVP_aes_128_gcm" \
		"$(fact "$TMP/sc.json" cpu.aes.gcm_mbps source)"
else
	echo "# SKIP libraries without their symbols: no C compiler ($cc)"
fi

finish
