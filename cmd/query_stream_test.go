package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// readLine reads one line from r a byte at a time, so that nothing after it is taken
// from the pipe: the writer stays blocked in the write of the rest of its page.
func readLine(t *testing.T, r io.Reader) string {
	t.Helper()
	var line []byte
	b := make([]byte, 1)
	for {
		if _, err := r.Read(b); err != nil {
			t.Fatalf("reading the first line (%q so far): %v", line, err)
		}
		if b[0] == '\n' {
			return string(line)
		}
		line = append(line, b[0])
	}
}

// pipedQuery runs a query in-process with stdout a pipe the test reads; done gets the
// exit code (the pipe is closed when the command returns).
func pipedQuery(t *testing.T, ctx context.Context, args ...string) (stdout *io.PipeReader, errOut *syncBuffer, done chan int) {
	t.Helper()
	pr, pw := io.Pipe()
	streams, _, errBuf := testIO()
	streams.Out = pw
	done = make(chan int, 1)
	go func() {
		code := Run(ctx, streams, append([]string{"query"}, args...))
		pw.Close()
		done <- code
	}()
	t.Cleanup(func() { pr.Close() })
	return pr, errBuf, done
}

func idsOfLines(t *testing.T, lines []string) []string {
	t.Helper()
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var v struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.ID == "" {
			t.Fatalf("an ndjson line is not an item: %q", l)
		}
		out = append(out, v.ID)
	}
	return out
}

func fired(srv *emulator.Server, id string) int {
	for _, r := range srv.Faults().Rules() {
		if r.ID == id {
			return r.Fired
		}
	}
	return -1
}

// TestQueryNDJSONStreamsPagesAsTheyArrive: the first item is on stdout while the
// query's later pages have not been asked for. The test reads the first line (the
// command is then blocked writing the rest of its first page), and only then adds a
// fault that delays queries; the fault firing proves that pages were requested after
// the first line was out, which a command that printed at the end could not do.
func TestQueryNDJSONStreamsPagesAsTheyArrive(t *testing.T) {
	items := makeQueryItems(queryTestItems)
	srv := queryAccount(t, items)
	want := ids(where(items, func(i qitem) bool { return i.PK == "p3" }))
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"within a partition key", []string{"SELECT * FROM c", "--pk", "p3"}},
		{"across partitions, ORDER BY", []string{"SELECT * FROM c WHERE c.pk = 'p3' ORDER BY c.n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, errOut, done := pipedQuery(t, context.Background(), append(tc.args, "--page-size", "2", "--all", "-o", "ndjson")...)
			first := readLine(t, stdout)
			rule, err := srv.AddFault(faults.Rule{Operations: []string{faults.OpQuery}, Effect: faults.EffectDelay,
				Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(50 * time.Millisecond)}})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Faults().Remove(rule.ID)
			rest, _ := io.ReadAll(stdout)
			if code := <-done; code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			lines := append([]string{first}, strings.Split(string(rest), "\n")...)
			got := idsOfLines(t, lines)
			if len(got) != len(want) {
				t.Fatalf("%d items streamed, want %d: %v", len(got), len(want), got)
			}
			if n := fired(srv, rule.ID); n < 1 {
				t.Fatalf("no page was requested after the first item was printed (the fault fired %d times): the items were not streamed", n)
			}
		})
	}
}

// TestQueryCtrlCPrintsWhatWasReadAndTheContinuation: interrupted while its later pages
// hang, a query exits 130, leaves the items it printed, and prints a continuation that
// resumes after them, so that the two runs hold every item once.
func TestQueryCtrlCPrintsWhatWasReadAndTheContinuation(t *testing.T) {
	delay := queryProgressDelay
	queryProgressDelay = 0
	t.Cleanup(func() { queryProgressDelay = delay })
	items := makeQueryItems(queryTestItems)
	srv := queryAccount(t, items)
	for _, tc := range []struct {
		name string
		args []string
		want []any
	}{
		{"within a partition key", []string{"SELECT * FROM c", "--pk", "p3"}, ids(where(items, func(i qitem) bool { return i.PK == "p3" }))},
		{"across partitions, ORDER BY", []string{"SELECT * FROM c ORDER BY c.name"}, ids(sortedBy(items, func(a, b qitem) bool { return a.Name < b.Name }))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, format := range []string{"ndjson", "json", "table"} {
				ctx, cancel := context.WithCancel(context.Background())
				args := append(tc.args, "--page-size", "2", "--all", "-o", format)
				var first string
				var errOut *syncBuffer
				var done chan int
				restCh := make(chan []byte, 1)
				var outBuf *syncBuffer
				if format == "ndjson" {
					var pr *io.PipeReader
					pr, errOut, done = pipedQuery(t, ctx, args...)
					first = readLine(t, pr)
					hang(t, srv, format)
					go func() {
						b, _ := io.ReadAll(pr)
						restCh <- b
					}()
				} else {
					// Table and JSON print at the end: the progress line (stderr a
					// terminal) says when items have been read, and the writer that
					// receives it makes later pages hang, from inside the write, before
					// the command can ask for another page.
					streams, out, _ := testIO()
					tw := &triggerWriter{fire: func() { hang(t, srv, format) }}
					streams.ErrOut, streams.ErrTTY = tw, true
					errOut, done = &tw.syncBuffer, make(chan int, 1)
					go func() { done <- Run(ctx, streams, append([]string{"query"}, args...)) }()
					select {
					case <-tw.fired():
					case code := <-done:
						t.Fatalf("%s: the query ended (exit %d) before it read an item: %s", format, code, errOut.String())
					}
					outBuf = out
				}
				cancel()
				var code int
				select {
				case code = <-done:
				case <-time.After(30 * time.Second):
					t.Fatal("the query did not end on Ctrl-C")
				}
				srv.Faults().Remove("hang-" + format)
				var rest []byte
				if format == "ndjson" {
					rest = <-restCh
				} else {
					rest = []byte(outBuf.String())
				}
				if code != ExitInterrupted {
					t.Fatalf("%s: exit %d, want %d: %s", format, code, ExitInterrupted, errOut.String())
				}
				var got []string
				var token string
				switch format {
				case "ndjson":
					got = idsOfLines(t, append([]string{first}, strings.Split(string(rest), "\n")...))
					token = resumeToken(t, errOut.String())
				case "json":
					var q queryResult
					if err := json.Unmarshal(rest, &q); err != nil {
						t.Fatalf("json: %v: %s", err, rest)
					}
					if q.Error == nil || q.Error.Kind != "interrupted" || q.Complete || q.Continuation == nil {
						t.Fatalf("json: the object must say it was interrupted and where to resume: %s", rest)
					}
					for _, it := range q.Items {
						var v struct{ ID string }
						json.Unmarshal(it, &v)
						got = append(got, v.ID)
					}
					token = *q.Continuation
				case "table":
					lines := strings.Split(strings.TrimSpace(string(rest)), "\n")
					col := slices.Index(strings.Fields(lines[0]), "id")
					for _, line := range lines[1:] {
						if f := strings.Fields(line); col >= 0 && len(f) > col {
							got = append(got, f[col])
						}
					}
					token = resumeToken(t, errOut.String())
				}
				if token == "" || !strings.Contains(errOut.String(), "Error: interrupted: query after ") {
					t.Fatalf("%s: stderr must give the continuation and say it was interrupted: %q", format, errOut.String())
				}
				q, r := runQueryJSON(t, append(tc.args, "--page-size", "2", "--all", "--continuation", token)...)
				if r.code != 0 || !q.Complete {
					t.Fatalf("%s: resuming: exit %d: %s", format, r.code, r.errOut)
				}
				for _, it := range q.Items {
					var v struct{ ID string }
					json.Unmarshal(it, &v)
					got = append(got, v.ID)
				}
				want := make([]string, len(tc.want))
				for i, w := range tc.want {
					want[i] = w.(string)
				}
				if strings.Contains(tc.name, "ORDER BY") {
					if strings.Join(got, " ") != strings.Join(want, " ") {
						t.Fatalf("%s: interrupted run and resumed run:\n got  %v\n want %v", format, got, want)
					}
				} else if g, w := sortedCopy(got), sortedCopy(want); strings.Join(g, " ") != strings.Join(w, " ") {
					t.Fatalf("%s: interrupted run and resumed run:\n got  %v\n want %v", format, g, w)
				}
			}
		})
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// hang makes every query request from now on hang.
func hang(t *testing.T, srv *emulator.Server, id string) {
	t.Helper()
	if _, err := srv.AddFault(faults.Rule{ID: "hang-" + id, Operations: []string{faults.OpQuery}, Effect: faults.EffectHang}); err != nil {
		t.Error(err)
	}
}

// triggerWriter is stderr on a terminal, for a test: it keeps what is written, and calls
// fire, once, from inside the write of the first progress line that counts an item.
type triggerWriter struct {
	syncBuffer
	fire func()
	once sync.Once
	ch   chan struct{}
	mu   sync.Mutex
}

var progressItems = regexp.MustCompile(`query: \d+ pages?, [1-9]\d* items?`)

func (w *triggerWriter) fired() chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	return w.ch
}

func (w *triggerWriter) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	if progressItems.Match(p) {
		w.once.Do(func() {
			w.fire()
			close(w.fired())
		})
	}
	return n, err
}

// TestQueryCtrlCOnTheBinary: the operator's path, a real process, a real pipe and a
// real SIGINT: the streamed items stay, stderr has the continuation, the exit is 130.
func TestQueryCtrlCOnTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := cosmosctlBinary(t)
	items := makeQueryItems(queryTestItems)
	// Pages of 20 ms: the 40-odd pages take far longer than it takes the test to make
	// the rest hang once the first line is out (an OS pipe does not block the writer).
	srv := queryAccount(t, items, func(c *emulator.Config) {
		c.Latency = []faults.LatencySpec{{Operation: faults.OpQuery, Distribution: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(20 * time.Millisecond)}}}
	})
	cmd := exec.Command(bin, "query", "SELECT * FROM c ORDER BY c.n", "--page-size", "3", "--all", "-o", "ndjson")
	cmd.Env = os.Environ()
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(stdout)
	first, err := rd.ReadString('\n')
	if err != nil {
		t.Fatalf("no first line: %v: %s", err, errOut.String())
	}
	rule, err := srv.AddFault(faults.Rule{Operations: []string{faults.OpQuery}, Effect: faults.EffectHang})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Faults().Remove(rule.ID)
	cmd.Process.Signal(os.Interrupt)
	rest, _ := io.ReadAll(rd)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitInterrupted {
		t.Fatalf("exit %v, want %d: %s", err, ExitInterrupted, errOut.String())
	}
	lines := idsOfLines(t, append([]string{first}, strings.Split(string(rest), "\n")...))
	if len(lines) == 0 || len(lines) >= len(items) {
		t.Fatalf("%d items before the interrupt", len(lines))
	}
	if resumeToken(t, errOut.String()) == "" || !strings.Contains(errOut.String(), "Error: interrupted: query after ") {
		t.Fatalf("stderr %q", errOut.String())
	}
}
