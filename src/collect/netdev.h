/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parsers behind the NIC counters, softnet and overlay facts
 * (collect/collect-netdev.c), exposed for the tests and the fuzz harness.
 * They only read what they are given; none allocates.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <net/if.h>

/* The counters of struct rtnl_link_stats64 hosttune reads, by index into ht_link.stats. */
enum ht_link_stat {
	HT_LS_RX_PACKETS,
	HT_LS_TX_PACKETS,
	HT_LS_RX_ERRORS,
	HT_LS_TX_ERRORS,
	HT_LS_RX_DROPPED,
	HT_LS_TX_DROPPED,
	HT_LS_RX_CRC_ERRORS,
	HT_LS_RX_FRAME_ERRORS,
	HT_LS_RX_FIFO_ERRORS,
	HT_LS_RX_MISSED_ERRORS,
	HT_LS_N,
};

/*
 * ht_link_stat_name - the kernel's name of counter @s, the same in struct
 * rtnl_link_stats64 and /sys/class/net/IF/statistics/ ("rx_crc_errors");
 * NULL for an index out of range.
 */
const char *ht_link_stat_name(enum ht_link_stat s);

/* Overlay kinds hosttune judges (IFLA_INFO_KIND). */
enum ht_overlay {
	HT_OVERLAY_NONE,
	HT_OVERLAY_VXLAN,
	HT_OVERLAY_GENEVE,
};

/*
 * struct ht_link - one RTM_NEWLINK message of an RTM_GETLINK dump, the
 * parts hosttune reads.
 */
struct ht_link {
	int32_t ifindex;             /* ifinfomsg.ifi_index */
	char name[IFNAMSIZ];         /* IFLA_IFNAME; "" when absent */
	bool has_stats;              /* IFLA_STATS64 present */
	uint64_t stats[HT_LS_N];     /* from IFLA_STATS64, by enum ht_link_stat */
	bool has_carrier_changes;    /* IFLA_CARRIER_CHANGES present (since 4.1) */
	uint32_t carrier_changes;    /* link state changes since the device was created */
	bool has_mtu;
	uint32_t mtu;                /* IFLA_MTU, bytes */
	uint32_t link;               /* IFLA_LINK: ifindex of the lower device, 0 for none */
	char kind[32];               /* IFLA_LINKINFO/IFLA_INFO_KIND: "vxlan", "veth"; "" */
	enum ht_overlay overlay;     /* from kind */
	uint32_t vxlan_link;         /* IFLA_VXLAN_LINK: the underlay ifindex, 0 for none */
	bool ipv6;                   /* VXLAN/Geneve with an IPv6 remote, group or local address */
	bool udp_csum;               /* the overlay sends outer UDP checksums: its large packets
	                                are SKB_GSO_UDP_TUNNEL_CSUM, which needs the underlay's
	                                tx-udp_tnl-csum-segmentation, not tx-udp_tnl-segmentation */
};

/*
 * ht_rtnl_link_parse - fills @l from @nlh, an RTM_NEWLINK message whose
 * nlmsg_len bytes are readable (libmnl checked them). IFLA_STATS64 may be
 * shorter than today's struct rtnl_link_stats64 (older kernels), never
 * shorter than its first 23 counters (2.6.35); a longer one is read as far
 * as hosttune knows it. Unknown attributes are ignored.
 * Returns 0; -ENOENT for a message that is not RTM_NEWLINK; -EINVAL for a
 * message or attribute that is malformed (too short, an IFLA_IFNAME that is
 * not a NUL-terminated name below IFNAMSIZ, a counter attribute of the
 * wrong size).
 */
int ht_rtnl_link_parse(const struct nlmsghdr *nlh, struct ht_link *l);

/*
 * The VXLAN and Geneve headroom: what encapsulation adds to the inner
 * packet (an Ethernet frame of MTU bytes without its FCS): outer IP header
 * (20 IPv4, 40 IPv6) + UDP 8 + VXLAN or Geneve base header 8 + inner
 * Ethernet header 14, as the kernel's VXLAN_HEADROOM / VXLAN6_HEADROOM
 * (include/net/vxlan.h) and GENEVE_IPV4_HLEN / GENEVE_IPV6_HLEN
 * (drivers/net/geneve.c) count them: 50 and 70 bytes. Geneve options add
 * to it per packet; the base is the least.
 */
#define HT_OVERLAY_HEADROOM_V4 50
#define HT_OVERLAY_HEADROOM_V6 70

/* ht_overlay_headroom - HT_OVERLAY_HEADROOM_V4 or _V6 for @l's outer family. */
unsigned ht_overlay_headroom(const struct ht_link *l);

/*
 * struct ht_softnet - /proc/net/softnet_stat summed over its rows (one an
 * online CPU) and its worst row.
 */
struct ht_softnet {
	uint64_t processed, dropped, time_squeeze; /* summed over the rows */
	unsigned rows;
	bool cpu_column;       /* the rows carry their CPU number (column 13, since 5.10) */
	int64_t worst_cpu;     /* the CPU (or, without cpu_column, the row from 0) of the most
	                          drops, then the most time_squeeze, then the lowest */
	uint32_t worst_dropped, worst_time_squeeze, worst_processed;
};

/*
 * ht_softnet_parse - the text of /proc/net/softnet_stat: one line an online
 * CPU of at least 9 hexadecimal 32-bit columns ("%08x": processed, dropped,
 * time_squeeze first, whatever the kernel; 9 to 2.6.34, 10 from 2.6.35, 11
 * from 3.11, 13 from 5.10 with the CPU number 13th, 15 from 6.9 or so),
 * single spaces between, the CPU number ascending when present.
 * Returns 0; -EINVAL for an empty text or a line that is not such a row
 * (@line, when not NULL, receives its number from 1).
 */
int ht_softnet_parse(const char *text, struct ht_softnet *s, unsigned *line);

/*
 * ht_softnet_row_fn - one row of /proc/net/softnet_stat: its CPU (the
 * column-13 number, else the row from 0) and its first three columns.
 * Returns 0 to go on, a negative errno to stop the parse with it.
 */
typedef int (*ht_softnet_row_fn)(void *data, int64_t cpu, uint32_t processed, uint32_t dropped,
                                 uint32_t time_squeeze);

/*
 * ht_softnet_parse_rows - ht_softnet_parse() that also calls @row (NULL:
 * none) with @data for each row once the row has parsed. Returns what
 * ht_softnet_parse() does, or @row's negative errno.
 */
int ht_softnet_parse_rows(const char *text, struct ht_softnet *s, unsigned *line,
                          ht_softnet_row_fn row, void *data);

/*
 * ht_ethnl_strset_index - the index of string @want in the reply @nlh to
 * ETHTOOL_MSG_STRSET_GET for string set @set (ETH_SS_FEATURES: the names of
 * netdev_features_strings, "tx-udp_tnl-segmentation"), a generic netlink
 * message of family @family. Returns the index (>= 0); -ENOENT when the set
 * or the string is not in the message; -EINVAL for a malformed message;
 * -ESRCH for a message that is not that reply.
 */
int ht_ethnl_strset_index(const struct nlmsghdr *nlh, uint16_t family, uint32_t set,
                          const char *want);

/*
 * struct ht_features - one feature bit of an ETHTOOL_MSG_FEATURES_GET
 * reply (compact bitsets): whether each of the reply's four sets holds it.
 */
struct ht_features {
	bool seen;      /* a reply was parsed */
	bool hw;        /* ETHTOOL_A_FEATURES_HW: the driver lets it be changed */
	bool wanted;    /* ETHTOOL_A_FEATURES_WANTED: asked for (ethtool -K) */
	bool active;    /* ETHTOOL_A_FEATURES_ACTIVE: in use */
	bool nochange;  /* ETHTOOL_A_FEATURES_NOCHANGE: never changeable */
};

/*
 * ht_ethnl_features_bit - bit @bit of the four sets of the reply @nlh to
 * ETHTOOL_MSG_FEATURES_GET (family @family), compact bitsets (value words
 * of ETHTOOL_A_BITSET_SIZE bits; a bit past SIZE is clear) or verbose ones
 * (ETHTOOL_A_BITSET_BITS with indexes). Returns 0 with @out filled; -EINVAL
 * for a malformed message or bitset; -ESRCH for a message that is not that
 * reply.
 */
int ht_ethnl_features_bit(const struct nlmsghdr *nlh, uint16_t family, uint32_t bit,
                          struct ht_features *out);
