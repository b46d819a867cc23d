/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine/facts.h"
#include "shared/escape.h"
#include "shared/util.h"
#include "engine/value.h"

#define NF_SYSCTL "sysctl in net/netfilter/nf_conntrack_standalone.c"

#define CT_STATE_DOC "TCP entries in this state (as conntrack(8) prints it), ctnetlink dump CTA_PROTOINFO_TCP_STATE, else /proc/net/nf_conntrack"
#define NSTAT_DOC(x) x ", since boot: /proc/net/netstat and /proc/net/snmp as nstat(8) names it"
#define NET_SYSCTL(f) "sysctl of this network namespace, " f

#define CT_STATS "summed over CPUs; ctnetlink IPCTNL_MSG_CT_GET_STATS_CPU, else /proc/net/stat/nf_conntrack"

/* Sorted by name (strcmp); test_fact_defs_sorted checks it. */
static const struct ht_fact_def fact_defs[] = {
	{ "boot.net.netfilter.nf_conntrack_max", HT_T_INT, "entries",
	  "nf_conntrack_max the boot configuration sets (the effective sysctl.d or /etc/sysctl.conf "
	  "line, in systemd-sysctl's order)" },
	{ "boot.net.netfilter.nf_conntrack_tcp_timeout_time_wait", HT_T_INT, "seconds",
	  "nf_conntrack_tcp_timeout_time_wait the boot configuration sets (the effective sysctl.d "
	  "or /etc/sysctl.conf line)" },
	{ "cgroup.list", HT_T_STR, NULL,
	  "the control groups with a memory or pids limit set, or whose limit was hit, by their escaped "
	  "names (cgroup.CG.*), separated by spaces; \"\" for none" },
	{ "cgroup.skipped", HT_T_INT, "groups",
	  "control groups to judge that were not read: past the first 4096, 16 levels deep, or "
	  "100000 directories of a hierarchy" },
	{ "cgroup.version", HT_T_STR, NULL,
	  "the cgroup hierarchy read: v2 (/sys/fs/cgroup/cgroup.controllers), v1 (the memory and "
	  "pids hierarchies of /sys/fs/cgroup), or none" },
	{ "conntrack.dump.entries", HT_T_INT, "entries",
	  "entries a ctnetlink dump (IPCTNL_MSG_CT_GET, NLM_F_DUMP) returned, every protocol, "
	  "else the lines of /proc/net/nf_conntrack" },
	{ "conntrack.dump.pairs", HT_T_STR, NULL,
	  "the 3 address pairs of original tuples with the most entries of that dump, "
	  "\"SRC > DST (ENTRIES)\", comma-separated" },
	{ "conntrack.dump.ports", HT_T_STR, NULL,
	  "the 5 destination ports of original tuples with the most entries of that dump, "
	  "\"PORT:ENTRIES\", space-separated" },
	{ "conntrack.dump.tcp", HT_T_INT, "entries", "TCP entries of that dump" },
	{ "conntrack.dump.top3_pairs_entries", HT_T_INT, "entries",
	  "entries of the 3 address pairs with the most, together" },
	{ "conntrack.dump.top_pair", HT_T_STR, NULL,
	  "the address pair (\"SRC > DST\", original tuple) with the most entries" },
	{ "conntrack.dump.top_pair_entries", HT_T_INT, "entries", "its entries" },
	{ "conntrack.dump.top_port", HT_T_INT, NULL,
	  "the destination port (original tuple) with the most entries" },
	{ "conntrack.dump.top_port_entries", HT_T_INT, "entries", "its entries" },
	{ "conntrack.loaded", HT_T_BOOL, NULL,
	  "nf_conntrack loaded or built in (libkmod initstate, else /sys/module/nf_conntrack)" },
	{ "conntrack.module", HT_T_STR, NULL,
	  "state of nf_conntrack from libkmod: builtin, loaded, available or absent" },
	{ "conntrack.nat.entries", HT_T_INT, "entries",
	  "entries of that dump with source NAT (SNAT, MASQUERADE: IPS_SRC_NAT; in "
	  "/proc/net/nf_conntrack a reply to another address or port than the original source)" },
	{ "conntrack.nat.top_destination", HT_T_STR, NULL,
	  "of those, the destination (\"ADDR:PORT/PROTO\") that one NAT address maps the most "
	  "connections to: each takes a source port of that address of its own" },
	{ "conntrack.nat.top_entries", HT_T_INT, "entries",
	  "the mappings from that NAT address to that destination" },
	{ "conntrack.nat.top_source", HT_T_STR, NULL, "that NAT address" },
	{ "conntrack.nat.top_sources", HT_T_INT, "addresses",
	  "the NAT addresses that map connections to that destination" },
	{ "conntrack.stale.established", HT_T_INT, "entries",
	  "ESTABLISHED TCP entries with no packet for at least 3600 s: their remaining timeout "
	  "(CTA_TIMEOUT) is at least 3600 s below nf_conntrack_tcp_timeout_established and above "
	  "nf_conntrack_tcp_timeout_unacknowledged (300 s when absent; an entry with "
	  "unacknowledged data gets that timeout, idle or not)" },
	{ "conntrack.stat.count", HT_T_INT, "entries",
	  "live conntrack entries over ctnetlink IPCTNL_MSG_CT_GET_STATS (CTA_STATS_GLOBAL_ENTRIES)" },
	{ "conntrack.stat.drop", HT_T_INT, "packets",
	  "packets dropped because no entry could be made (table full), " CT_STATS },
	{ "conntrack.stat.drop_at_apply", HT_T_INT, "packets",
	  "conntrack.stat.drop when the last hosttune apply ran, from its state file (same boot only)" },
	{ "conntrack.stat.early_drop", HT_T_INT, "entries",
	  "entries evicted to make room for new ones when the table was full, " CT_STATS },
	{ "conntrack.stat.early_drop_at_apply", HT_T_INT, "entries",
	  "conntrack.stat.early_drop when the last hosttune apply ran, from its state file (same boot only)" },
	{ "conntrack.stat.insert_failed", HT_T_INT, "packets",
	  "entries that could not be inserted (clash), " CT_STATS },
	{ "conntrack.stat.search_restart", HT_T_INT, "lookups",
	  "lookups restarted because a chain changed under them, " CT_STATS },
	{ "conntrack.state.CLOSE", HT_T_INT, "entries", CT_STATE_DOC },
	{ "conntrack.state.CLOSE_WAIT", HT_T_INT, "entries", CT_STATE_DOC },
	{ "conntrack.state.ESTABLISHED", HT_T_INT, "entries", CT_STATE_DOC },
	{ "conntrack.state.FIN_WAIT", HT_T_INT, "entries", CT_STATE_DOC },
	{ "conntrack.state.LAST_ACK", HT_T_INT, "entries", CT_STATE_DOC },
	{ "conntrack.state.NONE", HT_T_INT, "entries", CT_STATE_DOC },
	{ "conntrack.state.SYN_RECV", HT_T_INT, "entries", CT_STATE_DOC },
	{ "conntrack.state.SYN_SENT", HT_T_INT, "entries", CT_STATE_DOC },
	{ "conntrack.state.SYN_SENT2", HT_T_INT, "entries", CT_STATE_DOC },
	{ "conntrack.state.TIME_WAIT", HT_T_INT, "entries", CT_STATE_DOC },
	{ "cpu.aes.flag", HT_T_BOOL, NULL,
	  "the CPU advertises AES instructions: 'aes' in /proc/cpuinfo flags (x86) or Features (arm64)" },
	{ "cpu.aes.gcm_mbps", HT_T_INT, "MB/s",
	  "AES-128-GCM encryption measured with libcrypto's EVP API on 16 KiB buffers" },
	{ "cpu.aes.hw", HT_T_BOOL, NULL,
	  "measured: AES-128-GCM at least half as fast as ChaCha20-Poly1305 (hardware AES)" },
	{ "cpu.arch", HT_T_STR, NULL,
	  "machine as uname -m prints it, /proc/sys/kernel/arch (uname(2) on the live host)" },
	{ "cpu.chacha.mbps", HT_T_INT, "MB/s",
	  "ChaCha20-Poly1305 encryption measured with libcrypto's EVP API on 16 KiB buffers" },
	{ "cpu.count", HT_T_INT, "CPUs", "CPUs online, the cpulist in /sys/devices/system/cpu/online" },
	{ "cpu.model", HT_T_STR, NULL, "CPU model name, 'model name' in /proc/cpuinfo" },
	{ "cpu.pclmul.flag", HT_T_BOOL, NULL,
	  "carry-less multiply for GCM: 'pclmulqdq' in /proc/cpuinfo flags (x86), 'pmull' (arm64)" },
	{ "cpu.pclmul.name", HT_T_STR, NULL,
	  "the instruction cpu.pclmul.flag stands for: pclmulqdq (x86 flags) or pmull (arm64 Features)" },
	{ "cpu.virt", HT_T_STR, NULL,
	  "hypervisor: none, kvm, qemu, vmware, microsoft, xen, ... (CPUID leaf 0x40000000, DMI), "
	  "'unknown hypervisor' for cpuinfo's hypervisor flag alone" },
	{ "files.open", HT_T_INT, "files",
	  "files open in the whole system now: the first count of /proc/sys/fs/file-nr less the "
	  "second (proc_nr_files() in fs/file_table.c)" },
	{ "files.top.fds", HT_T_INT, "descriptors",
	  "open descriptors of the process holding the most (/proc/PID/fd), read only when a rule "
	  "asks (the file table near full)" },
	{ "files.top.pid", HT_T_INT, NULL, "PID of the process of files.top.fds" },
	{ "files.top.process", HT_T_STR, NULL, "its name, /proc/PID/comm" },
	{ "files.top.read", HT_T_INT, "processes",
	  "processes whose descriptors could be counted (not root: only the user's own)" },
	{ "files.top.total", HT_T_INT, "descriptors",
	  "the descriptors of every process counted, summed: files.open less this is held by no "
	  "process's descriptor (the kernel: nfsd, io_uring, a filesystem; memory maps)" },
	{ "files.top.unread", HT_T_INT, "processes",
	  "processes whose descriptors could not be counted (another user's, not root; gone)" },
	{ "fs.file-max", HT_T_INT, "files",
	  "sysctl: most files open in the whole system; past it open() and socket() fail with "
	  "ENFILE (\"Too many open files in system\") for all but CAP_SYS_ADMIN; the kernel's "
	  "default is a tenth of RAM in KiB, at least 8192 (files_maxfiles_init())" },
	{ "fs.nr_open", HT_T_INT, "descriptors",
	  "sysctl: the ceiling of any RLIMIT_NOFILE (1048576 by default)" },
	{ "garage.admin_port", HT_T_INT, NULL,
	  "TCP port of Garage's admin API ([admin] api_bind_addr); unavailable (ENOENT) when "
	  "garage.toml sets none, and before deployment: Garage binds it only when garage.toml "
	  "configures it" },
	{ "garage.binary", HT_T_STR, NULL,
	  "the garage executable: the first word of the unit's ExecStart=, else the first of "
	  "/usr/local/bin/garage, /usr/bin/garage that exists" },
	{ "garage.binary_bits", HT_T_INT, "bits",
	  "32 or 64: the ELF class (EI_CLASS) of garage.binary, the userland Garage runs in (a "
	  "32-bit Raspberry Pi OS on a 64-bit kernel gives 32 here and aarch64 in cpu.arch)" },
	{ "garage.block_ram_buffer_max", HT_T_INT, "bytes",
	  "RAM Garage may hold in blocks not yet written to the other nodes (block_ram_buffer_max; "
	  "default 256 MiB)" },
	{ "garage.block_size", HT_T_INT, "bytes",
	  "size of the blocks objects are split into (block_size; default 1 MiB = 1048576)" },
	{ "garage.checked", HT_T_BOOL, NULL,
	  "Garage's pre-flight ran: --profile garage, --set garage.config=PATH or an "
	  "/etc/garage.toml; unavailable (ENOENT) otherwise, and the Garage rules give no finding" },
	{ "garage.compression_level", HT_T_STR, NULL,
	  "zstd level of stored blocks (compression_level: an integer, or none; default 1)" },
	{ "garage.config", HT_T_STR, NULL,
	  "the garage.toml read: --set garage.config=PATH, else the -c/--config path of the "
	  "garage unit's ExecStart= (or its GARAGE_CONFIG_FILE), else /etc/garage.toml; "
	  "unavailable (ENOENT) before deployment, when none exists" },
	{ "garage.data_dir", HT_T_STR, NULL,
	  "data directories (data_dir: a path, or the path of each [[data_dir]]), space-separated; "
	  "before deployment the workload variable garage.data_dir" },
	{ "garage.data_fsync", HT_T_BOOL, NULL,
	  "fsync every data block file written (data_fsync; default false)" },
	{ "garage.db_engine", HT_T_STR, NULL,
	  "metadata database engine (db_engine: lmdb, the default since v0.9, or sqlite; the "
	  "aliases heed, sqlite3 and rusqlite as the engine they name, anything else as written)" },
	{ "garage.metadata_auto_snapshot_interval", HT_T_STR, NULL,
	  "how often Garage snapshots its metadata database (metadata_auto_snapshot_interval, "
	  "e.g. 6h); unavailable (ENOENT) when unset, Garage's default: no snapshots" },
	{ "garage.metadata_dir", HT_T_STR, NULL,
	  "metadata directory (metadata_dir); before deployment the workload variable "
	  "garage.metadata_dir" },
	{ "garage.metadata_fsync", HT_T_BOOL, NULL,
	  "fsync every metadata transaction (metadata_fsync; default false)" },
	{ "garage.rpc_port", HT_T_INT, NULL,
	  "TCP port of Garage's RPC between nodes (rpc_bind_addr; 3901 before deployment)" },
	{ "garage.s3_port", HT_T_INT, NULL,
	  "TCP port of Garage's S3 API ([s3_api] api_bind_addr; 3900 before deployment)" },
	{ "garage.unit", HT_T_STR, NULL,
	  "the unit file of garage.service systemd would load (/etc, /run, /usr/lib, ...); "
	  "unavailable (ENOENT) when none is installed" },
	{ "garage.unit.nofile", HT_T_INT, "descriptors",
	  "soft LimitNOFILE= the garage unit and its drop-ins set, in systemd's order (source "
	  "FILE:LINE); when none sets it, the soft limit of the manager's [Manager] "
	  "DefaultLimitNOFILE= in /etc/systemd/system.conf and the system.conf.d drop-ins "
	  "(source \"FILE:LINE DefaultLimitNOFILE= ...\"); unavailable (ENOENT) when neither "
	  "sets one: systemd's built-in default, soft 1024" },
	{ "garage.web_port", HT_T_INT, NULL,
	  "TCP port of Garage's web endpoint ([s3_web] bind_addr); unavailable (ENOENT) when "
	  "garage.toml sets none, and before deployment: Garage binds it only when garage.toml "
	  "configures it" },
	{ "host.collected_at", HT_T_STR, NULL,
	  "when the facts were collected, UTC, as 2026-12-02T21:05:00Z (time(2))" },
	{ "host.name", HT_T_STR, NULL,
	  "the host's name: /proc/sys/kernel/hostname, else the first line of /etc/hostname" },
	{ "host.uptime", HT_T_INT, "seconds",
	  "seconds since boot, /proc/uptime: how long the since-boot counters (nstat.*, "
	  "conntrack.stat.*) have been counting" },
	{ "hosttune.profile", HT_T_STR, NULL,
	  "the profile hosttune facts ran with; its source says where it came from: --profile, "
	  "the configuration's FILE:LINE:COL, or default; audit --facts takes it unless "
	  "--profile or --config FILE names one" },
	{ "hosttune.version", HT_T_STR, NULL, "the version of hosttune that collected the facts" },
	{ "hosttune.waivers", HT_T_INT, "waivers",
	  "how many waivers the configuration hosttune facts ran with holds (hosttune.waiver.N.text, "
	  "N from 1); audit --facts takes them unless --config FILE names a configuration" },
	{ "kernel.page_size", HT_T_INT, "bytes",
	  "page size from sysconf(_SC_PAGESIZE); not recorded in a --root tree (rules assume 4096)" },
	{ "kernel.pointer_size", HT_T_INT, "bytes",
	  "size of a kernel pointer derived from cpu.arch: 8 on 64-bit machines, 4 on 32-bit" },
	{ "kernel.release", HT_T_STR, NULL, "kernel release (uname -r), /proc/sys/kernel/osrelease" },
	{ "kernel.version", HT_T_VER, NULL,
	  "leading dotted version of kernel.release, e.g. 5.15.0 for 5.15.0-91-generic" },
	{ "listener.list", HT_T_STR, NULL,
	  "TCP ports with a listening socket (IPv4 and IPv6), space-separated, ascending "
	  "(NETLINK_SOCK_DIAG inet_diag)" },
	{ "mem.available", HT_T_INT, "bytes",
	  "memory available without swapping, MemAvailable of /proc/meminfo" },
	{ "mem.oom_kills", HT_T_INT, "processes",
	  "processes the OOM killer killed since boot, oom_kill of /proc/vmstat (Linux 4.13+)" },
	{ "mem.psi.full_avg60", HT_T_INT, "%",
	  "share of the last minute in which every task was stalled waiting for memory, "
	  "/proc/pressure/memory full avg60 (Linux 4.20+ with PSI)" },
	{ "mem.psi.some_avg60", HT_T_INT, "%",
	  "share of the last minute in which some task was stalled waiting for memory, "
	  "/proc/pressure/memory some avg60" },
	{ "mem.swap_total", HT_T_INT, "bytes", "swap space (SwapTotal of /proc/meminfo; zram counts)" },
	{ "mem.swap_zram", HT_T_INT, "bytes",
	  "the part of the swap on zram (compressed RAM, not a disk): the Size of every /dev/zramN "
	  "line of /proc/swaps" },
	{ "mem.total", HT_T_INT, "bytes", "usable RAM, MemTotal in /proc/meminfo" },
	{ "modprobe.nf_conntrack.hashsize", HT_T_INT, "buckets",
	  "hashsize= that modprobe.d options give nf_conntrack (libkmod), used at the next load" },
	{ "modprobe.nf_conntrack.options", HT_T_STR, NULL,
	  "all options modprobe.d gives nf_conntrack, as libkmod merges them" },
	{ "module.nf_conntrack.expect_hashsize", HT_T_INT, "buckets",
	  "expectation hash buckets, /sys/module/nf_conntrack/parameters/expect_hashsize" },
	{ "module.nf_conntrack.hashsize", HT_T_INT, "buckets",
	  "conntrack hash buckets, /sys/module/nf_conntrack/parameters/hashsize "
	  "(module parameter in net/netfilter/nf_conntrack_core.c)" },
	{ "net.core.somaxconn", HT_T_INT, "entries",
	  NET_SYSCTL("cap on every listen() backlog; 128 before 5.4, 4096 since (commit 19f92a030ca6)") },
	{ "net.ipv4.ip_local_port_range", HT_T_STR, NULL,
	  NET_SYSCTL("ephemeral ports of connect(), \"LOW HIGH\"; 32768 60999 by default") },
	{ "net.ipv4.tcp_max_syn_backlog", HT_T_INT, "entries",
	  NET_SYSCTL("most half-open connections (SYN_RECV) a listener holds before cookies or drops") },
	{ "net.ipv4.tcp_max_tw_buckets", HT_T_INT, "sockets",
	  NET_SYSCTL("most TIME_WAIT sockets; past it a closing socket skips TIME_WAIT "
	             "(TcpExtTCPTimeWaitOverflow)") },
	{ "net.ipv4.tcp_syncookies", HT_T_INT, NULL,
	  NET_SYSCTL("SYN cookies: 0 never, 1 when a listener's SYN queue is full (the default), "
	             "2 always") },
	{ "net.ipv4.tcp_timestamps", HT_T_INT, NULL,
	  NET_SYSCTL("TCP timestamps (RFC 7323): 0 off, 1 on (the default), 2 without random offsets") },
	{ "net.ipv4.tcp_tw_reuse", HT_T_INT, NULL,
	  NET_SYSCTL("reuse of TIME_WAIT ports by connect(): 0 never, 1 always, 2 loopback only "
	             "(the default since 4.19, commit 79e9fed46038)") },
	{ "net.netfilter.nf_conntrack_buckets", HT_T_INT, "buckets",
	  "conntrack hash table size, " NF_SYSCTL },
	{ "net.netfilter.nf_conntrack_count", HT_T_INT, "entries",
	  "conntrack entries in use when collected, " NF_SYSCTL },
	{ "net.netfilter.nf_conntrack_max", HT_T_INT, "entries",
	  "most conntrack entries before new flows are dropped, " NF_SYSCTL },
	{ "net.netfilter.nf_conntrack_tcp_timeout_close_wait", HT_T_INT, "seconds",
	  "how long a TCP entry stays in CLOSE_WAIT (kernel 60 s; kube-proxy 3600 s), " NF_SYSCTL },
	{ "net.netfilter.nf_conntrack_tcp_timeout_established", HT_T_INT, "seconds",
	  "how long an idle ESTABLISHED TCP entry stays (kernel 432000 s, 5 days; kube-proxy "
	  "86400 s), " NF_SYSCTL },
	{ "net.netfilter.nf_conntrack_tcp_timeout_fin_wait", HT_T_INT, "seconds",
	  "how long a TCP entry stays in FIN_WAIT (kernel 120 s), " NF_SYSCTL },
	{ "net.netfilter.nf_conntrack_tcp_timeout_syn_sent", HT_T_INT, "seconds",
	  "how long a TCP entry stays in SYN_SENT (kernel 120 s), " NF_SYSCTL },
	{ "net.netfilter.nf_conntrack_tcp_timeout_time_wait", HT_T_INT, "seconds",
	  "how long a TCP entry stays in TIME_WAIT, " NF_SYSCTL },
	{ "netns.initial", HT_T_BOOL, NULL,
	  "initial network namespace: nf_conntrack_max is read-only (0444) in any other one "
	  "since 5.12.2 (net/netfilter/nf_conntrack_standalone.c); always true before that" },
	{ "netns.list", HT_T_STR, NULL,
	  "the network namespaces other than hosttune's own with a process in them, by inode "
	  "(/proc/PID/ns/net's \"net:[INODE]\"), sorted, space-separated, at most 4096 "
	  "(netns.N.*); \"\" for none" },
	{ "netns.read_as_root", HT_T_BOOL, NULL,
	  "the namespaces were read live with an effective UID of 0: a process refused then is "
	  "refused by a ptrace restriction (Yama, a security module), not for want of root" },
	{ "netns.refused", HT_T_INT, "processes",
	  "processes whose /proc/PID/ns/net could not be read (another user's without root; as "
	  "root, a ptrace restriction)" },
	{ "netns.refused_pid", HT_T_INT, NULL,
	  "the lowest of those processes; unavailable (ENOENT) when none was refused" },
	{ "netns.refused_process", HT_T_STR, NULL, "the name (comm) of netns.refused_pid" },
	{ "netns.skipped", HT_T_INT, "processes",
	  "processes whose network namespace was not judged: their /proc/PID/ns/net could not be "
	  "read (another user's without root), or it was past the first 4096 namespaces" },
	{ "nic.list", HT_T_STR, NULL,
	  "network interfaces other than lo, space-separated, in name order (libudev; the "
	  "kernel's if_nameindex(3) when /sys is another network namespace's), each name "
	  "escaped as in its nic.IF.* facts (a+b: a_2bb; hosttune-facts(7))" },
	{ "nic.max_speed", HT_T_INT, "Mb/s",
	  "fastest link speed among the interfaces of nic.list with a known speed (nic.IF.speed); "
	  "unavailable (ENOENT) when none reports one (virtio)" },
	{ "nic.skipped", HT_T_INT, "interfaces",
	  "entries of a --root tree's /sys/class/net left out of nic.list: names no interface "
	  "can have (16 bytes or more, a '/', ':' or white space); its source names them. "
	  "0 on a live host: every name the kernel allows is listed" },
	{ "nstat.TcpActiveOpens", HT_T_INT, "connections", NSTAT_DOC("connections this host opened (connect())") },
	{ "nstat.TcpExtListenDrops", HT_T_INT, "packets",
	  NSTAT_DOC("SYNs and handshake ACKs a listener dropped, overflows included") },
	{ "nstat.TcpExtListenOverflows", HT_T_INT, "packets",
	  NSTAT_DOC("handshakes dropped because a listener's accept queue was full") },
	{ "nstat.TcpExtSyncookiesSent", HT_T_INT, "packets",
	  NSTAT_DOC("SYN cookies sent: a SYN queue was full (\"Possible SYN flooding on port\" "
	            "in the kernel log), or net.ipv4.tcp_syncookies = 2 sends them always") },
	{ "nstat.TcpExtTCPReqQFullDoCookies", HT_T_INT, "packets",
	  NSTAT_DOC("SYNs answered with a cookie because a listener's SYN queue was full "
	            "(tcp_conn_request() in net/ipv4/tcp_input.c)") },
	{ "nstat.TcpExtTCPReqQFullDrop", HT_T_INT, "packets",
	  NSTAT_DOC("SYNs dropped because the SYN queue was full and syncookies were off") },
	{ "nstat.TcpExtTCPTimeWaitOverflow", HT_T_INT, "sockets",
	  NSTAT_DOC("closing sockets that skipped TIME_WAIT because tcp_max_tw_buckets was reached") },
	{ "nstat.TcpExtTW", HT_T_INT, "sockets", NSTAT_DOC("sockets that finished TIME_WAIT") },
	{ "nstat.TcpOutSegs", HT_T_INT, "segments",
	  NSTAT_DOC("TCP segments sent, retransmissions excluded") },
	{ "nstat.TcpPassiveOpens", HT_T_INT, "connections", NSTAT_DOC("connections this host accepted") },
	{ "nstat.TcpRetransSegs", HT_T_INT, "segments", NSTAT_DOC("TCP segments retransmitted") },
	{ "observed.drops", HT_T_INT, "packets",
	  "drop + early_drop counted during a recording (audit --observed FILE)" },
	{ "observed.events_lost", HT_T_INT, "events",
	  "NEW events dropped at watch's receive queue, counted by the kernel and included in "
	  "the rates (audit --observed FILE)" },
	{ "observed.max", HT_T_INT, "entries",
	  "nf_conntrack_max while `hosttune watch` recorded (audit --observed FILE)" },
	{ "observed.mean_rate", HT_T_INT, "connections/s",
	  "mean new conntrack entries a second over a recording (audit --observed FILE)" },
	{ "observed.overruns", HT_T_INT, "overruns",
	  "overruns of watch's event receive queue during a recording (audit --observed FILE)" },
	{ "observed.peak_count", HT_T_INT, "entries",
	  "largest nf_conntrack_count in a recording (audit --observed FILE)" },
	{ "observed.peak_rate", HT_T_INT, "connections/s",
	  "largest new conntrack entries a second between two samples (audit --observed FILE)" },
	{ "observed.pinned_samples", HT_T_INT, "samples",
	  "longest run of consecutive samples with the count at nf_conntrack_max (--observed)" },
	{ "observed.rate_lower_bound", HT_T_BOOL, NULL,
	  "a recording lost NEW events (or has intervals without a count): observed.peak_rate "
	  "and .mean_rate are lower bounds (audit --observed FILE)" },
	{ "observed.samples", HT_T_INT, "samples", "samples in a recording (audit --observed FILE)" },
	{ "observed.source", HT_T_STR, NULL, "the recording file audit --observed read" },
	{ "observed.time_wait", HT_T_INT, "seconds",
	  "nf_conntrack_tcp_timeout_time_wait while recording (audit --observed FILE)" },
	{ "peer.list", HT_T_STR, NULL,
	  "remote addresses of this network namespace's established TCP connections (loopback "
	  "excluded) that sent at least one segment, space-separated, sorted: IPv4 dotted, IPv6 "
	  "with '-' for ':' (peer.PEER.address holds the address as written); NETLINK_SOCK_DIAG "
	  "INET_DIAG_INFO, read only when a rule asks for a peer fact" },
	{ "ports.destinations", HT_T_INT, "destinations",
	  "distinct (source address, destination address, destination port) of client sockets "
	  "whose local port is in ip_local_port_range (NETLINK_SOCK_DIAG)" },
	{ "ports.range.high", HT_T_INT, "ports", "last port of net.ipv4.ip_local_port_range" },
	{ "ports.range.low", HT_T_INT, "ports", "first port of net.ipv4.ip_local_port_range" },
	{ "ports.time_wait", HT_T_INT, "sockets", "TCP sockets in TIME_WAIT (NETLINK_SOCK_DIAG)" },
	{ "ports.top.destination", HT_T_STR, NULL,
	  "the destination (ADDR:PORT, [ADDR]:PORT for IPv6) with the most client sockets from "
	  "one source address" },
	{ "ports.top.loopback", HT_T_BOOL, NULL,
	  "whether the address of ports.top.destination is a loopback one (127.0.0.0/8, ::1, "
	  "::ffff:127.x); unavailable like ports.top.destination" },
	{ "ports.top.sockets", HT_T_INT, "sockets",
	  "client sockets to ports.top.destination from ports.top.source whose local port is in "
	  "ip_local_port_range, any state (each holds one port of the range)" },
	{ "ports.top.source", HT_T_STR, NULL, "the source address of ports.top.sockets" },
	{ "ports.top.time_wait", HT_T_INT, "sockets", "those of ports.top.sockets in TIME_WAIT" },
	{ "process.list", HT_T_STR, NULL,
	  "processes checked: owners of listening sockets and the profile's workload.service, "
	  "by name (process.NAME.*, the comm escaped: a+b is a_2bb), space-separated, sorted; "
	  "only names a process has (a service that is not running is absent)" },
	{ "proxy.checked", HT_T_BOOL, NULL,
	  "a reverse proxy's configuration was read (nginx: /etc/nginx/nginx.conf and its "
	  "includes); unavailable (ENOENT) when there is none, or no store port to look for" },
	{ "proxy.list", HT_T_STR, NULL,
	  "the paths from a reverse proxy to the store's ports (proxy.NAME.*), as nginx-1 "
	  "nginx-2 ... in the order of the configuration, space-separated; \"\" for none" },
	{ "proxy.store_ports", HT_T_STR, NULL,
	  "the store's ports a proxy path is looked for, each as PORT/ROLE: garage.s3_port (s3) "
	  "and garage.web_port (web) on a Garage host, MinIO's --address port (s3, 9000 by "
	  "default), the registry's 5000 (registry); space-separated" },
	{ "sample.seconds", HT_T_INT, "seconds",
	  "the interval of --sample TIME as measured between the two readings (decimal); "
	  "unavailable (ENODATA) without --sample" },
	{ "sockstat.tcp.inuse", HT_T_INT, "sockets",
	  "TCP sockets of this network namespace in the kernel's hash tables now (listening, "
	  "connecting, connected), 'TCP: inuse' of /proc/net/sockstat" },
	{ "sockstat.tcp.tw", HT_T_INT, "sockets",
	  "TCP sockets of this network namespace in TIME_WAIT now, 'TCP: tw' of /proc/net/sockstat" },
	{ "softnet.cpus", HT_T_INT, "CPUs", "rows of /proc/net/softnet_stat, one an online CPU" },
	{ "softnet.dropped", HT_T_INT, "packets",
	  "packets dropped because a CPU's input backlog was full (net.core.netdev_max_backlog) "
	  "or a flow hit the flow limit, since boot, column 2 of /proc/net/softnet_stat summed "
	  "over CPUs" },
	{ "softnet.processed", HT_T_INT, "packets",
	  "packets the receive softirq processed since boot, column 1 of /proc/net/softnet_stat "
	  "summed over CPUs" },
	{ "softnet.time_squeeze", HT_T_INT, "times",
	  "times the receive softirq stopped with work left (its net.core.netdev_budget or "
	  "netdev_budget_usecs ran out) since boot, column 3 summed over CPUs" },
	{ "softnet.worst_cpu", HT_T_INT, NULL,
	  "the CPU with the most softnet drops (then time_squeeze, then the lowest number): "
	  "column 13 of its row; before 5.10, which prints no CPU number, its row from 0" },
	{ "softnet.worst_cpu.dropped", HT_T_INT, "packets",
	  "softnet drops of softnet.worst_cpu since boot" },
	{ "softnet.worst_cpu.processed", HT_T_INT, "packets",
	  "packets softnet.worst_cpu processed since boot" },
	{ "softnet.worst_cpu.time_squeeze", HT_T_INT, "times",
	  "time_squeeze of softnet.worst_cpu since boot" },
	{ "storage.list", HT_T_STR, NULL,
	  "directories checked (storage.NAME.*): metadata, then data for one data_dir or data1, "
	  "data2, ... for [[data_dir]] entries, space-separated in that order" },
	{ "tuned.profile", HT_T_STR, NULL,
	  "tuned's active profile (/etc/tuned/active_profile; several, space-separated, are "
	  "merged in that order); unavailable ENOENT without one" },
};

/*
 * Facts of each network interface IF, named nic.IF.SUFFIX. Sorted by name;
 * the interface part may contain dots (eth0.100), so lookups match the suffix.
 */
#define NIC_STATS(name)                                                                    \
	"since the device was created, rtnetlink IFLA_STATS64 (under --root "            \
	"/sys/class/net/IF/statistics/" name ")"
static const struct ht_fact_def nic_fact_defs[] = {
	{ "nic.*.bus", HT_T_STR, NULL,
	  "bus of the device: pci, virtio, usb, platform, or none for a virtual interface (libudev)" },
	{ "nic.*.channels.combined", HT_T_INT, "queues",
	  "combined channels (queues) in use, ethtool netlink ETHTOOL_MSG_CHANNELS_GET" },
	{ "nic.*.channels.max.combined", HT_T_INT, "queues",
	  "most combined channels the driver allows, ETHTOOL_MSG_CHANNELS_GET" },
	{ "nic.*.channels.max.rx", HT_T_INT, "queues",
	  "most rx channels the driver allows, ETHTOOL_MSG_CHANNELS_GET" },
	{ "nic.*.channels.max.tx", HT_T_INT, "queues",
	  "most tx channels the driver allows, ETHTOOL_MSG_CHANNELS_GET" },
	{ "nic.*.channels.rx", HT_T_INT, "queues",
	  "rx-only channels in use, ETHTOOL_MSG_CHANNELS_GET" },
	{ "nic.*.channels.tx", HT_T_INT, "queues",
	  "tx-only channels in use, ETHTOOL_MSG_CHANNELS_GET" },
	{ "nic.*.driver", HT_T_STR, NULL, "kernel driver of the interface (libudev ID_NET_DRIVER)" },
	{ "nic.*.duplex", HT_T_STR, NULL,
	  "full or half, ethtool netlink ETHTOOL_MSG_LINKMODES_GET; absent when unknown" },
	{ "nic.*.kind", HT_T_STR, NULL,
	  "device kind: ethernet, veth, bridge, bond, vlan, tun, wireguard, ... (libudev DEVTYPE)" },
	{ "nic.*.mac", HT_T_STR, NULL,
	  "hardware address, /sys/class/net/IF/address; .link files match it (MACAddress=)" },
	{ "nic.*.mtu", HT_T_INT, "bytes",
	  "MTU of the interface, rtnetlink IFLA_MTU (under --root /sys/class/net/IF/mtu)" },
	{ "nic.*.overlay", HT_T_STR, NULL,
	  "vxlan or geneve for an overlay device, else none (rtnetlink IFLA_INFO_KIND; under "
	  "--root nic.IF.kind)" },
	{ "nic.*.overlay_headroom", HT_T_INT, "bytes",
	  "bytes the encapsulation adds to a frame of the overlay's MTU: outer IP 20 (IPv6 40) + "
	  "UDP 8 + VXLAN or Geneve header 8 + inner Ethernet 14 = 50 (70); Geneve options add more" },
	{ "nic.*.physical", HT_T_BOOL, NULL,
	  "backed by a device (physical NIC or virtio/PCI function), not a software interface" },
	{ "nic.*.speed", HT_T_INT, "Mb/s",
	  "link speed, ethtool netlink ETHTOOL_MSG_LINKMODES_GET; absent when the driver reports "
	  "unknown (virtio)" },
	{ "nic.*.stats.carrier_changes", HT_T_INT, "changes",
	  "times the link went up or down since the device was created, rtnetlink "
	  "IFLA_CARRIER_CHANGES (under --root /sys/class/net/IF/carrier_changes)" },
	{ "nic.*.stats.rx_crc_errors", HT_T_INT, "packets",
	  "frames received with a bad CRC (cabling, optics, a bad port), " NIC_STATS("rx_crc_errors") },
	{ "nic.*.stats.rx_dropped", HT_T_INT, "packets",
	  "frames received but not processed (no buffer; on many drivers also frames of a protocol the host does not handle), " NIC_STATS("rx_dropped") },
	{ "nic.*.stats.rx_errors", HT_T_INT, "packets",
	  "bad frames received, CRC and frame errors included, " NIC_STATS("rx_errors") },
	{ "nic.*.stats.rx_fifo_errors", HT_T_INT, "packets",
	  "receive FIFO overruns of the NIC, " NIC_STATS("rx_fifo_errors") },
	{ "nic.*.stats.rx_frame_errors", HT_T_INT, "packets",
	  "frames received with an alignment error, " NIC_STATS("rx_frame_errors") },
	{ "nic.*.stats.rx_missed_errors", HT_T_INT, "packets",
	  "frames the NIC had no room for in host memory (receive ring full), " NIC_STATS("rx_missed_errors") },
	{ "nic.*.stats.rx_packets", HT_T_INT, "packets",
	  "packets received, " NIC_STATS("rx_packets") },
	{ "nic.*.stats.tx_dropped", HT_T_INT, "packets",
	  "packets dropped on their way out (no buffer, a full queue), " NIC_STATS("tx_dropped") },
	{ "nic.*.stats.tx_errors", HT_T_INT, "packets",
	  "transmit errors (carrier, FIFO, aborted, window, heartbeat), " NIC_STATS("tx_errors") },
	{ "nic.*.stats.tx_packets", HT_T_INT, "packets",
	  "packets sent, " NIC_STATS("tx_packets") },
	{ "nic.*.underlay", HT_T_STR, NULL,
	  "the device an overlay sends through: IFLA_VXLAN_LINK, else IFLA_LINK; unavailable "
	  "(ENOENT) when the overlay names none (the route to each remote picks it)" },
	{ "nic.*.underlay_mtu", HT_T_INT, "bytes", "MTU of nic.IF.underlay, rtnetlink IFLA_MTU" },
	{ "nic.*.underlay_tnl_feature", HT_T_STR, NULL,
	  "the underlay feature the overlay's large packets need: tx-udp_tnl-segmentation, or "
	  "tx-udp_tnl-csum-segmentation when the overlay sends outer UDP checksums "
	  "(IFLA_VXLAN_UDP_CSUM, IFLA_GENEVE_UDP_CSUM; over IPv6 unless UDP_ZERO_CSUM6_TX)" },
	{ "nic.*.underlay_tnl_segmentation", HT_T_BOOL, NULL,
	  "nic.IF.underlay_tnl_feature is active on nic.IF.underlay: the NIC segments the "
	  "overlay's large UDP-tunnelled packets (ethtool netlink ETHTOOL_MSG_FEATURES_GET); "
	  "off, the CPU does (software GSO)" },
	{ "nic.*.underlay_tnl_segmentation_fixed", HT_T_BOOL, NULL,
	  "the underlay's driver does not let nic.IF.underlay_tnl_feature change (ethtool -k "
	  "prints [fixed]): not in ETHTOOL_A_FEATURES_HW, or in _NOCHANGE" },
};

const struct ht_fact_def *ht_fact_defs(size_t *n)
{
	if (n)
		*n = ARRAY_SIZE(fact_defs);
	return fact_defs;
}

static int fact_def_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct ht_fact_def *)elem)->name);
}

const struct ht_fact_def *ht_nic_fact_defs(size_t *n)
{
	if (n)
		*n = ARRAY_SIZE(nic_fact_defs);
	return nic_fact_defs;
}

int64_t ht_fact_max(const char *name)
{
	static const struct {
		const char *name;
		int64_t max;
	} bounds[] = {
		{ "boot.net.netfilter.nf_conntrack_max", INT32_MAX },
		{ "boot.net.netfilter.nf_conntrack_tcp_timeout_time_wait", INT32_MAX },
		/* Entries of the table: at most its count, an int. */
		{ "conntrack.nat.entries", INT32_MAX },
		{ "conntrack.nat.top_entries", INT32_MAX },
		{ "module.nf_conntrack.hashsize", UINT32_MAX },
		{ "net.netfilter.nf_conntrack_buckets", INT32_MAX },
		{ "net.netfilter.nf_conntrack_count", INT32_MAX },
		{ "net.netfilter.nf_conntrack_max", INT32_MAX },
		{ "net.netfilter.nf_conntrack_tcp_timeout_close_wait", INT32_MAX },
		{ "net.netfilter.nf_conntrack_tcp_timeout_established", INT32_MAX },
		{ "net.netfilter.nf_conntrack_tcp_timeout_fin_wait", INT32_MAX },
		{ "net.netfilter.nf_conntrack_tcp_timeout_syn_sent", INT32_MAX },
		{ "net.netfilter.nf_conntrack_tcp_timeout_time_wait", INT32_MAX },
		/* ip_local_port_range: a TCP/UDP port (proc_do_large_bitmap()'s cap, 65535). */
		{ "ports.range.high", 65535 },
		{ "ports.range.low", 65535 },
	};

	/* Every task takes a PID: at most PID_MAX_LIMIT (include/linux/threads.h). */
	static const char *const task_counts[] = { ".threads", ".user_tasks", ".user_top_threads" };
	/*
	 * A network namespace's counts: its conntrack table's and NAT's entries
	 * (an int, nf_conntrack_count), its sockets and its sysctls (ints).
	 */
	static const struct {
		const char *suffix;
		int64_t max;
	} netns_bounds[] = {
		{ ".conntrack_count", INT32_MAX }, { ".nat_entries", INT32_MAX },
		{ ".nat_top_entries", INT32_MAX }, { ".nat_top_sources", INT32_MAX },
		{ ".port_range_high", 65535 },    { ".port_range_low", 65535 },
		{ ".somaxconn", INT32_MAX },      { ".tcp_max_tw_buckets", INT32_MAX },
		{ ".time_wait", INT32_MAX },      { ".top_destination_sockets", INT32_MAX },
		{ ".top_listener_backlog", UINT32_MAX }, { ".top_listener_queue", UINT32_MAX },
	};
	size_t len = strlen(name);

	for (size_t i = 0; i < ARRAY_SIZE(bounds); i++)
		if (strcmp(name, bounds[i].name) == 0)
			return bounds[i].max;
	if (strncmp(name, "netns.", 6) == 0)
		for (size_t i = 0; i < ARRAY_SIZE(netns_bounds); i++) {
			size_t k = strlen(netns_bounds[i].suffix);

			if (len > k && strcmp(name + len - k, netns_bounds[i].suffix) == 0)
				return netns_bounds[i].max;
		}
	if (strncmp(name, "process.", 8) == 0)
		for (size_t i = 0; i < ARRAY_SIZE(task_counts); i++) {
			size_t k = strlen(task_counts[i]);

			if (len > k && strcmp(name + len - k, task_counts[i]) == 0)
				return 4194304;
		}
	return 0;
}

/*
 * Facts of each listening TCP port PORT, named listener.PORT.SUFFIX: all
 * sockets listening on the port (every address, IPv4 and IPv6) together.
 * Sorted by name.
 */
static const struct ht_fact_def listener_fact_defs[] = {
	{ "listener.*.addresses", HT_T_STR, NULL,
	  "local addresses listening on the port, space-separated (0.0.0.0 and :: for any)" },
	{ "listener.*.backlog", HT_T_INT, "entries",
	  "accept-queue limit of the port's worst listening socket (inet_diag idiag_wqueue, "
	  "min(listen() backlog, net.core.somaxconn)); worst: a full one (queue >= backlog) "
	  "first, then the highest queue / backlog, then the smallest backlog" },
	{ "listener.*.pid", HT_T_INT, NULL,
	  "process holding the socket (the socket's inode among /proc/PID/fd), the lowest PID" },
	{ "listener.*.process", HT_T_STR, NULL, "name (comm) of that process, /proc/PID/comm" },
	{ "listener.*.queue", HT_T_INT, "entries",
	  "connections waiting for accept() now on the same socket as .backlog (inet_diag "
	  "idiag_rqueue; the largest of the port's sockets from /proc/net/tcp)" },
};

/*
 * Facts of each checked process NAME (process.list), named
 * process.NAME.SUFFIX: NAME is its comm escaped (shared/escape.h,
 * ht_name_escape()), which reads back as the comm. When several processes share the name, every one
 * is read and the facts are the worst one's: the largest share of its soft
 * limit open. Sorted by name.
 */
static const struct ht_fact_def process_fact_defs[] = {
	{ "process.*.comm", HT_T_STR, NULL, "the process name as /proc/PID/comm has it" },
	{ "process.*.count", HT_T_INT, "processes",
	  "processes of that name (comm); the other process.NAME facts are the worst one's: the "
	  "largest share of its soft limit open, then the most descriptors, then the lowest PID" },
	{ "process.*.container", HT_T_STR, NULL,
	  "the container it runs in (process.NAME.runtime): its ID (12 hex digits), a pod's UID or "
	  "an LXC name; unavailable (ENOENT) outside a container or when its path names none" },
	{ "process.*.fds", HT_T_INT, "descriptors", "open file descriptors, entries of /proc/PID/fd" },
	{ "process.*.nofile", HT_T_INT, "descriptors",
	  "soft RLIMIT_NOFILE, 'Max open files' in /proc/PID/limits (unlimited: 2^63 - 1)" },
	{ "process.*.nofile_hard", HT_T_INT, "descriptors",
	  "hard RLIMIT_NOFILE, 'Max open files' in /proc/PID/limits" },
	{ "process.*.nproc", HT_T_INT, "tasks",
	  "soft RLIMIT_NPROC, 'Max processes' in /proc/PID/limits (unlimited: 2^63 - 1): the tasks "
	  "(processes and threads) its real UID may have before its fork() or pthread_create() "
	  "fails with EAGAIN" },
	{ "process.*.nproc_exempt", HT_T_BOOL, NULL,
	  "RLIMIT_NPROC does not bind it: its real UID is 0, or CapEff of /proc/PID/status holds "
	  "CAP_SYS_RESOURCE or CAP_SYS_ADMIN (copy_process() in kernel/fork.c)" },
	{ "process.*.nproc_hard", HT_T_INT, "tasks",
	  "hard RLIMIT_NPROC, 'Max processes' in /proc/PID/limits" },
	{ "process.*.pid", HT_T_INT, NULL,
	  "its PID: the worst of the processes of the name (process.NAME.count)" },
	{ "process.*.parent_comm", HT_T_STR, NULL, "its parent's comm (/proc/PPID/comm)" },
	{ "process.*.parent_nofile", HT_T_INT, "descriptors",
	  "its parent's soft RLIMIT_NOFILE (/proc/PPID/limits): a worker whose own differs, its "
	  "parent the same program, set it itself (nginx's worker_rlimit_nofile)" },
	{ "process.*.parent_nproc", HT_T_INT, "tasks",
	  "its parent's soft RLIMIT_NPROC (/proc/PPID/limits): a process whose own is lower, in "
	  "the same unit, lowered it itself or a library it loads did (setrlimit())" },
	{ "process.*.parent_pid", HT_T_INT, NULL,
	  "its parent's PID (PPid of /proc/PID/status); unavailable (ENOENT) for none" },
	{ "process.*.sock_peer", HT_T_STR, NULL,
	  "of its sockets in process.NAME.sock_state, the remote ADDR:PORT holding the most" },
	{ "process.*.sock_peer_count", HT_T_INT, "descriptors",
	  "its sockets in process.NAME.sock_state to process.NAME.sock_peer" },
	{ "process.*.sock_state", HT_T_STR, NULL,
	  "the TCP state holding the most of its sockets (/proc/PID/net/tcp and tcp6, its own "
	  "network namespace, matched by inode), as conntrack(8) names it: SYN_SENT (connecting, "
	  "no answer yet), CLOSE_WAIT (closed by the peer, not by the program), ESTABLISHED, ..." },
	{ "process.*.sock_state_count", HT_T_INT, "descriptors",
	  "its sockets in process.NAME.sock_state" },
	{ "process.*.sock_tcp", HT_T_INT, "descriptors",
	  "its TCP sockets (those of process.NAME.sockets in /proc/PID/net/tcp and tcp6)" },
	{ "process.*.sockets", HT_T_INT, "descriptors",
	  "its descriptors that are sockets (links socket:[INODE] of /proc/PID/fd), read only when "
	  "a rule asks (its descriptors near the limit)" },
	{ "process.*.threads", HT_T_INT, "tasks", "its threads, Threads: of /proc/PID/status" },
	{ "process.*.uid", HT_T_INT, NULL, "its real UID, the first of Uid: in /proc/PID/status" },
	{ "process.*.unread", HT_T_INT, "processes",
	  "processes of that name whose /proc/PID/fd could not be read; unavailable (EACCES) when "
	  "some could not, naming the lowest PID: the worst of the name is then unknown" },
	{ "process.*.runtime", HT_T_STR, NULL,
	  "the container runtime whose container it runs in, from its cgroup's path in "
	  "/proc/PID/cgroup: docker, podman, kubernetes or lxc; unavailable (ENOENT) outside a "
	  "container" },
	{ "process.*.user", HT_T_STR, NULL,
	  "the name of its real UID in /etc/passwd; ENOENT when it has none" },
	{ "process.*.user_tasks", HT_T_INT, "tasks",
	  "the tasks of its real UID: Threads: of every process of the UID, summed, what "
	  "RLIMIT_NPROC counts" },
	{ "process.*.user_top", HT_T_STR, NULL,
	  "of the processes of its real UID by name (Name: of /proc/PID/status), the name whose "
	  "processes hold the most tasks" },
	{ "process.*.user_top_pid", HT_T_INT, NULL,
	  "the lowest PID of those processes (process.NAME.user_top)" },
	{ "process.*.user_top_processes", HT_T_INT, "processes",
	  "how many processes of its UID have that name" },
	{ "process.*.user_top_threads", HT_T_INT, "tasks",
	  "their threads, summed (process.NAME.user_top)" },
	{ "process.*.unit", HT_T_STR, NULL,
	  "systemd service that runs it, the last *.service of its cgroup in /proc/PID/cgroup; "
	  "unavailable (ENOENT) when it runs outside a service or under a user manager "
	  "(user@UID.service: no system unit to write a drop-in for), EINVAL when the name is "
	  "no valid service name" },
};

/*
 * Facts of each directory Garage stores in (storage.list), named
 * storage.NAME.SUFFIX: metadata, data (one data_dir) or dataN ([[data_dir]]
 * entries, from 1). Sorted by name.
 */
static const struct ht_fact_def storage_fact_defs[] = {
	{ "storage.*.capacity", HT_T_INT, "bytes",
	  "capacity of a [[data_dir]] entry (capacity, as Garage parses sizes)" },
	{ "storage.*.device", HT_T_STR, NULL,
	  "block device of the filesystem (kernel name from /sys/dev/block/MAJ:MIN of "
	  "statfs's st_dev: vda1, dm-0, md0); unavailable (ENODEV) for a filesystem without "
	  "one (tmpfs, overlay, NFS, ZFS datasets)" },
	{ "storage.*.devices", HT_T_STR, NULL,
	  "the disks below storage.NAME.device, following /sys/block/DEV/slaves through "
	  "device-mapper and md layers (partitions as their disk), space-separated, sorted" },
	{ "storage.*.exists", HT_T_BOOL, NULL,
	  "the directory exists; when not (before deployment) the filesystem facts are of its "
	  "nearest existing parent, storage.NAME.probed" },
	{ "storage.*.free", HT_T_INT, "bytes",
	  "space available to an unprivileged writer, statfs f_bavail x f_frsize" },
	{ "storage.*.fs", HT_T_STR, NULL,
	  "filesystem type: the mount's type from /proc/self/mountinfo (ext4, xfs, btrfs, zfs, "
	  "tmpfs, overlay, ...), else the name of statfs f_type" },
	{ "storage.*.fsync_rate", HT_T_INT, "fsyncs/s",
	  "measured: 4 KiB pwrite + fdatasync of a temporary file in the directory (or "
	  "storage.NAME.probed) repeated for about 300 ms, the file removed; metadata only; "
	  "unavailable with --no-measure (ECANCELED) and under --root (EOPNOTSUPP)" },
	{ "storage.*.inodes", HT_T_INT, "inodes",
	  "inodes of the filesystem, statfs f_files (0: allocated on demand, btrfs)" },
	{ "storage.*.inodes_free", HT_T_INT, "inodes", "free inodes, statfs f_ffree" },
	{ "storage.*.path", HT_T_STR, NULL, "the directory, as garage.toml (or the variable) names it" },
	{ "storage.*.probed", HT_T_STR, NULL,
	  "the directory statfs and the fsync measurement used: storage.NAME.path, or its nearest "
	  "existing parent" },
	{ "storage.*.read_only", HT_T_BOOL, NULL,
	  "a [[data_dir]] entry Garage only reads from (read_only = true)" },
	{ "storage.*.read_only_mount", HT_T_BOOL, NULL,
	  "the filesystem of storage.NAME.probed is mounted read-only: statfs f_flags & "
	  "ST_RDONLY; unavailable under --root (EOPNOTSUPP) and when the probe fails (its errno)" },
	{ "storage.*.role", HT_T_STR, NULL, "metadata or data" },
	{ "storage.*.rotational", HT_T_BOOL, NULL,
	  "a spinning disk: queue/rotational of any disk of storage.NAME.devices, else of "
	  "storage.NAME.device itself; a paravirtual disk (virtio_blk, Xen vbd) or a loop "
	  "device (file-backed) has no flag to trust: unavailable (ENODATA) unless another disk "
	  "spins" },
	{ "storage.*.size", HT_T_INT, "bytes", "size of the filesystem, statfs f_blocks x f_frsize" },
};

/*
 * Facts of each peer PEER (a remote address of established TCP connections),
 * named peer.PEER.SUFFIX: tcp_info (include/uapi/linux/tcp.h) of each of its
 * connections, from one NETLINK_SOCK_DIAG dump with INET_DIAG_INFO.
 */
#define PEER_DOC(x) x " (tcp_info of NETLINK_SOCK_DIAG INET_DIAG_INFO)"
static const struct ht_fact_def peer_fact_defs[] = {
	{ "peer.*.address", HT_T_STR, NULL, "the remote address as written (IPv4 dotted, IPv6 with ':')" },
	{ "peer.*.connections", HT_T_INT, "connections",
	  PEER_DOC("established TCP connections to the peer now") },
	{ "peer.*.delivery_rate", HT_T_INT, "MB/s",
	  PEER_DOC("largest tcpi_delivery_rate among the peer's connections (decimal)") },
	{ "peer.*.min_rtt", HT_T_INT, "ms",
	  PEER_DOC("smallest tcpi_min_rtt among the peer's connections: the path's RTT at best "
	           "(decimal)") },
	{ "peer.*.retrans", HT_T_INT, "segments",
	  PEER_DOC("tcpi_total_retrans summed over the peer's connections: segments retransmitted "
	           "since each connection opened; .delta: over --sample's interval, from the "
	           "connections seen in both readings plus those opened between them") },
	{ "peer.*.rtt", HT_T_INT, "ms",
	  PEER_DOC("tcpi_rtt, the smoothed RTT, averaged over the peer's connections weighted by "
	           "their segments sent (decimal)") },
	{ "peer.*.segs_out", HT_T_INT, "segments",
	  PEER_DOC("tcpi_segs_out summed over the peer's connections: segments sent, "
	           "retransmissions included; .delta as peer.PEER.retrans.delta") },
};

/*
 * Facts of each control group with a memory or pids limit set, or whose
 * limit bit (an OOM kill, a refused fork), named cgroup.CG.SUFFIX: CG is its
 * path below the hierarchy's root as the kernel names it
 * ("system.slice/garage.service"), escaped into a fact name
 * (shared/escape.h, ht_name_escape(): "system.slice_2fgarage.service").
 * From cgroup v2's unified hierarchy, else v1's memory and pids
 * hierarchies. Sorted by name.
 */
#define CG_DOC(v2, v1) v2 " (cgroup v2; v1: " v1 ")"
#define NS_SYSCTL(key) \
	"its " key ", read inside it (setns(2), live and as root only: /proc/sys shows the " \
	"reader's own namespace)"
#define NS_NSTAT(counter) \
	"its nstat " counter " since the namespace was made (/proc/PID/net/netstat)"

static const struct ht_fact_def netns_fact_defs[] = {
	{ "netns.*.cgroup", HT_T_STR, NULL,
	  "the control group of netns.N.pid (/proc/PID/cgroup: the unified hierarchy's path, else "
	  "the first v1 line's)" },
	{ "netns.*.conntrack_count", HT_T_INT, "entries",
	  "entries in its own conntrack table (\"entries\" of /proc/PID/net/stat/nf_conntrack), "
	  "judged against the one global net.netfilter.nf_conntrack_max; unavailable without "
	  "conntrack" },
	{ "netns.*.conntrack_drops", HT_T_INT, "packets",
	  "its conntrack drop counter, summed over CPUs: packets dropped with its table full" },
	{ "netns.*.conntrack_early_drop", HT_T_INT, "entries",
	  "its conntrack early_drop counter, summed: entries evicted to make room" },
	{ "netns.*.conntrack_insert_failed", HT_T_INT, "packets",
	  "its conntrack insert_failed counter, summed: entries that lost a race to be inserted" },
	{ "netns.*.container_id", HT_T_STR, NULL,
	  "the container of that cgroup, as cgroup.CG.container names it; unavailable (ENOENT) "
	  "for none" },
	{ "netns.*.kube_proxy_min", HT_T_INT, "entries",
	  "conntrack.min of that kube-proxy: the least it sets nf_conntrack_max to (its "
	  "--conntrack-min, its --config file's conntrack.min, else 131072)" },
	{ "netns.*.kube_proxy_per_core", HT_T_INT, "entries",
	  "conntrack.maxPerCore of that kube-proxy: it sets nf_conntrack_max to this times the "
	  "machine's CPUs as it starts, 0 for leave it (its --conntrack-max-per-core, k3s's "
	  "--kube-proxy-arg, its --config file's conntrack.maxPerCore read below its own root, else "
	  "32768)" },
	{ "netns.*.kube_proxy_pid", HT_T_INT, NULL,
	  "the lowest PID of the namespace named kube-proxy, k3s-server, k3s-agent or k3s (which "
	  "runs kube-proxy inside it); unavailable (ENOENT) for none" },
	{ "netns.*.listen_drops", HT_T_INT, "packets", NS_NSTAT("TcpExtListenDrops") },
	{ "netns.*.listen_overflows", HT_T_INT, "packets", NS_NSTAT("TcpExtListenOverflows") },
	{ "netns.*.listeners", HT_T_INT, "listeners", "its listening TCP ports" },
	{ "netns.*.manager", HT_T_STR, NULL,
	  "who made that cgroup, as cgroup.CG.manager says: docker, podman, kubernetes, lxc, "
	  "systemd or other; the runtime that sets the namespace's sysctls" },
	{ "netns.*.nat_entries", HT_T_INT, "entries",
	  "entries of its conntrack table with source NAT (SNAT, MASQUERADE in its own rules), "
	  "from a ctnetlink dump made in it (live and as root) or /proc/PID/net/nf_conntrack; "
	  "dumped only when its table holds 48384 entries (75% of the 64512 ports of one NAT "
	  "address) or an insertion failed, else unavailable (ENODATA) with the count" },
	{ "netns.*.nat_top_destination", HT_T_STR, NULL,
	  "of its (NAT address, destination) tuples, the one with the most entries: its "
	  "destination as ADDR:PORT/PROTO; unavailable (ENOENT) when none has source NAT" },
	{ "netns.*.nat_top_entries", HT_T_INT, "entries",
	  "the mappings of that tuple: each holds one source port of the NAT address" },
	{ "netns.*.nat_top_source", HT_T_STR, NULL,
	  "the NAT address of that tuple (the reply's destination)" },
	{ "netns.*.nat_top_sources", HT_T_INT, "addresses",
	  "NAT addresses that map to netns.N.nat_top_destination" },
	{ "netns.*.pid", HT_T_INT, NULL, "the lowest PID in the namespace" },
	{ "netns.*.port_range_high", HT_T_INT, "ports",
	  NS_SYSCTL("last port of net.ipv4.ip_local_port_range") },
	{ "netns.*.port_range_low", HT_T_INT, "ports",
	  NS_SYSCTL("first port of net.ipv4.ip_local_port_range") },
	{ "netns.*.process", HT_T_STR, NULL, "the name (comm) of netns.N.pid" },
	{ "netns.*.processes", HT_T_INT, "processes", "processes in the namespace" },
	{ "netns.*.somaxconn", HT_T_INT, "entries", NS_SYSCTL("net.core.somaxconn") },
	{ "netns.*.tcp_max_tw_buckets", HT_T_INT, "sockets",
	  NS_SYSCTL("net.ipv4.tcp_max_tw_buckets") },
	{ "netns.*.tcp_tw_reuse", HT_T_INT, NULL, NS_SYSCTL("net.ipv4.tcp_tw_reuse") },
	{ "netns.*.time_wait", HT_T_INT, "sockets",
	  "its TCP sockets in TIME_WAIT now (tw of /proc/PID/net/sockstat's TCP line)" },
	{ "netns.*.top_destination", HT_T_STR, NULL,
	  "the destination (ADDR:PORT, [ADDR]:PORT for IPv6) with the most client sockets from one "
	  "source address whose local port is in the namespace's port range; unavailable (ENOENT) "
	  "for none, (ENODATA) when the range is unknown" },
	{ "netns.*.top_destination_sockets", HT_T_INT, "sockets",
	  "client sockets to netns.N.top_destination, any state (each holds a port of the range)" },
	{ "netns.*.top_destination_time_wait", HT_T_INT, "sockets",
	  "those of netns.N.top_destination_sockets in TIME_WAIT" },
	{ "netns.*.top_listener_backlog", HT_T_INT, "entries",
	  "the backlog of netns.N.top_listener_port (sock_diag's idiag_wqueue, ss -lnt's "
	  "Send-Q); unavailable (ENODATA) from /proc/PID/net/tcp" },
	{ "netns.*.top_listener_pid", HT_T_INT, NULL,
	  "the process of the namespace that holds netns.N.top_listener_port's socket "
	  "(socket:[INODE] among its /proc/PID/fd), the lowest PID, looked up when its queue is at "
	  "least half its backlog; unavailable (ENOENT) for none, (ENODATA) when not looked up" },
	{ "netns.*.top_listener_port", HT_T_INT, NULL,
	  "its listening port whose accept queue is fullest: a full one first, then the fuller "
	  "against its backlog; unavailable (ENOENT) for none" },
	{ "netns.*.top_listener_process", HT_T_STR, NULL, "the name (comm) of netns.N.top_listener_pid" },
	{ "netns.*.top_listener_queue", HT_T_INT, "connections",
	  "connections waiting for accept() on that port now (idiag_rqueue, ss -lnt's Recv-Q)" },
	{ "netns.*.tw_overflows", HT_T_INT, "sockets", NS_NSTAT("TcpExtTCPTimeWaitOverflow") },
};

static const struct ht_fact_def cgroup_fact_defs[] = {
	{ "cgroup.*.container", HT_T_STR, NULL,
	  "the container it is: a Docker, Podman or CRI container ID (12 hex digits), a Kubernetes "
	  "pod's UID, an LXC container's name; unavailable (ENOENT) for none" },
	{ "cgroup.*.manager", HT_T_STR, NULL,
	  "who set its limits, from its path: docker, podman, kubernetes, lxc, systemd (a unit, "
	  "scope or slice of its own), or other" },
	{ "cgroup.*.memory_current", HT_T_INT, "bytes",
	  CG_DOC("memory.current: the memory charged to it now, page cache included",
	         "memory.usage_in_bytes") },
	{ "cgroup.*.memory_max", HT_T_INT, "bytes",
	  CG_DOC("memory.max: the most memory it may be charged before its own OOM kill; "
	         "unavailable (ENODATA) for max, no limit", "memory.limit_in_bytes") },
	{ "cgroup.*.memory_max_events", HT_T_INT, "events",
	  CG_DOC("memory.events max: times its usage reached memory.max and the kernel reclaimed",
	         "memory.failcnt") },
	{ "cgroup.*.memory_oom_kills", HT_T_INT, "kills",
	  CG_DOC("oom_kill of memory.events.local: processes the OOM killer ended at this "
	         "group's own limit since it was made (before 5.2: memory.events less its "
	         "children's)", "oom_kill of memory.oom_control") },
	{ "cgroup.*.pids_current", HT_T_INT, "tasks", "pids.current: its processes and threads now" },
	{ "cgroup.*.pids_events", HT_T_INT, "events",
	  "pids.events max: forks and clones refused at pids.max (the kernel logs \"cgroup: fork "
	  "rejected by pids controller\")" },
	{ "cgroup.*.pids_max", HT_T_INT, "tasks",
	  "pids.max: the most processes and threads it may hold; unavailable (ENODATA) for max" },
	{ "cgroup.*.procs", HT_T_INT, "processes", "processes in its cgroup.procs" },
	{ "cgroup.*.threads_process", HT_T_STR, NULL,
	  "the process of its cgroup.procs with the most threads (Threads of /proc/PID/status), "
	  "by its comm: the largest holder of pids.current" },
	{ "cgroup.*.threads_top", HT_T_INT, "tasks", "Threads of cgroup.CG.threads_process" },
	{ "cgroup.*.top_pid", HT_T_INT, NULL, "PID of cgroup.CG.top_process" },
	{ "cgroup.*.top_process", HT_T_STR, NULL,
	  "the process of its cgroup.procs with the largest resident set (VmRSS of "
	  "/proc/PID/status), by its comm" },
	{ "cgroup.*.top_rss", HT_T_INT, "bytes", "VmRSS of cgroup.CG.top_process" },
	{ "cgroup.*.unit", HT_T_STR, NULL,
	  "the systemd unit it is or is in, the last *.service or *.scope of its path; unavailable "
	  "(ENOENT) for none" },
};

/*
 * Counters that have an interval form C.delta (--sample): the nstat(8)
 * counters, the per-peer tcp_info sums, the interface and softnet counters
 * and conntrack's. fnmatch(3) patterns.
 */
static const char *const interval_counters[] = {
	"nstat.*",
	"peer.*.retrans",
	"peer.*.segs_out",
	"nic.*.stats.*",
	"softnet.processed",
	"softnet.dropped",
	"softnet.time_squeeze",
	"softnet.worst_cpu.processed",
	"softnet.worst_cpu.dropped",
	"softnet.worst_cpu.time_squeeze",
	"conntrack.stat.drop",
	"conntrack.stat.early_drop",
	"conntrack.stat.insert_failed",
	"conntrack.stat.search_restart",
};

bool ht_fact_has_delta(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(interval_counters); i++)
		if (fnmatch(interval_counters[i], name, 0) == 0 && !strstr(name, ".delta"))
			return true;
	return false;
}

/*
 * Facts of each path from a reverse proxy to the store (proxy.list), named
 * proxy.NAME.SUFFIX: NAME is the proxy and an ordinal (nginx-1). Each
 * setting is its effective value after inheritance (nginx: http, server,
 * location, nested locations), its source the FILE:LINE that sets it or the
 * proxy's documented default. Sorted by name.
 */
static const struct ht_fact_def proxy_fact_defs[] = {
	{ "proxy.*.client_body_timeout", HT_T_INT, "seconds",
	  "nginx's client_body_timeout: the longest pause between two reads of a request body "
	  "(default 60 s)" },
	{ "proxy.*.client_max_body_size", HT_T_INT, "bytes",
	  "the largest request body the proxy passes (nginx's client_max_body_size, default 1m; "
	  "0: no limit); a larger one gets 413 from the proxy itself" },
	{ "proxy.*.connection", HT_T_STR, NULL,
	  "the Connection header sent to the store (proxy_set_header Connection; nginx's default "
	  "close); \"\" lets the connection be kept" },
	{ "proxy.*.host", HT_T_STR, NULL,
	  "the Host header sent to the store as written (proxy_set_header Host of the innermost "
	  "level that has any proxy_set_header; nginx's default $proxy_host)" },
	{ "proxy.*.host_kind", HT_T_STR, NULL,
	  "what proxy.NAME.host keeps of the client's Host: client ($http_host: name and port), "
	  "name ($host: the port dropped), name_port ($host:$server_port), upstream ($proxy_host: "
	  "the store's own address), literal (a name written out)" },
	{ "proxy.*.keepalive", HT_T_INT, "connections",
	  "idle connections to the store each worker keeps (keepalive of the upstream block); 0 for "
	  "none, and when proxy_pass names an address" },
	{ "proxy.*.kind", HT_T_STR, NULL, "the proxy: nginx" },
	{ "proxy.*.listen", HT_T_INT, NULL,
	  "the client-facing port: the server's first listen, or a later one on a port other than "
	  "its scheme's (80, 443 with ssl); 80 without listen" },
	{ "proxy.*.listen_http2", HT_T_BOOL, NULL,
	  "HTTP/2 toward clients: listen ... http2, or http2 on in the server" },
	{ "proxy.*.location", HT_T_STR, NULL,
	  "FILE:LINE of the proxy_pass that sends the requests to the store" },
	{ "proxy.*.pass", HT_T_STR, NULL, "the proxy_pass URL as written" },
	{ "proxy.*.proxy_buffering", HT_T_BOOL, NULL,
	  "responses buffered, and spooled to a temporary file past the buffers (nginx's "
	  "proxy_buffering, default on)" },
	{ "proxy.*.proxy_http_version", HT_T_STR, NULL,
	  "the HTTP version toward the store (nginx's default 1.0: no kept connection)" },
	{ "proxy.*.proxy_max_temp_file_size", HT_T_INT, "bytes",
	  "the most of one response spooled to disk (nginx's default 1024m; 0: none)" },
	{ "proxy.*.proxy_read_timeout", HT_T_INT, "seconds",
	  "the longest pause between two reads from the store (default 60 s)" },
	{ "proxy.*.proxy_request_buffering", HT_T_BOOL, NULL,
	  "the whole request body read, to disk past client_body_buffer_size, before the store "
	  "gets a byte of it (nginx's default on)" },
	{ "proxy.*.proxy_send_timeout", HT_T_INT, "seconds",
	  "the longest pause between two writes to the store (default 60 s)" },
	{ "proxy.*.server_name", HT_T_STR, NULL, "the server block's first server_name; \"\" for none" },
	{ "proxy.*.ssl", HT_T_BOOL, NULL, "proxy.NAME.listen is a TLS port (listen ... ssl)" },
	{ "proxy.*.store_port", HT_T_INT, NULL, "the store's port the path reaches" },
	{ "proxy.*.store_role", HT_T_STR, NULL,
	  "what that port serves: s3 (Garage's S3 API, MinIO), web (Garage's web endpoint), "
	  "registry" },
	{ "proxy.*.upstream", HT_T_STR, NULL,
	  "the address reached: proxy_pass's, or the upstream block's server on the store's port" },
};

/* The configuration's waivers, recorded by hosttune facts: hosttune.waiver.N.text, N from 1. */
static const struct ht_fact_def waiver_fact_defs[] = {
	{ "hosttune.waiver.*.text", HT_T_STR, NULL,
	  "a waiver as its [waive] line holds it, RULE[INSTANCE] = REASON; its source is the "
	  "configuration's FILE:LINE:COL" },
};

/* Per-instance fact families: FAMILY.INSTANCE.SUFFIX. */
static const struct {
	const char *family;
	const struct ht_fact_def *defs;
	size_t n;
} instance_families[] = {
	{ "cgroup", cgroup_fact_defs, ARRAY_SIZE(cgroup_fact_defs) },
	{ "hosttune.waiver", waiver_fact_defs, ARRAY_SIZE(waiver_fact_defs) },
	{ "listener", listener_fact_defs, ARRAY_SIZE(listener_fact_defs) },
	{ "netns", netns_fact_defs, ARRAY_SIZE(netns_fact_defs) },
	{ "nic", nic_fact_defs, ARRAY_SIZE(nic_fact_defs) },
	{ "peer", peer_fact_defs, ARRAY_SIZE(peer_fact_defs) },
	{ "process", process_fact_defs, ARRAY_SIZE(process_fact_defs) },
	{ "proxy", proxy_fact_defs, ARRAY_SIZE(proxy_fact_defs) },
	{ "storage", storage_fact_defs, ARRAY_SIZE(storage_fact_defs) },
};

const struct ht_fact_def *ht_instance_fact_defs(const char *family, size_t *n)
{
	for (size_t i = 0; family && i < ARRAY_SIZE(instance_families); i++)
		if (strcmp(instance_families[i].family, family) == 0) {
			if (n)
				*n = instance_families[i].n;
			return instance_families[i].defs;
		}
	if (n)
		*n = 0;
	return NULL;
}

/*
 * Any other sysctl: a number, read from /proc/sys when a rule first reads it
 * (the key's own type is unknown here; one that does not hold an integer is
 * unavailable with EINVAL).
 */
static const struct ht_fact_def sysctl_def = {
	"SYSCTL", HT_T_INT, NULL,
	"a sysctl key (as sysctl(8) prints it) hosttune has no entry for: an integer from "
	"/proc/sys/KEY, read when a rule first asks for it"
};

bool ht_sysctl_key_valid(const char *name)
{
	/* The top directories of /proc/sys (kernel/sysctl.c and the subsystems' register calls). */
	static const char *const tops[] = { "abi",    "crypto", "debug", "dev", "fs",
		                            "kernel", "net",    "sunrpc", "user", "vm" };
	size_t len, top = strcspn(name, ".");
	bool known = false;

	for (size_t i = 0; i < ARRAY_SIZE(tops); i++)
		known = known || (strlen(tops[i]) == top && strncmp(name, tops[i], top) == 0);
	len = strlen(name);
	if (!known || name[top] != '.' || len >= 256 || name[len - 1] == '.')
		return false;
	for (const char *p = name + top + 1; *p; p++) {
		bool word = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		            (*p >= '0' && *p <= '9') || *p == '_' || *p == '-';

		if (!word && !(*p == '.' && p[-1] != '.'))
			return false;
	}
	return true;
}

/* What the boot configuration gives a sysctl or a module parameter hosttune has no entry for. */
static const struct ht_fact_def boot_def = {
	"boot.KEY", HT_T_INT, NULL,
	"what the boot configuration gives KEY (a sysctl: the effective sysctl.d or "
	"/etc/sysctl.conf line; module.MODULE.PARAM: modprobe.d's options), source FILE:LINE; "
	"unavailable ENOENT when nothing sets it, ENODATA for a '-KEY' line that leaves the "
	"kernel's value, EINVAL for a value that is not an integer"
};

/* What the active tuned profile's [sysctl] section gives a sysctl. */
static const struct ht_fact_def tuned_def = {
	"tuned.sysctl.KEY", HT_T_INT, NULL,
	"what the active tuned profile's [sysctl] section (its tuned.conf in /etc/tuned/PROFILE, "
	"else /usr/lib/tuned/PROFILE, with its include= parents first) gives the sysctl KEY, "
	"source FILE:LINE (tuned profile NAME); unavailable ENOENT when it does not set it, "
	"EINVAL for a value that is not an integer"
};

/* boot.KEY for a sysctl KEY or a module parameter module.MODULE.PARAM. */
static bool boot_name_valid(const char *name)
{
	const char *key = name + 5, *dot;

	if (strncmp(name, "boot.", 5) != 0)
		return false;
	if (strncmp(key, "module.", 7) != 0)
		return ht_sysctl_key_valid(key);
	dot = strchr(key + 7, '.');
	return dot && dot > key + 7 && dot[1] && !strchr(dot + 1, '.');
}

const struct ht_fact_def *ht_fact_def_find(const char *name)
{
	const struct ht_fact_def *d;

	if (!name)
		return NULL;
	/* C.delta of a counter with an interval form: C's definition (type, unit). */
	{
		size_t len = strlen(name);

		if (len > 6 && strcmp(name + len - 6, ".delta") == 0 && len - 6 < 256) {
			char base[256];

			memcpy(base, name, len - 6);
			base[len - 6] = '\0';
			return ht_fact_has_delta(base) ? ht_fact_def_find(base) : NULL;
		}
	}
	for (size_t fam = 0, len = strlen(name); fam < ARRAY_SIZE(instance_families); fam++) {
		const char *family = instance_families[fam].family;
		size_t fl;
		bool pattern;

		if (name[0] != family[0])
			continue;
		fl = strlen(family);
		if (strncmp(name, family, fl) != 0 || name[fl] != '.')
			continue;
		/* The checker's FAMILY.*.SUFFIX: no suffix is another's dotted tail, so compare it whole. */
		pattern = name[fl + 1] == '*' && name[fl + 2] == '.';
		for (size_t i = 0; i < instance_families[fam].n; i++) {
			const char *suffix = instance_families[fam].defs[i].name + fl + 3; /* "FAMILY.*." */
			size_t sl;

			if (pattern) {
				if (suffix[0] == name[fl + 3] && strcmp(suffix, name + fl + 3) == 0)
					return &instance_families[fam].defs[i];
				continue;
			}
			sl = strlen(suffix);

			/* "FAMILY." + at least one character of instance + ".SUFFIX" */
			if (len > fl + 1 + sl && name[len - sl - 1] == '.' &&
			    strcmp(name + len - sl, suffix) == 0)
				return &instance_families[fam].defs[i];
		}
	}
	d = bsearch(name, fact_defs, ARRAY_SIZE(fact_defs), sizeof(fact_defs[0]), fact_def_cmp);
	if (!d && ht_sysctl_key_valid(name))
		d = &sysctl_def;
	if (!d && boot_name_valid(name))
		d = &boot_def;
	if (!d && strncmp(name, "tuned.sysctl.", 13) == 0 && ht_sysctl_key_valid(name + 13))
		d = &tuned_def;
	return d;
}

bool ht_fact_def_is_sysctl(const struct ht_fact_def *d)
{
	return d == &sysctl_def;
}


/*
 * The table: facts in one array, found by name through a hash index and put
 * in name order when someone walks them (ht_facts_at()): 10,000 listening
 * ports make 50,000 facts, and inserting each in order moved the rest.
 */
struct ht_facts {
	struct ht_fact *v;
	size_t n, cap;
	uint32_t *idx;    /* open addressing: 1 + index in v, 0 empty; cap_idx >= 2 x cap */
	size_t cap_idx;
	bool sorted;      /* v is in name order */
	ht_fact_provider_cb provider;
	void *provider_data;
	void (*provider_destroy)(void *userdata);
	/*
	 * The units and sources of the facts, each text once (10,000 listening
	 * ports share two sources): an open-addressing set, capacity a power of
	 * two, at most half full. The facts point into it; it owns the texts.
	 */
	char **pool;
	size_t npool, cap_pool;
};

/* FNV-1a of a string. */
static size_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

static char **pool_slot(char **slots, size_t cap, const char *s)
{
	for (size_t i = str_hash(s) & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!slots[i] || strcmp(slots[i], s) == 0)
			return &slots[i];
}

/* The pooled copy of @s (NULL stays NULL); NULL with errno ENOMEM when it cannot be made. */
static const char *facts_intern(struct ht_facts *f, const char *s)
{
	char **slot;

	if (!s)
		return NULL;
	if ((f->npool + 1) * 2 > f->cap_pool) {
		size_t cap = f->cap_pool ? f->cap_pool * 2 : 64;
		char **n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t i = 0; i < f->cap_pool; i++)
			if (f->pool[i])
				*pool_slot(n, cap, f->pool[i]) = f->pool[i];
		free(f->pool);
		f->pool = n;
		f->cap_pool = cap;
	}
	slot = pool_slot(f->pool, f->cap_pool, s);
	if (!*slot) {
		*slot = strdup(s);
		if (!*slot)
			return NULL;
		f->npool++;
	}
	return *slot;
}

void ht_facts_set_provider(struct ht_facts *f, ht_fact_provider_cb cb, void *userdata,
                           void (*destroy)(void *userdata))
{
	if (f->provider_destroy)
		f->provider_destroy(f->provider_data);
	f->provider = cb;
	f->provider_data = userdata;
	f->provider_destroy = destroy;
}

int ht_facts_need(struct ht_facts *f, const char *name, unsigned flags, const struct ht_fact **out,
                  struct ht_error *err)
{
	int r;

	*out = ht_facts_get(f, name);
	if (*out || !f->provider)
		return 0;
	r = f->provider(f, name, flags, err, f->provider_data);
	if (r < 0)
		return r;
	*out = ht_facts_get(f, name);
	return 0;
}

struct ht_facts *ht_facts_new(void)
{
	return calloc(1, sizeof(struct ht_facts));
}

/* Frees what @fact owns: its name and value (its unit and source are its table's). */
static void fact_clear(struct ht_fact *fact)
{
	free(fact->name);
	ht_value_clear(&fact->value);
	*fact = (struct ht_fact){ 0 };
}

void ht_facts_free(struct ht_facts *f)
{
	if (!f)
		return;
	ht_facts_set_provider(f, NULL, NULL, NULL);
	for (size_t i = 0; i < f->n; i++)
		fact_clear(&f->v[i]);
	free(f->v);
	free(f->idx);
	for (size_t i = 0; i < f->cap_pool; i++)
		free(f->pool[i]);
	free(f->pool);
	free(f);
}


/* The index slot of @name: its fact's, or the empty one where it would go. */
static uint32_t *idx_slot(const struct ht_facts *f, const char *name)
{
	for (size_t i = str_hash(name) & (f->cap_idx - 1);; i = (i + 1) & (f->cap_idx - 1))
		if (!f->idx[i] || strcmp(f->v[f->idx[i] - 1].name, name) == 0)
			return &f->idx[i];
}

/* The index made again for the array as it is now. 0 or -ENOMEM. */
static int idx_rebuild(struct ht_facts *f, size_t cap_idx)
{
	uint32_t *n = calloc(cap_idx, sizeof(*n));

	if (!n)
		return -ENOMEM;
	free(f->idx);
	f->idx = n;
	f->cap_idx = cap_idx;
	for (size_t i = 0; i < f->n; i++)
		*idx_slot(f, f->v[i].name) = (uint32_t)i + 1;
	return 0;
}

/* The fact named @name, or NULL. */
static struct ht_fact *facts_find(const struct ht_facts *f, const char *name)
{
	uint32_t *slot;

	if (!f->cap_idx)
		return NULL;
	slot = idx_slot(f, name);
	return *slot ? &f->v[*slot - 1] : NULL;
}

/* Room for @extra more facts, in the array and in its index. 0 or -ENOMEM. */
static int facts_reserve(struct ht_facts *f, size_t extra)
{
	struct ht_fact *nv;
	size_t cap;

	if (extra > UINT32_MAX / 4 - f->n)
		return -ENOMEM;
	if (f->cap - f->n < extra) {
		cap = f->cap ? f->cap : 16;
		while (cap < f->n + extra)
			cap *= 2;
		nv = realloc(f->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		f->v = nv;
		f->cap = cap;
	}
	return f->cap_idx >= 2 * f->cap ? 0 : idx_rebuild(f, 2 * f->cap);
}

static int fact_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ht_fact *)a)->name, ((const struct ht_fact *)b)->name);
}

/* The array in name order, for those who walk it (facts file, JSON, ht_facts_at()). */
static void facts_sort(const struct ht_facts *cf)
{
	struct ht_facts *f = (struct ht_facts *)cf;

	if (f->sorted || f->n < 2) {
		f->sorted = true;
		return;
	}
	qsort(f->v, f->n, sizeof(*f->v), fact_cmp);
	/* The same capacity: the slots are already there, only their contents move. */
	memset(f->idx, 0, f->cap_idx * sizeof(*f->idx));
	for (size_t i = 0; i < f->n; i++)
		*idx_slot(f, f->v[i].name) = (uint32_t)i + 1;
	f->sorted = true;
}

/*
 * Adds or replaces a fact, taking ownership of everything @fact holds (it
 * is left zeroed). On -ENOMEM @fact is untouched and still the caller's.
 */
static int facts_put(struct ht_facts *f, struct ht_fact *fact)
{
	struct ht_fact *old = facts_find(f, fact->name);
	int r;

	if (old) {
		/*
		 * The name stays where it was: whoever read the fact may hold it
		 * (the engine keeps the names of the inputs it read).
		 */
		char *name = old->name;

		old->name = NULL;
		fact_clear(old);
		free(fact->name);
		fact->name = name;
		*old = *fact;
		*fact = (struct ht_fact){ 0 };
		return 0;
	}
	r = facts_reserve(f, 1);
	if (r < 0)
		return r;
	if (f->n && strcmp(f->v[f->n - 1].name, fact->name) > 0)
		f->sorted = false;
	else if (!f->n)
		f->sorted = true;
	f->v[f->n] = *fact;
	*idx_slot(f, fact->name) = (uint32_t)f->n + 1;
	f->n++;
	*fact = (struct ht_fact){ 0 };
	return 0;
}

static bool is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

static bool is_unit_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '/' || c == '%' || c == '_';
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool name_valid(const char *s)
{
	if (!s || !is_name_start(*s))
		return false;
	while (*++s)
		if (!is_name_char(*s))
			return false;
	return true;
}

/* One word that cannot be mistaken for the "from" keyword. */
static bool unit_valid(const char *s)
{
	if (!*s || strcmp(s, "from") == 0)
		return false;
	for (; *s; s++)
		if (!is_unit_char(*s))
			return false;
	return true;
}

static bool is_control(char c)
{
	return (unsigned char)c < 0x20 || c == 0x7f;
}

/*
 * The rest of a line that reads back unchanged: no control bytes, no outer
 * blanks; UTF-8, as JSON output needs (RFC 8259, section 8.1).
 */
static bool source_valid(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || is_blank(s[0]) || is_blank(s[len - 1]))
		return false;
	for (const char *p = s; *p; p++)
		if (is_control(*p))
			return false;
	return !ht_utf8_invalid(s);
}

static bool value_valid(const struct ht_value *v)
{
	switch (v->type) {
	case HT_T_INT:
	case HT_T_BOOL:
		return true;
	case HT_T_DEC:
		return isfinite(v->d);
	case HT_T_STR:
		return v->s != NULL && !ht_utf8_invalid(v->s);
	case HT_T_VER:
		return v->v.n >= 1 && v->v.n <= 4;
	case HT_T_NONE:
	default:
		return false;
	}
}

/*
 * Builds a fact from copies of its parts, its unit and source pooled in @f;
 * v == NULL for an unavailable one.
 */
static int fact_build(struct ht_facts *f, struct ht_fact *out, const char *name,
                      const struct ht_value *v, int errnum, const char *unit, const char *source)
{
	struct ht_fact fact = { .error = errnum };

	fact.name = strdup(name);
	if (!fact.name)
		goto oom;
	if (v && ht_value_copy(&fact.value, v) < 0)
		goto oom;
	if (unit && !(fact.unit = (char *)facts_intern(f, unit)))
		goto oom;
	if (source && !(fact.source = (char *)facts_intern(f, source)))
		goto oom;
	*out = fact;
	return 0;
oom:
	fact_clear(&fact);
	return -ENOMEM;
}

static int facts_set_checked(struct ht_facts *f, const char *name, const struct ht_value *v,
                             int errnum, const char *unit, const char *source)
{
	_cleanup_free_ char *shown = NULL;
	struct ht_fact fact;
	int r;

	/* A path from a tree ("FILE:LINE") may hold any byte: shown escaped, on one line. */
	if (source && ht_escape_needed(source, HT_ESCAPE_CONTROL)) {
		shown = ht_escape(source, HT_ESCAPE_CONTROL);
		if (!shown)
			return -ENOMEM;
		source = shown;
	}
	if (!f || !name_valid(name) || (unit && !unit_valid(unit)) ||
	    (source && !source_valid(source)))
		return -EINVAL;
	r = fact_build(f, &fact, name, v, errnum, unit, source);
	if (r < 0)
		return r;
	r = facts_put(f, &fact);
	if (r < 0)
		fact_clear(&fact);
	return r;
}

/*
 * Units of counts and sizes that no kernel value goes below 0 in; a known
 * fact with one of them must not be negative.
 */
static bool unit_nonnegative(const char *unit)
{
	static const char *const units[] = {
		"bytes", "entries", "buckets", "seconds", "CPUs",
		"packets", "lookups", "queues", "Mb/s", "MB/s", "sockets", "listeners", "ports",
		"descriptors", "destinations", "connections", "processes", "files", "segments",
		"ms", "addresses",
	};

	if (!unit)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (strcmp(unit, units[i]) == 0)
			return true;
	return false;
}

static bool value_negative(const struct ht_value *v)
{
	return (v->type == HT_T_INT && v->i < 0) || (v->type == HT_T_DEC && v->d < 0);
}

/* A known fact of a count or size below 0: the facts file would not read it back. */
static bool negative_count(const char *name, const struct ht_value *v)
{
	const struct ht_fact_def *def = ht_fact_def_find(name);

	return def && unit_nonnegative(def->unit) && value_negative(v);
}

int ht_facts_set(struct ht_facts *f, const char *name, const struct ht_value *v, const char *unit,
                 const char *source)
{
	if (!v || !value_valid(v) || (name && negative_count(name, v)))
		return -EINVAL;
	return facts_set_checked(f, name, v, 0, unit, source);
}

int ht_facts_set_unavailable(struct ht_facts *f, const char *name, int errnum, const char *unit,
                             const char *source)
{
	if (!ht_errno_name(errnum))
		return -EINVAL;
	return facts_set_checked(f, name, NULL, errnum, unit, source);
}

int ht_facts_set_int(struct ht_facts *f, const char *name, int64_t i, const char *unit,
                     const char *source)
{
	struct ht_value v = ht_int(i);

	return ht_facts_set(f, name, &v, unit, source);
}

int ht_facts_set_dec(struct ht_facts *f, const char *name, double d, const char *unit,
                     const char *source)
{
	struct ht_value v = ht_dec(d);

	return ht_facts_set(f, name, &v, unit, source);
}

int ht_facts_set_bool(struct ht_facts *f, const char *name, bool b, const char *source)
{
	struct ht_value v = ht_bool(b);

	return ht_facts_set(f, name, &v, NULL, source);
}

int ht_facts_set_str(struct ht_facts *f, const char *name, const char *s, const char *source)
{
	/* ht_facts_set() copies the string: the cast only fits struct ht_value. */
	struct ht_value v = { .type = HT_T_STR, .s = (char *)s };

	/* Bytes of a file that are not UTF-8 (a tree's): the fact is not known. */
	if (s && ht_utf8_invalid(s)) {
		_cleanup_free_ char *src = NULL;

		if (asprintf(&src, "%s (not UTF-8)", source ? source : "the text read") < 0)
			return -ENOMEM;
		return ht_facts_set_unavailable(f, name, EILSEQ, NULL, src);
	}
	return ht_facts_set(f, name, &v, NULL, source);
}

int ht_facts_set_errno(struct ht_facts *f, const char *name, int r, const char *unit,
                       const char *source)
{
	/* No errno is below -4095 (the kernel's MAX_ERRNO), and -INT_MIN would overflow. */
	if (r < -4095)
		return -EINVAL;
	return ht_facts_set_unavailable(f, name, r < 0 ? -r : r, unit, source);
}

const char *ht_fact_def_unit(const char *name)
{
	const struct ht_fact_def *def = name ? ht_fact_def_find(name) : NULL;

	return def ? def->unit : NULL;
}

const struct ht_fact *ht_facts_get(const struct ht_facts *f, const char *name)
{
	if (!f || !name)
		return NULL;
	return facts_find(f, name);
}

size_t ht_facts_count(const struct ht_facts *f)
{
	return f ? f->n : 0;
}

const struct ht_fact *ht_facts_at(const struct ht_facts *f, size_t i)
{
	if (!f || i >= f->n)
		return NULL;
	facts_sort(f);
	return &f->v[i];
}

/* ---- facts file: writing ---- */

#define FACTS_HEADER "# hosttune facts 1"

int ht_facts_write(const struct ht_facts *f, FILE *out)
{
	if (!f || !out)
		return -EINVAL;
	if (fputs(FACTS_HEADER "\n", out) == EOF)
		return -EIO;
	facts_sort(f);
	for (size_t i = 0; i < f->n; i++) {
		const struct ht_fact *fact = &f->v[i];
		int r;

		if (fact->value.type == HT_T_NONE) {
			const char *en = ht_errno_name(fact->error);

			if (!en)
				return -EINVAL; /* ht_facts_set_unavailable() lets none through */
			r = fprintf(out, "%s = unavailable %s", fact->name, en);
		} else {
			_cleanup_free_ char *val = ht_value_format(&fact->value);

			if (!val)
				return -ENOMEM;
			r = fprintf(out, "%s = %s", fact->name, val);
		}
		if (r < 0)
			return -EIO;
		if (fact->unit && fprintf(out, " %s", fact->unit) < 0)
			return -EIO;
		if (fact->source && fprintf(out, " from %s", fact->source) < 0)
			return -EIO;
		if (fputc('\n', out) == EOF)
			return -EIO;
	}
	if (fflush(out) == EOF || ferror(out))
		return -EIO;
	return 0;
}

/* ---- facts file: reading ---- */

struct line_ctx {
	const char *filename;
	size_t lineno;
	const char *line; /* start of the line, for columns */
	struct ht_error *err;
	bool private;     /* not readable by every user: the header error quotes nothing */
};

/*
 * A listener.PORT.SUFFIX name whose PORT is a decimal 1 to 65535 without a
 * leading zero, as ht_collect_sockets() writes it; any other name: true.
 */
static bool listener_name_ok(const char *name)
{
	const char *p = name + strlen("listener.");
	long port = 0;

	if (strncmp(name, "listener.", 9) != 0 || strcmp(name, "listener.list") == 0)
		return true;
	if (*p < '1' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		port = port * 10 + (*p - '0');
		if (port > 65535)
			return false;
	}
	return *p == '.';
}

/* Column (1-based byte) of @p in the current line. */
static size_t col_of(const struct line_ctx *lc, const char *p)
{
	return (size_t)(p - lc->line) + 1;
}

/*
 * Describes what is at @p for "found ...": the word there (from @p up to the
 * next blank, at least up to @end when given), quoted, with control bytes as
 * \xHH and long words cut; or "end of line".
 */
static void describe_token(const char *p, const char *end, char *buf, size_t size)
{
	size_t n = 0, shown = 0;

	if (!*p) {
		snprintf(buf, size, "end of line");
		return;
	}
	buf[n++] = '\'';
	/* The first byte always: a tab inside a source is the offending token itself. */
	while (*p && (shown == 0 || !is_blank(*p) || (end && p < end))) {
		unsigned char c = (unsigned char)*p;
		int u = c >= 0x80 ? ht_utf8_len(p) : 1;

		if (shown++ == 40) {
			n += (size_t)snprintf(buf + n, size - n, "...");
			break;
		}
		/* The message is text too: control bytes and stray non-UTF-8 bytes as \xHH. */
		if (is_control(*p) || u == 0) {
			n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
			p++;
		} else {
			memcpy(buf + n, p, (size_t)u);
			n += (size_t)u;
			p += u;
		}
	}
	snprintf(buf + n, size - n, "'");
}

/* "FILE:LINE:COL: expected WHAT, found TOKEN" at @p. Returns -EINVAL. */
static int expected(const struct line_ctx *lc, const char *p, const char *end, const char *what)
{
	char found[256];

	describe_token(p, end, found, sizeof(found));
	return ht_error_set(lc->err, EINVAL, "%s:%zu:%zu: expected %s, found %s", lc->filename,
	                    lc->lineno, col_of(lc, p), what, found);
}

static const char *skip_blanks(const char *p)
{
	while (is_blank(*p))
		p++;
	return p;
}

/* True when @p starts with the word @w followed by a blank or the end of the line. */
static bool word_at(const char *p, const char *w)
{
	size_t n = strlen(w);

	return strncmp(p, w, n) == 0 && (p[n] == '\0' || is_blank(p[n]));
}

/* A comment line; only checks the format version of a "# hosttune facts N" header. */
static int read_comment(const struct line_ctx *lc, const char *p)
{
	const char *v;

	p = skip_blanks(p + 1);
	if (strncmp(p, "hosttune", 8) != 0 || !is_blank(p[8]))
		return 0;
	p = skip_blanks(p + 8);
	if (strncmp(p, "facts", 5) != 0 || !is_blank(p[5]))
		return 0;
	v = skip_blanks(p + 5);
	if (!word_at(v, "1"))
		return expected(lc, v, NULL, "facts format version 1");
	return 0;
}

struct seen {
	const char *name; /* owned by the temporary table */
	size_t lineno;
};

struct read_state {
	struct ht_facts *tmp;
	struct seen *seen;
	size_t nseen, capseen;
	bool header; /* "# hosttune facts 1" was read */
};

/*
 * The first line that is not blank: exactly FACTS_HEADER, so that a file of
 * another kind (or /dev/null) is not taken for an empty facts file.
 */
static int read_header(struct read_state *st, const struct line_ctx *lc, const char *p)
{
	static const char prefix[] = "# hosttune facts ";

	if (strcmp(p, FACTS_HEADER) == 0) {
		st->header = true;
		return 0;
	}
	if (strncmp(p, prefix, strlen(prefix)) == 0) {
		const char *v = skip_blanks(p + strlen(prefix));

		if (!word_at(v, "1"))
			return expected(lc, v, NULL, "facts format version 1");
	}
	if (lc->private)
		return ht_error_set(lc->err, EINVAL, "%s:%zu:1: expected '" FACTS_HEADER "', found "
		                    "another line (not shown: the file is not readable by every "
		                    "user)", lc->filename, lc->lineno);
	return expected(lc, p, p + strlen(p), "'" FACTS_HEADER "'");
}

static int remember(struct read_state *st, const char *name, size_t lineno)
{
	if (st->nseen == st->capseen) {
		size_t cap = st->capseen ? st->capseen * 2 : 32;
		struct seen *ns = reallocarray(st->seen, cap, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		st->seen = ns;
		st->capseen = cap;
	}
	st->seen[st->nseen++] = (struct seen){ name, lineno };
	return 0;
}

static size_t first_line_of(const struct read_state *st, const char *name)
{
	for (size_t i = 0; i < st->nseen; i++)
		if (strcmp(st->seen[i].name, name) == 0)
			return st->seen[i].lineno;
	return 0;
}

/* What an out-of-range value token at @p should have been. */
static const char *range_what(const char *p)
{
	if (*p == 'v')
		return "version parts up to 4294967295";
	for (const char *q = p; *q && !is_blank(*q); q++)
		if (*q == '.' || *q == 'e' || *q == 'E') {
			/*
			 * Overflow, or underflow to 0 below DBL_TRUE_MIN (<float.h>,
			 * 4.9e-324): ht_value_parse() refuses both.
			 */
			if (isfinite(strtod(p, NULL)))
				return "a decimal of 0 or at least 4.9e-324 in magnitude";
			return "a finite decimal";
		}
	return "an integer from -9223372036854775808 to 9223372036854775807";
}

/* Parses VALUE or "unavailable ERRNO" at *pp into @fact. */
static int read_value(const struct line_ctx *lc, const char *name, const char **pp,
                      struct ht_fact *fact)
{
	static const char what[] = "a value (number, true/false, \"string\" or vN.N)";
	const struct ht_fact_def *def;
	const char *p = *pp, *end = NULL;
	int r;

	if (word_at(p, "unavailable")) {
		const char *e;
		char en[64];
		size_t len;

		p = skip_blanks(p + strlen("unavailable"));
		for (e = p; *e && !is_blank(*e); e++)
			;
		len = (size_t)(e - p);
		if (len == 0 || len >= sizeof(en))
			return expected(lc, p, NULL, "an errno name such as ENOENT");
		memcpy(en, p, len);
		en[len] = '\0';
		r = ht_errno_from_name(en);
		if (r < 0)
			return expected(lc, p, NULL, "an errno name such as ENOENT");
		fact->error = r;
		*pp = e;
		return 0;
	}
	if (!*p)
		return expected(lc, p, NULL, what);
	r = ht_value_parse(p, &fact->value, &end);
	if (r == -ENOMEM)
		return r;
	if (r == -ERANGE)
		return expected(lc, p, NULL, range_what(p));
	if (r < 0)
		return expected(lc, p, NULL, what);
	if (*end && !is_blank(*end)) {
		ht_value_clear(&fact->value);
		return expected(lc, p, end, what);
	}
	def = ht_fact_def_find(name);
	if (def && !(def->type == HT_T_INT ? ht_type_is_number(fact->value.type)
	                                   : def->type == fact->value.type)) {
		r = ht_error_set(lc->err, EINVAL, "%s:%zu:%zu: %s must be a %s, found %s",
		                 lc->filename, lc->lineno, col_of(lc, p), name,
		                 ht_type_name(def->type), ht_type_name(fact->value.type));
		ht_value_clear(&fact->value);
		return r;
	}
	if (ht_fact_max(name) && ht_type_is_number(fact->value.type) &&
	    ht_value_as_double(&fact->value) > (double)ht_fact_max(name)) {
		r = ht_error_set(lc->err, EINVAL, "%s:%zu:%zu: %s must be at most %" PRId64
		                 " (the kernel's bound), found %.*s", lc->filename, lc->lineno,
		                 col_of(lc, p), name, ht_fact_max(name), (int)(end - p), p);
		ht_value_clear(&fact->value);
		return r;
	}
	if (def && unit_nonnegative(def->unit) && value_negative(&fact->value)) {
		r = ht_error_set(lc->err, EINVAL, "%s:%zu:%zu: %s must not be negative, found %.*s",
		                 lc->filename, lc->lineno, col_of(lc, p), name, (int)(end - p), p);
		ht_value_clear(&fact->value);
		return r;
	}
	/* A "\xHH" escape can make any byte; JSON output needs UTF-8 (RFC 8259, 8.1). */
	if (fact->value.type == HT_T_STR && ht_utf8_invalid(fact->value.s)) {
		ht_value_clear(&fact->value);
		return expected(lc, p, end, "a string of UTF-8 text");
	}
	*pp = end;
	return 0;
}

/*
 * Whether @unit measures a quantity on a scale (a size, a time, a rate, a
 * share), where a number in another unit is another amount, rather than
 * naming what is counted (entries, packets).
 */
static bool is_measure_unit(const char *unit)
{
	static const char *const measures[] = {
		"bytes", "B", "KiB", "MiB", "GiB", "TiB", "kB", "KB", "MB", "GB", "TB", "K", "M", "G",
		"bits", "seconds", "second", "s", "sec", "ms", "us", "ns", "min", "minutes", "h",
		"hours", "d", "days", "%", "pages",
	};

	if (strchr(unit, '/'))
		return true; /* MB/s, Mb/s, connections/s */
	for (size_t i = 0; i < ARRAY_SIZE(measures); i++)
		if (strcmp(unit, measures[i]) == 0)
			return true;
	return false;
}

/* Parses [UNIT] [from SOURCE] at @p into @fact, the texts pooled in @f. */
static int read_unit_source(struct ht_facts *f, const struct line_ctx *lc, const char *p,
                            struct ht_fact *fact)
{
	const struct ht_fact_def *def;

	p = skip_blanks(p);
	if (*p && !word_at(p, "from")) {
		const char *e = p;

		while (is_unit_char(*e))
			e++;
		if (e == p || (*e && !is_blank(*e)))
			return expected(lc, p, NULL, "a unit (one word of A-Za-z0-9/%_) or 'from'");
		_cleanup_free_ char *unit = strndup(p, (size_t)(e - p));

		if (!unit)
			return -ENOMEM;
		/*
		 * A value in another unit of measure would be read as this one (1 MiB
		 * as 1 byte). Another count's word is only a label (early_drop was
		 * counted in "packets" before "entries"): a file of an older
		 * hosttune keeps reading.
		 */
		def = ht_fact_def_find(fact->name);
		if (def && def->unit && strcmp(def->unit, unit) != 0 &&
		    (is_measure_unit(def->unit) || is_measure_unit(unit)))
			return ht_error_set(lc->err, EINVAL,
			                    "%s:%zu:%zu: %s is in %s, not '%s' (hosttune-facts(7))",
			                    lc->filename, lc->lineno, col_of(lc, p), fact->name,
			                    def->unit, unit);
		if (!(fact->unit = (char *)facts_intern(f, unit)))
			return -ENOMEM;
		p = skip_blanks(e);
		if (*p && !word_at(p, "from"))
			return expected(lc, p, NULL, "'from' or end of line");
	}
	if (!*p)
		return 0;
	p = skip_blanks(p + strlen("from"));
	if (!*p)
		return expected(lc, p, NULL, "a source after 'from'");
	/* What ht_facts_set() accepts, so that JSON output is UTF-8 text. */
	for (const char *q = p; *q; q++)
		if (is_control(*q))
			return expected(lc, q, NULL, "a source without control characters");
	{
		const char *bad = ht_utf8_invalid(p);

		if (bad)
			return expected(lc, bad, NULL, "a source of UTF-8 text");
	}
	/* The line has no trailing blanks left: the source is the rest of it. */
	fact->source = (char *)facts_intern(f, p);
	return fact->source ? 0 : -ENOMEM;
}

/* One line with its newline and trailing blanks removed. */
static int read_line(struct read_state *st, const struct line_ctx *lc)
{
	struct ht_fact fact = { 0 };
	const char *p = skip_blanks(lc->line), *name_start, *name;
	size_t first;
	int r;

	if (!*p)
		return 0;
	if (!st->header)
		return read_header(st, lc, p);
	if (*p == '#')
		return read_comment(lc, p);

	name_start = p;
	if (!is_name_start(*p))
		return expected(lc, p, NULL, "a fact name");
	while (is_name_char(*p))
		p++;
	if (*p && !is_blank(*p) && *p != '=')
		return expected(lc, name_start, NULL, "a fact name");
	fact.name = strndup(name_start, (size_t)(p - name_start));
	if (!fact.name)
		return -ENOMEM;
	/* The per-host listener counts of older files: the rules count listener.PORT.* now. */
	if (strcmp(fact.name, "listeners.at_somaxconn") == 0 ||
	    strcmp(fact.name, "listeners.count") == 0 || strcmp(fact.name, "listeners.full") == 0) {
		r = 0;
		goto out;
	}
	/*
	 * A misspelt name would only make the rules see the fact as missing.
	 * Module parameters differ between kernels, so module.* stays open.
	 */
	if (!ht_fact_def_find(fact.name) &&
	    !(strncmp(fact.name, "module.", 7) == 0 && fact.name[7])) {
		r = ht_error_set(lc->err, EINVAL, "%s:%zu:%zu: unknown fact '%s'", lc->filename,
		                 lc->lineno, col_of(lc, name_start), fact.name);
		goto out;
	}
	if (!listener_name_ok(fact.name)) {
		r = ht_error_set(lc->err, EINVAL,
		                 "%s:%zu:%zu: '%s' names no TCP port (listener.PORT.*, PORT 1 to 65535)",
		                 lc->filename, lc->lineno, col_of(lc, name_start), fact.name);
		goto out;
	}
	if (ht_facts_get(st->tmp, fact.name)) {
		first = first_line_of(st, fact.name);
		r = ht_error_set(lc->err, EINVAL, "%s:%zu:%zu: duplicate fact '%s' (first on line %zu)",
		                 lc->filename, lc->lineno, col_of(lc, name_start), fact.name, first);
		goto out;
	}
	p = skip_blanks(p);
	if (*p != '=') {
		r = expected(lc, p, NULL, "'='");
		goto out;
	}
	p = skip_blanks(p + 1);
	r = read_value(lc, fact.name, &p, &fact);
	if (r < 0)
		goto out;
	r = read_unit_source(st->tmp, lc, p, &fact);
	if (r < 0)
		goto out;
	name = fact.name; /* moves into the table with the fact */
	r = facts_put(st->tmp, &fact);
	if (r < 0)
		goto out;
	r = remember(st, name, lc->lineno);
out:
	fact_clear(&fact);
	return r;
}

/*
 * What one fact of a file says of another, once all are read: a counter's
 * rise over --sample's interval (C.delta) is at most its since-boot value C
 * (the second reading; nstat, interface and conntrack counters), and sample.seconds is an interval --sample can give
 * (more than 0, at most two days: 1 ms to 1 day asked, and the time the
 * readings take). 0, or -EINVAL with the line of the fact at fault in @err.
 */
static int check_together(const struct read_state *st, const char *filename, struct ht_error *err)
{
	for (size_t i = 0; i < st->tmp->n; i++) {
		const struct ht_fact *d = &st->tmp->v[i], *base;
		size_t len = strlen(d->name);
		char name[256];

		if (!ht_type_is_number(d->value.type))
			continue;
		if (strcmp(d->name, "sample.seconds") == 0) {
			double s = ht_value_as_double(&d->value);

			if (!(s > 0 && s <= 172800))
				return ht_error_set(err, EINVAL,
				                    "%s:%zu:1: sample.seconds = %g is no interval "
				                    "--sample gives (expected more than 0 and at most "
				                    "172800 seconds)",
				                    filename, first_line_of(st, d->name), s);
			continue;
		}
		/*
		 * Not softnet's (32-bit per-CPU counters: a rise across a wrap exceeds
		 * the sum read after it) nor a peer's (sums over connections that
		 * come and go).
		 */
		if (len <= 6 || len - 6 >= sizeof(name) || strcmp(d->name + len - 6, ".delta") != 0 ||
		    strncmp(d->name, "softnet.", 8) == 0 || strncmp(d->name, "peer.", 5) == 0)
			continue;
		memcpy(name, d->name, len - 6);
		name[len - 6] = '\0';
		base = ht_facts_get(st->tmp, name);
		if (!base || !ht_type_is_number(base->value.type))
			continue;
		if (ht_value_as_double(&d->value) > ht_value_as_double(&base->value))
			return ht_error_set(err, EINVAL,
			                    "%s:%zu:1: %s is more than %s on line %zu (expected a rise "
			                    "over --sample's interval of at most the since-boot value)",
			                    filename, first_line_of(st, d->name), d->name, name,
			                    first_line_of(st, name));
	}
	return 0;
}

/*
 * Bounds on a facts file read (from hosts a fleet audit may not trust): an
 * ordinary host writes tens of KiB (21 KiB on a 2-CPU build VM), one line
 * for each fact; a list (namespaces, listeners) is the longest line.
 */
#define FACTS_FILE_MAX (16 << 20)
#define FACTS_LINE_MAX (64 << 10)

int ht_facts_read(struct ht_facts *f, FILE *in, const char *filename, struct ht_error *err)
{
	struct read_state st = { 0 };
	struct line_ctx lc = { .filename = filename ? filename : "-", .err = err,
	                       .private = in && ht_fd_private(fileno(in)) };
	_cleanup_free_ char *line = NULL;
	size_t cap = 0, bytes = 0;
	ssize_t len;
	int r = 0;

	if (err)
		err->msg[0] = '\0';
	if (!f || !in)
		return -EINVAL;
	st.tmp = ht_facts_new();
	if (!st.tmp)
		return -ENOMEM;

	while ((len = ht_getline_max(&line, &cap, in, FACTS_LINE_MAX)) >= 0) {
		size_t n = (size_t)len;

		lc.lineno++;
		lc.line = line;
		bytes += n;
		if (bytes > FACTS_FILE_MAX) {
			r = ht_error_set(err, EFBIG, "%s:%zu: larger than %d MiB: not a facts file "
			                 "hosttune wrote", lc.filename, lc.lineno, FACTS_FILE_MAX >> 20);
			goto out;
		}
		if (memchr(line, '\0', n)) {
			const char *nul = line + strlen(line);

			r = ht_error_set(err, EINVAL, "%s:%zu:%zu: expected text, found a NUL byte",
			                 lc.filename, lc.lineno, col_of(&lc, nul));
			goto out;
		}
		while (n > 0 && (line[n - 1] == '\n' || is_blank(line[n - 1])))
			n--;
		line[n] = '\0';
		r = read_line(&st, &lc);
		if (r < 0)
			goto out;
	}
	if (len == -E2BIG) {
		r = ht_error_set(err, EINVAL, "%s:%zu: a line longer than %d KiB: not a facts file "
		                 "hosttune wrote", lc.filename, lc.lineno + 1, FACTS_LINE_MAX >> 10);
		goto out;
	}
	if (len == -EIO) {
		r = ht_error_set(err, EIO, "%s: read error", lc.filename);
		goto out;
	}
	if (len < -1) {
		r = (int)len;
		goto out;
	}
	if (!st.header) {
		/* Where the header should have been: the line after the last (blank) one. */
		r = ht_error_set(err, EINVAL, "%s:%zu:1: expected '" FACTS_HEADER "', found end of file",
		                 lc.filename, lc.lineno + 1);
		goto out;
	}
	r = check_together(&st, lc.filename, err);
	if (r < 0)
		goto out;

	/* All or nothing: make room first, then moving the facts over cannot fail. */
	r = facts_reserve(f, st.tmp->n);
	if (r < 0)
		goto out;
	/* The units and sources into @f's pool first: then moving the facts cannot fail. */
	for (size_t i = 0; i < st.tmp->n; i++) {
		struct ht_fact *t = &st.tmp->v[i];

		if ((t->unit && !(t->unit = (char *)facts_intern(f, t->unit))) ||
		    (t->source && !(t->source = (char *)facts_intern(f, t->source)))) {
			r = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < st.tmp->n; i++) {
		r = facts_put(f, &st.tmp->v[i]);
		if (r < 0) /* unreachable: room was reserved */
			goto out;
	}
	st.tmp->n = 0;
out:
	free(st.seen);
	ht_facts_free(st.tmp);
	return r;
}

/* ---- JSON ---- */

struct json_object *ht_value_to_json(const struct ht_value *v)
{
	char buf[64];
	size_t n = 0;

	if (!v)
		return NULL;
	switch (v->type) {
	case HT_T_INT:
		return json_object_new_int64(v->i);
	case HT_T_DEC:
		return json_object_new_double(v->d);
	case HT_T_BOOL:
		return json_object_new_boolean(v->b);
	case HT_T_STR:
		return json_object_new_string(v->s);
	case HT_T_VER:
		for (unsigned i = 0; i < v->v.n && i < 4; i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%" PRIu32, i ? "." : "",
			                      v->v.part[i]);
		return json_object_new_string(buf);
	case HT_T_NONE:
	default:
		return NULL;
	}
}

/* Adds @val (may be NULL for JSON null) under @key; puts @val on failure. */
static int json_add(struct json_object *obj, const char *key, struct json_object *val)
{
	if (json_object_object_add(obj, key, val) < 0) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

/* Adds a string, or null for NULL. */
static int json_add_str(struct json_object *obj, const char *key, const char *s)
{
	struct json_object *val = NULL;

	if (s && !(val = json_object_new_string(s)))
		return -ENOMEM;
	return json_add(obj, key, val);
}

static struct json_object *fact_to_json(const struct ht_fact *fact)
{
	struct json_object *o = json_object_new_object();
	struct json_object *val = NULL;

	if (!o)
		return NULL;
	if (fact->value.type != HT_T_NONE && !(val = ht_value_to_json(&fact->value)))
		goto fail;
	if (json_add(o, "value", val) < 0 || json_add_str(o, "unit", fact->unit) < 0 ||
	    json_add_str(o, "source", fact->source) < 0)
		goto fail;
	if (fact->value.type == HT_T_NONE &&
	    (json_add_str(o, "error", ht_errno_name(fact->error)) < 0 ||
	     json_add_str(o, "reason", strerrordesc_np(fact->error)) < 0))
		goto fail;
	return o;
fail:
	json_object_put(o);
	return NULL;
}

struct json_object *ht_facts_to_json(const struct ht_facts *f)
{
	struct json_object *root = NULL, *facts = NULL;

	if (!f)
		return NULL;
	root = json_object_new_object();
	facts = json_object_new_object();
	if (!root || !facts)
		goto fail;
	facts_sort(f);
	for (size_t i = 0; i < f->n; i++) {
		struct json_object *o = fact_to_json(&f->v[i]);

		if (!o || json_add(facts, f->v[i].name, o) < 0)
			goto fail;
	}
	if (json_add(root, "facts", facts) < 0) {
		facts = NULL; /* json_add() put it */
		goto fail;
	}
	return root;
fail:
	json_object_put(facts);
	json_object_put(root);
	return NULL;
}
