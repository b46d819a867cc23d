/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parsers of collect/netdev.h: an RTM_NEWLINK message, the text of
 * /proc/net/softnet_stat, and the ethtool STRSET and FEATURES replies. Pure:
 * they read what they are given, allocate nothing and print nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "collect/netdev.h"
#include "shared/netlink.h"
#include "shared/util.h"

/* ---- RTM_NEWLINK ---- */

static const struct {
	const char *name;
	size_t offset; /* in struct rtnl_link_stats64 */
} link_stats[HT_LS_N] = {
	[HT_LS_RX_PACKETS] = { "rx_packets", offsetof(struct rtnl_link_stats64, rx_packets) },
	[HT_LS_TX_PACKETS] = { "tx_packets", offsetof(struct rtnl_link_stats64, tx_packets) },
	[HT_LS_RX_ERRORS] = { "rx_errors", offsetof(struct rtnl_link_stats64, rx_errors) },
	[HT_LS_TX_ERRORS] = { "tx_errors", offsetof(struct rtnl_link_stats64, tx_errors) },
	[HT_LS_RX_DROPPED] = { "rx_dropped", offsetof(struct rtnl_link_stats64, rx_dropped) },
	[HT_LS_TX_DROPPED] = { "tx_dropped", offsetof(struct rtnl_link_stats64, tx_dropped) },
	[HT_LS_RX_CRC_ERRORS] = { "rx_crc_errors",
		                  offsetof(struct rtnl_link_stats64, rx_crc_errors) },
	[HT_LS_RX_FRAME_ERRORS] = { "rx_frame_errors",
		                    offsetof(struct rtnl_link_stats64, rx_frame_errors) },
	[HT_LS_RX_FIFO_ERRORS] = { "rx_fifo_errors",
		                   offsetof(struct rtnl_link_stats64, rx_fifo_errors) },
	[HT_LS_RX_MISSED_ERRORS] = { "rx_missed_errors",
		                     offsetof(struct rtnl_link_stats64, rx_missed_errors) },
};

/* struct rtnl_link_stats64 of 2.6.35: 23 counters, up to tx_compressed. */
#define STATS64_MIN (23 * sizeof(uint64_t))

const char *ht_link_stat_name(enum ht_link_stat s)
{
	return (unsigned)s < HT_LS_N ? link_stats[s].name : NULL;
}

/* A NUL-terminated string attribute that fits @size bytes with its NUL. */
static int attr_str(const struct nlattr *a, char *out, size_t size)
{
	const char *s;
	size_t len;

	if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
		return -EINVAL;
	s = mnl_attr_get_str(a);
	len = strnlen(s, mnl_attr_get_payload_len(a));
	if (len >= size)
		return -EINVAL;
	memcpy(out, s, len);
	out[len] = '\0';
	return 0;
}

static int attr_u32(const struct nlattr *a, uint32_t *v)
{
	if (!a)
		return 0;
	if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
		return -EINVAL;
	*v = mnl_attr_get_u32(a);
	return 1;
}

/* A u8 flag attribute: 1 when set and non-zero, 0 when zero or absent, -EINVAL when malformed. */
static int attr_u8_on(const struct nlattr *a)
{
	if (!a)
		return 0;
	if (mnl_attr_validate(a, MNL_TYPE_U8) < 0)
		return -EINVAL;
	return mnl_attr_get_u8(a) != 0;
}

/*
 * Whether the overlay sends outer UDP checksums, as vxlan_fill_info() and
 * geneve_fill_info() report it: over IPv4 the UDP_CSUM flag (absent before
 * 3.16: no checksum), over IPv6 unless UDP_ZERO_CSUM6_TX.
 */
static int udp_csum(struct ht_link *l, const struct nlattr *csum4, const struct nlattr *zero6)
{
	int r = l->ipv6 ? attr_u8_on(zero6) : attr_u8_on(csum4);

	if (r < 0)
		return r;
	l->udp_csum = l->ipv6 ? !r : r;
	return 0;
}

/* IFLA_INFO_DATA of a VXLAN or Geneve device: the underlay, the outer family, the checksum. */
static int overlay_data(const struct nlattr *data, struct ht_link *l)
{
	if (l->overlay == HT_OVERLAY_VXLAN) {
		const struct nlattr *tb[IFLA_VXLAN_MAX + 1] = { 0 };
		int r = ht_nl_parse_nested(data, tb, IFLA_VXLAN_MAX);

		if (r < 0 || attr_u32(tb[IFLA_VXLAN_LINK], &l->vxlan_link) < 0)
			return -EINVAL;
		/* vxlan_nl2conf(): an IPv6 group or local address makes the device IPv6. */
		l->ipv6 = tb[IFLA_VXLAN_GROUP6] || tb[IFLA_VXLAN_LOCAL6];
		return udp_csum(l, tb[IFLA_VXLAN_UDP_CSUM], tb[IFLA_VXLAN_UDP_ZERO_CSUM6_TX]);
	}
	if (l->overlay == HT_OVERLAY_GENEVE) {
		const struct nlattr *tb[IFLA_GENEVE_MAX + 1] = { 0 };

		if (ht_nl_parse_nested(data, tb, IFLA_GENEVE_MAX) < 0)
			return -EINVAL;
		l->ipv6 = tb[IFLA_GENEVE_REMOTE6] != NULL;
		return udp_csum(l, tb[IFLA_GENEVE_UDP_CSUM], tb[IFLA_GENEVE_UDP_ZERO_CSUM6_TX]);
	}
	return 0;
}

static int link_info(const struct nlattr *info, struct ht_link *l)
{
	const struct nlattr *tb[IFLA_INFO_MAX + 1] = { 0 };

	if (ht_nl_parse_nested(info, tb, IFLA_INFO_MAX) < 0)
		return -EINVAL;
	if (!tb[IFLA_INFO_KIND])
		return 0;
	if (attr_str(tb[IFLA_INFO_KIND], l->kind, sizeof(l->kind)) < 0)
		return -EINVAL;
	l->overlay = strcmp(l->kind, "vxlan") == 0  ? HT_OVERLAY_VXLAN :
	             strcmp(l->kind, "geneve") == 0 ? HT_OVERLAY_GENEVE :
	                                              HT_OVERLAY_NONE;
	return tb[IFLA_INFO_DATA] ? overlay_data(tb[IFLA_INFO_DATA], l) : 0;
}

int ht_rtnl_link_parse(const struct nlmsghdr *nlh, struct ht_link *l)
{
	const struct nlattr *tb[IFLA_MAX + 1] = { 0 };
	const struct ifinfomsg *ifm;
	int r;

	if (!nlh || !l)
		return -EINVAL;
	*l = (struct ht_link){ 0 };
	if (nlh->nlmsg_type != RTM_NEWLINK)
		return -ENOENT;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifm) ||
	    ht_nl_parse(nlh, sizeof(*ifm), tb, IFLA_MAX) < 0)
		return -EINVAL;
	ifm = mnl_nlmsg_get_payload(nlh);
	l->ifindex = ifm->ifi_index;
	if (tb[IFLA_IFNAME] && attr_str(tb[IFLA_IFNAME], l->name, sizeof(l->name)) < 0)
		return -EINVAL;
	if (tb[IFLA_STATS64]) {
		struct rtnl_link_stats64 st = { 0 };
		size_t len = mnl_attr_get_payload_len(tb[IFLA_STATS64]);

		if (len < STATS64_MIN)
			return -EINVAL;
		memcpy(&st, mnl_attr_get_payload(tb[IFLA_STATS64]), len < sizeof(st) ? len : sizeof(st));
		for (size_t i = 0; i < HT_LS_N; i++)
			memcpy(&l->stats[i], (const char *)&st + link_stats[i].offset, sizeof(uint64_t));
		l->has_stats = true;
	}
	r = attr_u32(tb[IFLA_CARRIER_CHANGES], &l->carrier_changes);
	if (r < 0)
		return r;
	l->has_carrier_changes = r > 0;
	r = attr_u32(tb[IFLA_MTU], &l->mtu);
	if (r < 0)
		return r;
	l->has_mtu = r > 0;
	if (attr_u32(tb[IFLA_LINK], &l->link) < 0)
		return -EINVAL;
	return tb[IFLA_LINKINFO] ? link_info(tb[IFLA_LINKINFO], l) : 0;
}

unsigned ht_overlay_headroom(const struct ht_link *l)
{
	return l->ipv6 ? HT_OVERLAY_HEADROOM_V6 : HT_OVERLAY_HEADROOM_V4;
}

/* ---- /proc/net/softnet_stat ---- */

/* One "%08x" column: 1 to 8 hex digits. Advances *@pp. */
static int hex32(const char **pp, uint32_t *out)
{
	const char *p = *pp;
	uint32_t v = 0;
	int n = 0;

	for (;; p++, n++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0' :
		        *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 :
		        *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 :
		                                 -1;

		if (d < 0)
			break;
		if (n == 8)
			return -EINVAL;
		v = v << 4 | (uint32_t)d;
	}
	if (n == 0)
		return -EINVAL;
	*pp = p;
	*out = v;
	return 0;
}

/* Columns of softnet_seq_show() (net/core/net-procfs.c), from 0. */
enum { SN_PROCESSED, SN_DROPPED, SN_TIME_SQUEEZE, SN_CPU = 12, SN_MIN = 9, SN_MAX = 32 };

int ht_softnet_parse(const char *text, struct ht_softnet *s, unsigned *line)
{
	return ht_softnet_parse_rows(text, s, line, NULL, NULL);
}

int ht_softnet_parse_rows(const char *text, struct ht_softnet *s, unsigned *line,
                          ht_softnet_row_fn row, void *data)
{
	unsigned lineno = 0;
	int64_t prev_cpu = -1;

	if (!text || !s)
		return -EINVAL;
	*s = (struct ht_softnet){ .worst_cpu = -1 };
	for (const char *p = text; *p;) {
		uint32_t col[SN_MAX];
		unsigned n = 0;
		int64_t cpu;

		lineno++;
		if (line)
			*line = lineno;
		while (n < SN_MAX) {
			if (hex32(&p, &col[n]) < 0)
				return -EINVAL;
			n++;
			if (*p != ' ')
				break;
			p++;
		}
		if (*p == '\n')
			p++;
		else if (*p)
			return -EINVAL;
		if (n < SN_MIN)
			return -EINVAL;
		if (lineno == 1)
			s->cpu_column = n > SN_CPU;
		else if (s->cpu_column != (n > SN_CPU))
			return -EINVAL;
		cpu = s->cpu_column ? (int64_t)col[SN_CPU] : (int64_t)lineno - 1;
		if (cpu <= prev_cpu)
			return -EINVAL;
		prev_cpu = cpu;
		if (row) {
			int r = row(data, cpu, col[SN_PROCESSED], col[SN_DROPPED], col[SN_TIME_SQUEEZE]);

			if (r < 0)
				return r;
		}
		s->processed += col[SN_PROCESSED];
		s->dropped += col[SN_DROPPED];
		s->time_squeeze += col[SN_TIME_SQUEEZE];
		s->rows++;
		if (s->worst_cpu < 0 || col[SN_DROPPED] > s->worst_dropped ||
		    (col[SN_DROPPED] == s->worst_dropped &&
		     col[SN_TIME_SQUEEZE] > s->worst_time_squeeze)) {
			s->worst_cpu = cpu;
			s->worst_dropped = col[SN_DROPPED];
			s->worst_time_squeeze = col[SN_TIME_SQUEEZE];
			s->worst_processed = col[SN_PROCESSED];
		}
	}
	if (line)
		*line = lineno ? lineno : 1;
	return s->rows ? 0 : -EINVAL;
}

/* ---- ethtool: STRSET and FEATURES replies ---- */

/* The attributes of a generic netlink reply of @family/@cmd into @tb; -ESRCH for another. */
static int genl_reply(const struct nlmsghdr *nlh, uint16_t family, uint8_t cmd,
                      const struct nlattr **tb, uint16_t max)
{
	const struct genlmsghdr *g;

	if (!nlh || nlh->nlmsg_type != family ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*g))
		return -ESRCH;
	g = mnl_nlmsg_get_payload(nlh);
	if (g->cmd != cmd)
		return -ESRCH;
	return ht_nl_parse(nlh, sizeof(*g), tb, max);
}

/* The index of @want in one ETHTOOL_A_STRINGSETS_STRINGSET of set @set, or -ENOENT. */
static int stringset_index(const struct nlattr *ss, uint32_t set, const char *want)
{
	const struct nlattr *tb[ETHTOOL_A_STRINGSET_MAX + 1] = { 0 };
	const struct nlattr *a;
	uint32_t id;

	if (ht_nl_parse_nested(ss, tb, ETHTOOL_A_STRINGSET_MAX) < 0 ||
	    attr_u32(tb[ETHTOOL_A_STRINGSET_ID], &id) < 0)
		return -EINVAL;
	if (!tb[ETHTOOL_A_STRINGSET_ID] || id != set || !tb[ETHTOOL_A_STRINGSET_STRINGS])
		return -ENOENT;
	mnl_attr_for_each_nested(a, tb[ETHTOOL_A_STRINGSET_STRINGS]) {
		const struct nlattr *st[ETHTOOL_A_STRING_MAX + 1] = { 0 };
		uint32_t index;

		if (mnl_attr_get_type(a) != ETHTOOL_A_STRINGS_STRING)
			continue;
		if (ht_nl_parse_nested(a, st, ETHTOOL_A_STRING_MAX) < 0 ||
		    attr_u32(st[ETHTOOL_A_STRING_INDEX], &index) <= 0 || !st[ETHTOOL_A_STRING_VALUE] ||
		    mnl_attr_validate(st[ETHTOOL_A_STRING_VALUE], MNL_TYPE_NUL_STRING) < 0)
			return -EINVAL;
		if (strcmp(mnl_attr_get_str(st[ETHTOOL_A_STRING_VALUE]), want) == 0)
			return index > INT32_MAX ? -EINVAL : (int)index;
	}
	return -ENOENT;
}

int ht_ethnl_strset_index(const struct nlmsghdr *nlh, uint16_t family, uint32_t set,
                          const char *want)
{
	const struct nlattr *tb[ETHTOOL_A_STRSET_MAX + 1] = { 0 };
	const struct nlattr *a;
	int r;

	if (!want)
		return -EINVAL;
	r = genl_reply(nlh, family, ETHTOOL_MSG_STRSET_GET_REPLY, tb, ETHTOOL_A_STRSET_MAX);
	if (r < 0)
		return r;
	if (!tb[ETHTOOL_A_STRSET_STRINGSETS])
		return -ENOENT;
	mnl_attr_for_each_nested(a, tb[ETHTOOL_A_STRSET_STRINGSETS]) {
		if (mnl_attr_get_type(a) != ETHTOOL_A_STRINGSETS_STRINGSET)
			continue;
		r = stringset_index(a, set, want);
		if (r != -ENOENT)
			return r;
	}
	return -ENOENT;
}

/* Bit @bit of one bitset attribute (Documentation/networking/ethtool-netlink.rst, "Bit sets"). */
static int bitset_bit(const struct nlattr *nest, uint32_t bit, bool *out)
{
	const struct nlattr *tb[ETHTOOL_A_BITSET_MAX + 1] = { 0 };
	const struct nlattr *a;
	uint32_t size = 0;
	bool nomask;

	*out = false;
	if (!nest)
		return 0;
	if (ht_nl_parse_nested(nest, tb, ETHTOOL_A_BITSET_MAX) < 0 ||
	    attr_u32(tb[ETHTOOL_A_BITSET_SIZE], &size) < 0)
		return -EINVAL;
	nomask = tb[ETHTOOL_A_BITSET_NOMASK] != NULL;
	if (tb[ETHTOOL_A_BITSET_VALUE]) {
		/* Compact: SIZE bits in 32-bit words of host order. */
		size_t words = size / 32 + (size % 32 != 0);
		uint32_t w;

		if (mnl_attr_get_payload_len(tb[ETHTOOL_A_BITSET_VALUE]) < words * sizeof(uint32_t))
			return -EINVAL;
		if (bit >= size)
			return 0;
		memcpy(&w, (const char *)mnl_attr_get_payload(tb[ETHTOOL_A_BITSET_VALUE]) +
		                   (bit / 32) * sizeof(uint32_t), sizeof(w));
		*out = (w >> (bit % 32)) & 1;
		return 0;
	}
	if (!tb[ETHTOOL_A_BITSET_BITS])
		return 0;
	/* Verbose: the bits listed by index; in a list (NOMASK) a listed bit is set. */
	mnl_attr_for_each_nested(a, tb[ETHTOOL_A_BITSET_BITS]) {
		const struct nlattr *b[ETHTOOL_A_BITSET_BIT_MAX + 1] = { 0 };
		uint32_t index;

		if (mnl_attr_get_type(a) != ETHTOOL_A_BITSET_BITS_BIT)
			continue;
		if (ht_nl_parse_nested(a, b, ETHTOOL_A_BITSET_BIT_MAX) < 0 ||
		    attr_u32(b[ETHTOOL_A_BITSET_BIT_INDEX], &index) <= 0)
			return -EINVAL;
		if (index == bit)
			*out = nomask || b[ETHTOOL_A_BITSET_BIT_VALUE];
	}
	return 0;
}

int ht_ethnl_features_bit(const struct nlmsghdr *nlh, uint16_t family, uint32_t bit,
                          struct ht_features *out)
{
	const struct nlattr *tb[ETHTOOL_A_FEATURES_MAX + 1] = { 0 };
	int r;

	if (!out)
		return -EINVAL;
	*out = (struct ht_features){ 0 };
	r = genl_reply(nlh, family, ETHTOOL_MSG_FEATURES_GET_REPLY, tb, ETHTOOL_A_FEATURES_MAX);
	if (r < 0)
		return r;
	if (bitset_bit(tb[ETHTOOL_A_FEATURES_HW], bit, &out->hw) < 0 ||
	    bitset_bit(tb[ETHTOOL_A_FEATURES_WANTED], bit, &out->wanted) < 0 ||
	    bitset_bit(tb[ETHTOOL_A_FEATURES_ACTIVE], bit, &out->active) < 0 ||
	    bitset_bit(tb[ETHTOOL_A_FEATURES_NOCHANGE], bit, &out->nochange) < 0)
		return -EINVAL;
	out->seen = true;
	return 0;
}
