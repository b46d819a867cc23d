/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nginx's configuration reader (shared/nginx.h). Input: a main file, then
 * after a line "%%" an included one. The first part is given to
 * ht_nginx_parse() as it is (not NUL-terminated, so that ASan sees a read
 * past its end); then both are written into a tree as
 * etc/nginx/nginx.conf and etc/nginx/conf.d/a.conf and read with
 * ht_nginx_load(), which follows whatever include the input writes (a glob,
 * a loop, a missing file) below the tree only: the guard aborts on any
 * open outside it, and on any write.
 *
 * Properties: each returns 0 or -EINVAL (ht_nginx_load() -ENOENT too:
 * an include of nginx.conf from a file of the tree, none of which exist
 * outside it, never reaches this); on -EINVAL a one-line printable message
 * "FILE:LINE: expected ..." naming a file the reader was given and a line
 * of it, and no configuration; on success no message, every directive has
 * a name, a file of the configuration's list and a line of that file, a
 * block's directives only when it is a block, and ndirectives counts them
 * all, at most HT_NGINX_DIRECTIVES_MAX. ht_nginx_parse() gives the same
 * result without a place for the message. ASan's leak check covers
 * ht_nginx_free().
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/nginx.h"
#include "shared/util.h"

#include "fuzz-common.h"

#define FILE_NAME "nginx.conf"

static bool in_files(const struct ht_nginx_conf *c, const char *file)
{
	for (size_t i = 0; i < c->nfiles; i++)
		if (c->files[i] == file)
			return true;
	return false;
}

static size_t check_dirs(const struct ht_nginx_conf *c, const struct ht_nginx_dir *d, size_t n,
                         unsigned depth)
{
	size_t total = n;

	FZ_CHECK(depth <= HT_NGINX_DEPTH_MAX, "blocks %u deep", depth);
	FZ_CHECK(n == 0 || d, "%zu directives and no array", n);
	for (size_t i = 0; i < n; i++) {
		FZ_CHECK(d[i].name, "a directive without a name");
		FZ_CHECK(d[i].nargs == 0 || d[i].args, "arguments without an array");
		for (size_t j = 0; j < d[i].nargs; j++)
			FZ_CHECK(d[i].args[j], "a NULL argument");
		FZ_CHECK(in_files(c, d[i].file), "a directive of a file not in the list");
		FZ_CHECK(d[i].line >= 1, "line %u", d[i].line);
		FZ_CHECK(d[i].block || d[i].nsub == 0, "a simple directive with a block");
		total += check_dirs(c, d[i].sub, d[i].nsub, depth + 1);
	}
	return total;
}

static void check_message(const char *msg)
{
	FZ_CHECK(msg, "-EINVAL without a message");
	for (const char *c = msg; *c; c++)
		FZ_CHECK((*c >= 0x20 && *c < 0x7f) || *c == '\t' || (unsigned char)*c >= 0x80,
		         "message holds byte 0x%02x: %s", (unsigned char)*c, msg);
	FZ_CHECK(strstr(msg, ": expected "), "message without ': expected ': %s", msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_part parts[2] = { 0 };
	struct ht_nginx_conf *c = NULL, *c2 = NULL;
	char *err = NULL, path[4096];
	const char *dir;
	size_t np;
	int r, r2;

	if (size > 65536)
		return 0;
	np = fz_split((const char *)data, size, "%%", parts, 2);

	fz_guard_begin(NULL, false);
	r = ht_nginx_parse(FILE_NAME, parts[0].p, parts[0].n, &c, &err);
	FZ_CHECK(r == 0 || r == -EINVAL, "ht_nginx_parse returned %d", r);
	if (r == 0) {
		FZ_CHECK(c && !err, "success with a message or without a configuration");
		FZ_CHECK(check_dirs(c, c->dirs, c->n, 0) == c->ndirectives,
		         "ndirectives %zu is not the count", c->ndirectives);
	} else {
		FZ_CHECK(!c, "-EINVAL, and the configuration was set");
		check_message(err);
		FZ_CHECK(fz_has_place(err, FILE_NAME), "message without its place: %s", err);
	}
	r2 = ht_nginx_parse(FILE_NAME, parts[0].p, parts[0].n, &c2, NULL);
	FZ_CHECK(r2 == r, "%d with a message, %d without", r, r2);
	fz_guard_end();
	ht_nginx_free(c);
	ht_nginx_free(c2);
	free(err);
	c = NULL;
	err = NULL;

	/* The same below a tree, includes followed. */
	dir = fz_workdir();
	fz_empty_dir(dir);
	snprintf(path, sizeof(path), "%s/etc/nginx/nginx.conf", dir);
	FZ_CHECK(fz_write_file(path, parts[0].p, parts[0].n) == 0, "writing %s", path);
	if (np > 1) {
		snprintf(path, sizeof(path), "%s/etc/nginx/conf.d/a.conf", dir);
		FZ_CHECK(fz_write_file(path, parts[1].p, parts[1].n) == 0, "writing %s", path);
	}
	fz_guard_begin(dir, false);
	r = ht_nginx_load(dir, "/etc/nginx/nginx.conf", &c, &err);
	FZ_CHECK(r == 0 || r == -EINVAL, "ht_nginx_load returned %d", r);
	if (r == 0) {
		FZ_CHECK(c && !err, "success with a message or without a configuration");
		FZ_CHECK(check_dirs(c, c->dirs, c->n, 0) == c->ndirectives,
		         "ndirectives %zu is not the count", c->ndirectives);
		FZ_CHECK(c->nfiles >= 1 && c->nfiles <= HT_NGINX_FILES_MAX, "%zu files", c->nfiles);
	} else {
		FZ_CHECK(!c, "-EINVAL, and the configuration was set");
		check_message(err);
		FZ_CHECK(err[0] == '/', "message without a file: %s", err);
	}
	fz_guard_end();
	ht_nginx_free(c);
	free(err);
	return 0;
}
