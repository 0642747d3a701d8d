// Package progress shows how far a long job (import, export) has got: a bar redrawn in
// place on a terminal, or one NDJSON event per interval for a script. The job calls
// Update after every item, which only stores the counts; a ticker on the job's clock
// draws them, so a job of millions of items pays nothing for its progress.
//
// Rates (items/s, RU/s) are measured over the last few seconds, not since the start, so
// that a job slowed by throttling shows its rate now and an ETA that follows it.
package progress

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/internal/jsonenc"
)

// Mode is how progress is shown.
type Mode int

const (
	// Off shows nothing.
	Off Mode = iota
	// Bar redraws one line in place (a terminal's stderr).
	Bar
	// JSON writes one event per interval, one JSON object per line.
	JSON
)

// Counts is where the job stands. Total is 0 when it is not known (a stream).
type Counts struct {
	Done, Total, Failed, Skipped int64
	RU                           float64
}

// Options configures a Reporter; every field has a default.
type Options struct {
	// Label starts the bar ("import").
	Label string
	// Unit is what is counted, in the singular ("item").
	Unit string
	// Width is the terminal's width for the bar (default 80).
	Width func() int
	// Clock times the rates and the redraws (default: the wall clock).
	Clock clock.Clock
	// Interval between redraws (default 200 ms for the bar, 1 s for JSON events).
	Interval time.Duration
}

// rateWindow is how far back the rates look.
const rateWindow = 5 * time.Second

// Event is one progress event; as JSON it is EventJSON.
type Event struct {
	Event          string
	Done           int64
	Total          int64 // 0: not known
	Failed         int64
	Skipped        int64
	RequestCharge  float64
	ItemsPerSecond float64
	RUPerSecond    float64
	ETASeconds     *float64
	ElapsedSeconds float64
}

// EventJSON is a progress event as JSON, in cosmosctl's vocabulary (docs/json): units in
// the names, durations in milliseconds, null for what is not known (the total of a
// stream, the ETA before a rate).
type EventJSON struct {
	Event          string   `json:"event"`
	Done           int64    `json:"done"`
	Total          *int64   `json:"total"`
	Failed         int64    `json:"failed"`
	Skipped        int64    `json:"skipped"`
	RequestCharge  float64  `json:"request_charge"`
	ItemsPerSecond float64  `json:"items_per_second"`
	RUPerSecond    float64  `json:"ru_per_second"`
	ETAMs          *float64 `json:"eta_ms"`
	ElapsedMs      float64  `json:"elapsed_ms"`
}

// MarshalJSON writes the event as EventJSON.
func (e Event) MarshalJSON() ([]byte, error) { return jsonenc.Marshal(e.JSON()) }

// JSONSchemaAlias is the type the event's JSON schema is generated from (docs/json).
func (Event) JSONSchemaAlias() any { return EventJSON{} }

// JSON is the event as it is written.
func (e Event) JSON() EventJSON {
	j := EventJSON{Event: e.Event, Done: e.Done, Failed: e.Failed, Skipped: e.Skipped, RequestCharge: e.RequestCharge,
		ItemsPerSecond: e.ItemsPerSecond, RUPerSecond: e.RUPerSecond, ElapsedMs: math.Round(e.ElapsedSeconds * 1000)}
	if e.Total > 0 {
		t := e.Total
		j.Total = &t
	}
	if e.ETASeconds != nil {
		ms := *e.ETASeconds * 1000
		j.ETAMs = &ms
	}
	return j
}

// Reporter shows a job's progress. A nil *Reporter does nothing, so a job can hold one
// whatever the mode.
type Reporter struct {
	w     io.Writer
	mode  Mode
	o     Options
	start time.Time

	mu      sync.Mutex
	cur     Counts
	samples []sample // one per draw, the last rateWindow of them
	shown   bool     // a bar is on the line
	stopped bool
	timer   clock.Timer
}

type sample struct {
	at   time.Time
	done int64
	ru   float64
}

// New starts showing progress on w. With mode Off it returns nil.
func New(w io.Writer, mode Mode, o Options) *Reporter {
	if mode == Off || w == nil {
		return nil
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Unit == "" {
		o.Unit = "item"
	}
	if o.Interval <= 0 {
		o.Interval = 200 * time.Millisecond
		if mode == JSON {
			o.Interval = time.Second
		}
	}
	r := &Reporter{w: w, mode: mode, o: o, start: o.Clock.Now()}
	r.samples = []sample{{at: r.start}}
	r.mu.Lock()
	r.arm()
	r.mu.Unlock()
	return r
}

// Update takes the job's counts; they are shown at the next tick.
func (r *Reporter) Update(c Counts) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.cur = c
	r.mu.Unlock()
}

// Stop ends the display: a bar is cleared (the job prints its report next), JSON gets
// one last event with the final counts.
func (r *Reporter) Stop() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	r.stopped = true
	if r.timer != nil {
		r.timer.Stop()
	}
	switch r.mode {
	case Bar:
		if r.shown {
			io.WriteString(r.w, "\r\033[K")
			r.shown = false
		}
	case JSON:
		r.sampleLocked()
		r.writeEvent()
	}
}

// Snapshot is the event the reporter would show now.
func (r *Reporter) Snapshot() Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.event(r.o.Clock.Now())
}

func (r *Reporter) arm() {
	r.timer = r.o.Clock.AfterFunc(r.o.Interval, r.tick)
}

func (r *Reporter) tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	r.sampleLocked()
	switch r.mode {
	case Bar:
		line := r.bar(r.event(r.o.Clock.Now()))
		io.WriteString(r.w, "\r\033[K"+line)
		r.shown = true
	case JSON:
		r.writeEvent()
	}
	r.arm()
}

func (r *Reporter) sampleLocked() {
	now := r.o.Clock.Now()
	r.samples = append(r.samples, sample{at: now, done: r.cur.Done + r.cur.Failed + r.cur.Skipped, ru: r.cur.RU})
	cut := 0
	for cut < len(r.samples)-2 && now.Sub(r.samples[cut+1].at) >= rateWindow {
		cut++
	}
	r.samples = r.samples[cut:]
}

func (r *Reporter) writeEvent() {
	b, _ := json.Marshal(r.event(r.o.Clock.Now()))
	r.w.Write(append(b, '\n'))
}

// event computes the rates over the samples kept and the ETA from the items left.
func (r *Reporter) event(now time.Time) Event {
	c := r.cur
	e := Event{Event: "progress", Done: c.Done, Total: c.Total, Failed: c.Failed, Skipped: c.Skipped,
		RequestCharge: round2(c.RU), ElapsedSeconds: round2(now.Sub(r.start).Seconds())}
	first, last := r.samples[0], r.samples[len(r.samples)-1]
	if dt := last.at.Sub(first.at).Seconds(); dt > 0 {
		e.ItemsPerSecond = round2(float64(last.done-first.done) / dt)
		e.RUPerSecond = round2((last.ru - first.ru) / dt)
	}
	if left := c.Total - c.Done - c.Failed - c.Skipped; c.Total > 0 && e.ItemsPerSecond > 0 {
		eta := 0.0
		if left > 0 {
			eta = math.Ceil(float64(left) / e.ItemsPerSecond)
		}
		e.ETASeconds = &eta
	}
	return e
}

// bar renders the line: the label, a bar when the total is known, the counts and rates,
// cut from the right to fit the width (the counts stay).
func (r *Reporter) bar(e Event) string {
	width := 80
	if r.o.Width != nil {
		if w := r.o.Width(); w > 0 {
			width = w
		}
	}
	width-- // the cursor's column: a full line would wrap on some terminals
	processed := e.Done + e.Failed + e.Skipped
	count := Thousands(processed) + " " + plural(processed, r.o.Unit)
	if e.Total > 0 {
		count = Thousands(processed) + "/" + Thousands(e.Total) + " " + plural(e.Total, r.o.Unit)
	}
	parts := []string{count, Thousands(int64(math.Round(e.ItemsPerSecond))) + "/s",
		Thousands(int64(math.Round(e.RUPerSecond))) + " RU/s"}
	if e.ETASeconds != nil {
		parts = append(parts, "ETA "+ETA(time.Duration(*e.ETASeconds)*time.Second))
	} else {
		parts = append(parts, ETA(time.Duration(e.ElapsedSeconds*float64(time.Second))))
	}
	if e.Failed > 0 {
		parts = append(parts, Thousands(e.Failed)+" failed")
	}
	if e.Skipped > 0 {
		parts = append(parts, Thousands(e.Skipped)+" skipped")
	}
	label := r.o.Label
	if label != "" {
		label += " "
	}
	// The failures matter more than the rates: when the line is short, the rates go
	// first, the counts and failures stay.
	keep := parts
	for len(keep) > 1 {
		text := label + strings.Join(keep, " · ")
		if len([]rune(text)) <= width {
			break
		}
		keep = dropRate(keep)
	}
	text := strings.Join(keep, " · ")
	if e.Total > 0 {
		if room := width - len([]rune(label+text)) - 3; room >= 10 {
			n := min(room, 30)
			filled := int(float64(n) * float64(processed) / float64(e.Total))
			filled = min(max(filled, 0), n)
			bar := strings.Repeat("=", filled)
			if filled < n {
				bar += ">" + strings.Repeat(" ", n-filled-1)
			}
			return label + "[" + bar + "] " + text
		}
	}
	line := label + text
	if rs := []rune(line); len(rs) > width && width > 0 {
		line = string(rs[:width])
	}
	return line
}

// dropRate removes the least needed part: the rates and the time before the count and
// the failures.
func dropRate(parts []string) []string {
	for _, i := range []int{2, 1, 3} {
		if i < len(parts) && !strings.HasSuffix(parts[i], " failed") && !strings.HasSuffix(parts[i], " skipped") && i != 0 {
			return append(parts[:i:i], parts[i+1:]...)
		}
	}
	return parts[:len(parts)-1]
}

func plural(n int64, unit string) string {
	if n == 1 {
		return unit
	}
	return unit + "s"
}

// Thousands writes n with comma separators: 12,345.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// ETA renders a remaining or elapsed time to the second: "31s", "4m12s", "1h02m".
func ETA(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
