/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Durations and sizes as people write and read them. */
#pragma once

/*
 * ht_parse_duration - a duration as systemd.time(7) writes one, in seconds:
 * one or more numbers (decimals allowed), each followed by a unit or none
 * (seconds), with or without spaces between them ("90", "250ms", "5m",
 * "1h 30min", "2min 5s", "1.5h", "1h30m"). Units: us (usec, µs), ms (msec),
 * s (sec, second, seconds), m (min, minute, minutes), h (hr, hour, hours),
 * d (day, days), w (week, weeks), M (month, months: 30.44 days), y (year,
 * years: 365.25 days); case matters (M is a month, m a minute). Returns 0
 * with *out set, -EINVAL for anything else (empty, a sign, an unknown unit),
 * -ERANGE above 10^12 s.
 */
int ht_parse_duration(const char *s, double *out);

/*
 * ht_format_bytes - @v bytes in the largest IEC unit it reaches, as free(1)
 * -h prints it: "512 bytes", "256 MiB" (a whole number of the unit), "1.5 GiB"
 * (else one decimal); under 1 MiB a size that is not a whole number of KiB
 * stays in bytes ("1450 bytes": an MTU, not "1.4 KiB"). A new string the caller frees; NULL on ENOMEM.
 */
char *ht_format_bytes(double v);
