/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "collect/collect.h"
#include "collect/netdev.h"
#include "collect/sample.h"
#include "engine/facts.h"
#include "engine/value.h"
#include "shared/util.h"
#include "test-util.h"

/*
 * The interface parsers (collect/netdev.h) on messages built here with
 * libmnl as the kernel lays them out, and the counters of the nic-counters
 * fixture tree collected under --root (the sysfs files and softnet_stat).
 * The live rtnetlink and ethtool paths are tests/netns-overlay.sh's.
 */

#define FAMILY 0x1d

static char buf[8192];

/* An RTM_NEWLINK message of ifindex @index in buf. */
static struct nlmsghdr *link_msg(int index)
{
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifm;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_index = index;
	return nlh;
}

static void test_link_vxlan(void **state)
{
	struct rtnl_link_stats64 st = { 0 };
	struct nlmsghdr *nlh = link_msg(7);
	struct nlattr *info, *data;
	struct ht_link l;
	uint8_t addr6[16] = { 0xfd, [15] = 2 };

	(void)state;
	st.rx_packets = 1000;
	st.tx_packets = 900;
	st.rx_errors = 12;
	st.rx_crc_errors = 10;
	st.rx_frame_errors = 2;
	st.rx_missed_errors = 3;
	st.tx_dropped = 4;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "vx9");
	mnl_attr_put_u32(nlh, IFLA_MTU, 8950);
	mnl_attr_put(nlh, IFLA_STATS64, sizeof(st), &st);
	mnl_attr_put_u32(nlh, IFLA_CARRIER_CHANGES, 3);
	/* An attribute past IFLA_MAX (a newer kernel's) is skipped. */
	mnl_attr_put_u32(nlh, IFLA_MAX + 5, 1);
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "vxlan");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	mnl_attr_put_u32(nlh, IFLA_VXLAN_LINK, 4);
	mnl_attr_put(nlh, IFLA_VXLAN_GROUP6, sizeof(addr6), addr6);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);

	assert_int_equal(ht_rtnl_link_parse(nlh, &l), 0);
	assert_int_equal(l.ifindex, 7);
	assert_string_equal(l.name, "vx9");
	assert_true(l.has_mtu);
	assert_int_equal(l.mtu, 8950);
	assert_true(l.has_stats);
	assert_int_equal(l.stats[HT_LS_RX_PACKETS], 1000);
	assert_int_equal(l.stats[HT_LS_TX_PACKETS], 900);
	assert_int_equal(l.stats[HT_LS_RX_ERRORS], 12);
	assert_int_equal(l.stats[HT_LS_RX_CRC_ERRORS], 10);
	assert_int_equal(l.stats[HT_LS_RX_FRAME_ERRORS], 2);
	assert_int_equal(l.stats[HT_LS_RX_MISSED_ERRORS], 3);
	assert_int_equal(l.stats[HT_LS_TX_DROPPED], 4);
	assert_true(l.has_carrier_changes);
	assert_int_equal(l.carrier_changes, 3);
	assert_string_equal(l.kind, "vxlan");
	assert_int_equal(l.overlay, HT_OVERLAY_VXLAN);
	assert_int_equal(l.vxlan_link, 4);
	assert_true(l.ipv6);
	/* Over IPv6 without UDP_ZERO_CSUM6_TX the outer UDP checksum is sent. */
	assert_true(l.udp_csum);
	/* Over IPv6: 40 + 8 + 8 + 14 = 70 bytes. */
	assert_int_equal(ht_overlay_headroom(&l), 70);
	assert_string_equal(ht_link_stat_name(HT_LS_RX_CRC_ERRORS), "rx_crc_errors");
	assert_null(ht_link_stat_name(HT_LS_N));
}

static void test_link_variants(void **state)
{
	uint64_t old[23] = { 5, 6 }; /* 2.6.35's struct: rx_packets 5, tx_packets 6 */
	struct nlmsghdr *nlh;
	struct nlattr *info;
	struct ht_link l;

	(void)state;
	/* A veth: IFLA_LINK (the peer), no overlay; the old stats layout is read. */
	nlh = link_msg(3);
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "va");
	mnl_attr_put(nlh, IFLA_STATS64, sizeof(old), old);
	mnl_attr_put_u32(nlh, IFLA_LINK, 4);
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
	mnl_attr_nest_end(nlh, info);
	assert_int_equal(ht_rtnl_link_parse(nlh, &l), 0);
	assert_int_equal(l.overlay, HT_OVERLAY_NONE);
	assert_int_equal(l.link, 4);
	assert_int_equal(l.stats[HT_LS_RX_PACKETS], 5);
	assert_int_equal(l.stats[HT_LS_TX_PACKETS], 6);
	assert_false(l.has_carrier_changes);
	assert_false(l.has_mtu);
	/* Over IPv4: 20 + 8 + 8 + 14 = 50 bytes. */
	assert_int_equal(ht_overlay_headroom(&l), 50);

	/* Counters shorter than 23: no struct any kernel sent. */
	nlh = link_msg(3);
	mnl_attr_put(nlh, IFLA_STATS64, 22 * 8, old);
	assert_int_equal(ht_rtnl_link_parse(nlh, &l), -EINVAL);

	/* A name of IFNAMSIZ bytes without room for its NUL. */
	nlh = link_msg(3);
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "0123456789abcdef");
	assert_int_equal(ht_rtnl_link_parse(nlh, &l), -EINVAL);

	/* An MTU of the wrong size. */
	nlh = link_msg(3);
	mnl_attr_put_u16(nlh, IFLA_MTU, 1500);
	assert_int_equal(ht_rtnl_link_parse(nlh, &l), -EINVAL);

	/* An attribute whose length runs past the message. */
	nlh = link_msg(3);
	mnl_attr_put_u32(nlh, IFLA_MTU, 1500);
	nlh->nlmsg_len -= 2;
	assert_int_equal(ht_rtnl_link_parse(nlh, &l), -EINVAL);

	/* Another message type; a message without its ifinfomsg. */
	nlh = link_msg(3);
	nlh->nlmsg_type = RTM_NEWADDR;
	assert_int_equal(ht_rtnl_link_parse(nlh, &l), -ENOENT);
	nlh = link_msg(3);
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + 4;
	assert_int_equal(ht_rtnl_link_parse(nlh, &l), -EINVAL);
}

/* ---- softnet_stat ---- */

static void test_softnet(void **state)
{
	/*
	 * 5.10+: 13 columns, CPU 1 offline. processed 0x1e240 + 0xf4240 =
	 * 123456 + 1000000 = 1123456; dropped 0 + 0x3e8 = 1000; squeeze
	 * 0x10 + 0x64 = 16 + 100 = 116; the worst row is CPU 2's.
	 */
	static const char v13[] =
		"0001e240 00000000 00000010 00000000 00000000 00000000 00000000 00000000 00000000 "
		"00000000 00000000 00000000 00000000\n"
		"000f4240 000003e8 00000064 00000000 00000000 00000000 00000000 00000000 00000000 "
		"00000000 00000000 00000000 00000002\n";
	/* 3.11 - 5.9: 11 columns; rows count CPUs from 0. Drops tie: more squeeze wins. */
	static const char v11[] =
		"00000010 00000005 00000001 00000000 00000000 00000000 00000000 00000000 00000000 "
		"00000000 00000000\n"
		"00000020 00000005 00000009 00000000 00000000 00000000 00000000 00000000 00000000 "
		"00000000 00000000\n"
		"ffffffff 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 "
		"00000000 00000000";
	/* Since 6.x: 15 columns (input and process queue lengths appended). */
	static const char v15[] =
		"00000006 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 "
		"00000000 00000000 00000000 00000000 00000000 00000000\n"
		"00000705 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 "
		"00000000 00000000 00000000 00000001 00000000 00000000\n";
	struct ht_softnet s;
	unsigned line;

	(void)state;
	assert_int_equal(ht_softnet_parse(v13, &s, &line), 0);
	assert_int_equal(s.rows, 2);
	assert_true(s.cpu_column);
	assert_int_equal(s.processed, 1123456);
	assert_int_equal(s.dropped, 1000);
	assert_int_equal(s.time_squeeze, 116);
	assert_int_equal(s.worst_cpu, 2);
	assert_int_equal(s.worst_dropped, 1000);
	assert_int_equal(s.worst_time_squeeze, 100);
	assert_int_equal(s.worst_processed, 1000000);

	/* 0x10 + 0x20 + 0xffffffff = 16 + 32 + 4294967295 = 4294967343: no 32-bit wrap in the sum. */
	assert_int_equal(ht_softnet_parse(v11, &s, &line), 0);
	assert_false(s.cpu_column);
	assert_int_equal(s.rows, 3);
	assert_int_equal(s.processed, 4294967343ULL);
	assert_int_equal(s.dropped, 10);
	assert_int_equal(s.worst_cpu, 1);
	assert_int_equal(s.worst_time_squeeze, 9);

	assert_int_equal(ht_softnet_parse(v15, &s, &line), 0);
	assert_int_equal(s.processed, 6 + 0x705);
	/* No drops, no squeeze anywhere: the lowest CPU. */
	assert_int_equal(s.worst_cpu, 0);

	/* Not a row: 8 columns, a 9-digit column, a letter, mixed layouts, CPUs out of order. */
	assert_int_equal(ht_softnet_parse("1 2 3 4 5 6 7 8\n", &s, &line), -EINVAL);
	assert_int_equal(line, 1);
	assert_int_equal(ht_softnet_parse("1 2 3 4 5 6 7 8 9\n1 2 3 4 5 6 7 8 123456789\n", &s,
	                                  &line),
	                 -EINVAL);
	assert_int_equal(line, 2);
	assert_int_equal(ht_softnet_parse("1 2 3 4 5 6 7 8 g\n", &s, &line), -EINVAL);
	assert_int_equal(ht_softnet_parse("1 2 3 4 5 6 7 8 9\n1 2 3 4 5 6 7 8 9 a b c 1\n", &s,
	                                  &line),
	                 -EINVAL);
	assert_int_equal(ht_softnet_parse("1 2 3 4 5 6 7 8 9 a b c 3\n1 2 3 4 5 6 7 8 9 a b c 1\n",
	                                  &s, &line),
	                 -EINVAL);
	assert_int_equal(ht_softnet_parse("", &s, &line), -EINVAL);
	assert_int_equal(ht_softnet_parse("1  2 3 4 5 6 7 8 9\n", &s, &line), -EINVAL);
}

/* ---- ethtool replies ---- */

static struct nlmsghdr *genl_msg(uint8_t cmd)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = FAMILY;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	return nlh;
}

static void put_string(struct nlmsghdr *nlh, uint32_t index, const char *s)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, ETHTOOL_A_STRINGS_STRING);

	mnl_attr_put_u32(nlh, ETHTOOL_A_STRING_INDEX, index);
	mnl_attr_put_strz(nlh, ETHTOOL_A_STRING_VALUE, s);
	mnl_attr_nest_end(nlh, n);
}

static struct nlmsghdr *strset_msg(uint32_t id)
{
	struct nlmsghdr *nlh = genl_msg(ETHTOOL_MSG_STRSET_GET_REPLY);
	struct nlattr *sets = mnl_attr_nest_start(nlh, ETHTOOL_A_STRSET_STRINGSETS);
	struct nlattr *set = mnl_attr_nest_start(nlh, ETHTOOL_A_STRINGSETS_STRINGSET);
	struct nlattr *strings;

	mnl_attr_put_u32(nlh, ETHTOOL_A_STRINGSET_ID, id);
	mnl_attr_put_u32(nlh, ETHTOOL_A_STRINGSET_COUNT, 3);
	strings = mnl_attr_nest_start(nlh, ETHTOOL_A_STRINGSET_STRINGS);
	put_string(nlh, 0, "tx-scatter-gather");
	put_string(nlh, 25, "tx-gre-segmentation");
	put_string(nlh, 26, "tx-udp_tnl-segmentation");
	mnl_attr_nest_end(nlh, strings);
	mnl_attr_nest_end(nlh, set);
	mnl_attr_nest_end(nlh, sets);
	return nlh;
}

static void test_strset(void **state)
{
	struct nlmsghdr *nlh;

	(void)state;
	nlh = strset_msg(ETH_SS_FEATURES);
	assert_int_equal(ht_ethnl_strset_index(nlh, FAMILY, ETH_SS_FEATURES,
	                                       "tx-udp_tnl-segmentation"),
	                 26);
	assert_int_equal(ht_ethnl_strset_index(nlh, FAMILY, ETH_SS_FEATURES, "rx-gro-hw"), -ENOENT);
	assert_int_equal(ht_ethnl_strset_index(nlh, FAMILY + 1, ETH_SS_FEATURES, "x"), -ESRCH);
	nlh = strset_msg(ETH_SS_STATS);
	assert_int_equal(ht_ethnl_strset_index(nlh, FAMILY, ETH_SS_FEATURES,
	                                       "tx-udp_tnl-segmentation"),
	                 -ENOENT);
}

/* A compact bitset @attr of @size bits with the 64-bit @value (two words). */
static void put_bitset(struct nlmsghdr *nlh, uint16_t attr, uint32_t size, uint64_t value,
                       size_t words)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, attr);
	uint32_t w[2] = { (uint32_t)value, (uint32_t)(value >> 32) };

	mnl_attr_put(nlh, ETHTOOL_A_BITSET_NOMASK, 0, NULL);
	mnl_attr_put_u32(nlh, ETHTOOL_A_BITSET_SIZE, size);
	mnl_attr_put(nlh, ETHTOOL_A_BITSET_VALUE, words * 4, w);
	mnl_attr_nest_end(nlh, n);
}

static void test_features(void **state)
{
	struct nlmsghdr *nlh;
	struct nlattr *n, *bits, *bit;
	struct ht_features ft;

	(void)state;
	/* tx-udp_tnl-segmentation (26) changeable and wanted, but off: as after ethtool -K off. */
	nlh = genl_msg(ETHTOOL_MSG_FEATURES_GET_REPLY);
	put_bitset(nlh, ETHTOOL_A_FEATURES_HW, 64, 1ULL << 26 | 1, 2);
	put_bitset(nlh, ETHTOOL_A_FEATURES_WANTED, 64, 1, 2);
	put_bitset(nlh, ETHTOOL_A_FEATURES_ACTIVE, 64, 1, 2);
	put_bitset(nlh, ETHTOOL_A_FEATURES_NOCHANGE, 64, 1ULL << 40, 2);
	assert_int_equal(ht_ethnl_features_bit(nlh, FAMILY, 26, &ft), 0);
	assert_true(ft.seen);
	assert_true(ft.hw);
	assert_false(ft.wanted);
	assert_false(ft.active);
	assert_false(ft.nochange);
	assert_int_equal(ht_ethnl_features_bit(nlh, FAMILY, 40, &ft), 0);
	assert_true(ft.nochange);
	/* Past SIZE: clear. */
	assert_int_equal(ht_ethnl_features_bit(nlh, FAMILY, 64, &ft), 0);
	assert_false(ft.hw || ft.active || ft.nochange || ft.wanted);

	/* A value shorter than SIZE says: 64 bits in one word. */
	nlh = genl_msg(ETHTOOL_MSG_FEATURES_GET_REPLY);
	put_bitset(nlh, ETHTOOL_A_FEATURES_ACTIVE, 64, 1, 1);
	assert_int_equal(ht_ethnl_features_bit(nlh, FAMILY, 26, &ft), -EINVAL);

	/* Verbose: bits by index; in a list (NOMASK) a listed bit is set. */
	nlh = genl_msg(ETHTOOL_MSG_FEATURES_GET_REPLY);
	n = mnl_attr_nest_start(nlh, ETHTOOL_A_FEATURES_ACTIVE);
	mnl_attr_put(nlh, ETHTOOL_A_BITSET_NOMASK, 0, NULL);
	mnl_attr_put_u32(nlh, ETHTOOL_A_BITSET_SIZE, 64);
	bits = mnl_attr_nest_start(nlh, ETHTOOL_A_BITSET_BITS);
	bit = mnl_attr_nest_start(nlh, ETHTOOL_A_BITSET_BITS_BIT);
	mnl_attr_put_u32(nlh, ETHTOOL_A_BITSET_BIT_INDEX, 26);
	mnl_attr_put_strz(nlh, ETHTOOL_A_BITSET_BIT_NAME, "tx-udp_tnl-segmentation");
	mnl_attr_nest_end(nlh, bit);
	mnl_attr_nest_end(nlh, bits);
	mnl_attr_nest_end(nlh, n);
	assert_int_equal(ht_ethnl_features_bit(nlh, FAMILY, 26, &ft), 0);
	assert_true(ft.active);
	assert_false(ft.hw);

	/* Another command. */
	nlh = genl_msg(ETHTOOL_MSG_CHANNELS_GET_REPLY);
	assert_int_equal(ht_ethnl_features_bit(nlh, FAMILY, 26, &ft), -ESRCH);
}

/* ---- the fixture tree ---- */


static void assert_int_fact(const struct ht_facts *f, const char *name, int64_t want,
                            const char *unit)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	if (fact->value.type != HT_T_INT)
		fail_msg("%s: not an integer (error %d, source %s)", name, fact->error,
		         fact->source ? fact->source : "-");
	if (fact->value.i != want)
		fail_msg("%s = %lld, expected %lld", name, (long long)fact->value.i, (long long)want);
	ht_test_assert_str_or_null(fact->unit, unit);
}

static void test_fixture(void **state)
{
	_cleanup_free_ char *root = NULL;
	struct ht_facts *f = ht_facts_new();
	const struct ht_fact *fact;

	(void)state;
	assert_non_null(f);
	assert_true(asprintf(&root, "%s/nic-counters/root", ht_test_fixtures_dir()) > 0);
	assert_int_equal(ht_collect_udev(f, root), 0);
	assert_int_equal(ht_collect_nicstats(f, root), 0);
	assert_int_equal(ht_collect_overlay(f, root), 0);
	assert_int_equal(ht_collect_softnet(f, root), 0);
	assert_int_equal(ht_collect_uptime(f, root), 0);

	assert_string_equal(ht_test_fact(f, "nic.list")->value.s, "eth0 eth1 vxlan0");
	assert_int_fact(f, "nic.eth1.stats.rx_packets", 2000000, "packets");
	assert_int_fact(f, "nic.eth1.stats.rx_errors", 1234, "packets");
	assert_int_fact(f, "nic.eth1.stats.rx_crc_errors", 1200, "packets");
	assert_int_fact(f, "nic.eth1.stats.rx_frame_errors", 34, "packets");
	assert_int_fact(f, "nic.eth1.stats.rx_missed_errors", 66, "packets");
	assert_int_fact(f, "nic.eth1.stats.carrier_changes", 7, "changes");
	assert_int_fact(f, "nic.eth1.mtu", 9000, "bytes");
	fact = ht_test_fact(f, "nic.eth1.stats.rx_crc_errors");
	assert_string_equal(fact->source, "/sys/class/net/eth1/statistics/rx_crc_errors");
	assert_int_fact(f, "nic.eth0.stats.rx_errors", 0, "packets");
	assert_string_equal(ht_test_fact(f, "nic.eth0.overlay")->value.s, "none");
	assert_string_equal(ht_test_fact(f, "nic.vxlan0.overlay")->value.s, "vxlan");
	assert_int_equal(ht_test_fact(f, "nic.vxlan0.underlay")->error, ENOENT);

	/* softnet_stat: the sums of test_softnet's v13, the same rows. */
	assert_int_fact(f, "softnet.processed", 1123456, "packets");
	assert_int_fact(f, "softnet.dropped", 1000, "packets");
	assert_int_fact(f, "softnet.time_squeeze", 116, "times");
	assert_int_fact(f, "softnet.cpus", 2, "CPUs");
	assert_int_fact(f, "softnet.worst_cpu", 2, NULL);
	assert_int_fact(f, "softnet.worst_cpu.dropped", 1000, "packets");
	/* /proc/uptime "11532.47 ...": 11532 s = 3 h 12 min 12 s. */
	assert_int_fact(f, "host.uptime", 11532, "seconds");
	ht_facts_free(f);
}

/* A statistics file that holds no counter, and a softnet_stat that does not parse. */
static void test_bad_tree(void **state)
{
	_cleanup_free_ char *dir = ht_test_tmp_dir("netdev");
	struct ht_facts *f = ht_facts_new();
	const struct ht_fact *fact;

	(void)state;
	ht_test_put_file(dir, "sys/class/net/eth0/type", "1");
	ht_test_put_file(dir, "sys/class/net/eth0/statistics/rx_packets", "-5");
	ht_test_put_file(dir, "sys/class/net/eth0/statistics/tx_packets", "18446744073709551615");
	ht_test_put_file(dir, "proc/net/softnet_stat", "00000001 00000002\n");
	assert_int_equal(ht_collect_udev(f, dir), 0);
	assert_int_equal(ht_collect_nicstats(f, dir), 0);
	assert_int_equal(ht_collect_softnet(f, dir), 0);
	assert_int_equal(ht_test_fact(f, "nic.eth0.stats.rx_packets")->error, EINVAL);
	/* 2^64 - 1 does not fit a fact (int64). */
	assert_int_equal(ht_test_fact(f, "nic.eth0.stats.tx_packets")->error, ERANGE);
	assert_int_equal(ht_test_fact(f, "nic.eth0.stats.rx_errors")->error, ENOENT);
	fact = ht_test_fact(f, "softnet.dropped");
	assert_int_equal(fact->error, EINVAL);
	assert_string_equal(fact->source,
	                    "/proc/net/softnet_stat:1: expected a row of hexadecimal columns");
	ht_facts_free(f);
	ht_test_rm_tree(dir);
}

/* A VXLAN over IPv4 with and without UDP_CSUM, a Geneve over IPv6 with zero checksums. */
static void test_link_csum(void **state)
{
	struct nlmsghdr *nlh;
	struct nlattr *info, *data;
	struct ht_link l;

	(void)state;
	for (int on = 0; on < 2; on++) {
		nlh = link_msg(5);
		info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
		mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "vxlan");
		data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
		mnl_attr_put_u8(nlh, IFLA_VXLAN_UDP_CSUM, (uint8_t)on);
		mnl_attr_nest_end(nlh, data);
		mnl_attr_nest_end(nlh, info);
		assert_int_equal(ht_rtnl_link_parse(nlh, &l), 0);
		assert_false(l.ipv6);
		assert_int_equal(l.udp_csum, on);
	}
	nlh = link_msg(6);
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "geneve");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	mnl_attr_put(nlh, IFLA_GENEVE_REMOTE6, 16, (uint8_t[16]){ 0xfd });
	mnl_attr_put_u8(nlh, IFLA_GENEVE_UDP_ZERO_CSUM6_TX, 1);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);
	assert_int_equal(ht_rtnl_link_parse(nlh, &l), 0);
	assert_int_equal(l.overlay, HT_OVERLAY_GENEVE);
	assert_true(l.ipv6);
	assert_false(l.udp_csum);
	/* A flag of the wrong size. */
	nlh = link_msg(6);
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "vxlan");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	mnl_attr_put_u32(nlh, IFLA_VXLAN_UDP_CSUM, 1);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);
	assert_int_equal(ht_rtnl_link_parse(nlh, &l), -EINVAL);
}

/* Two readings of softnet_stat: sums and the worst CPU over the interval. */
static void test_softnet_interval(void **state)
{
	struct ht_snapshot a = { 0 }, b = { 0 };
	struct ht_facts *f = ht_facts_new();
	const struct ht_fact *fact;

	(void)state;
	assert_non_null(f);
	/*
	 * CPU 0: processed 0xfffffff0 -> 0x10 (wrapped: 0x10 + 0x10 = 32 more),
	 * dropped 500 -> 500 (none new); CPU 3: processed 100 -> 300, dropped
	 * 0 -> 7. Over the interval: processed 32 + 200 = 232, dropped 0 + 7 = 7;
	 * the worst CPU over it is 3, though CPU 0 has more drops since boot.
	 */
	assert_int_equal(ht_snapshot_add(&a, "softnet.cpus", 2, NULL), 0);
	assert_int_equal(ht_snapshot_add(&a, "softnet.cpu.0.processed", 0xfffffff0u, NULL), 0);
	assert_int_equal(ht_snapshot_add(&a, "softnet.cpu.0.dropped", 500, NULL), 0);
	assert_int_equal(ht_snapshot_add(&a, "softnet.cpu.0.time_squeeze", 1, NULL), 0);
	assert_int_equal(ht_snapshot_add(&a, "softnet.cpu.3.processed", 100, NULL), 0);
	assert_int_equal(ht_snapshot_add(&a, "softnet.cpu.3.dropped", 0, NULL), 0);
	assert_int_equal(ht_snapshot_add(&a, "softnet.cpu.3.time_squeeze", 0, NULL), 0);
	assert_int_equal(ht_snapshot_add(&b, "softnet.cpus", 2, NULL), 0);
	assert_int_equal(ht_snapshot_add(&b, "softnet.cpu.0.processed", 0x10, NULL), 0);
	assert_int_equal(ht_snapshot_add(&b, "softnet.cpu.0.dropped", 500, NULL), 0);
	assert_int_equal(ht_snapshot_add(&b, "softnet.cpu.0.time_squeeze", 1, NULL), 0);
	assert_int_equal(ht_snapshot_add(&b, "softnet.cpu.3.processed", 300, NULL), 0);
	assert_int_equal(ht_snapshot_add(&b, "softnet.cpu.3.dropped", 7, NULL), 0);
	assert_int_equal(ht_snapshot_add(&b, "softnet.cpu.3.time_squeeze", 2, NULL), 0);
	assert_int_equal(ht_softnet_facts(f, &a, &b, 10), 0);

	/* Since boot: 0x10 + 300 = 316 processed, 500 + 7 = 507 dropped. */
	assert_int_fact(f, "softnet.processed", 316, "packets");
	assert_int_fact(f, "softnet.dropped", 507, "packets");
	assert_int_fact(f, "softnet.processed.delta", 232, "packets");
	assert_int_fact(f, "softnet.dropped.delta", 7, "packets");
	assert_int_fact(f, "softnet.time_squeeze.delta", 2, "times");
	assert_int_fact(f, "softnet.worst_cpu", 3, NULL);
	assert_int_fact(f, "softnet.worst_cpu.dropped", 7, "packets");
	assert_int_fact(f, "softnet.worst_cpu.dropped.delta", 7, "packets");
	assert_int_fact(f, "softnet.worst_cpu.processed.delta", 200, "packets");
	fact = ht_test_fact(f, "softnet.dropped.delta");
	assert_non_null(strstr(fact->source, "over --sample's 10 s"));
	ht_snapshot_clear(&a);
	ht_snapshot_clear(&b);
	ht_facts_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_link_vxlan),    cmocka_unit_test(test_link_variants),
		cmocka_unit_test(test_softnet),       cmocka_unit_test(test_strset),
		cmocka_unit_test(test_features),      cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_bad_tree),     cmocka_unit_test(test_link_csum),
		cmocka_unit_test(test_softnet_interval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
