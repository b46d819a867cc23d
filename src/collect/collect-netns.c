/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every network namespace a process lives in, other than hosttune's own:
 * a container, a pod or an LXC guest has its own net.core.somaxconn, port
 * range, TIME_WAIT table and nstat counters, which the host's files do not
 * show (struct net, include/net/net_namespace.h; each sysctl of
 * /proc/sys/net is the reader's namespace's: net_ctl_header_lookup() in
 * net/sysctl_net.c).
 *
 * The namespaces are found by /proc/PID/ns/net ("net:[INODE]"), one
 * process each standing for its namespace (the lowest PID). What
 * /proc/PID/net shows needs no more: netstat, sockstat and, without root,
 * tcp and tcp6. The sysctls and the sockets' backlogs need to be read from
 * inside: live and as root, this thread enters the namespace with
 * setns(2), reads /proc/sys/net and dumps its sockets with sock_diag, and
 * goes back to its own namespace before anything else is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/collect.h"
#include "collect/ctstat.h"
#include "collect/kube-proxy.h"
#include "collect/procfs.h"
#include "engine/facts.h"
#include "shared/rootfs.h"
#include "shared/util.h"

/* The most namespaces judged; past it netns.skipped counts the rest. */
#define NETNS_MAX 4096

struct ns_proc {
	uint64_t ino; /* the namespace's inode */
	int pid;
};

struct netns {
	uint64_t ino;
	int pid;                     /* its lowest PID */
	unsigned procs;              /* processes in it */
	const struct ns_proc *list;  /* they, by PID (find_namespaces()'s array) */
};

/* "net:[4026531992]" -> 4026531992; 0 for anything else. */
static uint64_t ns_inode(const char *link)
{
	uint64_t v = 0;
	const char *p;

	if (strncmp(link, "net:[", 5) != 0)
		return 0;
	for (p = link + 5; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	return p[0] == ']' && p[1] == '\0' && p > link + 5 ? v : 0;
}

/* The namespace of ROOT@path ("/proc/PID/ns/net"): its inode, or a negative errno. */
static int64_t read_ns(const char *root, const char *path, uint64_t *ino)
{
	char buf[64];
	int r = ht_root_readlink(root, path, buf, sizeof(buf));

	if (r < 0)
		return r;
	*ino = ns_inode(buf);
	return *ino ? 0 : -EINVAL;
}

static int proc_cmp(const void *a, const void *b)
{
	const struct ns_proc *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * hosttune's own namespace: live, /proc/self's; in a tree, ROOT/proc/self's
 * when the tree has one, else PID 1's. 0 when none is known.
 */
static uint64_t own_ns(const char *root)
{
	uint64_t ino = 0;

	if (read_ns(root, "/proc/self/ns/net", &ino) == 0)
		return ino;
	if (!ht_root_is_live(root) && read_ns(root, "/proc/1/ns/net", &ino) == 0)
		return ino;
	return 0;
}

/*
 * Every process's namespace but @own, grouped: *@v (sorted by inode) and
 * *@n, their processes in *@all (the caller frees both); *@refused counts
 * processes whose link could not be read (another user's without root),
 * *@refused_pid the lowest of them (0 for none). 0 or -ENOMEM; without
 * /proc, the open's errno.
 */
static int find_namespaces(const char *root, uint64_t own, struct netns **v, size_t *n,
                           struct ns_proc **all, unsigned *refused, int *refused_pid)
{
	_cleanup_closedir_ DIR *d = ht_root_opendir(root, "/proc");
	struct ns_proc *procs = NULL;
	size_t np = 0, cap = 0;
	struct dirent *de;
	int r = 0;

	*v = NULL;
	*n = 0;
	*all = NULL;
	*refused = 0;
	*refused_pid = 0;
	if (!d)
		return errno ? -errno : -ENOENT;
	while ((de = readdir(d))) {
		char path[64];
		uint64_t ino;
		int pid;

		if (!parse_pid(de->d_name, &pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
		r = (int)read_ns(root, path, &ino);
		if (r == -ENOMEM)
			break;
		if (r < 0) {
			/* Gone since readdir(), or a kernel thread without one: nothing to count. */
			if (r != -ENOENT && r != -ESRCH) {
				(*refused)++;
				if (!*refused_pid || pid < *refused_pid)
					*refused_pid = pid;
			}
			r = 0;
			continue;
		}
		if (ino == own)
			continue;
		if (np == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct ns_proc *t = reallocarray(procs, nc, sizeof(*procs));

			if (!t) {
				r = -ENOMEM;
				break;
			}
			procs = t;
			cap = nc;
		}
		procs[np++] = (struct ns_proc){ .ino = ino, .pid = pid };
	}
	if (r >= 0 && np > 0) {
		qsort(procs, np, sizeof(*procs), proc_cmp);
		for (size_t i = 0; i < np; i++) {
			if (*n > 0 && (*v)[*n - 1].ino == procs[i].ino) {
				(*v)[*n - 1].procs++;
				continue;
			}
			if (*n % 64 == 0) {
				struct netns *t = reallocarray(*v, *n + 64, sizeof(**v));

				if (!t) {
					r = -ENOMEM;
					break;
				}
				*v = t;
			}
			(*v)[(*n)++] = (struct netns){ .ino = procs[i].ino, .pid = procs[i].pid,
				                       .procs = 1, .list = &procs[i] };
		}
	}
	if (r < 0) {
		free(procs);
		free(*v);
		*v = NULL;
		*n = 0;
		return r;
	}
	*all = procs;
	return 0;
}

/* netns.INO.SUFFIX. */
static int ns_name(char *buf, size_t size, uint64_t ino, const char *suffix)
{
	int n = snprintf(buf, size, "netns.%" PRIu64 ".%s", ino, suffix);

	return n < 0 || (size_t)n >= size ? -EINVAL : 0;
}

static int set_int(struct ht_facts *f, uint64_t ino, const char *suffix, int64_t v,
                   const char *src)
{
	char name[96];
	int r = ns_name(name, sizeof(name), ino, suffix);

	return r < 0 ? r : ht_facts_set_int(f, name, v, ht_fact_def_unit(name), src);
}

static int set_str(struct ht_facts *f, uint64_t ino, const char *suffix, const char *s,
                   const char *src)
{
	char name[96];
	int r = ns_name(name, sizeof(name), ino, suffix);

	if (r < 0)
		return r;
	if (!*s)
		return ht_facts_set_errno(f, name, ENOENT, NULL, src);
	return ht_facts_set_str(f, name, s, src);
}

static int set_err(struct ht_facts *f, uint64_t ino, const char *suffix, int err,
                   const char *src)
{
	char name[96];
	int r = ns_name(name, sizeof(name), ino, suffix);

	return r < 0 ? r : ht_facts_set_errno(f, name, err, ht_fact_def_unit(name), src);
}

/*
 * The counters of ROOT/proc/PID/net/netstat and sockstat; *@sockets gets
 * the namespace's TCP sockets in use and in TIME_WAIT (-1 unknown).
 */
static int counter_facts(struct ht_facts *f, const char *root, const struct netns *ns,
                         int64_t *sockets)
{
	static const struct {
		const char *suffix, *prefix, *field;
	} counters[] = {
		{ "listen_overflows", "TcpExt", "ListenOverflows" },
		{ "listen_drops", "TcpExt", "ListenDrops" },
		{ "tw_overflows", "TcpExt", "TCPTimeWaitOverflow" },
	};
	_cleanup_free_ char *netstat = NULL, *sockstat = NULL;
	char path[64], src[128];
	int64_t v;
	int r, rn;

	snprintf(path, sizeof(path), "/proc/%d/net/netstat", ns->pid);
	rn = ht_read_file(root, path, &netstat);
	if (rn == -ENOMEM)
		return rn;
	for (size_t i = 0; i < ARRAY_SIZE(counters); i++) {
		snprintf(src, sizeof(src), "%s %s%s", path, counters[i].prefix, counters[i].field);
		r = rn < 0 ? rn
		           : ht_nstat_value(netstat, counters[i].prefix, counters[i].field, &v);
		r = r < 0 ? set_err(f, ns->ino, counters[i].suffix, r, src)
		          : set_int(f, ns->ino, counters[i].suffix, v, src);
		if (r < 0)
			return r;
	}
	snprintf(path, sizeof(path), "/proc/%d/net/sockstat", ns->pid);
	r = ht_read_file(root, path, &sockstat);
	if (r == -ENOMEM)
		return r;
	snprintf(src, sizeof(src), "%s TCP tw", path);
	*sockets = -1;
	if (r >= 0)
		r = ht_sockstat_value(sockstat, "TCP", "tw", &v);
	if (r >= 0 && ht_sockstat_value(sockstat, "TCP", "inuse", sockets) < 0)
		*sockets = -1;
	else if (r >= 0)
		*sockets += v;
	return r < 0 ? set_err(f, ns->ino, "time_wait", r, src)
	             : set_int(f, ns->ino, "time_wait", v, src);
}

/*
 * Its conntrack table: /proc/PID/net/stat/nf_conntrack is the namespace's
 * own (ct_cpu_seq_show() of its struct net): "entries", its count, which
 * __nf_conntrack_alloc() judges against the one global nf_conntrack_max,
 * and the per-CPU drop, early_drop and insert_failed counters. Without the
 * file (conntrack not loaded, or never used in it) all are unavailable.
 */
/*
 * Whether a namespace's table is worth a NAT tally (the dump walks every
 * entry): when it holds 75% of the 64512 source ports one NAT address has
 * for one destination (1024-65535, nf_nat_l4proto_unique_tuple() in
 * net/netfilter/nf_nat_proto.c), fewer cannot run one destination short,
 * or when an insertion failed, which is how two connections given the same
 * mapping show. Else why not, for the nat_* facts.
 */
#define NAT_DUMP_MIN (64512 / 4 * 3)
struct nat_gate {
	bool dump;
	int err;        /* positive errno of the facts when not dumped */
	char why[224];
};

static int conntrack_facts(struct ht_facts *f, const char *root, const struct netns *ns,
                           struct nat_gate *gate)
{
	static const char *const names[] = { "conntrack_count", "conntrack_drops",
		                              "conntrack_early_drop", "conntrack_insert_failed" };
	_cleanup_free_ char *text = NULL;
	struct ht_ct_proc_stat st;
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/net/stat/nf_conntrack", ns->pid);
	r = ht_read_file(root, path, &text);
	if (r == -ENOMEM)
		return r;
	if (r >= 0)
		r = ht_ct_proc_stat_parse(text, &st);
	if (r < 0) {
		const char *en = ht_errno_name(-r);

		*gate = (struct nat_gate){ .err = ht_errno_name(-r) ? -r : EIO };
		snprintf(gate->why, sizeof(gate->why), "%s: %s", path, en ? en : "error");
		for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
			int e = set_err(f, ns->ino, names[i], r, path);

			if (e < 0)
				return e;
		}
		return 0;
	}
	*gate = (struct nat_gate){ .err = ENODATA };
	if ((st.have_count && st.count >= NAT_DUMP_MIN) ||
	    (st.have_insert_failed && st.insert_failed > 0))
		gate->dump = true;
	else
		snprintf(gate->why, sizeof(gate->why),
		         "not dumped: %" PRId64 " entries in its table (%s), fewer than %d (75%% "
		         "of the 64512 ports of one NAT address), and no failed insertion",
		         st.have_count ? st.count : 0, path, NAT_DUMP_MIN);
	r = st.have_count ? set_int(f, ns->ino, "conntrack_count", st.count, path)
	                  : set_err(f, ns->ino, "conntrack_count", ENODATA, path);
	if (r >= 0)
		r = st.have_drop ? set_int(f, ns->ino, "conntrack_drops", st.drop, path)
		                 : set_err(f, ns->ino, "conntrack_drops", ENODATA, path);
	if (r >= 0)
		r = st.have_early_drop
		    ? set_int(f, ns->ino, "conntrack_early_drop", st.early_drop, path)
		    : set_err(f, ns->ino, "conntrack_early_drop", ENODATA, path);
	if (r >= 0)
		r = st.have_insert_failed
		    ? set_int(f, ns->ino, "conntrack_insert_failed", st.insert_failed, path)
		    : set_err(f, ns->ino, "conntrack_insert_failed", ENODATA, path);
	return r;
}

/*
 * A process still in namespace @ns, the lowest: its lowest PID may have
 * ended since the namespaces were listed, and every file of the namespace
 * is read through the PID that stands for it. False when none is left:
 * the namespace is gone with its processes.
 */
static bool live_member(const char *root, struct netns *ns)
{
	for (unsigned i = 0; i < ns->procs; i++) {
		char path[64];
		uint64_t ino = 0;

		snprintf(path, sizeof(path), "/proc/%d/ns/net", ns->list[i].pid);
		if (read_ns(root, path, &ino) == 0 && ino == ns->ino) {
			ns->pid = ns->list[i].pid;
			return true;
		}
	}
	return false;
}

/* Who is in it: its lowest PID, that process's name and control group. */
static int holder_facts(struct ht_facts *f, const char *root, const struct netns *ns)
{
	_cleanup_free_ char *comm = NULL, *cgroup = NULL;
	char path[64], cgpath[1024], container[80], unit[256];
	const char *manager = "other";
	int r;

	r = set_int(f, ns->ino, "pid", ns->pid, "/proc/PID/ns/net");
	if (r >= 0)
		r = set_int(f, ns->ino, "processes", ns->procs, "/proc/PID/ns/net");
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/comm", ns->pid);
	r = ht_read_file(root, path, &comm);
	if (r == -ENOMEM)
		return r;
	if (r >= 0)
		comm[strcspn(comm, "\n")] = '\0';
	r = r < 0 ? set_err(f, ns->ino, "process", r, path)
	          : set_str(f, ns->ino, "process", comm, path);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", ns->pid);
	r = ht_read_file(root, path, &cgroup);
	if (r == -ENOMEM)
		return r;
	ht_cgroup_path(r >= 0 ? cgroup : NULL, cgpath, sizeof(cgpath));
	container[0] = '\0';
	if (cgpath[0])
		ht_cgroup_classify(cgpath, &manager, container, unit);
	/* "0::/": the root group. */
	r = r < 0 ? set_err(f, ns->ino, "cgroup", r, path)
	          : set_str(f, ns->ino, "cgroup", cgpath[0] ? cgpath : "/", path);
	if (r >= 0)
		r = set_str(f, ns->ino, "manager", manager, path);
	if (r >= 0)
		r = set_str(f, ns->ino, "container_id", container, path);
	return r;
}

/*
 * netns.N.kube_proxy_*: the kube-proxy (or k3s) process of the namespace,
 * the lowest PID, and the conntrack settings that decide what it writes to
 * nf_conntrack_max as it starts, which outside the host's own namespace it
 * cannot write.
 */
static int kube_proxy_facts(struct ht_facts *f, const char *root, const struct netns *ns)
{
	static const char *const sfx[] = { "kube_proxy_pid", "kube_proxy_per_core",
		                            "kube_proxy_min" };
	struct ht_kube_proxy kp;
	char path[64], comm[64] = "";
	int pid = 0, r, rr;

	for (unsigned i = 0; i < ns->procs && !pid; i++) {
		_cleanup_free_ char *c = NULL;

		snprintf(path, sizeof(path), "/proc/%d/comm", ns->list[i].pid);
		r = ht_read_file(root, path, &c);
		if (r == -ENOMEM)
			return r;
		if (r >= 0 && ht_kube_proxy_comm(c)) {
			pid = ns->list[i].pid;
			snprintf(comm, sizeof(comm), "%s", c);
		}
	}
	rr = pid ? ht_kube_proxy_read(root, pid, comm, &kp) : 0;
	if (rr == -ENOMEM)
		return rr;
	if (!pid || (rr >= 0 && kp.disabled)) {
		const char *why = pid ? "k3s runs without kube-proxy (--disable-kube-proxy)"
		                      : "no kube-proxy or k3s process in it (/proc/PID/comm)";

		for (size_t i = 0; i < ARRAY_SIZE(sfx); i++)
			if ((r = set_err(f, ns->ino, sfx[i], ENOENT, why)) < 0)
				return r;
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	r = set_int(f, ns->ino, "kube_proxy_pid", pid, path);
	if (r < 0)
		return r;
	if (rr < 0 || kp.bad) {
		char why[400];
		int e = rr < 0 ? -rr : EINVAL;

		if (rr < 0)
			snprintf(why, sizeof(why), "%s of PID %d: %s", kp.config[0] ? kp.config :
			         "/proc/PID/cmdline", pid, strerror(e));
		else
			snprintf(why, sizeof(why), "%s", kp.bad_why);
		if ((r = set_err(f, ns->ino, "kube_proxy_per_core", e, why)) < 0)
			return r;
		return set_err(f, ns->ino, "kube_proxy_min", e, why);
	}
	r = set_int(f, ns->ino, "kube_proxy_per_core", kp.per_core, kp.per_core_src);
	return r < 0 ? r : set_int(f, ns->ino, "kube_proxy_min", kp.min, kp.min_src);
}

/* The per-namespace sysctls read from inside it, each by its key's file. */
static const struct {
	const char *suffix, *path;
} ns_sysctls[] = {
	{ "somaxconn", "/proc/sys/net/core/somaxconn" },
	{ "tcp_tw_reuse", "/proc/sys/net/ipv4/tcp_tw_reuse" },
	{ "tcp_max_tw_buckets", "/proc/sys/net/ipv4/tcp_max_tw_buckets" },
};
#define PATH_RANGE "/proc/sys/net/ipv4/ip_local_port_range"

/* The sysctls unavailable with @err, and why (@why). */
static int sysctls_unavailable(struct ht_facts *f, uint64_t ino, int err, const char *why)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(ns_sysctls); i++)
		r = set_err(f, ino, ns_sysctls[i].suffix, err, why);
	if (r >= 0)
		r = set_err(f, ino, "port_range_low", err, why);
	if (r >= 0)
		r = set_err(f, ino, "port_range_high", err, why);
	return r;
}

/* Read in the namespace this thread is in now: its sysctls; the range into *@range. */
static int sysctl_facts(struct ht_facts *f, uint64_t ino, struct ht_ns_range *range,
                        bool *have_range)
{
	_cleanup_free_ char *text = NULL;
	char src[128];
	int64_t lo, hi;
	int r;

	*have_range = false;
	for (size_t i = 0; i < ARRAY_SIZE(ns_sysctls); i++) {
		_cleanup_free_ char *t = NULL;
		long long v;

		snprintf(src, sizeof(src), "%s in the namespace", ns_sysctls[i].path);
		r = ht_read_file(NULL, ns_sysctls[i].path, &t);
		if (r == -ENOMEM)
			return r;
		if (r >= 0)
			r = ht_parse_int64(t, &v);
		r = r < 0 ? set_err(f, ino, ns_sysctls[i].suffix, r, src)
		          : set_int(f, ino, ns_sysctls[i].suffix, v, src);
		if (r < 0)
			return r;
	}
	snprintf(src, sizeof(src), "%s in the namespace", PATH_RANGE);
	r = ht_read_file(NULL, PATH_RANGE, &text);
	if (r == -ENOMEM)
		return r;
	if (r >= 0)
		r = ht_port_range(text, &lo, &hi);
	if (r < 0) {
		r = set_err(f, ino, "port_range_low", r, src);
		return r < 0 ? r : set_err(f, ino, "port_range_high", r, src);
	}
	range->low = (uint16_t)lo;
	range->high = (uint16_t)hi;
	*have_range = true;
	r = set_int(f, ino, "port_range_low", lo, src);
	return r < 0 ? r : set_int(f, ino, "port_range_high", hi, src);
}

/*
 * The process of namespace @ns that holds socket @inode (socket:[INODE]
 * among its /proc/PID/fd), the lowest PID first: its PID, or 0 when none
 * does (or none could be read).
 */
static int socket_holder(const char *root, const struct netns *ns, uint64_t inode)
{
	for (unsigned i = 0; inode && i < ns->procs; i++) {
		int pid = ns->list[i].pid;
		char path[64];
		_cleanup_closedir_ DIR *d = NULL;
		struct dirent *de;

		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		d = ht_root_opendir(root, path);
		while (d && (de = readdir(d))) {
			char link[320], buf[64];

			if (de->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "%s/%s", path, de->d_name);
			if (ht_root_readlink(root, link, buf, sizeof(buf)) > 0 &&
			    socket_inode(buf) == inode)
				return pid;
		}
	}
	return 0;
}

/* netns.N.top_listener_{pid,process}: who holds the fullest listening port. */
static int listener_holder_facts(struct ht_facts *f, const char *root, const struct netns *ns,
                                 uint64_t inode)
{
	const char *why = "no process of the namespace holds the socket in /proc/PID/fd";
	_cleanup_free_ char *comm = NULL;
	char path[64];
	int pid = socket_holder(root, ns, inode), r;

	if (!pid) {
		r = set_err(f, ns->ino, "top_listener_pid", ENOENT, why);
		return r < 0 ? r : set_err(f, ns->ino, "top_listener_process", ENOENT, why);
	}
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	r = set_int(f, ns->ino, "top_listener_pid", pid, path);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	r = ht_read_file(root, path, &comm);
	if (r == -ENOMEM)
		return r;
	if (r >= 0)
		comm[strcspn(comm, "\n")] = '\0';
	return r < 0 ? set_err(f, ns->ino, "top_listener_process", r, path)
	             : set_str(f, ns->ino, "top_listener_process", comm, path);
}

/* The summary of its sockets (ht_ns_tcp_scan()) as facts. */
static int socket_facts(struct ht_facts *f, const char *root, const struct netns *ns,
                        int scan_r, const struct ht_ns_tcp *t, const char *source)
{
	uint64_t ino = ns->ino;
	static const char *const listen_names[] = { "listeners", "top_listener_port",
		                                     "top_listener_queue", "top_listener_backlog" };
	static const char *const dest_names[] = { "top_destination", "top_destination_sockets",
		                                   "top_destination_time_wait" };
	const char *src = source ? source : "the namespace's sockets";
	int r = 0;

	if (scan_r < 0) {
		for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(listen_names); i++)
			r = set_err(f, ino, listen_names[i], scan_r, src);
		for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(dest_names); i++)
			r = set_err(f, ino, dest_names[i], scan_r, src);
		return r;
	}
	r = set_int(f, ino, "listeners", t->listeners, src);
	if (r >= 0 && !t->top_port) {
		r = set_err(f, ino, "top_listener_pid", ENOENT, "no listening TCP port");
		if (r >= 0)
			r = set_err(f, ino, "top_listener_process", ENOENT, "no listening TCP port");
	}
	if (r >= 0 && t->top_port) {
		r = set_int(f, ino, "top_listener_port", t->top_port, src);
		if (r >= 0)
			r = set_int(f, ino, "top_listener_queue", t->top_queue, src);
		if (r >= 0)
			r = t->have_backlog
			    ? set_int(f, ino, "top_listener_backlog", t->top_backlog, src)
			    : set_err(f, ino, "top_listener_backlog", ENODATA,
			              "/proc/PID/net/tcp has no backlog: NETLINK_SOCK_DIAG in the "
			              "namespace gives it, as root on the live host");
		/*
		 * Its process only for a queue worth naming one for (at least half
		 * its backlog; any queue when the backlog is unknown): the search
		 * reads the descriptors of the namespace's processes, every process
		 * of the host when hosttune runs in a namespace of its own.
		 */
		if (r >= 0 && t->top_queue > 0 &&
		    (!t->have_backlog || (uint64_t)t->top_queue * 2 >= t->top_backlog))
			r = listener_holder_facts(f, root, ns, t->top_inode);
		else if (r >= 0) {
			static const char why[] = "not looked up: the queue is below half its backlog";

			r = set_err(f, ino, "top_listener_pid", ENODATA, why);
			if (r >= 0)
				r = set_err(f, ino, "top_listener_process", ENODATA, why);
		}
	} else if (r >= 0) {
		for (size_t i = 1; r >= 0 && i < ARRAY_SIZE(listen_names); i++)
			r = set_err(f, ino, listen_names[i], ENOENT, "no listening TCP port");
	}
	if (r < 0)
		return r;
	if (!t->have_range || !t->have_ports) {
		for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(dest_names); i++)
			r = set_err(f, ino, dest_names[i], ENODATA,
			            !t->have_range ? "the namespace's ip_local_port_range is unknown"
			                           : "not listed: the namespace's TCP sockets "
			                             "(/proc/PID/net/sockstat) are at most half its "
			                             "port range");
		return r;
	}
	if (!t->top_destination[0]) {
		r = set_err(f, ino, "top_destination", ENOENT, "no client socket in the port range");
		if (r >= 0)
			r = set_int(f, ino, "top_destination_sockets", 0, src);
		return r < 0 ? r : set_int(f, ino, "top_destination_time_wait", 0, src);
	}
	r = set_str(f, ino, "top_destination", t->top_destination, src);
	if (r >= 0)
		r = set_int(f, ino, "top_destination_sockets", t->top_sockets, src);
	return r < 0 ? r : set_int(f, ino, "top_destination_time_wait", t->top_time_wait, src);
}

/*
 * Into namespace @ns from inside (@self: this thread's own namespace, to
 * go back to): its sysctls and sockets. Returns 0, -ENOMEM, or
 * -ENOTRECOVERABLE when this thread could not go back to its own
 * namespace (nothing more may be read then). Entering is allowed to fail
 * (*@entered false): the caller reads what /proc/PID/net gives instead.
 */
static int read_inside(struct ht_facts *f, const struct netns *ns, int self, int64_t sockets,
                       const struct nat_gate *gate, bool *entered)
{
	char path[64], why[160];
	struct ht_ns_range range;
	struct ht_ns_tcp t;
	bool have_range = false, ports;
	_cleanup_free_ char *source = NULL;
	struct stat st;
	int fd, r, rs;

	*entered = false;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", ns->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, sizeof(why), "%s: %s", path, strerror(errno));
		return sysctls_unavailable(f, ns->ino, errno, why);
	}
	/* The PID may be another process's by now: the namespace must be the one listed. */
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_ino != ns->ino) {
		close(fd);
		snprintf(why, sizeof(why), "%s: the process left or ended while it was read", path);
		return sysctls_unavailable(f, ns->ino, ESRCH, why);
	}
	if (setns(fd, CLONE_NEWNET) < 0) {
		int e = errno;

		close(fd);
		/* The finding names the errno itself: the reason is what needs it. */
		snprintf(why, sizeof(why), "%ssetns(2) into %s refused",
		         e == EPERM ? "needs root: " : "", path);
		return sysctls_unavailable(f, ns->ino, e, why);
	}
	close(fd);
	*entered = true;
	r = sysctl_facts(f, ns->ino, &range, &have_range);
	/*
	 * Its client sockets only when they could hold more than half its range:
	 * a dump of them walks the kernel's established hash, which every
	 * namespace shares (inet_diag_dump_icsk()), while listeners alone walk
	 * only the listening hash. No destination holds more than all of them.
	 */
	ports = have_range && (sockets < 0 || sockets * 2 > range.high - range.low + 1);
	rs = r < 0 ? r : ht_ns_tcp_scan(NULL, ns->pid, true, have_range ? &range : NULL, ports,
	                                &t, &source);
	/* Its NAT, from a ctnetlink socket opened in it. */
	if (r >= 0 && rs != -ENOMEM && gate->dump) {
		char prefix[48];

		snprintf(prefix, sizeof(prefix), "netns.%" PRIu64 ".nat_", ns->ino);
		r = ht_ct_nat_facts(f, NULL, NULL, prefix);
	}
	/* Back home before anything else, whatever happened inside. */
	if (setns(self, CLONE_NEWNET) < 0)
		return -ENOTRECOVERABLE;
	if (r < 0)
		return r;
	if (rs == -ENOMEM)
		return rs;
	if (!gate->dump) {
		char prefix[48];

		snprintf(prefix, sizeof(prefix), "netns.%" PRIu64 ".nat_", ns->ino);
		r = ht_ct_nat_unavailable(f, prefix, gate->err, gate->why);
		if (r < 0)
			return r;
	}
	return socket_facts(f, NULL, ns, rs, &t, source);
}

/* What /proc/PID/net shows without entering: the sockets, no backlog and no sysctl. */
static int read_outside(struct ht_facts *f, const char *root, const struct netns *ns,
                        bool sysctls_done, const struct nat_gate *gate)
{
	_cleanup_free_ char *source = NULL;
	char prefix[48], path[64];
	struct ht_ns_tcp t;
	int r = 0;

	snprintf(prefix, sizeof(prefix), "netns.%" PRIu64 ".nat_", ns->ino);
	snprintf(path, sizeof(path), "/proc/%d/net/nf_conntrack", ns->pid);
	r = gate->dump ? ht_ct_nat_facts(f, root, path, prefix)
	               : ht_ct_nat_unavailable(f, prefix, gate->err, gate->why);
	if (r < 0)
		return r;

	if (!sysctls_done)
		r = sysctls_unavailable(f, ns->ino, ENODATA,
		                        "not in a tree: /proc/sys shows only the reader's own "
		                        "network namespace");
	if (r < 0)
		return r;
	r = ht_ns_tcp_scan(root, ns->pid, false, NULL, false, &t, &source);
	return r == -ENOMEM ? r : socket_facts(f, root, ns, r, &t, source);
}

/*
 * netns.refused{,_pid,_process} and netns.read_as_root: the processes
 * whose namespace could not be read and the lowest of them, and whether
 * they were refused to root, where no privilege is missing and a ptrace
 * restriction is the cause (kernel/ptrace.c, ptrace_may_access(), which
 * every link of /proc/PID/ns needs: Yama's ptrace_scope 3, a security
 * module).
 */
static int refused_facts(struct ht_facts *f, const char *root, unsigned refused, int pid)
{
	const char *src = "/proc/PID/ns/net that could not be read";
	_cleanup_free_ char *comm = NULL;
	char path[64];
	int r;

	r = ht_facts_set_int(f, "netns.refused", refused, ht_fact_def_unit("netns.refused"), src);
	if (r >= 0)
		r = ht_facts_set_bool(f, "netns.read_as_root", ht_root_is_live(root) && geteuid() == 0,
		                      "live, and the effective UID (geteuid(2))");
	if (r < 0)
		return r;
	if (!pid) {
		r = ht_facts_set_errno(f, "netns.refused_pid", ENOENT, NULL, "none refused");
		return r < 0 ? r : ht_facts_set_errno(f, "netns.refused_process", ENOENT, NULL,
		                                      "none refused");
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	r = ht_facts_set_int(f, "netns.refused_pid", pid, NULL, src);
	if (r < 0)
		return r;
	r = ht_read_file(root, path, &comm);
	if (r == -ENOMEM)
		return r;
	if (r < 0 || ht_utf8_invalid(comm))
		return ht_facts_set_errno(f, "netns.refused_process", r < 0 ? -r : EINVAL, NULL, path);
	return ht_facts_set_str(f, "netns.refused_process", comm, path);
}

int ht_collect_netns(struct ht_facts *f, const char *root)
{
	const char *list_src = "/proc/PID/ns/net of every process";
	struct netns *v = NULL;
	struct ns_proc *all = NULL;
	size_t n = 0, judged, past = 0;
	unsigned refused = 0;
	char *list = NULL;
	size_t len = 0;
	FILE *lf = NULL;
	bool live = ht_root_is_live(root);
	int self = -1, self_err = 0, refused_pid = 0, r;

	r = find_namespaces(root, own_ns(root), &v, &n, &all, &refused, &refused_pid);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		static const char *const names[] = { "netns.list", "netns.skipped", "netns.refused",
			                              "netns.refused_pid", "netns.refused_process" };
		int e = r;

		r = 0;
		for (size_t i = 0; i < ARRAY_SIZE(names) && r >= 0; i++)
			r = ht_facts_set_errno(f, names[i], e, ht_fact_def_unit(names[i]), "/proc");
		return r;
	}
	r = refused_facts(f, root, refused, refused_pid);
	if (r < 0)
		goto out;
	judged = n < NETNS_MAX ? n : NETNS_MAX;
	for (size_t i = judged; i < n; i++)
		past += v[i].procs;
	if (live && judged > 0) {
		self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (self < 0)
			self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (self < 0)
			self_err = errno;
	}
	lf = open_memstream(&list, &len);
	if (!lf) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0, listed = 0; i < judged && r >= 0; i++) {
		int64_t sockets = -1;
		bool entered = false;
		struct nat_gate gate = { .err = ENODATA };

		if (!live_member(root, &v[i]))
			continue;
		fprintf(lf, "%s%" PRIu64, listed++ ? " " : "", v[i].ino);
		r = holder_facts(f, root, &v[i]);
		if (r >= 0)
			r = counter_facts(f, root, &v[i], &sockets);
		if (r >= 0)
			r = conntrack_facts(f, root, &v[i], &gate);
		if (r >= 0)
			r = kube_proxy_facts(f, root, &v[i]);
		if (r >= 0 && self >= 0)
			r = read_inside(f, &v[i], self, sockets, &gate, &entered);
		else if (r >= 0 && live)
			r = sysctls_unavailable(f, v[i].ino, self_err,
			                        "/proc/self/ns/net could not be opened");
		if (r >= 0 && !entered)
			r = read_outside(f, root, &v[i], live, &gate);
	}
	if (fclose(lf) != 0 && r >= 0)
		r = -ENOMEM;
	if (r >= 0)
		r = ht_facts_set_str(f, "netns.list", list ? list : "", list_src);
	if (r >= 0)
		r = ht_facts_set_int(f, "netns.skipped", (int64_t)past + refused,
		                     ht_fact_def_unit("netns.skipped"),
		                     "processes whose /proc/PID/ns/net could not be read (another "
		                     "user's without root; as root, a ptrace restriction), and those "
		                     "of namespaces past 4096");
out:
	if (self >= 0)
		close(self);
	free(list);
	free(v);
	free(all);
	return r;
}
