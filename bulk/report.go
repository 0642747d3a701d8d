package bulk

import (
	"encoding/json"
	"fmt"
	"time"
)

// Mode is how each item is written.
type Mode string

const (
	// Create writes items that do not exist; an item already there is counted as
	// already present and left as it is.
	Create Mode = "create"
	// Upsert creates or replaces every item.
	Upsert Mode = "upsert"
)

// Counts are what happened to the lines of a run, across every process of it.
type Counts struct {
	// Lines is every line done: each is exactly one of the counts below.
	Lines          int64 `json:"lines"`
	Created        int64 `json:"created"`
	AlreadyPresent int64 `json:"already_present"`
	Updated        int64 `json:"updated"`
	// CreatedOrUpdated are upserts answered 200 after an earlier attempt of the line (a
	// lost answer, or an earlier process of the run) may have been applied: the item is
	// written, but whether the line created it or updated it is not known.
	CreatedOrUpdated int64 `json:"created_or_updated"`
	// Superseded are lines whose write failed for availability and that a later line of
	// the same item overwrote before the run stopped: done, and not rejected.
	Superseded int64 `json:"superseded"`
	// Failed are writes that did not succeed; BadLines lines that were not items.
	// Both are in the rejected-lines file, and in Reasons by reason.
	Failed   int64 `json:"failed"`
	BadLines int64 `json:"bad_lines"`
	Blank    int64 `json:"blank_lines"`
	// Reasons counts the failed writes and bad lines by reason.
	Reasons map[string]int64 `json:"reasons"`
	// RequestCharge is every attempt's RU, checks of a 409's _trackingId included.
	RequestCharge float64 `json:"request_charge"`
	// Throttles is how many 429s the writes got (each retried by the engine).
	Throttles int64 `json:"throttles"`
}

// Written is the lines whose item is stored: created, already present, updated, or
// created or updated.
func (c Counts) Written() int64 {
	return c.Created + c.AlreadyPresent + c.Updated + c.CreatedOrUpdated
}

// Rejected is the lines in the rejected-lines file: failed writes and bad lines.
func (c Counts) Rejected() int64 { return c.Failed + c.BadLines }

// Report is how a run went: the counts of the whole run (every process of it), and
// this process's share.
type Report struct {
	Counts
	// Skipped lines were done by earlier processes of the run.
	Skipped int64
	// Shard is the share of the input the run takes (the zero Shard: all of it);
	// ShardLines the lines of the input this process read that are the shard's, and
	// OtherShards those it passed over, other shards' (neither done nor skipped). At
	// the end of the input the two add up to its lines.
	Shard                   Shard
	ShardLines, OtherShards int64
	// RunID is the run's id, the first part of its items' _trackingIds.
	RunID string
	// ThisRun is what this process did.
	ThisRun Counts
	// Duration is this process's import time, and Elapsed every process's together.
	Duration time.Duration
	Elapsed  time.Duration
	Runs     int
	// Complete says every line of the input is done.
	Complete bool
	// Stopped says why the import stopped before the end of its input, "" when it
	// did not.
	Stopped string
}

// ItemsPerSecond is this process's rate: the lines it did over its duration.
func (r Report) ItemsPerSecond() float64 {
	if r.Duration <= 0 {
		return 0
	}
	return float64(r.ThisRun.Lines) / r.Duration.Seconds()
}

// RUPerSecond is this process's RU over its duration.
func (r Report) RUPerSecond() float64 {
	if r.Duration <= 0 {
		return 0
	}
	return r.ThisRun.RequestCharge / r.Duration.Seconds()
}

// Rejection is one line of the rejected-lines file.
type Rejection struct {
	Line int64 `json:"line"`
	// Reason groups rejections ("invalid JSON", "503 Service Unavailable"), Error is
	// the whole message.
	Reason string `json:"reason"`
	Error  string `json:"error"`
	// Status is the service's answer to a failed write (0 for a bad line).
	Status int `json:"status,omitempty"`
	// Item is the line when it is JSON, so that `jq -c .item` gives lines to import
	// again; Text the line when it is not (invalid UTF-8 in it as U+FFFD, the error
	// giving the offset of the first invalid byte); Bytes the length of a line too
	// large to keep, or, when its error says "at least", the length read before it was
	// rejected, its end not read.
	Item  json.RawMessage `json:"item,omitempty"`
	Text  string          `json:"text,omitempty"`
	Bytes int64           `json:"bytes,omitempty"`
}

// Reasons of bad lines.
const (
	ReasonInvalidJSON  = "invalid JSON"
	ReasonInvalidUTF8  = "invalid UTF-8"
	ReasonNotObject    = "not a JSON object"
	ReasonNoID         = "no id"
	ReasonIDNotString  = "id not a string"
	ReasonNoKey        = "no partition key value"
	ReasonBadKey       = "partition key not a string, number, boolean or null"
	ReasonTooLarge     = "too large (over 2 MiB)"
	ReasonRefused      = "refused before sending"
	ReasonNoTimeToWait = "no answer in time"
)

// tooLargeError says how long a line too large is: n bytes, or at least n when it was
// cut, handed over before its end was read.
func tooLargeError(n int64, cut bool) string {
	if cut {
		return fmt.Sprintf("the line is at least %d bytes (rejected before its end, which was skipped unread); an item can be at most %d (2 MiB)", n, MaxItemBytes)
	}
	return fmt.Sprintf("the line is %d bytes; an item can be at most %d (2 MiB)", n, MaxItemBytes)
}
