package output

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

// shortActivityID is how much of an activity id the table shows: enough to tell attempts
// apart and to grep logs; the JSON carries the full id for a support ticket.
const shortActivityID = 8

// WriteDiagnostics writes the per-attempt account of one operation for a person (stderr):
// what was configured, one row per request on the wire with a timeline, and what came of
// it. Scripts read the same data as JSON (ResultJSON); nothing here is meant to be parsed.
func WriteDiagnostics(w io.Writer, d *engine.Diagnostics, st Styles) error {
	if d == nil {
		return nil
	}
	sym := st.sym()
	ew := &errWriter{w: w}

	// What the operation was asked to do, and where it was allowed to go.
	head := &labelled{st: st, width: st.Width}
	head.add("operation", describeOperation(d))
	head.add("hedging", orDefault(d.HedgeConfig, "off"))
	switch d.ConnectionMode {
	case "direct":
		// Gateway mode is the default and says nothing new; direct mode changes where
		// every attempt goes.
		head.add("connection mode", "direct (to the replicas)")
	case "gateway2":
		head.add("connection mode", "gateway2 (point operations to the Gateway 2.0 proxies)")
	}
	head.add("effective regions", list(d.EffectiveRegions, sym.arrow))
	if len(d.HealthOrder) > 0 {
		head.add("health order", st.Warn(list(d.HealthOrder, sym.arrow)+" (unavailable regions last: see notes)"))
	}
	head.add("excluded regions", list(d.ExcludedRegions, ", "))
	if d.E2ETimeout > 0 {
		head.add("end-to-end timeout", HumanDuration(d.E2ETimeout))
	}
	if d.Fallback != "" {
		head.add("fallback", st.Warn(d.Fallback))
	}
	head.write(ew)
	ew.printf("\n")

	// What went on the wire. On a narrow terminal the activity id goes first (the JSON
	// has it in full), then the request charge (the total is under the table), the
	// reason and the start (the timeline shows both); the timeline itself shrinks
	// before any of them goes. The region, duration, status and outcome always stay.
	total := timelineSpan(d)
	span := "0" + sym.rangeTo + HumanDuration(total)
	// SERVER is the service's own part of DURATION (x-ms-request-duration-ms), shown
	// when an answer carried it: the difference is the network and the client. It
	// goes before the timeline and after the reason when the terminal is narrow.
	server := serverColumn(d)
	cols := []Column{
		{Header: "#", Key: true, Right: true},
		{Header: "REGION", Key: true, Priority: 9, Min: 10},
		{Header: "REASON", Priority: 3},
		{Header: "START", Priority: 4, Right: true},
		{Header: "DURATION", Key: true, Right: true},
	}
	if server {
		// NET is DURATION minus SERVER: the network, queueing and the client.
		cols = append(cols, Column{Header: "SERVER", Priority: 4, Right: true}, Column{Header: "NET", Priority: 4, Right: true})
	}
	cols = append(cols, Column{Header: "STATUS", Key: true})
	// REPLICA is where a direct-mode attempt went: the replica's id, its role and the
	// transport that carried it ("1p primary rntbd").
	replicas := replicaColumn(d)
	if replicas {
		cols = append(cols, Column{Header: "REPLICA", Priority: 3})
	}
	// RANGE is the partition key range that answered, when the answers said.
	ranges := rangeColumn(d)
	if ranges {
		cols = append(cols, Column{Header: "RANGE", Priority: 2, Right: true})
	}
	cols = append(cols,
		Column{Header: "RU", Priority: 2, Right: true},
		Column{Header: "OUTCOME", Key: true},
		Column{Header: "TIMELINE " + span, Short: span, Name: "timeline", Priority: 5, Min: timelineMin, Fill: func(row, width int) string {
			a := d.Attempts[row]
			return paintOutcome(st, a.Outcome, timeline(a, total, sym, width))
		}},
		Column{Header: "ACTIVITY ID", Priority: 1},
	)
	t := NewTableOf(ew, st, cols...)
	for _, a := range d.Attempts {
		row := []string{
			strconv.Itoa(a.N),
			a.Region,
			string(a.Reason),
			"+" + HumanDuration(a.Start),
			attemptDuration(a, sym),
		}
		if server {
			row = append(row, serverDuration(a, sym), networkDuration(a, sym))
		}
		row = append(row, attemptStatus(a, sym))
		if replicas {
			row = append(row, replicaCell(a, sym))
		}
		if ranges {
			row = append(row, orDefault(a.PartitionKeyRangeID, sym.dash))
		}
		row = append(row,
			charge(a, sym),
			paintOutcome(st, a.Outcome, string(a.Outcome)),
			paintOutcome(st, a.Outcome, timeline(a, total, sym, TimelineWidth)),
			orDefault(truncate(a.ActivityID, shortActivityID), sym.dash),
		)
		t.Append(row...)
	}
	if len(d.Attempts) == 0 {
		ew.printf("%s\n", st.Faint("no request was sent"))
	} else if err := t.Render(); err != nil {
		return err
	}
	ew.printf("\n")

	// What came of it.
	tail := &labelled{st: st, width: st.Width}
	tail.add("contacted regions", list(d.ContactedRegions, ", "))
	tail.add("responded regions", list(d.RespondedRegions, ", "))
	tail.add("winner", winner(d, st))
	tail.add("request charge", totalCharge(d))
	tail.add("duration", HumanDuration(d.Duration))
	if words := statusWords(d); words != "" {
		tail.add("statuses", words)
	}
	if t := throttling(d); t != "" {
		tail.add("throttled", st.Warn(t))
	}
	if d.TimedOut {
		tail.add("timed out", paintLines(st.Bad, timeoutSummary(d)))
	}
	if notes := diagnosticNotes(d); len(notes) > 0 {
		tail.add("notes", strings.Join(notes, "\n"))
	}
	tail.write(ew)
	return ew.err
}

// describeOperation reads as a sentence: read "order-1" in shop/orders, partition key ["alice"].
func describeOperation(d *engine.Diagnostics) string {
	var b strings.Builder
	b.WriteString(string(d.Operation))
	if d.ID != "" {
		b.WriteString(" " + strconv.Quote(d.ID))
	}
	if d.Database != "" || d.Container != "" {
		b.WriteString(" in " + d.Database + "/" + d.Container)
	}
	if len(d.PartitionKey) > 0 {
		b.WriteString(", partition key " + string(d.PartitionKey))
	}
	return b.String()
}

func attemptDuration(a engine.Attempt, sym symbols) string {
	if a.Outcome == engine.OutcomeInFlight {
		return sym.dash
	}
	return HumanDuration(a.Duration)
}

// serverColumn reports whether any attempt's answer said how long the service took.
func serverColumn(d *engine.Diagnostics) bool {
	for _, a := range d.Attempts {
		if a.ServerDuration > 0 {
			return true
		}
	}
	return false
}

// serverDuration is the service's own time for an attempt, a dash when its answer did
// not say (or there was none).
func serverDuration(a engine.Attempt, sym symbols) string {
	if a.ServerDuration <= 0 {
		return sym.dash
	}
	return HumanDuration(a.ServerDuration)
}

// networkDuration is an attempt's time outside the service: its duration minus the
// service's own, a dash when the service did not say.
func networkDuration(a engine.Attempt, sym symbols) string {
	if a.ServerDuration <= 0 || a.Outcome == engine.OutcomeInFlight {
		return sym.dash
	}
	return HumanDuration(max(a.Duration-a.ServerDuration, 0))
}

// rangeColumn reports whether any answer named its partition key range.
func replicaColumn(d *engine.Diagnostics) bool {
	for _, a := range d.Attempts {
		if a.Replica != "" {
			return true
		}
	}
	return false
}

// replicaCell names an attempt's replica by its id (the address's last segment, "1p"),
// its role and its transport; a gateway attempt has none.
func replicaCell(a engine.Attempt, sym symbols) string {
	if a.Replica == "" {
		return sym.dash
	}
	id := strings.TrimSuffix(a.Replica, "/")
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	return strings.Join(nonEmpty(id, a.ReplicaRole, a.Transport), " ")
}

func rangeColumn(d *engine.Diagnostics) bool {
	for _, a := range d.Attempts {
		if a.PartitionKeyRangeID != "" {
			return true
		}
	}
	return false
}

// statusWords puts each status other than a success that the attempts met into words,
// once each, in the order met (cosmosctl help statuses lists them all).
func statusWords(d *engine.Diagnostics) string {
	var lines []string
	seen := map[[2]int]bool{}
	for _, a := range d.Attempts {
		k := [2]int{a.StatusCode, a.SubStatus}
		if a.StatusCode < 300 || seen[k] {
			continue
		}
		seen[k] = true
		lines = append(lines, status(a.StatusCode, a.SubStatus, symbols{})+": "+cosmos.StatusWords(a.StatusCode, a.SubStatus))
	}
	return strings.Join(lines, "\n")
}

// throttling sums the 429s apart from the charge: how many, the waits they asked for
// and the time the engine waited after them.
func throttling(d *engine.Diagnostics) string {
	n := 0
	var asked, waited time.Duration
	for _, a := range d.Attempts {
		if a.StatusCode == 429 {
			n++
			asked += a.RetryAfter
			waited += a.Waited
		}
	}
	if n == 0 {
		return ""
	}
	s := fmt.Sprintf("%d attempt", n)
	if n > 1 {
		s += "s"
	}
	return s + fmt.Sprintf(" answered 429; retry-after asked %s in all, waited %s", HumanDuration(asked), HumanDuration(waited))
}

// attemptStatus is the attempt's status, or "timeout" when its own timeout expired.
func attemptStatus(a engine.Attempt, sym symbols) string {
	if a.StatusCode == 0 && a.TimedOut {
		return "timeout"
	}
	return status(a.StatusCode, a.SubStatus, sym)
}

func status(code, sub int, sym symbols) string {
	switch {
	case code == 0:
		return sym.dash
	case sub == 0:
		return strconv.Itoa(code)
	default:
		return fmt.Sprintf("%d/%d", code, sub)
	}
}

// charge shows a dash for an attempt that got no response: its charge is unknown, not
// zero (a cancelled read may still have been billed by the service).
func charge(a engine.Attempt, sym symbols) string {
	if a.StatusCode == 0 && a.RequestCharge == 0 {
		return sym.dash
	}
	return fmt.Sprintf("%.2f", a.RequestCharge)
}

func paintOutcome(st Styles, o engine.Outcome, text string) string {
	switch o {
	case engine.OutcomeWon:
		return st.Good(text)
	case engine.OutcomeFailed:
		return st.Bad(text)
	case engine.OutcomeCancelled:
		return st.Warn(text)
	case engine.OutcomeLost:
		return st.Faint(text)
	}
	return text
}

func winner(d *engine.Diagnostics, st Styles) string {
	if d.WinningRegion == "" {
		return st.Bad("none")
	}
	return st.Good(fmt.Sprintf("%s (attempt %d)", d.WinningRegion, d.WinningAttempt))
}

// totalCharge states the whole bill, and how much of it bought nothing: the answers that
// lost a hedge race are the price of the lower tail latency.
func totalCharge(d *engine.Diagnostics) string {
	s := fmt.Sprintf("%.2f RU total", d.RequestCharge)
	var extra float64
	for _, a := range d.Attempts {
		if a.N != d.WinningAttempt {
			extra += a.RequestCharge
		}
	}
	if extra > 0 && d.WinningAttempt != 0 {
		s += fmt.Sprintf(" (%.2f RU from attempts that did not win)", extra)
	}
	return s
}

func timeoutSummary(d *engine.Diagnostics) string {
	var b strings.Builder
	if d.E2ETimeout > 0 {
		fmt.Fprintf(&b, "the end-to-end timeout of %s expired", HumanDuration(d.E2ETimeout))
	} else {
		b.WriteString("the end-to-end timeout expired")
	}
	fmt.Fprintf(&b, " after %s with no final answer", HumanDuration(d.Duration))
	for _, a := range d.Attempts {
		fmt.Fprintf(&b, "\n#%d %s: %s", a.N, a.Region, attemptState(a))
	}
	return b.String()
}

func attemptState(a engine.Attempt) string {
	switch a.Outcome {
	case engine.OutcomeInFlight:
		return "still in flight"
	case engine.OutcomeCancelled:
		return "cancelled after " + HumanDuration(a.Duration)
	case engine.OutcomeFailed:
		if a.StatusCode != 0 {
			return fmt.Sprintf("failed with %s", status(a.StatusCode, a.SubStatus, symbols{}))
		}
		return "failed with no response"
	default:
		return fmt.Sprintf("%s with %s", a.Outcome, status(a.StatusCode, a.SubStatus, symbols{dash: "no status"}))
	}
}

// diagnosticNotes are the attempts' errors and decisions, in attempt order, then the
// engine's own notes.
func diagnosticNotes(d *engine.Diagnostics) []string {
	var notes []string
	for _, a := range d.Attempts {
		if a.Error != "" {
			notes = append(notes, fmt.Sprintf("#%d %s: %s", a.N, a.Region, a.Error))
		}
		if a.Note != "" {
			notes = append(notes, fmt.Sprintf("#%d %s", a.N, a.Note))
		}
	}
	return append(notes, d.Notes...)
}

// paintLines colours each line on its own: lipgloss pads a multi-line block to a
// rectangle, which would leave trailing blanks.
func paintLines(paint func(string) string, text string) string {
	lines := strings.Split(text, "\n")
	for i := range lines {
		lines[i] = paint(lines[i])
	}
	return strings.Join(lines, "\n")
}

func list(items []string, sep string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, sep)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// labelled is a block of "label   value" lines with the values aligned. With a width
// (a terminal), a value too long for its line wraps, under itself.
type labelled struct {
	st     Styles
	width  int
	labels []string
	values []string
}

func (l *labelled) add(label, value string) {
	l.labels = append(l.labels, label)
	l.values = append(l.values, value)
}

func (l *labelled) write(w *errWriter) {
	width := 0
	for _, s := range l.labels {
		width = max(width, len(s))
	}
	indent := strings.Repeat(" ", width+2)
	// A terminal too narrow to leave the values a useful width gets long lines, which
	// it wraps itself, rather than a column of words.
	wrapAt := 0
	if l.width > 0 && l.width-len(indent) >= minWrappedValue {
		wrapAt = l.width - len(indent)
	}
	for i, label := range l.labels {
		var lines []string
		for line := range strings.SplitSeq(l.values[i], "\n") {
			lines = append(lines, wrapLines(line, wrapAt)...)
		}
		// Continuation lines of a multi-line value line up under its first line.
		for j, line := range lines {
			if j == 0 {
				w.printf("%s%s%s\n", l.st.Faint(label), indent[len(label):], line)
			} else {
				w.printf("%s%s\n", indent, line)
			}
		}
	}
}

// minWrappedValue is the narrowest a labelled value is wrapped to.
const minWrappedValue = 20

// errWriter keeps the first write error so that rendering code reads straight through.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) {
	fmt.Fprintf(e, format, args...)
}
