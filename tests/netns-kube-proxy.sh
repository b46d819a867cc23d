#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# kube-proxy in a network namespace other than the host's (a kind or k3d
# node, Kubernetes in an LXC container): as it starts it writes
# net.netfilter.nf_conntrack_max = conntrack.maxPerCore x CPUs, at least
# conntrack.min, whenever it reads another value; there the key is
# read-only, the write fails and kube-proxy exits (netns.kube_proxy).
#
# - A --root tree: its settings from its command line (--NAME=V and --NAME
#   V), k3s's --kube-proxy-arg, or its --config file read below its own root
#   (a link there resolves inside that root, never into the host's files);
#   defaults 32768 and 131072; a value that is no number unavailable (EINVAL).
# - Facts files: the verdict against the arithmetic, and the fix: kube-proxy's
#   own setting or the host's value, never a file of the container.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh" || exit 99
[ -n "${TMP:-}" ] && [ -d "$TMP" ] || exit 99

# ---- a tree ------------------------------------------------------------------
T=$TMP/tree
netns_tree "$T"
# kp INO PID COMM ARG...: process PID named COMM alone in namespace INO, with
# the command line ARG... (NUL-separated, as /proc/PID/cmdline has it).
kp() {
	local ino=$1 pid=$2 comm=$3
	shift 3
	mkdir -p "$T/proc/$pid/ns" "$T/proc/$pid/root"
	ln -s "net:[$ino]" "$T/proc/$pid/ns/net"
	printf '%s\n' "$comm" >"$T/proc/$pid/comm"
	printf '0::/system.slice/docker-%s.scope\n' "$pid" >"$T/proc/$pid/cgroup"
	printf '%s\0' "$comm" "$@" >"$T/proc/$pid/cmdline"
}
# 100: flags, = form and space form; 200: k3s's --kube-proxy-arg; 300: a
# --config file with maxPerCore 8192 and min null (the default stays);
# 400: k3s without kube-proxy; 500: a setting that is no number; 600: a
# --config file that is a link to /host-only.yaml, which must resolve inside
# the process's root (none there: ENOENT), not to the tree's (the host's).
kp 4026532100 100 kube-proxy --conntrack-max-per-core=16384 --conntrack-min 65536
kp 4026532200 200 k3s-server server --kube-proxy-arg=conntrack-max-per-core=0
kp 4026532300 300 kube-proxy --config=/var/lib/kube-proxy/config.conf --v=2
mkdir -p "$T/proc/300/root/var/lib/kube-proxy"
cat >"$T/proc/300/root/var/lib/kube-proxy/config.conf" <<'EOF'
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
conntrack:
  maxPerCore: 8192
  min: null
  tcpEstablishedTimeout: 24h0m0s
mode: iptables
EOF
kp 4026532400 400 k3s-agent agent --disable-kube-proxy
kp 4026532500 500 kube-proxy --conntrack-max-per-core=lots
kp 4026532600 600 kube-proxy --config /etc/kube-proxy.yaml
mkdir -p "$T/proc/600/root/etc"
printf 'conntrack:\n  maxPerCore: 1\n' >"$T/host-only.yaml"
ln -s /host-only.yaml "$T/proc/600/root/etc/kube-proxy.yaml"
ht --no-measure --root "$T" --format json facts >"$TMP/t.json" 2>"$TMP/t.err" ||
	{ cat "$TMP/t.err"; not_ok "tree: facts"; finish; }
tf() { jget "$TMP/t.json" ".facts[\"netns.$1\"].value"; }
te() { jget "$TMP/t.json" ".facts[\"netns.$1\"].error"; }
ts() { jget "$TMP/t.json" ".facts[\"netns.$1\"].source"; }
expect_eq "tree: kube-proxy's PID" 100 "$(tf 4026532100.kube_proxy_pid)"
expect_eq "tree: --conntrack-max-per-core=16384 and --conntrack-min 65536" "16384 65536" \
	"$(tf 4026532100.kube_proxy_per_core) $(tf 4026532100.kube_proxy_min)"
expect_contains "tree: ... from its command line" "/proc/100/cmdline --conntrack-max-per-core=16384" \
	"$(ts 4026532100.kube_proxy_per_core)"
expect_eq "tree: k3s's --kube-proxy-arg=conntrack-max-per-core=0, min its default" "0 131072" \
	"$(tf 4026532200.kube_proxy_per_core) $(tf 4026532200.kube_proxy_min)"
expect_eq "tree: --config's maxPerCore 8192, min null: the default" "8192 131072" \
	"$(tf 4026532300.kube_proxy_per_core) $(tf 4026532300.kube_proxy_min)"
expect_eq "tree: ... the file and line named" "/proc/300/root/var/lib/kube-proxy/config.conf:4 conntrack.maxPerCore" \
	"$(ts 4026532300.kube_proxy_per_core)"
expect_eq "tree: k3s --disable-kube-proxy: no kube-proxy" ENOENT "$(te 4026532400.kube_proxy_pid)"
expect_eq "tree: a setting that is no number: EINVAL" EINVAL "$(te 4026532500.kube_proxy_per_core)"
expect_contains "tree: ... saying which" "--conntrack-max-per-core=lots is not a number" \
	"$(ts 4026532500.kube_proxy_per_core)"
expect_eq "tree: a --config link resolves in the process's root, not the host's" ENOENT \
	"$(te 4026532600.kube_proxy_per_core)"

# ---- the verdict, on facts files ----------------------------------------------
# A k3d node on a 16-CPU host whose nf_conntrack_max is 262144: kube-proxy
# writes 32768 x 16 = 524288 (more than min 131072): critical; 0 per core:
# it leaves it, ok; 16384 x 16 = 262144, the host's own value: it writes
# nothing, ok; 4096 x 16 = 65536 < min 131072: it writes 131072, critical.
base=$TMP/base.facts
{
	cat <<'EOF'
kernel.release = "6.1.0-13-amd64" from /proc/sys/kernel/osrelease
kernel.version = v6.1.0 from /proc/sys/kernel/osrelease
mem.total = 68719476736 bytes from /proc/meminfo
cpu.count = 16 CPUs from /sys/devices/system/cpu/online
net.netfilter.nf_conntrack_max = 262144 entries from /proc/sys/net/netfilter/nf_conntrack_max
EOF
	netns_facts 4026532411 21874 k3s-server \
		/system.slice/docker-7f3c2a91d0e4b85c6a1f2e3d4c5b6a7980e1f2a3b4c5d6e7f8091a2b3c4d5e6f.scope docker
	cat <<'EOF'
netns.4026532411.kube_proxy_pid = 21874 from /proc/21874/comm
netns.4026532411.kube_proxy_per_core = 32768 entries from kube-proxy's default conntrack.maxPerCore
netns.4026532411.kube_proxy_min = 131072 entries from kube-proxy's default conntrack.min
EOF
} | facts_file "$base"
v() {
	vary "$base" "$TMP/v.facts" "$@"
	ht --facts "$TMP/v.facts" --format json audit >"$TMP/v.json" 2>/dev/null
	jget "$TMP/v.json" '.findings[] | select(.rule == "netns.kube_proxy") | "\(.severity) \(.case) \(.recommended)"'
}
expect_eq "32768 x 16 = 524288 against 262144: critical" "critical refused 524288" "$(v)"
x=$(jget "$TMP/v.json" '.findings[] | select(.rule == "netns.kube_proxy") | .explanation + " FIX " + .remedy' | tr '\n' ' ' | tr -s ' ')
expect_contains "critical: the node named by its process and container" "k3s-server, PID 21874, cgroup /system.slice/docker-7f3c2a91d0e4" "$x"
expect_contains "critical: the arithmetic" "32768 (kube-proxy's default conntrack.maxPerCore) x 16 CPUs" "$x"
expect_contains "critical: the fix, kube-proxy's own setting" "--conntrack-max-per-core=0" "${x#* FIX }"
expect_contains "critical: ... or the host's value" "net.netfilter.nf_conntrack_max to 524288" "${x#* FIX }"
case ${x#* FIX } in
*"--sysctl"* | *"lxc.sysctl"*) not_ok "the fix is no sysctl of the container" "$x" ;;
*) ok "the fix is no sysctl of the container" ;;
esac
expect_eq "no file written for it" null "$(jget "$TMP/v.json" '.findings[] | select(.rule == "netns.kube_proxy") | .fix')"
expect_eq "per core 0: it leaves the value, ok" "ok leaves 262144" "$(v "netns.4026532411.kube_proxy_per_core=0 entries")"
expect_eq "16384 x 16 = 262144, the host's own: ok" "ok same 262144" "$(v "netns.4026532411.kube_proxy_per_core=16384 entries")"
expect_eq "4096 x 16 = 65536 < min: it writes 131072, critical" "critical refused 131072" \
	"$(v "netns.4026532411.kube_proxy_per_core=4096 entries")"
expect_eq "no kube-proxy in it: no row" "" "$(v "netns.4026532411.kube_proxy_pid=unavailable ENOENT")"
finish
