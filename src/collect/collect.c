/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "collect/collect.h"
#include "collect/procfs.h"
#include "collect/procsys.h"
#include "engine/facts.h"
#include "shared/rootfs.h"
#include "shared/util.h"
#include "engine/value.h"

/*
 * The procfs and sysfs collectors. Each one reads a single source below the
 * root and records either the value or why it is unavailable; only -ENOMEM
 * stops the collection.
 */

#define PATH_MEMINFO "/proc/meminfo"
#define PATH_OSRELEASE "/proc/sys/kernel/osrelease"
#define PATH_ARCH "/proc/sys/kernel/arch"
#define PATH_HOSTNAME "/proc/sys/kernel/hostname"
#define PATH_ETC_HOSTNAME "/etc/hostname"
#define PATH_CPU_ONLINE "/sys/devices/system/cpu/online"
#define PATH_NF_MAX "/proc/sys/net/netfilter/nf_conntrack_max"
#define PATH_NF_MODULE "/sys/module/nf_conntrack"

/* NULL, "" or "/" (any run of slashes): the host itself rather than a copied tree. */
static bool root_is_host(const char *root)
{
	if (!root)
		return true;
	for (; *root; root++)
		if (*root != '/')
			return false;
	return true;
}

/* ---- parsers ---- */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* A CPU number: digits, at most 1e9 (NR_CPUS is far below). */
static int parse_cpu(const char **pp, int64_t *out)
{
	const char *p = *pp;
	int64_t v = 0;

	if (!is_digit(*p))
		return -EINVAL;
	for (; is_digit(*p); p++) {
		v = v * 10 + (*p - '0');
		if (v > 1000000000)
			return -EINVAL;
	}
	*pp = p;
	*out = v;
	return 0;
}

int ht_cpulist_count(const char *s, int64_t *count)
{
	int64_t n = 0, prev = -1;

	if (!s)
		return -EINVAL;
	while (is_space(*s))
		s++;
	for (;;) {
		int64_t a, b;

		if (parse_cpu(&s, &a) < 0)
			return -EINVAL;
		b = a;
		if (*s == '-') {
			s++;
			if (parse_cpu(&s, &b) < 0 || b < a)
				return -EINVAL;
		}
		if (a <= prev)
			return -EINVAL;
		n += b - a + 1;
		prev = b;
		if (*s != ',')
			break;
		s++;
	}
	while (is_space(*s))
		s++;
	if (*s)
		return -EINVAL;
	*count = n;
	return 0;
}

int ht_meminfo_bytes(const char *text, const char *key, int64_t *bytes)
{
	size_t klen = strlen(key);
	const char *p = text;
	int64_t kb = 0;

	/* Find "KEY:" at the start of a line. */
	for (;;) {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':')
			break;
		p = strchr(p, '\n');
		if (!p)
			return -EINVAL;
		p++;
	}
	p += klen + 1;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!is_digit(*p))
		return -EINVAL;
	for (; is_digit(*p); p++) {
		if (kb > (INT64_MAX / 1024 - (*p - '0')) / 10)
			return -EINVAL;
		kb = kb * 10 + (*p - '0');
	}
	/* fs/proc/meminfo.c prints every size field as "%8lu kB". */
	if (*p != ' ')
		return -EINVAL;
	while (*p == ' ')
		p++;
	if (strncmp(p, "kB", 2) != 0)
		return -EINVAL;
	p += 2;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p && *p != '\n')
		return -EINVAL;
	*bytes = kb * 1024;
	return 0;
}

int ht_arch_pointer_size(const char *arch)
{
	static const char *const arch64[] = {
		"aarch64", "aarch64_be", "alpha", "arm64", "ia64", "loongarch64", "mips64",
		"parisc64", "ppc64", "ppc64le", "riscv64", "s390x", "sparc64", "x86_64",
	};
	static const char *const arch32[] = {
		"arc", "arm", "armeb", "csky", "hexagon", "m68k", "microblaze", "mips",
		"nios2", "openrisc", "parisc", "ppc", "ppcle", "riscv32", "s390", "sh",
		"sh2", "sh2a", "sh3", "sh4", "sh4a", "sparc", "xtensa",
	};

	if (!arch)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(arch64); i++)
		if (strcmp(arch, arch64[i]) == 0)
			return 8;
	for (size_t i = 0; i < ARRAY_SIZE(arch32); i++)
		if (strcmp(arch, arch32[i]) == 0)
			return 4;
	/* i386 ... i686, and 32-bit ARM as armv5tel, armv6l, armv7l, armv7b, armv8l ... */
	if (arch[0] == 'i' && arch[1] >= '3' && arch[1] <= '6' && strcmp(arch + 2, "86") == 0)
		return 4;
	if (strncmp(arch, "armv", 4) == 0 && is_digit(arch[4]))
		return 4;
	return -EINVAL;
}

/* ---- collectors ---- */

int ht_collect_mem(struct ht_facts *f, const char *root)
{
	static const char source[] = PATH_MEMINFO " MemTotal";
	_cleanup_free_ char *text = NULL;
	int64_t bytes;
	int r;

	r = ht_read_file(root, PATH_MEMINFO, &text);
	if (r >= 0)
		r = ht_meminfo_bytes(text, "MemTotal", &bytes);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ht_facts_set_errno(f, "mem.total", r, "bytes", source);
	return ht_facts_set_int(f, "mem.total", bytes, "bytes", source);
}

/* kernel.release and the kernel.version parsed from it. */
int ht_collect_kernel(struct ht_facts *f, const char *root)
{
	_cleanup_free_ char *rel = NULL;
	struct ht_value v = { .type = HT_T_VER };
	const char *end;
	int r;

	r = ht_read_file(root, PATH_OSRELEASE, &rel);
	if (r == -ENOMEM)
		return r;
	if (r >= 0 && (!rel[0] || strchr(rel, '\n')))
		r = -EINVAL;
	if (r < 0) {
		int e = r;

		r = ht_facts_set_errno(f, "kernel.release", e, NULL, PATH_OSRELEASE);
		if (r < 0)
			return r;
		return ht_facts_set_errno(f, "kernel.version", e, NULL, "kernel.release");
	}
	r = ht_facts_set_str(f, "kernel.release", rel, PATH_OSRELEASE);
	if (r < 0)
		return r;
	if (ht_version_parse(rel, &v.v, &end) < 0)
		return ht_facts_set_errno(f, "kernel.version", EINVAL, NULL, "kernel.release");
	return ht_facts_set(f, "kernel.version", &v, NULL, "kernel.release");
}

/*
 * The host a collection describes, so that facts files from many hosts can
 * be told apart and audited together: host.name (the kernel's hostname,
 * else /etc/hostname, which a copied tree may have without a /proc: the
 * first line that is not a comment), host.collected_at
 * (now, UTC) and hosttune.version.
 */
int ht_collect_host(struct ht_facts *f, const char *root)
{
	_cleanup_free_ char *name = NULL;
	const char *source = PATH_HOSTNAME;
	char when[32];
	struct tm tm;
	time_t now = time(NULL);
	int r;

	r = ht_read_file(root, PATH_HOSTNAME, &name);
	if (r == -ENOENT) {
		source = PATH_ETC_HOSTNAME;
		r = ht_read_file(root, PATH_ETC_HOSTNAME, &name);
		if (r >= 0) {
			/* hostname(5): the first line that is not blank or a '#' comment. */
			char *line = name, *end;

			for (;; line = end + 1) {
				line += strspn(line, " \t");
				end = line + strcspn(line, "\n");
				if ((*line != '#' && line != end) || !*end)
					break;
			}
			*end = '\0';
			if (*line == '#') /* nothing but comments */
				line = end;
			memmove(name, line, strlen(line) + 1);
		}
	}
	if (r == -ENOMEM)
		return r;
	if (r >= 0) {
		/* hostname(7): no blanks, no control characters; what the kernel holds is one word. */
		name[strcspn(name, " \t\r")] = '\0';
		if (!name[0] || strcspn(name, "\x7f") != strlen(name))
			r = -EINVAL;
		for (const char *p = name; r >= 0 && *p; p++)
			if ((unsigned char)*p < 0x20)
				r = -EINVAL;
	}
	if (r == -ENOENT)
		r = ht_facts_set_errno(f, "host.name", r, NULL, PATH_HOSTNAME ", " PATH_ETC_HOSTNAME);
	else if (r < 0)
		r = ht_facts_set_errno(f, "host.name", r, NULL, source);
	else
		r = ht_facts_set_str(f, "host.name", name, source);
	if (r < 0)
		return r;
	if (now == (time_t)-1 || !gmtime_r(&now, &tm) ||
	    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		r = ht_facts_set_errno(f, "host.collected_at", EINVAL, NULL, "time(2)");
	else
		r = ht_facts_set_str(f, "host.collected_at", when, "time(2)");
	if (r < 0)
		return r;
	return ht_facts_set_str(f, "hosttune.version", PACKAGE_VERSION, "hosttune --version");
}

/* cpu.arch and the kernel.pointer_size derived from it. */
int ht_collect_arch(struct ht_facts *f, const char *root)
{
	_cleanup_free_ char *arch = NULL;
	const char *source = PATH_ARCH;
	struct utsname u;
	int r, size;

	r = ht_read_file(root, PATH_ARCH, &arch);
	if (r == -ENOMEM)
		return r;
	if (r >= 0 && !arch[0])
		r = -EINVAL;
	if (r == -ENOENT && root_is_host(root)) {
		/* /proc/sys/kernel/arch is recent (6.1); uname(2) tells the same. */
		source = "uname(2)";
		if (uname(&u) < 0) {
			r = -errno;
		} else {
			arch = strdup(u.machine);
			r = arch ? 0 : -ENOMEM;
		}
	}
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		int e = r;

		r = ht_facts_set_errno(f, "cpu.arch", e, NULL, source);
		if (r < 0)
			return r;
		return ht_facts_set_errno(f, "kernel.pointer_size", e, "bytes", "cpu.arch");
	}
	r = ht_facts_set_str(f, "cpu.arch", arch, source);
	if (r < 0)
		return r;
	size = ht_arch_pointer_size(arch);
	if (size < 0)
		return ht_facts_set_errno(f, "kernel.pointer_size", size, "bytes", "cpu.arch");
	return ht_facts_set_int(f, "kernel.pointer_size", size, "bytes", "cpu.arch");
}

int ht_collect_cpu_count(struct ht_facts *f, const char *root)
{
	_cleanup_free_ char *list = NULL;
	int64_t n;
	int r;

	r = ht_read_file(root, PATH_CPU_ONLINE, &list);
	if (r >= 0)
		r = ht_cpulist_count(list, &n);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ht_facts_set_errno(f, "cpu.count", r, "CPUs", PATH_CPU_ONLINE);
	return ht_facts_set_int(f, "cpu.count", n, "CPUs", PATH_CPU_ONLINE);
}

int ht_collect_page_size(struct ht_facts *f, const char *root)
{
	static const char source[] = "sysconf(_SC_PAGESIZE)";
	long ps;

	if (!root_is_host(root))
		return ht_facts_set_errno(f, "kernel.page_size", ENOENT, "bytes",
		                          "not recorded in a --root tree");
	errno = 0;
	ps = sysconf(_SC_PAGESIZE);
	if (ps <= 0)
		return ht_facts_set_errno(f, "kernel.page_size", errno ? errno : EINVAL, "bytes",
		                          source);
	return ht_facts_set_int(f, "kernel.page_size", ps, "bytes", source);
}

/*
 * "ROOT/PATH: expected an integer from 0 to MAX, found 'TEXT'": the source of
 * a fact whose file holds something else, with the file's real path (below
 * the --root tree) and what it holds, its first line cut to 40 bytes, any
 * byte that is not printable ASCII shown as '?' (a source is UTF-8 without
 * control characters). NULL on ENOMEM.
 */
static char *bad_int_source(const char *root, const char *path, int64_t max, const char *text)
{
	_cleanup_free_ char *full = ht_root_path(root, path);
	char shown[48];
	size_t n = 0;
	char *s;

	if (!full)
		return NULL;
	for (const char *p = text; *p && *p != '\n' && n < 40; p++)
		shown[n++] = *p >= 0x20 && *p < 0x7f ? *p : '?';
	shown[n] = '\0';
	if (asprintf(&s, "%s: expected an integer from 0 to %" PRId64 ", found %s%s%s%s", full, max,
	             text[0] && text[0] != '\n' ? "'" : "", text[0] && text[0] != '\n' ? shown : "nothing",
	             strlen(text) > n && text[n] != '\n' ? "..." : "",
	             text[0] && text[0] != '\n' ? "'" : "") < 0)
		return NULL;
	return s;
}

/*
 * One count, size or timeout in a procfs or sysfs file, named after the
 * file. The kernel keeps each in an int or unsigned int that is never below
 * 0, so anything but an integer from 0 to @max is not what a kernel wrote
 * there (a hand-made --root tree): the fact is unavailable (EINVAL), its
 * source the file's real path, what was expected and what it holds.
 */
static int collect_int_file(struct ht_facts *f, const char *root, const char *name,
                            const char *path, const char *unit, int64_t max)
{
	_cleanup_free_ char *text = NULL, *bad = NULL;
	long long v;
	int r;

	r = ht_read_file(root, path, &text);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ht_facts_set_errno(f, name, r, unit, path);
	if (ht_parse_int64(text, &v) < 0 || v < 0 || v > max) {
		bad = bad_int_source(root, path, max, text);
		if (!bad)
			return -ENOMEM;
		return ht_facts_set_errno(f, name, EINVAL, unit, bad);
	}
	return ht_facts_set_int(f, name, v, unit, path);
}

/*
 * Any sysctl hosttune has no entry for (ht_fact_def_is_sysctl()), asked for
 * by a rule: /proc/sys/KEY below the root, an integer of any sign. A key
 * that does not exist is unavailable ENOENT (a module not loaded, another
 * kernel); one that holds anything but one integer (several fields, text,
 * a number beyond 64 bits) EINVAL, the source saying what it holds.
 */
int ht_collect_sysctl(struct ht_facts *f, const char *root, const char *key)
{
	_cleanup_free_ char *path = NULL, *text = NULL, *full = NULL, *bad = NULL;
	long long v;
	int r;

	if (asprintf(&path, "/proc/sys/%s", key) < 0)
		return -ENOMEM;
	for (char *p = path + strlen("/proc/sys/"); *p; p++)
		if (*p == '.')
			*p = '/';
	r = ht_read_file(root, path, &text);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ht_facts_set_unavailable(f, key, -r, NULL, path);
	if (ht_parse_int64(text, &v) == 0)
		return ht_facts_set_int(f, key, v, NULL, path);
	full = ht_root_path(root, path);
	if (!full || asprintf(&bad, "%s: expected one integer, found '%.*s'%s", full,
	                      (int)strcspn(text, "\n"), text,
	                      text[strcspn(text, "\n")] && text[strcspn(text, "\n") + 1] ? "..."
	                                                                                : "") < 0)
		return -ENOMEM;
	/* A source is UTF-8 without control characters: tabs (several fields) become spaces. */
	for (char *p = bad; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = (unsigned char)*p == '\t' ? ' ' : '?';
	return ht_facts_set_unavailable(f, key, EINVAL, NULL, bad);
}

int ht_collect_conntrack_files(struct ht_facts *f, const char *root)
{
	static const struct {
		const char *name, *path, *unit;
	} files[] = {
		{ "module.nf_conntrack.hashsize", PATH_NF_MODULE "/parameters/hashsize", "buckets" },
		{ "net.netfilter.nf_conntrack_buckets",
		  "/proc/sys/net/netfilter/nf_conntrack_buckets", "buckets" },
		{ "net.netfilter.nf_conntrack_count", "/proc/sys/net/netfilter/nf_conntrack_count",
		  "entries" },
		{ "net.netfilter.nf_conntrack_max", PATH_NF_MAX, "entries" },
		{ "net.netfilter.nf_conntrack_tcp_timeout_close_wait",
		  "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_close_wait", "seconds" },
		{ "net.netfilter.nf_conntrack_tcp_timeout_established",
		  "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established", "seconds" },
		{ "net.netfilter.nf_conntrack_tcp_timeout_fin_wait",
		  "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_fin_wait", "seconds" },
		{ "net.netfilter.nf_conntrack_tcp_timeout_syn_sent",
		  "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_syn_sent", "seconds" },
		{ "net.netfilter.nf_conntrack_tcp_timeout_time_wait",
		  "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait", "seconds" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		/* The kernel's bound on each (an int of nf_conntrack_standalone.c): the fact table's. */
		int64_t max = ht_fact_max(files[i].name);
		int r = collect_int_file(f, root, files[i].name, files[i].path, files[i].unit,
		                         max ? max : INT64_MAX);

		if (r < 0)
			return r;
	}
	return 0;
}

/* stat(2) of @path below @root: 0 or a negative errno. */
static int stat_below(const char *root, const char *path, struct stat *st)
{
	return ht_root_stat(root, path, false, st);
}

int ht_collect_conntrack_loaded(struct ht_facts *f, const char *root)
{
	struct stat st;
	int r = stat_below(root, PATH_NF_MODULE, &st);

	if (r == -ENOMEM)
		return r;
	if (r == -ENOENT)
		return ht_facts_set_bool(f, "conntrack.loaded", false, PATH_NF_MODULE);
	if (r < 0)
		return ht_facts_set_errno(f, "conntrack.loaded", r, NULL, PATH_NF_MODULE);
	return ht_facts_set_bool(f, "conntrack.loaded", true, PATH_NF_MODULE);
}

/*
 * The kernel registers nf_conntrack_max read-only (0444) in every network
 * namespace but the initial one (net/netfilter/nf_conntrack_standalone.c,
 * since 5.12.2), so the owner-write bit tells which one we are in.
 */
int ht_collect_netns_initial(struct ht_facts *f, const char *root)
{
	static const char source[] = "mode of " PATH_NF_MAX;
	struct stat st;
	int r = stat_below(root, PATH_NF_MAX, &st);

	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ht_facts_set_errno(f, "netns.initial", r, NULL, source);
	return ht_facts_set_bool(f, "netns.initial", (st.st_mode & S_IWUSR) != 0, source);
}

/* The connection path's integer sysctls (net/core/sysctl_net_core.c, net/ipv4/sysctl_net_ipv4.c: ints). */
int ht_collect_net_files(struct ht_facts *f, const char *root)
{
	static const struct {
		const char *name, *path;
	} files[] = {
		{ "net.core.somaxconn", "/proc/sys/net/core/somaxconn" },
		{ "net.ipv4.tcp_max_syn_backlog", "/proc/sys/net/ipv4/tcp_max_syn_backlog" },
		{ "net.ipv4.tcp_max_tw_buckets", "/proc/sys/net/ipv4/tcp_max_tw_buckets" },
		{ "net.ipv4.tcp_syncookies", "/proc/sys/net/ipv4/tcp_syncookies" },
		{ "net.ipv4.tcp_timestamps", "/proc/sys/net/ipv4/tcp_timestamps" },
		{ "net.ipv4.tcp_tw_reuse", "/proc/sys/net/ipv4/tcp_tw_reuse" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		const struct ht_fact_def *d = ht_fact_def_find(files[i].name);
		int r = collect_int_file(f, root, files[i].name, files[i].path,
		                         d ? d->unit : NULL, INT32_MAX);

		if (r < 0)
			return r;
	}
	return 0;
}


/*
 * The three integers of /proc/sys/fs/file-nr, blank-separated, nothing
 * after them but blanks: 0, -EINVAL, or -ERANGE (one beyond 64 bits).
 */
static int file_nr_counts(const char *text, long long *a, long long *b, long long *c)
{
	long long *out[] = { a, b, c };
	const char *p = text;

	for (size_t i = 0; i < ARRAY_SIZE(out); i++) {
		char word[32];
		size_t n = 0;
		int r;

		while (*p == ' ' || *p == '\t')
			p++;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
			/* Longer than any 64-bit count: beyond it if all digits. */
			if (n + 1 >= sizeof(word))
				return strspn(word, "0123456789") == n ? -ERANGE : -EINVAL;
			word[n++] = *p++;
			word[n] = '\0';
		}
		word[n] = '\0';
		r = ht_parse_int64(word, out[i]);
		if (r < 0)
			return r;
	}
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	return *p ? -EINVAL : 0;
}

int ht_collect_file_table(struct ht_facts *f, const char *root)
{
	static const char path[] = "/proc/sys/fs/file-nr";
	_cleanup_free_ char *text = NULL;
	long long used, unused, max;
	int r;

	r = collect_int_file(f, root, "fs.file-max", "/proc/sys/fs/file-max", "files", INT64_MAX);
	if (r >= 0)
		r = collect_int_file(f, root, "fs.nr_open", "/proc/sys/fs/nr_open", "descriptors",
		                     INT32_MAX);
	if (r < 0)
		return r;
	/*
	 * "ALLOCATED\tFREE\tMAX" (proc_nr_files() in fs/file_table.c: FREE has
	 * been 0 since 2.6, the count is of files in use).
	 */
	r = ht_read_file(root, path, &text);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ht_facts_set_errno(f, "files.open", r, "files", path);
	/*
	 * Each count parsed on its own: sscanf() would clamp 2^64 - 1 to
	 * 2^63 - 1 silently; a count beyond 64 bits is out of range (ERANGE).
	 */
	r = file_nr_counts(text, &used, &unused, &max);
	if (r == -ERANGE)
		return ht_facts_set_errno(f, "files.open", ERANGE, "files",
		                          "/proc/sys/fs/file-nr: a count beyond 2^63 - 1");
	if (r < 0 || used < 0 || unused < 0 || max < 0 || unused > used)
		return ht_facts_set_errno(f, "files.open", EINVAL, "files",
		                          "/proc/sys/fs/file-nr: expected three counts");
	return ht_facts_set_int(f, "files.open", used - unused, "files", path);
}

/*
 * "avg60=1.23" of the line @kind ("some" or "full") of /proc/pressure/memory
 * (kernel/sched/psi.c psi_show(): "%s avg10=%lu.%02lu avg60=... total=%llu").
 */
static int psi_avg60(const char *text, const char *kind, double *out)
{
	size_t kl = strlen(kind);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *a;
		char *end;
		double v;

		if (strncmp(p, kind, kl) != 0 || p[kl] != ' ')
			continue;
		a = strstr(p, " avg60=");
		if (!a || (strchr(p, '\n') && a > strchr(p, '\n')))
			return -EINVAL;
		errno = 0;
		v = strtod(a + 7, &end);
		if (errno || end == a + 7 || v < 0 || v > 100 || (*end != ' ' && *end != '\n' && *end))
			return -EINVAL;
		*out = v;
		return 0;
	}
	return -ENOENT;
}

/* @name = @v (@r 0) or unavailable with @r's errno, from @source. */
static int int_or_errno(struct ht_facts *f, const char *name, int r, int64_t v, const char *unit,
                        const char *source)
{
	return r < 0 ? ht_facts_set_errno(f, name, r, unit, source)
	             : ht_facts_set_int(f, name, v, unit, source);
}

/* "avg60" of the @kind line of /proc/pressure/memory text @psi as mem.psi.KIND_avg60. */
static int psi_fact(struct ht_facts *f, const char *psi, int r, const char *kind)
{
	char name[32], src[64];
	double d;

	snprintf(name, sizeof(name), "mem.psi.%s_avg60", kind);
	snprintf(src, sizeof(src), "/proc/pressure/memory %s avg60", kind);
	if (r >= 0)
		r = psi_avg60(psi, kind, &d);
	return r < 0 ? ht_facts_set_errno(f, name, r, "%", src) : ht_facts_set_dec(f, name, d, "%", src);
}

/*
 * Swap on zram in /proc/swaps text @swaps: the Size (KiB) of every
 * /dev/zramN line, in bytes. 0, or -EINVAL for a line not as the kernel
 * writes it ("Filename Type Size Used Priority").
 */
static int zram_swap(const char *swaps, int64_t *bytes)
{
	const char *p = strchr(swaps, '\n');

	*bytes = 0;
	for (p = p ? p + 1 : swaps + strlen(swaps); *p; ) {
		char name[256], type[32];
		long long kib;
		const char *nl = strchr(p, '\n');

		if (sscanf(p, "%255s %31s %lld", name, type, &kib) != 3 || kib < 0 ||
		    kib > INT64_MAX / 1024)
			return -EINVAL;
		if (strncmp(name, "/dev/zram", 9) == 0 && name[9] >= '0' && name[9] <= '9') {
			if (*bytes > INT64_MAX - kib * 1024)
				return -EINVAL;
			*bytes += kib * 1024;
		}
		p = nl ? nl + 1 : p + strlen(p);
	}
	return 0;
}

int ht_collect_memory_pressure(struct ht_facts *f, const char *root)
{
	_cleanup_free_ char *meminfo = NULL, *vmstat = NULL, *psi = NULL;
	int64_t v = 0;
	int rm, r;

	rm = ht_read_file(root, PATH_MEMINFO, &meminfo);
	if (rm == -ENOMEM)
		return rm;
	r = rm < 0 ? rm : ht_meminfo_bytes(meminfo, "SwapTotal", &v);
	r = int_or_errno(f, "mem.swap_total", r, v, "bytes", PATH_MEMINFO " SwapTotal");
	if (r >= 0) {
		r = rm < 0 ? rm : ht_meminfo_bytes(meminfo, "MemAvailable", &v);
		r = int_or_errno(f, "mem.available", r, v, "bytes", PATH_MEMINFO " MemAvailable");
	}
	if (r < 0)
		return r;
	{
		_cleanup_free_ char *swaps = NULL;

		r = ht_read_file(root, "/proc/swaps", &swaps);
		if (r == -ENOMEM)
			return r;
		if (r >= 0)
			r = zram_swap(swaps, &v);
		r = int_or_errno(f, "mem.swap_zram", r, v, "bytes", "/proc/swaps /dev/zram*");
		if (r < 0)
			return r;
	}

	/* oom_kill: since 4.13 (commit 8e675f7af507). */
	r = ht_read_file(root, "/proc/vmstat", &vmstat);
	if (r == -ENOMEM)
		return r;
	if (r >= 0)
		r = keyed_value(vmstat, "oom_kill", &v);
	r = int_or_errno(f, "mem.oom_kills", r, v, "processes", "/proc/vmstat oom_kill");
	if (r < 0)
		return r;

	/* PSI: since 4.20, and only with CONFIG_PSI (psi=1 on some kernels). */
	r = ht_read_file(root, "/proc/pressure/memory", &psi);
	if (r == -ENOMEM)
		return r;
	rm = psi_fact(f, psi, r, "some");
	return rm < 0 ? rm : psi_fact(f, psi, r, "full");
}
