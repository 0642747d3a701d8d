package health

import (
	"fmt"
	"strings"
	"time"
)

// noteLocked says why region is unavailable, from the entry (of es: region level,
// range level) that stays unavailable longest.
// granted says the note is for the operation granted the probe.
func (s *Store) noteLocked(region, rangeID string, es [2]*entry, now time.Time, granted bool) string {
	e, where := es[0], region
	if !isDown(e) || (isDown(es[1]) && es[1].until.After(e.until)) {
		e, where = es[1], region+", partition key range "+rangeID
	}
	return where + ": " + s.describeLocked(e, now, granted)
}

// describeLocked is the note of an unavailable entry, without its region: what went
// wrong, then when it may be tried again.
func (s *Store) describeLocked(e *entry, now time.Time, granted bool) string {
	var parts []string
	if what := failuresText(e); what != "" {
		parts = append(parts, what)
	}
	if e.hedgeLosses > 0 {
		parts = append(parts, fmt.Sprintf("lost %d hedge %s in a row%s", e.hedgeLosses,
			plural(e.hedgeLosses, "race", "races"), span(e.hedgeLossesSince, e.lastHedgeLoss)))
	}
	if e.failedProbes > 0 {
		parts = append(parts, fmt.Sprintf("%d failed %s", e.failedProbes, plural(e.failedProbes, "probe", "probes")))
	}
	switch {
	case granted:
		parts = append(parts, "unavailable, its period over: probed now")
	case now.Before(e.until):
		parts = append(parts, "unavailable until "+clockTime(e.until)+", then one probe request")
	case e.probeHeld && !s.probeStale(e, now):
		parts = append(parts, "unavailable; one probe request in flight since "+clockTime(e.probeSince))
	default:
		parts = append(parts, "unavailable; the next request probes it")
	}
	return strings.Join(parts, ", ")
}

// failuresText is "3 timeouts in 40s" or "2 timeouts and 1 503 in 12s": the counts of
// the current window, most frequent cause first.
func failuresText(e *entry) string {
	var causes []Cause
	for c := Cause(1); c < numCauses; c++ {
		if e.failures[c] > 0 {
			causes = append(causes, c)
		}
	}
	if len(causes) == 0 {
		return ""
	}
	// Most frequent first; the enum order breaks ties. A handful of causes: insertion sort.
	for i := 1; i < len(causes); i++ {
		for j := i; j > 0 && e.failures[causes[j]] > e.failures[causes[j-1]]; j-- {
			causes[j], causes[j-1] = causes[j-1], causes[j]
		}
	}
	words := make([]string, len(causes))
	for i, c := range causes {
		n := e.failures[c]
		words[i] = fmt.Sprintf("%d %s", n, plural(n, causeNouns[c][0], causeNouns[c][1]))
	}
	text := words[0]
	if len(words) > 1 {
		text = strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
	}
	return text + span(e.failuresSince, e.lastFailure)
}

// span is " in 40s", the time from the first to the last event of a count, or nothing
// when they are at the same instant.
func span(first, last time.Time) string {
	d := last.Sub(first)
	switch {
	case first.IsZero() || d <= 0:
		return ""
	case d < time.Second:
		return " in " + d.Round(time.Millisecond).String()
	}
	return " in " + d.Round(time.Second).String()
}

// clockTime is the time of day of t, in UTC: "12:03:06".
func clockTime(t time.Time) string { return t.UTC().Format("15:04:05") }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
