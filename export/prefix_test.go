package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"github.com/cosmosctl/cosmosctl/changefeed"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/query"
)

// startPrefixEmulator is an emulator whose container db/c is partitioned by
// /tenant,/user, 4 ranges, 12 items of each tenant t0…t7; the range holding tenant t1's
// keys is split at their median, so that they span two ranges, each of which holds
// another tenant's keys too (t7's below them, t3's above: the hashes decide).
func startPrefixEmulator(t *testing.T) *emu {
	t.Helper()
	srv, err := emulator.Start(emulator.Config{Ranges: 4, Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/tenant", "/user"}}}}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	c, err := engine.New(engine.Options{Endpoint: srv.Endpoint(), Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		tr.HTTP.CloseIdleConnections()
		srv.Close()
	})
	var keys []string
	for tn := 0; tn < 8; tn++ {
		for u := 0; u < 12; u++ {
			body := fmt.Appendf(nil, `{"id":"t%d-u%02d","tenant":"t%d","user":"u%02d"}`, tn, u, tn, u)
			if _, err := c.Execute(context.Background(), engine.Operation{Kind: engine.OpCreate, Database: "db", Container: "c", Body: body}); err != nil {
				t.Fatal(err)
			}
			if tn == 1 {
				pk, _ := cosmos.PK("t1", fmt.Sprintf("u%02d", u))
				keys = append(keys, cosmos.EffectivePartitionKey(pk))
			}
		}
	}
	sort.Strings(keys)
	ranges, _, err := c.PartitionKeyRanges(context.Background(), "db", "c", false, 0)
	if err != nil {
		t.Fatal(err)
	}
	home, ok := cosmos.RangeFor(keys[0], ranges)
	if !ok {
		t.Fatal("no range holds t1's keys")
	}
	if _, err := srv.SplitRange(emulator.SplitRequest{Database: "db", Container: "c", Range: home.ID, At: keys[len(keys)/2]}); err != nil {
		t.Fatal(err)
	}
	return &emu{srv: srv, c: c}
}

// An export of a prefix interrupted after its first page and resumed from its state
// writes every item of the prefix once, and nothing else: the position, a query token
// or a change feed state, keeps each range narrowed to the prefix's keys.
func TestAnInterruptedExportOfAPrefixResumesWithinIt(t *testing.T) {
	e := startPrefixEmulator(t)
	prefix, _ := cosmos.PK("t1")
	for _, source := range []string{SourceQuery, SourceChangeFeed} {
		t.Run(source, func(t *testing.T) {
			open := func(ctx context.Context, position json.RawMessage) Source {
				var src Source
				var err error
				if source == SourceQuery {
					src, err = NewQuerySource(ctx, query.Options{Client: e.c, Database: "db", Container: "c",
						Spec: cosmos.QuerySpec{Query: "SELECT * FROM c"}, PartitionKeyPrefix: prefix, PageSize: 2, Parallelism: 1}, position)
				} else {
					src, err = NewFeedSource(ctx, changefeed.Options{Client: e.c, Database: "db", Container: "c",
						PartitionKeyPrefix: prefix, PageSize: 2, Parallelism: 1}, position)
				}
				if err != nil {
					t.Fatal(err)
				}
				return src
			}
			statePath := filepath.Join(t.TempDir(), "state")
			st := NewState(Binding{Source: source, PartitionKey: json.RawMessage(prefix.JSON())})
			var out bytes.Buffer
			runs := 0
			for ; runs < 50; runs++ {
				ctx, cancel := context.WithCancel(context.Background())
				src := open(ctx, st.Position)
				// Stopped after the first page with items: the next run resumes from
				// the checkpoint.
				res, err := Run(ctx, Options{Source: src, Out: &out, State: st, StatePath: statePath,
					Progress: func(c Counts) {
						if c.Items > st.Items {
							cancel()
						}
					}})
				src.Close()
				cancel()
				if err == nil && res.Complete {
					break
				}
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("run %d: %v", runs, err)
				}
				if res.Checkpoint == nil {
					t.Fatalf("run %d stopped without a checkpoint", runs)
				}
				st = res.Checkpoint
				out.Truncate(int(st.OutputBytes))
			}
			if runs < 2 {
				t.Fatalf("the export took %d runs: it was never interrupted", runs+1)
			}
			count, _ := exported(t, out.Bytes())
			for id, n := range count {
				if id[:3] != "t1-" || n != 1 {
					t.Errorf("%s is in the file %d times", id, n)
				}
			}
			for u := 0; u < 12; u++ {
				if id := fmt.Sprintf("t1-u%02d", u); count[id] != 1 {
					t.Errorf("%s is in the file %d times, want once", id, count[id])
				}
			}
		})
	}
}
