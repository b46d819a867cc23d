/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* shared/escape.h: what is escaped, how, cut where, and the stream's held-back bytes. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "shared/escape.h"
#include "shared/util.h"

#define TEXT (HT_ESCAPE_CONTROL | HT_ESCAPE_KEEP_LAYOUT)

static void expect_escape(const char *in, unsigned flags, const char *want)
{
	_cleanup_free_ char *got = ht_escape(in, flags);

	assert_non_null(got);
	assert_string_equal(got, want);
	assert_int_equal(ht_escape_needed(in, flags), strcmp(in, want) != 0);
}

static void test_what_is_escaped(void **state)
{
	(void)state;
	/* UTF-8 text as it is: ASCII, e-acute, the euro sign, U+10FFFF, U+00A0. */
	expect_escape("plain caf\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf \xc2\xa0", TEXT,
	              "plain caf\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf \xc2\xa0");
	/* ESC, DEL, the C1 CSI (U+009B) and a byte that is not UTF-8. */
	expect_escape("\x1b[31mred\x7f\xc2\x9b\xff", TEXT, "\\x1b[31mred\\x7f\\xc2\\x9b\\xff");
	/* A report's layout stays; without KEEP_LAYOUT tabs and newlines are escaped by name. */
	expect_escape("a\tb\nc\rd", TEXT, "a\tb\nc\\rd");
	expect_escape("a\tb\nc\rd", HT_ESCAPE_CONTROL, "a\\tb\\nc\\rd");
	/* Without HT_ESCAPE_CONTROL only what is not UTF-8 (JSON: json-c escapes controls). */
	expect_escape("\x1b\x7f\xc2\x9b\t", 0, "\x1b\x7f\xc2\x9b\t");
	/* Overlong, surrogate, above U+10FFFF, cut short, a stray continuation byte. */
	expect_escape("\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82|\x80", 0,
	              "\\xc0\\xaf|\\xed\\xa0\\x80|\\xf4\\x90\\x80\\x80|\\xe2\\x82|\\x80");
	/* A backslash stays as it is. */
	expect_escape("C:\\x1b", TEXT, "C:\\x1b");
	/*
	 * The bidi controls, each byte escaped: ALM U+061C, LRM U+200E, RLM
	 * U+200F, LRE U+202A, RLO U+202E, LRI U+2066, PDI U+2069; their
	 * neighbours U+2029 (paragraph separator) and U+206A stay.
	 */
	expect_escape("\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f\xe2\x80\xaa\xe2\x80\xae\xe2\x81\xa6\xe2\x81\xa9",
	              TEXT,
	              "\\xd8\\x9c\\xe2\\x80\\x8e\\xe2\\x80\\x8f\\xe2\\x80\\xaa\\xe2\\x80\\xae"
	              "\\xe2\\x81\\xa6\\xe2\\x81\\xa9");
	expect_escape("\xe2\x80\xa9\xe2\x81\xaa", TEXT, "\xe2\x80\xa9\xe2\x81\xaa");
	/* Without HT_ESCAPE_CONTROL (JSON) they are text like any other. */
	expect_escape("\xe2\x80\xae", 0, "\xe2\x80\xae");
}

static void test_cut(void **state)
{
	char buf[8];

	(void)state;
	/* snprintf's contract: the whole length back, the buffer cut and terminated. */
	assert_int_equal(ht_escape_to(buf, sizeof(buf), "ab\x1b" "cd", 5, TEXT), 8);
	assert_string_equal(buf, "ab\\x1bc");
	/* Never inside an escape: "abcd" + "\x1b" does not fit in 7 + NUL. */
	assert_int_equal(ht_escape_to(buf, sizeof(buf), "abcd\x1b", 5, TEXT), 8);
	assert_string_equal(buf, "abcd");
	assert_int_equal(ht_escape_to(NULL, 0, "\xff", 1, 0), 4);
	assert_int_equal(ht_escape_to(buf, 1, "x", 1, 0), 1);
	assert_string_equal(buf, "");
	/* A NUL inside the @len bytes is a control character. */
	assert_int_equal(ht_escape_to(buf, sizeof(buf), "a\0b", 3, TEXT), 6);
	assert_string_equal(buf, "a\\x00b");
}

/* What the stream wrote to the pipe @rd so far (after fflush), NUL-terminated, in @buf. */
static const char *drain(int rd, char *buf, size_t size)
{
	ssize_t n = read(rd, buf, size - 1);

	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static void test_stream(void **state)
{
	int p[2];
	char buf[256];
	FILE *f;

	(void)state;
	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	f = ht_escape_fdopen(p[1], TEXT);
	assert_non_null(f);
	/* Escaped as ht_escape() does, the layout kept. */
	fputs("a\x1b[2Jb\tc\n", f);
	assert_int_equal(ht_escape_flush(f), 0);
	assert_string_equal(drain(p[0], buf, sizeof(buf)), "a\\x1b[2Jb\tc\n");
	/* A character cut between two writes is held back, then whole. */
	fputs("x\xe2\x82", f);
	assert_int_equal(fflush(f), 0);
	assert_string_equal(drain(p[0], buf, sizeof(buf)), "x");
	fputs("\xac!", f);
	assert_int_equal(fflush(f), 0);
	assert_string_equal(drain(p[0], buf, sizeof(buf)), "\xe2\x82\xac!");
	/* A start that does not go on as it should: escaped byte by byte once decided. */
	fputs("\xe2", f);
	assert_int_equal(fflush(f), 0);
	fputs("A", f);
	assert_int_equal(fflush(f), 0);
	assert_string_equal(drain(p[0], buf, sizeof(buf)), "\\xe2A");
	/* ht_escape_flush(): what is held back is shown at once. */
	fputs("\xf0\x9f", f);
	assert_int_equal(ht_escape_flush(f), 0);
	assert_string_equal(drain(p[0], buf, sizeof(buf)), "\\xf0\\x9f");
	/* The program's own codes pass raw, between escaped text. */
	fputs("\x1b", f);
	assert_int_equal(ht_escape_raw(f, "\x1b[1;31m"), 0);
	fputs("x", f);
	assert_int_equal(ht_escape_raw(f, "\x1b[0m"), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(drain(p[0], buf, sizeof(buf)), "\\x1b\x1b[1;31mx\x1b[0m");
	/* Held bytes at fclose(): escaped, not lost. */
	f = ht_escape_fdopen(p[1], TEXT);
	assert_non_null(f);
	fputs("\xc3", f);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(drain(p[0], buf, sizeof(buf)), "\\xc3");
	/* Any other stream: ht_escape_raw() is fputs(), ht_escape_flush() fflush(). */
	{
		_cleanup_free_ char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);

		assert_non_null(m);
		assert_int_equal(ht_escape_raw(m, "\x1b[0m"), 0);
		assert_int_equal(ht_escape_flush(m), 0);
		assert_int_equal(fclose(m), 0);
		assert_string_equal(text, "\x1b[0m");
	}
	/* A write error is the stream's, with write(2)'s errno. */
	close(p[0]);
	f = ht_escape_fdopen(p[1], TEXT);
	assert_non_null(f);
	fputs("lost", f);
	errno = 0;
	assert_int_equal(fflush(f), EOF);
	assert_int_equal(errno, EPIPE);
	assert_true(ferror(f));
	fclose(f);
	close(p[1]);
}

/* ht_escape_line_prefix(): a prefix before each line, changed between lines, raw or escaped. */
/* Instances as the kernel names them, as parts of fact names: read back unchanged. */
static void test_name_escape(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		/* Kept: letters, digits, "." and "-". */
		{ "eth0", "eth0" },
		{ "garage.service", "garage.service" },
		/* "/" of a cgroup path, "@" of a template unit, "_" doubled. */
		{ "system.slice/docker-1a.scope", "system.slice_2fdocker-1a.scope" },
		{ "system.slice/getty@tty1.service", "system.slice_2fgetty_40tty1.service" },
		{ "kubepods_pod", "kubepods__pod" },
		/* Interface names the kernel allows: "a+b", "a,b", a space is not one but any byte else. */
		{ "a+b", "a_2bb" },
		{ "a,b", "a_2cb" },
		/* UTF-8 byte by byte: U+00E9. */
		{ "\xc3\xa9" "0", "_c3_a90" },
		{ "x\n", "x_0a" },
	};
	char buf[2];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *e = ht_name_escape(cases[i].in), *u;

		assert_non_null(e);
		assert_string_equal(e, cases[i].out);
		u = ht_name_unescape(e);
		assert_non_null(u);
		assert_string_equal(u, cases[i].in);
		free(u);
		free(e);
	}
	/* Every byte but NUL, alone and between two letters, round-trips to a fact-name part. */
	for (int c = 1; c < 256; c++) {
		char in[4] = { 'a', (char)c, 'b', 0 };
		char *e = ht_name_escape(in), *u;

		assert_non_null(e);
		for (const char *p = e; *p; p++)
			assert_non_null(strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			                       "0123456789_.-", *p));
		u = ht_name_unescape(e);
		assert_non_null(u);
		assert_string_equal(u, in);
		free(u);
		free(e);
	}
	/* Not what ht_name_escape() writes: refused, EINVAL. */
	static const char *const bad[] = { "", "a_", "a_2", "a_2F", "a_00", "a_2e", "a_5f",
	                                   "a_zz", "a/b", "a b" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_null(ht_name_unescape(bad[i]));
		assert_int_equal(errno, EINVAL);
	}
	errno = 0;
	buf[0] = '\0';
	assert_null(ht_name_escape(buf));
	assert_int_equal(errno, EINVAL);
}

/* ht_instance_fact_to(): FAMILY.ESCAPED.SUFFIX, cut as snprintf(3) but never inside an escape. */
static void test_instance_fact(void **state)
{
	char buf[64], *s;

	(void)state;
	/* "+" is 0x2b, "_" doubled, U+00E9 byte by byte (0xc3 0xa9). */
	assert_int_equal(ht_instance_fact_to(buf, sizeof(buf), "nic", "a+b", "stats.rx_errors"),
	                 strlen("nic.a_2bb.stats.rx_errors"));
	assert_string_equal(buf, "nic.a_2bb.stats.rx_errors");
	ht_instance_fact_to(buf, sizeof(buf), "nic", "a_b", "mtu");
	assert_string_equal(buf, "nic.a__b.mtu");
	ht_instance_fact_to(buf, sizeof(buf), "nic", "\xc3\xa9" "0", "speed");
	assert_string_equal(buf, "nic._c3_a90.speed");
	/* Its instance part is what ht_name_escape() writes, for every byte. */
	for (int c = 1; c < 256; c++) {
		char in[4] = { 'a', (char)c, 'b', 0 }, *e = ht_name_escape(in);

		assert_non_null(e);
		ht_instance_fact_to(buf, sizeof(buf), "f", in, "s");
		assert_int_equal(strlen(buf), strlen(e) + 4);
		assert_memory_equal(buf + 2, e, strlen(e));
		free(e);
	}
	/* Cut: "nic." is 4 bytes and "a_2bb" needs 1 + 3 + 1; with 7 bytes "nic.a" and a NUL fit. */
	assert_int_equal(ht_instance_fact_to(buf, 7, "nic", "a+b", "x"), strlen("nic.a_2bb.x"));
	assert_string_equal(buf, "nic.a");
	/* No room at all: the length only. */
	assert_int_equal(ht_instance_fact_to(NULL, 0, "nic", "a+b", "x"), strlen("nic.a_2bb.x"));
	s = ht_instance_fact("cgroup", "system.slice/a.service", "memory_max");
	assert_non_null(s);
	assert_string_equal(s, "cgroup.system.slice_2fa.service.memory_max");
	free(s);
}

static void test_line_prefix(void **state)
{
	int p[2];
	char buf[256];
	FILE *f;

	(void)state;
	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	f = ht_escape_fdopen(p[1], TEXT);
	assert_non_null(f);
	/* Buffered before the prefix is set: without it (flushed first). */
	fputs("before\n", f);
	assert_int_equal(ht_escape_line_prefix(f, "<6>"), 0);
	fputs("one\n\ntwo", f);
	assert_int_equal(ht_escape_line_prefix(f, "<2>"), 0);
	/* The line "two" started under <6>: its end takes no new prefix. */
	fputs(" more\nthree \x1b\n", f);
	/* A character cut between writes at a line's start: the prefix once, first. */
	fputs("\xe2\x82", f);
	assert_int_equal(fflush(f), 0);
	fputs("\xac\n", f);
	/* Raw codes at a line's start get the prefix too. */
	assert_int_equal(ht_escape_raw(f, "\x1b[33m"), 0);
	fputs("w\n", f);
	assert_int_equal(ht_escape_line_prefix(f, ""), 0);
	fputs("none\n", f);
	assert_int_equal(ht_escape_flush(f), 0);
	assert_string_equal(drain(p[0], buf, sizeof(buf)),
	                    "before\n<6>one\n<6>\n<6>two more\n<2>three \\x1b\n<2>\xe2\x82\xac\n"
	                    "<2>\x1b[33mw\nnone\n");
	/* At most 15 bytes. */
	errno = 0;
	assert_int_equal(ht_escape_line_prefix(f, "0123456789abcdef"), EOF);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fclose(f), 0);
	close(p[0]);
	/* Any other stream: nothing. */
	assert_int_equal(ht_escape_line_prefix(stderr, "<3>"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_what_is_escaped),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_line_prefix),
		cmocka_unit_test(test_name_escape),
		cmocka_unit_test(test_instance_fact),
	};

	/* A closed pipe is an error to see, not a signal to die of. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
