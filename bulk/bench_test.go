package bulk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// memAccount answers every write at once with a canned 201 (200 for an upsert), so that
// a benchmark over it measures what the import and the engine cost per line: reading
// and parsing the line, preparing the operation (its id, partition key and
// _trackingId), building the request, the attempt loop and the diagnostics, but no
// HTTP and no service.
type memAccount struct{ account []byte }

func (m *memAccount) Do(_ context.Context, _ string, req *cosmos.Request) (*cosmos.Response, error) {
	if req.Path == "/" {
		return &cosmos.Response{StatusCode: 200, Body: m.account, Header: http.Header{}}, nil
	}
	return &cosmos.Response{StatusCode: 201, Body: []byte(`{"id":"x"}`), Header: http.Header{}, RequestCharge: 5}, nil
}

// BenchmarkImportLine is the client's CPU and allocations per imported line of ≈200
// bytes, for --mode create (with its _trackingId) and --mode upsert: bulk.Import with
// the real engine over a transport that answers at once (b.N lines a run). cpu-ns/line
// is the process's user+system CPU time (the reader, 16 writers and the checkpointing
// together), allocs/op and B/op are per line.
//
//	go test -run='^$' -bench=BenchmarkImportLine -benchtime=20000x ./bulk/
func BenchmarkImportLine(b *testing.B) {
	locs := []cosmos.Location{{Name: "East US", Endpoint: "http://east/"}}
	account, _ := json.Marshal(cosmos.Account{ID: "mem", ReadableLocations: locs, WritableLocations: locs})
	for _, mode := range []Mode{Create, Upsert} {
		b.Run("mode="+string(mode), func(b *testing.B) {
			c, err := engine.New(engine.Options{Endpoint: "http://global", Transport: &memAccount{account: account}})
			if err != nil {
				b.Fatal(err)
			}
			var in bytes.Buffer
			for k := 1; k <= b.N; k++ {
				fmt.Fprintf(&in, `{"id":"item-%d","pk":"tenant-%d","n":%d,"tags":["a","b"],"nested":{"x":1.5,"y":null},"payload":"%s"}`+"\n",
					k, k%97, k, strings.Repeat("x", 100))
			}
			o := Options{Client: c, Target: Target{Database: "db", Container: "c"}, Mode: mode,
				PartitionKey: cosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Kind: "Hash"}, CheckpointEvery: time.Hour}
			src, err := NewSource(context.Background(), bytes.NewReader(in.Bytes()), "bench", int64(in.Len()))
			if err != nil {
				b.Fatal(err)
			}
			st := NewState(Fingerprint{}, o.Target, mode)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := testkit.ProcessCPU()
			rep, err := Import(context.Background(), src, st, o)
			cpu := testkit.ProcessCPU() - cpu0
			b.StopTimer()
			if err != nil || rep.Lines != int64(b.N) || rep.Created != int64(b.N) {
				b.Fatalf("report %+v: %v", rep.Counts, err)
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/line")
		})
	}
}
