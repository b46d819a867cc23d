/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The /proc parsers: ht_meminfo_bytes(), ht_cpulist_count() (collect/
 * collect.h), ht_cpuinfo_parse() (collect/cpu.h) and the
 * /proc/net/stat/nf_conntrack parser (collect/ctstat.h), each given the
 * whole input.
 *
 * Properties: a cpulist the parser counts is one this harness reads too,
 * with the same count, and the list written back as ranges counts the same;
 * a meminfo size is a whole number of KiB, and the field's digits are in
 * the input; a cpuinfo flag found is a word of the input; a conntrack stat
 * has its entries column and no negative sum, and one row written back in
 * the kernel's "%08x" form parses to the same counters; the
 * /proc/net/nf_conntrack counts (ht_ct_proc_parse()) add up (TCP <= entries,
 * the states <= TCP, stale <= ESTABLISHED) and are the same counted line by
 * line through ht_ct_proc_line().
 *
 * And the socket collector's (collect/collect-sockdiag.c), each given every
 * line of the input and the whole of it: a /proc/net/tcp or tcp6 line that
 * parses, written back in the kernel's form, parses to the same socket; a
 * port range is 1 <= low <= high <= 65535 and "LOW\tHIGH" parses back the
 * same; "Max open files" limits are not negative; a cgroup's unit is one
 * path component ending in ".service" found in the input; an nstat counter
 * is not negative.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/collect.h"
#include "collect/cpu.h"
#include "collect/ctstat.h"
#include "shared/util.h"

#include "fuzz-common.h"

#define MAX_RANGES 4096

/* An independent reading of a cpulist: ranges a-b or a, separated by ','. */
static bool ref_cpulist(const char *s, int64_t lo[], int64_t hi[], size_t *n, int64_t *count)
{
	const char *end = s + strlen(s);

	*n = 0;
	*count = 0;
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n'))
		end--;
	while (s < end) {
		char *e;
		long long a, b;

		if (*s < '0' || *s > '9' || *n == MAX_RANGES)
			return false;
		a = strtoll(s, &e, 10);
		b = a;
		if (e < end && *e == '-') {
			if (e[1] < '0' || e[1] > '9')
				return false;
			b = strtoll(e + 1, &e, 10);
		}
		if (b < a || (*n > 0 && a <= hi[*n - 1]))
			return false;
		lo[*n] = a;
		hi[*n] = b;
		(*n)++;
		*count += b - a + 1;
		if (e == end)
			return true;
		if (*e != ',')
			return false;
		s = e + 1;
	}
	return false;
}

static void check_cpulist(const char *text)
{
	static int64_t lo[MAX_RANGES], hi[MAX_RANGES];
	int64_t count, ref, again;
	size_t n;
	char *back = NULL;
	size_t blen = 0;
	FILE *out;

	if (ht_cpulist_count(text, &count) < 0)
		return;
	FZ_CHECK(count >= 1, "cpulist of %" PRId64 " CPUs", count);
	if (!ref_cpulist(text, lo, hi, &n, &ref)) {
		FZ_CHECK(n == MAX_RANGES, "cpulist '%s' counted, but not a list of ranges", text);
		return; /* more ranges than the harness keeps */
	}
	FZ_CHECK(ref == count, "cpulist counted %" PRId64 ", read here as %" PRId64, count, ref);
	out = open_memstream(&back, &blen);
	FZ_CHECK(out, "open_memstream");
	for (size_t i = 0; i < n; i++) {
		if (lo[i] == hi[i])
			fprintf(out, "%s%" PRId64, i ? "," : "", lo[i]);
		else
			fprintf(out, "%s%" PRId64 "-%" PRId64, i ? "," : "", lo[i], hi[i]);
	}
	fclose(out);
	FZ_CHECK(ht_cpulist_count(back, &again) == 0 && again == count,
	         "cpulist '%s' written back does not count %" PRId64, back, count);
	free(back);
}

static void check_meminfo(const char *text, const char *key)
{
	int64_t bytes;
	char digits[32];

	if (ht_meminfo_bytes(text, key, &bytes) < 0)
		return;
	FZ_CHECK(bytes >= 0 && bytes % 1024 == 0, "%s: %" PRId64 " bytes", key, bytes);
	snprintf(digits, sizeof(digits), "%" PRId64, bytes / 1024);
	FZ_CHECK(strstr(text, digits) || bytes == 0, "%s: '%s' is not in the text", key, digits);
}

/* @word is in @text with no letter, digit or '_' on either side. */
static bool has_word(const char *text, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = text; (p = strstr(p, word)); p++) {
		char b = p == text ? ' ' : p[-1], a = p[n];

		if (!(b == '_' || (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') ||
		      (b >= 'A' && b <= 'Z')) &&
		    !(a == '_' || (a >= '0' && a <= '9') || (a >= 'a' && a <= 'z') ||
		      (a >= 'A' && a <= 'Z')))
			return true;
	}
	return false;
}

static void check_cpuinfo(const char *text)
{
	struct ht_cpuinfo ci = { 0 };
	const char *pclmul;
	int r = ht_cpuinfo_parse(text, &ci);

	FZ_CHECK(r == 0 || r == -ENOMEM, "ht_cpuinfo_parse returned %d", r);
	if (r < 0)
		return;
	if (ci.aes)
		FZ_CHECK(ci.flags_key && has_word(text, "aes"), "aes without the word");
	if (ci.hypervisor)
		FZ_CHECK(has_word(text, "hypervisor"), "hypervisor without the word");
	pclmul = ht_cpuinfo_pclmul_name(&ci);
	if (ci.pclmul)
		FZ_CHECK(pclmul && has_word(text, pclmul), "pclmul without '%s'",
		         pclmul ? pclmul : "(null)");
	if (ci.flags_key)
		FZ_CHECK(strstr(text, ci.flags_key), "flags key '%s' not in the text", ci.flags_key);
	if (ci.model) {
		FZ_CHECK(ci.model_key && ci.model[0], "a model without its key");
		if (strcmp(ci.model_key, "CPU part") != 0)
			FZ_CHECK(strstr(text, ci.model), "model '%s' not in the text", ci.model);
	}
	ht_cpuinfo_clear(&ci);
}

static void check_ctstat(const char *text)
{
	struct ht_ct_proc_stat st, back;
	char line[512];
	int r = ht_ct_proc_stat_parse(text, &st);

	if (r < 0) {
		FZ_CHECK(r == -EINVAL, "ht_ct_proc_stat_parse returned %d", r);
		FZ_CHECK(!st.have_count, "a failed parse left values");
		return;
	}
	FZ_CHECK(st.have_count, "parsed without the entries column");
	FZ_CHECK(st.count >= 0 && st.drop >= 0 && st.early_drop >= 0 && st.insert_failed >= 0 &&
	                 st.search_restart >= 0,
	         "a negative counter");
	/* The sums as one CPU's row, in the kernel's form: the same counters. */
	if (st.count > UINT32_MAX || st.drop > UINT32_MAX || st.early_drop > UINT32_MAX ||
	    st.insert_failed > UINT32_MAX || st.search_restart > UINT32_MAX)
		return;
	snprintf(line, sizeof(line),
	         "entries drop early_drop insert_failed search_restart\n"
	         "%08" PRIx64 " %08" PRIx64 " %08" PRIx64 " %08" PRIx64 " %08" PRIx64 " \n",
	         st.count, st.drop, st.early_drop, st.insert_failed, st.search_restart);
	FZ_CHECK(ht_ct_proc_stat_parse(line, &back) == 0, "the kernel's form does not parse");
	FZ_CHECK(back.count == st.count &&
	                 (!st.have_drop || back.drop == st.drop) &&
	                 (!st.have_early_drop || back.early_drop == st.early_drop) &&
	                 (!st.have_insert_failed || back.insert_failed == st.insert_failed) &&
	                 (!st.have_search_restart || back.search_restart == st.search_restart),
	         "counters changed when written back");
}

/* The conntrack table text: counts that add up, the same whole or line by line. */
static void check_cttable(const char *text)
{
	struct ht_ct_table whole = { .est_timeout = 432000 }, lines = { .est_timeout = 432000 };
	int64_t sum = 0;
	int r = ht_ct_proc_parse(text, &whole), r2 = 0;
	char *copy = strdup(text), *save = NULL;

	if (!copy)
		abort();
	if (r != 0 && r != -EINVAL)
		abort();
	for (int i = 0; i < HT_CT_TCP_STATES; i++)
		sum += whole.state[i];
	if (whole.tcp > whole.entries || sum > whole.tcp || whole.stale > whole.state[3] ||
	    whole.entries < 0)
		abort();
	/* strtok_r skips empty lines, which count nothing anyway. */
	for (char *l = strtok_r(copy, "\n", &save); l && r2 == 0; l = strtok_r(NULL, "\n", &save))
		r2 = ht_ct_proc_line(&lines, l);
	free(copy);
	if (r != r2 || memcmp(&whole, &lines, sizeof(whole)) != 0)
		abort();
}

/* @s written back as get_tcp4_sock() / get_tcp6_sock() print it (what the parser reads). */
static void write_tcp_line(const struct ht_sock *s, bool v6, char *buf, size_t size)
{
	char a[2][33];
	const uint8_t *addr[2] = { s->src, s->dst };

	for (int k = 0; k < 2; k++) {
		size_t n = 0;

		for (int w = v6 ? 0 : 3; w < 4; w++) {
			uint32_t word;

			memcpy(&word, addr[k] + 4 * w, 4);
			n += (size_t)snprintf(a[k] + n, sizeof(a[k]) - n, "%08X", word);
		}
	}
	snprintf(buf, size, "%4d: %s:%04X %s:%04X %02X %08X:%08X 00:00000000 00000000 %5u %8d %" PRIu64
	         " 1 0000000000000000 100 0 0 10 0",
	         0, a[0], s->sport, a[1], s->dport, s->state, s->wqueue, s->rqueue, 0u, 0, s->inode);
}

static void check_tcp_line(const char *line)
{
	for (int v6 = 0; v6 < 2; v6++) {
		struct ht_sock s, back;
		char buf[512];

		if (ht_proc_net_tcp_line(line, v6, &s) < 0)
			continue;
		/* An IPv4 line gives an IPv4-mapped address. */
		FZ_CHECK(v6 || (memcmp(s.src, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0 &&
		                memcmp(s.dst, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0),
		         "an IPv4 address not mapped");
		write_tcp_line(&s, v6, buf, sizeof(buf));
		FZ_CHECK(ht_proc_net_tcp_line(buf, v6, &back) == 0, "a socket written back does not parse");
		FZ_CHECK(memcmp(&s, &back, sizeof(s)) == 0, "a socket changed when written back");
	}
}

static void check_sock_text(const char *text)
{
	int64_t lo, hi, soft, hard, v;
	_cleanup_free_ char *unit = NULL;
	char buf[64];

	if (ht_port_range(text, &lo, &hi) == 0) {
		int64_t lo2, hi2;

		FZ_CHECK(lo >= 1 && lo <= hi && hi <= 65535, "a port range out of bounds");
		snprintf(buf, sizeof(buf), "%" PRId64 "\t%" PRId64 "\n", lo, hi);
		FZ_CHECK(ht_port_range(buf, &lo2, &hi2) == 0 && lo2 == lo && hi2 == hi,
		         "a port range changed when written back");
	}
	if (ht_limits_nofile(text, &soft, &hard) == 0)
		FZ_CHECK(soft >= 0 && hard >= 0, "a negative limit");
	if (ht_cgroup_unit(text, &unit, NULL) == 0) {
		size_t n = strlen(unit);

		FZ_CHECK(n > 8 && strcmp(unit + n - 8, ".service") == 0 && !strchr(unit, '/') &&
		         !strchr(unit, '\n') && strstr(text, unit),
		         "a unit that is not a *.service component of the input");
	}
	if (ht_nstat_value(text, "TcpExt", "ListenOverflows", &v) == 0)
		FZ_CHECK(v >= 0, "a negative nstat counter");
	if (ht_nstat_value(text, "Tcp", "ActiveOpens", &v) == 0)
		FZ_CHECK(v >= 0, "a negative nstat counter");
	/* Line by line, as the collector reads /proc/net/tcp. */
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = strndup(p, len);

		if (!line)
			abort();
		check_tcp_line(line);
		free(line);
		if (!nl)
			break;
		p = nl + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	if (size > 65536)
		return 0;
	text = fz_cstr(data, size);
	fz_guard_begin(NULL, false);
	check_cpulist(text);
	check_meminfo(text, "MemTotal");
	check_meminfo(text, "MemAvailable");
	check_cpuinfo(text);
	check_ctstat(text);
	check_cttable(text);
	check_sock_text(text);
	fz_guard_end();
	free(text);
	return 0;
}
