#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Text from the host shown in one line: a process whose comm holds a
# newline, a forged "[ok]" and U+202E (RIGHT-TO-LEFT OVERRIDE), listening on
# Garage's S3 port in a private network namespace, appears in the table row,
# the explanation and the finding's heading escaped (\n, \xe2\x80\xae), so no
# line of the report starts with its text; JSON keeps the name as it is.
# Root and unshare(1) (a namespace of this test's own); python3 sets the comm.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null || ! command -v python3 >/dev/null ||
	! unshare -n true 2>/dev/null; then
	echo "1..0 # SKIP needs root, unshare -n and python3"
	exit 77
fi

cat >"$TMP/odd.py" <<'PY'
import ctypes, socket, sys, time
# 15 bytes, TASK_COMM_LEN 16: "x", newline, "[ok] all", U+202E.
name = b"x\n[ok] all\xe2\x80\xae"
ctypes.CDLL(None).prctl(15, ctypes.c_char_p(name), 0, 0, 0)  # PR_SET_NAME
s = socket.socket()
s.bind(("127.0.0.1", 3900))
s.listen(5)
open(sys.argv[1], "w").write("ready\n")
time.sleep(60)
PY
cat >"$TMP/run.sh" <<RUN
ip link set lo up
python3 "$TMP/odd.py" "$TMP/ready" &
p=\$!
i=0
while [ ! -s "$TMP/ready" ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
"$HOSTTUNE" --rules "$HT_RULES_DIR" --no-config --no-measure --profile garage -v audit >"$TMP/out" 2>&1
"$HOSTTUNE" --rules "$HT_RULES_DIR" --no-config --no-measure --profile garage --format json audit >"$TMP/json" 2>&1
kill \$p
RUN
unshare -n sh "$TMP/run.sh"

# The name as the report shows it: x, \n, [ok] all, then U+202E's three bytes.
shown='x\n[ok] all\xe2\x80\xae'
expect_eq "no line of the report starts with the forged text" 0 "$(grep -c '^\[ok\] all' "$TMP/out")"
expect_eq "no raw U+202E in the report" 0 "$(grep -c "$(printf '\342\200\256')" "$TMP/out")"
expect_eq "the table row: the holder escaped, critical" \
	"garage.ports[3900] $shown garage critical" \
	"$(grep -F 'garage.ports[3900] ' "$TMP/out" | head -n 1 | tr -s ' ' | sed 's/ $//')"
expect_contains "the explanation: escaped, in its sentence" \
	"$shown (PID " "$(cat "$TMP/out")"
expect_eq "JSON: the name as the kernel has it" "$(printf 'x\n[ok] all\342\200\256')" \
	"$(jq -r '.findings[] | select(.rule == "garage.ports") | .current' "$TMP/json")"

finish
