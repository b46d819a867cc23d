/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Control groups with a memory or pids limit (collect.h,
 * ht_collect_cgroups()): cgroup v2's unified hierarchy at /sys/fs/cgroup,
 * else v1's memory and pids hierarchies (/sys/fs/cgroup/memory,
 * /sys/fs/cgroup/pids), walked below --root. The files are the kernel's
 * own (Documentation/admin-guide/cgroup-v2.rst, cgroup-v1/memory.rst,
 * cgroup-v1/pids.rst).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collect/collect.h"
#include "collect/procfs.h"
#include "engine/facts.h"
#include "shared/escape.h"
#include "shared/rootfs.h"
#include "shared/util.h"

#define CG_ROOT "/sys/fs/cgroup"
/* Groups read at most, how deep, and the processes of one looked at for its largest. */
#define CG_MAX 4096
#define CG_DEPTH 16
/* Directories of a hierarchy walked at most (a host with far more groups than it can judge). */
#define CG_WALK_MAX 100000
#define CG_PROCS_MAX 4096
/*
 * A v1 memory.limit_in_bytes this large is no limit: PAGE_COUNTER_MAX pages
 * (LONG_MAX / PAGE_SIZE) in bytes, 9223372036854771712 with 4 KiB pages.
 */
#define V1_UNLIMITED (INT64_C(1) << 62)

/* One group: its path below the hierarchy's root ("" is the root), what it has of each file. */
struct cg {
	char *path;
	const char *mem_dir, *pids_dir; /* the hierarchy holding its memory or pids files */
	int64_t mem_max, mem_cur, oom_kills, max_events; /* -1: not read */
	int64_t pids_max, pids_cur, pids_events;
	int mem_err, pids_err; /* memory.max or pids.max unreadable: its negative errno */
	bool mem_limited, pids_limited, mem_seen, pids_seen;
	/* v2 without memory.events.local: oom_kills and max_events count the children's too */
	bool hier_events;
};

struct cg_set {
	struct cg *v;
	size_t n, cap;
	size_t walked;  /* directories walked, of every hierarchy */
	size_t skipped; /* groups to judge that were left out: past CG_MAX, CG_DEPTH or CG_WALK_MAX */
};

static void cg_set_free(struct cg_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].path);
	free(s->v);
	*s = (struct cg_set){ 0 };
}

/*
 * The group of @path in @s, added (with nothing read) when new: 0 and *@out;
 * *@out NULL past CG_MAX (counted in s->skipped); -ENOMEM.
 */
static int cg_get(struct cg_set *s, const char *path, struct cg **out)
{
	struct cg *n;

	*out = NULL;
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].path, path) == 0) {
			*out = &s->v[i];
			return 0;
		}
	if (s->n >= CG_MAX) {
		s->skipped++;
		return 0;
	}
	if (s->n == s->cap) {
		n = reallocarray(s->v, s->cap ? s->cap * 2 : 64, sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->v = n;
		s->cap = s->cap ? s->cap * 2 : 64;
	}
	n = &s->v[s->n];
	*n = (struct cg){ .mem_max = -1, .mem_cur = -1, .oom_kills = -1, .max_events = -1,
		          .pids_max = -1, .pids_cur = -1, .pids_events = -1 };
	n->path = strdup(path);
	if (!n->path)
		return -ENOMEM;
	s->n++;
	*out = n;
	return 0;
}

/* A group the rules judge: a limit of its own, a counter that shows one bit, or a limit unread. */
static bool cg_wanted(const struct cg *g)
{
	return g->mem_limited || g->pids_limited || g->oom_kills > 0 || g->pids_events > 0 ||
	       g->mem_err || g->pids_err;
}

/* File @name of group @path in hierarchy @dir, read below @root into *@text: ht_read_file(). */
static int read_group_file(const char *root, const char *dir, const char *path,
                           const char *name, char **text)
{
	_cleanup_free_ char *file = NULL;

	if (asprintf(&file, "%s%s%s/%s", dir, *path ? "/" : "", path, name) < 0)
		return -ENOMEM;
	return ht_read_file(root, file, text);
}

/*
 * The integer file @name of group @path in hierarchy @dir: 0 and *@out, 1
 * when it says "max" (no limit), -ENOENT when there is no such file, or a
 * negative errno (-EINVAL for anything but one number or "max").
 */
static int read_num(const char *root, const char *dir, const char *path, const char *name,
                    int64_t *out)
{
	_cleanup_free_ char *text = NULL;
	char *end;
	long long v;
	int r = read_group_file(root, dir, path, name, &text);

	if (r < 0)
		return r;
	if (strcmp(text, "max\n") == 0 || strcmp(text, "max") == 0)
		return 1;
	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno || end == text || v < 0 || (*end && strcmp(end, "\n") != 0))
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * The value of key @key in the "KEY VALUE" lines of file @name (memory.events,
 * pids.events, memory.oom_control): 0 and *@out, -ENOENT without the file or
 * the key, or a negative errno.
 */
static int read_keyed(const char *root, const char *dir, const char *path, const char *name,
                      const char *key, int64_t *out)
{
	_cleanup_free_ char *text = NULL;
	int r = read_group_file(root, dir, path, name, &text);

	return r < 0 ? r : keyed_value(text, key, out);
}

/* Reads the memory files of @g in hierarchy @dir (v2 names, or v1's with @v1). -ENOMEM or 0. */
static int read_memory(const char *root, const char *dir, bool v1, struct cg *g)
{
	int64_t v;
	int r;

	r = read_num(root, dir, g->path, v1 ? "memory.limit_in_bytes" : "memory.max", &v);
	if (r == -ENOMEM)
		return r;
	if (r == -ENOENT)
		return 0; /* no memory controller here */
	g->mem_seen = true;
	g->mem_dir = dir;
	g->mem_err = r < 0 ? r : 0;
	g->mem_limited = r == 0 && !(v1 && v >= V1_UNLIMITED);
	if (g->mem_limited)
		g->mem_max = v;
	if (read_num(root, dir, g->path, v1 ? "memory.usage_in_bytes" : "memory.current", &v) == 0)
		g->mem_cur = v;
	if (v1) {
		/* v1 counts an OOM kill in the group whose limit it hit, not above it. */
		if (read_keyed(root, dir, g->path, "memory.oom_control", "oom_kill", &v) == 0)
			g->oom_kills = v;
		if (read_num(root, dir, g->path, "memory.failcnt", &v) == 0)
			g->max_events = v;
		return 0;
	}
	/* v2's memory.events counts its children's too; .local (5.2+) the group's own. */
	r = read_keyed(root, dir, g->path, "memory.events.local", "oom_kill", &v);
	g->hier_events = r == -ENOENT;
	if (r == -ENOENT)
		r = read_keyed(root, dir, g->path, "memory.events", "oom_kill", &v);
	if (r == 0)
		g->oom_kills = v;
	if (read_keyed(root, dir, g->path, g->hier_events ? "memory.events" : "memory.events.local",
	               "max", &v) == 0)
		g->max_events = v;
	return 0;
}

static int read_pids(const char *root, const char *dir, struct cg *g)
{
	int64_t v;
	int r = read_num(root, dir, g->path, "pids.max", &v);

	if (r == -ENOMEM)
		return r;
	if (r == -ENOENT)
		return 0;
	g->pids_seen = true;
	g->pids_dir = dir;
	g->pids_err = r < 0 ? r : 0;
	g->pids_limited = r == 0;
	if (r == 0)
		g->pids_max = v;
	if (read_num(root, dir, g->path, "pids.current", &v) == 0)
		g->pids_cur = v;
	if (read_keyed(root, dir, g->path, "pids.events", "max", &v) == 0)
		g->pids_events = v;
	return 0;
}

/* The number of directories in @full (a group's children), for what a cut leaves out. */
static size_t subdirs(const char *root, const char *full)
{
	_cleanup_closedir_ DIR *d = ht_root_opendir(root, full);
	struct dirent *de;
	size_t n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.' && de->d_type == DT_DIR;
	return n;
}

/*
 * Every group below @dir/@path (depth @depth) into @s when the rules judge
 * it (cg_wanted()), merged with what another hierarchy of v1 gave it,
 * reading the memory files (@mem), the pids files (@pids) or both. What is
 * past CG_DEPTH or CG_WALK_MAX is counted in s->skipped. Directories are not
 * followed through links (a cgroup file system has none). -ENOMEM or 0.
 */
static int walk(const char *root, const char *dir, const char *path, unsigned depth, bool mem,
                bool pids, bool v1, struct cg_set *s)
{
	_cleanup_free_ char *full = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int r;

	if (asprintf(&full, "%s%s%s", dir, *path ? "/" : "", path) < 0)
		return -ENOMEM;
	if (*path) {
		struct cg tmp = { .path = (char *)path, .mem_max = -1, .mem_cur = -1, .oom_kills = -1,
			          .max_events = -1, .pids_max = -1, .pids_cur = -1, .pids_events = -1 };
		struct cg *g = NULL;

		if (s->walked++ >= CG_WALK_MAX) {
			s->skipped += 1 + subdirs(root, full);
			return 0;
		}
		if (mem && (r = read_memory(root, dir, v1, &tmp)) < 0)
			return r;
		if (pids && (r = read_pids(root, dir, &tmp)) < 0)
			return r;
		if (cg_wanted(&tmp)) {
			if ((r = cg_get(s, path, &g)) < 0)
				return r;
			if (g && mem) {
				tmp.path = g->path;
				tmp.pids_dir = g->pids_dir; /* v1: the pids walk comes after */
				*g = tmp;
			} else if (g && pids) {
				g->pids_dir = tmp.pids_dir;
				g->pids_max = tmp.pids_max, g->pids_cur = tmp.pids_cur;
				g->pids_events = tmp.pids_events, g->pids_err = tmp.pids_err;
				g->pids_limited = tmp.pids_limited, g->pids_seen = tmp.pids_seen;
			}
		}
	}
	if (depth >= CG_DEPTH) {
		s->skipped += subdirs(root, full);
		return 0;
	}
	d = ht_root_opendir(root, full);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		_cleanup_free_ char *sub = NULL;

		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		if (asprintf(&sub, "%s%s%s", path, *path ? "/" : "", de->d_name) < 0)
			return -ENOMEM;
		r = walk(root, dir, sub, depth + 1, mem, pids, v1, s);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * v2 without memory.events.local: a group's own OOM kills and limit events
 * are its count less its children's (each counts below itself too).
 */
static int own_events(struct cg_set *s)
{
	_cleanup_free_ int64_t *kills = calloc(s->n + 1, sizeof(*kills));
	_cleanup_free_ int64_t *maxes = calloc(s->n + 1, sizeof(*maxes));

	if (!kills || !maxes)
		return -ENOMEM;
	/* From the counts as read, before any group's is made its own. */
	for (size_t i = 0; i < s->n; i++) {
		const struct cg *g = &s->v[i];
		size_t pl = strlen(g->path);

		kills[i] = g->oom_kills, maxes[i] = g->max_events;
		if (!g->hier_events)
			continue;
		for (size_t j = 0; j < s->n; j++) {
			const struct cg *c = &s->v[j];

			if (strncmp(c->path, g->path, pl) != 0 || c->path[pl] != '/' ||
			    strchr(c->path + pl + 1, '/'))
				continue;
			if (kills[i] > 0 && c->oom_kills > 0)
				kills[i] = kills[i] > c->oom_kills ? kills[i] - c->oom_kills : 0;
			if (maxes[i] > 0 && c->max_events > 0)
				maxes[i] = maxes[i] > c->max_events ? maxes[i] - c->max_events : 0;
		}
	}
	for (size_t i = 0; i < s->n; i++)
		s->v[i].oom_kills = kills[i], s->v[i].max_events = maxes[i];
	return 0;
}

/* The hex ID after @prefix in @comp (64 hex digits), first 12 into @id; false when not one. */
static bool hex_id(const char *comp, const char *prefix, char id[13])
{
	size_t pl = strlen(prefix), n;

	if (strncmp(comp, prefix, pl) != 0)
		return false;
	n = strspn(comp + pl, "0123456789abcdef");
	if (n != 64 || (comp[pl + n] && strcmp(comp + pl + n, ".scope") != 0))
		return false;
	memcpy(id, comp + pl, 12);
	id[12] = '\0';
	return true;
}

void ht_cgroup_classify(const char *path, const char **manager, char container[80],
                        char unit[256])
{
	const char *p = path;

	*manager = "other";
	container[0] = unit[0] = '\0';
	while (*p) {
		size_t n = strcspn(p, "/");
		char comp[256], id[13];
		const char *pod;

		if (n >= sizeof(comp)) {
			p += n + (p[n] == '/');
			continue;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (n > 8 && (strcmp(comp + n - 8, ".service") == 0 || strcmp(comp + n - 6, ".scope") == 0))
			snprintf(unit, 256, "%s", comp);
		pod = strncmp(comp, "pod", 3) == 0 ? comp : strstr(comp, "-pod");
		if (pod && *pod == '-')
			pod++;
		if (strncmp(comp, "kubepods", 8) == 0 ||
		    (strcmp(*manager, "kubernetes") == 0 && pod)) {
			*manager = "kubernetes";
			/* kubepods-burstable-pod1a2b_3c.slice (systemd driver), or podUID (cgroupfs). */
			if (pod && pod[3] && pod[3] != 's') {
				snprintf(container, 80, "%.*s", (int)strcspn(pod + 3, "."), pod + 3);
				for (char *c = container; *c; c++)
					if (*c == '_')
						*c = '-';
			}
		} else if (strcmp(*manager, "kubernetes") != 0 &&
		           (hex_id(comp, "docker-", id) || (hex_id(comp, "", id) && p > path &&
		                                            strncmp(p - 7, "docker/", 7) == 0))) {
			*manager = "docker";
			snprintf(container, 80, "%s", id);
		} else if (strcmp(*manager, "kubernetes") != 0 && hex_id(comp, "libpod-", id)) {
			*manager = "podman";
			snprintf(container, 80, "%s", id);
		} else if (strncmp(comp, "lxc.payload.", 12) == 0 ||
		           (p >= path + 4 && strncmp(p - 4, "lxc/", 4) == 0 && strcmp(*manager, "other") == 0)) {
			*manager = "lxc";
			snprintf(container, 80, "%.79s", strncmp(comp, "lxc.payload.", 12) == 0 ? comp + 12 : comp);
		}
		p += n + (p[n] == '/');
	}
	if (strcmp(*manager, "other") == 0 && unit[0])
		*manager = "systemd";
}

/* The process of a group with the most threads (what fills pids.max), by its comm and PID. */
struct cg_threads {
	char comm[64];
	int64_t pid, threads; /* threads -1 when no process's Threads: could be read */
};

/*
 * The process of @g's cgroup.procs with the largest VmRSS: 0 and @comm/@pid/@rss, or -ENOENT;
 * and, in @th, the one with the most threads.
 */
static int top_process(const char *root, const char *dir, const char *path, int64_t *procs,
                       char comm[64], int64_t *pid, int64_t *rss, struct cg_threads *th)
{
	_cleanup_free_ char *file = NULL, *text = NULL;
	int64_t best = -1;
	int r, seen = 0;

	th->threads = -1;

	*procs = 0;
	if (asprintf(&file, "%s/%s/cgroup.procs", dir, path) < 0)
		return -ENOMEM;
	r = ht_read_file(root, file, &text);
	if (r < 0)
		return r;
	for (char *p = text; *p && seen < CG_PROCS_MAX; p += strcspn(p, "\n"), p += *p == '\n') {
		_cleanup_free_ char *st = NULL, *status = NULL, *cm = NULL, *cfile = NULL;
		char num[16];
		size_t n = strcspn(p, "\n");
		int id;
		const char *v;

		if (n == 0 || n >= sizeof(num))
			continue;
		memcpy(num, p, n);
		num[n] = '\0';
		if (!parse_pid(num, &id))
			continue;
		(*procs)++;
		seen++;
		if (asprintf(&st, "/proc/%d/status", id) < 0 || asprintf(&cfile, "/proc/%d/comm", id) < 0)
			return -ENOMEM;
		if (ht_read_file(root, st, &status) < 0)
			continue; /* gone */
		if ((v = strstr(status, "\nThreads:"))) {
			long long t = strtoll(v + 9, NULL, 10);

			/* A task count past PID_MAX_LIMIT (4194304) is none the kernel wrote. */
			if (t > th->threads && t <= 4194304 &&
			    ht_read_file(root, cfile, &cm) >= 0) {
				th->threads = t;
				th->pid = id;
				snprintf(th->comm, sizeof(th->comm), "%.*s", (int)strcspn(cm, "\n"), cm);
			}
			free(TAKE_PTR(cm));
		}
		if (!(v = strstr(status, "\nVmRSS:")))
			continue; /* a kernel thread */
		{
			long long kib = strtoll(v + 7, NULL, 10);

			/* An absurd figure (past 2^53 bytes) is none the kernel wrote. */
			if (kib < 0 || kib > (INT64_C(1) << 43) || kib * 1024 <= best ||
			    ht_read_file(root, cfile, &cm) < 0)
				continue;
			best = kib * 1024;
			snprintf(comm, 64, "%.*s", (int)strcspn(cm, "\n"), cm);
			*pid = id;
		}
	}
	if (best < 0)
		return -ENOENT;
	*rss = best;
	return 0;
}

/* Sets fact cgroup.@esc.@suffix: @v, or unavailable with @err when @v < 0. */
static int set_num(struct ht_facts *f, const char *esc, const char *suffix, int64_t v, int err,
                   const char *dir, const char *path, const char *file)
{
	_cleanup_free_ char *name = NULL, *src = NULL;

	if (asprintf(&name, "cgroup.%s.%s", esc, suffix) < 0 ||
	    asprintf(&src, "%s/%s/%s", dir, path, file) < 0)
		return -ENOMEM;
	if (v < 0)
		return ht_facts_set_errno(f, name, err, ht_fact_def_unit(name), src);
	return ht_facts_set_int(f, name, v, ht_fact_def_unit(name), src);
}

static int set_str(struct ht_facts *f, const char *esc, const char *suffix, const char *s,
                   const char *src)
{
	_cleanup_free_ char *name = NULL;

	if (asprintf(&name, "cgroup.%s.%s", esc, suffix) < 0)
		return -ENOMEM;
	if (!*s)
		return ht_facts_set_errno(f, name, ENOENT, NULL, src);
	return ht_facts_set_str(f, name, s, src);
}

/* The facts of group @g, named by @esc. */
static int group_facts(struct ht_facts *f, const char *root, const struct cg *g, const char *esc)
{
	char comm[64] = "", container[80], unit[256];
	int64_t procs = 0, pid = 0, rss = 0;
	struct cg_threads th = { .threads = -1 };
	const char *manager, *dir = g->mem_dir ? g->mem_dir : g->pids_dir;
	int r = 0;

	if (g->mem_seen) {
		bool v1 = strcmp(g->mem_dir, CG_ROOT) != 0;

		r = set_num(f, esc, "memory_max", g->mem_limited ? g->mem_max : -1,
		            g->mem_err ? -g->mem_err : ENODATA, g->mem_dir, g->path,
		            v1 ? "memory.limit_in_bytes" : "memory.max");
		if (r >= 0 && g->mem_cur >= 0)
			r = set_num(f, esc, "memory_current", g->mem_cur, 0, g->mem_dir, g->path,
			            v1 ? "memory.usage_in_bytes" : "memory.current");
		const char *events = v1 ? "memory.oom_control"
		                     : g->hier_events ? "memory.events, less its children's"
		                                      : "memory.events.local";

		if (r >= 0 && g->oom_kills >= 0)
			r = set_num(f, esc, "memory_oom_kills", g->oom_kills, 0, g->mem_dir, g->path,
			            events);
		if (r >= 0 && g->max_events >= 0)
			r = set_num(f, esc, "memory_max_events", g->max_events, 0, g->mem_dir, g->path,
			            v1 ? "memory.failcnt" : events);
	}
	if (r >= 0 && g->pids_seen) {
		r = set_num(f, esc, "pids_max", g->pids_limited ? g->pids_max : -1,
		            g->pids_err ? -g->pids_err : ENODATA, g->pids_dir, g->path, "pids.max");
		if (r >= 0 && g->pids_cur >= 0)
			r = set_num(f, esc, "pids_current", g->pids_cur, 0, g->pids_dir, g->path, "pids.current");
		if (r >= 0 && g->pids_events >= 0)
			r = set_num(f, esc, "pids_events", g->pids_events, 0, g->pids_dir, g->path, "pids.events");
	}
	if (r < 0)
		return r;
	ht_cgroup_classify(g->path, &manager, container, unit);
	r = set_str(f, esc, "manager", manager, "the group's path");
	if (r >= 0)
		r = set_str(f, esc, "container", container, "the group's path");
	if (r >= 0)
		r = set_str(f, esc, "unit", unit, "the group's path");
	if (r < 0)
		return r;
	r = top_process(root, dir, g->path, &procs, comm, &pid, &rss, &th);
	if (r == -ENOMEM)
		return r;
	r = set_num(f, esc, "procs", procs, 0, dir, g->path, "cgroup.procs");
	if (r >= 0 && th.threads >= 0) {
		_cleanup_free_ char *src = NULL;

		if (asprintf(&src, "/proc/%" PRId64 "/status Threads", th.pid) < 0)
			return -ENOMEM;
		r = set_str(f, esc, "threads_process", th.comm, src);
		if (r >= 0) {
			_cleanup_free_ char *name = NULL;

			if (asprintf(&name, "cgroup.%s.threads_top", esc) < 0)
				return -ENOMEM;
			r = ht_facts_set_int(f, name, th.threads, "tasks", src);
		}
	}
	if (r >= 0 && comm[0]) {
		_cleanup_free_ char *src = NULL;

		if (asprintf(&src, "/proc/%" PRId64 "/status VmRSS", pid) < 0)
			return -ENOMEM;
		r = set_str(f, esc, "top_process", comm, src);
		if (r >= 0)
			r = set_num(f, esc, "top_pid", pid, 0, dir, g->path, "cgroup.procs");
		if (r >= 0) {
			_cleanup_free_ char *name = NULL;

			if (asprintf(&name, "cgroup.%s.top_rss", esc) < 0)
				return -ENOMEM;
			r = ht_facts_set_int(f, name, rss, "bytes", src);
		}
	}
	return r;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct cg *)a)->path, ((const struct cg *)b)->path);
}

int ht_collect_cgroups(struct ht_facts *f, const char *root)
{
	struct stat st;
	struct cg_set s = { 0 };
	const char *version, *src;
	char *list = NULL;
	size_t len = 0;
	FILE *lf;
	int r = 0;

	if (ht_root_stat(root, CG_ROOT "/cgroup.controllers", false, &st) == 0) {
		version = "v2";
		src = CG_ROOT "/cgroup.controllers";
		r = walk(root, CG_ROOT, "", 0, true, true, false, &s);
	} else if (ht_root_stat(root, CG_ROOT "/memory", false, &st) == 0 ||
	           ht_root_stat(root, CG_ROOT "/pids", false, &st) == 0) {
		version = "v1";
		src = CG_ROOT "/memory and " CG_ROOT "/pids";
		r = walk(root, CG_ROOT "/memory", "", 0, true, false, true, &s);
		if (r >= 0)
			r = walk(root, CG_ROOT "/pids", "", 0, false, true, true, &s);
	} else {
		/* No cgroup file system mounted: no group to judge. */
		r = ht_facts_set_str(f, "cgroup.version", "none", CG_ROOT);
		if (r >= 0)
			r = ht_facts_set_str(f, "cgroup.list", "", CG_ROOT);
		if (r >= 0)
			r = ht_facts_set_int(f, "cgroup.skipped", 0, "groups", CG_ROOT);
		return r;
	}
	if (r >= 0)
		r = own_events(&s);
	if (r < 0)
		goto out;
	if (s.n > 0) /* qsort(3) of a null array, none read, is undefined */
		qsort(s.v, s.n, sizeof(*s.v), cmp_path);
	lf = open_memstream(&list, &len);
	if (!lf) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s.n && r >= 0; i++) {
		const struct cg *g = &s.v[i];
		_cleanup_free_ char *esc = NULL;

		/* A group with a limit of its own, one whose counters show it bit, or one unread. */
		if (!cg_wanted(g))
			continue;
		esc = ht_name_escape(g->path);
		if (!esc) {
			r = -ENOMEM;
			break;
		}
		fprintf(lf, "%s%s", ftell(lf) ? " " : "", esc);
		r = group_facts(f, root, g, esc);
	}
	if (fclose(lf) != 0 && r >= 0)
		r = -ENOMEM;
	if (r >= 0)
		r = ht_facts_set_str(f, "cgroup.version", version, src);
	if (r >= 0)
		r = ht_facts_set_str(f, "cgroup.list", list ? list : "", CG_ROOT);
	if (r >= 0)
		r = ht_facts_set_int(f, "cgroup.skipped", (int64_t)s.skipped, "groups",
		                     "past 4096 groups to judge, 16 levels or 100000 directories of " CG_ROOT);
out:
	free(list);
	cg_set_free(&s);
	return r;
}
