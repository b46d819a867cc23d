/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every command shares: rules, facts, findings and the JSON printer. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "cli/settings.h"
#include "collect/collect.h"
#include "engine/facts.h"
#include "engine/rules.h"
#include "engine/value.h"
#include "persist/verify.h"
#include "shared/escape.h"
#include "shared/trust.h"
#include "shared/rootfs.h"
#include "shared/util.h"

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/share/hosttune"
#endif
#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

void cli_terminal(struct options *o)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM"), *cols = getenv("COLUMNS");
	/* --output: the report goes to a file, whatever stdout is (no colour, 100 columns). */
	bool tty = !o->output && isatty(STDOUT_FILENO);
	struct winsize ws;
	long w = 0;

	o->terminal = tty;
	o->color = o->color_when == CLI_COLOR_ALWAYS ||
	           (o->color_when == CLI_COLOR_AUTO && tty && (!nc || !nc[0]) &&
	            !(term && strcmp(term, "dumb") == 0));
	if (!tty)
		w = 100;
	else {
		char *end;

		if (cols && cols[0]) {
			w = strtol(cols, &end, 10);
			if (*end || w <= 0)
				w = 0;
		}
		if (w == 0 && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
			w = ws.ws_col;
		if (w == 0)
			w = 80;
	}
	o->width = w < 40 ? 40 : w > 1000 ? 1000 : (size_t)w;
}

/* The run's errors, for the JSON error object (cli.h, cli_finish()). */
static struct {
	bool json;           /* --format json: an error prints a JSON object on stdout */
	bool printed;        /* a JSON document is on stdout already */
	char msg[2048];      /* the first error, without "hosttune: " */
} run_state;

/*
 * The collection the facts of this run come from (owned by its facts table,
 * which frees it) and whether its warning was printed: cli_collect_warnings().
 */
static struct ht_collect *collection;
static bool warned;

void cli_set_json(bool json)
{
	run_state.json = json;
}

/* Records @msg (without its newline) as the run's error when it is the first. */
static void record_error(const char *msg)
{
	size_t n = strcspn(msg, "\n");

	if (run_state.msg[0])
		return;
	if (n >= sizeof(run_state.msg))
		n = sizeof(run_state.msg) - 1;
	memcpy(run_state.msg, msg, n);
	run_state.msg[n] = '\0';
}

/*
 * "hosttune: MESSAGE" on stderr, one line whatever a file name from a tree
 * holds: its control characters and bytes that are not UTF-8 as C escapes
 * (shared/escape.h), in a buffer of the stack (nothing allocated: it also
 * says "out of memory"). The trailing newline of @fmt is dropped. Recorded
 * as the run's error when @record.
 */
static void print_error(bool record, const char *fmt, va_list ap) _printf_(2, 0);
static void print_error(bool record, const char *fmt, va_list ap)
{
	char buf[2048], shown[4 * sizeof(buf)];
	size_t n;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	ht_escape_to(shown, sizeof(shown), buf, n, HT_ESCAPE_CONTROL);
	fprintf(stderr, "%shosttune: %s\n", cli_journal_stderr_prefix(record, shown), shown);
	if (record)
		record_error(shown);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_error(true, fmt, ap);
	va_end(ap);
}

void cli_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_error(false, fmt, ap);
	va_end(ap);
}

bool cli_stdout_gone(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };

	/* A pipe's write end with no reader polls POLLERR (fs/pipe.c pipe_poll()). */
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

int cli_printed(int r)
{
	if (r == -ENOMEM)
		return cli_fail(r, EXIT_COLLECT, "out of memory");
	if (r < 0 && cli_stdout_gone())
		return 0;
	return r < 0 ? EXIT_COLLECT : 0;
}

int cli_fail(int r, int status, const char *fmt, ...)
{
	static const char oom[] = "out of memory";
	size_t n = strlen(run_state.msg);
	va_list ap;

	if (r == -ENOMEM) {
		/* Once a run: what fails after it (the report of a failed revert) ran out too. */
		if (n < strlen(oom) || strcmp(run_state.msg + n - strlen(oom), oom) != 0)
			cli_error("%s", oom);
		return EXIT_COLLECT;
	}
	va_start(ap, fmt);
	print_error(true, fmt, ap);
	va_end(ap);
	return status;
}

int cli_usage_error(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	cli_error("%s (hosttune --help lists the usage)", buf);
	return EXIT_USAGE;
}

/*
 * "FILE:LINE:COL: message" (struct ht_error's form for input files): the
 * length of FILE and the line and column, or 0 when @msg has no such prefix.
 * FILE is the text before the first ":DIGITS:DIGITS: ".
 */
static size_t error_position(const char *msg, long *line, long *col)
{
	for (const char *p = strchr(msg, ':'); p; p = strchr(p + 1, ':')) {
		char *end;
		long l, c;

		if (p == msg || p[1] < '0' || p[1] > '9')
			continue;
		l = strtol(p + 1, &end, 10);
		if (*end != ':' || end[1] < '0' || end[1] > '9')
			continue;
		c = strtol(end + 1, &end, 10);
		if (end[0] != ':' || end[1] != ' ' || l < 1 || c < 1)
			continue;
		*line = l;
		*col = c;
		return (size_t)(p - msg);
	}
	return 0;
}

struct json_object *cli_error_json(int status)
{
	struct json_object *e = json_object_new_object();
	const char *msg = run_state.msg[0] ? run_state.msg : "failed";
	long line = 0, col = 0;
	size_t flen = error_position(msg, &line, &col);

	if (!e)
		return NULL;
	json_object_object_add(e, "message", json_object_new_string(msg));
	json_object_object_add(e, "exit", json_object_new_int(status));
	json_object_object_add(e, "file", flen ? json_object_new_string_len(msg, (int)flen) : NULL);
	json_object_object_add(e, "line", flen ? json_object_new_int64(line) : NULL);
	json_object_object_add(e, "column", flen ? json_object_new_int64(col) : NULL);
	return e;
}

bool cli_swap_printed(bool printed)
{
	bool was = run_state.printed;

	run_state.printed = printed;
	return was;
}

/* @n bytes of @s as the inside of a JSON string (it is UTF-8: cli_error() escaped it). */
static void put_json_chars(const char *s, size_t n, FILE *out)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
}

int cli_finish(int status)
{
	const char *msg = run_state.msg[0] ? run_state.msg : "failed";
	long line = 0, col = 0;
	size_t flen = error_position(msg, &line, &col);

	if (!run_state.json || run_state.printed || status < EXIT_USAGE)
		return status;
	/*
	 * cli_error_json() as cli_print_json() prints it, written out here: it
	 * allocates nothing, so that "out of memory" has its JSON error object too.
	 */
	fprintf(stdout, "{\n  \"schema\": %d,\n  \"error\": {\n    \"message\": \"",
	        CLI_JSON_SCHEMA);
	put_json_chars(msg, strlen(msg), stdout);
	fprintf(stdout, "\",\n    \"exit\": %d,\n    \"file\": ", status);
	if (flen) {
		fputc('"', stdout);
		put_json_chars(msg, flen, stdout);
		fprintf(stdout, "\",\n    \"line\": %ld,\n    \"column\": %ld\n", line, col);
	} else {
		fprintf(stdout, "null,\n    \"line\": null,\n    \"column\": null\n");
	}
	fprintf(stdout, "  }\n}\n");
	fflush(stdout);
	run_state.printed = true;
	return status;
}

/* The string workload (or [garage]) variable @name of @rs, "" when unset or not a string. */
static const char *var_string(const struct ht_ruleset *rs, const char *name)
{
	for (size_t i = 0; rs && i < ht_ruleset_var_count(rs); i++)
		if (strcmp(ht_ruleset_var_name(rs, i), name) == 0) {
			const struct ht_value *v = ht_ruleset_var_value(rs, i);

			return v->type == HT_T_STR ? v->s : "";
		}
	return "";
}

/* The collectors' inputs from the profile (@rs, may be NULL) and the command line. */
static int collect_inputs(const struct options *o, const struct ht_ruleset *rs,
                          struct ht_collect *c)
{
	static const char *const vars[] = { "workload.service", "garage.config",
		                            "garage.metadata_dir", "garage.data_dir" };
	int r = ht_collect_input(c, "state", o->state);

	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(vars); i++)
		r = ht_collect_input(c, vars[i], var_string(rs, vars[i]));
	return r;
}

int cli_collect_status(int r)
{
	return r == -EINVAL || r == -ENOENT || r == -ERANGE || r == -EDOM || r == -ELOOP
	               ? EXIT_USAGE : EXIT_COLLECT;
}

/*
 * The progress line on stderr, a terminal (ht_progress_fn): "hosttune: WHAT:
 * N s left", rewritten in place (a carriage return, then the line, then
 * erase to its end: ESC [ K), control characters escaped, cut to the
 * terminal's width so that it never wraps; erased when @what is NULL. On
 * TERM=dumb, which has no ESC [ K, spaces over the previous line instead.
 */
static void show_progress(void *userdata, const char *what, double left)
{
	static size_t shown; /* the length of the line on screen, 0: none */
	const char *term = getenv("TERM");
	bool dumb = term && strcmp(term, "dumb") == 0;
	char tail[64], line[1024];
	struct winsize ws;
	size_t n, room, width = 80;

	(void)userdata;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
		width = ws.ws_col;
	if (!what) {
		if (shown)
			fprintf(stderr, dumb ? "\r%*s\r" : "\r\033[K", dumb ? (int)shown : 0, "");
		shown = 0;
		fflush(stderr);
		return;
	}
	/* Whole seconds, rounded up; a sleep that ends a hair early (0.9999 s) is 1 s. */
	if (left >= 0.95)
		snprintf(tail, sizeof(tail), ": %.0f s left", ceil(left - 0.05));
	else
		snprintf(tail, sizeof(tail), ": %.1f s left", left);
	n = ht_escape_to(line, sizeof(line) - sizeof(tail), what, strlen(what), HT_ESCAPE_CONTROL);
	if (n >= sizeof(line) - sizeof(tail))
		n = strlen(line);
	/*
	 * One column short of the width (a cursor in the last one wraps on some
	 * terminals): WHAT is cut ("...") so that the time left always shows.
	 */
	room = width - 1 > strlen("hosttune: ") + strlen(tail) + 3 ?
	       width - 1 - strlen("hosttune: ") - strlen(tail) : 3;
	if (n > room) {
		n = room - 3;
		while (n > 0 && ((unsigned char)line[n] & 0xc0) == 0x80)
			n--;
		memcpy(line + n, "...", 4);
		n += 3;
	}
	memcpy(line + n, tail, strlen(tail) + 1);
	n += strlen(tail) + strlen("hosttune: ");
	if (dumb)
		fprintf(stderr, "\rhosttune: %s%*s", line, shown > n ? (int)(shown - n) : 0, "");
	else
		fprintf(stderr, "\rhosttune: %s\033[K", line);
	shown = n;
	fflush(stderr);
}

/*
 * A warning line when the facts of @file say they were collected more than
 * @max_age seconds ago (host.collected_at, UTC): the host may have changed
 * since. A time that does not parse as hosttune writes it (an offset, a
 * typo), or one in the future (another clock), is a warning that the age
 * is unknown. Silent without the fact: a facts file written by hand.
 */
/* Whether @at is the day @tm names: strptime() takes 2026-02-30, which timegm() makes March 2nd. */
static bool same_day(const struct tm *tm, time_t at)
{
	struct tm back;

	return gmtime_r(&at, &back) && back.tm_year == tm->tm_year && back.tm_mon == tm->tm_mon &&
	       back.tm_mday == tm->tm_mday;
}

static void warn_stale(const struct ht_facts *f, const char *file, double max_age)
{
	const struct ht_fact *fact = ht_facts_get(f, "host.collected_at");
	struct tm tm = { 0 }, written;
	const char *end;
	time_t at, now = time(NULL);
	double age;

	if (max_age <= 0 || !fact || fact->value.type != HT_T_STR || !fact->value.s)
		return;
	end = strptime(fact->value.s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	written = tm; /* timegm() normalizes its argument */
	if (!end || *end || (at = timegm(&tm)) == (time_t)-1 || !same_day(&written, at)) {
		cli_note("warning: %s: host.collected_at '%s' is not a UTC time as "
		         "YYYY-MM-DDTHH:MM:SSZ: how old the facts are is unknown", file,
		         fact->value.s);
		return;
	}
	if (now == (time_t)-1)
		return;
	if (at > now + 300) {
		/* Five minutes of clock skew between two hosts is no news. */
		cli_note("warning: %s: the facts say they were collected %s, later than this "
		         "host's clock: how old they are is unknown", file, fact->value.s);
		return;
	}
	age = difftime(now, at);
	if (age <= max_age)
		return;
	if (age >= 2 * 86400)
		cli_note("warning: %s: the facts were collected %s, %.0f days ago: the host may have "
		         "changed since (collect them again; --facts-max-age sets how old is too old)",
		         file, fact->value.s, floor(age / 86400));
	else
		cli_note("warning: %s: the facts were collected %s, %.0f hours ago: the host may have "
		         "changed since (collect them again; --facts-max-age sets how old is too old)",
		         file, fact->value.s, floor(age / 3600));
}

int cli_load_facts(const struct options *o, struct ht_ruleset *rs, bool all,
                   struct ht_facts **out)
{
	struct ht_facts *f = ht_facts_new();
	struct ht_collect *c = NULL;
	struct ht_error err = { "" };
	int r;

	if (!f)
		return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
	if (o->facts_file) {
		_cleanup_fclose_ FILE *in = strcmp(o->facts_file, "-") == 0 ? NULL :
		                            fopen(o->facts_file, "re");

		if (!in && strcmp(o->facts_file, "-") != 0) {
			int e = errno;

			ht_facts_free(f);
			return cli_fail(-e, EXIT_USAGE, "%s: %s", o->facts_file, strerror(e));
		}
		r = ht_facts_read(f, in ? in : stdin, o->facts_file, &err);
		if (r < 0) {
			ht_facts_free(f);
			return cli_fail(r, EXIT_USAGE, "%s", err.msg[0] ? err.msg : strerror(-r));
		}
		warn_stale(f, strcmp(o->facts_file, "-") == 0 ? "standard input" : o->facts_file,
		           o->facts_max_age);
		*out = f;
		return 0;
	}
	/* Told on stderr, a terminal, unless --quiet: --sample's wait, the fsync rate. */
	if (o->detail != HT_REPORT_QUIET && isatty(STDERR_FILENO))
		ht_collect_set_progress(show_progress, NULL);
	r = ht_collect_new(o->root, o->no_measure ? HT_COLLECT_NO_MEASURE : 0, &c);
	if (r >= 0 && (r = collect_inputs(o, rs, c)) < 0)
		ht_collect_free(c);
	if (r < 0) {
		ht_facts_free(f);
		return cli_fail(r, EXIT_COLLECT, "collecting facts: %s", strerror(-r));
	}
	/*
	 * Facts on demand: each source runs when a rule first reads one of its
	 * facts, an expensive one only when its rule wants it (ht_collect_rules()).
	 */
	ht_collect_rules(c, rs);
	/* --sample: the first reading of the counters the rules read (every one for facts). */
	if (o->sample > 0 && (r = ht_collect_sample(c, o->sample, all ? NULL : rs)) < 0) {
		ht_collect_free(c);
		ht_facts_free(f);
		return cli_fail(r, EXIT_COLLECT, "collecting facts: %s", strerror(-r));
	}
	ht_collect_attach(c, f);
	collection = c;
	r = all ? ht_collect_all(c, f, &err) : 0;
	cli_collect_warnings();
	if (r < 0) {
		ht_facts_free(f);
		collection = NULL;
		return cli_fail(r, cli_collect_status(r), "%s",
		                err.msg[0] ? err.msg : strerror(-r));
	}
	*out = f;
	return 0;
}

struct rule_sysctls {
	struct ht_facts *f;
	struct ht_error err;
};

/* ht_name_cb: a sysctl hosttune has no entry for, read now. */
static int need_sysctl(const char *name, const struct ht_srcpos *pos, void *userdata)
{
	struct rule_sysctls *rsys = userdata;
	const struct ht_fact *fact;

	(void)pos;
	if (!ht_fact_def_is_sysctl(ht_fact_def_find(name)))
		return 0;
	return ht_facts_need(rsys->f, name, 0, &fact, &rsys->err);
}

int cli_collect_rule_sysctls(const struct ht_ruleset *rs, struct ht_facts *f)
{
	struct rule_sysctls rsys = { .f = f };
	int r = ht_ruleset_foreach_fact(rs, need_sysctl, &rsys);

	/* And what the boot gives each sysctl and module target: the audit judges it. */
	for (size_t i = 0; r >= 0 && i < ht_ruleset_rule_count(rs); i++) {
		const struct ht_rule *rule = ht_ruleset_rule_at(rs, i);
		_cleanup_free_ char *boot = NULL;
		const struct ht_fact *fact;

		if (ht_rule_kind(rule) != HT_TARGET_SYSCTL && ht_rule_kind(rule) != HT_TARGET_MODULE)
			continue;
		if (asprintf(&boot, "boot.%s", ht_rule_target(rule)) < 0) {
			boot = NULL;
			r = -ENOMEM;
			break;
		}
		r = ht_facts_need(f, boot, 0, &fact, &rsys.err);
	}

	if (r < 0)
		return cli_fail(r, EXIT_COLLECT, "%s",
		                rsys.err.msg[0] ? rsys.err.msg : strerror(-r));
	return 0;
}

void cli_collect_warnings(void)
{
	const char *w = collection ? ht_collect_warning(collection) : NULL;

	if (w && !warned)
		cli_note("warning: %s", w);
	warned = warned || w;
}

/*
 * The site's rules directory (SYSCONFDIR/hosttune/rules.d below @root) as
 * the rules loader may open it: its real path with links resolved inside
 * the tree (ht_root_libdir()), NULL in *@dir when the tree has none.
 * -ELOOP, with the link's path in the tree in *@dir, when a rules or profile file
 * there is a link, or profiles/ is; -ENOMEM.
 */
static int tree_rules_dir(const char *root, char **dir)
{
	_cleanup_free_ char *prof = NULL;
	int r;

	*dir = NULL;
	r = ht_root_libdir(root, SYSCONFDIR "/hosttune/rules.d", NULL, ".rules", dir);
	if (r == -ELOOP || r == -ENOMEM)
		return r;
	if (r < 0) {
		free(*dir);
		*dir = NULL;
		return 0;
	}
	r = ht_root_libdir(root, SYSCONFDIR "/hosttune/rules.d/profiles", NULL, ".profile", &prof);
	if (r == -ENOMEM)
		return r;
	if (r == -ELOOP || (r == 0 && !ht_root_is_live(root) &&
	                    (strncmp(prof, *dir, strlen(*dir)) != 0 ||
	                     strcmp(prof + strlen(*dir), "/profiles") != 0))) {
		free(*dir);
		if (r == -ELOOP)
			*dir = TAKE_PTR(prof);
		else if (!(*dir = strdup(SYSCONFDIR "/hosttune/rules.d/profiles")))
			return -ENOMEM;
		return -ELOOP;
	}
	return 0;
}

/*
 * The message of a setting from the configuration file that the rules
 * refused, at its place: "WHERE: @what" and the message without its
 * leading @drop ("--set ", the form of --set's errors).
 */
static void config_error(struct ht_error *err, const char *where, const char *what,
                         const char *drop)
{
	char msg[sizeof(err->msg)];
	const char *m = msg;

	if (!err->msg[0])
		return;
	memcpy(msg, err->msg, sizeof(msg));
	if (*drop && strncmp(m, drop, strlen(drop)) == 0)
		m += strlen(drop);
	ht_error_set(err, EINVAL, "%s: %s%s", where, what, m);
}

/* "not trusted: WHY", with @path first when WHY is about a directory above it. */
static void trust_error(const char *path, const char *why)
{
	if (strncmp(why, path, strlen(path)) == 0 && why[strlen(path)] == ' ')
		cli_error("not trusted (run as root): %s\n", why);
	else
		cli_error("%s: not trusted (run as root): %s\n", path, why);
}

/*
 * Run as root, rules and profiles steer what apply writes: @dir (absent is
 * nothing), every directory above it, its *.rules files and its profiles/
 * and *.profile files must be root's, or @user's, and writable by no one
 * else (shared/trust.h). 0, or the exit status after the message naming
 * the path.
 */
static int check_rules_trust(const char *dir, uid_t user, bool quiet)
{
	static const char *const subdirs[] = { "", "/profiles" };
	char why[512];
	int r;

	if (!ht_trust_needed())
		return 0;
	for (size_t s = 0; s < ARRAY_SIZE(subdirs); s++) {
		_cleanup_free_ char *path = NULL;
		const char *suffix = s ? ".profile" : ".rules";
		DIR *d;
		struct dirent *de;

		if (asprintf(&path, "%s%s", dir, subdirs[s]) < 0)
			return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
		r = ht_trust_path(path, user, why, sizeof(why));
		if (r == -ENOENT)
			continue;
		if (r == -EPERM) {
			if (!quiet)
				trust_error(path, why);
			return EXIT_USAGE;
		}
		d = opendir(path);
		if (!d)
			continue; /* the loader says why */
		while ((de = readdir(d))) {
			size_t l = strlen(de->d_name), sl = strlen(suffix);
			_cleanup_free_ char *file = NULL;

			if (de->d_name[0] == '.' || l <= sl || strcmp(de->d_name + l - sl, suffix) != 0)
				continue;
			if (asprintf(&file, "%s/%s", path, de->d_name) < 0) {
				closedir(d);
				return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
			}
			if (ht_trust_path(file, user, why, sizeof(why)) == -EPERM) {
				closedir(d);
				if (!quiet)
					trust_error(file, why);
				return EXIT_USAGE;
			}
		}
		closedir(d);
	}
	return 0;
}

/* The edit distance of @a and @b (Levenshtein), at most 64 characters of each. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strnlen(a, 64), lb = strnlen(b, 64), row[65];

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

const char *cli_nearest_profile(const struct ht_profile_info *p, size_t n, const char *name)
{
	const char *best = NULL;
	size_t bestd = SIZE_MAX;

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(name, p[i].name);

		if (d < bestd) {
			bestd = d;
			best = p[i].name;
		}
	}
	/* A typo: two edits at most, and fewer than the name has characters. */
	return best && bestd <= 2 && bestd < strlen(name) ? best : NULL;
}

/*
 * Adds to @err's "profile 'X' not found" the profiles there are and the
 * nearest to @name: "; the profiles are default, garage: did you mean garage?"
 */
static void name_profiles(const struct ht_ruleset *rs, const char *name, struct ht_error *err)
{
	struct ht_profile_info *p = NULL;
	struct ht_error lerr = { "" };
	size_t n = 0, len = strlen(err->msg);
	char head[160];
	const char *near;

	/* Only for the profile asked for: an include's name is its file's to fix. */
	snprintf(head, sizeof(head), "profile '%s' not found", name);
	if (strncmp(err->msg, head, strlen(head)) != 0)
		return;
	if (ht_ruleset_profiles(rs, &p, &n, &lerr) < 0 || n == 0) {
		ht_profile_infos_free(p, n);
		return;
	}
	for (size_t i = 0; i < n && len < sizeof(err->msg); i++)
		len += (size_t)snprintf(err->msg + len, sizeof(err->msg) - len, "%s%s",
		                        i == 0 ? "; the profiles are " : ", ", p[i].name);
	near = cli_nearest_profile(p, n, name);
	if (near && len < sizeof(err->msg))
		snprintf(err->msg + len, sizeof(err->msg) - len, ": did you mean %s?", near);
	ht_profile_infos_free(p, n);
}

int cli_profile_hint(const struct ht_ruleset *rs, struct ht_facts *f,
                     struct ht_profile_info **p, size_t *n, struct ht_profile_hint *hint,
                     struct ht_error *err)
{
	int r = ht_ruleset_profiles(rs, p, n, err);

	*hint = (struct ht_profile_hint){ 0 };
	if (r < 0)
		return r;
	return ht_profile_suggest(*p, *n, ht_ruleset_profile(rs), f, hint, err);
}

/* cli_load_rules(), saying nothing when @quiet (the caller goes on without rules). */
static int load_rules(const struct options *o, bool quiet, struct ht_ruleset **out)
{
	_cleanup_free_ char *etc = NULL;
	const char *dirs[2];
	size_t n = 0;
	struct ht_ruleset *rs = NULL;
	struct ht_error err = { "" };
	bool no_rules;
	int r;

	if (o->rules_dir)
		dirs[n++] = o->rules_dir;
	else {
		r = tree_rules_dir(o->root, &etc);
		if (r == -ENOMEM)
			return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
		if (r < 0 && !quiet)
			cli_error("%s%s is a symbolic link: below --root, rules are read from regular "
			          "files only (a link could lead out of the tree)\n",
			          o->root, etc);
		if (r < 0)
			return EXIT_USAGE;
		dirs[n++] = PKGDATADIR "/rules";
		if (etc)
			dirs[n++] = etc;
	}
	/* --rules DIR and a --root tree are the invoking user's to give; the installed ones root's. */
	for (size_t i = 0; i < n; i++) {
		bool given = o->rules_dir || (o->root && i > 0);
		uid_t user = given ? ht_trust_invoking_user() : HT_TRUST_ROOT_ONLY;

		r = check_rules_trust(dirs[i], user, quiet);
		if (r)
			return r;
	}
	r = ht_ruleset_load(dirs, n, &rs, &err);
	no_rules = r == -ENOENT;
	if (r >= 0) {
		r = ht_ruleset_load_profile(rs, o->profile ? o->profile : "default", &err);
		if (r == -ENOENT)
			name_profiles(rs, o->profile ? o->profile : "default", &err);
		/*
		 * Where the name came from, for a name that is no profile; an
		 * error inside a rules or profile file names its own place.
		 */
		if (r == -ENOENT && o->profile_where)
			config_error(&err, o->profile_where, "", "");
	}
	for (size_t i = 0; r >= 0 && o->config && o->config_sets && i < o->config->nsets; i++) {
		r = ht_ruleset_set_var(rs, o->config->sets[i].assignment, &err);
		if (r < 0)
			config_error(&err, o->config->sets[i].where, "[set] ", "--set ");
	}
	for (size_t i = 0; r >= 0 && i < o->nsets; i++)
		r = ht_ruleset_set_var(rs, o->sets[i], &err);
	if (r >= 0)
		r = ht_ruleset_check(rs, &err);
	if (r < 0 && quiet) {
		ht_ruleset_free(rs);
		*out = NULL;
		return r == -ENOMEM ? EXIT_COLLECT : EXIT_USAGE;
	}
	if (r < 0) {
		int status = cli_fail(r, EXIT_USAGE, "%s", err.msg[0] ? err.msg : strerror(-r));

		if (no_rules && !o->rules_dir)
			cli_note("(not installed? run from the source tree with --rules rules)");
		ht_ruleset_free(rs);
		return status;
	}
	*out = rs;
	return 0;
}

int cli_load_rules(const struct options *o, struct ht_ruleset **out)
{
	return load_rules(o, false, out);
}

int cli_try_load_rules(const struct options *o, struct ht_ruleset **out)
{
	return load_rules(o, true, out);
}

int cli_text_stdout(void)
{
	FILE *f;

	if (fflush(stdout) != 0) {
		cli_error("writing the output: %s", strerror(errno));
		return EXIT_COLLECT;
	}
	f = ht_escape_fdopen(STDOUT_FILENO, HT_ESCAPE_CONTROL | HT_ESCAPE_KEEP_LAYOUT);
	if (!f)
		return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
	stdout = f;
	return 0;
}

/*
 * A string of @len bytes at @s as UTF-8: a byte that is not UTF-8 (a file
 * name from a tree) as the four characters \xHH, as text output shows it
 * (shared/escape.h). @s itself when it is UTF-8 (*out NULL), else *out, a
 * new string the caller frees. 0 or -ENOMEM.
 */
static int utf8_text(const char *s, size_t len, char **out, size_t *outlen)
{
	size_t n = ht_escape_to(NULL, 0, s, len, 0);

	*out = NULL;
	*outlen = len;
	if (n == len)
		return 0;
	*out = malloc(n + 1);
	if (!*out)
		return -ENOMEM;
	ht_escape_to(*out, n + 1, s, len, 0);
	*outlen = n;
	return 0;
}

/*
 * Every string of @o, keys too, made UTF-8 (utf8_text()): json-c writes a
 * string's bytes as they are, and a document that is not UTF-8 is not JSON
 * (RFC 8259, 8.1). Strings change in place; an object with such a key is
 * copied under new keys: *o is then that copy (a new reference; the caller
 * puts the old one, or its container does when it takes the copy's place).
 * 0 or -ENOMEM.
 */
static int json_utf8(struct json_object **o)
{
	switch (json_object_get_type(*o)) {
	case json_type_string: {
		_cleanup_free_ char *t = NULL;
		size_t n;

		if (utf8_text(json_object_get_string(*o), (size_t)json_object_get_string_len(*o),
		              &t, &n) < 0)
			return -ENOMEM;
		if (t && json_object_set_string_len(*o, t, (int)n) == 0)
			return -ENOMEM;
		return 0;
	}
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(*o); i++) {
			struct json_object *v = json_object_array_get_idx(*o, i), *was = v;

			if (v && json_utf8(&v) < 0)
				return -ENOMEM;
			if (v != was && json_object_array_put_idx(*o, i, v) < 0) {
				json_object_put(v);
				return -ENOMEM;
			}
		}
		return 0;
	case json_type_object: {
		struct json_object *copy = NULL;
		bool keys = false;

		json_object_object_foreach(*o, key, val) {
			struct json_object *v = val;

			keys = keys || ht_utf8_invalid(key);
			if (v && json_utf8(&v) < 0)
				return -ENOMEM;
			if (v != val && json_object_object_add(*o, key, v) < 0) {
				json_object_put(v);
				return -ENOMEM;
			}
		}
		if (!keys)
			return 0;
		copy = json_object_new_object();
		if (!copy)
			return -ENOMEM;
		json_object_object_foreach(*o, k, v) {
			_cleanup_free_ char *t = NULL;
			size_t n;

			if (utf8_text(k, strlen(k), &t, &n) < 0 ||
			    json_object_object_add(copy, t ? t : k, json_object_get(v)) < 0) {
				json_object_put(copy);
				return -ENOMEM;
			}
		}
		*o = copy;
		return 0;
	}
	default:
		return 0;
	}
}

/*
 * Prints the JSON text @s and a newline, DEL and the C1 controls (U+0080 to
 * U+009F, which some terminals obey) as \u escapes: json-c escapes only those
 * below U+0020. The text is UTF-8 (json_utf8()), so 0xc2 starts a character.
 */
static void put_json_text(const char *s, FILE *out)
{
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, "\x7f\xc2");

		fwrite(p, 1, n, out);
		p += n;
		if (*p == '\x7f') {
			fputs("\\u007f", out);
			p++;
		} else if (*p && (unsigned char)p[1] >= 0x80 && (unsigned char)p[1] <= 0x9f) {
			fprintf(out, "\\u%04x", (unsigned char)p[1]);
			p += 2;
		} else if (*p) {
			fputc(*p++, out);
		}
	}
	fputc('\n', out);
}

int cli_print_json(struct json_object *o)
{
	return cli_put_json(o) < 0 ? cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory") : 0;
}

int cli_put_json(struct json_object *o)
{
	struct json_object *doc = NULL;
	const char *s;

	if (!o)
		return -ENOMEM;
	/* "schema" first: a document built elsewhere gets it put in front. */
	doc = json_object_new_object();
	if (!doc || json_object_object_add(doc, "schema", json_object_new_int(CLI_JSON_SCHEMA)) < 0)
		goto oom;
	json_object_object_foreach(o, key, val) {
		if (strcmp(key, "schema") != 0 &&
		    json_object_object_add(doc, key, json_object_get(val)) < 0)
			goto oom;
	}
	json_object_put(o);
	o = NULL;
	{
		struct json_object *was = doc;

		if (json_utf8(&doc) < 0)
			goto oom;
		if (doc != was)
			json_object_put(was);
	}
	s = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
	                                        JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!s)
		goto oom;
	/*
	 * json-c 0.16 does not check its buffer's growth while it escapes a
	 * string: a document made as memory ran out can come out cut short
	 * without an error. An allocation of its size after it tells: when that
	 * fails too, the document is not trusted.
	 */
	{
		void *probe = malloc(strlen(s) + 1);

		if (!probe)
			goto oom;
		free(probe);
	}
	put_json_text(s, stdout);
	json_object_put(doc);
	run_state.printed = true;
	return 0;
oom:
	json_object_put(o);
	json_object_put(doc);
	return -ENOMEM;
}

/*
 * Every real collection has the RAM and the kernel version (/proc/meminfo,
 * /proc/sys/kernel/osrelease). Without both, the root is not a host's tree
 * or the facts file is not a host's facts: no audit of nothing.
 */
static int check_basic_facts(const struct options *o, struct ht_facts *f)
{
	static const char *const basic[] = { "mem.total", "kernel.version" };
	size_t missing = 0;

	for (size_t i = 0; i < ARRAY_SIZE(basic); i++) {
		struct ht_error err = { "" };
		const struct ht_fact *fact;
		int r = ht_facts_need(f, basic[i], 0, &fact, &err);

		if (r < 0)
			return cli_fail(r, EXIT_COLLECT, "%s", err.msg[0] ? err.msg : strerror(-r));
		/* Not read for want of memory: not a tree without it. */
		if (fact && fact->value.type == HT_T_NONE && fact->error == ENOMEM)
			return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
		if (!fact || fact->value.type == HT_T_NONE)
			missing++;
	}
	if (missing < ARRAY_SIZE(basic))
		return 0;
	if (o->facts_file) {
		cli_error("%s: neither mem.total nor kernel.version is given: "
		                "not the facts of a host\n", o->facts_file);
		return EXIT_USAGE;
	}
	cli_error("could not collect mem.total or kernel.version from %s/proc: "
	                "not a host's tree\n", o->root ? o->root : "");
	return EXIT_COLLECT;
}

/* The profile's burst factor: the headroom a recommendation leaves over a peak. */
double cli_profile_headroom(const struct ht_ruleset *rs)
{
	for (size_t i = 0; i < ht_ruleset_var_count(rs); i++)
		if (strcmp(ht_ruleset_var_name(rs, i), "workload.burst") == 0) {
			const struct ht_value *v = ht_ruleset_var_value(rs, i);

			if (ht_type_is_number(v->type) && ht_value_as_double(v) >= 1)
				return ht_value_as_double(v);
		}
	return 2;
}

/*
 * audit --observed FILE: the recording's summary as observed.* facts
 * (ht_collect_observed()), sized with the profile's burst factor.
 */
static int load_observed(const struct options *o, const struct ht_ruleset *rs,
                         struct ht_facts *f)
{
	struct ht_error err = { "" };
	int r = ht_collect_observed(f, o->observed, cli_profile_headroom(rs), &err);

	if (r < 0 && err.msg[0])
		return cli_fail(r, EXIT_USAGE, "%s", err.msg);
	if (r < 0)
		return cli_fail(r, EXIT_COLLECT, "%s: %s", o->observed, strerror(-r));
	return 0;
}

/*
 * A waiver that matched findings, every one of them ok, waives nothing
 * today: most often the wrong row of a family (nic.queues[eth0] where the
 * warning is nic.queues_hypervisor[eth0]). A warning line on stderr, naming
 * the finding of the same instance that is not ok when there is one.
 */
static void waiver_only_ok(const struct cli_waiver *w, const struct ht_findings *f)
{
	const struct ht_finding *other = NULL;
	size_t matched = 0;

	for (size_t i = 0; i < f->n; i++) {
		const struct ht_finding *fi = &f->items[i];

		if (fi->waived == w->reason) {
			if (fi->severity > HT_SEV_OK || !fi->applicable)
				return;
			matched++;
		} else if (!other && fi->severity > HT_SEV_OK && !fi->waived &&
		           (!w->instance || (fi->instance && strcmp(fi->instance, w->instance) == 0)))
			other = fi;
	}
	if (!matched)
		return;
	if (other && other->instance)
		cli_note("warning: %s: waiver for '%s%s%s%s': it matches only ok findings and "
		         "waives nothing; the finding at %s here is %s[%s]", w->where, w->rule,
		         w->instance ? "[" : "", w->instance ? w->instance : "",
		         w->instance ? "]" : "", ht_severity_name(other->severity),
		         ht_rule_id(other->rule), other->instance);
	else
		cli_note("warning: %s: waiver for '%s%s%s%s': it matches only ok findings and "
		         "waives nothing", w->where, w->rule, w->instance ? "[" : "",
		         w->instance ? w->instance : "", w->instance ? "]" : "");
}

/* Whether @list (nic.list: names escaped, shared/escape.h) has interface @ifname. */
static bool nic_listed(const char *list, const char *ifname)
{
	_cleanup_free_ char *esc = ht_name_escape(ifname);

	/* Out of memory: no warning rather than a false one. */
	return !esc || ht_has_word(list, esc);
}

/* @list (nic.list) with each name as the kernel has it, in a new string; NULL on ENOMEM. */
static char *nic_names_shown(const char *list)
{
	_cleanup_free_ char *copy = strdup(list);
	char *out = NULL, *save = NULL;
	size_t len = 0;
	FILE *m = copy ? open_memstream(&out, &len) : NULL;

	if (!m)
		return NULL;
	for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		_cleanup_free_ char *name = ht_name_unescape(w);

		fprintf(m, "%s%s", ftell(m) ? " " : "", name ? name : w);
	}
	if (fclose(m) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/*
 * The configuration's waivers (settings.h) on @f: a finding a waiver names
 * gets its reason. A waiver whose rule id the rules do not have, or that
 * names a value rather than a rule with findings, is a warning line on
 * stderr: a rule renamed or dropped since the waiver was written. So is an
 * instance given to a rule without instances, or an interface the host
 * does not have (nic.list): a typo that would waive nothing.
 */
static void apply_waivers(const struct cli_config *cfg, const struct ht_ruleset *rs,
                          const struct ht_facts *facts, struct ht_findings *f)
{
	for (size_t i = 0; cfg && i < cfg->nwaivers; i++) {
		const struct cli_waiver *w = &cfg->waivers[i];
		const struct ht_rule *r = ht_ruleset_find(rs, w->rule);
		const struct ht_fact *nics;

		if (!r)
			cli_note("warning: %s: waiver for '%s': the rules have no rule of that id",
			         w->where, w->rule);
		else if (ht_rule_kind(r) == HT_TARGET_NONE)
			cli_note("warning: %s: waiver for '%s': that is a value other rules use, "
			         "not a rule with findings", w->where, w->rule);
		else if (w->instance && ht_rule_each(r) == HT_EACH_NONE)
			cli_note("warning: %s: waiver for '%s[%s]': that rule gives one finding, "
			         "not one per instance: waive it as '%s'", w->where, w->rule,
			         w->instance, w->rule);
		else if (w->instance && ht_rule_each(r) == HT_EACH_NIC &&
		         (nics = ht_facts_get(facts, "nic.list")) &&
		         nics->value.type == HT_T_STR && !nic_listed(nics->value.s, w->instance)) {
			/* Interfaces stay; a name not among them is a typo, not a dormant waiver. */
			_cleanup_free_ char *shown = nic_names_shown(nics->value.s);

			cli_note("warning: %s: waiver for '%s[%s]': this host has no interface %s "
			         "(nic.list: %s)", w->where, w->rule, w->instance, w->instance,
			         !nics->value.s[0] ? "none" : shown ? shown : nics->value.s);
		}
	}
	for (size_t i = 0; cfg && i < f->n; i++) {
		struct ht_finding *fi = &f->items[i];
		const struct cli_waiver *w = cli_config_waiver(cfg, ht_rule_id(fi->rule),
		                                               fi->instance);

		fi->waived = w ? w->reason : NULL;
	}
	for (size_t i = 0; cfg && i < cfg->nwaivers; i++)
		waiver_only_ok(&cfg->waivers[i], f);
}

const struct options *cli_facts_profile(const struct options *o, const struct ht_facts *f,
                                        struct options *fo, char *where, size_t size)
{
	const struct ht_fact *p = o->facts_file ? ht_facts_get(f, "hosttune.profile") : NULL;

	if (!p || p->value.type != HT_T_STR || !p->value.s[0] ||
	    (o->profile && (!o->profile_where || o->config_file)))
		return o;
	*fo = *o;
	fo->profile = p->value.s;
	snprintf(where, size, "%s: hosttune.profile", o->facts_file);
	fo->profile_where = where;
	return fo;
}

/*
 * The waivers a facts file recorded (hosttune.waivers, hosttune.waiver.N.text)
 * as a configuration of waivers alone, kept until exit: a finding's waived
 * reason points into it. NULL when the file recorded none (a facts file of
 * an older hosttune, or written by hand), or --config FILE names the
 * configuration to use; then the configuration's own waivers hold. Returns
 * 0, or the exit status with the error said (a waiver line that does not
 * parse is bad input: exit 2).
 */
struct facts_waivers {
	struct cli_config cfg;
	struct facts_waivers *next;
};
static struct facts_waivers *facts_waivers_list;

static void facts_waivers_free(void)
{
	while (facts_waivers_list) {
		struct facts_waivers *n = facts_waivers_list->next;

		cli_config_free(&facts_waivers_list->cfg);
		free(facts_waivers_list);
		facts_waivers_list = n;
	}
}

static int facts_waivers(const struct options *o, const struct ht_facts *f,
                         const struct cli_config **out)
{
	const struct ht_fact *count = ht_facts_get(f, "hosttune.waivers");
	struct facts_waivers *fw;
	struct ht_error err = { "" };
	int r;

	*out = NULL;
	if (!o->facts_file || o->config_file || !count || count->value.type != HT_T_INT)
		return 0;
	if (count->value.i < 0 || count->value.i > 100000)
		return cli_fail(-EINVAL, EXIT_USAGE, "%s: hosttune.waivers: expected a count of "
		                "waivers from 0 to 100000, found %" PRId64, o->facts_file,
		                count->value.i);
	if (!facts_waivers_list && atexit(facts_waivers_free) != 0)
		return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
	if (!(fw = calloc(1, sizeof(*fw))))
		return cli_fail(-ENOMEM, EXIT_COLLECT, "out of memory");
	fw->next = facts_waivers_list;
	facts_waivers_list = fw;
	for (int64_t i = 1; i <= count->value.i; i++) {
		char name[64], where[PATH_MAX + 64];
		const struct ht_fact *t;

		snprintf(name, sizeof(name), "hosttune.waiver.%" PRId64 ".text", i);
		snprintf(where, sizeof(where), "%s: %s", o->facts_file, name);
		t = ht_facts_get(f, name);
		if (!t || t->value.type != HT_T_STR)
			return cli_fail(-EINVAL, EXIT_USAGE, "%s: hosttune.waivers is %" PRId64 " but %s "
			                "is missing: expected RULE[INSTANCE] = REASON", o->facts_file,
			                count->value.i, name);
		r = cli_config_add_waiver(&fw->cfg, where, t->value.s, &err);
		if (r < 0)
			return cli_fail(r, r == -ENOMEM ? EXIT_COLLECT : EXIT_USAGE, "%s",
			                err.msg[0] ? err.msg : strerror(-r));
	}
	/* One more than the count: a file edited by hand whose waivers the count leaves out. */
	{
		char name[64];

		snprintf(name, sizeof(name), "hosttune.waiver.%" PRId64 ".text", count->value.i + 1);
		if (ht_facts_get(f, name))
			return cli_fail(-EINVAL, EXIT_USAGE, "%s: hosttune.waivers is %" PRId64 " but %s "
			                "is there too: expected as many texts as the count",
			                o->facts_file, count->value.i, name);
	}
	*out = &fw->cfg;
	return 0;
}

/*
 * The common first half of audit, plan/apply and verify: rules and profile,
 * facts (collected, a --root tree or a --facts file, plus --observed), and
 * the findings. Returns 0 or the exit status, with what was loaded in the
 * out-parameters for the caller to free either way.
 */
int cli_evaluate(const struct options *o, struct ht_ruleset **rs, struct ht_facts **facts,
                    struct ht_findings *findings)
{
	struct ht_error err = { "" };
	const struct cli_config *host_waivers = NULL;
	struct options fo;
	char where[PATH_MAX + 32];
	int r;

	/* A facts file first: the host's own profile and waivers (cli_facts_profile()). */
	if (o->facts_file) {
		r = cli_load_facts(o, NULL, false, facts);
		if (r)
			return r;
		if (o->waive && (r = facts_waivers(o, *facts, &host_waivers)) != 0)
			return r;
		o = cli_facts_profile(o, *facts, &fo, where, sizeof(where));
		r = cli_load_rules(o, rs);
	} else {
		r = cli_load_rules(o, rs);
		if (r == 0)
			r = cli_load_facts(o, *rs, false, facts);
	}
	if (r == 0)
		r = check_basic_facts(o, *facts);
	if (r == 0 && o->observed)
		r = load_observed(o, *rs, *facts);
	if (r)
		return r;
	r = ht_ruleset_evaluate(*rs, *facts, findings, &err);
	cli_collect_warnings();
	if (r < 0)
		return cli_fail(r, cli_collect_status(r), "%s",
		                err.msg[0] ? err.msg : strerror(-r));
	if (o->waive)
		apply_waivers(host_waivers ? host_waivers : o->config, *rs, *facts, findings);
	return 0;
}

/* "web1.facts" -> "web1": the file's name without its directory and ".facts". */
static char *file_label(const char *file)
{
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	size_t len = strlen(base);

	if (strcmp(file, "-") == 0)
		return strdup("stdin");
	if (len > 6 && strcmp(base + len - 6, ".facts") == 0)
		len -= 6;
	return strndup(base, len);
}

char *cli_host_label(const struct ht_facts *f, const char *file)
{
	const struct ht_fact *fact = f ? ht_facts_get(f, "host.name") : NULL;
	const char *name = fact && fact->value.type == HT_T_STR ? fact->value.s : NULL;

	if (name)
		return strdup(name);
	return file ? file_label(file) : strdup("localhost");
}
