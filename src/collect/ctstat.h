/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * The /proc/net/stat/nf_conntrack parser of collect-ctnetlink.c, exposed
 * for tests/fuzz/fuzz-proc.c (the collectors reach it through
 * ht_collect_ctnetlink() and ht_ctnetlink_counters(), collect.h, watch.h).
 */

/* The columns hosttune reads; each have_ flag says whether the header had it. */
struct ht_ct_proc_stat {
	int64_t count;          /* "entries", the namespace's count (first row) */
	int64_t drop;           /* "drop", summed over the rows (CPUs) */
	int64_t early_drop;     /* "early_drop", summed */
	int64_t insert_failed;  /* "insert_failed", summed */
	int64_t search_restart; /* "search_restart", summed */
	bool have_count, have_drop, have_early_drop, have_insert_failed, have_search_restart;
};

/*
 * ht_ct_proc_stat_parse - @text as the kernel prints /proc/net/stat/nf_conntrack
 * (ct_cpu_seq_show(): a header of column names starting with "entries", then
 * one row of hex counters per possible CPU). Returns 0, or -EINVAL when the
 * text is not in that format (no "entries" header first, a row of another
 * width, no rows, a word that is not hex, a sum beyond int64_t); @out is
 * then zeroed.
 */
int ht_ct_proc_stat_parse(const char *text, struct ht_ct_proc_stat *out);

/*
 * What the conntrack table holds, counted entry by entry from a ctnetlink
 * dump (IPCTNL_MSG_CT_GET with NLM_F_DUMP) or from /proc/net/nf_conntrack.
 * Nothing is kept per entry: the memory is this struct whatever the size of
 * the table.
 */

/*
 * The TCP states of enum tcp_conntrack (include/uapi/linux/netfilter/
 * nf_conntrack_tcp.h), in its order, so that a state number from
 * CTA_PROTOINFO_TCP_STATE indexes them. Index 9 is TCP_CONNTRACK_SYN_SENT2
 * (a #define of the obsolete TCP_CONNTRACK_LISTEN), printed "SYN_SENT2" by
 * the kernel's /proc/net/nf_conntrack (tcp_conntrack_names[] of
 * nf_conntrack_proto_tcp.c) and by conntrack(8) (libnetfilter_conntrack's
 * states[]); both printed "LISTEN" there before 2008, which the text parser
 * reads as SYN_SENT2 too.
 */
#define HT_CT_TCP_STATES 10

/* "NONE" ... "SYN_SENT2" for 0 .. HT_CT_TCP_STATES - 1, NULL otherwise. */
const char *ht_ct_tcp_state_name(unsigned state);

/*
 * An ESTABLISHED entry is stale when no packet has refreshed it for this
 * long: its remaining timeout is at least this far below
 * nf_conntrack_tcp_timeout_established (every packet of an ESTABLISHED
 * connection resets it to that, tcp_packet() in nf_conntrack_proto_tcp.c).
 */
#define HT_CT_STALE_SECONDS 3600

/*
 * An ESTABLISHED entry with data not yet acknowledged gets
 * nf_conntrack_tcp_timeout_unacknowledged instead of the established
 * timeout (tcp_packet(), tcp_timeouts[TCP_CONNTRACK_UNACK] in
 * nf_conntrack_proto_tcp.c): 300 s by default, used when the sysctl file
 * is absent. A remaining timeout at or below it says nothing of idleness.
 */
#define HT_CT_UNACK_TIMEOUT_DEFAULT 300

/* Distinct address pairs ht_ct_who_add() counts one by one; beyond, "untracked". */
#define HT_CT_PAIRS_MAX 16384

/* One (source, destination) address pair of original tuples and its entries. */
struct ht_ct_pair {
	uint8_t family;      /* AF_INET or AF_INET6; 0 marks a free slot */
	uint8_t src[16], dst[16];
	int64_t entries;
};

/*
 * What fills the table: entries by the original tuple's destination port
 * (TCP and UDP) and by its address pair, counted in the same pass as the
 * states. ht_ct_who_new() allocates it (about 256 KiB of port counters and
 * 640 KiB of pairs), ht_ct_who_free() frees it.
 */
struct ht_ct_who {
	uint32_t *port;            /* 65536 counters, by destination port */
	struct ht_ct_pair *pairs;  /* open addressing, HT_CT_PAIRS_MAX slots */
	size_t npairs;
	int64_t untracked;         /* entries of pairs met when every slot was taken */
	int64_t tallied;           /* entries with an address pair */
	struct ht_ct_nat *nat;     /* source-NAT mappings, open addressing, HT_CT_NAT_MAX slots */
	size_t nnat;
	int64_t nat_entries;       /* entries with source NAT */
	int64_t nat_untracked;     /* of them, met when the slots were three quarters taken */
};

/* Distinct (NAT address, destination) tuples ht_ct_who_add_nat() counts one by one. */
#define HT_CT_NAT_MAX 4096

/*
 * Source-NAT mappings to one destination from one NAT address: each takes a
 * source port of its own (nf_nat_l4proto_unique_tuple() in
 * net/netfilter/nf_nat_proto.c), so their count is the usage of that
 * tuple's port range.
 */
struct ht_ct_nat {
	uint8_t family;              /* AF_INET or AF_INET6; 0 marks a free slot */
	uint8_t proto;               /* IPPROTO_TCP, IPPROTO_UDP, ... */
	uint16_t dport;              /* the original destination port */
	uint8_t nsrc[16], dst[16];   /* the address NAT gives as source; the destination */
	int64_t entries;
};

/*
 * ht_ct_who_add_nat - tallies one entry with source NAT: @nsrc the address
 * it is given (the reply tuple's destination), @dst and @dport its original
 * destination, @proto its protocol.
 */
void ht_ct_who_add_nat(struct ht_ct_who *w, int family, int proto, const void *nsrc,
                       const void *dst, int dport);

/*
 * ht_ct_who_top_nat - the tuple with the most mappings into *@out and the
 * distinct NAT addresses that map to its destination (address, port and
 * protocol) into *@sources; returns false when no entry had source NAT.
 */
bool ht_ct_who_top_nat(const struct ht_ct_who *w, struct ht_ct_nat *out, int64_t *sources);

struct ht_ct_who *ht_ct_who_new(void);
void ht_ct_who_free(struct ht_ct_who *w);

/*
 * ht_ct_who_add - tallies one entry: @family AF_INET (4-byte addresses) or
 * AF_INET6 (16), @src and @dst its original addresses, @dport its original
 * destination port (-1 when the protocol has none).
 */
void ht_ct_who_add(struct ht_ct_who *w, int family, const void *src, const void *dst, int dport);

/*
 * ht_ct_who_top_ports - the @n ports with the most entries into @ports and
 * @entries (descending; the lower port first on a tie); returns how many
 * (ports with no entry are left out).
 */
size_t ht_ct_who_top_ports(const struct ht_ct_who *w, size_t n, int *ports, int64_t *entries);

/*
 * ht_ct_who_top_pairs - the @n pairs with the most entries into @out
 * (descending); returns how many.
 */
size_t ht_ct_who_top_pairs(const struct ht_ct_who *w, size_t n, struct ht_ct_pair *out);

struct ht_ct_table {
	int64_t entries;                   /* every entry, any protocol, IPv4 and IPv6 */
	int64_t tcp;                       /* entries whose original tuple is TCP */
	int64_t state[HT_CT_TCP_STATES];   /* TCP entries by state (enum tcp_conntrack) */
	/* ESTABLISHED with unack_timeout < timeout <= est_timeout - 3600 */
	int64_t stale;
	int64_t est_timeout;               /* nf_conntrack_tcp_timeout_established (s), < 0 unknown */
	int64_t unack_timeout;             /* nf_conntrack_tcp_timeout_unacknowledged (s) */
	struct ht_ct_who *who;             /* tallied too when not NULL (not owned) */
};

/*
 * ht_ct_table_count - counts one entry: @proto its IP protocol number
 * (IPPROTO_TCP = 6), @state its TCP state (enum tcp_conntrack; ignored unless
 * TCP; a number beyond the table counts in tcp alone, as does -1 for "not
 * given"), @timeout its remaining seconds (-1 unknown: never stale). Stale:
 * ESTABLISHED with unack_timeout < @timeout <= est_timeout - 3600.
 */
void ht_ct_table_count(struct ht_ct_table *t, int proto, int state, int64_t timeout);

/*
 * ht_ct_proc_line - counts the line @line (without its newline) of
 * /proc/net/nf_conntrack into @t: "L3NAME L3NUM L4NAME L4NUM [TIMEOUT]
 * [STATE] key=value ..." as ct_seq_show() in nf_conntrack_standalone.c
 * prints it. TIMEOUT (remaining seconds) is absent for an entry offloaded to
 * a flow table; STATE is printed by the protocols that have one (TCP, SCTP,
 * DCCP). An empty line counts nothing. Returns 0, or -EINVAL when the line
 * does not start with two names and numbers or a TCP line names no state
 * hosttune knows.
 */
int ht_ct_proc_line(struct ht_ct_table *t, const char *line);

/*
 * ht_ct_proc_parse - every line of the text @text of /proc/net/nf_conntrack
 * through ht_ct_proc_line(), added to @t (which the caller zeroes and whose
 * est_timeout and unack_timeout it sets). Returns 0 or -EINVAL (the first bad line).
 */
int ht_ct_proc_parse(const char *text, struct ht_ct_table *t);
