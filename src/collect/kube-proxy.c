/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What kube-proxy sets net.netfilter.nf_conntrack_max to as it starts:
 * conntrack.maxPerCore x the machine's CPUs, at least conntrack.min, or
 * nothing when maxPerCore is 0 (getConntrackMax() in kube-proxy's
 * pkg/proxy/conntrack/sysctls.go); it writes the value whenever it differs
 * from what it reads. The settings come from its --config file (the
 * KubeProxyConfiguration a kubeadm cluster mounts from a ConfigMap), then
 * its flags (--conntrack-max-per-core, --conntrack-min), else its defaults
 * (32768 and 131072); k3s, which runs kube-proxy inside its own process,
 * passes them as --kube-proxy-arg=conntrack-max-per-core=N.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/kube-proxy.h"
#include "shared/rootfs.h"
#include "shared/util.h"

#define CMDLINE_MAX ((size_t)64 << 10)
#define CONFIG_MAX ((size_t)256 << 10)

bool ht_kube_proxy_comm(const char *comm)
{
	return strcmp(comm, "kube-proxy") == 0 || strcmp(comm, "k3s-server") == 0 ||
	       strcmp(comm, "k3s-agent") == 0 || strcmp(comm, "k3s") == 0;
}

/* A decimal of at most 9 digits (a count of entries), or -1. */
static int64_t small_number(const char *s, size_t len)
{
	int64_t v = 0;

	if (len == 0 || len > 9)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/*
 * The value of option @name (without dashes) in @arg, given as
 * "--NAME=VALUE", or as "--NAME" with the value in @next: the value, or
 * NULL when @arg is not that option. *@used is set when @next was taken.
 */
static const char *option(const char *arg, const char *next, const char *name, bool *used)
{
	size_t n = strlen(name);

	*used = false;
	if (strncmp(arg, "--", 2) != 0 || strncmp(arg + 2, name, n) != 0)
		return NULL;
	if (arg[2 + n] == '=')
		return arg + 3 + n;
	if (arg[2 + n] == '\0' && next) {
		*used = true;
		return next;
	}
	return NULL;
}

/* One setting "NAME=VALUE" or "--NAME=VALUE" (a kube-proxy flag) into @kp. */
static void take_flag(const char *flag, const char *where, struct ht_kube_proxy *kp)
{
	static const char *const names[] = { "conntrack-max-per-core", "conntrack-min" };
	const char *p = strncmp(flag, "--", 2) == 0 ? flag + 2 : flag;

	for (size_t i = 0; i < 2; i++) {
		size_t n = strlen(names[i]);
		int64_t v;

		if (strncmp(p, names[i], n) != 0 || p[n] != '=')
			continue;
		v = small_number(p + n + 1, strlen(p + n + 1));
		if (v < 0) {
			kp->bad = true;
			snprintf(kp->bad_why, sizeof(kp->bad_why), "%s: %s is not a number", where,
			         flag);
			return;
		}
		if (i == 0) {
			kp->per_core = v;
			snprintf(kp->per_core_src, sizeof(kp->per_core_src), "%s %s", where, flag);
		} else {
			kp->min = v;
			snprintf(kp->min_src, sizeof(kp->min_src), "%s %s", where, flag);
		}
	}
}

void ht_kube_proxy_defaults(struct ht_kube_proxy *kp)
{
	*kp = (struct ht_kube_proxy){ .per_core = 32768, .min = 131072 };
	snprintf(kp->per_core_src, sizeof(kp->per_core_src), "kube-proxy's default conntrack.maxPerCore");
	snprintf(kp->min_src, sizeof(kp->min_src), "kube-proxy's default conntrack.min");
}

void ht_kube_proxy_flags(const char *args, size_t len, const char *where, bool k3s,
                         struct ht_kube_proxy *kp)
{
	const char *end = args + len;

	for (const char *a = args; a < end; a += strlen(a) + 1) {
		const char *next = a + strlen(a) + 1 < end ? a + strlen(a) + 1 : NULL;
		const char *v;
		bool used;

		if (k3s) {
			if (strcmp(a, "--disable-kube-proxy") == 0)
				kp->disabled = true;
			v = option(a, next, "kube-proxy-arg", &used);
			if (v)
				take_flag(v, where, kp);
		} else {
			v = option(a, next, "config", &used);
			if (v) {
				snprintf(kp->config, sizeof(kp->config), "%s", v);
			} else {
				char flag[96];

				/* "--conntrack-min 5" and "--conntrack-min=5" alike. */
				v = option(a, next, "conntrack-max-per-core", &used);
				if (v) {
					snprintf(flag, sizeof(flag), "--conntrack-max-per-core=%s", v);
					take_flag(flag, where, kp);
				}
				v = v ? NULL : option(a, next, "conntrack-min", &used);
				if (v) {
					snprintf(flag, sizeof(flag), "--conntrack-min=%s", v);
					take_flag(flag, where, kp);
				}
			}
		}
		if (used)
			a = next;
	}
}

void ht_kube_proxy_config(const char *text, const char *file, struct ht_kube_proxy *kp)
{
	bool in_conntrack = false;
	unsigned line = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t len = strcspn(l, "\n"), ind = strspn(l, " ");
		const char *k = l + ind;
		size_t klen = len - ind;

		line++;
		if (klen == 0 || *k == '#')
			continue;
		/* A key at the left margin ends the conntrack: block. */
		if (ind == 0) {
			in_conntrack = klen >= 10 && strncmp(k, "conntrack:", 10) == 0;
			continue;
		}
		if (!in_conntrack)
			continue;
		for (int i = 0; i < 2; i++) {
			const char *key = i == 0 ? "maxPerCore:" : "min:";
			size_t kl = strlen(key);
			const char *v;
			size_t vlen;
			int64_t n;

			if (klen < kl || strncmp(k, key, kl) != 0)
				continue;
			v = k + kl;
			vlen = klen - kl;
			while (vlen && (*v == ' ' || *v == '\t'))
				v++, vlen--;
			while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t' || v[vlen - 1] == '\r'))
				vlen--;
			/* null or nothing: kube-proxy's default stays. */
			if (vlen == 0 || (vlen == 4 && strncmp(v, "null", 4) == 0))
				continue;
			n = small_number(v, vlen);
			if (n < 0) {
				kp->bad = true;
				snprintf(kp->bad_why, sizeof(kp->bad_why),
				         "%s:%u: conntrack.%.*s is not a number", file, line,
				         (int)(kl - 1), key);
				return;
			}
			if (i == 0) {
				kp->per_core = n;
				snprintf(kp->per_core_src, sizeof(kp->per_core_src),
				         "%s:%u conntrack.maxPerCore", file, line);
			} else {
				kp->min = n;
				snprintf(kp->min_src, sizeof(kp->min_src), "%s:%u conntrack.min", file,
				         line);
			}
		}
	}
}

/* The regular file open on @fd whole into *@out (ht_read_fd()); -EINVAL for anything else. */
static int read_regular(int fd, size_t max, char **out, size_t *len)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return ht_read_fd(fd, max, out, len);
}

int ht_kube_proxy_read(const char *root, int pid, const char *comm, struct ht_kube_proxy *kp)
{
	_cleanup_free_ char *args = NULL, *text = NULL;
	_cleanup_close_ int fd = -1, rootfd = -1, cfd = -1;
	char path[64], where[96];
	size_t len = 0;
	int r;

	ht_kube_proxy_defaults(kp);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	/* ht_open_file(): the FIFO and non-regular checks every /proc read has. */
	fd = ht_open_file(root, path);
	if (fd < 0)
		return fd;
	r = ht_read_fd(fd, CMDLINE_MAX, &args, &len);
	if (r < 0)
		return r;
	snprintf(where, sizeof(where), "/proc/%d/cmdline", pid);
	ht_kube_proxy_flags(args, len, where, strcmp(comm, "kube-proxy") != 0, kp);
	if (kp->bad || !kp->config[0])
		return 0;
	/*
	 * Its --config file as it sees it: below its own root, every link
	 * resolved there (a container's link must not lead into the host).
	 * The flags it was given stay on top of the file's values.
	 */
	{
		struct ht_kube_proxy file = *kp;
		char fpath[600];

		ht_kube_proxy_defaults(&file);
		snprintf(path, sizeof(path), "/proc/%d/root", pid);
		rootfd = ht_root_open(root, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0)
			return rootfd;
		cfd = ht_openat_confined(rootfd, kp->config, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (cfd < 0)
			return cfd;
		r = read_regular(cfd, CONFIG_MAX, &text, &len);
		if (r < 0)
			return r;
		if (memchr(text, '\0', len))
			return -EINVAL;
		snprintf(fpath, sizeof(fpath), "/proc/%d/root%s%s", pid,
		         kp->config[0] == '/' ? "" : "/", kp->config);
		ht_kube_proxy_config(text, fpath, &file);
		if (file.bad) {
			kp->bad = true;
			snprintf(kp->bad_why, sizeof(kp->bad_why), "%s", file.bad_why);
			return 0;
		}
		/* The flags win over the file: take the file's only where no flag was given. */
		if (strncmp(kp->per_core_src, "kube-proxy's", 12) == 0) {
			kp->per_core = file.per_core;
			memcpy(kp->per_core_src, file.per_core_src, sizeof(kp->per_core_src));
		}
		if (strncmp(kp->min_src, "kube-proxy's", 12) == 0) {
			kp->min = file.min;
			memcpy(kp->min_src, file.min_src, sizeof(kp->min_src));
		}
	}
	return 0;
}
