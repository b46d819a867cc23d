/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The boot configuration as a source of facts: what sysctl.d (and
 * /etc/sysctl.conf) gives a sysctl at boot, and what modprobe.d gives a
 * module parameter at the next load, read once a collection.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/collect.h"
#include "engine/facts.h"
#include "engine/value.h"
#include "shared/bootconf.h"
#include "shared/util.h"

struct ht_boot {
	char *root;
	struct ht_conf sysctl, modprobe;
	int sysctl_r, modprobe_r; /* 1 not read yet; 0 read; negative errno: unreadable */
};

int ht_boot_new(const char *root, struct ht_boot **out)
{
	struct ht_boot *b = calloc(1, sizeof(*b));

	if (!b || (root && !(b->root = strdup(root)))) {
		free(b);
		return -ENOMEM;
	}
	b->sysctl_r = b->modprobe_r = 1;
	*out = b;
	return 0;
}

void ht_boot_free(struct ht_boot *b)
{
	if (!b)
		return;
	ht_conf_free(&b->sysctl);
	ht_conf_free(&b->modprobe);
	free(b->root);
	free(b);
}

/* The file that gives @name: modprobe.d for boot.module.M.P, else sysctl.d. */
static int boot_conf(struct ht_boot *b, bool module, const struct ht_conf **conf)
{
	int *r = module ? &b->modprobe_r : &b->sysctl_r;

	if (*r == 1) {
		*r = module ? ht_modprobe_conf_read(b->root, &b->modprobe)
		            : ht_sysctl_conf_read(b->root, &b->sysctl);
		if (*r > 0)
			*r = 0;
	}
	*conf = module ? &b->modprobe : &b->sysctl;
	return *r;
}

int ht_collect_boot_fact(struct ht_facts *f, struct ht_boot *b, const char *name)
{
	const char *key = name + strlen("boot.");
	bool module = strncmp(key, "module.", 7) == 0;
	const struct ht_fact_def *d = ht_fact_def_find(name), *live = ht_fact_def_find(key);
	/* A key hosttune knows keeps its unit and bound at boot. */
	const char *unit = d && d->unit ? d->unit : live ? live->unit : NULL;
	int64_t max = ht_fact_max(name) ? ht_fact_max(name) : ht_fact_max(key);
	const struct ht_conf *conf;
	const struct ht_conf_key *k;
	const struct ht_conf_assign *a;
	_cleanup_free_ char *src = NULL;
	long long n;
	int r;

	if (strncmp(name, "boot.", 5) != 0 || !d)
		return 0;
	if (module)
		key += strlen("module.");
	r = boot_conf(b, module, &conf);
	if (r == -ENOMEM)
		return r;
	/* An unreadable configuration: verify reports it; the boot value is unknown. */
	if (r < 0)
		return ht_facts_set_unavailable(f, name, -r, unit, module ? "modprobe.d" : "sysctl.d");
	k = ht_conf_find(conf, key);
	a = k ? ht_conf_effective(k) : NULL;
	if (!a)
		return ht_facts_set_unavailable(f, name, ENOENT, unit,
		                                module ? "modprobe.d" : "sysctl.d and /etc/sysctl.conf");
	if (asprintf(&src, "%s:%u", ht_conf_file_shown(a->file), a->line) < 0)
		return -ENOMEM;
	/* "-key" without a value: systemd-sysctl leaves the kernel's value. */
	if (!a->value)
		return ht_facts_set_unavailable(f, name, ENODATA, unit, src);
	if (ht_parse_int64(a->value, &n) < 0 || (max && (n < 0 || n > max)))
		return ht_facts_set_unavailable(f, name, EINVAL, unit, src);
	return ht_facts_set_int(f, name, n, unit, src);
}

int ht_collect_boot(struct ht_facts *f, const char *root)
{
	static const char *const names[] = {
		"boot.net.netfilter.nf_conntrack_max",
		"boot.net.netfilter.nf_conntrack_tcp_timeout_time_wait",
	};
	struct ht_boot *b;
	int r = ht_boot_new(root, &b);

	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(names); i++)
		r = ht_collect_boot_fact(f, b, names[i]);
	ht_boot_free(b);
	return r == -ENOMEM ? r : 0;
}
