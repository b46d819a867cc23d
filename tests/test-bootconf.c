/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "shared/bootconf.h"
#include "shared/util.h"
#include "test-util.h"

/*
 * The readers on the tests/fixtures/bootconf-* trees (each file there is
 * short enough to count its lines by eye; every line number below is the line
 * of the file named next to it), and on small trees made here for edge cases.
 * tests/bootconf-systemd.sh checks the same sysctl trees against systemd.
 */

/* FIXTURES_DIR: the copy make check makes (tests/make-fixtures.sh), with the links. */
#define FIX(name) FIXTURES_DIR "/bootconf-" name "/root"

static void check_assign(const struct ht_conf_key *k, size_t i, const char *file, unsigned line,
			 const char *value, bool ign, const char *pattern)
{
	const struct ht_conf_assign *a;

	assert_true(i < k->n);
	a = &k->assigns[i];
	assert_string_equal(a->file, file);
	assert_int_equal(a->line, line);
	if (value)
		assert_string_equal(a->value, value);
	else
		assert_null(a->value);
	assert_int_equal(a->ignore_failure, ign);
	if (pattern)
		assert_string_equal(a->pattern, pattern);
	else
		assert_null(a->pattern);
}

static const struct ht_conf_key *must_find(const struct ht_conf *c, const char *key)
{
	const struct ht_conf_key *k = ht_conf_find(c, key);

	if (!k)
		fail_msg("no key %s", key);
	return k;
}

/* The effective value of @key, which must exist; NULL for a "-key" line. */
static const char *eff(const struct ht_conf *c, const char *key)
{
	return ht_conf_effective(must_find(c, key))->value;
}

static void check_strv(char **v, size_t n, const char *const *want, size_t nwant)
{
	for (size_t i = 0; i < n && i < nwant; i++)
		assert_string_equal(v[i], want[i]);
	assert_int_equal(n, nwant);
}

/* ---- a scratch root for edge cases ---- */

static char scratch[64];

static int scratch_setup(void **state)
{
	strcpy(scratch, "/tmp/test-bootconf.XXXXXX");
	return mkdtemp(scratch) ? 0 : -1;
}

static int scratch_teardown(void **state)
{
	return nftw(scratch, ht_test_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes @text to ROOT/@path, making its directories. */
static void put(const char *path, const char *text)
{
	ht_test_put_file(scratch, path, text);
}

static void link_in(const char *target, const char *path)
{
	_cleanup_free_ char *full = ht_root_path(scratch, path);

	assert_int_equal(symlink(target, full), 0);
}

/* ---- sysctl.d: tests/fixtures/bootconf-sysctl ---- */

static void test_sysctl_files_and_masks(void **state)
{
	static const char *const files[] = {
		"/etc/sysctl.d/10-vendor.conf",      /* hides /usr/lib's 10-vendor.conf */
		"/usr/lib/sysctl.d/20-rp.conf",
		"/usr/lib/sysctl.d/30-pid.conf",
		"/run/sysctl.d/60-run.conf",         /* hides /usr/local/lib's 60-run.conf */
		"/usr/local/lib/sysctl.d/70-local.conf",
		"/etc/sysctl.d/90-hosttune.conf",
		"/etc/sysctl.d/99-other.conf",
		"/etc/sysctl.d/99-sysctl.conf",      /* -> ../sysctl.conf */
		"/etc/sysctl.d/99-zzz.conf",
	};
	static const char *const masked[] = {
		"/etc/sysctl.d/40-empty.conf",  /* an empty file */
		"/etc/sysctl.d/50-masked.conf", /* -> /dev/null */
	};
	struct ht_conf c = { 0 };

	assert_int_equal(ht_sysctl_conf_read(FIX("sysctl"), &c), 0);
	check_strv(c.files, c.nfiles, files, ARRAY_SIZE(files));
	check_strv(c.masked, c.nmasked, masked, ARRAY_SIZE(masked));
	/*
	 * ROOT/lib -> /usr/lib (absolute): /lib/sysctl.d is left out, and nothing
	 * comes from the host's /usr/lib/sysctl.d (Debian's 50-pid-max.conf sets
	 * kernel.pid_max = 4194304, 99-protect-links.conf fs.protected_*).
	 */
	assert_string_equal(eff(&c, "kernel.pid_max"), "65536");
	assert_null(ht_conf_find(&c, "fs.protected_symlinks"));
	ht_conf_free(&c);
	assert_int_equal(c.n, 0);
	assert_null(c.keys);
}

static void test_sysctl_mask_and_override(void **state)
{
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;

	assert_int_equal(ht_sysctl_conf_read(FIX("sysctl"), &c), 0);
	/* /usr/lib/sysctl.d/50-masked.conf (kernel.pid_max = 99999) is masked by the link */
	k = must_find(&c, "kernel.pid_max");
	assert_int_equal(k->n, 1);
	check_assign(k, 0, "/usr/lib/sysctl.d/30-pid.conf", 1, "65536", false, NULL);
	/* /usr/lib/sysctl.d/40-empty.conf (fs.file-max = 1000) is masked by an empty file */
	assert_null(ht_conf_find(&c, "fs.file-max"));
	/* /etc/sysctl.d/10-vendor.conf replaces /usr/lib's whole file: 8192 and 1024 are gone */
	k = must_find(&c, "fs.inotify.max_user_watches");
	assert_int_equal(k->n, 1);
	check_assign(k, 0, "/etc/sysctl.d/10-vendor.conf", 1, "524288", false, NULL);
	/* /run over /usr/local/lib for 60-run.conf: 2000, not 1 */
	k = must_find(&c, "net.core.netdev_max_backlog");
	assert_int_equal(k->n, 1);
	check_assign(k, 0, "/run/sysctl.d/60-run.conf", 1, "2000", false, NULL);
	ht_conf_free(&c);
}

static void test_sysctl_later_file_wins(void **state)
{
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;

	assert_int_equal(ht_sysctl_conf_read(FIX("sysctl"), &c), 0);
	/* 99-other.conf sorts after 90-hosttune.conf */
	k = must_find(&c, "net.ipv4.tcp_max_syn_backlog");
	assert_int_equal(k->n, 2);
	check_assign(k, 0, "/etc/sysctl.d/90-hosttune.conf", 4, "4096", false, NULL);
	check_assign(k, 1, "/etc/sysctl.d/99-other.conf", 2, "8192", false, NULL);
	assert_false(k->ignore_failure);
	/*
	 * /etc/sysctl.conf comes in as 99-sysctl.conf: over 90-hosttune.conf and
	 * 99-other.conf, but 99-zzz.conf sorts after it and wins.
	 */
	k = must_find(&c, "net.core.somaxconn");
	assert_int_equal(k->n, 2);
	check_assign(k, 0, "/etc/sysctl.d/90-hosttune.conf", 3, "4096", false, NULL);
	check_assign(k, 1, "/etc/sysctl.d/99-sysctl.conf", 2, "8192", false, NULL);
	k = must_find(&c, "vm.swappiness");
	assert_int_equal(k->n, 2);
	check_assign(k, 0, "/etc/sysctl.d/99-sysctl.conf", 3, "5", false, NULL);
	check_assign(k, 1, "/etc/sysctl.d/99-zzz.conf", 1, "10", false, NULL);
	ht_conf_free(&c);
}

static void test_sysctl_lines(void **state)
{
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;

	assert_int_equal(ht_sysctl_conf_read(FIX("sysctl"), &c), 0);
	/* "-net.netfilter.nf_conntrack_tcp_timeout_time_wait = 60" */
	k = must_find(&c, "net.netfilter.nf_conntrack_tcp_timeout_time_wait");
	assert_int_equal(k->n, 1);
	check_assign(k, 0, "/etc/sysctl.d/90-hosttune.conf", 5, "60", true, NULL);
	assert_true(k->ignore_failure);
	/* a key that does not exist below proc/sys (module not loaded) is still read */
	k = must_find(&c, "net.netfilter.nf_conntrack_max");
	check_assign(k, 0, "/etc/sysctl.d/90-hosttune.conf", 2, "262144", false, NULL);
	assert_false(k->ignore_failure);
	/* "net/ipv4/tcp_fin_timeout = 15" */
	k = must_find(&c, "net.ipv4.tcp_fin_timeout");
	check_assign(k, 0, "/etc/sysctl.d/99-other.conf", 3, "15", false, NULL);
	/* "net/ipv4/conf/eth0.100/forwarding=1": slash first, the dot stays in the name */
	k = must_find(&c, "net.ipv4.conf.eth0/100.forwarding");
	assert_int_equal(k->n, 1);
	check_assign(k, 0, "/etc/sysctl.d/99-other.conf", 5, "1", false, NULL);
	/* values are kept verbatim, '=' and blanks inside included */
	assert_string_equal(eff(&c, "kernel.domainname"), "lab=1");
	assert_string_equal(eff(&c, "net.ipv4.ip_local_port_range"), "1024 65000");
	/* the one bad line */
	assert_int_equal(c.nproblems, 1);
	assert_int_equal(c.problems[0].kind, HT_CONF_MALFORMED);
	assert_string_equal(c.problems[0].file, "/etc/sysctl.d/99-other.conf");
	assert_int_equal(c.problems[0].line, 6);
	assert_null(c.problems[0].key);
	assert_string_equal(c.problems[0].message,
			    "/etc/sysctl.d/99-other.conf:6: line is not an assignment, ignored: "
			    "this line has no equals sign");
	/* the 18 with a value that tests/bootconf-systemd.sh counts, and "all" unset */
	assert_int_equal(c.n, 19);
	ht_conf_free(&c);
}

static void test_sysctl_globs(void **state)
{
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;
	const char *rp = "net.ipv4.conf.*.rp_filter", *asr = "net.ipv4.conf.*.accept_source_route";

	assert_int_equal(ht_sysctl_conf_read(FIX("sysctl"), &c), 0);
	/* /usr/lib/sysctl.d/20-rp.conf line 2 over proc/sys/net/ipv4/conf/{lo,eth0} */
	k = must_find(&c, "net.ipv4.conf.lo.rp_filter");
	assert_int_equal(k->n, 1);
	check_assign(k, 0, "/usr/lib/sysctl.d/20-rp.conf", 2, "2", false, rp);
	k = must_find(&c, "net.ipv4.conf.eth0.rp_filter");
	assert_int_equal(k->n, 1);
	check_assign(k, 0, "/usr/lib/sysctl.d/20-rp.conf", 2, "2", false, rp);
	/* default is named on line 1: the glob comes first, the named line wins */
	k = must_find(&c, "net.ipv4.conf.default.rp_filter");
	assert_int_equal(k->n, 2);
	check_assign(k, 0, "/usr/lib/sysctl.d/20-rp.conf", 2, "2", false, rp);
	check_assign(k, 1, "/usr/lib/sysctl.d/20-rp.conf", 1, "2", false, NULL);
	/* "-net.ipv4.conf.all.rp_filter": excluded, nothing written */
	k = must_find(&c, "net.ipv4.conf.all.rp_filter");
	assert_int_equal(k->n, 2);
	check_assign(k, 1, "/usr/lib/sysctl.d/20-rp.conf", 3, NULL, false, NULL);
	assert_null(eff(&c, "net.ipv4.conf.all.rp_filter"));
	/* eth0.100 is named in 99-other.conf line 4, dotted with a slash */
	k = must_find(&c, "net.ipv4.conf.eth0/100.rp_filter");
	assert_int_equal(k->n, 2);
	check_assign(k, 0, "/usr/lib/sysctl.d/20-rp.conf", 2, "2", false, rp);
	check_assign(k, 1, "/etc/sysctl.d/99-other.conf", 4, "1", false, NULL);
	/* "-net.ipv4.conf.*.accept_source_route = 0": only lo and eth0 have the file */
	k = must_find(&c, "net.ipv4.conf.lo.accept_source_route");
	check_assign(k, 0, "/usr/lib/sysctl.d/20-rp.conf", 4, "0", true, asr);
	assert_true(k->ignore_failure);
	k = must_find(&c, "net.ipv4.conf.eth0.accept_source_route");
	check_assign(k, 0, "/usr/lib/sysctl.d/20-rp.conf", 4, "0", true, asr);
	assert_null(ht_conf_find(&c, "net.ipv4.conf.all.accept_source_route"));
	assert_null(ht_conf_find(&c, "net.ipv4.conf.default.accept_source_route"));
	ht_conf_free(&c);
}

/* tests/fixtures/bootconf-globs: the order globs apply in, which systemd-sysctl confirms */
static void test_sysctl_glob_order(void **state)
{
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;

	assert_int_equal(ht_sysctl_conf_read(FIX("globs"), &c), 0);
	/*
	 * 10-a.conf: *.arp_ignore = 1 (1st), *.arp_filter = 1 (2nd), eth0.* = 2 (3rd),
	 * "*" = 5 (matches only directories: nothing). 20-b.conf: *.arp_ignore = 1
	 * again keeps its place, so eth0.* still comes after it: eth0.arp_ignore = 2.
	 */
	k = must_find(&c, "net.ipv4.conf.eth0.arp_ignore");
	assert_int_equal(k->n, 3);
	check_assign(k, 0, "/usr/lib/sysctl.d/10-a.conf", 1, "1", false,
		     "net.ipv4.conf.*.arp_ignore");
	check_assign(k, 1, "/etc/sysctl.d/20-b.conf", 1, "1", false, "net.ipv4.conf.*.arp_ignore");
	check_assign(k, 2, "/usr/lib/sysctl.d/10-a.conf", 3, "2", false, "net.ipv4.conf.eth0.*");
	/* *.arp_filter = 0 is a new value: it moves after eth0.* and wins */
	k = must_find(&c, "net.ipv4.conf.eth0.arp_filter");
	assert_int_equal(k->n, 3);
	check_assign(k, 2, "/etc/sysctl.d/20-b.conf", 2, "0", false, "net.ipv4.conf.*.arp_filter");
	assert_string_equal(eff(&c, "net.ipv4.conf.eth1.arp_ignore"), "1");
	assert_string_equal(eff(&c, "net.ipv4.conf.eth0.arp_announce"), "2");
	/* "-net.ipv4.conf.eth1.arp_filter" (20-b.conf line 3) */
	assert_null(eff(&c, "net.ipv4.conf.eth1.arp_filter"));
	assert_null(ht_conf_find(&c, "net.ipv4.conf.eth0"));
	assert_int_equal(c.n, 5);
	ht_conf_free(&c);
}

/* tests/fixtures/bootconf-splitusr: a real /lib, CRLF, /etc/sysctl.conf not linked */
static void test_sysctl_splitusr(void **state)
{
	static const char *const files[] = {
		"/usr/lib/sysctl.d/60-lib.conf", /* /usr/lib comes before /lib */
		"/lib/sysctl.d/70-only-lib.conf",
		"/etc/sysctl.d/80-crlf.conf",
		"/etc/sysctl.d/85-glob-no-proc.conf",
	};
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;

	assert_int_equal(ht_sysctl_conf_read(FIX("splitusr"), &c), 0);
	check_strv(c.files, c.nfiles, files, ARRAY_SIZE(files));
	assert_int_equal(c.nmasked, 0);
	check_assign(must_find(&c, "net.core.rmem_max"), 0, "/usr/lib/sysctl.d/60-lib.conf", 1,
		     "1048576", false, NULL);
	check_assign(must_find(&c, "net.core.wmem_max"), 0, "/lib/sysctl.d/70-only-lib.conf", 1,
		     "4194304", false, NULL);
	/* "vm.dirty_ratio = 15\r\n", comments on lines 2 and 3, then "-  key   =   5  \r\n" */
	check_assign(must_find(&c, "vm.dirty_ratio"), 0, "/etc/sysctl.d/80-crlf.conf", 1, "15",
		     false, NULL);
	k = must_find(&c, "vm.dirty_background_ratio");
	check_assign(k, 0, "/etc/sysctl.d/80-crlf.conf", 4, "5", true, NULL);
	/* "kernel.*.nothing = 1" with no proc/sys at all: no key */
	assert_int_equal(c.n, 4);
	/* net.core.somaxconn = 4096 in /etc/sysctl.conf is never read */
	assert_null(ht_conf_find(&c, "net.core.somaxconn"));
	assert_int_equal(c.nproblems, 1);
	assert_int_equal(c.problems[0].kind, HT_CONF_NOT_READ);
	assert_string_equal(c.problems[0].file, "/etc/sysctl.conf");
	assert_int_equal(c.problems[0].line, 0);
	assert_string_equal(c.problems[0].message,
			    "/etc/sysctl.conf: not read at boot: systemd-sysctl reads only the "
			    "sysctl.d directories and no *.conf there links to this file (Debian's "
			    "is /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf)");
	ht_conf_free(&c);
}

static void test_sysctl_normalize(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "kernel.domainname", "kernel.domainname" },
		{ "kernel/domainname", "kernel.domainname" },
		/* first separator '.': dots and slashes swap, so the '/' is a dot in a name */
		{ "net.ipv4.conf.eth0/100.rp_filter", "net.ipv4.conf.eth0/100.rp_filter" },
		/* first separator '/': the dot belongs to the name */
		{ "net/ipv4/conf/eth0.100/rp_filter", "net.ipv4.conf.eth0/100.rp_filter" },
		{ "/net//ipv4/./tcp_fin_timeout/", "net.ipv4.tcp_fin_timeout" },
		{ "net..ipv4.tcp_fin_timeout", "net.ipv4.tcp_fin_timeout" },
		{ "a.b/c", "a.b/c" },
		{ "a/b.c", "a.b/c" },
		{ "net.ipv4.conf.*.rp_filter", "net.ipv4.conf.*.rp_filter" },
		{ "vm", "vm" },
		{ ".", "" },
		{ "/", "" },
		{ "", "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *n = ht_sysctl_key_normalize(cases[i].in);

		assert_non_null(n);
		if (strcmp(n, cases[i].out) != 0)
			fail_msg("normalize(\"%s\") = \"%s\", want \"%s\"", cases[i].in, n,
				 cases[i].out);
	}
}

static void test_sysctl_edge_cases(void **state)
{
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;

	/* a directory named *.conf in /etc hides /usr/lib's file and cannot be read */
	put("/etc/sysctl.d/10-dir.conf/x", "");
	put("/usr/lib/sysctl.d/10-dir.conf", "vm.a = 1\n");
	/* keys that name no file; "-key" then "key = v" again; no newline at the end */
	put("/etc/sysctl.d/20-keys.conf",
	    "/ = 1\nnet/../x = 2\n-vm.b\nvm.b = 3\n  -  vm.c=4\n= 5\nvm.d = 6");
	/* the same value again ORs the '-' flag in; another value replaces it */
	put("/etc/sysctl.d/30-flags.conf", "-vm.e = 1\nvm.e = 1\nvm.f = 1\n-vm.f = 2\nvm.f = 1\n");
	/* absolute link inside the root, ".." above the root stays at the root */
	put("/srv/conf/40-linked.conf", "vm.g = 7\n");
	link_in("/srv/conf/40-linked.conf", "/etc/sysctl.d/40-linked.conf");
	link_in("../../../../../srv/conf/40-linked.conf", "/etc/sysctl.d/41-dotdot.conf");
	link_in("/nowhere", "/etc/sysctl.d/42-dangling.conf");
	link_in("43-loop.conf", "/etc/sysctl.d/43-loop.conf");
	put("/etc/sysctl.d/.hidden.conf", "vm.h = 1\n");
	put("/etc/sysctl.d/50-not-conf.txt", "vm.h = 1\n");

	assert_int_equal(ht_sysctl_conf_read(scratch, &c), 0);
	assert_null(ht_conf_find(&c, "vm.a"));
	assert_null(ht_conf_find(&c, "vm.h"));
	assert_string_equal(eff(&c, "vm.b"), "3");
	assert_int_equal(must_find(&c, "vm.b")->n, 2);
	check_assign(must_find(&c, "vm.c"), 0, "/etc/sysctl.d/20-keys.conf", 5, "4", true, NULL);
	/* "= 5" (line 6): an empty key names no file either */
	check_assign(must_find(&c, "vm.d"), 0, "/etc/sysctl.d/20-keys.conf", 7, "6", false, NULL);
	/* vm.e: "-vm.e = 1", then "vm.e = 1": still ignore_failure */
	k = must_find(&c, "vm.e");
	assert_int_equal(k->n, 2);
	assert_false(k->assigns[1].ignore_failure);
	assert_true(k->ignore_failure);
	/* vm.f: 1, then 2 (-), then 1 again: the last run of "1" has no '-' */
	k = must_find(&c, "vm.f");
	assert_int_equal(k->n, 3);
	assert_false(k->ignore_failure);
	check_assign(must_find(&c, "vm.g"), 0, "/etc/sysctl.d/40-linked.conf", 1, "7", false,
		     NULL);
	check_assign(must_find(&c, "vm.g"), 1, "/etc/sysctl.d/41-dotdot.conf", 1, "7", false,
		     NULL);
	assert_int_equal(c.n, 6);
	/* problems in the order found: listing, then file by file */
	assert_int_equal(c.nproblems, 5);
	assert_int_equal(c.problems[0].kind, HT_CONF_UNREADABLE);
	assert_string_equal(c.problems[0].message,
			    "/etc/sysctl.d/10-dir.conf: cannot read: Is a directory");
	assert_int_equal(c.problems[1].kind, HT_CONF_MALFORMED);
	assert_string_equal(c.problems[1].message,
			    "/etc/sysctl.d/20-keys.conf:1: key \"/\" names no sysctl file, "
			    "ignored");
	assert_int_equal(c.problems[2].line, 2);
	assert_int_equal(c.problems[3].line, 6);
	assert_string_equal(c.problems[4].message,
			    "/etc/sysctl.d/43-loop.conf: cannot resolve: Too many levels of "
			    "symbolic links");
	ht_conf_free(&c);
}

/*
 * 100,000 keys in ten files (a size where comparing each line with every key
 * before it took minutes): every key found, with its assignments in order.
 * /usr/lib/sysctl.d/0F.conf (F = 0 .. 9) sets vm.kI = I for every I with
 * I mod 10 = F, I ascending, so vm.kI is on line I / 10 + 1 of file I mod 10;
 * then vm.shared = F on line 10,001. /etc/sysctl.d/10-override.conf is read
 * last (name order) and sets three keys again.
 */
static void test_sysctl_many_keys(void **state)
{
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;

	for (int f = 0; f < 10; f++) {
		_cleanup_free_ char *rel = NULL, *full = NULL;
		FILE *out;

		assert_true(asprintf(&rel, "/usr/lib/sysctl.d/0%d.conf", f) > 0);
		put(rel, "");
		assert_non_null(full = ht_root_path(scratch, rel));
		assert_non_null(out = fopen(full, "w"));
		for (int i = f; i < 100000; i += 10)
			fprintf(out, "vm.k%d = %d\n", i, i);
		fprintf(out, "vm.shared = %d\n", f);
		assert_int_equal(fclose(out), 0);
	}
	put("/etc/sysctl.d/10-override.conf", "vm.k5 = five\nvm.shared = etc\n-vm.k7 = 7\n");

	assert_int_equal(ht_sysctl_conf_read(scratch, &c), 0);
	assert_int_equal(c.nfiles, 11);
	assert_int_equal(c.nproblems, 0);
	/* vm.k0 .. vm.k99999 and vm.shared */
	assert_int_equal(c.n, 100001);
	for (size_t i = 1; i < c.n; i++)
		assert_true(strcmp(c.keys[i - 1].key, c.keys[i].key) < 0);
	/* 12345 mod 10 = 5, line 12345 / 10 + 1 = 1235 */
	k = must_find(&c, "vm.k12345");
	assert_int_equal(k->n, 1);
	check_assign(k, 0, "/usr/lib/sysctl.d/05.conf", 1235, "12345", false, NULL);
	/* 99999: file 9, line 9999 + 1 = 10000 */
	check_assign(must_find(&c, "vm.k99999"), 0, "/usr/lib/sysctl.d/09.conf", 10000, "99999",
		     false, NULL);
	/* vm.shared: line 10,001 of 00 .. 09, then line 2 of the override, which wins */
	k = must_find(&c, "vm.shared");
	assert_int_equal(k->n, 11);
	check_assign(k, 0, "/usr/lib/sysctl.d/00.conf", 10001, "0", false, NULL);
	check_assign(k, 9, "/usr/lib/sysctl.d/09.conf", 10001, "9", false, NULL);
	assert_string_equal(eff(&c, "vm.shared"), "etc");
	assert_int_equal(ht_conf_effective(k)->line, 2);
	/* vm.k5: 05.conf line 1, then "five" */
	k = must_find(&c, "vm.k5");
	assert_int_equal(k->n, 2);
	assert_string_equal(eff(&c, "vm.k5"), "five");
	/* "-vm.k7 = 7" repeats the value of 07.conf line 1: the '-' is ORed in */
	k = must_find(&c, "vm.k7");
	assert_int_equal(k->n, 2);
	check_assign(k, 1, "/etc/sysctl.d/10-override.conf", 3, "7", true, NULL);
	assert_true(k->ignore_failure);
	assert_false(must_find(&c, "vm.k17")->ignore_failure);
	ht_conf_free(&c);
}

static void test_sysctl_no_root(void **state)
{
	struct ht_conf c = { 0 };

	assert_int_equal(ht_sysctl_conf_read(FIXTURES_DIR "/bootconf-absent", &c), 0);
	assert_int_equal(c.n + c.nfiles + c.nmasked + c.nproblems, 0);
	assert_int_equal(ht_sysctl_conf_read(FIXTURES_DIR, NULL), -EINVAL);
	assert_null(ht_conf_find(&c, "vm.swappiness"));
	assert_null(ht_conf_effective(NULL));
	ht_conf_free(&c);
	ht_conf_free(NULL);
}

/* ---- modprobe.d: tests/fixtures/bootconf-modprobe ---- */

static void test_modprobe_fixture(void **state)
{
	static const char *const files[] = {
		"/lib/modprobe.d/50-vendor.conf", /* ROOT/lib -> /usr/lib, read inside the root */
		"/etc/modprobe.d/hosttune.conf",  /* hides /lib's hosttune.conf (hashsize=1) */
		"/etc/modprobe.d/nf-spaces.conf",
		"/run/modprobe.d/other.conf",
		"/etc/modprobe.d/zz-unknown.conf",
	};
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;
	const struct ht_conf_problem *p;

	assert_int_equal(ht_modprobe_conf_read(FIX("modprobe"), &c), 0);
	check_strv(c.files, c.nfiles, files, ARRAY_SIZE(files));
	/* hashsize=65536, then "hashsize = 131072": the kernel gets "hashsize" alone */
	k = must_find(&c, "nf_conntrack.hashsize");
	assert_int_equal(k->n, 2);
	check_assign(k, 0, "/etc/modprobe.d/hosttune.conf", 2, "65536", false, NULL);
	check_assign(k, 1, "/etc/modprobe.d/nf-spaces.conf", 2, NULL, false, NULL);
	/* "options nf-conntrack acct=1 tstamp": the module name gets underscores */
	check_assign(must_find(&c, "nf_conntrack.acct"), 0, "/lib/modprobe.d/50-vendor.conf", 3,
		     "1", false, NULL);
	check_assign(must_find(&c, "nf_conntrack.tstamp"), 0, "/lib/modprobe.d/50-vendor.conf",
		     3, NULL, false, NULL);
	/* two files merge: a continued line (50-vendor.conf lines 4-5), then zz-unknown.conf */
	k = must_find(&c, "nf_conntrack.expect_hashsize");
	assert_int_equal(k->n, 3);
	check_assign(k, 0, "/lib/modprobe.d/50-vendor.conf", 4, "512", false, NULL);
	check_assign(k, 1, "/etc/modprobe.d/zz-unknown.conf", 1, "1024", false, NULL);
	check_assign(k, 2, "/etc/modprobe.d/zz-unknown.conf", 3, "4k", false, NULL);
	/* recorded as the kernel gets it, and reported below */
	check_assign(must_find(&c, "nf_conntrack.nf_conntrack_max"), 0,
		     "/etc/modprobe.d/zz-unknown.conf", 1, "262144", false, NULL);
	assert_string_equal(eff(&c, "e1000e.InterruptThrottleRate"), "3000,3000");
	/* options dummy "label=a b" numdummies=2: the quotes group, then go */
	assert_string_equal(eff(&c, "dummy.label"), "a b");
	assert_string_equal(eff(&c, "dummy.numdummies"), "2");
	/* nothing from ignored.txt (hashsize=7) or .hidden.conf (hashsize=8) */
	assert_int_equal(c.n, 8);

	assert_int_equal(c.nproblems, 4);
	p = &c.problems[0];
	assert_int_equal(p->kind, HT_CONF_SPACE_AROUND_EQ);
	assert_string_equal(p->file, "/etc/modprobe.d/nf-spaces.conf");
	assert_int_equal(p->line, 2);
	assert_string_equal(p->key, "nf_conntrack.hashsize");
	assert_string_equal(p->message,
			    "/etc/modprobe.d/nf-spaces.conf:2: options nf_conntrack: spaces around "
			    "'=' in \"hashsize = 131072\": the kernel gets the parameter without a "
			    "value, which fails with EINVAL unless it is a bool, and then the "
			    "module does not load; the pieces after it are ignored as unknown "
			    "parameters; write hashsize=131072");
	p = &c.problems[1];
	assert_int_equal(p->kind, HT_CONF_UNKNOWN_PARAM);
	assert_string_equal(p->file, "/etc/modprobe.d/zz-unknown.conf");
	assert_int_equal(p->line, 1);
	assert_string_equal(p->key, "nf_conntrack.nf_conntrack_max");
	assert_string_equal(p->message,
			    "/etc/modprobe.d/zz-unknown.conf:1: nf_conntrack has no parameter "
			    "\"nf_conntrack_max\" (it has hashsize, expect_hashsize, acct and "
			    "tstamp): the kernel ignores it; net.netfilter.nf_conntrack_max is a "
			    "sysctl, set in sysctl.d");
	p = &c.problems[2];
	assert_int_equal(p->kind, HT_CONF_MALFORMED);
	assert_int_equal(p->line, 2);
	assert_string_equal(p->message, "/etc/modprobe.d/zz-unknown.conf:2: kmod ignores this "
					"line, starting with 'options'");
	p = &c.problems[3];
	assert_int_equal(p->kind, HT_CONF_BAD_VALUE);
	assert_int_equal(p->line, 3);
	assert_string_equal(p->key, "nf_conntrack.expect_hashsize");
	ht_conf_free(&c);
}

static void test_modprobe_options_edge_cases(void **state)
{
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;

	put("/etc/modprobe.d/a.conf",
	    "options nf_conntrack hashsize =65536\n"          /* 1: blank before '=' */
	    "options nf_conntrack expect_hashsize= 256\n"     /* 2: blank after '=' */
	    "options nf_conntrack hashsize\n"                 /* 3: no value */
	    "options nf_conntrack hashsize=0x10000 acct\n"    /* 4: hex is fine, bool alone too */
	    "options nf_conntrack expect-hashsize=0400\n"     /* 5: '-' in a name, octal */
	    "options nf_conntrack hashsize=4294967296\n"      /* 6: 2^32 does not fit */
	    "  options nf_conntrack hashsize=1\n"             /* 7: leading blanks are fine */
	    "\t# not a comment for kmod\n"                    /* 8: bad line '#' */
	    "options nf_conntrack dyndbg=+p async_probe\n"   /* 9: every module takes these */
	    "options br_netfilter a = b\n"                    /* 10: any module */
	    "options nf_conntrack -- hashsize=5\n"            /* 11: "--" ends the parameters */
	    "options nf_conntrack hashsize=6\n");             /* 12: after "--": ignored */
	put("/etc/modprobe.d/b.alias", "alias foo bar\nalias lonely\n");
	assert_int_equal(ht_modprobe_conf_read(scratch, &c), 0);
	assert_int_equal(c.nfiles, 2);
	assert_string_equal(c.files[0], "/etc/modprobe.d/a.conf");
	assert_string_equal(c.files[1], "/etc/modprobe.d/b.alias");

	k = must_find(&c, "nf_conntrack.hashsize");
	/* lines 1 (no value), 3 (no value), 4, 6, 7 */
	assert_int_equal(k->n, 5);
	check_assign(k, 0, "/etc/modprobe.d/a.conf", 1, NULL, false, NULL);
	check_assign(k, 2, "/etc/modprobe.d/a.conf", 4, "0x10000", false, NULL);
	check_assign(k, 4, "/etc/modprobe.d/a.conf", 7, "1", false, NULL);
	k = must_find(&c, "nf_conntrack.expect_hashsize");
	assert_int_equal(k->n, 2);
	check_assign(k, 0, "/etc/modprobe.d/a.conf", 2, "", false, NULL);
	check_assign(k, 1, "/etc/modprobe.d/a.conf", 5, "0400", false, NULL);
	assert_null(eff(&c, "nf_conntrack.acct"));
	assert_null(eff(&c, "br_netfilter.a"));
	assert_string_equal(eff(&c, "nf_conntrack.dyndbg"), "+p");

	/* line: kind */
	static const struct {
		unsigned line;
		enum ht_conf_problem_kind kind;
	} want[] = {
		{ 1, HT_CONF_SPACE_AROUND_EQ }, { 2, HT_CONF_SPACE_AROUND_EQ },
		{ 3, HT_CONF_MISSING_VALUE },   { 6, HT_CONF_BAD_VALUE },
		{ 8, HT_CONF_MALFORMED },       { 10, HT_CONF_SPACE_AROUND_EQ },
		{ 11, HT_CONF_MALFORMED },      { 12, HT_CONF_MALFORMED },
		{ 2, HT_CONF_MALFORMED },
	};
	for (size_t i = 0; i < c.nproblems && i < ARRAY_SIZE(want); i++) {
		if (c.problems[i].line != want[i].line || c.problems[i].kind != want[i].kind)
			fail_msg("problem %zu: %s (%s), want line %u kind %s", i,
				 c.problems[i].message,
				 ht_conf_problem_kind_name(c.problems[i].kind), want[i].line,
				 ht_conf_problem_kind_name(want[i].kind));
	}
	assert_int_equal(c.nproblems, ARRAY_SIZE(want));
	assert_string_equal(c.problems[0].message,
			    "/etc/modprobe.d/a.conf:1: options nf_conntrack: spaces around '=' in "
			    "\"hashsize =65536\": the kernel gets the parameter without a value, "
			    "which fails with EINVAL unless it is a bool, and then the module does "
			    "not load; the pieces after it are ignored as unknown parameters; "
			    "write hashsize=65536");
	assert_string_equal(c.problems[1].message,
			    "/etc/modprobe.d/a.conf:2: options nf_conntrack: spaces around '=' in "
			    "\"expect_hashsize= 256\": the kernel sets the parameter to an empty "
			    "value and ignores the value as an unknown parameter; write "
			    "expect_hashsize=256");
	assert_string_equal(c.problems[8].file, "/etc/modprobe.d/b.alias");
	ht_conf_free(&c);
}

/* ---- modules-load.d: tests/fixtures/bootconf-modules ---- */

static void test_modules_load(void **state)
{
	static const char *const files[] = {
		"/etc/modules-load.d/hosttune.conf", /* hides /usr/lib's (shadowed_module) */
		"/usr/lib/modules-load.d/legacy.conf",
		"/lib/modules-load.d/zz-lib.conf",   /* ROOT/lib is a real directory */
	};
	static const char *const masked[] = { "/run/modules-load.d/mask.conf" };
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;

	assert_int_equal(ht_modules_load_read(FIX("modules"), &c), 0);
	check_strv(c.files, c.nfiles, files, ARRAY_SIZE(files));
	check_strv(c.masked, c.nmasked, masked, ARRAY_SIZE(masked));
	k = must_find(&c, "nf_conntrack");
	assert_int_equal(k->n, 2);
	check_assign(k, 0, "/etc/modules-load.d/hosttune.conf", 2, "nf_conntrack", false, NULL);
	check_assign(k, 1, "/usr/lib/modules-load.d/legacy.conf", 7, "nf_conntrack", false, NULL);
	check_assign(must_find(&c, "nf_conntrack_ipv4"), 0, "/usr/lib/modules-load.d/legacy.conf",
		     2, "nf_conntrack_ipv4", false, NULL);
	/* "  nf_conntrack_ipv6  " is trimmed */
	check_assign(must_find(&c, "nf_conntrack_ipv6"), 0, "/usr/lib/modules-load.d/legacy.conf",
		     3, "nf_conntrack_ipv6", false, NULL);
	check_assign(must_find(&c, "br_netfilter"), 0, "/usr/lib/modules-load.d/legacy.conf", 6,
		     "br_netfilter", false, NULL);
	check_assign(must_find(&c, "tcp_bbr"), 0, "/lib/modules-load.d/zz-lib.conf", 1, "tcp_bbr",
		     false, NULL);
	assert_null(ht_conf_find(&c, "shadowed_module"));
	assert_null(ht_conf_find(&c, "masked_module"));
	assert_int_equal(c.n, 5);
	assert_int_equal(c.nproblems, 0);
	ht_conf_free(&c);
}

/* The kernel command line: '-' reads as '_', the last word wins, a prefix is no match. */
static void test_kcmdline_param(void **state)
{
	char *v;

	(void)state;
	v = ht_kcmdline_param(scratch, "nf_conntrack.hashsize");
	assert_null(v); /* no ROOT/proc/cmdline */
	put("/proc/cmdline", "BOOT_IMAGE=/vmlinuz nf_conntrack.hashsizes=1 "
	    "nf-conntrack.hashsize=16384 quiet\tnf_conntrack.hashsize=65536\n");
	v = ht_kcmdline_param(scratch, "nf_conntrack.hashsize");
	assert_non_null(v);
	assert_string_equal(v, "65536");
	free(v);
	put("/proc/cmdline", "nf-conntrack.hashsize=16384\n");
	v = ht_kcmdline_param(scratch, "nf_conntrack.hashsize");
	assert_non_null(v);
	assert_string_equal(v, "16384");
	free(v);
	assert_null(ht_kcmdline_param(scratch, "nf_conntrack.expect_hashsize"));
}

/* ---- a service's LimitNOFILE=: unit file and drop-ins ---- */

static void test_unit_name_valid(void **state)
{
	assert_true(ht_unit_name_valid("garage.service"));
	assert_true(ht_unit_name_valid("minio@data-1.service"));
	assert_true(ht_unit_name_valid("a\\x2db:c_d.service"));
	assert_false(ht_unit_name_valid("../etc.service"));
	assert_false(ht_unit_name_valid("a/b.service"));
	assert_false(ht_unit_name_valid(".service"));
	assert_false(ht_unit_name_valid(".hidden.service"));
	assert_false(ht_unit_name_valid("garage.socket"));
	assert_false(ht_unit_name_valid("garage"));
	assert_false(ht_unit_name_valid("gar age.service"));
	assert_false(ht_unit_name_valid("a@b@c.service"));
	assert_false(ht_unit_name_valid("@x.service"));
	assert_false(ht_unit_name_valid(""));
	assert_false(ht_unit_name_valid(NULL));
	{
		char longname[300];

		memset(longname, 'a', sizeof(longname));
		strcpy(longname + 256 - strlen(".service"), ".service"); /* 256 bytes */
		assert_false(ht_unit_name_valid(longname));
		strcpy(longname + 255 - strlen(".service"), ".service"); /* 255 bytes */
		assert_true(ht_unit_name_valid(longname));
	}
}

static void test_rlimit_parse(void **state)
{
	uint64_t s = 0, h = 0;

	assert_int_equal(ht_rlimit_parse("42000", &s, &h), 0);
	assert_true(s == 42000 && h == 42000);
	assert_int_equal(ht_rlimit_parse("1024:524288", &s, &h), 0);
	assert_true(s == 1024 && h == 524288);
	assert_int_equal(ht_rlimit_parse("65536:infinity", &s, &h), 0);
	assert_true(s == 65536 && h == UINT64_MAX);
	assert_int_equal(ht_rlimit_parse("infinity", &s, &h), 0);
	assert_true(s == UINT64_MAX && h == UINT64_MAX);
	assert_int_equal(ht_rlimit_parse("2:1", &s, &h), -EILSEQ);
	assert_int_equal(ht_rlimit_parse("", &s, &h), -EINVAL);
	assert_int_equal(ht_rlimit_parse("1K", &s, &h), -EINVAL);
	assert_int_equal(ht_rlimit_parse("-1", &s, &h), -EINVAL);
	assert_int_equal(ht_rlimit_parse(":5", &s, &h), -EINVAL);
	assert_int_equal(ht_rlimit_parse("5:", &s, &h), -EINVAL);
	assert_int_equal(ht_rlimit_parse("18446744073709551616", &s, &h), -EINVAL);
}

static void test_unit_limits_order(void **state)
{
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;

	/* The unit file in /usr/lib; /etc has none. */
	put("/usr/lib/systemd/system/garage.service",
	    "[Unit]\nDescription=x\nLimitNOFILE=7\n"                 /* 3: not [Service] */
	    "[Service]\nExecStart=/usr/bin/garage\nLimitNOFILE=1024\n"); /* 6 */
	put("/lib/systemd/system/garage.service", "[Service]\nLimitNOFILE=3\n"); /* later path */
	put("/etc/systemd/system/garage.service.d/90-hosttune.conf",
	    "# managed\n[Service]\nLimitNOFILE=42000:524288\n");     /* 3 */
	/* Hidden by /etc's 90-hosttune.conf of the same name. */
	put("/run/systemd/system/garage.service.d/90-hosttune.conf", "[Service]\nLimitNOFILE=5\n");
	/* An earlier name: applied before hosttune's. */
	put("/usr/lib/systemd/system/garage.service.d/50-vendor.conf",
	    "[Service]\nLimitNOFILE=65536\n");
	/* A later name in /run: applied after, and wins. */
	put("/run/systemd/system/garage.service.d/99-override.conf",
	    "[Service]\n; comment\nLimitNOFILE = \\\n  2048:4096\n");  /* 3-4 */
	/* The type's drop-ins, lowest precedence but name order still decides. */
	put("/etc/systemd/system/service.d/95-all.conf", "[Service]\nLimitNOFILE=4000\n");
	/* Hidden: the same name in garage.service.d of any path wins over service.d. */
	put("/usr/lib/systemd/system/service.d/99-override.conf", "[Service]\nLimitNOFILE=1\n");
	/* Another unit's drop-in: not read. */
	put("/etc/systemd/system/minio.service.d/99-zzz.conf", "[Service]\nLimitNOFILE=9\n");

	assert_int_equal(ht_unit_limits_read(scratch, "garage.service", &c), 0);
	k = must_find(&c, "LimitNOFILE");
	assert_int_equal(k->n, 5);
	check_assign(k, 0, "/usr/lib/systemd/system/garage.service", 6, "1024", false, NULL);
	check_assign(k, 1, "/usr/lib/systemd/system/garage.service.d/50-vendor.conf", 2, "65536",
	             false, NULL);
	check_assign(k, 2, "/etc/systemd/system/garage.service.d/90-hosttune.conf", 3,
	             "42000:524288", false, NULL);
	check_assign(k, 3, "/etc/systemd/system/service.d/95-all.conf", 2, "4000", false, NULL);
	check_assign(k, 4, "/run/systemd/system/garage.service.d/99-override.conf", 3,
	             "2048:4096", false, NULL);
	assert_string_equal(eff(&c, "LimitNOFILE"), "2048:4096");
	assert_int_equal(c.nproblems, 0);
	ht_conf_free(&c);
}

static void test_unit_limits_masks_and_bad_lines(void **state)
{
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;

	put("/etc/systemd/system/foo-bar@x.service.d/20-a.conf",
	    "[Service]\nLimitNOFILE=100\n"      /* 2 */
	    "LimitNOFILE=\n"                    /* 3: ignored, no reset */
	    "LimitNOFILE=9:8\n"                 /* 4: soft above hard: ignored */
	    "LimitNOFILE=lots\n");              /* 5: ignored */
	/* The template's directory and the "-" prefix's. */
	put("/usr/lib/systemd/system/foo-bar@.service.d/30-t.conf", "[Service]\nLimitNOFILE=300\n");
	put("/usr/lib/systemd/system/foo-@x.service.d/40-p.conf", "[Service]\nLimitNOFILE=400\n");
	/* Masked: an empty 40-p.conf in /etc hides /usr/lib's. */
	put("/etc/systemd/system/foo-bar@.service.d/40-p.conf", "");
	/* A link to /dev/null masks too. */
	put("/usr/lib/systemd/system/foo-bar@x.service.d/50-m.conf", "[Service]\nLimitNOFILE=500\n");
	put("/run/systemd/system/foo-bar@x.service.d/.hidden.conf", "[Service]\nLimitNOFILE=1\n");
	link_in("/dev/null", "/run/systemd/system/foo-bar@x.service.d/50-m.conf");
	/* The unit file comes from the template. */
	put("/usr/lib/systemd/system/foo-bar@.service", "[Service]\nLimitNOFILE=10\n");

	assert_int_equal(ht_unit_limits_read(scratch, "foo-bar@x.service", &c), 0);
	k = must_find(&c, "LimitNOFILE");
	assert_int_equal(k->n, 3);
	check_assign(k, 0, "/usr/lib/systemd/system/foo-bar@.service", 2, "10", false, NULL);
	check_assign(k, 1, "/etc/systemd/system/foo-bar@x.service.d/20-a.conf", 2, "100", false,
	             NULL);
	check_assign(k, 2, "/usr/lib/systemd/system/foo-bar@.service.d/30-t.conf", 2, "300", false,
	             NULL);
	assert_int_equal(c.nmasked, 2);
	assert_string_equal(c.masked[0], "/etc/systemd/system/foo-bar@.service.d/40-p.conf");
	assert_string_equal(c.masked[1], "/run/systemd/system/foo-bar@x.service.d/50-m.conf");
	assert_int_equal(c.nproblems, 3);
	assert_int_equal(c.problems[0].kind, HT_CONF_MISSING_VALUE);
	assert_int_equal(c.problems[0].line, 3);
	assert_int_equal(c.problems[1].kind, HT_CONF_BAD_VALUE);
	assert_int_equal(c.problems[1].line, 4);
	assert_int_equal(c.problems[2].kind, HT_CONF_BAD_VALUE);
	assert_int_equal(c.problems[2].line, 5);
	ht_conf_free(&c);

	/* The prefix directory counts for the unit it prefixes only. */
	assert_int_equal(ht_unit_limits_read(scratch, "foo.service", &c), 0);
	assert_null(ht_conf_find(&c, "LimitNOFILE"));
	ht_conf_free(&c);
	assert_int_equal(ht_unit_limits_read(scratch, "../x.service", &c), -EINVAL);
}

static void test_unit_setting_read(void **state)
{
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;

	put("/usr/lib/systemd/system/garage.service",
	    "[Unit]\nExecStart=/not/a/service/key\n"                    /* 2: [Unit] */
	    "[Service]\nExecStart=/usr/local/bin/garage -c /a.toml server\n" /* 4 */
	    "Environment=A=1 \\\n  \"B=two words\"\n"                   /* 5-6 */
	    "LimitNOFILE=lots\n");
	put("/etc/systemd/system/garage.service.d/10-reset.conf",
	    "[Service]\nExecStart=\nExecStart = /usr/bin/garage server\n"); /* 2, 3 */
	put("/run/systemd/system/garage.service.d/20-env.conf", "[Service]\nEnvironment=\n");

	/* Every line in order, the empty reset included, values as written. */
	assert_int_equal(ht_unit_setting_read(scratch, "garage.service", "ExecStart", &c), 0);
	k = must_find(&c, "ExecStart");
	assert_int_equal(k->n, 3);
	check_assign(k, 0, "/usr/lib/systemd/system/garage.service", 4,
	             "/usr/local/bin/garage -c /a.toml server", false, NULL);
	check_assign(k, 1, "/etc/systemd/system/garage.service.d/10-reset.conf", 2, "", false, NULL);
	check_assign(k, 2, "/etc/systemd/system/garage.service.d/10-reset.conf", 3,
	             "/usr/bin/garage server", false, NULL);
	/* The unit file is files[0], the only one ending in .service. */
	assert_true(c.nfiles == 3);
	assert_string_equal(c.files[0], "/usr/lib/systemd/system/garage.service");
	/* A key it does not check: no problem for LimitNOFILE=lots here. */
	assert_int_equal(c.nproblems, 0);
	assert_null(ht_conf_find(&c, "LimitNOFILE"));
	ht_conf_free(&c);

	/* A continued line is one assignment at its first line; the blank keeps the words apart. */
	assert_int_equal(ht_unit_setting_read(scratch, "garage.service", "Environment", &c), 0);
	k = must_find(&c, "Environment");
	assert_int_equal(k->n, 2);
	check_assign(k, 0, "/usr/lib/systemd/system/garage.service", 5, "A=1    \"B=two words\"",
	             false, NULL);
	check_assign(k, 1, "/run/systemd/system/garage.service.d/20-env.conf", 2, "", false, NULL);
	ht_conf_free(&c);

	/* LimitNOFILE through it is ht_unit_limits_read(): the bad value is a problem. */
	assert_int_equal(ht_unit_setting_read(scratch, "garage.service", "LimitNOFILE", &c), 0);
	assert_null(ht_conf_find(&c, "LimitNOFILE"));
	assert_int_equal(c.nproblems, 1);
	assert_int_equal(c.problems[0].kind, HT_CONF_BAD_VALUE);
	ht_conf_free(&c);

	assert_int_equal(ht_unit_setting_read(scratch, "garage.service", "", &c), -EINVAL);
	assert_int_equal(ht_unit_setting_read(scratch, "garage.service", NULL, &c), -EINVAL);
	assert_int_equal(ht_unit_setting_read(scratch, "garage.service", "A=B", &c), -EINVAL);
	assert_int_equal(ht_unit_setting_read(scratch, "garage", "ExecStart", &c), -EINVAL);
}

/* ---- the manager's [Manager] DefaultLimitNOFILE=: system.conf and system.conf.d ---- */

static void test_manager_setting_read(void **state)
{
	struct ht_conf c = { 0 };
	const struct ht_conf_key *k;

	/* Nothing at all: no key (systemd's built-in default applies). */
	assert_int_equal(ht_manager_setting_read(scratch, "DefaultLimitNOFILE", &c), 0);
	assert_null(ht_conf_find(&c, "DefaultLimitNOFILE"));
	assert_int_equal(c.nfiles, 0);
	ht_conf_free(&c);

	put("/etc/systemd/system.conf",
	    "#  This file is part of systemd.\n[Manager]\n#DefaultLimitNOFILE=1024:524288\n"
	    "DefaultLimitNOFILE=2048:524288\n"     /* 4 */
	    "[Service]\nDefaultLimitNOFILE=7\n"); /* 6: not [Manager] */
	/* Drop-ins: name order across directories, after the main file. */
	put("/usr/lib/systemd/system.conf.d/10-vendor.conf",
	    "[Manager]\nDefaultLimitNOFILE=8192\n"); /* 2 */
	/* Hidden by /etc's 20-local.conf. */
	put("/run/systemd/system.conf.d/20-local.conf", "[Manager]\nDefaultLimitNOFILE=1\n");
	put("/etc/systemd/system.conf.d/20-local.conf",
	    "[Manager]\nDefaultLimitNOFILE = \\\n  65536:1048576\n" /* 2-3 */
	    "DefaultLimitNOFILE=\n"                                 /* 4: ignored, no reset */
	    "DefaultLimitNOFILE=9:8\n");                            /* 5: ignored */
	/* Masked by an empty file of the same name in an earlier directory. */
	put("/usr/local/lib/systemd/system.conf.d/30-masked.conf", "");
	put("/usr/lib/systemd/system.conf.d/30-masked.conf", "[Manager]\nDefaultLimitNOFILE=3\n");
	/* Not *.conf, hidden, or the user manager's: not read. */
	put("/etc/systemd/system.conf.d/40-x.conf.bak", "[Manager]\nDefaultLimitNOFILE=4\n");
	put("/etc/systemd/system.conf.d/.50-x.conf", "[Manager]\nDefaultLimitNOFILE=5\n");
	put("/etc/systemd/user.conf.d/60-user.conf", "[Manager]\nDefaultLimitNOFILE=6\n");

	assert_int_equal(ht_manager_setting_read(scratch, "DefaultLimitNOFILE", &c), 0);
	k = must_find(&c, "DefaultLimitNOFILE");
	assert_int_equal(k->n, 3);
	check_assign(k, 0, "/etc/systemd/system.conf", 4, "2048:524288", false, NULL);
	check_assign(k, 1, "/usr/lib/systemd/system.conf.d/10-vendor.conf", 2, "8192", false, NULL);
	check_assign(k, 2, "/etc/systemd/system.conf.d/20-local.conf", 2, "65536:1048576", false,
	             NULL);
	assert_string_equal(eff(&c, "DefaultLimitNOFILE"), "65536:1048576");
	assert_int_equal(c.nmasked, 1);
	assert_string_equal(c.masked[0], "/usr/local/lib/systemd/system.conf.d/30-masked.conf");
	assert_int_equal(c.nproblems, 2);
	assert_int_equal(c.problems[0].kind, HT_CONF_MISSING_VALUE);
	assert_int_equal(c.problems[0].line, 4);
	assert_int_equal(c.problems[1].kind, HT_CONF_BAD_VALUE);
	assert_int_equal(c.problems[1].line, 5);
	assert_string_equal(c.problems[1].message,
	                    "/etc/systemd/system.conf.d/20-local.conf:5: DefaultLimitNOFILE=9:8: soft "
	                    "limit above the hard one; systemd ignores the line");
	ht_conf_free(&c);

	assert_int_equal(ht_manager_setting_read(scratch, "", &c), -EINVAL);
	assert_int_equal(ht_manager_setting_read(scratch, NULL, &c), -EINVAL);
	assert_int_equal(ht_manager_setting_read(scratch, "A=B", &c), -EINVAL);
	assert_int_equal(ht_manager_setting_read(scratch, "DefaultLimitNOFILE", NULL), -EINVAL);
}

static void test_problem_kind_names(void **state)
{
	assert_string_equal(ht_conf_problem_kind_name(HT_CONF_UNREADABLE), "unreadable");
	assert_string_equal(ht_conf_problem_kind_name(HT_CONF_MALFORMED), "malformed");
	assert_string_equal(ht_conf_problem_kind_name(HT_CONF_NOT_READ), "not-read");
	assert_string_equal(ht_conf_problem_kind_name(HT_CONF_SPACE_AROUND_EQ),
			    "space-around-equals");
	assert_string_equal(ht_conf_problem_kind_name(HT_CONF_UNKNOWN_PARAM), "unknown-parameter");
	assert_string_equal(ht_conf_problem_kind_name(HT_CONF_MISSING_VALUE), "missing-value");
	assert_string_equal(ht_conf_problem_kind_name(HT_CONF_BAD_VALUE), "bad-value");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sysctl_files_and_masks),
		cmocka_unit_test(test_sysctl_mask_and_override),
		cmocka_unit_test(test_sysctl_later_file_wins),
		cmocka_unit_test(test_sysctl_lines),
		cmocka_unit_test(test_sysctl_globs),
		cmocka_unit_test(test_sysctl_glob_order),
		cmocka_unit_test(test_sysctl_splitusr),
		cmocka_unit_test(test_sysctl_normalize),
		cmocka_unit_test_setup_teardown(test_sysctl_edge_cases, scratch_setup,
						scratch_teardown),
		cmocka_unit_test_setup_teardown(test_sysctl_many_keys, scratch_setup,
						scratch_teardown),
		cmocka_unit_test(test_sysctl_no_root),
		cmocka_unit_test(test_modprobe_fixture),
		cmocka_unit_test_setup_teardown(test_modprobe_options_edge_cases, scratch_setup,
						scratch_teardown),
		cmocka_unit_test(test_modules_load),
		cmocka_unit_test_setup_teardown(test_kcmdline_param, scratch_setup, scratch_teardown),
		cmocka_unit_test(test_problem_kind_names),
		cmocka_unit_test(test_unit_name_valid),
		cmocka_unit_test(test_rlimit_parse),
		cmocka_unit_test_setup_teardown(test_unit_limits_order, scratch_setup,
		                                scratch_teardown),
		cmocka_unit_test_setup_teardown(test_unit_limits_masks_and_bad_lines, scratch_setup,
		                                scratch_teardown),
		cmocka_unit_test_setup_teardown(test_unit_setting_read, scratch_setup,
		                                scratch_teardown),
		cmocka_unit_test_setup_teardown(test_manager_setting_read, scratch_setup,
		                                scratch_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
