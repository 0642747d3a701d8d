package bulk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// patience bounds what should take milliseconds, generously: the tests share a loaded
// machine.
const patience = 30 * time.Second

// stalledLine is an input whose first line goes on past what an item can be and then
// stalls, as a pipe from a producer that hangs does: it gives size bytes of the line,
// then blocks until released (stalled is closed when it starts to).
type stalledLine struct {
	left             int
	stalled, release chan struct{}
}

func (s *stalledLine) Read(p []byte) (int, error) {
	if s.left == 0 {
		close(s.stalled)
		<-s.release
		return 0, io.EOF
	}
	n := min(len(p), s.left)
	copy(p, bytes.Repeat([]byte("x"), n))
	s.left -= n
	return n, nil
}

// endlessLine is an input of one line that never ends, as /dev/zero is.
type endlessLine struct{}

func (endlessLine) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// rejectionsSeen is a rejected-lines file that hands each rejection to the test as it
// is written.
type rejectionsSeen struct {
	mu   sync.Mutex
	all  bytes.Buffer
	each chan Rejection
}

func newRejectionsSeen() *rejectionsSeen { return &rejectionsSeen{each: make(chan Rejection, 100)} }

func (r *rejectionsSeen) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var rej Rejection
	if err := json.Unmarshal(p, &rej); err != nil {
		return 0, fmt.Errorf("a rejection that is not JSON: %q", p)
	}
	r.each <- rej
	return r.all.Write(p)
}

func (r *rejectionsSeen) next(t *testing.T) Rejection {
	t.Helper()
	select {
	case rej := <-r.each:
		return rej
	case <-time.After(patience):
		t.Fatalf("no rejection within %v", patience)
		return Rejection{}
	}
}

type imported struct {
	rep *Report
	err error
}

// importInBackground runs Import, and says when it returns.
func importInBackground(ctx context.Context, src *Source, st *State, o Options) <-chan imported {
	done := make(chan imported, 1)
	go func() {
		rep, err := Import(ctx, src, st, o)
		done <- imported{rep, err}
	}()
	return done
}

func waitImport(t *testing.T, done <-chan imported) imported {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(patience):
		t.Fatalf("the import did not return within %v of its cancellation", patience)
		return imported{}
	}
}

// A line longer than an item can be is rejected as soon as that much of it is read: its
// rejection is in the rejected-lines file while the input has given no more of it, and
// says the line is at least as long as what was read. Cancelled there, waiting for an
// input that gives nothing more, the import returns at once, with the line done.
func TestALineTooLargeIsRejectedBeforeTheRestOfItIsRead(t *testing.T) {
	in := &stalledLine{left: MaxItemBytes + 100<<10, stalled: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { close(in.release) })
	src, err := NewSource(context.Background(), in, "-", -1)
	if err != nil {
		t.Fatal(err)
	}
	rej := newRejectionsSeen()
	o := testOptions(newFakeContainer())
	o.Rejected = rej
	var saved *State
	o.Checkpoint = func(s *State) error { saved = s; return nil }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := importInBackground(ctx, src, NewState(Fingerprint{}, Target{}, Create), o)

	start := time.Now()
	r := rej.next(t)
	t.Logf("rejected %v after the import started", time.Since(start).Round(time.Microsecond))
	select {
	case <-in.stalled:
	case <-time.After(patience):
		t.Fatal("the input was not read to where it stalls")
	}
	if r.Line != 1 || r.Reason != ReasonTooLarge || r.Bytes <= MaxItemBytes || r.Bytes > MaxItemBytes+100<<10 || r.Item != nil || r.Text != "" {
		t.Fatalf("rejection %+v: want line 1 too large, by the %d bytes read at most", r, MaxItemBytes+100<<10)
	}
	if want := fmt.Sprintf("the line is at least %d bytes", r.Bytes); !strings.Contains(r.Error, want) {
		t.Fatalf("error %q: want it to say %q", r.Error, want)
	}

	cancel()
	start = time.Now()
	got := waitImport(t, done)
	t.Logf("returned %v after its cancellation, the input stalled", time.Since(start).Round(time.Microsecond))
	if !errors.Is(got.err, context.Canceled) || got.rep.Complete || got.rep.Lines != 1 || got.rep.BadLines != 1 {
		t.Fatalf("cancelled: %v, report %+v", got.err, got.rep.Counts)
	}
	if saved == nil || saved.Prefix != 1 || saved.Complete {
		t.Fatalf("the state saved at the end: %+v, want line 1 done", saved)
	}
}

// An endless line (/dev/zero) is rejected once, and skipped until the import is
// cancelled, which ends it promptly with the state saved.
func TestCancellingAnImportSkippingAnEndlessLineReturnsPromptly(t *testing.T) {
	src, err := NewSource(context.Background(), endlessLine{}, "/dev/zero", -1)
	if err != nil {
		t.Fatal(err)
	}
	rej := newRejectionsSeen()
	o := testOptions(newFakeContainer())
	o.Rejected = rej
	var saved *State
	o.Checkpoint = func(s *State) error { saved = s; return nil }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := importInBackground(ctx, src, NewState(Fingerprint{}, Target{}, Create), o)

	if r := rej.next(t); r.Line != 1 || r.Reason != ReasonTooLarge {
		t.Fatalf("rejection %+v", r)
	}
	cancel()
	start := time.Now()
	got := waitImport(t, done)
	t.Logf("returned %v after its cancellation, skipping the line", time.Since(start).Round(time.Microsecond))
	if !errors.Is(got.err, context.Canceled) || got.rep.Lines != 1 || got.rep.BadLines != 1 || got.rep.Stopped != "interrupted" {
		t.Fatalf("cancelled: %v, report %+v", got.err, got.rep)
	}
	if saved == nil || saved.Prefix != 1 || saved.Counts.BadLines != 1 {
		t.Fatalf("the state saved at the end: %+v", saved)
	}
	if n := len(rej.each); n != 0 {
		t.Fatalf("%d more rejections of the same line", n)
	}
}

// The lines after a line too large are read from where it ends, however long it is.
func TestTheLinesAfterALineTooLargeAreImported(t *testing.T) {
	input := `{"id":"a","pk":"p"}` + "\n" + strings.Repeat("x", 3*MaxItemBytes) + "\r\n" + `{"id":"b","pk":"p"}` + "\n"
	c := newFakeContainer()
	var rej bytes.Buffer
	o := testOptions(c)
	o.Rejected = &rej
	rep, err := Import(context.Background(), mustSource(t, input), NewState(Fingerprint{}, Target{}, Create), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Created != 2 || rep.BadLines != 1 || rep.Lines != 3 || c.items["b"] == "" {
		t.Fatalf("report %+v, stored %v", rep.Counts, c.items)
	}
	r := rejections(t, rej.String())
	if len(r) != 1 || r[0].Line != 2 || r[0].Bytes <= MaxItemBytes || r[0].Bytes >= 3*MaxItemBytes || !strings.Contains(r[0].Error, "at least") {
		t.Fatalf("rejected %+v: want line 2, rejected before its end", r)
	}
}

// The limit is on the item: a line of exactly MaxItemBytes is one, whatever its line
// ending, and one byte more is not, its length known when the line ending is read
// with it.
func TestTheLimitIsOnTheLineWithoutItsLineEnding(t *testing.T) {
	item := func(id string, size int) string {
		head := `{"id":"` + id + `","pk":"p","x":"`
		return head + strings.Repeat("x", size-len(head)-2) + `"}`
	}
	input := "\xEF\xBB\xBF" + item("bom", MaxItemBytes) + "\r\n" + item("lf", MaxItemBytes) + "\n" + item("over", MaxItemBytes+1) + "\r\n" + item("last", MaxItemBytes)
	c := newFakeContainer()
	var rej bytes.Buffer
	o := testOptions(c)
	o.Rejected = &rej
	rep, err := Import(context.Background(), mustSource(t, input), NewState(Fingerprint{}, Target{}, Create), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Created != 3 || rep.BadLines != 1 || c.items["bom"] == "" || c.items["lf"] == "" || c.items["last"] == "" {
		t.Fatalf("report %+v", rep.Counts)
	}
	if r := rejections(t, rej.String()); len(r) != 1 || r[0].Line != 3 || r[0].Reason != ReasonTooLarge {
		t.Fatalf("rejected %+v", r)
	}
}

// Bytes that are not UTF-8 reject their line, as create -f refuses its document: the
// JSON decoder would store U+FFFD in their place. The rejection gives the offset of the
// first invalid byte in the line as the file has it (its byte order mark counted), and
// is valid JSON, with the line's text. Valid UTF-8, multi-byte or not, is imported as
// it is.
func TestALineThatIsNotUTF8IsRejectedWithTheOffsetOfItsFirstInvalidByte(t *testing.T) {
	for _, tc := range []struct {
		name   string
		input  string
		stored map[string]string // id → the item as the line has it
		offset map[int64]int     // line → offset of the first invalid byte
	}{
		{
			name: "multi-byte characters, a byte order mark, and bytes of other encodings",
			input: "\xEF\xBB\xBF" + `{"id":"café","pk":"p"}` + "\n" +
				`{"id":"emoji","pk":"p","s":"😀 ünïcödé"}` + "\r\n" +
				`{"id":"latin1","pk":"p","name":"caf` + "\xE9" + `"}` + "\n" +
				`{"id":"cut","pk":"p","s":"` + "\xE2\x82" + `"}` + "\n" +
				`{"id":"surrogate","pk":"p","s":"` + "\xED\xA0\x80" + `"}` + "\n" +
				"not json \xFF\n",
			stored: map[string]string{"café": `{"id":"café","pk":"p"}`, "emoji": `{"id":"emoji","pk":"p","s":"😀 ünïcödé"}`},
			offset: map[int64]int{3: 35, 4: 26, 5: 32, 6: 9},
		},
		{
			name:   "on the first line, after a byte order mark",
			input:  "\xEF\xBB\xBF" + `{"id":"` + "\xFF" + `","pk":"p"}` + "\n",
			offset: map[int64]int{1: 10},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFakeContainer()
			var rej bytes.Buffer
			o := testOptions(c)
			o.Rejected = &rej
			rep, err := Import(context.Background(), mustSource(t, tc.input), NewState(Fingerprint{}, Target{}, Create), o)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Created != int64(len(tc.stored)) || rep.BadLines != int64(len(tc.offset)) || rep.Reasons[ReasonInvalidUTF8] != int64(len(tc.offset)) {
				t.Fatalf("counts %+v", rep.Counts)
			}
			for id, want := range tc.stored {
				if got := c.items[id]; !strings.HasPrefix(got, strings.TrimSuffix(want, "}")+",") {
					t.Errorf("stored %s as %q, want %q", id, got, want)
				}
			}
			if !utf8.Valid(rej.Bytes()) {
				t.Fatalf("the rejected-lines file is not UTF-8: %q", rej.String())
			}
			lines := strings.Split(strings.TrimSpace(tc.input), "\n")
			for _, r := range rejections(t, rej.String()) {
				off, ok := tc.offset[r.Line]
				want := fmt.Sprintf("the line is not valid UTF-8 (byte offset %d): save the file as UTF-8, e.g. iconv", off)
				switch {
				case !ok:
					t.Errorf("line %d rejected: %+v", r.Line, r)
				case r.Reason != ReasonInvalidUTF8 || !strings.Contains(r.Error, want):
					t.Errorf("line %d: %q (%s), want %q", r.Line, r.Error, r.Reason, want)
				case r.Item != nil || r.Text != string([]rune(strings.TrimSuffix(strings.TrimPrefix(lines[r.Line-1], "\xEF\xBB\xBF"), "\r"))):
					t.Errorf("line %d: want its text, each invalid byte as U+FFFD: %+v", r.Line, r)
				}
				if l := lines[r.Line-1]; !utf8.ValidString(l[:off]) || utf8.ValidString(l[off:min(off+4, len(l))]) {
					t.Errorf("line %d: the offset %d is not the first invalid byte's", r.Line, off)
				}
			}
		})
	}
}

// Counting an input's lines for the progress bar stops when cancelled, even in the
// middle of a line that does not end.
func TestCountingLinesStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := CountLines(ctx, endlessLine{})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("counting cancelled: %v", err)
		}
	case <-time.After(patience):
		t.Fatalf("counting still going %v after its cancellation", patience)
	}
}
