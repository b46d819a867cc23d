/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* collect/: read-only sources -> facts. Rule: includes only shared/, engine/ and collect/. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "engine/facts.h"

/*
 * Counters over an interval (--sample TIME): a table of sampled sources,
 * each with a read function that fills a counter snapshot (fact name ->
 * u64). Without --sample a source is read once and its facts are the
 * since-boot counters C; with it, every source the rules need is read
 * twice TIME apart and C.delta is the increase between the readings (C
 * itself is the second reading). A counter that went backwards (a device
 * re-created) gives C.delta unavailable ESTALE.
 */

/* One counter of a snapshot: a fact name and its value, or why it is unavailable. */
struct ht_counter {
	char *name;     /* the fact's name: nstat.TcpRetransSegs (owned) */
	uint64_t value; /* since boot (or since the object was created) */
	int error;      /* 0, or a positive errno: the counter could not be read */
	char *source;   /* where it was read, or why not (owned; may be NULL) */
};

/*
 * struct ht_snapshot - one reading of a source: counters sorted by name
 * once read (ht_snapshot_find() bsearches), the time of the reading, and
 * what the source keeps of its own (per-socket records of the TCP peers).
 * Zero-initialise; free the contents with ht_snapshot_clear().
 */
struct ht_snapshot {
	struct ht_counter *v;
	size_t n, cap;
	struct timespec at;            /* CLOCK_MONOTONIC, just before the read */
	bool sorted;
	void *priv;                    /* the source's own data, or NULL (owned) */
	void (*priv_free)(void *priv); /* frees priv; NULL: free(3) */
};

/*
 * ht_snapshot_add - counter @name = @value read from @source (may be NULL),
 * both copied. Returns 0 or -ENOMEM.
 */
int ht_snapshot_add(struct ht_snapshot *s, const char *name, uint64_t value, const char *source);

/*
 * ht_snapshot_add_error - counter @name unavailable for @err (a negative or
 * positive errno), with @source saying what was tried. Returns 0 or -ENOMEM.
 */
int ht_snapshot_add_error(struct ht_snapshot *s, const char *name, int err, const char *source);

/* The counter named @name, or NULL. Sorts @s the first time (hence not const). */
const struct ht_counter *ht_snapshot_find(struct ht_snapshot *s, const char *name);

/* Frees what @s holds and zeroes it. */
void ht_snapshot_clear(struct ht_snapshot *s);

/*
 * ht_snapshot_fn - reads one source below @root (NULL: this host) into @s
 * (empty, its time already set). A counter the source cannot give goes in
 * as an error (ht_snapshot_add_error()), never a failure of the reading.
 * Returns 0 or -ENOMEM.
 */
typedef int (*ht_snapshot_fn)(const char *root, struct ht_snapshot *s);

/*
 * ht_sample_facts_fn - the facts of a source from its readings: @second is
 * the reading the since-boot facts come from; @first the one @seconds
 * earlier, or NULL without --sample (then no C.delta is set; asked for,
 * ht_sampler_no_delta() makes it unavailable). Returns 0 or -ENOMEM.
 */
typedef int (*ht_sample_facts_fn)(struct ht_facts *f, struct ht_snapshot *first,
                                  struct ht_snapshot *second, double seconds);

/*
 * ht_sample_facts_default - for each counter C of @second: the fact C (an
 * integer with its definition's unit, or unavailable with the counter's
 * errno) and, with @first, when ht_fact_has_delta(C), C.delta: the second
 * value minus the first, source "SOURCE, over --sample's S s"; unavailable
 * ENOENT when @first lacks C, the first reading's errno when C was not
 * readable then, ESTALE when it went backwards, ERANGE above INT64_MAX.
 * Returns 0 or -ENOMEM.
 */
int ht_sample_facts_default(struct ht_facts *f, struct ht_snapshot *first,
                            struct ht_snapshot *second, double seconds);

/*
 * struct ht_sample_source - one sampled source: the fact patterns it
 * provides (fnmatch(3), as the collector table's), its read function and
 * how its facts are made from the readings (NULL: ht_sample_facts_default()).
 */
struct ht_sample_source {
	const char *name;
	const char *const *provides; /* NULL-terminated */
	ht_snapshot_fn read;
	ht_sample_facts_fn facts;
};

/*
 * The table of sampled sources (sample.c); *@n receives the count. Static
 * storage.
 */
const struct ht_sample_source *ht_sample_sources(size_t *n);

/*
 * struct ht_sampler - the readings of one collection: which sampled
 * sources are wanted, the first readings, the interval.
 */
struct ht_sampler;

/* A sampler below @root (copied; NULL: this host). Returns 0 or -ENOMEM. */
int ht_sampler_new(const char *root, struct ht_sampler **out);
void ht_sampler_free(struct ht_sampler *s);

/*
 * ht_sampler_want - marks the sampled source that provides fact @name as
 * wanted: a name as a rule reads it, the per-instance FAMILY.SUFFIX form
 * included (peer.retrans.delta matches peer.*.retrans's source). @name
 * NULL: every source (`hosttune facts`). Returns true when a source matched.
 */
bool ht_sampler_want(struct ht_sampler *s, const char *name);

/*
 * ht_sampler_start - --sample @seconds (> 0): the first reading of every
 * wanted source, now. The second is taken, all sources at once, when the
 * first sampled fact is asked for (ht_sampler_collect()), after sleeping
 * out the rest of the interval. Returns 0, -EINVAL for @seconds <= 0 or a
 * second call, -ENOMEM.
 */
int ht_sampler_start(struct ht_sampler *s, double seconds);

/*
 * ht_sampler_collect - the facts of sampled source @name (a row of
 * ht_sample_sources()): without --sample one reading; with it, the second
 * reading (taken then for every wanted source) against the first. A source
 * nobody wanted at the start has no first reading: its C.delta facts are
 * unavailable ENODATA. Returns 0, -ENOENT for no such source, -ENOMEM.
 */
int ht_sampler_collect(struct ht_sampler *s, struct ht_facts *f, const char *name);

/*
 * ht_sampler_no_delta - a C.delta fact (ht_fact_has_delta(C)) asked for
 * and not set by its source: unavailable ENODATA without --sample ("no
 * --sample: counters since boot only"), ENOENT with it (the counter was not
 * in both readings: a peer whose connections all closed). Nothing for
 * another name or a fact already set. Returns 0 or -ENOMEM.
 */
int ht_sampler_no_delta(struct ht_sampler *s, struct ht_facts *f, const char *name);

/*
 * ht_sampler_seconds_fact - sample.seconds: the measured interval between
 * the first and the second readings (the second taken now if it was not),
 * decimal seconds, source "--sample TIME"; unavailable ENODATA without
 * --sample. Returns 0 or -ENOMEM.
 */
int ht_sampler_seconds_fact(struct ht_sampler *s, struct ht_facts *f);

/*
 * The sampled sources' readers, one a row of the table.
 */

/*
 * ht_nstat_snapshot - the nstat(8) counters hosttune reads (nstat.NAME)
 * from ROOT/proc/net/netstat and /proc/net/snmp; a file or field that
 * cannot be read is an error counter. Returns 0 or -ENOMEM.
 */
int ht_nstat_snapshot(const char *root, struct ht_snapshot *s);

/*
 * ht_ctstats_snapshot - the conntrack counters (conntrack.stat.drop,
 * early_drop, insert_failed, search_restart, and the count) as
 * ht_collect_ctstats() reads them (ctnetlink, else
 * /proc/net/stat/nf_conntrack); each it cannot read is an error counter,
 * and an unloaded nf_conntrack is not asked for. Returns 0 or -ENOMEM.
 */
int ht_ctstats_snapshot(const char *root, struct ht_snapshot *s);

/*
 * ht_peers_snapshot - this network namespace's established TCP connections
 * with their tcp_info (NETLINK_SOCK_DIAG, INET_DIAG_INFO), kept in @s->priv
 * (collect-peers.c), no counters. Live host only: under a --root tree, or
 * when sock_diag is refused, the reading records the error. Returns 0 or
 * -ENOMEM.
 */
int ht_peers_snapshot(const char *root, struct ht_snapshot *s);

/*
 * ht_peers_snapshot_add - one connection into a reading of the peers
 * (what ht_peers_snapshot() does for each socket of the dump; for tests,
 * loopback peers included). Returns 0 or -ENOMEM.
 */
struct ht_peer_sock;
int ht_peers_snapshot_add(struct ht_snapshot *s, const struct ht_peer_sock *sock);

/*
 * ht_peers_facts - peer.list and peer.PEER.* (facts.c) from the connections
 * of @second, aggregated per remote address; with @first,
 * peer.PEER.{retrans,segs_out}.delta: for each connection of @second, its
 * increase since @first when @first has it (same socket cookie and
 * addresses), else its whole count (opened in between); connections closed
 * in between are not counted. Returns 0 or -ENOMEM.
 */
int ht_peers_facts(struct ht_facts *f, struct ht_snapshot *first, struct ht_snapshot *second,
                   double seconds);

/*
 * ht_nicstats_snapshot - the interface counters nic.IF.stats.NAME
 * (collect.h, ht_collect_nicstats()) of every interface but lo: one
 * RTM_GETLINK dump on the live host; under --root, or when rtnetlink is
 * refused, ROOT/sys/class/net/IF/statistics/NAME and carrier_changes (a
 * file that cannot be read or holds no counter is an error counter).
 * Returns 0 or -ENOMEM.
 */
int ht_nicstats_snapshot(const char *root, struct ht_snapshot *s);

/*
 * ht_softnet_snapshot - ROOT/proc/net/softnet_stat: softnet.cpus (the rows)
 * and softnet.cpu.CPU.{processed,dropped,time_squeeze} for each row
 * (ht_softnet_parse_rows()); a file that cannot be read or parsed makes
 * softnet.cpus an error counter with "PATH:LINE: expected ..." as source.
 * Returns 0 or -ENOMEM.
 */
int ht_softnet_snapshot(const char *root, struct ht_snapshot *s);

/*
 * ht_softnet_facts - softnet.* (facts.c) from the readings: the sums over
 * CPUs and the worst CPU; with @first, softnet.{processed,dropped,
 * time_squeeze}.delta summed over the CPUs of both readings, each CPU's
 * increase taken modulo 2^32 (the kernel's per-CPU counters are 32-bit and
 * wrap), and the worst CPU the one with the most drops over the interval
 * (its since-boot figures and their .delta). Returns 0 or -ENOMEM.
 */
int ht_softnet_facts(struct ht_facts *f, struct ht_snapshot *first, struct ht_snapshot *second,
                     double seconds);
