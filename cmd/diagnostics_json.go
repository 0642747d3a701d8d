package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/cosmosctl/cosmosctl/changefeed"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/output"
)

// pollEvent is a change feed request's --diagnostics=json event:
// {"event":"poll","kind":"poll","range_id":"0","status_code":200,"items":12,…}.
type pollEvent struct {
	// Event is "poll".
	Event string `json:"event"`
	// Kind is poll, or pkranges for a re-read of the ranges after a split.
	Kind string `json:"kind"`
	// RangeID is the partition key range polled, null for a feed of one partition key.
	RangeID *string `json:"range_id"`
	// StatusCode is the final answer's status (200, 304, 410), null without one.
	StatusCode    *int    `json:"status_code"`
	Items         int     `json:"items"`
	CaughtUp      bool    `json:"caught_up"`
	RequestCharge float64 `json:"request_charge"`
	DurationMs    float64 `json:"duration_ms"`
	// Error is a failed poll the feed tries again after RetryInMs.
	Error     *string  `json:"error"`
	RetryInMs *float64 `json:"retry_in_ms"`
	Note      *string  `json:"note"`
	// Diagnostics has every attempt of the request (null for none).
	Diagnostics *engine.Diagnostics `json:"diagnostics"`
}

func newPollEvent(b *changefeed.Batch) pollEvent {
	in := b.Info
	e := pollEvent{Event: "poll", Kind: in.Kind, Items: len(b.Items), CaughtUp: in.CaughtUp, RequestCharge: in.RequestCharge,
		DurationMs: float64(in.Duration.Microseconds()) / 1000, Diagnostics: in.Diagnostics}
	if b.RangeID != "" {
		e.RangeID = &b.RangeID
	}
	if in.StatusCode != 0 {
		e.StatusCode = &in.StatusCode
	}
	if in.Err != nil {
		msg := in.Err.Error()
		wait := float64(in.Wait.Microseconds()) / 1000
		e.Error, e.RetryInMs = &msg, &wait
	}
	if in.Note != "" {
		e.Note = &in.Note
	}
	return e
}

// diagnosticsEvent is a read's or a write's --diagnostics=json event:
// {"event":"diagnostics","diagnostics":{…}}.
type diagnosticsEvent struct {
	// Event is "diagnostics".
	Event       string              `json:"event"`
	Diagnostics *engine.Diagnostics `json:"diagnostics"`
}

// pageEvent is a query request's --diagnostics=json event: the plan, the ranges' read or
// a page, {"event":"page","page":{…}} (the page as in query -o json's pages).
type pageEvent struct {
	// Event is "page".
	Event string           `json:"event"`
	Page  output.QueryPage `json:"page"`
}

// diagnosticsValue is --diagnostics: true (the table, or a line a poll, on stderr even
// off a terminal), false (never, not even on a terminal) or json (one JSON object a
// line on stderr for each operation: a read's diagnostics, a query's page, a change
// feed's poll, an import's write). A bare --diagnostics is true.
type diagnosticsValue struct{ on, json *bool }

func (v diagnosticsValue) String() string {
	switch {
	case v.on == nil || !*v.on:
		return "false"
	case *v.json:
		return "json"
	}
	return "true"
}

func (v diagnosticsValue) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "t", "yes":
		*v.on, *v.json = true, false
	case "false", "0", "f", "no":
		*v.on, *v.json = false, false
	case "json":
		*v.on, *v.json = true, true
	default:
		return fmt.Errorf("%q is not true, false or json", s)
	}
	return nil
}

func (diagnosticsValue) Type() string { return "true|false|json" }

// eventWriter writes NDJSON events ({"event":NAME,…}) to one stream from any goroutine,
// a whole line at a time.
type eventWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// emit writes one event (a value whose JSON is an object with its "event" member) as
// one line.
func (e *eventWriter) emit(event any) {
	line, err := json.Marshal(event)
	if err != nil {
		return
	}
	line = append(line, '\n')
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = e.w.Write(line)
}

// writeEvent is an import write's --diagnostics=json event:
// {"event":"write","line":12,"id":"a","status_code":201,…,"diagnostics":{…}}.
type writeEvent struct {
	// Event is "write".
	Event string `json:"event"`
	// Line is the line's number in the input (1-based), ID the item's id.
	Line int64  `json:"line"`
	ID   string `json:"id"`
	// StatusCode and SubStatus are the answer used, null when there was none.
	StatusCode    *int    `json:"status_code"`
	SubStatus     *int    `json:"substatus"`
	RequestCharge float64 `json:"request_charge"`
	// Error is the write's error, null when it succeeded.
	Error       *string             `json:"error"`
	Diagnostics *engine.Diagnostics `json:"diagnostics"`
}

func newWriteEvent(line int64, id string, res *engine.Result, err error) writeEvent {
	e := writeEvent{Event: "write", Line: line, ID: id}
	if res != nil {
		if res.StatusCode != 0 {
			code, sub := res.StatusCode, res.SubStatus
			e.StatusCode, e.SubStatus = &code, &sub
		}
		if res.Diagnostics != nil {
			e.RequestCharge, e.Diagnostics = res.Diagnostics.RequestCharge, res.Diagnostics
		}
	}
	if err != nil {
		msg := err.Error()
		e.Error = &msg
	}
	return e
}
