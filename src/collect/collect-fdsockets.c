/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/collect.h"
#include "collect/procfs.h"
#include "engine/facts.h"
#include "shared/rootfs.h"
#include "shared/util.h"

/*
 * What fills a checked process's descriptors: of the process each
 * process.NAME.pid names, its sockets (the links "socket:[INODE]" of
 * /proc/PID/fd) and, of those that are TCP sockets of its own network
 * namespace (/proc/PID/net/tcp and tcp6, matched by inode), the state that
 * holds the most and, in that state, the remote address and port that hold
 * the most: a dial storm (SYN_SENT to one peer that never answers) or a
 * leak (CLOSE_WAIT: closed by the peer, never by the program) fills
 * RLIMIT_NOFILE whatever its size.
 */

/* tcp_states.h, as conntrack(8) and netstat print them; index: the kernel's number. */
static const char *const state_names[] = {
	[1] = "ESTABLISHED", [2] = "SYN_SENT",   [3] = "SYN_RECV", [4] = "FIN_WAIT1",
	[5] = "FIN_WAIT2",   [6] = "TIME_WAIT",  [7] = "CLOSE",    [8] = "CLOSE_WAIT",
	[9] = "LAST_ACK",    [10] = "LISTEN",    [11] = "CLOSING",
};

/* One TCP socket of the process: its state and remote end. */
struct fd_sock {
	uint8_t state;
	uint8_t dst[16];
	uint16_t dport;
};

struct fd_census {
	uint64_t *inodes; /* the socket inodes of its descriptors, sorted */
	size_t ninodes, cap;
	struct fd_sock *tcp; /* its TCP sockets found in /proc/PID/net/tcp{,6} */
	size_t ntcp, tcp_cap;
};

static void census_free(struct fd_census *c)
{
	free(c->inodes);
	free(c->tcp);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The socket inodes among ROOT/proc/@pid/fd; 0 or a negative errno (-EACCES: not ours). */
static int read_fd_inodes(const char *root, int pid, struct fd_census *c)
{
	_cleanup_closedir_ DIR *proc = ht_root_opendir(root, "/proc");
	_cleanup_closedir_ DIR *fdd = NULL;
	struct dirent *de;
	char path[32];
	int dfd;

	if (!proc)
		return -errno;
	snprintf(path, sizeof(path), "%d/fd", pid);
	dfd = ht_openat_in(dirfd(proc), path, O_RDONLY | O_DIRECTORY | O_CLOEXEC,
	                   !ht_root_is_live(root));
	if (dfd < 0)
		return dfd;
	fdd = fdopendir(dfd);
	if (!fdd) {
		close(dfd);
		return -errno;
	}
	while ((de = readdir(fdd))) {
		char link[64];
		ssize_t n;
		uint64_t ino;

		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(fdd), de->d_name, link, sizeof(link) - 1);
		if (n < 0 && (errno == EACCES || errno == EPERM))
			return -EACCES;
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (!(ino = socket_inode(link)))
			continue;
		if (c->ninodes == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 64;
			uint64_t *p = reallocarray(c->inodes, cap, sizeof(*p));

			if (!p)
				return -ENOMEM;
			c->inodes = p;
			c->cap = cap;
		}
		c->inodes[c->ninodes++] = ino;
	}
	if (c->ninodes > 1)
		qsort(c->inodes, c->ninodes, sizeof(*c->inodes), cmp_u64);
	return 0;
}

/*
 * The lines of ROOT/proc/@pid/net/tcp (or tcp6) whose inode is one of the
 * process's. A file that is not there (no IPv6) is none; a malformed line
 * is skipped. 0 or a negative errno.
 */
static int read_net_tcp(const char *root, int pid, bool v6, struct fd_census *c)
{
	char path[48];
	struct stat st;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	FILE *fp;
	int fd;

	/* A tree without the process's own net/ (one namespace) has the host's. */
	snprintf(path, sizeof(path), "/proc/%d/net", pid);
	if (!ht_root_is_live(root) && ht_root_stat(root, path, false, &st) < 0)
		snprintf(path, sizeof(path), "/proc/net/%s", v6 ? "tcp6" : "tcp");
	else
		snprintf(path, sizeof(path), "/proc/%d/net/%s", pid, v6 ? "tcp6" : "tcp");
	fd = ht_open_file(root, path);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	fp = fdopen(fd, "r");
	if (!fp) {
		close(fd);
		return -ENOMEM;
	}
	while (getline(&line, &cap, fp) > 0) {
		struct ht_sock s;

		/* No socket descriptor (c->inodes NULL): none of the lines is its. */
		if (!c->ninodes || ht_proc_net_tcp_line(line, v6, &s) < 0 || !s.inode ||
		    !bsearch(&s.inode, c->inodes, c->ninodes, sizeof(*c->inodes), cmp_u64))
			continue;
		if (c->ntcp == c->tcp_cap) {
			size_t n = c->tcp_cap ? c->tcp_cap * 2 : 64;
			struct fd_sock *p = reallocarray(c->tcp, n, sizeof(*p));

			if (!p) {
				fclose(fp);
				return -ENOMEM;
			}
			c->tcp = p;
			c->tcp_cap = n;
		}
		c->tcp[c->ntcp].state = s.state;
		memcpy(c->tcp[c->ntcp].dst, s.dst, sizeof(s.dst));
		c->tcp[c->ntcp++].dport = s.dport;
	}
	fclose(fp);
	return 0;
}

static int cmp_sock(const void *a, const void *b)
{
	const struct fd_sock *x = a, *y = b;
	int r = x->state - y->state;

	if (!r)
		r = memcmp(x->dst, y->dst, sizeof(x->dst));
	return r ? r : x->dport - y->dport;
}

/* "10.0.0.5:9735", "[2001:db8::1]:443": an IPv4-mapped address as IPv4. */
static void peer_text(const struct fd_sock *s, char *buf, size_t size)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	char a[INET6_ADDRSTRLEN];
	bool v4 = memcmp(s->dst, mapped, 12) == 0;

	if (v4)
		inet_ntop(AF_INET, s->dst + 12, a, sizeof(a));
	else
		inet_ntop(AF_INET6, s->dst, a, sizeof(a));
	snprintf(buf, size, v4 ? "%s:%u" : "[%s]:%u", a, s->dport);
}

static const char *const suffixes[] = { "sockets", "sock_tcp", "sock_state", "sock_state_count",
	                                "sock_peer", "sock_peer_count" };

/* The facts of process @name (PID @pid). 0 or -ENOMEM. */
static int process_sockets(struct ht_facts *f, const char *root, const char *name, int pid)
{
	struct fd_census c = { 0 };
	char src[64], peer[INET6_ADDRSTRLEN + 10];
	size_t best = 0, best_at = 0, peer_n = 0, peer_at = 0;
	struct ht_value v;
	int r;

	snprintf(src, sizeof(src), "/proc/%d/fd", pid);
	r = read_fd_inodes(root, pid, &c);
	if (r >= 0)
		r = read_net_tcp(root, pid, false, &c);
	if (r >= 0)
		r = read_net_tcp(root, pid, true, &c);
	if (r == -ENOMEM)
		goto out;
	if (r < 0) {
		int e = r == -ESRCH ? ENOENT : -r;

		for (size_t i = 0; i < ARRAY_SIZE(suffixes) && r != -ENOMEM; i++)
			r = ht_process_fact_set(f, name, suffixes[i], NULL, e, src);
		goto out;
	}
	v = ht_int((int64_t)c.ninodes);
	if ((r = ht_process_fact_set(f, name, "sockets", &v, 0, src)) < 0)
		goto out;
	snprintf(src, sizeof(src), "/proc/%d/net/tcp", pid);
	v = ht_int((int64_t)c.ntcp);
	if ((r = ht_process_fact_set(f, name, "sock_tcp", &v, 0, src)) < 0)
		goto out;
	if (c.ntcp == 0) {
		for (size_t i = 2; i < ARRAY_SIZE(suffixes) && r >= 0; i++)
			r = ht_process_fact_set(f, name, suffixes[i], NULL, ENOENT, "no TCP socket among its descriptors");
		goto out;
	}
	/* Sorted by state, then peer: the longest run of a state, then of a peer within it. */
	qsort(c.tcp, c.ntcp, sizeof(*c.tcp), cmp_sock);
	for (size_t i = 0, j; i < c.ntcp; i = j) {
		for (j = i; j < c.ntcp && c.tcp[j].state == c.tcp[i].state; j++)
			;
		if (j - i > best) {
			best = j - i;
			best_at = i;
		}
	}
	for (size_t i = best_at, j; i < best_at + best; i = j) {
		for (j = i; j < best_at + best && cmp_sock(&c.tcp[j], &c.tcp[i]) == 0; j++)
			;
		if (j - i > peer_n) {
			peer_n = j - i;
			peer_at = i;
		}
	}
	{
		uint8_t st = c.tcp[best_at].state;
		const char *sn = st < ARRAY_SIZE(state_names) && state_names[st] ? state_names[st] : "?";

		v = (struct ht_value){ .type = HT_T_STR, .s = (char *)sn };
		r = ht_process_fact_set(f, name, "sock_state", &v, 0, src);
	}
	v = ht_int((int64_t)best);
	if (r >= 0)
		r = ht_process_fact_set(f, name, "sock_state_count", &v, 0, src);
	peer_text(&c.tcp[peer_at], peer, sizeof(peer));
	v = (struct ht_value){ .type = HT_T_STR, .s = peer };
	if (r >= 0)
		r = ht_process_fact_set(f, name, "sock_peer", &v, 0, src);
	v = ht_int((int64_t)peer_n);
	if (r >= 0)
		r = ht_process_fact_set(f, name, "sock_peer_count", &v, 0, src);
out:
	census_free(&c);
	return r < 0 ? r : 0;
}

int ht_collect_process_sockets(struct ht_facts *f, const char *root)
{
	const struct ht_fact *list = ht_facts_get(f, "process.list");
	const char *p;

	if (!list || list->value.type != HT_T_STR)
		return 0;
	for (p = list->value.s; *p;) {
		char name[128], key[160];
		const struct ht_fact *pid;
		size_t n;
		int r = 0;

		while (*p == ' ')
			p++;
		n = strcspn(p, " ");
		if (!n)
			break;
		snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), p);
		p += n;
		snprintf(key, sizeof(key), "process.%s.pid", name);
		pid = ht_facts_get(f, key);
		if (!pid || pid->value.type != HT_T_INT || pid->value.i <= 0 || pid->value.i > INT32_MAX) {
			for (size_t i = 0; i < ARRAY_SIZE(suffixes) && r >= 0; i++)
				r = ht_process_fact_set(f, name, suffixes[i], NULL, ENOENT, "no PID of the process");
		} else
			r = process_sockets(f, root, name, (int)pid->value.i);
		if (r < 0)
			return r;
	}
	return 0;
}
