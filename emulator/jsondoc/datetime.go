package jsondoc

import (
	"math"
	"math/big"
	"strings"
	"time"
)

// The date and time functions, as Microsoft Learn documents them
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/datetimeadd and its
// siblings; the examples are github.com/Azure-Samples/cosmos-db-nosql-query-samples
// scripts/datetime*, tickstodatetime, timestamptodatetime, getcurrent*, which
// datetime_test.go replays). A date and time is a string in the ISO 8601 form
// YYYY-MM-DDThh:mm:ss.fffffffZ; results carry seven fractional digits and the Z.
// Ticks are 100-nanosecond units and timestamps milliseconds, both counted from the
// Unix epoch. Every function is undefined for an argument it cannot read (an
// unknown date part, a number that is not an integer, a string that is not such a
// date and time), as the pages' remarks say.
//
// What the pages leave open, the emulator decides and the README says: it reads
// the documented form with 1 to 7 fractional digits (or none) and the Z optional
// (the examples omit it); a date alone, a time zone offset or a space for the T are
// undefined. Dates run from 0001-01-01 to 9999-12-31, the range of the .NET DateTime
// the format comes from; a result outside it is undefined. Adding months or years
// keeps the day of month where the target month has it and otherwise takes its
// last day (January 31 plus one month is February 28 or 29), as SQL Server's
// DATEADD does.

const (
	ticksPerSecond = int64(10_000_000)
	ticksPerDay    = 86400 * ticksPerSecond
	// dateTimeLayout is the service's output form: seven fractional digits, always.
	dateTimeLayout = "2006-01-02T15:04:05.0000000Z"
)

var (
	minDateTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxDateTime = time.Date(9999, 12, 31, 23, 59, 59, 999_999_900, time.UTC)
	unixEpoch   = time.Unix(0, 0).UTC()
)

// queryTime is a bound query's clock: the non-static functions read it on every
// call, the static ones (GetCurrentDateTimeStatic, …) the instant the query was
// bound, which Learn describes as "called once per partition": the emulator binds a
// query once per request, and a request reads one partition key range.
type queryTime struct {
	clock  func() time.Time
	static time.Time
}

func newQueryTime(clock func() time.Time) *queryTime {
	if clock == nil {
		return nil
	}
	return &queryTime{clock: clock, static: clock().UTC()}
}

func (q *queryTime) now(static bool) time.Time {
	switch {
	case q == nil:
		return time.Now().UTC() // a filter evaluated outside a bound query
	case static:
		return q.static
	}
	return q.clock().UTC()
}

// dateTimePart is a unit of the date_time_part argument.
type dateTimePart uint8

const (
	partYear dateTimePart = iota
	partMonth
	partDay
	partHour
	partMinute
	partSecond
	partMillisecond
	partMicrosecond
	partNanosecond
)

// dateTimeParts are the documented names and abbreviations. Learn writes them in
// lower case; the emulator matches them without case (not documented).
var dateTimeParts = map[string]dateTimePart{
	"year": partYear, "yyyy": partYear, "yy": partYear,
	"month": partMonth, "mm": partMonth, "m": partMonth,
	"day": partDay, "dd": partDay, "d": partDay,
	"hour": partHour, "hh": partHour,
	"minute": partMinute, "mi": partMinute, "n": partMinute,
	"second": partSecond, "ss": partSecond, "s": partSecond,
	"millisecond": partMillisecond, "ms": partMillisecond,
	"microsecond": partMicrosecond, "mcs": partMicrosecond,
	"nanosecond": partNanosecond, "ns": partNanosecond,
}

func dateTimePartArg(v *Value) (dateTimePart, bool) {
	s, ok := str(v)
	if !ok {
		return 0, false
	}
	p, ok := dateTimeParts[strings.ToLower(s)]
	return p, ok
}

// partTicks is the length of a fixed-length part in ticks; nanoseconds are a
// hundredth of a tick and handled apart.
var partTicks = [...]int64{
	partDay: ticksPerDay, partHour: 3600 * ticksPerSecond, partMinute: 60 * ticksPerSecond,
	partSecond: ticksPerSecond, partMillisecond: 10_000, partMicrosecond: 10,
}

// parseDateTime reads YYYY-MM-DDThh:mm:ss[.f…f][Z] with up to seven fractional digits.
func parseDateTime(v *Value) (time.Time, bool) {
	s, ok := str(v)
	if !ok {
		return time.Time{}, false
	}
	s = strings.TrimSuffix(s, "Z")
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	num := func(i, n int) (int, bool) {
		x := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			x = x*10 + int(c-'0')
		}
		return x, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	h, ok4 := num(11, 2)
	mi, ok5 := num(14, 2)
	sec, ok6 := num(17, 2)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return time.Time{}, false
	}
	frac := 0
	if rest := s[19:]; rest != "" {
		if rest[0] != '.' || len(rest) < 2 || len(rest) > 8 {
			return time.Time{}, false
		}
		f, ok := num(20, len(rest)-1)
		if !ok {
			return time.Time{}, false
		}
		for i := len(rest) - 1; i < 7; i++ {
			f *= 10
		}
		frac = f
	}
	return dateFromParts(y, mo, d, h, mi, sec, frac)
}

// dateFromParts builds a date and time, refusing what time.Date would normalise
// (February 30, hour 24).
func dateFromParts(y, mo, d, h, mi, s, ticks int) (time.Time, bool) {
	if y < 1 || y > 9999 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 || ticks < 0 || ticks > 9_999_999 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, s, ticks*100, time.UTC)
	if t.Day() != d {
		return time.Time{}, false
	}
	return t, true
}

func dateTimeValue(t time.Time) *Value {
	if t.Before(minDateTime) || t.After(maxDateTime) {
		return nil
	}
	return String(t.Format(dateTimeLayout))
}

// ticksOf counts ticks since the Unix epoch (without time.Duration, which spans
// only 292 years).
func ticksOf(t time.Time) int64 {
	return t.Unix()*ticksPerSecond + int64(t.Nanosecond()/100)
}

func fromTicks(ticks int64) time.Time {
	return time.Unix(floorDiv(ticks, ticksPerSecond), floorMod(ticks, ticksPerSecond)*100).UTC()
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// int64Arg reads an integral number argument without clamping.
func int64Arg(v *Value) (int64, bool) {
	if v == nil || v.Kind != KindNumber {
		return 0, false
	}
	if n, ok := parseInt64(v.Num); ok {
		return n, true
	}
	f := numberFloat(v.Num)
	if f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// numberTicks reads a number of ticks or milliseconds (TicksToDateTime,
// TimestampToDateTime); a fraction is dropped (not documented).
func numberArg(v *Value, scale int64) (int64, bool) {
	if v == nil || v.Kind != KindNumber {
		return 0, false
	}
	if n, ok := parseInt64(v.Num); ok {
		if n > math.MaxInt64/scale || n < math.MinInt64/scale {
			return 0, false
		}
		return n * scale, true
	}
	f := math.Trunc(numberFloat(v.Num) * float64(scale))
	if math.IsNaN(f) || math.Abs(f) >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

func fnGetCurrentDateTime(static bool) func(a args) *Value {
	return func(a args) *Value { return dateTimeValue(a.now.now(static)) }
}

func fnGetCurrentTicks(static bool) func(a args) *Value {
	return func(a args) *Value { return intValue(ticksOf(a.now.now(static))) }
}

func fnGetCurrentTimestamp(static bool) func(a args) *Value {
	return func(a args) *Value { return intValue(floorDiv(ticksOf(a.now.now(static)), 10_000)) }
}

// fnDateTimeAdd is DateTimeAdd(part, n, datetime).
func fnDateTimeAdd(a args) *Value {
	part, ok1 := dateTimePartArg(a.v[0])
	n, ok2 := int64Arg(a.v[1])
	t, ok3 := parseDateTime(a.v[2])
	if !ok1 || !ok2 || !ok3 {
		return nil
	}
	switch part {
	case partYear, partMonth:
		months := n
		if part == partYear {
			if n > 10000 || n < -10000 {
				return nil
			}
			months = n * 12
		}
		if months > 120000 || months < -120000 {
			return nil
		}
		total := int64(t.Year())*12 + int64(t.Month()) - 1 + months
		y, m := floorDiv(total, 12), time.Month(floorMod(total, 12)+1)
		if y < 1 || y > 9999 {
			return nil
		}
		d := t.Day()
		if last := time.Date(int(y), m+1, 0, 0, 0, 0, 0, time.UTC).Day(); d > last {
			d = last
		}
		return dateTimeValue(time.Date(int(y), m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC))
	case partNanosecond:
		return addTicks(t, n/100, 1)
	}
	return addTicks(t, n, partTicks[part])
}

func addTicks(t time.Time, n, per int64) *Value {
	// Any sum past ±3.2e17 ticks leaves years 1 to 9999.
	const span = 4e17
	if float64(n)*float64(per) > span || float64(n)*float64(per) < -span {
		return nil
	}
	return dateTimeValue(fromTicks(ticksOf(t) + n*per))
}

// fnDateTimeDiff is DateTimeDiff(part, start, end): the number of part boundaries
// crossed from start to end ("not a measurement of the time interval").
func fnDateTimeDiff(a args) *Value {
	part, ok1 := dateTimePartArg(a.v[0])
	start, ok2 := parseDateTime(a.v[1])
	end, ok3 := parseDateTime(a.v[2])
	if !ok1 || !ok2 || !ok3 {
		return nil
	}
	switch part {
	case partYear:
		return intValue(int64(end.Year() - start.Year()))
	case partMonth:
		return intValue(int64((end.Year()-start.Year())*12 + int(end.Month()) - int(start.Month())))
	case partNanosecond:
		d := new(big.Int).Mul(big.NewInt(ticksOf(end)-ticksOf(start)), big.NewInt(100))
		if d.IsInt64() {
			return intValue(d.Int64())
		}
		f, _ := new(big.Float).SetInt(d).Float64()
		return floatValue(f)
	}
	per := partTicks[part]
	return intValue(floorDiv(ticksOf(end), per) - floorDiv(ticksOf(start), per))
}

// fnDateTimePart is DateTimePart(part, datetime).
func fnDateTimePart(a args) *Value {
	part, ok1 := dateTimePartArg(a.v[0])
	t, ok2 := parseDateTime(a.v[1])
	if !ok1 || !ok2 {
		return nil
	}
	frac := int64(t.Nanosecond() / 100) // ticks within the second
	var n int64
	switch part {
	case partYear:
		n = int64(t.Year())
	case partMonth:
		n = int64(t.Month())
	case partDay:
		n = int64(t.Day())
	case partHour:
		n = int64(t.Hour())
	case partMinute:
		n = int64(t.Minute())
	case partSecond:
		n = int64(t.Second())
	case partMillisecond:
		n = frac / 10_000
	case partMicrosecond:
		n = frac / 10
	case partNanosecond:
		n = frac * 100
	}
	return intValue(n)
}

// fnDateTimeFromParts is DateTimeFromParts(year, month, day[, hour[, minute[,
// second[, fraction]]]]), the fraction in ticks (seven digits).
func fnDateTimeFromParts(a args) *Value {
	var p [7]int
	for i := 0; i < a.n; i++ {
		n, ok := int64Arg(a.get(i))
		if !ok || n < 0 || n > 1e8 {
			return nil
		}
		p[i] = int(n)
	}
	t, ok := dateFromParts(p[0], p[1], p[2], p[3], p[4], p[5], p[6])
	if !ok {
		return nil
	}
	return dateTimeValue(t)
}

func fnDateTimeToTicks(a args) *Value {
	t, ok := parseDateTime(a.v[0])
	if !ok {
		return nil
	}
	return intValue(ticksOf(t))
}

// fnDateTimeToTimestamp gives whole milliseconds, rounding toward the earlier
// instant (not documented for the sub-millisecond digits).
func fnDateTimeToTimestamp(a args) *Value {
	t, ok := parseDateTime(a.v[0])
	if !ok {
		return nil
	}
	return intValue(floorDiv(ticksOf(t), 10_000))
}

func fnTicksToDateTime(a args) *Value {
	ticks, ok := numberArg(a.v[0], 1)
	if !ok || ticks < ticksOf(minDateTime) || ticks > ticksOf(maxDateTime) {
		return nil
	}
	return dateTimeValue(fromTicks(ticks))
}

func fnTimestampToDateTime(a args) *Value {
	ticks, ok := numberArg(a.v[0], 10_000)
	if !ok || ticks < ticksOf(minDateTime) || ticks > ticksOf(maxDateTime) {
		return nil
	}
	return dateTimeValue(fromTicks(ticks))
}

// fnDateTimeBin is DateTimeBin(datetime, part[, size[, origin]]): the start of the
// bin of size parts, counted from origin (the Unix epoch by default), that holds
// datetime. Parts run from days to nanoseconds; a size that is not a positive
// integer, or an origin before 1601, makes it undefined.
func fnDateTimeBin(a args) *Value {
	t, ok1 := parseDateTime(a.v[0])
	part, ok2 := dateTimePartArg(a.v[1])
	if !ok1 || !ok2 || part < partDay {
		return nil
	}
	size := int64(1)
	if a.n >= 3 {
		var ok bool
		if size, ok = int64Arg(a.v[2]); !ok || size <= 0 {
			return nil
		}
	}
	origin := unixEpoch
	if a.n == 4 {
		var ok bool
		if origin, ok = parseDateTime(a.v[3]); !ok || origin.Year() < 1601 {
			return nil
		}
	}
	// In nanoseconds, with big integers: ticks times 100 overflows int64 after 2262.
	width := new(big.Int).Mul(big.NewInt(size), big.NewInt(100))
	if part != partNanosecond {
		width.Mul(width, big.NewInt(partTicks[part]))
	} else {
		width.Div(width, big.NewInt(100))
	}
	ns := func(t time.Time) *big.Int { return new(big.Int).Mul(big.NewInt(ticksOf(t)), big.NewInt(100)) }
	off := new(big.Int).Sub(ns(t), ns(origin))
	bins := new(big.Int).Div(off, width) // Euclidean: floors for a positive width
	start := new(big.Int).Add(ns(origin), bins.Mul(bins, width))
	start.Div(start, big.NewInt(100)) // back to whole ticks, toward the earlier one
	if !start.IsInt64() {
		return nil
	}
	return dateTimeValue(fromTicks(start.Int64()))
}
