/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>

#include "collect/collect.h"
#include "collect/ctstat.h"
#include "collect/procsys.h"
#include "collect/sample.h"
#include "engine/facts.h"
#include "shared/util.h"
#include "engine/value.h"
#include "collect/watch.h"
#include "shared/netlink.h"

/*
 * Conntrack statistics: the per-CPU counters and the global entry count of
 * the caller's network namespace, over ctnetlink (nfnetlink subsystem
 * NFNL_SUBSYS_CTNETLINK, net/netfilter/nf_conntrack_netlink.c), else from
 * /proc/net/stat/nf_conntrack (net/netfilter/nf_conntrack_standalone.c,
 * ct_cpu_seq_show), which prints the same counters. Then what the table
 * holds: a dump of every entry (IPCTNL_MSG_CT_GET), counted by protocol and
 * TCP state as it streams past, else /proc/net/nf_conntrack read line by
 * line (ct_seq_show).
 */

#define PATH_STAT "/proc/net/stat/nf_conntrack"
#define SRC_CPU "ctnetlink IPCTNL_MSG_CT_GET_STATS_CPU"
#define SRC_GLOBAL "ctnetlink IPCTNL_MSG_CT_GET_STATS"

/* The facts, in the order of struct ct_stats. */
enum { ST_DROP, ST_EARLY_DROP, ST_INSERT_FAILED, ST_SEARCH_RESTART, ST_COUNT, ST_N };

static const struct {
	const char *fact;
	const char *unit;
	const char *column;  /* header word in /proc/net/stat/nf_conntrack */
	const char *attr_name;
	uint16_t attr;       /* enum ctattr_stats_cpu, or ctattr_stats_global for the count */
} stat_defs[ST_N] = {
	{ "conntrack.stat.drop", "packets", "drop", "CTA_STATS_DROP", CTA_STATS_DROP },
	{ "conntrack.stat.early_drop", "entries", "early_drop", "CTA_STATS_EARLY_DROP",
	  CTA_STATS_EARLY_DROP },
	{ "conntrack.stat.insert_failed", "packets", "insert_failed", "CTA_STATS_INSERT_FAILED",
	  CTA_STATS_INSERT_FAILED },
	{ "conntrack.stat.search_restart", "lookups", "search_restart", "CTA_STATS_SEARCH_RESTART",
	  CTA_STATS_SEARCH_RESTART },
	{ "conntrack.stat.count", "entries", "entries", "CTA_STATS_GLOBAL_ENTRIES",
	  CTA_STATS_GLOBAL_ENTRIES },
};

struct ct_stats {
	int64_t v[ST_N];
	bool have[ST_N];
};

/* Adds @x to @sum unless that leaves int64_t. Returns 0 or -EOVERFLOW. */
static int add_checked(int64_t *sum, uint64_t x)
{
	if (x > (uint64_t)(INT64_MAX - *sum))
		return -EOVERFLOW;
	*sum += (int64_t)x;
	return 0;
}

/* ---- netlink ---- */

/* One request and what came back for it. */
struct nl_req {
	uint16_t reply_type;           /* nlmsg_type of the replies we read; others are skipped */
	char extack[HT_NL_EXTACK_LEN]; /* the kernel's message when it failed, "" if none */
	unsigned messages;             /* replies parsed */
	unsigned seen[ST_N];           /* replies that carried each attribute */
	struct ct_stats *stats;
	struct ht_ct_table *table;     /* the dump's counts */
};

/*
 * Sends the nfnetlink request @msg of the ctnetlink subsystem and runs
 * @data_cb on each reply until the ack or NLMSG_DONE (ht_nl_request()).
 * Returns 0 or a negative errno (the kernel's, with req->extack filled when
 * it explained).
 */
static int nl_transact(struct mnl_socket *nl, char *buf, uint8_t msg, uint16_t flags,
                       mnl_cb_t data_cb, struct nl_req *req)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	/* nfnetlink message types are SUBSYS << 8 | MSG (<linux/netfilter/nfnetlink.h>). */
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | msg;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = (unsigned)time(NULL);
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_UNSPEC;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	req->reply_type = nlh->nlmsg_type;
	return ht_nl_request(nl, nlh, buf, HT_NL_DUMP_BUF_SIZE, data_cb, req, req->extack);
}

/* The attribute table mnl_attr_parse() fills: attributes 0..max by type. */
struct attr_table {
	const struct nlattr **tb;
	uint16_t max;
};

static int stats_attr_cb(const struct nlattr *attr, void *data)
{
	struct attr_table *t = data;
	uint16_t type = mnl_attr_get_type(attr);

	/* Attributes of newer kernels than our headers are skipped, not an error. */
	if (type > t->max)
		return MNL_CB_OK;
	t->tb[type] = attr;
	return MNL_CB_OK;
}

/*
 * Adds the big-endian u32 counters (nla_put_be32() in
 * ctnetlink_ct_stat_cpu_fill_info() and ctnetlink_stat_ct_fill_info()) of
 * stat_defs[first, last) found in @nlh to req->stats.
 */
static int add_reply(const struct nlmsghdr *nlh, struct nl_req *req, uint16_t max, int first,
                     int last)
{
	const struct nlattr *tb[CTA_STATS_MAX + 1] = { NULL };
	struct attr_table t = { .tb = tb, .max = max };

	_Static_assert(CTA_STATS_GLOBAL_MAX <= CTA_STATS_MAX, "tb holds both attribute sets");

	if (nlh->nlmsg_type != req->reply_type)
		return MNL_CB_OK;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(struct nfgenmsg) ||
	    mnl_attr_parse(nlh, sizeof(struct nfgenmsg), stats_attr_cb, &t) < 0) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	req->messages++;
	for (int i = first; i < last; i++) {
		const struct nlattr *a = tb[stat_defs[i].attr];

		if (!a)
			continue;
		if (mnl_attr_validate(a, MNL_TYPE_U32) < 0 ||
		    add_checked(&req->stats->v[i], ntohl(mnl_attr_get_u32(a))) < 0) {
			errno = EBADMSG;
			return MNL_CB_ERROR;
		}
		req->seen[i]++;
	}
	return MNL_CB_OK;
}

/*
 * One reply per possible CPU, its CPU number in nfgenmsg.res_id
 * (ctnetlink_ct_stat_cpu_dump()); the counters are summed, so the CPU number
 * is not needed.
 */
static int stats_cpu_cb(const struct nlmsghdr *nlh, void *data)
{
	return add_reply(nlh, data, CTA_STATS_MAX, ST_DROP, ST_COUNT);
}

static int stats_global_cb(const struct nlmsghdr *nlh, void *data)
{
	return add_reply(nlh, data, CTA_STATS_GLOBAL_MAX, ST_COUNT, ST_N);
}

/*
 * Marks each counter of stat_defs[first, last) as known when every reply
 * carried it; a kernel that lacks a counter leaves it out of every reply.
 */
static int finish_request(struct nl_req *req, int first, int last)
{
	if (req->messages == 0)
		return -ENODATA;
	for (int i = first; i < last; i++)
		req->stats->have[i] = req->seen[i] == req->messages;
	return 0;
}

/* IPCTNL_MSG_CT_GET_STATS_CPU: a dump, handled by ctnetlink_stat_ct_cpu() only with NLM_F_DUMP. */
static int ct_get_stats_cpu(struct mnl_socket *nl, char *buf, struct nl_req *req)
{
	int r = nl_transact(nl, buf, IPCTNL_MSG_CT_GET_STATS_CPU, NLM_F_DUMP, stats_cpu_cb, req);

	return r < 0 ? r : finish_request(req, ST_DROP, ST_COUNT);
}

/* IPCTNL_MSG_CT_GET_STATS: one reply (ctnetlink_stat_ct()), then the ack we ask for. */
static int ct_get_stats(struct mnl_socket *nl, char *buf, struct nl_req *req)
{
	int r = nl_transact(nl, buf, IPCTNL_MSG_CT_GET_STATS, NLM_F_ACK, stats_global_cb, req);

	return r < 0 ? r : finish_request(req, ST_COUNT, ST_N);
}

/*
 * Runs both requests. *r_cpu and *r_global receive 0 or the negative errno
 * of each; an error that prevents both (no socket) goes to both. Returns 0 or
 * -ENOMEM.
 */
static int nl_collect(struct nl_req *cpu, struct nl_req *global, int *r_cpu, int *r_global)
{
	_cleanup_(ht_nl_closep) struct mnl_socket *nl = NULL;
	_cleanup_free_ char *buf = NULL;
	int r;

	buf = malloc(HT_NL_DUMP_BUF_SIZE);
	if (!buf)
		return -ENOMEM;
	r = ht_nl_open(NETLINK_NETFILTER, &nl);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		*r_cpu = *r_global = r;
		return 0;
	}
	*r_cpu = ct_get_stats_cpu(nl, buf, cpu);
	*r_global = ct_get_stats(nl, buf, global);
	return *r_cpu == -ENOMEM || *r_global == -ENOMEM ? -ENOMEM : 0;
}

/* ---- /proc/net/stat/nf_conntrack ---- */

/*
 * The kernel prints 17 columns (ct_cpu_seq_show()); this bound only keeps a
 * corrupt file from costing more than a little stack.
 */
#define MAX_COLUMNS 64

/* The next blank-separated word of the line at *p: 0, or -ENOENT at the end of the line. */
static int next_word(const char **p, const char **word, size_t *len)
{
	const char *s = *p;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0' || *s == '\n') {
		*p = s;
		return -ENOENT;
	}
	*word = s;
	while (*s && *s != ' ' && *s != '\t' && *s != '\n')
		s++;
	*len = (size_t)(s - *word);
	*p = s;
	return 0;
}

/*
 * A counter as the kernel prints it: "%08x" of an unsigned int
 * (ct_cpu_seq_show(), nf_conntrack_standalone.c), so at most 8 digits; a
 * wider one is no kernel's, and its products in the rules could overflow.
 */
static int parse_hex(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 8)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

/*
 * Parses the text of /proc/net/stat/nf_conntrack: a header of column names,
 * then one row of hex counters per possible CPU. The per-CPU columns are
 * summed; "entries" is the namespace's global count, printed on every row,
 * so it is taken from the first. A column the header lacks (an older kernel)
 * stays unknown in @st. Returns 0, or -EINVAL when the text is not in that
 * format (no "entries" header, a row of another width, no rows, a word that
 * is not hex, a sum beyond int64_t).
 */
static int parse_proc_stat(const char *text, struct ct_stats *st)
{
	int col_of[ST_N];
	const char *p = text, *w;
	size_t len, ncols = 0, rows = 0;

	for (int i = 0; i < ST_N; i++)
		col_of[i] = -1;
	/* Every kernel's header starts with "entries" (ct_cpu_seq_show()). */
	while (next_word(&p, &w, &len) == 0) {
		if (ncols == MAX_COLUMNS)
			return -EINVAL;
		for (int i = 0; i < ST_N; i++)
			if (strlen(stat_defs[i].column) == len &&
			    memcmp(stat_defs[i].column, w, len) == 0)
				col_of[i] = (int)ncols;
		ncols++;
	}
	if (ncols == 0 || col_of[ST_COUNT] != 0)
		return -EINVAL;

	while (*p == '\n') {
		uint64_t row[MAX_COLUMNS];
		size_t n = 0;

		p++;
		if (*p == '\0')
			break;
		while (next_word(&p, &w, &len) == 0) {
			if (n == ncols || parse_hex(w, len, &row[n]) < 0)
				return -EINVAL;
			n++;
		}
		if (n != ncols)
			return -EINVAL;
		for (int i = 0; i < ST_N; i++) {
			if (col_of[i] < 0)
				continue;
			if (i == ST_COUNT && rows > 0)
				continue;
			if (add_checked(&st->v[i], row[col_of[i]]) < 0)
				return -EINVAL;
		}
		rows++;
	}
	if (*p != '\0' || rows == 0)
		return -EINVAL;
	for (int i = 0; i < ST_N; i++)
		st->have[i] = col_of[i] >= 0;
	return 0;
}

int ht_ct_proc_stat_parse(const char *text, struct ht_ct_proc_stat *out)
{
	struct ct_stats st = { 0 };
	int r = parse_proc_stat(text, &st);

	*out = (struct ht_ct_proc_stat){ 0 };
	if (r < 0)
		return r;
	*out = (struct ht_ct_proc_stat){
		.count = st.v[ST_COUNT],
		.drop = st.v[ST_DROP],
		.early_drop = st.v[ST_EARLY_DROP],
		.insert_failed = st.v[ST_INSERT_FAILED],
		.search_restart = st.v[ST_SEARCH_RESTART],
		.have_count = st.have[ST_COUNT],
		.have_drop = st.have[ST_DROP],
		.have_early_drop = st.have[ST_EARLY_DROP],
		.have_insert_failed = st.have[ST_INSERT_FAILED],
		.have_search_restart = st.have[ST_SEARCH_RESTART],
	};
	return 0;
}

static int proc_collect(const char *root, struct ct_stats *st)
{
	_cleanup_free_ char *text = NULL;
	int r = ht_read_file(root, PATH_STAT, &text);

	if (r < 0)
		return r;
	return parse_proc_stat(text, st);
}

/* ---- the table by state: a ctnetlink dump, else /proc/net/nf_conntrack ---- */

#define PATH_TABLE "/proc/net/nf_conntrack"
#define SRC_DUMP "ctnetlink IPCTNL_MSG_CT_GET dump"
#define FACT_EST_TIMEOUT "net.netfilter.nf_conntrack_tcp_timeout_established"
#define PATH_UNACK_TIMEOUT "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_unacknowledged"

/*
 * A dump the kernel marks NLM_F_DUMP_INTR (the table changed under it in a
 * way the dump could not follow; libmnl then fails with EINTR) is asked
 * again on a fresh socket, this many times in all.
 */
#define DUMP_TRIES 3

/*
 * /proc/net/nf_conntrack is read in pieces of this size, one line at a time,
 * so that a table of 262144 entries (some 70 MB of text) costs no more
 * memory than a small one. A line is about 300 bytes (two tuples, flags,
 * mark, zone, use); one that fills the whole buffer is not the kernel's.
 */
#define TABLE_READ_SIZE 65536

_Static_assert(TCP_CONNTRACK_SYN_SENT2 == 9 && TCP_CONNTRACK_MAX == HT_CT_TCP_STATES,
               "enum tcp_conntrack: NONE .. SYN_SENT2 are 0 .. 9");

static const char *const tcp_state_names[HT_CT_TCP_STATES] = {
	[TCP_CONNTRACK_NONE] = "NONE",
	[TCP_CONNTRACK_SYN_SENT] = "SYN_SENT",
	[TCP_CONNTRACK_SYN_RECV] = "SYN_RECV",
	[TCP_CONNTRACK_ESTABLISHED] = "ESTABLISHED",
	[TCP_CONNTRACK_FIN_WAIT] = "FIN_WAIT",
	[TCP_CONNTRACK_CLOSE_WAIT] = "CLOSE_WAIT",
	[TCP_CONNTRACK_LAST_ACK] = "LAST_ACK",
	[TCP_CONNTRACK_TIME_WAIT] = "TIME_WAIT",
	[TCP_CONNTRACK_CLOSE] = "CLOSE",
	[TCP_CONNTRACK_SYN_SENT2] = "SYN_SENT2",
};

const char *ht_ct_tcp_state_name(unsigned state)
{
	return state < HT_CT_TCP_STATES ? tcp_state_names[state] : NULL;
}

void ht_ct_table_count(struct ht_ct_table *t, int proto, int state, int64_t timeout)
{
	t->entries++;
	if (proto != IPPROTO_TCP)
		return;
	t->tcp++;
	if (state < 0 || state >= HT_CT_TCP_STATES)
		return;
	t->state[state]++;
	if (state == TCP_CONNTRACK_ESTABLISHED && timeout >= 0 && t->est_timeout >= 0 &&
	    timeout <= t->est_timeout - HT_CT_STALE_SECONDS && timeout > t->unack_timeout)
		t->stale++;
}

/* ---- what fills the table ---- */

static void ht_ct_who_freep(struct ht_ct_who **w)
{
	ht_ct_who_free(*w);
}

struct ht_ct_who *ht_ct_who_new(void)
{
	struct ht_ct_who *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->port = calloc(65536, sizeof(*w->port));
	w->pairs = calloc(HT_CT_PAIRS_MAX, sizeof(*w->pairs));
	w->nat = calloc(HT_CT_NAT_MAX, sizeof(*w->nat));
	if (!w->port || !w->pairs || !w->nat) {
		ht_ct_who_free(w);
		return NULL;
	}
	return w;
}

void ht_ct_who_free(struct ht_ct_who *w)
{
	if (!w)
		return;
	free(w->port);
	free(w->pairs);
	free(w->nat);
	free(w);
}

/* FNV-1a over the pair's bytes. */
static uint32_t pair_hash(int family, const uint8_t *src, const uint8_t *dst, size_t alen)
{
	uint32_t h = 2166136261u ^ (uint32_t)family;

	for (size_t i = 0; i < alen; i++)
		h = (h ^ src[i]) * 16777619u;
	for (size_t i = 0; i < alen; i++)
		h = (h ^ dst[i]) * 16777619u;
	return h;
}

void ht_ct_who_add(struct ht_ct_who *w, int family, const void *src, const void *dst, int dport)
{
	size_t alen = family == AF_INET6 ? 16 : 4, i;

	if (!w)
		return;
	if (dport >= 0 && dport < 65536 && w->port[dport] < UINT32_MAX)
		w->port[dport]++;
	if (!src || !dst || (family != AF_INET && family != AF_INET6))
		return;
	w->tallied++;
	i = pair_hash(family, src, dst, alen) & (HT_CT_PAIRS_MAX - 1);
	for (size_t probe = 0; probe < HT_CT_PAIRS_MAX; probe++, i = (i + 1) & (HT_CT_PAIRS_MAX - 1)) {
		struct ht_ct_pair *p = &w->pairs[i];

		if (!p->family) {
			/* Three quarters full: a new pair is no longer tracked. */
			if (w->npairs >= HT_CT_PAIRS_MAX / 4 * 3)
				break;
			p->family = (uint8_t)family;
			memcpy(p->src, src, alen);
			memcpy(p->dst, dst, alen);
			p->entries = 1;
			w->npairs++;
			return;
		}
		if (p->family == family && !memcmp(p->src, src, alen) && !memcmp(p->dst, dst, alen)) {
			p->entries++;
			return;
		}
	}
	w->untracked++;
}

void ht_ct_who_add_nat(struct ht_ct_who *w, int family, int proto, const void *nsrc,
                       const void *dst, int dport)
{
	size_t alen = family == AF_INET6 ? 16 : 4, i;
	uint32_t h;

	if (!w || !nsrc || !dst || (family != AF_INET && family != AF_INET6) || proto < 0 ||
	    proto > 255 || dport < 0 || dport > 65535)
		return;
	w->nat_entries++;
	h = pair_hash(family, nsrc, dst, alen) ^ ((uint32_t)dport << 8 | (uint32_t)proto);
	i = (h * 16777619u) & (HT_CT_NAT_MAX - 1);
	for (size_t probe = 0; probe < HT_CT_NAT_MAX; probe++, i = (i + 1) & (HT_CT_NAT_MAX - 1)) {
		struct ht_ct_nat *n = &w->nat[i];

		if (!n->family) {
			if (w->nnat >= HT_CT_NAT_MAX / 4 * 3)
				break;
			*n = (struct ht_ct_nat){ .family = (uint8_t)family, .proto = (uint8_t)proto,
				                 .dport = (uint16_t)dport, .entries = 1 };
			memcpy(n->nsrc, nsrc, alen);
			memcpy(n->dst, dst, alen);
			w->nnat++;
			return;
		}
		if (n->family == family && n->proto == proto && n->dport == dport &&
		    !memcmp(n->nsrc, nsrc, alen) && !memcmp(n->dst, dst, alen)) {
			n->entries++;
			return;
		}
	}
	w->nat_untracked++;
}

bool ht_ct_who_top_nat(const struct ht_ct_who *w, struct ht_ct_nat *out, int64_t *sources)
{
	const struct ht_ct_nat *top = NULL;

	*sources = 0;
	for (size_t i = 0; w && i < HT_CT_NAT_MAX; i++)
		if (w->nat[i].family && (!top || w->nat[i].entries > top->entries))
			top = &w->nat[i];
	if (!top)
		return false;
	*out = *top;
	for (size_t i = 0; i < HT_CT_NAT_MAX; i++) {
		const struct ht_ct_nat *n = &w->nat[i];

		*sources += n->family == top->family && n->proto == top->proto &&
		            n->dport == top->dport && !memcmp(n->dst, top->dst, sizeof(n->dst));
	}
	return true;
}

size_t ht_ct_who_top_ports(const struct ht_ct_who *w, size_t n, int *ports, int64_t *entries)
{
	size_t k = 0;

	for (int port = 0; w && port < 65536; port++) {
		size_t j;

		if (!w->port[port])
			continue;
		/* Insert into the sorted top @n: more entries first, the lower port first on a tie. */
		for (j = k; j > 0 && entries[j - 1] < (int64_t)w->port[port]; j--)
			if (j < n) {
				ports[j] = ports[j - 1];
				entries[j] = entries[j - 1];
			}
		if (j < n) {
			ports[j] = port;
			entries[j] = w->port[port];
			if (k < n)
				k++;
		}
	}
	return k;
}

size_t ht_ct_who_top_pairs(const struct ht_ct_who *w, size_t n, struct ht_ct_pair *out)
{
	size_t k = 0;

	for (size_t i = 0; w && i < HT_CT_PAIRS_MAX; i++) {
		const struct ht_ct_pair *p = &w->pairs[i];
		size_t j;

		if (!p->family)
			continue;
		for (j = k; j > 0 && out[j - 1].entries < p->entries; j--)
			if (j < n)
				out[j] = out[j - 1];
		if (j < n) {
			out[j] = *p;
			if (k < n)
				k++;
		}
	}
	return k;
}

/* The next blank-separated word of [*p, end): false at the end. */
static bool line_word(const char **p, const char *end, const char **word, size_t *len)
{
	const char *s = *p;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == end) {
		*p = s;
		return false;
	}
	*word = s;
	while (s < end && *s != ' ' && *s != '\t')
		s++;
	*len = (size_t)(s - *word);
	*p = s;
	return true;
}

/* A decimal number of 1 to 12 digits (the kernel prints u8 numbers and a long of seconds). */
static int word_number(const char *w, size_t len, int64_t *out)
{
	int64_t v = 0;

	if (len == 0 || len > 12)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (w[i] < '0' || w[i] > '9')
			return -EINVAL;
		v = v * 10 + (w[i] - '0');
	}
	*out = v;
	return 0;
}

/* The state named by the word, -1 if none; "LISTEN" is what kernels before 2008 printed for 9. */
static int state_of_word(const char *w, size_t len)
{
	for (int i = 0; i < HT_CT_TCP_STATES; i++)
		if (strlen(tcp_state_names[i]) == len && memcmp(tcp_state_names[i], w, len) == 0)
			return i;
	if (len == 6 && memcmp(w, "LISTEN", 6) == 0)
		return TCP_CONNTRACK_SYN_SENT2;
	return -1;
}

/*
 * Tallies the rest [s, end) of a line: the first src=, dst= and dport= are
 * the original tuple's (ct_seq_show() prints the original tuple first).
 * @l3num: 2 (AF_INET) or 10 (AF_INET6).
 */
static void proc_who(struct ht_ct_who *w, int64_t l3num, int64_t proto, const char *s,
                     const char *end)
{
	int family = l3num == 10 ? AF_INET6 : AF_INET;
	/* [0] the original tuple, [1] the reply tuple: the first and second of each key. */
	uint8_t src[2][16] = { { 0 } }, dst[2][16] = { { 0 } };
	int nsrc = 0, ndst = 0, nsport = 0, ndport = 0, sport[2] = { -1, -1 }, dport[2] = { -1, -1 };
	const char *word;
	size_t len;

	while (line_word(&s, end, &word, &len)) {
		char buf[64];
		int64_t v;

		if (len > 4 && len - 4 < sizeof(buf) && !memcmp(word, "src=", 4) && nsrc < 2) {
			memcpy(buf, word + 4, len - 4);
			buf[len - 4] = '\0';
			if (inet_pton(family, buf, src[nsrc]) != 1)
				break;
			nsrc++;
		} else if (len > 4 && len - 4 < sizeof(buf) && !memcmp(word, "dst=", 4) && ndst < 2) {
			memcpy(buf, word + 4, len - 4);
			buf[len - 4] = '\0';
			if (inet_pton(family, buf, dst[ndst]) != 1)
				break;
			ndst++;
		} else if (len > 6 && !memcmp(word, "sport=", 6) && nsport < 2) {
			/* A port no packet has (99999) keeps its place, as -1. */
			sport[nsport++] = word_number(word + 6, len - 6, &v) == 0 && v < 65536 ? (int)v : -1;
		} else if (len > 6 && !memcmp(word, "dport=", 6) && ndport < 2) {
			dport[ndport++] = word_number(word + 6, len - 6, &v) == 0 && v < 65536 ? (int)v : -1;
		}
	}
	ht_ct_who_add(w, family, nsrc && ndst ? src[0] : NULL, nsrc && ndst ? dst[0] : NULL, dport[0]);
	/* Source NAT: the reply goes back to another address or port than the original's source. */
	if (nsrc == 2 && ndst == 2 && dport[0] >= 0 &&
	    (memcmp(dst[1], src[0], sizeof(src[0])) ||
	     (sport[0] >= 0 && dport[1] >= 0 && dport[1] != sport[0])))
		ht_ct_who_add_nat(w, family, (int)proto, dst[1], dst[0], dport[0]);
}

/* ht_ct_proc_line() of the line [s, end). */
static int proc_line(struct ht_ct_table *t, const char *s, const char *end)
{
	const char *w;
	size_t len;
	int64_t l3num, proto, timeout = -1;
	int state = -1;

	if (!line_word(&s, end, &w, &len))
		return 0; /* an empty line */
	/* w is the L3 name ("ipv4"); then its number, the L4 name ("tcp") and number. */
	if (!line_word(&s, end, &w, &len) || word_number(w, len, &l3num) < 0 || l3num > 255)
		return -EINVAL;
	if (!line_word(&s, end, &w, &len))
		return -EINVAL;
	if (!line_word(&s, end, &w, &len) || word_number(w, len, &proto) < 0 || proto > 255)
		return -EINVAL;
	if (proto == IPPROTO_TCP) {
		if (!line_word(&s, end, &w, &len))
			return -EINVAL;
		/* The timeout, unless the entry is offloaded (IPS_OFFLOAD: no timer to print). */
		if (word_number(w, len, &timeout) == 0) {
			if (!line_word(&s, end, &w, &len))
				return -EINVAL;
		} else {
			timeout = -1;
		}
		state = state_of_word(w, len);
		if (state < 0)
			return -EINVAL;
	}
	ht_ct_table_count(t, (int)proto, state, timeout);
	if (t->who)
		proc_who(t->who, l3num, proto, s, end);
	return 0;
}

int ht_ct_proc_line(struct ht_ct_table *t, const char *line)
{
	return proc_line(t, line, line + strlen(line));
}

int ht_ct_proc_parse(const char *text, struct ht_ct_table *t)
{
	while (*text) {
		const char *nl = strchr(text, '\n'), *end = nl ? nl : text + strlen(text);
		int r = proc_line(t, text, end);

		if (r < 0)
			return r;
		text = nl ? nl + 1 : end;
	}
	return 0;
}

/*
 * Counts ROOT/proc/net/nf_conntrack into @t, a piece at a time. Returns 0,
 * the negative errno of open(2)/read(2), -EISDIR, -EINVAL for a file that is
 * not regular, holds a NUL byte or a line that is not the kernel's, -ENOMEM.
 */
static int proc_table_collect(const char *root, const char *path, struct ht_ct_table *t)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = ht_open_file(root, path);
	size_t have = 0;

	if (fd < 0)
		return fd;
	buf = malloc(TABLE_READ_SIZE);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + have, TABLE_READ_SIZE - have);
		const char *s = buf, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		if (memchr(buf + have, '\0', (size_t)n))
			return -EINVAL;
		have += (size_t)n;
		while ((nl = memchr(s, '\n', (size_t)(buf + have - s)))) {
			int r = proc_line(t, s, nl);

			if (r < 0)
				return r;
			s = nl + 1;
		}
		have -= (size_t)(s - buf);
		memmove(buf, s, have);
		if (have == TABLE_READ_SIZE)
			return -EINVAL;
	}
	return have ? proc_line(t, buf, buf + have) : 0;
}

/* The attributes nested in @nest into tb[0..max]; -1 when it is no valid nest. */
static int parse_nested(const struct nlattr *nest, const struct nlattr **tb, uint16_t max)
{
	struct attr_table t = { .tb = tb, .max = max };

	if (mnl_attr_validate(nest, MNL_TYPE_NESTED) < 0)
		return -1;
	return mnl_attr_parse_nested(nest, stats_attr_cb, &t) < 0 ? -1 : 0;
}

/* A u8 attribute's value, or -1 when it is absent; -2 when it is not a u8. */
static int attr_u8(const struct nlattr *a)
{
	if (!a)
		return -1;
	return mnl_attr_validate(a, MNL_TYPE_U8) < 0 ? -2 : mnl_attr_get_u8(a);
}

/*
 * One entry of the dump (ctnetlink_fill_info() in nf_conntrack_netlink.c):
 * its protocol (CTA_TUPLE_ORIG / CTA_TUPLE_PROTO / CTA_PROTO_NUM), its TCP
 * state (CTA_PROTOINFO / CTA_PROTOINFO_TCP / CTA_PROTOINFO_TCP_STATE) and
 * its remaining seconds (CTA_TIMEOUT, big-endian u32) are counted, and
 * when the table tallies who fills it, its original addresses (CTA_TUPLE_IP)
 * and destination port (CTA_PROTO_DST_PORT, big-endian u16) and, for an
 * entry with source NAT (CTA_STATUS has IPS_SRC_NAT), the address NAT gave
 * it (the reply tuple's destination); nothing of it is kept.
 */
static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_req *req = data;
	const struct nlattr *tb[CTA_MAX + 1] = { NULL };
	struct attr_table at = { .tb = tb, .max = CTA_MAX };
	const void *src = NULL, *dst = NULL;
	int proto = -1, state = -1, family = 0, dport = -1;
	int64_t timeout = -1;

	if (nlh->nlmsg_type >> 8 != NFNL_SUBSYS_CTNETLINK)
		return MNL_CB_OK;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(struct nfgenmsg) ||
	    mnl_attr_parse(nlh, sizeof(struct nfgenmsg), stats_attr_cb, &at) < 0)
		goto bad;
	if (tb[CTA_TUPLE_ORIG]) {
		const struct nlattr *tt[CTA_TUPLE_MAX + 1] = { NULL };
		const struct nlattr *pt[CTA_PROTO_MAX + 1] = { NULL };

		if (parse_nested(tb[CTA_TUPLE_ORIG], tt, CTA_TUPLE_MAX) < 0)
			goto bad;
		if (tt[CTA_TUPLE_PROTO] && parse_nested(tt[CTA_TUPLE_PROTO], pt, CTA_PROTO_MAX) < 0)
			goto bad;
		proto = attr_u8(pt[CTA_PROTO_NUM]);
		if (proto == -2)
			goto bad;
		if (req->table->who && pt[CTA_PROTO_DST_PORT] &&
		    mnl_attr_validate(pt[CTA_PROTO_DST_PORT], MNL_TYPE_U16) == 0)
			dport = ntohs(mnl_attr_get_u16(pt[CTA_PROTO_DST_PORT]));
		if (req->table->who && tt[CTA_TUPLE_IP]) {
			const struct nlattr *ip[CTA_IP_MAX + 1] = { NULL };

			if (parse_nested(tt[CTA_TUPLE_IP], ip, CTA_IP_MAX) < 0)
				goto bad;
			if (ip[CTA_IP_V4_SRC] && ip[CTA_IP_V4_DST] &&
			    mnl_attr_get_payload_len(ip[CTA_IP_V4_SRC]) == 4 &&
			    mnl_attr_get_payload_len(ip[CTA_IP_V4_DST]) == 4) {
				family = AF_INET;
				src = mnl_attr_get_payload(ip[CTA_IP_V4_SRC]);
				dst = mnl_attr_get_payload(ip[CTA_IP_V4_DST]);
			} else if (ip[CTA_IP_V6_SRC] && ip[CTA_IP_V6_DST] &&
			           mnl_attr_get_payload_len(ip[CTA_IP_V6_SRC]) == 16 &&
			           mnl_attr_get_payload_len(ip[CTA_IP_V6_DST]) == 16) {
				family = AF_INET6;
				src = mnl_attr_get_payload(ip[CTA_IP_V6_SRC]);
				dst = mnl_attr_get_payload(ip[CTA_IP_V6_DST]);
			}
		}
	}
	if (proto == IPPROTO_TCP && tb[CTA_PROTOINFO]) {
		const struct nlattr *pi[CTA_PROTOINFO_MAX + 1] = { NULL };
		const struct nlattr *tcp[CTA_PROTOINFO_TCP_MAX + 1] = { NULL };

		if (parse_nested(tb[CTA_PROTOINFO], pi, CTA_PROTOINFO_MAX) < 0)
			goto bad;
		if (pi[CTA_PROTOINFO_TCP] &&
		    parse_nested(pi[CTA_PROTOINFO_TCP], tcp, CTA_PROTOINFO_TCP_MAX) < 0)
			goto bad;
		state = attr_u8(tcp[CTA_PROTOINFO_TCP_STATE]);
		if (state == -2)
			goto bad;
	}
	if (tb[CTA_TIMEOUT]) {
		if (mnl_attr_validate(tb[CTA_TIMEOUT], MNL_TYPE_U32) < 0)
			goto bad;
		timeout = ntohl(mnl_attr_get_u32(tb[CTA_TIMEOUT]));
	}
	ht_ct_table_count(req->table, proto, state, timeout);
	ht_ct_who_add(req->table->who, family, src, dst, dport);
	/* Source NAT (IPS_SRC_NAT): the address it was given is the reply's destination. */
	if (req->table->who && family && tb[CTA_STATUS] && tb[CTA_TUPLE_REPLY] &&
	    mnl_attr_validate(tb[CTA_STATUS], MNL_TYPE_U32) == 0 &&
	    (ntohl(mnl_attr_get_u32(tb[CTA_STATUS])) & IPS_SRC_NAT)) {
		const struct nlattr *tt[CTA_TUPLE_MAX + 1] = { NULL };
		const struct nlattr *ip[CTA_IP_MAX + 1] = { NULL };
		int a = family == AF_INET ? CTA_IP_V4_DST : CTA_IP_V6_DST;

		if (parse_nested(tb[CTA_TUPLE_REPLY], tt, CTA_TUPLE_MAX) < 0 ||
		    (tt[CTA_TUPLE_IP] && parse_nested(tt[CTA_TUPLE_IP], ip, CTA_IP_MAX) < 0))
			goto bad;
		if (ip[a] && mnl_attr_get_payload_len(ip[a]) == (family == AF_INET ? 4u : 16u))
			ht_ct_who_add_nat(req->table->who, family, proto, mnl_attr_get_payload(ip[a]),
			                  dst, dport);
	}
	req->messages++;
	return MNL_CB_OK;
bad:
	errno = EBADMSG;
	return MNL_CB_ERROR;
}

/*
 * Dumps the table of this network namespace (AF_UNSPEC: IPv4 and IPv6) into
 * @t, which is replaced only by a dump that completed. The counts are a
 * snapshot taken while the table goes on changing: an entry made or removed
 * during the dump may be counted or not, as in conntrack -L. Returns 0 or a
 * negative errno (req->extack filled when the kernel explained).
 */
static int nl_dump_table(struct ht_ct_table *t, struct nl_req *req)
{
	_cleanup_free_ char *buf = malloc(HT_NL_DUMP_BUF_SIZE);

	if (!buf)
		return -ENOMEM;
	for (int i = 1;; i++) {
		_cleanup_(ht_nl_closep) struct mnl_socket *nl = NULL;
		struct ht_ct_table counted = { .est_timeout = t->est_timeout,
			                       .unack_timeout = t->unack_timeout, .who = t->who };
		int r;

		/* A dump tried again tallies from nothing again. */
		if (t->who) {
			memset(t->who->port, 0, 65536 * sizeof(*t->who->port));
			memset(t->who->pairs, 0, HT_CT_PAIRS_MAX * sizeof(*t->who->pairs));
			memset(t->who->nat, 0, HT_CT_NAT_MAX * sizeof(*t->who->nat));
			t->who->npairs = t->who->nnat = 0;
			t->who->nat_entries = t->who->nat_untracked = 0;
			t->who->untracked = t->who->tallied = 0;
		}
		*req = (struct nl_req){ .table = &counted };
		r = ht_nl_open(NETLINK_NETFILTER, &nl);
		if (r < 0)
			return r;
		r = nl_transact(nl, buf, IPCTNL_MSG_CT_GET, NLM_F_DUMP, dump_cb, req);
		if (r == -EINTR && i < DUMP_TRIES)
			continue;
		if (r == 0)
			*t = counted;
		return r;
	}
}

/* ---- facts ---- */

/* "SRC: ENAME (kernel message)", what a netlink request that failed said. */
static void describe_failure(char *buf, size_t size, const char *src, int r,
                             const struct nl_req *req)
{
	const char *en = ht_errno_name(-r);

	/* ctnetlink refuses a dump to a socket without CAP_NET_ADMIN in the netns. */
	if (r == -EPERM)
		snprintf(buf, size, "%s: EPERM (needs CAP_NET_ADMIN: run as root)", src);
	else if (req->extack[0])
		snprintf(buf, size, "%s: %s (%s)", src, en ? en : "error", req->extack);
	else
		snprintf(buf, size, "%s: %s", src, en ? en : "error");
}

/* @e if the facts file can name it (ht_facts_set_unavailable() needs that), else EIO. */
static int nameable(int e)
{
	return ht_errno_name(e) ? e : EIO;
}

/* Is @name a fact in @f that is known to be false? */
static bool fact_is_false(const struct ht_facts *f, const char *name)
{
	const struct ht_fact *fact = ht_facts_get(f, name);

	return fact && fact->value.type == HT_T_BOOL && !fact->value.b;
}

/* The facts of what fills the table (conntrack.dump.top_*, .ports, .pairs). */
static const char *const who_facts[] = {
	"conntrack.dump.ports",     "conntrack.dump.top_port", "conntrack.dump.top_port_entries",
	"conntrack.dump.pairs",     "conntrack.dump.top_pair", "conntrack.dump.top_pair_entries",
	"conntrack.dump.top3_pairs_entries", "conntrack.nat.entries", "conntrack.nat.top_destination",
	"conntrack.nat.top_source", "conntrack.nat.top_entries", "conntrack.nat.top_sources",
};

/* "SRC > DST" of a pair. */
static void pair_text(const struct ht_ct_pair *p, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];

	if (!inet_ntop(p->family, p->src, a, sizeof(a)) || !inet_ntop(p->family, p->dst, b, sizeof(b)))
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "%s > %s", a, b);
}

/* The NAT facts' names after their prefix ("conntrack.nat.", "netns.N.nat_"), and units. */
enum { NAT_ENTRIES, NAT_TOP_DESTINATION, NAT_TOP_SOURCE, NAT_TOP_ENTRIES, NAT_TOP_SOURCES, NAT_N };
static const struct {
	const char *suffix, *unit;
} nat_names[NAT_N] = {
	[NAT_ENTRIES] = { "entries", "entries" },
	[NAT_TOP_DESTINATION] = { "top_destination", NULL },
	[NAT_TOP_SOURCE] = { "top_source", NULL },
	[NAT_TOP_ENTRIES] = { "top_entries", "entries" },
	[NAT_TOP_SOURCES] = { "top_sources", "addresses" },
};

static const char *nat_name(char *buf, size_t size, const char *prefix, int which)
{
	snprintf(buf, size, "%s%s", prefix, nat_names[which].suffix);
	return buf;
}

/*
 * PREFIX{entries,top_*} (conntrack.nat.* of the host's table): the entries
 * with source NAT and, of the (NAT address, destination) tuples, the one
 * with the most: its destination as "ADDR:PORT/PROTO", its NAT address, its
 * entries and how many NAT addresses map to that destination.
 */
static int set_nat_facts(struct ht_facts *f, const struct ht_ct_who *w, const char *prefix,
                         const char *source)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN], text[INET6_ADDRSTRLEN + 24], name[96];
	const char *pname;
	struct ht_ct_nat n;
	int64_t sources;
	int r;

	r = ht_facts_set_int(f, nat_name(name, sizeof(name), prefix, NAT_ENTRIES), w->nat_entries,
	                     "entries", source);
	if (r < 0)
		return r;
	if (!ht_ct_who_top_nat(w, &n, &sources) || !inet_ntop(n.family, n.dst, a, sizeof(a)) ||
	    !inet_ntop(n.family, n.nsrc, b, sizeof(b))) {
		r = ht_facts_set_unavailable(f, nat_name(name, sizeof(name), prefix,
		                                         NAT_TOP_DESTINATION), ENOENT, NULL, source);
		if (r >= 0)
			r = ht_facts_set_unavailable(f, nat_name(name, sizeof(name), prefix,
			                                         NAT_TOP_SOURCE), ENOENT, NULL, source);
		if (r >= 0)
			r = ht_facts_set_int(f, nat_name(name, sizeof(name), prefix, NAT_TOP_ENTRIES),
			                     0, "entries", source);
		if (r >= 0)
			r = ht_facts_set_int(f, nat_name(name, sizeof(name), prefix, NAT_TOP_SOURCES),
			                     0, "addresses", source);
		return r;
	}
	pname = n.proto == IPPROTO_TCP ? "tcp" : n.proto == IPPROTO_UDP ? "udp"
	      : n.proto == IPPROTO_SCTP ? "sctp" : n.proto == IPPROTO_DCCP ? "dccp" : "proto";
	if (n.family == AF_INET6)
		snprintf(text, sizeof(text), "[%s]:%u/%s", a, n.dport, pname);
	else
		snprintf(text, sizeof(text), "%s:%u/%s", a, n.dport, pname);
	r = ht_facts_set_str(f, nat_name(name, sizeof(name), prefix, NAT_TOP_DESTINATION), text,
	                     source);
	if (r >= 0)
		r = ht_facts_set_str(f, nat_name(name, sizeof(name), prefix, NAT_TOP_SOURCE), b,
		                     source);
	if (r >= 0)
		r = ht_facts_set_int(f, nat_name(name, sizeof(name), prefix, NAT_TOP_ENTRIES),
		                     n.entries, "entries", source);
	if (r >= 0)
		r = ht_facts_set_int(f, nat_name(name, sizeof(name), prefix, NAT_TOP_SOURCES),
		                     sources, "addresses", source);
	return r;
}

int ht_ct_nat_unavailable(struct ht_facts *f, const char *prefix, int err, const char *why)
{
	char name[96];
	int r = 0;

	for (int i = 0; i < NAT_N && r >= 0; i++)
		r = ht_facts_set_unavailable(f, nat_name(name, sizeof(name), prefix, i), err,
		                             nat_names[i].unit, why);
	return r;
}

int ht_ct_nat_facts(struct ht_facts *f, const char *root, const char *path, const char *prefix)
{
	_cleanup_(ht_ct_who_freep) struct ht_ct_who *who = ht_ct_who_new();
	struct ht_ct_table t = { .est_timeout = -1, .unack_timeout = HT_CT_UNACK_TIMEOUT_DEFAULT };
	struct nl_req req = { 0 };
	char why[400], src[600];
	int r;

	if (!who)
		return -ENOMEM;
	t.who = who;
	if (!path) {
		r = nl_dump_table(&t, &req);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			describe_failure(why, sizeof(why), SRC_DUMP " in the namespace", r, &req);
			return ht_ct_nat_unavailable(f, prefix, nameable(-r), why);
		}
		snprintf(src, sizeof(src), "%s in the namespace", SRC_DUMP);
	} else {
		r = proc_table_collect(root, path, &t);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			const char *en = ht_errno_name(-r);

			snprintf(why, sizeof(why), "%s: %s", path, en ? en : "error");
			return ht_ct_nat_unavailable(f, prefix, nameable(-r), why);
		}
		snprintf(src, sizeof(src), "%s", path);
	}
	return set_nat_facts(f, who, prefix, src);
}

/* What fills the table, from @w, each fact with @source. */
static int set_who_facts(struct ht_facts *f, const struct ht_ct_who *w, const char *source)
{
	int ports[5];
	int64_t pe[5], top3 = 0;
	struct ht_ct_pair pairs[3];
	size_t np = ht_ct_who_top_ports(w, 5, ports, pe), nq = ht_ct_who_top_pairs(w, 3, pairs);
	char text[512] = "", one[128];
	int r;

	for (size_t i = 0; i < np; i++) {
		snprintf(one, sizeof(one), "%s%d:%" PRId64, i ? " " : "", ports[i], pe[i]);
		strncat(text, one, sizeof(text) - strlen(text) - 1);
	}
	r = ht_facts_set_str(f, "conntrack.dump.ports", text, source);
	if (r >= 0)
		r = np ? ht_facts_set_int(f, "conntrack.dump.top_port", ports[0], NULL, source)
		       : ht_facts_set_unavailable(f, "conntrack.dump.top_port", ENOENT, NULL, source);
	if (r >= 0)
		r = ht_facts_set_int(f, "conntrack.dump.top_port_entries", np ? pe[0] : 0, "entries",
		                     source);
	text[0] = '\0';
	for (size_t i = 0; i < nq; i++) {
		char pt[2 * INET6_ADDRSTRLEN + 4];

		pair_text(&pairs[i], pt, sizeof(pt));
		snprintf(one, sizeof(one), "%s%s (%" PRId64 ")", i ? ", " : "", pt, pairs[i].entries);
		strncat(text, one, sizeof(text) - strlen(text) - 1);
		top3 += pairs[i].entries;
	}
	if (r >= 0)
		r = ht_facts_set_str(f, "conntrack.dump.pairs", text, source);
	if (r >= 0 && nq) {
		pair_text(&pairs[0], one, sizeof(one));
		r = ht_facts_set_str(f, "conntrack.dump.top_pair", one, source);
	} else if (r >= 0)
		r = ht_facts_set_unavailable(f, "conntrack.dump.top_pair", ENOENT, NULL, source);
	if (r >= 0)
		r = ht_facts_set_int(f, "conntrack.dump.top_pair_entries", nq ? pairs[0].entries : 0,
		                     "entries", source);
	if (r >= 0)
		r = ht_facts_set_int(f, "conntrack.dump.top3_pairs_entries", top3, "entries", source);
	if (r >= 0)
		r = set_nat_facts(f, w, "conntrack.nat.", source);
	return r;
}

/* Sets the facts of the table: the counts of @t, each with @source. */
static int set_table_facts(struct ht_facts *f, const struct ht_ct_table *t, const char *source)
{
	char name[64];
	int r;

	r = ht_facts_set_int(f, "conntrack.dump.entries", t->entries, "entries", source);
	if (r >= 0)
		r = ht_facts_set_int(f, "conntrack.dump.tcp", t->tcp, "entries", source);
	for (int i = 0; r >= 0 && i < HT_CT_TCP_STATES; i++) {
		snprintf(name, sizeof(name), "conntrack.state.%s", tcp_state_names[i]);
		r = ht_facts_set_int(f, name, t->state[i], "entries", source);
	}
	if (r >= 0 && t->who)
		r = set_who_facts(f, t->who, source);
	return r;
}

/* Every fact of the table unavailable with the positive errno @e and @source. */
static int set_table_unavailable(struct ht_facts *f, int e, const char *source)
{
	char name[64];
	int r;

	r = ht_facts_set_unavailable(f, "conntrack.dump.entries", e, "entries", source);
	if (r >= 0)
		r = ht_facts_set_unavailable(f, "conntrack.dump.tcp", e, "entries", source);
	for (int i = 0; r >= 0 && i < HT_CT_TCP_STATES; i++) {
		snprintf(name, sizeof(name), "conntrack.state.%s", tcp_state_names[i]);
		r = ht_facts_set_unavailable(f, name, e, "entries", source);
	}
	if (r >= 0)
		r = ht_facts_set_unavailable(f, "conntrack.stale.established", e, "entries", source);
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(who_facts); i++)
		r = ht_facts_set_unavailable(f, who_facts[i], e, ht_fact_def_unit(who_facts[i]), source);
	return r;
}

/*
 * nf_conntrack_tcp_timeout_unacknowledged in seconds: an ESTABLISHED entry
 * with unacknowledged data has at most this left, idle or not. 300 (the
 * kernel's default) when the file is absent or unreadable; -ENOMEM.
 */
static int unack_timeout(const char *root, int64_t *out)
{
	_cleanup_free_ char *text = NULL;
	long long v;
	int r;

	*out = HT_CT_UNACK_TIMEOUT_DEFAULT;
	r = ht_read_file(root, PATH_UNACK_TIMEOUT, &text);
	if (r == -ENOMEM)
		return r;
	if (r >= 0 && ht_parse_int64(text, &v) >= 0 && v >= 0)
		*out = v;
	return 0;
}

/*
 * conntrack.dump.*, conntrack.state.* and conntrack.stale.established.
 * @why_not: NULL when netlink may be asked, else why not (nf_conntrack is
 * not loaded, and a dump would load it): /proc/net/nf_conntrack then.
 */
static int collect_table(struct ht_facts *f, const char *root, bool live, const char *why_not)
{
	const struct ht_fact *est = ht_facts_get(f, FACT_EST_TIMEOUT);
	_cleanup_(ht_ct_who_freep) struct ht_ct_who *who = ht_ct_who_new();
	struct ht_ct_table t = { .est_timeout = -1 };
	struct nl_req req = { 0 };
	char why[400] = "", src[1024];
	int r_nl = -ENOENT, r_proc = -ENOENT, r;
	int64_t est_timeout = -1, unack = HT_CT_UNACK_TIMEOUT_DEFAULT;
	/* Copied now: setting facts below may move @est. */
	int est_error = est && est->error > 0 ? est->error : ENOENT;

	if (est && est->value.type == HT_T_INT && est->value.i >= 0)
		est_timeout = est->value.i;
	est = NULL;
	r = unack_timeout(root, &unack);
	if (r < 0)
		return r;
	if (!who)
		return -ENOMEM;
	t.est_timeout = est_timeout;
	t.unack_timeout = unack;
	t.who = who;
	if (live && why_not) {
		snprintf(why, sizeof(why), "%s", why_not);
	} else if (live) {
		r_nl = nl_dump_table(&t, &req);
		if (r_nl == -ENOMEM)
			return r_nl;
		if (r_nl < 0)
			describe_failure(why, sizeof(why), SRC_DUMP, r_nl, &req);
	}
	if (!live || r_nl < 0) {
		t = (struct ht_ct_table){ .est_timeout = est_timeout, .unack_timeout = unack, .who = who };
		memset(who->port, 0, 65536 * sizeof(*who->port));
		memset(who->pairs, 0, HT_CT_PAIRS_MAX * sizeof(*who->pairs));
		who->npairs = 0;
		who->untracked = who->tallied = 0;
		r_proc = proc_table_collect(root, PATH_TABLE, &t);
		if (r_proc == -ENOMEM)
			return r_proc;
	}

	if (live && r_nl == 0) {
		snprintf(src, sizeof(src), "%s", SRC_DUMP);
	} else if (r_proc == 0) {
		if (live)
			snprintf(src, sizeof(src), "%s (%s)", PATH_TABLE, why);
		else
			snprintf(src, sizeof(src), "%s", PATH_TABLE);
	} else if (live) {
		const char *en = ht_errno_name(-r_proc);

		snprintf(src, sizeof(src), "%s; %s: %s", why, PATH_TABLE, en ? en : "error");
		return set_table_unavailable(f, nameable(-r_nl), src);
	} else {
		return set_table_unavailable(f, nameable(-r_proc), PATH_TABLE);
	}
	r = set_table_facts(f, &t, src);
	if (r < 0)
		return r;
	if (est_timeout < 0) {
		char why_est[256];

		snprintf(why_est, sizeof(why_est), "%s unavailable", FACT_EST_TIMEOUT);
		return ht_facts_set_unavailable(f, "conntrack.stale.established", est_error,
		                                "entries", why_est);
	}
	return ht_facts_set_int(f, "conntrack.stale.established", t.stale, "entries", src);
}


int ht_collect_ctstats(struct ht_facts *f, const char *root)
{
	struct ct_stats nl_stats = { 0 }, proc_stats = { 0 };
	struct nl_req cpu = { .stats = &nl_stats }, global = { .stats = &nl_stats };
	char why_cpu[400] = "", why_global[400] = "", src[1024];
	bool live = ht_root_is_live(root);
	int r_cpu = -ENOENT, r_global = -ENOENT, r_proc = -ENOENT, r;

	if (live && fact_is_false(f, "conntrack.loaded")) {
		/*
		 * Asking would make nfnetlink request_module() nf_conntrack_netlink
		 * and with it nf_conntrack (net/netfilter/nfnetlink.c,
		 * nfnetlink_rcv_msg()): a collector only reads.
		 */
		snprintf(why_cpu, sizeof(why_cpu),
		         "ctnetlink not asked: conntrack.loaded is false");
		snprintf(why_global, sizeof(why_global), "%s", why_cpu);
	} else if (live) {
		r = nl_collect(&cpu, &global, &r_cpu, &r_global);
		if (r < 0)
			return r;
		if (r_cpu < 0)
			describe_failure(why_cpu, sizeof(why_cpu), SRC_CPU, r_cpu, &cpu);
		if (r_global < 0)
			describe_failure(why_global, sizeof(why_global), SRC_GLOBAL, r_global,
			                 &global);
	}
	if (!live || r_cpu < 0 || r_global < 0) {
		r_proc = proc_collect(root, &proc_stats);
		if (r_proc == -ENOMEM)
			return r_proc;
	}

	for (int i = 0; i < ST_N; i++) {
		const char *fact = stat_defs[i].fact, *unit = stat_defs[i].unit;
		bool is_cpu = i != ST_COUNT;
		int r_nl = is_cpu ? r_cpu : r_global;
		const char *why = is_cpu ? why_cpu : why_global;

		if (live && r_nl == 0) {
			const char *s = is_cpu ? SRC_CPU : SRC_GLOBAL;

			if (nl_stats.have[i]) {
				r = ht_facts_set_int(f, fact, nl_stats.v[i], unit, s);
			} else {
				snprintf(src, sizeof(src), "%s (no %s in the reply)", s,
				         stat_defs[i].attr_name);
				r = ht_facts_set_unavailable(f, fact, ENOENT, unit, src);
			}
		} else if (r_proc == 0) {
			const char *col = stat_defs[i].column;

			if (live)
				snprintf(src, sizeof(src), "%s (%s)", PATH_STAT, why);
			else
				snprintf(src, sizeof(src), "%s", PATH_STAT);
			if (proc_stats.have[i]) {
				r = ht_facts_set_int(f, fact, proc_stats.v[i], unit, src);
			} else {
				snprintf(src, sizeof(src), "%s (no %s column)", PATH_STAT, col);
				r = ht_facts_set_unavailable(f, fact, ENOENT, unit, src);
			}
		} else if (live) {
			const char *en = ht_errno_name(-r_proc);

			snprintf(src, sizeof(src), "%s; %s: %s", why, PATH_STAT, en ? en : "error");
			r = ht_facts_set_unavailable(f, fact, nameable(-r_nl), unit, src);
		} else {
			r = ht_facts_set_unavailable(f, fact, nameable(-r_proc), unit, PATH_STAT);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

int ht_collect_cttable(struct ht_facts *f, const char *root)
{
	bool live = ht_root_is_live(root);

	return collect_table(f, root, live, live && fact_is_false(f, "conntrack.loaded") ?
	                     "ctnetlink not asked: conntrack.loaded is false" : NULL);
}

int ht_collect_ctnetlink(struct ht_facts *f, const char *root)
{
	int r = ht_collect_ctstats(f, root);

	return r < 0 ? r : ht_collect_cttable(f, root);
}

/*
 * The sampled source's reading: the counters ht_collect_ctstats() sets, with
 * their sources or errors, from a table of its own (conntrack.loaded read
 * first, so that an unloaded module is not asked for over ctnetlink).
 */
int ht_ctstats_snapshot(const char *root, struct ht_snapshot *s)
{
	struct ht_facts *tmp = ht_facts_new();
	int r;

	if (!tmp)
		return -ENOMEM;
	r = ht_collect_conntrack_loaded(tmp, root);
	if (r >= 0)
		r = ht_collect_ctstats(tmp, root);
	for (int i = 0; r >= 0 && i < ST_N; i++) {
		const struct ht_fact *x = ht_facts_get(tmp, stat_defs[i].fact);

		if (x && x->value.type == HT_T_INT && x->value.i >= 0)
			r = ht_snapshot_add(s, stat_defs[i].fact, (uint64_t)x->value.i, x->source);
		else
			r = ht_snapshot_add_error(s, stat_defs[i].fact,
			                          x && x->error ? x->error : ENODATA,
			                          x ? x->source : NULL);
	}
	ht_facts_free(tmp);
	return r < 0 ? r : 0;
}

/* ---- counters without a fact table (hosttune watch) ---- */

int ht_ctnetlink_counters(const char *root, struct ht_ct_counters *c)
{
	static const int want[] = { ST_COUNT, ST_DROP, ST_EARLY_DROP };
	struct ct_stats nl_stats = { 0 }, proc_stats = { 0 };
	struct nl_req cpu = { .stats = &nl_stats }, global = { .stats = &nl_stats };
	int64_t *out[] = { &c->count, &c->drop, &c->early_drop };
	bool *have[] = { &c->have_count, &c->have_drop, &c->have_early_drop };
	bool live = ht_root_is_live(root), any = false;
	int r_cpu = -ENOENT, r_global = -ENOENT, r_proc = -ENOENT, r;
	char why[400] = "";

	*c = (struct ht_ct_counters){ 0 };
	if (live) {
		r = nl_collect(&cpu, &global, &r_cpu, &r_global);
		if (r < 0)
			return r;
		if (r_cpu < 0)
			describe_failure(why, sizeof(why), SRC_CPU, r_cpu, &cpu);
		else if (r_global < 0)
			describe_failure(why, sizeof(why), SRC_GLOBAL, r_global, &global);
	}
	if (!live || r_cpu < 0 || r_global < 0) {
		r_proc = proc_collect(root, &proc_stats);
		if (r_proc == -ENOMEM)
			return r_proc;
	}
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		int k = want[i], r_nl = k == ST_COUNT ? r_global : r_cpu;

		if (live && r_nl == 0 && nl_stats.have[k])
			*out[i] = nl_stats.v[k];
		else if (r_proc == 0 && proc_stats.have[k])
			*out[i] = proc_stats.v[k];
		else
			continue;
		*have[i] = true;
		any = true;
	}
	if (live && r_cpu == 0 && r_global == 0)
		snprintf(c->source, sizeof(c->source), "ctnetlink");
	else if (live)
		snprintf(c->source, sizeof(c->source), "%s (%s)", PATH_STAT, why);
	else
		snprintf(c->source, sizeof(c->source), "%s", PATH_STAT);
	if (!any)
		return r_proc < 0 ? r_proc : -ENOENT;
	return 0;
}
