/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The parsers and the measurement behind ht_collect_cpu() (collect.h),
 * exposed for tests/test-cpu.c.
 */

/* What hosttune reads in /proc/cpuinfo. */
struct ht_cpuinfo {
	/* "flags" (x86) or "Features" (arm64): the line the booleans come from; NULL if none */
	const char *flags_key;
	bool aes;        /* x86 "aes", arm64 "aes" */
	bool pclmul;     /* x86 "pclmulqdq", arm64 "pmull" */
	bool hypervisor; /* x86 "hypervisor": CPUID leaf 1 ECX bit 31 as the kernel saw it */
	char *model;     /* NULL when cpuinfo names no model */
	const char *model_key; /* "model name", "CPU part" or "Hardware" */
};

/*
 * ht_cpuinfo_parse - the first processor's flags or Features line and the
 * model of /proc/cpuinfo text @text: "model name" (x86), else "CPU
 * implementer"/"CPU part" (arm64, named after arch/arm64/include/asm/cputype.h
 * where hosttune knows the part), else "Hardware". Flags are whole words:
 * "vaes" is not "aes". Returns 0 or -ENOMEM; free with ht_cpuinfo_clear().
 */
int ht_cpuinfo_parse(const char *text, struct ht_cpuinfo *ci);
void ht_cpuinfo_clear(struct ht_cpuinfo *ci);

/*
 * The name of the carry-less multiply instruction that @ci->pclmul stands
 * for, as the line it came from spells it: "pclmulqdq" (x86 flags), "pmull"
 * (arm64 Features); NULL when cpuinfo had neither line. Static storage.
 */
const char *ht_cpuinfo_pclmul_name(const struct ht_cpuinfo *ci);

/*
 * The hypervisor named by the 12-byte vendor signature of CPUID leaf
 * 0x40000000 (EBX, ECX, EDX): "kvm", "qemu" (TCG), "microsoft", "vmware",
 * "xen", "acrn", "parallels", "bhyve"; NULL when hosttune does not know it.
 */
const char *ht_virt_from_cpuid_signature(const char sig[12]);

/*
 * The hypervisor that DMI /sys/class/dmi/id/sys_vendor and product_name
 * (either may be NULL) name: "qemu", "kvm", "vmware", "microsoft", "xen",
 * "amazon", "google", "oracle", "parallels", "bhyve", "bochs"; NULL when
 * they name none (a physical machine, or unknown).
 */
const char *ht_virt_from_dmi(const char *sys_vendor, const char *product_name);

/*
 * cpu.virt of a guest whose hypervisor nothing names: the cpuinfo
 * "hypervisor" flag (CPUID leaf 1 ECX bit 31, which hardware leaves clear)
 * without a DMI vendor hosttune knows.
 */
#define HT_VIRT_UNKNOWN "unknown hypervisor"

enum ht_cipher {
	HT_CIPHER_AES_128_GCM,
	HT_CIPHER_CHACHA20_POLY1305,
};

/* One cipher of a measurement: filled by ht_cipher_measure(). */
struct ht_cipher_run {
	enum ht_cipher cipher; /* set by the caller */
	int error;             /* 0, -EOPNOTSUPP when libcrypto refused the cipher, or
	                          -ENOENT / -ELIBACC when libcrypto could not be loaded */
	char why[256];         /* libcrypto's reason when it refused, or why it did not
	                          load (naming the library: ht_dlopen_error()) */
	unsigned slices;       /* slices run, 1 to the number asked for */
	uint64_t bytes;        /* encrypted in the fastest slice */
	double seconds;        /* CPU time of the measuring thread (CLOCK_THREAD_CPUTIME_ID)
	                          in the fastest slice, in seconds */
	double mbps;           /* bytes / 1e6 / seconds of the fastest slice: MB = 10^6 bytes */
	double total_seconds;  /* CPU time of all slices together, in seconds */
};

/* Buffer size of the measurement: 16 KiB, the largest TLS record (RFC 8446, 5.1). */
#define HT_CIPHER_BUFFER 16384

/*
 * ht_cipher_measure - encrypt 16 KiB buffers with libcrypto's EVP API: one
 * EVP_EncryptInit_ex() and a few untimed warm-up buffers per cipher, then up to
 * @slices rounds in which each cipher in turn calls EVP_EncryptUpdate()
 * for @slice_us microseconds of this thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID: time other processes take from the CPU is not
 * counted against the cipher). Taking turns spreads a burst of interference
 * (steal time in a VM) over both ciphers, and each keeps its fastest slice,
 * the least disturbed one.
 * @wall_ms bounds the slices in wall time (CLOCK_MONOTONIC, counted from
 * the call, libcrypto's set-up included, but leaving the slices at least a
 * third of it when the set-up took more): each slice ends at its share of
 * the time left, and no slice starts after it, so a loaded host gets
 * shorter slices or fewer of them
 * (one cipher may get one slice fewer than the other). A slice looks at the
 * clock every few buffers and the scheduler may hold the thread off the CPU
 * past the bound: it is a deadline, not a guarantee. Every cipher gets at
 * least one slice of a few buffers.
 * libcrypto ("libcrypto.so.3") is loaded with dlopen(3) on the first call.
 * Returns 0 (a cipher libcrypto refuses has its error set, the others are
 * measured; when libcrypto cannot be loaded, every run has the error
 * ht_dlopen() gave), -EINVAL for a bad argument (a zero count or time, an
 * unknown cipher), -ENOMEM.
 */
int ht_cipher_measure(struct ht_cipher_run *runs, size_t n, unsigned slices, unsigned slice_us,
                      unsigned wall_ms);
