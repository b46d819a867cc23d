#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# time-wait.sh TCP_CHURN N CMD [ARG...]: runs CMD in a fresh network
# namespace (unshare -n: needs root; the host is untouched) that holds N
# client sockets in TIME_WAIT, all 127.0.0.1:EPHEMERAL -> 127.0.0.1:5999,
# made by tests/tcp-churn (each connection closed by the client first).
# TIME_WAIT lasts TCP_TIMEWAIT_LEN = 60 s, so CMD must finish within that.
# The namespace's ip_local_port_range is 32768-60999 (28232 ports); above
# 28000 sockets it is widened to 1024-65535 (64512). tcp_tw_reuse is 0 so
# that no connect() takes a TIME_WAIT socket's port back.
# Example (the scale figure of hosttune's sock_diag collector):
#   bench/time-wait.sh tests/tcp-churn 10000 bench/bench "facts, 10000 TIME_WAIT" 20 \
#       src/hosttune --no-measure facts
set -eu
if [ $# -lt 3 ]; then
	echo "usage: $0 TCP_CHURN N CMD [ARG...]" >&2
	exit 2
fi
churn=$1
n=$2
shift 2
export churn n
exec unshare -n sh -c '
set -eu
ip link set lo up
sysctl -qw net.ipv4.tcp_tw_reuse=0
[ "$n" -le 28000 ] || sysctl -qw net.ipv4.ip_local_port_range="1024 65535"
made=$("$churn" 127.0.0.1 5999 "$n")
tw=$(ss -Htan state time-wait | wc -l)
echo "# time-wait.sh: $made connections, $tw sockets in TIME_WAIT" >&2
[ "$tw" -ge "$n" ] || { echo "$0: expected $n sockets in TIME_WAIT" >&2; exit 1; }
exec "$@"
' time-wait.sh "$@"
