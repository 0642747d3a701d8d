package hedgetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/internal/jsonenc"
	"github.com/cosmosctl/cosmosctl/retries"
	"github.com/cosmosctl/cosmosctl/workload"
)

// The write phase of the write-region-down scenario. Reads go on from the read regions
// while the write region is down; writes cannot, on a single-write account, and the
// point to show is that they fail fast with a message that says so, while a multi-write
// account's writes go to another region. A burst of upserts of scratch items is run
// against each kind of account and summarised: how many were written, where, how fast,
// and what the failures said.

// WriteItemPrefix names the write phase's scratch items: cosmosctl-hedge-test-write-0,
// -1, … (the partition key is the id), apart from the items the read workload reads.
// They carry the ttl of every hedge-test item (ItemTTL).
const WriteItemPrefix = ItemPrefix + "write-"

// DefaultWrites is the size of a write phase: enough for a p99 and to see region health
// settle, small next to the reads.
const DefaultWrites = 50

// Writes is one write phase: Count upserts of the scratch items through Client, at most
// Concurrency at once, each bounded by E2ETimeout.
type Writes struct {
	Client              *engine.Client
	Database, Container string
	Count               int
	Concurrency         int
	E2ETimeout          time.Duration
	// WriteRetries is the write retry policy; a write that was never sent is retried
	// (and on a multi-write account sent to another region) whatever it says.
	WriteRetries retries.WritePolicy
	Clock        clock.Clock
	// Progress, if set, is called after each write with the writes done so far.
	Progress func(done int)
}

// WriteItemID is the id of the write phase's i-th scratch item.
func WriteItemID(i int) string { return fmt.Sprintf("%s%d", WriteItemPrefix, i) }

func (w Writes) body(id string) []byte {
	return itemDocument(id, "cosmosctl hedge-test write phase: safe to delete")
}

// Warm reads the first scratch item (it need not exist: a 404 is as good) so that the
// client knows the account topology and the container before a fault starts, as a
// client that has been running a while does. Any other failure is returned.
func (w Writes) Warm(ctx context.Context) error {
	id := WriteItemID(0)
	pk, err := cosmos.PK(id)
	if err != nil {
		return err
	}
	res, err := w.Client.Execute(ctx, engine.Operation{Kind: engine.OpRead, Database: w.Database, Container: w.Container,
		ID: id, PartitionKey: pk, E2ETimeout: w.E2ETimeout})
	if err != nil && (res == nil || res.StatusCode != 404) {
		return fmt.Errorf("reading %s before the write phase: %w", id, err)
	}
	return nil
}

// WriteSummary is one write phase's outcome, an element of the writes array of
// hedge-test's JSON report: its field names are an API, with units in the names.
type WriteSummary struct {
	// Account is "single-write" or "multi-write"; WriteRegions the account's write
	// regions in order.
	Account      string   `json:"account"`
	WriteRegions []string `json:"write_regions"`
	Attempted    int      `json:"attempted"`
	Written      int      `json:"written"`
	Failed       int      `json:"failed"`
	// Timeouts are the failures that ran out the end-to-end timeout.
	Timeouts int `json:"timeouts"`
	// WrittenByRegion is which regions took the writes, and how many each (in JSON a
	// list of records carrying the region: written_by_region).
	WrittenByRegion map[string]int `json:"-"`
	// The latency of every write, written or failed, from its start to its answer; and
	// the longest a failed one took (null with none).
	P50Ms       float64 `json:"p50_ms"`
	P99Ms       float64 `json:"p99_ms"`
	MaxMs       float64 `json:"max_ms"`
	FailedMaxMs float64 `json:"-"`
	// Errors are the distinct error messages of the failures, most frequent first.
	Errors []WriteError `json:"errors"`
}

type writeSummaryFields WriteSummary

// WriteSummaryJSON is a WriteSummary as JSON.
type WriteSummaryJSON struct {
	writeSummaryFields
	WrittenByRegion []RegionWrites `json:"written_by_region"`
	FailedMaxMs     *float64       `json:"failed_max_ms"`
}

// RegionWrites is how many writes one region took.
type RegionWrites struct {
	Region  string `json:"region"`
	Written int    `json:"written"`
}

// MarshalJSON writes the summary as WriteSummaryJSON.
func (s WriteSummary) MarshalJSON() ([]byte, error) {
	j := WriteSummaryJSON{writeSummaryFields: writeSummaryFields(s), WrittenByRegion: []RegionWrites{}}
	for _, r := range slices.Sorted(maps.Keys(s.WrittenByRegion)) {
		j.WrittenByRegion = append(j.WrittenByRegion, RegionWrites{Region: r, Written: s.WrittenByRegion[r]})
	}
	if s.Failed > 0 {
		v := s.FailedMaxMs
		j.FailedMaxMs = &v
	}
	if j.Errors == nil {
		j.Errors = []WriteError{}
	}
	if j.WriteRegions == nil {
		j.WriteRegions = []string{}
	}
	return jsonenc.Marshal(j)
}

// JSONSchemaAlias is the type the summary's JSON schema is generated from.
func (WriteSummary) JSONSchemaAlias() any { return WriteSummaryJSON{} }

// UnmarshalJSON reads a summary written by MarshalJSON.
func (s *WriteSummary) UnmarshalJSON(b []byte) error {
	var j WriteSummaryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = WriteSummary(j.writeSummaryFields)
	s.WrittenByRegion = map[string]int{}
	for _, r := range j.WrittenByRegion {
		s.WrittenByRegion[r.Region] = r.Written
	}
	if j.FailedMaxMs != nil {
		s.FailedMaxMs = *j.FailedMaxMs
	}
	return nil
}

// WriteError is one distinct error message and how many writes ended with it.
type WriteError struct {
	Message string `json:"message"`
	Count   int    `json:"count"`
}

// MultiWrite reports whether the summary is of a multi-write account.
func (s WriteSummary) MultiWrite() bool { return s.Account == "multi-write" }

// Run upserts the scratch items and summarises what happened. It returns ctx's error if
// ctx ended first, with the summary of the writes that ran.
func (w Writes) Run(ctx context.Context) (WriteSummary, error) {
	sum := WriteSummary{Account: "single-write", WrittenByRegion: map[string]int{}, Errors: []WriteError{}}
	if acct, err := w.Client.Account(ctx); err == nil {
		if acct.EnableMultipleWriteLocations {
			sum.Account = "multi-write"
		}
		for _, l := range acct.WritableLocations {
			sum.WriteRegions = append(sum.WriteRegions, l.Name)
		}
	}
	clk := w.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	stats := workload.NewStats()
	var failedMax time.Duration
	messages := map[string]int{}
	var mu sync.Mutex
	next := 0
	sched := workload.Schedule{Concurrency: max(w.Concurrency, 1), Count: w.Count, Clock: clk}
	err := sched.Run(ctx, func(ctx context.Context, intended time.Time) {
		mu.Lock()
		id := WriteItemID(next)
		next++
		mu.Unlock()
		res, err := w.Client.Execute(ctx, engine.Operation{Kind: engine.OpUpsert, Database: w.Database, Container: w.Container,
			Body: w.body(id), E2ETimeout: w.E2ETimeout, WriteRetries: w.WriteRetries})
		latency := clk.Now().Sub(intended)
		mu.Lock()
		defer mu.Unlock()
		sum.Attempted++
		status, sub := 0, 0
		if res != nil {
			status, sub = res.StatusCode, res.SubStatus
		}
		stats.Record(latency, status, sub, 0, err != nil)
		if err != nil {
			sum.Failed++
			var te *engine.TimeoutError
			if errors.As(err, &te) {
				sum.Timeouts++
			}
			messages[distinctMessage(err)]++
			failedMax = max(failedMax, latency)
		} else {
			sum.Written++
			region := "unknown region"
			if res != nil && res.Diagnostics != nil && res.Diagnostics.WinningRegion != "" {
				region = res.Diagnostics.WinningRegion
			}
			sum.WrittenByRegion[region]++
		}
		if w.Progress != nil {
			w.Progress(sum.Attempted)
		}
	})
	if sum.Attempted > 0 {
		sum.P50Ms, sum.P99Ms, sum.MaxMs = msOf(stats.Quantile(0.5)), msOf(stats.Quantile(0.99)), msOf(stats.Quantile(1))
	}
	sum.FailedMaxMs = msOf(failedMax)
	for m, n := range messages {
		sum.Errors = append(sum.Errors, WriteError{Message: m, Count: n})
	}
	sort.Slice(sum.Errors, func(i, j int) bool {
		if sum.Errors[i].Count != sum.Errors[j].Count {
			return sum.Errors[i].Count > sum.Errors[j].Count
		}
		return sum.Errors[i].Message < sum.Errors[j].Message
	})
	return sum, err
}

// localAddress is the client's side of a TCP connection in a Go network error
// ("read tcp 127.0.0.1:51234->127.0.0.1:8081: …"): a new port for every connection,
// which would make every failure's message distinct.
var localAddress = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\]):\d+->`)
})

// distinctMessage is err's message without what differs between connections: a dropped
// connection reads as one cause whichever system call saw it drop (a reset read, a
// broken-pipe write, a closed connection, an early EOF), so that the summary groups by
// what happened rather than by where Go noticed it.
func distinctMessage(err error) string {
	msg := err.Error()
	var ne *cosmos.NetworkError
	if errors.As(err, &ne) && droppedConnection(ne.Err) {
		when := "before the request was sent"
		if ne.Sent {
			when = "after the request was sent"
		}
		msg = strings.Replace(msg, ne.Error(), fmt.Sprintf("%s: the connection was dropped (%s)", ne.Endpoint, when), 1)
	}
	return localAddress().ReplaceAllString(msg, "")
}

// droppedConnection reports a connection the other side reset or closed.
func droppedConnection(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// Regions lists the regions that took the writes, most writes first.
func (s WriteSummary) Regions() []string {
	out := make([]string, 0, len(s.WrittenByRegion))
	for r := range s.WrittenByRegion {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if s.WrittenByRegion[out[i]] != s.WrittenByRegion[out[j]] {
			return s.WrittenByRegion[out[i]] > s.WrittenByRegion[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}
