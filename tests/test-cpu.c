/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect/cpu.h"
#include "shared/util.h"
#include "test-util.h"

/* ---- helpers ---- */

/* Parses tests/fixtures/cpuinfo/NAME into @ci. */
static void parse_fixture(const char *name, struct ht_cpuinfo *ci)
{
	_cleanup_free_ char *path = NULL, *text = NULL;

	assert_true(asprintf(&path, "%s/cpuinfo/%s", ht_test_fixtures_dir(), name) > 0);
	assert_int_equal(ht_read_file(NULL, path, &text), 0);
	assert_int_equal(ht_cpuinfo_parse(text, ci), 0);
}

/* ---- /proc/cpuinfo ---- */

static void test_x86_aes_pclmul(void **state)
{
	struct ht_cpuinfo ci;

	parse_fixture("x86-xeon-aes-pclmul.cpuinfo", &ci);
	assert_string_equal(ci.flags_key, "flags");
	assert_true(ci.aes);
	assert_true(ci.pclmul);
	/* x86 names the carry-less multiply PCLMULQDQ (its cpuinfo flag). */
	assert_string_equal(ht_cpuinfo_pclmul_name(&ci), "pclmulqdq");
	assert_false(ci.hypervisor);
	assert_string_equal(ci.model_key, "model name");
	assert_string_equal(ci.model, "Intel(R) Xeon(R) Silver 4214 CPU @ 2.20GHz");
	ht_cpuinfo_clear(&ci);
}

/* A Proxmox guest with CPU type x86-64-v3: AES-NI passed through, PCLMULQDQ not. */
static void test_x86_aes_no_pclmul(void **state)
{
	struct ht_cpuinfo ci;

	parse_fixture("x86-proxmox-v3-aes-no-pclmul.cpuinfo", &ci);
	assert_string_equal(ci.flags_key, "flags");
	assert_true(ci.aes);
	assert_false(ci.pclmul);
	assert_true(ci.hypervisor);
	assert_string_equal(ci.model, "QEMU Virtual CPU version 2.5+");
	ht_cpuinfo_clear(&ci);
}

static void test_x86_old(void **state)
{
	struct ht_cpuinfo ci;

	parse_fixture("x86-core2-no-aes.cpuinfo", &ci);
	assert_string_equal(ci.flags_key, "flags");
	assert_false(ci.aes);
	assert_false(ci.pclmul);
	assert_false(ci.hypervisor);
	/* The value is kept as the kernel prints it, inner blanks included. */
	assert_string_equal(ci.model, "Intel(R) Core(TM)2 Duo CPU     E8400  @ 3.00GHz");
	ht_cpuinfo_clear(&ci);
}

static void test_arm64_crypto(void **state)
{
	struct ht_cpuinfo ci;

	parse_fixture("arm64-graviton2-neoverse-n1.cpuinfo", &ci);
	assert_string_equal(ci.flags_key, "Features");
	assert_true(ci.aes);
	assert_true(ci.pclmul);
	/* arm64 names it PMULL: hwcap_str[] "pmull" in arch/arm64/kernel/cpuinfo.c. */
	assert_string_equal(ht_cpuinfo_pclmul_name(&ci), "pmull");
	assert_false(ci.hypervisor);
	/* CPU implementer 0x41 (ARM), part 0xd0c: MIDR_NEOVERSE_N1 in cputype.h */
	assert_string_equal(ci.model_key, "CPU part");
	assert_string_equal(ci.model, "ARM Neoverse-N1");
	ht_cpuinfo_clear(&ci);
}

static void test_arm64_no_crypto(void **state)
{
	struct ht_cpuinfo ci;

	parse_fixture("arm64-rpi4-no-crypto.cpuinfo", &ci);
	assert_string_equal(ci.flags_key, "Features");
	assert_false(ci.aes);
	assert_false(ci.pclmul);
	assert_string_equal(ht_cpuinfo_pclmul_name(&ci), "pmull");
	/* The CPU part wins over the board's Hardware line. */
	assert_string_equal(ci.model, "ARM Cortex-A72");
	ht_cpuinfo_clear(&ci);
}

/* Whole words only: VAES and VPCLMULQDQ are not the base instructions. */
static void test_whole_words(void **state)
{
	struct ht_cpuinfo ci;

	assert_int_equal(ht_cpuinfo_parse("flags\t\t: sse2 vaes vpclmulqdq aes_ni hypervisor2\n", &ci),
	                 0);
	assert_false(ci.aes);
	assert_false(ci.pclmul);
	assert_false(ci.hypervisor);
	assert_null(ci.model);
	assert_null(ci.model_key);
	ht_cpuinfo_clear(&ci);

	/* First and last word of the line, no trailing newline. */
	assert_int_equal(ht_cpuinfo_parse("flags : aes sse pclmulqdq", &ci), 0);
	assert_true(ci.aes);
	assert_true(ci.pclmul);
	ht_cpuinfo_clear(&ci);
}

/* The first processor's block decides, as hosttune documents. */
static void test_first_processor(void **state)
{
	static const char text[] = "processor\t: 0\nmodel name\t: first\nflags\t\t: sse2\n\n"
	                           "processor\t: 1\nmodel name\t: second\nflags\t\t: sse2 aes\n";
	struct ht_cpuinfo ci;

	assert_int_equal(ht_cpuinfo_parse(text, &ci), 0);
	assert_false(ci.aes);
	assert_string_equal(ci.model, "first");
	ht_cpuinfo_clear(&ci);
}

static void test_no_flags(void **state)
{
	struct ht_cpuinfo ci;

	/* ppc64le prints neither flags nor Features. */
	assert_int_equal(ht_cpuinfo_parse("processor\t: 0\ncpu\t\t: POWER9 (raw)\n", &ci), 0);
	assert_null(ci.flags_key);
	assert_false(ci.aes);
	/* Neither line: no instruction to name. */
	assert_null(ht_cpuinfo_pclmul_name(&ci));
	assert_null(ci.model);
	ht_cpuinfo_clear(&ci);

	assert_int_equal(ht_cpuinfo_parse("", &ci), 0);
	assert_null(ci.flags_key);
	assert_null(ci.model);
	ht_cpuinfo_clear(&ci);
}

static void test_model_fallbacks(void **state)
{
	struct ht_cpuinfo ci;

	/* A part hosttune does not name: implementer 0x61 (Apple), part 0x022. */
	assert_int_equal(ht_cpuinfo_parse("Features\t: fp asimd aes pmull\n"
	                                  "CPU implementer\t: 0x61\nCPU part\t: 0x022\n", &ci), 0);
	assert_string_equal(ci.model, "CPU implementer 0x61 part 0x22");
	ht_cpuinfo_clear(&ci);

	/* Only a Hardware line. */
	assert_int_equal(ht_cpuinfo_parse("Features\t: fp\nHardware\t: Generic DT based system\n",
	                                  &ci), 0);
	assert_string_equal(ci.model_key, "Hardware");
	assert_string_equal(ci.model, "Generic DT based system");
	ht_cpuinfo_clear(&ci);

	/* An empty model name falls through; a part that is not hex is no model. */
	assert_int_equal(ht_cpuinfo_parse("model name\t:\nCPU part\t: zz\n", &ci), 0);
	assert_null(ci.model);
	ht_cpuinfo_clear(&ci);
}

/* ---- virtualisation ---- */

static void test_cpuid_signatures(void **state)
{
	assert_string_equal(ht_virt_from_cpuid_signature("KVMKVMKVM\0\0\0"), "kvm");
	assert_string_equal(ht_virt_from_cpuid_signature("TCGTCGTCGTCG"), "qemu");
	assert_string_equal(ht_virt_from_cpuid_signature("Microsoft Hv"), "microsoft");
	assert_string_equal(ht_virt_from_cpuid_signature("VMwareVMware"), "vmware");
	assert_string_equal(ht_virt_from_cpuid_signature("XenVMMXenVMM"), "xen");
	assert_string_equal(ht_virt_from_cpuid_signature("ACRNACRNACRN"), "acrn");
	assert_string_equal(ht_virt_from_cpuid_signature(" lrpepyh  vr"), "parallels");
	assert_string_equal(ht_virt_from_cpuid_signature("bhyve bhyve "), "bhyve");
	assert_null(ht_virt_from_cpuid_signature("KVMKVMKVMKVM"));
	assert_null(ht_virt_from_cpuid_signature("\0\0\0\0\0\0\0\0\0\0\0\0"));
}

static void test_dmi(void **state)
{
	assert_string_equal(ht_virt_from_dmi("QEMU", "Standard PC (Q35 + ICH9, 2009)"), "qemu");
	assert_string_equal(ht_virt_from_dmi(NULL, "Standard PC (i440FX + PIIX, 1996)"), "qemu");
	assert_string_equal(ht_virt_from_dmi("Red Hat", "KVM"), "kvm");
	assert_string_equal(ht_virt_from_dmi("VMware, Inc.", "VMware7,1"), "vmware");
	assert_string_equal(ht_virt_from_dmi("Microsoft Corporation", "Virtual Machine"),
	                    "microsoft");
	assert_string_equal(ht_virt_from_dmi("Xen", "HVM domU"), "xen");
	assert_string_equal(ht_virt_from_dmi("Amazon EC2", "m6i.large"), "amazon");
	assert_string_equal(ht_virt_from_dmi("Google", "Google Compute Engine"), "google");
	assert_string_equal(ht_virt_from_dmi("innotek GmbH", "VirtualBox"), "oracle");
	/* Microsoft's own hardware is not a VM. */
	assert_null(ht_virt_from_dmi("Microsoft Corporation", "Surface Laptop 4"));
	assert_null(ht_virt_from_dmi("Dell Inc.", "PowerEdge R740xd"));
	assert_null(ht_virt_from_dmi("Supermicro", NULL));
	assert_null(ht_virt_from_dmi(NULL, NULL));
}

/* ---- measurement ---- */

static void test_measure(void **state)
{
	struct ht_cipher_run runs[] = {
		{ .cipher = HT_CIPHER_AES_128_GCM },
		{ .cipher = HT_CIPHER_CHACHA20_POLY1305 },
	};

	/* Up to 4 slices of 5 ms of CPU time each, all within 1 s of wall time. */
	assert_int_equal(ht_cipher_measure(runs, 2, 4, 5000, 1000), 0);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(runs[i].error, 0);
		assert_in_range(runs[i].slices, 1, 4);
		/* Each slice runs at least one round of 4 buffers: 4 x 16384 = 65536 bytes. */
		assert_true(runs[i].bytes >= 65536);
		assert_int_equal(runs[i].bytes % HT_CIPHER_BUFFER, 0);
		/*
		 * A slice ends at 5 ms of the thread's CPU time or at its share of
		 * the wall time, whichever comes first, plus its last round of 4
		 * buffers (well under 10 ms even for software AES): at most 15 ms
		 * each, 4 x 15 = 60 ms for all.
		 */
		assert_true(runs[i].seconds > 0);
		assert_true(runs[i].seconds <= 0.015);
		assert_true(runs[i].total_seconds >= runs[i].seconds);
		assert_true(runs[i].total_seconds <= 4 * 0.015);
		/* MB = 10^6 bytes */
		assert_true(fabs(runs[i].mbps - (double)runs[i].bytes / 1e6 / runs[i].seconds) <
		            1e-9 * runs[i].mbps);
	}
}

/*
 * The wall-time bound holds whatever the CPU budget: 10 slices of 1 s of
 * CPU time each would take 2 x 10 x 1 = 20 s; within 20 ms of wall time
 * the thread gets at most 20 ms of CPU, plus one round of 4 buffers per
 * slice past the end (20 slices x under 10 ms), so well under 0.5 s. The
 * assertion is on CPU time, which a loaded host only lowers.
 */
static void test_measure_wall_bound(void **state)
{
	struct ht_cipher_run runs[] = {
		{ .cipher = HT_CIPHER_AES_128_GCM },
		{ .cipher = HT_CIPHER_CHACHA20_POLY1305 },
	};

	assert_int_equal(ht_cipher_measure(runs, 2, 10, 1000000, 20), 0);
	assert_true(runs[0].total_seconds + runs[1].total_seconds < 0.5);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(runs[i].error, 0);
		/* Every cipher gets its first slice, even one the bound cuts to 4 buffers. */
		assert_in_range(runs[i].slices, 1, 10);
		assert_true(runs[i].mbps > 0);
	}
}

static void test_measure_bad_args(void **state)
{
	struct ht_cipher_run run = { .cipher = (enum ht_cipher)7 };

	assert_int_equal(ht_cipher_measure(NULL, 1, 1, 1, 1), -EINVAL);
	assert_int_equal(ht_cipher_measure(&run, 1, 1, 1, 1), -EINVAL);
	run.cipher = HT_CIPHER_AES_128_GCM;
	assert_int_equal(ht_cipher_measure(&run, 0, 1, 1, 1), -EINVAL);
	assert_int_equal(ht_cipher_measure(&run, 1, 0, 1, 1), -EINVAL);
	assert_int_equal(ht_cipher_measure(&run, 1, 1, 0, 1), -EINVAL);
	assert_int_equal(ht_cipher_measure(&run, 1, 1, 1, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x86_aes_pclmul),
		cmocka_unit_test(test_x86_aes_no_pclmul),
		cmocka_unit_test(test_x86_old),
		cmocka_unit_test(test_arm64_crypto),
		cmocka_unit_test(test_arm64_no_crypto),
		cmocka_unit_test(test_whole_words),
		cmocka_unit_test(test_first_processor),
		cmocka_unit_test(test_no_flags),
		cmocka_unit_test(test_model_fallbacks),
		cmocka_unit_test(test_cpuid_signatures),
		cmocka_unit_test(test_dmi),
		cmocka_unit_test(test_measure),
		cmocka_unit_test(test_measure_wall_bound),
		cmocka_unit_test(test_measure_bad_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
