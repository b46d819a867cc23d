/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* collect/: read-only sources -> facts. Rule: includes only shared/, engine/ and collect/. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "engine/facts.h"

/*
 * The sources: procfs, sysfs, netlink, libudev, libkmod, CPUID, libcrypto
 * and a watch recording. Nothing here writes to the host.
 */

/*
 * ht_facts_collect - read every fact of this host (ht_collect_all() of a new
 * collection): procfs, sysfs, netlink
 * (ctnetlink, ethtool), libudev, libkmod, CPUID and a cipher measurement.
 * @root: --root DIR, NULL for "/": every path is read below it, so a tree
 *        copied from another host collects as that host.
 *
 * A source that cannot be read yields an unavailable fact with its errno,
 * never a failure of the whole collection; a source that does not hold what
 * the kernel writes there (an integer that does not parse, a negative count
 * or size, a malformed cpulist, a NUL byte, a FIFO or device in place of a
 * regular file) yields EINVAL. Facts already in @f are replaced. kernel.page_size
 * and the uname(2) fallback of cpu.arch exist only for the real root (@root
 * NULL, "" or "/").
 * Returns 0, -EINVAL when @f is NULL, or -ENOMEM.
 */
int ht_facts_collect(struct ht_facts *f, const char *root, unsigned flags);

/* ht_facts_collect() flags */
enum {
	HT_COLLECT_NO_MEASURE = 1 << 0, /* skip the cipher measurement (--no-measure) */
};

/*
 * What a source costs, so that the expensive ones run only when a rule that
 * applies needs their facts: reading a few files (FILES), loading a library
 * for it alone (LIBRARY: dlopen(3) of libkmod, which brings libcrypto,
 * libzstd and liblzma on Debian 12: linked, they cost every run 0.7 ms of
 * CPU and 1.7 MiB resident; then libkmod's own reading of modprobe.d and
 * modules.dep), a walk or dump whose cost follows what the host holds
 * (WALK: the conntrack table, every socket, every process's descriptors),
 * or a measurement that takes time on purpose (MEASURE: the ciphers, the
 * fsync rate). Only FILES runs for HT_NEED_CHEAP.
 */
enum ht_cost {
	HT_COST_FILES,
	HT_COST_LIBRARY,
	HT_COST_WALK,
	HT_COST_MEASURE,
};

/*
 * struct ht_collect - one collection of a host's facts: the sources below a
 * root, each run at most once, the first time one of its facts is asked for
 * (ht_collect_attach()) or all of them (ht_collect_all()).
 */
struct ht_collect;
struct ht_ruleset;

/*
 * ht_collect_new - a collection below @root (NULL, "" or "/" for this host)
 * with @flags (HT_COLLECT_*). Returns 0 with *@out set (free with
 * ht_collect_free()), or -ENOMEM.
 */
int ht_collect_new(const char *root, unsigned flags, struct ht_collect **out);
void ht_collect_free(struct ht_collect *c);

/*
 * ht_collect_input - an input of the collectors, copied: "workload.service"
 * (process names to check besides the listeners' owners, space-separated;
 * NULL or "" for none), "state" (the state file with the apply counters,
 * --state; NULL for ROOT/var/lib/hosttune/state), "garage.config",
 * "garage.metadata_dir", "garage.data_dir" (struct ht_garage_input: the
 * profile's [garage] section). Returns 0, -EINVAL for another name, -ENOMEM.
 */
int ht_collect_input(struct ht_collect *c, const char *name, const char *value);

/*
 * ht_collect_rules - the rules whose gates decide whether an expensive
 * source runs on demand (@rs borrowed: it must outlive the use of @c; NULL
 * for none): the conntrack table is dumped when conntrack.dump_wanted holds,
 * the client sockets listed when ports.dump_wanted does, a listening port's
 * owner looked up when its listener.owner_wanted does, the established
 * connections' tcp_info (peer.*) read when path.dump_wanted does. A gate that cannot
 * be evaluated (no such rule, an unavailable fact, no evaluation under way)
 * lets the source run.
 */
void ht_collect_rules(struct ht_collect *c, struct ht_ruleset *rs);

/*
 * ht_collect_sample - --sample @seconds: the first reading, now, of the
 * sampled sources (collect/sample.h) whose facts the rules of @rs read
 * (every one for @rs NULL: `hosttune facts`); the second is taken when
 * the first of their facts is asked for, @seconds after the first. Their
 * counters C are then the second reading and C.delta the increase between
 * the two; sample.seconds the measured interval. Returns 0, -EINVAL for
 * @seconds <= 0 or a second call, -ENOMEM.
 */
int ht_collect_sample(struct ht_collect *c, double seconds, const struct ht_ruleset *rs);

/*
 * ht_collect_attach - makes @c the provider of @f (ht_facts_set_provider()):
 * a fact @f lacks is collected by its source when first asked for. @f takes
 * @c over: ht_facts_free(@f) frees it.
 */
void ht_collect_attach(struct ht_collect *c, struct ht_facts *f);

/*
 * ht_collect_all - every source that has not run yet, in the order of the
 * source table: the whole snapshot (`hosttune facts`). Returns 0, or a
 * source's negative errno with @err set (-ENOMEM; a garage.toml that does
 * not parse, -EINVAL, or cannot be read, as ht_collect_garage()).
 */
int ht_collect_all(struct ht_collect *c, struct ht_facts *f, struct ht_error *err);

/*
 * ht_progress_fn - told what a measurement that takes time on purpose is
 * doing while it runs: @what a phrase such as "sampling nstat for 60 s" or
 * "measuring the fsync rate in /var/lib/garage/meta" (borrowed for the
 * call; it may hold a file name from the host, unescaped), @left the
 * seconds it has left at most (>= 0), told again as they go down; @what
 * NULL when it is over. @userdata as given to ht_collect_set_progress().
 */
typedef void (*ht_progress_fn)(void *userdata, const char *what, double left);

/*
 * ht_collect_set_progress - who is told of the measurements that take time
 * (--sample's wait between its readings, the fsync rate): @fn with
 * @userdata, for the whole process (the CLI sets it once, before
 * collecting); NULL, the default: nobody. The collectors never print.
 */
void ht_collect_set_progress(ht_progress_fn fn, void *userdata);

/*
 * ht_collect_progress - a collector says what it measures now and the
 * seconds it has left (@what NULL: done): ht_collect_set_progress()'s
 * function, or nothing. ht_collect_progress_wanted(): whether anyone listens.
 */
void ht_collect_progress(const char *what, double left);
bool ht_collect_progress_wanted(void);

/*
 * ht_collect_warning - one line on what a source skipped that nobody asked
 * for (an /etc/garage.toml hosttune cannot read: the Garage pre-flight is
 * skipped), or NULL. Valid while @c is.
 */
const char *ht_collect_warning(const struct ht_collect *c);

/*
 * The collectors behind ht_facts_collect(), exposed for the tests.
 */

/*
 * struct ht_boot - the boot configuration below a root, each part read the
 * first time a fact needs it (shared/bootconf.h): sysctl.d with
 * /etc/sysctl.conf as systemd-sysctl reads them, modprobe.d as kmod does.
 */
struct ht_boot;

/* A boot configuration below @root (NULL: this host). Returns 0 or -ENOMEM. */
int ht_boot_new(const char *root, struct ht_boot **out);
void ht_boot_free(struct ht_boot *b);

/*
 * ht_collect_boot_fact - fact @name, boot.KEY: what the boot gives sysctl
 * KEY (the effective sysctl.d or /etc/sysctl.conf line) or, for
 * boot.module.MODULE.PARAM, the module parameter (modprobe.d's options for
 * MODULE), with "FILE:LINE" as source (/etc/sysctl.conf named as such when
 * read through Debian's 99-sysctl.conf link). An integer (within the live
 * key's bound when hosttune knows one: nf_conntrack's are ints); nothing
 * sets it: unavailable ENOENT; a "-KEY" line without a value (the boot
 * leaves the kernel's value): ENODATA; a value that is not an integer in
 * bounds: EINVAL; an unreadable configuration: its errno. Nothing for a
 * name that is no boot.KEY. Returns 0 or -ENOMEM.
 */
int ht_collect_boot_fact(struct ht_facts *f, struct ht_boot *b, const char *name);

/*
 * ht_collect_tuned_fact - fact @name: tuned.profile (ROOT/etc/tuned/
 * active_profile) or tuned.sysctl.KEY, what that profile's [sysctl] section
 * gives sysctl KEY. A profile's tuned.conf is /etc/tuned/NAME/tuned.conf,
 * else /usr/lib/tuned/NAME/tuned.conf (also under profiles/ as tuned 2.23
 * lays them out); its [main] include= parents are read first (at most 8
 * deep), several active profiles in their order: the last assignment wins,
 * as tuned merges them. Source "FILE:LINE (tuned profile NAME)". Without a
 * profile, or when it does not set KEY: unavailable ENOENT; a value that is
 * not an integer: EINVAL. Other names are ignored. Returns 0 or -ENOMEM.
 */
int ht_collect_tuned_fact(struct ht_facts *f, const char *root, const char *name);

/*
 * ht_collect_boot - boot.net.netfilter.nf_conntrack_max and
 * boot.net.netfilter.nf_conntrack_tcp_timeout_time_wait
 * (ht_collect_boot_fact()): what the conntrack rules judge when
 * nf_conntrack is not loaded yet (the boot loads it, modules-load.d, and
 * then applies these). Returns 0 or -ENOMEM.
 */
int ht_collect_boot(struct ht_facts *f, const char *root);

/*
 * ht_cpulist_count - number of CPUs in a kernel cpulist such as "0-3,6,8-9"
 * (7), the format of /sys/devices/system/cpu/online. Ranges must ascend and
 * not overlap, as the kernel prints them; blanks around the list are allowed.
 * Returns 0, or -EINVAL for an empty or malformed list.
 */
int ht_cpulist_count(const char *s, int64_t *count);

/*
 * ht_meminfo_bytes - the value of field @key ("MemTotal") of /proc/meminfo text
 * @text, converted from kB to bytes. Returns 0; -EINVAL when the field is
 * missing, not "N kB", or its byte count does not fit in int64_t.
 */
int ht_meminfo_bytes(const char *text, const char *key, int64_t *bytes);

/*
 * ht_arch_pointer_size - size of a kernel pointer on machine @arch as uname -m
 * prints it: 8 for 64-bit machines, 4 for 32-bit ones, -EINVAL when hosttune
 * does not know @arch.
 */
int ht_arch_pointer_size(const char *arch);

/*
 * Collectors of the sources beyond procfs/sysfs. Each fills the facts of
 * one source (names and units in engine/facts.c: ht_fact_defs(), ht_nic_fact_defs()),
 * records the source of every value, and turns an absent or refused source
 * into unavailable facts with the errno (EOPNOTSUPP for "the driver does not
 * support it", EPERM/EACCES for missing privilege, ENOENT for an absent
 * module). Each returns 0, or -ENOMEM only: a source that fails is never a
 * failure of the whole collection.
 * @root: the --root prefix (NULL, "" or "/" for the live host). Sources that
 *        only exist live (netlink, CPUID, the cipher measurement) are read
 *        only when root is the live root; under a --root tree they fall back
 *        to files below it (/proc/net/stat/nf_conntrack, /sys/class/net/...,
 *        /proc/cpuinfo) or are unavailable with ENOENT.
 */

/*
 * conntrack.stat.{drop,early_drop,insert_failed,search_restart} summed over
 * CPUs from ctnetlink (IPCTNL_MSG_CT_GET_STATS_CPU, libmnl) with source
 * "ctnetlink", and conntrack.stat.count (IPCTNL_MSG_CT_GET_STATS); when
 * netlink is refused or under --root, /proc/net/stat/nf_conntrack (hex
 * columns, one row a CPU) with that path as source. Then what the table
 * holds: conntrack.dump.{entries,tcp}, conntrack.state.STATE (every TCP
 * state of collect/ctstat.h, 0 when none) and conntrack.stale.established,
 * counted from a ctnetlink dump (IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC) as
 * it streams, in memory independent of the table's size; when netlink is
 * refused or under --root, from /proc/net/nf_conntrack read a piece at a
 * time. Neither is asked on the live host when conntrack.loaded is false (a
 * ctnetlink request would load nf_conntrack). stale needs
 * net.netfilter.nf_conntrack_tcp_timeout_established, collected before.
 */
int ht_collect_ctnetlink(struct ht_facts *f, const char *root);

/*
 * The two halves of ht_collect_ctnetlink(): the counters (a few bytes a
 * CPU, cheap whatever the table holds) and what the table holds (a dump
 * that walks every hash bucket, empty or not, and every entry). Sources of
 * their own, so that the dump runs only when a rule wants it.
 */
int ht_collect_ctstats(struct ht_facts *f, const char *root);
int ht_collect_cttable(struct ht_facts *f, const char *root);

/*
 * The source NAT of one conntrack table, as conntrack.nat.* gives the
 * host's: facts PREFIX{entries,top_destination,top_source,top_entries,
 * top_sources} (@prefix such as "netns.4026532301.nat_", at most 80 bytes).
 * @path NULL: a ctnetlink dump of the table of the network namespace the
 * calling thread is in (a socket opened there); else the table file @path
 * below @root (/proc/PID/net/nf_conntrack), read a piece at a time. A dump
 * or read that fails leaves every fact unavailable with its reason. Returns
 * 0 or -ENOMEM.
 */
int ht_ct_nat_facts(struct ht_facts *f, const char *root, const char *path, const char *prefix);

/* Every fact of ht_ct_nat_facts() unavailable: positive errno @err, @why. 0 or -ENOMEM. */
int ht_ct_nat_unavailable(struct ht_facts *f, const char *prefix, int err, const char *why);

/*
 * nic.list and, for every interface but lo, nic.IF.{driver,bus,kind,physical}
 * from libudev (under --root: /sys/class/net below root).
 */
int ht_collect_udev(struct ht_facts *f, const char *root);

/*
 * nic.IF.{speed,duplex} (ETHTOOL_MSG_LINKMODES_GET) and
 * nic.IF.channels.{combined,rx,tx} and .max.* (ETHTOOL_MSG_CHANNELS_GET) over
 * ethtool generic netlink with libmnl, for every interface in nic.list (so
 * run after ht_collect_udev). Under --root: /sys/class/net/IF/{speed,duplex}
 * and the queue directories.
 */
int ht_collect_ethtool(struct ht_facts *f, const char *root);

/*
 * ht_collect_nicstats - for every interface but lo, nic.IF.stats.{rx_packets,
 * tx_packets,rx_errors,tx_errors,rx_dropped,tx_dropped,rx_crc_errors,
 * rx_frame_errors,rx_fifo_errors,rx_missed_errors} (IFLA_STATS64) and
 * nic.IF.stats.carrier_changes (IFLA_CARRIER_CHANGES), all since the device
 * was created, from one RTM_GETLINK dump over rtnetlink (libmnl). Under
 * --root, or when rtnetlink is refused: ROOT/sys/class/net/IF/statistics/NAME
 * and carrier_changes, each fact unavailable with the file's errno (EINVAL
 * when it holds no decimal counter, ERANGE above 2^63 - 1). One reading of
 * the sampled source (collect/sample.h: ht_nicstats_snapshot()), no .delta.
 */
int ht_collect_nicstats(struct ht_facts *f, const char *root);

/*
 * ht_collect_softnet - softnet.{processed,dropped,time_squeeze} summed over
 * the rows of /proc/net/softnet_stat (one an online CPU), softnet.cpus (the
 * rows), and the worst row: softnet.worst_cpu (the CPU number of column 13
 * since 5.10, else the row from 0) with its .processed, .dropped and
 * .time_squeeze. A file that cannot be read: each fact unavailable with its
 * errno; one that does not parse: EINVAL with "PATH:LINE: expected ..." as
 * source. One reading of the sampled source (ht_softnet_snapshot(),
 * ht_softnet_facts()), no .delta.
 */
int ht_collect_softnet(struct ht_facts *f, const char *root);

/*
 * ht_collect_overlay - for every interface of nic.list, nic.IF.mtu (IFLA_MTU;
 * under --root /sys/class/net/IF/mtu) and nic.IF.overlay:
 * "vxlan" or "geneve" (IFLA_INFO_KIND of an RTM_GETLINK dump), else
 * "none"; for an overlay, nic.IF.overlay_headroom (bytes encapsulation
 * adds: 50 over IPv4, 70 over IPv6, collect/netdev.h), nic.IF.underlay (the
 * device of IFLA_VXLAN_LINK, else IFLA_LINK; unavailable ENOENT when the
 * device names none or it is in another network namespace),
 * nic.IF.underlay_mtu, nic.IF.underlay_tnl_feature (tx-udp_tnl-segmentation,
 * or tx-udp_tnl-csum-segmentation for an overlay that sends outer UDP
 * checksums: the GSO type of its packets), and nic.IF.
 * underlay_tnl_segmentation (that feature is active on the underlay) and
 * _fixed (the driver does not let it change), over ethtool netlink
 * (ETHTOOL_MSG_STRSET_GET of ETH_SS_FEATURES for the bit, then
 * ETHTOOL_MSG_FEATURES_GET), unavailable
 * with the errno and the kernel's text when refused. Under --root: the
 * overlay kind from nic.IF.kind (libudev's DEVTYPE), the rest unavailable
 * ENOENT.
 */
int ht_collect_overlay(struct ht_facts *f, const char *root);

/*
 * ht_collect_module_state - what files tell of nf_conntrack, no library:
 * module.nf_conntrack.* (every file of /sys/module/nf_conntrack/parameters
 * but hashsize, ht_collect_conntrack_files()'s fact) and, when they settle it, conntrack.module and conntrack.loaded with the
 * file as source. Live: "loaded" when /sys/module/nf_conntrack/initstate
 * exists, "builtin" when the directory has none or modules.builtin of
 * kernel.release lists nf_conntrack. Under --root: initstate ("loaded"),
 * modules.builtin ("builtin"), then the directory ("loaded"); without
 * kernel.release, unavailable ENOENT. Otherwise conntrack.module is left
 * unset for ht_collect_kmod() (modules.dep decides), and conntrack.loaded
 * is what ht_collect_conntrack_loaded() set. Reads kernel.release from @f
 * (collected before).
 */
int ht_collect_module_state(struct ht_facts *f, const char *root);

/*
 * ht_collect_kmod - what only libkmod tells, with libkmod loaded (dlopen
 * "libkmod.so.2") on the first call: modprobe.nf_conntrack.{options,
 * hashsize}, the options modprobe.d (and live, the kernel command line)
 * give the next load, and conntrack.module when @f does not hold it yet
 * (ht_collect_module_state() runs first): "available" or "absent" by
 * modules.dep, unavailable (ENOENT) without modules.dep.bin. Under --root,
 * libkmod reads root's modprobe.d and /lib/modules. When libkmod cannot be
 * loaded, these facts are unavailable with ENOENT (not loadable) or ELIBACC
 * (a symbol missing) and a source that names the library.
 */
int ht_collect_kmod(struct ht_facts *f, const char *root);

/*
 * cpu.aes.flag, cpu.pclmul.flag, cpu.model from /proc/cpuinfo; cpu.virt from
 * CPUID (live x86 only) and DMI (/sys/class/dmi/id/sys_vendor,
 * product_name); with @measure, cpu.aes.gcm_mbps, cpu.chacha.mbps and
 * cpu.aes.hw measured with libcrypto (live host only), loaded (dlopen
 * "libcrypto.so.3") for the measurement alone: when it cannot be loaded,
 * the three are unavailable with ENOENT or ELIBACC and a source naming it.
 */
int ht_collect_cpu(struct ht_facts *f, const char *root, bool measure);

/*
 * struct ht_sock - one TCP socket as the socket collectors see it, from an
 * inet_diag message or a /proc/net/tcp line. Addresses are 16 bytes in
 * network order, IPv4 ones in their IPv4-mapped form (::ffff:a.b.c.d).
 */
struct ht_sock {
	uint8_t state;       /* TCP_ESTABLISHED (1) ... TCP_CLOSING (11), include/net/tcp_states.h */
	uint8_t src[16], dst[16];
	uint16_t sport, dport; /* host order */
	uint32_t rqueue;     /* a listener's accept queue now; else unread bytes */
	uint32_t wqueue;     /* a listener's backlog (inet_diag; 0 from /proc/net/tcp); else unsent bytes */
	uint64_t inode;      /* 0 for TIME_WAIT sockets */
};

/*
 * struct ht_tcp_sample - what hosttune reads of one connection's struct
 * tcp_info (include/uapi/linux/tcp.h, INET_DIAG_INFO). The has_* flags say
 * whether the kernel's struct was long enough to hold the field (segs_out
 * since 4.2, min_rtt since 4.6, delivery_rate since 4.9) and, for min_rtt,
 * whether it had an RTT sample yet.
 */
struct ht_tcp_sample {
	uint8_t state;          /* tcpi_state */
	uint32_t total_retrans; /* segments retransmitted over the connection's life */
	uint32_t segs_out;      /* segments sent, retransmissions included */
	uint32_t rtt_us;        /* smoothed RTT, microseconds */
	uint32_t min_rtt_us;    /* smallest RTT seen (windowed), microseconds */
	uint64_t delivery_rate; /* bytes a second */
	bool has_segs, has_min_rtt, has_delivery_rate;
};

/*
 * ht_tcp_info_parse - the fields above from an INET_DIAG_INFO payload
 * @data of @len bytes: a struct tcp_info of any kernel's length (shorter
 * than this build's: the missing fields are absent; longer: the rest
 * ignored). Returns 0; -EINVAL for a NULL argument or a payload too short
 * to hold tcpi_total_retrans.
 */
int ht_tcp_info_parse(const void *data, size_t len, struct ht_tcp_sample *out);

/*
 * struct ht_peer_sock - one established TCP connection of the peer dump.
 * Addresses are 16 bytes in network order, IPv4 ones IPv4-mapped.
 */
struct ht_peer_sock {
	uint64_t cookie;          /* inet_diag's socket cookie: the same socket in two readings */
	uint8_t src[16], dst[16]; /* local, remote (the peer) */
	uint16_t sport, dport;    /* host order */
	struct ht_tcp_sample info;
};

struct nlmsghdr;

/*
 * ht_peer_diag_parse - one reply of a SOCK_DIAG_BY_FAMILY dump asked with
 * INET_DIAG_INFO: an AF_INET or AF_INET6 established socket with its
 * tcp_info into @out. The message must be whole (nlmsg_len bytes readable).
 * Returns 0; 1 for a message to skip (another type, family or state, or
 * no INET_DIAG_INFO attribute); -EBADMSG for a message too short or with a
 * malformed attribute or tcp_info; -EINVAL for a NULL argument.
 */
int ht_peer_diag_parse(const struct nlmsghdr *nlh, struct ht_peer_sock *out);

/*
 * ht_peer_name - the instance name of peer address @a (16 bytes,
 * IPv4-mapped for IPv4) in @name: dotted IPv4, or IPv6 as inet_ntop(3)
 * writes it with '-' for ':' (fact names have no ':'); the address as
 * written in @address (may be NULL). Sizes: INET6_ADDRSTRLEN is enough.
 */
void ht_peer_name(const uint8_t a[16], char *name, size_t size, char *address, size_t asize);

/*
 * ht_proc_net_tcp_line - one socket line of /proc/net/tcp (@v6 false) or
 * /proc/net/tcp6 (@v6 true), as get_tcp4_sock() / get_tcp6_sock() print it:
 * "SL: LOCAL REMOTE ST TX_QUEUE:RX_QUEUE TR:WHEN RETRNSMT UID TIMEOUT INODE ...",
 * addresses as the 32-bit words of the address in this CPU's byte order
 * (%08X each), ports and the rest in hex but the inode (decimal). The
 * header line is not a socket line. Fills @s (wqueue = TX_QUEUE, rqueue =
 * RX_QUEUE). Returns 0 or -EINVAL.
 */
int ht_proc_net_tcp_line(const char *line, bool v6, struct ht_sock *s);

/*
 * ht_port_range - "LOW\tHIGH" of /proc/sys/net/ipv4/ip_local_port_range
 * (any blanks between, a trailing newline allowed). Returns 0, or -EINVAL
 * unless 1 <= LOW <= HIGH <= 65535.
 */
int ht_port_range(const char *text, int64_t *low, int64_t *high);

/*
 * ht_limits_nofile - soft and hard "Max open files" of /proc/PID/limits text;
 * "unlimited" is INT64_MAX. Returns 0, -ENOENT when the line is missing,
 * -EINVAL when it does not hold two limits.
 */
int ht_limits_nofile(const char *text, int64_t *soft, int64_t *hard);

/*
 * ht_limits_get - soft and hard limit of the line @key ("Max processes") of
 * /proc/PID/limits text, as ht_limits_nofile() reads "Max open files".
 */
int ht_limits_get(const char *text, const char *key, int64_t *soft, int64_t *hard);

/*
 * struct ht_task_census - every process's tasks by real UID, for
 * RLIMIT_NPROC: the kernel counts a user's processes and threads together
 * (the ucounts of kernel/ucount.c) against the limit of the process that
 * forks (copy_process() in kernel/fork.c). Filled by ht_task_census_read(),
 * freed by ht_task_census_free().
 */
struct ht_task_comm {
	char name[17];     /* Name: of /proc/PID/status (the comm, at most 16 bytes) */
	int64_t tasks;     /* threads of the user's processes of that name, summed */
	int64_t processes; /* those processes */
	int pid;           /* the lowest of their PIDs */
};

struct ht_task_user {
	uint32_t uid;        /* real UID (Uid: of /proc/PID/status, first field) */
	int64_t tasks;       /* its processes' threads, summed */
	int64_t processes;   /* its processes */
	struct ht_task_comm *comms; /* its processes by name (malloc()ed) */
	size_t ncomms, comms_cap;
	int64_t min_nproc;   /* the lowest soft RLIMIT_NPROC among them (INT64_MAX: none;
	                      * always for UID 0, which it does not bind: not read) */
	int min_pid;         /* the process that has it */
};

struct ht_task_census {
	struct ht_task_user *users; /* sorted by uid */
	size_t n;
	int64_t unread; /* processes whose status could not be read (gone, refused) */
};

/*
 * ht_task_census_read - walk @root/proc once: each process's real UID and
 * Threads: (/proc/PID/status) and soft "Max processes" (/proc/PID/limits).
 * A process that vanished meanwhile is skipped. Returns 0 (an empty census
 * when /proc cannot be read), or -ENOMEM.
 */
int ht_task_census_read(const char *root, struct ht_task_census *c);
void ht_task_census_free(struct ht_task_census *c);

/*
 * ht_proc_status_ids - @root/proc/@pid/status read into *@status (the
 * caller frees it, also on -EINVAL), its real UID (the first of Uid:) and
 * Threads:. Returns 0, ht_read_file()'s error, or -EINVAL when either is
 * missing or out of range (a UID above 2^32 - 1, threads above
 * PID_MAX_LIMIT, 4194304).
 */
int ht_proc_status_ids(const char *root, int pid, char **status, int64_t *uid, int64_t *threads);

/* The census row of @uid, or NULL. */
const struct ht_task_user *ht_task_census_user(const struct ht_task_census *c, uint32_t uid);

/*
 * ht_task_facts - process.NAME.nproc, .nproc_hard, .threads, .uid, .user,
 * .nproc_exempt, .user_tasks and, of the user's processes by name, the
 * name holding the most tasks: .user_top, .user_top_pid (its lowest PID),
 * .user_top_processes and .user_top_threads, of the process @pid judged
 * for NAME @pname, from its /proc files below @root and the census @c; each
 * unavailable with its errno when it cannot be read. Returns 0 or -ENOMEM.
 */
int ht_task_facts(struct ht_facts *f, const char *root, const struct ht_task_census *c,
                  const char *pname, int pid);

/*
 * ht_cgroup_unit - the systemd service of /proc/PID/cgroup text: the last
 * path component ending in ".service" of the cgroup v2 line ("0::PATH"),
 * else of the v1 "ID:name=systemd:PATH" line. @unit receives a new string
 * (caller frees). A service below a per-user manager ("user@UID.service/
 * app.slice/x.service") is the user manager's, not a system unit hosttune
 * can write a drop-in for: -ENOENT, and *@manager (when @manager is not
 * NULL) receives "user@UID.service", a new string. Returns 0, -ENOENT when
 * neither line names a system service, -ENOMEM.
 */
int ht_cgroup_unit(const char *text, char **unit, char **manager);

/*
 * ht_nstat_value - counter @field of section @prefix ("TcpExt", "Tcp") in
 * /proc/net/netstat or /proc/net/snmp text, which hold pairs of lines
 * "PREFIX: Name1 Name2 ..." / "PREFIX: v1 v2 ..."; nstat(8) calls it
 * PREFIX + field (TcpExtListenOverflows). Returns 0, -ENOENT when the
 * section or field is missing, -EINVAL for a section without its value line
 * or a value that is not a non-negative integer.
 */
int ht_nstat_value(const char *text, const char *prefix, const char *field, int64_t *out);

/*
 * struct ht_listeners - the listening TCP sockets of one scan and how far
 * the walk for their owners went (ht_collect_listeners()).
 */
struct ht_listeners;

/*
 * ht_collect_listeners - listener.list and listener.PORT.{backlog,queue}
 * (the addresses: ht_listeners_addresses()).
 *
 * Live: a NETLINK_SOCK_DIAG dump of AF_INET and one of AF_INET6 TCP
 * sockets in LISTEN (the kernel walks its listening hash only, not every
 * connection), streamed: a listening socket adds to its port's record (its
 * address, its inode; backlog = idiag_wqueue and queue = idiag_rqueue of
 * ONE socket, the port's worst: a full one (queue >= backlog) first, then
 * the highest queue / backlog, then the smallest backlog; without backlogs
 * the largest queue). Under --root, or when sock_diag fails: ROOT/proc/net/tcp
 * and tcp6, which have no backlog (listener.PORT.backlog unavailable
 * ENOENT). No owner is looked up yet: ht_listeners_owner() does, port by
 * port. *@out receives the scan (free with ht_listeners_free()), also when
 * no socket could be read (listener.list unavailable with the errno).
 * Returns 0 or -ENOMEM (*@out NULL then).
 */
int ht_collect_listeners(struct ht_facts *f, const char *root, struct ht_listeners **out);

/*
 * ht_listeners_addresses - listener.PORT.addresses of @port (a port of the
 * scan; another is ignored): the local addresses of its listening sockets,
 * sorted, space-separated ("0.0.0.0 ::"). Returns 0 or -ENOMEM.
 */
int ht_listeners_addresses(struct ht_facts *f, struct ht_listeners *l, unsigned port);

/*
 * ht_listeners_owner - listener.PORT.{pid,process} of @port (a port of the
 * scan; another is ignored): the lowest PID whose /proc/PID/fd holds
 * "socket:[INODE]" of one of the port's listening sockets, and its comm.
 * The walk of /proc, a readlink() of each descriptor, goes on from where
 * the last call stopped and stops once this port has an owner (the live
 * /proc lists PIDs ascending, so the first is the lowest; a --root tree is
 * read whole), recording the owners of every other port it passes: ports
 * asked for one by one cost one walk at most. None found: both unavailable,
 * ENOENT (another PID namespace's process, a kernel socket, a socket in
 * flight in a unix message), or EACCES when some fd directories or links
 * were refused (another user's process when not root; ptrace restrictions:
 * proc_fd_link() checks ptrace access). Returns 0 or -ENOMEM.
 */
int ht_listeners_owner(struct ht_facts *f, struct ht_listeners *l, unsigned port);

/*
 * ht_listeners_held - whether ROOT/proc/@pid/fd holds one of the scan's
 * listening sockets ("socket:[INODE]", a readlink() of each descriptor of
 * that one process); owners are not changed. Returns 1 (held, or a link
 * was refused: it may be, and a process near its limit is not passed over
 * for want of privilege), 0 (none, or the directory could not be opened),
 * or -ENOMEM.
 */
int ht_listeners_held(struct ht_listeners *l, int pid);

/*
 * ht_listeners_sockets - how many listening sockets of the scan carry an
 * inode, the ones ht_listeners_held() and the owner walk can find in a
 * process's descriptors (0 for NULL, and when /proc/net/tcp listed none).
 */
size_t ht_listeners_sockets(const struct ht_listeners *l);

/*
 * ht_listeners_skipped - which of ROOT/proc/net/tcp and tcp6 the scan
 * refused although it read the other ("/proc/net/tcp6: a line not as the
 * kernel writes it (line 2)"): the sockets of that file are missing from
 * listener.list. NULL when nothing was refused. Owned by @l.
 */
const char *ht_listeners_skipped(const struct ht_listeners *l);

/*
 * ht_listeners_refused - the processes whose /proc/PID/fd the owner walk so
 * far was refused (another user's without root; as root, a ptrace
 * restriction): up to @max of their PIDs in @pids, in the order the walk met
 * them. Returns how many were refused in all (more than @max: not all named).
 */
size_t ht_listeners_refused(const struct ht_listeners *l, int *pids, size_t max);

void ht_listeners_free(struct ht_listeners *l);

/*
 * ht_collect_ports - net.ipv4.ip_local_port_range, ports.range.* and
 * ports.*: every TCP socket but the listening ones, from the same sources
 * as ht_collect_listeners() (live: one dump of every state but LISTEN,
 * SYN_RECV and CLOSE, which walks every connection of the host); a socket
 * whose local port is in ip_local_port_range adds to the count of its key
 * (source address, destination address, destination port) in a hash table,
 * so memory grows with distinct destinations, never with sockets.
 * ports.top.*: the key with the most sockets, ties broken by the lowest
 * destination address, port, then source address; none: top.sockets and
 * top.time_wait 0, top.destination and top.source unavailable ENOENT.
 * Returns 0 or -ENOMEM.
 */
int ht_collect_ports(struct ht_facts *f, const char *root);

/* A namespace's ip_local_port_range: the ports connect() takes, @low to @high. */
struct ht_ns_range {
	uint16_t low, high;
};

/*
 * struct ht_ns_tcp - one network namespace's TCP sockets in brief, for the
 * netns.N.* facts: its listening ports and the worst of them (as
 * listener.list judges a port's sockets: a full queue first, then the
 * fuller against its backlog), its sockets in TIME_WAIT, and the
 * destination (source address, destination address and port) with the
 * most sockets whose local port is in the namespace's range.
 */
struct ht_ns_tcp {
	bool have_backlog;          /* backlogs known (sock_diag), not /proc/PID/net/tcp */
	bool have_range;            /* the range was given */
	bool have_ports;            /* the destinations were counted */
	uint32_t listeners;         /* listening ports */
	uint16_t top_port;          /* the worst listening port; 0: none */
	uint32_t top_queue;         /* its accept queue now (connections) */
	uint32_t top_backlog;       /* its backlog (0 when !have_backlog) */
	uint64_t top_inode;         /* the inode of one of its sockets; 0 unknown */
	uint64_t time_wait;         /* sockets in TIME_WAIT */
	char top_destination[64];   /* "ADDR:PORT" ("[ADDR]:PORT" for IPv6); "" none */
	uint32_t top_sockets;       /* sockets to it from one source address */
	uint32_t top_time_wait;     /* those of them in TIME_WAIT */
};

/*
 * ht_ns_tcp_scan - the TCP sockets of the network namespace of process
 * @pid into @out: with @in_ns (the caller has entered that namespace with
 * setns(2)), NETLINK_SOCK_DIAG dumps made there, backlogs included: of
 * the listeners only, and of every socket too when @ports; otherwise
 * ROOT/proc/PID/net/tcp and tcp6, without backlogs. @range: the
 * namespace's port range, NULL when unknown; the destinations are counted
 * only with a range and @ports. *@source names what was read (newly allocated, the caller frees;
 * on an error, the file that failed, or NULL). Returns 0, -ENOMEM, or the
 * negative errno of the dump or of the IPv4 file.
 */
int ht_ns_tcp_scan(const char *root, int pid, bool in_ns, const struct ht_ns_range *range,
                   bool ports, struct ht_ns_tcp *out, char **source);

/*
 * ht_collect_port_range - net.ipv4.ip_local_port_range and
 * ports.range.{low,high} from ROOT/proc/sys/net/ipv4/ip_local_port_range
 * (ht_port_range()); unavailable with the errno when it cannot be read or
 * parsed. ht_collect_ports() reads them from @f. Returns 0 or -ENOMEM.
 */
int ht_collect_port_range(struct ht_facts *f, const char *root);

/*
 * ht_collect_sockets - ht_collect_listeners(), every port's owner
 * (ht_listeners_owner()) and ht_collect_ports(): every socket fact at once.
 * Returns 0 or -ENOMEM.
 */
int ht_collect_sockets(struct ht_facts *f, const char *root);

/*
 * ht_collect_processes - process.list and process.NAME.{comm,pid,fds,nofile,
 * nofile_hard,unit} for the PIDs of @first (n_first of them, each named by
 * its comm; one whose comm cannot be read is skipped), the owners of listeners (the listener.PORT.process
 * facts in @f: run after ht_collect_sockets()) and the processes named in
 * @names (space-separated comm names, such as the profile's
 * workload.service "garage"; NULL for none). NAME is the comm with every
 * character outside [A-Za-z0-9_-] made '_'; a name of @names matches a
 * process whose comm, so changed, equals it (a comm is at most 15 bytes).
 * Every process of a NAME is read (/proc/PID/fd and /proc/PID/limits) and
 * the NAME's facts describe the worst: the largest share of its soft limit
 * open, then the most entries in /proc/PID/fd, then the lowest PID (what
 * cannot be read counts as least); process.NAME.count is how many there
 * are. process.list lists only the NAMEs a process was found for,
 * sorted, space-separated ("" when none): a named service that is not
 * running is absent from it and has no process.NAME.* facts. Facts of
 * earlier calls are replaced, not removed (a second call with more names
 * adds to them). A fact that cannot be read is unavailable with its errno
 * (fds: EACCES for another user's process when not root).
 * Returns 0, -EINVAL when @f is NULL, or -ENOMEM.
 */
int ht_collect_processes(struct ht_facts *f, const char *root, const char *names,
                         const int *first, size_t n_first);

/*
 * ht_process_fact_set - sets fact process.@pname.@suffix: @v, or, when @v
 * is NULL, unavailable with the positive errno @err; its unit from the
 * catalogue, @source as given. Returns 0 or a negative errno of
 * ht_facts_set() (-ENOMEM, -EINVAL for a name the catalogue lacks).
 */
int ht_process_fact_set(struct ht_facts *f, const char *pname, const char *suffix,
                        const struct ht_value *v, int err, const char *source);

/*
 * ht_collect_process_sockets - what fills each checked process's
 * descriptors: for every name of process.list (whose process.NAME.pid must
 * be set), process.NAME.sockets (its descriptors that are sockets, from
 * the links of ROOT/proc/PID/fd) and, of its TCP sockets in
 * ROOT/proc/PID/net/tcp and tcp6 (its own network namespace, matched by
 * inode; in a --root tree without /proc/PID/net, /proc/net/tcp and tcp6), .sock_state (the state holding the most, as conntrack(8) names
 * it: SYN_SENT, CLOSE_WAIT, ...), .sock_state_count, .sock_peer (in that
 * state, the remote "ADDR:PORT" holding the most) and .sock_peer_count.
 * Unavailable with the errno when the descriptors cannot be read (EACCES:
 * another user's), ENOENT without a TCP socket. Read only when a rule asks
 * (a limit at 75% or more). Returns 0 or -ENOMEM.
 */
int ht_collect_process_sockets(struct ht_facts *f, const char *root);

/*
 * ht_collect_file_holders - files.top.{pid,process,fds}: the process of
 * ROOT/proc with the most open descriptors (the lowest PID on a tie),
 * counted as ht_processes_near_limit() counts them, and files.top.read,
 * the processes whose descriptors could be counted. Unavailable (EACCES)
 * when none could. A walk of every process: collected only when a rule
 * asks (the file table near full). Returns 0 or -ENOMEM.
 */
int ht_collect_file_holders(struct ht_facts *f, const char *root);

/*
 * ht_processes_near_limit - the PIDs of ROOT/proc whose open descriptors
 * are at 75% of their soft RLIMIT_NOFILE or more (process.high's bound, a
 * warning: fds >= nofile - nofile / 4), in ascending PID order. A process's
 * descriptors are counted, never read one by one: the size of the live
 * /proc/PID/fd (Linux 6.2 and later), else the size of its descriptor table
 * (FDSize of /proc/PID/status) when that is below the bound, else one
 * getdents() pass; its limit from /proc/PID/limits. Links and anything but
 * regular files in a --root tree are not read. A process that cannot be
 * read is skipped. *@pids is
 * allocated (free() it; NULL when *@n is 0). Returns 0 or -ENOMEM.
 */
int ht_processes_near_limit(const char *root, int **pids, size_t *n);

/*
 * ht_sockstat_value - the number after @key on the line "PREFIX: key v key
 * v ..." of /proc/net/sockstat text @text ("TCP", "tw"). Returns 0;
 * -ENOENT when there is no such line or key; -EINVAL for a line not as the
 * kernel writes it or a value that is not a non-negative integer.
 */
int ht_sockstat_value(const char *text, const char *prefix, const char *key, int64_t *out);

/*
 * ht_collect_netns - every network namespace a process lives in but
 * hosttune's own (live: /proc/self's; in a tree, ROOT/proc/self's, else PID
 * 1's), found by ROOT/proc/PID/ns/net: netns.list (their inodes, sorted,
 * at most 4096), netns.skipped, and netns.N.* for each (hosttune-facts(7)):
 * its lowest PID, that process's name and cgroup, the counters of
 * /proc/PID/net/netstat and sockstat; live as root, its sysctls and its
 * sockets with their backlogs read from inside (setns(2) there and back);
 * otherwise its sockets from /proc/PID/net/tcp, and the sysctls unavailable
 * with the reason. Returns 0, -ENOMEM, or -ENOTRECOVERABLE when the thread
 * could not return to its own namespace (no further fact may be read).
 */
int ht_collect_netns(struct ht_facts *f, const char *root);

/*
 * ht_cgroup_path - the path of a process's control group from the text of
 * /proc/PID/cgroup: the unified hierarchy's ("0::PATH"), else the first v1
 * line's below its root; into @buf of @size bytes (cut to fit), "" when no
 * line has one (the root group, or no cgroup file system).
 */
void ht_cgroup_path(const char *text, char *buf, size_t size);

/*
 * ht_cgroup_classify - who made the control group of path @path (below the
 * hierarchy's root, with or without a leading "/"), from the names the
 * container runtimes and systemd give their groups: *@manager "docker"
 * (docker-ID.scope, docker/ID), "podman" (libpod-ID), "kubernetes"
 * (kubepods), "lxc" (lxc.payload.NAME, lxc/NAME), "systemd" (a unit or
 * scope of its own) or "other" (static strings); @container the container's
 * ID (12 hex digits), the pod's UID or the LXC name, "" for none; @unit the
 * last *.service or *.scope of the path, "" for none.
 */
void ht_cgroup_classify(const char *path, const char **manager, char container[80],
                        char unit[256]);

/*
 * ht_collect_cgroups - the control groups with a memory or pids limit of
 * their own, or whose counters show the limit was hit (an OOM kill, a
 * refused fork): cgroup.version, cgroup.list (their paths escaped with
 * ht_name_escape(), sorted, separated by spaces) and cgroup.CG.* for each
 * (hosttune-facts(7)), read below @root (NULL: this host) from cgroup v2's
 * /sys/fs/cgroup, else v1's memory and pids hierarchies. At most 4096 groups
 * 16 levels deep (the list's source says when it stopped), and 4096
 * processes of a group for its largest. Without cgroups, cgroup.version is
 * "none" and cgroup.list "". A file a group lacks leaves
 * its fact out. Returns 0 or -ENOMEM.
 */
int ht_collect_cgroups(struct ht_facts *f, const char *root);

/*
 * ht_collect_sockstat - sockstat.tcp.inuse (TCP sockets in the hash tables:
 * listening, connecting, connected) and sockstat.tcp.tw (in TIME_WAIT) of
 * this network namespace from ROOT/proc/net/sockstat: counters the kernel
 * keeps, read without listing a socket. Returns 0 or -ENOMEM.
 */
int ht_collect_sockstat(struct ht_facts *f, const char *root);

/*
 * ht_collect_nstat - nstat.TcpActiveOpens, nstat.TcpPassiveOpens,
 * nstat.TcpOutSegs, nstat.TcpRetransSegs (/proc/net/snmp "Tcp:") and nstat.TcpExt{ListenDrops,ListenOverflows,
 * TCPReqQFullDrop,TCPTimeWaitOverflow,TW} (/proc/net/netstat "TcpExt:")
 * of this network namespace, below @root. Returns 0 or -ENOMEM.
 */
int ht_collect_nstat(struct ht_facts *f, const char *root);

/*
 * ht_uptime_seconds - the whole seconds since boot of /proc/uptime text
 * ("12345.67 23456.78\n"). Returns 0, -EINVAL for anything else (a NULL
 * argument, no number, a negative one).
 */
int ht_uptime_seconds(const char *text, int64_t *out);

/*
 * ht_collect_uptime - host.uptime (seconds since boot) from ROOT/proc/uptime:
 * how long the since-boot counters have been counting. Returns 0 or -ENOMEM.
 */
int ht_collect_uptime(struct ht_facts *f, const char *root);

/*
 * ht_collect_apply_counters - conntrack.stat.drop_at_apply and
 * conntrack.stat.early_drop_at_apply (packets since boot when the last
 * `hosttune apply` ran) from the "counters" of its state file: @state_path
 * (--state), else ROOT + HT_STATE_FILE. Nothing is set when there is no
 * state file, it records no counters, it records another tree or
 * machine-id (a state file copied from elsewhere: another host's counters),
 * or its "boot_id" is not ROOT/proc/sys/kernel/random/boot_id now (a
 * reboot reset the counters).
 * The conntrack.drops rule then counts the drops since that apply.
 * Returns 0, or ht_facts_set()'s -ENOMEM / -EINVAL.
 */
int ht_collect_apply_counters(struct ht_facts *f, const char *root, const char *state_path);

/*
 * ht_collect_observed - a `hosttune watch --record` file as observed.* facts:
 * the recording at @path is replayed through the watch summary
 * (collect/watch.h) with @headroom (>= 1; the profile's workload.burst), and
 * its figures become observed.peak_count, .pinned_samples, .samples, .max,
 * .time_wait and .source, plus .peak_rate, .mean_rate and .rate_lower_bound
 * when the record has rates, .events_lost and .overruns when it counts them
 * (version 2), and .drops when every drop difference is known; source
 * "--observed PATH", for the two rates "--observed PATH (a lower bound: the
 * recording lost NEW events)" when rate_lower_bound. The conntrack rules
 * prefer them to the profile's guessed rate.
 * Returns 0; for a recording that cannot be read or replayed its negative
 * errno with @err set ("PATH:LINE:COL: expected ..." for bad content;
 * -ERANGE for a count, max or time_wait above 2^31 - 1, an int in the
 * kernel, or a peak rate above 2^31 - 1 a second, which the conntrack rules'
 * integer arithmetic could not hold);
 * when a fact cannot be stored, ht_facts_set()'s -ENOMEM or -EINVAL with
 * @err untouched.
 */
int ht_collect_observed(struct ht_facts *f, const char *path, double headroom,
                        struct ht_error *err);

/*
 * ht_collect_storage - storage.NAME.{path,role,exists,probed,fs,free,size,
 * inodes,inodes_free,read_only_mount,device,devices,rotational,fsync_rate}
 * of directory @path (as garage.toml names it) with @role ("metadata" or
 * "data"); the caller sets storage.list and the [[data_dir]] facts
 * (capacity, read_only).
 *
 * The directory is ROOT/@path; when it does not exist yet (before Garage
 * is deployed), its nearest existing parent is probed instead (exists
 * false, probed that parent as @path spells it). statfs(2) gives free,
 * size, inodes, inodes_free and f_type; the filesystem type is the mount's
 * from the live /proc/self/mountinfo (the entry whose major:minor is the
 * directory's st_dev, the longest mount point that is a prefix of the real
 * path on a tie), else the name of f_type (ENOENT when unknown).
 * read_only_mount: statfs f_flags & ST_RDONLY (EOPNOTSUPP when the kernel
 * does not fill f_flags: no ST_VALID, before 2.6.36). The block device:
 * /sys/dev/block/MAJ:MIN of st_dev on the live host (under --root too:
 * the tree's files are on one of this host's filesystems); none
 * (major 0: tmpfs, overlay, NFS, btrfs subvolumes on several devices give
 * their anonymous dev) -> device, devices and rotational unavailable with
 * ENODEV. devices: the leaves below it through /sys/block/DEV/slaves
 * (dm, md, and a partition as its parent disk); rotational: true when any
 * of them has queue/rotational 1, else unavailable ENODATA when one is a
 * disk whose flag is no evidence (virtio_blk, Xen vbd, a loop device:
 * ht_block_info()), the source saying why.
 *
 * fsync_rate (only for role "metadata", only with @measure and on the live
 * root): a new temporary file (O_TMPFILE when the filesystem supports it,
 * else mkstemp + unlink at once) in the probed directory, 4096 bytes
 * pwrite() at offset 0 + fdatasync() in a loop for about 300 ms (at least
 * one round, at most 10000), closed: nothing is left in the directory;
 * fsyncs/s rounded to the nearest integer, at least 1. Not measured:
 * unavailable ECANCELED (!@measure) or EOPNOTSUPP (--root); a directory
 * where no file can be created: that errno (EACCES, EROFS), as for a write
 * or fdatasync() that fails (EIO). Under --root every filesystem fact
 * (fs ... rotational, read_only_mount) is unavailable EOPNOTSUPP.
 *
 * Below a --root, symbolic links in @path resolve inside the tree
 * (openat2(2) RESOLVE_IN_ROOT; the joined path where the kernel has no
 * openat2). A @path that is not absolute: every filesystem fact (and
 * fsync_rate) unavailable EINVAL, source "not an absolute path"; a probe
 * that fails (EACCES on the way, a missing --root): those facts unavailable
 * with its errno. path and role have no source: the caller may set them
 * again with its "FILE:LINE".
 * Returns 0; -EINVAL for a NULL argument or a @name that makes no valid
 * fact name; -ENOMEM.
 */
int ht_collect_storage(struct ht_facts *f, const char *root, const char *name, const char *role,
                       const char *path, bool measure);

/*
 * ht_mountinfo_fstype - the filesystem type of the mount of device
 * @major:@minor that holds the real path @path, from /proc/PID/mountinfo
 * text @text (proc_pid_mountinfo(5): "ID PARENT MAJ:MIN ROOT MOUNTPOINT
 * OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS", with " \t\n\\" as octal
 * escapes such as \040). Of several lines of that device (bind mounts, a
 * btrfs subvolume's anonymous dev), the one whose mount point is the
 * longest prefix of @path (whole components), a later line on a tie (it
 * is mounted on top); of lines none of whose mount points is a prefix, the
 * last. Lines that do not parse are skipped. @type receives a new string
 * (caller frees): "ext4", "fuse.sshfs". Returns 0, -ENOENT when no line is
 * of that device, -EINVAL for a NULL argument, -ENOMEM.
 */
int ht_mountinfo_fstype(const char *text, unsigned major, unsigned minor, const char *path,
                        char **type);

/*
 * struct ht_block_info - the block device behind a filesystem and the disks
 * below it (storage.NAME.device, .devices, .rotational). Strings are owned;
 * free with ht_block_info_free().
 */
struct ht_block_info {
	char *device;            /* kernel name of MAJ:MIN: "vda1", "dm-0", "md0", "loop3" */
	char *devices;           /* the disks below it, sorted, space-separated: "sda sdb" */
	bool rotational;         /* some disk of devices has queue/rotational 1 */
	int rotational_error;    /* 0, or why none could be read (negative errno) */
	char *rotational_source; /* the queue/rotational file(s) that decided, ", "-separated */
};

/*
 * ht_block_info - fill @b for device @major:@minor from the sysfs tree at
 * @sysfs ("/sys"; a fake tree in tests): device is the last component of
 * readlink(SYSFS/dev/block/MAJ:MIN); the disks below it are found from its
 * resolved directory: a partition (a directory with a "partition" file) is
 * the disk directory above it, a device with entries in slaves/ stands for
 * the disks below each of them (resolved, recursively: dm over md over
 * partitions), any other is a disk itself (a loop device's backing file is
 * not followed). rotational reads SYSFS/block/DISK/queue/rotational of each
 * ("0" or "1"; anything else -EINVAL): true at the first 1; when none is 1
 * and one could not be read, rotational_error is that error. A disk whose
 * flag is no evidence counts as unreadable with -ENODATA: a paravirtual
 * one (SYSFS/block/DISK/device/driver is virtio_blk or vbd) and a loop
 * device ("loopN": file-backed, its flag says nothing of the disk under
 * the file; the source names SYSFS/block/loopN/loop/backing_file and the
 * file when readable).
 * Returns 0; -ENODEV for major 0 (tmpfs, overlay, NFS, btrfs's anonymous
 * devs); -ENOENT etc. from readlink/realpath/opendir; -ELOOP for slaves
 * nested deeper than 16; -ENOMEM; on error @b holds nothing to free.
 */
int ht_block_info(const char *sysfs, unsigned major, unsigned minor, struct ht_block_info *b);
void ht_block_info_free(struct ht_block_info *b);

/*
 * ht_fs_type_name - the name stat -f -c %T would print for statfs f_type
 * @magic, as the kernel's include/uapi/linux/magic.h names them ("xfs",
 * "btrfs", "tmpfs", "overlayfs", "zfs", "ext2/ext3" for EXT4_SUPER_MAGIC,
 * which ext2, ext3 and ext4 share; "fuseblk" for FUSE's one magic, fuse
 * and fuseblk mounts alike), or NULL when unknown. A 32-bit magic above
 * 0x7fffffff may come sign-extended (f_type is a signed word).
 */
const char *ht_fs_type_name(int64_t magic);

/*
 * ht_fsync_rate - the measurement behind storage.NAME.fsync_rate: in
 * directory @dir (a full path), a temporary file, 4096-byte pwrite() +
 * fdatasync() repeated until @budget_ms milliseconds have passed (at least
 * once, at most @max_rounds times), then closed and gone. @rounds and
 * @elapsed_ns receive what was done; *@rate fsyncs a second. The file:
 * open(O_TMPFILE), else (EOPNOTSUPP, EISDIR, EINVAL: a filesystem or kernel
 * without it) mkstemp() of DIR/.hosttune-fsync-XXXXXX, unlinked at once.
 * Returns 0, or the negative errno of the open, write or fdatasync that
 * failed (the file is gone either way; the outputs are untouched); -EINVAL
 * for @max_rounds 0 or a NULL pointer.
 */
int ht_fsync_rate(const char *dir, unsigned budget_ms, unsigned max_rounds, double *rate,
                  unsigned *rounds, uint64_t *elapsed_ns);

/*
 * struct ht_proxy_input - the store's ports a reverse proxy may send to:
 * garage.s3_port and garage.web_port, MinIO's --address, the registry's.
 * Borrowed.
 */
struct ht_proxy_input {
	const int64_t *ports;      /* 1..65535 */
	const char *const *roles;  /* what each port serves: "s3", "web" or "registry" */
	size_t nports;
};

/*
 * ht_collect_proxies - the reverse proxies whose configuration below @root
 * sends requests to one of @in's ports (nginx: ROOT/etc/nginx/nginx.conf
 * and its includes): proxy.list ("nginx-1 nginx-2", in the order of the
 * configuration; "" for none), proxy.checked (true when a proxy's
 * configuration was read; unavailable ENOENT when there is none, or no
 * port to look for), and for each path proxy.NAME.* (hosttune-facts(7)):
 * where it is written, its client-side port, and each setting's effective
 * value after inheritance (http, server, location) with the FILE:LINE it
 * comes from, or the proxy's default. Returns 0; -EINVAL with @err set when
 * a configuration does not read as the proxy would read it (one line,
 * FILE:LINE: expected ...), no proxy fact set then; -ENOMEM. The source
 * table makes that -EINVAL a warning (ht_collect_warning()).
 */
int ht_collect_proxies(struct ht_facts *f, const char *root, const struct ht_proxy_input *in,
                       struct ht_error *err);

/*
 * ht_nginx_size_parse - a size as nginx's ngx_parse_size() reads it:
 * digits, then k/K, m/M, g/G (powers of 1024) or nothing (bytes), into
 * *@ret bytes. 0, or -EINVAL for anything else (a sign, a space, overflow).
 */
int ht_nginx_size_parse(const char *s, int64_t *ret);

/*
 * ht_nginx_time_parse - a time as ngx_parse_time() reads it: numbers each
 * with a unit (ms, s, m, h, d, w, M, y; none: seconds), blanks between
 * them allowed ("1m 30s"), into *@ret whole seconds (milliseconds round up).
 * 0, or -EINVAL.
 */
int ht_nginx_time_parse(const char *s, int64_t *ret);

/*
 * struct ht_garage_input - where to look for Garage when no garage.toml
 * says: the workload variables of the profile's [garage] section. Strings
 * are borrowed; NULL or "" means unset.
 */
struct ht_garage_input {
	const char *config;       /* garage.config: the garage.toml to read; "" to look for it */
	const char *metadata_dir; /* garage.metadata_dir: before deployment */
	const char *data_dir;     /* garage.data_dir: before deployment */
};

/*
 * ht_collect_garage - the garage.* facts, then storage.list and
 * ht_collect_storage() for the metadata and each data directory.
 *
 * The configuration: @in->config when set, else the path the garage unit
 * (garage.service, read as systemd reads it, ht_unit_setting_read())
 * gives: "-c PATH", "-cPATH", "--config PATH" or "--config=PATH" in its
 * effective ExecStart= (the last one after the last empty ExecStart=, its
 * words split and unquoted as systemd does; specifiers and $VARIABLES are
 * not expanded), else GARAGE_CONFIG_FILE in its Environment= lines (an
 * empty Environment= clears the list, a later assignment wins, an empty
 * GARAGE_CONFIG_FILE= counts as unset; EnvironmentFile= is not read), else
 * /etc/garage.toml; below @root. A relative path from the unit is taken
 * from "/", a service's default working directory. A relative
 * @in->config is the user's: on the live host (@root NULL, "" or "/") it
 * is made absolute with the current directory (getcwd(3)) here; under a
 * --root it is refused (-EINVAL, @err "--set garage.config=PATH: expected
 * an absolute path below --root").
 * None exists: garage.config unavailable (ENOENT, the source names the
 * path and who named it), the directories from @in (the profile's [garage]
 * variables, the one place their defaults are; a NULL or "" member: that
 * directory unavailable ENOENT and no storage facts for it), the rest
 * Garage's documented defaults with source "Garage
 * default (reference-manual/configuration.md)", the ports 3900 (S3) and
 * 3901 (RPC); garage.web_port and garage.admin_port unavailable (ENOENT,
 * "not configured: ..."): Garage binds [s3_web] and [admin] only when
 * garage.toml configures them.
 * An @in->config that does not exist is an error (-ENOENT, @err set): the
 * user named it.
 *
 * garage.toml is read with shared/toml.h and checked as Garage's
 * deserializer (src/util/config.rs) checks it, since Garage does not start
 * with what it refuses: metadata_dir (a non-empty string), data_dir (a
 * non-empty string, or [[data_dir]] entries with a path, a capacity
 * string unless read_only = true, read_only a boolean) and rpc_bind_addr
 * are required; block_size and block_ram_buffer_max are a non-negative
 * integer or a size string (ht_size_parse()), a [[data_dir]] capacity a
 * size string only (an Option<String> in Garage); compression_level an
 * i32 or "none" in any case (the fact: the integer as text, or "none");
 * db_engine any string, its aliases "heed", "sqlite3" and "rusqlite" given
 * as "lmdb" and "sqlite" (Garage's Engine::from_str()), others as written
 * for the rules to judge ("sled": removed in v1.0). Addresses: rpc_bind_addr
 * is a SocketAddr ("IP:PORT", "[IPv6]:PORT", IP literals only);
 * [s3_api] api_bind_addr, [s3_web] bind_addr and [admin] api_bind_addr may
 * also be a path starting with '/', a Unix socket: that port fact is then
 * unavailable (ENOENT) with a source saying so, as it is when the key is
 * absent. Ports outside 1-65535 are refused. Each fact's source is
 * "PATH:LINE"; a key left out gets Garage's default with the source above.
 * Keys hosttune does not know are ignored, as Garage ignores them.
 * storage.NAME.capacity and storage.NAME.read_only are set for the
 * [[data_dir]] entries that give them; storage.NAME.path and .role of a
 * [[data_dir]] entry have the line of its own path = as source, those of
 * metadata_dir and a single data_dir their key's line.
 *
 * garage.binary from the unit's ExecStart= (its first word, without
 * systemd's prefixes @-:+!) when it is an absolute path, else the first of
 * /usr/local/bin/garage and /usr/bin/garage below @root that exists;
 * garage.binary_bits from its ELF header (EINVAL when not ELF, ENOENT when
 * absent). garage.unit: the unit file read (ENOENT when none or masked);
 * garage.unit.nofile: the soft limit of the effective LimitNOFILE= of
 * ht_unit_limits_read() ("infinity": INT64_MAX), source "FILE:LINE"; when
 * the unit sets none, the soft limit of the manager's effective [Manager]
 * DefaultLimitNOFILE= (ht_manager_setting_read(): /etc/systemd/system.conf
 * and the system.conf.d drop-ins), source "FILE:LINE DefaultLimitNOFILE=
 * (no LimitNOFILE= in garage.service or its drop-ins)"; neither:
 * unavailable ENOENT (systemd's built-in default, soft 1024).
 *
 * Returns 0; -EINVAL with @err "FILE:LINE:COL: expected ..., found ..."
 * (the TOML reader's), "FILE:LINE: KEY: expected ..., found ..." for a
 * value of the wrong type or range (a metadata_dir that is not a string,
 * a size that does not parse, a port outside 1-65535), "FILE: expected KEY
 * = ... (Garage does not start without it), found none" for a required key
 * left out, or "FILE:LINE: [[data_dir]]: expected ... in this entry, found
 * none" (LINE: the entry's header); -ENOENT with @err for a named config
 * that does not exist; -EACCES, -EISDIR, -EFBIG (above 1 MiB) etc. with
 * @err "FILE: reason" for one that cannot be read; -ENOMEM. Facts set
 * before an error are left in @f.
 */
int ht_collect_garage(struct ht_facts *f, const char *root, const struct ht_garage_input *in,
                      bool measure, struct ht_error *err);
