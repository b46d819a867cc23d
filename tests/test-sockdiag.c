/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
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

#include "collect/collect.h"
#include "engine/facts.h"
#include "shared/util.h"
#include "engine/value.h"
#include "test-util.h"

/*
 * The socket, process and nstat collectors (collect/collect-sockdiag.c):
 * their parsers, and the listen-host fixture tree (a small host with
 * /proc/net/tcp and tcp6, three garage processes and an sshd) collected
 * under --root. The live NETLINK_SOCK_DIAG path is tests/netns-listen.sh's.
 */

static void assert_int_fact(const struct ht_facts *f, const char *name, int64_t want,
                            const char *unit, const char *source)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	if (fact->value.type != HT_T_INT)
		fail_msg("%s: not an integer (error %d, source %s)", name, fact->error,
		         fact->source ? fact->source : "-");
	if (fact->value.i != want)
		fail_msg("%s = %lld, expected %lld", name, (long long)fact->value.i, (long long)want);
	ht_test_assert_str_or_null(fact->unit, unit);
	ht_test_assert_str_or_null(fact->source, source);
}

static void assert_str_fact(const struct ht_facts *f, const char *name, const char *want,
                            const char *source)
{
	const struct ht_fact *fact = ht_test_fact(f, name);

	if (fact->value.type != HT_T_STR)
		fail_msg("%s: not a string (error %d)", name, fact->error);
	assert_string_equal(fact->value.s, want);
	assert_null(fact->unit);
	ht_test_assert_str_or_null(fact->source, source);
}

static void assert_unavailable(const struct ht_facts *f, const char *name, int errnum,
                               const char *source)
{
	const struct ht_fact *fact = ht_test_fact(f, name);
	const struct ht_fact_def *def = ht_fact_def_find(name);

	assert_int_equal(fact->value.type, HT_T_NONE);
	assert_int_equal(fact->error, errnum);
	assert_non_null(def);
	ht_test_assert_str_or_null(fact->unit, def->unit);
	if (source)
		ht_test_assert_str_or_null(fact->source, source);
}

/* ---- /proc/net/tcp lines ---- */

/* The 4 bytes a "%08X" word of /proc/net/tcp stands for on this CPU (its own byte order). */
static void word_bytes(uint32_t w, uint8_t out[4])
{
	memcpy(out, &w, 4);
}

static void test_tcp_line(void **state)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	struct ht_sock s;
	uint8_t b[4];

	(void)state;
	/* A listener of get_tcp4_sock(): 0.0.0.0:0x0F3C = 3900, state 0x0A LISTEN,
	 * rx_queue 0x11 = 17 (its accept queue), inode 40001. */
	assert_int_equal(ht_proc_net_tcp_line(
		"   0: 00000000:0F3C 00000000:0000 0A 00000000:00000011 00:00000000 00000000     0 "
		"       0 40001 1 ffff8d6c41a2b000 100 0 0 10 0\n", false, &s), 0);
	assert_int_equal(s.state, 10);
	assert_int_equal(s.sport, 3900);
	assert_int_equal(s.dport, 0);
	assert_int_equal(s.rqueue, 17);
	assert_int_equal(s.wqueue, 0);
	assert_true(s.inode == 40001);
	/* IPv4 addresses are kept IPv4-mapped: ::ffff:0.0.0.0 */
	assert_memory_equal(s.src, mapped, 12);
	assert_memory_equal(s.src + 12, "\0\0\0\0", 4);

	/* A TIME_WAIT socket of get_timewait4_sock(): 0x0500000A:0x9C40 (40000) ->
	 * 0x0900000A:0x0F3C (3900), state 06, inode 0. */
	assert_int_equal(ht_proc_net_tcp_line(
		"  95: 0500000A:9C40 0900000A:0F3C 06 00000000:00000000 03:00001A2B 00000000     0 "
		"       0 0 0 0000000000000000", false, &s), 0);
	assert_int_equal(s.state, 6);
	assert_int_equal(s.sport, 40000);
	assert_int_equal(s.dport, 3900);
	assert_true(s.inode == 0);
	word_bytes(0x0500000Au, b);
	assert_memory_equal(s.src + 12, b, 4);
	word_bytes(0x0900000Au, b);
	assert_memory_equal(s.dst + 12, b, 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* On a little-endian CPU "0500000A" is 10.0.0.5. */
	assert_memory_equal(s.src + 12, "\x0a\x00\x00\x05", 4);
#endif

	/* tcp6: ::1 is the words 0, 0, 0, htonl(1), printed as native integers. */
	{
		char line[256];
		uint32_t one_be;

		word_bytes(1, b);
		one_be = 0;
		memcpy(&one_be, "\0\0\0\1", 4);
		snprintf(line, sizeof(line),
		         "   1: 000000000000000000000000%08X:1F90 00000000000000000000000000000000:0000 "
		         "0A 00000000:00000000 00:00000000 00000000   998        0 777 1 0 100 0 0 10 0",
		         (unsigned)one_be);
		assert_int_equal(ht_proc_net_tcp_line(line, true, &s), 0);
		assert_int_equal(s.sport, 8080); /* 0x1F90 = 8080 */
		assert_memory_equal(s.src, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16);
		assert_true(s.inode == 777);
	}

	/* Not socket lines. */
	assert_int_equal(ht_proc_net_tcp_line("  sl  local_address rem_address   st tx_queue "
	                                      "rx_queue tr tm->when retrnsmt   uid  timeout inode",
	                                      false, &s), -EINVAL);
	assert_int_equal(ht_proc_net_tcp_line("", false, &s), -EINVAL);
	/* The inode missing. */
	assert_int_equal(ht_proc_net_tcp_line("   0: 00000000:0F3C 00000000:0000 0A 00000000:00000000 "
	                                      "00:00000000 00000000     0        0", false, &s),
	                 -EINVAL);
	/* A "g" in an address; a tcp6 line read as tcp (the address too long). */
	assert_int_equal(ht_proc_net_tcp_line("   0: 0000000g:0F3C 00000000:0000 0A 00000000:00000000 "
	                                      "00:00000000 00000000 0 0 1", false, &s), -EINVAL);
	assert_int_equal(ht_proc_net_tcp_line("   1: 00000000000000000000000001000000:1F90 "
	                                      "00000000000000000000000000000000:0000 0A "
	                                      "00000000:00000000 00:00000000 00000000 0 0 7",
	                                      false, &s), -EINVAL);
}

static void test_port_range(void **state)
{
	int64_t lo, hi;

	(void)state;
	/* proc_dointvec_minmax of two ints prints "LOW\tHIGH\n". */
	assert_int_equal(ht_port_range("32768\t60999", &lo, &hi), 0);
	assert_true(lo == 32768 && hi == 60999);
	assert_int_equal(ht_port_range("40000 40099\n", &lo, &hi), 0);
	assert_true(lo == 40000 && hi == 40099);
	assert_int_equal(ht_port_range("1024\t1024", &lo, &hi), 0);
	assert_true(lo == 1024 && hi == 1024);
	assert_int_equal(ht_port_range("60999\t32768", &lo, &hi), -EINVAL);
	assert_int_equal(ht_port_range("0\t100", &lo, &hi), -EINVAL);
	assert_int_equal(ht_port_range("1\t65536", &lo, &hi), -EINVAL);
	assert_int_equal(ht_port_range("32768", &lo, &hi), -EINVAL);
	assert_int_equal(ht_port_range("32768\t60999 5", &lo, &hi), -EINVAL);
	assert_int_equal(ht_port_range("", &lo, &hi), -EINVAL);
}

static void test_limits(void **state)
{
	static const char limits[] =
		"Limit                     Soft Limit           Hard Limit           Units     \n"
		"Max cpu time              unlimited            unlimited            seconds   \n"
		"Max processes             7651                 7651                 processes \n"
		"Max open files            1024                 524288               files     \n"
		"Max locked memory         8388608              8388608              bytes     \n";
	int64_t soft, hard;

	(void)state;
	assert_int_equal(ht_limits_nofile(limits, &soft, &hard), 0);
	assert_true(soft == 1024 && hard == 524288);
	assert_int_equal(ht_limits_nofile("Max open files            unlimited            unlimited"
	                                  "            files     \n", &soft, &hard), 0);
	assert_true(soft == INT64_MAX && hard == INT64_MAX);
	assert_int_equal(ht_limits_nofile("Max processes 1 1 processes\n", &soft, &hard), -ENOENT);
	assert_int_equal(ht_limits_nofile("Max open files            lots 2 files\n", &soft, &hard),
	                 -EINVAL);
	assert_int_equal(ht_limits_nofile("Max open files            1024\n", &soft, &hard),
	                 -EINVAL);
	/* "Max open filesystems" is not the line. */
	assert_int_equal(ht_limits_nofile("Max open filesystems 1 2\n", &soft, &hard), -ENOENT);
}

static void assert_unit(const char *cgroup, const char *want)
{
	_cleanup_free_ char *unit = NULL;

	assert_int_equal(ht_cgroup_unit(cgroup, &unit, NULL), 0);
	assert_string_equal(unit, want);
}

static void test_cgroup(void **state)
{
	char *unit = NULL, *manager = NULL;

	(void)state;
	/* cgroup v2: the one "0::" line. */
	assert_unit("0::/system.slice/garage.service\n", "garage.service");
	/* A service's sub-cgroup: the last *.service component. */
	assert_unit("0::/system.slice/garage.service/payload\n", "garage.service");
	/*
	 * A user's service manager runs the user's services: no system unit,
	 * ENOENT with the manager named. The manager itself is a system unit.
	 */
	assert_int_equal(ht_cgroup_unit("0::/user.slice/user-1000.slice/user@1000.service/app.slice/"
	                                "garage.service\n", &unit, &manager), -ENOENT);
	assert_null(unit);
	assert_string_equal(manager, "user@1000.service");
	free(manager);
	manager = NULL;
	assert_unit("0::/user.slice/user-1000.slice/user@1000.service/init.scope\n",
	            "user@1000.service");
	/* cgroup v1: name=systemd. */
	assert_unit("12:pids:/system.slice/ssh.service\n11:memory:/\n"
	            "1:name=systemd:/system.slice/ssh.service\n", "ssh.service");
	/* Hybrid: 0:: names no service, name=systemd does. */
	assert_unit("1:name=systemd:/system.slice/cron.service\n0::/\n", "cron.service");
	/* No service: a session scope, the root, a docker scope, a controller line only. */
	assert_int_equal(ht_cgroup_unit("0::/user.slice/user-1000.slice/session-3.scope\n", &unit, NULL),
	                 -ENOENT);
	assert_int_equal(ht_cgroup_unit("0::/\n", &unit, NULL), -ENOENT);
	assert_int_equal(ht_cgroup_unit("0::/system.slice/docker-0123.scope\n", &unit, NULL), -ENOENT);
	assert_int_equal(ht_cgroup_unit("4:memory:/system.slice/x.service\n", &unit, NULL), -ENOENT);
	/* ".service" alone is no unit name. */
	assert_int_equal(ht_cgroup_unit("0::/system.slice/.service\n", &unit, NULL), -ENOENT);
	assert_null(unit);
}

static void test_nstat(void **state)
{
	/* Shortened /proc/net/netstat and /proc/net/snmp: header and value line pairs. */
	static const char text[] =
		"TcpExt: SyncookiesSent TW ListenOverflows ListenDrops\n"
		"TcpExt: 3 1200 37 41\n"
		"IpExt: InNoRoutes InTruncatedPkts\n"
		"IpExt: 5 6\n"
		"Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens\n"
		"Tcp: 1 200 120000 -1 5120 30211\n";
	int64_t v;

	(void)state;
	assert_int_equal(ht_nstat_value(text, "TcpExt", "ListenOverflows", &v), 0);
	assert_true(v == 37);
	assert_int_equal(ht_nstat_value(text, "TcpExt", "ListenDrops", &v), 0);
	assert_true(v == 41);
	assert_int_equal(ht_nstat_value(text, "TcpExt", "TW", &v), 0);
	assert_true(v == 1200);
	/* "Tcp" is its own section, not a prefix of "TcpExt". */
	assert_int_equal(ht_nstat_value(text, "Tcp", "ActiveOpens", &v), 0);
	assert_true(v == 5120);
	assert_int_equal(ht_nstat_value(text, "Tcp", "PassiveOpens", &v), 0);
	assert_true(v == 30211);
	assert_int_equal(ht_nstat_value(text, "Tcp", "ListenOverflows", &v), -ENOENT);
	/* MaxConn is -1 (a signed field): not a counter. */
	assert_int_equal(ht_nstat_value(text, "Tcp", "MaxConn", &v), -EINVAL);
	assert_int_equal(ht_nstat_value(text, "TcpExt", "TCPReqQFullDrop", &v), -ENOENT);
	assert_int_equal(ht_nstat_value(text, "Udp", "InDatagrams", &v), -ENOENT);
	/* A header without its value line; a value line one value short. */
	assert_int_equal(ht_nstat_value("TcpExt: TW\n", "TcpExt", "TW", &v), -EINVAL);
	assert_int_equal(ht_nstat_value("TcpExt: TW\nIpExt: 1\n", "TcpExt", "TW", &v), -EINVAL);
	assert_int_equal(ht_nstat_value("TcpExt: A TW\nTcpExt: 1\n", "TcpExt", "TW", &v), -EINVAL);
}

static void test_sockstat(void **state)
{
	/* /proc/net/sockstat as sockstat_seq_show() (net/ipv4/proc.c) prints it. */
	static const char text[] = "sockets: used 312\n"
	                           "TCP: inuse 27 orphan 0 tw 1186 alloc 30 mem 4\n"
	                           "UDP: inuse 3 mem 2\n"
	                           "UDPLITE: inuse 0\n";
	int64_t v;

	(void)state;
	assert_int_equal(ht_sockstat_value(text, "TCP", "inuse", &v), 0);
	assert_true(v == 27);
	assert_int_equal(ht_sockstat_value(text, "TCP", "tw", &v), 0);
	assert_true(v == 1186);
	assert_int_equal(ht_sockstat_value(text, "TCP", "mem", &v), 0);
	assert_true(v == 4);
	/* "UDP" is its own line, not "UDPLITE"'s prefix. */
	assert_int_equal(ht_sockstat_value(text, "UDP", "inuse", &v), 0);
	assert_true(v == 3);
	assert_int_equal(ht_sockstat_value(text, "UDPLITE", "inuse", &v), 0);
	assert_true(v == 0);
	assert_int_equal(ht_sockstat_value(text, "TCP", "nosuch", &v), -ENOENT);
	assert_int_equal(ht_sockstat_value(text, "RAW", "inuse", &v), -ENOENT);
	/* A key without its value, a value that is no count. */
	assert_int_equal(ht_sockstat_value("TCP: inuse\n", "TCP", "inuse", &v), -EINVAL);
	assert_int_equal(ht_sockstat_value("TCP: inuse -1 tw 0\n", "TCP", "inuse", &v), -EINVAL);
	assert_int_equal(ht_sockstat_value("TCP: inuse 1x tw 0\n", "TCP", "inuse", &v), -EINVAL);
	assert_int_equal(ht_sockstat_value(NULL, "TCP", "inuse", &v), -EINVAL);
}

/* ---- the listen-host tree ---- */

static char *fixture_root(void)
{
	char *p;

	assert_true(asprintf(&p, "%s/listen-host/root", ht_test_fixtures_dir()) > 0);
	return p;
}

/*
 * Owners asked for one port at a time, in any order, give what the whole
 * walk gives (test_listen_host: 3900 and 3901 are 1234's, no process holds
 * 22's socket); a port that does not listen gets nothing; addresses are a
 * fact only when asked.
 */
static void test_owners_on_demand(void **state)
{
	_cleanup_free_ char *root = fixture_root();
	static const unsigned orders[][3] = { { 3901, 22, 3900 }, { 22, 3900, 3901 } };

	(void)state;
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	skip(); /* the tree's /proc/net/tcp comes from a little-endian host */
#endif
	for (size_t o = 0; o < ARRAY_SIZE(orders); o++) {
		struct ht_facts *f = ht_facts_new();
		struct ht_listeners *l = NULL;

		assert_non_null(f);
		assert_int_equal(ht_collect_listeners(f, root, &l), 0);
		assert_non_null(l);
		assert_str_fact(f, "listener.list", "22 3900 3901", "/proc/net/tcp and tcp6");
		assert_null(ht_facts_get(f, "listener.3900.pid"));
		assert_null(ht_facts_get(f, "listener.3900.addresses"));
		for (size_t k = 0; k < 3; k++)
			assert_int_equal(ht_listeners_owner(f, l, orders[o][k]), 0);
		assert_int_fact(f, "listener.3900.pid", 1234, NULL, "/proc/1234/fd");
		assert_str_fact(f, "listener.3900.process", "garage", "/proc/1234/comm");
		assert_int_fact(f, "listener.3901.pid", 1234, NULL, "/proc/1234/fd");
		assert_unavailable(f, "listener.22.pid", ENOENT,
		                   "no /proc/PID/fd holds the socket (a process of another PID "
		                   "namespace, a kernel socket, or a socket in flight in a unix "
		                   "message)");
		/* Not a listening port of the scan: nothing. */
		assert_int_equal(ht_listeners_owner(f, l, 8080), 0);
		assert_null(ht_facts_get(f, "listener.8080.pid"));
		assert_int_equal(ht_listeners_addresses(f, l, 3900), 0);
		assert_str_fact(f, "listener.3900.addresses", "0.0.0.0 ::", "/proc/net/tcp and tcp6");
		ht_listeners_free(l);
		ht_facts_free(f);
	}
}

static void test_listen_host(void **state)
{
	_cleanup_free_ char *root = fixture_root();
	struct ht_facts *f = ht_facts_new();
	static const char tcp[] = "/proc/net/tcp and tcp6";
	static const char nobacklog[] = "/proc/net/tcp has no backlog (NETLINK_SOCK_DIAG has)";

	(void)state;
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	skip(); /* the tree's /proc/net/tcp comes from a little-endian host */
#endif
	assert_non_null(f);
	assert_int_equal(ht_facts_collect(f, root, HT_COLLECT_NO_MEASURE), 0);

	/* Listeners: tcp has 0.0.0.0:3900 (rx 5), 0.0.0.0:3901, 0.0.0.0:22;
	 * tcp6 has :::3900 (rx 7). Ports ascending, 3900's addresses together. */
	assert_str_fact(f, "listener.list", "22 3900 3901", tcp);
	assert_str_fact(f, "listener.3900.addresses", "0.0.0.0 ::", tcp);
	assert_str_fact(f, "listener.22.addresses", "0.0.0.0", tcp);
	/* queue = the largest rx_queue of the port's sockets: max(5, 7) = 7 */
	assert_int_fact(f, "listener.3900.queue", 7, "entries", "/proc/net/tcp rx_queue");
	assert_int_fact(f, "listener.3901.queue", 0, "entries", "/proc/net/tcp rx_queue");
	assert_unavailable(f, "listener.3900.backlog", ENOENT, nobacklog);
	assert_int_fact(f, "net.core.somaxconn", 4096, "entries", "/proc/sys/net/core/somaxconn");

	/* Owners: 1234's fd/3, 4, 5 are socket:[40001] (3900 v4), [40002] (3901),
	 * [40003] (3900 v6); no process holds 22's [30001]. */
	assert_int_fact(f, "listener.3900.pid", 1234, NULL, "/proc/1234/fd");
	assert_str_fact(f, "listener.3900.process", "garage", "/proc/1234/comm");
	assert_int_fact(f, "listener.3901.pid", 1234, NULL, "/proc/1234/fd");
	assert_unavailable(f, "listener.22.pid", ENOENT,
	                   "no /proc/PID/fd holds the socket (a process of another PID namespace, "
	                   "a kernel socket, or a socket in flight in a unix message)");
	assert_unavailable(f, "listener.22.process", ENOENT, NULL);

	/* Processes: the owner's name. Three processes are "garage": 1234 and
	 * 1250 with 7 descriptors, 1300 with 2: the most, the lower PID: 1234. */
	assert_str_fact(f, "process.list", "garage", "/proc/PID/comm");
	assert_int_fact(f, "process.garage.pid", 1234, NULL, "/proc/1234");
	assert_str_fact(f, "process.garage.comm", "garage", "/proc/1234/comm");
	assert_int_fact(f, "process.garage.fds", 7, "descriptors", "/proc/1234/fd");
	assert_int_fact(f, "process.garage.nofile", 1024, "descriptors",
	                "/proc/1234/limits Max open files");
	assert_int_fact(f, "process.garage.nofile_hard", 524288, "descriptors",
	                "/proc/1234/limits Max open files");
	assert_str_fact(f, "process.garage.unit", "garage.service", "/proc/1234/cgroup");

	/* Ports: 32768-60999. Client sockets with a local port in it:
	 *   10.0.0.5:40000..40089 -> 10.0.0.9:3900, 90 in TIME_WAIT;
	 *   10.0.0.5:45000, 45002 -> 10.0.0.8:3901, 2 ESTABLISHED.
	 * 10.0.0.5:3900 <- 10.0.0.7:51234 is a server socket (3900 < 32768).
	 * Two keys; the top one has 90 sockets, all 90 in TIME_WAIT. */
	assert_str_fact(f, "net.ipv4.ip_local_port_range", "32768 60999",
	                "/proc/sys/net/ipv4/ip_local_port_range");
	assert_int_fact(f, "ports.range.low", 32768, "ports", "/proc/sys/net/ipv4/ip_local_port_range");
	assert_int_fact(f, "ports.range.high", 60999, "ports", "/proc/sys/net/ipv4/ip_local_port_range");
	assert_int_fact(f, "ports.time_wait", 90, "sockets", tcp);
	assert_int_fact(f, "ports.destinations", 2, "destinations", tcp);
	assert_str_fact(f, "ports.top.destination", "10.0.0.9:3900", tcp);
	assert_str_fact(f, "ports.top.source", "10.0.0.5", tcp);
	assert_true(ht_test_fact(f, "ports.top.loopback")->value.type == HT_T_BOOL &&
	            !ht_test_fact(f, "ports.top.loopback")->value.b);
	assert_int_fact(f, "ports.top.sockets", 90, "sockets", tcp);
	assert_int_fact(f, "ports.top.time_wait", 90, "sockets", tcp);

	/* Sysctls and counters as the tree holds them. */
	assert_int_fact(f, "net.ipv4.tcp_max_syn_backlog", 512, "entries",
	                "/proc/sys/net/ipv4/tcp_max_syn_backlog");
	assert_int_fact(f, "net.ipv4.tcp_max_tw_buckets", 4096, "sockets",
	                "/proc/sys/net/ipv4/tcp_max_tw_buckets");
	assert_int_fact(f, "net.ipv4.tcp_timestamps", 1, NULL, "/proc/sys/net/ipv4/tcp_timestamps");
	assert_int_fact(f, "net.ipv4.tcp_tw_reuse", 2, NULL, "/proc/sys/net/ipv4/tcp_tw_reuse");
	assert_int_fact(f, "nstat.TcpExtListenOverflows", 37, "packets",
	                "/proc/net/netstat TcpExt: ListenOverflows");
	assert_int_fact(f, "nstat.TcpExtListenDrops", 41, "packets",
	                "/proc/net/netstat TcpExt: ListenDrops");
	assert_int_fact(f, "nstat.TcpExtTW", 1200, "sockets", "/proc/net/netstat TcpExt: TW");
	assert_int_fact(f, "nstat.TcpExtTCPReqQFullDrop", 0, "packets",
	                "/proc/net/netstat TcpExt: TCPReqQFullDrop");
	assert_int_fact(f, "nstat.TcpExtTCPTimeWaitOverflow", 0, "sockets",
	                "/proc/net/netstat TcpExt: TCPTimeWaitOverflow");
	assert_int_fact(f, "nstat.TcpActiveOpens", 5120, "connections",
	                "/proc/net/snmp Tcp: ActiveOpens");
	assert_int_fact(f, "nstat.TcpPassiveOpens", 30211, "connections",
	                "/proc/net/snmp Tcp: PassiveOpens");

	/* The caller's names (the profile's service): sshd 900 runs (cgroup v1,
	 * unlimited descriptors, fd/0 and fd/3), "minio" does not and is not listed. */
	assert_int_equal(ht_collect_processes(f, root, "sshd  minio garage", NULL, 0), 0);
	assert_str_fact(f, "process.list", "garage sshd", "/proc/PID/comm");
	assert_int_fact(f, "process.sshd.pid", 900, NULL, "/proc/900");
	assert_int_fact(f, "process.sshd.fds", 2, "descriptors", "/proc/900/fd");
	assert_int_fact(f, "process.sshd.nofile", INT64_MAX, "descriptors",
	                "/proc/900/limits Max open files");
	assert_str_fact(f, "process.sshd.unit", "ssh.service", "/proc/900/cgroup");
	assert_null(ht_facts_get(f, "process.minio.pid"));
	/* A kernel thread's comm "kworker/0:1-eve" is named kworker_2f0_3a1-eve (ht_name_escape: / is 0x2f, : is 0x3a). */
	assert_int_equal(ht_collect_processes(f, root, "kworker/0:1-eve", NULL, 0), 0);
	assert_str_fact(f, "process.list", "garage kworker_2f0_3a1-eve", "/proc/PID/comm");
	assert_int_fact(f, "process.kworker_2f0_3a1-eve.pid", 77, NULL, "/proc/77");
	/* It has no fd directory, limits or cgroup in the tree. */
	assert_unavailable(f, "process.kworker_2f0_3a1-eve.fds", ENOENT, "/proc/77/fd");
	assert_unavailable(f, "process.kworker_2f0_3a1-eve.nofile", ENOENT, "/proc/77/limits");
	assert_unavailable(f, "process.kworker_2f0_3a1-eve.unit", ENOENT, "/proc/77/cgroup");
	assert_int_equal(ht_collect_processes(NULL, root, NULL, NULL, 0), -EINVAL);
	ht_facts_free(f);
}

/* ---- trees without the sources, or with bad ones ---- */

static void test_empty_tree(void **state)
{
	_cleanup_free_ char *dir = ht_test_tmp_dir("ht-sock");
	struct ht_facts *f = ht_facts_new();

	(void)state;
	assert_int_equal(ht_facts_collect(f, dir, HT_COLLECT_NO_MEASURE), 0);
	assert_unavailable(f, "listener.list", ENOENT, "/proc/net/tcp");
	assert_unavailable(f, "ports.time_wait", ENOENT, "/proc/net/tcp");
	assert_unavailable(f, "ports.top.sockets", ENOENT, "/proc/net/tcp");
	assert_unavailable(f, "net.ipv4.ip_local_port_range", ENOENT,
	                   "/proc/sys/net/ipv4/ip_local_port_range");
	assert_unavailable(f, "ports.range.low", ENOENT, "/proc/sys/net/ipv4/ip_local_port_range");
	assert_unavailable(f, "net.core.somaxconn", ENOENT, "/proc/sys/net/core/somaxconn");
	assert_unavailable(f, "nstat.TcpExtListenOverflows", ENOENT, "/proc/net/netstat");
	assert_unavailable(f, "nstat.TcpActiveOpens", ENOENT, "/proc/net/snmp");
	/* No process found: an empty list. */
	assert_str_fact(f, "process.list", "", "/proc/PID/comm");
	ht_facts_free(f);
	ht_test_rm_tree(dir);
}

static void test_bad_tree(void **state)
{
	_cleanup_free_ char *dir = ht_test_tmp_dir("ht-sock");
	struct ht_facts *f = ht_facts_new();

	(void)state;
	ht_test_put_file(dir, "proc/net/tcp",
	         "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt\n"
	         "   0: 00000000:0F3C 00000000:0000 0A 00000000:00000005 00:00000000 00000000 0 0 1\n"
	         "   1: hello\n");
	ht_test_put_file(dir, "proc/sys/net/ipv4/ip_local_port_range", "60999\t32768\n");
	ht_test_put_file(dir, "proc/net/netstat", "TcpExt: ListenOverflows\nTcpExt: many\n");
	ht_test_put_file(dir, "proc/net/snmp", "Tcp: ActiveOpens PassiveOpens\nTcp: 1 2\n");
	assert_int_equal(ht_facts_collect(f, dir, HT_COLLECT_NO_MEASURE), 0);
	/* One bad line makes the whole file unreadable: no partial listener list.
	 * Without tcp6 nothing is left: unavailable, the file and line named. */
	assert_unavailable(f, "listener.list", EINVAL,
	                   "/proc/net/tcp: a line not as the kernel writes it (line 3)");
	assert_unavailable(f, "ports.destinations", EINVAL, NULL);
	assert_unavailable(f, "net.ipv4.ip_local_port_range", EINVAL, NULL);
	assert_unavailable(f, "nstat.TcpExtListenOverflows", EINVAL, "/proc/net/netstat");
	/* A field the file lacks: its section and name are the source. */
	assert_unavailable(f, "nstat.TcpExtTW", ENOENT, "/proc/net/netstat TcpExt: TW");
	assert_int_fact(f, "nstat.TcpActiveOpens", 1, "connections", "/proc/net/snmp Tcp: ActiveOpens");
	ht_facts_free(f);
	ht_test_rm_tree(dir);
}

/* A good tcp without a port range: listeners, but no client-port counts. */

static void test_no_range(void **state)
{
	_cleanup_free_ char *dir = ht_test_tmp_dir("ht-sock");
	struct ht_facts *f = ht_facts_new();

	(void)state;
	ht_test_put_file(dir, "proc/net/tcp",
	         "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt\n"
	         "   0: 00000000:0F3C 00000000:0000 0A 00000000:00000005 00:00000000 00000000 0 0 1\n"
	         "   1: 0100007F:9C40 0100007F:0F3C 06 00000000:00000000 03:00001A2B 00000000 0 0 0\n");
	assert_int_equal(ht_facts_collect(f, dir, HT_COLLECT_NO_MEASURE), 0);
	assert_str_fact(f, "listener.list", "3900", "/proc/net/tcp");
	assert_int_fact(f, "ports.time_wait", 1, "sockets", "/proc/net/tcp");
	assert_unavailable(f, "ports.top.sockets", ENOENT, "net.ipv4.ip_local_port_range");
	assert_unavailable(f, "ports.destinations", ENOENT, "net.ipv4.ip_local_port_range");
	ht_facts_free(f);
	ht_test_rm_tree(dir);
}

/* process.NAME.unit that is no system unit: a user manager's service, a bad name. */
static void test_process_units(void **state)
{
	_cleanup_free_ char *dir = ht_test_tmp_dir("ht-sock");
	struct ht_facts *f = ht_facts_new();

	(void)state;
	ht_test_put_file(dir, "proc/500/comm", "garage\n");
	ht_test_put_file(dir, "proc/500/cgroup",
	         "0::/user.slice/user-1000.slice/user@1000.service/app.slice/garage.service\n");
	ht_test_put_file(dir, "proc/600/comm", "minio\n");
	ht_test_put_file(dir, "proc/600/cgroup", "0::/system.slice/mi nio.service\n");
	ht_test_put_file(dir, "proc/700/comm", "sshd\n");
	ht_test_put_file(dir, "proc/700/cgroup", "0::/system.slice/ssh.service\n");
	assert_int_equal(ht_collect_processes(f, dir, "garage minio sshd", NULL, 0), 0);
	assert_str_fact(f, "process.list", "garage minio sshd", "/proc/PID/comm");
	assert_unavailable(f, "process.garage.unit", ENOENT,
	                   "/proc/500/cgroup: runs under the user manager user@1000.service");
	assert_unavailable(f, "process.minio.unit", EINVAL,
	                   "/proc/600/cgroup: mi nio.service is no valid service name");
	assert_str_fact(f, "process.sshd.unit", "ssh.service", "/proc/700/cgroup");
	ht_facts_free(f);
	ht_test_rm_tree(dir);
}

static void put_link(const char *dir, const char *rel, const char *target)
{
	_cleanup_free_ char *path = NULL;

	ht_test_put_file(dir, rel, "");
	assert_true(asprintf(&path, "%s/%s", dir, rel) > 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(target, path), 0);
}

/*
 * The process behind a listener: port 8000 (inode 50001) is held by
 * python3 400 with 1 descriptor, port 9000 (inode 50002) by python3 500;
 * python3 300 (a client) has 4 descriptors, the most. process.python3 is
 * 8000's owner 400, not 300 (most descriptors) nor 500 (a later port).
 * sshd, only a caller's name: the one of 600 (1 fd) and 610 (2 fds) with
 * the most, 610.
 */
static void test_listener_process(void **state)
{
	_cleanup_free_ char *dir = ht_test_tmp_dir("ht-sock");
	struct ht_facts *f = ht_facts_new();

	(void)state;
	ht_test_put_file(dir, "proc/net/tcp",
	         "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt\n"
	         "   0: 00000000:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 50001\n"
	         "   1: 00000000:2328 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 50002\n");
	ht_test_put_file(dir, "proc/300/comm", "python3\n");
	for (int i = 0; i < 4; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "proc/300/fd/%d", i);
		put_link(dir, rel, "/dev/null");
	}
	ht_test_put_file(dir, "proc/400/comm", "python3\n");
	put_link(dir, "proc/400/fd/3", "socket:[50001]");
	ht_test_put_file(dir, "proc/500/comm", "python3\n");
	put_link(dir, "proc/500/fd/3", "socket:[50002]");
	ht_test_put_file(dir, "proc/600/comm", "sshd\n");
	put_link(dir, "proc/600/fd/0", "/dev/null");
	ht_test_put_file(dir, "proc/610/comm", "sshd\n");
	put_link(dir, "proc/610/fd/0", "/dev/null");
	put_link(dir, "proc/610/fd/1", "/dev/null");
	assert_int_equal(ht_facts_collect(f, dir, HT_COLLECT_NO_MEASURE), 0);
	assert_str_fact(f, "listener.list", "8000 9000", "/proc/net/tcp");
	assert_int_fact(f, "listener.8000.pid", 400, NULL, "/proc/400/fd");
	assert_int_fact(f, "listener.9000.pid", 500, NULL, "/proc/500/fd");
	assert_int_equal(ht_collect_processes(f, dir, "sshd", NULL, 0), 0);
	assert_str_fact(f, "process.list", "python3 sshd", "/proc/PID/comm");
	/*
	 * Every python3 is judged, whichever owns a port: no limits file, so
	 * the one with the most descriptors, 300 (4, against 1 each for 400
	 * and 500).
	 */
	assert_int_fact(f, "process.python3.pid", 300, NULL, "/proc/300");
	assert_int_fact(f, "process.python3.fds", 4, "descriptors", "/proc/300/fd");
	assert_int_fact(f, "process.python3.count", 3, "processes", "/proc/PID/comm");
	assert_int_fact(f, "process.sshd.pid", 610, NULL, "/proc/610");
	ht_facts_free(f);
	ht_test_rm_tree(dir);
}

/*
 * The descriptor census: each process's descriptors counted against its
 * soft "Max open files" with process.high's integers (75%),
 * fds >= nofile - nofile / 4:
 *   100: 9 fds, limit 10 -> 9 >= 10 - 2 = 8: near, holds port 8000's socket;
 *   200: 7 fds, limit 10 -> 7 < 8: not near;
 *   300: 4 fds, limit 4 -> 4 >= 4 - 1: near, holds no listening socket;
 *   400: 3 fds, unlimited -> not near; 500: no limits file -> skipped;
 *   600: 9 fds, limit 10, but a descriptor table of 7 (status FDSize): 7 < 8
 *        rules it out before its fd directory is listed (a tree that
 *        disagrees with itself, to show the bound is used);
 *   700: 9 fds, limit 10, FDSize 64 >= 8: listed, 9 >= 8, near;
 *   800: 9 fds, limits a FIFO: not read (and the open does not block), skipped.
 * In PID order: 100, 300, 700.
 */
static void test_near_limit(void **state)
{
	_cleanup_free_ char *dir = ht_test_tmp_dir("ht-sock");
	_cleanup_free_ int *pids = NULL;
	struct ht_facts *f = ht_facts_new();
	struct ht_listeners *L = NULL;
	static const struct { int pid, fds; const char *limit; } procs[] = {
		{ 100, 9, "10" }, { 200, 7, "10" }, { 300, 4, "4" },
		{ 400, 3, "unlimited" }, { 500, 20, NULL }, { 600, 9, "10" },
		{ 700, 9, "10" }, { 800, 9, "fifo" },
	};
	size_t n = 0;

	(void)state;
	ht_test_put_file(dir, "proc/net/tcp",
	         "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt\n"
	         "   0: 00000000:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 50001\n");
	for (size_t i = 0; i < ARRAY_SIZE(procs); i++) {
		char rel[64], text[256];

		snprintf(rel, sizeof(rel), "proc/%d/comm", procs[i].pid);
		ht_test_put_file(dir, rel, procs[i].pid == 100 ? "minio\n" : "other\n");
		for (int k = 0; k < procs[i].fds; k++) {
			snprintf(rel, sizeof(rel), "proc/%d/fd/%d", procs[i].pid, k);
			put_link(dir, rel, k == 5 && procs[i].pid == 100 ? "socket:[50001]"
			                   : k == 2 && procs[i].pid == 300 ? "socket:[777]"
			                   : "/dev/null");
		}
		if (procs[i].pid == 600 || procs[i].pid == 700) {
			snprintf(rel, sizeof(rel), "proc/%d/status", procs[i].pid);
			snprintf(text, sizeof(text), "Name:\tother\nUmask:\t0022\nFDSize:\t%d\n",
			         procs[i].pid == 600 ? 7 : 64);
			ht_test_put_file(dir, rel, text);
		}
		if (!procs[i].limit)
			continue;
		snprintf(rel, sizeof(rel), "proc/%d/limits", procs[i].pid);
		if (strcmp(procs[i].limit, "fifo") == 0) {
			_cleanup_free_ char *path = NULL;

			assert_true(asprintf(&path, "%s/%s", dir, rel) > 0);
			assert_int_equal(mkfifo(path, 0600), 0);
			continue;
		}
		snprintf(text, sizeof(text),
		         "Limit                     Soft Limit           Hard Limit           Units     \n"
		         "Max open files            %-20s %-20s files     \n",
		         procs[i].limit, procs[i].limit);
		ht_test_put_file(dir, rel, text);
	}
	assert_int_equal(ht_processes_near_limit(dir, &pids, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(pids[0], 100);
	assert_int_equal(pids[1], 300);
	assert_int_equal(pids[2], 700);
	assert_int_equal(ht_collect_listeners(f, dir, &L), 0);
	assert_int_equal(ht_listeners_held(L, 100), 1);
	assert_int_equal(ht_listeners_held(L, 300), 0);
	assert_int_equal(ht_listeners_held(L, 200), 0);
	assert_int_equal(ht_listeners_held(L, 999), 0);
	/* Owners are not changed: port 8000's still unknown until asked. */
	assert_null(ht_facts_get(f, "listener.8000.pid"));
	ht_listeners_free(L);
	/* Judged first by its PID: minio 100 with its 9 descriptors. */
	pids[0] = 100;
	assert_int_equal(ht_collect_processes(f, dir, NULL, pids, 1), 0);
	assert_str_fact(f, "process.list", "minio", "/proc/PID/comm");
	assert_int_fact(f, "process.minio.pid", 100, NULL, "/proc/100");
	assert_int_fact(f, "process.minio.fds", 9, "descriptors", "/proc/100/fd");
	assert_int_fact(f, "process.minio.nofile", 10, "descriptors",
	                "/proc/100/limits Max open files");
	ht_facts_free(f);
	ht_test_rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_line),
		cmocka_unit_test(test_port_range),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_cgroup),
		cmocka_unit_test(test_nstat),
		cmocka_unit_test(test_sockstat),
		cmocka_unit_test(test_owners_on_demand),
		cmocka_unit_test(test_listen_host),
		cmocka_unit_test(test_empty_tree),
		cmocka_unit_test(test_bad_tree),
		cmocka_unit_test(test_no_range),
		cmocka_unit_test(test_process_units),
		cmocka_unit_test(test_listener_process),
		cmocka_unit_test(test_near_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
