/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include <json-c/json.h>

#include "engine/facts.h"
#include "engine/rules.h"

/*
 * `hosttune verify`: will hosttune's settings hold after a reboot, and do
 * they hold now? The boot's view comes from bootconf.h (sysctl.d,
 * modprobe.d, modules-load.d with systemd's and kmod's precedence), the live
 * view from the facts, hosttune's own record from the state file.
 */

enum ht_verify_status {
	HT_VERIFY_OK = 0, /* holds now and at boot */
	HT_VERIFY_PROBLEM, /* does not hold, or will not after a reboot */
};

/* One check of one setting or file. Strings are owned by the report. */
struct ht_verify_item {
	enum ht_verify_status status;
	char *check;   /* short name: drift, overridden, boot-order, live-only, hashsize-live,
	                  hashsize-stale, hashsize-builtin, broken-config, obsolete-module,
	                  other-manager, edited, restart-needed, holds */
	char *key;     /* sysctl key, module.nf_conntrack.PARAM, a file path, or NULL */
	char *message; /* one line, with the values and FILE:LINE where they come from */
};

struct ht_verify_report {
	struct ht_verify_item *items;
	size_t n;
};

/*
 * ht_verify - check hosttune's recommendations (the applicable sysctl,
 * module and limit nofile findings of @findings; for a limit, hosttune's
 * drop-in against the LimitNOFILE= systemd applies later, "overridden" with
 * FILE:LINE and the value, and the process's soft limit now against it,
 * "restart-needed") against the live values in @facts and the
 * configuration below @root, and hosttune's files against the state file
 * (@state_path, or ROOT/var/lib/hosttune/state).
 * @rs: the evaluated ruleset, for named values such as conntrack.is_kube_proxy.
 * Returns 0 (the report may hold problems) or -ENOMEM; unreadable
 * configuration becomes a problem item, not an error.
 */
int ht_verify(struct ht_ruleset *rs, const struct ht_findings *findings,
              const struct ht_facts *facts, const char *root, const char *state_path,
              struct ht_verify_report *out);

void ht_verify_report_free(struct ht_verify_report *r);

/* Number of items with HT_VERIFY_PROBLEM. */
size_t ht_verify_problems(const struct ht_verify_report *r);

/* Text: one line per item, "ok" or "PROBLEM", then a count. 0 or -EIO. */
int ht_verify_print(const struct ht_verify_report *r, FILE *out);

/* {"holds": bool, "problems": N, "items": [{"status", "check", "key", "message"}]} */
struct json_object *ht_verify_to_json(const struct ht_verify_report *r);
