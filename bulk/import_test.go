package bulk

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

func TestEveryLineIsWrittenOnceAndCounted(t *testing.T) {
	c := newFakeContainer()
	c.items["i3"] = `{"id":"i3","pk":"p3","_trackingId":"another-run:3"}`
	st := NewState(Fingerprint{}, Target{}, Create)
	rep, err := Import(context.Background(), mustSource(t, ndjson(100)), st, testOptions(c))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Created != 99 || rep.AlreadyPresent != 1 || rep.Lines != 100 || !rep.Complete || len(c.items) != 100 {
		t.Fatalf("report %+v, stored %d", rep.Counts, len(c.items))
	}
	if rep.RequestCharge != 500 || !reflect.DeepEqual(rep.ThisRun, rep.Counts) || rep.Runs != 1 {
		t.Fatalf("RU %v, this run %+v, runs %d", rep.RequestCharge, rep.ThisRun, rep.Runs)
	}
	if !strings.Contains(c.items["i7"], `"_trackingId":"`+st.RunID+`:7"`) {
		t.Fatalf("stored %s", c.items["i7"])
	}
	if len(c.sentBefore) != 0 {
		t.Fatalf("a first run's writes were not sent before: %v", c.sentBefore)
	}
	if c.withContent != 0 {
		t.Fatalf("%d of %d writes asked for the document back (Prefer: return=minimal unsent)", c.withContent, c.sends)
	}
}

func TestBadLinesAreRejectedWithTheirLineNumberAndDoNotStopTheImport(t *testing.T) {
	big := `{"id":"big","pk":"p","x":"` + strings.Repeat("x", MaxItemBytes) + `"}`
	input := strings.Join([]string{
		`{"id":"a","pk":"p"}`,
		`{"id":"b","pk":`,
		``,
		`[1,2]`,
		`{"pk":"p"}`,
		`{"id":7,"pk":"p"}`,
		`{"id":"c"}`,
		`{"id":"d","pk":{"nested":1}}`,
		big,
		`{"id":"e","pk":"p"} {"id":"f"}`,
		`{"id":"g","pk":"p"}`,
	}, "\r\n")
	c := newFakeContainer()
	var rej bytes.Buffer
	o := testOptions(c)
	o.Rejected = &rej
	rep, err := Import(context.Background(), mustSource(t, "\xEF\xBB\xBF"+input), NewState(Fingerprint{}, Target{}, Create), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Created != 2 || rep.BadLines != 8 || rep.Blank != 1 || rep.Lines != 11 {
		t.Fatalf("counts %+v", rep.Counts)
	}
	want := map[string]int64{ReasonInvalidJSON: 2, ReasonNotObject: 1, ReasonNoID: 1, ReasonIDNotString: 1, ReasonNoKey: 1, ReasonBadKey: 1, ReasonTooLarge: 1}
	if !reflect.DeepEqual(rep.Reasons, want) {
		t.Fatalf("reasons %v", rep.Reasons)
	}
	got := map[int64]string{}
	for _, r := range rejections(t, rej.String()) {
		got[r.Line] = r.Reason
		switch {
		case r.Line == 9 && (r.Bytes != int64(len(big)) || r.Item != nil || r.Text != ""):
			t.Fatalf("a too-large line is reported by its size only: %+v", r.Bytes)
		case r.Line == 2 && r.Text != `{"id":"b","pk":`:
			t.Fatalf("invalid JSON keeps its text: %+v", r)
		case r.Line == 7 && (string(r.Item) != `{"id":"c"}` || !strings.Contains(r.Error, "/pk")):
			t.Fatalf("a JSON line keeps its item and says why: %+v", r)
		}
	}
	wantLines := map[int64]string{2: ReasonInvalidJSON, 4: ReasonNotObject, 5: ReasonNoID, 6: ReasonIDNotString, 7: ReasonNoKey, 8: ReasonBadKey, 9: ReasonTooLarge, 10: ReasonInvalidJSON}
	if !reflect.DeepEqual(got, wantLines) {
		t.Fatalf("rejected lines %v", got)
	}
}

func TestFailFastStopsAtTheFirstRejectedLine(t *testing.T) {
	c := newFakeContainer()
	o := testOptions(c)
	o.FailFast, o.Concurrency = true, 1
	input := ndjson(5) + "not json\n" + ndjson(3)
	rep, err := Import(context.Background(), mustSource(t, input), NewState(Fingerprint{}, Target{}, Create), o)
	var ff *FailFastError
	if !errors.As(err, &ff) || ff.Line != 6 || ff.Reason != ReasonInvalidJSON || ff.Err != nil {
		t.Fatalf("err %v", err)
	}
	if rep.Complete || rep.BadLines != 1 || rep.Created > 5 {
		t.Fatalf("report %+v", rep.Counts)
	}
}

func TestAWriteThatFailsForAvailabilityIsSentAgainAsSentBefore(t *testing.T) {
	c := newFakeContainer()
	c.fail["i2"] = []error{&cosmos.Error{StatusCode: 503}, &cosmos.NetworkError{Sent: true}}
	c.fail["i4"] = []error{&cosmos.Error{StatusCode: 400, Message: "bad"}}
	var rej bytes.Buffer
	o := testOptions(c)
	o.Rejected = &rej
	rep, err := Import(context.Background(), mustSource(t, ndjson(5)), NewState(Fingerprint{}, Target{}, Create), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Created != 4 || rep.Failed != 1 || rep.Reasons["400 Bad Request"] != 1 || !c.sentBefore["i2"] {
		t.Fatalf("counts %+v, sent before %v", rep.Counts, c.sentBefore)
	}
	if r := rejections(t, rej.String()); len(r) != 1 || r[0].Line != 4 || r[0].Status != 400 {
		t.Fatalf("rejected %+v", r)
	}
}

func TestALongRunOfFailuresStopsWithoutMarkingThoseLinesDone(t *testing.T) {
	c := newFakeContainer()
	for k := 4; k <= 40; k++ {
		c.fail[idOf(k)] = []error{&cosmos.Error{StatusCode: 503}, &cosmos.Error{StatusCode: 503}, &cosmos.Error{StatusCode: 503}, &cosmos.Error{StatusCode: 503}}
	}
	var rej bytes.Buffer
	o := testOptions(c)
	o.Rejected, o.Concurrency, o.StopAfter = &rej, 1, 5
	st := NewState(Fingerprint{}, Target{}, Create)
	var saved *State
	o.Checkpoint = func(s *State) error { saved = s; return nil }
	rep, err := Import(context.Background(), mustSource(t, ndjson(50)), st, o)
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.Failures != 5 {
		t.Fatalf("err %v", err)
	}
	if rep.Created != 3 || rep.Failed != 0 || rej.Len() != 0 || rep.Complete {
		t.Fatalf("the failures of the run are not settled: %+v, rejected %q", rep.Counts, rej.String())
	}
	if saved == nil || saved.Prefix != 3 || len(saved.Above) != 0 {
		t.Fatalf("saved %+v", saved)
	}
	// The service recovers: resuming sends the lines that failed, and the rest.
	c.fail = map[string][]error{}
	rep, err = Import(context.Background(), mustSource(t, ndjson(50)), saved, o)
	if err != nil || rep.Created != 50 || rep.Skipped != 3 || rep.Runs != 2 || !rep.Complete {
		t.Fatalf("err %v, report %+v", err, rep)
	}
}

func idOf(k int) string { return "i" + strconv.Itoa(k) }

// An interrupted run, resumed from its checkpoint, writes every line exactly once and
// reports on the whole run: the items whose answers the interruption lost are
// recognised by their _trackingId.
func TestAnInterruptedRunResumesExactlyOnce(t *testing.T) {
	c := newFakeContainer()
	c.items["i50"] = `{"id":"i50","pk":"p1"}` // someone else's
	var saved *State
	st := NewState(Fingerprint{}, Target{}, Create)
	for run := 1; ; run++ {
		ctx, cancel := context.WithCancel(context.Background())
		c.mu.Lock()
		c.cancel, c.cancelAfter, c.stored = cancel, 30, 0
		c.mu.Unlock()
		o := testOptions(c)
		o.Checkpoint = func(s *State) error { saved = s; return nil }
		rep, err := Import(ctx, mustSource(t, ndjson(100)), st, o)
		cancel()
		if err == nil {
			if run < 3 {
				t.Fatalf("run %d completed", run)
			}
			if rep.Created != 99 || rep.AlreadyPresent != 1 || rep.Lines != 100 || rep.Runs != run || len(c.items) != 100 {
				t.Fatalf("report %+v, runs %d, stored %d", rep.Counts, rep.Runs, len(c.items))
			}
			if rep.Skipped == 0 || rep.ThisRun.Lines+rep.Skipped != 100 {
				t.Fatalf("this run %d lines, skipped %d", rep.ThisRun.Lines, rep.Skipped)
			}
			break
		}
		if !errors.Is(err, context.Canceled) || rep.Stopped != "interrupted" || saved.Complete {
			t.Fatalf("run %d: err %v, report %+v", run, err, rep)
		}
		if len(c.sentBefore) != 0 && run == 1 {
			t.Fatal("the first run sent nothing before")
		}
		st = saved
	}
	if len(c.sentBefore) == 0 {
		t.Fatal("resumed runs say their writes may have been sent before")
	}
}

func TestThrottlingFeedsTheLimiter(t *testing.T) {
	c := newFakeContainer()
	c.throttle["i2"] = 250 * time.Millisecond
	lim := &fakeLimiter{}
	o := testOptions(c)
	o.Limiter = lim
	rep, err := Import(context.Background(), mustSource(t, ndjson(10)), NewState(Fingerprint{}, Target{}, Create), o)
	if err != nil {
		t.Fatal(err)
	}
	if lim.waits != 10 || lim.spent != 50 || !reflect.DeepEqual(lim.throttled, []time.Duration{250 * time.Millisecond}) || rep.Throttles != 1 {
		t.Fatalf("waits %d spent %v throttled %v report throttles %d", lim.waits, lim.spent, lim.throttled, rep.Throttles)
	}
}

func TestUpsertCountsCreatedAndUpdated(t *testing.T) {
	c := newFakeContainer()
	c.items["i1"] = `{"id":"i1"}`
	o := testOptions(c)
	o.Mode = Upsert
	rep, err := Import(context.Background(), mustSource(t, ndjson(4)), NewState(Fingerprint{}, Target{}, Upsert), o)
	if err != nil || rep.Created != 3 || rep.Updated != 1 {
		t.Fatalf("err %v counts %+v", err, rep.Counts)
	}
	if strings.Contains(c.items["i2"], "_trackingId") {
		t.Fatal("upserts carry no _trackingId")
	}
}

func TestAnAuthFailureStopsTheImportAtOnce(t *testing.T) {
	c := newFakeContainer()
	c.fail["i1"] = []error{&cosmos.Error{StatusCode: 403, SubStatus: 5301}}
	o := testOptions(c)
	o.Concurrency = 1
	rep, err := Import(context.Background(), mustSource(t, ndjson(50)), NewState(Fingerprint{}, Target{}, Create), o)
	if st, _, _ := cosmos.Status(err); st != 403 || !strings.HasPrefix(err.Error(), "line 1: ") || rep.Complete || rep.Created > 2 {
		t.Fatalf("err %v, counts %+v", err, rep.Counts)
	}
}

func TestTheStateSurvivesSaveAndLoadAndRefusesAnotherImport(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "import.state")
	src := mustSource(t, ndjson(3))
	target := Target{Endpoint: "https://acct", Database: "app", Container: "items"}
	st := NewState(src.Fingerprint(), target, Create)
	st.Prefix, st.Above, st.Counts.Created = 7, []int64{9, 12}, 8
	if err := st.Save(path, time.Now()); err != nil {
		t.Fatal(err)
	}
	back, err := LoadState(path)
	if err != nil || !reflect.DeepEqual(back, st) {
		t.Fatalf("loaded %+v, %v", back, err)
	}
	if err := back.Check(path, src.Fingerprint(), target, Create); err != nil {
		t.Fatal(err)
	}
	other := mustSource(t, ndjson(4)).Fingerprint()
	stdin := src.Fingerprint()
	stdin.Size = -1
	for _, tc := range []struct {
		name string
		in   Fingerprint
		tgt  Target
		mode Mode
		want string
	}{
		{"another input", other, target, Create, "the import of another input"},
		{"another container", src.Fingerprint(), Target{Endpoint: "https://acct", Database: "app", Container: "other"}, Create, "the import into app/items at https://acct, not into app/other"},
		{"another mode", src.Fingerprint(), target, Upsert, "--mode create, not upsert"},
		{"the same data on standard input", stdin, target, Create, ""},
	} {
		err := back.Check(path, tc.in, tc.tgt, tc.mode)
		if (tc.want == "") != (err == nil) || (err != nil && (!strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "remove it to start the import afresh"))) {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
	if s, err := LoadState(filepath.Join(dir, "missing")); s != nil || err != nil {
		t.Fatalf("a missing state is a new run: %v %v", s, err)
	}
	os.WriteFile(path, []byte(`{"kind":"cosmosctl-import","version":9,"state":{"run_id":"x"}}`), 0o600)
	if _, err := LoadState(path); err == nil || !strings.Contains(err.Error(), "format version 9") {
		t.Fatalf("err %v", err)
	}
	os.WriteFile(path, []byte(`garbage`), 0o600)
	if _, err := LoadState(path); err == nil || !strings.Contains(err.Error(), "not a cosmosctl import state file") {
		t.Fatalf("err %v", err)
	}
}

func TestDoneSetKeepsAPrefixAndTheLinesAboveIt(t *testing.T) {
	d := newDoneSet(Shard{}, 0, nil)
	for _, n := range []int64{3, 1, 5, 2, 7} {
		d.add(n)
	}
	if d.prefix != 3 || !reflect.DeepEqual(d.sortedAbove(), []int64{5, 7}) || !d.has(2) || d.has(4) || !d.has(7) {
		t.Fatalf("prefix %d above %v", d.prefix, d.sortedAbove())
	}
	d.add(4)
	d.add(6)
	if d.prefix != 7 || len(d.above) != 0 {
		t.Fatalf("prefix %d above %v", d.prefix, d.sortedAbove())
	}
}

func TestTheRejectedFileOfAResumedRunKeepsOnlyWhatTheStateCounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rejected.ndjson")
	os.WriteFile(path, []byte("line one\nline two written after the checkpoint\n"), 0o600)
	st := &State{Runs: 1, RejectedBytes: int64(len("line one\n"))}
	f, err := OpenRejected(path, st)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("line two again\n"))
	f.Close()
	if b, _ := os.ReadFile(path); string(b) != "line one\nline two again\n" {
		t.Fatalf("%q", b)
	}
	if _, err := OpenRejected(path, &State{Runs: 1, RejectedBytes: 1000}); err == nil || !strings.Contains(err.Error(), "shorter") {
		t.Fatalf("err %v", err)
	}
	f, _ = OpenRejected(path, &State{})
	f.Close()
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Fatalf("a new run starts the file empty: %q", b)
	}
}

func TestSourceCountsLinesAndFingerprintsTheStart(t *testing.T) {
	text := "a\r\n\nb\nlast"
	src := mustSource(t, text)
	var got []string
	for {
		l, err := src.next(context.Background())
		if err != nil {
			break
		}
		got = append(got, string(l.text))
	}
	if !reflect.DeepEqual(got, []string{"a", "", "b", "last"}) {
		t.Fatalf("lines %q", got)
	}
	if n, _ := CountLines(context.Background(), strings.NewReader(text)); n != 4 {
		t.Fatalf("count %d", n)
	}
	if n, _ := CountLines(context.Background(), strings.NewReader("a\nb\n")); n != 2 {
		t.Fatalf("count %d", n)
	}
	if fp := src.Fingerprint(); fp.PrefixBytes != len(text) || fp.Size != int64(len(text)) || len(fp.PrefixSHA256) != 64 {
		t.Fatalf("fingerprint %+v", fp)
	}
}

// A 409 whose _trackingId check got no answer may be the run's own write: the line is
// sent again, not counted as someone else's item.
func TestA409ThatCouldNotBeCheckedIsSentAgain(t *testing.T) {
	c := &uncheckedOnce{fakeContainer: newFakeContainer()}
	c.items["i1"] = `{"id":"i1","pk":"p1","_trackingId":"` + "run" + `:1"}`
	st := NewState(Fingerprint{}, Target{}, Create)
	st.RunID, st.Runs = "run", 1 // a resumed run: its line 1 was written before
	rep, err := Import(context.Background(), mustSource(t, ndjson(1)), st, testOptions(c))
	if err != nil || rep.Created != 1 || rep.AlreadyPresent != 0 || c.calls != 2 {
		t.Fatalf("err %v, counts %+v, calls %d", err, rep.Counts, c.calls)
	}
}

// uncheckedOnce answers the first write with a 409 whose verify read failed.
type uncheckedOnce struct {
	*fakeContainer
	calls int
}

func (u *uncheckedOnce) Execute(ctx context.Context, op engine.Operation) (*engine.Result, error) {
	u.calls++
	if u.calls == 1 {
		return &engine.Result{Diagnostics: &engine.Diagnostics{Attempts: []engine.Attempt{
			{Reason: engine.ReasonInitial, StatusCode: 409}, {Reason: engine.ReasonVerify, Error: "connection reset"}}}}, &cosmos.Error{StatusCode: 409}
	}
	return u.fakeContainer.Execute(ctx, op)
}

// A line still throttled after the engine's retries goes again, without using up its
// retries for availability: a busy container does not fail lines.
func TestALineStillThrottledAfterTheEnginesRetriesGoesAgain(t *testing.T) {
	c := newFakeContainer()
	for range 6 {
		c.fail["i1"] = append(c.fail["i1"], &cosmos.Error{StatusCode: 429, SubStatus: 3200})
	}
	rep, err := Import(context.Background(), mustSource(t, ndjson(2)), NewState(Fingerprint{}, Target{}, Create), testOptions(c))
	if err != nil || rep.Created != 2 || rep.Failed != 0 || !c.sentBefore["i1"] {
		t.Fatalf("err %v, counts %+v", err, rep.Counts)
	}
}
