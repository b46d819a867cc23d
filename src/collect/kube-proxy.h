/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * kube-proxy's conntrack settings, which decide what it writes to
 * net.netfilter.nf_conntrack_max as it starts: maxPerCore x CPUs, at
 * least min; nothing when per_core is 0.
 */
struct ht_kube_proxy {
	int64_t per_core;       /* conntrack.maxPerCore, entries a CPU (0: it leaves the max) */
	int64_t min;            /* conntrack.min, entries */
	char per_core_src[320]; /* where per_core came from: "/proc/PID/cmdline --conntrack-..." */
	char min_src[320];      /* where min came from, the same way */
	char config[256];       /* its --config file as given, "" for none */
	bool disabled;          /* k3s started with --disable-kube-proxy: no kube-proxy runs */
	bool bad;               /* a setting that is no number: bad_why says which */
	char bad_why[320];
};

/* Whether a process named @comm (its /proc/PID/comm) runs kube-proxy: kube-proxy or k3s. */
bool ht_kube_proxy_comm(const char *comm);

/* *@kp set to kube-proxy's defaults: 32768 a CPU, at least 131072. */
void ht_kube_proxy_defaults(struct ht_kube_proxy *kp);

/*
 * The conntrack flags among @len bytes of NUL-separated arguments @args
 * (a /proc/PID/cmdline, named @where in the sources) into @kp: kube-proxy's
 * --conntrack-max-per-core, --conntrack-min and --config, each as --NAME=V
 * or --NAME V; with @k3s, k3s's --kube-proxy-arg=NAME=V and
 * --disable-kube-proxy instead. A value that is no number sets kp->bad.
 */
void ht_kube_proxy_flags(const char *args, size_t len, const char *where, bool k3s,
                         struct ht_kube_proxy *kp);

/*
 * conntrack.maxPerCore and conntrack.min of the KubeProxyConfiguration
 * YAML @text (named @file in the sources) into @kp: the keys indented
 * under a "conntrack:" at the left margin; "null" keeps the default. A
 * value that is no number sets kp->bad with the file and line.
 */
void ht_kube_proxy_config(const char *text, const char *file, struct ht_kube_proxy *kp);

/*
 * The settings of the kube-proxy (or k3s) process @pid named @comm below
 * @root: its command line, then its --config file read below the
 * process's own root (/proc/PID/root, every link resolved inside it), the
 * flags winning over the file. Returns 0 (kp->bad and kp->disabled said
 * there), or a negative errno when the command line or the file could not
 * be read (-EFBIG past 64 KiB or 256 KiB, -EINVAL for no regular file).
 */
int ht_kube_proxy_read(const char *root, int pid, const char *comm, struct ht_kube_proxy *kp);
