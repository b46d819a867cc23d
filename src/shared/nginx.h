/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * nginx - a reader of nginx's configuration, as nginx's own
 * ngx_conf_read_token() (src/core/ngx_conf_file.c) cuts it. No C library
 * parses it; the grammar is small:
 *
 *   name arg ... ;          a simple directive
 *   name arg ... { ... }    a block (http, server, location, upstream, if, ...)
 *   # comment               from a '#' that starts a word to the line end
 *   "..." '...'             a quoted word; \" \' \\ stand for the character,
 *                           \t \r \n for tab, CR and LF, any other backslash
 *                           stays; after the closing quote a blank, ';', '{'
 *                           or ')' must follow
 *   a\ b                    outside quotes a backslash makes the next
 *                           character part of the word (kept as written,
 *                           then decoded as above)
 *   ${var}                  '{' right after '$' is part of the word
 *   include PATTERN;        (ht_nginx_load() only) the files PATTERN names,
 *                           relative to the prefix (the main file's
 *                           directory, /etc/nginx) unless absolute, read in
 *                           place of the directive, in the block where it
 *                           stands; '*', '?' and '[...]' glob (fnmatch(3),
 *                           a leading '.' matched only by a '.'), matches in
 *                           byte order; a pattern without them must name a
 *                           file, as nginx requires
 *
 * Refused with -EINVAL and "FILE:LINE: expected ..., found ..." (LINE from
 * 1): a ';' or '{' with no name before it, a '}' inside a directive or with
 * no block open, a quote followed by another character, the end of the file
 * inside a directive, a quote or a block, a NUL byte, blocks nested more
 * than HT_NGINX_DEPTH_MAX deep, more than HT_NGINX_DIRECTIVES_MAX
 * directives in all, includes more than HT_NGINX_INCLUDE_MAX deep, a file
 * larger than HT_NGINX_FILE_MAX bytes, more than HT_NGINX_FILES_MAX files.
 * Directive names are not checked against nginx's modules: any word is
 * taken, so that a configuration using third-party modules reads too.
 */

/* The largest file read (the same 1 MiB as garage.toml's). */
#define HT_NGINX_FILE_MAX (1024 * 1024)
/* Blocks nested at most this deep (nginx has no limit; real ones stay below 10). */
#define HT_NGINX_DEPTH_MAX 64
/* Directives in all files together. */
#define HT_NGINX_DIRECTIVES_MAX 100000
/* An include inside an included file ... at most this deep (a loop stops here). */
#define HT_NGINX_INCLUDE_MAX 16
/* Files read in all. */
#define HT_NGINX_FILES_MAX 1024

/* One directive, with its block when it has one; owned by its parent. */
struct ht_nginx_dir {
	char *name;                 /* the first word, decoded */
	char **args;                /* the other words, decoded; nargs of them */
	size_t nargs;
	const char *file;           /* the file it is written in (owned by the conf) */
	unsigned line;              /* the line of its name, from 1 */
	bool block;                 /* followed by { ... } */
	struct ht_nginx_dir *sub;   /* the block's directives, includes read in place */
	size_t nsub;
};

/* A configuration: the main context's directives and every file read. */
struct ht_nginx_conf {
	struct ht_nginx_dir *dirs;
	size_t n;
	char **files;               /* paths as nginx names them (below --root), in reading order */
	size_t nfiles;
	size_t ndirectives;         /* directives in all, blocks' too */
};

/*
 * Parse len bytes of buf (need not be NUL-terminated) as the file named
 * @file (for messages and every directive's .file); include directives stay
 * as they are written. On success *ret is the configuration (free with
 * ht_nginx_free()). -EINVAL on a syntax error or a bound, with *err a
 * malloc'd "FILE:LINE: expected ..., found ..." when err is not NULL (free()
 * it); -ENOMEM (no message). *ret is untouched on error.
 */
int ht_nginx_parse(const char *file, const char *buf, size_t len, struct ht_nginx_conf **ret,
                   char **err);

/*
 * Read the main file @path (absolute, "/etc/nginx/nginx.conf") below @root
 * (NULL or "/" for this host; links resolve inside the tree) with every
 * include read in place. Returns 0 and *ret; -ENOENT when @path itself is
 * absent (no message); -EINVAL on a syntax error, a bound, or an include
 * naming a file that cannot be read (*err: "FILE:LINE: ..."); another
 * negative errno reading @path (*err says which file); -ENOMEM.
 */
int ht_nginx_load(const char *root, const char *path, struct ht_nginx_conf **ret, char **err);

/* Free a configuration and everything in it; NULL is fine. */
void ht_nginx_free(struct ht_nginx_conf *c);

/*
 * The last directive named @name among @n directives @d (not in their
 * blocks): nginx takes the last of a repeated one, or refuses it with
 * "is duplicate"; either way the last is what is in force. NULL when none.
 */
const struct ht_nginx_dir *ht_nginx_find(const struct ht_nginx_dir *d, size_t n,
                                         const char *name);
