/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/*
 * Parsers behind ht_facts_collect() (facts.h), exposed for the tests. The
 * collector itself is ht_facts_collect().
 */

/*
 * ht_cpulist_count - number of CPUs in a kernel cpulist such as "0-3,6,8-9"
 * (7), the format of /sys/devices/system/cpu/online. Ranges must ascend and
 * not overlap, as the kernel prints them; blanks around the list are allowed.
 * Returns 0, or -EINVAL for an empty or malformed list.
 */
int ht_cpulist_count(const char *s, int64_t *count);

/*
 * ht_meminfo_bytes - the value of field @key ("MemTotal") of /proc/meminfo text
 * @text, converted from kB to bytes. Returns 0; -EINVAL when the field is
 * missing, not "N kB", or its byte count does not fit in int64_t.
 */
int ht_meminfo_bytes(const char *text, const char *key, int64_t *bytes);

/*
 * ht_arch_pointer_size - size of a kernel pointer on machine @arch as uname -m
 * prints it: 8 for 64-bit machines, 4 for 32-bit ones, -EINVAL when hosttune
 * does not know @arch.
 */
int ht_arch_pointer_size(const char *arch);
