package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
	"github.com/cosmosctl/cosmosctl/query"
)

// interrupter is the output of a run that is interrupted (its context cancelled, as
// Ctrl-C does) once it has written after lines.
type interrupter struct {
	f      *os.File
	lines  int
	after  int
	cancel context.CancelFunc
}

func (w *interrupter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.lines += bytes.Count(p[:n], []byte("\n"))
	if w.lines >= w.after {
		w.cancel()
	}
	return n, err
}

// An export of an ORDER BY query over values of every JSON type, interrupted after
// every few items and resumed from its state file each time, ends with a file that holds
// exactly what one uninterrupted run of the query returns, in the same order.
func TestAnInterruptedOrderByExportResumesToTheWholeResult(t *testing.T) {
	const n = 300
	srv, err := emulator.Start(emulator.Config{Ranges: 4, Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "m", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	testkit.SeedMixed(t, srv, "db", "m", testkit.MixedDocs(31, n))
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	defer tr.HTTP.CloseIdleConnections()
	c, err := engine.New(engine.Options{Endpoint: srv.Endpoint(), Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for fi, form := range testkit.MixedOrderForms {
		t.Run(form.By, func(t *testing.T) {
			sql := "SELECT c.id, c.a, c.b FROM c ORDER BY " + form.By
			o := query.Options{Client: c, Database: "db", Container: "m", Spec: cosmos.QuerySpec{Query: sql}, PageSize: 10}
			it, err := query.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			for {
				items, _, err := it.Next(context.Background())
				for _, item := range items {
					var b bytes.Buffer
					json.Compact(&b, item)
					want.Write(b.Bytes())
					want.WriteByte('\n')
				}
				if err != nil {
					if !errors.Is(err, io.EOF) {
						t.Fatal(err)
					}
					break
				}
			}
			it.Close()
			dir := t.TempDir()
			sp, op := filepath.Join(dir, "state.json"), filepath.Join(dir, "out.ndjson")
			binding := Binding{Endpoint: srv.Endpoint(), Database: "db", Container: "m", Source: SourceQuery, Query: sql, Output: op}
			interrupts := []int{1, 37, 10, 97, 13, 61}
			runs := 0
			for run := 0; ; run++ {
				if run > n {
					t.Fatal("the export never completes")
				}
				st, err := LoadState(sp)
				if err != nil {
					t.Fatal(err)
				}
				if st == nil {
					st = NewState(binding)
				} else if err := st.Check(sp, binding); err != nil {
					t.Fatal(err)
				}
				if st.Complete {
					runs = run
					break
				}
				f, err := OpenOutput(op, st)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				src, err := NewQuerySource(ctx, o, st.Position)
				if err != nil {
					t.Fatal(err)
				}
				out := &interrupter{f: f, after: interrupts[(run+fi)%len(interrupts)], cancel: cancel}
				res, err := Run(ctx, Options{Source: src, Out: out, Sync: f.Sync, State: st, StatePath: sp})
				src.Close()
				cancel()
				f.Close()
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Fatalf("run %d: %v", run, err)
				}
				if !res.Complete && res.Checkpoint == nil {
					t.Fatalf("run %d stopped with no checkpoint", run)
				}
			}
			if runs < n/100 {
				t.Fatalf("the export completed in %d runs: too few interrupts to test resuming", runs)
			}
			got, _ := os.ReadFile(op)
			if !bytes.Equal(got, want.Bytes()) {
				gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want.Bytes(), []byte("\n"))
				for i := range min(len(gl), len(wl)) {
					if !bytes.Equal(gl[i], wl[i]) {
						t.Fatalf("line %d of the resumed export is %s, one run gives %s (%d lines, want %d)", i+1, gl[i], wl[i], len(gl), len(wl))
					}
				}
				t.Fatalf("the resumed export has %d lines, one run %d", len(gl), len(wl))
			}
			var items []json.RawMessage
			for _, l := range bytes.Split(bytes.TrimSuffix(got, []byte("\n")), []byte("\n")) {
				items = append(items, l)
			}
			if err := testkit.MixedOrderError(items, form.Keys, form.Desc, n); err != nil {
				t.Fatal(err)
			}
		})
	}
}
