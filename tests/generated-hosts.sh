#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The verdict on hosts no fixture was written for: HOSTS generated hosts
# (default 24), each a facts file of random but consistent figures: kernel
# 4.19 to 6.1, 64- or 32-bit, 1 to 32 CPUs, 256 MiB to 64 GiB; a conntrack
# table sized by the kernel's default, kube-proxy's formula, a hashsize=
# option or a write, filled to a random share, with or without drops;
# processes with soft and hard limits and descriptors, some several of a
# name, some outside any service; listeners with backlogs and queues; OOM
# kills, swap and memory stalls; the system file table. Every host is
# audited with every shipped profile, and each report must hold:
#
#   V  the one-story properties of tests/verdict.jq (P1-P6);
#   A  an attribution to the kernel's default only for a max and bucket
#      count this kernel's formula gives for some RAM (as tests/attribution.sh
#      computes it);
#   N  every port and PID a text names is one of the host's facts;
#   W  a process finding names the PID of its facts (the worst of the name);
#   L  a LimitNOFILE=SOFT:HARD fix has SOFT <= HARD, and a remedy that says
#      only "ulimit -n N" never asks for N above the hard limit;
#   R  every not-applicable row says why;
#   I  on the half of the hosts read twice (--sample 5s), the drop and
#      overflow counters' findings say "In the last 5 s"; on the others
#      that their counters are since boot;
#   G  each control group (0 to 3 a host: a unit, a Docker or Podman
#      container, a pod, with pids and memory limits, usage and events) is
#      judged by its own figures: cgroup.pids critical on a refused fork or
#      at 90%, warning at 75%; cgroup.memory critical on an OOM kill; a
#      finding at warning names the group's path and its largest process,
#      and its remedy is the knob of whoever set the limit (never
#      kernel.pid_max, swap or a unit's for a container);
#   F  conntrack.buckets and conntrack.chain_length, sized from
#      conntrack.max, are never more severe than it (nor than info when it
#      is ok);
#   M  when one group counted every OOM kill of the host, mem.pressure
#      offers no swap or RAM and levers to cgroup.memory;
#   U  each process's RLIMIT_NPROC against its user's tasks: critical at
#      90%, warning at 75%, ok for UID 0; at warning the user's busiest
#      name is the holder and the fix is where the limit is set (the unit's
#      LimitNPROC=, else pam_limits), never TasksMax, pids.max or
#      kernel.threads-max;
#   T  source NAT to one destination against 64512 ports, when the table
#      was dumped for it (48384 entries or more, or a failed insertion):
#      critical at 90%, warning at 75%, named, and never fixed with
#      nf_conntrack_max or ip_local_port_range;
#   S  each container's network namespace (0 to 3 a host) by its own
#      somaxconn, fullest listener, port range and TIME_WAIT table: the
#      severity by the arithmetic, the listener's process or destination
#      named at warning, and never a file of the host as the fix; its own
#      conntrack table against the host's one nf_conntrack_max.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh" || exit 99
[ -n "${TMP:-}" ] && [ -d "$TMP" ] || exit 99

# An AddressSanitizer build (the distcheck run) is slower and looks for
# memory errors, which fewer hosts of the same kinds reach as well: 8.
if grep -aq __asan_init "$HOSTTUNE" 2>/dev/null; then HOSTS=${HOSTS:-8}; else HOSTS=${HOSTS:-24}; fi
RANDOM=${SEED:-2026}
profiles=$(cd "$HT_RULES_DIR/profiles" && ls ./*.profile | sed 's|^\./||; s|\.profile$||')
pick() { local a=("$@"); echo "${a[RANDOM % ${#a[@]}]}"; }

# default_buckets NEW PTR RAM: the kernel's default bucket count
# (nf_conntrack_init_start(), rounded up to whole pages of bucket heads).
default_buckets() {
	local new=$1 ptr=$2 ram=$3 b slots=$((4096 / $2))
	if [ "$new" = 1 ]; then
		if [ "$ram" -gt 4294967296 ] && [ "$ptr" -ge 8 ]; then b=262144
		elif [ "$ram" -gt 1073741824 ]; then b=65536
		else b=$((ram / 16384 / ptr)); [ "$b" -lt 1024 ] && b=1024; fi
	else
		if [ "$ram" -gt 4294967296 ]; then b=65536
		elif [ "$ram" -gt 1073741824 ]; then b=16384
		else b=$((ram / 16384 / ptr)); [ "$b" -lt 32 ] && b=32; fi
	fi
	echo $(((b + slots - 1) / slots * slots))
}
# reachable NEW PTR BUCKETS MAX: 0 when some RAM gives this pair as the default.
reachable() {
	local new=$1 ptr=$2 b=$3 m=$4 slots=$((4096 / $2)) top=$((1073741824 / 16384 / $2))
	if [ "$new" = 1 ]; then
		[ "$m" -eq "$b" ] || return 1
		[ "$b" -eq 65536 ] && return 0
		[ "$b" -eq 262144 ] && [ "$ptr" -ge 8 ] && return 0
		lo=1024; [ "$slots" -gt "$lo" ] && lo=$slots
		[ $((b % slots)) -eq 0 ] && [ "$b" -ge "$lo" ] && [ "$b" -le $((top > 1024 ? top : 1024)) ] && return 0
	else
		[ "$m" -eq $((4 * b)) ] || return 1
		[ "$b" -eq 16384 ] || [ "$b" -eq 65536 ] && return 0
		[ $((b % slots)) -eq 0 ] && [ "$b" -ge "$slots" ] && [ "$b" -le $((top > slots ? top : slots)) ] && return 0
	fi
	return 1
}

# host N: writes $TMP/hN.facts and the figures the checks need to $TMP/hN.meta.
host() {
	local n=$1 f=$TMP/h$1.facts kv kver new arch ptr cpus ram how b m count drop lo two twmax
	kv=$(pick v4.19.0 v5.10.0 v5.15.0 v6.1.0)
	case $kv in v4.* | v5.10.*) new=0 ;; *) new=1 ;; esac
	if [ $((RANDOM % 4)) = 0 ]; then arch=armv7l ptr=4; else arch=x86_64 ptr=8; fi
	cpus=$(pick 1 2 4 8 16 32)
	ram=$(pick 268435456 503316480 1014300672 2079330304 4294967296 8589934592 17179869184 68719476736)
	how=$(pick default default kube hashsize write)
	b=$(default_buckets $new $ptr $ram)
	if [ "$new" = 1 ]; then m=$b; else m=$((4 * b)); fi
	case $how in
	kube) m=$((32768 * cpus)); [ "$m" -lt 131072 ] && m=131072; b=$((m / 4)) ;;
	hashsize) b=$(pick 16384 32768 65536); m=$((8 * b)) ;;
	write) b=$(pick 1536 65536 131072 1048576); m=$(pick 100000 262144 1048576) ;;
	esac
	count=$((m * (RANDOM % 101) / 100))
	drop=$(pick 0 0 0 17 6014) lo=$(pick 0 0 5312) two=$(pick 0 0 0 300) twmax=$(pick 4096 131072)
	# Source NAT: its busiest destination's mappings, a share of 64512 (or of
	# the table when that is smaller); a failed insertion on some hosts.
	local ifail nat_top nat_all
	ifail=$(pick 0 0 0 40)
	nat_top=$((64512 * (RANDOM % 101) / 100)); [ "$nat_top" -gt "$count" ] && nat_top=$count
	nat_all=$(( nat_top + (count - nat_top) * (RANDOM % 101) / 100 ))
	{
		echo "# hosttune facts 1"
		echo "# generated host $n ($kv, $arch, $cpus CPUs, $ram bytes, table by $how)"
		echo "conntrack.loaded = true from /sys/module/nf_conntrack"
		echo "conntrack.module = \"loaded\" from /sys/module/nf_conntrack"
		echo "conntrack.stat.count = $count entries from /proc/net/stat/nf_conntrack"
		echo "conntrack.stat.drop = $drop packets from /proc/net/stat/nf_conntrack"
		echo "conntrack.stat.early_drop = 0 packets from /proc/net/stat/nf_conntrack"
		echo "conntrack.stat.insert_failed = $ifail packets from /proc/net/stat/nf_conntrack"
		echo "conntrack.dump.entries = $count entries from ctnetlink IPCTNL_MSG_CT_GET dump"
		echo "conntrack.nat.entries = $nat_all entries from ctnetlink IPCTNL_MSG_CT_GET dump"
		echo "conntrack.nat.top_destination = \"198.51.100.$((RANDOM % 250 + 1)):443/tcp\" from ctnetlink IPCTNL_MSG_CT_GET dump"
		echo "conntrack.nat.top_source = \"192.0.2.1\" from ctnetlink IPCTNL_MSG_CT_GET dump"
		echo "conntrack.nat.top_entries = $nat_top entries from ctnetlink IPCTNL_MSG_CT_GET dump"
		echo "conntrack.nat.top_sources = 1 addresses from ctnetlink IPCTNL_MSG_CT_GET dump"
		echo "cpu.arch = \"$arch\" from /proc/sys/kernel/arch"
		echo "cpu.count = $cpus CPUs from /sys/devices/system/cpu/online"
		echo "files.open = $((RANDOM * 3)) files from /proc/sys/fs/file-nr"
		echo "fs.file-max = $(pick 100000 2466116 9223372036854775807) files from /proc/sys/fs/file-max"
		echo "kernel.pointer_size = $ptr bytes from cpu.arch"
		echo "kernel.version = $kv from kernel.release"
		echo "mem.oom_kills = $(pick 0 0 0 7) processes from /proc/vmstat oom_kill"
		echo "mem.psi.full_avg60 = $(pick 0.0 0.0 2.5 12.0 31.0) % from /proc/pressure/memory full avg60"
		echo "mem.psi.some_avg60 = $(pick 0.0 4.0 40.0) % from /proc/pressure/memory some avg60"
		echo "mem.swap_total = $(pick 0 1073741824) bytes from /proc/meminfo SwapTotal"
		echo "mem.total = $ram bytes from /proc/meminfo MemTotal"
		echo "module.nf_conntrack.hashsize = $b buckets from /sys/module/nf_conntrack/parameters/hashsize"
		echo "net.core.somaxconn = $(pick 128 4096) entries from /proc/sys/net/core/somaxconn"
		echo "net.netfilter.nf_conntrack_buckets = $b buckets from /proc/sys/net/netfilter/nf_conntrack_buckets"
		echo "net.netfilter.nf_conntrack_count = $count entries from /proc/sys/net/netfilter/nf_conntrack_count"
		echo "net.netfilter.nf_conntrack_max = $m entries from /proc/sys/net/netfilter/nf_conntrack_max"
		echo "net.netfilter.nf_conntrack_tcp_timeout_time_wait = $(pick 120 30) seconds from /proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait"
		echo "netns.initial = true from mode of /proc/sys/net/netfilter/nf_conntrack_max"
		echo "nstat.TcpExtListenOverflows = $lo packets from /proc/net/netstat"
		echo "nstat.TcpExtTCPTimeWaitOverflow = $two sockets from /proc/net/netstat"
		echo "net.ipv4.tcp_max_tw_buckets = $twmax sockets from /proc/sys/net/ipv4/tcp_max_tw_buckets"
		echo "sockstat.tcp.tw = $((twmax * (RANDOM % 101) / 100)) sockets from /proc/net/sockstat"
		# Half the hosts read twice, --sample's 5 s apart: each counter moved
		# by nothing or by part of its since-boot count.
		if [ $((RANDOM % 2)) = 0 ]; then
			echo "sample.seconds = 5.01 seconds from --sample 5s"
			echo "nstat.TcpExtListenOverflows.delta = $(pick 0 $((lo / 100))) packets from /proc/net/netstat"
			echo "nstat.TcpExtTCPTimeWaitOverflow.delta = $(pick 0 $((two / 10))) sockets from /proc/net/netstat"
			echo "conntrack.stat.drop.delta = $(pick 0 $((drop / 100))) packets from /proc/net/stat/nf_conntrack"
			echo "conntrack.stat.early_drop.delta = 0 packets from /proc/net/stat/nf_conntrack"
		fi
	} >"$f"
	# Listeners and their processes: one to three names, each 1 to 3 processes
	# of which the facts describe the worst (the collector's job, tests/process-family.sh).
	local names="" ports="" i name pid soft hard fds port unit
	for i in $(seq $((1 + RANDOM % 3))); do
		name=$(pick minio garage registry docker-proxy nginx)
		case " $names " in *" $name "*) continue ;; esac
		names="$names $name"
		pid=$((100 + RANDOM % 30000))
		soft=$(pick 1024 4096 65536)
		hard=$(pick "$soft" 524288 1048576)
		fds=$((1 + RANDOM % soft))
		port=$(pick 80 443 3900 5000 8080 9000)
		case " $ports " in *" $port "*) port=$((port + 10000 + i)) ;; esac
		ports="$ports $port"
		unit=$(pick "$name.service" docker.service "")
		{
			echo "listener.$port.backlog = $(pick 128 511 4096) entries from NETLINK_SOCK_DIAG inet_diag"
			echo "listener.$port.pid = $pid from /proc/$pid/fd"
			echo "listener.$port.process = \"$name\" from /proc/$pid/comm"
			echo "listener.$port.queue = $(pick 0 0 3 600) entries from NETLINK_SOCK_DIAG inet_diag"
			echo "process.$name.comm = \"$name\" from /proc/$pid/comm"
			echo "process.$name.count = $((1 + RANDOM % 3)) processes from /proc/PID/comm"
			echo "process.$name.fds = $fds descriptors from /proc/$pid/fd"
			echo "process.$name.nofile = $soft descriptors from /proc/$pid/limits"
			echo "process.$name.nofile_hard = $hard descriptors from /proc/$pid/limits"
			echo "process.$name.pid = $pid from /proc/$pid"
			if [ -n "$unit" ]; then echo "process.$name.unit = \"$unit\" from /proc/$pid/cgroup"
			else echo "process.$name.unit = unavailable ENOENT from /proc/$pid/cgroup: no *.service in its cgroup"; fi
			# RLIMIT_NPROC: its user's tasks a share of it; UID 0 now and then.
			nproc=$(pick 64 4096 30000)
			tasks=$((nproc * (RANDOM % 111) / 100 + 1))
			uid=$(pick 0 998 1000 1000)
			echo "process.$name.nproc = $nproc tasks from /proc/$pid/limits Max processes"
			echo "process.$name.nproc_hard = $nproc tasks from /proc/$pid/limits Max processes"
			echo "process.$name.threads = $((tasks / 2 + 1)) tasks from /proc/$pid/status Threads"
			echo "process.$name.uid = $uid from /proc/$pid/status Uid"
			echo "process.$name.user = \"u$uid\" from /etc/passwd"
			echo "process.$name.nproc_exempt = $([ "$uid" = 0 ] && echo true || echo false) from /proc/$pid/status Uid and CapEff"
			echo "process.$name.user_tasks = $tasks tasks from Threads of /proc/PID/status"
			echo "process.$name.user_top = \"$name\" from /proc/$pid/status Name"
			echo "process.$name.user_top_pid = $pid from /proc/$pid"
			echo "process.$name.user_top_processes = 1 processes from /proc/PID/status"
			echo "process.$name.user_top_threads = $((tasks / 2 + 1)) tasks from /proc/$pid/status Threads"
			echo "process.$name.parent_pid = 1 from /proc/$pid/status PPid"
			echo "process.$name.parent_comm = \"systemd\" from /proc/1/comm"
			echo "process.$name.parent_nproc = 63432 tasks from /proc/1/limits Max processes"
		} >>"$f"
		echo "$name $pid $soft $hard $nproc $tasks $uid ${unit:--}" >>"$TMP/h$n.procs"
	done
	# Control groups: 0 to 3, each with a pids limit, some with a memory
	# limit, their usage and events; the host's OOM kills at least their own.
	local cgs="" cgn cpath esc mgr pmax pcur pev mmax mcur kills top tpid
	: >"$TMP/h$n.cgroups"
	for i in $(seq $((RANDOM % 4))); do
		mgr=$(pick systemd docker podman kubernetes)
		case $mgr in
		systemd) cpath=system.slice/svc$i.service ;;
		docker) cpath=system.slice/docker-$(printf '%064x' $((RANDOM * 7 + i))).scope ;;
		podman) cpath=machine.slice/libpod-$(printf '%064x' $((RANDOM * 5 + i))).scope ;;
		kubernetes) cpath=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod$i$RANDOM.slice/cri-containerd-$(printf '%064x' $((RANDOM + i))).scope ;;
		esac
		esc=$(printf '%s' "$cpath" | sed 's/_/__/g; s|/|_2f|g')
		pmax=$(pick 100 1024 4915 32768)
		pcur=$((pmax * (RANDOM % 101) / 100))
		pev=$(pick 0 0 0 3)
		[ "$pev" -gt 0 ] && pcur=$pmax
		kills=$(pick 0 0 2 9)
		top=$(pick app worker java); tpid=$((30000 + RANDOM % 2000)); ttop=$(pick pool spawner)
		cgs="$cgs $esc"
		{
			echo "cgroup.$esc.manager = \"$mgr\" from the group's path"
			echo "cgroup.$esc.pids_max = $pmax tasks from /sys/fs/cgroup/$cpath/pids.max"
			echo "cgroup.$esc.pids_current = $pcur tasks from /sys/fs/cgroup/$cpath/pids.current"
			echo "cgroup.$esc.pids_events = $pev events from /sys/fs/cgroup/$cpath/pids.events"
			echo "cgroup.$esc.procs = $((1 + RANDOM % 9)) processes from /sys/fs/cgroup/$cpath/cgroup.procs"
			echo "cgroup.$esc.top_process = \"$top\" from /proc/$tpid/status VmRSS"
			echo "cgroup.$esc.top_pid = $tpid from /sys/fs/cgroup/$cpath/cgroup.procs"
			echo "cgroup.$esc.top_rss = $((1048576 * (1 + RANDOM % 64))) bytes from /proc/$tpid/status VmRSS"
			echo "cgroup.$esc.threads_process = \"$ttop\" from /proc/$tpid/status Threads"
			echo "cgroup.$esc.threads_top = $((pcur / 2 + 1)) tasks from /proc/$tpid/status Threads"
			if [ $((RANDOM % 2)) = 0 ]; then
				mmax=$(pick 134217728 536870912 4294967296)
				mcur=$((mmax / 100 * (RANDOM % 101)))
				echo "cgroup.$esc.memory_max = $mmax bytes from /sys/fs/cgroup/$cpath/memory.max"
				echo "cgroup.$esc.memory_current = $mcur bytes from /sys/fs/cgroup/$cpath/memory.current"
				echo "cgroup.$esc.memory_oom_kills = $kills kills from /sys/fs/cgroup/$cpath/memory.events"
				echo "cgroup.$esc.memory_max_events = $(pick 0 12) events from /sys/fs/cgroup/$cpath/memory.events"
			else
				kills=-1
			fi
		} >>"$f"
		echo "$cpath $mgr $pmax $pcur $pev $kills $top $tpid $ttop" >>"$TMP/h$n.cgroups"
	done
	# Network namespaces: 0 to 3 containers' own, each with its somaxconn
	# and fullest listener (capped at it, or a backlog of its own), its
	# overflows, port range and busiest destination, TIME_WAIT table.
	local nss="" ino soma bl qu ovf lo hi ds tw twmax twovf lpid ctc ctd
	: >"$TMP/h$n.netns"
	for i in $(seq $((RANDOM % 4))); do
		ino=$((4026532000 + RANDOM * 4 + i))
		mgr=$(pick docker podman kubernetes lxc)
		soma=$(pick 128 4096)
		bl=$(pick "$soma" "$soma" 5 511); [ "$bl" -gt "$soma" ] && bl=$soma
		qu=$(( (bl + 1) * (RANDOM % 101) / 100 ))
		ovf=$(pick 0 0 40)
		lo=$(pick 32768 1024 40000); hi=$(pick 60999 65535); [ "$lo" = 40000 ] && hi=40999
		ds=$(( (hi - lo + 1) * (RANDOM % 101) / 100 ))
		twmax=$(pick 4096 131072); tw=$(( twmax * (RANDOM % 101) / 100 )); twovf=$(pick 0 0 7)
		lpid=$((40000 + RANDOM % 2000))
		# Its own conntrack table, against the host's one max.
		ctc=$(( m * (RANDOM % 101) / 100 )); ctd=$(pick 0 0 0 9)
		nss="$nss $ino"
		{
			echo "netns.$ino.pid = $((lpid - 1)) from /proc/PID/ns/net"
			echo "netns.$ino.process = \"tini\" from /proc/$((lpid - 1))/comm"
			echo "netns.$ino.processes = 2 processes from /proc/PID/ns/net"
			echo "netns.$ino.cgroup = \"/ct$i-$mgr\" from /proc/$((lpid - 1))/cgroup"
			echo "netns.$ino.manager = \"$mgr\" from /proc/$((lpid - 1))/cgroup"
			echo "netns.$ino.somaxconn = $soma entries from the namespace"
			echo "netns.$ino.port_range_low = $lo ports from the namespace"
			echo "netns.$ino.port_range_high = $hi ports from the namespace"
			echo "netns.$ino.tcp_tw_reuse = 2 from the namespace"
			echo "netns.$ino.tcp_max_tw_buckets = $twmax sockets from the namespace"
			echo "netns.$ino.listen_overflows = $ovf packets from /proc/$lpid/net/netstat"
			echo "netns.$ino.listen_drops = $ovf packets from /proc/$lpid/net/netstat"
			echo "netns.$ino.tw_overflows = $twovf sockets from /proc/$lpid/net/netstat"
			echo "netns.$ino.time_wait = $tw sockets from /proc/$lpid/net/sockstat"
			echo "netns.$ino.listeners = 1 listeners from sock_diag"
			echo "netns.$ino.top_listener_port = 8000 from sock_diag"
			echo "netns.$ino.top_listener_queue = $qu connections from sock_diag"
			echo "netns.$ino.top_listener_backlog = $bl entries from sock_diag"
			echo "netns.$ino.top_listener_pid = $lpid from /proc/$lpid/fd"
			echo "netns.$ino.top_listener_process = \"srv$i\" from /proc/$lpid/comm"
			echo "netns.$ino.top_destination = \"10.9.$i.1:6379\" from sock_diag"
			echo "netns.$ino.top_destination_sockets = $ds sockets from sock_diag"
			echo "netns.$ino.top_destination_time_wait = $((ds / 2)) sockets from sock_diag"
			echo "netns.$ino.conntrack_count = $ctc entries from /proc/$lpid/net/stat/nf_conntrack"
			echo "netns.$ino.conntrack_drops = $ctd packets from /proc/$lpid/net/stat/nf_conntrack"
			echo "netns.$ino.conntrack_early_drop = 0 entries from /proc/$lpid/net/stat/nf_conntrack"
			echo "netns.$ino.conntrack_insert_failed = 0 packets from /proc/$lpid/net/stat/nf_conntrack"
		} >>"$f"
		echo "$ino $soma $bl $qu $ovf $lo $hi $ds $tw $twmax $twovf $lpid $i $ctc $ctd" >>"$TMP/h$n.netns"
	done
	echo "netns.list = \"$(echo $nss | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')\" from /proc/PID/ns/net" >>"$f"
	echo "netns.skipped = 0 processes from /proc/PID/ns/net" >>"$f"
	echo "cgroup.version = \"v2\" from /sys/fs/cgroup/cgroup.controllers" >>"$f"
	echo "cgroup.list = \"$(echo $cgs | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')\" from /sys/fs/cgroup" >>"$f"
	echo "listener.list = \"$(echo $ports | tr ' ' '\n' | sort -n | tr '\n' ' ' | sed 's/ $//')\" from NETLINK_SOCK_DIAG inet_diag" >>"$f"
	echo "process.list = \"$(echo $names | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')\" from /proc/PID/comm" >>"$f"
	echo "$new $ptr $b $m $count $ifail $nat_all $nat_top" >"$TMP/h$n.meta"
}

# What the checks below read of a report, from one jq run a report (not
# thirty): shell assignments of Q_* to the text each query prints, as `jq -r
# QUERY` would (a line an output), the checks then reading them as they read
# that output. $P: the host's process names, $C: its control groups, in the
# order of $TMP/hN.procs and $TMP/hN.cgroups; $N: its namespaces' inodes, in
# the order of $TMP/hN.netns.
GH_JQ='
def out(s): try ([s] | map((if type == "string" then . else tojson end) + "\n") | add // "") catch "";
def q(name; v): "\(name)=\(v | @sh)";
. as $r
| q("Q_v"; try ([('"$(cat "$HT_TESTS_DIR/verdict.jq")"'
	)] | map((if type == "string" then . else tojson end) + "\n") | add // "")
	catch "jq: error: \(.)\n"),
  q("Q_x"; out($r.findings[] | select(.rule == "conntrack.max") | .explanation)),
  q("Q_texts"; out($r.findings[] | (.explanation // ""), (.remedy // ""))),
  ($P | split(" ") | map(select(. != "")) | to_entries[] | .key as $k | .value as $i
	| [$r.findings[] | select(.rule == "process.limit_nofile" and .instance == $i)] as $fx
	| [$r.findings[] | select(.rule == "process.limit_nproc" and .instance == $i)] as $ux
	| q("Q_fx[\($k)]"; $fx | length),
	  q("Q_e[\($k)]"; out($fx[] | .explanation // "")),
	  q("Q_line[\($k)]"; out($fx[] | .fix.line // "")),
	  q("Q_rem[\($k)]"; out($fx[] | .remedy // "")),
	  q("Q_ugot[\($k)]"; out(if $ux == [] then {} | .severity // "none" else $ux[] | .severity // "none" end)),
	  q("Q_ut[\($k)]"; out($ux[] | .explanation + " FIX " + (.remedy // "")))),
  ([$r.findings[] | select(.rule == "nat.ports" and .applicable)] as $tx
	| q("Q_tx"; out($tx[] | tojson)), q("Q_txgot"; out($tx[] | .severity)), q("Q_txrem"; out($tx[] | .remedy // ""))),
  (["conntrack.drops", "listen.somaxconn", "ports.tw_buckets"] | to_entries[] | .key as $k | .value as $i
	| q("Q_ie[\($k)]"; out($r.findings[] | select(.rule == $i and .applicable) | .explanation))),
  ($C | split(" ") | map(select(. != "")) | to_entries[] | .key as $k | .value as $i
	| ([$r.findings[] | select(.instance == $i and (.rule | startswith("cgroup.")))] | map({(.rule): .}) | add // {}) as $gx
	| q("Q_gpids[\($k)]"; out($gx | .["cgroup.pids"].severity // "none")),
	  q("Q_gmem[\($k)]"; out($gx | .["cgroup.memory"].severity // "none")),
	  q("Q_gtpids[\($k)]"; out($gx | .["cgroup.pids"] | .explanation + " FIX " + (.remedy // ""))),
	  q("Q_gtmem[\($k)]"; out($gx | .["cgroup.memory"] | .explanation + " FIX " + (.remedy // "")))),
  ($N | split(" ") | map(select(. != "")) | to_entries[] | .key as $k | .value as $i
	| ([$r.findings[] | select(.instance == $i and (.rule | startswith("netns.")))] | map({(.rule): .}) | add // {}) as $nx
	| (["listen", "ports", "tw_buckets", "conntrack"][] as $w
		| q("Q_s_\($w)[\($k)]"; out($nx | .["netns.\($w)"].severity // "none"))),
	  (["listen", "ports"][] as $w
		| q("Q_st_\($w)[\($k)]"; out($nx | .["netns.\($w)"] | .explanation + " FIX " + (.remedy // "")))),
	  q("Q_sfix[\($k)]"; out([$nx[] | select(.fix != null)] | length))),
  q("Q_f"; out([$r.findings[] | select(.rule == "conntrack.max" and .applicable)][0].severity // "none")),
  (["conntrack.buckets", "conntrack.chain_length"] | to_entries[] | .key as $k | .value as $i
	| q("Q_f2[\($k)]"; out([$r.findings[] | select(.rule == $i and .applicable)][0].severity // "ok"))),
  q("Q_mp"; out($r.findings[] | select(.rule == "mem.pressure") | "\(.lever)|\(.remedy)")),
  q("Q_nr"; out([$r.findings[] | select(.applicable == false and ((.explanation // "") | length) == 0)] | length))
'
# chomp VAR TEXT: VAR set to TEXT without its trailing newlines, as $(...)
# leaves a program's output; nl2sp VAR TEXT: to TEXT with each newline a
# blank, as | tr '\n' ' ' leaves it; squeeze VAR: each run of blanks in VAR
# one blank, as | tr -s ' ' leaves it. No program run.
chomp() {
	local _chomp=$2
	while [[ $_chomp == *$'\n' ]]; do _chomp=${_chomp%$'\n'}; done
	printf -v "$1" '%s' "$_chomp"
}
nl2sp() { printf -v "$1" '%s' "${2//$'\n'/ }"; }
squeeze() {
	local _squeeze=${!1}
	while [[ $_squeeze == *"  "* ]]; do _squeeze=${_squeeze//"  "/" "}; done
	printf -v "$1" '%s' "$_squeeze"
}

# sev_rank SEVERITY: 0 ok (and n/a), 1 info, 2 warning, 3 critical.
sev_rank() { case $1 in critical) echo 3 ;; warning) echo 2 ;; info) echo 1 ;; *) echo 0 ;; esac; }
checked=0 attributed=0 bad=0 intervals=0 groups_m=0 nprocs=0 nats=0 netnss=0
for n in $(seq "$HOSTS"); do
	rm -f "$TMP/h$n.procs"
	host "$n"
	read -r new ptr b m count ifail nat_all nat_top <"$TMP/h$n.meta"
	for p in $profiles; do
		what="host $n ($(sed -n 2p "$TMP/h$n.facts" | sed 's/^# generated host [0-9]* //'), profile $p"
		ht --facts "$TMP/h$n.facts" --profile "$p" --format json audit >"$TMP/r.json" 2>"$TMP/r.err"
		rc=$?
		if [ "$rc" -gt 1 ]; then
			not_ok "$what: audit printed a report" "exit $rc: $(head -c 300 "$TMP/r.err")"
			bad=$((bad + 1))
			continue
		fi
		checked=$((checked + 1))
		P= C= N=
		while read -r name _; do P="$P $name"; done <"$TMP/h$n.procs"
		while read -r cpath _; do C="$C $cpath"; done <"$TMP/h$n.cgroups"
		while read -r ino _; do N="$N $ino"; done <"$TMP/h$n.netns"
		unset Q_fx Q_e Q_line Q_rem Q_ugot Q_ut Q_ie Q_gpids Q_gmem Q_gtpids Q_gtmem Q_f2 \
			Q_s_listen Q_s_ports Q_s_tw_buckets Q_s_conntrack Q_st_listen Q_st_ports Q_sfix
		eval "$(jq -r --arg P "$P" --arg C "$C" --arg N "$N" "$GH_JQ" "$TMP/r.json")"
		chomp v "$Q_v"
		[ -z "$v" ] || { not_ok "$what: V one story" "$(head -n 3 <<<"$v")"; bad=$((bad + 1)); }
		# A
		nl2sp x "$Q_x"
		case $x in *"Where it is set: most likely the kernel's default"* | *"Where it is set: most likely this kernel's default"* | \
			*"Where it is set: most likely a "*"default ("*)
			attributed=$((attributed + 1))
			reachable "$new" "$ptr" "$b" "$m" ||
				{ not_ok "$what: A $m / $b called a default" "$x"; bad=$((bad + 1)); } ;;
		esac
		# N: ports and PIDs named are the host's.
		nl2sp texts "$Q_texts"
		for port in $(grep -o '[Pp]ort [0-9][0-9]*' <<<"$texts" | awk '{print $2}' | sort -u); do
			grep -q "^listener\.$port\.\|dport=$port\|listener.list = .*\b$port\b\|\.top_listener_port = $port " "$TMP/h$n.facts" ||
				case $port in 3900 | 3901 | 3902 | 3903) ;; # Garage's own ports, from its configuration
				*) not_ok "$what: N port $port named, not the host's" "$(grep -o ".\{60\}[Pp]ort $port.\{40\}" <<<"$texts" | head -1)"; bad=$((bad + 1)) ;; esac
		done
		for pid in $(grep -o 'PID [0-9][0-9]*' <<<"$texts" | awk '{print $2}' | sort -u); do
			grep -q "\.pid = $pid \|\.top_pid = $pid \|\.top_listener_pid = $pid " "$TMP/h$n.facts" ||
				{ not_ok "$what: N PID $pid named, not the host's"; bad=$((bad + 1)); }
		done
		# W, L per process.
		qi=-1
		while read -r name pid soft hard nproc tasks uid unit; do
			qi=$((qi + 1))
			[ "${Q_fx[qi]}" -gt 0 ] || continue
			nl2sp e "${Q_e[qi]}"
			case $e in *"is PID $pid"*) ;; *) not_ok "$what: W $name's finding names PID $pid" "$e"; bad=$((bad + 1)) ;; esac
			chomp line "${Q_line[qi]}"
			case $line in *LimitNOFILE=*:*)
				s=${line#*LimitNOFILE=}; s=${s%%:*}; h=${line##*:}
				[ "$s" -le "$h" ] || { not_ok "$what: L $line soft above hard"; bad=$((bad + 1)); } ;;
			esac
			nl2sp rem "${Q_rem[qi]}"
			for want in $(grep -o 'ulimit -n [0-9]*' <<<"$rem" | awk '{print $3}'); do
				[ "$want" -le "$hard" ] || case $rem in *"hard limit"*) ;;
				*) not_ok "$what: L ulimit -n $want above the hard limit $hard, unsaid" "$rem"; bad=$((bad + 1)) ;; esac
			done
			# U: RLIMIT_NPROC by the arithmetic: 10 x tasks >= 9 x nproc critical.
			want=ok
			if [ "$uid" != 0 ]; then
				if [ $((tasks * 10)) -ge $((nproc * 9)) ]; then want=critical
				elif [ $((tasks * 4)) -ge $((nproc * 3)) ]; then want=warning; fi
			fi
			chomp got "${Q_ugot[qi]}"
			[ "$got" = "$want" ] || { not_ok "$what: U $name $tasks tasks of $nproc, UID $uid: $want" "got $got"; bad=$((bad + 1)); }
			nprocs=$((nprocs + 1))
			case $want in warning | critical)
				nl2sp t "${Q_ut[qi]}"
				squeeze t
				case $t in *"The largest holder is $name (PID $pid)"*) ;;
				*) not_ok "$what: U $name names its holder" "$t"; bad=$((bad + 1)) ;; esac
				k="LimitNPROC= of $unit"; [ "$unit" = - ] && k="limits.conf"
				case ${t#* FIX } in *"$k"*) ;; *) not_ok "$what: U $name fixed with $k" "$t"; bad=$((bad + 1)) ;; esac
				for w in TasksMax pids.max threads-max; do
					case ${t#* FIX } in *"$w"*) not_ok "$what: U $name offers $w" "$t"; bad=$((bad + 1)) ;; esac
				done ;;
			esac
		done <"$TMP/h$n.procs"
		# T: NAT to one destination, judged when the table was dumped for it
		# (48384 = 75% of 64512 entries, or a failed insertion) and not
		# otherwise dumped (half full or dropping also dump it).
		chomp tx "$Q_tx"
		if [ -n "$tx" ]; then
			nats=$((nats + 1))
			want=ok
			if [ "$nat_all" -eq 0 ]; then want=ok
			elif [ $((nat_top * 10)) -ge $((64512 * 9)) ]; then want=critical
			elif [ $((nat_top * 4)) -ge $((64512 * 3)) ]; then want=warning
			elif [ "$ifail" -gt 0 ] && [ $((nat_top * 2)) -ge "$nat_all" ]; then want=warning; fi
			chomp got "$Q_txgot"
			[ "$got" = "$want" ] || { not_ok "$what: T $nat_top of 64512 ($nat_all NATed, $ifail failed): $want" "got $got"; bad=$((bad + 1)); }
			chomp txrem "$Q_txrem"
			case $txrem in *nf_conntrack_max* | *ip_local_port_range*)
				not_ok "$what: T fixed with a knob that does not govern it" "$tx"; bad=$((bad + 1)) ;;
			esac
		elif [ "$count" -ge 48384 ] || [ "$ifail" -gt 0 ]; then
			not_ok "$what: T not judged with $count entries, $ifail failed insertions"; bad=$((bad + 1))
		fi
		# I: the counters' texts say what they cover: "In the last 5 s" on a
		# sampled host, since boot on the others.
		qi=-1
		for r in conntrack.drops listen.somaxconn ports.tw_buckets; do
			qi=$((qi + 1))
			nl2sp e "${Q_ie[qi]}"
			squeeze e
			[ -n "$e" ] || continue
			if grep -q '^sample.seconds = ' "$TMP/h$n.facts"; then
				intervals=$((intervals + 1))
				case $e in *"In the last 5 s"*) ;; *) not_ok "$what: I $r sampled, its text" "$e"; bad=$((bad + 1)) ;; esac
			else
				case $e in *"In the last"*) not_ok "$what: I $r not sampled, its text" "$e"; bad=$((bad + 1)) ;;
				*[Ss]"ince boot"*) ;; *) not_ok "$what: I $r since boot unsaid" "$e"; bad=$((bad + 1)) ;; esac
			fi
		done
		# G: each group by its own figures, named, fixed where its limit is set.
		qi=-1
		while read -r cpath mgr pmax pcur pev kills top tpid ttop; do
			qi=$((qi + 1))
			want=ok
			if [ "$pev" -gt 0 ] || [ $((pcur * 100)) -ge $((pmax * 90)) ]; then want=critical
			elif [ $((pcur * 100)) -ge $((pmax * 75)) ]; then want=warning; fi
			chomp got "${Q_gpids[qi]}"
			[ "$got" = "$want" ] || { not_ok "$what: G $cpath pids $pcur of $pmax, $pev refused: $want" "got $got"; bad=$((bad + 1)); }
			if [ "$kills" -ge 0 ]; then
				want=ok; [ "$kills" -gt 0 ] && want=critical
				chomp got "${Q_gmem[qi]}"
				case $got in "$want" | info) [ "$want" = ok ] || [ "$got" = "$want" ] ;; *) false ;; esac ||
					{ not_ok "$what: G $cpath memory, $kills kills: $want" "got $got"; bad=$((bad + 1)); }
			fi
			for r in cgroup.pids cgroup.memory; do
				if [ $r = cgroup.pids ]; then chomp sev "${Q_gpids[qi]}"; t=${Q_gtpids[qi]}
				else chomp sev "${Q_gmem[qi]}"; t=${Q_gtmem[qi]}; fi
				case $sev in warning | critical) ;; *) continue ;; esac
				nl2sp t "$t"
				squeeze t
				# The holder: the most threads for pids, the most resident memory (by PID) for memory.
				h="$ttop"; [ $r = cgroup.memory ] && h="$top (PID $tpid)"
				case $t in *"The largest holder is $h"*"$cpath"*) ;;
				*) not_ok "$what: G $r[$cpath] names the group and its largest holder" "$t"; bad=$((bad + 1)) ;; esac
				case $mgr in
				docker) k="docker run" ;; podman) k="podman run" ;; kubernetes) k="pod" ;;
				systemd) k=$([ $r = cgroup.pids ] && echo TasksMax= || echo MemoryMax=) ;;
				esac
				case ${t#* FIX } in *"$k"*) ;; *) not_ok "$what: G $r[$cpath] fixed with $k" "$t"; bad=$((bad + 1)) ;; esac
				# Never the host's knobs; a unit's only for a group systemd made.
				nope="pid_max swap"
				[ "$mgr" = systemd ] || nope="$nope systemctl"
				for w in $nope; do
					case ${t#* FIX } in *"$w"*) not_ok "$what: G $r[$cpath] offers $w" "$t"; bad=$((bad + 1)) ;; esac
				done
			done
		done <"$TMP/h$n.cgroups"
		# S: each namespace by its own figures. netns.listen: full (queue >=
		# backlog) critical; at the cap below 4096 with overflows a warning;
		# 75% of the backlog a warning; else info when it overflowed or
		# somaxconn is below 4096. netns.ports: 90% critical, 75% or more
		# than half a warning. netns.tw_buckets: overflowed and 90% now, or
		# 90% or 75% now, a warning; overflowed before, info. At warning the
		# listener's process or the destination is named, and no netns
		# finding has a file of the host as its fix.
		qi=-1
		while read -r ino soma bl qu ovf lo hi ds tw twmax twovf lpid i ctc ctd; do
			qi=$((qi + 1))
			netnss=$((netnss + 1))
			if [ "$qu" -ge "$bl" ]; then want=critical
			elif [ "$ovf" -gt 0 ] && [ "$bl" = "$soma" ] && [ "$soma" -lt 4096 ]; then want=warning
			elif [ $((qu * 4)) -ge $((bl * 3)) ] && [ "$qu" -gt 0 ]; then want=warning
			elif [ "$ovf" -gt 0 ] || [ "$soma" -lt 4096 ]; then want=info
			else want=ok; fi
			chomp got "${Q_s_listen[qi]}"
			[ "$got" = "$want" ] || { not_ok "$what: S listen[$ino] $qu of $bl (somaxconn $soma, $ovf overflows): $want" "got $got"; bad=$((bad + 1)); }
			range=$((hi - lo + 1))
			if [ $((ds * 10)) -ge $((range * 9)) ] && [ "$ds" -gt 0 ]; then want=critical
			elif [ $((ds * 2)) -gt "$range" ]; then want=warning
			else want=ok; fi
			chomp got "${Q_s_ports[qi]}"
			[ "$got" = "$want" ] || { not_ok "$what: S ports[$ino] $ds of $range: $want" "got $got"; bad=$((bad + 1)); }
			if [ "$twovf" -gt 0 ] && [ $((tw * 10)) -ge $((twmax * 9)) ]; then want=warning
			elif [ "$twovf" -gt 0 ]; then want=info
			elif [ $((tw * 4)) -ge $((twmax * 3)) ]; then want=warning
			else want=ok; fi
			chomp got "${Q_s_tw_buckets[qi]}"
			[ "$got" = "$want" ] || { not_ok "$what: S tw_buckets[$ino] $tw of $twmax, $twovf overflows: $want" "got $got"; bad=$((bad + 1)); }
			# Its conntrack table against the host's max ($m): a drop or 90% critical, 75% a warning.
			if [ "$ctd" -gt 0 ] || [ $((ctc * 10)) -ge $((m * 9)) ]; then want=critical
			elif [ $((ctc * 4)) -ge $((m * 3)) ]; then want=warning
			else want=ok; fi
			chomp got "${Q_s_conntrack[qi]}"
			[ "$got" = "$want" ] || { not_ok "$what: S conntrack[$ino] $ctc of $m, $ctd drops: $want" "got $got"; bad=$((bad + 1)); }
			for r in netns.listen netns.ports; do
				if [ $r = netns.listen ]; then chomp sev "${Q_s_listen[qi]}"; t=${Q_st_listen[qi]}
				else chomp sev "${Q_s_ports[qi]}"; t=${Q_st_ports[qi]}; fi
				case $sev in warning | critical) ;; *) continue ;; esac
				nl2sp t "$t"
				squeeze t
				h="srv$i, PID $lpid"; [ $r = netns.ports ] && h="10.9.$i.1:6379"
				case $t in *"$h"*) ;; *) not_ok "$what: S $r[$ino] names $h" "$t"; bad=$((bad + 1)) ;; esac
			done
			chomp nfix "${Q_sfix[qi]}"
			[ "$nfix" = 0 ] ||
				{ not_ok "$what: S a netns finding with a file of the host as its fix" "$ino: $nfix"; bad=$((bad + 1)); }
		done <"$TMP/h$n.netns"
		# F: a rule sized from conntrack.max is never more severe than it.
		chomp fx "$Q_f"
		if [ "$fx" != none ]; then
			cap=$(sev_rank "$fx"); [ "$cap" -lt 1 ] && cap=1
			qi=-1
			for r in conntrack.buckets conntrack.chain_length; do
				qi=$((qi + 1))
				chomp s2 "${Q_f2[qi]}"
				[ "$(sev_rank "$s2")" -le "$cap" ] || { not_ok "$what: F $r $s2 above conntrack.max $fx"; bad=$((bad + 1)); }
			done
		fi
		# M: every host kill in one group: the group's fix, not the host's.
		hk=$(sed -n 's/^mem.oom_kills = \([0-9]*\) .*/\1/p' "$TMP/h$n.facts")
		mk=$(awk 'BEGIN { m = 0 } $6 > m { m = $6 } END { print m }' "$TMP/h$n.cgroups")
		if [ "${hk:-0}" -gt 0 ] && [ "$mk" -ge "$hk" ]; then
			chomp mp "$Q_mp"
			psi=$(sed -n 's/^mem.psi.full_avg60 = \([0-9.]*\) .*/\1/p' "$TMP/h$n.facts")
			# A stall of the whole host is the host's own evidence: its remedy stays.
			case $psi in 0.0 | 2.5)
				[ "$mp" = "cgroup.memory|null" ] || { not_ok "$what: M all kills in a group" "$mp"; bad=$((bad + 1)); } ;;
			esac
			groups_m=$((groups_m + 1))
		fi
		# R
		chomp nr "$Q_nr"
		[ "$nr" = 0 ] || { not_ok "$what: R $nr n/a rows without a reason"; bad=$((bad + 1)); }
	done
done
echo "# $HOSTS hosts, $checked reports checked, $attributed attributions to a kernel default, $intervals texts over a sample, $(cat "$TMP"/h*.cgroups | wc -l) control groups, $groups_m reports whose kills were all one group's, $nprocs process RLIMIT_NPROC findings, $nats NAT findings, $netnss network namespaces; $bad violations"
[ "$nprocs" -gt 0 ] && ok "$nprocs RLIMIT_NPROC findings checked" || not_ok "no RLIMIT_NPROC finding checked"
[ "$nats" -gt 0 ] && ok "$nats NAT findings checked" || not_ok "no NAT finding checked"
[ "$netnss" -gt 0 ] && ok "$netnss network namespaces checked" || not_ok "no network namespace checked"
[ "$intervals" -gt 0 ] && ok "$intervals findings over a --sample interval checked" || not_ok "no sampled host"
[ "$checked" -ge $((HOSTS * 3)) ] && ok "$checked reports over $HOSTS generated hosts" || not_ok "only $checked reports"
[ "$(cat "$TMP"/h*.cgroups | wc -l)" -gt 0 ] && ok "control groups generated" || not_ok "no control group generated"
[ "$bad" -eq 0 ] && ok "every report holds V A N W L R I G F M U T S" || not_ok "$bad violations"
finish
