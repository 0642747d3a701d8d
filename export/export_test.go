package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/internal/rulimit"
)

// fakeSource returns items {"id":"iN","_rid":…} for N from its position to n, in pages
// of 1 to 7 items (seeded), and fails with err after failAfter items if set.
type fakeSource struct {
	next, n   int
	rnd       *rand.Rand
	failAfter int
	err       error
	closed    bool
}

func newFake(pos json.RawMessage, n int, seed uint64) *fakeSource {
	s := &fakeSource{n: n, rnd: rand.New(rand.NewPCG(seed, 1)), failAfter: -1}
	if len(pos) > 0 {
		_ = json.Unmarshal(pos, &s.next)
	}
	return s
}

func (s *fakeSource) Next(ctx context.Context) (Page, error) {
	if err := ctx.Err(); err != nil {
		return Page{}, err
	}
	if s.failAfter >= 0 && s.next >= s.failAfter {
		return Page{Requests: 1}, s.err
	}
	if s.next >= s.n {
		return Page{}, io.EOF
	}
	k := min(1+s.rnd.IntN(7), s.n-s.next)
	var p Page
	for range k {
		p.Items = append(p.Items, json.RawMessage(fmt.Sprintf(`{"id":"i%d","n":{"_rid":"inner"},"_rid":"r%d","_ts":1,"_lsn":3}`, s.next, s.next)))
		s.next++
	}
	p.RequestCharge, p.Requests = float64(k), 1
	if k%2 == 1 {
		p.Throttled = 1
	}
	return p, nil
}

func (s *fakeSource) Position() (json.RawMessage, error) { return json.Marshal(s.next) }
func (s *fakeSource) Close()                             { s.closed = true }

func ids(t *testing.T, b []byte) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l == "" {
			continue
		}
		var v struct{ ID string }
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, v.ID)
	}
	return out
}

func wantIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("i%d", i)
	}
	return out
}

// snapshotWriter writes to the output file and, before each write, keeps a copy of the
// output file and of the state file as a process killed at that moment leaves them.
type snapshotWriter struct {
	f         *os.File
	statePath string
	snaps     []snapshot
}

type snapshot struct{ out, state []byte }

func (w *snapshotWriter) snap() {
	out, _ := os.ReadFile(w.f.Name())
	st, err := os.ReadFile(w.statePath)
	if err != nil {
		st = nil
	}
	w.snaps = append(w.snaps, snapshot{out, st})
}

func (w *snapshotWriter) Write(p []byte) (int, error) {
	w.snap()
	// Half a page first: a kill in the middle of a write.
	h := len(p) / 2
	n, err := w.f.Write(p[:h])
	if err != nil {
		return n, err
	}
	w.snap()
	m, err := w.f.Write(p[h:])
	return n + m, err
}

// TestAKilledExportResumesWithEveryItemOnce: wherever a run is killed — before a write,
// in the middle of one, between the output's sync and the state's save — a run resumed
// from the files as the kill left them ends with a file that holds every item once, in
// order.
func TestAKilledExportResumesWithEveryItemOnce(t *testing.T) {
	const n = 60
	binding := Binding{Endpoint: "https://acct.documents.azure.com:443/", Database: "app", Container: "items", Source: SourceQuery, Query: "SELECT * FROM c", Output: "/out.ndjson"}
	for _, every := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprintf("checkpoint every %s", every), func(t *testing.T) {
			dir := t.TempDir()
			statePath, outPath := filepath.Join(dir, "state.json"), filepath.Join(dir, "out.ndjson")
			f, err := OpenOutput(outPath, nil)
			if err != nil {
				t.Fatal(err)
			}
			sw := &snapshotWriter{f: f, statePath: statePath}
			every := every
			res, err := Run(context.Background(), Options{Source: newFake(nil, n, 7), Out: sw, Sync: f.Sync, State: NewState(binding), StatePath: statePath, CheckpointEvery: every})
			f.Close()
			if err != nil || !res.Complete || res.Items != n {
				t.Fatalf("first run: %+v %v", res, err)
			}
			sw.snap() // killed after the last checkpoint
			if len(sw.snaps) < 20 {
				t.Fatalf("only %d kill points", len(sw.snaps))
			}
			for i, s := range sw.snaps {
				kd := t.TempDir()
				sp, op := filepath.Join(kd, "state.json"), filepath.Join(kd, "out.ndjson")
				os.WriteFile(op, s.out, 0o600)
				if s.state != nil {
					os.WriteFile(sp, s.state, 0o600)
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
					continue // nothing to do
				}
				out, err := OpenOutput(op, st)
				if err != nil {
					t.Fatalf("kill point %d: %v", i, err)
				}
				res, err := Run(context.Background(), Options{Source: newFake(st.Position, n, uint64(i)), Out: out, Sync: out.Sync, State: st, StatePath: sp})
				out.Close()
				if err != nil || !res.Complete || res.Items != n {
					t.Fatalf("kill point %d: resumed run %+v %v", i, res, err)
				}
				b, _ := os.ReadFile(op)
				if got := ids(t, b); strings.Join(got, " ") != strings.Join(wantIDs(n), " ") {
					t.Fatalf("kill point %d: the file holds\n%v", i, got)
				}
				if fi, _ := os.Stat(op); fi.Size() != res.Bytes {
					t.Fatalf("kill point %d: the file has %d bytes, the run counted %d", i, fi.Size(), res.Bytes)
				}
			}
		})
	}
}

func TestStripDropsTopLevelPropertiesOnly(t *testing.T) {
	drop := map[string]bool{"_rid": true, "_ts": true, "_trackingId": true}
	for _, tc := range []struct{ in, want string }{
		{`{"id":"a", "_rid":"x","n":{"_rid":"kept"},"_ts":5,"z":[1, 2]}`, `{"id":"a","n":{"_rid":"kept"},"z":[1,2]}`},
		{`{"_rid":"x"}`, `{}`},
		{`{"a<b":"&","_trackingId":"t","_etag":"kept"}`, `{"a<b":"&","_etag":"kept"}`},
		{`{"big":12345678901234567890,"f":1.50}`, `{"big":12345678901234567890,"f":1.50}`},
		{`42`, `42`},
		{`"_rid"`, `"_rid"`},
		{` [ {"_rid":1} ] `, `[{"_rid":1}]`},
	} {
		var b bytes.Buffer
		if err := appendLine(&b, json.RawMessage(tc.in), drop); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != tc.want+"\n" {
			t.Errorf("%s → %s, want %s", tc.in, got, tc.want)
		}
	}
	var b bytes.Buffer
	if err := appendLine(&b, json.RawMessage(`{"_rid":`), drop); err == nil {
		t.Fatal("invalid JSON must be an error")
	}
}

// recLimiter records what the run told it.
type recLimiter struct {
	waits, throttles int
	spent            float64
}

func (l *recLimiter) Wait(ctx context.Context) error { l.waits++; return ctx.Err() }
func (l *recLimiter) Spent(ru float64)               { l.spent += ru }
func (l *recLimiter) Throttled(time.Duration)        { l.throttles++ }

func TestEveryPageIsPacedAndCharged(t *testing.T) {
	lim := &recLimiter{}
	var out bytes.Buffer
	var progress []Counts
	res, err := Run(context.Background(), Options{Source: newFake(nil, 40, 3), Out: &out, Limiter: lim, Strip: append(SystemProperties, FeedProperties...),
		Progress: func(c Counts) { progress = append(progress, c) }})
	if err != nil || !res.Complete {
		t.Fatal(res, err)
	}
	if lim.spent != 40 || res.RequestCharge != 40 || lim.waits != int(res.Requests)+1 || lim.throttles != int(res.Throttled) || lim.throttles == 0 {
		t.Fatalf("limiter %+v, result %+v", lim, res)
	}
	if len(progress) != lim.waits || progress[len(progress)-1].Items != 40 {
		t.Fatalf("progress %+v", progress)
	}
	if strings.Contains(out.String(), `"_rid":"r`) || strings.Contains(out.String(), "_lsn") || !strings.Contains(out.String(), `{"_rid":"inner"}`) {
		t.Fatalf("stripped output %s", out.String())
	}
	if res.PeakPageItems > 7 {
		t.Fatalf("held %d items at once", res.PeakPageItems)
	}
}

// TestAFailedSourceCheckpointsAfterTheLastLine: the service failing, or Ctrl-C, ends the
// run with a state that resumes right after the last line written.
func TestAFailedSourceCheckpointsAfterTheLastLine(t *testing.T) {
	dir := t.TempDir()
	sp, op := filepath.Join(dir, "s.json"), filepath.Join(dir, "o.ndjson")
	b := Binding{Endpoint: "http://x", Database: "d", Container: "c", Source: SourceQuery, Output: op}
	src := newFake(nil, 50, 1)
	src.failAfter, src.err = 20, errors.New("503 from every region")
	f, _ := OpenOutput(op, nil)
	res, err := Run(context.Background(), Options{Source: src, Out: f, Sync: f.Sync, State: NewState(b), StatePath: sp, CheckpointEvery: time.Hour})
	f.Close()
	if err == nil || err.Error() != "503 from every region" || res.Complete {
		t.Fatalf("%+v %v", res, err)
	}
	st, err := LoadState(sp)
	if err != nil || st == nil {
		t.Fatal(st, err)
	}
	fi, _ := os.Stat(op)
	if string(st.Position) != fmt.Sprint(res.Items) || st.Items != res.Items || st.OutputBytes != fi.Size() || st.Complete {
		t.Fatalf("state %+v, file %d bytes, result %+v", st, fi.Size(), res)
	}
}

// failingWriter takes limit bytes and fails after.
type failingWriter struct {
	w     bytes.Buffer
	limit int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.w.Len()+len(p) > f.limit {
		n := f.limit - f.w.Len()
		f.w.Write(p[:n])
		return n, errors.New("no space left on device")
	}
	return f.w.Write(p)
}

func TestAFailedWriteKeepsTheLastCheckpoint(t *testing.T) {
	sp := filepath.Join(t.TempDir(), "s.json")
	st := NewState(Binding{Source: SourceQuery})
	w := &failingWriter{limit: 700}
	res, err := Run(context.Background(), Options{Source: newFake(nil, 50, 1), Out: w, State: st, StatePath: sp})
	if err == nil || !strings.Contains(err.Error(), "no space") {
		t.Fatal(err)
	}
	saved, _ := LoadState(sp)
	if saved == nil || saved.OutputBytes > 700 || saved.OutputBytes == 0 || saved.OutputBytes == res.Bytes {
		t.Fatalf("state %+v after the write failed at 700 bytes (%d written)", saved, res.Bytes)
	}
}

func TestForeignStateIsRefusedNamingWhatDiffers(t *testing.T) {
	b := Binding{Endpoint: "https://acct.documents.azure.com/", Database: "app", Container: "items", Source: SourceQuery, Query: "SELECT * FROM c",
		PartitionKey: json.RawMessage(`["t1"]`), Strip: SystemProperties, Output: "/x/out.ndjson"}
	st := NewState(b)
	if err := st.Check("s", Binding{Endpoint: "https://ACCT.documents.azure.com:443", Database: "app", Container: "items", Source: SourceQuery, Query: "SELECT * FROM c",
		PartitionKey: json.RawMessage(`[ "t1" ]`), Strip: []string{"_ts", "_etag", "_rid", "_self", "_attachments"}, Output: "/x/out.ndjson"}); err != nil {
		t.Fatalf("the same export: %v", err)
	}
	for _, tc := range []struct {
		what   string
		mutate func(*Binding)
	}{
		{"account", func(b *Binding) { b.Endpoint = "https://other.documents.azure.com/" }},
		{"database", func(b *Binding) { b.Database = "db2" }},
		{"container", func(b *Binding) { b.Container = "orders" }},
		{"source", func(b *Binding) { b.Source = SourceChangeFeed }},
		{"query", func(b *Binding) { b.Query = "SELECT c.id FROM c" }},
		{"query parameters", func(b *Binding) { b.Parameters = json.RawMessage(`[{"name":"@a","value":1}]`) }},
		{"partition key", func(b *Binding) { b.PartitionKey = nil }},
		{"stripped properties", func(b *Binding) { b.Strip = nil }},
		{"output file", func(b *Binding) { b.Output = "/y/out.ndjson" }},
	} {
		other := b
		tc.mutate(&other)
		err := st.Check("s.json", other)
		var se *StateError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "its "+tc.what+" is ") || !strings.Contains(err.Error(), "delete it to start the export over") {
			t.Errorf("%s: %v", tc.what, err)
		}
	}
}

func TestUnusableStateFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	if st, err := LoadState(filepath.Join(dir, "missing.json")); st != nil || err != nil {
		t.Fatalf("a missing state is a first run: %v %v", st, err)
	}
	for name, content := range map[string]string{
		"garbage":        "not json",
		"another kind":   `{"kind":"cosmosctl-changes","version":1}`,
		"newer format":   `{"kind":"cosmosctl-export","version":9}`,
		"empty":          ``,
		"array":          `[]`,
		"truncated json": `{"kind":"cosmosctl-export","vers`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		os.WriteFile(p, []byte(content), 0o600)
		_, err := LoadState(p)
		var se *StateError
		if !errors.As(err, &se) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestOpenOutputRefusesAFileShorterThanItsCheckpoint(t *testing.T) {
	p := filepath.Join(t.TempDir(), "o.ndjson")
	os.WriteFile(p, []byte("{\"id\":1}\n{\"id\":2}\n{\"id\":3"), 0o600)
	f, err := OpenOutput(p, &State{OutputBytes: 18})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("{\"id\":3}\n"))
	f.Close()
	if b, _ := os.ReadFile(p); string(b) != "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n" {
		t.Fatalf("resumed file %q", b)
	}
	if _, err := OpenOutput(p, &State{OutputBytes: 1000}); err == nil || !strings.Contains(err.Error(), "fewer than the 1000") {
		t.Fatal(err)
	}
	if _, err := OpenOutput(p+".gone", &State{OutputBytes: 10}); err == nil || !strings.Contains(err.Error(), "is gone") {
		t.Fatal(err)
	}
}

// chargingSource returns pages of one item, each costing charge RU, forever.
type chargingSource struct {
	charge float64
	pages  atomic.Int64
}

func (s *chargingSource) Next(ctx context.Context) (Page, error) {
	n := s.pages.Add(1)
	return Page{Items: []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"id":"%d"}`, n))}, RequestCharge: s.charge, Requests: 1}, ctx.Err()
}
func (s *chargingSource) Position() (json.RawMessage, error) { return json.RawMessage("null"), nil }
func (s *chargingSource) Close()                             {}

// TestTheLimiterHoldsAnExportToItsCap: with rulimit's limiter at 100 RU/s on a fake
// clock, pages of 50 RU go at two a second from the start, however fast the source
// could serve them.
func TestTheLimiterHoldsAnExportToItsCap(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	lim := rulimit.New(100, clk)
	src := &chargingSource{charge: 50}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() {
		res, _ := Run(ctx, Options{Source: src, Out: io.Discard, Limiter: lim, Clock: clk})
		done <- res
	}()
	for range 1000 { // 10 s in steps of 10 ms, each once the run waits on the limiter
		if !clk.WaitForTimers(1, 10*time.Second) {
			t.Fatal("the export does not wait on the limiter")
		}
		clk.Advance(10 * time.Millisecond)
	}
	if !clk.WaitForTimers(1, 10*time.Second) {
		t.Fatal("the export does not wait on the limiter")
	}
	// 100 RU/s for 10 s: 1,000 RU, 20 pages of 50, and the first, which goes at once
	// (a page's charge is known only after it).
	if got := src.pages.Load(); got < 20 || got > 21 {
		t.Fatalf("%d pages of 50 RU in 10 s at 100 RU/s", got)
	}
	cancel()
	clk.Advance(time.Minute)
	if res := <-done; res.RequestCharge > 21*50 {
		t.Fatalf("charged %v", res.RequestCharge)
	}
}

// stripItems are objects whose stripped lines the document scanner's path must write
// exactly as the json.Decoder path does: escaped keys (one that unescapes to a dropped
// name), duplicate keys, U+2028 in a key and in a value, HTML characters, white space
// everywhere, nested system properties, empty objects, numbers as written.
var stripItems = []string{
	`{"id":"a","_rid":"x","_self":"s","_etag":"\"e\"","_ts":1,"_attachments":"at/","n":1}`,
	`{ "id" : "b" , "_rid" : "x" , "nested" : { "_rid" : "kept" , "a" : [ 1 , 2 ] } }`,
	`{"\u005frid":"escaped, dropped","i\u0064":"escaped id, kept","_etag":"e"}`,
	`{"_rid":"1","_rid":"2","x":1,"x":2}`,
	"{\"key\u2028with line separator\":\"v\u2029\",\"_ts\":5}",
	`{"a<b":"&","_trackingId":"t","q":"\\\"","e":"\u00e9"}`,
	`{"_rid":"only"}`,
	`{}`,
	`{"big":12345678901234567890,"f":1.50,"neg":-0.0e+1,"_ts":1}`,
	"{\"id\":\"tabs\",\n\t\"_rid\":\r\n\"x\",\"arr\":[ ]}",
}

func TestStripByTheScannerWritesWhatTheDecoderWrites(t *testing.T) {
	drop := map[string]bool{"_rid": true, "_self": true, "_etag": true, "_ts": true, "_attachments": true, "_trackingId": true}
	for _, it := range stripItems {
		doc, ok := engine.ScanDocument([]byte(it))
		if !ok {
			t.Fatalf("the scanner refused %s", it)
		}
		var want bytes.Buffer
		if err := appendStrippedDecoded(&want, json.RawMessage(it), drop); err != nil {
			t.Fatal(err)
		}
		if got := appendStripped(nil, doc, drop); string(got) != want.String() {
			t.Errorf("%s:\nscanner %s\ndecoder %s", it, got, want.String())
		}
	}
}

func FuzzStripByTheScanner(f *testing.F) {
	for _, it := range stripItems {
		f.Add([]byte(it))
	}
	drop := map[string]bool{"_rid": true, "_ts": true, "a": true}
	f.Fuzz(func(t *testing.T, item []byte) {
		doc, ok := engine.ScanDocument(item)
		if !ok {
			return
		}
		var want bytes.Buffer
		if err := appendStrippedDecoded(&want, item, drop); err != nil {
			t.Fatalf("%q: the scanner took what the decoder refuses: %v", item, err)
		}
		if got := appendStripped(nil, doc, drop); string(got) != want.String() {
			t.Fatalf("%q:\nscanner %q\ndecoder %q", item, got, want.String())
		}
	})
}

// appendLine with --strip-system on a service-shaped item: the scanner's path against
// the json.Decoder path it replaced.
func BenchmarkStripSystem(b *testing.B) {
	item := json.RawMessage(`{"id":"b000123","pk":"p5","n":42,"g":"g3","pad":"0123456789abcdef0123456789abcdef","_rid":"abcdefghijklmnop==","_self":"dbs/abc==/colls/abc=/docs/abcdefghijklmnop==/","_etag":"\"00000000-0000-0000-0000-000000000000\"","_attachments":"attachments/","_ts":1764979200}`)
	drop := map[string]bool{}
	for _, p := range SystemProperties {
		drop[p] = true
	}
	var buf bytes.Buffer
	b.Run("scanner", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			if err := appendLine(&buf, item, drop); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			if err := appendStrippedDecoded(&buf, item, drop); err != nil {
				b.Fatal(err)
			}
		}
	})
}
