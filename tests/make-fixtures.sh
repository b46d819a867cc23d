#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# make-fixtures.sh SRC DEST: copies the fixture directory SRC (tests/fixtures)
# to DEST as the tests read it. DEST is replaced whole, through DEST.tmp.
#
# - The symbolic links listed in SRC/symlinks.list are made in the copy. SRC
#   itself holds none: automake's dist archives with tar -h, which follows
#   links (and an absolute one names the build host's files), so a link in SRC
#   is an error here.
# - Every file and directory of the copy is made owner-writable. SRC can be
#   read-only (make distcheck makes the unpacked tree a-w), and a fixture's
#   proc/sys/net/netfilter/nf_conntrack_max stands for an initial network
#   namespace's, which is 0644: hosttune reads a 0444 one as "inside a
#   container" (collect.c, netns.initial). Tests that want a container chmod
#   their own copy.
set -euf

if [ $# -ne 2 ]; then
	echo "usage: $0 SRC DEST" >&2
	exit 2
fi
src=$1
dest=$2
list=$src/symlinks.list

[ -d "$src" ] || { echo "$0: $src: not a directory" >&2; exit 1; }
[ -f "$list" ] || { echo "$0: $list: missing" >&2; exit 1; }
links=$(cd "$src" && find . -type l | sort)
if [ -n "$links" ]; then
	echo "$0: symbolic links in $src (list them in symlinks.list instead):" >&2
	echo "$links" >&2
	exit 1
fi

tmp=$dest.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
# The contents, not SRC itself: cp -R SRC/. keeps dot files.
cp -R "$src/." "$tmp/"
rm -f "$tmp/symlinks.list"
chmod -R u+w "$tmp"

n=0
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
	lineno=$((lineno + 1))
	case "$line" in '' | '#'*) continue ;; esac
	# shellcheck disable=SC2086 # split into PATH TARGET on purpose
	set -- $line
	if [ $# -ne 2 ]; then
		echo "$list:$lineno: expected PATH TARGET, got: $line" >&2
		exit 1
	fi
	case "/$1/" in
	*/../* | */./* | //*) echo "$list:$lineno: PATH must be relative, without . or ..: $1" >&2; exit 1 ;;
	esac
	if [ -e "$tmp/$1" ] || [ -L "$tmp/$1" ]; then
		echo "$list:$lineno: $1 exists in $src" >&2
		exit 1
	fi
	mkdir -p "$(dirname "$tmp/$1")"
	ln -s "$2" "$tmp/$1"
	n=$((n + 1))
done <"$list"
[ "$n" -gt 0 ] || { echo "$list: no links" >&2; exit 1; }

rm -rf "$dest"
mv "$tmp" "$dest"
