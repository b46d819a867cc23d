/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include <json-c/json.h>

#include "shared/util.h"
#include "engine/value.h"

/*
 * The fact model: a table of named, typed values, each with its unit and the
 * source it was read from. Facts are the only input of the rule engine.
 * Names follow ../shared/DESIGN.md, "Fact names": kernel settings keep their
 * own names (sysctl keys as sysctl(8) prints them, module parameters as
 * module.MODULE.PARAM), derived facts have hosttune names.
 */

struct ht_fact {
	char *name;
	struct ht_value value; /* HT_T_NONE when unavailable */
	int error;             /* 0, or a positive errno: why the value is unavailable */
	/* The unit and source texts belong to the table (each text is kept once), valid while it is. */
	char *unit;            /* "bytes", "entries", ...; NULL for none */
	char *source;          /* "/proc/meminfo MemTotal", "uname(2)", ...; NULL if unknown */
};

/*
 * struct ht_fact_def - a fact hosttune knows: its static type for the rule
 * type checker, its unit and a one-line description (shown by `hosttune
 * facts --help` and in hosttune(8)). A rule may only name facts listed here.
 */
struct ht_fact_def {
	const char *name;
	enum ht_type type; /* HT_T_INT stands for any number */
	const char *unit;  /* NULL for none */
	const char *doc;
};

/* The known facts, sorted by name; *n receives the count. Static storage. */
const struct ht_fact_def *ht_fact_defs(size_t *n);

/*
 * The facts of each network interface, named "nic.*.SUFFIX" here and
 * nic.IF.SUFFIX in a fact table (nic.eth0.speed). Static storage.
 */
const struct ht_fact_def *ht_nic_fact_defs(size_t *n);

/*
 * ht_instance_fact_defs - the facts of each instance of @family, named
 * "FAMILY.*.SUFFIX" here and FAMILY.INSTANCE.SUFFIX in a fact table:
 * "nic" (interfaces: nic.eth0.speed), "listener" (listening TCP ports:
 * listener.3900.backlog), "process" (checked processes by name:
 * process.garage.nofile). Sorted by name, static storage; NULL with *n = 0
 * for an unknown family.
 */
const struct ht_fact_def *ht_instance_fact_defs(const char *family, size_t *n);

/*
 * ht_fact_has_delta - true when counter fact @name (nstat.TcpRetransSegs,
 * peer.10.5.5.20.retrans) has an interval form @name.delta: its increase
 * between the two readings of --sample (collect/sample.h), unavailable
 * ENODATA without --sample and ESTALE when the counter went backwards.
 */
bool ht_fact_has_delta(const char *name);

/*
 * The definition of @name, or NULL when hosttune does not know it.
 * FAMILY.INSTANCE.SUFFIX names of an instance family (any INSTANCE, "*"
 * included) find their per-instance def: nic.eth0.speed, listener.3900.queue.
 * C.delta of a counter with an interval form (ht_fact_has_delta()) finds C's.
 * Any other sysctl key (ht_sysctl_key_valid()) finds the def of an unknown
 * sysctl: a number without unit (ht_fact_def_is_sysctl()).
 */
const struct ht_fact_def *ht_fact_def_find(const char *name);

/*
 * True when @name is a sysctl key as sysctl(8) prints it, below a top
 * directory of /proc/sys (abi, crypto, debug, dev, fs, kernel, net, sunrpc,
 * user, vm): "vm.swappiness", "net.ipv4.tcp_rmem". Components are
 * [A-Za-z0-9_-]+ joined by single dots; a key whose /proc/sys path has a
 * dot in a component (net.ipv4.conf.eth0/1.rp_filter) is not one.
 */
bool ht_sysctl_key_valid(const char *name);

/* True when @d is the def ht_fact_def_find() gives a sysctl hosttune has no entry for. */
bool ht_fact_def_is_sysctl(const struct ht_fact_def *d);

/*
 * The largest value the kernel can hold in fact @name: nf_conntrack's sysctls
 * are ints (INT32_MAX, net/netfilter/nf_conntrack_standalone.c), hashsize an
 * unsigned int module parameter (UINT32_MAX), ports.range.low/.high ports
 * (65535). 0 when hosttune knows no bound.
 * A collector or facts file value above it is not what a kernel wrote there.
 */
int64_t ht_fact_max(const char *name);

struct ht_facts;

/* Returns a new empty table, or NULL on ENOMEM. Free with ht_facts_free(). */
struct ht_facts *ht_facts_new(void);
void ht_facts_free(struct ht_facts *f);

/*
 * ht_facts_set - add or replace a fact; @v is deep-copied, @unit and @source
 * (may be NULL) are copied.
 *
 * Only what the facts file can hold and read back unchanged is accepted:
 * @name is [A-Za-z_][A-Za-z0-9_.-]*; @v a value (not HT_T_NONE; a finite
 * decimal; a version of 1 to 4 parts; a string of valid UTF-8; not below 0
 * for a known fact whose unit is a count or size, see ht_facts_read());
 * @unit one word of [A-Za-z0-9/%_] other than "from"; @source non-empty and
 * without leading or trailing blanks. A byte of @source that is a control
 * character or not UTF-8 (a file name from a tree) is kept as a C escape
 * ("\x1b", "\xff": shared/escape.h), so the facts file holds it on one line
 * and the JSON output is UTF-8 text.
 * Returns 0, -EINVAL for any of those, or -ENOMEM.
 */
int ht_facts_set(struct ht_facts *f, const char *name, const struct ht_value *v, const char *unit,
                 const char *source);

/*
 * Records @name as unavailable because of @errnum, a positive errno that
 * ht_errno_name() knows. Returns 0, -EINVAL (as ht_facts_set(), or for
 * another @errnum) or -ENOMEM.
 */
int ht_facts_set_unavailable(struct ht_facts *f, const char *name, int errnum, const char *unit,
                             const char *source);

/*
 * The setters collectors use: ht_facts_set() with a value made from a C
 * type, so each takes ht_facts_set()'s rules and returns what it returns (0,
 * -EINVAL or -ENOMEM). @unit and @source may be NULL and are copied.
 * ht_facts_set_int(): @i exact, whatever the unit (a count or size unit
 * needs @i >= 0 for a known fact). ht_facts_set_dec(): @d finite.
 * ht_facts_set_bool() and ht_facts_set_str() set no unit (no known fact of
 * those types has one); ht_facts_set_str() copies @s (NULL: -EINVAL);
 * text that is not valid UTF-8 (bytes of a file) records the fact as
 * unavailable instead, EILSEQ, with "SOURCE (not UTF-8)".
 */
int ht_facts_set_int(struct ht_facts *f, const char *name, int64_t i, const char *unit,
                     const char *source);
int ht_facts_set_dec(struct ht_facts *f, const char *name, double d, const char *unit,
                     const char *source);
int ht_facts_set_bool(struct ht_facts *f, const char *name, bool b, const char *source);
int ht_facts_set_str(struct ht_facts *f, const char *name, const char *s, const char *source);

/*
 * ht_facts_set_errno - ht_facts_set_unavailable() for the errno a collector
 * holds: @r is the negative errno a call returned (-ENOENT), or the positive
 * errno of a reason it names itself (ENOENT); both record ENOENT. Returns
 * what ht_facts_set_unavailable() returns; -EINVAL also for @r 0.
 */
int ht_facts_set_errno(struct ht_facts *f, const char *name, int r, const char *unit,
                       const char *source);

/*
 * The unit hosttune's table gives fact @name (ht_fact_def_find(), so
 * listener.3900.backlog finds "entries"); NULL for a fact without a unit
 * and for a name the table does not know. Static storage.
 */
const char *ht_fact_def_unit(const char *name);

/*
 * The fact named @name, or NULL when it was never set. Pointer valid until
 * the next set; its name stays valid as long as the table (a fact set again
 * keeps its name string).
 */
const struct ht_fact *ht_facts_get(const struct ht_facts *f, const char *name);

/*
 * ht_fact_provider_cb - collects fact @name into @f when asked for it
 * (facts on demand): it may set @name and any other facts its source gives,
 * or nothing when no source has it. Called at most once for a name that
 * stays absent per ht_facts_need() call; it must not set facts of a name it
 * is not asked for in a way that changes one already read (facts are
 * immutable once a rule has read them). Returns 0, or a negative errno with
 * @err set (a source that exists but fails, such as a garage.toml that does
 * not parse): the evaluation stops with it.
 */
typedef int (*ht_fact_provider_cb)(struct ht_facts *f, const char *name, unsigned flags,
                                   struct ht_error *err, void *userdata);

/* ht_facts_need() and ht_fact_provider_cb flags */
enum {
	/*
	 * Only what costs no more than reading a few files: a source whose cost
	 * follows what the host holds (a table dump, a walk of every process) or
	 * a measurement leaves its facts uncollected. For values nobody needed
	 * for a finding (ht_ruleset_evaluate()'s last pass, reports).
	 */
	HT_NEED_CHEAP = 1 << 0,
};

/*
 * Sets (or with @cb NULL removes) the provider ht_facts_need() asks for a
 * fact @f does not hold. @userdata is passed through; when @destroy is not
 * NULL, @f owns it and calls @destroy(@userdata) when the provider is
 * replaced or @f freed.
 */
void ht_facts_set_provider(struct ht_facts *f, ht_fact_provider_cb cb, void *userdata,
                           void (*destroy)(void *userdata));

/*
 * ht_facts_need - the fact named @name, asking the provider first when @f
 * does not hold it, with @flags (HT_NEED_*). *@out is NULL when neither @f
 * nor the provider has it.
 * Returns 0, or the provider's negative errno (*@out NULL, @err set).
 * The pointer is valid until the next set.
 */
int ht_facts_need(struct ht_facts *f, const char *name, unsigned flags, const struct ht_fact **out,
                  struct ht_error *err);

/* Number of facts, and the i-th in name order (0 <= i < count). */
size_t ht_facts_count(const struct ht_facts *f);
const struct ht_fact *ht_facts_at(const struct ht_facts *f, size_t i);

/*
 * ht_facts_write - the facts file format (hosttune-facts(5) section of
 * hosttune(8)), one line a fact in name order:
 *
 *   # hosttune facts 1
 *   NAME = VALUE [UNIT] [from SOURCE]
 *   NAME = unavailable ERRNO [UNIT] [from SOURCE]
 *
 * VALUE is in ht_value_format() syntax; ERRNO a name such as ENOENT; UNIT one
 * word of [A-Za-z0-9/%_] (never "from"); SOURCE the rest of the line after
 * the first "from". Tokens are separated by blanks (any amount of spaces and
 * tabs when reading). ht_facts_read() reads it back exactly, and writing what
 * it read gives the same text.
 * Returns 0, -EIO when writing to @out failed (the stream is flushed), or
 * -ENOMEM.
 */
int ht_facts_write(const struct ht_facts *f, FILE *out);

/*
 * ht_facts_read - parse a facts file into @f (facts it names replace
 * existing ones; nothing is added unless the whole file parses). The first
 * line that is not blank must be the header "# hosttune facts 1" (an empty
 * file is not a facts file). After it, blank lines and lines starting with
 * '#' are skipped, except that another "# hosttune facts N" must say version
 * 1. A fact name must be one hosttune knows (ht_fact_def_find()), or a
 * module parameter module.MODULE.PARAM (those vary between kernels), or a
 * sysctl key (ht_fact_def_find(): any number); lines of listeners.count,
 * listeners.full and listeners.at_somaxconn, per-host counts that older
 * facts files hold, are skipped (the rules count listener.PORT.* facts); a known
 * fact must have its type, any number for HT_T_INT, and one whose unit is a
 * count or size (bytes, entries, buckets, seconds, CPUs, packets, lookups,
 * queues, Mb/s, MB/s) must not be negative. Strings must be UTF-8, and a
 * source UTF-8 without control characters (ht_facts_set() writes them escaped).
 * @filename: used in messages only (NULL: "-").
 *
 * Returns 0; -EINVAL with err "FILE:LINE:COL: expected ..., found ..." on a
 * malformed line (COL is the 1-based byte column of the offending token) or
 * a missing header ("FILE:1:1: expected '# hosttune facts 1', found end of
 * file" for an empty file), "FILE:LINE:COL: unknown fact 'NAME'",
 * "FILE:LINE:COL: duplicate fact 'NAME' (first on line N)",
 * "FILE:LINE:COL: NAME must be a number, found string" for a known fact of
 * another type, or "FILE:LINE:COL: NAME must not be negative, found -1";
 * -ENOMEM; -EIO on a read error.
 */
int ht_facts_read(struct ht_facts *f, FILE *in, const char *filename, struct ht_error *err);

/*
 * ht_facts_to_json - {"facts": {"NAME": {"value": V, "unit": U, "source": S}, ...}}
 * with numbers as JSON numbers, versions and strings as strings, an
 * unavailable fact as "value": null plus "error": "ENOENT" and "reason":
 * strerror text. unit/source are null when unknown. Returns a new object
 * (caller puts it) or NULL on ENOMEM.
 */
struct json_object *ht_facts_to_json(const struct ht_facts *f);

/*
 * A value as a JSON value (int64 or double, bool, string; version as
 * "5.15.0"). NULL on ENOMEM, and for HT_T_NONE (json-c's JSON null), so
 * check the type first to tell the two apart.
 */
struct json_object *ht_value_to_json(const struct ht_value *v);
