package engine

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/health"
	"github.com/cosmosctl/cosmosctl/hedging"
	"github.com/cosmosctl/cosmosctl/retries"
)

// memTransport answers every item request at once with the same response, so a
// benchmark over it measures the engine's own per-operation cost.
type memTransport struct {
	account []byte
	resp    cosmos.Response
}

func (m *memTransport) Do(_ context.Context, _ string, req *cosmos.Request) (*cosmos.Response, error) {
	if req.Path == "/" {
		return &cosmos.Response{StatusCode: 200, Body: m.account, Header: http.Header{}}, nil
	}
	r := m.resp
	return &r, nil
}

// BenchmarkEngineRead is the engine's overhead for one point read: region planning,
// request building, the attempt loop and diagnostics recording, with a transport that
// costs nothing.
//
// The sub-benchmarks add region health: a store with nothing unavailable (every read
// asks it for the order and reports its success), and one in which East US is
// unavailable, so that every read's plan is reordered and noted.
func BenchmarkEngineRead(b *testing.B) {
	b.Run("no-health", func(b *testing.B) { benchmarkEngineRead(b, nil, []string{"East US"}) })
	b.Run("health", func(b *testing.B) {
		hs, _ := health.New(health.Config{}, clock.Real{})
		benchmarkEngineRead(b, hs, nil)
	})
	b.Run("service-headers", func(b *testing.B) {
		// An answer carrying what the service sends with a point read, so that the
		// attempt's anatomy (range, physical partition, LSN, session token, server
		// time) is read from real headers.
		h := http.Header{}
		h.Set("x-ms-session-token", "3:1#412#0=412#1=408#2=410")
		h.Set("lsn", "412")
		h.Set("x-ms-documentdb-partitionkeyrangeid", "3")
		h.Set("x-ms-cosmos-physical-partition-id", "3")
		h.Set("x-ms-request-duration-ms", "0.412")
		h.Set("x-ms-activity-id", "5d5c3a4e-2b1f-4c7e-9a51-0f2b7a4d9e11")
		h.Set("x-ms-request-charge", "1")
		benchmarkEngineReadWith(b, nil, []string{"East US"}, h)
	})
	b.Run("health-one-region-unavailable", func(b *testing.B) {
		hs, _ := health.New(health.Config{ProbeAfter: time.Hour, MaxProbeInterval: time.Hour}, clock.Real{})
		for i := 0; i < 3; i++ {
			hs.Failure("East US", "", health.Read, health.Timeout)
		}
		benchmarkEngineRead(b, hs, nil)
	})
}

func benchmarkEngineRead(b *testing.B, hs *health.Store, exclude []string) {
	benchmarkEngineReadWith(b, hs, exclude, http.Header{})
}

func benchmarkEngineReadWith(b *testing.B, hs *health.Store, exclude []string, h http.Header) {
	tr := newFakeTransport(fakeAccount(false))
	acct, _ := tr.Do(context.Background(), "", &cosmos.Request{Path: "/"})
	mem := &memTransport{account: acct.Body, resp: cosmos.Response{StatusCode: 200, Body: []byte(`{"id":"1","pk":"a"}`), Header: h, RequestCharge: 1}}
	c, err := New(Options{Endpoint: "http://global", Transport: mem, PreferredRegions: []string{"West US", "East US"}, Health: hs})
	if err != nil {
		b.Fatal(err)
	}
	op := readOp()
	op.ExcludeRegions = exclude
	ctx := context.Background()
	if _, err := c.Execute(ctx, op); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Execute(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
}

// regionTransport answers each regional endpoint with its own canned response at once,
// so hedging is driven by transient results rather than by waiting.
type regionTransport struct {
	account []byte
	byHost  map[string]cosmos.Response
}

func (m *regionTransport) Do(ctx context.Context, endpoint string, req *cosmos.Request) (*cosmos.Response, error) {
	if req.Path == "/" {
		return &cosmos.Response{StatusCode: 200, Body: m.account, Header: http.Header{}}, nil
	}
	r, ok := m.byHost[endpoint]
	if !ok {
		// A region with no canned answer never answers: the request waits until the
		// race cancels it.
		<-ctx.Done()
		return nil, &cosmos.NetworkError{Endpoint: endpoint, Sent: true, Err: ctx.Err()}
	}
	if r.StatusCode >= 400 {
		return &r, &cosmos.Error{StatusCode: r.StatusCode}
	}
	return &r, nil
}

// BenchmarkHedgedRead measures the hedging machinery: the same read unhedged; hedged
// but answered before the threshold; hedged once and to three regions (a 1 ns threshold,
// so the hedge arms start on their timers; the regions before the last never answer and
// are cancelled when it does); and the first region failing with 503 under hedging, so
// that the first arm fails over.
func BenchmarkHedgedRead(b *testing.B) {
	tr := newFakeTransport(fakeAccount(false))
	acct, _ := tr.Do(context.Background(), "", &cosmos.Request{Path: "/"})
	ok := cosmos.Response{StatusCode: 200, Body: []byte(`{"id":"1","pk":"a"}`), Header: http.Header{}, RequestCharge: 1}
	unavailable := cosmos.Response{StatusCode: 503, Header: http.Header{}}
	everyRegion := map[string]cosmos.Response{"http://east": ok, "http://west": ok, "http://north": ok}
	cases := []struct {
		name    string
		hedge   hedging.Strategy
		byHost  map[string]cosmos.Response
		minArms int
	}{
		{"unhedged", nil, everyRegion, 1},
		{"hedged-first-answers", hedging.Threshold{Threshold: time.Second, Step: 100 * time.Millisecond}, everyRegion, 1},
		{"hedges-once", hedging.Threshold{Threshold: time.Nanosecond, MaxRegions: 2}, map[string]cosmos.Response{"http://west": ok}, 2},
		{"hedges-to-three", hedging.Threshold{Threshold: time.Nanosecond, Step: 0}, map[string]cosmos.Response{"http://north": ok}, 3},
		{"first-region-503-fails-over", hedging.Threshold{Threshold: time.Second, Step: 100 * time.Millisecond},
			map[string]cosmos.Response{"http://east": unavailable, "http://west": ok}, 2},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			c, err := New(Options{Endpoint: "http://global", Transport: &regionTransport{account: acct.Body, byHost: tc.byHost}})
			if err != nil {
				b.Fatal(err)
			}
			op := readOp()
			op.Hedge = tc.hedge
			ctx := context.Background()
			res, err := c.Execute(ctx, op)
			if err != nil || len(res.Diagnostics.Attempts) < tc.minArms {
				b.Fatalf("setup: %v, %d attempts", err, len(res.Diagnostics.Attempts))
			}
			attempts := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := c.Execute(ctx, op)
				if err != nil {
					b.Fatal(err)
				}
				attempts += len(res.Diagnostics.Attempts)
			}
			b.ReportMetric(float64(attempts)/float64(b.N), "attempts/op")
		})
	}
}

// BenchmarkEngineCreate is the engine's overhead for one create as an import sends it:
// the line scanned once, a _trackingId spliced in, Prefer: return=minimal, an
// end-to-end timeout, with a transport that answers 201 at once.
func BenchmarkEngineCreate(b *testing.B) {
	tr := newFakeTransport(fakeAccount(false))
	acct, _ := tr.Do(context.Background(), "", &cosmos.Request{Path: "/"})
	mem := &memTransport{account: acct.Body, resp: cosmos.Response{StatusCode: 201, Header: http.Header{}, RequestCharge: 5.71}}
	c, err := New(Options{Endpoint: "http://global", Transport: mem, PreferredRegions: []string{"West US", "East US"}})
	if err != nil {
		b.Fatal(err)
	}
	line := []byte(`{"id":"m000001","pk":"p1","n":42,"pad":"0123456789abcdef0123456789abcdef"}`)
	pk, _ := cosmos.PK("p1")
	ctx := context.Background()
	op := Operation{Kind: OpCreate, Database: "db", Container: "c", ID: "m000001", PartitionKey: pk, MinimalResponse: true,
		E2ETimeout: time.Minute, WriteRetries: retries.WriteRetriesWithTrackingID, TrackingID: "run:1"}
	b.ReportAllocs()
	for b.Loop() {
		o := op
		o.Body = line
		var ok bool
		if o.Document, ok = ScanDocument(line); !ok {
			b.Fatal("the line does not scan")
		}
		if _, err := c.Execute(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAttemptAnatomy is what recording one attempt's answer costs: "status" the
// status, charge and timing alone, "anatomy" also the range, physical partition, LSN,
// session token and retry-after read from the answer's headers (as every attempt now
// records). Their difference is the anatomy's cost per attempt.
func BenchmarkAttemptAnatomy(b *testing.B) {
	h := http.Header{}
	h.Set("x-ms-session-token", "3:1#412#0=412#1=408#2=410")
	h.Set("lsn", "412")
	h.Set("x-ms-documentdb-partitionkeyrangeid", "3")
	h.Set("x-ms-cosmos-physical-partition-id", "3")
	h.Set("x-ms-request-duration-ms", "0.412")
	resp := &cosmos.Response{StatusCode: 200, Header: h, RequestCharge: 1, SessionToken: "3:1#412#0=412#1=408#2=410", ActivityID: "5d5c3a4e-2b1f-4c7e-9a51-0f2b7a4d9e11"}
	now := func() time.Time { return time.Time{} }
	for _, bc := range []struct {
		name   string
		finish func(r *recorder)
	}{
		{"status", func(r *recorder) {
			r.finish(0, resp.StatusCode, resp.SubStatus, resp.RequestCharge, resp.ActivityID, "")
		}},
		{"anatomy", func(r *recorder) { r.finishResponse(0, resp) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := newRecorder(now)
			r.begin("East US", "http://east", ReasonInitial)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.d.Attempts[0].done = false
				bc.finish(r)
			}
		})
	}
}
