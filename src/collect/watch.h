/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "shared/util.h"

/*
 * hosttune watch: samples the conntrack table of the caller's network
 * namespace at a fixed interval and measures what an audit can only guess:
 * the peak entry count, the new-connection rate, the drops, and how long the
 * table sat at its cap.
 *
 * The library never prints and never handles signals. The CLI calls
 *
 *	ht_watch_new()                      opens the sources, t = 0
 *	loop: ht_watch_sample()             one sample, its derived rates filled
 *	      ht_watch_format_sample()      a line of text (or the JSON at the end;
 *	                                    the printing is the CLI's: cli/watch-print.h)
 *	      ht_watch_record_sample()      a line of the record file (--record)
 *	      ht_watch_wait()               sleeps to the next tick; -EINTR once *cfg.stop is set
 *	ht_watch_summary()                  after the last sample or on Ctrl-C
 *	ht_watch_format_summary() / ht_watch_summary_json()
 *	ht_watch_free()
 *
 * and `hosttune audit --observed FILE` calls ht_watch_record_load() and
 * ht_watch_replay(), which run the same summary over a recorded run.
 *
 * Sources, per sample:
 *   t            CLOCK_MONOTONIC, seconds since the first sample
 *   count        CTA_STATS_GLOBAL_ENTRIES (ctnetlink IPCTNL_MSG_CT_GET_STATS), else the
 *                "entries" column of /proc/net/stat/nf_conntrack (= nf_conntrack_count)
 *   drop,        CTA_STATS_DROP and CTA_STATS_EARLY_DROP summed over CPUs
 *   early_drop   (IPCTNL_MSG_CT_GET_STATS_CPU), else the same /proc columns
 *   max          /proc/sys/net/netfilter/nf_conntrack_max
 *   time_wait    /proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait
 *   insert       new entries confirmed since ht_watch_new(): the ctnetlink
 *                IPCTNL_MSG_CT_NEW events of multicast group NFNLGRP_CONNTRACK_NEW,
 *                counted as they arrive (ht_watch_wait() reads them while it sleeps),
 *                plus the events dropped at the socket's receive queue (lost)
 *   lost         of insert, the events the kernel dropped at the receive queue
 *                because it was full: the socket's drop counter (sk_drops, read
 *                with getsockopt SO_MEMINFO, SK_MEMINFO_DROPS; netlink_overrun() in
 *                net/netlink/af_netlink.c counts every event it could not queue).
 *                Unknown when the kernel does not give it (before 4.12).
 *   overruns     the receive-queue overruns the socket reported (recvmsg ENOBUFS)
 *
 * Why events and not the per-CPU 'insert' counter (CTA_STATS_INSERT, the
 * "insert" column): __nf_conntrack_confirm() in net/netfilter/nf_conntrack_core.c
 * no longer counts it; only nf_conntrack_hash_check_insert() (entries that
 * ctnetlink creates) does. Measured on 6.18: 50 new TCP connections in a
 * fresh namespace leave insert = 0 while `conntrack -E -e NEW` shows 50
 * events; google/nftables issue #138 shows the same zero on 5.10. The "new"
 * column is a constant 0 in ct_cpu_seq_show() (nf_conntrack_standalone.c).
 * The event is sent at confirmation (nf_conntrack_event_cache(IPCT_NEW) in
 * __nf_conntrack_confirm()), so it counts exactly the entries that entered
 * the table; a packet dropped because the table is full makes no entry and
 * no event. Events need CAP_NET_ADMIN (af_netlink.c: nfnetlink does not set
 * NL_CFG_F_NONROOT_RECV) and net.netfilter.nf_conntrack_events != 0;
 * without them, or with --root, "insert" is unknown and the rates are not
 * given.
 *
 * Lost events. Each event is an skb of about 1 KiB of receive buffer (the
 * buffer asked for is 8 MiB with SO_RCVBUFFORCE, which the kernel doubles);
 * when the sampler is not scheduled for long enough (a storm on a busy host:
 * bench/watch-rate measured a sampler kept off the CPU for 3.5 s), the
 * queue fills, the kernel drops the events that do not fit and recvmsg()
 * reports ENOBUFS once. The sampler then still knows how many: the drop
 * counter. So insert = received + dropped, and bench/watch-rate found it
 * equal to the entries made at every rate it tried. But an ENOBUFS can also
 * stand for an event the kernel could not build at all (ctnetlink_conntrack_
 * event() out of memory calls nfnetlink_set_err(), which counts nothing), so
 * after any overrun the count is only known to be at least insert: an
 * interval whose overruns or lost grew has its rate marked a lower bound
 * (new_rate_lower_bound), and so are the summary's rates. insert never
 * counts an event twice, so the count is never above the truth.
 *
 * A sample's insert is unknown ('-' in the record) only without events
 * (no CAP_NET_ADMIN, events off, --root) and in version 1 records, whose
 * sampler wrote '-' for the sample after an overrun; an interval with an
 * unknown end is left out of the rates, and the rates are then lower bounds
 * as well.
 *
 * Derived per sample (ht_watch_acc_add()):
 *   pct_max      100 x count / max
 *   new_per_s    (insert - insert of the previous sample) / (t - previous t);
 *                new_rate_lower_bound when the overruns or lost grew over the
 *                interval (an overrun can be reported an interval after its
 *                drops), or only one of the two samples has the overrun count
 *   drops_per_s  the same for drop + early_drop
 * The drop counters are u32 per CPU (nla_put_be32() in
 * ctnetlink_ct_stat_cpu_fill_info()); a difference that is negative by less
 * than 2^32 is one CPU's counter wrapping and is corrected by adding 2^32. A
 * difference still negative (a record from another boot) makes it unknown.
 * insert is a 64-bit count of events that never wraps: a decrease means the
 * counting restarted (two records appended, another sampler), and that
 * interval's new_per_s is unknown, as after lost events. So does a decrease
 * of lost or overruns, which never go back either.
 *
 * Summary (ht_watch_acc_summary()):
 *   samples, duration (t of the last sample - t of the first), interval (the
 *     configured one, or duration / (samples - 1) for a replay)
 *   peak_count   the largest count; peak_pct its share of that sample's max
 *   peak_interval_rate  the largest new_per_s of any one interval
 *   peak_rate    the largest rate over a window of at least HT_WATCH_RATE_WINDOW (W)
 *                seconds: max over sample pairs i < j with t[j] - t[i] >= W of
 *                (insert[j] - insert[i]) / (t[j] - t[i]), every interval between
 *                i and j known (a pair does not span an unknown interval). When
 *                no such pair exists (a run shorter than W, or losses cutting it
 *                into shorter stretches), mean_rate: the rate over the whole run.
 *   peak_windowed, peak_span  whether the peak is over W, and the seconds it is
 *                over: W, else the known time of the run (insert_time: the whole
 *                duration unless events were lost). A printed peak names its span:
 *                "over 5 s", or "over the whole run of 4.000 s (shorter than
 *                the 5 s window)".
 *                t[j] - t[i] may fall short of W by 1 us (decimal times in binary).
 *                A burst over one interval of 250 ms is not what a table must
 *                hold for TIME_WAIT seconds; W is the span over which the
 *                field's bursts were measured.
 *   inserts      the sum of the known insert differences
 *   mean_rate    inserts / duration. With an unknown interval this is a lower
 *                bound of the mean (the unknown intervals count as 0), not the
 *                rate over the known intervals.
 *   rate_lower_bound  some interval's count was unknown or a lower bound: the
 *                peak, interval peak and mean rates are lower bounds ("at least"
 *                in the text). intervals_short counts those intervals.
 *   events_lost, overruns  the sums of the lost and overruns differences
 *                (have_events_lost, have_overruns: some interval had both ends)
 *   drops        the sum of the drop + early_drop differences over the run
 *   pinned_samples  the longest run of consecutive samples at the cap
 *                (count >= max: __nf_conntrack_alloc() lets the count reach
 *                max and refuses, with a packet drop, the allocation past it)
 *   max, time_wait  of the last sample (what a fix starts from)
 *   ceiling      max / max(time_wait, 1): the new connections a second a full
 *                table admits, as rules/conntrack.rules computes conntrack.ceiling
 *
 *   recommended_max, with headroom >= 1 (the CLI passes workload.burst, default 2):
 *     never at the cap:  working_set = peak_count                  (basis "count")
 *     at the cap:        working_set = peak_rate x time_wait       (basis "rate"; the
 *                        W-second peak, not peak_interval_rate)
 *                        when that is at least peak_count, else peak_count, a
 *                        lower bound (basis "cap"; also when no rate is known)
 *       A full table only shows the cap: the entries it would have held are
 *       every connection of the last TIME_WAIT seconds, rate x TIME_WAIT. The
 *       peak rate is taken over the whole run, so the climb before the table
 *       filled counts; if the table was already full at the first sample
 *       (full_at_start), the rate seen is at most the ceiling and the
 *       estimate is a lower bound.
 *     working_set_entries = ceil(working_set) as a whole number: peak_count
 *       itself for the count and cap bases (exact, where the double is not
 *       above 2^53), and at most 2^63 - 1 (INT64_MAX), where a larger rate
 *       estimate is held: a record's counts go up to 2^63 - 1, and
 *       peak_rate x time_wait can pass it. No double is ever converted to an
 *       integer it does not fit (ht_watch_entries()).
 *     recommended_max = max(min(pow2ceil(ceil(working_set x headroom)), 2^30), max)
 *   hosttune only raises the table: never below the current max. 2^30 is the
 *   largest power of two nf_conntrack_max takes (written as an int through
 *   proc_dointvec_minmax, nf_conntrack_standalone.c: at most 2^31 - 1).
 *   The audit still holds its own recommendation to the memory budget.
 *
 * Record file (--record FILE, read back by `hosttune audit --observed FILE`):
 *   line 1      "# hosttune watch 2"
 *   line 2      "# t count max insert drop early_drop time_wait lost overruns",
 *               the column names (HT_WATCH_RECORD_COLUMNS): a comment, so a
 *               record without it (written before it was added) reads the same
 *   then        one line per sample, fields separated by one or more blanks:
 *                 t count max insert drop early_drop time_wait lost overruns
 *               t is seconds since the first sample, a decimal with up to 9
 *               fraction digits, strictly increasing; count, max (> 0) and
 *               time_wait are decimal integers; insert, drop, early_drop, lost
 *               and overruns are decimal integers or "-" when unknown (only
 *               their differences are used, so their origin does not matter).
 *               Integers are 0 to 2^63 - 1 = 9223372036854775807.
 *   Version 1 ("# hosttune watch 1", written before the lost events were
 *   counted) has the first 7 fields only and is read as before: lost and
 *   overruns unknown, and an insert of "-" after an overrun. The writer
 *   always writes version 2.
 *   Other lines starting with "#" and empty lines are ignored; at least one
 *   sample is required. ht_watch_record_sample() writes t with 9 decimals (to
 *   the nanosecond of CLOCK_MONOTONIC), so samples less than 1 ms apart stay
 *   distinct; older records, written with 3 decimals, read as before.
 *   Errors read "FILE:LINE:COL: expected ..., found ...".
 */

#define HT_WATCH_RECORD_HEADER "# hosttune watch 2"
#define HT_WATCH_RECORD_HEADER_V1 "# hosttune watch 1"
/* The second line the writer writes: the sample lines' fields by name. */
#define HT_WATCH_RECORD_COLUMNS "# t count max insert drop early_drop time_wait lost overruns"

/* The peak rate's window, s: the span the field's bursts were measured over. */
#define HT_WATCH_RATE_WINDOW 5.0

/* Largest power of two nf_conntrack_max accepts (an int sysctl: at most 2^31 - 1). */
#define HT_WATCH_MAX_LIMIT ((int64_t)1 << 30)

struct ht_watch_sample {
	/* Measured (and recorded). */
	double t;                 /* s since the first sample */
	int64_t count;            /* entries in the table */
	int64_t max;              /* nf_conntrack_max */
	int64_t insert;           /* new entries confirmed, cumulative */
	int64_t drop;             /* packets dropped for want of an entry, since boot */
	int64_t early_drop;       /* entries evicted to make room, since boot */
	int64_t time_wait;        /* nf_conntrack_tcp_timeout_time_wait, s */
	int64_t lost;             /* of insert, events dropped at the receive queue, cumulative */
	int64_t overruns;         /* receive-queue overruns (ENOBUFS), cumulative */
	bool have_insert, have_drop, have_early_drop, have_lost, have_overruns;

	/* Derived by ht_watch_acc_add(); a rate is valid only when its have_ flag is set. */
	double pct_max;
	double new_per_s;
	double drops_per_s;
	bool have_new_rate, have_drop_rate;
	bool new_rate_lower_bound; /* events may have been lost: new_per_s is at least this */
};

enum ht_watch_basis {
	HT_WATCH_BASIS_COUNT,     /* never at the cap: the peak count is the working set */
	HT_WATCH_BASIS_RATE,      /* at the cap: peak rate x TIME_WAIT */
	HT_WATCH_BASIS_CAP,       /* at the cap, no rate known: the cap, a lower bound */
};

struct ht_watch_summary {
	size_t samples;
	double duration, interval, headroom;
	int64_t max, time_wait;   /* of the last sample */
	int64_t peak_count;
	double peak_pct;
	bool have_rate;           /* peak_rate, peak_interval_rate and mean_rate are known */
	double peak_rate;         /* over a window of HT_WATCH_RATE_WINDOW s (see above) */
	bool peak_windowed;       /* peak_rate is over the window, not over the whole run */
	double peak_span;         /* s peak_rate is over: the window, or the run's known time */
	double peak_interval_rate; /* over one sampling interval */
	double mean_rate;
	int64_t inserts;          /* new entries counted over the known intervals */
	bool rate_lower_bound;    /* events were lost (or unknown): the rates are lower bounds */
	size_t intervals_short;   /* intervals whose count is unknown or a lower bound */
	bool have_events_lost, have_overruns;
	int64_t events_lost;      /* events dropped at the receive queue (included in inserts) */
	int64_t overruns;         /* receive-queue overruns (ENOBUFS) */
	bool have_drops;          /* every drop and early_drop difference was known */
	int64_t drops;
	size_t pinned_samples;
	bool full_at_start;       /* the first sample was already at the cap */
	double ceiling;
	enum ht_watch_basis basis;
	double working_set;
	int64_t working_set_entries; /* ceil(working_set), 0 .. INT64_MAX (see above) */
	double need;              /* working_set x headroom */
	int64_t pow2;             /* pow2ceil(ceil(need)), at most HT_WATCH_MAX_LIMIT */
	int64_t recommended_max;
	char source[160];         /* where "insert" came from, or why it is unknown */
};

/* ---- the summary arithmetic: pure, no I/O ---- */

/* A sample's (t, insert), kept for the windowed peak rate. */
struct ht_watch_point {
	double t;
	int64_t insert;
};

struct ht_watch_acc {
	double interval, headroom;
	size_t samples;
	struct ht_watch_sample first, last;
	int64_t peak_count;
	double peak_pct;
	bool have_rate;
	double peak_interval_rate;
	bool have_window_rate;    /* some pair spans HT_WATCH_RATE_WINDOW */
	double window_rate;
	/* The current stretch of known inserts, only the points a later window can need. */
	struct ht_watch_point *win;
	size_t win_head, win_len, win_cap;
	int64_t inserts;          /* sum of the known insert differences */
	double insert_time;       /* the time those differences span */
	bool inserts_lost;        /* some interval's insert difference was unknown */
	bool inserts_short;       /* some interval's insert difference was a lower bound */
	size_t intervals_short;   /* intervals with an unknown or lower-bound difference */
	bool have_lost, have_overruns;
	int64_t lost, overruns;   /* sums of the known differences */
	bool drops_unknown;
	int64_t drops;
	size_t run, longest_run;
};

/*
 * ht_watch_acc_init - start a summary. @interval: the sampling interval in s
 * (> 0), or 0 to take the mean spacing of the samples; @headroom >= 1.
 * Returns 0 or -EINVAL.
 */
int ht_watch_acc_init(struct ht_watch_acc *a, double interval, double headroom);

/* ht_watch_acc_free - release what ht_watch_acc_add() allocated; @a can be initialized again. */
void ht_watch_acc_free(struct ht_watch_acc *a);

/*
 * ht_watch_acc_add - add one sample and fill its derived fields. Returns 0,
 * -EINVAL when @s->t does not follow the previous sample's t, @s->max is
 * not positive or a value is negative, or -ENOMEM. The accumulator keeps
 * about 2 x HT_WATCH_RATE_WINDOW s of (t, insert): ht_watch_acc_free() it.
 */
int ht_watch_acc_add(struct ht_watch_acc *a, struct ht_watch_sample *s);

/*
 * ht_watch_acc_summary - the summary of the samples added so far (see the
 * top of this file); @source goes to out->source. Returns 0 or -ENODATA
 * when no sample was added.
 */
int ht_watch_acc_summary(const struct ht_watch_acc *a, const char *source,
                         struct ht_watch_summary *out);

/*
 * ht_watch_entries - @v as a whole number of entries, without undefined
 * behaviour: 0 for NaN or v <= 0, INT64_MAX for v >= 2^63, else v truncated.
 */
int64_t ht_watch_entries(double v);

/* ht_watch_replay - the summary of @n recorded samples, their derived fields filled. */
int ht_watch_replay(struct ht_watch_sample *samples, size_t n, double headroom,
                    const char *source, struct ht_watch_summary *out);

/* "count", "rate" or "cap". */
const char *ht_watch_basis_name(enum ht_watch_basis b);

/* ---- record file (format at the top of this file) ---- */

/* Writes the header: the version line, then the column names. Returns 0 or -EIO. */
int ht_watch_record_header(FILE *out);

/* Writes one sample line. Returns 0 or -EIO. */
int ht_watch_record_sample(FILE *out, const struct ht_watch_sample *s);

/* Writes the header and @n samples. Returns 0 or -EIO. */
int ht_watch_record_write(FILE *out, const struct ht_watch_sample *s, size_t n);

/*
 * ht_watch_record_read - parse a record from @in; @name is the file name
 * used in error messages. On success *samples (caller frees) holds *n >= 1
 * samples with their derived fields zero. Returns 0, -EINVAL with @err set
 * to "NAME:LINE:COL: expected ..., found ...", -ENOMEM, or -EIO.
 */
int ht_watch_record_read(FILE *in, const char *name, struct ht_watch_sample **samples,
                         size_t *n, struct ht_error *err);

/* ht_watch_record_load - ht_watch_record_read() of the file at @path; -errno of fopen(). */
int ht_watch_record_load(const char *path, struct ht_watch_sample **samples, size_t *n,
                         struct ht_error *err);

/* ---- the sampler ---- */

struct ht_watch_config {
	const char *root;         /* NULL or "/" for this host; else a tree (no events) */
	double interval;          /* s between samples, 0.001 to 86400 */
	double duration;          /* s; 0: until the caller stops (Ctrl-C), else at least
	                           * interval: the run ends at the first sample at or after
	                           * it, so it lasts duration rounded up to whole intervals */
	double headroom;          /* >= 1 */
	/*
	 * NULL, or the flag the caller's SIGINT/SIGTERM handler sets:
	 * ht_watch_wait() returns -EINTR as soon as it is set (see there).
	 */
	volatile sig_atomic_t *stop;
};

#ifdef HT_TEST_HOOKS
/*
 * Built only into tests/hosttune-hooks (watch.c compiled with
 * -DHT_TEST_HOOKS; the installed hosttune has none of it): with
 * HOSTTUNE_WATCH_TEST_RCVBUF=BYTES in the environment ht_watch_new() asks
 * for a receive buffer of BYTES (SO_RCVBUF, which the kernel doubles and
 * keeps at least about 2.3 KiB: two or three events), and the events are
 * read only when a sample is taken, not while ht_watch_wait() sleeps: more
 * new connections in one interval than the buffer holds overrun it, every
 * time. tests/netns-watch.sh forces lost events so.
 */
#define HT_WATCH_TEST_RCVBUF_ENV "HOSTTUNE_WATCH_TEST_RCVBUF"
#endif


struct ht_watch;

/*
 * ht_watch_new - check the configuration, find the conntrack table (reading
 * nf_conntrack_max first, so that nothing loads nf_conntrack), subscribe to
 * the NEW events when live, and start the clock. Returns 0, -EINVAL for a
 * bad configuration (a duration shorter than the interval among them), -ENOENT when nf_conntrack is not loaded, another
 * negative errno, with @err set.
 */
int ht_watch_new(const struct ht_watch_config *cfg, struct ht_watch **out, struct ht_error *err);

/*
 * ht_watch_sample - take one sample now, add it to the summary and fill @s
 * (derived fields included). Returns 0 or a negative errno with @err set.
 */
int ht_watch_sample(struct ht_watch *w, struct ht_watch_sample *s, struct ht_error *err);

/*
 * ht_watch_wait - sleep until the next sample is due, counting the events
 * that arrive meanwhile. Samples are due at whole multiples of the interval
 * after the first (absolute deadlines: no drift); a sample taken late makes
 * the next one due at the first multiple at least half an interval after
 * it, so that no rate is computed over a sliver of time.
 *
 * With cfg.stop NULL: returns 0, or -EINTR when any signal interrupted the
 * sleep (the caller decides whether to stop). With cfg.stop: *stop is
 * checked before every sleep and after every batch of events read, and
 * -EINTR returned once it is set; other signals do not end the wait. To
 * close the race of a signal arriving between the check and the sleep,
 * SIGINT and SIGTERM are blocked (pthread_sigmask) for the call and
 * unblocked only inside ppoll(), atomically; the caller's mask is restored
 * on return, and a signal that came meanwhile is delivered then. The
 * caller's handler must be installed without SA_RESTART.
 */
int ht_watch_wait(struct ht_watch *w);

/* ht_watch_done - true once a sample at or after the configured duration is taken. */
bool ht_watch_done(const struct ht_watch *w);

/* Where "insert" comes from ("ctnetlink NEW events"), or why it is unknown. */
const char *ht_watch_source(const struct ht_watch *w);

/* ht_watch_summary - ht_watch_acc_summary() of the samples taken. */
int ht_watch_summary(const struct ht_watch *w, struct ht_watch_summary *out);

void ht_watch_free(struct ht_watch *w);

/* ---- conntrack counters (implemented in collect-ctnetlink.c) ---- */

struct ht_ct_counters {
	int64_t count, drop, early_drop;
	bool have_count, have_drop, have_early_drop;
	char source[512];         /* "ctnetlink", or the /proc file and why netlink failed */
};

/*
 * ht_ctnetlink_counters - the entry count and the drop and early_drop
 * counters summed over CPUs, as ht_collect_ctnetlink() reads them (ctnetlink
 * when @root is live, else or on failure /proc/net/stat/nf_conntrack), but
 * without a fact table. The caller makes sure nf_conntrack is loaded: a
 * ctnetlink request would load it. Returns 0 when at least one value is
 * known, else the negative errno of the /proc read (-ENOENT, ...), -ENOMEM.
 */
int ht_ctnetlink_counters(const char *root, struct ht_ct_counters *c);
