/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The TCP peer parsers (collect/collect-peers.c): ht_tcp_info_parse() given
 * the whole input as an INET_DIAG_INFO payload, and ht_peer_diag_parse()
 * given it as one SOCK_DIAG_BY_FAMILY reply (nlmsg_len set to the input's
 * length, the type forced by the first byte half the time, so that the
 * inet_diag body and its attributes are what varies); then the per-peer
 * facts (ht_peers_facts()) of a reading holding the parsed connection.
 *
 * Properties: tcp_info parses exactly when it reaches tcpi_total_retrans,
 * each field found is the input's bytes at its offset and present exactly
 * when the input is long enough to hold it; a reply parses to 0 (an
 * established AF_INET or AF_INET6 socket with tcp_info), 1 (skipped) or
 * -EBADMSG, and the socket's ports, cookie and counters are the input's;
 * two readings of the same connection give an increase of 0 and since-open
 * counts equal to the connection's; a peer's instance name is a valid fact
 * name (the facts were set) and holds no ':'.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>

#include "collect/collect.h"
#include "collect/sample.h"
#include "engine/facts.h"
#include "shared/util.h"

#include "fuzz-common.h"

#define END(f) (offsetof(struct tcp_info, f) + sizeof(((struct tcp_info *)0)->f))

/* The u32 at @off of @data, 0 when the input ends before it. */
static uint32_t u32_at(const uint8_t *data, size_t size, size_t off)
{
	uint32_t v = 0;

	if (off + 4 <= size)
		memcpy(&v, data + off, 4);
	return v;
}

static void check_tcp_info(const uint8_t *data, size_t size)
{
	struct ht_tcp_sample t;
	int r = ht_tcp_info_parse(data, size, &t);

	FZ_CHECK((r == 0) == (size >= END(tcpi_total_retrans)), "tcp_info of %zu bytes: %d", size, r);
	if (r < 0)
		return;
	FZ_CHECK(t.total_retrans == u32_at(data, size, offsetof(struct tcp_info, tcpi_total_retrans)),
	         "total_retrans is not the input's");
	FZ_CHECK(t.rtt_us == u32_at(data, size, offsetof(struct tcp_info, tcpi_rtt)), "rtt");
	FZ_CHECK(t.has_segs == (size >= END(tcpi_segs_out)), "has_segs at %zu bytes", size);
	FZ_CHECK(!t.has_segs || t.segs_out == u32_at(data, size, offsetof(struct tcp_info,
	                                                                   tcpi_segs_out)),
	         "segs_out is not the input's");
	FZ_CHECK(t.has_segs || t.segs_out == 0, "segs_out without the field");
	FZ_CHECK(t.has_delivery_rate == (size >= END(tcpi_delivery_rate)), "has_delivery_rate");
	FZ_CHECK(!t.has_min_rtt || (t.min_rtt_us != 0 && t.min_rtt_us != UINT32_MAX &&
	                            size >= END(tcpi_min_rtt)),
	         "min_rtt %u taken", t.min_rtt_us);
}

static void check_peers(const struct ht_peer_sock *s)
{
	struct ht_snapshot a = { 0 }, b = { 0 };
	struct ht_facts *f = ht_facts_new();
	char name[64], addr[64], fact[128];
	const struct ht_fact *list, *x;

	FZ_CHECK(f, "out of memory");
	FZ_CHECK(ht_peers_snapshot_add(&a, s) == 0 && ht_peers_snapshot_add(&b, s) == 0, "add");
	FZ_CHECK(ht_peers_facts(f, &a, &b, 1) == 0, "peer facts of one connection");
	ht_peer_name(s->dst, name, sizeof(name), addr, sizeof(addr));
	FZ_CHECK(!strchr(name, ':'), "instance name '%s' has a ':'", name);
	list = ht_facts_get(f, "peer.list");
	FZ_CHECK(list && list->value.type == HT_T_STR, "no peer.list");
	if (s->info.has_segs && s->info.segs_out == 0) {
		FZ_CHECK(strcmp(list->value.s, "") == 0, "a peer nothing was sent to is listed");
	} else {
		FZ_CHECK(strcmp(list->value.s, name) == 0, "peer.list '%s', expected '%s'",
		         list->value.s, name);
		snprintf(fact, sizeof(fact), "peer.%s.retrans.delta", name);
		x = ht_facts_get(f, fact);
		FZ_CHECK(x && x->value.type == HT_T_INT && x->value.i == 0,
		         "the same connection twice: an increase");
		snprintf(fact, sizeof(fact), "peer.%s.retrans", name);
		x = ht_facts_get(f, fact);
		FZ_CHECK(x && x->value.type == HT_T_INT && x->value.i == s->info.total_retrans,
		         "retrans is not the connection's");
		snprintf(fact, sizeof(fact), "peer.%s.address", name);
		x = ht_facts_get(f, fact);
		FZ_CHECK(x && x->value.type == HT_T_STR && strcmp(x->value.s, addr) == 0, "address");
	}
	ht_snapshot_clear(&a);
	ht_snapshot_clear(&b);
	ht_facts_free(f);
}

static void check_diag(const uint8_t *data, size_t size)
{
	static uint8_t buf[65536 + 64] __attribute__((aligned(8)));
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	const struct inet_diag_msg *m = (const struct inet_diag_msg *)(buf + NLMSG_HDRLEN);
	struct ht_peer_sock s;
	int r;

	if (size < sizeof(*nlh) || size > 65536)
		return;
	memcpy(buf, data, size);
	nlh->nlmsg_len = (uint32_t)size;
	if (data[0] & 1)
		nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	r = ht_peer_diag_parse(nlh, &s);
	FZ_CHECK(r == 0 || r == 1 || r == -EBADMSG, "diag parse returned %d", r);
	if (r != 0)
		return;
	FZ_CHECK(nlh->nlmsg_type == SOCK_DIAG_BY_FAMILY && size >= NLMSG_HDRLEN + sizeof(*m),
	         "a message too short or of another type parsed");
	FZ_CHECK(m->idiag_state == 1 && (m->idiag_family == AF_INET || m->idiag_family == AF_INET6),
	         "state %u family %u parsed", m->idiag_state, m->idiag_family);
	FZ_CHECK(s.sport == ntohs(m->id.idiag_sport) && s.dport == ntohs(m->id.idiag_dport),
	         "ports are not the input's");
	FZ_CHECK(s.cookie == ((uint64_t)m->id.idiag_cookie[0] |
	                      (uint64_t)m->id.idiag_cookie[1] << 32), "cookie");
	check_peers(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	fz_guard_begin(NULL, false);
	check_tcp_info(data, size);
	check_diag(data, size);
	fz_guard_end();
	return 0;
}
