/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define HAVE_CPUID 1
#endif

#include <openssl/err.h>
#include <openssl/evp.h>

#include "collect/collect.h"
#include "collect/cpu.h"
#include "engine/facts.h"
#include "shared/dlopen.h"
#include "shared/util.h"
#include "engine/value.h"

/*
 * What the CPU offers for the ciphers a storage host speaks (AES-GCM and
 * ChaCha20-Poly1305 in TLS and WireGuard): the flags the kernel reports, the
 * hypervisor it runs under, and a short measurement of both ciphers with
 * libcrypto, which settles whether AES runs in hardware here (a VM may hide
 * AES-NI or PCLMULQDQ while the host has them).
 */

#define PATH_CPUINFO "/proc/cpuinfo"
#define PATH_DMI "/sys/class/dmi/id"

/*
 * Each cipher runs 10 slices of 3 ms of CPU time, taking turns: 60 ms of
 * CPU for both. Short slices: a slice that a neighbour (another process, a
 * VM's steal time, a cache flushed by a context switch) disturbed is
 * dropped by keeping the fastest, and of 10 short slices some fall between
 * disturbances; one slice of 30 ms or 100 ms almost never does (measured on
 * a 2-vCPU EPYC VM with a build beside it: AES-GCM median 3391 MB/s with
 * 3 x 10 ms, 4086 with 10 x 3 ms, against `openssl speed` 3220-3580).
 * No slice starts after MEASURE_WALL_MS of wall time, however little CPU
 * they got: on a loaded host the slices get shorter, not the measurement
 * longer. 90 ms, so that the whole stays within 100 ms: a slice looks at
 * the clock every MEASURE_CHECK_EVERY buffers, and a scheduler can hold the
 * thread off the CPU past the bound (with the bound at 100 ms and 8 busy
 * loops on 2 CPUs, measurements took up to 109 ms).
 */
#define MEASURE_SLICES 10
#define MEASURE_SLICE_US 3000
#define MEASURE_WALL_MS 90
/* Buffers encrypted before the first slice, not timed. */
#define MEASURE_WARMUP 8
/* Buffers between two looks at the clock: 4 x 16 KiB is at most a few hundred microseconds. */
#define MEASURE_CHECK_EVERY 4

/*
 * Copies @s (at most @len bytes) into @buf with control bytes and bytes that
 * are not UTF-8 as '?': sources and DMI strings must read back from a facts file.
 */
static void printable(char *buf, size_t size, const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len && s[i] && n + 1 < size;) {
		int ul = ht_utf8_len(s + i);

		if (ul <= 1 || i + (size_t)ul > len || n + (size_t)ul >= size) {
			unsigned char c = (unsigned char)s[i];

			buf[n++] = (ul == 1 && c >= 0x20 && c != 0x7f) ? s[i] : '?';
			i++;
			continue;
		}
		memcpy(buf + n, s + i, (size_t)ul);
		n += (size_t)ul;
		i += (size_t)ul;
	}
	buf[n] = '\0';
}

/* ---- /proc/cpuinfo ---- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Whether the blank-separated list @list (@len bytes) holds the word @word. */
static bool has_word(const char *list, size_t len, const char *word)
{
	size_t wl = strlen(word);
	const char *end = list + len;

	for (const char *p = list; p < end;) {
		const char *w;

		while (p < end && is_blank(*p))
			p++;
		w = p;
		while (p < end && !is_blank(*p))
			p++;
		if ((size_t)(p - w) == wl && memcmp(w, word, wl) == 0)
			return true;
	}
	return false;
}

struct field {
	const char *v;
	size_t len;
	bool set;
};

/*
 * Parts hosttune names, from the MIDR values in arch/arm64/include/asm/cputype.h
 * (ARM_CPU_IMP_ARM 0x41, AMPERE_CPU_IMP 0xc0).
 */
static const struct {
	unsigned long implementer, part;
	const char *name;
} arm_parts[] = {
	{ 0x41, 0xd03, "ARM Cortex-A53" },   { 0x41, 0xd05, "ARM Cortex-A55" },
	{ 0x41, 0xd07, "ARM Cortex-A57" },   { 0x41, 0xd08, "ARM Cortex-A72" },
	{ 0x41, 0xd0b, "ARM Cortex-A76" },   { 0x41, 0xd0c, "ARM Neoverse-N1" },
	{ 0x41, 0xd40, "ARM Neoverse-V1" },  { 0x41, 0xd49, "ARM Neoverse-N2" },
	{ 0x41, 0xd4f, "ARM Neoverse-V2" },  { 0xc0, 0xac3, "Ampere AmpereOne" },
};

/* "0x41" as printed by arch/arm64/kernel/cpuinfo.c c_show(); false if it is not hex. */
static bool field_hex(const struct field *fl, unsigned long *out)
{
	char buf[32], *end;

	if (!fl->set || fl->len == 0 || fl->len >= sizeof(buf))
		return false;
	memcpy(buf, fl->v, fl->len);
	buf[fl->len] = '\0';
	errno = 0;
	*out = strtoul(buf, &end, 16);
	return errno == 0 && end != buf && *end == '\0';
}

static int model_from_part(const struct field *impl, const struct field *part, char **out)
{
	unsigned long i = 0, p;
	bool have_impl = field_hex(impl, &i);

	if (!field_hex(part, &p))
		return -ENOENT;
	for (size_t k = 0; have_impl && k < ARRAY_SIZE(arm_parts); k++)
		if (arm_parts[k].implementer == i && arm_parts[k].part == p)
			return (*out = strdup(arm_parts[k].name)) ? 0 : -ENOMEM;
	/* glibc leaves the pointer undefined when asprintf() fails; the caller frees it. */
	if ((have_impl ? asprintf(out, "CPU implementer 0x%lx part 0x%lx", i, p)
	               : asprintf(out, "CPU part 0x%lx", p)) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

void ht_cpuinfo_clear(struct ht_cpuinfo *ci)
{
	free(ci->model);
	*ci = (struct ht_cpuinfo){ 0 };
}

int ht_cpuinfo_parse(const char *text, struct ht_cpuinfo *ci)
{
	struct field flags = { 0 }, features = { 0 }, model = { 0 }, impl = { 0 }, part = { 0 },
		     hardware = { 0 };
	const struct {
		const char *key;
		struct field *fl;
	} keys[] = {
		{ "flags", &flags },        { "Features", &features }, { "model name", &model },
		{ "CPU implementer", &impl }, { "CPU part", &part },    { "Hardware", &hardware },
	};
	int r;

	*ci = (struct ht_cpuinfo){ 0 };
	/* fs/proc/ and arch/x86/kernel/cpu/proc.c print "key\t\t: value", one block a CPU. */
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
		const char *colon = memchr(line, ':', (size_t)(end - line)), *kend, *v, *vend;

		if (colon) {
			kend = colon;
			while (kend > line && is_blank(kend[-1]))
				kend--;
			v = colon + 1;
			while (v < end && is_blank(*v))
				v++;
			vend = end;
			while (vend > v && is_blank(vend[-1]))
				vend--;
			for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
				size_t kl = strlen(keys[k].key);

				/* The first processor's line: the first one seen. */
				if ((size_t)(kend - line) == kl && memcmp(line, keys[k].key, kl) == 0 &&
				    !keys[k].fl->set)
					*keys[k].fl = (struct field){ v, (size_t)(vend - v), true };
			}
		}
		line = nl ? nl + 1 : NULL;
	}

	if (flags.set) {
		ci->flags_key = "flags";
		ci->aes = has_word(flags.v, flags.len, "aes");
		ci->pclmul = has_word(flags.v, flags.len, "pclmulqdq");
		ci->hypervisor = has_word(flags.v, flags.len, "hypervisor");
	} else if (features.set) {
		/* arch/arm64/kernel/cpuinfo.c hwcap_str[]: "aes", "pmull" */
		ci->flags_key = "Features";
		ci->aes = has_word(features.v, features.len, "aes");
		ci->pclmul = has_word(features.v, features.len, "pmull");
	}

	if (model.set && model.len > 0) {
		ci->model_key = "model name";
		ci->model = strndup(model.v, model.len);
		r = ci->model ? 0 : -ENOMEM;
	} else {
		ci->model_key = "CPU part";
		r = model_from_part(&impl, &part, &ci->model);
		if (r == -ENOENT && hardware.set && hardware.len > 0) {
			ci->model_key = "Hardware";
			ci->model = strndup(hardware.v, hardware.len);
			r = ci->model ? 0 : -ENOMEM;
		}
		if (r == -ENOENT) {
			ci->model_key = NULL;
			r = 0;
		}
	}
	if (r < 0) {
		ht_cpuinfo_clear(ci);
		return r;
	}
	return 0;
}

const char *ht_cpuinfo_pclmul_name(const struct ht_cpuinfo *ci)
{
	if (!ci->flags_key)
		return NULL;
	/* x86 CPUID.1:ECX.PCLMULQDQ; arm64 hwcap_str[] "pmull" (FEAT_PMULL) */
	return strcmp(ci->flags_key, "flags") == 0 ? "pclmulqdq" : "pmull";
}

static int collect_cpuinfo(struct ht_facts *f, const char *root, struct ht_cpuinfo *ci)
{
	_cleanup_free_ char *text = NULL;
	char src[64];
	int r;

	r = ht_read_file(root, PATH_CPUINFO, &text);
	if (r >= 0)
		r = ht_cpuinfo_parse(text, ci);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		int e = r;

		if ((r = ht_facts_set_errno(f, "cpu.aes.flag", e, NULL, PATH_CPUINFO)) < 0 ||
		    (r = ht_facts_set_errno(f, "cpu.pclmul.flag", e, NULL, PATH_CPUINFO)) < 0 ||
		    (r = ht_facts_set_errno(f, "cpu.pclmul.name", e, NULL, PATH_CPUINFO)) < 0)
			return r;
		return ht_facts_set_errno(f, "cpu.model", e, NULL, PATH_CPUINFO);
	}
	if (ci->flags_key) {
		snprintf(src, sizeof(src), PATH_CPUINFO " %s", ci->flags_key);
		if ((r = ht_facts_set_bool(f, "cpu.aes.flag", ci->aes, src)) < 0 ||
		    (r = ht_facts_set_bool(f, "cpu.pclmul.flag", ci->pclmul, src)) < 0 ||
		    (r = ht_facts_set_str(f, "cpu.pclmul.name", ht_cpuinfo_pclmul_name(ci),
		                          src)) < 0)
			return r;
	} else {
		static const char none[] = PATH_CPUINFO " has no flags or Features line";

		if ((r = ht_facts_set_errno(f, "cpu.aes.flag", ENOENT, NULL, none)) < 0 ||
		    (r = ht_facts_set_errno(f, "cpu.pclmul.flag", ENOENT, NULL, none)) < 0 ||
		    (r = ht_facts_set_errno(f, "cpu.pclmul.name", ENOENT, NULL, none)) < 0)
			return r;
	}
	if (!ci->model)
		return ht_facts_set_errno(f, "cpu.model", ENOENT, NULL,
		                          PATH_CPUINFO " has no model name, CPU part or Hardware "
		                          "line");
	snprintf(src, sizeof(src), PATH_CPUINFO " %s", ci->model_key);
	if (ht_utf8_invalid(ci->model))
		return ht_facts_set_errno(f, "cpu.model", EINVAL, NULL,
		                          PATH_CPUINFO " model is not UTF-8");
	return ht_facts_set_str(f, "cpu.model", ci->model, src);
}

/* ---- virtualisation ---- */

const char *ht_virt_from_cpuid_signature(const char sig[12])
{
	/*
	 * The vendor signatures hypervisors put in EBX:ECX:EDX of leaf
	 * 0x40000000, as Linux matches them (arch/x86/kernel/kvm.c,
	 * cpu/mshyperv.c, cpu/vmware.c, cpu/acrn.c, xen/enlighten_hvm.c) and
	 * QEMU's TCG (target/i386/cpu.c), Parallels and bhyve set them.
	 */
	static const struct {
		char sig[12];
		const char *name;
	} sigs[] = {
		{ "KVMKVMKVM\0\0\0", "kvm" }, { "TCGTCGTCGTCG", "qemu" },
		{ "Microsoft Hv", "microsoft" }, { "VMwareVMware", "vmware" },
		{ "XenVMMXenVMM", "xen" }, { "ACRNACRNACRN", "acrn" },
		{ " lrpepyh  vr", "parallels" }, { "bhyve bhyve ", "bhyve" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (memcmp(sig, sigs[i].sig, 12) == 0)
			return sigs[i].name;
	return NULL;
}

static bool starts_with(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

const char *ht_virt_from_dmi(const char *sys_vendor, const char *product_name)
{
	/*
	 * What each hypervisor's firmware writes in SMBIOS type 1 (QEMU
	 * hw/smbios defaults and its machine names "Standard PC (i440FX + PIIX,
	 * 1996)", "Standard PC (Q35 + ICH9, 2009)"; the rest as systemd's
	 * src/basic/virt.c dmi_vendor_table matches them). Microsoft's vendor
	 * string alone is also a Surface laptop: the product must say VM.
	 */
	static const struct {
		const char *vendor, *product, *name;
	} table[] = {
		{ "QEMU", NULL, "qemu" },
		{ NULL, "Standard PC (", "qemu" },
		{ NULL, "KVM", "kvm" },
		{ "VMware", NULL, "vmware" },
		{ NULL, "VMware", "vmware" },
		{ "Microsoft Corporation", "Virtual Machine", "microsoft" },
		{ "Xen", NULL, "xen" },
		{ NULL, "HVM domU", "xen" },
		{ "Amazon EC2", NULL, "amazon" },
		{ NULL, "Google Compute Engine", "google" },
		{ "Google", NULL, "google" },
		{ "innotek GmbH", NULL, "oracle" },
		{ NULL, "VirtualBox", "oracle" },
		{ "Parallels", NULL, "parallels" },
		{ "BHYVE", NULL, "bhyve" },
		{ "Bochs", NULL, "bochs" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
		if (table[i].vendor && !starts_with(sys_vendor, table[i].vendor))
			continue;
		if (table[i].product && !starts_with(product_name, table[i].product))
			continue;
		return table[i].name;
	}
	return NULL;
}

struct dmi {
	char *vendor, *product;
	int rv; /* ht_read_file() of sys_vendor */
	const char *virt;
	char source[256];
};

static int read_dmi(const char *root, struct dmi *d)
{
	char v[96], p[96];
	int rp;

	d->rv = ht_read_file(root, PATH_DMI "/sys_vendor", &d->vendor);
	rp = ht_read_file(root, PATH_DMI "/product_name", &d->product);
	if (d->rv == -ENOMEM || rp == -ENOMEM)
		return -ENOMEM;
	d->virt = ht_virt_from_dmi(d->vendor, d->product);
	printable(v, sizeof(v), d->vendor ? d->vendor : "", SIZE_MAX);
	printable(p, sizeof(p), d->product ? d->product : "", SIZE_MAX);
	snprintf(d->source, sizeof(d->source), "DMI " PATH_DMI " sys_vendor '%s' product_name '%s'",
	         v, p);
	return 0;
}

/*
 * cpu.virt, live on x86: CPUID leaf 1 ECX bit 31 says whether a hypervisor
 * is present (Intel SDM vol. 2A, CPUID, "not used, always 0" on hardware;
 * hypervisors set it) and leaf 0x40000000 names it. Elsewhere, and when a
 * hypervisor hides the bit, DMI names it.
 */
static int collect_virt(struct ht_facts *f, const char *root, const struct ht_cpuinfo *ci)
{
	struct dmi d = { 0 };
	char src[320];
	int r;

	r = read_dmi(root, &d);
	if (r < 0)
		goto out;
#ifdef HAVE_CPUID
	if (ht_root_is_live(root)) {
		unsigned a, b, c, dx;

		if (__get_cpuid(1, &a, &b, &c, &dx)) {
			if (c & (1u << 31)) {
				char sig[12], text[13];
				const char *name;
				size_t n = 12;

				/* Beyond the basic range, so __get_cpuid() would refuse it. */
				__cpuid(0x40000000, a, b, c, dx);
				memcpy(sig, &b, 4);
				memcpy(sig + 4, &c, 4);
				memcpy(sig + 8, &dx, 4);
				while (n > 0 && (sig[n - 1] == '\0' || sig[n - 1] == ' '))
					n--;
				printable(text, sizeof(text), sig, n);
				snprintf(src, sizeof(src), "CPUID leaf 0x40000000 '%s'", text);
				name = ht_virt_from_cpuid_signature(sig);
				if (name || text[0]) {
					r = ht_facts_set_str(f, "cpu.virt", name ? name : text,
					                     src);
					goto out;
				}
			} else {
				if (d.virt) {
					snprintf(src, sizeof(src), "%s (CPUID hypervisor bit clear)",
					         d.source);
					r = ht_facts_set_str(f, "cpu.virt", d.virt, src);
				} else {
					r = ht_facts_set_str(f, "cpu.virt", "none",
					                     "CPUID leaf 1 ECX bit 31 "
					                     "(hypervisor) clear");
				}
				goto out;
			}
		}
	}
#endif
	if (d.virt)
		r = ht_facts_set_str(f, "cpu.virt", d.virt, d.source);
	else if (ci->flags_key && strcmp(ci->flags_key, "flags") == 0 && !ci->hypervisor)
		r = ht_facts_set_str(f, "cpu.virt", "none",
		                     "no hypervisor flag in " PATH_CPUINFO " flags");
	else if (ci->hypervisor)
		/* The flag is CPUID leaf 1 ECX bit 31, set by hypervisors only:
		 * a virtual machine, whose hypervisor nothing here names. */
		r = ht_facts_set_str(f, "cpu.virt", HT_VIRT_UNKNOWN,
		                     "hypervisor flag in " PATH_CPUINFO " flags, DMI names none");
	else if (d.rv >= 0)
		r = ht_facts_set_str(f, "cpu.virt", "none", d.source);
	else
		r = ht_facts_set_errno(f, "cpu.virt", d.rv, NULL, PATH_DMI "/sys_vendor");
out:
	free(d.vendor);
	free(d.product);
	return r;
}

/* ---- cipher measurement ---- */

/* libcrypto, loaded for the measurement alone (shared/dlopen.h). */
HT_DLSYM_DECLARE(EVP_aes_128_gcm);
HT_DLSYM_DECLARE(EVP_chacha20_poly1305);
HT_DLSYM_DECLARE(EVP_CIPHER_CTX_new);
HT_DLSYM_DECLARE(EVP_CIPHER_CTX_free);
HT_DLSYM_DECLARE(EVP_EncryptInit_ex);
HT_DLSYM_DECLARE(EVP_EncryptUpdate);
HT_DLSYM_DECLARE(ERR_peek_last_error);
HT_DLSYM_DECLARE(ERR_error_string_n);
HT_DLSYM_DECLARE(ERR_clear_error);

static const struct ht_dlsym crypto_syms[] = {
	HT_DLSYM(EVP_aes_128_gcm),
	HT_DLSYM(EVP_chacha20_poly1305),
	HT_DLSYM(EVP_CIPHER_CTX_new),
	HT_DLSYM(EVP_CIPHER_CTX_free),
	HT_DLSYM(EVP_EncryptInit_ex),
	HT_DLSYM(EVP_EncryptUpdate),
	HT_DLSYM(ERR_peek_last_error),
	HT_DLSYM(ERR_error_string_n),
	HT_DLSYM(ERR_clear_error),
};

static struct ht_dlib libcrypto = HT_DLIB("libcrypto.so.3", crypto_syms);

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* libcrypto's reason for the last failure, and the error queue emptied. */
static int evp_failed(char *why, size_t whylen)
{
	unsigned long e = sym_ERR_peek_last_error();

	if (why && whylen) {
		if (e)
			sym_ERR_error_string_n(e, why, whylen);
		else
			snprintf(why, whylen, "no reason given");
	}
	sym_ERR_clear_error();
	return -EOPNOTSUPP;
}

static int cipher_start(struct ht_cipher_run *run, EVP_CIPHER_CTX *ctx, unsigned char *buf,
                        const unsigned char *in)
{
	/*
	 * Any key and nonce do: AES-128 takes 16 key bytes, ChaCha20 32, both
	 * a 96-bit nonce (RFC 5116 5.1, RFC 8439 2.8), libcrypto's default IV
	 * length for both modes.
	 */
	static const unsigned char key[32] = { 0x68, 0x6f, 0x73, 0x74, 0x74, 0x75, 0x6e, 0x65 };
	static const unsigned char iv[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	const EVP_CIPHER *cipher;
	int len;

	cipher = run->cipher == HT_CIPHER_AES_128_GCM ? sym_EVP_aes_128_gcm()
	                                               : sym_EVP_chacha20_poly1305();
	if (!cipher || sym_EVP_EncryptInit_ex(ctx, cipher, NULL, key, iv) != 1)
		return evp_failed(run->why, sizeof(run->why));
	/*
	 * The first buffers pay for page faults, libcrypto's lazy set-up and
	 * the wide vector units powering up (AVX-512 runs slowly for some tens
	 * of microseconds after it starts); MEASURE_WARMUP buffers are 128 KiB,
	 * about 30 us at 4 GB/s.
	 */
	for (int i = 0; i < MEASURE_WARMUP; i++)
		if (sym_EVP_EncryptUpdate(ctx, buf, &len, in, HT_CIPHER_BUFFER) != 1)
			return evp_failed(run->why, sizeof(run->why));
	return 0;
}

/*
 * One timed slice of @run; keeps it when it is the fastest so far. The
 * slice is timed by the CPU time of this thread (CLOCK_THREAD_CPUTIME_ID),
 * so that other processes competing for the CPU (a loaded host at first
 * boot) do not make the cipher look slow. It ends after @budget seconds of
 * CPU time or at @wall_end (CLOCK_MONOTONIC seconds), whichever comes first,
 * and always encrypts MEASURE_CHECK_EVERY buffers.
 */
static int cipher_slice(struct ht_cipher_run *run, EVP_CIPHER_CTX *ctx, unsigned char *buf,
                        const unsigned char *in, double budget, double wall_end)
{
	double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID), t, mbps;
	uint64_t bytes = 0;
	int len;

	do {
		for (int i = 0; i < MEASURE_CHECK_EVERY; i++) {
			if (sym_EVP_EncryptUpdate(ctx, buf, &len, in, HT_CIPHER_BUFFER) != 1)
				return evp_failed(run->why, sizeof(run->why));
			bytes += HT_CIPHER_BUFFER;
		}
		t = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
	} while (t < budget && clock_s(CLOCK_MONOTONIC) < wall_end);
	if (t <= 0)
		t = 1e-9;
	run->slices++;
	run->total_seconds += t;
	mbps = (double)bytes / 1e6 / t;
	if (mbps > run->mbps) {
		run->mbps = mbps;
		run->bytes = bytes;
		run->seconds = t;
	}
	return 0;
}

int ht_cipher_measure(struct ht_cipher_run *runs, size_t n, unsigned slices, unsigned slice_us,
                      unsigned wall_ms)
{
	_cleanup_free_ unsigned char *in = NULL, *buf = NULL;
	_cleanup_free_ EVP_CIPHER_CTX **ctx = NULL;
	double budget = slice_us / 1e6, start = clock_s(CLOCK_MONOTONIC), end, now;
	int r = 0;

	if (!runs || n == 0 || slices == 0 || slice_us == 0 || wall_ms == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (runs[i].cipher != HT_CIPHER_AES_128_GCM &&
		    runs[i].cipher != HT_CIPHER_CHACHA20_POLY1305)
			return -EINVAL;
		runs[i] = (struct ht_cipher_run){ .cipher = runs[i].cipher };
	}
	r = ht_dlopen(&libcrypto);
	if (r < 0) {
		/* Every cipher fails alike: the library is not there to measure with. */
		for (size_t i = 0; i < n; i++) {
			runs[i].error = r;
			snprintf(runs[i].why, sizeof(runs[i].why), "%s", ht_dlopen_error(&libcrypto));
		}
		return 0;
	}
	in = calloc(1, HT_CIPHER_BUFFER);
	/* Stream modes write what they read; the block size is slack for any other. */
	buf = malloc(HT_CIPHER_BUFFER + EVP_MAX_BLOCK_LENGTH);
	ctx = calloc(n, sizeof(*ctx));
	if (!in || !buf || !ctx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		ctx[i] = sym_EVP_CIPHER_CTX_new();
		if (!ctx[i]) {
			r = -ENOMEM;
			goto out;
		}
		runs[i].error = cipher_start(&runs[i], ctx[i], buf, in);
	}
	/*
	 * The bound counts from the call, set-up included; but libcrypto's
	 * first use (its configuration, the provider) can take most of it on a
	 * loaded host or an instrumented build (an ASan build under load left
	 * the slices 4 buffers each, which measured the warm-up: hardware
	 * AES-GCM at 187 MB/s), so the slices get at least a third of it.
	 */
	now = clock_s(CLOCK_MONOTONIC);
	end = start + wall_ms / 1000.0;
	if (end < now + wall_ms / 3000.0)
		end = now + wall_ms / 3000.0;
	/*
	 * Each slice may use its share of the wall time left: a slice that got
	 * little CPU leaves the others theirs, and the last ends at @end. Every
	 * cipher gets its first slice even past @end (a few buffers).
	 */
	for (unsigned s = 0; s < slices; s++)
		for (size_t i = 0; i < n; i++) {
			size_t left = (size_t)(slices - s) * n - i;

			if (runs[i].error)
				continue;
			now = clock_s(CLOCK_MONOTONIC);
			if (s > 0 && now >= end)
				goto out;
			runs[i].error = cipher_slice(&runs[i], ctx[i], buf, in, budget,
			                             now + (end - now) / (double)left);
		}
out:
	for (size_t i = 0; i < n; i++)
		sym_EVP_CIPHER_CTX_free(ctx[i]);
	return r;
}

static int collect_measure(struct ht_facts *f, const char *root, bool measure)
{
	static const char *const facts[] = { "cpu.aes.gcm_mbps", "cpu.chacha.mbps" };
	static const char *const evp_names[] = { "aes-128-gcm", "chacha20-poly1305" };
	struct ht_cipher_run runs[] = {
		{ .cipher = HT_CIPHER_AES_128_GCM },
		{ .cipher = HT_CIPHER_CHACHA20_POLY1305 },
	};
	double mbps[ARRAY_SIZE(runs)] = { 0 };
	int err = 0, r;
	char src[400];

	if (!ht_root_is_live(root) || !measure) {
		/* A --root tree is another host: its CPU cannot be measured from here at all. */
		bool live = ht_root_is_live(root);
		int e = live ? ECANCELED : ENOENT;
		const char *why = live ? "skipped (--no-measure)" : "not measured in a --root tree";

		for (size_t i = 0; i < ARRAY_SIZE(facts); i++)
			if ((r = ht_facts_set_errno(f, facts[i], e, "MB/s", why)) < 0)
				return r;
		return ht_facts_set_errno(f, "cpu.aes.hw", e, NULL, why);
	}
	r = ht_cipher_measure(runs, ARRAY_SIZE(runs), MEASURE_SLICES, MEASURE_SLICE_US,
	                      MEASURE_WALL_MS);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(runs); i++) {
		char safe[256];

		if (runs[i].error) {
			err = -runs[i].error;
			printable(safe, sizeof(safe), runs[i].why, sizeof(runs[i].why));
			snprintf(src, sizeof(src), "libcrypto EVP %s: %s", evp_names[i], safe);
			r = ht_facts_set_errno(f, facts[i], runs[i].error, "MB/s", src);
			if (r < 0)
				return r;
			continue;
		}
		/* One decimal: the figure varies by more than that from run to run. */
		mbps[i] = round(runs[i].mbps * 10) / 10;
		snprintf(src, sizeof(src),
		         "libcrypto EVP %s, 16 KiB buffers, fastest of %u slices in %.0f ms of "
		         "this thread's CPU time, MB = 10^6 bytes",
		         evp_names[i], runs[i].slices, runs[i].total_seconds * 1000);
		r = ht_facts_set_dec(f, facts[i], mbps[i], "MB/s", src);
		if (r < 0)
			return r;
	}
	if (err)
		return ht_facts_set_errno(f, "cpu.aes.hw", err, NULL,
		                          "a libcrypto measurement failed");
	/*
	 * Measured AES-GCM / ChaCha20-Poly1305 ratios, OpenSSL 3.0 on x86 VMs:
	 * hardware 1.14 idle and 0.78-1.19 beside a build and 4 busy loops
	 * (2-vCPU AMD EPYC), 1.7-1.9 on another 2-CPU machine; software
	 * (OPENSSL_ia32cap="~0x200000200000000:~0", AES-NI and PCLMULQDQ
	 * masked) 0.07-0.08 and 0.13-0.24. The line sits between the two
	 * populations, at half ChaCha20's speed, not at 1.0, which a hardware
	 * result crosses on some machines.
	 */
	snprintf(src, sizeof(src), "measured: AES-GCM %.1f MB/s vs ChaCha20-Poly1305 %.1f MB/s "
	         "(hardware when AES-GCM reaches half of ChaCha20)", mbps[0], mbps[1]);
	return ht_facts_set_bool(f, "cpu.aes.hw", mbps[0] * 2 >= mbps[1], src);
}

int ht_collect_cpu(struct ht_facts *f, const char *root, bool measure)
{
	struct ht_cpuinfo ci = { 0 };
	int r;

	r = collect_cpuinfo(f, root, &ci);
	if (r >= 0)
		r = collect_virt(f, root, &ci);
	ht_cpuinfo_clear(&ci);
	if (r < 0)
		return r;
	return collect_measure(f, root, measure);
}
