package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/health"
	"github.com/cosmosctl/cosmosctl/internal/jsonenc"
)

// causes in the order a failure breakdown lists them when counts tie.
var causes = []health.Cause{health.Timeout, health.Unreachable, health.Unavailable, health.ServerError, health.RequestTimeout, health.Gone}

// causeWords are the singular and plural of a cause in a breakdown: "3 timeouts, 1 503".
// Statuses are shown as numbers, the way operators read them in the portal and the logs.
var causeWords = map[health.Cause][2]string{
	health.Timeout:        {"timeout", "timeouts"},
	health.Unreachable:    {"unreachable", "unreachable"},
	health.Unavailable:    {"503", "503s"},
	health.ServerError:    {"500", "500s"},
	health.RequestTimeout: {"408", "408s"},
	health.Gone:           {"410", "410s"},
}

// FailureBreakdown is a count of failures by cause, most frequent first: "3 timeouts",
// "2 timeouts, 1 503"; "" when there are none.
func FailureBreakdown(failures map[health.Cause]int) string {
	var parts []string
	ordered := make([]health.Cause, 0, len(causes))
	for _, c := range causes {
		if failures[c] > 0 {
			ordered = append(ordered, c)
		}
	}
	// Most frequent first, the order of causes breaking ties: a handful of items.
	for i := 1; i < len(ordered); i++ {
		for j := i; j > 0 && failures[ordered[j]] > failures[ordered[j-1]]; j-- {
			ordered[j], ordered[j-1] = ordered[j-1], ordered[j]
		}
	}
	for _, c := range ordered {
		n := failures[c]
		w := causeWords[c][1]
		if n == 1 {
			w = causeWords[c][0]
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, w))
	}
	return strings.Join(parts, ", ")
}

// ClockTime is t as a local time of day, with the date when t is not today: "12:03:06",
// "Mar 4 23:59:10".
func ClockTime(t, now time.Time) string {
	lt, ln := t.Local(), now.Local()
	if lt.YearDay() == ln.YearDay() && lt.Year() == ln.Year() {
		return lt.Format("15:04:05")
	}
	return lt.Format("Jan 2 15:04:05")
}

// ClockTimeFrom is t as ClockTime with how far it is from now: "12:03:01 (4s ago)",
// "12:03:06 (in 2s)"; dash for a zero t.
func ClockTimeFrom(t, now time.Time, dash string) string {
	if t.IsZero() {
		return dash
	}
	d := now.Sub(t)
	if d < 0 {
		return ClockTime(t, now) + " (in " + roughDuration(-d) + ")"
	}
	return ClockTime(t, now) + " (" + roughDuration(d) + " ago)"
}

// roughDuration is a duration to the unit that matters for a person reading a clock:
// "0s", "4s", "2m10s", "3h5m", "2d".
func roughDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
	case d < 10*time.Minute:
		d = d.Round(time.Second)
		if d%time.Minute == 0 {
			return fmt.Sprintf("%dm", int(d/time.Minute))
		}
		return fmt.Sprintf("%dm%ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Round(time.Minute)/time.Minute))
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		if d%time.Hour == 0 {
			return fmt.Sprintf("%dh", int(d/time.Hour))
		}
		return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// WriteHealthTable writes the region health that `cosmosctl health` shows, one row per
// region, partition key range and kind of operation, times as local clock times with
// how long ago (or how soon) they are. cfg is the health configuration in effect (its
// thresholds make the notes). On a terminal too narrow for the whole table (st.Width) the
// NOTE column moves under the table, one line per note, rather than every row wrapping;
// then the times give up their clock time for how long ago they are, the last success,
// the hedge losses and the last failure go, the failures are cut, and the end of
// unavailability goes.
func WriteHealthTable(w io.Writer, st Styles, entries []health.Entry, cfg health.Config, now time.Time) error {
	dash := st.None()
	const noteColumn = 9
	t := NewTableOf(w, st,
		Column{Header: "REGION", Key: true, Priority: 9, Min: 10},
		Column{Header: "RANGE", Key: true},
		Column{Header: "KIND", Key: true},
		Column{Header: "STATUS", Key: true},
		Column{Header: "FAILURES", Key: true, Priority: 5, Min: 8},
		Column{Header: "LAST FAILURE", Priority: 4, Abbrev: sinceOnly},
		Column{Header: "UNAVAILABLE UNTIL", Short: "UNTIL", Priority: 6, Abbrev: sinceOnly},
		Column{Header: "HEDGE LOSSES", Short: "LOSSES", Priority: 3, Right: true},
		Column{Header: "LAST SUCCESS", Priority: 2, Abbrev: sinceOnly},
		Column{Header: "NOTE", Priority: 1, Elsewhere: true},
	)
	notes := make([]string, len(entries))
	for i, e := range entries {
		rng := e.PartitionKeyRangeID
		if rng == "" {
			rng = dash
		}
		status := string(e.Status)
		switch e.Status {
		case health.StatusUnavailable:
			status = st.Bad(status)
		case health.StatusProbing:
			status = st.Warn(status)
		}
		failures := FailureBreakdown(e.Failures)
		if failures == "" {
			failures = "0"
		}
		lastFailure := ClockTimeFrom(e.LastFailure, now, dash)
		until := dash
		if e.Status != health.StatusAvailable {
			until = ClockTimeFrom(e.UnavailableUntil, now, dash)
		}
		notes[i] = HealthNote(e, cfg, now)
		t.Append(e.Region, rng, e.Kind.String(), status, failures, lastFailure, until,
			fmt.Sprint(e.HedgeLossStreak), ClockTimeFrom(e.LastSuccess, now, dash), orDefault(notes[i], dash))
	}
	if err := t.Render(); err != nil || !t.Hidden(noteColumn) {
		return err
	}
	var b bytes.Buffer
	first := true
	for i, n := range notes {
		if n == "" {
			continue
		}
		if first {
			b.WriteString("\n")
			first = false
		}
		where := entries[i].Region
		if entries[i].PartitionKeyRangeID != "" {
			where += " range " + entries[i].PartitionKeyRangeID
		}
		// A note too long for the terminal continues under itself, indented.
		for _, line := range wrapHanging(fmt.Sprintf("%s %s: %s", where, entries[i].Kind, n), st.Width, 2) {
			fmt.Fprintf(&b, "%s\n", line)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// sinceOnly keeps how long ago (or how soon) of a ClockTimeFrom: "4s ago" of
// "12:03:00 (4s ago)".
func sinceOnly(s string) string {
	open := strings.LastIndex(s, " (")
	if open < 0 || !strings.HasSuffix(s, ")") {
		return s
	}
	return s[open+2 : len(s)-1]
}

// HealthNote says what happens next to a key: when it is used again, or how close it is
// to being made unavailable. "" when nothing has gone wrong there.
func HealthNote(e health.Entry, cfg health.Config, now time.Time) string {
	var parts []string
	switch e.Status {
	case health.StatusProbing, health.StatusUnavailable:
		switch {
		case e.Status == health.StatusProbing:
			parts = append(parts, "used last; one probe request in flight")
		case now.Before(e.UnavailableUntil):
			parts = append(parts, "used last, then one probe request")
		default:
			parts = append(parts, "used last; the next request probes it")
		}
		if e.FailedProbes > 0 {
			parts = append(parts, fmt.Sprintf("%d failed %s, period %s", e.FailedProbes, pluralWord(e.FailedProbes, "probe", "probes"),
				roughDuration(time.Duration(e.ProbeIntervalMs*float64(time.Millisecond)))))
		}
		if cfg.HedgeLosses > 0 && e.HedgeLossStreak >= cfg.HedgeLosses {
			parts = append(parts, fmt.Sprintf("lost %d hedge races in a row", e.HedgeLossStreak))
		}
	default:
		limit := cfg.ReadFailures
		if e.Kind == health.Write {
			limit = cfg.WriteFailures
		}
		n := 0
		for _, c := range e.Failures {
			n += c
		}
		if n > 0 && limit > 0 {
			left := limit + 1 - n
			parts = append(parts, fmt.Sprintf("%d more %s %s it unavailable", left, pluralWord(left, "failure", "failures"), pluralWord(left, "makes", "make")))
		}
		if e.HedgeLossStreak > 0 && cfg.HedgeLosses > 0 {
			left := cfg.HedgeLosses - e.HedgeLossStreak
			parts = append(parts, fmt.Sprintf("%d more hedge %s in a row %s it unavailable", left, pluralWord(left, "loss", "losses"), pluralWord(left, "makes", "make")))
		}
	}
	return strings.Join(parts, "; ")
}

// RegionHealth is what is remembered of one region's health for reads and for writes,
// as `cosmosctl regions` shows it.
type RegionHealth struct {
	Read  KindHealth `json:"read"`
	Write KindHealth `json:"write"`
}

// KindHealth is a region's health for one kind of operation: the region-wide record,
// and the partition key ranges of the region that are unavailable on their own.
type KindHealth struct {
	Status           health.Status
	Failures         map[health.Cause]int
	HedgeLossStreak  int
	UnavailableUntil time.Time
	// UnavailableRanges are partition key ranges unavailable while the region as a
	// whole is not.
	UnavailableRanges []string
}

// KindHealthJSON is a KindHealth as JSON.
type KindHealthJSON struct {
	Status health.Status `json:"status"`
	// Failures counts the failures of the current window by cause (health.CauseCounts).
	Failures        map[string]int `json:"failures"`
	HedgeLossStreak int            `json:"hedge_loss_streak"`
	// UnavailableUntilAt is null while the region is available.
	UnavailableUntilAt *time.Time `json:"unavailable_until_at"`
	// UnavailablePartitionKeyRanges are the ranges unavailable on their own.
	UnavailablePartitionKeyRanges []string `json:"unavailable_partition_key_ranges"`
}

// MarshalJSON writes the health as KindHealthJSON.
func (k KindHealth) MarshalJSON() ([]byte, error) {
	j := KindHealthJSON{Status: k.Status, Failures: health.CauseCounts(k.Failures), HedgeLossStreak: k.HedgeLossStreak,
		UnavailableUntilAt: health.TimeOrNull(k.UnavailableUntil), UnavailablePartitionKeyRanges: k.UnavailableRanges}
	if j.UnavailablePartitionKeyRanges == nil {
		j.UnavailablePartitionKeyRanges = []string{}
	}
	return jsonenc.Marshal(j)
}

// JSONSchemaAlias is the type the health's JSON schema is generated from.
func (KindHealth) JSONSchemaAlias() any { return KindHealthJSON{} }

// UnmarshalJSON reads a health written by MarshalJSON.
func (k *KindHealth) UnmarshalJSON(b []byte) error {
	var j KindHealthJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	failures, err := health.CausesOf(j.Failures)
	if err != nil {
		return err
	}
	*k = KindHealth{Status: j.Status, Failures: failures, HedgeLossStreak: j.HedgeLossStreak, UnavailableRanges: j.UnavailablePartitionKeyRanges}
	if j.UnavailableUntilAt != nil {
		k.UnavailableUntil = *j.UnavailableUntilAt
	}
	return nil
}

// RegionHealthOf picks region's records out of a health store's Entries.
func RegionHealthOf(entries []health.Entry, region string) RegionHealth {
	h := RegionHealth{
		Read:  KindHealth{Status: health.StatusAvailable, Failures: map[health.Cause]int{}},
		Write: KindHealth{Status: health.StatusAvailable, Failures: map[health.Cause]int{}},
	}
	for _, e := range entries {
		if e.Region != region {
			continue
		}
		k := &h.Read
		if e.Kind == health.Write {
			k = &h.Write
		}
		if e.PartitionKeyRangeID != "" {
			if e.Status != health.StatusAvailable {
				k.UnavailableRanges = append(k.UnavailableRanges, e.PartitionKeyRangeID)
			}
			continue
		}
		k.Status, k.HedgeLossStreak = e.Status, e.HedgeLossStreak
		if e.Failures != nil {
			k.Failures = e.Failures
		}
		if e.Status != health.StatusAvailable {
			k.UnavailableUntil = e.UnavailableUntil
		}
	}
	return h
}

// Text is the region's health in one cell: "available" when reads and writes are, else
// each kind's state, e.g. "reads: unavailable until 12:03:06 (3 timeouts); writes:
// available".
func (h RegionHealth) Text(now time.Time) string {
	r, w := h.Read.Text(now), h.Write.Text(now)
	if r == w {
		return r
	}
	return "reads: " + r + "; writes: " + w
}

// Text is one kind's health: "available", "available (2 timeouts)", "unavailable until
// 12:03:06 (3 timeouts)", "unavailable, probe due (3 timeouts)", "probing (3 timeouts)".
func (k KindHealth) Text(now time.Time) string {
	var s string
	switch k.Status {
	case health.StatusUnavailable:
		if now.Before(k.UnavailableUntil) {
			s = "unavailable until " + ClockTime(k.UnavailableUntil, now)
		} else {
			s = "unavailable, probe due"
		}
	case health.StatusProbing:
		s = "probing"
	default:
		s = "available"
	}
	why := FailureBreakdown(k.Failures)
	if k.HedgeLossStreak > 0 {
		lost := fmt.Sprintf("%d hedge %s lost", k.HedgeLossStreak, pluralWord(k.HedgeLossStreak, "race", "races"))
		why = strings.Join(nonEmpty(why, lost), ", ")
	}
	if why != "" {
		s += " (" + why + ")"
	}
	if n := len(k.UnavailableRanges); n > 0 {
		s += fmt.Sprintf(", %d partition key %s unavailable", n, pluralWord(n, "range", "ranges"))
	}
	return s
}

func nonEmpty(ss ...string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
