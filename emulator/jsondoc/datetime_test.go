package jsondoc

import (
	"testing"
	"time"
)

// The examples of Learn's date and time pages (github.com/Azure-Samples/
// cosmos-db-nosql-query-samples scripts/datetime*, tickstodatetime,
// timestamptodatetime), each an expression and the service's answer.
func TestDateTimeFunctionsAnswerLearnsExamples(t *testing.T) {
	const d = `"2020-07-03T00:00:00.0000000"`
	const a, b = `"2019-02-04T16:00:00.0000000"`, `"2018-03-05T05:00:00.0000000"`
	const p = `"2016-05-29T08:30:00.1301617"`
	const bin = `"2021-01-08T18:35:00.0000000"`
	for _, tt := range []struct{ expr, want string }{
		{`DateTimeAdd("yyyy", 1, ` + d + `)`, `"2021-07-03T00:00:00.0000000Z"`},
		{`DateTimeAdd("mm", 1, ` + d + `)`, `"2020-08-03T00:00:00.0000000Z"`},
		{`DateTimeAdd("dd", 1, ` + d + `)`, `"2020-07-04T00:00:00.0000000Z"`},
		{`DateTimeAdd("hh", 1, ` + d + `)`, `"2020-07-03T01:00:00.0000000Z"`},
		{`DateTimeAdd("yyyy", -1, ` + d + `)`, `"2019-07-03T00:00:00.0000000Z"`},
		{`DateTimeAdd("mm", -1, ` + d + `)`, `"2020-06-03T00:00:00.0000000Z"`},
		{`DateTimeAdd("dd", -1, ` + d + `)`, `"2020-07-02T00:00:00.0000000Z"`},
		{`DateTimeAdd("hh", -1, ` + d + `)`, `"2020-07-02T23:00:00.0000000Z"`},
		{`DateTimeAdd("ss", 5 * -5, ` + d + `)`, `"2020-07-02T23:59:35.0000000Z"`},

		{`DateTimeDiff("yyyy", ` + a + `, ` + b + `)`, `-1`},
		{`DateTimeDiff("mm", ` + a + `, ` + b + `)`, `-11`},
		{`DateTimeDiff("dd", ` + a + `, ` + b + `)`, `-336`},
		{`DateTimeDiff("hh", ` + a + `, ` + b + `)`, `-8075`},
		{`DateTimeDiff("ss", ` + a + `, ` + b + `)`, `-29070000`},
		{`DateTimeDiff("yyyy", ` + b + `, ` + a + `)`, `1`},
		{`DateTimeDiff("mm", ` + b + `, ` + a + `)`, `11`},
		{`DateTimeDiff("dd", ` + b + `, ` + a + `)`, `336`},
		{`DateTimeDiff("hh", ` + b + `, ` + a + `)`, `8075`},
		{`DateTimeDiff("ss", ` + b + `, ` + a + `)`, `29070000`},

		{`DateTimeFromParts(2017, 4, 20)`, `"2017-04-20T00:00:00.0000000Z"`},
		{`DateTimeFromParts(2017, 4, 20, 0, 0, 0, 0)`, `"2017-04-20T00:00:00.0000000Z"`},
		{`DateTimeFromParts(2017, 4, 20, 13, 15, 20, 3456789)`, `"2017-04-20T13:15:20.3456789Z"`},
		{`DateTimeFromParts(2017, 4, 20, 13, 15)`, `"2017-04-20T13:15:00.0000000Z"`},
		{`DateTimeFromParts(-2000, -1, -1)`, `undefined`},

		{`DateTimePart("yyyy", ` + p + `)`, `2016`},
		{`DateTimePart("mm", ` + p + `)`, `5`},
		{`DateTimePart("dd", ` + p + `)`, `29`},
		{`DateTimePart("hh", ` + p + `)`, `8`},
		{`DateTimePart("mi", ` + p + `)`, `30`},
		{`DateTimePart("ss", ` + p + `)`, `0`},
		{`DateTimePart("ms", ` + p + `)`, `130`},
		{`DateTimePart("mcs", ` + p + `)`, `130161`},
		{`DateTimePart("ns", ` + p + `)`, `130161700`},

		{`DateTimeToTicks("2015-05-19T12:00:00.0000000")`, `14320368000000000`},
		{`DateTimeToTimestamp("2015-05-19T12:00:00.0000000")`, `1432036800000`},
		{`TicksToDateTime(15973607943002652)`, `"2020-08-13T23:19:54.3002652Z"`},
		{`TicksToDateTime(0)`, `"1970-01-01T00:00:00.0000000Z"`},
		{`TicksToDateTime(-116444736000000000)`, `"1601-01-01T00:00:00.0000000Z"`},
		{`TimestampToDateTime(1597360794300)`, `"2020-08-13T23:19:54.3000000Z"`},
		{`TimestampToDateTime(0)`, `"1970-01-01T00:00:00.0000000Z"`},
		{`TimestampToDateTime(-11644473600000)`, `"1601-01-01T00:00:00.0000000Z"`},

		{`DateTimeBin(` + bin + `, "dd")`, `"2021-01-08T00:00:00.0000000Z"`},
		{`DateTimeBin(` + bin + `, "hh")`, `"2021-01-08T18:00:00.0000000Z"`},
		{`DateTimeBin(` + bin + `, "ss")`, `"2021-01-08T18:35:00.0000000Z"`},
		{`DateTimeBin(` + bin + `, "hh", 5)`, `"2021-01-08T15:00:00.0000000Z"`},
		{`DateTimeBin(` + bin + `, "dd", 7)`, `"2021-01-07T00:00:00.0000000Z"`},
		{`DateTimeBin(` + bin + `, "dd", 7, "1601-01-01T00:00:00.0000000")`, `"2021-01-04T00:00:00.0000000Z"`},
	} {
		if got := valueOf(t, tt.expr); got != tt.want {
			t.Errorf("%s = %s, want %s", tt.expr, got, tt.want)
		}
	}
}

// The pages' remarks: undefined for an unknown part, a number that is not an
// integer, and a string that is not an ISO 8601 date and time; the part names and
// abbreviations of the tables; the emulator's choices where the pages say nothing.
func TestDateTimeFunctionsEdges(t *testing.T) {
	for _, tt := range []struct{ expr, want string }{
		{`DateTimeAdd("fortnight", 1, "2020-07-03T00:00:00Z")`, `undefined`},
		{`DateTimeAdd("dd", 1.5, "2020-07-03T00:00:00Z")`, `undefined`},
		{`DateTimeAdd("dd", "1", "2020-07-03T00:00:00Z")`, `undefined`},
		{`DateTimeAdd("dd", 1, "2020-07-03")`, `undefined`},
		{`DateTimeAdd("dd", 1, "2020-02-30T00:00:00Z")`, `undefined`},
		{`DateTimeAdd("dd", 1, "2020-07-03T24:00:00Z")`, `undefined`},
		{`DateTimeAdd("dd", 1, "2020-07-03T00:00:00+01:00")`, `undefined`},
		{`DateTimeAdd("dd", 1, "2020-07-03T00:00:00.12345678Z")`, `undefined`},
		{`DateTimeAdd("dd", 1, 20200703)`, `undefined`},
		{`DateTimeAdd("dd", 1, c.missing)`, `undefined`},
		// Every documented name and abbreviation, fractions of 1 to 7 digits, Z optional.
		{`[DateTimeAdd("year", 1, "2020-01-01T00:00:00Z"), DateTimeAdd("yy", 1, "2020-01-01T00:00:00Z")]`, `["2021-01-01T00:00:00.0000000Z","2021-01-01T00:00:00.0000000Z"]`},
		{`[DateTimeAdd("month", 1, "2020-01-01T00:00:00Z"), DateTimeAdd("m", 1, "2020-01-01T00:00:00Z")]`, `["2020-02-01T00:00:00.0000000Z","2020-02-01T00:00:00.0000000Z"]`},
		{`[DateTimeAdd("day", 1, "2020-01-01T00:00:00Z"), DateTimeAdd("d", 1, "2020-01-01T00:00:00Z")]`, `["2020-01-02T00:00:00.0000000Z","2020-01-02T00:00:00.0000000Z"]`},
		{`[DateTimeAdd("hour", 1, "2020-01-01T00:00:00Z"), DateTimeAdd("minute", 1, "2020-01-01T00:00:00Z"), DateTimeAdd("n", 1, "2020-01-01T00:00:00Z")]`, `["2020-01-01T01:00:00.0000000Z","2020-01-01T00:01:00.0000000Z","2020-01-01T00:01:00.0000000Z"]`},
		{`[DateTimeAdd("second", 1, "2020-01-01T00:00:00.5Z"), DateTimeAdd("s", 1, "2020-01-01T00:00:00.5Z")]`, `["2020-01-01T00:00:01.5000000Z","2020-01-01T00:00:01.5000000Z"]`},
		{`[DateTimeAdd("millisecond", 1, "2020-01-01T00:00:00Z"), DateTimeAdd("mcs", 1, "2020-01-01T00:00:00Z"), DateTimeAdd("ns", 100, "2020-01-01T00:00:00Z")]`, `["2020-01-01T00:00:00.0010000Z","2020-01-01T00:00:00.0000010Z","2020-01-01T00:00:00.0000001Z"]`},
		// Month ends: the day is kept where the month has it, else its last day.
		{`DateTimeAdd("mm", 1, "2021-01-31T10:00:00Z")`, `"2021-02-28T10:00:00.0000000Z"`},
		{`DateTimeAdd("yyyy", 1, "2020-02-29T00:00:00Z")`, `"2021-02-28T00:00:00.0000000Z"`},
		{`DateTimeAdd("mm", -13, "2021-03-31T00:00:00Z")`, `"2020-02-29T00:00:00.0000000Z"`},
		// Past year 9999 or before year 1: undefined.
		{`DateTimeAdd("yyyy", 1, "9999-06-01T00:00:00Z")`, `undefined`},
		{`DateTimeAdd("dd", -1, "0001-01-01T00:00:00Z")`, `undefined`},
		{`DateTimeAdd("ss", 9223372036854775807, "2020-01-01T00:00:00Z")`, `undefined`},
		{`DateTimeAdd("ns", 9223372036854775807, "2020-01-01T00:00:00Z")`, `"2312-04-11T23:47:16.8547758Z"`},
		// Boundaries crossed, not elapsed time.
		{`DateTimeDiff("dd", "2020-01-01T23:59:59Z", "2020-01-02T00:00:00Z")`, `1`},
		{`DateTimeDiff("yyyy", "2020-12-31T23:59:59Z", "2021-01-01T00:00:00Z")`, `1`},
		{`DateTimeDiff("ms", "2020-01-01T00:00:00.0009999Z", "2020-01-01T00:00:00.0010000Z")`, `1`},
		{`DateTimeDiff("ns", "2020-01-01T00:00:00Z", "2020-01-01T00:00:00.0000001Z")`, `100`},
		{`DateTimeDiff("mi", "1969-12-31T23:59:30Z", "1970-01-01T00:00:30Z")`, `1`},
		{`DateTimeDiff("dd", "x", "2020-01-01T00:00:00Z")`, `undefined`},
		{`DateTimePart("DD", "2020-01-05T00:00:00Z")`, `5`},
		{`DateTimePart("week", "2020-01-05T00:00:00Z")`, `undefined`},
		{`DateTimeFromParts(2021, 2, 29)`, `undefined`},
		{`DateTimeFromParts(2021, 2, 28, 24)`, `undefined`},
		{`DateTimeFromParts(2021, 2, 28, 1, 2, 3, 10000000)`, `undefined`},
		{`DateTimeFromParts(2021, 2, 28.5)`, `undefined`},
		{`DateTimeToTicks("0001-01-01T00:00:00Z")`, `-621355968000000000`},
		{`TicksToDateTime(DateTimeToTicks("9999-12-31T23:59:59.9999999Z"))`, `"9999-12-31T23:59:59.9999999Z"`},
		{`TicksToDateTime(DateTimeToTicks("9999-12-31T23:59:59.9999999Z") + 1)`, `undefined`},
		{`TicksToDateTime("0")`, `undefined`},
		{`DateTimeToTimestamp("1969-12-31T23:59:59.9995Z")`, `-1`},
		{`DateTimeBin("2021-01-08T18:35:00Z", "mm")`, `undefined`},
		{`DateTimeBin("2021-01-08T18:35:00Z", "hh", 0)`, `undefined`},
		{`DateTimeBin("2021-01-08T18:35:00Z", "hh", -1)`, `undefined`},
		{`DateTimeBin("2021-01-08T18:35:00Z", "dd", 1, "1600-12-31T00:00:00Z")`, `undefined`},
		{`DateTimeBin("1969-12-31T18:35:00Z", "dd")`, `"1969-12-31T00:00:00.0000000Z"`},
		{`DateTimeBin("2021-01-08T18:35:00.1234567Z", "ns", 300)`, `"2021-01-08T18:35:00.1234566Z"`},
		{`DateTimeBin("2021-01-08T18:35:00.1234567Z", "ms", 250)`, `"2021-01-08T18:35:00.0000000Z"`},
	} {
		if got := valueOf(t, tt.expr); got != tt.want {
			t.Errorf("%s = %s, want %s", tt.expr, got, tt.want)
		}
	}
}

// The current-time functions read the clock the query is bound with: the static
// ones once per binding (Learn: "called once per partition"), the others at every
// call, so a clock that moves between documents gives each document its own value.
func TestCurrentTimeFunctionsReadTheBoundClock(t *testing.T) {
	start := time.Date(2026, 12, 5, 19, 0, 0, 123456789, time.UTC)
	now := start
	clock := func() time.Time {
		t := now
		now = now.Add(time.Second) // every reading moves the clock on
		return t
	}
	q, err := ParseQuery(`SELECT c.id, GetCurrentDateTime() AS dt, GetCurrentDateTimeStatic() AS dts,
		GetCurrentTicks() AS ticks, GetCurrentTicksStatic() AS tickss,
		GetCurrentTimestamp() AS ts, GetCurrentTimestampStatic() AS tss FROM c`)
	if err != nil {
		t.Fatal(err)
	}
	p, err := q.BindWith(nil, BindOptions{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := p.Run(docsOf([]string{`{"id":"a"}`, `{"id":"b"}`}))
	if err != nil {
		t.Fatal(err)
	}
	// The binding read 19:00:00.1234567 (the nanoseconds below a tick dropped); the
	// first document's three calls read :01, :02, :03, the second's :04, :05, :06.
	want := `{"id":"a","dt":"2026-12-05T19:00:01.1234567Z","dts":"2026-12-05T19:00:00.1234567Z",` +
		`"ticks":17964972021234567,"tickss":17964972001234567,"ts":1796497203123,"tss":1796497200123},` +
		`{"id":"b","dt":"2026-12-05T19:00:04.1234567Z","dts":"2026-12-05T19:00:00.1234567Z",` +
		`"ticks":17964972051234567,"tickss":17964972001234567,"ts":1796497206123,"tss":1796497200123}`
	if got := string(joinRows(rows)); got != want {
		t.Errorf("rows\n%s\nwant\n%s", got, want)
	}
}
