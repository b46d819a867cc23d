/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <setjmp.h>
#include <cmocka.h>

#include "collect/collect.h"
#include "shared/nginx.h"
#include "shared/util.h"
#include "test-util.h"

/*
 * nginx's configuration reader: the tokens as ngx_conf_read_token() cuts
 * them (quotes, escapes, comments, ${var}), blocks, file:line of every
 * directive, the exact message of each malformed input, and includes with
 * globs below a tree as Debian lays nginx out. Lines were counted by hand.
 */

static struct ht_nginx_conf *parse_ok(const char *text)
{
	struct ht_nginx_conf *c = NULL;
	char *err = NULL;
	int r = ht_nginx_parse("nginx.conf", text, strlen(text), &c, &err);

	if (r < 0)
		fail_msg("parse failed (%d): %s", r, err ? err : "(no message)");
	assert_null(err);
	assert_non_null(c);
	return c;
}

static void parse_fails_n(const char *text, size_t len, const char *want)
{
	struct ht_nginx_conf *c = NULL;
	char *err = NULL;
	int r = ht_nginx_parse("nginx.conf", text, len, &c, &err);

	assert_int_equal(r, -EINVAL);
	assert_null(c);
	assert_non_null(err);
	assert_string_equal(err, want);
	free(err);
	/* the same without a place for the message */
	assert_int_equal(ht_nginx_parse("nginx.conf", text, len, &c, NULL), -EINVAL);
}

static void parse_fails(const char *text, const char *want)
{
	parse_fails_n(text, strlen(text), want);
}

static const char cookbook[] =
	"# Garage's cookbook, reverse-proxy.md\n"                     /* 1 */
	"upstream s3_backend {\n"                                     /* 2 */
	"  server 127.0.0.1:3900;\n"                                  /* 3 */
	"}\n"                                                         /* 4 */
	"server {\n"                                                  /* 5 */
	"  listen [::]:443 http2 ssl;\n"                              /* 6 */
	"  server_name \"s3.garage.tld\" *.s3.garage.tld;\n"          /* 7 */
	"  location / {\n"                                            /* 8 */
	"    proxy_pass http://s3_backend;\n"                         /* 9 */
	"    proxy_set_header Host $host; # signs\n"                  /* 10 */
	"    client_max_body_size 0;\n"                               /* 11 */
	"  }\n"                                                       /* 12 */
	"}\n";                                                        /* 13 */

static void test_blocks(void **state)
{
	struct ht_nginx_conf *c = parse_ok(cookbook);
	const struct ht_nginx_dir *up, *srv, *loc, *d;

	(void)state;
	assert_int_equal(c->n, 2);
	assert_int_equal(c->ndirectives, 9);
	up = &c->dirs[0];
	assert_string_equal(up->name, "upstream");
	assert_true(up->block);
	assert_int_equal(up->nargs, 1);
	assert_string_equal(up->args[0], "s3_backend");
	assert_int_equal(up->line, 2);
	assert_int_equal(up->nsub, 1);
	assert_int_equal(up->sub[0].line, 3);
	assert_string_equal(up->sub[0].args[0], "127.0.0.1:3900");
	srv = &c->dirs[1];
	assert_int_equal(srv->line, 5);
	assert_int_equal(srv->nsub, 3);
	d = ht_nginx_find(srv->sub, srv->nsub, "server_name");
	assert_non_null(d);
	assert_int_equal(d->line, 7);
	assert_int_equal(d->nargs, 2);
	assert_string_equal(d->args[0], "s3.garage.tld");
	assert_string_equal(d->args[1], "*.s3.garage.tld");
	d = ht_nginx_find(srv->sub, srv->nsub, "listen");
	assert_int_equal(d->nargs, 3);
	assert_string_equal(d->args[0], "[::]:443");
	loc = ht_nginx_find(srv->sub, srv->nsub, "location");
	assert_int_equal(loc->line, 8);
	assert_int_equal(loc->nsub, 3);
	d = ht_nginx_find(loc->sub, loc->nsub, "proxy_set_header");
	assert_int_equal(d->line, 10);
	assert_int_equal(d->nargs, 2);
	assert_string_equal(d->args[1], "$host");
	assert_string_equal(d->file, "nginx.conf");
	assert_null(ht_nginx_find(loc->sub, loc->nsub, "proxy_buffering"));
	ht_nginx_free(c);
}

static void test_words(void **state)
{
	struct ht_nginx_conf *c = parse_ok(
		"a 'x y' \"q\\\"t\" b\\ c 'it\\'s' \"\\t\\n\\z\" \"\";\n"    /* 1 */
		"b a#b ${var}x $x;\n"                                        /* 2 */
		"c\n  \"multi\nline\"\n;\n"                                  /* 3-6 */
		"if ($a = \"b\") { return 403; }\n"                          /* 7 */
		"d;");                                                       /* 8 */
	const struct ht_nginx_dir *d = &c->dirs[0];

	(void)state;
	assert_int_equal(c->n, 5);
	assert_int_equal(d->nargs, 6);
	assert_string_equal(d->args[0], "x y");
	assert_string_equal(d->args[1], "q\"t");
	/* a backslash joins the blank to the word and stays, as nginx keeps it */
	assert_string_equal(d->args[2], "b\\ c");
	assert_string_equal(d->args[3], "it's");
	/* \t and \n decoded, any other backslash kept */
	assert_string_equal(d->args[4], "\t\n\\z");
	assert_string_equal(d->args[5], "");
	d = &c->dirs[1];
	assert_int_equal(d->line, 2);
	/* '#' inside a word is no comment; '{' after '$' is part of the word */
	assert_int_equal(d->nargs, 3);
	assert_string_equal(d->args[0], "a#b");
	assert_string_equal(d->args[1], "${var}x");
	assert_string_equal(d->args[2], "$x");
	d = &c->dirs[2];
	assert_int_equal(d->line, 3);
	assert_string_equal(d->args[0], "multi\nline");
	d = &c->dirs[3];
	assert_int_equal(d->line, 7);
	assert_true(d->block);
	/* "(", "$a", "=", "b", ")": a ')' may follow a quote */
	assert_int_equal(d->nargs, 4);
	assert_string_equal(d->args[0], "($a");
	assert_string_equal(d->args[2], "b");
	assert_string_equal(d->args[3], ")");
	assert_int_equal(c->dirs[4].line, 8);
	ht_nginx_free(c);
}

static void test_errors(void **state)
{
	(void)state;
	/* '{' ends a word unless right after '$': "$x{" opens a block */
	parse_fails("a $x{;", "nginx.conf:1: expected a directive name, found \";\"");
	parse_fails("a;\n;", "nginx.conf:2: expected a directive name, found \";\"");
	parse_fails("{ a; }", "nginx.conf:1: expected a directive name, found \"{\"");
	parse_fails("a;\n}\n", "nginx.conf:2: expected a directive, found a \"}\" with no block open");
	parse_fails("http {\n server {\n }\n",
	            "nginx.conf:1: expected a \"}\" closing the block opened here, found the end "
	            "of the file");
	parse_fails("a b\n", "nginx.conf:1: expected \";\" or \"{\" ending the directive of line 1, "
	            "found the end of the file");
	parse_fails("s { a b }", "nginx.conf:1: expected \";\" or \"{\" ending the directive of "
	            "line 1, found \"}\"");
	parse_fails("a \"b\"c;", "nginx.conf:1: expected a blank, \";\" or \"{\" after a quoted "
	            "word, found \"c\"");
	parse_fails("a\n'b;\n", "nginx.conf:2: expected a closing ', found the end of the file");
	parse_fails_n("a b\0;", 5, "nginx.conf:1: expected text, found a NUL byte");
}

static void test_bounds(void **state)
{
	char *deep, *many, *p;
	size_t n;

	(void)state;
	/* 65 blocks nested: one more than HT_NGINX_DEPTH_MAX */
	deep = calloc(1, 65 * 4 + 65 + 1);
	assert_non_null(deep);
	for (p = deep, n = 0; n < 65; n++)
		p += sprintf(p, "b {");
	for (n = 0; n < 65; n++)
		*p++ = '}';
	parse_fails(deep, "nginx.conf:1: expected blocks at most 64 deep, found deeper");
	/* 64 parse */
	deep[strlen(deep) - 1] = '\0';
	memmove(deep, deep + 3, strlen(deep + 3) + 1);
	ht_nginx_free(parse_ok(deep));
	free(deep);

	/* 100001 directives "a;": one too many */
	many = malloc(100001 * 2 + 1);
	assert_non_null(many);
	for (n = 0; n < 100001; n++)
		memcpy(many + 2 * n, "a;", 2);
	many[2 * n] = '\0';
	parse_fails(many, "nginx.conf:1: expected at most 100000 directives, found more");
	many[2 * 100000] = '\0';
	ht_nginx_free(parse_ok(many));
	free(many);
}

/* Debian's layout: nginx.conf includes conf.d/ (*.conf) and sites-enabled/, each with its lines. */
static void test_load(void **state)
{
	_cleanup_free_ char *dir = ht_test_tmp_dir("nginx-load");
	struct ht_nginx_conf *c = NULL;
	const struct ht_nginx_dir *http, *srv, *d;
	char *err = NULL;

	(void)state;
	ht_test_put_file(dir, "etc/nginx/nginx.conf",
	                 "user www-data;\n"                                   /* 1 */
	                 "include /etc/nginx/modules-enabled/*.conf;\n"      /* 2 */
	                 "http {\n"                                          /* 3 */
	                 "\tclient_max_body_size 1m;\n"                      /* 4 */
	                 "\tinclude mime.types;\n"                           /* 5 */
	                 "\tinclude /etc/nginx/conf.d/*.conf;\n"             /* 6 */
	                 "\tinclude sites-enabled/*;\n"                      /* 7 */
	                 "}\n");                                             /* 8 */
	ht_test_put_file(dir, "etc/nginx/mime.types", "types {\n text/html html;\n}\n");
	ht_test_mkdirs(dir, "etc/nginx/modules-enabled");
	ht_test_put_file(dir, "etc/nginx/conf.d/b.conf", "proxy_buffering off;\n");
	ht_test_put_file(dir, "etc/nginx/conf.d/a.conf", "\n\nkeepalive_timeout 5;\n");
	ht_test_put_file(dir, "etc/nginx/conf.d/a.conf.bak", "bad {\n");
	ht_test_put_file(dir, "etc/nginx/conf.d/.hidden.conf", "bad {\n");
	ht_test_put_file(dir, "etc/nginx/sites-enabled/s3",
	                 "server {\n"                                        /* 1 */
	                 "  listen 80;\n"                                    /* 2 */
	                 "  include snippets/s3.conf;\n"                     /* 3 */
	                 "}\n");                                             /* 4 */
	ht_test_put_file(dir, "etc/nginx/snippets/s3.conf",
	                 "\n  proxy_pass http://127.0.0.1:3900;\n");

	assert_int_equal(ht_nginx_load(dir, "/etc/nginx/nginx.conf", &c, &err), 0);
	assert_null(err);
	assert_int_equal(c->nfiles, 6);
	assert_string_equal(c->files[0], "/etc/nginx/nginx.conf");
	assert_string_equal(c->files[1], "/etc/nginx/mime.types");
	/* a glob's matches in byte order, dot files and other suffixes left out */
	assert_string_equal(c->files[2], "/etc/nginx/conf.d/a.conf");
	assert_string_equal(c->files[3], "/etc/nginx/conf.d/b.conf");
	assert_string_equal(c->files[4], "/etc/nginx/sites-enabled/s3");
	assert_string_equal(c->files[5], "/etc/nginx/snippets/s3.conf");
	/* user, http: the empty modules-enabled glob adds nothing */
	assert_int_equal(c->n, 2);
	http = ht_nginx_find(c->dirs, c->n, "http");
	/* client_max_body_size, types, keepalive_timeout, proxy_buffering, server */
	assert_int_equal(http->nsub, 5);
	d = ht_nginx_find(http->sub, http->nsub, "keepalive_timeout");
	assert_string_equal(d->file, "/etc/nginx/conf.d/a.conf");
	assert_int_equal(d->line, 3);
	d = ht_nginx_find(http->sub, http->nsub, "proxy_buffering");
	assert_string_equal(d->file, "/etc/nginx/conf.d/b.conf");
	assert_int_equal(d->line, 1);
	srv = ht_nginx_find(http->sub, http->nsub, "server");
	assert_string_equal(srv->file, "/etc/nginx/sites-enabled/s3");
	d = ht_nginx_find(srv->sub, srv->nsub, "proxy_pass");
	assert_non_null(d);
	assert_string_equal(d->file, "/etc/nginx/snippets/s3.conf");
	assert_int_equal(d->line, 2);
	ht_nginx_free(c);

	/* an include naming no file: nginx refuses to start */
	ht_test_put_file(dir, "etc/nginx/sites-enabled/s3", "server {\n include none.conf;\n}\n");
	assert_int_equal(ht_nginx_load(dir, "/etc/nginx/nginx.conf", &c, &err), -EINVAL);
	assert_string_equal(err, "/etc/nginx/sites-enabled/s3:2: expected a file to include, found "
	                    "/etc/nginx/none.conf: No such file or directory");
	free(err);

	/* an included file that includes itself stops at the depth bound */
	ht_test_put_file(dir, "etc/nginx/sites-enabled/s3", "include sites-enabled/s3;\n");
	assert_int_equal(ht_nginx_load(dir, "/etc/nginx/nginx.conf", &c, &err), -EINVAL);
	assert_string_equal(err, "/etc/nginx/sites-enabled/s3:1: expected includes at most 16 deep, "
	                    "found deeper (a loop?)");
	free(err);

	/* a '}' in an included file cannot close the includer's block */
	ht_test_put_file(dir, "etc/nginx/sites-enabled/s3", "a;\n}\n");
	assert_int_equal(ht_nginx_load(dir, "/etc/nginx/nginx.conf", &c, &err), -EINVAL);
	assert_string_equal(err, "/etc/nginx/sites-enabled/s3:2: expected a directive, found a \"}\" "
	                    "closing a block of another file");
	free(err);

	/* no main file: -ENOENT, no message */
	assert_int_equal(ht_nginx_load(dir, "/etc/nginx/none.conf", &c, &err), -ENOENT);
	assert_null(err);
	ht_test_rm_tree(dir);
}

/* Sizes and times as ngx_parse_size() and ngx_parse_time() read them. */
static void test_units(void **state)
{
	static const struct {
		const char *s;
		int r;
		int64_t v;
	} sizes[] = {
		{ "1m", 0, 1048576 }, { "0", 0, 0 }, { "10K", 0, 10240 }, { "1g", 0, 1073741824 },
		{ "8388608", 0, 8388608 }, { "9m", 0, 9437184 }, { "", -EINVAL, 0 },
		{ "m", -EINVAL, 0 }, { "-1", -EINVAL, 0 }, { "1.5m", -EINVAL, 0 },
		{ "1 m", -EINVAL, 0 }, { "1t", -EINVAL, 0 },
		{ "99999999999999999999", -EINVAL, 0 },
	}, times[] = {
		{ "60s", 0, 60 }, { "60", 0, 60 }, { "1m 30s", 0, 90 }, { "1m30s", 0, 90 },
		{ "2h", 0, 7200 }, { "1d", 0, 86400 }, { "500ms", 0, 1 }, { "1s 500ms", 0, 2 },
		{ "0", 0, 0 }, { "", -EINVAL, 0 }, { "x", -EINVAL, 0 }, { "5q", -EINVAL, 0 },
		{ "-5s", -EINVAL, 0 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		int64_t v = -1;
		int r = ht_nginx_size_parse(sizes[i].s, &v);

		if (r != sizes[i].r || (r == 0 && v != sizes[i].v))
			fail_msg("size '%s': %d %lld", sizes[i].s, r, (long long)v);
	}
	for (size_t i = 0; i < ARRAY_SIZE(times); i++) {
		int64_t v = -1;
		int r = ht_nginx_time_parse(times[i].s, &v);

		if (r != times[i].r || (r == 0 && v != times[i].v))
			fail_msg("time '%s': %d %lld", times[i].s, r, (long long)v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocks),
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_units),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
