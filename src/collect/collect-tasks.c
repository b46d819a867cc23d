/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/collect.h"
#include "collect/procfs.h"
#include "engine/facts.h"
#include "shared/rootfs.h"
#include "shared/util.h"

/*
 * A process's limits: /proc/PID/limits parsed, the process.NAME.* fact
 * setter every process collector uses, and RLIMIT_NPROC's count.
 *
 * RLIMIT_NPROC: the tasks of each real UID. copy_process() (kernel/fork.c)
 * refuses a fork or a new thread with EAGAIN when the user's count of tasks
 * (processes and threads alike, kernel/ucount.c) has reached the forking
 * process's soft RLIMIT_NPROC, unless the user is root or the task has
 * CAP_SYS_RESOURCE or CAP_SYS_ADMIN. So the usage of one process's limit is
 * every task of its user, and the largest holder is that user's process
 * with the most threads.
 */

enum { CAP_SYS_ADMIN_BIT = 21, CAP_SYS_RESOURCE_BIT = 24 }; /* include/uapi/linux/capability.h */

/* The decimal after "\nKEY:" in /proc/PID/status text, or -1. */
static int64_t status_number(const char *status, const char *key)
{
	char pat[32];
	const char *v;
	char *end;
	long long n;

	snprintf(pat, sizeof(pat), "\n%s:", key);
	v = strstr(status, pat);
	if (!v)
		return -1;
	errno = 0;
	n = strtoll(skip_blank(v + strlen(pat)), &end, 10);
	if (errno || n < 0 || (*end && *end != '\n' && *end != '\t' && *end != ' '))
		return -1;
	return n;
}

int ht_proc_status_ids(const char *root, int pid, char **status, int64_t *uid, int64_t *threads)
{
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	r = ht_read_file(root, path, status);
	if (r < 0)
		return r;
	*uid = status_number(*status, "Uid");
	*threads = status_number(*status, "Threads");
	/* No process has more threads than PID_MAX_LIMIT (include/linux/threads.h). */
	return *uid < 0 || *uid > UINT32_MAX || *threads < 0 || *threads > 4194304 ? -EINVAL : 0;
}

/* CapEff of the status text: true when CAP_SYS_ADMIN or CAP_SYS_RESOURCE is in it. */
static bool status_cap_exempt(const char *status)
{
	const char *v = strstr(status, "\nCapEff:");
	unsigned long long caps;

	if (!v || sscanf(v + 8, "%llx", &caps) != 1)
		return false;
	return caps & ((1ULL << CAP_SYS_ADMIN_BIT) | (1ULL << CAP_SYS_RESOURCE_BIT));
}

/* ---- /proc/PID/limits and the process facts ---- */

/* The value of a limit: a decimal or "unlimited" (RLIM_INFINITY). */
static int parse_limit(const char **pp, int64_t *out)
{
	const char *p = skip_blank(*pp);
	int64_t v = 0;

	if (strncmp(p, "unlimited", 9) == 0) {
		*out = INT64_MAX;
		*pp = p + 9;
		return 0;
	}
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (INT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (*p - '0');
	}
	*out = v;
	*pp = p;
	return 0;
}

int ht_limits_nofile(const char *text, int64_t *soft, int64_t *hard)
{
	return ht_limits_get(text, "Max open files", soft, hard);
}

int ht_limits_get(const char *text, const char *key, int64_t *soft, int64_t *hard)
{
	const char *p = text;
	size_t klen;

	if (!text || !key || !soft || !hard)
		return -EINVAL;
	klen = strlen(key);
	/* fs/proc/base.c proc_pid_limits(): "%-25s %-20s %-20s %-10s\n". */
	for (;;) {
		if (strncmp(p, key, klen) == 0 && (p[klen] == ' ' || p[klen] == '\t'))
			break;
		p = strchr(p, '\n');
		if (!p)
			return -ENOENT;
		p++;
	}
	p += klen;
	if (parse_limit(&p, soft) < 0 || (*p != ' ' && *p != '\t') || parse_limit(&p, hard) < 0)
		return -EINVAL;
	if (*p && *p != ' ' && *p != '\t' && *p != '\n')
		return -EINVAL;
	return 0;
}

int ht_process_fact_set(struct ht_facts *f, const char *pname, const char *suffix,
                        const struct ht_value *v, int err, const char *source)
{
	_cleanup_free_ char *name = NULL;

	if (asprintf(&name, "process.%s.%s", pname, suffix) < 0)
		return -ENOMEM;
	if (!v)
		return ht_facts_set_errno(f, name, err, ht_fact_def_unit(name), source);
	return ht_facts_set(f, name, v, ht_fact_def_unit(name), source);
}

/* ---- tasks by real UID ---- */

static int cmp_uid(const void *a, const void *b)
{
	uint32_t x = ((const struct ht_task_user *)a)->uid, y = ((const struct ht_task_user *)b)->uid;

	return (x > y) - (x < y);
}

const struct ht_task_user *ht_task_census_user(const struct ht_task_census *c, uint32_t uid)
{
	struct ht_task_user key = { .uid = uid };

	if (!c || !c->n)
		return NULL;
	return bsearch(&key, c->users, c->n, sizeof(*c->users), cmp_uid);
}

void ht_task_census_free(struct ht_task_census *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->users[i].comms);
	free(c->users);
	*c = (struct ht_task_census){ 0 };
}

/* The census row of @uid, added when new (the array is sorted at the end). */
static struct ht_task_user *census_row(struct ht_task_census *c, size_t *cap, uint32_t uid)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->users[i].uid == uid)
			return &c->users[i];
	if (c->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct ht_task_user *n = reallocarray(c->users, ncap, sizeof(*n));

		if (!n)
			return NULL;
		c->users = n;
		*cap = ncap;
	}
	c->users[c->n] = (struct ht_task_user){ .uid = uid, .min_nproc = INT64_MAX };
	return &c->users[c->n++];
}

/* Adds @threads of process @pid named @name to @u's names. -ENOMEM or 0. */
static int census_comm(struct ht_task_user *u, const char *name, size_t len, int pid,
                       int64_t threads)
{
	struct ht_task_comm *m = NULL;

	if (len >= sizeof(m->name))
		len = sizeof(m->name) - 1;
	for (size_t i = 0; i < u->ncomms && !m; i++)
		if (strlen(u->comms[i].name) == len && !memcmp(u->comms[i].name, name, len))
			m = &u->comms[i];
	if (!m) {
		if (u->ncomms == u->comms_cap) {
			size_t ncap = u->comms_cap ? u->comms_cap * 2 : 8;
			struct ht_task_comm *n = reallocarray(u->comms, ncap, sizeof(*n));

			if (!n)
				return -ENOMEM;
			u->comms = n;
			u->comms_cap = ncap;
		}
		m = &u->comms[u->ncomms++];
		*m = (struct ht_task_comm){ .pid = pid };
		memcpy(m->name, name, len);
		m->name[len] = '\0';
	}
	m->tasks += threads;
	m->processes++;
	if (pid < m->pid)
		m->pid = pid;
	return 0;
}

/* The name of @u's processes holding the most tasks (the lowest PID's on a tie), or NULL. */
static const struct ht_task_comm *census_top(const struct ht_task_user *u)
{
	const struct ht_task_comm *top = NULL;

	for (size_t i = 0; i < u->ncomms; i++)
		if (!top || u->comms[i].tasks > top->tasks ||
		    (u->comms[i].tasks == top->tasks && u->comms[i].pid < top->pid))
			top = &u->comms[i];
	return top;
}

int ht_task_census_read(const char *root, struct ht_task_census *c)
{
	_cleanup_closedir_ DIR *d = ht_root_opendir(root, "/proc");
	struct dirent *de;
	size_t cap = 0;

	*c = (struct ht_task_census){ 0 };
	while (d && (de = readdir(d))) {
		_cleanup_free_ char *status = NULL, *limits = NULL;
		struct ht_task_user *u;
		const char *name;
		char path[64];
		int64_t uid, threads, soft = INT64_MAX, hard;
		int pid, r;

		if (!parse_pid(de->d_name, &pid))
			continue;
		r = ht_proc_status_ids(root, pid, &status, &uid, &threads);
		if (r == -ENOMEM)
			goto nomem;
		if (r < 0) {
			c->unread++;
			continue;
		}
		/* Root's tasks are never refused for RLIMIT_NPROC: its limits are not read. */
		if (uid != 0) {
			snprintf(path, sizeof(path), "/proc/%d/limits", pid);
			r = ht_read_file(root, path, &limits);
			if (r == -ENOMEM)
				goto nomem;
			if (r < 0 || ht_limits_get(limits, "Max processes", &soft, &hard) < 0)
				soft = INT64_MAX;
		}
		u = census_row(c, &cap, (uint32_t)uid);
		if (!u)
			goto nomem;
		u->tasks += threads;
		u->processes++;
		/* "Name:\tCOMM" is the first line (fs/proc/array.c proc_task_name()). */
		name = strncmp(status, "Name:", 5) == 0 ? skip_blank(status + 5) : "?";
		if (census_comm(u, name, strcspn(name, "\n"), pid, threads) < 0)
			goto nomem;
		if (!u->min_pid || soft < u->min_nproc || (soft == u->min_nproc && pid < u->min_pid)) {
			u->min_nproc = soft;
			u->min_pid = pid;
		}
	}
	if (c->n > 1)
		qsort(c->users, c->n, sizeof(*c->users), cmp_uid);
	return 0;
nomem:
	ht_task_census_free(c);
	return -ENOMEM;
}

/* The name of @uid in @root/etc/passwd, into @buf; false when it has none. */
static bool passwd_name(const char *root, uint32_t uid, char *buf, size_t size)
{
	_cleanup_free_ char *pw = NULL;

	if (ht_read_file(root, "/etc/passwd", &pw) < 0)
		return false;
	for (const char *l = pw; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *c1 = strchr(l, ':'), *c2, *nl = strchr(l, '\n');
		char *end;
		unsigned long v;

		if (!c1 || (nl && c1 > nl) || !(c2 = strchr(c1 + 1, ':')) || (nl && c2 > nl))
			continue;
		errno = 0;
		v = strtoul(c2 + 1, &end, 10);
		if (errno || end == c2 + 1 || *end != ':' || v != uid)
			continue;
		if ((size_t)(c1 - l) >= size || c1 == l)
			return false;
		memcpy(buf, l, (size_t)(c1 - l));
		buf[c1 - l] = '\0';
		return !ht_utf8_invalid(buf);
	}
	return false;
}

static int set_int(struct ht_facts *f, const char *pname, const char *suffix, int64_t v,
                   int err, const char *source)
{
	struct ht_value val = ht_int(v);

	return ht_process_fact_set(f, pname, suffix, err ? NULL : &val, err, source);
}

int ht_task_facts(struct ht_facts *f, const char *root, const struct ht_task_census *c,
                  const char *pname, int pid)
{
	static const char *const user_sfx[] = { "uid", "user", "nproc_exempt", "threads",
		                                "user_tasks", "user_top", "user_top_pid",
		                                "user_top_processes", "user_top_threads" };
	_cleanup_free_ char *status = NULL, *limits = NULL;
	const struct ht_task_comm *top;
	const struct ht_task_user *u;
	char path[64], src[160], name[64];
	struct ht_value v;
	int64_t soft, hard, uid, threads;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/limits", pid);
	r = ht_read_file(root, path, &limits);
	if (r == -ENOMEM)
		return r;
	if (r >= 0)
		r = ht_limits_get(limits, "Max processes", &soft, &hard);
	if (r < 0) {
		int e = r == -ENOENT && limits ? EINVAL : -r;

		if ((r = set_int(f, pname, "nproc", 0, e, path)) < 0 ||
		    (r = set_int(f, pname, "nproc_hard", 0, e, path)) < 0)
			return r;
	} else {
		snprintf(src, sizeof(src), "%s Max processes", path);
		if ((r = set_int(f, pname, "nproc", soft, 0, src)) < 0 ||
		    (r = set_int(f, pname, "nproc_hard", hard, 0, src)) < 0)
			return r;
	}

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	r = ht_proc_status_ids(root, pid, &status, &uid, &threads);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		int e = -r;

		for (size_t i = 0; i < ARRAY_SIZE(user_sfx); i++)
			if ((r = ht_process_fact_set(f, pname, user_sfx[i], NULL, e, path)) < 0)
				return r;
		return 0;
	}
	snprintf(src, sizeof(src), "%s Uid", path);
	if ((r = set_int(f, pname, "uid", uid, 0, src)) < 0)
		return r;
	if (passwd_name(root, (uint32_t)uid, name, sizeof(name))) {
		v = (struct ht_value){ .type = HT_T_STR, .s = name };
		r = ht_process_fact_set(f, pname, "user", &v, 0, "/etc/passwd");
	} else
		r = ht_process_fact_set(f, pname, "user", NULL, ENOENT, "/etc/passwd has no such UID");
	if (r < 0)
		return r;
	/* kernel/fork.c: the init user (UID 0) and CAP_SYS_RESOURCE or CAP_SYS_ADMIN pass. */
	v = ht_bool(uid == 0 || status_cap_exempt(status));
	snprintf(src, sizeof(src), "%s Uid and CapEff", path);
	if ((r = ht_process_fact_set(f, pname, "nproc_exempt", &v, 0, src)) < 0)
		return r;
	snprintf(src, sizeof(src), "%s Threads", path);
	if ((r = set_int(f, pname, "threads", threads, 0, src)) < 0)
		return r;

	u = ht_task_census_user(c, (uint32_t)uid);
	if (!u) {
		/* Gone from the walk, or a tree whose /proc the walk could not read. */
		for (size_t i = 4; i < ARRAY_SIZE(user_sfx); i++)
			if ((r = ht_process_fact_set(f, pname, user_sfx[i], NULL, ENOENT,
			                             "/proc/PID/status: no process of the UID")) < 0)
				return r;
		return 0;
	}
	snprintf(src, sizeof(src), "Threads of /proc/PID/status, the %" PRId64 " processes of UID %" PRId64,
	         u->processes, uid);
	if ((r = set_int(f, pname, "user_tasks", u->tasks, 0, src)) < 0)
		return r;
	top = census_top(u);
	if (!top || ht_utf8_invalid(top->name))
		r = ht_process_fact_set(f, pname, "user_top", NULL, EINVAL, "/proc/PID/status Name");
	else {
		v = (struct ht_value){ .type = HT_T_STR, .s = (char *)top->name };
		snprintf(src, sizeof(src), "/proc/%d/status Name", top->pid);
		r = ht_process_fact_set(f, pname, "user_top", &v, 0, src);
	}
	if (r < 0)
		return r;
	snprintf(src, sizeof(src), "/proc/%d", top ? top->pid : 0);
	if ((r = set_int(f, pname, "user_top_pid", top ? top->pid : 0, top ? 0 : ENOENT, src)) < 0)
		return r;
	snprintf(src, sizeof(src), "/proc/PID/status of the UID's processes named %s",
	         top ? top->name : "?");
	if ((r = set_int(f, pname, "user_top_processes", top ? top->processes : 0, 0, src)) < 0)
		return r;
	snprintf(src, sizeof(src), "Threads of /proc/PID/status of the UID's processes named %s",
	         top ? top->name : "?");
	return set_int(f, pname, "user_top_threads", top ? top->tasks : 0, 0, src);
}
