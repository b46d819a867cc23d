/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cli/: commands and printing. Rule: may include every stage; nothing in src/ includes cli/. */
#pragma once

/*
 * A command takes the parsed options and returns the process's exit status;
 * it prints its own errors, one line each, on stderr.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/rules.h"
#include "shared/util.h"

struct json_object;
struct ht_facts;
struct cli_config;

/* Exit statuses, DESIGN.md "Output and persistence"; hosttune(8) EXIT STATUS. */
enum {
	EXIT_CLEAN = 0,
	EXIT_FINDINGS = 1,
	EXIT_USAGE = 2,
	EXIT_COLLECT = 3,
	EXIT_BUSY = 4,       /* apply/revert: another run holds the lock; nothing changed */
	EXIT_UNREPORTED = 5, /* apply/revert done, but its report could not be written */
};

/* The command line, as main.c parsed it. Strings point into argv. */
struct options {
	const char *root;         /* --root DIR, NULL for this host */
	const char *facts_file;   /* the first --facts FILE ("-": stdin), NULL to collect */
	const char **facts_files; /* every --facts FILE or DIR, in order (cli_fleet_wanted()) */
	size_t nfacts;
	const char *rules_dir;    /* --rules DIR, NULL for the installed rules + /etc */
	const char *profile;      /* --profile NAME, NULL for "default" */
	const char **sets;        /* --set NAME=VALUE, in order */
	size_t nsets;
	bool json;                /* --format json */
	bool prometheus;          /* --format prometheus (audit only): cmd_metrics() */
	const char *output;       /* audit --output FILE: the report written atomically */
	bool host_label;          /* audit --format prometheus --host-label: a host label on each series */
	bool all;                 /* rules --all: the named values too */
	bool lint;                /* rules --lint: conditions in both severity and text */
	bool no_evaluate;         /* explain --no-evaluate: the formulas only */
	int detail;               /* audit: -v/-q, enum ht_report_detail (cli/report.h) */
	bool no_measure;
	bool dry_run;             /* plan, or apply --dry-run */
	bool read_only;           /* not apply (without --dry-run) or revert: cli_stdout_gone() */
	bool force;
	unsigned plan_flags;      /* HT_PLAN_PERSIST | HT_PLAN_LIVE (persist/persist.h) */
	const char *only;
	const char *state;
	const char *observed;
	const char *record;
	double interval;          /* watch, s */
	double sample;            /* audit, facts --sample, s; 0 without */
	double duration;          /* watch, s; 0 until Ctrl-C */
	double wait;              /* apply, revert: for the lock, s (default 10) */
	double facts_max_age;     /* audit --facts: warn when older, s (default 1 day); 0: never */
	enum ht_severity fail_on;
	enum { CLI_COLOR_AUTO, CLI_COLOR_ALWAYS, CLI_COLOR_NEVER } color_when; /* --color */
	bool color;               /* colour the output: --color, the terminal, NO_COLOR */
	size_t width;             /* wrap text reports at this many columns */
	bool terminal;            /* stdout is a terminal (and no --output): wrap every line */
	const char *config_file;  /* --config FILE; NULL for hosttune.conf and its drop-ins */
	bool no_config;           /* --no-config: no configuration file is read */
	const struct cli_config *config; /* what the configuration holds (settings.h); NULL: none */
	const char *profile_where; /* "FILE:LINE:COL" when the profile is the configuration's */
	bool config_sets;         /* the command takes --set: the configuration's [set] first */
	bool waive;               /* audit: the configuration's waivers mark the findings */
};

/*
 * cli_terminal - fills @o->terminal, @o->color and @o->width from --color and stdout:
 * colour with --color=always, or with auto when stdout is a terminal,
 * NO_COLOR is unset or empty (no-color.org) and TERM is not "dumb"; never
 * with --color=never. The width: on a terminal COLUMNS when it is a number,
 * else the terminal's (TIOCGWINSZ), else 80; not a terminal, or --output: 100 (the
 * report's width scripts and tests read). At least 40.
 */
void cli_terminal(struct options *o);

/*
 * The version of every JSON document's layout, its "schema" key (first);
 * raised when a key changes meaning or goes away, not when one is added.
 */
#define CLI_JSON_SCHEMA 1

/*
 * cli_error - "hosttune: MESSAGE" on stderr (a trailing newline in @fmt is
 * dropped: one line), its control characters and bytes that are not UTF-8
 * (a file name from a tree) as C escapes (shared/escape.h). Allocates
 * nothing. The first error of the run is kept, so escaped, for the JSON
 * error object that cli_finish() prints.
 */
void cli_error(const char *fmt, ...) _printf_(1, 2);

/*
 * cli_fail - the one line of a step that failed with @r (a negative errno):
 * "out of memory" for -ENOMEM, whatever else is known (the message of a
 * library function that ran out names a file it did not get to), and only
 * when the run's error does not say so already; else @fmt's message
 * (cli_error()). Returns @status, or EXIT_COLLECT for -ENOMEM.
 */
int cli_fail(int r, int status, const char *fmt, ...) _printf_(3, 4);

/*
 * cli_printed - the exit status of a read-only command's printer that
 * returned @r: 0 for r >= 0; EXIT_COLLECT after "out of memory" for
 * -ENOMEM; 0 for a write error when the reader went away
 * (cli_stdout_gone(): the command's verdict stands, main() ends quietly);
 * EXIT_COLLECT for any other write error (-EIO), which main() says once it
 * flushes stdout.
 */
int cli_printed(int r);

/*
 * cli_stdout_gone - whether the reader of standard output went away: fd 1
 * is a pipe or FIFO with no reader left, or a socket or terminal that hung
 * up (poll(2) reports POLLERR or POLLHUP for it), so that a write failed
 * with EPIPE (SIGPIPE is ignored: main.c). False for a file, a full disk
 * (ENOSPC) or any other write error, and while --output captures fd 1. A
 * read-only command ends quietly then, with the exit status of what it
 * found (hosttune(8) EXIT STATUS); apply and revert do not (EXIT_UNREPORTED).
 */
bool cli_stdout_gone(void);

/* "hosttune: MESSAGE" on stderr as cli_error() prints it, not kept as the run's error. */
void cli_note(const char *fmt, ...) _printf_(1, 2);

/* "hosttune: MESSAGE (hosttune --help lists the usage)" (cli_error()); returns EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) _printf_(1, 2);

/* Whether an error prints the JSON error object on stdout too (--format json). */
void cli_set_json(bool json);

/*
 * cli_error_json - {"message", "exit", "file", "line", "column"}: the run's
 * first error (cli_error()), @status the exit status; file, line and column
 * are null unless the message starts "FILE:LINE:COL: ". NULL on ENOMEM.
 */
struct json_object *cli_error_json(int status);

/*
 * cli_finish - the end of the run: with --format json, an exit status of 2
 * or more and no JSON document printed yet, prints {"schema", "error":
 * cli_error_json()} on stdout, so that stdout holds one JSON document
 * whatever happened. It writes that text itself, allocating nothing, so
 * that memory that ran out has its error object too. Returns @status.
 */
int cli_finish(int status);

/*
 * cli_swap_printed - sets whether a JSON document is on stdout (cli_finish()
 * prints the error object only when none is) and returns what it was: what
 * was printed while --output captured stdout is not on stdout.
 */
bool cli_swap_printed(bool printed);

/*
 * cli_load_facts - the facts of the host: a --facts file, else a collection
 * below --root (collect/collect.h) attached to the table as its provider, so
 * that each source runs when a rule first reads one of its facts; with @all
 * every source runs now (`hosttune facts`). The collectors' inputs come from
 * @rs's profile (workload.service, the [garage] variables; @rs may be NULL)
 * and --state. Returns 0 with *out set (caller frees), or the exit status
 * after printing why: EXIT_USAGE for a bad facts file or a garage.toml that
 * does not parse (cli_collect_status()), EXIT_COLLECT when collecting failed.
 */
int cli_load_facts(const struct options *o, struct ht_ruleset *rs, bool all,
                   struct ht_facts **out);

/*
 * cli_collect_status - the exit status of a failed collection or evaluation
 * (negative errno @r): EXIT_USAGE for bad input (-EINVAL, -ENOENT: a rule or
 * a garage.toml; -ERANGE, -EDOM, -ELOOP: a rule's arithmetic), else
 * EXIT_COLLECT.
 */
int cli_collect_status(int r);

/*
 * cli_collect_rule_sysctls - collects into @f every sysctl @rs reads that
 * hosttune has no entry for (a site rule's vm.swappiness) and boot.TARGET
 * of every sysctl and module target, so that a facts file holds what an
 * audit reads. Returns 0, or EXIT_COLLECT after printing why.
 */
int cli_collect_rule_sysctls(const struct ht_ruleset *rs, struct ht_facts *f);

/*
 * cli_collect_warnings - prints, once, what this run's collection skipped
 * that nobody asked for (ht_collect_warning()) as "hosttune: warning: ..."
 * on stderr.
 */
void cli_collect_warnings(void);

/*
 * cli_facts_profile - the options to judge facts @f with: with a --facts
 * file, the host's own profile (hosttune.profile, what hosttune facts ran
 * with there) unless this command line's --profile or a --config FILE given
 * here names one (the configuration this machine reads by default is this
 * machine's): *@fo filled from @o with that profile and its origin in
 * @where (@size bytes, "FILE: hosttune.profile"), and returned; else @o.
 * The result points into @f and @where: both outlive its use.
 */
const struct options *cli_facts_profile(const struct options *o, const struct ht_facts *f,
                                        struct options *fo, char *where, size_t size);

/*
 * cli_load_rules - the rules (--rules, else the installed ones and /etc's
 * rules.d), the profile and the --set values, checked. Returns 0 with *out
 * set (caller frees), or after printing the error EXIT_USAGE (bad rules,
 * profile or --set) or EXIT_COLLECT (out of memory).
 */
int cli_load_rules(const struct options *o, struct ht_ruleset **out);

/*
 * cli_try_load_rules - cli_load_rules() for a command that goes on without
 * rules: prints nothing, *out NULL on failure. Returns 0, EXIT_USAGE or
 * EXIT_COLLECT.
 */
int cli_try_load_rules(const struct options *o, struct ht_ruleset **out);

/*
 * cli_evaluate - the common first half of audit, plan/apply and verify:
 * rules, facts (plus --observed) and the findings. Returns 0 or the exit
 * status, with what was loaded in the out-parameters for the caller to free
 * either way.
 */
int cli_evaluate(const struct options *o, struct ht_ruleset **rs, struct ht_facts **facts,
                 struct ht_findings *findings);

/*
 * cli_text_stdout - for a text report: stdout becomes a stream that shows
 * control characters and bytes that are not UTF-8 as C escapes, tabs and
 * newlines as they are (shared/escape.h ht_escape_fdopen() on fd 1), so that
 * no text from a tree (a file name, a rule title) reaches a terminal as an
 * escape sequence. The severities' colours go through ht_escape_raw().
 * Flush it with ht_escape_flush(). Returns 0, or EXIT_COLLECT after a
 * one-line message.
 */
int cli_text_stdout(void);

/*
 * Prints @o (consumed) pretty on stdout, with "schema": CLI_JSON_SCHEMA as its
 * first key. Every string of it is written as UTF-8, a byte that is not as
 * the four characters \xHH (json-c writes bytes as they are); DEL and the C1
 * controls as \u escapes. Returns 0, or EXIT_COLLECT when @o is NULL or
 * memory runs out (after "out of memory").
 */
int cli_print_json(struct json_object *o);

/* cli_print_json() that says nothing: 0, or -ENOMEM when @o is NULL or memory runs out. */
int cli_put_json(struct json_object *o);

/* The profile's workload.burst when it is a number >= 1, else 2: the headroom over a peak. */
double cli_profile_headroom(const struct ht_ruleset *rs);

/*
 * cli_journal_fd - whether @fd is the journal's stream: $JOURNAL_STREAM
 * ("DEV:INO", systemd.exec(5)) names the device and inode fstat(2) gives
 * for @fd, as sd-daemon(3) says to check. False when it is unset or malformed.
 */
bool cli_journal_fd(int fd);

/*
 * cli_journal_setup - after cli_text_stdout() (@text: stdout is a text
 * stream of it that the report reaches; false for JSON, Prometheus and
 * --output, which stay as they are):
 * when stdout is the journal, every line of it starts with sd-daemon(3)'s
 * "<6>" (info) until cli_journal_priority() says otherwise; when stderr is,
 * cli_error() lines start with "<3>" (error), cli_note() lines with "<4>"
 * (warning) for "warning: ...", else "<5>" (notice). Returns 0, or a
 * negative errno (flushing stdout failed). It prints nothing (common.c's
 * printers call this file, not the other way round).
 */
int cli_journal_setup(bool text);

/*
 * cli_journal_priority - the sd-daemon priority (<syslog.h> LOG_EMERG 0 ..
 * LOG_DEBUG 7) of the lines written to @out (stdout) from now on; nothing
 * unless stdout is the journal. The report's info->priority.
 */
void cli_journal_priority(FILE *out, int prio);

/*
 * The priority prefix of a line "hosttune: @msg" on stderr when stderr is
 * the journal: "<3>" for an error (@error: cli_error()), else (cli_note())
 * "<4>" for "warning: ...", "<5>" (notice) for any other; "" when stderr
 * is not the journal.
 */
const char *cli_journal_stderr_prefix(bool error, const char *msg);

/*
 * cli_command_help - `hosttune COMMAND --help`: the usage of command @name,
 * what it does, and the options it takes besides those of every command
 * (@opts, @nopts long names in the order to list them; those from @nown on
 * only with --dry-run, apply's that plan takes) with what each does
 * (help.c), on @out. Returns 0, or -EINVAL for a command help.c does not know.
 */
int cli_command_help(FILE *out, const char *name, const char *const *opts, size_t nown,
                     size_t nopts);

/* The commands; each returns the exit status. */
int cmd_facts(const struct options *o);
int cmd_audit(const struct options *o);
int cmd_apply(const struct options *o);   /* plan when o->dry_run */
int cmd_revert(const struct options *o);
int cmd_verify(const struct options *o);
int cmd_watch(const struct options *o);
int cmd_rules(const struct options *o);

/*
 * hosttune profiles: each profile of the rules directories with its
 * description, the one in use and where that came from (--profile, the
 * configuration's FILE:LINE, the default), and the one this host's services
 * point to when it differs.
 */
int cmd_profiles(const struct options *o);

/*
 * cli_nearest_profile - the name in @p (@n of them) within two edits of
 * @name, the nearest (the first of those as near), for "did you mean";
 * NULL when none is that near. Points into @p.
 */
const char *cli_nearest_profile(const struct ht_profile_info *p, size_t n, const char *name);

/*
 * cli_profile_hint - the profiles of @rs's directories (*@p, *@n: freed by
 * the caller with ht_profile_infos_free(), either way) and the one the facts
 * @f point to when it is not @rs's (ht_profile_suggest()). Returns 1 with
 * *@hint filled (clear it with ht_profile_hint_clear()), 0 for no hint, or a
 * negative errno with @err set.
 */
int cli_profile_hint(const struct ht_ruleset *rs, struct ht_facts *f,
                     struct ht_profile_info **p, size_t *n, struct ht_profile_hint *hint,
                     struct ht_error *err);
int cmd_explain(const struct options *o, const char *id);

/*
 * cmd_metrics - audit --format prometheus: the audit in the Prometheus text
 * format (metrics.c; hosttune(8) PROMETHEUS). Exit status as audit's.
 */
int cmd_metrics(const struct options *o);

/*
 * cli_metrics_write - the findings @f of ruleset @rs (its last evaluation:
 * the conntrack figures are its named values) as gauges in the text format
 * node_exporter's textfile collector reads: HELP and TYPE once a family,
 * families not interleaved, no sample timestamp, one series per rule and
 * interface, label values escaped. @now: the hosttune_last_run_timestamp_seconds
 * value (seconds since the epoch). Returns 0, -ENOMEM, or -EIO when writing
 * to @out failed.
 */
int cli_metrics_write(const struct ht_findings *f, struct ht_ruleset *rs, int64_t now, FILE *out);

/* One host's audit for cli_metrics_write_hosts(). */
struct cli_metrics_host {
	const char *label;                 /* the host label's value; NULL: no host label */
	const struct ht_findings *findings;
	struct ht_ruleset *rs;             /* its last evaluation gave @findings */
};

/*
 * cli_metrics_write_hosts - the audits of @n hosts (@n >= 1) in one text
 * format document, as cli_metrics_write() writes one host's, with a
 * host="LABEL" label first on each host's series (none when the label is
 * NULL): every family's HELP and TYPE once, then its samples host by host
 * (the format allows no interleaving). The run's own families
 * (hosttune_build_info, hosttune_last_run_timestamp_seconds,
 * hosttune_profile_info) appear once, without a host label. The labels must
 * tell the hosts apart (no series twice). Returns 0, -ENOMEM or -EIO.
 */
int cli_metrics_write_hosts(const struct cli_metrics_host *hosts, size_t n, int64_t now,
                            FILE *out);

/*
 * cli_fleet_wanted - whether --facts names a fleet: more than one FILE, or
 * a directory (its *.facts files). One file is a single host's audit.
 */
bool cli_fleet_wanted(const struct options *o);

/*
 * cli_fleet_audit - audit of a fleet (fleet.c; hosttune(8) FLEET; main.c runs it for
 * audit when cli_fleet_wanted(), whatever the format): every
 * facts file of --facts (a directory: its *.facts files, in name order; a
 * file named twice counts once) audited as audit --facts FILE would, then
 * reported together in the format of @o: text (one table with a host
 * column, then the findings at info and above host by host), JSON (one
 * document, a "host" in each finding) or Prometheus (a host label, which
 * the caller checked --host-label asks for). Exit status as audit's, over
 * every host's findings; a bad facts file: EXIT_USAGE naming its line.
 */
int cli_fleet_audit(const struct options *o);

/*
 * cli_host_label - the name a host's findings are shown by: its host.name
 * fact, else the name of its facts file @file without directory and
 * ".facts" ("stdin" for "-"), else "localhost" (@f and @file NULL). Returns
 * a new string, NULL on ENOMEM.
 */
char *cli_host_label(const struct ht_facts *f, const char *file);

/*
 * cli_metrics_peers - the per-peer figures node_exporter lacks, from the
 * peer.* facts a rule had collected (none when no rule read peer.list):
 * hosttune_peer_retransmit_ratio (retrans over segs_out, their .delta with
 * --sample), hosttune_peer_min_rtt_seconds and hosttune_peer_rtt_seconds,
 * each labelled peer="ADDRESS" (peer.PEER.address). Returns 0, -ENOMEM, or
 * -EIO when writing to @out failed.
 */
int cli_metrics_peers(const struct ht_facts *facts, FILE *out);

/*
 * cli_metrics_nics - the per-interface and receive-path figures
 * node_exporter lacks, from the facts a rule had collected (the counters are
 * not read for the metrics alone), over --sample's interval (the .delta
 * facts) when sample.seconds is set, else since the interface was created or
 * since boot (node_exporter has the raw counters, not these ratios):
 * hosttune_nic_bad_frame_ratio (device="IF"),
 * hosttune_nic_overlay_tunnel_segmentation (device, underlay,
 * feature) and hosttune_nic_overlay_mtu_fit_bytes (device) of each overlay,
 * and hosttune_softnet_drop_ratio. Returns 0, -ENOMEM, or -EIO when writing
 * to @out failed.
 */
int cli_metrics_nics(const struct ht_facts *facts, FILE *out);

/*
 * cli_metrics_processes - each judged process's open descriptors against
 * its soft RLIMIT_NOFILE, from the facts a rule had collected (process.list:
 * the processes behind the listening ports and the profile's service, each
 * name's worst member by share of its limit; nothing is read for the metrics
 * alone): hosttune_process_open_files and hosttune_process_open_files_limit
 * (process="NAME", pid="PID"), in descriptors. A process whose descriptors or
 * limit are unavailable has no sample. Returns 0, -ENOMEM, or -EIO when
 * writing to @out failed.
 */
int cli_metrics_processes(const struct ht_facts *facts, FILE *out);

/*
 * cli_run_output - runs @run with its standard output captured, then, when
 * it exits 0 or 1 (a report), writes what it printed to o->output
 * atomically (shared/fsutil.h ht_file_write_at(): a temp file beside it,
 * mode 0644, fsync, rename). o->output is a path of this machine, relative
 * to the working directory, never below --root; its directory must exist.
 * On failure the old file stays, one line naming the file goes to stderr and
 * EXIT_COLLECT is returned. When @run fails (exit 2 and above) nothing is
 * written and what it printed goes to standard output. Returns the exit status.
 */
int cli_run_output(const struct options *o, int (*run)(const struct options *o));
