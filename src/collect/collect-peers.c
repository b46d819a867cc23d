/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * TCP per peer: this network namespace's established connections with
 * their tcp_info (one NETLINK_SOCK_DIAG dump a family with INET_DIAG_INFO,
 * net/ipv4/inet_diag.c), folded per remote address into retransmitted and
 * sent segments, RTT and min RTT. A sampled source (collect/sample.h):
 * with --sample, the segments over the interval come from the connections
 * seen in both readings plus those opened between them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>

#include "collect/collect.h"
#include "collect/sample.h"
#include "engine/facts.h"
#include "shared/netlink.h"
#include "shared/rootfs.h"
#include "shared/util.h"

#define SRC_PEERS "NETLINK_SOCK_DIAG inet_diag INET_DIAG_INFO (tcp_info)"
#define TCP_ESTABLISHED_STATE 1

/* ---- parsers ---- */

/* The end of field @f of struct tcp_info: a reply at least this long has it. */
#define TI_END(f) (offsetof(struct tcp_info, f) + sizeof(((struct tcp_info *)0)->f))

int ht_tcp_info_parse(const void *data, size_t len, struct ht_tcp_sample *out)
{
	struct tcp_info ti;

	if (!data || !out)
		return -EINVAL;
	/* Before 2.6.x's tcpi_total_retrans there is nothing to judge. */
	if (len < TI_END(tcpi_total_retrans))
		return -EINVAL;
	memset(&ti, 0, sizeof(ti));
	/* An older kernel sends less, a newer one more: what both know. */
	memcpy(&ti, data, len < sizeof(ti) ? len : sizeof(ti));
	*out = (struct ht_tcp_sample){ 0 };
	out->state = ti.tcpi_state;
	out->total_retrans = ti.tcpi_total_retrans;
	out->rtt_us = ti.tcpi_rtt;
	out->has_segs = len >= TI_END(tcpi_segs_out);
	out->segs_out = out->has_segs ? ti.tcpi_segs_out : 0;
	/* tcp_get_info() gives ~0U before the first RTT sample (tcp_min_rtt()). */
	out->has_min_rtt = len >= TI_END(tcpi_min_rtt) && ti.tcpi_min_rtt != UINT32_MAX &&
	                   ti.tcpi_min_rtt != 0;
	out->min_rtt_us = out->has_min_rtt ? ti.tcpi_min_rtt : 0;
	out->has_delivery_rate = len >= TI_END(tcpi_delivery_rate);
	out->delivery_rate = out->has_delivery_rate ? ti.tcpi_delivery_rate : 0;
	return 0;
}

/* The 16-byte form of an IPv4 address: ::ffff:a.b.c.d. */
static void map_v4(uint8_t out[16], const void *v4)
{
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, v4, 4);
}

static int info_attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	uint16_t type = mnl_attr_get_type(a);

	/* Unknown attributes (newer kernels) are ignored. */
	if (type == INET_DIAG_INFO)
		tb[type] = a;
	return MNL_CB_OK;
}

int ht_peer_diag_parse(const struct nlmsghdr *nlh, struct ht_peer_sock *out)
{
	const struct nlattr *tb[INET_DIAG_INFO + 1] = { 0 };
	const struct inet_diag_msg *m;
	int r;

	if (!nlh || !out || nlh->nlmsg_len < sizeof(*nlh))
		return -EINVAL;
	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return 1;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*m))
		return -EBADMSG;
	m = mnl_nlmsg_get_payload(nlh);
	*out = (struct ht_peer_sock){ 0 };
	if (m->idiag_family == AF_INET) {
		map_v4(out->src, m->id.idiag_src);
		map_v4(out->dst, m->id.idiag_dst);
	} else if (m->idiag_family == AF_INET6) {
		memcpy(out->src, m->id.idiag_src, 16);
		memcpy(out->dst, m->id.idiag_dst, 16);
	} else {
		return 1;
	}
	if (m->idiag_state != TCP_ESTABLISHED_STATE)
		return 1;
	out->sport = ntohs(m->id.idiag_sport);
	out->dport = ntohs(m->id.idiag_dport);
	out->cookie = (uint64_t)m->id.idiag_cookie[0] | (uint64_t)m->id.idiag_cookie[1] << 32;
	if (mnl_attr_parse(nlh, sizeof(*m), info_attr_cb, tb) < 0)
		return -EBADMSG;
	/* mnl_attr_parse() stops at an attribute cut short: a message cut inside one is bad. */
	{
		const struct nlattr *a;
		size_t used = MNL_ALIGN(sizeof(*nlh)) + MNL_ALIGN(sizeof(*m));

		mnl_attr_for_each(a, nlh, sizeof(*m))
			used += MNL_ALIGN(a->nla_len);
		if (used < nlh->nlmsg_len)
			return -EBADMSG;
	}
	/* Without tcp_info (a socket closing under the dump) there is nothing to count. */
	if (!tb[INET_DIAG_INFO])
		return 1;
	r = ht_tcp_info_parse(mnl_attr_get_payload(tb[INET_DIAG_INFO]),
	                      mnl_attr_get_payload_len(tb[INET_DIAG_INFO]), &out->info);
	return r < 0 ? -EBADMSG : 0;
}

/* ---- the reading ---- */

/* What one reading keeps: the connections, or why there are none. */
struct peer_reading {
	struct ht_peer_sock *v;
	size_t n, cap;
	int error;          /* 0, or a positive errno: no dump */
	const char *why;    /* static text with error */
};

static void reading_free(void *p)
{
	struct peer_reading *pr = p;

	if (pr)
		free(pr->v);
	free(pr);
}

/* 127.0.0.0/8 (as ::ffff:127.x here), ::1, and the unspecified address. */
static bool is_local(const uint8_t a[16])
{
	static const uint8_t v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t lo6[16] = { [15] = 1 }, any[16] = { 0 };

	return (memcmp(a, v4, 12) == 0 && a[12] == 127) || memcmp(a, lo6, 16) == 0 ||
	       memcmp(a, any, 16) == 0;
}

/* Appends @s to @pr. 0 or -ENOMEM. */
static int reading_add(struct peer_reading *pr, const struct ht_peer_sock *s)
{
	if (pr->n == pr->cap) {
		size_t cap = pr->cap ? pr->cap * 2 : 256;
		struct ht_peer_sock *v = reallocarray(pr->v, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		pr->v = v;
		pr->cap = cap;
	}
	pr->v[pr->n++] = *s;
	return 0;
}

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct peer_reading *pr = data;
	struct ht_peer_sock s;
	int r = ht_peer_diag_parse(nlh, &s);

	if (r == 0 && !is_local(s.dst))
		r = reading_add(pr, &s);
	if (r < 0) {
		errno = -r;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

int ht_peers_snapshot_add(struct ht_snapshot *s, const struct ht_peer_sock *sock)
{
	if (!s->priv) {
		if (!(s->priv = calloc(1, sizeof(struct peer_reading))))
			return -ENOMEM;
		s->priv_free = reading_free;
	}
	return reading_add(s->priv, sock);
}

static int dump_family(struct mnl_socket *nl, char *buf, uint8_t family, struct peer_reading *pr)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct inet_diag_req_v2 *d;

	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = (unsigned)time(NULL) + family;
	d = mnl_nlmsg_put_extra_header(nlh, sizeof(*d));
	d->sdiag_family = family;
	d->sdiag_protocol = IPPROTO_TCP;
	d->idiag_ext = 1u << (INET_DIAG_INFO - 1);
	/* Established connections only: the kernel skips the rest of the hash. */
	d->idiag_states = 1u << TCP_ESTABLISHED_STATE;
	return ht_nl_request(nl, nlh, buf, HT_NL_DUMP_BUF_SIZE, dump_cb, pr, NULL);
}

static int dump_peers(struct peer_reading *pr)
{
	_cleanup_(ht_nl_closep) struct mnl_socket *nl = NULL;
	_cleanup_free_ char *buf = malloc(HT_NL_DUMP_BUF_SIZE);
	int r;

	if (!buf)
		return -ENOMEM;
	r = ht_nl_open(NETLINK_SOCK_DIAG, &nl);
	if (r >= 0)
		r = dump_family(nl, buf, AF_INET, pr);
	if (r >= 0) {
		r = dump_family(nl, buf, AF_INET6, pr);
		/* A kernel without IPv6: inet_diag has no handler for the family. */
		if (r == -ENOENT || r == -EAFNOSUPPORT)
			r = 0;
	}
	return r;
}

int ht_peers_snapshot(const char *root, struct ht_snapshot *s)
{
	struct peer_reading *pr = calloc(1, sizeof(*pr));
	int r;

	if (!pr)
		return -ENOMEM;
	s->priv = pr;
	s->priv_free = reading_free;
	if (!ht_root_is_live(root)) {
		pr->error = ENOENT;
		pr->why = SRC_PEERS ": the live host only (not read below --root)";
		return 0;
	}
	r = dump_peers(pr);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		free(pr->v);
		pr->v = NULL;
		pr->n = 0;
		pr->error = -r;
		pr->why = SRC_PEERS;
	}
	return 0;
}

/* ---- facts ---- */

static int sock_dst_cmp(const void *a, const void *b)
{
	const struct ht_peer_sock *x = a, *y = b;
	int c = memcmp(x->dst, y->dst, 16);

	return c ? c : (x->cookie > y->cookie) - (x->cookie < y->cookie);
}

static int sock_cookie_cmp(const void *a, const void *b)
{
	const struct ht_peer_sock *x = a, *y = b;

	return (x->cookie > y->cookie) - (x->cookie < y->cookie);
}

void ht_peer_name(const uint8_t a[16], char *name, size_t size, char *address, size_t asize)
{
	static const uint8_t v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	char buf[INET6_ADDRSTRLEN];

	if (memcmp(a, v4, 12) == 0)
		inet_ntop(AF_INET, a + 12, buf, sizeof(buf));
	else
		inet_ntop(AF_INET6, a, buf, sizeof(buf));
	if (address)
		snprintf(address, asize, "%s", buf);
	for (char *p = buf; *p; p++)
		if (*p == ':')
			*p = '-';
	snprintf(name, size, "%s", buf);
}

/* The same connection in the first reading: same cookie and addresses. */
static const struct ht_peer_sock *earlier(const struct peer_reading *first,
                                          const struct ht_peer_sock *s)
{
	const struct ht_peer_sock *p;

	if (!first || !first->n)
		return NULL;
	p = bsearch(s, first->v, first->n, sizeof(*s), sock_cookie_cmp);
	if (!p || memcmp(p->dst, s->dst, 16) || memcmp(p->src, s->src, 16) ||
	    p->sport != s->sport || p->dport != s->dport)
		return NULL;
	return p;
}

/* The counts of one peer. */
struct peer_sum {
	uint64_t conns, retrans, segs, d_retrans, d_segs, rtt_weight, min_rtt, rate;
	double rtt_weighted, rtt_sum; /* microseconds (x segments): no overflow of a sum */
	bool have_segs, have_min_rtt, have_rate;
};

static int set_peer(struct ht_facts *f, const char *name, const char *suffix, int64_t v,
                    const char *source)
{
	char fact[128];

	snprintf(fact, sizeof(fact), "peer.%s.%s", name, suffix);
	return ht_facts_set_int(f, fact, v, ht_fact_def_unit(fact), source);
}

static int set_peer_dec(struct ht_facts *f, const char *name, const char *suffix, double v,
                        const char *source)
{
	char fact[128];

	snprintf(fact, sizeof(fact), "peer.%s.%s", name, suffix);
	return ht_facts_set_dec(f, fact, v, ht_fact_def_unit(fact), source);
}

static int peer_facts(struct ht_facts *f, const char *name, const char *address,
                      const struct peer_sum *p, bool sampled, double seconds)
{
	char fact[128], src[160];
	int r;

	snprintf(fact, sizeof(fact), "peer.%s.address", name);
	r = ht_facts_set_str(f, fact, address, SRC_PEERS);
	if (r >= 0)
		r = set_peer(f, name, "connections", (int64_t)p->conns, SRC_PEERS);
	if (r >= 0)
		r = set_peer(f, name, "retrans", (int64_t)p->retrans,
		             SRC_PEERS ": tcpi_total_retrans summed");
	if (r >= 0 && p->have_segs)
		r = set_peer(f, name, "segs_out", (int64_t)p->segs, SRC_PEERS ": tcpi_segs_out summed");
	if (r >= 0 && p->rtt_weight)
		r = set_peer_dec(f, name, "rtt", p->rtt_weighted / (double)p->rtt_weight / 1000,
		                 SRC_PEERS ": tcpi_rtt weighted by tcpi_segs_out");
	else if (r >= 0)
		r = set_peer_dec(f, name, "rtt", p->rtt_sum / (double)p->conns / 1000,
		                 SRC_PEERS ": tcpi_rtt averaged");
	if (r >= 0 && p->have_min_rtt)
		r = set_peer_dec(f, name, "min_rtt", (double)p->min_rtt / 1000,
		                 SRC_PEERS ": smallest tcpi_min_rtt");
	if (r >= 0 && p->have_rate)
		r = set_peer_dec(f, name, "delivery_rate", (double)p->rate / 1e6,
		                 SRC_PEERS ": largest tcpi_delivery_rate");
	if (r >= 0 && sampled) {
		snprintf(src, sizeof(src), SRC_PEERS ", over --sample's %.3g s", seconds);
		r = set_peer(f, name, "retrans.delta", (int64_t)p->d_retrans, src);
		if (r >= 0 && p->have_segs)
			r = set_peer(f, name, "segs_out.delta", (int64_t)p->d_segs, src);
	}
	return r;
}

int ht_peers_facts(struct ht_facts *f, struct ht_snapshot *first, struct ht_snapshot *second,
                   double seconds)
{
	struct peer_reading *pr = second->priv, *pf = first ? first->priv : NULL;
	_cleanup_free_ char *list = NULL;
	size_t len = 0, cap = 0;
	int r = 0;

	if (!pr)
		return ht_facts_set_unavailable(f, "peer.list", ENODATA, NULL, SRC_PEERS);
	if (pr->error)
		return ht_facts_set_unavailable(f, "peer.list", pr->error, NULL, pr->why);
	if (pf && pf->error)
		pf = NULL;
	/* qsort() with a null array is undefined even for 0 members. */
	if (pf && pf->n > 0)
		qsort(pf->v, pf->n, sizeof(*pf->v), sock_cookie_cmp);
	if (pr->n > 0)
		qsort(pr->v, pr->n, sizeof(*pr->v), sock_dst_cmp);
	for (size_t i = 0; i < pr->n && r >= 0;) {
		struct peer_sum p = { .min_rtt = UINT64_MAX };
		char name[INET6_ADDRSTRLEN], address[INET6_ADDRSTRLEN];
		size_t j;

		for (j = i; j < pr->n && memcmp(pr->v[j].dst, pr->v[i].dst, 16) == 0; j++) {
			const struct ht_tcp_sample *t = &pr->v[j].info;
			const struct ht_peer_sock *e = pf ? earlier(pf, &pr->v[j]) : NULL;
			bool grew = e && t->total_retrans >= e->info.total_retrans &&
			            t->segs_out >= e->info.segs_out;

			p.conns++;
			p.retrans += t->total_retrans;
			p.segs += t->segs_out;
			p.have_segs = p.have_segs || t->has_segs;
			p.d_retrans += grew ? t->total_retrans - e->info.total_retrans : t->total_retrans;
			p.d_segs += grew ? t->segs_out - e->info.segs_out : t->segs_out;
			p.rtt_sum += t->rtt_us;
			p.rtt_weighted += (double)t->rtt_us * t->segs_out;
			p.rtt_weight += t->segs_out;
			if (t->has_min_rtt && t->min_rtt_us < p.min_rtt)
				p.min_rtt = t->min_rtt_us;
			p.have_min_rtt = p.have_min_rtt || t->has_min_rtt;
			if (t->has_delivery_rate && t->delivery_rate > p.rate)
				p.rate = t->delivery_rate;
			p.have_rate = p.have_rate || t->has_delivery_rate;
		}
		ht_peer_name(pr->v[i].dst, name, sizeof(name), address, sizeof(address));
		i = j;
		/* A peer nothing was sent to has no share to judge. */
		if (p.have_segs && p.segs == 0)
			continue;
		r = peer_facts(f, name, address, &p, first != NULL, seconds);
		if (r >= 0) {
			size_t nl = strlen(name);

			if (len + nl + 2 > cap) {
				char *v = realloc(list, cap = (len + nl + 2) * 2);

				if (!v)
					return -ENOMEM;
				list = v;
			}
			if (len)
				list[len++] = ' ';
			memcpy(list + len, name, nl + 1);
			len += nl;
		}
	}
	if (r < 0)
		return r;
	return ht_facts_set_str(f, "peer.list", list ? list : "", SRC_PEERS);
}
