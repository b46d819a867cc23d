/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* shared/units.h: durations as systemd.time(7) writes them, sizes in IEC units. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "shared/units.h"
#include "shared/util.h"

static void expect_duration(const char *s, double want)
{
	double got = -1;

	assert_int_equal(ht_parse_duration(s, &got), 0);
	assert_float_equal(got, want, 1e-9);
}

static void test_durations(void **state)
{
	(void)state;
	expect_duration("90", 90);                 /* no unit: seconds */
	expect_duration("250ms", 0.25);
	expect_duration("5m", 300);                /* 5 x 60 */
	expect_duration("2min", 120);
	expect_duration("1h 30min", 5400);         /* 3600 + 30 x 60 */
	expect_duration("2min 5s", 125);           /* 120 + 5 */
	expect_duration("1h30m", 5400);            /* no space between the parts */
	expect_duration("1.5h", 5400);             /* 1.5 x 3600 */
	expect_duration(" 10 s ", 10);             /* spaces around and before the unit */
	expect_duration("1d 2h", 93600);           /* 86400 + 7200 */
	expect_duration("1w", 604800);             /* 7 x 86400 */
	expect_duration("1M", 2629800);            /* 30.4375 x 86400: a month, not a minute */
	expect_duration("1y", 31557600);           /* 365.25 x 86400 */
	expect_duration("500us", 0.0005);
	expect_duration("3 seconds", 3);
	expect_duration("2 minutes 1 second", 121);
	expect_duration("0", 0);
}

static void test_bad_durations(void **state)
{
	double v = 7;

	(void)state;
	assert_int_equal(ht_parse_duration("", &v), -EINVAL);
	assert_int_equal(ht_parse_duration("   ", &v), -EINVAL);
	assert_int_equal(ht_parse_duration("-5s", &v), -EINVAL);
	assert_int_equal(ht_parse_duration("5 parsecs", &v), -EINVAL);
	assert_int_equal(ht_parse_duration("min", &v), -EINVAL);
	assert_int_equal(ht_parse_duration("1..5s", &v), -EINVAL);
	assert_int_equal(ht_parse_duration(".", &v), -EINVAL);
	assert_int_equal(ht_parse_duration("1h,30min", &v), -EINVAL);
	assert_int_equal(ht_parse_duration("100000y", &v), -ERANGE); /* 3.2e12 s */
	assert_float_equal(v, 7, 0);                                /* untouched on error */
}

static void expect_bytes(double v, const char *want)
{
	_cleanup_free_ char *s = ht_format_bytes(v);

	assert_non_null(s);
	assert_string_equal(s, want);
}

static void test_bytes(void **state)
{
	(void)state;
	expect_bytes(1023, "1023 bytes");
	expect_bytes(1024, "1 KiB");
	expect_bytes(268435456, "256 MiB");        /* 256 x 1048576 */
	expect_bytes(1610612736, "1.5 GiB");       /* 1.5 x 1073741824 */
	expect_bytes(268435457, "256.0 MiB");      /* not whole: one decimal */
	expect_bytes(32768.0 * 8, "256 KiB");      /* 262144 = 256 x 1024 */
	expect_bytes(1450, "1450 bytes");          /* a VXLAN MTU: 1.416 KiB is not whole */
	expect_bytes(1536, "1536 bytes");          /* 1.5 KiB: under 1 MiB, only whole KiB */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_bad_durations),
		cmocka_unit_test(test_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
