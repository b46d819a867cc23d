# SPDX-License-Identifier: LGPL-2.1-or-later
# The connection path's facts from real sockets, each part in a network
# namespace of its own (`unshare -n`: nothing on the host changes):
#  1. a listener that asks listen(4096) under somaxconn 128 and never
#     accepts, flooded with 300 connects -> backlog 128, queue 129,
#     the audit's listen.full_ports 1, overflows counted, owner and its process facts
#     (soft RLIMIT_NOFILE 1024), the same numbers as ss(8); the same
#     process also listens on [::]:7000 (IPv6 only) with listen(50) and an
#     empty queue: the port's backlog and queue are the full IPv4 socket's
#     128 and 129, never one socket's backlog with another's queue;
#  2. ip_local_port_range "40000 40099" and 90 client sockets in TIME_WAIT
#     to one destination -> ports.top.sockets 90 of the range's 100 ports.
# Needs root, unshare, ss, jq and the helpers tests/listen-hold and
# tests/tcp-churn (HT_BUILD_TESTS_DIR); skipped ("# SKIP") otherwise.
. "${HT_TESTS_DIR:-$(dirname "$0")}/lib.sh"

HOLD=${HT_BUILD_TESTS_DIR:+$HT_BUILD_TESTS_DIR/listen-hold}
CHURN=${HT_BUILD_TESTS_DIR:+$HT_BUILD_TESTS_DIR/tcp-churn}

skip() {
	echo "# SKIP: $1"
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root (unshare -n, sysctl in the namespace)"
[ -n "$HOLD" ] && [ -x "$HOLD" ] && [ -x "$CHURN" ] || skip "listen-hold/tcp-churn not built"
command -v ss >/dev/null 2>&1 || skip "ss(8) not installed"
unshare -n true 2>/dev/null || skip "unshare -n refused"
name_lock listen-hold

# fact JSON NAME [FIELD]: .facts[NAME].FIELD (value by default)
fact() {
	jget "$1" ".facts[\"$2\"].${3:-value}"
}

# ---- 1. listen backlog, owner, descriptors ----
# The unprivileged run needs a binary it can read, wherever the build tree is.
cp "$HOSTTUNE" "$TMP/hosttune"
chmod a+rx "$TMP" "$TMP/hosttune"

cat >"$TMP/listen.sh" <<'EOT'
set -u
ip link set lo up || exit 10
sysctl -qw net.core.somaxconn=128 || exit 11
# Soft RLIMIT_NOFILE 1024 (systemd's default for a service), hard unchanged.
(ulimit -S -n 1024 && exec "$HOLD" 127.0.0.1 7000 4096 300 :: 50) >"$TMP/hold.out" 2>"$TMP/hold.err" &
pid=$!
# The helper ends with the script, on every exit: left behind, it would keep
# its namespace and a listen-hold process for the next run's census.
trap 'kill "$pid" 2>/dev/null' EXIT
echo "$pid" >"$TMP/hold.pid"
i=0
until grep -q ready "$TMP/hold.out" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 100 ] || { kill "$pid"; exit 12; }
	sleep 0.1
done
"$TMP/hosttune" --no-measure --format json facts >"$TMP/l.json" 2>"$TMP/l.err" || exit 13
ss -Htln4 'sport = :7000' >"$TMP/ss.txt"
ss -Htln6 'sport = :7000' >"$TMP/ss6.txt"
# The audit of the same namespace, the helper named as the profile's service.
"$TMP/hosttune" --rules "$HT_RULES_DIR" --no-measure --profile garage \
	--set 'workload.service="listen-hold"' --format json audit >"$TMP/a.json" 2>"$TMP/a.err"
echo $? >"$TMP/a.rc"
ls "/proc/$pid/fd" | wc -l >"$TMP/fds.txt"
ulimit -H -n >"$TMP/hard.txt"
cat "/proc/$pid/comm" >"$TMP/comm.txt"
if command -v setpriv >/dev/null 2>&1; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/hosttune" --no-measure \
		--format json facts >"$TMP/nobody.json" 2>"$TMP/nobody.err" || exit 14
fi
kill "$pid"
exit 0
EOT
export TMP HOLD CHURN HT_RULES_DIR
unshare -n sh "$TMP/listen.sh"
rc=$?
expect_eq "namespace 1 runs (exit code of its script)" 0 "$rc"
[ "$rc" -eq 0 ] || { cat "$TMP/hold.err" 2>/dev/null; finish; exit 1; }
expect_eq "hosttune printed nothing on stderr" "" "$(cat "$TMP/l.err")"
L=$TMP/l.json
pid=$(cat "$TMP/hold.pid")

expect_eq "listener.list" 7000 "$(fact "$L" listener.list)"
expect_eq "the audit counts one listening port (listen.ports)" 1 \
	"$(jget "$TMP/a.json" '.values["listen.ports"]')"
expect_eq "listener source is sock_diag" "NETLINK_SOCK_DIAG inet_diag" \
	"$(fact "$L" listener.list source)"
# listen(4096) is capped at somaxconn: min(4096, 128) = 128 (__sys_listen()).
expect_eq "backlog = min(4096, somaxconn 128)" 128 "$(fact "$L" listener.7000.backlog)"
# sk_acceptq_is_full() is sk_ack_backlog > sk_max_ack_backlog, so the queue
# takes connections until it holds 128 + 1 = 129; 300 - 129 = 171 more
# SYNs (and their retransmissions) are dropped as overflows.
expect_eq "queue = backlog + 1 = 129" 129 "$(fact "$L" listener.7000.queue)"
expect_eq "one port full (listen.full_ports)" 1 "$(jget "$TMP/a.json" '.values["listen.full_ports"]')"
expect_eq "one port at the cap (listen.capped_ports)" 1 \
	"$(jget "$TMP/a.json" '.values["listen.capped_ports"]')"
expect_eq "net.core.somaxconn of the namespace" 128 "$(fact "$L" net.core.somaxconn)"
ovf=$(fact "$L" nstat.TcpExtListenOverflows)
if [ "$ovf" -ge 171 ] 2>/dev/null; then ok "ListenOverflows >= 300 - 129 = 171 ($ovf)"
else not_ok "ListenOverflows >= 171" "got: $ovf"; fi
drops=$(fact "$L" nstat.TcpExtListenDrops)
if [ "$drops" -ge "$ovf" ] 2>/dev/null; then ok "ListenDrops ($drops) counts the overflows too"
else not_ok "ListenDrops >= ListenOverflows" "got: $drops < $ovf"; fi
expect_eq "addresses" "127.0.0.1 ::" "$(fact "$L" listener.7000.addresses)"
expect_eq "owner pid" "$pid" "$(fact "$L" listener.7000.pid)"
expect_eq "owner process (comm)" "$(cat "$TMP/comm.txt")" "$(fact "$L" listener.7000.process)"
expect_eq "comm is the helper's name" listen-hold "$(cat "$TMP/comm.txt")"

# ss -ltn: Recv-Q is the accept queue, Send-Q the backlog of a listener.
set -- $(cat "$TMP/ss.txt")
expect_eq "ss agrees: Recv-Q = queue" "$(fact "$L" listener.7000.queue)" "${2:-}"
expect_eq "ss agrees: Send-Q = backlog" "$(fact "$L" listener.7000.backlog)" "${3:-}"
# The IPv6 socket of the port: listen(50), nothing queued; not the one reported.
set -- $(cat "$TMP/ss6.txt")
expect_eq "ss: the [::]:7000 socket's Recv-Q|Send-Q" "0|50" "${2:-}|${3:-}"

# The owner is a checked process: process.listen-hold.*
expect_eq "process.list" listen-hold "$(fact "$L" process.list)"
expect_eq "process pid" "$pid" "$(fact "$L" process.listen-hold.pid)"
expect_eq "process nofile (ulimit -S -n 1024)" 1024 "$(fact "$L" process.listen-hold.nofile)"
expect_eq "process nofile_hard (ulimit -H -n)" "$(cat "$TMP/hard.txt")" \
	"$(fact "$L" process.listen-hold.nofile_hard)"
# 0, 1, 2 + the two listeners + 300 client sockets = 305 descriptors.
expect_eq "process fds = 3 + 2 + 300" 305 "$(fact "$L" process.listen-hold.fds)"
expect_eq "process fds = ls /proc/PID/fd | wc -l" "$(cat "$TMP/fds.txt")" \
	"$(fact "$L" process.listen-hold.fds)"

# The audit: port 7000 critical (129 >= 128, capped by somaxconn: lever
# listen.somaxconn, and the remedy restarts listen-hold); somaxconn a warning
# (4096 recommended, 1 port at the cap, overflows counted); the process a
# warning (1024 < the garage profile's 42000, 305 of 1024 is not near it);
# exit 1 (findings at warning or above).
A=$TMP/a.json
expect_eq "audit exits 1" 1 "$(cat "$TMP/a.rc")"
expect_eq "audit: nothing on stderr" "" "$(cat "$TMP/a.err")"
expect_eq "audit: listen.backlog[7000] critical, 128 -> 4096, lever somaxconn" \
	"critical|128|4096|listen.somaxconn" \
	"$(jget "$A" '.findings[] | select(.rule == "listen.backlog" and .instance == "7000")
		| "\(.severity)|\(.current)|\(.recommended)|\(.lever)"')"
expect_contains "audit: the port's text names the process and the queue" \
	"Port 7000 (listen-hold, PID $pid) has 129 connections waiting for accept() now and a backlog of 128 (net.core.somaxconn is 128;" \
	"$(jget "$A" '.findings[] | select(.rule == "listen.backlog" and .instance == "7000") | .explanation')"
expect_contains "audit: the remedy restarts it" "then restart listen-hold" \
	"$(jget "$A" '.findings[] | select(.rule == "listen.backlog" and .instance == "7000") | .remedy')"
expect_eq "audit: listen.somaxconn warning, 128 -> 4096" "warning|128|4096" \
	"$(jget "$A" '.findings[] | select(.rule == "listen.somaxconn") | "\(.severity)|\(.current)|\(.recommended)"')"
# Garage's 42000 is the profile's plan for its service: info until stated.
expect_eq "audit: the process below garage's 42000: advice" "info|1024|42000" \
	"$(jget "$A" '.findings[] | select(.rule == "process.limit_nofile" and .instance == "listen-hold")
		| "\(.severity)|\(.current)|\(.recommended)"')"

if [ -s "$TMP/nobody.json" ]; then
	N=$TMP/nobody.json
	expect_eq "as nobody: nothing on stderr" "" "$(cat "$TMP/nobody.err")"
	# sock_diag dumps TCP sockets for any user: the same backlog and queue.
	expect_eq "as nobody: backlog" 128 "$(fact "$N" listener.7000.backlog)"
	expect_eq "as nobody: queue" 129 "$(fact "$N" listener.7000.queue)"
	# root's /proc/PID/fd is refused (EACCES): the owner is unknown, not a failure.
	expect_eq "as nobody: owner unavailable EACCES" "null EACCES" \
		"$(jget "$N" '.facts["listener.7000.pid"] | "\(.value) \(.error)"')"
	expect_eq "as nobody: process unavailable EACCES" EACCES \
		"$(fact "$N" listener.7000.process error)"
else
	echo "# SKIP unprivileged run: setpriv not installed"
fi

# ---- 2. ephemeral ports ----
cat >"$TMP/ports.sh" <<'EOT'
set -u
ip link set lo up || exit 10
sysctl -qw net.ipv4.ip_local_port_range="40000 40099" || exit 11
# No reuse of a TIME_WAIT port by a later connect() of the churn.
sysctl -qw net.ipv4.tcp_tw_reuse=0 || exit 11
"$CHURN" 127.0.0.1 5001 90 >"$TMP/churn.out" || exit 12
"$TMP/hosttune" --no-measure --format json facts >"$TMP/p.json" 2>"$TMP/p.err" || exit 13
ss -Htan state time-wait | wc -l >"$TMP/tw.txt"
"$TMP/hosttune" --rules "$HT_RULES_DIR" --no-measure --format json audit >"$TMP/pa.json" 2>"$TMP/pa.err"
exit 0
EOT
unshare -n sh "$TMP/ports.sh"
rc=$?
expect_eq "namespace 2 runs (exit code of its script)" 0 "$rc"
[ "$rc" -eq 0 ] || { finish; exit 1; }
P=$TMP/p.json
expect_eq "tcp-churn made 90 connections" 90 "$(cat "$TMP/churn.out")"
expect_eq "ip_local_port_range as one line" "40000 40099" \
	"$(fact "$P" net.ipv4.ip_local_port_range)"
expect_eq "ports.range.low" 40000 "$(fact "$P" ports.range.low)"
expect_eq "ports.range.high" 40099 "$(fact "$P" ports.range.high)"
# Each connection was closed by the client first: 90 client sockets in
# TIME_WAIT, each holding one of the range's 40099 - 40000 + 1 = 100 ports;
# the server's sockets closed (LAST_ACK -> CLOSE) and the listener is gone.
expect_eq "ports.time_wait" 90 "$(fact "$P" ports.time_wait)"
expect_eq "ss counts the same TIME_WAIT sockets" 90 "$(cat "$TMP/tw.txt")"
expect_eq "ports.top.sockets" 90 "$(fact "$P" ports.top.sockets)"
expect_eq "ports.top.time_wait" 90 "$(fact "$P" ports.top.time_wait)"
expect_eq "ports.destinations: one key" 1 "$(fact "$P" ports.destinations)"
expect_eq "ports.top.destination" 127.0.0.1:5001 "$(fact "$P" ports.top.destination)"
expect_eq "ports.top.source" 127.0.0.1 "$(fact "$P" ports.top.source)"
expect_eq "ports.top.loopback (127.0.0.1:5001)" true "$(fact "$P" ports.top.loopback)"
# The audit: 90 of 100 ports = 90%: critical; tcp_tw_reuse 0 -> 1 (timestamps on).
expect_eq "audit: ports.ephemeral critical, 90 of 100" "critical|90|null" \
	"$(jget "$TMP/pa.json" '.findings[] | select(.rule == "ports.ephemeral") | "\(.severity)|\(.current)|\(.recommended)"')"
expect_contains "audit: the destination and the share" \
	"In use: 90 of 100 ports (90.0%). Where it is set: net.ipv4.ip_local_port_range, in sysctl.d. In use counts the sockets of the busiest destination now, 127.0.0.1:5001 from 127.0.0.1 (in TIME_WAIT: 90)" \
	"$(jget "$TMP/pa.json" '.findings[] | select(.rule == "ports.ephemeral") | .explanation')"
expect_eq "audit: tcp_tw_reuse 0 -> 1" "warning|0|1" \
	"$(jget "$TMP/pa.json" '.findings[] | select(.rule == "ports.tw_reuse") | "\(.severity)|\(.current)|\(.recommended)"')"
expect_eq "no listener left" "" "$(fact "$P" listener.list)"
expect_eq "the audit counts no listening port" 0 "$(jget "$TMP/pa.json" '.values["listen.ports"]')"

finish
