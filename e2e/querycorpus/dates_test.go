package querycorpus_test

import (
	"strings"
	"time"
)

// The date and time functions over ISO 8601 strings in UTC, YYYY-MM-DDThh:mm:ss.fffffffZ
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/datetimeadd and the pages of
// DateTimeDiff, DateTimePart, DateTimeToTimestamp, DateTimeFromParts); the results are
// strings in that format with seven fractional digits.
const dtLayout = "2006-01-02T15:04:05.0000000Z"

// parseDT reads a date and time string: the seconds' fraction and the Z are optional
// (the Learn samples pass "2019-02-04T16:00:00.0000000").
func parseDT(v any) (time.Time, bool) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, false
	}
	s = strings.TrimSuffix(s, "Z")
	for _, layout := range []string{"2006-01-02T15:04:05.9999999", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// dtPart is a DateTimePart name's unit: year, month, day, hour, minute, second,
// millisecond, microsecond, nanosecond and their abbreviations.
func dtPart(part string) string {
	switch strings.ToLower(part) {
	case "year", "yyyy", "yy":
		return "year"
	case "month", "mm", "m":
		return "month"
	case "day", "dd", "d":
		return "day"
	case "hour", "hh":
		return "hour"
	case "minute", "mi", "n":
		return "minute"
	case "second", "ss", "s":
		return "second"
	case "millisecond", "ms":
		return "millisecond"
	case "microsecond", "mcs":
		return "microsecond"
	case "nanosecond", "ns":
		return "nanosecond"
	}
	return ""
}

// dateTimeAdd is DateTimeAdd(part, n, dt).
func dateTimeAdd(part string, n int, v any) any {
	t, ok := parseDT(v)
	if !ok {
		return undef
	}
	switch dtPart(part) {
	case "year":
		t = t.AddDate(n, 0, 0)
	case "month":
		t = t.AddDate(0, n, 0)
	case "day":
		t = t.AddDate(0, 0, n)
	case "hour":
		t = t.Add(time.Duration(n) * time.Hour)
	case "minute":
		t = t.Add(time.Duration(n) * time.Minute)
	case "second":
		t = t.Add(time.Duration(n) * time.Second)
	default:
		return undef
	}
	return t.Format(dtLayout)
}

// dateTimePart is DateTimePart(part, dt); millisecond, microsecond and nanosecond are
// the seconds' fraction in that unit (the Learn sample: .1301617 is 130 ms, 130161 µs,
// 130161700 ns).
func dateTimePart(part string, v any) any {
	t, ok := parseDT(v)
	if !ok {
		return undef
	}
	switch dtPart(part) {
	case "year":
		return float64(t.Year())
	case "month":
		return float64(t.Month())
	case "day":
		return float64(t.Day())
	case "hour":
		return float64(t.Hour())
	case "minute":
		return float64(t.Minute())
	case "second":
		return float64(t.Second())
	case "millisecond":
		return float64(t.Nanosecond() / 1e6)
	case "microsecond":
		return float64(t.Nanosecond() / 1e3)
	case "nanosecond":
		return float64(t.Nanosecond())
	}
	return undef
}

// dateTimeDiff is DateTimeDiff(part, start, end): the part's boundaries crossed from
// start to end, signed (the Learn sample: from 2019-02-04T16:00 to 2018-03-05T05:00 is
// -1 year, -11 months, -336 days, -8075 hours).
func dateTimeDiff(part string, a, b any) any {
	s, ok1 := parseDT(a)
	e, ok2 := parseDT(b)
	if !ok1 || !ok2 {
		return undef
	}
	trunc := func(t time.Time, d time.Duration) int64 { return t.UnixNano() / int64(d) }
	floorDiv := func(t time.Time, d time.Duration) int64 {
		n := t.UnixNano()
		q := n / int64(d)
		if n%int64(d) < 0 {
			q--
		}
		return q
	}
	_ = trunc
	switch dtPart(part) {
	case "year":
		return float64(e.Year() - s.Year())
	case "month":
		return float64((e.Year()*12 + int(e.Month())) - (s.Year()*12 + int(s.Month())))
	case "day":
		return float64(floorDiv(e, 24*time.Hour) - floorDiv(s, 24*time.Hour))
	case "hour":
		return float64(floorDiv(e, time.Hour) - floorDiv(s, time.Hour))
	case "minute":
		return float64(floorDiv(e, time.Minute) - floorDiv(s, time.Minute))
	case "second":
		return float64(floorDiv(e, time.Second) - floorDiv(s, time.Second))
	case "millisecond":
		return float64(floorDiv(e, time.Millisecond) - floorDiv(s, time.Millisecond))
	}
	return undef
}

// dateTimeToTimestamp is DateTimeToTimestamp(dt): milliseconds since the Unix epoch.
func dateTimeToTimestamp(v any) any {
	t, ok := parseDT(v)
	if !ok {
		return undef
	}
	return float64(t.UnixMilli())
}

// dateTimeFromParts is DateTimeFromParts(year, month, day[, hour, minute, second]).
func dateTimeFromParts(y, m, d int, hms ...int) any {
	for len(hms) < 3 {
		hms = append(hms, 0)
	}
	return time.Date(y, time.Month(m), d, hms[0], hms[1], hms[2], 0, time.UTC).Format(dtLayout)
}
