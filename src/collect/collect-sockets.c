/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "collect/collect.h"
#include "collect/procfs.h"
#include "engine/facts.h"
#include "shared/netlink.h"
#include "shared/rootfs.h"
#include "shared/util.h"

/*
 * The connection path's sockets:
 * - every TCP socket of this network namespace from NETLINK_SOCK_DIAG
 *   (inet_diag, net/ipv4/inet_diag.c; one SOCK_DIAG_BY_FAMILY dump for
 *   AF_INET and one for AF_INET6), else /proc/net/tcp and tcp6
 *   (net/ipv4/tcp_ipv4.c get_tcp4_sock(), net/ipv6/tcp_ipv6.c
 *   get_tcp6_sock()), streamed: each socket is folded into per-port
 *   listener records and a hash table of client destinations, nothing is
 *   kept per socket but a listening socket's inode;
 * - the owners of listening sockets: "socket:[INODE]" among /proc/PID/fd.
 */

#define SRC_DIAG "NETLINK_SOCK_DIAG inet_diag"
#define PATH_TCP4 "/proc/net/tcp"
#define PATH_TCP6 "/proc/net/tcp6"
#define PATH_RANGE "/proc/sys/net/ipv4/ip_local_port_range"

/* include/net/tcp_states.h */
enum {
	ST_ESTABLISHED = 1,
	ST_SYN_SENT = 2,
	ST_SYN_RECV = 3,
	ST_FIN_WAIT1 = 4,
	ST_FIN_WAIT2 = 5,
	ST_TIME_WAIT = 6,
	ST_CLOSE = 7,
	ST_CLOSE_WAIT = 8,
	ST_LAST_ACK = 9,
	ST_LISTEN = 10,
	ST_CLOSING = 11,
};

/* The states dumped: every one but SYN_RECV / NEW_SYN_RECV (request sockets) and CLOSE. */
#define DIAG_STATES                                                                      \
	((1u << ST_ESTABLISHED) | (1u << ST_SYN_SENT) | (1u << ST_FIN_WAIT1) |           \
	 (1u << ST_FIN_WAIT2) | (1u << ST_TIME_WAIT) | (1u << ST_CLOSE_WAIT) |           \
	 (1u << ST_LAST_ACK) | (1u << ST_LISTEN) | (1u << ST_CLOSING))

/* ---- parsers ---- */

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static unsigned hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return (unsigned)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (unsigned)(c - 'a' + 10);
	return (unsigned)(c - 'A' + 10);
}

/* Exactly @digits hex digits at *pp into *out. */
static int parse_hex(const char **pp, int digits, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	for (int i = 0; i < digits; i++, p++) {
		if (!is_hex(*p))
			return -EINVAL;
		v = v << 4 | hex_val(*p);
	}
	*pp = p;
	*out = v;
	return 0;
}

/* The 16-byte form of an IPv4 address: ::ffff:a.b.c.d (RFC 4291 2.5.5.2). */
static void map_v4(uint8_t out[16], const void *v4)
{
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, v4, 4);
}

static bool is_mapped(const uint8_t a[16])
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(a, prefix, sizeof(prefix)) == 0;
}

/*
 * "ADDR:PORT" of /proc/net/tcp (8 hex digits) or tcp6 (32): the kernel
 * prints each 32-bit word of the address in network byte order as a native
 * integer ("%08X" of __be32), so the bytes come back by storing the parsed
 * word in this CPU's order. The port is printed in host order (ntohs).
 */
static int parse_endpoint(const char **pp, bool v6, uint8_t addr[16], uint16_t *port)
{
	const char *p = *pp;
	uint8_t raw[16];
	uint64_t w;

	for (int i = 0; i < (v6 ? 4 : 1); i++) {
		uint32_t word;

		if (parse_hex(&p, 8, &w) < 0)
			return -EINVAL;
		word = (uint32_t)w;
		memcpy(raw + 4 * i, &word, 4);
	}
	if (*p++ != ':' || parse_hex(&p, 4, &w) < 0)
		return -EINVAL;
	if (v6)
		memcpy(addr, raw, 16);
	else
		map_v4(addr, raw);
	*port = (uint16_t)w;
	*pp = p;
	return 0;
}

int ht_proc_net_tcp_line(const char *line, bool v6, struct ht_sock *s)
{
	const char *p = skip_blank(line);
	uint64_t st, tx, rx, inode = 0;

	if (!line || !s)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	/* "sl:" */
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == skip_blank(line) || *p++ != ':')
		return -EINVAL;
	p = skip_blank(p);
	if (parse_endpoint(&p, v6, s->src, &s->sport) < 0)
		return -EINVAL;
	if (*p != ' ')
		return -EINVAL;
	p = skip_blank(p);
	if (parse_endpoint(&p, v6, s->dst, &s->dport) < 0)
		return -EINVAL;
	p = skip_blank(p);
	if (parse_hex(&p, 2, &st) < 0)
		return -EINVAL;
	p = skip_blank(p);
	if (parse_hex(&p, 8, &tx) < 0 || *p++ != ':' || parse_hex(&p, 8, &rx) < 0)
		return -EINVAL;
	/* tr:tm->when, retrnsmt, uid, timeout, then the inode (decimal). */
	for (int i = 0; i < 4; i++) {
		p = skip_blank(p);
		if (!*p || *p == '\n')
			return -EINVAL;
		p = skip_token(p);
	}
	p = skip_blank(p);
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (inode > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		inode = inode * 10 + (uint64_t)(*p - '0');
	}
	if (*p && *p != ' ' && *p != '\t' && *p != '\n')
		return -EINVAL;
	s->state = (uint8_t)st;
	s->wqueue = (uint32_t)tx;
	s->rqueue = (uint32_t)rx;
	s->inode = inode;
	return 0;
}

int ht_port_range(const char *text, int64_t *low, int64_t *high)
{
	long long lo, hi;
	char *end;

	if (!text || !low || !high)
		return -EINVAL;
	/* proc_do_large_bitmap-free: "LOW\tHIGH" from proc_dointvec_minmax of two ints. */
	errno = 0;
	lo = strtoll(text, &end, 10);
	if (errno || end == text || (*end != '\t' && *end != ' '))
		return -EINVAL;
	text = skip_blank(end);
	hi = strtoll(text, &end, 10);
	if (errno || end == text)
		return -EINVAL;
	while (*end == ' ' || *end == '\t' || *end == '\n')
		end++;
	if (*end || lo < 1 || hi > 65535 || lo > hi)
		return -EINVAL;
	*low = lo;
	*high = hi;
	return 0;
}

/* ---- what the socket scan keeps ---- */

/*
 * One listening port. backlog and queue come from ONE socket, the port's
 * worst (listener_worse()); full and at_max are over all its sockets.
 */
struct listener {
	uint16_t port;
	uint32_t backlog; /* wqueue of the worst socket */
	uint32_t queue;   /* rqueue of the same socket */
	char **addrs;
	size_t n_addrs;
	int owner;        /* lowest PID, 0 none found (yet) */
};

struct lsock {
	uint64_t inode;
	uint16_t port;
};

struct dest {
	uint8_t src[16], dst[16];
	uint16_t dport;
	bool used;
	uint32_t sockets, time_wait;
};

/* What a scan keeps: the listening sockets, the others (ports.*), or both. */
enum { WANT_LISTENERS = 1 << 0, WANT_PORTS = 1 << 1 };

struct scan {
	unsigned want;       /* WANT_* */
	struct listener *ls;
	size_t n_ls, cap_ls;
	uint32_t *by_port;   /* 65536 slots: 1 + index in ls of a port's record, 0 none */
	struct lsock *socks; /* listening sockets with an inode, for the owner search */
	size_t n_socks, cap_socks;
	struct dest *dests;  /* open addressing, capacity a power of two */
	size_t n_dests, cap_dests;
	uint64_t time_wait;
	bool have_range;
	uint16_t low, high;
};

static void scan_free(struct scan *sc)
{
	for (size_t i = 0; i < sc->n_ls; i++) {
		for (size_t j = 0; j < sc->ls[i].n_addrs; j++)
			free(sc->ls[i].addrs[j]);
		free(sc->ls[i].addrs);
	}
	free(sc->ls);
	free(sc->by_port);
	free(sc->socks);
	free(sc->dests);
	memset(sc, 0, sizeof(*sc));
}

static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t n;
	void *p;

	if (need <= *cap)
		return 0;
	n = *cap ? *cap * 2 : 8;
	while (n < need)
		n *= 2;
	p = reallocarray(*arr, n, size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

/* "0.0.0.0", "::1", IPv4-mapped addresses as IPv4. */
static void addr_text(const uint8_t a[16], char *buf, size_t size)
{
	if (is_mapped(a))
		inet_ntop(AF_INET, a + 12, buf, (socklen_t)size);
	else
		inet_ntop(AF_INET6, a, buf, (socklen_t)size);
}

/*
 * Whether a socket with queue @q and backlog @b is worse than one with
 * @wq and @wb: a full one (q >= b) first, then the higher q / b (cross
 * multiplied: no division by a backlog of 0), then the smaller backlog.
 * Without backlogs (/proc/net/tcp) only the larger queue counts.
 */
static bool listener_worse(uint32_t q, uint32_t b, uint32_t wq, uint32_t wb, bool have_backlog)
{
	bool full = q >= b, wfull = wq >= wb;
	uint64_t lhs = (uint64_t)q * wb, rhs = (uint64_t)wq * b;

	if (!have_backlog)
		return q > wq;
	if (full != wfull)
		return full;
	if (lhs != rhs)
		return lhs > rhs;
	return b < wb;
}

static int add_listener(struct scan *sc, const struct ht_sock *s, bool have_backlog)
{
	char text[INET6_ADDRSTRLEN];
	struct listener *l = NULL;
	char **addrs;
	int r;

	/* The port's record: an index by port, not a search (10,000 ports listen on some hosts). */
	if (!sc->by_port && !(sc->by_port = calloc(65536, sizeof(*sc->by_port))))
		return -ENOMEM;
	if (sc->by_port[s->sport])
		l = &sc->ls[sc->by_port[s->sport] - 1];
	if (!l) {
		r = grow((void **)&sc->ls, &sc->cap_ls, sc->n_ls + 1, sizeof(*sc->ls));
		if (r < 0)
			return r;
		l = &sc->ls[sc->n_ls++];
		*l = (struct listener){ .port = s->sport, .backlog = s->wqueue, .queue = s->rqueue };
		sc->by_port[s->sport] = (uint32_t)sc->n_ls;
	} else if (listener_worse(s->rqueue, s->wqueue, l->queue, l->backlog, have_backlog)) {
		l->backlog = s->wqueue;
		l->queue = s->rqueue;
	}

	addr_text(s->src, text, sizeof(text));
	for (size_t i = 0; i < l->n_addrs; i++)
		if (strcmp(l->addrs[i], text) == 0)
			goto inode;
	addrs = reallocarray(l->addrs, l->n_addrs + 1, sizeof(*addrs));
	if (!addrs)
		return -ENOMEM;
	l->addrs = addrs;
	l->addrs[l->n_addrs] = strdup(text);
	if (!l->addrs[l->n_addrs])
		return -ENOMEM;
	l->n_addrs++;
inode:
	if (s->inode == 0)
		return 0;
	r = grow((void **)&sc->socks, &sc->cap_socks, sc->n_socks + 1, sizeof(*sc->socks));
	if (r < 0)
		return r;
	sc->socks[sc->n_socks++] = (struct lsock){ .inode = s->inode, .port = s->sport };
	return 0;
}

/* FNV-1a over the key. */
static uint64_t dest_hash(const uint8_t src[16], const uint8_t dst[16], uint16_t dport)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < 16; i++)
		h = (h ^ src[i]) * 1099511628211ull;
	for (int i = 0; i < 16; i++)
		h = (h ^ dst[i]) * 1099511628211ull;
	h = (h ^ (dport & 0xff)) * 1099511628211ull;
	h = (h ^ (dport >> 8)) * 1099511628211ull;
	return h;
}

static struct dest *dest_slot(struct dest *t, size_t cap, const uint8_t src[16],
                              const uint8_t dst[16], uint16_t dport)
{
	size_t i = (size_t)dest_hash(src, dst, dport) & (cap - 1);

	for (;; i = (i + 1) & (cap - 1)) {
		struct dest *d = &t[i];

		if (!d->used || (d->dport == dport && memcmp(d->src, src, 16) == 0 &&
		                 memcmp(d->dst, dst, 16) == 0))
			return d;
	}
}

/* Doubles the table when it is half full: it grows with distinct keys only. */
static int dest_reserve(struct scan *sc)
{
	struct dest *t;
	size_t cap;

	if (sc->cap_dests && (sc->n_dests + 1) * 2 <= sc->cap_dests)
		return 0;
	cap = sc->cap_dests ? sc->cap_dests * 2 : 64;
	t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < sc->cap_dests; i++) {
		const struct dest *d = &sc->dests[i];

		if (d->used)
			*dest_slot(t, cap, d->src, d->dst, d->dport) = *d;
	}
	free(sc->dests);
	sc->dests = t;
	sc->cap_dests = cap;
	return 0;
}

/* Folds one socket into the scan. 0 or -ENOMEM. */
static int scan_add(struct scan *sc, const struct ht_sock *s, bool have_backlog)
{
	struct dest *d;
	int r;

	if (s->state == ST_LISTEN)
		return sc->want & WANT_LISTENERS ? add_listener(sc, s, have_backlog) : 0;
	if (!(sc->want & WANT_PORTS))
		return 0;
	if (s->state == ST_TIME_WAIT)
		sc->time_wait++;
	if (!sc->have_range || s->sport < sc->low || s->sport > sc->high)
		return 0;
	r = dest_reserve(sc);
	if (r < 0)
		return r;
	d = dest_slot(sc->dests, sc->cap_dests, s->src, s->dst, s->dport);
	if (!d->used) {
		memcpy(d->src, s->src, 16);
		memcpy(d->dst, s->dst, 16);
		d->dport = s->dport;
		d->used = true;
		sc->n_dests++;
	}
	d->sockets++;
	if (s->state == ST_TIME_WAIT)
		d->time_wait++;
	return 0;
}

/* ---- NETLINK_SOCK_DIAG ---- */

static int diag_data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct scan *sc = data;
	const struct inet_diag_msg *m;
	struct ht_sock s = { 0 };
	int r;

	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return MNL_CB_OK;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*m)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	m = mnl_nlmsg_get_payload(nlh);
	s.state = m->idiag_state;
	if (m->idiag_family == AF_INET) {
		map_v4(s.src, m->id.idiag_src);
		map_v4(s.dst, m->id.idiag_dst);
	} else if (m->idiag_family == AF_INET6) {
		memcpy(s.src, m->id.idiag_src, 16);
		memcpy(s.dst, m->id.idiag_dst, 16);
	} else {
		return MNL_CB_OK;
	}
	s.sport = ntohs(m->id.idiag_sport);
	s.dport = ntohs(m->id.idiag_dport);
	/* A TIME_WAIT socket (inet_twsk_diag_fill()) has queues and inode 0. */
	s.rqueue = m->idiag_rqueue;
	s.wqueue = m->idiag_wqueue;
	s.inode = m->idiag_inode;
	r = scan_add(sc, &s, true);
	if (r < 0) {
		errno = -r;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

/* One SOCK_DIAG_BY_FAMILY dump of @family's TCP sockets into @sc. 0 or a negative errno. */
static int diag_dump(struct mnl_socket *nl, char *buf, uint8_t family, struct scan *sc)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct inet_diag_req_v2 *d;

	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = (unsigned)time(NULL) + family;
	d = mnl_nlmsg_put_extra_header(nlh, sizeof(*d));
	d->sdiag_family = family;
	d->sdiag_protocol = IPPROTO_TCP;
	d->idiag_ext = 0;
	/* Listeners only: the kernel then walks the listening hash alone, not every connection. */
	d->idiag_states = sc->want & WANT_PORTS ? DIAG_STATES :
	                  sc->want & WANT_LISTENERS ? 1u << ST_LISTEN : 0;
	if (!(sc->want & WANT_LISTENERS))
		d->idiag_states &= ~(1u << ST_LISTEN);
	return ht_nl_request(nl, nlh, buf, HT_NL_DUMP_BUF_SIZE, diag_data_cb, sc, NULL);
}

static int scan_netlink(struct scan *sc)
{
	_cleanup_(ht_nl_closep) struct mnl_socket *nl = NULL;
	_cleanup_free_ char *buf = malloc(HT_NL_DUMP_BUF_SIZE);
	int r;

	if (!buf)
		return -ENOMEM;
	r = ht_nl_open(NETLINK_SOCK_DIAG, &nl);
	if (r < 0)
		return r;
	r = diag_dump(nl, buf, AF_INET, sc);
	if (r < 0)
		return r;
	r = diag_dump(nl, buf, AF_INET6, sc);
	/* A kernel without IPv6: inet_diag has no handler for the family (ENOENT). */
	if (r == -ENOENT || r == -EAFNOSUPPORT)
		return 0;
	return r;
}

/* ---- /proc/net/tcp ---- */

/*
 * Bounds on a tree's copy: the kernel's lines are 150 bytes (tcp) and 178
 * (tcp6); a million sockets is more than a storage host holds, and keeps
 * what the fold may grow to (one destination a socket) near 50 MiB.
 */
#define PROC_NET_TCP_LINE_MAX 4096
#define PROC_NET_TCP_LINES_MAX (1u << 20)

/*
 * Folds ROOT@path into @sc, all of it or nothing: a line not as the kernel
 * writes it (a truncated copy) refuses the whole file (-EINVAL, its line
 * number in *@bad_line), since a partial file would undercount what the
 * rules count (listeners, client ports); the other file of the pair is
 * still read. 0, a negative errno of the file, or -ENOMEM.
 */
static int scan_file(struct scan *sc, const char *root, const char *path, bool v6,
                     unsigned *bad_line)
{
	_cleanup_free_ char *line = NULL;
	_cleanup_fclose_ FILE *in = NULL;
	size_t size = 0;
	int fd = ht_open_file(root, path);

	*bad_line = 0;
	if (fd < 0)
		return fd;
	in = fdopen(fd, "re");
	if (!in) {
		close(fd);
		return -errno;
	}
	/* Two passes: every line checked before any is folded in. */
	for (int pass = 0; pass < 2; pass++) {
		unsigned lineno = 0;

		if (pass == 1 && fseek(in, 0, SEEK_SET) < 0)
			return -errno;
		for (;;) {
			struct ht_sock s;
			ssize_t n;
			int r;

			n = ht_getline_max(&line, &size, in, PROC_NET_TCP_LINE_MAX);
			if (n == -1)
				break;
			/* Longer than any line the kernel writes: not its file. */
			if (n == -E2BIG) {
				*bad_line = lineno + 1;
				return -EINVAL;
			}
			if (n < 0)
				return (int)n;
			if (++lineno > PROC_NET_TCP_LINES_MAX)
				return -EFBIG;
			if (lineno == 1) /* "  sl  local_address rem_address ..." */
				continue;
			if (ht_proc_net_tcp_line(line, v6, &s) < 0) {
				/* The live file may change between the passes: the
				 * second folds what it can, the first decided. */
				if (pass == 1)
					continue;
				*bad_line = lineno;
				return -EINVAL;
			}
			if (pass == 0)
				continue;
			r = scan_add(sc, &s, false);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* ---- owners: /proc/PID/fd ---- */

static int lsock_cmp(const void *a, const void *b)
{
	const struct lsock *x = a, *y = b;

	return x->inode < y->inode ? -1 : x->inode > y->inode;
}


struct owner_scan {
	int refused; /* fd directories that gave EACCES/EPERM */
	int refused_pid[3]; /* the first of them, by PID as the walk met them */
	int errors;  /* others (a vanished process is not one) */
	int first_errno;
};

/*
 * The listening sockets of one scan, and how far the walk of /proc/PID/fd
 * for their owners went: it goes on, from the PID it stopped at, only as
 * far as a port asked for needs (ht_listeners_owner()).
 */
struct ht_listeners {
	struct scan sc;
	char *root;          /* NULL: this host */
	bool live;
	bool have_backlog;   /* from inet_diag (not /proc/net/tcp) */
	char *source;        /* of listener.list and .addresses */
	char *skipped;       /* lines or a file of /proc/net/tcp{,6} not read, or NULL */
	DIR *proc;           /* the walk: NULL before it starts and once it ended */
	bool walked;         /* the walk ended (every process read) */
	size_t unowned;      /* ports without an owner so far */
	struct owner_scan os;
};

/* Counts @pid as refused, keeping the first few PIDs to name them. */
static void note_refused(struct owner_scan *os, int pid)
{
	if ((size_t)os->refused < ARRAY_SIZE(os->refused_pid))
		os->refused_pid[os->refused] = pid;
	os->refused++;
}

/* Owners of listening sockets found among ROOT/proc/@pid/fd (a directory read once). */
static void owners_of_pid(struct ht_listeners *L, int pid)
{
	struct scan *sc = &L->sc;
	_cleanup_closedir_ DIR *fdd = NULL;
	struct dirent *fe;
	bool refused = false;
	char path[64];
	int dfd;

	snprintf(path, sizeof(path), "%d/fd", pid);
	dfd = ht_openat_in(dirfd(L->proc), path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, !L->live);
	if (dfd < 0) {
		if (dfd == -EACCES || dfd == -EPERM)
			note_refused(&L->os, pid);
		else if (dfd != -ENOENT && dfd != -ESRCH && !L->os.errors++)
			L->os.first_errno = -dfd;
		return;
	}
	fdd = fdopendir(dfd);
	if (!fdd) {
		close(dfd);
		return;
	}
	while ((fe = readdir(fdd))) {
		char link[64];
		struct lsock key, *hit;
		ssize_t n;

		if (fe->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(fdd), fe->d_name, link, sizeof(link) - 1);
		/* proc_fd_link() checks ptrace access per link: a readable directory can still refuse. */
		if (n < 0 && (errno == EACCES || errno == EPERM) && !refused) {
			refused = true;
			note_refused(&L->os, pid);
		}
		if (n <= 0)
			continue;
		link[n] = '\0';
		key.inode = socket_inode(link);
		if (!key.inode)
			continue;
		hit = bsearch(&key, sc->socks, sc->n_socks, sizeof(key), lsock_cmp);
		if (!hit)
			continue;
		/* Several sockets can share an inode only in theory; check neighbours. */
		while (hit > sc->socks && hit[-1].inode == key.inode)
			hit--;
		for (; hit < sc->socks + sc->n_socks && hit->inode == key.inode; hit++) {
			struct listener *l = &sc->ls[sc->by_port[hit->port] - 1];

			if (!l->owner)
				L->unowned--;
			if (!l->owner || pid < l->owner)
				l->owner = pid;
		}
	}
}

/*
 * Walks ROOT/proc/PID/fd, readlink() of each descriptor, until the port
 * @want has an owner (0: every port does) or every process was read. The
 * live /proc lists PIDs ascending (proc_pid_readdir() walks next_tgid()),
 * so the first owner found is the lowest PID; a --root tree's directory
 * order is the file system's, so there the walk reads everything at once.
 * A process that vanishes is skipped; one whose directory is refused
 * (another user's, not root) is counted.
 */
static void walk_owners(struct ht_listeners *L, uint16_t want)
{
	struct scan *sc = &L->sc;
	struct dirent *de;

	if (L->walked)
		return;
	if (!L->proc) {
		if (sc->n_socks == 0) {
			L->walked = true;
			return;
		}
		L->proc = ht_root_opendir(L->root, "/proc");
		if (!L->proc) {
			L->os.errors++;
			L->os.first_errno = errno;
			L->walked = true;
			return;
		}
	}
	while ((de = readdir(L->proc))) {
		int pid;

		if (!parse_pid(de->d_name, &pid))
			continue;
		owners_of_pid(L, pid);
		if (!L->live)
			continue;
		if (L->unowned == 0 || (want && sc->ls[sc->by_port[want] - 1].owner))
			return;
	}
	closedir(L->proc);
	L->proc = NULL;
	L->walked = true;
}

size_t ht_listeners_sockets(const struct ht_listeners *L)
{
	return L ? L->sc.n_socks : 0;
}

size_t ht_listeners_refused(const struct ht_listeners *L, int *pids, size_t max)
{
	size_t kept;

	if (!L || L->os.refused <= 0)
		return 0;
	kept = (size_t)L->os.refused < ARRAY_SIZE(L->os.refused_pid) ? (size_t)L->os.refused
	                                                             : ARRAY_SIZE(L->os.refused_pid);
	for (size_t i = 0; i < kept && i < max; i++)
		pids[i] = L->os.refused_pid[i];
	return (size_t)L->os.refused;
}

int ht_listeners_held(struct ht_listeners *L, int pid)
{
	struct scan *sc;
	_cleanup_closedir_ DIR *fdd = NULL;
	struct dirent *fe;
	char rel[64];
	int dfd;

	if (!L || pid <= 0 || L->sc.n_socks == 0)
		return 0;
	sc = &L->sc;
	snprintf(rel, sizeof(rel), "/proc/%d/fd", pid);
	dfd = ht_root_open(L->root, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd == -ENOMEM)
		return dfd;
	if (dfd < 0)
		return 0;
	fdd = fdopendir(dfd);
	if (!fdd) {
		close(dfd);
		return errno == ENOMEM ? -ENOMEM : 0;
	}
	while ((fe = readdir(fdd))) {
		char link[64];
		struct lsock key;
		ssize_t n;

		if (fe->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(fdd), fe->d_name, link, sizeof(link) - 1);
		/* proc_fd_link() refuses per link (ptrace access): it may hold one. */
		if (n < 0 && (errno == EACCES || errno == EPERM))
			return 1;
		if (n <= 0)
			continue;
		link[n] = '\0';
		key.inode = socket_inode(link);
		if (key.inode && bsearch(&key, sc->socks, sc->n_socks, sizeof(key), lsock_cmp))
			return 1;
	}
	return 0;
}

void ht_listeners_free(struct ht_listeners *L)
{
	if (!L)
		return;
	if (L->proc)
		closedir(L->proc);
	scan_free(&L->sc);
	free(L->root);
	free(L->source);
	free(L->skipped);
	free(L);
}

const char *ht_listeners_skipped(const struct ht_listeners *l)
{
	return l ? l->skipped : NULL;
}

/* ---- facts ---- */

static int listener_cmp(const void *a, const void *b)
{
	const struct listener *x = a, *y = b;

	return (int)x->port - (int)y->port;
}


static int set_listener_fact(struct ht_facts *f, uint16_t port, const char *suffix,
                             const struct ht_value *v, int err, const char *source)
{
	char name[64];

	snprintf(name, sizeof(name), "listener.%u.%s", port, suffix);
	if (!v)
		return ht_facts_set_errno(f, name, err, ht_fact_def_unit(name), source);
	return ht_facts_set(f, name, v, ht_fact_def_unit(name), source);
}

/*
 * Why no owner was found when descriptors were refused, naming the refused
 * processes: "no readable /proc/PID/fd holds the socket; refused:
 * /proc/300/fd (minio), ... (another user's process when not root; as root,
 * another PID namespace or a ptrace restriction)". 0 or -ENOMEM.
 */
static int refused_text(const char *root, const struct owner_scan *os, char **out)
{
	char buf[512];
	size_t len;
	int kept = os->refused < (int)ARRAY_SIZE(os->refused_pid) ? os->refused
	                                                           : (int)ARRAY_SIZE(os->refused_pid);

	/* Root on this host: only another PID namespace or a ptrace restriction refuses it. */
	bool root_here = ht_root_is_live(root) && geteuid() == 0;

	len = (size_t)snprintf(buf, sizeof(buf), "no readable /proc/PID/fd holds the socket; %s:",
	                       root_here ? "refused even to root (another PID namespace or a "
	                                   "ptrace restriction)"
	                                 : "refused");
	for (int i = 0; i < kept && len < sizeof(buf); i++) {
		_cleanup_free_ char *comm = NULL;
		char path[64];
		int r;

		snprintf(path, sizeof(path), "/proc/%d/comm", os->refused_pid[i]);
		r = ht_read_file(root, path, &comm);
		if (r == -ENOMEM)
			return r;
		if (r >= 0 && (!comm[0] || ht_utf8_invalid(comm) || strlen(comm) > 64))
			r = -EINVAL;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s /proc/%d/fd%s%s%s",
		                        i ? "," : "", os->refused_pid[i], r >= 0 ? " (" : "",
		                        r >= 0 ? comm : "", r >= 0 ? ")" : "");
	}
	if (len < sizeof(buf) && os->refused > kept)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, " and %d more",
		                        os->refused - kept);
	if (len < sizeof(buf) && !root_here)
		snprintf(buf + len, sizeof(buf) - len,
		         " (another user's process when not root; as root, another PID namespace "
		         "or a ptrace restriction)");
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

/* listener.PORT.{pid,process} of one listener. */
static int owner_facts(struct ht_facts *f, const char *root, const struct listener *l,
                       const struct owner_scan *os)
{
	_cleanup_free_ char *comm = NULL, *src_pid = NULL, *src_comm = NULL;
	char path[64];
	struct ht_value v;
	int r, e;

	if (!l->owner) {
		_cleanup_free_ char *refused = NULL;
		const char *why;

		if (os->refused) {
			r = refused_text(root, os, &refused);
			if (r < 0)
				return r;
			e = EACCES;
			why = refused;
		} else {
			e = ENOENT;
			why = "no /proc/PID/fd holds the socket (a process of another PID namespace, "
			      "a kernel socket, or a socket in flight in a unix message)";
		}
		r = set_listener_fact(f, l->port, "pid", NULL, e, why);
		if (r < 0)
			return r;
		return set_listener_fact(f, l->port, "process", NULL, e, why);
	}
	if (asprintf(&src_pid, "/proc/%d/fd", l->owner) < 0)
		return -ENOMEM;
	v = ht_int(l->owner);
	r = set_listener_fact(f, l->port, "pid", &v, 0, src_pid);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/comm", l->owner);
	src_comm = strdup(path);
	if (!src_comm)
		return -ENOMEM;
	r = ht_read_file(root, path, &comm);
	if (r == -ENOMEM)
		return r;
	if (r >= 0 && (!comm[0] || ht_utf8_invalid(comm)))
		r = -EINVAL;
	if (r < 0)
		return set_listener_fact(f, l->port, "process", NULL, r, src_comm);
	v = (struct ht_value){ .type = HT_T_STR, .s = comm };
	return set_listener_fact(f, l->port, "process", &v, 0, src_comm);
}

/* listener.PORT.addresses: the addresses of the port's sockets, sorted. */
static int address_fact(struct ht_facts *f, struct listener *l, const char *source)
{
	_cleanup_free_ char *addrs = NULL;
	size_t alen = 0;
	struct ht_value v;

	if (l->n_addrs > 1)
		qsort(l->addrs, l->n_addrs, sizeof(*l->addrs), str_cmp);
	for (size_t j = 0; j < l->n_addrs; j++)
		alen += strlen(l->addrs[j]) + 1;
	addrs = calloc(1, alen + 1);
	if (!addrs)
		return -ENOMEM;
	for (size_t j = 0; j < l->n_addrs; j++) {
		if (j)
			strcat(addrs, " ");
		strcat(addrs, l->addrs[j]);
	}
	v = (struct ht_value){ .type = HT_T_STR, .s = addrs };
	return set_listener_fact(f, l->port, "addresses", &v, 0, source);
}

int ht_listeners_addresses(struct ht_facts *f, struct ht_listeners *L, unsigned port)
{
	struct scan *sc = &L->sc;

	if (port == 0 || port > 65535 || !sc->by_port || !sc->by_port[port])
		return 0;
	return address_fact(f, &sc->ls[sc->by_port[port] - 1], L->source);
}

/* listener.list and listener.PORT.{backlog,queue}: what the scan gives each port. */
static int listener_facts(struct ht_facts *f, struct scan *sc, bool have_backlog,
                          const char *source)
{
	_cleanup_free_ char *list = NULL;
	size_t len = 0;
	int r;

	/* qsort() with a NULL array is undefined even for 0 elements (no listener at all). */
	if (sc->n_ls > 1) {
		qsort(sc->ls, sc->n_ls, sizeof(*sc->ls), listener_cmp);
		for (size_t i = 0; i < sc->n_ls; i++)
			sc->by_port[sc->ls[i].port] = (uint32_t)i + 1;
	}
	list = calloc(1, sc->n_ls * 6 + 1);
	if (!list)
		return -ENOMEM;
	for (size_t i = 0; i < sc->n_ls; i++) {
		struct listener *l = &sc->ls[i];
		struct ht_value v;

		len += (size_t)sprintf(list + len, "%s%u", i ? " " : "", l->port);
		if (have_backlog) {
			v = ht_int(l->backlog);
			r = set_listener_fact(f, l->port, "backlog", &v, 0, SRC_DIAG " idiag_wqueue");
			v = ht_int(l->queue);
			if (r >= 0)
				r = set_listener_fact(f, l->port, "queue", &v, 0,
				                      SRC_DIAG " idiag_rqueue");
		} else {
			r = set_listener_fact(f, l->port, "backlog", NULL, ENOENT,
			                      "/proc/net/tcp has no backlog (NETLINK_SOCK_DIAG has)");
			v = ht_int(l->queue);
			if (r >= 0)
				r = set_listener_fact(f, l->port, "queue", &v, 0,
				                      "/proc/net/tcp rx_queue");
		}
		if (r < 0)
			return r;
	}
	return ht_facts_set_str(f, "listener.list", list, source);
}

/* 127.0.0.0/8 (as ::ffff:127.x here) or ::1. */
static bool is_loopback(const uint8_t a[16])
{
	static const uint8_t one[16] = { [15] = 1 };

	return (is_mapped(a) && a[12] == 127) || memcmp(a, one, 16) == 0;
}

/* "ADDR:PORT", "[ADDR]:PORT" for IPv6. */
static void dest_text(const uint8_t a[16], uint16_t port, char *buf, size_t size)
{
	char t[INET6_ADDRSTRLEN];

	addr_text(a, t, sizeof(t));
	if (is_mapped(a))
		snprintf(buf, size, "%s:%u", t, port);
	else
		snprintf(buf, size, "[%s]:%u", t, port);
}

/* The order of ties: destination address, port, then source address. */
static int dest_cmp(const struct dest *a, const struct dest *b)
{
	int c = memcmp(a->dst, b->dst, 16);

	if (c)
		return c;
	if (a->dport != b->dport)
		return a->dport < b->dport ? -1 : 1;
	return memcmp(a->src, b->src, 16);
}

static int ports_facts(struct ht_facts *f, struct scan *sc, const char *source, int range_err)
{
	static const char none[] = "no client socket in ip_local_port_range";
	const struct dest *top = NULL;
	char buf[INET6_ADDRSTRLEN + 16];
	int r;

	r = ht_facts_set_int(f, "ports.time_wait", (int64_t)sc->time_wait,
	                     ht_fact_def_unit("ports.time_wait"), source);
	if (r < 0)
		return r;
	if (!sc->have_range) {
		static const char *const names[] = { "ports.destinations", "ports.top.destination",
			                              "ports.top.loopback", "ports.top.sockets",
			                              "ports.top.source", "ports.top.time_wait" };

		for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
			r = ht_facts_set_errno(f, names[i], range_err, ht_fact_def_unit(names[i]),
			                       "net.ipv4.ip_local_port_range");
			if (r < 0)
				return r;
		}
		return 0;
	}
	for (size_t i = 0; i < sc->cap_dests; i++) {
		const struct dest *d = &sc->dests[i];

		if (d->used && (!top || d->sockets > top->sockets ||
		                (d->sockets == top->sockets && dest_cmp(d, top) < 0)))
			top = d;
	}
	r = ht_facts_set_int(f, "ports.destinations", (int64_t)sc->n_dests,
	                     ht_fact_def_unit("ports.destinations"), source);
	if (r < 0)
		return r;
	if (!top) {
		r = ht_facts_set_int(f, "ports.top.sockets", 0,
		                     ht_fact_def_unit("ports.top.sockets"), source);
		if (r >= 0)
			r = ht_facts_set_int(f, "ports.top.time_wait", 0,
			                     ht_fact_def_unit("ports.top.time_wait"), source);
		if (r >= 0)
			r = ht_facts_set_errno(f, "ports.top.destination", ENOENT,
			                       ht_fact_def_unit("ports.top.destination"), none);
		if (r >= 0)
			r = ht_facts_set_errno(f, "ports.top.loopback", ENOENT,
			                       ht_fact_def_unit("ports.top.loopback"), none);
		if (r >= 0)
			r = ht_facts_set_errno(f, "ports.top.source", ENOENT,
			                       ht_fact_def_unit("ports.top.source"), none);
		return r;
	}
	dest_text(top->dst, top->dport, buf, sizeof(buf));
	r = ht_facts_set_str(f, "ports.top.destination", buf, source);
	if (r >= 0)
		r = ht_facts_set_bool(f, "ports.top.loopback", is_loopback(top->dst), source);
	if (r < 0)
		return r;
	addr_text(top->src, buf, sizeof(buf));
	r = ht_facts_set_str(f, "ports.top.source", buf, source);
	if (r >= 0)
		r = ht_facts_set_int(f, "ports.top.sockets", top->sockets,
		                     ht_fact_def_unit("ports.top.sockets"), source);
	if (r >= 0)
		r = ht_facts_set_int(f, "ports.top.time_wait", top->time_wait,
		                     ht_fact_def_unit("ports.top.time_wait"), source);
	return r;
}

/* net.ipv4.ip_local_port_range and ports.range.*; fills sc's range. */
static int range_facts(struct ht_facts *f, const char *root, struct scan *sc, int *range_err)
{
	_cleanup_free_ char *text = NULL;
	int64_t lo, hi;
	char buf[32];
	int r;

	r = ht_read_file(root, PATH_RANGE, &text);
	if (r == -ENOMEM)
		return r;
	if (r >= 0)
		r = ht_port_range(text, &lo, &hi);
	if (r < 0) {
		*range_err = -r;
		r = ht_facts_set_errno(f, "net.ipv4.ip_local_port_range", *range_err,
		                       ht_fact_def_unit("net.ipv4.ip_local_port_range"),
		                       PATH_RANGE);
		if (r >= 0)
			r = ht_facts_set_errno(f, "ports.range.low", *range_err,
			                       ht_fact_def_unit("ports.range.low"), PATH_RANGE);
		if (r >= 0)
			r = ht_facts_set_errno(f, "ports.range.high", *range_err,
			                       ht_fact_def_unit("ports.range.high"), PATH_RANGE);
		return r;
	}
	sc->have_range = true;
	sc->low = (uint16_t)lo;
	sc->high = (uint16_t)hi;
	snprintf(buf, sizeof(buf), "%" PRId64 " %" PRId64, lo, hi);
	r = ht_facts_set_str(f, "net.ipv4.ip_local_port_range", buf, PATH_RANGE);
	if (r >= 0)
		r = ht_facts_set_int(f, "ports.range.low", lo, ht_fact_def_unit("ports.range.low"),
		                     PATH_RANGE);
	if (r >= 0)
		r = ht_facts_set_int(f, "ports.range.high", hi,
		                     ht_fact_def_unit("ports.range.high"), PATH_RANGE);
	return r;
}

/* @names unavailable with @err (no source of sockets at all). */
static int sockets_unavailable(struct ht_facts *f, const char *const *names, size_t n, int err,
                               const char *source)
{
	for (size_t i = 0; i < n; i++) {
		int r = ht_facts_set_errno(f, names[i], err, ht_fact_def_unit(names[i]), source);

		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * One scan of this network namespace's TCP sockets into @sc (sc->want
 * says which): live, NETLINK_SOCK_DIAG (*@have_backlog true); under --root
 * or when sock_diag is refused, ROOT/proc/net/tcp and tcp6. *@source names
 * what was read, or, when nothing could be, why (caller frees). Returns 0,
 * -ENOMEM, or the negative errno of the files (the scan is empty then).
 */
static int scan_sockets(struct scan *sc, const char *root, bool *have_backlog, char **source,
                        char **skipped)
{
	unsigned want = sc->want;
	int r = -ENOENT;

	*have_backlog = false;
	if (ht_root_is_live(root)) {
		r = scan_netlink(sc);
		if (r == -ENOMEM)
			return r;
		*have_backlog = r >= 0;
		if (r >= 0)
			return (*source = strdup(SRC_DIAG)) ? 0 : -ENOMEM;
	}
	/* Under --root, or when sock_diag is refused: the files, without backlogs. */
	{
		struct scan fresh = { .want = want, .have_range = sc->have_range, .low = sc->low,
			              .high = sc->high };

		scan_free(sc);
		*sc = fresh;
	}
	{
		static const char *const paths[2] = { PATH_TCP4, PATH_TCP6 };
		unsigned bad[2];
		int rf[2];
		_cleanup_free_ char *read = NULL, *notes = NULL;

		for (int i = 0; i < 2; i++) {
			rf[i] = scan_file(sc, root, paths[i], i == 1, &bad[i]);
			if (rf[i] == -ENOMEM)
				return rf[i];
		}
		for (int i = 0; i < 2; i++) {
			char *t = NULL;

			if (rf[i] >= 0) {
				if (asprintf(&t, "%s%s%s", read ? read : "", read ? " and " : "",
				             i ? (read ? "tcp6" : PATH_TCP6) : PATH_TCP4) < 0)
					return -ENOMEM;
				free(read);
				read = t;
				continue;
			}
			/* A kernel without IPv6 has no tcp6: no note for it. */
			if (i == 1 && rf[i] == -ENOENT)
				continue;
			if (rf[i] == -EINVAL && bad[i])
				r = asprintf(&t, "%s%s%s: a line not as the kernel writes it (line %u)",
				             notes ? notes : "", notes ? "; " : "", paths[i], bad[i]);
			else if (rf[i] == -EFBIG)
				r = asprintf(&t, "%s%s%s: more than %u lines (sockets), not read",
				             notes ? notes : "", notes ? "; " : "", paths[i],
				             PROC_NET_TCP_LINES_MAX);
			else
				r = asprintf(&t, "%s%s%s: %s", notes ? notes : "", notes ? "; " : "",
				             paths[i], strerror(-rf[i]));
			if (r < 0)
				return -ENOMEM;
			free(notes);
			notes = t;
		}
		if (rf[0] < 0 && rf[1] < 0) {
			/* Nothing read: the error of the IPv4 file, or of tcp6 when tcp was absent. */
			int i = rf[0] == -ENOENT && rf[1] != -ENOENT ? 1 : 0;

			/* The fact's errno says the rest; a bad line needs its file and line. */
			r = rf[i];
			if (r == -EINVAL || r == -EFBIG ? asprintf(source, "%s", notes) < 0
			                 : !(*source = strdup(paths[i])))
				return -ENOMEM;
			return r;
		}
		if (asprintf(source, "%s%s%s%s", read, notes ? " (not read: " : "",
		             notes ? notes : "", notes ? ")" : "") < 0)
			return -ENOMEM;
		if (skipped && notes)
			*skipped = TAKE_PTR(notes);
		return 0;
	}
}

int ht_collect_listeners(struct ht_facts *f, const char *root, struct ht_listeners **out)
{
	static const char *const names[] = { "listener.list" };
	struct ht_listeners *L = calloc(1, sizeof(*L));
	int r;

	*out = NULL;
	if (!L || (root && !(L->root = strdup(root)))) {
		free(L);
		return -ENOMEM;
	}
	L->live = ht_root_is_live(root);
	L->sc.want = WANT_LISTENERS;
	r = scan_sockets(&L->sc, root, &L->have_backlog, &L->source, &L->skipped);
	if (r == -ENOMEM)
		goto fail;
	if (r < 0) {
		r = sockets_unavailable(f, names, ARRAY_SIZE(names), -r, L->source);
		if (r < 0)
			goto fail;
		scan_free(&L->sc);
	} else {
		r = listener_facts(f, &L->sc, L->have_backlog, L->source);
		if (r < 0)
			goto fail;
	}
	L->unowned = L->sc.n_ls;
	if (L->sc.n_socks > 1)
		qsort(L->sc.socks, L->sc.n_socks, sizeof(*L->sc.socks), lsock_cmp);
	*out = L;
	return 0;
fail:
	ht_listeners_free(L);
	return r;
}

int ht_listeners_owner(struct ht_facts *f, struct ht_listeners *L, unsigned port)
{
	struct scan *sc = &L->sc;
	const struct listener *l;

	if (port == 0 || port > 65535 || !sc->by_port || !sc->by_port[port])
		return 0;
	l = &sc->ls[sc->by_port[port] - 1];
	if (!l->owner)
		walk_owners(L, (uint16_t)port);
	/* Not found before the walk ended: the reason counts every process read. */
	if (!l->owner && !L->walked)
		walk_owners(L, 0);
	return owner_facts(f, L->root, l, &L->os);
}

int ht_collect_ports(struct ht_facts *f, const char *root)
{
	static const char *const names[] = {
		"ports.destinations", "ports.time_wait",   "ports.top.destination",
		"ports.top.loopback", "ports.top.sockets", "ports.top.source",
		"ports.top.time_wait",
	};
	struct scan sc = { .want = WANT_PORTS };
	_cleanup_free_ char *source = NULL;
	const struct ht_fact *lo = ht_facts_get(f, "ports.range.low");
	const struct ht_fact *hi = ht_facts_get(f, "ports.range.high");
	int range_err = ENOENT, r;
	bool have_backlog;

	/* The range ht_collect_port_range() read. */
	if (lo && hi && lo->value.type == HT_T_INT && hi->value.type == HT_T_INT) {
		sc.have_range = true;
		sc.low = (uint16_t)lo->value.i;
		sc.high = (uint16_t)hi->value.i;
	} else if (lo && lo->error) {
		range_err = lo->error;
	}
	r = scan_sockets(&sc, root, &have_backlog, &source, NULL);
	if (r == -ENOMEM)
		goto out;
	if (r < 0)
		r = sockets_unavailable(f, names, ARRAY_SIZE(names), -r, source);
	else
		r = ports_facts(f, &sc, source, range_err);
out:
	scan_free(&sc);
	return r == -ENOMEM ? r : 0;
}

int ht_collect_port_range(struct ht_facts *f, const char *root)
{
	struct scan sc = { 0 };
	int range_err = 0;

	return range_facts(f, root, &sc, &range_err);
}

int ht_collect_sockets(struct ht_facts *f, const char *root)
{
	struct ht_listeners *L = NULL;
	int r = ht_collect_listeners(f, root, &L);

	for (size_t i = 0; r >= 0 && i < L->sc.n_ls; i++) {
		r = ht_listeners_addresses(f, L, L->sc.ls[i].port);
		if (r >= 0)
			r = ht_listeners_owner(f, L, L->sc.ls[i].port);
	}
	ht_listeners_free(L);
	if (r >= 0)
		r = ht_collect_port_range(f, root);
	if (r >= 0)
		r = ht_collect_ports(f, root);
	return r == -ENOMEM ? r : 0;
}

/* ---- another network namespace's sockets, in brief ---- */

int ht_ns_tcp_scan(const char *root, int pid, bool in_ns, const struct ht_ns_range *range,
                   bool ports, struct ht_ns_tcp *out, char **source)
{
	struct scan sc = { .want = WANT_LISTENERS | (ports ? WANT_PORTS : 0) };
	const struct listener *worst = NULL;
	const struct dest *top = NULL;
	int r;

	*out = (struct ht_ns_tcp){ 0 };
	*source = NULL;
	if (range) {
		sc.have_range = true;
		sc.low = range->low;
		sc.high = range->high;
	}
	if (in_ns) {
		r = scan_netlink(&sc);
		if (r >= 0) {
			out->have_backlog = true;
			if (!(*source = strdup(SRC_DIAG " in the namespace")))
				r = -ENOMEM;
		}
	} else {
		char p4[64], p6[64];
		unsigned bad;
		int r6;

		snprintf(p4, sizeof(p4), "/proc/%d/net/tcp", pid);
		snprintf(p6, sizeof(p6), "/proc/%d/net/tcp6", pid);
		r = scan_file(&sc, root, p4, false, &bad);
		r6 = r == -ENOMEM ? r : scan_file(&sc, root, p6, true, &bad);
		/* A kernel without IPv6 has no tcp6. */
		if (r >= 0 && r6 < 0 && r6 != -ENOENT)
			r = r6;
		if (r >= 0 && asprintf(source, "%s and tcp6", p4) < 0)
			r = -ENOMEM;
		else if (r < 0 && r != -ENOMEM && asprintf(source, "%s", p4) < 0)
			r = -ENOMEM;
	}
	if (r < 0)
		goto out;
	out->have_range = sc.have_range;
	out->have_ports = sc.have_range && ports;
	out->listeners = (uint32_t)sc.n_ls;
	out->time_wait = sc.time_wait;
	for (size_t i = 0; i < sc.n_ls; i++)
		if (!worst || listener_worse(sc.ls[i].queue, sc.ls[i].backlog, worst->queue,
		                             worst->backlog, out->have_backlog) ||
		    (!listener_worse(worst->queue, worst->backlog, sc.ls[i].queue,
		                     sc.ls[i].backlog, out->have_backlog) &&
		     sc.ls[i].port < worst->port))
			worst = &sc.ls[i];
	if (worst) {
		out->top_port = worst->port;
		out->top_queue = worst->queue;
		out->top_backlog = worst->backlog;
		for (size_t i = 0; i < sc.n_socks && !out->top_inode; i++)
			if (sc.socks[i].port == worst->port)
				out->top_inode = sc.socks[i].inode;
	}
	for (size_t i = 0; i < sc.cap_dests; i++) {
		const struct dest *d = &sc.dests[i];

		if (d->used && (!top || d->sockets > top->sockets ||
		                (d->sockets == top->sockets && dest_cmp(d, top) < 0)))
			top = d;
	}
	if (top) {
		dest_text(top->dst, top->dport, out->top_destination, sizeof(out->top_destination));
		out->top_sockets = top->sockets;
		out->top_time_wait = top->time_wait;
	}
out:
	scan_free(&sc);
	return r;
}
