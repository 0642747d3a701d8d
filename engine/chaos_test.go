package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/retries"
)

// chaosTally counts what callers were told against what the store holds.
type chaosTally struct {
	mu          sync.Mutex
	ok          int
	falseConf   int // 409/412 caused by our own earlier, lost success
	ambiguous   int // errors that say the write may have been applied
	otherErrors int
	resolved    int
	reportedOK  map[string]bool
}

func (c *chaosTally) String() string {
	return fmt.Sprintf("ok=%d resolved=%d false-conflicts=%d ambiguous-errors=%d other-errors=%d", c.ok, c.resolved, c.falseConf, c.ambiguous, c.otherErrors)
}

func chaosEmulator(t *testing.T, ops string) (*emulator.Server, *Client, func()) {
	t.Helper()
	srv, err := emulator.Start(emulator.Config{Seed: 7, Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	p := retries.DefaultPolicy()
	p.WriteRetryBaseWait, p.WriteRetryMaxWait = time.Millisecond, 5*time.Millisecond
	p.MaxWriteRetries = 10
	c, err := New(Options{Endpoint: srv.Endpoint(), Transport: tr, Retry: &p})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c, func() { tr.HTTP.CloseIdleConnections(); srv.Close() }
}

func countItems(t *testing.T, c *Client, srv *emulator.Server) map[string]string {
	t.Helper()
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	defer tr.HTTP.CloseIdleConnections()
	out := map[string]string{}
	cont := ""
	for {
		req := &cosmos.Request{Method: http.MethodGet, Path: cosmos.ItemsPath("db", "c"), Header: http.Header{}}
		req.Header.Set(cosmos.HeaderMaxItemCount, "1000")
		if cont != "" {
			req.Header.Set(cosmos.HeaderContinuation, cont)
		}
		resp, err := tr.Do(context.Background(), srv.Endpoint(), req)
		if err != nil {
			t.Fatal(err)
		}
		var feed struct{ Documents []map[string]any }
		json.Unmarshal(resp.Body, &feed)
		for _, d := range feed.Documents {
			id := d["id"].(string)
			if _, dup := out[id]; dup {
				t.Fatalf("item %s stored twice", id)
			}
			v, _ := d["v"].(string)
			out[id] = v
		}
		if cont = resp.Header.Get(cosmos.HeaderContinuation); cont == "" {
			return out
		}
	}
}

const chaosWrites = 500

// runChaos sends chaosWrites operations from 16 workers and tallies what they were told.
func runChaos(t *testing.T, c *Client, op func(i int) Operation) *chaosTally {
	tally := &chaosTally{reportedOK: map[string]bool{}}
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				o := op(i)
				res, err := c.Execute(context.Background(), o)
				tally.mu.Lock()
				st, _, isCosmos := cosmos.Status(err)
				var ne *cosmos.NetworkError
				switch {
				case err == nil:
					tally.ok++
					tally.reportedOK[o.ID] = true
					if res.Diagnostics.Resolution != "" {
						tally.resolved++
					}
				case isCosmos && (st == 409 || st == 412):
					tally.falseConf++
				case errors.As(err, &ne) && ne.Sent:
					tally.ambiguous++
				default:
					tally.otherErrors++
					t.Logf("unexpected error for %s: %v", o.ID, err)
				}
				tally.mu.Unlock()
			}
		}()
	}
	for i := 0; i < chaosWrites; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	return tally
}

// TestChaosCreatesUnderLostAnswers: 30 % of creates are applied and then lose their
// answer (the emulator's drop-response fault).
func TestChaosCreatesUnderLostAnswers(t *testing.T) {
	for _, policy := range []retries.WritePolicy{retries.WriteRetriesWithTrackingID, retries.WriteRetries, retries.NoWriteRetries} {
		t.Run(policy.String(), func(t *testing.T) {
			srv, c, done := chaosEmulator(t, "create")
			defer done()
			srv.AddFault(faults.Rule{Operations: []string{"create"}, Effect: "drop-response", Probability: 0.3})
			tally := runChaos(t, c, func(i int) Operation {
				id := fmt.Sprintf("item-%03d", i)
				return Operation{Kind: OpCreate, Database: "db", Container: "c", ID: id, Body: []byte(fmt.Sprintf(`{"id":%q,"pk":"p%d","v":"1"}`, id, i%7)), WriteRetries: policy}
			})
			stored := countItems(t, c, srv)
			t.Logf("creates, policy %s: %s; stored %d of %d", policy, tally, len(stored), chaosWrites)
			for id := range tally.reportedOK {
				if _, ok := stored[id]; !ok {
					t.Fatalf("%s was reported written but is not stored", id)
				}
			}
			switch policy {
			case retries.WriteRetriesWithTrackingID:
				if len(stored) != chaosWrites || tally.ok != chaosWrites || tally.falseConf != 0 || tally.resolved == 0 {
					t.Fatalf("tracking id must store exactly %d items with no error and no false 409: %s, stored %d", chaosWrites, tally, len(stored))
				}
			case retries.WriteRetries:
				if len(stored) != chaosWrites || tally.falseConf == 0 || tally.ok+tally.falseConf != chaosWrites {
					t.Fatalf("retries without tracking id store everything but report false 409s: %s, stored %d", tally, len(stored))
				}
			case retries.NoWriteRetries:
				if tally.ambiguous == 0 || tally.ok+tally.ambiguous != chaosWrites || len(stored) != chaosWrites {
					t.Fatalf("without retries the lost answers surface as errors: %s, stored %d", tally, len(stored))
				}
			}
		})
	}
}

// TestChaosConditionalReplacesUnderLostAnswers: replaces with If-Match of the current
// etag; 30 % are applied and then lose their answer, so a retry sees 412.
func TestChaosConditionalReplacesUnderLostAnswers(t *testing.T) {
	for _, policy := range []retries.WritePolicy{retries.WriteRetriesWithTrackingID, retries.WriteRetries, retries.NoWriteRetries} {
		t.Run(policy.String(), func(t *testing.T) {
			srv, c, done := chaosEmulator(t, "replace")
			defer done()
			etags := make([]string, chaosWrites)
			for i := range etags {
				res, err := c.Execute(context.Background(), Operation{Kind: OpCreate, Database: "db", Container: "c", Body: []byte(fmt.Sprintf(`{"id":"item-%03d","pk":"p","v":"1"}`, i))})
				if err != nil {
					t.Fatal(err)
				}
				etags[i] = res.ETag
			}
			srv.AddFault(faults.Rule{Operations: []string{"replace"}, Effect: "drop-response", Probability: 0.3})
			tally := runChaos(t, c, func(i int) Operation {
				id := fmt.Sprintf("item-%03d", i)
				return Operation{Kind: OpReplace, Database: "db", Container: "c", ID: id, IfMatch: etags[i],
					Body: []byte(fmt.Sprintf(`{"id":%q,"pk":"p","v":"2"}`, id)), WriteRetries: policy}
			})
			stored := countItems(t, c, srv)
			updated := 0
			for _, v := range stored {
				if v == "2" {
					updated++
				}
			}
			t.Logf("replaces with If-Match, policy %s: %s; updated %d of %d", policy, tally, updated, chaosWrites)
			for id := range tally.reportedOK {
				if stored[id] != "2" {
					t.Fatalf("%s was reported replaced but holds v=%s", id, stored[id])
				}
			}
			switch policy {
			case retries.WriteRetriesWithTrackingID:
				if updated != chaosWrites || tally.ok != chaosWrites || tally.falseConf != 0 {
					t.Fatalf("tracking id: %s, updated %d", tally, updated)
				}
			case retries.WriteRetries:
				if updated != chaosWrites || tally.falseConf == 0 {
					t.Fatalf("retries: %s, updated %d", tally, updated)
				}
			case retries.NoWriteRetries:
				if tally.ambiguous == 0 || tally.ok+tally.ambiguous != chaosWrites {
					t.Fatalf("no retries: %s, updated %d", tally, updated)
				}
			}
		})
	}
}
