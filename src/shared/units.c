/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Durations (systemd.time(7)) and sizes (IEC units). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/units.h"
#include "shared/util.h"

/* systemd.time(7)'s time units, in seconds (src/basic/time-util.c, parse_sec()). */
static const struct {
	const char *name;
	double sec;
} time_units[] = {
	{ "us", 1e-6 }, { "usec", 1e-6 }, { "\xc2\xb5s", 1e-6 }, { "\xce\xbcs", 1e-6 },
	{ "ms", 1e-3 }, { "msec", 1e-3 },
	{ "s", 1 }, { "sec", 1 }, { "second", 1 }, { "seconds", 1 },
	{ "m", 60 }, { "min", 60 }, { "minute", 60 }, { "minutes", 60 },
	{ "h", 3600 }, { "hr", 3600 }, { "hour", 3600 }, { "hours", 3600 },
	{ "d", 86400 }, { "day", 86400 }, { "days", 86400 },
	{ "w", 604800 }, { "week", 604800 }, { "weeks", 604800 },
	{ "M", 2629800 }, { "month", 2629800 }, { "months", 2629800 },
	{ "y", 31557600 }, { "year", 31557600 }, { "years", 31557600 },
};

/* Bytes of a unit name: letters and the two micro signs' UTF-8 bytes. */
static size_t unit_len(const char *p)
{
	size_t n = 0;

	while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z') ||
	       (unsigned char)p[n] == 0xc2 || (unsigned char)p[n] == 0xb5 ||
	       (unsigned char)p[n] == 0xce || (unsigned char)p[n] == 0xbc)
		n++;
	return n;
}

int ht_parse_duration(const char *s, double *out)
{
	double total = 0;
	const char *p = s;
	bool any = false;

	while (*p) {
		size_t digits, n, u;
		double v;
		char *end;

		p += strspn(p, " \t");
		if (!*p)
			break;
		digits = strspn(p, "0123456789.");
		if (digits == 0 || (digits == 1 && *p == '.'))
			return -EINVAL;
		errno = 0;
		v = strtod(p, &end);
		if (errno || end != p + digits)
			return -EINVAL;
		p = end;
		p += strspn(p, " \t");
		n = unit_len(p);
		if (n == 0) {
			total += v; /* no unit: seconds */
		} else {
			for (u = 0; u < ARRAY_SIZE(time_units); u++)
				if (strlen(time_units[u].name) == n && strncmp(time_units[u].name, p, n) == 0)
					break;
			if (u == ARRAY_SIZE(time_units))
				return -EINVAL;
			total += v * time_units[u].sec;
			p += n;
		}
		if (total > 1e12)
			return -ERANGE;
		any = true;
	}
	if (!any)
		return -EINVAL;
	*out = total;
	return 0;
}

char *ht_format_bytes(double v)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB" };
	size_t u = 0;
	double a = fabs(v);
	char *s;

	while (a >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		a /= 1024;
		v /= 1024;
		u++;
	}
	/* Under 1 MiB only an exact multiple reads better in KiB: an MTU of 1450 stays bytes. */
	if (u == 1 && v != floor(v)) {
		v *= 1024;
		u = 0;
	}
	if (v == floor(v) || u == 0) {
		if (asprintf(&s, "%.0f %s", v, units[u]) < 0)
			return NULL;
	} else if (asprintf(&s, "%.1f %s", v, units[u]) < 0)
		return NULL;
	return s;
}
