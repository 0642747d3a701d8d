package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/cosmosctl/cosmosctl/changefeed"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/query"
)

type emu struct {
	srv *emulator.Server
	c   *engine.Client
}

func startEmulator(tb testing.TB) *emu {
	tb.Helper()
	srv, err := emulator.Start(emulator.Config{Ranges: 4, Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
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

func (e *emu) do(tb testing.TB, kind engine.OpKind, id string, version int) {
	tb.Helper()
	op := engine.Operation{Kind: kind, Database: "db", Container: "c", ID: id}
	var n int
	fmt.Sscanf(id, "id-%d", &n)
	pk := fmt.Sprintf("p%d", n%37)
	if kind == engine.OpDelete {
		op.PartitionKey, _ = cosmos.PK(pk)
	} else {
		op.Body = fmt.Appendf(nil, `{"id":%q,"pk":%q,"v":%d}`, id, pk, version)
	}
	if _, err := e.c.Execute(context.Background(), op); err != nil {
		tb.Errorf("%s %s: %v", kind, id, err)
	}
}

// exported counts each id of the NDJSON and keeps its version.
func exported(t *testing.T, b []byte) (count map[string]int, version map[string]int) {
	t.Helper()
	count, version = map[string]int{}, map[string]int{}
	for _, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var v struct {
			ID string
			V  int
		}
		if err := json.Unmarshal(l, &v); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		count[v.ID]++
		version[v.ID] = v.V
	}
	return count, version
}

// TestAQueryExportOfAChangingContainerHasEveryLastingItemOnce: while an export reads, a
// writer updates items (read or not yet), deletes some and creates others. Every item
// that exists from the start to the end is in the file exactly once, whatever the
// timing; no item is there twice.
func TestAQueryExportOfAChangingContainerHasEveryLastingItemOnce(t *testing.T) {
	e := startEmulator(t)
	const n = 400
	for i := range n {
		e.do(t, engine.OpCreate, fmt.Sprintf("id-%d", i), 0)
	}
	src, err := NewQuerySource(context.Background(), query.Options{Client: e.c, Database: "db", Container: "c",
		Spec: cosmos.QuerySpec{Query: "SELECT * FROM c"}, PageSize: 3, Parallelism: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out bytes.Buffer
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for round := 1; ; round++ {
			select {
			case <-stop:
				return
			default:
			}
			// Items 0-99 are updated again and again, 300-349 deleted one a round, new
			// ones created from 1000.
			e.do(t, engine.OpUpsert, fmt.Sprintf("id-%d", (round*7)%100), round)
			if round <= 50 {
				e.do(t, engine.OpDelete, fmt.Sprintf("id-%d", 299+round), 0)
			}
			e.do(t, engine.OpCreate, fmt.Sprintf("id-%d", 999+round), 0)
		}
	})
	res, err := Run(context.Background(), Options{Source: src, Out: &out})
	close(stop)
	wg.Wait()
	if err != nil || !res.Complete {
		t.Fatal(res, err)
	}
	count, _ := exported(t, out.Bytes())
	for id, c := range count {
		if c != 1 {
			t.Errorf("%s is in the file %d times", id, c)
		}
	}
	for i := range 300 {
		if id := fmt.Sprintf("id-%d", i); count[id] != 1 {
			t.Errorf("%s, which existed throughout, is missing", id)
		}
	}
	for i := 350; i < n; i++ {
		if id := fmt.Sprintf("id-%d", i); count[id] != 1 {
			t.Errorf("%s, which existed throughout, is missing", id)
		}
	}
}

// TestAFeedSnapshotLeavesOutItemsChangedBeforeTheirRangeWasRead: the change feed's
// latest version mode has each item once, at its latest change. After the feed opened
// (pages of one item: each range has read at most its first), an item updated after the
// start is missing from the snapshot, as are one deleted and one created after it;
// every other item is there once.
func TestAFeedSnapshotLeavesOutItemsChangedBeforeTheirRangeWasRead(t *testing.T) {
	e := startEmulator(t)
	const n = 80
	for i := range n {
		e.do(t, engine.OpCreate, fmt.Sprintf("id-%d", i), 0)
	}
	src, err := NewFeedSource(context.Background(), changefeed.Options{Client: e.c, Database: "db", Container: "c", PageSize: 1, Parallelism: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	e.do(t, engine.OpUpsert, "id-79", 1)
	e.do(t, engine.OpDelete, "id-78", 0)
	e.do(t, engine.OpCreate, "id-100", 0)
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{Source: src, Out: &out, Strip: FeedProperties})
	if err != nil || !res.Complete {
		t.Fatal(res, err)
	}
	count, _ := exported(t, out.Bytes())
	for i := range 78 {
		if id := fmt.Sprintf("id-%d", i); count[id] != 1 {
			t.Errorf("%s is in the snapshot %d times, want once", id, count[id])
		}
	}
	for _, id := range []string{"id-78", "id-79", "id-100"} {
		if count[id] != 0 {
			t.Errorf("%s, changed after the start before its range read it, is in the snapshot", id)
		}
	}
	if bytes.Contains(out.Bytes(), []byte(`"_lsn"`)) {
		t.Error("_lsn kept")
	}
}
