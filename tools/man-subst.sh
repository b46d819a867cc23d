#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# man-subst.sh IN OUT SYSCONFDIR PKGDATADIR: the man page IN (roff made by
# scdoc, with @SYSCONFDIR@ and @PKGDATADIR@ left in) with the configured
# paths put in, written to OUT. After each "/" of a path goes groff's "\:", a
# place to break the line that prints nothing: a path longer than the
# terminal (a build under a deep directory, as make distcheck's prefix is)
# breaks at a "/" instead of running past the right margin. Exits 1 when a
# placeholder is left.
set -eu
if [ $# -ne 4 ]; then
	echo "usage: $0 IN OUT SYSCONFDIR PKGDATADIR" >&2
	exit 2
fi
# quote PATH: PATH for sed's replacement ("\", "&" and "|" quoted), with a
# break point after each "/".
quote() {
	printf '%s\n' "$1" | sed -e 's/[\&|]/\\&/g' -e 's|/|/\\\\:|g'
}
etc=$(quote "$3")
share=$(quote "$4")
sed -e "s|@SYSCONFDIR@|$etc|g" -e "s|@PKGDATADIR@|$share|g" "$1" >"$2.tmp"
if grep -n '@[A-Z][A-Z]*@' "$2.tmp" >&2; then
	echo "$2: a placeholder left" >&2
	rm -f "$2.tmp"
	exit 1
fi
mv "$2.tmp" "$2"
