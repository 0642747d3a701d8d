package hedgetest_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"

	"github.com/cosmosctl/cosmosctl/cmd"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// countingAccount is an endpoint that counts the requests sent to it and answers each
// with a 503: configured as the account, it shows whether a command sent anything.
func countingAccount(t *testing.T) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		http.Error(w, `{"code":"ServiceUnavailable","message":"counting only"}`, http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	testkit.Isolate(t)
	t.Setenv("COSMOSCTL_ENDPOINT", srv.URL)
	t.Setenv("COSMOSCTL_KEY", cosmos.EmulatorKey)
	t.Setenv("COSMOSCTL_DATABASE", "app")
	t.Setenv("COSMOSCTL_CONTAINER", "items")
	return &n
}

func TestHedgeTestRefusesAPlotPathItCannotWriteBeforeAnyRequest(t *testing.T) {
	requests := countingAccount(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	os.Mkdir(filepath.Join(dir, "chart.svg"), 0o755)
	os.Symlink(filepath.Join(dir, "nowhere", "x.svg"), filepath.Join(dir, "dangling.svg"))
	cases := []struct {
		name, path, want string
	}{
		{"a directory that does not exist", "/nonexistent/x.svg", "the directory /nonexistent does not exist"},
		{"a directory that does not exist, relative", filepath.Join(dir, "missing", "x.html"), "missing does not exist"},
		{"a directory in its place", filepath.Join(dir, "chart.svg"), "is not a regular file"},
		{"under a file", filepath.Join(file, "x.svg"), "cannot be written (not a directory)"},
		{"a symbolic link to nowhere", filepath.Join(dir, "dangling.svg"), "symbolic link to nowhere"},
		{"the wrong extension", filepath.Join(dir, "x.png"), "written as .svg or .html"},
	}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "read-only")
		os.Mkdir(ro, 0o555)
		cases = append(cases, struct{ name, path, want string }{"a directory it cannot write to", filepath.Join(ro, "x.svg"), "cannot create files in"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := clitest.Run(t, "", "hedge-test", "--count", "5", "--plot", tc.path)
			if r.Code != cmd.ExitUsage || !strings.Contains(r.ErrOut, tc.want) || r.Out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and %q", r.Code, r.Out, r.ErrOut, cmd.ExitUsage, tc.want)
			}
			if n := requests.Load(); n != 0 {
				t.Fatalf("%d requests sent before the bad --plot was refused", n)
			}
		})
	}
	t.Run("the embedded emulator is not even started", func(t *testing.T) {
		testkit.Isolate(t)
		r := clitest.Run(t, "", "hedge-test", "--plot", "/nonexistent/x.svg")
		if r.Code != cmd.ExitUsage || strings.Contains(r.ErrOut, "embedded emulator") || strings.Contains(r.ErrOut, "scenario:") {
			t.Fatalf("exit %d, stderr %q", r.Code, r.ErrOut)
		}
	})

	// The control: with a path it can write, the same command does send requests, and
	// its failure leaves an existing chart as it was, and nothing beside it.
	t.Run("a good path lets the test run; its failure keeps the old chart", func(t *testing.T) {
		chart := filepath.Join(t.TempDir(), "old.svg")
		os.WriteFile(chart, []byte("old chart"), 0o644)
		r := clitest.Run(t, "", "hedge-test", "--count", "5", "--items", "1", "--plot", chart)
		if r.Code == cmd.ExitOK || requests.Load() == 0 {
			t.Fatalf("exit %d after %d requests against an account that answers 503", r.Code, requests.Load())
		}
		assertOnlyFile(t, chart, "old chart")
	})
}

// assertOnlyFile checks that path holds want and that nothing else is in its directory.
func assertOnlyFile(t *testing.T, path, want string) {
	t.Helper()
	if got, err := os.ReadFile(path); err != nil || (want != "" && string(got) != want) {
		t.Fatalf("%s: %q %v, want %q", path, got, err, want)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("the directory holds %v, want only %s", names, filepath.Base(path))
	}
}

// onStderr is a stderr that calls fn once, when the command has written mark to it.
type onStderr struct {
	testkit.Buffer
	mark string
	fn   func()
	once sync.Once
}

func (o *onStderr) Write(p []byte) (int, error) {
	n, err := o.Buffer.Write(p)
	if strings.Contains(o.String(), o.mark) {
		o.once.Do(o.fn)
	}
	return n, err
}

// hedgeTestWhile runs hedge-test on the embedded emulator and calls during once the
// scenario is in place, before the first strategy runs.
func hedgeTestWhile(t *testing.T, during func(), args ...string) clitest.Result {
	t.Helper()
	testkit.Isolate(t)
	io, out, _ := clitest.IO()
	errOut := &onStderr{mark: "scenario:", fn: during}
	io.ErrOut = errOut
	code := cmd.Run(context.Background(), io, append([]string{"hedge-test", "--count", "30", "--concurrency", "4", "--items", "3",
		"--strategies", "none,fanout", "--scenario", "outage"}, args...))
	return clitest.Result{Code: code, Out: out.String(), ErrOut: errOut.String()}
}

func TestHedgeTestPlotThatCannotBeWrittenAtTheEndKeepsTheResults(t *testing.T) {
	for _, format := range []string{"table", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "charts")
			os.Mkdir(dir, 0o755)
			// The directory is there when the command checks it, and gone when the chart
			// is written.
			r := hedgeTestWhile(t, func() { os.RemoveAll(dir) }, "-o", format, "--plot", filepath.Join(dir, "chart.html"))
			if r.Code != cmd.ExitError {
				t.Fatalf("exit %d, want %d: %s", r.Code, cmd.ExitError, r.ErrOut)
			}
			if !strings.Contains(r.ErrOut, "Error: the results above are complete, but the chart could not be written to --plot "+filepath.Join(dir, "chart.html")+": no such file or directory") {
				t.Fatalf("stderr %q", r.ErrOut)
			}
			if format == "json" {
				var rep hedgeTestReport
				if err := json.Unmarshal([]byte(r.Out), &rep); err != nil || len(rep.Strategies) != 2 || rep.Recommendation.Reason == "" {
					t.Fatalf("stdout is not the complete report (%v):\n%s", err, r.Out)
				}
				return
			}
			for _, want := range []string{"STRATEGY", "none", "fanout", "recommendation:"} {
				if !strings.Contains(r.Out, want) {
					t.Fatalf("the table lacks %q:\n%s", want, r.Out)
				}
			}
		})
	}
}

func TestHedgeTestPlotReplacesAnExistingChartOnlyWhenComplete(t *testing.T) {
	chart := filepath.Join(t.TempDir(), "chart.svg")
	os.WriteFile(chart, []byte("old chart"), 0o640)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	testkit.Isolate(t)
	io, _, _ := clitest.IO()
	io.ErrOut = &onStderr{mark: "scenario:", fn: cancel}
	code := cmd.Run(ctx, io, []string{"hedge-test", "--count", "200", "--concurrency", "2", "--rate", "50", "--items", "3", "--plot", chart})
	if code != cmd.ExitInterrupted {
		t.Fatalf("exit %d after Ctrl-C, want %d", code, cmd.ExitInterrupted)
	}
	assertOnlyFile(t, chart, "old chart")

	r := hedgeTestWhile(t, func() {}, "--plot", chart)
	if r.Code != 0 || !strings.Contains(r.ErrOut, "chart written to "+chart) {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	assertOnlyFile(t, chart, "")
	if svg, _ := os.ReadFile(chart); !strings.HasPrefix(string(svg), "<svg") {
		t.Fatalf("chart %q", svg)
	}
	if fi, _ := os.Stat(chart); fi.Mode().Perm() != 0o640 {
		t.Fatalf("the replaced chart has mode %v, want the old file's 0640", fi.Mode().Perm())
	}
}

func TestHedgeTestPlotHTMLIsTheReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.html")
	r := hedgeTestWhile(t, func() {}, "--plot", path, "--target-p99", "1h")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// html/template writes "+" as "&#43;".
	page := html.UnescapeString(string(b))
	for _, want := range []string{
		"<title>cosmosctl hedge-test: outage (the first region refuses connections)</title>",
		"<h1>cosmosctl hedge-test: outage (the first region refuses connections)</h1>",
		"<th>STRATEGY</th><th class=\"num\">REQUESTS</th>", "<polyline", "30 reads per strategy, 4 in flight (closed loop); target p99 1h",
		// Both meet a 1 h target; none sends fewer requests (it fails over once a read, fan-out asks all three).
		`<tr class="highlight"><td><span class="swatch" style="background: #1f77b4"></span>none<span class="badge">recommended</span></td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	// The table's figures are the terminal's.
	rows := 0
	for _, line := range strings.Split(r.Out, "\n") {
		if f := strings.Fields(line); len(f) > 3 && (f[0] == "none" || f[0] == "fanout") {
			rows++
			for _, cell := range f[1:7] {
				if !strings.Contains(page, `<td class="num">`+cell+`</td>`) {
					t.Errorf("the page lacks %s's %s", f[0], cell)
				}
			}
		}
	}
	if rows != 2 {
		t.Fatalf("%d strategies in the table, want 2:\n%s", rows, r.Out)
	}
}
