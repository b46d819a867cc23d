/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * The /proc/net/stat/nf_conntrack parser of collect-ctnetlink.c, exposed
 * for tests/fuzz/fuzz-proc.c (the collectors reach it through
 * ht_collect_ctnetlink() and ht_ctnetlink_counters(), collect.h, watch.h).
 */

/* The columns hosttune reads; each have_ flag says whether the header had it. */
struct ht_ct_proc_stat {
	int64_t count;          /* "entries", the namespace's count (first row) */
	int64_t drop;           /* "drop", summed over the rows (CPUs) */
	int64_t early_drop;     /* "early_drop", summed */
	int64_t insert_failed;  /* "insert_failed", summed */
	int64_t search_restart; /* "search_restart", summed */
	bool have_count, have_drop, have_early_drop, have_insert_failed, have_search_restart;
};

/*
 * ht_ct_proc_stat_parse - @text as the kernel prints /proc/net/stat/nf_conntrack
 * (ct_cpu_seq_show(): a header of column names starting with "entries", then
 * one row of hex counters per possible CPU). Returns 0, or -EINVAL when the
 * text is not in that format (no "entries" header first, a row of another
 * width, no rows, a word that is not hex, a sum beyond int64_t); @out is
 * then zeroed.
 */
int ht_ct_proc_stat_parse(const char *text, struct ht_ct_proc_stat *out);
