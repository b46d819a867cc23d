#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every network namespace a process lives in, judged in that namespace
# (netns.listen, netns.ports, netns.tw_buckets): a container's own somaxconn,
# port range and TIME_WAIT table, and its own counters.
#
# - A --root tree: the namespaces found by ROOT/proc/PID/ns/net, each named
#   by its lowest PID and cgroup, its counters from /proc/PID/net, the holder
#   of its fullest listener from /proc/PID/fd; what a tree cannot carry (a
#   namespace's sysctls, a backlog) unavailable with the reason.
# - Facts files: each rule's verdict against the arithmetic, and a fix that
#   goes to the runtime (or the server's own backlog), never a host file.
# - Live, as root: a namespace of its own (unshare -n) with somaxconn 8, a
#   listener asking for 100 and 30 clients; hosttune's figures agree with
#   ss, sysctl and /proc/PID/net/netstat read inside it in the same run.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh" || exit 99
[ -n "${TMP:-}" ] && [ -d "$TMP" ] || exit 99

# ---- a tree ------------------------------------------------------------------
T=$TMP/tree
netns_tree "$T"
# proc NS PID COMM CGROUP: a process PID in namespace NS.
proc() {
	mkdir -p "$T/proc/$2/ns" "$T/proc/$2/fd"
	ln -s "net:[$1]" "$T/proc/$2/ns/net"
	printf '%s\n' "$3" >"$T/proc/$2/comm"
	printf '0::%s\n' "$4" >"$T/proc/$2/cgroup"
}
D=/system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope
proc 4026532300 300 tini "$D"
proc 4026532300 301 nginx "$D"
proc 4026532400 400 redis-server /kubepods/besteffort/pod0a1b2c3d-0000-4000-8000-000000000001/abc
ln -s 'socket:[777]' "$T/proc/301/fd/6"
mkdir -p "$T/proc/300/net"
cat >"$T/proc/300/net/netstat" <<'EOF'
TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPTimeWaitOverflow
TcpExt: 0 17 19 3
EOF
printf 'TCP: inuse 4 orphan 0 tw 2 alloc 5 mem 1\n' >"$T/proc/300/net/sockstat"
# Its conntrack table: 0x1000 = 4096 entries; drop 0x10 + 0x20 = 48 over two
# CPUs, early_drop 1 + 2 = 3, insert_failed 0 + 5 = 5.
mkdir -p "$T/proc/300/net/stat"
cat >"$T/proc/300/net/stat/nf_conntrack" <<'EOF'
entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart
00001000  00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000010 00000001 00000000  00000000 00000000 00000000 00000000
00001000  00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000005 00000020 00000002 00000000  00000000 00000000 00000000 00000000
EOF
{
	echo "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"
	# :80 (0050) listening with 5 waiting, inode 777; :8080 (1F90) with 1, inode 778.
	echo "   0: 00000000:0050 00000000:0000 0A 00000000:00000005 00:00000000 00000000     0        0 777 1 0 100 0"
	echo "   1: 00000000:1F90 00000000:0000 0A 00000000:00000001 00:00000000 00000000     0        0 778 1 0 100 0"
	# a client socket from 172.17.0.2:40000 (9C40) to 10.0.0.9:6379 (18EB)
	echo "   2: 020011AC:9C40 0900000A:18EB 01 00000000:00000000 00:00000000 00000000     0        0 779 1 0 100 0"
} >"$T/proc/300/net/tcp"
ht --no-measure --root "$T" --format json facts >"$TMP/t.json" 2>"$TMP/t.err" ||
	{ cat "$TMP/t.err"; not_ok "tree: facts"; finish; }
tf() { jget "$TMP/t.json" ".facts[\"netns.$1\"].value"; }
te() { jget "$TMP/t.json" ".facts[\"netns.$1\"].error"; }
expect_eq "tree: the namespaces other than /proc/self's, sorted" "4026532300 4026532400" "$(tf list)"
expect_eq "tree: every link read" 0 "$(tf skipped)"
expect_eq "tree: a namespace by its lowest PID" 300 "$(tf 4026532300.pid)"
expect_eq "tree: ... that process's name" tini "$(tf 4026532300.process)"
expect_eq "tree: ... and how many are in it" 2 "$(tf 4026532300.processes)"
expect_eq "tree: the runtime that made it, from the cgroup's path" docker "$(tf 4026532300.manager)"
expect_eq "tree: a pod's namespace" kubernetes "$(tf 4026532400.manager)"
expect_eq "tree: its container" 0123456789ab "$(tf 4026532300.container_id)"
expect_eq "tree: ListenOverflows of /proc/300/net/netstat" 17 "$(tf 4026532300.listen_overflows)"
expect_eq "tree: TCPTimeWaitOverflow" 3 "$(tf 4026532300.tw_overflows)"
expect_eq "tree: tw of /proc/300/net/sockstat" 2 "$(tf 4026532300.time_wait)"
expect_eq "tree: two listening ports" 2 "$(tf 4026532300.listeners)"
# Without backlogs (/proc/net/tcp) the larger queue is the fuller: :80, 5.
expect_eq "tree: the fullest port" 80 "$(tf 4026532300.top_listener_port)"
expect_eq "tree: its queue (rx_queue)" 5 "$(tf 4026532300.top_listener_queue)"
expect_eq "tree: its backlog is not in /proc/PID/net/tcp" ENODATA "$(te 4026532300.top_listener_backlog)"
expect_eq "tree: its socket's holder, by /proc/PID/fd" 301 "$(tf 4026532300.top_listener_pid)"
expect_eq "tree: ... by name" nginx "$(tf 4026532300.top_listener_process)"
expect_eq "tree: a namespace's sysctls are not in a tree" ENODATA "$(te 4026532300.somaxconn)"
expect_eq "tree: without its range, no destination is counted" ENODATA "$(te 4026532300.top_destination)"
expect_eq "tree: no /proc/400/net: its counters unavailable" ENOENT "$(te 4026532400.listen_overflows)"
expect_eq "tree: its conntrack table's entries (0x1000)" 4096 "$(tf 4026532300.conntrack_count)"
expect_eq "tree: its drops, summed over CPUs (0x10 + 0x20)" 48 "$(tf 4026532300.conntrack_drops)"
expect_eq "tree: early_drop 1 + 2, insert_failed 0 + 5" "3 5" \
	"$(tf 4026532300.conntrack_early_drop) $(tf 4026532300.conntrack_insert_failed)"
ht --no-measure --root "$T" --format json audit >"$TMP/ta.json" 2>/dev/null
expect_eq "tree: without its sysctls, netns.listen is not applicable" false \
	"$(jget "$TMP/ta.json" '.findings[] | select(.rule == "netns.listen" and .instance == "4026532300") | .applicable')"
expect_contains "tree: ... and says why" "only the reader's own network namespace" \
	"$(jget "$TMP/ta.json" '.findings[] | select(.rule == "netns.listen" and .instance == "4026532300") | .explanation')"
expect_eq "tree: no listener in the pod's namespace: no netns.listen row" "" \
	"$(jget "$TMP/ta.json" '.findings[] | select(.rule == "netns.listen" and .instance == "4026532400") | .rule')"
expect_eq "tree: every link read: no netns.coverage" "" \
	"$(jget "$TMP/ta.json" '.findings[] | select(.rule == "netns.coverage") | .rule')"

# ---- the verdict, on facts files ----------------------------------------------
# host FILE: a host with one container namespace, 4026532500, whose figures
# the caller varies.
base=$TMP/base.facts
{
	cat <<'EOF'
kernel.release = "6.1.0-13-amd64" from /proc/sys/kernel/osrelease
kernel.version = v6.1.0 from /proc/sys/kernel/osrelease
mem.total = 8589934592 bytes from /proc/meminfo
EOF
	netns_facts 4026532500 4242 tini \
		/system.slice/docker-aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899.scope docker
	cat <<'EOF'
netns.4026532500.somaxconn = 128 entries from /proc/sys/net/core/somaxconn in the namespace
netns.4026532500.port_range_low = 32768 ports from the namespace
netns.4026532500.port_range_high = 60999 ports from the namespace
netns.4026532500.tcp_tw_reuse = 2 from the namespace
netns.4026532500.tcp_max_tw_buckets = 10000 sockets from the namespace
netns.4026532500.listen_overflows = 0 packets from /proc/4242/net/netstat
netns.4026532500.listen_drops = 0 packets from /proc/4242/net/netstat
netns.4026532500.tw_overflows = 0 sockets from /proc/4242/net/netstat
netns.4026532500.time_wait = 100 sockets from /proc/4242/net/sockstat
netns.4026532500.listeners = 1 listeners from sock_diag
netns.4026532500.top_listener_port = 8000 from sock_diag
netns.4026532500.top_listener_queue = 0 connections from sock_diag
netns.4026532500.top_listener_backlog = 128 entries from sock_diag
netns.4026532500.top_listener_pid = 4250 from /proc/4250/fd
netns.4026532500.top_listener_process = "gunicorn" from /proc/4250/comm
netns.4026532500.top_destination = "10.0.0.9:6379" from sock_diag
netns.4026532500.top_destination_sockets = 100 sockets from sock_diag
netns.4026532500.top_destination_time_wait = 90 sockets from sock_diag
EOF
} | facts_file "$base"
# verdict RULE NAME=VALUE...: "SEVERITY CURRENT RECOMMENDED" of RULE on the base host varied.
# The audit is kept as last.json (F reads it) and under a name of its own.
verdict() {
	rule=$1
	shift
	vary "$base" "$TMP/last.facts" $(for kv in "$@"; do echo "netns.4026532500.$kv"; done)
	ht --facts "$TMP/last.facts" --format json audit >"$TMP/last.json" 2>/dev/null
	cp "$TMP/last.json" "$TMP/v.$RANDOM$RANDOM.json"
	jget "$TMP/last.json" ".findings[] | select(.rule == \"$rule\") | \"\(.severity) \(.current) \(.recommended)\""
}
F() { jget "$TMP/last.json" ".findings[] | select(.rule == \"$1\") | .$2"; }
# The accept queue: 129 of a backlog of 128 = somaxconn (queue > backlog is
# full): the cap; 4096, the default since 5.4.
expect_eq "listen: full at the namespace's cap: critical, somaxconn 4096" "critical 128 4096" \
	"$(verdict netns.listen top_listener_queue=129)"
expect_contains "listen: the fix is the runtime's --sysctl" "docker run --sysctl" "$(F netns.listen remedy)"
expect_contains "listen: ... with the value" "net.core.somaxconn=4096" "$(F netns.listen remedy)"
expect_contains "listen: the holder named" "gunicorn, PID 4250, on port 8000" "$(F netns.listen explanation)"
expect_eq "listen: no file of the host is the fix" null "$(F netns.listen fix)"
# A backlog of 5 the server asked for (below 128): its own; somaxconn stays.
expect_eq "listen: full at a backlog of its own: critical, somaxconn kept" "critical 128 128" \
	"$(verdict netns.listen top_listener_queue=6 top_listener_backlog=5)"
expect_contains "listen: the fix is the server's backlog" "raise the listen backlog in the configuration" \
	"$(F netns.listen remedy)"
case $(F netns.listen remedy) in
*somaxconn=*) not_ok "listen: no somaxconn for a backlog the server chose" ;;
*) ok "listen: no somaxconn for a backlog the server chose" ;;
esac
expect_eq "listen: at the cap, overflows counted, queue empty: warning" "warning 128 4096" \
	"$(verdict netns.listen listen_overflows=40)"
# 100 of 128 = 78% >= 75%: a warning by the limit's own share.
expect_eq "listen: 100 of 128 waiting: warning" "warning 128 4096" \
	"$(verdict netns.listen top_listener_queue=100)"
expect_eq "listen: quiet, somaxconn below 4096: info" "info 128 4096" "$(verdict netns.listen)"
expect_eq "listen: quiet at 4096: ok" "ok 4096 4096" \
	"$(verdict netns.listen somaxconn=4096 top_listener_backlog=4096)"
# Ports: 60999 - 32768 + 1 = 28232 in the range.
expect_eq "ports: 28232 of 28232 to one destination: critical" "critical 28232 null" \
	"$(verdict netns.ports top_destination_sockets=28232)"
expect_contains "ports: the destination named" "10.0.0.9:6379" "$(F netns.ports explanation)"
expect_contains "ports: the fix is connection reuse" "reuse their connections" "$(F netns.ports remedy)"
# 15000 / 28232 = 53%: above half, below 75%.
expect_eq "ports: 53% of the range: warning" "warning 15000 null" \
	"$(verdict netns.ports top_destination_sockets=15000)"
expect_eq "ports: 21174 (75.0%): warning" "warning 21174 null" \
	"$(verdict netns.ports top_destination_sockets=21174)"
expect_eq "ports: 100: ok" "ok 100 null" "$(verdict netns.ports)"
# TIME_WAIT: 9500 of 10000 = 95%; overflowed: twice 9500 to a power of two,
# 32768; with 100 in it, twice 100 to a power of two is 256: the limit kept.
expect_eq "tw: overflowed and at 95% now: warning, 32768" "warning 10000 32768" \
	"$(verdict netns.tw_buckets time_wait=9500 tw_overflows=5)"
expect_eq "tw: overflowed before, 1% now: info, the limit kept" "info 10000 10000" \
	"$(verdict netns.tw_buckets tw_overflows=5)"
expect_eq "tw: at 95%, never overflowed: warning, the limit kept" "warning 10000 10000" \
	"$(verdict netns.tw_buckets time_wait=9500)"
expect_eq "tw: 100 of 10000: ok" "ok 10000 10000" "$(verdict netns.tw_buckets)"
# Its conntrack table against the host's one nf_conntrack_max (65536 here):
# 30000 entries = 45.8%: ok; 50000 = 76.3%: a warning, twice 50000 to a
# power of two = 131072; 65536 with drops: critical, 131072.
vary "$base" "$base.ct" "net.netfilter.nf_conntrack_max=65536 entries from /proc/sys/net/netfilter/nf_conntrack_max" \
	"netns.4026532500.conntrack_count=30000 entries from stat" "netns.4026532500.conntrack_drops=0 packets from stat" \
	"netns.4026532500.conntrack_early_drop=0 entries from stat" "netns.4026532500.conntrack_insert_failed=0 packets from stat"
base0=$base base=$base.ct
expect_eq "conntrack: 30000 of 65536: ok, the max kept" "ok 65536 65536" "$(verdict netns.conntrack)"
expect_eq "conntrack: 50000 of 65536: warning, 131072" "warning 65536 131072" \
	"$(verdict netns.conntrack conntrack_count=50000)"
expect_eq "conntrack: full with drops: critical, 131072" "critical 65536 131072" \
	"$(verdict netns.conntrack conntrack_count=65536 conntrack_drops=120)"
expect_contains "conntrack: the fix is the host's nf_conntrack_max" "net.netfilter.nf_conntrack_max on the host" \
	"$(F netns.conntrack remedy)"
expect_contains "conntrack: the drops are its own" "dropped 120 packets" "$(F netns.conntrack explanation)"
# A drop that insert_failed counts too is a clash (nf_ct_resolve_clash()
# counts both), no full table: 7 drops, 7 failed insertions, 12 entries: ok,
# the max kept. 50 drops with none failed at 1000 entries: it was full once,
# so more than the cap: pow2ceil(65536 + 1) = 131072, critical.
expect_eq "conntrack: clash drops are no full table" "ok 65536 65536" \
	"$(verdict netns.conntrack conntrack_count=12 conntrack_drops=7 conntrack_insert_failed=7)"
expect_eq "conntrack: full once, small now: more than the cap" "critical 65536 131072" \
	"$(verdict netns.conntrack conntrack_count=1000 conntrack_drops=50)"
expect_contains "conntrack: ... the drops counted as full" "dropped 50 packets full" "$(F netns.conntrack explanation)"
# Namespaces left unread (netns.coverage): as root, what refused them is no
# missing privilege, and the process is named; without root, root is the fix;
# a facts file of an older hosttune (no netns.refused) still warns.
cov() {
	vary "$base" "$TMP/cov.facts" "netns.skipped=1 processes" "$@"
	ht --facts "$TMP/cov.facts" --format json audit >"$TMP/cov.json" 2>/dev/null
	jget "$TMP/cov.json" '.findings[] | select(.rule == "netns.coverage") | "\(.severity) \(.case) \(.explanation) FIX \(.remedy)"' |
		tr '\n' ' ' | tr -s ' '
}
x=$(cov "netns.refused=1 processes" "netns.refused_pid=1" 'netns.refused_process="process_api"' "netns.read_as_root=true")
expect_contains "coverage as root: the restricted case" "warning restricted" "$x"
expect_contains "coverage as root: names the process" "the lowest process_api (PID 1)" "$x"
case ${x#* FIX } in *"as root"*) not_ok "coverage as root: never 'run as root'" "$x" ;; *) ok "coverage as root: never 'run as root'" ;; esac
x=$(cov "netns.refused=1 processes" "netns.refused_pid=4242" 'netns.refused_process="tini"' "netns.read_as_root=false")
expect_contains "coverage without root: named, root the fix" "warning refused" "$x"
expect_contains "coverage without root: ... root the fix" "run hosttune as root" "${x#* FIX }"
expect_contains "coverage, an older facts file: still a warning" "warning other" "$(cov)"

# The host's conntrack.max follows it (the namespace's table is judged against
# that one value): on a 24 GiB host at 1000 of 262144 (ok on its own), a
# namespace at 200000 = 76.3% asks for pow2ceil(2 x 200000) = 524288; the
# host's finding is a warning of its own case (the namespace's is a warning
# too: never more severe than what it follows) with that 524288 in the file
# that sets it. At 30000 (11.4%) it asks nothing.
{
	cat "$FIXTURES/verdict/big-515.facts"
	netns_facts 4026532500 4242 tini /kubepods/pod1/abc kubernetes | grep -v '^netns.initial'
	cat <<'EOF2'
netns.4026532500.conntrack_count = 200000 entries from stat
netns.4026532500.conntrack_drops = 0 packets from stat
netns.4026532500.conntrack_early_drop = 0 entries from stat
netns.4026532500.conntrack_insert_failed = 0 packets from stat
EOF2
} >"$TMP/big-ns.facts"
ht --facts "$TMP/big-ns.facts" --format json audit >"$TMP/big-ns.json" 2>/dev/null
expect_eq "the namespace at 76.3%: warning, 524288" "warning 524288" \
	"$(jget "$TMP/big-ns.json" '.findings[] | select(.rule == "netns.conntrack") | "\(.severity) \(.recommended)"')"
expect_eq "conntrack.max follows the namespace's need" "warning namespace 262144 524288" \
	"$(jget "$TMP/big-ns.json" '.findings[] | select(.rule == "conntrack.max") | "\(.severity) \(.case) \(.current) \(.recommended)"')"
expect_contains "conntrack.max: its fix writes 524288" "net.netfilter.nf_conntrack_max = 524288" \
	"$(jget "$TMP/big-ns.json" '.findings[] | select(.rule == "conntrack.max") | .fix.line')"
# On 2 GiB the memory budget (5% of RAM at 328 bytes an entry) holds no
# 524288: the host's finding is still the namespace's warning, and its
# remedy says the budget keeps the max (never a silent ok beside the
# namespace's "raise it").
sed 's/^mem.total = .*/mem.total = 2147483648 bytes from \/proc\/meminfo MemTotal/' "$TMP/big-ns.facts" >"$TMP/small-ns.facts"
ht --facts "$TMP/small-ns.facts" --format json audit >"$TMP/small-ns.json" 2>/dev/null
expect_eq "conntrack.max on 2 GiB: the namespace's warning, the max kept" "warning namespace 262144" \
	"$(jget "$TMP/small-ns.json" '.findings[] | select(.rule == "conntrack.max") | "\(.severity) \(.case) \(.recommended)"')"
expect_contains "conntrack.max on 2 GiB: the remedy is the budget" "memory budget" \
	"$(jget "$TMP/small-ns.json" '.findings[] | select(.rule == "conntrack.max") | .remedy')"
sed -i 's/^netns.4026532500.conntrack_count = 200000/netns.4026532500.conntrack_count = 30000/' "$TMP/big-ns.facts"
ht --facts "$TMP/big-ns.facts" --format json audit >"$TMP/big-ns.json" 2>/dev/null
expect_eq "conntrack.max: a namespace at 11.4% asks nothing" "ok enough 262144" \
	"$(jget "$TMP/big-ns.json" '.findings[] | select(.rule == "conntrack.max") | "\(.severity) \(.case) \(.recommended)"')"
base=$base0

# No finding of a namespace ever writes a file: the host's sysctl.d does not reach it.
for f in "$TMP"/v.*.json; do
	jget "$f" '.findings[] | select(.rule | startswith("netns.")) | select(.fix != null) | .rule'
done >"$TMP/fixes"
expect_eq "no netns finding has a file of the host as its fix" "" "$(sort -u "$TMP/fixes")"

# ---- live: a namespace of its own ---------------------------------------------
if [ "$(id -u)" -ne 0 ] || ! unshare -n true 2>/dev/null || ! command -v ss >/dev/null ||
	! command -v nsenter >/dev/null || ! command -v python3 >/dev/null; then
	echo "# SKIP live: needs root, unshare -n, nsenter, ss and python3"
	finish
fi
# The server asks for 100 and gets 8; 30 clients connect, nobody accepts: 9
# wait (a queue equal to the backlog takes one more), the rest overflow. A
# range of 50 ports: the namespace's sockets (sockstat) are more than half of
# it, so its client sockets are listed one by one.
# With nft and conntrack(8), a ct rule makes the namespace track its own
# connections: its table's count is read by conntrack -C inside it.
ct=false
if command -v nft >/dev/null && command -v conntrack >/dev/null; then
	ct=true
	ct_ruleset "$TMP/ct.nft"
fi
cat >"$TMP/inner.sh" <<EOF
ip link set lo up
! $ct || nft -f "$TMP/ct.nft"
EOF
cat >>"$TMP/inner.sh" <<'EOF'
echo 8 >/proc/sys/net/core/somaxconn
echo "40000 40049" >/proc/sys/net/ipv4/ip_local_port_range
exec python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 8080)); s.listen(100)
cs = []
for i in range(30):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(("127.0.0.1", 8080))
    except BlockingIOError: pass
    cs.append(c)
print("ready", flush=True)
sys.stdin.read()
'
EOF
mkfifo "$TMP/in"
unshare -n bash "$TMP/inner.sh" <"$TMP/in" >"$TMP/inner.out" 2>&1 &
exec 3>"$TMP/in"
for _ in $(seq 100); do grep -q ready "$TMP/inner.out" 2>/dev/null && break; sleep 0.1; done
pid=$(pgrep -f "s.listen\(100\)" | head -1)
ino=$(stat -L -c %i "/proc/$pid/ns/net")
sleep 1 # the clients' first SYNs overflow the queue
# overflows: TcpExtListenOverflows of the listener's /proc/PID/net/netstat.
overflows() {
	awk '/^TcpExt:/ { if (!h) { split($0, n); h = 1 } else { for (i = 2; i <= NF; i++) if (n[i] == "ListenOverflows") print $i } }' \
		"/proc/$pid/net/netstat"
}
# The clients keep retransmitting, so the counter moves: read before and after.
overflows >"$TMP/overflows.before"
! $ct || nsenter --net="/proc/$pid/ns/net" conntrack -C >"$TMP/ct.before" 2>/dev/null
ht --no-measure --format json facts >"$TMP/live.json" 2>"$TMP/live.err"
overflows >"$TMP/overflows.after"
! $ct || nsenter --net="/proc/$pid/ns/net" conntrack -C >"$TMP/ct.after" 2>/dev/null
ht --no-measure --format json audit >"$TMP/live-audit.json" 2>/dev/null
inside() { nsenter --net="/proc/$pid/ns/net" "$@"; }
inside ss -Hltn 'sport = :8080' >"$TMP/ss.l"
inside ss -Htn 'dst 127.0.0.1 and dport = :8080' | wc -l >"$TMP/ss.c"
inside cat /proc/sys/net/core/somaxconn >"$TMP/somaxconn"
exec 3>&-
wait
lf() { jget "$TMP/live.json" ".facts[\"netns.$ino.$1\"].value"; }
expect_contains "live: the namespace is listed" "$ino" "$(jget "$TMP/live.json" '.facts["netns.list"].value')"
expect_eq "live: somaxconn read inside it, as sysctl does there" "$(cat "$TMP/somaxconn")" "$(lf somaxconn)"
expect_eq "live: 8" 8 "$(lf somaxconn)"
expect_eq "live: its port range" "40000 40049" "$(lf port_range_low) $(lf port_range_high)"
# ss -lnt: Recv-Q is the queue, Send-Q the backlog.
expect_eq "live: the queue and backlog ss -lnt shows inside" \
	"$(awk '{ print $2, $3 }' "$TMP/ss.l")" "$(lf top_listener_queue) $(lf top_listener_backlog)"
expect_eq "live: 9 waiting at a backlog of 8" "9 8" "$(lf top_listener_queue) $(lf top_listener_backlog)"
expect_eq "live: the listener's process" "$pid python3" "$(lf top_listener_pid) $(lf top_listener_process)"
o=$(lf listen_overflows)
if [ "$(cat "$TMP/overflows.before")" -le "$o" ] && [ "$o" -le "$(cat "$TMP/overflows.after")" ] && [ "$o" -gt 0 ]; then
	ok "live: the overflows, between what /proc/PID/net/netstat counted before and after ($o)"
else
	not_ok "live: the overflows, between what /proc/PID/net/netstat counted before and after" \
		"before $(cat "$TMP/overflows.before"), hosttune $o, after $(cat "$TMP/overflows.after")"
fi
expect_eq "live: the client sockets ss counts to 127.0.0.1:8080" "$(cat "$TMP/ss.c")" "$(lf top_destination_sockets)"
expect_eq "live: ... 30 of them" 30 "$(lf top_destination_sockets)"
if $ct; then
	c=$(lf conntrack_count)
	if [ "$(cat "$TMP/ct.before")" -le "$c" ] && [ "$c" -le "$(cat "$TMP/ct.after")" ] && [ "$c" -gt 0 ]; then
		ok "live: its conntrack table, as conntrack -C counts it inside ($c)"
	else
		not_ok "live: its conntrack table, as conntrack -C counts it inside" \
			"before $(cat "$TMP/ct.before"), hosttune $c, after $(cat "$TMP/ct.after")"
	fi
else
	echo "# SKIP live conntrack: needs nft and conntrack(8)"
fi
expect_eq "live: netns.listen is critical there" critical \
	"$(jget "$TMP/live-audit.json" ".findings[] | select(.rule == \"netns.listen\" and .instance == \"$ino\") | .severity")"
expect_eq "live: hosttune is back in its own namespace: its listen.somaxconn is not 8" "" \
	"$(jget "$TMP/live-audit.json" '.findings[] | select(.rule == "listen.somaxconn") | .current' | grep -x 8)"
finish
