/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "collect/collect.h"
#include "collect/procfs.h"
#include "engine/facts.h"
#include "shared/bootconf.h"
#include "shared/escape.h"
#include "shared/rootfs.h"
#include "shared/util.h"

/*
 * The checked processes: the owners of listening sockets (by the
 * listener.PORT.pid and .process facts of collect-sockets.c) and the
 * processes named by the caller, found by a walk of /proc/PID/comm; of each
 * its descriptor limit (/proc/PID/limits), its open descriptors
 * (/proc/PID/fd) and its systemd unit (/proc/PID/cgroup).
 */

/* ---- parsers ---- */

/* Whether [c, e) is "user@UID.service", a per-user service manager (user@.service). */
static bool is_user_manager(const char *c, const char *e)
{
	return e - c > 13 && memcmp(c, "user@", 5) == 0 && memcmp(e - 8, ".service", 8) == 0;
}

/*
 * The last path component of [p, end) that ends in ".service", into a new
 * string; a service below a user manager's component: -ENOENT, with the
 * manager's name in *manager when @manager is not NULL.
 */
static int unit_of_path(const char *p, const char *end, char **unit, char **manager)
{
	const char *best = NULL, *best_end = NULL, *mgr = NULL, *mgr_end = NULL;

	while (p < end) {
		const char *c = p, *e;

		while (c < end && *c == '/')
			c++;
		e = c;
		while (e < end && *e != '/')
			e++;
		if (e - c > 8 && memcmp(e - 8, ".service", 8) == 0) {
			if (!mgr && is_user_manager(c, e)) {
				mgr = c;
				mgr_end = e;
			}
			best = c;
			best_end = e;
		}
		p = e;
	}
	if (!best)
		return -ENOENT;
	if (mgr && best != mgr) {
		if (manager) {
			*manager = strndup(mgr, (size_t)(mgr_end - mgr));
			if (!*manager)
				return -ENOMEM;
		}
		return -ENOENT;
	}
	*unit = strndup(best, (size_t)(best_end - best));
	return *unit ? 0 : -ENOMEM;
}

int ht_cgroup_unit(const char *text, char **unit, char **manager)
{
	const char *v2 = NULL, *v1 = NULL;

	if (!text || !unit)
		return -EINVAL;
	*unit = NULL;
	if (manager)
		*manager = NULL;
	/* kernel/cgroup/cgroup.c proc_cgroup_show(): "ID:CONTROLLERS:PATH" a line. */
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');

		if (strncmp(p, "0::", 3) == 0)
			v2 = p + 3;
		else {
			const char *c = strchr(p, ':');

			if (c && (!nl || c < nl) && strncmp(c + 1, "name=systemd:", 13) == 0)
				v1 = c + 14;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	/* The unified hierarchy first; on a v1 host the name=systemd one. */
	for (int i = 0; i < 2; i++) {
		const char *p = i == 0 ? v2 : v1, *end;
		int r;

		if (!p)
			continue;
		end = strchr(p, '\n');
		if (!end)
			end = p + strlen(p);
		r = unit_of_path(p, end, unit, manager);
		if (r != -ENOENT || (manager && *manager))
			return r;
	}
	return -ENOENT;
}

void ht_cgroup_path(const char *text, char *buf, size_t size)
{
	if (size)
		buf[0] = '\0';
	for (const char *p = text; p && *p && size;) {
		const char *nl = strchr(p, '\n'), *c = strchr(p, ':'), *c2 = c ? strchr(c + 1, ':') : NULL;
		size_t n;

		if (!nl)
			nl = p + strlen(p);
		if (c2 && c2 < nl && c2[1] == '/' && c2 + 2 < nl) {
			n = (size_t)(nl - c2 - 1);
			if (strncmp(p, "0::", 3) == 0 || !buf[0])
				snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), c2 + 1);
			if (strncmp(p, "0::", 3) == 0)
				break;
		}
		p = *nl ? nl + 1 : nl;
	}
}

/* ---- processes ---- */

/*
 * NAME of process.NAME.*: comm escaped (shared/escape.h, ht_name_escape():
 * "php-fpm8.1" stays, "a+b" is "a_2bb", "_" is "__"), which reads back as
 * the comm itself, so that two names never share facts. A new string, or
 * NULL with errno ENOMEM, or EINVAL for an empty comm (no name to judge).
 */
static char *comm_key(const char *comm)
{
	return ht_name_escape(comm);
}

struct proc_pick {
	char *name;   /* comm_key() of the comm */
	int pid;      /* the worst process of the name so far; 0: none found yet */
	int64_t fds;  /* its open descriptors; -1: unreadable */
	int64_t soft; /* its soft RLIMIT_NOFILE; -1: unreadable */
	int fds_err;
	int64_t count; /* processes of the name */
	int64_t unread; /* of them, those whose /proc/PID/fd was refused */
	int unread_pid; /* the lowest of those; 0: none */
	double nshare;  /* its user's tasks over its soft RLIMIT_NPROC; 0: unknown */
};

/*
 * Whether a process with @fds of @soft descriptors is worse than the pick's:
 * a larger share of RLIMIT_NPROC taken by its user's tasks (@nshare) when
 * either is at 75% of it, then a larger share of its soft descriptor limit
 * (compared without dividing: fds x other soft), then more descriptors,
 * then the lower PID. What cannot be read counts as least.
 */
static bool worse(const struct proc_pick *p, int pid, int64_t fds, int64_t soft, double nshare)
{
	__int128 a, b;

	if (!p->pid)
		return true;
	/* A user at 75% of this one's RLIMIT_NPROC or more: the larger share first. */
	if ((nshare >= 0.75 || p->nshare >= 0.75) && nshare != p->nshare)
		return nshare > p->nshare;
	if ((fds >= 0 && soft > 0) != (p->fds >= 0 && p->soft > 0))
		return fds >= 0 && soft > 0;
	if (fds >= 0 && soft > 0) {
		a = (__int128)fds * p->soft;
		b = (__int128)p->fds * soft;
		if (a != b)
			return a > b;
	}
	if (fds != p->fds)
		return fds > p->fds;
	return pid < p->pid;
}

/*
 * The entries of the directory @dfd (taken: closed here), "." and ".." left
 * out. A negative @dfd is the errno of its open, returned.
 */
static int count_entries(int dfd, int64_t *n)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;

	if (dfd < 0)
		return dfd;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -ENOMEM;
	}
	*n = 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			(*n)++;
	return 0;
}

/* Entries of ROOT/proc/PID/fd: 0 or a negative errno. */
static int count_fds(const char *root, int pid, int64_t *n)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "/proc/%d/fd", pid);
	return count_entries(ht_root_open(root, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC), n);
}

static int census_fdsize(int procfd, bool confined, int pid, int64_t *fdsize);

/*
 * The open descriptors of @pid as the size of the live /proc/@pid/fd
 * (relative to @procfd): Linux 6.2 and later count the open-fd bitmap there
 * (proc_fd_getattr()), no entry listed; 0 for a kernel thread.
 */
static int census_fds_exact(int procfd, int pid, int64_t *n)
{
	struct stat st;
	char rel[32];

	snprintf(rel, sizeof(rel), "%d/fd", pid);
	if (fstatat(procfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	*n = st.st_size;
	return 0;
}

/*
 * Open descriptors of @pid (relative to @procfd, ROOT/proc) where the size
 * of /proc/PID/fd does not count them (before Linux 6.2, a --root tree), or
 * a bound of them below @bound: the size of the descriptor table (FDSize)
 * when it is below @bound already (a process with 200 descriptors has a
 * table of 256; listing it costs a getdents() pass per 2 KiB or so). Else,
 * and in a tree without status, the entries of one listing.
 */
static int census_fds(int procfd, bool confined, int pid, int64_t bound, int64_t *n)
{
	char rel[32];

	snprintf(rel, sizeof(rel), "%d/fd", pid);
	if (census_fdsize(procfd, confined, pid, n) == 0 && *n < bound)
		return 0;
	return count_entries(ht_openat_in(procfd, rel,
	                                  O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW, confined),
	                     n);
}

/*
 * Read ROOT/proc/@pid/@name (relative to @procfd) into @buf (NUL-terminated,
 * at most @size - 1 bytes: the head of a longer file). A link is not
 * followed and anything but a regular file (a FIFO planted in a --root tree,
 * opened without blocking) is -EINVAL.
 */
static int census_read(int procfd, bool confined, int pid, const char *name, char *buf,
                       size_t size)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	char rel[48];
	size_t n = 0;

	snprintf(rel, sizeof(rel), "%d/%s", pid, name);
	fd = ht_openat_in(procfd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
	                  confined);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	while (n < size - 1) {
		ssize_t r = read(fd, buf + n, size - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	return 0;
}

/* The soft "Max open files" of /proc/@pid/limits (relative to @procfd). */
static int census_nofile(int procfd, bool confined, int pid, int64_t *soft)
{
	char buf[4096];
	int64_t hard;
	int r = census_read(procfd, confined, pid, "limits", buf, sizeof(buf));

	if (r < 0)
		return r;
	return ht_limits_nofile(buf, soft, &hard);
}

/*
 * FDSize of /proc/@pid/status: the size of the process's descriptor table,
 * which no open descriptor number reaches (fs/proc/array.c), so an upper
 * bound of the count that costs no listing. -ENOENT when the line is absent.
 */
static int census_fdsize(int procfd, bool confined, int pid, int64_t *fdsize)
{
	char buf[8192];
	const char *p;
	long long v;
	int r = census_read(procfd, confined, pid, "status", buf, sizeof(buf));

	if (r < 0)
		return r;
	p = strstr(buf, "\nFDSize:");
	if (!p)
		return -ENOENT;
	p += strlen("\nFDSize:");
	errno = 0;
	v = strtoll(p, NULL, 10);
	if (errno || v < 0)
		return -EINVAL;
	*fdsize = v;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int ht_processes_near_limit(const char *root, int **pids, size_t *n)
{
	bool confined = !ht_root_is_live(root);
	_cleanup_closedir_ DIR *d = NULL;
	struct statfs sfs;
	struct dirent *de;
	struct stat st;
	bool exact;

	*pids = NULL;
	*n = 0;
	d = ht_root_opendir(root, "/proc");
	if (!d)
		return 0;
	/*
	 * The sizes of /proc/PID/fd count descriptors when this process's own
	 * (it holds at least the one of /proc) is not 0: Linux 6.2 and later.
	 */
	exact = fstatfs(dirfd(d), &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC &&
	        fstatat(dirfd(d), "self/fd", &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_size > 0;
	while ((de = readdir(d))) {
		int64_t fds = 0, soft = 0;
		int pid, *np;

		/* A PID that is a link (a planted tree) is not followed out of ROOT/proc. */
		if (!parse_pid(de->d_name, &pid) || de->d_type == DT_LNK)
			continue;
		/*
		 * process.high in process.rules (75% of the soft limit), the
		 * same integers. A process without a descriptor (a kernel
		 * thread) holds no socket.
		 */
		if (exact && (census_fds_exact(dirfd(d), pid, &fds) < 0 || fds == 0))
			continue;
		if (census_nofile(dirfd(d), confined, pid, &soft) < 0 ||
		    (!exact && census_fds(dirfd(d), confined, pid, soft - soft / 4, &fds) < 0))
			continue;
		if (fds < soft - soft / 4)
			continue;
		np = reallocarray(*pids, *n + 1, sizeof(**pids));
		if (!np) {
			free(*pids);
			*pids = NULL;
			*n = 0;
			return -ENOMEM;
		}
		*pids = np;
		np[(*n)++] = pid;
	}
	/* In PID order, whatever order the directory (a --root tree's) lists. */
	if (*n > 1)
		qsort(*pids, *n, sizeof(**pids), cmp_int);
	return 0;
}

/* Every files.top.* fact unavailable with @err (positive) and @source. */
static int holders_unavailable(struct ht_facts *f, int err, const char *source)
{
	static const struct {
		const char *name, *unit;
	} facts[] = {
		{ "files.top.fds", "descriptors" }, { "files.top.pid", NULL },
		{ "files.top.process", NULL },     { "files.top.read", "processes" },
		{ "files.top.total", "descriptors" }, { "files.top.unread", "processes" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(facts); i++) {
		int r = ht_facts_set_errno(f, facts[i].name, err, facts[i].unit, source);

		if (r < 0)
			return r;
	}
	return 0;
}

int ht_collect_file_holders(struct ht_facts *f, const char *root)
{
	bool confined = !ht_root_is_live(root);
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_free_ char *comm = NULL;
	struct statfs sfs;
	struct dirent *de;
	struct stat st;
	int64_t best = -1, read = 0, seen = 0, total = 0;
	int best_pid = 0, r;
	char path[64];
	bool exact;

	d = ht_root_opendir(root, "/proc");
	if (!d) {
		if (errno == ENOMEM)
			return -ENOMEM;
		return holders_unavailable(f, errno, "/proc");
	}
	exact = fstatfs(dirfd(d), &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC &&
	        fstatat(dirfd(d), "self/fd", &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_size > 0;
	while ((de = readdir(d))) {
		int64_t fds = 0;
		int pid;

		if (!parse_pid(de->d_name, &pid) || de->d_type == DT_LNK)
			continue;
		seen++;
		if (exact)
			r = census_fds_exact(dirfd(d), pid, &fds);
		else
			r = census_fds(dirfd(d), confined, pid, INT64_MAX, &fds);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			continue;
		read++;
		/* A descriptor count is below INT_MAX (fs.nr_open), and PIDs below 2^22. */
		total += fds;
		if (fds > best || (fds == best && pid < best_pid)) {
			best = fds;
			best_pid = pid;
		}
	}
	if (best < 0)
		return holders_unavailable(f, seen ? EACCES : ENOENT,
		                           seen ? "/proc/PID/fd: no process's descriptors could be read"
		                                : "/proc: no process");
	snprintf(path, sizeof(path), "/proc/%d/fd", best_pid);
	r = ht_facts_set_int(f, "files.top.fds", best, "descriptors", path);
	if (r >= 0)
		r = ht_facts_set_int(f, "files.top.pid", best_pid, NULL, path);
	if (r >= 0)
		r = ht_facts_set_int(f, "files.top.read", read, "processes", "/proc/PID/fd");
	if (r >= 0)
		r = ht_facts_set_int(f, "files.top.total", total, "descriptors", "/proc/PID/fd");
	if (r >= 0)
		r = ht_facts_set_int(f, "files.top.unread", seen - read, "processes", "/proc/PID/fd");
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/comm", best_pid);
	r = ht_read_file(root, path, &comm);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ht_facts_set_errno(f, "files.top.process", r, NULL, path);
	return ht_facts_set_str(f, "files.top.process", comm, path);
}


/* A name to judge: every process of it is read, the worst reported. */
static int add_pick(struct proc_pick **picks, size_t *n, const char *name)
{
	struct proc_pick *p;
	_cleanup_free_ char *s = comm_key(name);

	if (!s)
		return errno == ENOMEM ? -ENOMEM : 0;
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*picks)[i].name, s) == 0)
			return 0;
	p = reallocarray(*picks, *n + 1, sizeof(**picks));
	if (!p)
		return -ENOMEM;
	*picks = p;
	p[(*n)++] = (struct proc_pick){ .name = TAKE_PTR(s), .fds = -1, .soft = -1 };
	return 0;
}


/*
 * process.NAME.runtime and .container: the container runtime whose
 * container the process runs in, from the path of its cgroup (the 0:: line,
 * else the first v1 line below the root), and the container's ID; both
 * unavailable (ENOENT) outside a container. -ENOMEM or 0.
 */
static int proc_runtime(struct ht_facts *f, const char *name, const char *cgroup,
                        const char *src)
{
	char cgpath[1024], container[80], unit[256];
	const char *manager = "other";
	struct ht_value v;
	bool in;
	int r;

	ht_cgroup_path(cgroup, cgpath, sizeof(cgpath));
	if (cgpath[0])
		ht_cgroup_classify(cgpath, &manager, container, unit);
	in = strcmp(manager, "docker") == 0 || strcmp(manager, "podman") == 0 ||
	     strcmp(manager, "kubernetes") == 0 || strcmp(manager, "lxc") == 0;
	if (!in) {
		r = ht_process_fact_set(f, name, "runtime", NULL, -ENOENT, src);
		return r < 0 ? r : ht_process_fact_set(f, name, "container", NULL, -ENOENT, src);
	}
	v = (struct ht_value){ .type = HT_T_STR, .s = (char *)manager };
	r = ht_process_fact_set(f, name, "runtime", &v, 0, src);
	if (r < 0)
		return r;
	if (!container[0])
		return ht_process_fact_set(f, name, "container", NULL, -ENOENT, src);
	v = (struct ht_value){ .type = HT_T_STR, .s = container };
	return ht_process_fact_set(f, name, "container", &v, 0, src);
}

/*
 * process.NAME.parent_pid, .parent_comm, .parent_nofile and .parent_nproc: the process's
 * parent (PPid of /proc/PID/status), its comm and its soft RLIMIT_NOFILE.
 * A worker whose limit differs from its parent's, the same program, set
 * it itself (nginx's worker_rlimit_nofile). Unavailable with the errno
 * when they cannot be read; ENOENT without a parent. 0 or -ENOMEM.
 */
static int parent_facts(struct ht_facts *f, const char *root, const struct proc_pick *p)
{
	_cleanup_free_ char *status = NULL, *comm = NULL, *limits = NULL;
	char path[64], src[96];
	const char *v;
	struct ht_value val;
	int64_t soft, hard;
	long ppid = 0;
	int r, rr;

	snprintf(path, sizeof(path), "/proc/%d/status", p->pid);
	r = ht_read_file(root, path, &status);
	if (r == -ENOMEM)
		return r;
	if (r >= 0 && (v = strstr(status, "\nPPid:")))
		ppid = strtol(v + 6, NULL, 10);
	if (r >= 0 && (ppid <= 0 || ppid > 4194304))
		r = -ENOENT;
	snprintf(src, sizeof(src), "%s PPid", path);
	if (r < 0) {
		static const char *const sfx[] = { "parent_pid", "parent_comm", "parent_nofile",
			                           "parent_nproc" };
		int e = -r;

		for (size_t i = 0; i < ARRAY_SIZE(sfx); i++)
			if ((r = ht_process_fact_set(f, p->name, sfx[i], NULL, e, src)) < 0)
				return r;
		return 0;
	}
	val = ht_int(ppid);
	if ((r = ht_process_fact_set(f, p->name, "parent_pid", &val, 0, src)) < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%ld/comm", ppid);
	r = ht_read_file(root, path, &comm);
	if (r == -ENOMEM)
		return r;
	if (r >= 0 && ht_utf8_invalid(comm))
		r = -EINVAL;
	if (r < 0)
		r = ht_process_fact_set(f, p->name, "parent_comm", NULL, -r, path);
	else {
		val = (struct ht_value){ .type = HT_T_STR, .s = comm };
		r = ht_process_fact_set(f, p->name, "parent_comm", &val, 0, path);
	}
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%ld/limits", ppid);
	rr = ht_read_file(root, path, &limits);
	if (rr == -ENOMEM)
		return rr;
	for (int k = 0; k < 2; k++) {
		const char *line = k ? "Max processes" : "Max open files";
		const char *sfx = k ? "parent_nproc" : "parent_nofile";

		r = rr < 0 ? rr : ht_limits_get(limits, line, &soft, &hard);
		if (r < 0)
			r = ht_process_fact_set(f, p->name, sfx, NULL,
			                        r == -ENOENT && limits ? EINVAL : -r, path);
		else {
			snprintf(src, sizeof(src), "%s %s", path, line);
			val = ht_int(soft);
			r = ht_process_fact_set(f, p->name, sfx, &val, 0, src);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int process_facts(struct ht_facts *f, const char *root, const struct proc_pick *p,
                         const struct ht_task_census *census)
{
	_cleanup_free_ char *comm = NULL, *limits = NULL, *cgroup = NULL, *unit = NULL;
	_cleanup_free_ char *manager = NULL;
	char path[64];
	struct ht_value v;
	int64_t soft, hard;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/comm", p->pid);
	r = ht_read_file(root, path, &comm);
	if (r == -ENOMEM)
		return r;
	if (r >= 0 && ht_utf8_invalid(comm))
		r = -EINVAL;
	if (r < 0)
		r = ht_process_fact_set(f, p->name, "comm", NULL, r, path);
	else {
		v = (struct ht_value){ .type = HT_T_STR, .s = comm };
		r = ht_process_fact_set(f, p->name, "comm", &v, 0, path);
	}
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d", p->pid);
	v = ht_int(p->pid);
	r = ht_process_fact_set(f, p->name, "pid", &v, 0, path);
	if (r < 0)
		return r;
	v = ht_int(p->count);
	r = ht_process_fact_set(f, p->name, "count", &v, 0, "/proc/PID/comm");
	if (r < 0)
		return r;

	if (p->unread) {
		char src[160];

		snprintf(src, sizeof(src), "PID %d's descriptors could not be read (/proc/%d/fd)%s",
		         p->unread_pid, p->unread_pid, p->unread > 1 ? ", and others'" : "");
		r = ht_process_fact_set(f, p->name, "unread", NULL, EACCES, src);
	} else {
		v = ht_int(0);
		r = ht_process_fact_set(f, p->name, "unread", &v, 0, "/proc/PID/fd");
	}
	if (r < 0)
		return r;

	snprintf(path, sizeof(path), "/proc/%d/fd", p->pid);
	if (p->fds < 0)
		r = ht_process_fact_set(f, p->name, "fds", NULL, p->fds_err, path);
	else {
		v = ht_int(p->fds);
		r = ht_process_fact_set(f, p->name, "fds", &v, 0, path);
	}
	if (r < 0)
		return r;

	snprintf(path, sizeof(path), "/proc/%d/limits", p->pid);
	r = ht_read_file(root, path, &limits);
	if (r == -ENOMEM)
		return r;
	if (r >= 0)
		r = ht_limits_nofile(limits, &soft, &hard);
	if (r < 0) {
		/* A limits file without the line is not what the kernel writes. */
		int e = r == -ENOENT && limits ? -EINVAL : r;

		r = ht_process_fact_set(f, p->name, "nofile", NULL, e, path);
		if (r >= 0)
			r = ht_process_fact_set(f, p->name, "nofile_hard", NULL, e, path);
	} else {
		char src[96];

		snprintf(src, sizeof(src), "%s Max open files", path);
		v = ht_int(soft);
		r = ht_process_fact_set(f, p->name, "nofile", &v, 0, src);
		v = ht_int(hard);
		if (r >= 0)
			r = ht_process_fact_set(f, p->name, "nofile_hard", &v, 0, src);
	}
	if (r < 0)
		return r;

	if ((r = parent_facts(f, root, p)) < 0 ||
	    (r = ht_task_facts(f, root, census, p->name, p->pid)) < 0)
		return r;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", p->pid);
	r = ht_read_file(root, path, &cgroup);
	if (r == -ENOMEM)
		return r;
	if (r >= 0 && (r = proc_runtime(f, p->name, cgroup, path)) < 0)
		return r;
	r = cgroup ? ht_cgroup_unit(cgroup, &unit, &manager) : r;
	if (r == -ENOMEM)
		return r;
	/* A name systemd would refuse (or hosttune could not write a drop-in for). */
	if (r >= 0 && (ht_utf8_invalid(unit) || !ht_unit_name_valid(unit)))
		r = -EINVAL;
	if (r < 0) {
		char src[384];

		if (r == -ENOENT && manager)
			snprintf(src, sizeof(src), "%s: runs under the user manager %s", path,
			         ht_utf8_invalid(manager) ? "user@?.service" : manager);
		else if (r == -ENOENT && cgroup)
			snprintf(src, sizeof(src), "%s: no *.service in its cgroup", path);
		else if (r == -EINVAL && unit && !ht_utf8_invalid(unit))
			snprintf(src, sizeof(src), "%s: %.255s is no valid service name", path, unit);
		else
			snprintf(src, sizeof(src), "%s", path);
		return ht_process_fact_set(f, p->name, "unit", NULL, r, src);
	}
	v = (struct ht_value){ .type = HT_T_STR, .s = unit };
	return ht_process_fact_set(f, p->name, "unit", &v, 0, path);
}

/* The PIDs asked for first, each named by its comm. */
static int picks_first(const char *root, const int *first, size_t n_first,
                       struct proc_pick **picks, size_t *n)
{
	for (size_t i = 0; i < n_first; i++) {
		_cleanup_free_ char *comm = NULL;
		char path[64];
		int r;

		snprintf(path, sizeof(path), "/proc/%d/comm", first[i]);
		r = ht_read_file(root, path, &comm);
		if (r == -ENOMEM)
			return r;
		if (r < 0 || !*comm)
			continue;
		r = add_pick(picks, n, comm);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The owners of listeners, by comm (ht_collect_sockets() ran before). */
static int picks_owners(struct ht_facts *f, struct proc_pick **picks, size_t *n)
{
	const struct ht_fact *ll = ht_facts_get(f, "listener.list");

	if (!ll || ll->value.type != HT_T_STR)
		return 0;
	for (const char *p = ll->value.s; *p;) {
		char key[64];
		const struct ht_fact *pf;
		unsigned port;
		int k, r;

		if (sscanf(p, "%u%n", &port, &k) != 1)
			break;
		p += k;
		while (*p == ' ')
			p++;
		snprintf(key, sizeof(key), "listener.%u.process", port);
		pf = ht_facts_get(f, key);
		if (pf && pf->value.type == HT_T_STR) {
			r = add_pick(picks, n, pf->value.s);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/*
 * The share of process @pid's soft RLIMIT_NPROC (of its /proc/PID/limits
 * text @limits) its user's tasks take, from the census; 0 when unknown, for
 * root (whom it does not bind) or without a limit.
 */
static double task_share(const char *root, const struct ht_task_census *c, int pid,
                         const char *limits)
{
	_cleanup_free_ char *status = NULL;
	const struct ht_task_user *u;
	int64_t soft, hard, uid, threads;

	if (ht_limits_get(limits, "Max processes", &soft, &hard) < 0 || soft <= 0 ||
	    soft == INT64_MAX)
		return 0;
	if (ht_proc_status_ids(root, pid, &status, &uid, &threads) < 0 || uid == 0)
		return 0;
	u = ht_task_census_user(c, (uint32_t)uid);
	return u ? (double)u->tasks / (double)soft : 0;
}

/*
 * Of each user but root whose tasks reach 75% of the lowest RLIMIT_NPROC
 * among its processes, the process with that limit: it is the first to be
 * refused a fork or a thread.
 */
static int picks_nproc(const char *root, const struct ht_task_census *c,
                       struct proc_pick **picks, size_t *n)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct ht_task_user *u = &c->users[i];
		_cleanup_free_ char *comm = NULL;
		char path[64];
		int r;

		if (u->uid == 0 || u->min_nproc == INT64_MAX || !u->min_pid ||
		    (__int128)u->tasks * 4 < (__int128)u->min_nproc * 3)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", u->min_pid);
		r = ht_read_file(root, path, &comm);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			continue;
		if ((r = add_pick(picks, n, comm)) < 0)
			return r;
	}
	return 0;
}

/* The caller's names, space- or tab-separated. */
static int picks_names(const char *names, struct proc_pick **picks, size_t *n)
{
	for (const char *p = names ? names : ""; *p;) {
		char word[64];
		size_t w = 0;
		int r;

		while (*p == ' ' || *p == '\t')
			p++;
		while (*p && *p != ' ' && *p != '\t') {
			if (w + 1 < sizeof(word))
				word[w++] = *p;
			p++;
		}
		word[w] = '\0';
		if (w && (r = add_pick(picks, n, word)) < 0)
			return r;
	}
	return 0;
}

int ht_collect_processes(struct ht_facts *f, const char *root, const char *names,
                         const int *first, size_t n_first)
{
	_cleanup_free_ char *list = NULL, *key = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	struct proc_pick *picks = NULL;
	struct ht_task_census census = { 0 };
	size_t n = 0, len = 0;
	struct dirent *de;
	int r = 0;

	if (!f)
		return -EINVAL;
	r = ht_task_census_read(root, &census);
	if (r >= 0)
		r = picks_first(root, first, n_first, &picks, &n);
	if (r >= 0)
		r = picks_owners(f, &picks, &n);
	if (r >= 0)
		r = picks_nproc(root, &census, &picks, &n);
	if (r >= 0)
		r = picks_names(names, &picks, &n);
	if (r < 0)
		goto out;

	/*
	 * Every process of each name is judged: the name's facts are the worst
	 * of them (worse()), so that one proxy near its limit is not hidden
	 * behind an idle one of the same name that owns a lower port.
	 */
	if (n > 0)
		d = ht_root_opendir(root, "/proc");
	while (d && (de = readdir(d))) {
		_cleanup_free_ char *comm = NULL, *limits = NULL;
		char path[64];
		int64_t fds = -1, soft = -1, hard;
		double nshare;
		int pid, fr, lr;

		if (!parse_pid(de->d_name, &pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		fr = ht_read_file(root, path, &comm);
		if (fr == -ENOMEM) {
			r = fr;
			goto out;
		}
		if (fr < 0)
			continue;
		free(key);
		key = comm_key(comm);
		if (!key && errno == ENOMEM) {
			r = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; key && i < n; i++) {
			struct proc_pick *p = &picks[i];

			if (strcmp(p->name, key) != 0)
				continue;
			p->count++;
			fr = count_fds(root, pid, &fds);
			if (fr == -ENOMEM) {
				r = fr;
				goto out;
			}
			/* Unreadable (EACCES), or gone since its comm was read: fewest. */
			if (fr < 0)
				fds = -1;
			/* Refused: the name's worst is unknown (process.NAME.unread). */
			if (fr == -EACCES || fr == -EPERM) {
				p->unread++;
				if (!p->unread_pid || pid < p->unread_pid)
					p->unread_pid = pid;
			}
			snprintf(path, sizeof(path), "/proc/%d/limits", pid);
			lr = ht_read_file(root, path, &limits);
			if (lr == -ENOMEM) {
				r = lr;
				goto out;
			}
			if (lr < 0 || ht_limits_nofile(limits, &soft, &hard) < 0)
				soft = -1;
			nshare = lr < 0 ? 0 : task_share(root, &census, pid, limits);
			if (worse(p, pid, fds, soft, nshare)) {
				p->pid = pid;
				p->fds = fds;
				p->soft = soft;
				p->nshare = nshare;
				p->fds_err = fr < 0 ? -fr : 0;
			}
			break;
		}
	}

	/* process.list: the names found, sorted. */
	/* name is the first member; picks is NULL when n is 0, which qsort() must not see. */
	if (n > 1)
		qsort(picks, n, sizeof(*picks), str_cmp);
	list = calloc(1, 1);
	if (!list) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char *nl;

		if (!picks[i].pid)
			continue;
		nl = realloc(list, len + strlen(picks[i].name) + 2);
		if (!nl) {
			r = -ENOMEM;
			goto out;
		}
		list = nl;
		len += (size_t)sprintf(list + len, "%s%s", len ? " " : "", picks[i].name);
		r = process_facts(f, root, &picks[i], &census);
		if (r < 0)
			goto out;
	}
	r = ht_facts_set_str(f, "process.list", list, "/proc/PID/comm");
out:
	for (size_t i = 0; i < n; i++)
		free(picks[i].name);
	free(picks);
	ht_task_census_free(&census);
	return r == -ENOMEM ? r : r < 0 ? 0 : r;
}
