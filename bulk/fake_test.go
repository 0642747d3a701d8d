package bulk

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

// fakeContainer is a container that answers like the engine does for writes with the
// tracking-id policy: a create of an id already stored is a 409, unless the write says
// it may have been sent before and the stored item carries its _trackingId.
type fakeContainer struct {
	mu    sync.Mutex
	items map[string]string // id → stored document
	// fail[id] are errors the next writes of id get before one goes through.
	fail map[string][]error
	// cancelAfter cancels the run after that many stored items, and every write that
	// starts after it is applied and its answer lost, as a killed process's are.
	cancelAfter int
	cancel      context.CancelFunc
	stored      int
	sends       int
	sentBefore  map[string]bool
	throttle    map[string]time.Duration
	// withContent counts the writes that asked for the document back (no
	// MinimalResponse): an import prints none.
	withContent int
}

func newFakeContainer() *fakeContainer {
	return &fakeContainer{items: map[string]string{}, fail: map[string][]error{}, sentBefore: map[string]bool{}, throttle: map[string]time.Duration{}}
}

func (f *fakeContainer) Execute(ctx context.Context, op engine.Operation) (*engine.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sends++
	if !op.MinimalResponse {
		f.withContent++
	}
	res := &engine.Result{Diagnostics: &engine.Diagnostics{RequestCharge: 5}}
	if d, ok := f.throttle[op.ID]; ok && op.Throttled != nil {
		delete(f.throttle, op.ID)
		op.Throttled(d)
	}
	if errs := f.fail[op.ID]; len(errs) > 0 {
		f.fail[op.ID] = errs[1:]
		return res, errs[0]
	}
	if op.SentBefore {
		f.sentBefore[op.ID] = true
	}
	body := string(op.Body)
	if op.Kind == engine.OpCreate {
		body = strings.TrimSuffix(body, "}") + fmt.Sprintf(`,"_trackingId":%q}`, op.TrackingID)
	}
	lost := ctx.Err() != nil
	old, exists := f.items[op.ID]
	switch {
	case op.Kind == engine.OpUpsert:
		f.items[op.ID] = body
		res.StatusCode = 201
		if exists {
			res.StatusCode = 200
		}
	case exists && op.SentBefore && strings.Contains(old, fmt.Sprintf(`"_trackingId":%q`, op.TrackingID)):
		res.StatusCode = 201
	case exists:
		return res, &cosmos.Error{StatusCode: 409}
	default:
		f.items[op.ID] = body
		res.StatusCode = 201
	}
	if !exists {
		f.stored++
		if f.cancelAfter > 0 && f.stored == f.cancelAfter {
			f.cancel()
		}
	}
	if lost {
		return res, context.Canceled
	}
	return res, nil
}

// ndjson makes n lines {"id":"i<k>","pk":"p<k%7>"}.
func ndjson(n int) string {
	var b strings.Builder
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&b, `{"id":"i%d","pk":"p%d","n":%d}`+"\n", k, k%7, k)
	}
	return b.String()
}

// fakeLimiter records what the import tells it.
type fakeLimiter struct {
	mu        sync.Mutex
	waits     int
	spent     float64
	throttled []time.Duration
}

func (l *fakeLimiter) Wait(ctx context.Context) error {
	l.mu.Lock()
	l.waits++
	l.mu.Unlock()
	return ctx.Err()
}
func (l *fakeLimiter) Spent(ru float64) { l.mu.Lock(); l.spent += ru; l.mu.Unlock() }
func (l *fakeLimiter) Throttled(d time.Duration) {
	l.mu.Lock()
	l.throttled = append(l.throttled, d)
	l.mu.Unlock()
}

var pkDef = cosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Kind: "Hash", Version: 2}

func testOptions(c Executor) Options {
	return Options{Client: c, Target: Target{Endpoint: "https://acct", Database: "app", Container: "items"}, PartitionKey: pkDef,
		Mode: Create, Concurrency: 4, RetryWait: time.Millisecond, CheckpointEvery: time.Hour}
}

func mustSource(t *testing.T, text string) *Source {
	t.Helper()
	src, err := NewSource(context.Background(), strings.NewReader(text), "items.ndjson", int64(len(text)))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func rejections(t *testing.T, text string) []Rejection {
	t.Helper()
	var out []Rejection
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if l == "" {
			continue
		}
		var r Rejection
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("rejected line %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}
