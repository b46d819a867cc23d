/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
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

#include "engine/facts.h"
#include "engine/rules.h"
#include "shared/util.h"
#include "engine/value.h"
#include "test-util.h"

/*
 * Every test gets a scratch directory for the rules and profiles it writes, a
 * facts table and room for one ruleset and its findings; the teardown frees
 * them, so a failed assertion (which longjmps out of the test) leaks nothing.
 */
struct fx {
	char *dir;
	struct ht_ruleset *rs;
	struct ht_facts *facts;
	struct ht_findings fd;
	struct ht_error err;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	fx->dir = ht_test_tmp_dir("ht-rules");
	fx->facts = ht_facts_new();
	assert_non_null(fx->facts);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	ht_findings_free(&fx->fd);
	ht_ruleset_free(fx->rs);
	ht_facts_free(fx->facts);
	ht_test_rm_tree(fx->dir);
	free(fx->dir);
	free(fx);
	return 0;
}

/* The error must read DIR/SUFFIX: every position message starts with the file's path. */
static void assert_err(const struct fx *fx, const char *suffix)
{
	_cleanup_free_ char *want = NULL;

	assert_true(asprintf(&want, "%s/%s", fx->dir, suffix) > 0);
	assert_string_equal(fx->err.msg, want);
}

/* Replaces the ruleset with DIR/a.rules holding @text; returns ht_ruleset_load()'s result. */
static int load(struct fx *fx, const char *text)
{
	const char *dirs[] = { fx->dir };

	ht_findings_free(&fx->fd);
	ht_ruleset_free(fx->rs);
	fx->rs = NULL;
	ht_test_put_file(fx->dir, "a.rules", text);
	fx->err.msg[0] = '\0';
	return ht_ruleset_load(dirs, 1, &fx->rs, &fx->err);
}

static void load_ok(struct fx *fx, const char *text)
{
	int r;

	assert_int_equal(load(fx, text), 0);
	r = ht_ruleset_check(fx->rs, &fx->err);
	if (r < 0)
		print_error("check: %s\n", fx->err.msg);
	assert_int_equal(r, 0);
}

static void evaluate_ok(struct fx *fx)
{
	int r;

	ht_findings_free(&fx->fd);
	r = ht_ruleset_evaluate(fx->rs, fx->facts, &fx->fd, &fx->err);
	if (r < 0)
		print_error("evaluate: %s\n", fx->err.msg);
	assert_int_equal(r, 0);
}

static const struct ht_finding *finding(const struct fx *fx, const char *id)
{
	for (size_t i = 0; i < fx->fd.n; i++)
		if (strcmp(ht_rule_id(fx->fd.items[i].rule), id) == 0)
			return &fx->fd.items[i];
	fail_msg("no finding for rule '%s'", id);
	return NULL;
}

static int64_t value_int(struct fx *fx, const char *id)
{
	struct ht_value v = { 0 };
	int r = ht_ruleset_value(fx->rs, id, &v, &fx->err);

	if (r < 0)
		print_error("%s: %s\n", id, fx->err.msg);
	assert_int_equal(r, 0);
	assert_int_equal(v.type, HT_T_INT);
	return v.i;
}

static const struct ht_value *var(const struct ht_ruleset *rs, const char *name)
{
	for (size_t i = 0; i < ht_ruleset_var_count(rs); i++)
		if (strcmp(ht_ruleset_var_name(rs, i), name) == 0)
			return ht_ruleset_var_value(rs, i);
	fail_msg("no workload variable '%s'", name);
	return NULL;
}

#define NF_MAX "net.netfilter.nf_conntrack_max"
#define NF_COUNT "net.netfilter.nf_conntrack_count"
#define NF_TW "net.netfilter.nf_conntrack_tcp_timeout_time_wait"

/* ---- evaluation ---- */

static void test_evaluate_sysctl(void **state)
{
	struct fx *fx = *state;
	const struct ht_finding *f;

	load_ok(fx, "[t.budget]\n"
	            "title = a named value: no target, no finding\n"
	            "value = 0.05\n"
	            "\n"
	            "[t.max]\n"
	            "target = sysctl " NF_MAX "\n"
	            "value = 20971520\n"
	            "severity = " NF_MAX " < t.max ? \"warning\" : \"ok\"\n"
	            "explain = max {" NF_MAX "} of {t.max|bytes}, budget {t.budget|pct}\n"
	            "  ({t.budget * 2.5|pct}), {t.max / 3|.1} {{literal}} {t.budget}\n"
	            "  {1.5GiB|bytes}\n");
	ht_test_fact_int(fx->facts, NF_MAX, 4096);
	evaluate_ok(fx);

	/* The named value yields no finding; it only feeds t.max's explanation. */
	assert_int_equal(fx->fd.n, 1);
	f = &fx->fd.items[0];
	assert_ptr_equal(f->rule, ht_ruleset_find(fx->rs, "t.max"));
	assert_int_equal(ht_rule_kind(f->rule), HT_TARGET_SYSCTL);
	assert_string_equal(ht_rule_target(f->rule), NF_MAX);
	assert_true(f->applicable);
	assert_null(f->reason);
	assert_false(f->kept);
	assert_int_equal(f->current.type, HT_T_INT);
	assert_int_equal(f->current.i, 4096);
	assert_int_equal(f->recommended.type, HT_T_INT);
	assert_int_equal(f->recommended.i, 20971520);
	assert_int_equal(f->severity, HT_SEV_WARNING);
	/*
	 * 20971520 = 20 x 2^20; 0.05 -> 5%, 0.125 -> 12.5%; 20971520 / 3 = 6990506.67
	 * to one decimal; 1.5GiB is the integer 1610612736. Continuation lines join
	 * with one space.
	 */
	assert_string_equal(f->explanation,
	                    "max 4096 of 20 MiB, budget 5% (12.5%), 6990506.7 {literal} 0.05 "
	                    "1.5 GiB");

	{
		struct ht_value v = { 0 };

		assert_int_equal(ht_ruleset_value(fx->rs, "t.budget", &v, &fx->err), 0);
		assert_int_equal(v.type, HT_T_DEC);
		assert_true(v.d == 0.05);
	}
	assert_int_equal(value_int(fx, "t.max"), 20971520);
	assert_int_equal(ht_ruleset_value(fx->rs, "nosuch", &(struct ht_value){ 0 }, &fx->err),
	                 -ENOENT);
	assert_string_equal(fx->err.msg, "no rule 'nosuch' with a value");
}

/* {EXPR|plural:ONE:MANY}: the number, a space, ONE for exactly 1, MANY for anything else. */
static void test_plural(void **state)
{
	struct fx *fx = *state;
	struct ht_value d = ht_dec(1.0), h = ht_dec(0.5);

	load_ok(fx, "[t.p]\n"
	            "target = advice\n"
	            "explain = {cpu.count|plural:queue:queues}, {kernel.page_size|plural:queue:queues},\n"
	            "  {mem.total|plural:entry:entries}, {cpu.aes.gcm_mbps|plural:CPU:CPUs},\n"
	            "  {cpu.chacha.mbps|plural:packet:packets}, {kernel.page_size + 1|plural:connection/s:connections/s},\n"
	            "  {kernel.page_size - 2|plural:byte:bytes}\n");
	ht_test_fact_int(fx->facts, "cpu.count", 0);
	ht_test_fact_int(fx->facts, "kernel.page_size", 1);
	ht_test_fact_int(fx->facts, "mem.total", 2);
	assert_int_equal(ht_facts_set(fx->facts, "cpu.aes.gcm_mbps", &d, NULL, NULL), 0);
	assert_int_equal(ht_facts_set(fx->facts, "cpu.chacha.mbps", &h, NULL, NULL), 0);
	evaluate_ok(fx);
	assert_int_equal(fx->fd.n, 1);
	/* 1 + 1 = 2 is plural; 1 - 2 = -1 is plural too (only exactly one is singular). */
	assert_string_equal(fx->fd.items[0].explanation,
	                    "0 queues, 1 queue, 2 entries, 1 CPU, 0.5 packets, 2 connections/s, "
	                    "-1 bytes");

	/* A string is no number: the checker refuses it. */
	assert_int_equal(load(fx, "[t.p]\ntarget = advice\nexplain = {\"x\"|plural:a:b}\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_non_null(strstr(fx->err.msg, "a formatted hole needs a number, got a string"));
}

/* {EXPR|secs}: whole seconds from 1 s (5.4 -> "5 s", 1 -> "1 s"), two decimals below (0.25 s). */
static void test_secs(void **state)
{
	struct fx *fx = *state;
	struct ht_value a = ht_dec(5.4), b = ht_dec(0.25);

	load_ok(fx, "[t.s]\n"
	            "target = advice\n"
	            "explain = {cpu.aes.gcm_mbps|secs}, {cpu.chacha.mbps|secs}, {cpu.count|secs},\n"
	            "  {kernel.page_size|secs}\n");
	assert_int_equal(ht_facts_set(fx->facts, "cpu.aes.gcm_mbps", &a, NULL, NULL), 0);
	assert_int_equal(ht_facts_set(fx->facts, "cpu.chacha.mbps", &b, NULL, NULL), 0);
	ht_test_fact_int(fx->facts, "cpu.count", 1);
	ht_test_fact_int(fx->facts, "kernel.page_size", 0);
	evaluate_ok(fx);
	assert_int_equal(fx->fd.n, 1);
	/* 0 is below a second: "0.00 s", not a rounded-away interval. */
	assert_string_equal(fx->fd.items[0].explanation, "5 s, 0.25 s, 1 s, 0.00 s");
}

/*
 * each = listener and each = process: one finding per instance of
 * listener.list / process.list, reading that instance's facts through
 * listener.X / process.X and its name through listener.port (a number) and
 * process.name; a limit target's current value is process.NAME.nofile.
 * An empty list (no listening port) gives no row; an uncollected one a
 * not-applicable row.
 */
static void test_each_listener_process(void **state)
{
	struct fx *fx = *state;
	struct ht_value s = { .type = HT_T_STR, .s = (char *)"22 3900" };
	struct ht_value p = { .type = HT_T_STR, .s = (char *)"garage sshd" };
	struct ht_value comm = { .type = HT_T_STR, .s = (char *)"garage" };
	const char *rules = "[t.cap]\n"
	                    "each = listener\n"
	                    "value = listener.backlog == 128\n"
	                    "\n"
	                    "[t.l]\n"
	                    "each = listener\n"
	                    "target = advice\n"
	                    "current = listener.queue\n"
	                    "severity = t.cap && listener.port > 1024 ? \"critical\" : \"ok\"\n"
	                    "explain = port {listener.port} ({listener.process}): {listener.queue} "
	                    "of {listener.backlog}\n"
	                    "\n"
	                    "[t.n]\n"
	                    "each = process\n"
	                    "target = limit nofile\n"
	                    "value = max(process.nofile, 42000)\n"
	                    "severity = process.nofile < t.n ? \"warning\" : \"ok\"\n"
	                    "explain = {process.name}: {process.fds} of {process.nofile}\n";

	load_ok(fx, rules);
	assert_int_equal(ht_facts_set(fx->facts, "listener.list", &s, NULL, "sock_diag"), 0);
	ht_test_fact_int(fx->facts, "listener.22.backlog", 128);
	ht_test_fact_int(fx->facts, "listener.22.queue", 0);
	ht_test_fact_int(fx->facts, "listener.3900.backlog", 128);
	ht_test_fact_int(fx->facts, "listener.3900.queue", 129);
	assert_int_equal(ht_facts_set(fx->facts, "listener.3900.process", &comm, NULL, NULL), 0);
	comm.s = (char *)"sshd";
	assert_int_equal(ht_facts_set(fx->facts, "listener.22.process", &comm, NULL, NULL), 0);
	assert_int_equal(ht_facts_set(fx->facts, "process.list", &p, NULL, NULL), 0);
	ht_test_fact_int(fx->facts, "process.garage.nofile", 1024);
	ht_test_fact_int(fx->facts, "process.garage.fds", 40);
	ht_test_fact_int(fx->facts, "process.sshd.nofile", 65536);
	ht_test_fact_int(fx->facts, "process.sshd.fds", 7);
	evaluate_ok(fx);
	/* 2 listeners + 2 processes. */
	assert_int_equal(fx->fd.n, 4);
	assert_string_equal(fx->fd.items[0].instance, "22");
	/* Port 22 is below 1024: ok although capped. */
	assert_int_equal(fx->fd.items[0].severity, HT_SEV_OK);
	assert_string_equal(fx->fd.items[1].instance, "3900");
	assert_int_equal(fx->fd.items[1].severity, HT_SEV_CRITICAL);
	assert_string_equal(fx->fd.items[1].explanation, "port 3900 (garage): 129 of 128");
	assert_int_equal(fx->fd.items[1].current.i, 129);
	/* garage: max(1024, 42000) = 42000 > 1024 -> warning, current from process.garage.nofile. */
	assert_string_equal(fx->fd.items[2].instance, "garage");
	assert_int_equal(fx->fd.items[2].severity, HT_SEV_WARNING);
	assert_int_equal(fx->fd.items[2].current.i, 1024);
	assert_int_equal(fx->fd.items[2].recommended.i, 42000);
	assert_string_equal(fx->fd.items[2].explanation, "garage: 40 of 1024");
	/* sshd: max(65536, 42000) = 65536, not below: ok. */
	assert_int_equal(fx->fd.items[3].severity, HT_SEV_OK);
	assert_int_equal(fx->fd.items[3].recommended.i, 65536);

	/* No listening port, no process: no rows at all. */
	ht_facts_free(fx->facts);
	fx->facts = ht_facts_new();
	assert_non_null(fx->facts);
	s.s = p.s = (char *)"";
	assert_int_equal(ht_facts_set(fx->facts, "listener.list", &s, NULL, NULL), 0);
	assert_int_equal(ht_facts_set(fx->facts, "process.list", &p, NULL, NULL), 0);
	evaluate_ok(fx);
	assert_int_equal(fx->fd.n, 0);

	/* The lists unknown (a facts file from before they existed): not applicable rows. */
	ht_facts_free(fx->facts);
	fx->facts = ht_facts_new();
	assert_non_null(fx->facts);
	evaluate_ok(fx);
	assert_int_equal(fx->fd.n, 2);
	assert_false(fx->fd.items[0].applicable);
	assert_string_equal(fx->fd.items[0].reason,
	                    "no listening port to check: listener.list was not collected");
	assert_string_equal(fx->fd.items[1].reason,
	                    "no process to check: process.list was not collected");
}

/*
 * Aggregates over a family: count, sum, min, max and any read each
 * instance's facts and per-instance rule values, inside a host rule and
 * inside a rule of another family, and an instance's cached values stay its
 * own when an aggregate runs in the middle of its evaluation (inside an
 * aggregate over its own family, the aggregate's instance shadows the rule's).
 * Three ports: 22 (queue 0 of 128), 80 (129 of 128: full), 3900 (64 of
 * 128: half full). count(full) = 1 (port 80: 129 >= 128); sum(queue) = 0 +
 * 129 + 64 = 193; max(queue) = 129; min(backlog) = 128; any(half full) is
 * true (80 and 3900: queue * 2 >= 128).
 */
static void test_aggregates(void **state)
{
	struct fx *fx = *state;
	struct ht_value s = { .type = HT_T_STR, .s = (char *)"22 80 3900" };
	struct ht_value p = { .type = HT_T_STR, .s = (char *)"a b" };
	const struct ht_finding *f;
	struct ht_value v = { 0 };
	const char *rules = "[t.full]\n"
	                    "each = listener\n"
	                    "value = listener.queue >= listener.backlog\n"
	                    "\n"
	                    "[t.half]\n"
	                    "each = listener\n"
	                    "value = listener.queue * 2 >= listener.backlog\n"
	                    "\n"
	                    "[t.nfull]\n"
	                    "value = count(listener, t.full)\n"
	                    "[t.sum]\n"
	                    "value = sum(listener, listener.queue)\n"
	                    "[t.max]\n"
	                    "value = max(listener, listener.queue)\n"
	                    "[t.min]\n"
	                    "value = min(listener, listener.backlog)\n"
	                    "[t.any]\n"
	                    "value = any(listener, t.half)\n"
	                    "[t.plain]\n"
	                    "value = max(t.sum, 7)\n"
	                    "\n"
	                    "[t.port]\n"
	                    "each = listener\n"
	                    "target = advice\n"
	                    "current = listener.queue\n"
	                    /* t.full of this port, then every port's, then this one's again */
	                    "severity = t.full && t.nfull == 1 && t.full ? \"critical\" : \"ok\"\n"
	                    "explain = {listener.port}: {t.nfull} full of {count(listener, true)}\n"
	                    "\n"
	                    "[t.proc]\n"
	                    "each = process\n"
	                    "target = advice\n"
	                    "current = sum(listener, listener.queue) + process.fds\n"
	                    "explain = {process.name} {sum(listener, listener.queue) + process.fds}\n";

	load_ok(fx, rules);
	assert_int_equal(ht_facts_set(fx->facts, "listener.list", &s, NULL, NULL), 0);
	ht_test_fact_int(fx->facts, "listener.22.backlog", 128);
	ht_test_fact_int(fx->facts, "listener.22.queue", 0);
	ht_test_fact_int(fx->facts, "listener.80.backlog", 128);
	ht_test_fact_int(fx->facts, "listener.80.queue", 129);
	ht_test_fact_int(fx->facts, "listener.3900.backlog", 128);
	ht_test_fact_int(fx->facts, "listener.3900.queue", 64);
	assert_int_equal(ht_facts_set(fx->facts, "process.list", &p, NULL, NULL), 0);
	ht_test_fact_int(fx->facts, "process.a.fds", 1);
	ht_test_fact_int(fx->facts, "process.b.fds", 2);
	evaluate_ok(fx);
	assert_int_equal(fx->fd.n, 5);
	assert_int_equal(fx->fd.items[0].severity, HT_SEV_OK);
	assert_int_equal(fx->fd.items[1].severity, HT_SEV_CRITICAL);
	assert_string_equal(fx->fd.items[1].explanation, "80: 1 full of 3");
	assert_int_equal(fx->fd.items[2].severity, HT_SEV_OK);
	/* 193 + 1 and 193 + 2 */
	f = &fx->fd.items[3];
	assert_string_equal(f->instance, "a");
	assert_int_equal(f->current.i, 194);
	assert_string_equal(fx->fd.items[4].explanation, "b 195");
	assert_int_equal(ht_ruleset_value(fx->rs, "t.nfull", &v, &fx->err), 0);
	assert_int_equal(v.i, 1);
	assert_int_equal(ht_ruleset_value(fx->rs, "t.sum", &v, &fx->err), 0);
	assert_int_equal(v.i, 193);
	assert_int_equal(ht_ruleset_value(fx->rs, "t.max", &v, &fx->err), 0);
	assert_int_equal(v.i, 129);
	assert_int_equal(ht_ruleset_value(fx->rs, "t.min", &v, &fx->err), 0);
	assert_int_equal(v.i, 128);
	assert_int_equal(ht_ruleset_value(fx->rs, "t.any", &v, &fx->err), 0);
	assert_true(v.b);
	assert_int_equal(ht_ruleset_value(fx->rs, "t.plain", &v, &fx->err), 0);
	assert_int_equal(v.i, 193);

	/* One port's backlog unavailable: count, sum, min and max have no value. */
	assert_int_equal(ht_facts_set_unavailable(fx->facts, "listener.3900.backlog", ENOENT, NULL,
	                                          "/proc/net/tcp"), 0);
	evaluate_ok(fx);
	assert_int_equal(ht_ruleset_value(fx->rs, "t.nfull", &v, &fx->err), -ENODATA);
	assert_int_equal(ht_ruleset_value(fx->rs, "t.min", &v, &fx->err), -ENODATA);
	/* any: port 80 holds (129 * 2 >= 128), whatever 3900 is. */
	assert_int_equal(ht_ruleset_value(fx->rs, "t.any", &v, &fx->err), 0);
	assert_true(v.b);

	/* No port at all: count 0, sum 0, any false, max without value. */
	ht_facts_free(fx->facts);
	fx->facts = ht_facts_new();
	assert_non_null(fx->facts);
	s.s = (char *)"";
	assert_int_equal(ht_facts_set(fx->facts, "listener.list", &s, NULL, NULL), 0);
	assert_int_equal(ht_facts_set(fx->facts, "process.list", &s, NULL, NULL), 0);
	evaluate_ok(fx);
	assert_int_equal(ht_ruleset_value(fx->rs, "t.nfull", &v, &fx->err), 0);
	assert_int_equal(v.i, 0);
	assert_int_equal(ht_ruleset_value(fx->rs, "t.sum", &v, &fx->err), 0);
	assert_int_equal(v.i, 0);
	assert_int_equal(ht_ruleset_value(fx->rs, "t.any", &v, &fx->err), 0);
	assert_false(v.b);
	assert_int_equal(ht_ruleset_value(fx->rs, "t.max", &v, &fx->err), -ENODATA);

	/* The list unknown: no value, and the reason names it. */
	ht_facts_free(fx->facts);
	fx->facts = ht_facts_new();
	assert_non_null(fx->facts);
	evaluate_ok(fx);
	assert_int_equal(ht_ruleset_value(fx->rs, "t.nfull", &v, &fx->err), -ENODATA);
	assert_non_null(strstr(fx->err.msg, "listener.list was not collected"));

	/* Static errors: a family that is none, a body of the wrong type, nesting. */
	assert_int_equal(load(fx, "[t.a]\nvalue = count(nics, true)\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:2:15: count() takes a family of instances (nic, listener, process, "
	           "storage) first, got 'nics'");
	assert_int_equal(load(fx, "[t.a]\nvalue = sum(listener, listener.port == 1)\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:2:23: type error: sum() needs a number for each listener, got bool");
	assert_int_equal(load(fx, "[t.a]\nvalue = listener.queue + count(listener, true)\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:2:9: unknown name 'listener.queue'");
	assert_int_equal(load(fx, "[t.a]\nvalue = count(1, true)\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:2:9: count() takes a family of instances and an expression: "
	           "count(listener, listener.queue_full)");
}

/*
 * Per-interface rules on a host where no interface was found: one
 * not-applicable finding each, saying why, instead of no row at all. A rule
 * whose `when` is false before it looks at an interface yields nothing.
 */
static void test_each_nic_without_interfaces(void **state)
{
	struct fx *fx = *state;
	struct ht_value s = { .type = HT_T_STR, .s = (char *)"" };
	const char *rules = "[t.q]\n"
	                    "each = nic\n"
	                    "target = channels combined\n"
	                    "when = available(nic.channels.max.combined)\n"
	                    "value = 1\n"
	                    "\n"
	                    "[t.speed]\n"
	                    "each = nic\n"
	                    "target = advice\n"
	                    "when = t.off && nic.speed > 0\n"
	                    "current = nic.speed\n"
	                    "\n"
	                    "[t.name]\n"
	                    "each = nic\n"
	                    "target = advice\n"
	                    "severity = nic.name == \"eth0\" ? \"warning\" : \"ok\"\n"
	                    "\n"
	                    "[t.off]\n"
	                    "value = false\n";

	/* No /sys/class/net below a --root: nic.list is unavailable. */
	load_ok(fx, rules);
	assert_int_equal(ht_facts_set_unavailable(fx->facts, "nic.list", ENOENT, NULL,
	                                          "/sys/class/net"), 0);
	evaluate_ok(fx);
	assert_int_equal(fx->fd.n, 2);
	assert_string_equal(ht_rule_id(fx->fd.items[0].rule), "t.q");
	assert_string_equal(ht_rule_id(fx->fd.items[1].rule), "t.name");
	for (size_t i = 0; i < 2; i++) {
		assert_false(fx->fd.items[i].applicable);
		assert_null(fx->fd.items[i].instance);
		assert_string_equal(fx->fd.items[i].reason,
		                    "no network interface to check: nic.list is unavailable "
		                    "(No such file or directory: /sys/class/net)");
	}

	/* Only lo: nic.list is the empty string. */
	ht_facts_free(fx->facts);
	fx->facts = ht_facts_new();
	assert_non_null(fx->facts);
	assert_int_equal(ht_facts_set(fx->facts, "nic.list", &s, NULL, "libudev"), 0);
	evaluate_ok(fx);
	assert_int_equal(fx->fd.n, 2);
	assert_string_equal(fx->fd.items[0].reason,
	                    "no network interface to check: nic.list names none other than lo "
	                    "(libudev)");

	/* Not collected at all (a facts file without it). */
	ht_facts_free(fx->facts);
	fx->facts = ht_facts_new();
	assert_non_null(fx->facts);
	evaluate_ok(fx);
	assert_int_equal(fx->fd.n, 2);
	assert_string_equal(fx->fd.items[1].reason,
	                    "no network interface to check: nic.list was not collected");

	/* With an interface the rules evaluate for it as before. */
	s.s = (char *)"eth0";
	assert_int_equal(ht_facts_set(fx->facts, "nic.list", &s, NULL, NULL), 0);
	ht_test_fact_int(fx->facts, "nic.eth0.channels.max.combined", 4);
	evaluate_ok(fx);
	assert_int_equal(fx->fd.n, 2);
	assert_true(fx->fd.items[0].applicable);
	assert_string_equal(fx->fd.items[0].instance, "eth0");
	assert_int_equal(fx->fd.items[1].severity, HT_SEV_WARNING);
}

static void test_when_false(void **state)
{
	struct fx *fx = *state;

	load_ok(fx, "[t.big]\n"
	            "target = sysctl " NF_MAX "\n"
	            "when = " NF_MAX " > 100000\n"
	            "value = 1\n"
	            "\n"
	            "[t.small]\n"
	            "target = sysctl " NF_MAX "\n"
	            "when = " NF_MAX " <= 100000\n"
	            "value = 2\n");
	ht_test_fact_int(fx->facts, NF_MAX, 4096);
	evaluate_ok(fx);
	assert_int_equal(fx->fd.n, 1);
	assert_string_equal(ht_rule_id(fx->fd.items[0].rule), "t.small");
	assert_int_equal(ht_ruleset_value(fx->rs, "t.big", &(struct ht_value){ 0 }, &fx->err),
	                 -ENODATA);
	assert_string_equal(fx->err.msg, "rule t.big does not apply here");
}

static void test_unavailable_fact(void **state)
{
	struct fx *fx = *state;
	const struct ht_finding *f;
	const char *reason = NF_COUNT " is unavailable (No such file or directory: "
	                     "/proc/sys/net/netfilter/nf_conntrack_count)";

	load_ok(fx, "[t.count]\n"
	            "target = sysctl " NF_MAX "\n"
	            "value = " NF_COUNT " * 2\n"
	            "explain = never rendered\n"
	            "\n"
	            "[t.sev]\n"
	            "target = sysctl " NF_TW "\n"
	            "value = 30\n"
	            "severity = " NF_COUNT " > 0 ? \"warning\" : \"ok\"\n"
	            "\n"
	            "[t.hole]\n"
	            "target = advice\n"
	            "explain = count {" NF_COUNT "}\n");
	ht_test_fact_int(fx->facts, NF_MAX, 4096);
	assert_int_equal(ht_facts_set_unavailable(fx->facts, NF_COUNT, ENOENT, NULL,
	                                          "/proc/sys/net/netfilter/nf_conntrack_count"),
	                 0);
	evaluate_ok(fx);
	assert_int_equal(fx->fd.n, 3);

	f = finding(fx, "t.count");
	assert_false(f->applicable);
	assert_string_equal(f->reason, reason);
	/* The current value does not need the missing fact, so it is still shown. */
	assert_int_equal(f->current.type, HT_T_INT);
	assert_int_equal(f->current.i, 4096);
	assert_int_equal(f->recommended.type, HT_T_NONE);

	/* A severity that needs the fact makes the finding not applicable as well. */
	f = finding(fx, "t.sev");
	assert_false(f->applicable);
	assert_string_equal(f->reason, reason);
	/* NF_TW was never collected at all: no current value, no failure. */
	assert_int_equal(f->current.type, HT_T_NONE);

	/* Only a hole needs it: the rule applies and the hole says so. */
	f = finding(fx, "t.hole");
	assert_true(f->applicable);
	assert_null(f->reason);
	assert_int_equal(f->severity, HT_SEV_OK);
	assert_int_equal(f->recommended.type, HT_T_NONE);
	assert_string_equal(f->explanation, "count (unavailable)");

	assert_int_equal(ht_ruleset_value(fx->rs, "t.count", &(struct ht_value){ 0 }, &fx->err),
	                 -ENODATA);
	assert_string_equal(fx->err.msg, reason);
}

static void test_direction_raise(void **state)
{
	struct fx *fx = *state;
	const struct ht_finding *f;

	/* critical when the table is full, info otherwise. */
	load_ok(fx, "[t.raise]\n"
	            "target = sysctl " NF_MAX "\n"
	            "direction = raise\n"
	            "value = 65536\n"
	            "severity = " NF_COUNT " >= " NF_MAX " ? \"critical\" : \"info\"\n"
	            "explain = Recommended {t.raise}.\n");

	/* 262144 > 65536: kept, and the rule's info becomes ok (nothing to do). */
	ht_test_fact_int(fx->facts, NF_MAX, 262144);
	ht_test_fact_int(fx->facts, NF_COUNT, 1000);
	evaluate_ok(fx);
	assert_int_equal(fx->fd.n, 1);
	f = &fx->fd.items[0];
	assert_true(f->kept);
	assert_int_equal(f->severity, HT_SEV_OK);
	assert_int_equal(f->current.i, 262144);
	assert_int_equal(f->recommended.i, 65536);
	assert_string_equal(f->explanation,
	                    "Recommended 65536.\nThe host already has 262144, more than the 65536 "
	                    "recommended here; hosttune never lowers it.");

	/* Kept, but full (262144 of 262144): the critical stands, whoever sized the table. */
	ht_test_fact_int(fx->facts, NF_COUNT, 262144);
	evaluate_ok(fx);
	f = &fx->fd.items[0];
	assert_true(f->kept);
	assert_int_equal(f->severity, HT_SEV_CRITICAL);

	/* Below the recommendation the rule's severity stands; a new evaluation starts afresh. */
	ht_test_fact_int(fx->facts, NF_MAX, 4096);
	ht_test_fact_int(fx->facts, NF_COUNT, 1000);
	evaluate_ok(fx);
	f = &fx->fd.items[0];
	assert_false(f->kept);
	assert_int_equal(f->severity, HT_SEV_INFO);
	assert_int_equal(f->current.i, 4096);
	assert_string_equal(f->explanation, "Recommended 65536.");
}

/* remedy renders like explain; lever must name a rule; both need a target. */
static void test_remedy_lever(void **state)
{
	struct fx *fx = *state;
	const struct ht_finding *f;

	load_ok(fx, "[t.tw]\n"
	            "target = sysctl " NF_TW "\n"
	            "value = 30\n"
	            "[t.max]\n"
	            "target = sysctl " NF_MAX "\n"
	            "value = 65536\n"
	            "severity = \"warning\"\n"
	            "remedy = Raise the owner's knob to {t.max / 4}.{?" NF_MAX " > 1} It has {" NF_MAX "}.{/?}\n"
	            "lever = " NF_TW " > 30 ? \"t.tw\" : \"\"\n");
	ht_test_fact_int(fx->facts, NF_MAX, 4096);
	ht_test_fact_int(fx->facts, NF_TW, 120);
	evaluate_ok(fx);
	f = finding(fx, "t.max");
	/* 65536 / 4 = 16384 */
	assert_string_equal(f->remedy, "Raise the owner's knob to 16384. It has 4096.");
	assert_string_equal(f->lever, "t.tw");
	/* TIME_WAIT already 30: the lever expression gives "", no lever. */
	ht_test_fact_int(fx->facts, NF_TW, 30);
	evaluate_ok(fx);
	assert_null(finding(fx, "t.max")->lever);

	/* A lever that names no rule is an error at its position. */
	load_ok(fx, "[t.max]\n"
	            "target = sysctl " NF_MAX "\n"
	            "value = 65536\n"
	            "lever = \"t.nope\"\n");
	ht_test_fact_int(fx->facts, NF_MAX, 4096);
	assert_int_equal(ht_ruleset_evaluate(fx->rs, fx->facts, &fx->fd, &fx->err), -EINVAL);
	/* "lever = " is 8 bytes: the expression starts at column 9. */
	assert_err(fx, "a.rules:4:9: lever 't.nope' is not a rule");

	/* An unclosed {?...} in a remedy is reported as the remedy's. */
	assert_int_equal(load(fx, "[t.max]\n"
	                          "target = sysctl " NF_MAX "\n"
	                          "value = 65536\n"
	                          "remedy = {?" NF_MAX " > 1}open\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:4:10: '{?...}' without its '{/?}' in the remedy of rule 't.max'");
}

static void test_target_integer(void **state)
{
	struct fx *fx = *state;
	const struct ht_finding *f;

	/* 2.0 * 8 is the decimal 16.0: integral, so the sysctl gets the integer 16. */
	load_ok(fx, "[t.whole]\n"
	            "target = sysctl net.netfilter.nf_conntrack_buckets\n"
	            "value = 2.0 * 8\n");
	evaluate_ok(fx);
	f = &fx->fd.items[0];
	assert_int_equal(f->recommended.type, HT_T_INT);
	assert_int_equal(f->recommended.i, 16);

	load_ok(fx, "[t.frac]\n"
	            "target = sysctl " NF_MAX "\n"
	            "value = 4096 / 120\n");
	assert_int_equal(ht_ruleset_evaluate(fx->rs, fx->facts, &fx->fd, &fx->err), -EINVAL);
	/* Line 3 "value = 4096 / 120": "value = " is 8 bytes, so the value starts at column 9. */
	assert_err(fx, "a.rules:3:9: the value of " NF_MAX " must be an integer, got 34.13; "
	               "use floor() or ceil()");
	assert_int_equal(fx->fd.n, 0);
	assert_null(fx->fd.items);
}

/* ---- multi-line expressions ---- */

static void test_multiline(void **state)
{
	struct fx *fx = *state;

	load_ok(fx, "[t.ml]\n"
	            "value = max(1,\n"
	            "    2 * 3)\n"
	            "      + 4\n");
	evaluate_ok(fx);
	assert_int_equal(value_int(fx, "t.ml"), 10);
	/* Continuations keep their indentation, so the text shows as written. */
	assert_string_equal(ht_rule_key_text(ht_ruleset_find(fx->rs, "t.ml"), "value"),
	                    "max(1,\n    2 * 3)\n      + 4");

	/*
	 * Line 3 "    2 * * 3": four spaces, '2' at 5, '*' at 7, the second '*' at 9,
	 * where an operand was due.
	 */
	assert_int_equal(load(fx, "[t.bad]\n"
	                          "value = 1 +\n"
	                          "    2 * * 3\n"),
	                 -EINVAL);
	assert_err(fx, "a.rules:3:9: expected an expression, found '*'");
	assert_null(fx->rs);

	/* The same through the checker: "    nosuch" puts the name at column 5 of line 4. */
	assert_int_equal(load(fx, "[t.ok]\n"
	                          "value = 1\n"
	                          "[t.bad]\n"
	                          "value = 1 +\n"
	                          "    nosuch\n"),
	                 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:5:5: unknown name 'nosuch'");
}

/*
 * The INI syntax the loader keeps from libinih r55, which it no longer links:
 * comments, ':' for '=', a ';' comment only after white space and never on
 * a continuation line, and which error of a file is the one reported.
 */
static void test_ini_syntax(void **state)
{
	struct fx *fx = *state;
	const struct ht_rule *r;

	load_ok(fx, "; a comment\n"
	            "# another\n"
	            "[t.a] ; the section line may have one\n"
	            "title = one ; cut after white space\n"
	            "rationale: two;three\n"
	            "  # an indented comment, not a continuation\n"
	            "  four ; kept on a continuation\n"
	            "value = 2 ;1\n");
	r = ht_ruleset_find(fx->rs, "t.a");
	assert_non_null(r);
	assert_string_equal(ht_rule_title(r), "one");
	assert_string_equal(ht_rule_rationale(r), "two;three\nfour ; kept on a continuation");
	assert_string_equal(ht_rule_key_text(r, "value"), "2");

	/* A line that is none of the kinds: the first one is the error, unless a key's comes after. */
	assert_int_equal(load(fx, "[t.a]\nvalue = 1\nnot a key\n[t.b]\nvalue = 1 +\n"), -EINVAL);
	assert_err(fx, "a.rules:3:1: expected '[section]', 'key = value' or a comment");
	assert_int_equal(load(fx, "[t.a]\nvalue = 1\nnot a key\nbogus = 1\n"), -EINVAL);
	assert_err(fx, "a.rules:4:1: unknown key 'bogus' in rule 't.a' (expected title, target, "
	               "when, current, value, severity, case.NAME, explain, explain.NAME, remedy, "
	               "remedy.NAME, lever, rationale, direction, unit, each, writable, default, "
	               "unlimited, "
	               "follows, limit, usage, events, holder, held, stray, rest, source or owner)");

	/* A vertical tab is white space to INI, not a blank: a continuation the rule refuses. */
	assert_int_equal(load(fx, "[t.a]\nvalue = 1\n\v[t.b]\n"), -EINVAL);
	assert_err(fx, "a.rules:3:1: duplicate key 'value' in rule 't.a' (first on line 2)");
}

/* ---- static errors ---- */

struct bad_case {
	const char *text;
	bool at_load; /* ht_ruleset_load() rejects it; else ht_ruleset_check() */
	const char *msg; /* after "DIR/" */
};

static const struct bad_case bad_cases[] = {
	/* "value = " is 8 bytes: '1' at 9, '+' at 11, the name at 13. */
	{ "[t.a]\nvalue = 1 + nosuch\n", false, "a.rules:2:13: unknown name 'nosuch'" },
	{ "[t.a]\nvalue = workload.nope * 2\n", false,
	  "a.rules:2:9: unknown workload variable 'workload.nope' (no profile sets it)" },
	/*
	 * x -> a -> b -> a: the cycle is reported where b's value (line 6, column 9)
	 * names a, and the path starts at a, not at x that only leads into it.
	 */
	{ "[x]\nvalue = a\n[a]\nvalue = b + 1\n[b]\nvalue = a * 2\n", false,
	  "a.rules:6:9: dependency cycle: a -> b -> a" },
	/* "when = " is 7 bytes: the expression starts at column 8. */
	{ "[t.a]\ntarget = sysctl " NF_MAX "\nwhen = 1 + 2\nvalue = 1\n", false,
	  "a.rules:3:8: type error: 'when' must be a bool, got a number" },
	{ "[t.a]\ntarget = sysctl " NF_MAX "\nvalue = \"big\"\n", false,
	  "a.rules:3:9: type error: the value of a sysctl target must be a number, got a string" },
	/* "severity = " is 11 bytes: column 12. */
	{ "[t.a]\ntarget = sysctl " NF_MAX "\nvalue = 1\nseverity = 3\n", false,
	  "a.rules:4:12: type error: 'severity' must be a string, got a number" },
	/* An unknown key points at the key itself, column 1. */
	{ "[t.a]\nvalue = 1\ncolour = red\n", true,
	  "a.rules:3:1: unknown key 'colour' in rule 't.a' (expected title, target, when, current, "
	  "value, severity, case.NAME, explain, explain.NAME, remedy, remedy.NAME, lever, rationale, direction, "
	  "unit, each, writable, default, unlimited, follows, limit, usage, events, holder, held, "
	  "stray, rest, source or owner)" },
	{ "[t.a]\nvalue = 1\nvalue = 2\n", true,
	  "a.rules:3:1: duplicate key 'value' in rule 't.a' (first on line 2)" },
	/* "target = " is 9 bytes: column 10. */
	{ "[t.a]\ntarget = foo\nvalue = 1\n", true,
	  "a.rules:2:10: expected 'sysctl KEY', 'module MODULE PARAM', 'channels KIND', "
	  "'limit nofile' or 'advice', found 'foo'" },
	{ "[t.a]\ntarget = limit core\nvalue = 1\n", true,
	  "a.rules:2:16: expected nofile, found 'core'" },
	{ "[t.a]\neach = socket\ntarget = advice\n", true,
	  "a.rules:2:8: expected 'nic', 'listener', 'process', 'storage', 'peer' or 'cgroup' (one "
	  "evaluation per network interface, listening port, process, storage directory, TCP peer "
	  "or control group), found 'socket'" },
	{ "[t.a]\ntarget = limit nofile\nvalue = 1\n", false,
	  "a.rules:2:10: a limit target needs 'each = process'" },
	{ "[t.a]\neach = listener\ntarget = sysctl net.core.somaxconn\nvalue = 1\n", false,
	  "a.rules:3:10: a sysctl target is one key of the host: not with 'each' (give the "
	  "per-listening port rule a 'lever' to it)" },
	/* A per-listener value read by a host rule, or by a per-process rule. */
	{ "[t.b]\neach = listener\nvalue = listener.backlog\n[t.a]\ntarget = advice\n"
	  "severity = t.b > 1 ? \"ok\" : \"ok\"\n", false,
	  "a.rules:6:12: 't.b' is evaluated per listening port (each = listener); only an "
	  "'each = listener' rule or an aggregate over listener can use it" },
	{ "[t.b]\neach = listener\nvalue = listener.backlog\n[t.a]\neach = process\n"
	  "target = advice\nseverity = t.b > 1 ? \"ok\" : \"ok\"\n", false,
	  "a.rules:7:12: 't.b' is evaluated per listening port (each = listener); only an "
	  "'each = listener' rule or an aggregate over listener can use it" },
	/* listener.backlog is a name only inside an each = listener rule. */
	{ "[t.a]\neach = process\ntarget = advice\ncurrent = listener.backlog\n", false,
	  "a.rules:4:11: unknown name 'listener.backlog'" },
	{ "[listener.backlog]\nvalue = 1\n", false,
	  "a.rules:1:2: rule id 'listener.backlog' is already the name of a per-listening port "
	  "fact (listener.INSTANCE.backlog)" },
	/* "sysctl " is 7 more bytes: the key at column 17. */
	{ "[t.a]\ntarget = sysctl a..b\nvalue = 1\n", true,
	  "a.rules:2:17: expected a sysctl key as sysctl(8) prints it (vm.swappiness), found 'a..b'" },
	/* "explain = " is 10 bytes: "total" at 11..15, '}' at 16. */
	{ "[t.a]\ntarget = advice\nexplain = total} here\n", true,
	  "a.rules:3:16: unmatched '}' in explanation (write '}}' for a brace)" },
	/* "see {" at 11..15, "mem.total" at 16..24, '|' at 25, the format at 26. */
	{ "[t.a]\ntarget = advice\nexplain = see {mem.total|foo}\n", true,
	  "a.rules:3:26: unknown format 'foo' (expected bytes, pct, secs, source, .N or plural:ONE:MANY)" },
	/* "see {mem.total|" ends at 25: the format at 26. */
	{ "[t.a]\ntarget = advice\nexplain = see {mem.total|plural:entry}\n", true,
	  "a.rules:3:26: bad format 'plural:entry' (expected plural:ONE:MANY, two words such as "
	  "plural:queue:queues)" },
	{ "[t.a]\ntarget = advice\nexplain = see {mem.total|plural:a b:c}\n", true,
	  "a.rules:3:26: bad format 'plural:a' (expected plural:ONE:MANY, two words such as "
	  "plural:queue:queues)" },
	{ "[t.a]\ntarget = advice\nexplain = see {mem.total|plural:1:2}\n", true,
	  "a.rules:3:26: bad format 'plural:1:2' (expected plural:ONE:MANY, two words such as "
	  "plural:queue:queues)" },
	{ "[t.a]\ntarget = advice\nexplain = see {mem.total\n", true,
	  "a.rules:3:15: expected '}' to close '{' in explanation" },
	/* A hole is an expression with its own position: "see {" ends at 15, the name at 16. */
	{ "[t.a]\ntarget = advice\nexplain = see {nosuch}\n", false,
	  "a.rules:3:16: unknown name 'nosuch'" },
	/* A continuation's text starts at column 3; "then {" is 6 bytes, so the name is at 9. */
	{ "[t.a]\ntarget = advice\nexplain = first line\n  then {nosuch}\n", false,
	  "a.rules:4:9: unknown name 'nosuch'" },
	/* A cycle through 'when' is a cycle too: b's value names a at line 5, column 9. */
	{ "[a]\nvalue = 1\nwhen = b > 0\n[b]\nvalue = a\n", false,
	  "a.rules:5:9: dependency cycle: a -> b -> a" },
	{ "[a]\nvalue = a + 1\n", false, "a.rules:2:9: dependency cycle: a -> a" },
	{ "[adv]\ntarget = advice\n[t.a]\nvalue = adv\n", false,
	  "a.rules:4:9: rule 'adv' has no value to use" },
	/* '[' at column 1, the id at 2. */
	{ "[mem.total]\nvalue = 1\n", false,
	  "a.rules:1:2: rule id 'mem.total' is already the name of a fact" },
	{ "[t.a]\ntarget = sysctl " NF_MAX "\n", false, "a.rules:1:1: rule 't.a' needs a 'value'" },
	{ "[t.a]\ntitle = only a title\n", false, "a.rules:1:1: rule 't.a' needs a 'value'" },
	{ "[t.a]\nvalue = 1\nseverity = \"ok\"\n", false,
	  "a.rules:3:12: 'severity' needs a 'target' (rule 't.a' is a value only)" },
	/* Not below a top directory of /proc/sys: no sysctl (vm.nosuch would be one, read when asked). */
	{ "[t.a]\ntarget = sysctl vmm.nosuch\nvalue = 1\n", true,
	  "a.rules:2:17: expected a sysctl key as sysctl(8) prints it (vm.swappiness), found "
	  "'vmm.nosuch'" },
	{ "value = 1\n[t.a]\nvalue = 1\n", true,
	  "a.rules:1:1: expected '[rule-id]' before the first key" },
	{ "[t a]\nvalue = 1\n", true,
	  "a.rules:1:2: expected a rule id of letters, digits, '_' and inner '.', found 't a'" },
	{ "[t.a]\ndirection = down\nvalue = 1\n", true,
	  "a.rules:2:13: expected 'raise' or 'any', found 'down'" },
};

static void test_static_errors(void **state)
{
	struct fx *fx = *state;

	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		int r = load(fx, c->text);
		size_t dl = strlen(fx->dir);

		if (!c->at_load && r == 0)
			r = ht_ruleset_check(fx->rs, &fx->err);
		/* Name the case when it fails: cmocka's message alone does not say which one. */
		if (r != -EINVAL || strncmp(fx->err.msg, fx->dir, dl) != 0 ||
		    strcmp(fx->err.msg + dl + 1, c->msg) != 0)
			print_error("case %zu: %s", i, c->text);
		assert_int_equal(r, -EINVAL);
		if (c->at_load)
			assert_null(fx->rs);
		else
			assert_non_null(fx->rs); /* loaded fine, only the check failed */
		assert_err(fx, c->msg);
	}
}

static void test_duplicate_rule_id(void **state)
{
	struct fx *fx = *state;
	const char *dirs[] = { fx->dir };
	_cleanup_free_ char *want = NULL;

	/* The second "[t.a]" is on line 3; the id starts after '[', at column 2. */
	assert_int_equal(load(fx, "[t.a]\nvalue = 1\n[t.a]\nvalue = 2\n"), -EINVAL);
	assert_true(asprintf(&want, "%s/a.rules:3:2: duplicate rule id 't.a' "
	                            "(first at %s/a.rules:1)", fx->dir, fx->dir) > 0);
	assert_string_equal(fx->err.msg, want);
	free(TAKE_PTR(want));

	/* Across files: a.rules is read first (file-name order), b.rules has it on line 2. */
	ht_test_put_file(fx->dir, "a.rules", "[t.a]\nvalue = 1\n");
	ht_test_put_file(fx->dir, "b.rules", "# again\n[t.a]\nvalue = 2\n");
	assert_int_equal(ht_ruleset_load(dirs, 1, &fx->rs, &fx->err), -EINVAL);
	assert_null(fx->rs);
	assert_true(asprintf(&want, "%s/b.rules:2:2: duplicate rule id 't.a' "
	                            "(first at %s/a.rules:1)", fx->dir, fx->dir) > 0);
	assert_string_equal(fx->err.msg, want);
}

static void test_long_line(void **state)
{
	struct fx *fx = *state;
	char text[300];
	int n;

	/* inih reads at most 200 bytes a line, newline and NUL included: 198 characters fit. */
	n = snprintf(text, sizeof(text), "[t.a]\nvalue = 1\ntitle = %0190d\n", 0);
	assert_int_equal(n, 6 + 10 + 198 + 1);
	load_ok(fx, text);
	assert_int_equal(strlen(ht_rule_title(ht_ruleset_find(fx->rs, "t.a"))), 190);

	/* One more: line 3 is 199 characters, and column 199 is the first one past the limit. */
	snprintf(text, sizeof(text), "[t.a]\nvalue = 1\ntitle = %0191d\n", 0);
	assert_int_equal(load(fx, text), -EINVAL);
	assert_err(fx, "a.rules:3:199: line longer than 198 characters; continue it on an "
	               "indented line");
}

/* ---- evaluation errors ---- */

static void test_division_by_zero(void **state)
{
	struct fx *fx = *state;

	load_ok(fx, "[t.div]\n"
	            "target = sysctl " NF_MAX "\n"
	            "value = 100 / " NF_COUNT "\n");
	ht_test_fact_int(fx->facts, NF_COUNT, 0);
	assert_int_equal(ht_ruleset_evaluate(fx->rs, fx->facts, &fx->fd, &fx->err), -EDOM);
	/* "value = " is 8 bytes, "100" at 9..11, '/' at 13: errors point at the operator. */
	assert_err(fx, "a.rules:3:13: division by zero");
	assert_int_equal(fx->fd.n, 0);
}

static void test_overflow(void **state)
{
	struct fx *fx = *state;

	/* The overflow happens in a named value; the message points there, not at the user. */
	load_ok(fx, "[t.square]\n"
	            "value = mem.total * mem.total\n"
	            "\n"
	            "[t.ovf]\n"
	            "target = sysctl " NF_MAX "\n"
	            "value = t.square / 2\n");
	ht_test_fact_int(fx->facts, "mem.total", INT64_C(1) << 40); /* 2^80 does not fit */
	assert_int_equal(ht_ruleset_evaluate(fx->rs, fx->facts, &fx->fd, &fx->err), -ERANGE);
	/* "mem.total" is 9 bytes at 9..17, '*' at 19; the input named, 2^40 = 1099511627776. */
	assert_err(fx, "a.rules:2:19: integer overflow in '*' (inputs: mem.total = 1099511627776)");
	assert_int_equal(fx->fd.n, 0);
}

static void profile_fails(struct fx *fx, const char *name, int ret, const char *suffix);

/* [workload] ranges in a rules file, checked for a profile and for --set. */
static void test_workload_ranges(void **state)
{
	struct fx *fx = *state;

	/* "b = " is 4 bytes: each range's value at column 5. */
	assert_int_equal(load(fx, "[workload]\n"
	                          "b = >= 1 and <= 1000\n"
	                          "m = > 0 and <= 1\n"
	                          "t = >= 1s and <= 2min\n"
	                          "[t.a]\nvalue = workload.b * workload.m\n"), 0);
	ht_test_put_file(fx->dir, "profiles/base.profile", "[workload]\nb = 2\nm = 0.05\nt = 30s\n"
	                                            "n = 1\n");
	assert_int_equal(ht_ruleset_load_profile(fx->rs, "base", &fx->err), 0);

	/* The bounds: 1 and 1000 are in, 0 and 1001 out; 0 is out of (0, 1], 1 in. */
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.b=1", &fx->err), 0);
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.b=1000", &fx->err), 0);
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.b=0", &fx->err), -EINVAL);
	assert_string_equal(fx->err.msg,
	                    "--set workload.b=0: expected a number >= 1 and <= 1000, found 0");
	/* Refused: the value before it stays. */
	assert_int_equal(var(fx->rs, "workload.b")->i, 1000);
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.b=1001", &fx->err), -EINVAL);
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.m=1", &fx->err), 0);
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.m=0", &fx->err), -EINVAL);
	assert_string_equal(fx->err.msg, "--set workload.m=0: expected a number > 0 and <= 1, found 0");
	/* 1.001 is above 1 by a thousandth; shown as typed, not rounded to 1. */
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.m=1.001", &fx->err), -EINVAL);
	assert_string_equal(fx->err.msg,
	                    "--set workload.m=1.001: expected a number > 0 and <= 1, found 1.001");
	/* 2min = 120 s is in; 121 s is out; units are evaluated in the bounds. */
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.t=2min", &fx->err), 0);
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.t=121", &fx->err), -EINVAL);
	assert_string_equal(fx->err.msg,
	                    "--set workload.t=121: expected a number >= 1 and <= 120, found 121");
	/*
	 * The bounds' units say what the number is: t is a time (a value with s,
	 * m, min, h, d, w or none, or a span: 1min 30s), b a number without a unit; refused, the value stays.
	 */
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.t=90", &fx->err), 0);
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.t=1KiB", &fx->err), -EINVAL);
	assert_string_equal(fx->err.msg, "--set workload.t=1KiB: expected a time (s, m, min, h, "
	                                 "d, w or none), found a size");
	/* 1min 30s = 60 + 30 = 90 s. */
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.t=1min 30s", &fx->err), 0);
	assert_int_equal(var(fx->rs, "workload.t")->i, 90);
	assert_int_equal(var(fx->rs, "workload.t")->i, 90);
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.b=570s", &fx->err), -EINVAL);
	assert_string_equal(fx->err.msg,
	                    "--set workload.b=570s: expected a number without a unit, found a time");
	assert_int_equal(var(fx->rs, "workload.b")->i, 1000);
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.b=1s + 1KiB", &fx->err), -EINVAL);
	assert_string_equal(fx->err.msg, "--set workload.b=1s + 1KiB: expected a number without a "
	                                 "unit, found a time and a size");
	/* n has no declared range: any number but a negative one, with any unit. */
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.n=1h", &fx->err), 0);
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.n=1000000000", &fx->err), 0);
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.n=-1", &fx->err), -EINVAL);
	assert_string_equal(fx->err.msg, "--set workload.n=-1: expected a number >= 0, found -1");

	/* A profile over base out of range: line 4 "m = 2", the value at column 5. */
	ht_test_put_file(fx->dir, "profiles/big.profile", "[profile]\ninclude = base\n[workload]\nm = 2\n");
	profile_fails(fx, "big", -EINVAL,
	              "profiles/big.profile:4:5: workload.m: expected a number > 0 and <= 1, found 2");
	/* So in a profile: line 2 "b = 2min", the value at column 5. */
	ht_test_put_file(fx->dir, "profiles/unit.profile", "[workload]\nb = 2min\nm = 0.05\n");
	profile_fails(fx, "unit", -EINVAL,
	              "profiles/unit.profile:2:5: workload.b: expected a number without a unit, "
	              "found a time");
	/* Out of range in base, set right by the including profile: the final value counts. */
	ht_test_put_file(fx->dir, "profiles/base2.profile", "[workload]\nb = 0\nm = 0.05\nt = 30s\n");
	ht_test_put_file(fx->dir, "profiles/fixed.profile", "[profile]\ninclude = base2\n[workload]\nb = 3\n");
	assert_int_equal(ht_ruleset_load_profile(fx->rs, "fixed", &fx->err), 0);
	assert_int_equal(var(fx->rs, "workload.b")->i, 3);

	/* A time and a size in one range: "t = >= 1s and <= " is 17 bytes, 1KiB at 18. */
	assert_int_equal(load(fx, "[workload]\nt = >= 1s and <= 1KiB\n"), -EINVAL);
	assert_err(fx, "a.rules:2:18: expected bounds of one kind, found a time and a size");

	/* A later declaration replaces an earlier one (another rules file, or an admin's). */
	assert_int_equal(load(fx, "[workload]\nb = >= 1\n[workload]\nb = >= 5\n"
	                          "[t.a]\nvalue = workload.b\n"), 0);
	profile_fails(fx, "base", -EINVAL,
	              "profiles/base.profile:2:5: workload.b: expected a number >= 5, found 2");
}

/* `unlimited = 0` on a raise-only rule: a current value of 0 is kept, never lowered. */
static void test_unlimited(void **state)
{
	struct fx *fx = *state;
	const struct ht_finding *f;

	load_ok(fx, "[t.max]\n"
	            "target = sysctl " NF_MAX "\n"
	            "direction = raise\n"
	            "unlimited = 0\n"
	            "value = 65536\n"
	            "severity = " NF_MAX " < t.max ? \"critical\" : \"ok\"\n");
	ht_test_fact_int(fx->facts, NF_MAX, 0);
	evaluate_ok(fx);
	f = finding(fx, "t.max");
	assert_true(f->kept);
	assert_int_equal(f->severity, HT_SEV_OK);
	assert_non_null(strstr(f->explanation, "The host has 0, which means no limit: more than "
	                                       "the 65536 recommended here"));
	/* 4096 is a limit, below 65536: raised, critical. */
	ht_test_fact_int(fx->facts, NF_MAX, 4096);
	evaluate_ok(fx);
	f = finding(fx, "t.max");
	assert_false(f->kept);
	assert_int_equal(f->severity, HT_SEV_CRITICAL);
}

/*
 * follows: a rule sized from another one's recommendation is never more
 * severe than that rule's finding, and at least info when it says something.
 */
static void test_follows(void **state)
{
	struct fx *fx = *state;
	const struct ht_finding *f;
	static const char rules[] =
		"[t.max]\n"
		"target = sysctl " NF_MAX "\n"
		"value = 65536\n"
		"severity = " NF_COUNT " >= " NF_MAX " ? \"critical\" : " NF_COUNT " > 100 ? \"info\" : \"ok\"\n"
		"[t.buckets]\n"
		"target = advice\n"
		"follows = t.max\n"
		"value = 1\n"
		"severity = \"warning\"\n"
		"explain = chains of 16\n";

	load_ok(fx, rules);
	/* t.max ok (10 of 4096): warning -> info, and the text says why. */
	ht_test_fact_int(fx->facts, NF_MAX, 4096);
	ht_test_fact_int(fx->facts, NF_COUNT, 10);
	evaluate_ok(fx);
	f = finding(fx, "t.buckets");
	assert_int_equal(f->severity, HT_SEV_INFO);
	assert_string_equal(f->explanation, "chains of 16\nIts size follows t.max, which is ok "
	                                    "here, so this finding is info at most.");
	/* t.max info (200 of 4096): info. */
	ht_test_fact_int(fx->facts, NF_COUNT, 200);
	evaluate_ok(fx);
	assert_int_equal(finding(fx, "t.buckets")->severity, HT_SEV_INFO);
	/* t.max critical (4096 of 4096): the warning stands, its text untouched. */
	ht_test_fact_int(fx->facts, NF_COUNT, 4096);
	evaluate_ok(fx);
	f = finding(fx, "t.buckets");
	assert_int_equal(f->severity, HT_SEV_WARNING);
	assert_string_equal(f->explanation, "chains of 16");
	/* t.max not applicable (no max): t.buckets is judged on its own. */
	ht_facts_free(fx->facts);
	fx->facts = ht_facts_new();
	assert_non_null(fx->facts);
	ht_test_fact_int(fx->facts, NF_COUNT, 10);
	evaluate_ok(fx);
	assert_false(finding(fx, "t.max")->applicable);
	assert_int_equal(finding(fx, "t.buckets")->severity, HT_SEV_WARNING);

	/* What it may follow: another rule with a target, of the host or its family, at the head. */
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\nvalue = 1\nfollows = t.none\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:4:11: follows 't.none': expected another rule with a target");
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\nvalue = 1\nfollows = t.a\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:4:11: follows 't.a': expected another rule with a target");
	assert_int_equal(load(fx, "[t.v]\nvalue = 1\n[t.a]\ntarget = advice\nvalue = 1\n"
	                          "follows = t.v\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:6:11: follows 't.v': expected another rule with a target");
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\nvalue = 1\n"
	                          "[t.b]\ntarget = advice\nvalue = 1\nfollows = t.a\n"
	                          "[t.c]\ntarget = advice\nvalue = 1\nfollows = t.b\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:11:11: follows 't.b', which follows 't.a' itself: name the rule "
	               "at the head");
	assert_int_equal(load(fx, "[t.p]\neach = process\ntarget = advice\nvalue = 1\n"
	                          "[t.a]\ntarget = advice\nvalue = 1\nfollows = t.p\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:8:11: follows 't.p', a per-process rule: only a rule of the same "
	               "family can follow it");
	/* A value only has no finding to cap. */
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\nvalue = 1\n[t.v]\nvalue = 1\n"
	                          "follows = t.a\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:6:11: 'follows' needs a 'target' (rule 't.v' is a value only)");
}

/*
 * case.NAME: the first case whose condition holds gives the severity and
 * adds its own explanation; the remedy is said only when not ok.
 */
/*
 * owner: who sets a value hosttune may not write, first in the remedy only
 * where writable is false, the finding is not ok and a change is wanted;
 * source(): where a fact came from, in an expression.
 */
static void test_owner_source(void **state)
{
	struct fx *fx = *state;
	const struct ht_finding *f;
	struct ht_value v = { .type = HT_T_INT, .i = 4096 };

	load_ok(fx, "[t.ro]\ntitle = read only\n"
	            "value = false\n"
	            "[t.max]\n"
	            "target = sysctl " NF_MAX "\n"
	            "value = 65536\n"
	            "writable = !t.ro\n"
	            "case.full = warning if " NF_COUNT " * 2 > " NF_MAX "\n"
	            "explain = set by {source(" NF_MAX ")}.\n"
	            "owner = the runtime sets it: --sysctl " NF_MAX "={t.max}.\n"
	            "remedy = or move the clients.\n");
	assert_int_equal(ht_facts_set(fx->facts, NF_MAX, &v, NULL, "/etc/sysctl.d/70-a.conf:3"), 0);
	ht_test_fact_int(fx->facts, NF_COUNT, 4000);
	/* Writable (t.ro false): the rule's remedy alone. */
	evaluate_ok(fx);
	f = finding(fx, "t.max");
	assert_int_equal(f->severity, HT_SEV_WARNING);
	assert_string_equal(f->explanation, "set by /etc/sysctl.d/70-a.conf:3.");
	assert_string_equal(f->remedy, "or move the clients.");
	assert_int_equal(load(fx, "[t.ro]\ntitle = read only\nvalue = true\n"
	                          "[t.max]\ntarget = sysctl " NF_MAX "\nvalue = 65536\n"
	                          "writable = !t.ro\n"
	                          "case.full = warning if " NF_COUNT " * 2 > " NF_MAX "\n"
	                          "owner = the runtime sets it: --sysctl " NF_MAX "={t.max}.\n"
	                          "remedy = or move the clients.\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), 0);
	/* Not writable, 4000 of 4096 (a warning, 65536 wanted): the owner first. */
	evaluate_ok(fx);
	f = finding(fx, "t.max");
	assert_true(f->read_only);
	assert_string_equal(f->remedy, "the runtime sets it: --sysctl " NF_MAX "=65536. "
	                               "or move the clients.");
	/* 100 of 4096: ok, so no owner and no remedy. */
	ht_test_fact_int(fx->facts, NF_COUNT, 100);
	evaluate_ok(fx);
	f = finding(fx, "t.max");
	assert_int_equal(f->severity, HT_SEV_OK);
	assert_null(f->remedy);
	/* A warning whose recommendation is the current value: nothing to set, no owner. */
	ht_test_fact_int(fx->facts, NF_MAX, 65536);
	ht_test_fact_int(fx->facts, NF_COUNT, 40000);
	evaluate_ok(fx);
	f = finding(fx, "t.max");
	assert_int_equal(f->severity, HT_SEV_WARNING);
	assert_string_equal(f->remedy, "or move the clients.");

	/* owner needs writable; source() takes a name. */
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\nvalue = 1\nowner = them\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:4:9: 'owner' without 'writable' in rule 't.a': owner says who "
	               "sets the value where hosttune may not write it");
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\nvalue = 1\n"
	                          "explain = {source(1 + 1)}\n"), -EINVAL);
	assert_err(fx, "a.rules:4:19: source() takes a name");
	/* A fact without a source: unavailable, as a hole says it. */
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\nvalue = 1\n"
	                          "explain = {source(" NF_COUNT ")}\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), 0);
	evaluate_ok(fx);
	assert_string_equal(finding(fx, "t.a")->explanation, "(unavailable)");
}

static void test_cases(void **state)
{
	struct fx *fx = *state;
	const struct ht_finding *f;

	load_ok(fx, "[t.max]\n"
	            "target = sysctl " NF_MAX "\n"
	            "value = 65536\n"
	            "case.full = critical if " NF_COUNT " >= " NF_MAX "\n"
	            "explain.full = Full: new\n"
	            "  connections are dropped.\n"
	            "case.busy = info if " NF_COUNT " * 2\n"
	            "                    > " NF_MAX "\n"
	            "remedy.busy = watch it\n"
	            "case.some = warning if " NF_COUNT " * 4 > " NF_MAX "\n"
	            "remedy.some =\n"
	            "explain = {" NF_COUNT "} of {" NF_MAX "}.\n"
	            "remedy = raise it\n");
	/* 4096 of 4096: full, critical, with its text after the rule's. */
	ht_test_fact_int(fx->facts, NF_MAX, 4096);
	ht_test_fact_int(fx->facts, NF_COUNT, 4096);
	evaluate_ok(fx);
	f = finding(fx, "t.max");
	assert_int_equal(f->severity, HT_SEV_CRITICAL);
	assert_string_equal(f->case_name, "full");
	assert_string_equal(f->explanation, "4096 of 4096. Full: new connections are dropped.");
	assert_string_equal(f->remedy, "raise it");
	/* 3000 (over half, a condition over two lines): busy, info, no text of its own. */
	ht_test_fact_int(fx->facts, NF_COUNT, 3000);
	evaluate_ok(fx);
	f = finding(fx, "t.max");
	assert_int_equal(f->severity, HT_SEV_INFO);
	assert_string_equal(f->case_name, "busy");
	assert_string_equal(f->explanation, "3000 of 4096.");
	/* ... and its own remedy instead of the rule's. */
	assert_string_equal(f->remedy, "watch it");
	/* 2000 (over a quarter, 2000 * 4 > 4096): some, whose remedy is empty:
	 * none, not the rule's. */
	ht_test_fact_int(fx->facts, NF_COUNT, 2000);
	evaluate_ok(fx);
	f = finding(fx, "t.max");
	assert_int_equal(f->severity, HT_SEV_WARNING);
	assert_string_equal(f->case_name, "some");
	assert_null(f->remedy);
	/* 10: no case holds, ok, and an ok finding has no remedy. */
	ht_test_fact_int(fx->facts, NF_COUNT, 10);
	evaluate_ok(fx);
	f = finding(fx, "t.max");
	assert_int_equal(f->severity, HT_SEV_OK);
	assert_null(f->case_name);
	assert_null(f->remedy);

	/* The cases replace severity; each case has a condition; names are words. */
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\nseverity = \"ok\"\n"
	                          "case.x = info if true\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:4:1: case.x and 'severity' in rule 't.a': the cases give the "
	               "severity, write one or the other");
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\nexplain.x = lone\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:1:1: explain.x without its case.x in rule 't.a'");
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\ncase.x = severe if true\n"), -EINVAL);
	assert_err(fx, "a.rules:3:10: expected 'SEVERITY if CONDITION' (ok, info, warning or "
	               "critical, then if and a bool), found 'severe if true'");
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\ncase.x = info when true\n"), -EINVAL);
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\ncase.a.b = info if true\n"), -EINVAL);
	assert_err(fx, "a.rules:3:1: expected a case name of letters, digits and '_' after "
	               "'case.', found 'a.b'");
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\ncase.x = info if true\n"
	                          "case.x = ok if true\n"), -EINVAL);
	assert_err(fx, "a.rules:4:1: duplicate key 'case.x' in rule 't.a' (first on line 3)");
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\ncase.x = info if 3\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:3:18: type error: a case's condition must be a bool, got a number");
	assert_int_equal(load(fx, "[t.v]\nvalue = 1\ncase.x = info if true\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:3:1: case.x needs a 'target' (rule 't.v' is a value only)");
}

/*
 * limit and usage: the limit's own cases (events, 90%, 75%), its paragraph,
 * its holder (counted only at warning or above) and the remedy where the
 * limit is set, or at the holder when a stray one holds most of it.
 */
static void test_limit(void **state)
{
	struct fx *fx = *state;
	const struct ht_finding *f;

	load_ok(fx, "[t.refused]\n"
	            "title = connections refused at the limit\n"
	            "value = " NF_COUNT " > 9000 ? 5 : 0\n"
	            "[t.lim]\n"
	            "target = advice\n"
	            "unit = entries\n"
	            "limit = " NF_MAX "\n"
	            "usage = " NF_COUNT "\n"
	            "events = t.refused\n"
	            "holder = text(\"leaky (PID \", 42, \")\")\n"
	            "held = " NF_COUNT " - 100\n"
	            "stray = " NF_COUNT " > 5000\n"
	            "rest = \"the others\"\n"
	            "source = \"LimitX= of t.service\"\n"
	            "explain = Past it, things fail.\n");
	/* 7000 of 10000 (70%): ok, and no holder is counted below a warning. */
	ht_test_fact_int(fx->facts, NF_MAX, 10000);
	ht_test_fact_int(fx->facts, NF_COUNT, 7000);
	evaluate_ok(fx);
	f = finding(fx, "t.lim");
	assert_int_equal(f->severity, HT_SEV_OK);
	assert_true(f->limit.set);
	assert_null(f->limit.holder);
	assert_string_equal(f->explanation, "In use: 7000 of 10000 entries (70.0%). Events at the "
	                    "limit: 0 (connections refused at the limit). Where it is set: LimitX= "
	                    "of t.service. Past it, things fail.");
	assert_null(f->remedy);
	/* 8000 (80% >= 75%): warning; the holder holds 7900 of 8000, is stray: named first. */
	ht_test_fact_int(fx->facts, NF_COUNT, 8000);
	evaluate_ok(fx);
	f = finding(fx, "t.lim");
	assert_int_equal(f->severity, HT_SEV_WARNING);
	assert_string_equal(f->case_name, "high");
	assert_string_equal(f->limit.holder, "leaky (PID 42)");
	assert_true(f->limit.held == 7900);
	assert_string_equal(f->explanation, "In use: 8000 of 10000 entries (80.0%). Events at the "
	                    "limit: 0 (connections refused at the limit). The largest holder is "
	                    "leaky (PID 42), with 7900 of it; the other 100 are held by the others. "
	                    "That is not what this limit is for: it would fill any limit, and a "
	                    "larger one only delays the next fill. Where it is set: LimitX= of "
	                    "t.service. Past it, things fail.");
	assert_string_equal(f->remedy, "stop what fills it, leaky (PID 42), with 7900 of it; "
	                    "raising the limit (LimitX= of t.service) only delays the next fill");
	/* 9500 (95% >= 90%): critical, full; 9600: 5 refused, critical by its events. */
	ht_test_fact_int(fx->facts, NF_COUNT, 9500);
	evaluate_ok(fx);
	assert_string_equal(finding(fx, "t.lim")->case_name, "events");
	ht_test_fact_int(fx->facts, NF_COUNT, 8900);
	evaluate_ok(fx);
	f = finding(fx, "t.lim");
	assert_int_equal(f->severity, HT_SEV_WARNING);
	ht_test_fact_int(fx->facts, NF_COUNT, 9000);
	evaluate_ok(fx);
	f = finding(fx, "t.lim");
	assert_int_equal(f->severity, HT_SEV_CRITICAL);
	assert_string_equal(f->case_name, "full");
	/* Without a usage the limit cannot be judged: not applicable, naming the fact. */
	ht_facts_free(fx->facts);
	fx->facts = ht_facts_new();
	assert_non_null(fx->facts);
	ht_test_fact_int(fx->facts, NF_MAX, 10000);
	evaluate_ok(fx);
	assert_false(finding(fx, "t.lim")->applicable);
	assert_false(finding(fx, "t.lim")->limit.set);

	/* A holder that is not stray, at 80%: named, no word of a delay; the remedy is the source's. */
	load_ok(fx, "[t.lim]\ntarget = advice\nunit = entries\nlimit = " NF_MAX "\n"
	            "usage = " NF_COUNT "\nholder = \"garage\"\nheld = 6000\n"
	            "source = \"TasksMax= of garage.service\"\n");
	ht_test_fact_int(fx->facts, NF_COUNT, 8000);
	evaluate_ok(fx);
	f = finding(fx, "t.lim");
	assert_string_equal(f->explanation, "In use: 8000 of 10000 entries (80.0%). The largest "
	                    "holder is garage, with 6000 of it. Where it is set: TasksMax= of "
	                    "garage.service.");
	assert_string_equal(f->remedy, "raise the limit where it is set: TasksMax= of "
	                    "garage.service");

	/* A holder said to hold more than is in use (a facts file's 9000 of 8000): not told. */
	load_ok(fx, "[t.lim]\ntarget = advice\nunit = entries\nlimit = " NF_MAX "\n"
	            "usage = " NF_COUNT "\nholder = \"garage\"\nheld = 9000\n");
	evaluate_ok(fx);
	f = finding(fx, "t.lim");
	assert_false(f->limit.held_known);
	assert_string_equal(f->explanation, "In use: 8000 of 10000 entries (80.0%). The largest "
	                    "holder is garage.");
	/* A limit of 2^63 - 1 (an unlimited fs.file-max) is shown exactly; 65535 of 65536 is 99.9%. */
	ht_test_fact_int(fx->facts, NF_MAX, INT64_MAX);
	evaluate_ok(fx);
	assert_non_null(strstr(finding(fx, "t.lim")->explanation,
	                       "In use: 8000 of 9223372036854775807 entries (0.0%)."));
	ht_test_fact_int(fx->facts, NF_MAX, 65536);
	ht_test_fact_int(fx->facts, NF_COUNT, 65535);
	evaluate_ok(fx);
	assert_non_null(strstr(finding(fx, "t.lim")->explanation, "(99.9%)"));
	ht_test_fact_int(fx->facts, NF_MAX, 10000);
	ht_test_fact_int(fx->facts, NF_COUNT, 8000);

	/* What goes with what. */
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\nlimit = 1\nusage = 1\n"
	                          "severity = \"critical\"\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:5:12: 'severity' and a limit in rule 't.a': the limit's own cases "
	               "and case.NAME give the severity");
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\nlimit = 1\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:3:9: rule 't.a' needs both 'limit' and 'usage'");
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\nholder = \"x\"\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:3:10: 'holder' belongs to a limit: give rule 't.a' a 'limit' and a "
	               "'usage'");
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\nlimit = 1\nusage = 1\n"
	                          "holder = \"x\"\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:5:10: rule 't.a' needs both 'holder' and 'held'");
	assert_int_equal(load(fx, "[t.a]\ntarget = advice\nlimit = 1\nusage = \"x\"\n"), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), -EINVAL);
	assert_err(fx, "a.rules:4:9: type error: 'usage' must be a number, got a string");
}

static void test_bad_severity(void **state)
{
	struct fx *fx = *state;

	load_ok(fx, "[t.sev]\n"
	            "target = sysctl " NF_MAX "\n"
	            "value = 1\n"
	            "severity = " NF_MAX " > 0 ? \"severe\" : \"ok\"\n");
	ht_test_fact_int(fx->facts, NF_MAX, 4096);
	assert_int_equal(ht_ruleset_evaluate(fx->rs, fx->facts, &fx->fd, &fx->err), -EINVAL);
	/* "severity = " is 11 bytes: the expression starts at column 12. */
	assert_err(fx, "a.rules:4:12: severity must be ok, info, warning or critical, "
	               "got 'severe'");
	assert_int_equal(fx->fd.n, 0);
}

/* ---- profiles ---- */

static void test_profile_include(void **state)
{
	struct fx *fx = *state;
	const struct ht_value *v;

	ht_test_put_file(fx->dir, "profiles/base.profile", "[profile]\n"
	                                            "description = the base\n"
	                                            "[workload]\n"
	                                            "x = 1\n"
	                                            "y = 2\n"
	                                            "t = 120s\n"
	                                            "s = \"slow\"\n");
	/* Over an include only the variables base defines, with their types. */
	ht_test_put_file(fx->dir, "profiles/child.profile", "# y and s differ\n"
	                                             "[profile]\n"
	                                             "include = base\n"
	                                             "[workload]\n"
	                                             "y = 20\n"
	                                             "s = \"fast\"\n");
	assert_int_equal(load(fx, "[t.sum]\nvalue = workload.x + workload.y + workload.t\n"), 0);
	assert_null(ht_ruleset_profile(fx->rs));
	assert_int_equal(ht_ruleset_load_profile(fx->rs, "child", &fx->err), 0);
	assert_string_equal(ht_ruleset_profile(fx->rs), "child");

	/* In name order; y comes from child, which includes base first so that it wins. */
	assert_int_equal(ht_ruleset_var_count(fx->rs), 4);
	assert_string_equal(ht_ruleset_var_name(fx->rs, 0), "workload.s");
	assert_string_equal(ht_ruleset_var_name(fx->rs, 1), "workload.t");
	assert_string_equal(ht_ruleset_var_name(fx->rs, 2), "workload.x");
	assert_string_equal(ht_ruleset_var_name(fx->rs, 3), "workload.y");
	assert_string_equal(var(fx->rs, "workload.s")->s, "fast");
	assert_int_equal(var(fx->rs, "workload.t")->i, 120);
	assert_int_equal(var(fx->rs, "workload.x")->i, 1);
	assert_int_equal(var(fx->rs, "workload.y")->i, 20);

	/* --set overrides; a unit is allowed and a number may become a decimal. */
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.x=5", &fx->err), 0);
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.t=30s", &fx->err), 0);
	v = var(fx->rs, "workload.t");
	assert_int_equal(v->type, HT_T_INT);
	assert_int_equal(v->i, 30);

	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.q=1", &fx->err), -EINVAL);
	assert_string_equal(fx->err.msg, "--set workload.q=1: expected a workload variable "
	                                 "(workload.s, workload.t, workload.x, workload.y), "
	                                 "found 'workload.q'");
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.x=\"many\"", &fx->err), -EINVAL);
	assert_string_equal(fx->err.msg,
	                    "--set workload.x=\"many\": expected a number, found a string");
	assert_int_equal(var(fx->rs, "workload.x")->i, 5); /* the failed --set left it alone */
	/* A string variable takes the text as written; a leading quote makes it an expression. */
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.s=3", &fx->err), 0);
	assert_string_equal(var(fx->rs, "workload.s")->s, "3");
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.s=/srv/a b.toml", &fx->err), 0);
	assert_string_equal(var(fx->rs, "workload.s")->s, "/srv/a b.toml");
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.s=a\\tb", &fx->err), 0);
	assert_string_equal(var(fx->rs, "workload.s")->s, "a\\tb");
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.s=a\x01b", &fx->err), -EINVAL);
	assert_string_equal(fx->err.msg, "--set workload.s=a\x01b: expected printable text, "
	                                 "found a control character");
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.s=\"fa\" ", &fx->err), 0);
	assert_string_equal(var(fx->rs, "workload.s")->s, "fa");
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.s=\"fast", &fx->err), -EINVAL);
	assert_string_equal(var(fx->rs, "workload.s")->s, "fa");
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.s=\"fast\"", &fx->err), 0);
	assert_string_equal(var(fx->rs, "workload.s")->s, "fast");
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.x", &fx->err), -EINVAL);
	assert_string_equal(fx->err.msg, "--set workload.x: expected NAME=VALUE");
	/* Every --set error is "--set ASSIGNMENT: " and what was expected, no column. */
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.x=1 +", &fx->err), -EINVAL);
	assert_string_equal(fx->err.msg,
	                    "--set workload.x=1 +: expected an expression, found end of expression");
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.x=mem.total", &fx->err), -EINVAL);
	assert_string_equal(fx->err.msg, "--set workload.x=mem.total: expected a constant, found "
	                    "name 'mem.total'");
	/* Without a declared range the unit is free: workload.t took 30s above, x takes 1GiB. */
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.x=1GiB", &fx->err), 0);
	assert_int_equal(ht_ruleset_set_var(fx->rs, "workload.x=5", &fx->err), 0);

	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), 0);
	evaluate_ok(fx);
	assert_int_equal(value_int(fx, "t.sum"), 5 + 20 + 30);
}

static void test_profile_errors(void **state)
{
	struct fx *fx = *state;
	_cleanup_free_ char *want = NULL;

	assert_int_equal(load(fx, "[t.a]\nvalue = 1\n"), 0);

	ht_test_put_file(fx->dir, "profiles/p1.profile", "[profile]\ninclude = p2\n");
	ht_test_put_file(fx->dir, "profiles/p2.profile", "[profile]\ninclude = p1\n");
	assert_int_equal(ht_ruleset_load_profile(fx->rs, "p1", &fx->err), -ELOOP);
	/*
	 * p2's include of p1 closes the cycle: line 2, "include = " is 10 bytes,
	 * the name at column 11.
	 */
	assert_err(fx, "profiles/p2.profile:2:11: profile include cycle: p1 -> p2 -> p1");

	assert_int_equal(ht_ruleset_load_profile(fx->rs, "nope", &fx->err), -ENOENT);
	assert_true(asprintf(&want, "profile 'nope' not found (looked for profiles/nope.profile "
	                            "in %s)", fx->dir) > 0);
	assert_string_equal(fx->err.msg, want);

	assert_int_equal(ht_ruleset_load_profile(fx->rs, "../x", &fx->err), -EINVAL);
	assert_string_equal(fx->err.msg, "profile name '../x': expected letters, digits and '_'");

	/* Line 2 "x = 1 +": "x = " is 4 bytes, "1 +" at 5..7, the end at 8. */
	ht_test_put_file(fx->dir, "profiles/bad.profile", "[workload]\nx = 1 +\n");
	assert_int_equal(ht_ruleset_load_profile(fx->rs, "bad", &fx->err), -EINVAL);
	assert_err(fx, "profiles/bad.profile:2:8: expected an expression, found end of expression");

	ht_test_put_file(fx->dir, "profiles/sect.profile", "[workload]\nx = 1\n[rules]\n");
	assert_int_equal(ht_ruleset_load_profile(fx->rs, "sect", &fx->err), -EINVAL);
	assert_err(fx, "profiles/sect.profile:3:2: unknown section 'rules' (expected [profile], "
	               "[workload] or [garage])");

	/* A variable before any section would silently become a workload variable. */
	ht_test_put_file(fx->dir, "profiles/nosect.profile", "x = 1\n[workload]\ny = 2\n");
	assert_int_equal(ht_ruleset_load_profile(fx->rs, "nosect", &fx->err), -EINVAL);
	assert_err(fx, "profiles/nosect.profile:1:1: expected '[profile]' or '[workload]' before "
	               "the first key");

	assert_null(ht_ruleset_profile(fx->rs));
	assert_int_equal(ht_ruleset_var_count(fx->rs), 0);
}

/* Replaces the ruleset with the one rule t.a, for the profile tests. */
static void load_one_rule(struct fx *fx)
{
	assert_int_equal(load(fx, "[t.a]\nvalue = 1\n"), 0);
}

/* Expects ht_ruleset_load_profile(@name) to fail with @ret and the message DIR/@suffix. */
static void profile_fails(struct fx *fx, const char *name, int ret, const char *suffix)
{
	fx->err.msg[0] = '\0';
	assert_int_equal(ht_ruleset_load_profile(fx->rs, name, &fx->err), ret);
	assert_err(fx, suffix);
}

static void test_profile_chain(void **state)
{
	struct fx *fx = *state;
	_cleanup_free_ char *want = NULL;

	load_one_rule(fx);
	/* "include = " is 10 bytes: every included name below is at column 11. */
	ht_test_put_file(fx->dir, "profiles/self.profile", "[profile]\ninclude = self\n");
	profile_fails(fx, "self", -ELOOP, "profiles/self.profile:2:11: profile include cycle: "
	                                  "self -> self");

	/* Entering a cycle from outside: the path starts where the cycle does. */
	ht_test_put_file(fx->dir, "profiles/entry.profile", "[profile]\ninclude = c1\n");
	ht_test_put_file(fx->dir, "profiles/c1.profile", "[profile]\ninclude = c2\n");
	ht_test_put_file(fx->dir, "profiles/c2.profile", "# back to c1\n[profile]\ninclude = c1\n");
	profile_fails(fx, "entry", -ELOOP, "profiles/c2.profile:3:11: profile include cycle: "
	                                   "c1 -> c2 -> c1");

	/* A missing include is reported at the line that names it. */
	ht_test_put_file(fx->dir, "profiles/top.profile",
	         "[profile]\ndescription = x\ninclude = nothere\n");
	fx->err.msg[0] = '\0';
	assert_int_equal(ht_ruleset_load_profile(fx->rs, "top", &fx->err), -ENOENT);
	assert_true(asprintf(&want, "%s/profiles/top.profile:3:11: profile 'nothere' not found "
	                            "(looked for profiles/nothere.profile in %s)",
	                     fx->dir, fx->dir) > 0);
	assert_string_equal(fx->err.msg, want);

	ht_test_put_file(fx->dir, "profiles/badname.profile", "[profile]\ninclude = a.b\n");
	profile_fails(fx, "badname", -EINVAL, "profiles/badname.profile:2:11: profile name 'a.b': "
	                                      "expected letters, digits and '_'");
	assert_null(ht_ruleset_profile(fx->rs));

	/*
	 * A long chain is no cycle: l1 includes l2 ... l63 includes l64, 64
	 * profiles, each setting x to its own number; l1's value wins.
	 */
	for (int i = 1; i <= 64; i++) {
		_cleanup_free_ char *rel = NULL, *text = NULL;

		assert_true(asprintf(&rel, "profiles/l%d.profile", i) > 0);
		if (i < 64)
			assert_true(asprintf(&text, "[profile]\ninclude = l%d\n[workload]\nx = %d\n",
			                     i + 1, i) > 0);
		else
			assert_true(asprintf(&text, "[workload]\nx = %d\n", i) > 0);
		ht_test_put_file(fx->dir, rel, text);
	}
	assert_int_equal(ht_ruleset_load_profile(fx->rs, "l1", &fx->err), 0);
	assert_int_equal(var(fx->rs, "workload.x")->i, 1);
	/* l0 makes it 65: l64 is the one too many, named by l63's include line. */
	load_one_rule(fx);
	ht_test_put_file(fx->dir, "profiles/l0.profile", "[profile]\ninclude = l1\n");
	profile_fails(fx, "l0", -ELOOP, "profiles/l63.profile:2:11: profile includes nested "
	                                "deeper than 64");
}

static void test_profile_vars(void **state)
{
	struct fx *fx = *state;

	load_one_rule(fx);
	ht_test_put_file(fx->dir, "profiles/base.profile", "[profile]\ndescription = base\n[workload]\n"
	                                            "conn_rate = 100\nstorage = false\n"
	                                            "mem_budget = 0.05\n");
	/* A typo over an include would add a variable no rule reads: the key at column 1. */
	ht_test_put_file(fx->dir, "profiles/typo.profile", "[profile]\ninclude = base\n[workload]\n"
	                                            "conn_rte = 570\n");
	profile_fails(fx, "typo", -EINVAL,
	              "profiles/typo.profile:4:1: unknown workload variable 'workload.conn_rte' "
	              "(the included profiles define: workload.conn_rate, workload.mem_budget, "
	              "workload.storage)");
	assert_null(ht_ruleset_profile(fx->rs));

	/* [workload] may come first; "conn_rate = " is 12 bytes, the value at 13. */
	load_one_rule(fx);
	ht_test_put_file(fx->dir, "profiles/str.profile", "[workload]\nconn_rate = \"fast\"\n"
	                                           "[profile]\ninclude = base\n");
	profile_fails(fx, "str", -EINVAL,
	              "profiles/str.profile:2:13: workload.conn_rate is a number, got a string");
	load_one_rule(fx);
	/* "storage = " is 10 bytes: the value at 11. */
	ht_test_put_file(fx->dir, "profiles/b.profile", "[profile]\ninclude = base\n[workload]\n"
	                                         "storage = 1\n");
	profile_fails(fx, "b", -EINVAL,
	              "profiles/b.profile:4:11: workload.storage is a bool, got a number");

	/* Numbers stay numbers either way: a decimal for an integer and back. */
	load_one_rule(fx);
	ht_test_put_file(fx->dir, "profiles/ok.profile", "[profile]\ninclude = base\n[workload]\n"
	                                          "conn_rate = 570.5\nmem_budget = 1\n");
	assert_int_equal(ht_ruleset_load_profile(fx->rs, "ok", &fx->err), 0);
	assert_int_equal(ht_ruleset_var_count(fx->rs), 3);
	assert_true(var(fx->rs, "workload.conn_rate")->d == 570.5);
	assert_int_equal(var(fx->rs, "workload.mem_budget")->i, 1);

	/* A base profile, without include, may define what it likes. */
	load_one_rule(fx);
	ht_test_put_file(fx->dir, "profiles/fresh.profile", "[workload]\nconn_rte = 570\n");
	assert_int_equal(ht_ruleset_load_profile(fx->rs, "fresh", &fx->err), 0);
	assert_int_equal(var(fx->rs, "workload.conn_rte")->i, 570);
}

/* ht_ruleset_load() of DIR alone, expecting @ret and the message DIR/@suffix. */
static void load_fails(struct fx *fx, int ret, const char *suffix)
{
	const char *dirs[] = { fx->dir };

	ht_ruleset_free(fx->rs);
	fx->rs = NULL;
	fx->err.msg[0] = '\0';
	assert_int_equal(ht_ruleset_load(dirs, 1, &fx->rs, &fx->err), ret);
	assert_null(fx->rs);
	assert_err(fx, suffix);
}

/* An entry NAME.rules or NAME.profile that is not a regular file is an error of its own. */
static void test_rules_file_kinds(void **state)
{
	struct fx *fx = *state;
	_cleanup_free_ char *b = NULL, *one = NULL, *two = NULL, *want = NULL;

	ht_test_put_file(fx->dir, "a.rules", "[t.a]\nvalue = 1\n");
	assert_true(asprintf(&b, "%s/b.rules", fx->dir) > 0);

	assert_int_equal(mkdir(b, 0755), 0);
	load_fails(fx, -EINVAL, "b.rules: not a regular file");
	assert_int_equal(rmdir(b), 0);

	assert_int_equal(symlink("nowhere.rules", b), 0);
	load_fails(fx, -EINVAL, "b.rules: No such file or directory");
	assert_int_equal(unlink(b), 0);

	/* A FIFO is refused before anything opens it: the alarm turns a hang into a failure. */
	assert_int_equal(mkfifo(b, 0644), 0);
	alarm(10);
	load_fails(fx, -EINVAL, "b.rules: not a regular file");
	alarm(0);
	assert_int_equal(unlink(b), 0);

	/* A later directory's entry shadows an earlier one's file, so it is the error. */
	assert_true(asprintf(&one, "%s/one", fx->dir) > 0);
	assert_true(asprintf(&two, "%s/two", fx->dir) > 0);
	ht_test_put_file(one, "c.rules", "[t.c]\nvalue = 1\n");
	ht_test_put_file(two, "c.rules/README", "a directory\n");
	{
		const char *dirs[] = { one, two };

		assert_int_equal(ht_ruleset_load(dirs, 2, &fx->rs, &fx->err), -EINVAL);
		assert_null(fx->rs);
		assert_true(asprintf(&want, "%s/c.rules: not a regular file", two) > 0);
		assert_string_equal(fx->err.msg, want);
	}

	/* Profiles too. */
	assert_int_equal(load(fx, "[t.a]\nvalue = 1\n"), 0);
	ht_test_put_file(fx->dir, "profiles/d.profile/README", "a directory\n");
	profile_fails(fx, "d", -EINVAL, "profiles/d.profile: not a regular file");
}

/* Byte-level oddities of rules and profile files: a BOM, a NUL, sizes. */
static void test_rules_file_bytes(void **state)
{
	static const char nul_rules[] = "[t.a]\nvalue = 1\0 + 2\n";
	static const char nul_profile[] = "[workload]\nx = \0\n";
	struct fx *fx = *state;
	const struct ht_rule *r;
	char *big;
	size_t len;

	/* A UTF-8 BOM before line 1's section; its '[' is column 1, the id column 2. */
	load_ok(fx, "\xef\xbb\xbf[t.a]\nvalue = 1\n");
	r = ht_ruleset_find(fx->rs, "t.a");
	assert_non_null(r);
	assert_int_equal(ht_rule_pos(r)->line, 1);
	assert_int_equal(ht_rule_pos(r)->col, 1);
	assert_int_equal(load(fx, "\xef\xbb\xbf[t a]\nvalue = 1\n"), -EINVAL);
	assert_err(fx, "a.rules:1:2: expected a rule id of letters, digits, '_' and inner '.', "
	               "found 't a'");
	load_one_rule(fx);
	ht_test_put_file(fx->dir, "profiles/bom.profile", "\xef\xbb\xbf[workload]\nx = 1\n");
	assert_int_equal(ht_ruleset_load_profile(fx->rs, "bom", &fx->err), 0);
	assert_int_equal(var(fx->rs, "workload.x")->i, 1);

	/* A NUL byte: "value = 1" is 9 bytes, so it is column 10 of line 2. */
	ht_test_put_bytes(fx->dir, "a.rules", nul_rules, sizeof(nul_rules) - 1);
	load_fails(fx, -EINVAL, "a.rules:2:10: NUL byte");
	/* "x = " is 4 bytes: column 5. */
	load_one_rule(fx);
	ht_test_put_bytes(fx->dir, "profiles/nul.profile", nul_profile, sizeof(nul_profile) - 1);
	profile_fails(fx, "nul", -EINVAL, "profiles/nul.profile:2:5: NUL byte");

	/*
	 * A title grows by a blank and each continuation's text: "title = x" is 1
	 * byte, and each "  " + 190 'y' line adds 1 + 190 = 191. After 343 lines
	 * it is 1 + 343 x 191 = 65514 bytes; the 344th makes 65705 > 65536. That
	 * line is 3 + 344 = 347, its text at column 3.
	 */
	big = malloc(2 * 1024 * 1024);
	assert_non_null(big);
	len = (size_t)sprintf(big, "[t.a]\nvalue = 1\ntitle = x\n");
	for (int i = 0; i < 344; i++)
		len += (size_t)sprintf(big + len, "  %0190d\n", 0);
	assert_int_equal(load(fx, big), -EINVAL);
	assert_err(fx, "a.rules:347:3: 'title' is longer than 65536 bytes");
	/* One line less fits. */
	len = (size_t)sprintf(big, "[t.a]\nvalue = 1\ntitle = x\n");
	for (int i = 0; i < 343; i++)
		len += (size_t)sprintf(big + len, "  %0190d\n", 0);
	load_ok(fx, big);
	assert_int_equal(strlen(ht_rule_title(ht_ruleset_find(fx->rs, "t.a"))), 65514);

	/*
	 * An expression keeps each continuation's newline and padding: "value =
	 * 1" is 1 byte, and each "  " + "+ 1" x 47 line (187 bytes of text) adds
	 * 1 + 2 + 187 = 190. After 344 lines 1 + 344 x 190 = 65361; the 345th
	 * makes 65551 > 65536, on line 2 + 345 = 347.
	 */
	len = (size_t)sprintf(big, "[t.a]\nvalue = 1\n");
	for (int i = 0; i < 345; i++) {
		len += (size_t)sprintf(big + len, "  + 1");
		for (int j = 1; j < 47; j++)
			len += (size_t)sprintf(big + len, " + 1");
		big[len++] = '\n';
	}
	big[len] = '\0';
	assert_int_equal(load(fx, big), -EINVAL);
	assert_err(fx, "a.rules:347:3: 'value' is longer than 65536 bytes");

	/* A file of 1 MiB loads; one byte more does not. */
	len = (size_t)sprintf(big, "[t.a]\nvalue = 1\n");
	while (len < 1024 * 1024) {
		size_t n = 1024 * 1024 - len < 100 ? 1024 * 1024 - len : 100;

		memset(big + len, '#', n - 1);
		big[len + n - 1] = '\n';
		len += n;
	}
	big[len] = '\0';
	assert_int_equal(len, 1024 * 1024);
	load_ok(fx, big);
	big[len++] = '\n';
	big[len] = '\0';
	assert_int_equal(load(fx, big), -EFBIG);
	assert_err(fx, "a.rules: larger than 1 MiB");
	assert_null(fx->rs);
	load_one_rule(fx);
	ht_test_put_file(fx->dir, "profiles/big.profile", big);
	profile_fails(fx, "big", -EFBIG, "profiles/big.profile: larger than 1 MiB");
	free(big);
}

/* ---- the search path ---- */

/*
 * A site's override of one rule: a later directory's rule of the same id
 * replaces the earlier one in its place of the load order, whichever file
 * of the later directory defines it and whichever file is read first; two
 * of one directory stay an error. A /dev/null link masks a file of an
 * earlier directory, rules and profiles alike.
 */
static void test_site_override(void **state)
{
	struct fx *fx = *state;
	_cleanup_free_ char *one = NULL, *two = NULL, *file = NULL, *link = NULL, *want = NULL;
	const struct ht_rule *r;

	assert_true(asprintf(&one, "%s/one", fx->dir) > 0);
	assert_true(asprintf(&two, "%s/two", fx->dir) > 0);
	ht_test_put_file(one, "m.rules", "[t.a]\nvalue = 1\n[t.b]\nvalue = t.a + 10\n[t.c]\nvalue = 3\n");
	/* "a-site" is read before "m" (file-name order), "z-site" after it. */
	ht_test_put_file(two, "a-site.rules", "# site\n[t.b]\nvalue = t.a + 20\n");
	ht_test_put_file(two, "z-site.rules", "[t.c]\nvalue = 30\n[t.d]\nvalue = 4\n");
	{
		const char *dirs[] = { one, two };

		assert_int_equal(ht_ruleset_load(dirs, 2, &fx->rs, &fx->err), 0);
	}
	/* t.a, t.b, t.c in m.rules' order, then t.d: four rules, not six. */
	assert_int_equal(ht_ruleset_rule_count(fx->rs), 4);
	assert_string_equal(ht_rule_id(ht_ruleset_rule_at(fx->rs, 0)), "t.a");
	r = ht_ruleset_rule_at(fx->rs, 1);
	assert_string_equal(ht_rule_id(r), "t.b");
	assert_true(asprintf(&file, "%s/a-site.rules", two) > 0);
	assert_string_equal(ht_rule_pos(r)->file, file);
	assert_int_equal(ht_rule_pos(r)->line, 2);
	r = ht_ruleset_rule_at(fx->rs, 2);
	assert_string_equal(ht_rule_id(r), "t.c");
	free(TAKE_PTR(file));
	assert_true(asprintf(&file, "%s/z-site.rules", two) > 0);
	assert_string_equal(ht_rule_pos(r)->file, file);
	assert_string_equal(ht_rule_id(ht_ruleset_rule_at(fx->rs, 3)), "t.d");
	assert_ptr_equal(ht_ruleset_find(fx->rs, "t.b"), ht_ruleset_rule_at(fx->rs, 1));
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), 0);
	evaluate_ok(fx);
	/* The site's t.b: 1 + 20 = 21 (the shipped one would say 11); t.c 30, not 3. */
	assert_int_equal(value_int(fx, "t.b"), 21);
	assert_int_equal(value_int(fx, "t.c"), 30);
	ht_findings_free(&fx->fd);
	ht_ruleset_free(TAKE_PTR(fx->rs));

	/* Twice in the later directory: still the duplicate error, naming its first place. */
	ht_test_put_file(two, "z-site.rules", "[t.b]\nvalue = 5\n");
	{
		const char *dirs[] = { one, two };

		assert_int_equal(ht_ruleset_load(dirs, 2, &fx->rs, &fx->err), -EINVAL);
		assert_null(fx->rs);
		assert_true(asprintf(&want, "%s/z-site.rules:1:2: duplicate rule id 't.b' "
		                            "(first at %s/a-site.rules:2)", two, two) > 0);
		assert_string_equal(fx->err.msg, want);
		free(TAKE_PTR(want));
	}
	assert_int_equal(unlink(file), 0);

	/* A mask: two/m.rules -> /dev/null; one/m.rules is not read, two's rules are. */
	assert_true(asprintf(&link, "%s/m.rules", two) > 0);
	assert_int_equal(symlink("/dev/null", link), 0);
	ht_test_put_file(two, "a-site.rules", "[t.e]\nvalue = 5\n");
	{
		const char *dirs[] = { one, two };

		assert_int_equal(ht_ruleset_load(dirs, 2, &fx->rs, &fx->err), 0);
	}
	assert_int_equal(ht_ruleset_rule_count(fx->rs), 1);
	assert_string_equal(ht_rule_id(ht_ruleset_rule_at(fx->rs, 0)), "t.e");
	assert_null(ht_ruleset_find(fx->rs, "t.a"));

	/* A masked profile is named as such. */
	ht_test_put_file(one, "profiles/p.profile", "[workload]\nx = 1\n");
	free(TAKE_PTR(link));
	assert_true(asprintf(&link, "%s/profiles", two) > 0);
	assert_int_equal(mkdir(link, 0755), 0);
	free(TAKE_PTR(link));
	assert_true(asprintf(&link, "%s/profiles/p.profile", two) > 0);
	assert_int_equal(symlink("/dev/null", link), 0);
	assert_int_equal(ht_ruleset_load_profile(fx->rs, "p", &fx->err), -ENOENT);
	assert_true(asprintf(&want, "profile 'p' is masked: %s is a link to /dev/null", link) > 0);
	assert_string_equal(fx->err.msg, want);
}

static void test_search_path(void **state)
{
	struct fx *fx = *state;
	_cleanup_free_ char *one = NULL, *none = NULL, *two = NULL, *file = NULL;
	const struct ht_rule *r;

	assert_true(asprintf(&one, "%s/one", fx->dir) > 0);
	assert_true(asprintf(&none, "%s/none", fx->dir) > 0);
	assert_true(asprintf(&two, "%s/two", fx->dir) > 0);
	ht_test_put_file(one, "a.rules", "[t.a]\nvalue = 1\n");
	ht_test_put_file(one, "b.rules", "[t.b]\nvalue = 2\n");
	ht_test_put_file(one, "profiles/p.profile", "[workload]\nx = 1\n");
	ht_test_put_file(two, "b.rules", "# the local copy\n[t.b]\nvalue = 3\n");
	ht_test_put_file(two, "profiles/p.profile", "[workload]\nx = 2\n");

	{
		const char *dirs[] = { one, none, two };

		assert_int_equal(ht_ruleset_load(dirs, 3, &fx->rs, &fx->err), 0);
	}
	assert_int_equal(ht_ruleset_rule_count(fx->rs), 2);
	r = ht_ruleset_rule_at(fx->rs, 0);
	assert_string_equal(ht_rule_id(r), "t.a");
	assert_true(asprintf(&file, "%s/a.rules", one) > 0);
	assert_string_equal(ht_rule_pos(r)->file, file);
	free(TAKE_PTR(file));
	/* two/b.rules replaced one/b.rules: t.b is defined once, from line 2 of two's copy. */
	r = ht_ruleset_rule_at(fx->rs, 1);
	assert_string_equal(ht_rule_id(r), "t.b");
	assert_true(asprintf(&file, "%s/b.rules", two) > 0);
	assert_string_equal(ht_rule_pos(r)->file, file);
	assert_int_equal(ht_rule_pos(r)->line, 2);
	assert_null(ht_ruleset_rule_at(fx->rs, 2));

	/* Profiles follow the same rule. */
	assert_int_equal(ht_ruleset_load_profile(fx->rs, "p", &fx->err), 0);
	assert_int_equal(var(fx->rs, "workload.x")->i, 2);

	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), 0);
	evaluate_ok(fx);
	assert_int_equal(value_int(fx, "t.b"), 3);
	ht_ruleset_free(TAKE_PTR(fx->rs));

	/* Nothing to read at all: neither a missing directory nor an empty one has rules. */
	ht_test_put_file(fx->dir, "empty/README", "no rules here\n");
	{
		_cleanup_free_ char *empty = NULL, *want = NULL;
		const char *dirs[2] = { none, NULL };

		assert_true(asprintf(&empty, "%s/empty", fx->dir) > 0);
		dirs[1] = empty;
		assert_int_equal(ht_ruleset_load(dirs, 2, &fx->rs, &fx->err), -ENOENT);
		assert_null(fx->rs);
		assert_true(asprintf(&want, "no *.rules file found in the rules search path "
		                            "starting at %s", none) > 0);
		assert_string_equal(fx->err.msg, want);
	}
}

/* ---- the shipped rules ---- */

/* The field's Garage VM: 480 MiB of RAM, one CPU, a 5.15 kernel and the kernel's default table. */
static void garage_vm_facts(struct fx *fx)
{
	struct ht_value v = { .type = HT_T_VER };

	ht_test_fact_int(fx->facts, "mem.total", 503316480);
	assert_int_equal(ht_version_parse("5.15.0", &v.v, NULL), 0);
	assert_int_equal(ht_facts_set(fx->facts, "kernel.version", &v, NULL, NULL), 0);
	ht_test_fact_int(fx->facts, "kernel.pointer_size", 8);
	ht_test_fact_int(fx->facts, "kernel.page_size", 4096);
	ht_test_fact_int(fx->facts, "cpu.count", 1);
	ht_test_fact_int(fx->facts, NF_MAX, 4096);
	ht_test_fact_int(fx->facts, "net.netfilter.nf_conntrack_buckets", 4096);
	ht_test_fact_int(fx->facts, NF_COUNT, 4096);
	ht_test_fact_int(fx->facts, NF_TW, 120);
	ht_test_fact_int(fx->facts, "module.nf_conntrack.hashsize", 4096);
	v = ht_bool(true);
	assert_int_equal(ht_facts_set(fx->facts, "netns.initial", &v, NULL, NULL), 0);
	/* ctnetlink counters of the field's VM (../shared/fixtures/README.md) */
	ht_test_fact_int(fx->facts, "conntrack.stat.drop", 5937);
	ht_test_fact_int(fx->facts, "conntrack.stat.early_drop", 77);
	ht_test_fact_int(fx->facts, "conntrack.stat.insert_failed", 0);
	/* a CPU with AES-NI in use, no network interfaces */
	assert_int_equal(ht_facts_set(fx->facts, "cpu.aes.flag", &v, NULL, NULL), 0);
	assert_int_equal(ht_facts_set(fx->facts, "cpu.pclmul.flag", &v, NULL, NULL), 0);
	assert_int_equal(ht_facts_set(fx->facts, "cpu.aes.hw", &v, NULL, NULL), 0);
	v = ht_dec(4000.0);
	assert_int_equal(ht_facts_set(fx->facts, "cpu.aes.gcm_mbps", &v, NULL, NULL), 0);
	v = ht_dec(1500.0);
	assert_int_equal(ht_facts_set(fx->facts, "cpu.chacha.mbps", &v, NULL, NULL), 0);
	v = (struct ht_value){ .type = HT_T_STR, .s = (char *)"" };
	assert_int_equal(ht_facts_set(fx->facts, "nic.list", &v, NULL, NULL), 0);
	/* no network namespace but its own */
	assert_int_equal(ht_facts_set(fx->facts, "netns.list", &v, NULL, NULL), 0);
	ht_test_fact_int(fx->facts, "netns.skipped", 0);
	/* no reverse proxy in front of the store */
	assert_int_equal(ht_facts_set(fx->facts, "proxy.list", &v, NULL, NULL), 0);
	/* The connection path: no listening port, no process, no client socket. */
	assert_int_equal(ht_facts_set(fx->facts, "listener.list", &v, NULL, NULL), 0);
	assert_int_equal(ht_facts_set(fx->facts, "process.list", &v, NULL, NULL), 0);
	{
		static const struct {
			const char *name;
			int64_t v;
		} conn[] = {
			{ "net.core.somaxconn", 4096 },
			{ "net.ipv4.tcp_max_syn_backlog", 512 }, { "nstat.TcpExtListenOverflows", 0 },
			{ "nstat.TcpExtListenDrops", 0 }, { "nstat.TcpExtTCPReqQFullDrop", 0 },
			{ "nstat.TcpExtTCPTimeWaitOverflow", 0 }, { "net.ipv4.tcp_tw_reuse", 2 },
			{ "net.ipv4.tcp_timestamps", 1 }, { "net.ipv4.tcp_max_tw_buckets", 4096 },
			{ "ports.range.low", 32768 }, { "ports.range.high", 60999 },
			{ "ports.top.sockets", 0 }, { "ports.top.time_wait", 0 },
			{ "ports.time_wait", 0 }, { "conntrack.dump.entries", 0 },
			{ "conntrack.dump.tcp", 0 }, { "conntrack.stale.established", 0 },
			{ "conntrack.state.NONE", 0 }, { "conntrack.state.SYN_SENT", 0 },
			{ "conntrack.state.SYN_RECV", 0 }, { "conntrack.state.ESTABLISHED", 0 },
			{ "conntrack.state.FIN_WAIT", 0 }, { "conntrack.state.CLOSE_WAIT", 0 },
			{ "conntrack.state.LAST_ACK", 0 }, { "conntrack.state.TIME_WAIT", 0 },
			{ "conntrack.state.CLOSE", 0 }, { "conntrack.state.SYN_SENT2", 0 },
			{ "net.netfilter.nf_conntrack_tcp_timeout_established", 432000 },
			{ "net.netfilter.nf_conntrack_tcp_timeout_close_wait", 60 },
			{ "net.netfilter.nf_conntrack_tcp_timeout_syn_sent", 120 },
			{ "net.netfilter.nf_conntrack_tcp_timeout_fin_wait", 120 },
		};

		for (size_t i = 0; i < ARRAY_SIZE(conn); i++)
			ht_test_fact_int(fx->facts, conn[i].name, conn[i].v);
	}
}

static void load_shipped(struct fx *fx, const char *profile, const char *set)
{
	const char *dirs[] = { RULES_DIR };

	ht_findings_free(&fx->fd);
	ht_ruleset_free(fx->rs);
	fx->rs = NULL;
	assert_int_equal(ht_ruleset_load(dirs, 1, &fx->rs, &fx->err), 0);
	assert_int_equal(ht_ruleset_load_profile(fx->rs, profile, &fx->err), 0);
	if (set)
		assert_int_equal(ht_ruleset_set_var(fx->rs, set, &fx->err), 0);
	if (ht_ruleset_check(fx->rs, &fx->err) < 0)
		fail_msg("check: %s", fx->err.msg);
	evaluate_ok(fx);
	/*
	 * Every fact the rules use is there, so everything applies and renders
	 * completely, but for the per-interface rules: nic.list names no
	 * interface, so each of them is one not-applicable finding that says so.
	 */
	for (size_t i = 0; i < fx->fd.n; i++) {
		const struct ht_finding *f = &fx->fd.items[i];

		if (ht_rule_each_nic(f->rule)) {
			assert_false(f->applicable);
			assert_null(f->instance);
			assert_string_equal(f->reason, "no network interface to check: nic.list names "
			                    "none other than lo");
			continue;
		}
		if (!f->applicable)
			fail_msg("%s: not applicable: %s", ht_rule_id(f->rule), f->reason);
		assert_non_null(f->explanation);
		assert_null(strstr(f->explanation, "(unavailable)"));
	}
}

static void test_shipped_rules(void **state)
{
	struct fx *fx = *state;
	const struct ht_finding *f;

	garage_vm_facts(fx);

	/*
	 * The kernel's default for 480 MiB on 5.15: 503316480 / 16384 / 8 = 3840
	 * buckets, above the floor of 1024, rounded up to a multiple of 4096 / 8 =
	 * 512: 4096; the 5.15+ max is 1 x buckets.
	 */
	load_shipped(fx, "default", NULL);
	assert_int_equal(value_int(fx, "conntrack.default.scaled"), 3840);
	assert_int_equal(value_int(fx, "conntrack.default.buckets"), 4096);
	assert_int_equal(value_int(fx, "conntrack.default.max"), 4096);
	/*
	 * In file-name order: conntrack-states.rules: states, established_timeout,
	 * close_wait_timeout, syn_sent (4); conntrack.rules: max, time_wait,
	 * buckets, chain_length, drops (5); cpu.rules: cpu.aes (1); listen.rules:
	 * somaxconn, and no listen.backlog (listener.list is empty) (1);
	 * nic.rules: nic.list is empty, so nic.queues is one n/a finding;
	 * nic.queues_hypervisor needs cpu.count > 1 (here 1) and nic.link_speed a
	 * storage profile (default is not): no finding whatever the interfaces
	 * (1); ports.rules: ephemeral, tw_reuse, tw_buckets (3); process.rules:
	 * none (process.list is empty). 4 + 5 + 1 + 1 + 1 + 3 = 15.
	 */
	assert_int_equal(fx->fd.n, 15);
	assert_string_equal(ht_rule_id(fx->fd.items[11].rule), "nic.queues");
	/* No listener, no client socket, an empty table of states: all ok. */
	assert_int_equal(finding(fx, "conntrack.states")->severity, HT_SEV_OK);
	assert_int_equal(finding(fx, "listen.somaxconn")->severity, HT_SEV_OK);
	assert_int_equal(finding(fx, "ports.ephemeral")->severity, HT_SEV_OK);
	/* default: 100/s x 120 s x 2 = 24000 -> 32768; 4096 / 120 = 34/s < 100/s. */
	f = finding(fx, "conntrack.max");
	assert_int_equal(f->recommended.i, 32768);
	assert_int_equal(f->severity, HT_SEV_CRITICAL);
	f = finding(fx, "conntrack.time_wait");
	assert_int_equal(f->recommended.i, 120);
	assert_int_equal(f->severity, HT_SEV_OK);

	load_shipped(fx, "garage", "workload.conn_rate=570");
	assert_int_equal(value_int(fx, "conntrack.default.buckets"), 4096);
	assert_int_equal(value_int(fx, "conntrack.default.max"), 4096);
	/* 570/s x 30 s x 3 = 51300 entries, next power of two 65536. */
	assert_int_equal(value_int(fx, "conntrack.working_set"), 51300);
	/* floor(503316480 x 0.05) = 25165824 bytes / (320 + 8) = 76725 -> pow2floor 65536. */
	assert_int_equal(value_int(fx, "conntrack.budget_bytes"), 25165824);
	assert_int_equal(value_int(fx, "conntrack.budget_max"), 65536);
	/* garage is a storage profile: nic.link_speed joins nic.queues as n/a (16). */
	assert_int_equal(fx->fd.n, 16);
	assert_string_equal(ht_rule_id(fx->fd.items[11].rule), "nic.queues");
	assert_string_equal(ht_rule_id(fx->fd.items[12].rule), "nic.link_speed");
	assert_string_equal(ht_rule_id(fx->fd.items[4].rule), "conntrack.max");
	assert_string_equal(ht_rule_id(fx->fd.items[5].rule), "conntrack.time_wait");
	assert_string_equal(ht_rule_id(fx->fd.items[6].rule), "conntrack.buckets");
	assert_string_equal(ht_rule_id(fx->fd.items[7].rule), "conntrack.chain_length");
	assert_string_equal(ht_rule_id(fx->fd.items[8].rule), "conntrack.drops");
	assert_string_equal(ht_rule_id(fx->fd.items[9].rule), "cpu.aes");

	/* drop 5937 + early_drop 77 = 6014 since boot, count 4096 = max: critical. */
	f = finding(fx, "conntrack.drops");
	assert_int_equal(f->current.i, 6014);
	assert_int_equal(f->severity, HT_SEV_CRITICAL);
	assert_non_null(strstr(f->explanation, "dropped 5937 packets"));

	/* AES-GCM 4000 MB/s >= ChaCha20 1500 MB/s: hardware, ok. */
	assert_int_equal(finding(fx, "cpu.aes")->severity, HT_SEV_OK);

	/* max(min(65536, 65536), 4096); 4096 / 120 = 34/s is far below 570/s. */
	f = finding(fx, "conntrack.max");
	assert_int_equal(f->current.i, 4096);
	assert_int_equal(f->recommended.type, HT_T_INT);
	assert_int_equal(f->recommended.i, 65536);
	assert_int_equal(f->severity, HT_SEV_CRITICAL);
	assert_false(f->kept);
	assert_non_null(strstr(f->explanation, "The budget of 5% of RAM (24 MiB)"));

	/* min(120, 30s); the host's 120 s is longer than recommended. */
	f = finding(fx, "conntrack.time_wait");
	assert_int_equal(f->current.i, 120);
	assert_int_equal(f->recommended.i, 30);
	assert_int_equal(f->severity, HT_SEV_WARNING);

	/* 65536 / 512 pages of heads x 512; 2 x 65536 / 4096 = 32 a chain, above 8. */
	f = finding(fx, "conntrack.buckets");
	assert_int_equal(f->current.i, 4096);
	assert_int_equal(f->recommended.i, 65536);
	assert_int_equal(f->severity, HT_SEV_WARNING);

	/* Now 2 x 4096 / 4096 = 2 a chain, and 2 with the recommendations. */
	f = finding(fx, "conntrack.chain_length");
	assert_int_equal(f->current.i, 2);
	assert_int_equal(f->recommended.i, 2);
	assert_int_equal(f->severity, HT_SEV_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_evaluate_sysctl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_when_false, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plural, setup, teardown),
		cmocka_unit_test_setup_teardown(test_secs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_each_listener_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aggregates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_each_nic_without_interfaces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unavailable_fact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_direction_raise, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remedy_lever, setup, teardown),
		cmocka_unit_test_setup_teardown(test_target_integer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_multiline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ini_syntax, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_rule_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_division_by_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overflow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workload_ranges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlimited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_follows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_owner_source, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_severity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile_include, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile_vars, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rules_file_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rules_file_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_search_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_site_override, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shipped_rules, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
