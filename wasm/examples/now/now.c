/*
 * now: the seed's NOW capability as a WASI preview 1 command (see wasm/ABI.md).
 *
 * Prints the current time in Pacific time (America/Los_Angeles) as one line of JSON:
 *
 *   {"now":"Sunday, July 26, 2026, 9:36:19 PM PDT","today":"2026-07-26",
 *    "time":"21:36:19","zone":"PDT","iso":"2026-07-26T21:36:19.832-07:00"}
 *
 *   now    a human-readable Pacific date and time, with the zone abbreviation
 *   today  the Pacific calendar date, YYYY-MM-DD
 *   time   the Pacific wall-clock time, HH:MM:SS (24-hour)
 *   zone   "PDT" (UTC-7) or "PST" (UTC-8)
 *   iso    RFC 3339 with milliseconds and the Pacific offset
 *
 * Arguments are ignored. The only import used is the WASI wall clock (clock_time_get)
 * plus fd_write for stdout: no time zone database is needed, because the US rule
 * (Energy Policy Act of 2005, in force since 2007) is coded here:
 *
 *   daylight time (PDT, UTC-7) starts on the second Sunday of March at 02:00 local
 *   standard time (10:00 UTC) and ends on the first Sunday of November at 02:00
 *   local daylight time (09:00 UTC); standard time (PST, UTC-8) the rest of the year.
 *
 * Dates before 2007 follow the same rule (the rule was different then); that is the
 * module's documented limit. Build: build/modules.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* days_from_civil returns days since 1970-01-01 for a proleptic Gregorian date
 * (Howard Hinnant's algorithm). m is 1..12, d is 1..31. */
static int64_t days_from_civil(int64_t y, int m, int d) {
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* civil_from_days is the inverse of days_from_civil. */
static void civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* weekday returns 0 for Sunday … 6 for Saturday. 1970-01-01 was a Thursday. */
static int weekday(int64_t days) {
	int64_t w = (days + 4) % 7;
	return (int)(w < 0 ? w + 7 : w);
}

/* nth_sunday returns the day number of the n-th Sunday (1-based) of month m in year y. */
static int64_t nth_sunday(int64_t y, int m, int n) {
	int64_t first = days_from_civil(y, m, 1);
	return first + (7 - weekday(first)) % 7 + 7 * (n - 1);
}

/* is_pdt reports whether the UTC instant t (seconds) falls in US Pacific daylight time. */
static int is_pdt(int64_t t) {
	int64_t y;
	int m, d;
	int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
	civil_from_days(days, &y, &m, &d);
	int64_t start = nth_sunday(y, 3, 2) * 86400 + 10 * 3600; /* 02:00 PST = 10:00 UTC */
	int64_t end = nth_sunday(y, 11, 1) * 86400 + 9 * 3600;   /* 02:00 PDT = 09:00 UTC */
	return t >= start && t < end;
}

static const char *const weekdays[] = {"Sunday", "Monday", "Tuesday", "Wednesday",
                                       "Thursday", "Friday", "Saturday"};
static const char *const months[] = {"January", "February", "March", "April",
                                     "May", "June", "July", "August",
                                     "September", "October", "November", "December"};

int main(void) {
	struct timespec ts;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0) {
		fputs("now: the wall clock is unavailable\n", stderr);
		return 1;
	}
	int64_t t = (int64_t)ts.tv_sec;
	int ms = (int)(ts.tv_nsec / 1000000);
	int pdt = is_pdt(t);
	int offset_h = pdt ? 7 : 8;
	int64_t local = t - (int64_t)offset_h * 3600;

	int64_t days = local >= 0 ? local / 86400 : (local - 86399) / 86400;
	int64_t secs = local - days * 86400;
	int64_t y;
	int m, d;
	civil_from_days(days, &y, &m, &d);
	int hh = (int)(secs / 3600), mm = (int)(secs / 60 % 60), ss = (int)(secs % 60);
	int h12 = hh % 12 == 0 ? 12 : hh % 12;
	const char *zone = pdt ? "PDT" : "PST";

	printf("{\"now\":\"%s, %s %d, %lld, %d:%02d:%02d %s %s\","
	       "\"today\":\"%04lld-%02d-%02d\","
	       "\"time\":\"%02d:%02d:%02d\","
	       "\"zone\":\"%s\","
	       "\"iso\":\"%04lld-%02d-%02dT%02d:%02d:%02d.%03d-%02d:00\"}\n",
	       weekdays[weekday(days)], months[m - 1], d, (long long)y, h12, mm, ss,
	       hh < 12 ? "AM" : "PM", zone,
	       (long long)y, m, d,
	       hh, mm, ss,
	       zone,
	       (long long)y, m, d, hh, mm, ss, ms, offset_h);
	return 0;
}
