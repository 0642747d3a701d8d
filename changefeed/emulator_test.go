package changefeed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/engine"
)

type emu struct {
	srv *emulator.Server
	c   *engine.Client
	pad string // added to every item written (the benchmark's items are ≈ 270 bytes)
}

func startEmulator(tb testing.TB, ranges int) *emu {
	tb.Helper()
	srv, err := emulator.Start(emulator.Config{Ranges: ranges, Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	c, err := engine.New(engine.Options{Endpoint: srv.Endpoint(), Transport: tr})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		c.Close()
		tr.HTTP.CloseIdleConnections()
		srv.Close()
	})
	return &emu{srv: srv, c: c}
}

// write upserts items id-from … id-(to-1), spread over 37 partition keys.
func (e *emu) write(tb testing.TB, from, to int) {
	tb.Helper()
	var next atomic.Int64
	next.Store(int64(from))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= to {
					return
				}
				body := fmt.Sprintf(`{"id":"id-%d","pk":"p%d","n":%d,"pad":%q}`, i, i%37, i, e.pad)
				if _, err := e.c.Execute(context.Background(), engine.Operation{Kind: engine.OpUpsert, Database: "db", Container: "c", Body: []byte(body)}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
}

func (e *emu) options() Options {
	return Options{Client: e.c, Database: "db", Container: "c", Until: CaughtUp, PageSize: 50}
}

// drain reads the feed to its end and counts each id.
func drain(t *testing.T, f *Feed) (map[string]int, []*Batch) {
	t.Helper()
	seen := map[string]int{}
	var batches []*Batch
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		b, err := f.Next(ctx)
		if errors.Is(err, io.EOF) {
			return seen, batches
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		batches = append(batches, b)
		for _, it := range b.Items {
			var d struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(it, &d); err != nil {
				t.Fatal(err)
			}
			seen[d.ID]++
		}
	}
}

func wantIDs(t *testing.T, seen map[string]int, from, to int) {
	t.Helper()
	if len(seen) != to-from {
		t.Errorf("got %d distinct ids, want %d", len(seen), to-from)
	}
	for i := from; i < to; i++ {
		if n := seen[fmt.Sprintf("id-%d", i)]; n != 1 {
			t.Errorf("id-%d delivered %d times, want once", i, n)
		}
	}
}

func TestEmulatorFromTheBeginningThenResumeFromTheSavedState(t *testing.T) {
	e := startEmulator(t, 4)
	e.write(t, 0, 300)
	f, err := Open(context.Background(), e.options())
	if err != nil {
		t.Fatal(err)
	}
	seen, batches := drain(t, f)
	f.Close()
	wantIDs(t, seen, 0, 300)
	ranges := map[string]bool{}
	for _, b := range batches {
		ranges[b.RangeID] = true
		if len(b.Items) > 50 {
			t.Errorf("a batch of %d items, page size 50", len(b.Items))
		}
	}
	if len(ranges) != 4 {
		t.Errorf("batches came from ranges %v, want all 4", ranges)
	}
	path := filepath.Join(t.TempDir(), "feed.json")
	if err := f.State().Save(path); err != nil {
		t.Fatal(err)
	}

	// 100 new items and 20 of the old ones changed again: each once.
	e.write(t, 300, 400)
	e.write(t, 0, 20)
	st, err := LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	o := e.options()
	o.State = st
	f2, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	seen2, _ := drain(t, f2)
	if len(seen2) != 120 {
		t.Errorf("resumed feed delivered %d distinct ids, want 120 (100 new, 20 changed)", len(seen2))
	}
	for id, n := range seen2 {
		if n != 1 {
			t.Errorf("%s delivered %d times", id, n)
		}
	}
	if seen2["id-0"] != 1 || seen2["id-399"] != 1 || seen2["id-20"] != 0 {
		t.Errorf("resumed feed: id-0 %d, id-399 %d, id-20 %d times; want 1, 1, 0", seen2["id-0"], seen2["id-399"], seen2["id-20"])
	}
}

// With ReuseItemMemory the feed delivers every change whole: polls are read into
// buffers lent again once their batch was followed by another Next, and a buffer given
// back is zeroed (cosmos.BodyBuffers.Put), so that a batch whose buffer went back too
// early, or was lent to a new poll while the batch was still the caller's, shows here
// as NUL bytes or as items that changed before the next Next.
func TestEmulatorReusedPollMemoryDeliversEveryChangeWhole(t *testing.T) {
	e := startEmulator(t, 4)
	e.pad = strings.Repeat("x", 200)
	e.write(t, 0, 600)
	o := e.options()
	o.ReuseItemMemory = true
	f, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]int{}
	var last, lastCopies []json.RawMessage
	for {
		for i := range last {
			if string(last[i]) != string(lastCopies[i]) {
				t.Fatalf("an item changed before the next call of Next: %q, was %q", last[i], lastCopies[i])
			}
		}
		b, err := f.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		lastCopies = lastCopies[:0]
		for _, item := range b.Items {
			if strings.IndexByte(string(item), 0) >= 0 {
				t.Fatalf("an item came from a buffer already given back: %q", item)
			}
			var d struct {
				ID  string `json:"id"`
				Pad string `json:"pad"`
			}
			if err := json.Unmarshal(item, &d); err != nil || d.Pad != e.pad {
				t.Fatalf("item %q: %v", item, err)
			}
			seen[d.ID]++
			lastCopies = append(lastCopies, append(json.RawMessage(nil), item...))
		}
		last = b.Items
	}
	wantIDs(t, seen, 0, 600)
}

func TestEmulatorFromNowStartPointAndPartitionKey(t *testing.T) {
	e := startEmulator(t, 4)
	e.write(t, 0, 100)

	t.Run("from now delivers only later changes", func(t *testing.T) {
		o := e.options()
		o.From = StartFrom{Kind: Now}
		o.Until, o.PollDelay = Forever, 5*time.Millisecond
		f, err := Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		e.write(t, 100, 130)
		seen := map[string]int{}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for len(seen) < 30 {
			b, err := f.Next(ctx)
			if err != nil {
				t.Fatalf("Next: %v (after %d ids)", err, len(seen))
			}
			for _, it := range b.Items {
				var d struct{ ID string }
				json.Unmarshal(it, &d)
				seen[d.ID]++
			}
		}
		wantIDs(t, seen, 100, 130)
	})

	t.Run("start point stops at the position Open saw", func(t *testing.T) {
		o := e.options()
		o.Until = StartPoint
		o.PageSize = 7
		f, err := Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		// Written after Open: not in the snapshot, even while it is read.
		e.write(t, 500, 540)
		seen, _ := drain(t, f)
		wantIDs(t, seen, 0, 130)
	})

	t.Run("partition key", func(t *testing.T) {
		o := e.options()
		o.PartitionKey = mustPK("p3")
		f, err := Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		seen, batches := drain(t, f)
		for id := range seen {
			var n int
			fmt.Sscanf(id, "id-%d", &n)
			if n%37 != 3 {
				t.Errorf("%s is not in partition p3", id)
			}
		}
		if len(seen) == 0 || batches[0].RangeID != "" {
			t.Errorf("got %d ids, first batch from range %q", len(seen), batches[0].RangeID)
		}
		st := f.State()
		if len(st.Ranges) != 1 || string(st.PartitionKey) != `["p3"]` {
			t.Errorf("state %+v", st)
		}
	})
}

func TestEmulatorStateOfAnotherContainerIsRefused(t *testing.T) {
	e := startEmulator(t, 2)
	f, err := Open(context.Background(), e.options())
	if err != nil {
		t.Fatal(err)
	}
	drain(t, f)
	f.Close()
	st := f.State()
	o := e.options()
	o.Container = "other"
	o.State = st
	_, err = Open(context.Background(), o)
	var se *StateError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "db/c") || !strings.Contains(err.Error(), "db/other") {
		t.Fatalf("Open with another container's state: %v, want a StateError naming both", err)
	}
	o = e.options()
	o.PartitionKey = mustPK("p1")
	o.State = st
	if _, err = Open(context.Background(), o); !errors.As(err, &se) {
		t.Fatalf("Open with the whole container's state for one partition key: %v", err)
	}
}

func TestEmulatorMissingContainer(t *testing.T) {
	e := startEmulator(t, 1)
	o := e.options()
	o.Container = "nope"
	_, err := Open(context.Background(), o)
	var ce *cosmos.Error
	if !errors.As(err, &ce) || ce.StatusCode != 404 {
		t.Fatalf("Open of a missing container: %v, want a 404", err)
	}
}

// A range that answers 410/1002 (the emulator's fault; its ranges do not really split):
// the feed re-reads the ranges and goes on from the same continuation, losing nothing.
func TestEmulatorGoneRangeIsFollowed(t *testing.T) {
	e := startEmulator(t, 4)
	e.write(t, 0, 200)
	if _, err := e.srv.Faults().Add(faults.Rule{Effect: faults.EffectStatus, Status: 410, SubStatus: 1002, Operations: []string{"query"}, Count: 3}); err != nil {
		t.Fatal(err)
	}
	f, err := Open(context.Background(), e.options())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen, batches := drain(t, f)
	wantIDs(t, seen, 0, 200)
	splits := 0
	for _, b := range batches {
		if b.Info.Kind == KindRanges && strings.Contains(b.Info.Note, "split into") {
			splits++
		}
	}
	if splits != 3 {
		t.Errorf("%d splits reported, want 3", splits)
	}
}

func mustPK(v string) cosmos.PartitionKey {
	pk, err := cosmos.PK(v)
	if err != nil {
		panic(err)
	}
	return pk
}
