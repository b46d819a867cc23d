/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "collect/collect.h"
#include "engine/facts.h"
#include "engine/value.h"
#include "shared/bootconf.h"
#include "shared/toml.h"
#include "shared/util.h"

/*
 * Garage's configuration as the garage.* facts: which garage.toml the
 * service reads (its unit's ExecStart= and Environment=, read as systemd
 * reads them), that file's settings checked as Garage's deserializer checks
 * them (src/util/config.rs: a wrong type or an unparsable value stops Garage,
 * so it is an error here too), and its directories handed to
 * ht_collect_storage(). Before deployment, when no garage.toml exists, the
 * documented defaults stand in.
 */

#define GARAGE_UNIT "garage.service"
#define GARAGE_DEFAULT_CONFIG "/etc/garage.toml"
#define GARAGE_CONFIG_MAX (1024 * 1024)

#define SRC_DEFAULT "Garage default (reference-manual/configuration.md)"
#define SRC_PORTS "Garage's documented ports (reference-manual/configuration.md examples)"

/* Garage's defaults (src/util/config.rs default_block_size(), default_block_ram_buffer_max()). */
#define DEFAULT_BLOCK_SIZE 1048576
#define DEFAULT_BLOCK_RAM_BUFFER_MAX (256 * 1024 * 1024)

/* "FILE:LINE" as a new string, NULL when out of memory. */
static char *file_line(const char *file, unsigned line)
{
	char *s;

	return asprintf(&s, "%s:%u", file, line) < 0 ? NULL : s;
}

/* ---- the unit: ExecStart=, Environment=, LimitNOFILE= ---- */

/* What garage.service says about how Garage is started. */
struct unit_info {
	char *unit_file;   /* the unit file read, NULL when none (or masked) */
	bool masked;
	char *binary;      /* ExecStart='s program, prefixes gone; NULL when none */
	char *exec_source; /* "FILE:LINE" of that ExecStart= */
	char *config;      /* -c/--config of ExecStart=, else Environment=GARAGE_CONFIG_FILE */
	char *config_source;
	bool has_nofile;
	int64_t nofile;    /* soft limit; INT64_MAX for infinity */
	char *nofile_source;
};

static void unit_info_free(struct unit_info *u)
{
	free(u->unit_file);
	free(u->binary);
	free(u->exec_source);
	free(u->config);
	free(u->config_source);
	free(u->nofile_source);
	*u = (struct unit_info){ 0 };
}

/*
 * The next word of a command line or an Environment= value at *@p, as
 * systemd's extract_first_word() with EXTRACT_UNQUOTE | EXTRACT_CUNESCAPE
 * cuts it for the common cases: blanks separate words, "..." and '...'
 * group (a backslash inside double quotes escapes the next character), a
 * backslash outside quotes takes the next character as it is. Specifiers
 * (%i) and $VARIABLES are left as written. *@word is a new string; returns
 * 1, 0 at the end of the line, or -ENOMEM.
 */
static int next_word(const char **p, char **word)
{
	const char *s = *p;
	char *out;
	size_t n = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s) {
		*p = s;
		return 0;
	}
	out = malloc(strlen(s) + 1);
	if (!out)
		return -ENOMEM;
	while (*s && *s != ' ' && *s != '\t') {
		if (*s == '"' || *s == '\'') {
			char q = *s++;

			while (*s && *s != q) {
				if (q == '"' && *s == '\\' && s[1])
					s++;
				out[n++] = *s++;
			}
			if (*s)
				s++;
		} else if (*s == '\\' && s[1]) {
			out[n++] = s[1];
			s += 2;
		} else {
			out[n++] = *s++;
		}
	}
	out[n] = '\0';
	*p = s;
	*word = out;
	return 1;
}

/*
 * An ExecStart= command line: the program (its first word without the
 * prefixes @-:+! systemd.service(5) allows) in *@binary, and the garage.toml
 * its -c PATH, -cPATH, --config PATH or --config=PATH names in *@config
 * (the last one given; NULL when none). Words after "--" are not options.
 * Returns 0 or -ENOMEM.
 */
static int parse_exec(const char *line, char **binary, char **config)
{
	_cleanup_free_ char *first = NULL;
	const char *p = line;
	bool argv0 = false;
	int r;

	*binary = *config = NULL;
	r = next_word(&p, &first);
	if (r <= 0)
		return r;
	{
		const char *b = first;

		for (; *b && strchr("@-:+!", *b); b++)
			argv0 = argv0 || *b == '@';
		if (!(*binary = strdup(b)))
			return -ENOMEM;
	}
	for (bool skip_argv0 = argv0;;) {
		_cleanup_free_ char *w = NULL;
		const char *val = NULL;

		r = next_word(&p, &w);
		if (r < 0)
			return r;
		if (r == 0)
			return 0;
		/* With '@', the second word is argv[0], not an argument. */
		if (skip_argv0) {
			skip_argv0 = false;
			continue;
		}
		if (strcmp(w, "--") == 0)
			return 0;
		if (strcmp(w, "-c") == 0 || strcmp(w, "--config") == 0) {
			_cleanup_free_ char *v = NULL;

			r = next_word(&p, &v);
			if (r < 0)
				return r;
			if (r == 0)
				return 0;
			free(*config);
			*config = TAKE_PTR(v);
			continue;
		}
		if (strncmp(w, "--config=", 9) == 0)
			val = w + 9;
		else if (strncmp(w, "-c", 2) == 0 && w[2] != '-')
			val = w + 2;
		if (val) {
			free(*config);
			if (!(*config = strdup(val)))
				return -ENOMEM;
		}
	}
}

/*
 * GARAGE_CONFIG_FILE of the Environment= lines of @k, as systemd applies
 * them: an empty Environment= clears what came before, each line holds
 * space-separated (optionally quoted) VAR=VALUE assignments, a later one of
 * the same variable wins. *@value and *@source (FILE:LINE) are new strings,
 * NULL when none sets it. Returns 0 or -ENOMEM.
 */
static int environment_config(const struct ht_conf_key *k, char **value, char **source)
{
	*value = *source = NULL;
	for (size_t i = 0; k && i < k->n; i++) {
		const struct ht_conf_assign *a = &k->assigns[i];
		const char *p = a->value ? a->value : "";
		int r;

		if (!*p) {
			free(*value);
			free(*source);
			*value = *source = NULL;
			continue;
		}
		for (;;) {
			_cleanup_free_ char *w = NULL;

			r = next_word(&p, &w);
			if (r < 0)
				return r;
			if (r == 0)
				break;
			if (strncmp(w, "GARAGE_CONFIG_FILE=", 19) != 0)
				continue;
			free(*value);
			free(*source);
			*value = *source = NULL;
			/*
			 * An empty value names no file. Whether clap 2 (Garage's
			 * structopt) passes "" on or ignores it was not established;
			 * it is taken as unset, so Garage's default path stands, and
			 * an earlier assignment is overridden all the same.
			 */
			if (!w[19])
				continue;
			*value = strdup(w + 19);
			*source = file_line(a->file, a->line);
			if (!*value || !*source)
				return -ENOMEM;
		}
	}
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Reads garage.service and its drop-ins below @root into @u. Returns 0 or -ENOMEM. */
static int unit_read(const char *root, struct unit_info *u)
{
	struct ht_conf exec = { 0 }, env = { 0 }, lim = { 0 }, mgr = { 0 };
	const struct ht_conf_key *k;
	_cleanup_free_ char *env_config = NULL, *env_source = NULL;
	int r;

	r = ht_unit_setting_read(root, GARAGE_UNIT, "ExecStart", &exec);
	if (r >= 0)
		r = ht_unit_setting_read(root, GARAGE_UNIT, "Environment", &env);
	if (r >= 0)
		r = ht_unit_limits_read(root, GARAGE_UNIT, &lim);
	if (r < 0)
		goto out;

	if (exec.nfiles > 0 && ends_with(exec.files[0], ".service")) {
		if (!(u->unit_file = strdup(exec.files[0]))) {
			r = -ENOMEM;
			goto out;
		}
	} else if (exec.nmasked > 0 && ends_with(exec.masked[0], ".service")) {
		u->masked = true;
		if (!(u->unit_file = strdup(exec.masked[0]))) {
			r = -ENOMEM;
			goto out;
		}
	}

	/*
	 * The command: the last ExecStart= after the last empty one, which
	 * resets the list (systemd.service(5)). systemd refuses a simple
	 * service with several; the last is what a corrected unit would keep.
	 */
	k = ht_conf_find(&exec, "ExecStart");
	if (k) {
		const struct ht_conf_assign *last = NULL;

		for (size_t i = 0; i < k->n; i++)
			last = k->assigns[i].value && *k->assigns[i].value ? &k->assigns[i] : NULL;
		if (last) {
			r = parse_exec(last->value, &u->binary, &u->config);
			if (r < 0)
				goto out;
			if (!(u->exec_source = file_line(last->file, last->line))) {
				r = -ENOMEM;
				goto out;
			}
			if (u->config && asprintf(&u->config_source, "%s ExecStart=",
			                          u->exec_source) < 0) {
				u->config_source = NULL;
				r = -ENOMEM;
				goto out;
			}
		}
	}
	/* The command line wins over the environment (clap reads env only when absent). */
	if (!u->config) {
		r = environment_config(ht_conf_find(&env, "Environment"), &env_config, &env_source);
		if (r < 0)
			goto out;
		if (env_config) {
			u->config = TAKE_PTR(env_config);
			if (asprintf(&u->config_source, "%s Environment=GARAGE_CONFIG_FILE",
			             env_source) < 0) {
				u->config_source = NULL;
				r = -ENOMEM;
				goto out;
			}
		}
	}

	k = ht_conf_find(&lim, "LimitNOFILE");
	if (k) {
		const struct ht_conf_assign *a = ht_conf_effective(k);
		uint64_t soft, hard;

		/* ht_unit_limits_read() keeps only values ht_rlimit_parse() takes. */
		if (ht_rlimit_parse(a->value, &soft, &hard) == 0) {
			u->has_nofile = true;
			u->nofile = soft > INT64_MAX ? INT64_MAX : (int64_t)soft;
			if (!(u->nofile_source = file_line(a->file, a->line)))
				r = -ENOMEM;
		}
	}
	/*
	 * None in the unit: the service gets the manager's default, [Manager]
	 * DefaultLimitNOFILE= of system.conf and its drop-ins
	 * (systemd-system.conf(5)); systemd's built-in one when none sets it.
	 */
	if (r >= 0 && !u->has_nofile) {
		r = ht_manager_setting_read(root, "DefaultLimitNOFILE", &mgr);
		k = r >= 0 ? ht_conf_find(&mgr, "DefaultLimitNOFILE") : NULL;
		if (k) {
			const struct ht_conf_assign *a = ht_conf_effective(k);
			uint64_t soft, hard;

			/* ht_manager_setting_read() keeps only values ht_rlimit_parse() takes. */
			if (ht_rlimit_parse(a->value, &soft, &hard) == 0) {
				u->has_nofile = true;
				u->nofile = soft > INT64_MAX ? INT64_MAX : (int64_t)soft;
				if (asprintf(&u->nofile_source, "%s:%u DefaultLimitNOFILE= (no "
				             "LimitNOFILE= in " GARAGE_UNIT " or its drop-ins)",
				             a->file, a->line) < 0) {
					u->nofile_source = NULL;
					r = -ENOMEM;
				}
			}
		}
	}
out:
	ht_conf_free(&exec);
	ht_conf_free(&env);
	ht_conf_free(&lim);
	ht_conf_free(&mgr);
	return r;
}

static int unit_facts(struct ht_facts *f, const struct unit_info *u)
{
	_cleanup_free_ char *src = NULL;
	int r;

	if (u->unit_file && !u->masked)
		r = ht_facts_set_str(f, "garage.unit", u->unit_file, "systemd unit search path");
	else if (u->masked) {
		if (asprintf(&src, "%s: masked (empty, or a link to /dev/null)", u->unit_file) < 0)
			return -ENOMEM;
		r = ht_facts_set_unavailable(f, "garage.unit", ENOENT, NULL, src);
	} else
		r = ht_facts_set_unavailable(f, "garage.unit", ENOENT, NULL,
		                             "no " GARAGE_UNIT " in the systemd unit search path");
	if (r < 0)
		return r;
	if (u->has_nofile)
		return ht_facts_set_int(f, "garage.unit.nofile", u->nofile, "descriptors",
		                        u->nofile_source);
	return ht_facts_set_unavailable(f, "garage.unit.nofile", ENOENT, "descriptors",
	                                "no LimitNOFILE= in " GARAGE_UNIT " or its drop-ins, no "
	                                "DefaultLimitNOFILE= in systemd's system.conf or "
	                                "system.conf.d: systemd's built-in default (soft 1024)");
}

/*
 * garage.binary and garage.binary_bits: the ELF class byte (EI_CLASS, the
 * fifth byte after the magic "\x7fELF") of the executable below @root.
 */
static int binary_facts(struct ht_facts *f, const char *root, const struct unit_info *u)
{
	static const char *const candidates[] = { "/usr/local/bin/garage", "/usr/bin/garage" };
	_cleanup_free_ char *src = NULL;
	_cleanup_close_ int fd = -1;
	const char *bin = NULL, *bin_src = NULL;
	unsigned char hdr[5];
	ssize_t n;
	int r;

	if (u->binary && u->binary[0] == '/') {
		bin = u->binary;
		if (asprintf(&src, "%s ExecStart=", u->exec_source) < 0)
			return -ENOMEM;
		bin_src = src;
		fd = ht_open_file(root, bin);
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(candidates); i++) {
			fd = ht_open_file(root, candidates[i]);
			if (fd == -ENOMEM)
				return fd;
			if (fd != -ENOENT) {
				bin = candidates[i];
				bin_src = u->binary ? "the first of /usr/local/bin/garage, /usr/bin/garage "
				                      "(ExecStart= names no absolute path)"
				                    : "the first of /usr/local/bin/garage, /usr/bin/garage";
				break;
			}
		}
	}
	if (fd == -ENOMEM)
		return fd;
	if (!bin) {
		r = ht_facts_set_unavailable(f, "garage.binary", ENOENT, NULL,
		                             "no ExecStart= with a path, no /usr/local/bin/garage "
		                             "or /usr/bin/garage");
		if (r >= 0)
			r = ht_facts_set_unavailable(f, "garage.binary_bits", ENOENT, "bits",
			                             "no garage executable");
		return r;
	}
	r = ht_facts_set_str(f, "garage.binary", bin, bin_src);
	if (r < 0)
		return r;
	free(src);
	if (asprintf(&src, "%s ELF header (EI_CLASS)", bin) < 0)
		return (src = NULL), -ENOMEM;
	if (fd < 0)
		return ht_facts_set_unavailable(f, "garage.binary_bits", -fd, "bits", src);
	do
		n = pread(fd, hdr, sizeof(hdr), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return ht_facts_set_unavailable(f, "garage.binary_bits", errno, "bits", src);
	if (n < (ssize_t)sizeof(hdr) || memcmp(hdr, "\177ELF", 4) != 0 ||
	    (hdr[4] != 1 && hdr[4] != 2))
		return ht_facts_set_unavailable(f, "garage.binary_bits", EINVAL, "bits", src);
	return ht_facts_set_int(f, "garage.binary_bits", hdr[4] == 1 ? 32 : 64, "bits", src);
}

/* ---- garage.toml ---- */

/* One directory to probe: storage.NAME. */
struct gdir {
	char name[32];
	const char *role;
	const char *path;     /* as written (owned by the TOML tree or the input) */
	unsigned path_line;   /* a [[data_dir]] entry's path = line; 0 for the others */
	bool has_capacity;
	int64_t capacity;
	unsigned capacity_line;
	bool has_read_only;
	bool read_only;
	unsigned read_only_line;
};

struct gctx {
	struct ht_facts *f;
	const char *file; /* host path of garage.toml, for messages and sources */
	struct ht_error *err;
};

/* "the integer 5"-style words for a value found, written into @out. */
static void describe(const struct ht_toml_value *v, char *out, size_t n)
{
	switch (v->type) {
	case HT_TOML_STRING: {
		size_t k = 0;

		/* Quoted, control characters escaped, so the message stays one line. */
		out[k++] = '"';
		for (const char *s = v->str; *s && k + 6 < n; s++) {
			unsigned char c = (unsigned char)*s;

			if (c == '"' || c == '\\')
				k += (size_t)snprintf(out + k, n - k, "\\%c", c);
			else if (c < 0x20 || c == 0x7f)
				k += (size_t)snprintf(out + k, n - k, "\\x%02x", c);
			else
				out[k++] = (char)c;
		}
		snprintf(out + k, n - k, "\"");
		break;
	}
	case HT_TOML_INT:
		snprintf(out, n, "%" PRId64, v->i);
		break;
	case HT_TOML_BOOL:
		snprintf(out, n, "%s", v->b ? "true" : "false");
		break;
	case HT_TOML_STRINGS:
		snprintf(out, n, "an array of strings");
		break;
	case HT_TOML_TABLE:
		snprintf(out, n, "a table");
		break;
	case HT_TOML_TABLE_ARRAY:
		snprintf(out, n, "an array of tables");
		break;
	}
}

/* -EINVAL with "FILE:LINE: KEY: expected WHAT, found VALUE". */
static int bad_value(struct gctx *c, const char *key, const struct ht_toml_value *v,
                     const char *what)
{
	char found[160];

	describe(v, found, sizeof(found));
	return ht_error_set(c->err, EINVAL, "%s:%u: %s: expected %s, found %s", c->file, v->line, key,
	                    what, found);
}

/* -EINVAL with "FILE: expected KEY = EXAMPLE (Garage does not start without it), found none". */
static int missing(struct gctx *c, const char *key, const char *example)
{
	return ht_error_set(c->err, EINVAL,
	                    "%s: expected %s = %s (Garage does not start without it), found none",
	                    c->file, key, example);
}

/* A string value at @key of @t: 0 with *@v, 1 when absent, or -EINVAL (message set). */
static int get_string(struct gctx *c, const struct ht_toml_table *t, const char *path,
                      const char *key, const char *what, const struct ht_toml_value **v)
{
	*v = ht_toml_get(t, path);
	if (!*v)
		return 1;
	if ((*v)->type != HT_TOML_STRING)
		return bad_value(c, key, *v, what);
	return 0;
}

/*
 * A size as Garage's deserialize_capacity() takes it: a non-negative integer
 * of bytes, or a string ht_size_parse() reads; at most INT64_MAX here (a fact
 * is an int64). Returns 0, 1 when absent, or -EINVAL (message set).
 */
static int get_size(struct gctx *c, const struct ht_toml_table *t, const char *key, int64_t *out,
                    unsigned *line)
{
	const struct ht_toml_value *v = ht_toml_get(t, key);
	uint64_t u;
	int r;

	if (!v)
		return 1;
	*line = v->line;
	if (v->type == HT_TOML_INT) {
		if (v->i < 0)
			return bad_value(c, key, v, "a size in bytes (not negative)");
		*out = v->i;
		return 0;
	}
	if (v->type != HT_TOML_STRING)
		return bad_value(c, key, v, "an integer of bytes or a size such as \"1M\" or \"10MiB\"");
	r = ht_size_parse(v->str, &u);
	if (r == -ERANGE || (r == 0 && u > INT64_MAX))
		return bad_value(c, key, v, "a size below 8 EiB");
	if (r < 0)
		return bad_value(c, key, v, "a size such as \"1M\" or \"10MiB\" (units B, K, M, G, "
		                            "T, P and Ki, Mi, Gi, Ti, Pi, with or without a final B)");
	*out = (int64_t)u;
	return 0;
}

/* A boolean: 0 with *@out, 1 when absent, or -EINVAL (message set). */
static int get_bool(struct gctx *c, const struct ht_toml_table *t, const char *key, bool *out,
                    unsigned *line)
{
	const struct ht_toml_value *v = ht_toml_get(t, key);

	if (!v)
		return 1;
	if (v->type != HT_TOML_BOOL)
		return bad_value(c, key, v, "true or false");
	*out = v->b;
	*line = v->line;
	return 0;
}

/*
 * The port of a socket address as Rust's SocketAddr::from_str() reads it
 * ("IPV4:PORT" or "[IPV6]:PORT", IP literals only), or, when @unix_ok, a path
 * starting with '/' (Garage's UnixOrTCPSocketAddress: a Unix socket).
 * Returns 0 with *@port, 1 for a Unix socket, -EINVAL (message set).
 */
static int parse_bind(struct gctx *c, const char *key, const struct ht_toml_value *v, bool unix_ok,
                      int64_t *port)
{
	const char *s = v->str, *colon, *what;
	char host[INET6_ADDRSTRLEN + 64];
	unsigned char addr[16];
	bool v6 = false;
	uint64_t p = 0;
	size_t hl;

	what = unix_ok ? "IP:PORT, [IPv6]:PORT or a Unix socket path" : "IP:PORT or [IPv6]:PORT";
	if (unix_ok && s[0] == '/')
		return 1;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return bad_value(c, key, v, what);
		hl = (size_t)(close - s - 1);
		if (hl >= sizeof(host))
			return bad_value(c, key, v, what);
		memcpy(host, s + 1, hl);
		host[hl] = '\0';
		/* A scope ("%2") follows the address in Rust's syntax: numeric only. */
		{
			char *pct = strchr(host, '%');

			if (pct) {
				if (!pct[1] || strspn(pct + 1, "0123456789") != strlen(pct + 1))
					return bad_value(c, key, v, what);
				*pct = '\0';
			}
		}
		colon = close + 1;
		v6 = true;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return bad_value(c, key, v, what);
		hl = (size_t)(colon - s);
		if (hl >= sizeof(host))
			return bad_value(c, key, v, what);
		memcpy(host, s, hl);
		host[hl] = '\0';
	}
	if (inet_pton(v6 ? AF_INET6 : AF_INET, host, addr) != 1)
		return bad_value(c, key, v, what);
	if (!colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return bad_value(c, key, v, what);
	for (const char *d = colon + 1; *d; d++) {
		p = p * 10 + (uint64_t)(*d - '0');
		if (p > 1000000)
			break;
	}
	if (p < 1 || p > 65535)
		return ht_error_set(c->err, EINVAL,
		                    "%s:%u: %s: expected a port from 1 to 65535, found %s", c->file,
		                    v->line, key, colon + 1);
	*port = (int64_t)p;
	return 0;
}

/*
 * One port fact from @path of @t: absent -> unavailable ENOENT (Garage
 * serves no such endpoint), a Unix socket -> unavailable ENOENT saying so,
 * else the port with source FILE:LINE.
 */
static int port_fact(struct gctx *c, const struct ht_toml_table *t, const char *path,
                     const char *fact, bool unix_ok)
{
	const struct ht_toml_value *v;
	_cleanup_free_ char *src = NULL;
	int64_t port = 0;
	int r;

	r = get_string(c, t, path, path, unix_ok ? "a string: IP:PORT, [IPv6]:PORT or a Unix "
	                                           "socket path" : "a string: IP:PORT or [IPv6]:PORT", &v);
	if (r < 0)
		return r;
	if (r == 1) {
		if (asprintf(&src, "%s: no %s", c->file, path) < 0)
			return -ENOMEM;
		return ht_facts_set_unavailable(c->f, fact, ENOENT, NULL, src);
	}
	r = parse_bind(c, path, v, unix_ok, &port);
	if (r < 0)
		return r;
	if (r == 1) {
		if (asprintf(&src, "%s:%u: %s is a Unix socket (%s), no TCP port", c->file, v->line,
		             path, v->str) < 0)
			return -ENOMEM;
		return ht_facts_set_unavailable(c->f, fact, ENOENT, NULL, src);
	}
	if (!(src = file_line(c->file, v->line)))
		return -ENOMEM;
	return ht_facts_set_int(c->f, fact, port, NULL, src);
}

/*
 * The directories of data_dir: one string, or [[data_dir]] entries (also
 * written inline, data_dir = [ { path = ..., capacity = ... }, ... ], the
 * same array of tables to the TOML reader). An entry's messages give its own
 * line: of its [[data_dir]] header, or of its '{'.
 */
static int data_dirs(struct gctx *c, const struct ht_toml_table *t, struct gdir **dirs, size_t *n)
{
	const struct ht_toml_value *v = ht_toml_get(t, "data_dir");
	struct gdir *d;

	if (!v)
		return missing(c, "data_dir", "\"DIR\" or [[data_dir]] entries");
	if (v->type == HT_TOML_STRING) {
		if (!v->str[0])
			return bad_value(c, "data_dir", v, "a directory path");
		if (!(d = calloc(1, sizeof(*d))))
			return -ENOMEM;
		snprintf(d->name, sizeof(d->name), "data");
		d->role = "data";
		d->path = v->str;
		*dirs = d;
		*n = 1;
		return 0;
	}
	if (v->type != HT_TOML_TABLE_ARRAY)
		return bad_value(c, "data_dir", v, "a directory path or [[data_dir]] entries");
	if (!(d = calloc(v->n_tables, sizeof(*d))))
		return -ENOMEM;
	for (size_t i = 0; i < v->n_tables; i++) {
		const struct ht_toml_table *e = v->tables[i];
		const struct ht_toml_value *pv;
		unsigned hl = e->line;
		int r;

		snprintf(d[i].name, sizeof(d[i].name), "data%zu", i + 1);
		d[i].role = "data";
		r = get_string(c, e, "path", "path", "a directory path", &pv);
		if (r == 0 && !pv->str[0])
			r = bad_value(c, "path", pv, "a directory path");
		if (r == 1)
			r = ht_error_set(c->err, EINVAL, "%s:%u: [[data_dir]]: expected path = \"DIR\" "
			                 "in this entry (Garage does not start without it), found none",
			                 c->file, hl);
		if (r == 0) {
			d[i].path = pv->str;
			d[i].path_line = pv->line;
			r = get_bool(c, e, "read_only", &d[i].read_only, &d[i].read_only_line);
			d[i].has_read_only = r == 0;
		}
		if (r >= 0) {
			const struct ht_toml_value *cv = ht_toml_get(e, "capacity");

			/* DataDir.capacity is an Option<String> in Garage's config.rs. */
			if (cv && cv->type != HT_TOML_STRING)
				r = bad_value(c, "capacity", cv, "a string such as \"2T\" (Garage reads "
				                                 "capacity as a string)");
			else if (cv)
				r = get_size(c, e, "capacity", &d[i].capacity, &d[i].capacity_line);
			else
				r = 1;
			d[i].has_capacity = r == 0;
			if (r == 1 && !d[i].read_only)
				r = ht_error_set(c->err, EINVAL, "%s:%u: [[data_dir]]: expected capacity "
				                 "= \"SIZE\" in this entry (Garage requires it unless "
				                 "read_only = true), found none", c->file, hl);
		}
		if (r < 0) {
			free(d);
			return r;
		}
	}
	*dirs = d;
	*n = v->n_tables;
	return 0;
}

/* db_engine as Garage's Engine::from_str() names it: aliases to their engine, others as written. */
static const char *db_engine_name(const char *s)
{
	if (strcmp(s, "heed") == 0)
		return "lmdb";
	if (strcmp(s, "sqlite3") == 0 || strcmp(s, "rusqlite") == 0)
		return "sqlite";
	return s;
}

/* garage.metadata_dir and garage.data_dir (@d's @n paths, space-separated). */
static int dir_facts(struct gctx *c, const struct ht_toml_table *t,
                     const struct ht_toml_value *meta, const struct gdir *d, size_t n)
{
	_cleanup_free_ char *src = NULL, *list = NULL;
	size_t len = 0;
	int r;

	if (!(src = file_line(c->file, meta->line)))
		return -ENOMEM;
	r = ht_facts_set_str(c->f, "garage.metadata_dir", meta->str, src);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		len += strlen(d[i].path) + 1;
	if (!(list = calloc(1, len + 1)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(list, " ");
		strcat(list, d[i].path);
	}
	free(src);
	src = file_line(c->file, ht_toml_get(t, "data_dir")->line);
	return src ? ht_facts_set_str(c->f, "garage.data_dir", list, src) : -ENOMEM;
}

/*
 * garage.db_engine, garage.block_size, garage.block_ram_buffer_max,
 * garage.metadata_fsync and garage.data_fsync: as set, else Garage's default.
 */
static int setting_facts(struct gctx *c, const struct ht_toml_table *t)
{
	static const struct {
		const char *key;
		const char *fact;
		int64_t def;
	} sizes[] = {
		{ "block_size", "garage.block_size", DEFAULT_BLOCK_SIZE },
		{ "block_ram_buffer_max", "garage.block_ram_buffer_max", DEFAULT_BLOCK_RAM_BUFFER_MAX },
	};
	static const char *const bools[] = { "metadata_fsync", "data_fsync" };
	const struct ht_toml_value *v;
	_cleanup_free_ char *src = NULL;
	int r;

	/* db_engine */
	r = get_string(c, t, "db_engine", "db_engine", "a string: \"lmdb\" or \"sqlite\"", &v);
	if (r == 1)
		r = ht_facts_set_str(c->f, "garage.db_engine", "lmdb", SRC_DEFAULT);
	else if (r == 0) {
		src = file_line(c->file, v->line);
		r = src ? ht_facts_set_str(c->f, "garage.db_engine", db_engine_name(v->str), src)
		        : -ENOMEM;
	}

	/* block_size, block_ram_buffer_max */
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(sizes); i++) {
		int64_t size = 0;
		unsigned line = 0;

		r = get_size(c, t, sizes[i].key, &size, &line);
		if (r == 1)
			r = ht_facts_set_int(c->f, sizes[i].fact, sizes[i].def, "bytes",
			                     SRC_DEFAULT);
		else if (r == 0) {
			free(src);
			src = file_line(c->file, line);
			r = src ? ht_facts_set_int(c->f, sizes[i].fact, size, "bytes", src)
			        : -ENOMEM;
		}
	}

	/* metadata_fsync, data_fsync */
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(bools); i++) {
		char fact[64];
		bool b = false;
		unsigned line = 0;

		snprintf(fact, sizeof(fact), "garage.%s", bools[i]);
		r = get_bool(c, t, bools[i], &b, &line);
		if (r == 1)
			r = ht_facts_set_bool(c->f, fact, false, SRC_DEFAULT);
		else if (r == 0) {
			free(src);
			src = file_line(c->file, line);
			r = src ? ht_facts_set_bool(c->f, fact, b, src) : -ENOMEM;
		}
	}
	return r;
}

/* garage.compression_level: an i32, or "none" in any case (deserialize_compression()). */
static int compression_fact(struct gctx *c, const struct ht_toml_table *t)
{
	const struct ht_toml_value *v = ht_toml_get(t, "compression_level");
	_cleanup_free_ char *src = NULL;

	if (!v)
		return ht_facts_set_str(c->f, "garage.compression_level", "1", SRC_DEFAULT);
	if (v->type == HT_TOML_INT && v->i >= INT32_MIN && v->i <= INT32_MAX) {
		char num[24];

		snprintf(num, sizeof(num), "%" PRId64, v->i);
		src = file_line(c->file, v->line);
		return src ? ht_facts_set_str(c->f, "garage.compression_level", num, src) : -ENOMEM;
	}
	if (v->type == HT_TOML_INT)
		return bad_value(c, "compression_level", v,
		                 "a level from -2147483648 to 2147483647 (zstd: -99 to 22)");
	if (v->type == HT_TOML_STRING && strcasecmp(v->str, "none") == 0) {
		src = file_line(c->file, v->line);
		return src ? ht_facts_set_str(c->f, "garage.compression_level", "none", src)
		           : -ENOMEM;
	}
	return bad_value(c, "compression_level", v, "an integer or \"none\"");
}

/* garage.metadata_auto_snapshot_interval: unset by default (no snapshots). */
static int snapshot_fact(struct gctx *c, const struct ht_toml_table *t)
{
	const struct ht_toml_value *v;
	_cleanup_free_ char *src = NULL;
	int r;

	r = get_string(c, t, "metadata_auto_snapshot_interval", "metadata_auto_snapshot_interval",
	               "a duration string such as \"6h\"", &v);
	if (r == 1) {
		if (asprintf(&src, "%s: no metadata_auto_snapshot_interval (Garage's default: "
		             "no snapshots)", c->file) < 0) {
			src = NULL;
			return -ENOMEM;
		}
		return ht_facts_set_unavailable(c->f, "garage.metadata_auto_snapshot_interval",
		                                ENOENT, NULL, src);
	}
	if (r < 0)
		return r;
	src = file_line(c->file, v->line);
	return src ? ht_facts_set_str(c->f, "garage.metadata_auto_snapshot_interval", v->str, src)
	           : -ENOMEM;
}

/* The facts of a parsed garage.toml, and its directories in @dirs. */
static int config_facts(struct gctx *c, const struct ht_toml_table *t, struct gdir **dirs,
                        size_t *ndirs)
{
	const struct ht_toml_value *meta;
	struct gdir *d = NULL;
	size_t n = 0;
	int r;

	/* Everything Garage refuses is found before any fact is set. */
	r = get_string(c, t, "metadata_dir", "metadata_dir", "a directory path", &meta);
	if (r == 0 && !meta->str[0])
		r = bad_value(c, "metadata_dir", meta, "a directory path");
	if (r == 1)
		r = missing(c, "metadata_dir", "\"DIR\"");
	if (r < 0)
		return r;
	r = data_dirs(c, t, &d, &n);
	if (r < 0)
		return r;
	if (!ht_toml_get(t, "rpc_bind_addr"))
		r = missing(c, "rpc_bind_addr", "\"IP:PORT\"");

	if (r >= 0)
		r = dir_facts(c, t, meta, d, n);
	if (r >= 0)
		r = setting_facts(c, t);
	if (r >= 0)
		r = compression_fact(c, t);
	if (r >= 0)
		r = snapshot_fact(c, t);
	/* Ports: rpc_bind_addr is a SocketAddr; the HTTP endpoints may be Unix sockets. */
	if (r >= 0)
		r = port_fact(c, t, "rpc_bind_addr", "garage.rpc_port", false);
	if (r >= 0)
		r = port_fact(c, t, "s3_api.api_bind_addr", "garage.s3_port", true);
	if (r >= 0)
		r = port_fact(c, t, "s3_web.bind_addr", "garage.web_port", true);
	if (r >= 0)
		r = port_fact(c, t, "admin.api_bind_addr", "garage.admin_port", true);
	if (r < 0) {
		free(d);
		return r;
	}
	*dirs = d;
	*ndirs = n;
	return 0;
}

/* The facts before deployment: the directories from @in, Garage's defaults for the rest. */
static int default_facts(struct ht_facts *f)
{
	static const struct {
		const char *fact;
		int64_t port;
	} ports[] = {
		{ "garage.s3_port", 3900 },
		{ "garage.rpc_port", 3901 },
	};
	int r;

	r = ht_facts_set_str(f, "garage.db_engine", "lmdb", SRC_DEFAULT);
	if (r >= 0)
		r = ht_facts_set_int(f, "garage.block_size", DEFAULT_BLOCK_SIZE, "bytes",
		                     SRC_DEFAULT);
	if (r >= 0)
		r = ht_facts_set_int(f, "garage.block_ram_buffer_max", DEFAULT_BLOCK_RAM_BUFFER_MAX,
		                     "bytes", SRC_DEFAULT);
	if (r >= 0)
		r = ht_facts_set_bool(f, "garage.metadata_fsync", false, SRC_DEFAULT);
	if (r >= 0)
		r = ht_facts_set_bool(f, "garage.data_fsync", false, SRC_DEFAULT);
	if (r >= 0)
		r = ht_facts_set_str(f, "garage.compression_level", "1", SRC_DEFAULT);
	if (r >= 0)
		r = ht_facts_set_unavailable(f, "garage.metadata_auto_snapshot_interval", ENOENT, NULL,
		                             SRC_DEFAULT ": no snapshots");
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(ports); i++)
		r = ht_facts_set_int(f, ports[i].fact, ports[i].port, NULL, SRC_PORTS);
	/* [s3_web] and [admin] are Options in config.rs: no section, no listener. */
	if (r >= 0)
		r = ht_facts_set_unavailable(f, "garage.web_port", ENOENT, NULL,
		                             "not configured: Garage binds it only when garage.toml "
		                             "sets [s3_web] bind_addr");
	if (r >= 0)
		r = ht_facts_set_unavailable(f, "garage.admin_port", ENOENT, NULL,
		                             "not configured: Garage binds it only when garage.toml "
		                             "sets [admin] api_bind_addr");
	return r;
}

/*
 * The directory ht_collect_storage() is given: a relative path as Garage
 * would open it from the service's working directory, "/" unless the unit
 * says otherwise.
 */
static char *absolute(const char *path)
{
	char *s;

	if (path[0] == '/')
		return strdup(path);
	return asprintf(&s, "/%s", path) < 0 ? NULL : s;
}

/* storage.list, storage.NAME via ht_collect_storage(), and the [[data_dir]] facts. */
static int storage_facts(struct ht_facts *f, const char *root, const char *file,
                         const struct gdir *meta, const struct gdir *dirs, size_t n, bool measure)
{
	_cleanup_free_ char *list = NULL;
	size_t len = (meta ? strlen(meta->name) : 0) + 1;
	int r;

	for (size_t i = 0; i < n; i++)
		len += strlen(dirs[i].name) + 1;
	if (!(list = calloc(1, len)))
		return -ENOMEM;
	if (meta)
		strcpy(list, meta->name);
	for (size_t i = 0; i < n; i++) {
		if (*list)
			strcat(list, " ");
		strcat(list, dirs[i].name);
	}
	r = ht_facts_set_str(f, "storage.list", list,
	                     file ? file : "garage.metadata_dir, garage.data_dir");
	for (size_t i = meta ? 0 : 1; r >= 0 && i <= n; i++) {
		const struct gdir *d = i == 0 ? meta : &dirs[i - 1];
		_cleanup_free_ char *abs = absolute(d->path), *src = NULL;
		char fact[64];

		if (!abs)
			return -ENOMEM;
		r = ht_collect_storage(f, root, d->name, d->role, abs, measure);
		/*
		 * path and role come from where garage.metadata_dir / garage.data_dir
		 * do; a [[data_dir]] entry's from its own path = line.
		 */
		if (r >= 0) {
			const struct ht_fact *g = ht_facts_get(f, i == 0 ? "garage.metadata_dir"
			                                                 : "garage.data_dir");
			_cleanup_free_ char *gsrc = file && d->path_line ? file_line(file, d->path_line)
			                            : g && g->source    ? strdup(g->source)
			                                                : NULL;
			const char *from = gsrc ? gsrc : file ? file : "garage.metadata_dir, garage.data_dir";

			snprintf(fact, sizeof(fact), "storage.%s.path", d->name);
			r = ht_facts_set_str(f, fact, abs, from);
			if (r >= 0) {
				snprintf(fact, sizeof(fact), "storage.%s.role", d->name);
				r = ht_facts_set_str(f, fact, d->role, from);
			}
		}
		if (r >= 0 && d->has_capacity) {
			snprintf(fact, sizeof(fact), "storage.%s.capacity", d->name);
			src = file_line(file, d->capacity_line);
			r = src ? ht_facts_set_int(f, fact, d->capacity, "bytes", src) : -ENOMEM;
		}
		if (r >= 0 && d->has_read_only) {
			free(src);
			snprintf(fact, sizeof(fact), "storage.%s.read_only", d->name);
			src = file_line(file, d->read_only_line);
			r = src ? ht_facts_set_bool(f, fact, d->read_only, src) : -ENOMEM;
		}
	}
	return r;
}

/*
 * Reads @path below @root. Returns 0 with *@buf, *@len; -ENOENT when absent;
 * another negative errno with @err set; -ENOMEM.
 */
static int read_config(const char *root, const char *path, char **buf, size_t *len,
                       struct ht_error *err)
{
	_cleanup_close_ int fd = ht_open_file(root, path);
	int r;

	if (fd == -ENOENT || fd == -ENOMEM)
		return fd;
	if (fd == -EINVAL)
		return ht_error_set(err, EINVAL, "%s: not a regular file", path);
	if (fd < 0)
		return ht_error_set(err, -fd, "%s: %s", path, strerror(-fd));
	r = ht_read_fd(fd, GARAGE_CONFIG_MAX, buf, len);
	if (r == -EFBIG)
		return ht_error_set(err, EFBIG, "%s: larger than 1 MiB", path);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ht_error_set(err, -r, "%s: %s", path, strerror(-r));
	return 0;
}

int ht_collect_garage(struct ht_facts *f, const char *root, const struct ht_garage_input *in,
                      bool measure, struct ht_error *err)
{
	struct unit_info u = { 0 };
	struct gdir meta = { .name = "metadata", .role = "metadata" }, *dirs = NULL, one = { 0 };
	struct ht_toml_table *t = NULL;
	_cleanup_free_ char *buf = NULL, *config = NULL, *csrc = NULL, *perr = NULL;
	size_t len = 0, ndirs = 0;
	bool named;
	int r;

	if (!f)
		return -EINVAL;
	if (err)
		err->msg[0] = '\0';
	r = unit_read(root, &u);
	if (r >= 0)
		r = unit_facts(f, &u);
	if (r >= 0)
		r = binary_facts(f, root, &u);
	if (r < 0)
		goto out;

	/* Which garage.toml: --set garage.config, the unit's, Garage's default. */
	named = in && in->config && in->config[0];
	if (named && in->config[0] != '/' && !ht_root_is_live(root)) {
		r = ht_error_set(err, EINVAL, "--set garage.config=%s: expected an absolute path "
		                 "below --root", in->config);
		goto out;
	}
	if (named && in->config[0] != '/') {
		/* On the live host a relative path is the user's: from the current directory. */
		_cleanup_free_ char *cwd = getcwd(NULL, 0);

		if (!cwd) {
			r = errno == ENOMEM ? -ENOMEM
			                    : ht_error_set(err, errno, "--set garage.config=%s: the "
			                                   "current directory: %s", in->config,
			                                   strerror(errno));
			goto out;
		}
		if (asprintf(&config, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", in->config) < 0)
			config = NULL;
		csrc = strdup("--set garage.config");
	} else if (named) {
		config = absolute(in->config);
		csrc = strdup("--set garage.config");
	} else if (u.config) {
		config = absolute(u.config);
		csrc = strdup(u.config_source);
	} else {
		config = strdup(GARAGE_DEFAULT_CONFIG);
		csrc = strdup("Garage's default path");
	}
	if (!config || !csrc) {
		r = -ENOMEM;
		goto out;
	}
	r = read_config(root, config, &buf, &len, err);
	if (r == -ENOENT && named) {
		r = ht_error_set(err, ENOENT, "%s: %s (named by --set garage.config)", config,
		                 strerror(ENOENT));
		goto out;
	}
	if (r == -ENOENT) {
		_cleanup_free_ char *why = NULL;

		if (asprintf(&why, "%s: no such file (%s)", config, csrc) < 0) {
			why = NULL;
			r = -ENOMEM;
			goto out;
		}
		r = ht_facts_set_unavailable(f, "garage.config", ENOENT, NULL, why);
		if (r >= 0)
			r = default_facts(f);
		if (r < 0)
			goto out;
		/* The directories before deployment are the profile's: none there, none known. */
		bool meta_set = in && in->metadata_dir && in->metadata_dir[0];
		bool data_set = in && in->data_dir && in->data_dir[0];

		meta.path = meta_set ? in->metadata_dir : NULL;
		one = (struct gdir){ .name = "data", .role = "data" };
		one.path = data_set ? in->data_dir : NULL;
		r = meta_set ? ht_facts_set_str(f, "garage.metadata_dir", meta.path,
		                                "the profile's garage.metadata_dir (no garage.toml)")
		             : ht_facts_set_unavailable(f, "garage.metadata_dir", ENOENT, NULL,
		                                        "no garage.toml, and the profile's "
		                                        "garage.metadata_dir is empty");
		if (r >= 0)
			r = data_set ? ht_facts_set_str(f, "garage.data_dir", one.path,
			                                "the profile's garage.data_dir (no garage.toml)")
			             : ht_facts_set_unavailable(f, "garage.data_dir", ENOENT, NULL,
			                                        "no garage.toml, and the profile's "
			                                        "garage.data_dir is empty");
		if (r >= 0)
			r = storage_facts(f, root, NULL, meta_set ? &meta : NULL, &one, data_set ? 1 : 0,
			                  measure);
		goto out;
	}
	if (r == -ELOOP) {
		/* There, but no file at the end of its links: never "absent". */
		_cleanup_free_ char *why = NULL;
		int q;

		if (asprintf(&why, "%s (%s)", config, csrc) < 0)
			why = NULL;
		q = why ? ht_facts_set_unavailable(f, "garage.config", ELOOP, NULL, why) : -ENOMEM;
		if (q < 0)
			r = q;
		goto out;
	}
	if (r < 0)
		goto out;

	r = ht_toml_parse(config, buf, len, &t, &perr);
	if (r == -EINVAL) {
		r = ht_error_set(err, EINVAL, "%s", perr ? perr : "garage.toml: syntax error");
		goto out;
	}
	if (r < 0)
		goto out;
	{
		struct gctx c = { .f = f, .file = config, .err = err };

		r = config_facts(&c, t, &dirs, &ndirs);
	}
	if (r >= 0)
		r = ht_facts_set_str(f, "garage.config", config, csrc);
	if (r >= 0) {
		meta.path = ht_toml_get(t, "metadata_dir")->str;
		r = storage_facts(f, root, config, &meta, dirs, ndirs, measure);
	}
out:
	/* ht_facts_set() refuses what a facts file could not hold: say which file had it. */
	if (r == -EINVAL && err && !err->msg[0])
		r = ht_error_set(err, EINVAL, "%s: a value hosttune cannot record (not UTF-8, or a "
		                 "control character)", config ? config : GARAGE_UNIT);
	ht_toml_free(t);
	free(dirs);
	unit_info_free(&u);
	return r < 0 ? r : 0;
}
