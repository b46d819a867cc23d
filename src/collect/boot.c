/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The boot configuration as a source of facts: what sysctl.d sets for the conntrack keys. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "collect/collect.h"
#include "engine/facts.h"
#include "engine/value.h"
#include "shared/bootconf.h"
#include "shared/util.h"

int ht_collect_boot(struct ht_facts *f, const char *root)
{
	static const struct {
		const char *key, *unit;
	} keys[] = {
		{ "net.netfilter.nf_conntrack_max", "entries" },
		{ "net.netfilter.nf_conntrack_tcp_timeout_time_wait", "seconds" },
	};
	struct ht_conf conf = { 0 };
	int r = ht_sysctl_conf_read(root, &conf);

	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		/* An unreadable sysctl.d: verify reports it; the boot values are unknown. */
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
			_cleanup_free_ char *name = NULL;

			if (asprintf(&name, "boot.%s", keys[i].key) < 0)
				return -ENOMEM;
			if (ht_facts_set_unavailable(f, name, -r, keys[i].unit, "sysctl.d") == -ENOMEM)
				return -ENOMEM;
		}
		return 0;
	}
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(keys); i++) {
		const struct ht_conf_key *k = ht_conf_find(&conf, keys[i].key);
		const struct ht_conf_assign *a = k ? ht_conf_effective(k) : NULL;
		_cleanup_free_ char *name = NULL, *src = NULL;
		char *end;
		long long n;

		if (asprintf(&name, "boot.%s", keys[i].key) < 0) {
			name = NULL;
			r = -ENOMEM;
			break;
		}
		if (!a || !a->value) {
			/* No line sets it (or "-key" leaves the kernel's value): nothing at boot. */
			r = ht_facts_set_unavailable(f, name, ENOENT, keys[i].unit,
			                             a ? a->file : "sysctl.d and /etc/sysctl.conf");
			continue;
		}
		if (asprintf(&src, "%s:%u", a->file, a->line) < 0) {
			src = NULL;
			r = -ENOMEM;
			break;
		}
		errno = 0;
		n = strtoll(a->value, &end, 10);
		if (errno || end == a->value || *end || n < 0 || n > INT32_MAX) {
			r = ht_facts_set_unavailable(f, name, EINVAL, keys[i].unit, src);
			continue;
		}
		r = ht_facts_set_int(f, name, (int64_t)n, keys[i].unit, src);
	}
	ht_conf_free(&conf);
	return r == -ENOMEM ? r : 0;
}
