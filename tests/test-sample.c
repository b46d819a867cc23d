/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
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
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>

#include "collect/collect.h"
#include "collect/sample.h"
#include "engine/facts.h"
#include "shared/util.h"
#include "engine/value.h"
#include "test-util.h"

/*
 * Counters over an interval (collect/sample.c, snapshot.c) and the TCP
 * peers (collect-peers.c): snapshots, C.delta from two readings, the
 * tcp_info and inet_diag parsers, and the per-peer sums with connections
 * that stayed, closed and opened between the readings. The live dump is
 * tests/netns-path.sh's.
 */

static void assert_int_fact(const struct ht_facts *f, const char *name, int64_t want)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	if (fact->value.type != HT_T_INT)
		fail_msg("%s: not an integer (error %d, source %s)", name, fact->error,
		         fact->source ? fact->source : "-");
	if (fact->value.i != want)
		fail_msg("%s = %lld, expected %lld", name, (long long)fact->value.i, (long long)want);
}

static void assert_dec_fact(const struct ht_facts *f, const char *name, double want)
{
	const struct ht_fact *fact = ht_test_fact(f, name);
	double v = fact->value.type == HT_T_INT ? (double)fact->value.i : fact->value.d;

	if (!ht_type_is_number(fact->value.type) || v < want - 1e-6 || v > want + 1e-6)
		fail_msg("%s = %g, expected %g", name, v, want);
}

static void assert_unavailable(const struct ht_facts *f, const char *name, int err)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	assert_int_equal(fact->value.type, HT_T_NONE);
	assert_int_equal(fact->error, err);
}

static void test_snapshot(void **state)
{
	struct ht_snapshot s = { 0 };
	const struct ht_counter *c;

	(void)state;
	assert_int_equal(ht_snapshot_add(&s, "nstat.b", 2, "src b"), 0);
	assert_int_equal(ht_snapshot_add(&s, "nstat.a", 1, NULL), 0);
	assert_int_equal(ht_snapshot_add_error(&s, "nstat.c", -ENOENT, "why"), 0);
	c = ht_snapshot_find(&s, "nstat.a");
	assert_non_null(c);
	assert_int_equal(c->value, 1);
	assert_null(c->source);
	c = ht_snapshot_find(&s, "nstat.c");
	assert_int_equal(c->error, ENOENT);
	assert_string_equal(c->source, "why");
	assert_null(ht_snapshot_find(&s, "nstat.d"));
	ht_snapshot_clear(&s);
	assert_int_equal(s.n, 0);
	assert_null(ht_snapshot_find(&s, "nstat.a"));
}

static void test_default_facts(void **state)
{
	struct ht_snapshot a = { 0 }, b = { 0 };
	struct ht_facts *f = ht_facts_new();

	(void)state;
	/* First reading, then 10 s later the second. */
	ht_snapshot_add(&a, "nstat.TcpRetransSegs", 100, "snmp");
	ht_snapshot_add(&a, "nstat.TcpOutSegs", 5000, "snmp");
	ht_snapshot_add(&a, "nstat.TcpExtTW", 70, "netstat");            /* goes back */
	ht_snapshot_add_error(&a, "nstat.TcpExtListenDrops", ENOENT, "netstat");
	ht_snapshot_add(&b, "nstat.TcpRetransSegs", 160, "snmp");
	ht_snapshot_add(&b, "nstat.TcpOutSegs", 8000, "snmp");
	ht_snapshot_add(&b, "nstat.TcpExtTW", 3, "netstat");
	ht_snapshot_add(&b, "nstat.TcpExtListenDrops", 4, "netstat");
	ht_snapshot_add(&b, "nstat.TcpActiveOpens", 9, "snmp");           /* not in the first */
	ht_snapshot_add(&b, "nstat.TcpPassiveOpens", UINT64_MAX, "snmp"); /* beyond int64 */

	/* Without --sample: the counters, no C.delta. */
	assert_int_equal(ht_sample_facts_default(f, NULL, &b, 0), 0);
	assert_int_fact(f, "nstat.TcpRetransSegs", 160);
	assert_null(ht_facts_get(f, "nstat.TcpRetransSegs.delta"));
	assert_unavailable(f, "nstat.TcpPassiveOpens", ERANGE);

	/* With it: 160 - 100 = 60, 8000 - 5000 = 3000; C stays the second reading. */
	assert_int_equal(ht_sample_facts_default(f, &a, &b, 10), 0);
	assert_int_fact(f, "nstat.TcpRetransSegs", 160);
	assert_int_fact(f, "nstat.TcpRetransSegs.delta", 60);
	assert_int_fact(f, "nstat.TcpOutSegs.delta", 3000);
	assert_string_equal(ht_test_fact(f, "nstat.TcpOutSegs.delta")->source,
	                    "snmp, over --sample's 10 s");
	assert_string_equal(ht_test_fact(f, "nstat.TcpOutSegs.delta")->unit, "segments");
	/* 70 -> 3: a reset counter, no increase to tell. */
	assert_unavailable(f, "nstat.TcpExtTW.delta", ESTALE);
	/* Unreadable in the first reading: its errno. */
	assert_unavailable(f, "nstat.TcpExtListenDrops.delta", ENOENT);
	assert_int_fact(f, "nstat.TcpExtListenDrops", 4);
	assert_unavailable(f, "nstat.TcpActiveOpens.delta", ENOENT);
	ht_snapshot_clear(&a);
	ht_snapshot_clear(&b);
	ht_facts_free(f);
}

static void test_fact_defs(void **state)
{
	(void)state;
	assert_true(ht_fact_has_delta("nstat.TcpRetransSegs"));
	assert_true(ht_fact_has_delta("peer.10.5.5.20.retrans"));
	assert_true(ht_fact_has_delta("peer.fd00--1.segs_out"));
	assert_false(ht_fact_has_delta("peer.10.5.5.20.rtt"));
	assert_false(ht_fact_has_delta("nstat.TcpRetransSegs.delta"));
	assert_false(ht_fact_has_delta("listener.22.backlog"));
	assert_string_equal(ht_fact_def_find("nstat.TcpRetransSegs.delta")->unit, "segments");
	assert_string_equal(ht_fact_def_find("peer.10.5.5.20.retrans.delta")->name, "peer.*.retrans");
	assert_string_equal(ht_fact_def_find("peer.*.segs_out.delta")->name, "peer.*.segs_out");
	assert_null(ht_fact_def_find("peer.10.5.5.20.rtt.delta"));
	assert_null(ht_fact_def_find("nstat.TcpRetransSegs.delta.delta"));
	assert_string_equal(ht_fact_def_find("sample.seconds")->unit, "seconds");
}

/* A struct tcp_info of @len bytes as a kernel of that size sends it. */
static void test_tcp_info(void **state)
{
	struct tcp_info ti = { 0 };
	struct ht_tcp_sample t;

	(void)state;
	ti.tcpi_state = 1;
	ti.tcpi_total_retrans = 1466;
	ti.tcpi_rtt = 30000;
	ti.tcpi_segs_out = 29000;
	ti.tcpi_min_rtt = 8000;
	ti.tcpi_delivery_rate = 12500000;
	assert_int_equal(ht_tcp_info_parse(&ti, sizeof(ti), &t), 0);
	assert_int_equal(t.total_retrans, 1466);
	assert_int_equal(t.segs_out, 29000);
	assert_int_equal(t.rtt_us, 30000);
	assert_int_equal(t.min_rtt_us, 8000);
	assert_int_equal(t.delivery_rate, 12500000);
	assert_true(t.has_segs && t.has_min_rtt && t.has_delivery_rate);
	/* A 3.x kernel's struct ends at tcpi_total_retrans (104 bytes): no segs_out. */
	assert_int_equal(ht_tcp_info_parse(&ti, offsetof(struct tcp_info, tcpi_pacing_rate), &t), 0);
	assert_int_equal(t.total_retrans, 1466);
	assert_false(t.has_segs || t.has_min_rtt || t.has_delivery_rate);
	assert_int_equal(t.segs_out, 0);
	/* 4.6 to 4.8: min_rtt, no delivery_rate. */
	assert_int_equal(ht_tcp_info_parse(&ti, offsetof(struct tcp_info, tcpi_data_segs_in), &t), 0);
	assert_true(t.has_segs && t.has_min_rtt);
	assert_false(t.has_delivery_rate);
	/* Longer than this build knows: the rest ignored. */
	{
		char big[sizeof(ti) + 64];

		memset(big, 0xff, sizeof(big));
		memcpy(big, &ti, sizeof(ti));
		assert_int_equal(ht_tcp_info_parse(big, sizeof(big), &t), 0);
		assert_int_equal(t.segs_out, 29000);
	}
	/* No RTT sample yet: tcpi_min_rtt is ~0U. */
	ti.tcpi_min_rtt = UINT32_MAX;
	assert_int_equal(ht_tcp_info_parse(&ti, sizeof(ti), &t), 0);
	assert_false(t.has_min_rtt);
	assert_int_equal(ht_tcp_info_parse(&ti, offsetof(struct tcp_info, tcpi_total_retrans), &t),
	                 -EINVAL);
	assert_int_equal(ht_tcp_info_parse(NULL, sizeof(ti), &t), -EINVAL);
}

/* One SOCK_DIAG_BY_FAMILY reply in @buf: AF_INET, @state, with tcp_info when @info. */
static struct nlmsghdr *diag_msg(char *buf, uint8_t state, bool info, uint32_t cookie)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct inet_diag_msg *m;
	struct tcp_info ti = { .tcpi_total_retrans = 7, .tcpi_segs_out = 700, .tcpi_rtt = 900 };

	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	m = mnl_nlmsg_put_extra_header(nlh, sizeof(*m));
	m->idiag_family = AF_INET;
	m->idiag_state = state;
	m->id.idiag_sport = htons(40000);
	m->id.idiag_dport = htons(3900);
	inet_pton(AF_INET, "10.0.0.1", m->id.idiag_src);
	inet_pton(AF_INET, "10.5.5.20", m->id.idiag_dst);
	m->id.idiag_cookie[0] = cookie;
	m->id.idiag_cookie[1] = 1;
	if (info)
		mnl_attr_put(nlh, INET_DIAG_INFO, sizeof(ti), &ti);
	return nlh;
}

static void test_diag_parse(void **state)
{
	static char buf[8192] __attribute__((aligned(8)));
	struct ht_peer_sock s;
	struct nlmsghdr *nlh;
	char name[64], addr[64];

	(void)state;
	nlh = diag_msg(buf, 1, true, 42);
	assert_int_equal(ht_peer_diag_parse(nlh, &s), 0);
	assert_int_equal(s.cookie, 42 | (uint64_t)1 << 32);
	assert_int_equal(s.sport, 40000);
	assert_int_equal(s.dport, 3900);
	assert_int_equal(s.info.total_retrans, 7);
	assert_int_equal(s.info.segs_out, 700);
	ht_peer_name(s.dst, name, sizeof(name), addr, sizeof(addr));
	assert_string_equal(name, "10.5.5.20");
	assert_string_equal(addr, "10.5.5.20");
	/* Not established (TIME_WAIT), no tcp_info: skipped. */
	assert_int_equal(ht_peer_diag_parse(diag_msg(buf, 6, true, 1), &s), 1);
	assert_int_equal(ht_peer_diag_parse(diag_msg(buf, 1, false, 1), &s), 1);
	/* Cut inside the header, or inside the attribute. */
	nlh = diag_msg(buf, 1, false, 1);
	nlh->nlmsg_len = sizeof(*nlh) + 8;
	assert_int_equal(ht_peer_diag_parse(nlh, &s), -EBADMSG);
	nlh = diag_msg(buf, 1, true, 1);
	nlh->nlmsg_len -= 40;
	assert_int_equal(ht_peer_diag_parse(nlh, &s), -EBADMSG);
	/* Another message type: skipped. */
	nlh = diag_msg(buf, 1, true, 1);
	nlh->nlmsg_type = NLMSG_NOOP;
	assert_int_equal(ht_peer_diag_parse(nlh, &s), 1);
	/* An IPv6 peer: '-' for ':' in its instance name. */
	{
		uint8_t a6[16];

		inet_pton(AF_INET6, "fd00::7", a6);
		ht_peer_name(a6, name, sizeof(name), addr, sizeof(addr));
		assert_string_equal(name, "fd00--7");
		assert_string_equal(addr, "fd00::7");
	}
}

static struct ht_peer_sock sock(uint64_t cookie, const char *dst, uint32_t retrans,
                                uint32_t segs, uint32_t rtt, uint32_t min_rtt)
{
	struct ht_peer_sock s = { .cookie = cookie, .sport = (uint16_t)(40000 + cookie),
		                  .dport = 3900 };
	uint8_t v4[4];

	inet_pton(AF_INET, dst, v4);
	memset(s.dst, 0, 10);
	s.dst[10] = s.dst[11] = 0xff;
	memcpy(s.dst + 12, v4, 4);
	s.info = (struct ht_tcp_sample){ .state = 1, .total_retrans = retrans, .segs_out = segs,
		                         .rtt_us = rtt, .min_rtt_us = min_rtt, .has_segs = true,
		                         .has_min_rtt = min_rtt > 0 };
	return s;
}

static void test_peers_facts(void **state)
{
	struct ht_snapshot a = { 0 }, b = { 0 };
	struct ht_facts *f = ht_facts_new();
	struct ht_peer_sock s;

	(void)state;
	/* First reading: 1 and 2 to A, 3 to B, 7 to A (its cookie comes back for B). */
	s = sock(1, "10.0.0.1", 10, 1000, 10000, 8000), ht_peers_snapshot_add(&a, &s);
	s = sock(2, "10.0.0.1", 5, 500, 10000, 8000), ht_peers_snapshot_add(&a, &s);
	s = sock(3, "10.0.0.2", 7, 700, 5000, 4000), ht_peers_snapshot_add(&a, &s);
	s = sock(7, "10.0.0.1", 9, 900, 5000, 4000), ht_peers_snapshot_add(&a, &s);
	/* Second: 1 stayed, 2 and 3 closed, 4 and 5 opened, 6 sent nothing, cookie 7 reused. */
	s = sock(1, "10.0.0.1", 30, 3000, 10000, 8000), ht_peers_snapshot_add(&b, &s);
	s = sock(4, "10.0.0.1", 3, 100, 40000, 9000), ht_peers_snapshot_add(&b, &s);
	s = sock(5, "10.0.0.2", 1, 1000, 2000, 0), ht_peers_snapshot_add(&b, &s);
	s = sock(6, "10.0.0.3", 0, 0, 0, 0), ht_peers_snapshot_add(&b, &s);
	s = sock(7, "10.0.0.2", 2, 200, 2000, 1500), ht_peers_snapshot_add(&b, &s);
	assert_int_equal(ht_peers_facts(f, &a, &b, 5), 0);
	/* 10.0.0.3 sent no segment: not a peer to judge. */
	assert_string_equal(ht_test_fact(f, "peer.list")->value.s, "10.0.0.1 10.0.0.2");
	/* A: sockets 1 and 4. Since open 30 + 3 = 33 of 3000 + 100 = 3100; over the
	 * interval 1 grew by 20 of 2000 and 4 is new: 23 of 2100. */
	assert_int_fact(f, "peer.10.0.0.1.connections", 2);
	assert_int_fact(f, "peer.10.0.0.1.retrans", 33);
	assert_int_fact(f, "peer.10.0.0.1.segs_out", 3100);
	assert_int_fact(f, "peer.10.0.0.1.retrans.delta", 23);
	assert_int_fact(f, "peer.10.0.0.1.segs_out.delta", 2100);
	/* RTT weighted by segments: (10000 x 3000 + 40000 x 100) / 3100 us = 10.967741... ms. */
	assert_dec_fact(f, "peer.10.0.0.1.rtt", (10000.0 * 3000 + 40000.0 * 100) / 3100 / 1000);
	assert_dec_fact(f, "peer.10.0.0.1.min_rtt", 8.0);
	/* B: 5 new (1 of 1000), 7 a new socket whose cookie A's had (2 of 200): 3 of 1200. */
	assert_int_fact(f, "peer.10.0.0.2.retrans.delta", 3);
	assert_int_fact(f, "peer.10.0.0.2.segs_out.delta", 1200);
	assert_dec_fact(f, "peer.10.0.0.2.min_rtt", 1.5);
	assert_string_equal(ht_test_fact(f, "peer.10.0.0.2.address")->value.s, "10.0.0.2");
	ht_facts_free(f);

	/* Without --sample: no .delta facts. */
	f = ht_facts_new();
	assert_int_equal(ht_peers_facts(f, NULL, &b, 0), 0);
	assert_int_fact(f, "peer.10.0.0.1.retrans", 33);
	assert_null(ht_facts_get(f, "peer.10.0.0.1.retrans.delta"));
	ht_facts_free(f);
	ht_snapshot_clear(&a);
	ht_snapshot_clear(&b);

	/* No connection at all: an empty list. A reading that failed: its errno. */
	f = ht_facts_new();
	assert_int_equal(ht_peers_snapshot("/nonexistent-root", &a), 0);
	assert_int_equal(ht_peers_facts(f, NULL, &a, 0), 0);
	assert_unavailable(f, "peer.list", ENOENT);
	ht_snapshot_clear(&a);
	s = sock(1, "10.0.0.3", 0, 0, 0, 0), ht_peers_snapshot_add(&a, &s);
	assert_int_equal(ht_peers_facts(f, NULL, &a, 0), 0);
	assert_string_equal(ht_test_fact(f, "peer.list")->value.s, "");
	ht_snapshot_clear(&a);
	ht_facts_free(f);
}

/* The two readings of --sample below a tree whose counters move between them. */
static void test_sampler(void **state)
{
	char *root = ht_test_tmp_dir("sampler");
	struct ht_sampler *s = NULL;
	struct ht_facts *f = ht_facts_new();
	const struct ht_fact *sec;

	(void)state;
	ht_test_put_file(root, "/proc/net/snmp", "Tcp: RetransSegs OutSegs\nTcp: 5 100\n");
	ht_test_put_file(root, "/proc/net/netstat", "TcpExt: TW\nTcpExt: 40\n");
	assert_int_equal(ht_sampler_new(root, &s), 0);
	/* What a rule reads, the FAMILY.SUFFIX form included; nothing else is sampled. */
	assert_true(ht_sampler_want(s, "nstat.TcpRetransSegs.delta"));
	assert_false(ht_sampler_want(s, "listener.backlog"));
	assert_int_equal(ht_sampler_start(s, 0), -EINVAL);
	assert_int_equal(ht_sampler_start(s, 0.02), 0);
	assert_int_equal(ht_sampler_start(s, 0.02), -EINVAL);
	/* Between the readings: 12 retransmitted of 1100 sent; TW went back (a reset). */
	ht_test_put_file(root, "/proc/net/snmp", "Tcp: RetransSegs OutSegs\nTcp: 17 1200\n");
	ht_test_put_file(root, "/proc/net/netstat", "TcpExt: TW\nTcpExt: 2\n");
	assert_int_equal(ht_sampler_collect(s, f, "nope"), -ENOENT);
	assert_int_equal(ht_sampler_collect(s, f, "nstat"), 0);
	/* 17 - 5 = 12, 1200 - 100 = 1100; the counters are the second reading. */
	assert_int_fact(f, "nstat.TcpRetransSegs.delta", 12);
	assert_int_fact(f, "nstat.TcpOutSegs.delta", 1100);
	assert_int_fact(f, "nstat.TcpRetransSegs", 17);
	assert_unavailable(f, "nstat.TcpExtTW.delta", ESTALE);
	assert_int_equal(ht_sampler_seconds_fact(s, f), 0);
	sec = ht_test_fact(f, "sample.seconds");
	assert_true(sec->value.type == HT_T_DEC && sec->value.d >= 0.02 && sec->value.d < 1);
	/* A counter the source does not give: ENOENT with --sample. */
	assert_int_equal(ht_sampler_no_delta(s, f, "nstat.TcpActiveOpens.delta"), 0);
	assert_unavailable(f, "nstat.TcpActiveOpens.delta", ENOENT);
	ht_sampler_free(s);
	ht_facts_free(f);

	/* Without --sample: one reading, sample.seconds and C.delta ENODATA. */
	f = ht_facts_new();
	assert_int_equal(ht_sampler_new(root, &s), 0);
	assert_int_equal(ht_sampler_collect(s, f, "nstat"), 0);
	assert_int_fact(f, "nstat.TcpRetransSegs", 17);
	assert_null(ht_facts_get(f, "nstat.TcpRetransSegs.delta"));
	assert_int_equal(ht_sampler_no_delta(s, f, "nstat.TcpRetransSegs.delta"), 0);
	assert_unavailable(f, "nstat.TcpRetransSegs.delta", ENODATA);
	assert_int_equal(ht_sampler_no_delta(s, f, "listener.22.backlog.delta"), 0);
	assert_null(ht_facts_get(f, "listener.22.backlog.delta"));
	assert_int_equal(ht_sampler_seconds_fact(s, f), 0);
	assert_unavailable(f, "sample.seconds", ENODATA);
	/* The peers below a tree: not read (live host only). */
	assert_int_equal(ht_sampler_collect(s, f, "tcp peers"), 0);
	assert_unavailable(f, "peer.list", ENOENT);
	ht_sampler_free(s);
	ht_facts_free(f);
	ht_test_rm_tree(root);
	free(root);
}

static void test_uptime(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(ht_uptime_seconds("11520.93 40000.10\n", &v), 0);
	assert_int_equal(v, 11520);
	assert_int_equal(ht_uptime_seconds("x 1\n", &v), -EINVAL);
	assert_int_equal(ht_uptime_seconds("-5.00 1\n", &v), -EINVAL);
	assert_int_equal(ht_uptime_seconds("", &v), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshot),    cmocka_unit_test(test_default_facts),
		cmocka_unit_test(test_fact_defs),   cmocka_unit_test(test_tcp_info),
		cmocka_unit_test(test_diag_parse),  cmocka_unit_test(test_peers_facts),
		cmocka_unit_test(test_sampler),     cmocka_unit_test(test_uptime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
