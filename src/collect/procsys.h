/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "engine/facts.h"

/*
 * The procfs and sysfs collectors of collect.c, for the source table
 * (sources.c); inside collect/ only. Each reads its files below @root (NULL
 * for this host), sets its facts or makes them unavailable with the errno,
 * and returns 0 or -ENOMEM.
 */

int ht_collect_mem(struct ht_facts *f, const char *root);             /* mem.total */
int ht_collect_kernel(struct ht_facts *f, const char *root);          /* kernel.release, .version */
int ht_collect_arch(struct ht_facts *f, const char *root);            /* cpu.arch, kernel.pointer_size */
int ht_collect_host(struct ht_facts *f, const char *root);            /* host.name, host.collected_at, hosttune.version */
int ht_collect_cpu_count(struct ht_facts *f, const char *root);       /* cpu.count */
int ht_collect_page_size(struct ht_facts *f, const char *root);       /* kernel.page_size */
int ht_collect_conntrack_files(struct ht_facts *f, const char *root); /* nf_conntrack's sysctls */
int ht_collect_conntrack_loaded(struct ht_facts *f, const char *root); /* conntrack.loaded */
int ht_collect_netns_initial(struct ht_facts *f, const char *root);   /* netns.initial */
int ht_collect_net_files(struct ht_facts *f, const char *root);       /* the connection path's sysctls */
int ht_collect_file_table(struct ht_facts *f, const char *root);     /* fs.file-max, fs.nr_open, files.open */
int ht_collect_memory_pressure(struct ht_facts *f, const char *root); /* mem.oom_kills, swap, PSI */

/*
 * ht_collect_sysctl - sysctl @key (ht_sysctl_key_valid()) that hosttune has
 * no entry for: ROOT/proc/sys/KEY as an integer of any sign; unavailable
 * ENOENT when the file does not exist, EINVAL with what it holds when it is
 * not one integer.
 */
int ht_collect_sysctl(struct ht_facts *f, const char *root, const char *key);
