/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "collect/collect.h"
#include "collect/ctstat.h"
#include "engine/facts.h"
#include "shared/util.h"
#include "engine/value.h"
#include "test-util.h"

/* ---- helpers ---- */

/* tests/fixtures/NAME/REL; caller frees. */
static char *fixture_path(const char *name, const char *rel)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s/%s", ht_test_fixtures_dir(), name, rel) > 0);
	return p;
}

static char *slurp(const char *path)
{
	_cleanup_free_ char *buf = NULL;
	char *ret;

	/* ht_read_file() drops trailing newlines; the files compared here end in exactly one. */
	assert_int_equal(ht_read_file(NULL, path, &buf), 0);
	assert_true(asprintf(&ret, "%s\n", buf) > 0);
	return ret;
}

static char *facts_text(const struct ht_facts *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(ht_facts_write(f, m), 0);
	assert_int_equal(fclose(m), 0);
	assert_int_equal(strlen(buf), len);
	return buf;
}

/* ht_facts_read() of the first @len bytes of @text; err->msg is "" on success. */
static int read_text_n(struct ht_facts *f, const char *text, size_t len, struct ht_error *err)
{
	FILE *m = fmemopen((void *)text, len, "r");
	int r;

	assert_non_null(m);
	r = ht_facts_read(f, m, "f.facts", err);
	fclose(m);
	return r;
}

static int read_text(struct ht_facts *f, const char *text, struct ht_error *err)
{
	return read_text_n(f, text, strlen(text), err);
}

static struct ht_facts *collect(const char *root)
{
	struct ht_facts *f = ht_facts_new();

	assert_non_null(f);
	assert_int_equal(ht_facts_collect(f, root, HT_COLLECT_NO_MEASURE), 0);
	return f;
}

/*
 * The facts of the run rather than of the tree, checked and then pinned, so
 * that a collection compares with an expected file byte for byte:
 * host.collected_at is now, "YYYY-MM-DDTHH:MM:SSZ" (20 characters, UTC),
 * pinned to "2000-01-01T00:00:00Z"; hosttune.version is this build's
 * PACKAGE_VERSION, pinned to "0".
 */
static void pin_run_facts(struct ht_facts *f)
{
	const struct ht_fact *at = ht_test_fact(f, "host.collected_at");
	const struct ht_fact *ver = ht_test_fact(f, "hosttune.version");
	struct ht_value v = { .type = HT_T_STR };

	assert_int_equal(at->value.type, HT_T_STR);
	assert_int_equal(strlen(at->value.s), 20);
	assert_true(at->value.s[4] == '-' && at->value.s[7] == '-' && at->value.s[10] == 'T' &&
	            at->value.s[13] == ':' && at->value.s[16] == ':' && at->value.s[19] == 'Z');
	assert_string_equal(at->source, "time(2)");
	assert_int_equal(ver->value.type, HT_T_STR);
	assert_string_equal(ver->value.s, PACKAGE_VERSION);
	assert_string_equal(ver->source, "hosttune --version");
	v.s = (char *)"2000-01-01T00:00:00Z";
	assert_int_equal(ht_facts_set(f, "host.collected_at", &v, NULL, "time(2)"), 0);
	v.s = (char *)"0";
	assert_int_equal(ht_facts_set(f, "hosttune.version", &v, NULL, "hosttune --version"), 0);
}

static struct ht_facts *collect_fixture(const char *name)
{
	_cleanup_free_ char *root = fixture_path(name, "root");
	struct ht_facts *f = collect(root);

	pin_run_facts(f);
	return f;
}

static void assert_value_equal(const struct ht_value *a, const struct ht_value *b)
{
	assert_int_equal(a->type, b->type);
	switch (a->type) {
	case HT_T_INT:
		assert_true(a->i == b->i);
		break;
	case HT_T_DEC:
		assert_true(a->d == b->d && signbit(a->d) == signbit(b->d));
		break;
	case HT_T_BOOL:
		assert_int_equal(a->b, b->b);
		break;
	case HT_T_STR:
		assert_string_equal(a->s, b->s);
		break;
	case HT_T_VER:
		assert_int_equal(a->v.n, b->v.n);
		assert_memory_equal(a->v.part, b->v.part, sizeof(a->v.part));
		break;
	case HT_T_NONE:
		break;
	}
}

static void assert_fact_equal(const struct ht_fact *a, const struct ht_fact *b)
{
	assert_string_equal(a->name, b->name);
	assert_value_equal(&a->value, &b->value);
	assert_int_equal(a->error, b->error);
	ht_test_assert_str_or_null(a->unit, b->unit);
	ht_test_assert_str_or_null(a->source, b->source);
}

static void assert_int_fact(const struct ht_facts *f, const char *name, int64_t want,
                            const char *unit, const char *source)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	assert_int_equal(fact->value.type, HT_T_INT);
	assert_int_equal(fact->error, 0);
	assert_true(fact->value.i == want);
	ht_test_assert_str_or_null(fact->unit, unit);
	ht_test_assert_str_or_null(fact->source, source);
}

static void assert_bool_fact(const struct ht_facts *f, const char *name, bool want,
                             const char *source)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	assert_int_equal(fact->value.type, HT_T_BOOL);
	assert_int_equal(fact->value.b, want);
	assert_null(fact->unit);
	ht_test_assert_str_or_null(fact->source, source);
}

static void assert_str_fact(const struct ht_facts *f, const char *name, const char *want,
                            const char *source)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	assert_int_equal(fact->value.type, HT_T_STR);
	assert_string_equal(fact->value.s, want);
	assert_null(fact->unit);
	ht_test_assert_str_or_null(fact->source, source);
}

static void assert_unavailable(const struct ht_facts *f, const char *name, int errnum,
                               const char *unit, const char *source)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	assert_int_equal(fact->value.type, HT_T_NONE);
	assert_int_equal(fact->error, errnum);
	ht_test_assert_str_or_null(fact->unit, unit);
	ht_test_assert_str_or_null(fact->source, source);
}

/* Every known fact is in @f, and every available one has its registered type and unit. */
static void assert_all_defs_collected(const struct ht_facts *f)
{
	size_t n;
	const struct ht_fact_def *defs = ht_fact_defs(&n);

	for (size_t i = 0; i < n; i++) {
		const struct ht_fact *fact;

		/* A recording's facts come from `audit --observed`, never from collection. */
		if (strncmp(defs[i].name, "observed.", 9) == 0)
			continue;
		/* The state file's counters come from ht_collect_apply_counters() alone. */
		if (strstr(defs[i].name, "_at_apply"))
			continue;
		/* The profile and waivers facts ran with are the CLI's to say (cmd_facts()). */
		if (strcmp(defs[i].name, "hosttune.profile") == 0 ||
		    strcmp(defs[i].name, "hosttune.waivers") == 0)
			continue;
		/* The Garage pre-flight's come from ht_collect_garage(), which the CLI runs. */
		if (strncmp(defs[i].name, "garage.", 7) == 0 || strcmp(defs[i].name, "storage.list") == 0)
			continue;
		fact = ht_test_fact(f, defs[i].name);
		ht_test_assert_str_or_null(fact->unit, defs[i].unit);
		assert_non_null(fact->source);
		if (fact->value.type == HT_T_NONE)
			assert_true(fact->error > 0);
		else if (defs[i].type == HT_T_INT)
			assert_true(ht_type_is_number(fact->value.type));
		else
			assert_int_equal(fact->value.type, defs[i].type);
	}
}

/* ---- the registry and the table ---- */

/*
 * ht_fact_def_find() looks a checker's FAMILY.*.SUFFIX up by the whole
 * suffix and an instance's FAMILY.INST.SUFFIX by its tail: the two agree
 * only while no suffix of a family is another's dotted tail (peer.*.retrans
 * and a peer.*.x.retrans would both end "retrans"). Every family, every pair;
 * and each def is found by its own name and by an instance of it.
 */
static void test_instance_suffixes(void **state)
{
	static const char *const families[] = { "cgroup", "listener", "netns", "nic",
		                                "peer",   "process",  "storage" };
	(void)state;
	for (size_t f = 0; f < ARRAY_SIZE(families); f++) {
		size_t n = 0, fl = strlen(families[f]);
		const struct ht_fact_def *defs = ht_instance_fact_defs(families[f], &n);

		assert_non_null(defs);
		for (size_t i = 0; i < n; i++) {
			const char *a = defs[i].name + fl + 3;
			char inst[256];

			assert_ptr_equal(ht_fact_def_find(defs[i].name), &defs[i]);
			snprintf(inst, sizeof(inst), "%s.x.y.%s", families[f], a);
			assert_ptr_equal(ht_fact_def_find(inst), &defs[i]);
			for (size_t j = 0; j < n; j++) {
				const char *b = defs[j].name + fl + 3;
				size_t al = strlen(a), bl = strlen(b);

				if (i != j && bl > al && b[bl - al - 1] == '.')
					assert_string_not_equal(b + bl - al, a);
			}
		}
	}
}

/*
 * ht_getline_max(): lines up to @max bytes, newline included, as getline()
 * gives them; a longer one -E2BIG without holding more than max + 1 bytes;
 * a last line without a newline; -1 at the end.
 */
static void test_getline_max(void **state)
{
	static const char text[] = "ab\n\nabcd\nabcde\nxyz";
	FILE *in = fmemopen((void *)text, sizeof(text) - 1, "r");
	char *line = NULL;
	size_t cap = 0;

	(void)state;
	assert_non_null(in);
	assert_int_equal(ht_getline_max(&line, &cap, in, 5), 3); /* "ab\n" */
	assert_string_equal(line, "ab\n");
	assert_int_equal(ht_getline_max(&line, &cap, in, 5), 1); /* "\n" */
	assert_int_equal(ht_getline_max(&line, &cap, in, 5), 5); /* "abcd\n": 5 bytes, at the bound */
	assert_string_equal(line, "abcd\n");
	/* "abcde\n" is 6 bytes: refused, and the buffer never grew past 5 + 1. */
	assert_int_equal(ht_getline_max(&line, &cap, in, 5), -E2BIG);
	assert_true(cap <= 6);
	fclose(in);
	in = fmemopen((void *)"xyz", 3, "r");
	assert_non_null(in);
	assert_int_equal(ht_getline_max(&line, &cap, in, 5), 3); /* no newline at the end */
	assert_string_equal(line, "xyz");
	assert_int_equal(ht_getline_max(&line, &cap, in, 5), -1);
	assert_int_equal(ht_getline_max(&line, &cap, in, 0), -EINVAL);
	fclose(in);
	free(line);
}

static void test_fact_defs(void **state)
{
	size_t n;
	const struct ht_fact_def *defs = ht_fact_defs(&n);

	(void)state;
	/*
	 * 7 host facts + 4 sysctls + hashsize + conntrack.loaded + netns.initial
	 * + conntrack.module + 5 conntrack.stat + 9 cpu (aes.flag, aes.gcm_mbps,
	 * aes.hw, chacha.mbps, model, pclmul.flag, pclmul.name, virt) + 2 modprobe
	 * + expect_hashsize + nic.list = 32, and 12 observed.* facts that only
	 * `audit --observed FILE` sets: 44, and 2 conntrack.stat.*_at_apply that
	 * only hosttune's state file gives (ht_collect_apply_counters()): 46, and
	 * 2 boot.* that sysctl.d gives (ht_collect_boot()): 48. The connection
	 * path (issue 14): conntrack.dump.{entries,tcp}, conntrack.stale.established
	 * and 10 conntrack.state.* (13), 4 more conntrack timeouts, listener.list
	 * (1; the per-host listener counts are the rules' aggregates), 6
	 * net.core/net.ipv4 sysctls, 7 nstat.*, 2 sockstat.tcp.*, 9 ports.* and
	 * process.list: 48 + 13 + 4 + 1 + 6 + 7 + 2 + 9 + 1 = 91. The Garage pre-flight (issue 15): 19 garage.*
	 * (admin_port, binary, binary_bits, block_ram_buffer_max, block_size,
	 * checked, compression_level, config, data_dir, data_fsync, db_engine,
	 * metadata_auto_snapshot_interval, metadata_dir, metadata_fsync,
	 * rpc_port, s3_port, unit, unit.nofile, web_port), storage.list and
	 * nic.max_speed: 91 + 19 + 1 + 1 = 112. net.ipv4.tcp_syncookies and 2
	 * more nstat.* (SyncookiesSent, TCPReqQFullDoCookies), and the file
	 * table: files.open, files.top.{fds,pid,process,read}, fs.file-max,
	 * fs.nr_open: 112 + 3 + 7 = 122. Memory: mem.available, mem.oom_kills,
	 * mem.psi.full_avg60, mem.psi.some_avg60, mem.swap_total: 127. What
	 * fills the conntrack table: conntrack.dump.{pairs,ports,top3_pairs_entries,
	 * top_pair,top_pair_entries,top_port,top_port_entries}: 134. The path:
	 * nstat.TcpOutSegs, nstat.TcpRetransSegs, peer.list, sample.seconds, host.uptime: 139.
	 * The receive path: softnet.{cpus,dropped,processed,time_squeeze,worst_cpu} and
	 * softnet.worst_cpu.{dropped,processed,time_squeeze}: 147. The host a snapshot
	 * is of: host.collected_at, host.name, hosttune.version: 150. tuned's
	 * active profile, tuned.profile: 151. Swap on zram, mem.swap_zram: 152.
	 * The control groups read, cgroup.list, cgroup.skipped and cgroup.version: 155.
	 * What the processes hold of the file table, files.top.total and
	 * files.top.unread: 157. Source NAT by NAT address and destination,
	 * conntrack.nat.{entries,top_destination,top_entries,top_source,top_sources}:
	 * 162. The other network namespaces, netns.list and netns.skipped: 164; and
	 * those refused, netns.read_as_root, netns.refused, .refused_pid and
	 * .refused_process: 168. The profile hosttune facts ran with, hosttune.profile
	 * (so that an audit of the file elsewhere judges the host with it): 169; and
	 * how many waivers its configuration holds, hosttune.waivers: 170. The
	 * reverse proxies in front of the store, proxy.checked, proxy.list and
	 * proxy.store_ports: 173. The entries of a tree's /sys/class/net no
	 * interface can have, nic.skipped: 174. The per-instance facts (nic, listener, process,
	 * storage, peer, cgroup, netns, proxy, hosttune.waiver) are tables of their
	 * own, and any other sysctl finds one def of its own (below).
	 */
	assert_int_equal(n, 174);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			assert_true(strcmp(defs[i - 1].name, defs[i].name) < 0);
		assert_ptr_equal(ht_fact_def_find(defs[i].name), &defs[i]);
		assert_non_null(defs[i].doc);
		assert_null(strchr(defs[i].doc, '\n'));
		assert_int_not_equal(defs[i].type, HT_T_NONE);
		assert_int_not_equal(defs[i].type, HT_T_DEC); /* HT_T_INT stands for numbers */
	}
	assert_int_equal(ht_fact_def_find("mem.total")->type, HT_T_INT);
	assert_string_equal(ht_fact_def_find("mem.total")->unit, "bytes");
	assert_int_equal(ht_fact_def_find("kernel.version")->type, HT_T_VER);
	assert_non_null(strstr(ht_fact_def_find("module.nf_conntrack.hashsize")->doc,
	                       "nf_conntrack_core.c"));
	assert_non_null(strstr(ht_fact_def_find("net.netfilter.nf_conntrack_max")->doc,
	                       "nf_conntrack_standalone.c"));
	assert_null(ht_fact_def_find("mem.totally"));
	/* A sysctl hosttune has no entry for: a number, below a top directory of /proc/sys only. */
	assert_true(ht_fact_def_is_sysctl(ht_fact_def_find("vm.swappiness")));
	assert_int_equal(ht_fact_def_find("net.ipv4.tcp_rmem")->type, HT_T_INT);
	assert_false(ht_fact_def_is_sysctl(ht_fact_def_find("net.core.somaxconn")));
	assert_null(ht_fact_def_find("vmm.swappiness"));
	assert_null(ht_fact_def_find("vm"));
	assert_null(ht_fact_def_find("vm."));
	assert_null(ht_fact_def_find("vm..swappiness"));
	assert_null(ht_fact_def_find("vm.swap/piness"));
	assert_null(ht_fact_def_find(""));
	assert_null(ht_fact_def_find(NULL));
}

static struct ht_value str(const char *s)
{
	return (struct ht_value){ .type = HT_T_STR, .s = (char *)s };
}

static void test_set_get(void **state)
{
	struct ht_facts *f = ht_facts_new();
	struct ht_value v = ht_int(1), none = { .type = HT_T_NONE };
	struct ht_value nostr = { .type = HT_T_STR, .s = NULL }, inf = ht_dec(INFINITY);
	struct ht_value nover = { .type = HT_T_VER };
	const char *names[] = { "m", "b", "z", "a", "q" };

	(void)state;
	assert_non_null(f);
	assert_int_equal(ht_facts_count(f), 0);
	assert_null(ht_facts_at(f, 0));
	assert_null(ht_facts_get(f, "a"));

	/* Inserted out of order, kept in name order. */
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		v = ht_int((int64_t)i);
		assert_int_equal(ht_facts_set(f, names[i], &v, "u", "s"), 0);
	}
	assert_int_equal(ht_facts_count(f), 5);
	assert_string_equal(ht_facts_at(f, 0)->name, "a");
	assert_string_equal(ht_facts_at(f, 1)->name, "b");
	assert_string_equal(ht_facts_at(f, 2)->name, "m");
	assert_string_equal(ht_facts_at(f, 3)->name, "q");
	assert_string_equal(ht_facts_at(f, 4)->name, "z");
	assert_null(ht_facts_at(f, 5));
	assert_int_fact(f, "q", 4, "u", "s"); /* "q" was names[4] */

	/* Replacing keeps the count and drops the old unit and source. */
	assert_int_equal(ht_facts_set_unavailable(f, "q", EACCES, NULL, NULL), 0);
	assert_int_equal(ht_facts_count(f), 5);
	assert_unavailable(f, "q", EACCES, NULL, NULL);
	v = ht_dec(2.5);
	assert_int_equal(ht_facts_set(f, "q", &v, NULL, "x"), 0);
	assert_int_equal(ht_test_fact(f, "q")->value.type, HT_T_DEC);
	assert_int_equal(ht_test_fact(f, "q")->error, 0);

	/* The value is deep-copied. */
	{
		char s[] = "copy me";
		struct ht_value sv = { .type = HT_T_STR, .s = s };

		assert_int_equal(ht_facts_set(f, "str", &sv, NULL, NULL), 0);
		s[0] = 'X';
		assert_string_equal(ht_test_fact(f, "str")->value.s, "copy me");
	}

	/* Bad arguments: what could not be written and read back unchanged. */
	v = ht_int(1);
	assert_int_equal(ht_facts_set(NULL, "a", &v, NULL, NULL), -EINVAL);
	assert_int_equal(ht_facts_set(f, NULL, &v, NULL, NULL), -EINVAL);
	assert_int_equal(ht_facts_set(f, "", &v, NULL, NULL), -EINVAL);
	assert_int_equal(ht_facts_set(f, "1a", &v, NULL, NULL), -EINVAL);
	assert_int_equal(ht_facts_set(f, "a b", &v, NULL, NULL), -EINVAL);
	assert_int_equal(ht_facts_set(f, "a=b", &v, NULL, NULL), -EINVAL);
	assert_int_equal(ht_facts_set(f, "a", NULL, NULL, NULL), -EINVAL);
	assert_int_equal(ht_facts_set(f, "a", &none, NULL, NULL), -EINVAL);
	assert_int_equal(ht_facts_set(f, "a", &nostr, NULL, NULL), -EINVAL);
	assert_int_equal(ht_facts_set(f, "a", &inf, NULL, NULL), -EINVAL);
	assert_int_equal(ht_facts_set(f, "a", &nover, NULL, NULL), -EINVAL);
	assert_int_equal(ht_facts_set(f, "a", &v, "", NULL), -EINVAL);
	assert_int_equal(ht_facts_set(f, "a", &v, "from", NULL), -EINVAL);
	assert_int_equal(ht_facts_set(f, "a", &v, "two words", NULL), -EINVAL);
	assert_int_equal(ht_facts_set(f, "a", &v, NULL, ""), -EINVAL);
	assert_int_equal(ht_facts_set(f, "a", &v, NULL, " lead"), -EINVAL);
	assert_int_equal(ht_facts_set(f, "a", &v, NULL, "trail "), -EINVAL);
	/*
	 * JSON output must be UTF-8 (RFC 8259, 8.1) and a source one line: a
	 * control character or a byte that is not UTF-8 (a file name from a
	 * tree) is kept escaped. Set on "q" to keep the count.
	 */
	assert_int_equal(ht_facts_set(f, "q", &v, NULL, "two\nlines"), 0);
	assert_string_equal(ht_test_fact(f, "q")->source, "two\\nlines");
	assert_int_equal(ht_facts_set(f, "q", &v, NULL, "/etc/sysctl.d/\x1b[31mcaf\xe9.conf:1"), 0);
	assert_string_equal(ht_test_fact(f, "q")->source, "/etc/sysctl.d/\\x1b[31mcaf\\xe9.conf:1");
	/* Strings are values: checked, not changed. */
	{
		struct ht_value latin1 = str("caf\xe9"), overlong = str("\xc0\xaf");
		struct ht_value surrogate = str("\xed\xa0\x80"), big = str("\xf4\x90\x80\x80");
		struct ht_value cut = str("\xe2\x82"), last = str("\xf4\x8f\xbf\xbf");

		assert_int_equal(ht_facts_set(f, "a", &latin1, NULL, NULL), -EINVAL);
		assert_int_equal(ht_facts_set(f, "a", &overlong, NULL, NULL), -EINVAL);
		assert_int_equal(ht_facts_set(f, "a", &surrogate, NULL, NULL), -EINVAL);
		assert_int_equal(ht_facts_set(f, "a", &big, NULL, NULL), -EINVAL);
		assert_int_equal(ht_facts_set(f, "a", &cut, NULL, NULL), -EINVAL);
		struct ht_value neg = ht_int(-1), negd = ht_dec(-0.5);

		/* A known count or size below 0 would not read back; module.* may be. */
		assert_int_equal(ht_facts_set(f, "mem.total", &neg, "bytes", NULL), -EINVAL);
		assert_int_equal(ht_facts_set(f, "nic.eth0.speed", &negd, "Mb/s", NULL), -EINVAL);
		assert_int_equal(ht_facts_set(f, "str", &neg, NULL, NULL), 0); /* not a known fact */
		/* U+10FFFF, the last code point, is fine: set on "str" to keep the count. */
		assert_int_equal(ht_facts_set(f, "str", &last, NULL, "\xe2\x82\xac"), 0);
		assert_string_equal(ht_test_fact(f, "str")->value.s, "\xf4\x8f\xbf\xbf");
	}
	assert_int_equal(ht_facts_set_unavailable(f, "a", 0, NULL, NULL), -EINVAL);
	assert_int_equal(ht_facts_set_unavailable(f, "a", -ENOENT, NULL, NULL), -EINVAL);
	assert_int_equal(ht_facts_set_unavailable(f, "a", 100000, NULL, NULL), -EINVAL);
	assert_int_equal(ht_facts_count(f), 6); /* 5 + "str"; no failed call added one */
	assert_int_fact(f, "a", 3, "u", "s"); /* "a" was names[3], untouched */

	ht_facts_free(f);
	ht_facts_free(NULL);
}

/* ---- facts file ---- */

static void set_or_die(struct ht_facts *f, const char *name, struct ht_value v, const char *unit,
                       const char *source)
{
	assert_int_equal(ht_facts_set(f, name, &v, unit, source), 0);
}

static struct ht_value ver(uint8_t n, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
	return (struct ht_value){ .type = HT_T_VER, .v = { .part = { a, b, c, d }, .n = n } };
}

static void test_round_trip(void **state)
{
	/*
	 * What ht_facts_write() must print for the table below, in name order.
	 * module.* names are open to any value (module parameters vary by
	 * kernel), so they carry the odd ones here.
	 */
	static const char want[] =
		"# hosttune facts 1\n"
		"kernel.version = v5.15.0 from kernel.release\n"
		"module.a.big = 9223372036854775807 entries from test\n"
		"module.a.neg = -42 seconds from /proc/x y\n"
		"module.a.small = -9223372036854775808\n"
		"module.a.zero = 0\n"
		"module.b.dec = 0.1 % from decimal\n"
		"module.b.dec_neg = -2.5e-300\n"
		"module.b.dec_tiny = 4.94065645841247e-324\n"
		"module.b.dec_whole = 3.0 MB/s\n"
		"module.c.no = false from /sys/module/nf_conntrack\n"
		"module.c.yes = true\n"
		"module.d.empty = \"\"\n"
		"module.d.quoted = \"say \\\"hi\\\" \\\\ then\\ttab\\nnewline\" from a from b\n"
		"module.d.utf8 = \"caf\xc3\xa9 \\x01\"\n"
		"module.e.v1 = v6\n"
		"module.e.v4 = v1.2.3.4 from here\n"
		"module.u.bare = unavailable EACCES\n"
		"module.u.full = unavailable ENOENT bytes from not recorded in a --root tree\n"
		"nic.br-lan.driver = \"virtio_net\" from udev\n";
	struct ht_facts *f = ht_facts_new(), *g = ht_facts_new();
	_cleanup_free_ char *text = NULL, *again = NULL;
	struct ht_error err = { "" };

	(void)state;
	assert_non_null(f);
	assert_non_null(g);
	set_or_die(f, "module.a.neg", ht_int(-42), "seconds", "/proc/x y");
	set_or_die(f, "module.a.zero", ht_int(0), NULL, NULL);
	set_or_die(f, "module.a.big", ht_int(INT64_MAX), "entries", "test");
	set_or_die(f, "module.a.small", ht_int(INT64_MIN), NULL, NULL);
	set_or_die(f, "module.b.dec", ht_dec(0.1), "%", "decimal");
	set_or_die(f, "module.b.dec_neg", ht_dec(-2.5e-300), NULL, NULL);
	/* The least subnormal, DBL_TRUE_MIN: strtod() says ERANGE, yet it reads back. */
	set_or_die(f, "module.b.dec_tiny", ht_dec(4.9406564584124654e-324), NULL, NULL);
	set_or_die(f, "module.b.dec_whole", ht_dec(3.0), "MB/s", NULL); /* must stay a decimal */
	set_or_die(f, "module.c.yes", ht_bool(true), NULL, NULL);
	set_or_die(f, "module.c.no", ht_bool(false), NULL, "/sys/module/nf_conntrack");
	set_or_die(f, "module.d.empty", str(""), NULL, NULL);
	/* A source may contain " from ": only the first "from" is the keyword. */
	set_or_die(f, "module.d.quoted", str("say \"hi\" \\ then\ttab\nnewline"), NULL, "a from b");
	set_or_die(f, "module.d.utf8", str("caf\xc3\xa9 \x01"), NULL, NULL);
	set_or_die(f, "module.e.v1", ver(1, 6, 0, 0, 0), NULL, NULL);
	set_or_die(f, "module.e.v4", ver(4, 1, 2, 3, 4), NULL, "here");
	set_or_die(f, "kernel.version", ver(3, 5, 15, 0, 0), NULL, "kernel.release");
	set_or_die(f, "nic.br-lan.driver", str("virtio_net"), NULL, "udev");
	assert_int_equal(ht_facts_set_unavailable(f, "module.u.bare", EACCES, NULL, NULL), 0);
	assert_int_equal(ht_facts_set_unavailable(f, "module.u.full", ENOENT, "bytes",
	                                          "not recorded in a --root tree"),
	                 0);

	text = facts_text(f);
	assert_string_equal(text, want);

	assert_int_equal(read_text(g, text, &err), 0);
	assert_string_equal(err.msg, "");
	assert_int_equal(ht_facts_count(g), ht_facts_count(f)); /* 19 */
	assert_int_equal(ht_facts_count(g), 19);
	for (size_t i = 0; i < ht_facts_count(f); i++)
		assert_fact_equal(ht_facts_at(g, i), ht_facts_at(f, i));

	again = facts_text(g);
	assert_string_equal(again, text);

	ht_facts_free(f);
	ht_facts_free(g);
}

static void test_read_tolerant(void **state)
{
	/* Blank lines may come before the header; the header may end in CR LF. */
	static const char text[] =
		"\n"
		"  \t\n"
		"# hosttune facts 1\r\n"
		"\n"
		"   # an indented comment\n"
		"\tmem.total\t=\t503316480\tbytes\tfrom\t/proc/meminfo MemTotal  \r\n"
		"cpu.count=1\n"
		"kernel.version =v5.15\n"
		"module.x.future = 0.5 from  a source   with  inner  blanks\n"
		"module.x.unit_only = 7 buckets\n"
		"module.x.gone = unavailable   ENODEV   from nowhere\n"
		"   \t  \n"
		"module.x.last = \"no newline at the end\"";
	struct ht_facts *f = ht_facts_new();
	struct ht_error err = { "" };
	struct ht_value one = ht_int(1);
	const struct ht_fact *fact;

	(void)state;
	/* Facts already in the table: the file replaces mem.total and keeps keep.me. */
	assert_int_equal(ht_facts_set(f, "mem.total", &one, "x", "y"), 0);
	assert_int_equal(ht_facts_set(f, "keep.me", &one, NULL, NULL), 0);

	assert_int_equal(read_text(f, text, &err), 0);
	assert_string_equal(err.msg, "");
	assert_int_equal(ht_facts_count(f), 8); /* 7 in the file + keep.me */
	assert_int_fact(f, "mem.total", 503316480, "bytes", "/proc/meminfo MemTotal");
	assert_int_fact(f, "cpu.count", 1, NULL, NULL);
	fact = ht_test_fact(f, "kernel.version");
	assert_int_equal(fact->value.type, HT_T_VER);
	assert_int_equal(fact->value.v.n, 2);
	assert_int_equal(fact->value.v.part[0], 5);
	assert_int_equal(fact->value.v.part[1], 15);
	fact = ht_test_fact(f, "module.x.future"); /* module parameters are open, with any type */
	assert_int_equal(fact->value.type, HT_T_DEC);
	assert_true(fact->value.d == 0.5);
	assert_string_equal(fact->source, "a source   with  inner  blanks");
	assert_int_fact(f, "module.x.unit_only", 7, "buckets", NULL);
	assert_unavailable(f, "module.x.gone", ENODEV, NULL, "nowhere");
	assert_str_fact(f, "module.x.last", "no newline at the end", NULL);
	assert_int_fact(f, "keep.me", 1, NULL, NULL);

	/* The header alone is a valid, empty facts file. */
	assert_int_equal(read_text(f, "# hosttune facts 1\n", &err), 0);
	assert_int_equal(ht_facts_count(f), 8);
	/* Known facts at their edges: 0 of a count, a subnormal decimal, valid UTF-8. */
	assert_int_equal(read_text(f, "# hosttune facts 1\n"
	                              "mem.total = 0 bytes\n"
	                              "cpu.count = 4.9e-324\n"
	                              "cpu.model = \"Caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\" "
	                              "from caf\xc3\xa9 \xe2\x82\xac\n",
	                       &err),
	                 0);
	assert_string_equal(err.msg, "");
	assert_int_fact(f, "mem.total", 0, "bytes", NULL);
	assert_true(ht_test_fact(f, "cpu.count")->value.d > 0);
	assert_str_fact(f, "cpu.model", "Caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	                "caf\xc3\xa9 \xe2\x82\xac");

	ht_facts_free(f);
}

/* The header every facts file starts with: the cases below have it on line 1. */
#define H "# hosttune facts 1\n"

static void test_read_errors(void **state)
{
	/*
	 * Columns: "module.x = " is 8 + 3 = 11 bytes, so its value is at column
	 * 12; "mem.total = " and "cpu.count = " are 9 + 3 = 12 bytes, value at 13.
	 */
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "# hosttune facts 1\ncpu.count = 1\nkernel.release = \"x\"\nmem.total    =    abc\n",
		  "f.facts:4:19: expected a value (number, true/false, \"string\" or vN.N), "
		  "found 'abc'" },
		{ H "mem.total = 1\nmem.total = 2\n",
		  "f.facts:3:1: duplicate fact 'mem.total' (first on line 2)" },
		{ H "cpu.count = 1\n\n  cpu.count = 1\n",
		  "f.facts:4:3: duplicate fact 'cpu.count' (first on line 2)" },
		{ "# hosttune facts 1\n\nmem.total = \"480 MiB\"\n",
		  "f.facts:3:13: mem.total must be a number, found string" },
		{ H "kernel.version = 5\n",
		  "f.facts:2:18: kernel.version must be a version, found number" },
		{ H "conntrack.loaded = 1\n",
		  "f.facts:2:20: conntrack.loaded must be a bool, found number" },
		{ H "cpu.arch = v6.1\n", "f.facts:2:12: cpu.arch must be a string, found version" },
		/* "module.x = unavailable " is 11 + 12 = 23 bytes: the errno at 24. */
		{ H "module.x = unavailable EFOO\n",
		  "f.facts:2:24: expected an errno name such as ENOENT, found 'EFOO'" },
		{ H "module.x = unavailable\n",
		  "f.facts:2:23: expected an errno name such as ENOENT, found end of line" },
		{ H "mem.total 5\n", "f.facts:2:11: expected '=', found '5'" },
		{ H "= 5\n", "f.facts:2:1: expected a fact name, found '='" },
		{ H "mem.total$ = 5\n", "f.facts:2:1: expected a fact name, found 'mem.total$'" },
		/* "module.x = 5 " is 13 bytes: the unit at 14; "bytes " takes 14..19. */
		{ H "module.x = 5 MB$ from y\n",
		  "f.facts:2:14: expected a unit (one word of A-Za-z0-9/%_) or 'from', "
		  "found 'MB$'" },
		{ H "module.x = 5 bytes extra\n",
		  "f.facts:2:20: expected 'from' or end of line, found 'extra'" },
		{ H "module.x = 5 bytes from   \n",
		  "f.facts:2:24: expected a source after 'from', found end of line" },
		{ H "module.x =\n",
		  "f.facts:2:11: expected a value (number, true/false, \"string\" or vN.N), "
		  "found end of line" },
		{ H "module.x = 99999999999999999999\n",
		  "f.facts:2:12: expected an integer from -9223372036854775808 to "
		  "9223372036854775807, found '99999999999999999999'" },
		{ H "module.x = 1e999\n", "f.facts:2:12: expected a finite decimal, found '1e999'" },
		/* Below DBL_TRUE_MIN (4.9e-324) strtod() underflows to 0 with ERANGE. */
		{ H "module.x = 1e-999\n",
		  "f.facts:2:12: expected a decimal of 0 or at least 4.9e-324 in magnitude, "
		  "found '1e-999'" },
		{ H "module.x = -2.5e-400 bytes\n",
		  "f.facts:2:12: expected a decimal of 0 or at least 4.9e-324 in magnitude, "
		  "found '-2.5e-400'" },
		{ H "module.x = v4294967296\n",
		  "f.facts:2:12: expected version parts up to 4294967295, found 'v4294967296'" },
		{ H "module.x = v1.2.3.4.5\n",
		  "f.facts:2:12: expected a value (number, true/false, \"string\" or vN.N), "
		  "found 'v1.2.3.4.5'" },
		{ H "module.x = \"unterminated\n",
		  "f.facts:2:12: expected a value (number, true/false, \"string\" or vN.N), "
		  "found '\"unterminated'" },
		{ H "module.x = 5abc\n",
		  "f.facts:2:12: expected a value (number, true/false, \"string\" or vN.N), "
		  "found '5abc'" },
		{ H "module.x = \"a b\"c d\n",
		  "f.facts:2:12: expected a value (number, true/false, \"string\" or vN.N), "
		  "found '\"a b\"c'" },
		{ H "module.x = \x01\n",
		  "f.facts:2:12: expected a value (number, true/false, \"string\" or vN.N), "
		  "found '\\x01'" },
		{ "# hosttune facts 2\n", "f.facts:1:18: expected facts format version 1, found '2'" },

		/* The header: the first line that is not blank, exactly. */
		{ "", "f.facts:1:1: expected '# hosttune facts 1', found end of file" },
		/* Two blank lines read, so the end of the file is on line 3. */
		{ "\n  \n", "f.facts:3:1: expected '# hosttune facts 1', found end of file" },
		{ "mem.total = 1\n",
		  "f.facts:1:1: expected '# hosttune facts 1', found 'mem.total = 1'" },
		{ "# some other file\n" H,
		  "f.facts:1:1: expected '# hosttune facts 1', found '# some other file'" },
		{ "#hosttune facts 1\n",
		  "f.facts:1:1: expected '# hosttune facts 1', found '#hosttune facts 1'" },
		{ "# hosttune facts 1 extra\n",
		  "f.facts:1:1: expected '# hosttune facts 1', found '# hosttune facts 1 extra'" },
		/* Line 3, indented by 2: the version after "# hosttune facts " (17) is at 20. */
		{ "\n\n  # hosttune facts 3\n",
		  "f.facts:3:20: expected facts format version 1, found '3'" },

		/* Names hosttune does not know; module.* stays open. */
		{ H "mem.totl = 1\n", "f.facts:2:1: unknown fact 'mem.totl'" },
		{ H "  nic.eth0.sped = 1000 Mb/s\n", "f.facts:2:3: unknown fact 'nic.eth0.sped'" },
		{ H "module. = 1\n", "f.facts:2:1: unknown fact 'module.'" },

		/*
		 * Sources as ht_facts_set() takes them. "mem.total = 1 bytes from " is
		 * 12 + 2 + 6 + 5 = 25 bytes: the source at 26, and after "/proc/" (6)
		 * the control byte at 32.
		 */
		{ H "mem.total = 1 bytes from /proc/\x01meminfo\n",
		  "f.facts:2:32: expected a source without control characters, "
		  "found '\\x01meminfo'" },
		/* "mem.total = 1 from " is 12 + 2 + 5 = 19 bytes: 'a' at 20, the tab at 21. */
		{ H "mem.total = 1 from a\tb\n",
		  "f.facts:2:21: expected a source without control characters, found '\\x09b'" },
		/* Latin-1 e-acute after "caf" (20..22): column 23. */
		{ H "mem.total = 1 from caf\xe9 au lait\n",
		  "f.facts:2:23: expected a source of UTF-8 text, found '\\xe9'" },
		/* A string, raw or escaped, must be UTF-8 too; the value is at column 13. */
		{ H "cpu.model = \"caf\xe9\"\n",
		  "f.facts:2:13: expected a string of UTF-8 text, found '\"caf\\xe9\"'" },
		{ H "cpu.model = \"caf\\xe9\"\n",
		  "f.facts:2:13: expected a string of UTF-8 text, found '\"caf\\xe9\"'" },
		/* An overlong '/' (C0 AF) is not UTF-8 either. */
		{ H "cpu.model = \"\xc0\xaf\"\n",
		  "f.facts:2:13: expected a string of UTF-8 text, found '\"\\xc0\\xaf\"'" },

		/* Counts and sizes are never negative. */
		{ H "mem.total = -1\n", "f.facts:2:13: mem.total must not be negative, found -1" },
		{ H "cpu.count = -0.5 CPUs\n",
		  "f.facts:2:13: cpu.count must not be negative, found -0.5" },
		/* "nic.eth0.speed = " is 14 + 3 = 17 bytes: column 18. */
		{ H "nic.eth0.speed = -1 Mb/s\n",
		  "f.facts:2:18: nic.eth0.speed must not be negative, found -1" },
		/* "cpu.aes.gcm_mbps = " is 16 + 3 = 19 bytes: column 20. */
		{ H "cpu.aes.gcm_mbps = -3\n",
		  "f.facts:2:20: cpu.aes.gcm_mbps must not be negative, found -3" },
		/* "net.netfilter.nf_conntrack_max = " is 30 + 3 = 33 bytes: column 34. */
		{ H "net.netfilter.nf_conntrack_max = -262144 entries\n",
		  "f.facts:2:34: net.netfilter.nf_conntrack_max must not be negative, "
		  "found -262144" },
	};
	struct ht_facts *f = ht_facts_new();
	struct ht_value one = ht_int(1);

	(void)state;
	assert_int_equal(ht_facts_set(f, "before", &one, NULL, NULL), 0);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ht_error err = { "" };

		assert_int_equal(read_text(f, cases[i].text, &err), -EINVAL);
		assert_string_equal(err.msg, cases[i].msg);
		/* All or nothing: a file with an error adds nothing. */
		assert_int_equal(ht_facts_count(f), 1);
	}

	/* A NUL byte: "x = 1" is 5 bytes, so the NUL is in column 6. */
	{
		static const char nul[] = "x = 1\0\n";
		struct ht_error err = { "" };

		assert_int_equal(read_text_n(f, nul, sizeof(nul) - 1, &err), -EINVAL);
		assert_string_equal(err.msg, "f.facts:1:6: expected text, found a NUL byte");
	}
	/* No error record is fine too. */
	assert_int_equal(read_text(f, H "module.x = \n", NULL), -EINVAL);
	ht_facts_free(f);
}

/* ---- parsers behind the collectors ---- */

static void test_cpulist(void **state)
{
	static const struct {
		const char *list;
		int64_t count;
	} ok[] = {
		{ "0", 1 },
		{ "0-1", 2 },          /* 1 - 0 + 1 */
		{ "0-3,6,8-9", 7 },    /* (3-0+1) + 1 + (9-8+1) = 4 + 1 + 2 */
		{ "0-127", 128 },      /* 127 - 0 + 1 */
		{ "1,3,5", 3 },        /* three singles */
		{ "0-3,4-7", 8 },      /* adjacent ranges: 4 + 4 */
		{ " 0-1\n", 2 },       /* blanks around the list */
	};
	static const char *const bad[] = {
		"", " ", "3-1", "a", "0-", "-1", "0,", ",0", "0,,1", "1,0", "0-3,2", "0 1", "0x1",
		"99999999999",
	};
	int64_t n;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		n = -1;
		assert_int_equal(ht_cpulist_count(ok[i].list, &n), 0);
		assert_int_equal(n, ok[i].count);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		n = -1;
		assert_int_equal(ht_cpulist_count(bad[i], &n), -EINVAL);
		assert_int_equal(n, -1);
	}
	assert_int_equal(ht_cpulist_count(NULL, &n), -EINVAL);
}

static void test_meminfo(void **state)
{
	int64_t b = -1;

	(void)state;
	/* 491520 kB x 1024 = 503316480 bytes (480 MiB) */
	assert_int_equal(ht_meminfo_bytes("MemTotal:         491520 kB\nMemFree: 1 kB\n", "MemTotal",
	                                  &b),
	                 0);
	assert_int_equal(b, 503316480);
	/* Not fooled by a longer key that starts the same; 7 kB x 1024 = 7168 */
	assert_int_equal(ht_meminfo_bytes("MemTotalX: 5 kB\nXMemTotal: 6 kB\nMemTotal: 7 kB",
	                                  "MemTotal", &b),
	                 0);
	assert_int_equal(b, 7168);
	/* The largest that fits: (2^53 - 1) kB x 1024 = 2^63 - 1024 = 9223372036854774784 */
	assert_int_equal(ht_meminfo_bytes("MemTotal: 9007199254740991 kB", "MemTotal", &b), 0);
	assert_true(b == INT64_C(9223372036854774784));

	b = -1;
	/* 2^53 kB x 1024 = 2^63 bytes, one past INT64_MAX */
	assert_int_equal(ht_meminfo_bytes("MemTotal: 9007199254740992 kB", "MemTotal", &b),
	                 -EINVAL);
	assert_int_equal(ht_meminfo_bytes("MemFree: 1 kB\n", "MemTotal", &b), -EINVAL);
	assert_int_equal(ht_meminfo_bytes("MemTotal: 12\n", "MemTotal", &b), -EINVAL);
	assert_int_equal(ht_meminfo_bytes("MemTotal: 12 MB\n", "MemTotal", &b), -EINVAL);
	assert_int_equal(ht_meminfo_bytes("MemTotal: 12kB\n", "MemTotal", &b), -EINVAL);
	assert_int_equal(ht_meminfo_bytes("MemTotal: -12 kB\n", "MemTotal", &b), -EINVAL);
	assert_int_equal(ht_meminfo_bytes("MemTotal: 12 kB x\n", "MemTotal", &b), -EINVAL);
	assert_int_equal(ht_meminfo_bytes("", "MemTotal", &b), -EINVAL);
	assert_int_equal(b, -1);
}

static void test_pointer_size(void **state)
{
	static const char *const arch64[] = {
		"x86_64", "aarch64", "arm64", "ppc64", "ppc64le", "s390x", "riscv64",
		"mips64", "loongarch64", "sparc64", "alpha", "ia64",
	};
	static const char *const arch32[] = {
		"i386", "i486", "i586", "i686", "armv7l", "armv6l", "armv5tel", "arm", "mips",
		"ppc", "s390", "riscv32",
	};
	static const char *const unknown[] = { "", "vax", "i786", "armv", "x86_64 ", "X86_64" };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(arch64); i++)
		assert_int_equal(ht_arch_pointer_size(arch64[i]), 8);
	for (size_t i = 0; i < ARRAY_SIZE(arch32); i++)
		assert_int_equal(ht_arch_pointer_size(arch32[i]), 4);
	for (size_t i = 0; i < ARRAY_SIZE(unknown); i++)
		assert_int_equal(ht_arch_pointer_size(unknown[i]), -EINVAL);
	assert_int_equal(ht_arch_pointer_size(NULL), -EINVAL);
}

/* ---- collectors over fixture trees ---- */

#define NF "/proc/sys/net/netfilter/"

/*
 * The source of a procfs integer that is not one (collect.c): the file's real
 * path below @dir, the kernel's range (0 to INT_MAX = 2^31 - 1 = 2147483647 for
 * nf_conntrack's sysctls, UINT_MAX = 4294967295 for hashsize) and what it holds.
 */
static char *bad_int(const char *dir, const char *path, const char *max, const char *found)
{
	char *s;

	assert_true(asprintf(&s, "%s%s: expected an integer from 0 to %s, found %s", dir, path, max,
	                     found) > 0);
	return s;
}


/*
 * @text (owned, returned) without the facts hosttune facts adds to what the
 * collectors give: hosttune.profile and hosttune.waivers (cmd_facts()), the
 * expected files' lines "hosttune.profile = ... from ..." and
 * "hosttune.waivers = ...". The collectors' own text is compared.
 */
static char *without_cli_facts(char *text)
{
	static const char *const lines[] = { "\nhosttune.profile = ", "\nhosttune.waivers = " };

	for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
		char *line = strstr(text, lines[i]);

		if (line) {
			char *end = strchr(line + 1, '\n');

			memmove(line + 1, end + 1, strlen(end + 1) + 1);
		}
	}
	return text;
}
static void test_collect_garage_vm(void **state)
{
	struct ht_facts *f = collect_fixture("garage-vm");
	_cleanup_free_ char *want_path = fixture_path("garage-vm", "expected.facts");
	_cleanup_free_ char *want = without_cli_facts(slurp(want_path)), *text = NULL;
	const struct ht_fact *fact;

	(void)state;
	/* MemTotal: 491520 kB -> 491520 x 1024 = 503316480 bytes (480 MiB) */
	assert_int_fact(f, "mem.total", 503316480, "bytes", "/proc/meminfo MemTotal");
	assert_str_fact(f, "kernel.release", "5.15.0-91-generic", "/proc/sys/kernel/osrelease");
	fact = ht_test_fact(f, "kernel.version"); /* "5.15.0-91-generic" -> 5.15.0, 3 parts */
	assert_int_equal(fact->value.type, HT_T_VER);
	assert_int_equal(fact->value.v.n, 3);
	assert_int_equal(fact->value.v.part[0], 5);
	assert_int_equal(fact->value.v.part[1], 15);
	assert_int_equal(fact->value.v.part[2], 0);
	assert_string_equal(fact->source, "kernel.release");
	assert_str_fact(f, "cpu.arch", "x86_64", "/proc/sys/kernel/arch");
	/* online "0": one range of one CPU */
	assert_int_fact(f, "cpu.count", 1, "CPUs", "/sys/devices/system/cpu/online");
	/* x86_64 is 64-bit: 8-byte pointers */
	assert_int_fact(f, "kernel.pointer_size", 8, "bytes", "cpu.arch");
	assert_unavailable(f, "kernel.page_size", ENOENT, "bytes", "not recorded in a --root tree");
	assert_int_fact(f, "net.netfilter.nf_conntrack_max", 4096, "entries", NF "nf_conntrack_max");
	assert_int_fact(f, "net.netfilter.nf_conntrack_buckets", 4096, "buckets",
	                NF "nf_conntrack_buckets");
	assert_int_fact(f, "net.netfilter.nf_conntrack_count", 4096, "entries",
	                NF "nf_conntrack_count");
	assert_int_fact(f, "net.netfilter.nf_conntrack_tcp_timeout_time_wait", 120, "seconds",
	                NF "nf_conntrack_tcp_timeout_time_wait");
	assert_int_fact(f, "module.nf_conntrack.hashsize", 4096, "buckets",
	                "/sys/module/nf_conntrack/parameters/hashsize");
	assert_bool_fact(f, "conntrack.loaded", true, "/sys/module/nf_conntrack");
	assert_str_fact(f, "host.name", "garage-vm", "/proc/sys/kernel/hostname");
	/* git checks nf_conntrack_max out 0644 (or 0600 under umask 077): owner may write */
	assert_bool_fact(f, "netns.initial", true, "mode of " NF "nf_conntrack_max");
	assert_int_equal(ht_facts_count(f), 140); /* every known fact (32 + 3 of the host + cgroup.list, cgroup.skipped and cgroup.version (no cgroup file system in the tree: "", 0, "none") + netns.list, netns.skipped, netns.refused, netns.read_as_root and netns.refused_{pid,process} (no /proc/PID in the tree: "", 0, 0, false, ENOENT, ENOENT) + 2 boot.* + 2 tuned.* + 4 timeouts + 13 of the table + 29 of the connection path (27 less the three listener counts the rules make, and 2 sockstat.tcp.*, 3 of SYN cookies) + nic.max_speed + nic.skipped (no /sys/class/net: ENOENT) + garage.checked + proxy.checked, proxy.list and proxy.store_ports (no store port: unavailable, "", "") + 9 of the file table + 6 of memory + 12 of what fills the conntrack table (5 of them source NAT's) + nstat.TcpOutSegs, nstat.TcpRetransSegs, peer.list, sample.seconds, host.uptime + 8 softnet.*, unavailable without /proc/net/softnet_stat), nothing else */
	assert_all_defs_collected(f);

	/* The same as the expected file next to the tree, byte for byte. */
	text = facts_text(f);
	assert_string_equal(text, want);
	ht_facts_free(f);
}

static void test_collect_no_conntrack(void **state)
{
	struct ht_facts *f = collect_fixture("no-conntrack");
	_cleanup_free_ char *want_path = fixture_path("no-conntrack", "expected.facts");
	_cleanup_free_ char *want = without_cli_facts(slurp(want_path)), *text = NULL;

	(void)state;
	/* MemTotal: 2030596 kB -> 2030596 x 1024 = 2079330304 bytes */
	assert_int_fact(f, "mem.total", 2079330304, "bytes", "/proc/meminfo MemTotal");
	/* "0-1": 1 - 0 + 1 = 2 */
	assert_int_fact(f, "cpu.count", 2, "CPUs", "/sys/devices/system/cpu/online");
	/* 5.10 has no /proc/sys/kernel/arch, and a --root tree gets no uname(2) fallback */
	assert_unavailable(f, "cpu.arch", ENOENT, NULL, "/proc/sys/kernel/arch");
	assert_unavailable(f, "kernel.pointer_size", ENOENT, "bytes", "cpu.arch");
	assert_unavailable(f, "net.netfilter.nf_conntrack_max", ENOENT, "entries",
	                   NF "nf_conntrack_max");
	assert_unavailable(f, "net.netfilter.nf_conntrack_buckets", ENOENT, "buckets",
	                   NF "nf_conntrack_buckets");
	assert_unavailable(f, "net.netfilter.nf_conntrack_count", ENOENT, "entries",
	                   NF "nf_conntrack_count");
	assert_unavailable(f, "net.netfilter.nf_conntrack_tcp_timeout_time_wait", ENOENT,
	                   "seconds", NF "nf_conntrack_tcp_timeout_time_wait");
	assert_unavailable(f, "module.nf_conntrack.hashsize", ENOENT, "buckets",
	                   "/sys/module/nf_conntrack/parameters/hashsize");
	assert_bool_fact(f, "conntrack.loaded", false, "/sys/module/nf_conntrack");
	assert_unavailable(f, "netns.initial", ENOENT, NULL, "mode of " NF "nf_conntrack_max");
	assert_all_defs_collected(f);

	text = facts_text(f);
	assert_string_equal(text, want);
	ht_facts_free(f);
}

/* The expected files read back to the same text: they are valid facts files. */
static void test_expected_files_read_back(void **state)
{
	static const char *const names[] = { "garage-vm", "no-conntrack" };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		_cleanup_free_ char *path = fixture_path(names[i], "expected.facts");
		_cleanup_free_ char *want = slurp(path), *text = NULL;
		struct ht_facts *f = ht_facts_new();
		struct ht_error err = { "" };

		assert_int_equal(read_text(f, want, &err), 0);
		assert_string_equal(err.msg, "");
		/* as test_collect_garage_vm, and hosttune.profile and .waivers, which hosttune facts adds */
		assert_int_equal(ht_facts_count(f), 142);
		text = facts_text(f);
		assert_string_equal(text, want);
		ht_facts_free(f);
	}
}

/* nf_conntrack_max registered 0444, as the kernel does outside the initial netns. */
static void test_collect_netns_readonly(void **state)
{
	char *dir = ht_test_tmp_dir("ht-facts");
	struct ht_facts *f;

	(void)state;
	ht_test_put_file_mode(dir, "proc/sys/net/netfilter/nf_conntrack_max", "262144\n", 0444);
	f = collect(dir);
	assert_bool_fact(f, "netns.initial", false, "mode of " NF "nf_conntrack_max");
	/* Read-only still reads. */
	assert_int_fact(f, "net.netfilter.nf_conntrack_max", 262144, "entries",
	                NF "nf_conntrack_max");
	/* No /sys at all: module absent, like a tree copied without it. */
	assert_bool_fact(f, "conntrack.loaded", false, "/sys/module/nf_conntrack");
	assert_unavailable(f, "mem.total", ENOENT, "bytes", "/proc/meminfo MemTotal");
	assert_unavailable(f, "kernel.release", ENOENT, NULL, "/proc/sys/kernel/osrelease");
	/* The release's errno carries over to the version. */
	assert_unavailable(f, "kernel.version", ENOENT, NULL, "kernel.release");
	assert_unavailable(f, "cpu.count", ENOENT, "CPUs", "/sys/devices/system/cpu/online");
	assert_all_defs_collected(f);
	ht_facts_free(f);

	/* The same file 0644: the owner may write, so this is the initial netns. */
	ht_test_put_file_mode(dir, "proc/sys/net/netfilter/nf_conntrack_max", "262144\n", 0644);
	f = collect(dir);
	assert_bool_fact(f, "netns.initial", true, "mode of " NF "nf_conntrack_max");
	ht_facts_free(f);
	ht_test_rm_tree(dir);
	free(dir);
}

/*
 * host.name: the kernel's hostname, else /etc/hostname's first line that is
 * no comment (a tree copied without /proc), one word; none of them: ENOENT naming both; a name
 * with a control character is no hostname (EINVAL).
 */
static void test_collect_host_name(void **state)
{
	char *dir = ht_test_tmp_dir("ht-facts");
	struct ht_facts *f;

	(void)state;
	f = collect(dir);
	assert_unavailable(f, "host.name", ENOENT, NULL,
	                   "/proc/sys/kernel/hostname, /etc/hostname");
	pin_run_facts(f);
	ht_facts_free(f);

	ht_test_put_file_mode(dir, "etc/hostname", "# set by the installer\n\n  node7\n", 0644);
	f = collect(dir);
	assert_str_fact(f, "host.name", "node7", "/etc/hostname");
	ht_facts_free(f);

	ht_test_put_file_mode(dir, "proc/sys/kernel/hostname", "web1\n", 0644);
	f = collect(dir);
	assert_str_fact(f, "host.name", "web1", "/proc/sys/kernel/hostname");
	ht_facts_free(f);

	ht_test_put_file_mode(dir, "proc/sys/kernel/hostname", "we\x1b[31mb\n", 0644);
	f = collect(dir);
	assert_unavailable(f, "host.name", EINVAL, NULL, "/proc/sys/kernel/hostname");
	ht_facts_free(f);
	ht_test_rm_tree(dir);
	free(dir);
}

/* Sources that exist but do not hold what the kernel writes there. */
static void test_collect_malformed(void **state)
{
	char *dir = ht_test_tmp_dir("ht-facts");
	struct ht_facts *f;

	(void)state;
	ht_test_put_file_mode(dir, "proc/meminfo", "MemTotal:       lots kB\nMemFree:  1 kB\n", 0644);
	ht_test_put_file_mode(dir, "proc/sys/kernel/osrelease", "generic-5.15\n", 0644);
	ht_test_put_file_mode(dir, "proc/sys/kernel/arch", "vax\n", 0644);
	ht_test_put_file_mode(dir, "sys/devices/system/cpu/online", "3-1\n", 0644);
	ht_test_put_file_mode(dir, "proc/sys/net/netfilter/nf_conntrack_count", "abc\n", 0644);
	ht_test_put_file_mode(dir, "proc/sys/net/netfilter/nf_conntrack_buckets", "\n", 0644);
	ht_test_put_file_mode(dir, "proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait",
	         "99999999999999999999\n", 0644);
	ht_test_mkdirs(dir, "proc/sys/net/netfilter/nf_conntrack_max"); /* read(2) gives EISDIR */
	ht_test_put_file_mode(dir, "sys/module", "not a directory\n", 0644);   /* stat(2) gives ENOTDIR */
	f = collect(dir);

	assert_unavailable(f, "mem.total", EINVAL, "bytes", "/proc/meminfo MemTotal");
	/* The release is any string; only the version needs a leading number. */
	assert_str_fact(f, "kernel.release", "generic-5.15", "/proc/sys/kernel/osrelease");
	assert_unavailable(f, "kernel.version", EINVAL, NULL, "kernel.release");
	assert_str_fact(f, "cpu.arch", "vax", "/proc/sys/kernel/arch");
	assert_unavailable(f, "kernel.pointer_size", EINVAL, "bytes", "cpu.arch");
	assert_unavailable(f, "cpu.count", EINVAL, "CPUs", "/sys/devices/system/cpu/online");
	{
		_cleanup_free_ char *count = bad_int(dir, NF "nf_conntrack_count", "2147483647",
		                                     "'abc'");
		_cleanup_free_ char *buckets = bad_int(dir, NF "nf_conntrack_buckets", "2147483647",
		                                       "nothing");
		/* 10^20 - 1 is above 2^63 - 1 too: shown as the file has it. */
		_cleanup_free_ char *tw = bad_int(dir, NF "nf_conntrack_tcp_timeout_time_wait",
		                                  "2147483647", "'99999999999999999999'");

		assert_unavailable(f, "net.netfilter.nf_conntrack_count", EINVAL, "entries", count);
		assert_unavailable(f, "net.netfilter.nf_conntrack_buckets", EINVAL, "buckets",
		                   buckets);
		assert_unavailable(f, "net.netfilter.nf_conntrack_tcp_timeout_time_wait", EINVAL,
		                   "seconds", tw);
	}
	assert_unavailable(f, "net.netfilter.nf_conntrack_max", EISDIR, "entries",
	                   NF "nf_conntrack_max");
	assert_unavailable(f, "module.nf_conntrack.hashsize", ENOTDIR, "buckets",
	                   "/sys/module/nf_conntrack/parameters/hashsize");
	assert_unavailable(f, "conntrack.loaded", ENOTDIR, NULL, "/sys/module/nf_conntrack");
	/* A directory made 0755 has the owner-write bit: still "initial". */
	assert_bool_fact(f, "netns.initial", true, "mode of " NF "nf_conntrack_max");
	assert_all_defs_collected(f);
	ht_facts_free(f);
	ht_test_rm_tree(dir);
	free(dir);
}

static void put_fifo(const char *dir, const char *rel)
{
	_cleanup_free_ char *p = NULL;

	assert_true(asprintf(&p, "%s/%s", dir, rel) > 0);
	ht_test_mkdir_parents(dir, rel);
	assert_int_equal(mkfifo(p, 0644), 0);
}

/* ht_read_file() reads regular files of text: not a FIFO, device or directory, nor a NUL. */
static void test_read_file_kinds(void **state)
{
	static const char nul[] = "4096\0garbage\n";
	char *dir = ht_test_tmp_dir("ht-facts");
	char *buf = NULL;

	(void)state;
	ht_test_put_file_mode(dir, "ok", "4096\n\n", 0644);
	assert_int_equal(ht_read_file(dir, "/ok", &buf), 0);
	assert_string_equal(buf, "4096");
	free(TAKE_PTR(buf));

	/* sizeof - 1 = 13 bytes, the NUL at offset 4: it must not read as "4096". */
	ht_test_put_bytes(dir, "nul", nul, sizeof(nul) - 1);
	assert_int_equal(ht_read_file(dir, "/nul", &buf), -EINVAL);
	assert_null(buf);

	/*
	 * A FIFO without a writer: a blocking open(2) would wait for one forever,
	 * so the alarm turns a hang into a failed test.
	 */
	put_fifo(dir, "fifo");
	alarm(10);
	assert_int_equal(ht_read_file(dir, "/fifo", &buf), -EINVAL);
	alarm(0);
	assert_null(buf);

	ht_test_mkdirs(dir, "dir");
	assert_int_equal(ht_read_file(dir, "/dir", &buf), -EISDIR);
	/* /dev/null is a character device wherever this runs. */
	assert_int_equal(ht_read_file(NULL, "/dev/null", &buf), -EINVAL);
	assert_null(buf);

	/* procfs and sysfs attributes are regular files, and still read. */
	assert_int_equal(ht_read_file(NULL, "/proc/sys/kernel/osrelease", &buf), 0);
	assert_true(strlen(buf) > 0);
	free(TAKE_PTR(buf));
	if (access("/sys/devices/system/cpu/online", R_OK) == 0) {
		assert_int_equal(ht_read_file(NULL, "/sys/devices/system/cpu/online", &buf), 0);
		free(TAKE_PTR(buf));
	}
	ht_test_rm_tree(dir);
	free(dir);
}

/*
 * A --root tree with a FIFO, a NUL byte and negative counts where the kernel
 * keeps regular files of unsigned numbers: each is unavailable with EINVAL
 * and its path, and the collection neither hangs nor fails.
 */
static void test_collect_odd_files(void **state)
{
	static const char nul[] = "4096\0garbage\n";
	char *dir = ht_test_tmp_dir("ht-facts");
	struct ht_facts *f;

	(void)state;
	put_fifo(dir, "proc/meminfo");
	ht_test_put_file_mode(dir, "proc/sys/kernel/osrelease", "5.15.0\n", 0644);
	ht_test_put_bytes(dir, "proc/sys/net/netfilter/nf_conntrack_max", nul, sizeof(nul) - 1);
	ht_test_put_file_mode(dir, "proc/sys/net/netfilter/nf_conntrack_buckets", "-1\n", 0644);
	ht_test_put_file_mode(dir, "proc/sys/net/netfilter/nf_conntrack_count", "-5\n", 0644);
	ht_test_put_file_mode(dir, "proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait", "-120\n", 0644);
	put_fifo(dir, "sys/devices/system/cpu/online");
	alarm(10);
	f = collect(dir);
	alarm(0);

	assert_unavailable(f, "mem.total", EINVAL, "bytes", "/proc/meminfo MemTotal");
	assert_unavailable(f, "cpu.count", EINVAL, "CPUs", "/sys/devices/system/cpu/online");
	/* A NUL byte: ht_read_file() refuses the file, so the source is its path. */
	assert_unavailable(f, "net.netfilter.nf_conntrack_max", EINVAL, "entries",
	                   NF "nf_conntrack_max");
	{
		_cleanup_free_ char *buckets = bad_int(dir, NF "nf_conntrack_buckets", "2147483647",
		                                       "'-1'");
		_cleanup_free_ char *count = bad_int(dir, NF "nf_conntrack_count", "2147483647",
		                                     "'-5'");
		_cleanup_free_ char *tw = bad_int(dir, NF "nf_conntrack_tcp_timeout_time_wait",
		                                  "2147483647", "'-120'");

		assert_unavailable(f, "net.netfilter.nf_conntrack_buckets", EINVAL, "buckets",
		                   buckets);
		assert_unavailable(f, "net.netfilter.nf_conntrack_count", EINVAL, "entries", count);
		assert_unavailable(f, "net.netfilter.nf_conntrack_tcp_timeout_time_wait", EINVAL,
		                   "seconds", tw);
	}
	assert_str_fact(f, "kernel.release", "5.15.0", "/proc/sys/kernel/osrelease");
	assert_all_defs_collected(f);
	ht_facts_free(f);

	/* A negative module parameter: hashsize is a count of buckets. */
	ht_test_put_file_mode(dir, "sys/module/nf_conntrack/parameters/hashsize", "-4096\n", 0644);
	f = collect(dir);
	{
		_cleanup_free_ char *hs = bad_int(dir, "/sys/module/nf_conntrack/parameters/hashsize",
		                                  "4294967295", "'-4096'");

		assert_unavailable(f, "module.nf_conntrack.hashsize", EINVAL, "buckets", hs);
	}
	ht_facts_free(f);
	/* 2^32 = 4294967296 is one above an unsigned int; 2^32 - 1 is the largest hashsize. */
	ht_test_put_file_mode(dir, "sys/module/nf_conntrack/parameters/hashsize", "4294967296\n", 0644);
	f = collect(dir);
	{
		_cleanup_free_ char *hs = bad_int(dir, "/sys/module/nf_conntrack/parameters/hashsize",
		                                  "4294967295", "'4294967296'");

		assert_unavailable(f, "module.nf_conntrack.hashsize", EINVAL, "buckets", hs);
	}
	ht_facts_free(f);
	ht_test_put_file_mode(dir, "sys/module/nf_conntrack/parameters/hashsize", "4294967295\n", 0644);
	f = collect(dir);
	assert_int_equal(ht_test_fact(f, "module.nf_conntrack.hashsize")->value.i, INT64_C(4294967295));
	ht_facts_free(f);
	/* Control characters and bytes above 0x7e show as '?', and 40 bytes at most. */
	ht_test_put_file_mode(dir, "proc/sys/net/netfilter/nf_conntrack_count",
	         "\x1b[31m\xc3\xa9 0123456789012345678901234567890123456789\n", 0644);
	f = collect(dir);
	{
		/* ESC [ 3 1 m, two bytes of e-acute, a blank: 8 bytes, then 32 digits = 40. */
		_cleanup_free_ char *count = bad_int(dir, NF "nf_conntrack_count", "2147483647",
		                                     "'?[31m?? 01234567890123456789012345678901...'");

		assert_unavailable(f, "net.netfilter.nf_conntrack_count", EINVAL, "entries", count);
	}
	ht_facts_free(f);
	ht_test_rm_tree(dir);
	free(dir);
}

/* RFC 3629's well-formed sequences, at the edges of each row of its table. */
static void test_utf8(void **state)
{
	static const struct {
		const char *s;
		int len;
	} cases[] = {
		{ "a", 1 },           { "\x7f", 1 },         { "\xc2\x80", 2 },
		{ "\xdf\xbf", 2 },    { "\xe0\xa0\x80", 3 }, { "\xed\x9f\xbf", 3 },
		{ "\xee\x80\x80", 3 }, { "\xef\xbf\xbf", 3 }, { "\xf0\x90\x80\x80", 4 },
		{ "\xf4\x8f\xbf\xbf", 4 },
		/* not well-formed: */
		{ "", 0 },                 /* the end */
		{ "\x80", 0 },             /* a lone continuation byte */
		{ "\xc0\x80", 0 },         /* overlong NUL */
		{ "\xc1\xbf", 0 },         /* overlong U+007F */
		{ "\xe0\x9f\xbf", 0 },     /* overlong U+07FF */
		{ "\xed\xa0\x80", 0 },     /* surrogate U+D800 */
		{ "\xf0\x8f\xbf\xbf", 0 }, /* overlong U+FFFF */
		{ "\xf4\x90\x80\x80", 0 }, /* U+110000 */
		{ "\xf5\x80\x80\x80", 0 },
		{ "\xff", 0 },
		{ "\xe2\x82", 0 },         /* cut short by the end */
		{ "\xe2\x82z", 0 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		if (ht_utf8_len(cases[i].s) != cases[i].len)
			print_error("case %zu\n", i);
		assert_int_equal(ht_utf8_len(cases[i].s), cases[i].len);
	}
	assert_null(ht_utf8_invalid(""));
	assert_null(ht_utf8_invalid("caf\xc3\xa9 \xe2\x82\xac"));
	/* "caf" is 3 bytes: the Latin-1 e-acute is at offset 3. */
	{
		static const char latin1[] = "caf\xe9 au lait";

		assert_ptr_equal(ht_utf8_invalid(latin1), latin1 + 3);
	}
}

/* The live host: only what holds everywhere, since the values are this machine's. */
static void test_collect_host(void **state)
{
	static const char *const roots[] = { NULL, "", "/", "//" };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(roots); i++) {
		struct ht_facts *f = collect(roots[i]);

		assert_int_fact(f, "kernel.page_size", sysconf(_SC_PAGESIZE), "bytes",
		                "sysconf(_SC_PAGESIZE)");
		/* arch from /proc/sys/kernel/arch or, on kernels before it, uname(2) */
		assert_int_equal(ht_test_fact(f, "cpu.arch")->value.type, HT_T_STR);
		assert_all_defs_collected(f);
		ht_facts_free(f);
	}
}

/* ---- JSON ---- */

static json_object *member(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("JSON member %s missing", key);
	return v;
}

static void test_json_garage_vm(void **state)
{
	struct ht_facts *f = collect_fixture("garage-vm");
	json_object *obj = ht_facts_to_json(f), *back, *facts, *o;
	const char *s;
	size_t i = 0;

	(void)state;
	assert_non_null(obj);
	s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY);
	assert_non_null(s);
	back = json_tokener_parse(s);
	assert_non_null(back);
	facts = member(back, "facts");
	assert_true(json_object_is_type(facts, json_type_object));
	/* the 32 host facts of test_fact_defs, 3 of the host it is (name, time, version), 2 boot.*, 2 tuned.* (the profile, what it gives nf_conntrack_max), 4 timeouts, 13 of the table, 29 of the connection path (collect-sockets.c, collect-processes.c, collect-nstat.c), nic.max_speed, garage.checked (the Garage pre-flight's decision), 9 of the file table (files.top.total and .unread too), 6 of memory (mem.swap_zram too), 12 of what fills the conntrack table (5 of source NAT), the path (nstat.TcpOutSegs, nstat.TcpRetransSegs, peer.list, sample.seconds, host.uptime), 8 softnet.*, and cgroup.list, cgroup.skipped and cgroup.version, netns.list, netns.skipped, netns.refused, netns.read_as_root, netns.refused_pid and netns.refused_process, proxy.checked, proxy.list and proxy.store_ports: 124 + 3 + 3 + 6 + 3 = 139, and nic.skipped: 140 */
	assert_int_equal(json_object_object_length(facts), 140);

	/* "mem.total": { "value": 503316480, "unit": "bytes", "source": ... } (491520 x 1024) */
	o = member(facts, "mem.total");
	assert_int_equal(json_object_object_length(o), 3);
	assert_true(json_object_is_type(member(o, "value"), json_type_int));
	assert_true(json_object_get_int64(member(o, "value")) == 503316480);
	assert_string_equal(json_object_get_string(member(o, "unit")), "bytes");
	assert_string_equal(json_object_get_string(member(o, "source")), "/proc/meminfo MemTotal");

	o = member(facts, "kernel.version");
	assert_true(json_object_is_type(member(o, "value"), json_type_string));
	assert_string_equal(json_object_get_string(member(o, "value")), "5.15.0");
	assert_null(member(o, "unit")); /* JSON null */

	o = member(facts, "conntrack.loaded");
	assert_true(json_object_is_type(member(o, "value"), json_type_boolean));
	assert_true(json_object_get_boolean(member(o, "value")));

	o = member(facts, "cpu.arch");
	assert_string_equal(json_object_get_string(member(o, "value")), "x86_64");

	/* Unavailable: null value, errno name and its text. */
	o = member(facts, "kernel.page_size");
	assert_int_equal(json_object_object_length(o), 5);
	assert_null(member(o, "value"));
	assert_string_equal(json_object_get_string(member(o, "error")), "ENOENT");
	assert_string_equal(json_object_get_string(member(o, "reason")),
	                    "No such file or directory");
	assert_string_equal(json_object_get_string(member(o, "unit")), "bytes");
	assert_string_equal(json_object_get_string(member(o, "source")),
	                    "not recorded in a --root tree");

	/* Members in name order, as in the facts file. */
	json_object_object_foreach(facts, key, val)
	{
		(void)val;
		assert_string_equal(key, ht_facts_at(f, i++)->name);
	}
	assert_int_equal(i, 140);

	json_object_put(back);
	json_object_put(obj);
	ht_facts_free(f);
}

static void test_value_to_json(void **state)
{
	struct ht_value v;
	json_object *j;

	(void)state;
	v = ht_dec(0.25);
	j = ht_value_to_json(&v);
	assert_true(json_object_is_type(j, json_type_double));
	assert_true(json_object_get_double(j) == 0.25);
	json_object_put(j);

	v = ht_int(INT64_MIN);
	j = ht_value_to_json(&v);
	assert_true(json_object_is_type(j, json_type_int));
	assert_true(json_object_get_int64(j) == INT64_MIN);
	json_object_put(j);

	v = ver(4, 1, 2, 3, 4);
	j = ht_value_to_json(&v);
	assert_string_equal(json_object_get_string(j), "1.2.3.4");
	json_object_put(j);

	v = str("a \"b\"");
	j = ht_value_to_json(&v);
	assert_string_equal(json_object_get_string(j), "a \"b\"");
	json_object_put(j);

	v = (struct ht_value){ .type = HT_T_NONE };
	assert_null(ht_value_to_json(&v)); /* JSON null */
	assert_null(ht_value_to_json(NULL));
	assert_null(ht_facts_to_json(NULL));

	/* An empty table is {"facts": {}}. */
	{
		struct ht_facts *f = ht_facts_new();

		j = ht_facts_to_json(f);
		assert_string_equal(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
		                    "{\"facts\":{}}");
		json_object_put(j);
		ht_facts_free(f);
	}
}

/* ---- the conntrack table by state (collect-ctnetlink.c) ---- */

static void test_ct_proc_lines(void **state)
{
	struct ht_ct_table t = { .est_timeout = 432000, .unack_timeout = 300 };

	(void)state;
	/* enum tcp_conntrack order, and nothing past SYN_SENT2 (9). */
	assert_string_equal(ht_ct_tcp_state_name(0), "NONE");
	assert_string_equal(ht_ct_tcp_state_name(3), "ESTABLISHED");
	assert_string_equal(ht_ct_tcp_state_name(7), "TIME_WAIT");
	assert_string_equal(ht_ct_tcp_state_name(9), "SYN_SENT2");
	assert_null(ht_ct_tcp_state_name(10));

	/* 432000 - 3600 = 428400: a timeout of 428400 is stale, 428401 is not. */
	ht_ct_table_count(&t, 6, 3, 428401);
	assert_true(t.entries == 1 && t.tcp == 1 && t.state[3] == 1 && t.stale == 0);
	ht_ct_table_count(&t, 6, 3, 428400);
	assert_true(t.state[3] == 2 && t.stale == 1);
	/*
	 * Unacknowledged data gets nf_conntrack_tcp_timeout_unacknowledged (300):
	 * a remaining 300 is not idleness, 301 is (it came from the 432000).
	 */
	ht_ct_table_count(&t, 6, 3, 300);
	assert_true(t.state[3] == 3 && t.stale == 1);
	ht_ct_table_count(&t, 6, 3, 301);
	assert_true(t.state[3] == 4 && t.stale == 2);
	/* Unknown timeout (-1): never stale; a state past the table: TCP only; UDP: an entry. */
	ht_ct_table_count(&t, 6, 3, -1);
	ht_ct_table_count(&t, 6, 42, 5);
	ht_ct_table_count(&t, 17, 3, 0);
	assert_true(t.entries == 7 && t.tcp == 6 && t.state[3] == 5 && t.stale == 2);
	/* Without the established timeout nothing is stale. */
	t = (struct ht_ct_table){ .est_timeout = -1 };
	ht_ct_table_count(&t, 6, 3, 0);
	assert_true(t.state[3] == 1 && t.stale == 0);

	/* Lines as ct_seq_show() prints them. */
	t = (struct ht_ct_table){ .est_timeout = 7200, .unack_timeout = 300 };
	assert_int_equal(ht_ct_proc_line(&t, "ipv4     2 tcp      6 3600 ESTABLISHED src=1.2.3.4 "
	                                     "dst=5.6.7.8 sport=1 dport=2 [ASSURED] use=1"), 0);
	/* Before 2008 SYN_SENT2 was printed LISTEN. */
	assert_int_equal(ht_ct_proc_line(&t, "ipv4     2 tcp      6 100 LISTEN src=1.2.3.4"), 0);
	/* Offloaded: no timeout column. */
	assert_int_equal(ht_ct_proc_line(&t, "ipv6     10 tcp      6 TIME_WAIT src=::1 [OFFLOAD]"), 0);
	/* SCTP has an ESTABLISHED of its own: not TCP. */
	assert_int_equal(ht_ct_proc_line(&t, "ipv4     2 sctp     132 3 ESTABLISHED src=1.2.3.4"), 0);
	assert_int_equal(ht_ct_proc_line(&t, ""), 0);
	assert_int_equal(ht_ct_proc_line(&t, "   "), 0);
	/* 3600 <= 7200 - 3600: stale. entries 4 (the blank lines count nothing), TCP 3. */
	assert_true(t.entries == 4 && t.tcp == 3 && t.state[3] == 1 && t.state[9] == 1 &&
	            t.state[7] == 1 && t.stale == 1);

	/* Not the kernel's: no numbers, a TCP line without a state, an unknown state. */
	assert_int_equal(ht_ct_proc_line(&t, "ipv4 two tcp 6 10 ESTABLISHED"), -EINVAL);
	assert_int_equal(ht_ct_proc_line(&t, "ipv4 2 tcp six 10 ESTABLISHED"), -EINVAL);
	assert_int_equal(ht_ct_proc_line(&t, "ipv4 2 tcp 6 10"), -EINVAL);
	assert_int_equal(ht_ct_proc_line(&t, "ipv4 2 tcp 6 10 src=1.2.3.4"), -EINVAL);
	assert_int_equal(ht_ct_proc_line(&t, "ipv4 2 tcp 6 10 ESTABLISHED_"), -EINVAL);
	assert_int_equal(ht_ct_proc_line(&t, "ipv4 2 tcp 6 1234567890123 ESTABLISHED"), -EINVAL);
	assert_int_equal(ht_ct_proc_line(&t, "ipv4"), -EINVAL);
	assert_int_equal(ht_ct_proc_line(&t, "ipv4 256 tcp 6 10 ESTABLISHED"), -EINVAL);
	assert_int_equal(ht_ct_proc_line(&t, "ipv4 2 tcp 300 10 ESTABLISHED"), -EINVAL);
	/* The failures counted nothing. */
	assert_true(t.entries == 4);

	/* A whole text, with and without a final newline. */
	t = (struct ht_ct_table){ .est_timeout = 120, .unack_timeout = 300 };
	assert_int_equal(ht_ct_proc_parse("ipv4 2 udp 17 30 src=1.1.1.1\n"
	                                  "ipv4 2 tcp 6 0 ESTABLISHED src=1.1.1.1\n"
	                                  "ipv4 2 tcp 6 50 CLOSE_WAIT src=1.1.1.1", &t), 0);
	/* 120 - 3600 < 0: even a timeout of 0 is not stale (it expired long ago if idle an hour). */
	assert_true(t.entries == 3 && t.tcp == 2 && t.state[3] == 1 && t.state[5] == 1 &&
	            t.stale == 0);
	assert_int_equal(ht_ct_proc_parse("ipv4 2 tcp 6 0 ESTABLISHED\nbad\n", &t), -EINVAL);
}

#define CT_TABLE_SRC "/proc/net/nf_conntrack"

/*
 * tests/fixtures/ct-table: 23 lines of /proc/net/nf_conntrack, 17 of them
 * TCP, and nf_conntrack_tcp_timeout_established = 432000, so an ESTABLISHED
 * entry is stale when its timeout is <= 432000 - 3600 = 428400.
 *   line  1  tcp 431999 ESTABLISHED   fresh (1 s idle)
 *   line  2  tcp 428400 ESTABLISHED   stale (exactly 3600 s idle)
 *   line  3  tcp 428401 ESTABLISHED   fresh (3599 s idle)
 *   line  4  tcp     12 ESTABLISHED   not stale: <= 300, the default
 *            nf_conntrack_tcp_timeout_unacknowledged (the tree has no
 *            file): unacknowledged data, idle or not
 *   line  5  tcp  86399 ESTABLISHED   stale (IPv6)
 *   lines 6-8   TIME_WAIT x 3 (one IPv6)
 *   line  9     CLOSE_WAIT
 *   lines 10-11 SYN_SENT x 2
 *   line 12     SYN_RECV
 *   line 13     FIN_WAIT
 *   line 14     LAST_ACK
 *   line 15     CLOSE
 *   line 16     SYN_SENT2
 *   line 17  tcp ESTABLISHED, offloaded: no timeout, not stale
 *   lines 18-23 udp x 2, icmp, icmpv6, sctp ("3 ESTABLISHED": not TCP), gre
 * entries 23; tcp 17 = ESTABLISHED 6 (lines 1-5, 17) + TIME_WAIT 3 +
 * CLOSE_WAIT 1 + SYN_SENT 2 + SYN_RECV 1 + FIN_WAIT 1 + LAST_ACK 1 + CLOSE 1
 * + SYN_SENT2 1 + NONE 0; stale 2 (lines 2, 5).
 */
static void test_collect_ct_table(void **state)
{
	static const struct {
		const char *state;
		int64_t n;
	} want[] = {
		{ "NONE", 0 },       { "SYN_SENT", 2 },   { "SYN_RECV", 1 },
		{ "ESTABLISHED", 6 }, { "FIN_WAIT", 1 },   { "CLOSE_WAIT", 1 },
		{ "LAST_ACK", 1 },   { "TIME_WAIT", 3 },  { "CLOSE", 1 },
		{ "SYN_SENT2", 1 },
	};
	struct ht_facts *f = collect_fixture("ct-table");
	char name[64];
	int64_t sum = 0;

	(void)state;
	assert_int_fact(f, "conntrack.dump.entries", 23, "entries", CT_TABLE_SRC);
	assert_int_fact(f, "conntrack.dump.tcp", 17, "entries", CT_TABLE_SRC);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		snprintf(name, sizeof(name), "conntrack.state.%s", want[i].state);
		assert_int_fact(f, name, want[i].n, "entries", CT_TABLE_SRC);
		sum += want[i].n;
	}
	assert_true(sum == 17);
	assert_int_fact(f, "conntrack.stale.established", 2, "entries", CT_TABLE_SRC);
	assert_int_fact(f, "net.netfilter.nf_conntrack_tcp_timeout_established", 432000, "seconds",
	                "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established");
	assert_int_fact(f, "net.netfilter.nf_conntrack_tcp_timeout_close_wait", 60, "seconds",
	                "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_close_wait");
	assert_int_fact(f, "net.netfilter.nf_conntrack_tcp_timeout_syn_sent", 120, "seconds",
	                "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_syn_sent");
	assert_int_fact(f, "net.netfilter.nf_conntrack_tcp_timeout_fin_wait", 120, "seconds",
	                "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_fin_wait");
	assert_all_defs_collected(f);
	ht_facts_free(f);
}

/* The table's facts on trees without the file, with a bad one, a long one. */
static void test_collect_ct_table_bad(void **state)
{
	char *dir = ht_test_tmp_dir("ht-facts");
	struct ht_facts *f;
	char *big;
	size_t n = 0;

	(void)state;
	/* No file, no timeout: every fact unavailable ENOENT, stale too. */
	ht_test_mkdirs(dir, "proc/net");
	f = collect(dir);
	assert_unavailable(f, "conntrack.dump.entries", ENOENT, "entries", CT_TABLE_SRC);
	assert_unavailable(f, "conntrack.state.TIME_WAIT", ENOENT, "entries", CT_TABLE_SRC);
	assert_unavailable(f, "conntrack.stale.established", ENOENT, "entries", CT_TABLE_SRC);
	assert_all_defs_collected(f);
	ht_facts_free(f);

	/* A good table without the timeout: the counts, but stale unavailable. */
	ht_test_put_file_mode(dir, "proc/net/nf_conntrack", "ipv4 2 tcp 6 5 ESTABLISHED src=1.1.1.1\n", 0644);
	f = collect(dir);
	assert_int_fact(f, "conntrack.state.ESTABLISHED", 1, "entries", CT_TABLE_SRC);
	assert_unavailable(f, "conntrack.stale.established", ENOENT, "entries",
	                   "net.netfilter.nf_conntrack_tcp_timeout_established unavailable");
	ht_facts_free(f);

	/* A timeout that is no number: stale unavailable with its EINVAL. */
	ht_test_put_file_mode(dir, "proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established", "x\n", 0644);
	f = collect(dir);
	assert_unavailable(f, "conntrack.stale.established", EINVAL, "entries",
	                   "net.netfilter.nf_conntrack_tcp_timeout_established unavailable");
	ht_facts_free(f);

	/*
	 * Established 7200: stale needs 7200 - 3600 = 3600 >= timeout >
	 * the unacknowledged timeout. Without its file that is 300: 200 is not
	 * stale, 400 is; with the file's 100 both are.
	 */
	ht_test_put_file_mode(dir, "proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established", "7200\n", 0644);
	ht_test_put_file_mode(dir, "proc/net/nf_conntrack",
	         "ipv4 2 tcp 6 200 ESTABLISHED src=1.1.1.1\nipv4 2 tcp 6 400 ESTABLISHED src=1.1.1.1\n",
	         0644);
	f = collect(dir);
	assert_int_fact(f, "conntrack.stale.established", 1, "entries", CT_TABLE_SRC);
	ht_facts_free(f);
	ht_test_put_file_mode(dir, "proc/sys/net/netfilter/nf_conntrack_tcp_timeout_unacknowledged", "100\n",
	         0644);
	f = collect(dir);
	assert_int_fact(f, "conntrack.stale.established", 2, "entries", CT_TABLE_SRC);
	ht_facts_free(f);

	/* A line that is not the kernel's: every fact EINVAL. */
	ht_test_put_file_mode(dir, "proc/net/nf_conntrack", "ipv4 2 tcp 6 5 ESTABLISHED\nhello\n", 0644);
	f = collect(dir);
	assert_unavailable(f, "conntrack.dump.tcp", EINVAL, "entries", CT_TABLE_SRC);
	assert_unavailable(f, "conntrack.stale.established", EINVAL, "entries", CT_TABLE_SRC);
	ht_facts_free(f);

	/*
	 * 3000 lines of 31 bytes (93000 bytes: more than one 64 KiB read, so
	 * lines cross a read boundary) -> 3000 entries, 1000 of them TCP
	 * TIME_WAIT; then one line of 70000 bytes, which fills the buffer.
	 */
	big = malloc(3000 * 31 + 70002);
	assert_non_null(big);
	for (int i = 0; i < 3000; i++) {
		const char *l = i % 3 ? "ipv4 2 udp 17 29 src=10.0.0.11\n" : "ipv4 2 tcp 6 9 TIME_WAIT x=123\n";

		assert_int_equal(strlen(l), 31);
		memcpy(big + n, l, 31);
		n += 31;
	}
	big[n] = '\0';
	ht_test_put_file_mode(dir, "proc/net/nf_conntrack", big, 0644);
	f = collect(dir);
	assert_int_fact(f, "conntrack.dump.entries", 3000, "entries", CT_TABLE_SRC);
	assert_int_fact(f, "conntrack.state.TIME_WAIT", 1000, "entries", CT_TABLE_SRC);
	ht_facts_free(f);
	memset(big + n, 'x', 70000);
	big[n + 70000] = '\0';
	ht_test_put_file_mode(dir, "proc/net/nf_conntrack", big, 0644);
	f = collect(dir);
	assert_unavailable(f, "conntrack.dump.entries", EINVAL, "entries", CT_TABLE_SRC);
	ht_facts_free(f);
	free(big);
	ht_test_rm_tree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fact_defs),
		cmocka_unit_test(test_instance_suffixes),
		cmocka_unit_test(test_getline_max),
		cmocka_unit_test(test_set_get),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_read_tolerant),
		cmocka_unit_test(test_read_errors),
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_meminfo),
		cmocka_unit_test(test_pointer_size),
		cmocka_unit_test(test_collect_garage_vm),
		cmocka_unit_test(test_collect_no_conntrack),
		cmocka_unit_test(test_ct_proc_lines),
		cmocka_unit_test(test_collect_ct_table),
		cmocka_unit_test(test_collect_ct_table_bad),
		cmocka_unit_test(test_expected_files_read_back),
		cmocka_unit_test(test_collect_netns_readonly),
		cmocka_unit_test(test_collect_host_name),
		cmocka_unit_test(test_collect_malformed),
		cmocka_unit_test(test_read_file_kinds),
		cmocka_unit_test(test_collect_odd_files),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_collect_host),
		cmocka_unit_test(test_json_garage_vm),
		cmocka_unit_test(test_value_to_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
