package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/internal/rulimit"
	"github.com/cosmosctl/cosmosctl/query"
)

// The sample of `cosmosctl skew --sample`: real requests (a query's pages, or point
// reads of listed ids), sent by a few workers for a while through the engine, so that
// retries, hedging, timeouts and failover apply as they do to any command, and counted
// by partition key range from every attempt's anatomy: its request charge, and whether
// the service answered 429. The range is the one the service named in the answer
// (x-ms-documentdb-partitionkeyrangeid), else the one the request was sent to: the
// page's range, or the range whose bounds hold the id's effective partition key.

// skewID is one line of --ids: an item and its partition key.
type skewID struct {
	id      string
	pk      cosmos.PartitionKey
	rangeID string
}

// readSkewIDs reads --ids: one JSON object a line, {"id": "o1", "pk": "tenant-1"},
// the pk a JSON value, or an array for a hierarchical key. Blank lines are skipped.
func readSkewIDs(name string, stdin io.Reader) ([]skewID, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, usageErrorf("--ids: %v", err)
		}
		defer f.Close()
		r = f
	}
	var out []skewID
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var v struct {
			ID *string         `json:"id"`
			PK json.RawMessage `json:"pk"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			return nil, usageErrorf(`--ids %s line %d is not a JSON object like {"id":"o1","pk":"tenant-1"}: %v`, name, n, err)
		}
		if v.ID == nil || *v.ID == "" || len(v.PK) == 0 {
			return nil, usageErrorf(`--ids %s line %d needs "id" and "pk" (a point read needs the partition key), e.g. {"id":"o1","pk":"tenant-1"}`, name, n)
		}
		pk, err := parsePartitionKey(string(v.PK))
		if err != nil {
			return nil, usageErrorf("--ids %s line %d: %v", name, n, strings.TrimPrefix(err.Error(), "--pk "))
		}
		out = append(out, skewID{id: *v.ID, pk: pk})
	}
	if err := sc.Err(); err != nil {
		return nil, usageErrorf("--ids %s: %v", name, err)
	}
	if len(out) == 0 {
		return nil, usageErrorf(`--ids %s has no ids: give one JSON object a line, {"id":"o1","pk":"tenant-1"}`, name)
	}
	return out, nil
}

// skewAfterRecord, when set (tests only), is called after each sampled request is
// counted, with the requests counted so far.
var skewAfterRecord func(requests int64)

// skewSampler counts a sample's requests, request charge and 429s by range, and by
// partition key within a range for point reads.
type skewSampler struct {
	mu        sync.Mutex
	ranges    map[string]*skewRangeLoad
	requests  int64
	failed    int64
	throttled int64 // 429 answers, whatever came after them
	charge    float64
	firstErr  string
}

type skewRangeLoad struct {
	requests  int64
	charge    float64
	throttled int64
	keys      map[string]*skewKeyCount // by the key's JSON
}

type skewKeyCount struct {
	charge    float64
	throttled int64
}

func newSkewSampler() *skewSampler { return &skewSampler{ranges: map[string]*skewRangeLoad{}} }

func (s *skewSampler) load(rangeID string) *skewRangeLoad {
	l := s.ranges[rangeID]
	if l == nil {
		l = &skewRangeLoad{keys: map[string]*skewKeyCount{}}
		s.ranges[rangeID] = l
	}
	return l
}

// record counts one request sent to rangeID (for key, "" for a query page): every
// attempt's charge and 429, and its failure unless the sample's end cut it short
// (sampling is true while the sample runs).
func (s *skewSampler) record(rangeID, key string, d *engine.Diagnostics, err error, sampling bool) {
	s.mu.Lock()
	defer func() {
		n := s.requests
		s.mu.Unlock()
		if skewAfterRecord != nil {
			skewAfterRecord(n)
		}
	}()
	// A request cut by the sample's end (or an interruption) is not counted; what its
	// attempts were charged, and the 429s they met, are.
	if cut := err != nil && !sampling; rangeID != "" && !cut {
		s.requests++
		s.load(rangeID).requests++
	}
	if d != nil {
		for _, a := range d.Attempts {
			rid := a.PartitionKeyRangeID
			if rid == "" {
				rid = rangeID
			}
			if rid == "" || (a.RequestCharge == 0 && a.StatusCode != 429) {
				continue
			}
			l := s.load(rid)
			l.charge += a.RequestCharge
			s.charge += a.RequestCharge
			k := l.keys[key]
			if key != "" && k == nil {
				k = &skewKeyCount{}
				l.keys[key] = k
			}
			if k != nil {
				k.charge += a.RequestCharge
			}
			if a.StatusCode == 429 {
				l.throttled++
				s.throttled++
				if k != nil {
					k.throttled++
				}
			}
		}
	}
	if status, _, _ := cosmos.Status(err); err != nil && sampling && status != 429 && status != 404 {
		// A 429 the retries gave up on is the sample's finding, not a failure; a 404
		// (an id that is not there) is an answer, and load on its range as any.
		s.failed++
		if s.firstErr == "" {
			s.firstErr = err.Error()
		}
	}
}

// skewWorkload is what the sample sends: a query, or point reads of ids.
type skewWorkload struct {
	client              *engine.Client
	database, container string
	template            engine.Operation
	query               string
	ids                 []skewID
	concurrency         int
	// limiter paces the sample to --max-ru-per-second; nil for no cap. It is told
	// each request's charge and nothing of 429s: the sample is there to meet them.
	limiter *rulimit.Limiter
}

// wait holds a request back until the RU cap allows it; false when ctx ended.
func (w skewWorkload) wait(ctx context.Context) bool {
	return w.limiter == nil || w.limiter.Wait(ctx) == nil
}

// spent tells the RU cap what a request's attempts were charged.
func (w skewWorkload) spent(d *engine.Diagnostics) {
	if w.limiter != nil && d != nil {
		w.limiter.Spent(d.RequestCharge)
	}
}

// run sends the workload until ctx ends (the sample's duration, or an interruption),
// concurrency requests at a time. It returns a usage error when the service refuses
// the query itself (400), which no amount of sampling would change.
func (w skewWorkload) run(ctx context.Context, s *skewSampler) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var fatal atomic.Pointer[error]
	sampleCtx, stop := context.WithCancel(ctx)
	defer stop()
	for range w.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sampleCtx.Err() == nil {
				var err error
				if w.query != "" {
					err = w.queryOnce(sampleCtx, s)
				} else {
					w.readOne(sampleCtx, s, int(next.Add(1)-1)%len(w.ids))
				}
				if err != nil {
					fatal.CompareAndSwap(nil, &err)
					stop()
				}
			}
		}()
	}
	wg.Wait()
	if p := fatal.Load(); p != nil {
		return *p
	}
	return nil
}

func (w skewWorkload) readOne(ctx context.Context, s *skewSampler, i int) {
	id := w.ids[i]
	if !w.wait(ctx) {
		return
	}
	op := w.template
	op.Kind, op.Database, op.Container, op.ID, op.PartitionKey = engine.OpRead, w.database, w.container, id.id, id.pk
	res, err := w.client.Execute(ctx, op)
	var d *engine.Diagnostics
	if res != nil {
		d = res.Diagnostics
	}
	w.spent(d)
	s.record(id.rangeID, id.pk.JSON(), d, err, ctx.Err() == nil)
}

// queryOnce runs the query to its end once, counting each page; a 400 from the service
// (a query it refuses) is returned as a usage error.
func (w skewWorkload) queryOnce(ctx context.Context, s *skewSampler) error {
	it, err := query.Run(ctx, query.Options{Client: w.client, Database: w.database, Container: w.container,
		Spec: cosmos.QuerySpec{Query: w.query}, Parallelism: 1, Page: w.template})
	if err != nil {
		return usageErrorf("--query: %v", err)
	}
	defer it.Close()
	for {
		if !w.wait(ctx) {
			return nil
		}
		_, info, err := it.Next(ctx)
		if info != nil && info.Kind == query.KindPage {
			w.spent(info.Diagnostics)
			s.record(info.RangeID, "", info.Diagnostics, err, ctx.Err() == nil)
		}
		switch {
		case err == nil:
			continue
		case errors.Is(err, io.EOF) || ctx.Err() != nil:
			return nil
		}
		if status, _, ok := cosmos.Status(err); ok && status == 400 {
			return &UsageError{Err: fmt.Errorf("--query: %w", err)}
		}
		if info == nil || info.Kind != query.KindPage {
			s.record("", "", nil, err, true)
		}
		return nil
	}
}

// fill puts the sample's counts into the report's ranges, with their shares.
func (s *skewSampler) fill(rep *skewReport, sum *skewSample, elapsed time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum.Requests, sum.Failed, sum.Throttled, sum.RequestCharge = s.requests, s.failed, s.throttled, round2(s.charge)
	sum.DurationMs = elapsed.Milliseconds()
	if s.firstErr != "" {
		e := s.firstErr
		sum.FirstError = &e
	}
	for i := range rep.Ranges {
		r := &rep.Ranges[i]
		l := s.ranges[r.ID]
		if l == nil {
			l = &skewRangeLoad{}
		}
		rs := &skewRangeSample{Requests: l.requests, RequestCharge: round2(l.charge), Throttled: l.throttled}
		if s.charge > 0 {
			rs.RequestChargePercent = round1(100 * l.charge / s.charge)
		}
		if s.throttled > 0 {
			rs.ThrottledPercent = round1(100 * float64(l.throttled) / float64(s.throttled))
		}
		if secs := elapsed.Seconds(); secs > 0 {
			rs.RUPerSecond = round1(l.charge / secs)
		}
		keys := make([]string, 0, len(l.keys))
		for k := range l.keys {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(a, b int) bool {
			ka, kb := l.keys[keys[a]], l.keys[keys[b]]
			if ka.charge != kb.charge {
				return ka.charge > kb.charge
			}
			if ka.throttled != kb.throttled {
				return ka.throttled > kb.throttled
			}
			return keys[a] < keys[b]
		})
		if len(keys) > 0 {
			k := l.keys[keys[0]]
			top := &skewKeyLoad{PartitionKey: json.RawMessage(keys[0]), RequestCharge: round2(k.charge), Throttled: k.throttled}
			if l.charge > 0 {
				top.RequestChargePercent = round1(100 * k.charge / l.charge)
			}
			if l.throttled > 0 {
				top.ThrottledPercent = round1(100 * float64(k.throttled) / float64(l.throttled))
			}
			rs.TopPartitionKey = top
		}
		r.Sample = rs
	}
}

// unlisted are the ranges the sample met that the report does not list.
func (s *skewSampler) unlisted(rep *skewReport) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	listed := map[string]bool{}
	for _, r := range rep.Ranges {
		listed[r.ID] = true
	}
	var out []string
	for id := range s.ranges {
		if !listed[id] {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }
func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
