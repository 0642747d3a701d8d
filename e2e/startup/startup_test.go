// Package startup measures and guards what a one-shot command costs before its first
// request: the process's start, package initialisation, the command tree and the
// settings, side by side with a minimal program using the official Go SDK (azcosmos)
// doing the same read (testdata/sdkread). README, Performance, gives the figures.
package startup

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// releaseBuild builds pkg as the release does (.goreleaser.yaml: CGO_ENABLED=0,
// -trimpath, -ldflags "-s -w") into dir and returns the binary's path.
func releaseBuild(t testing.TB, dir, pkg string) string {
	t.Helper()
	return build(t, dir, pkg, "-trimpath", "-ldflags=-s -w")
}

// build builds pkg into dir with CGO_ENABLED=0 and flags and returns the binary's path.
func build(t testing.TB, dir, pkg string, flags ...string) string {
	t.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	c := exec.Command("go", append(append([]string{"build"}, flags...), "-o", bin, pkg)...)
	c.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// sdkread is the benchmark's yardstick, the SDK program.
const sdkread = "github.com/cosmosctl/cosmosctl/e2e/startup/testdata/sdkread"

// create writes the item the programs read, with cosmosctl at bin.
func (a *account) create(t testing.TB, bin string) {
	t.Helper()
	c := exec.Command(bin, "create", "-f", "-")
	c.Env, c.Stdin = a.env, strings.NewReader(`{"id":"startup","pk":"p"}`)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("create: %v\n%s", err, out)
	}
}

// account is an emulator with app/items holding the item the programs read, behind a
// recorder.
type account struct {
	srv *emulator.Server
	rec *recorder
	env []string // for cosmosctl and sdkread: the endpoint is the recorder's
}

func startAccount(t testing.TB) *account {
	t.Helper()
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "app",
		Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	rec := newRecorder(t, srv)
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "COSMOSCTL_") && !strings.HasPrefix(name, "XDG_") && name != "HOME" && name != "GODEBUG" {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, "cache"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"COSMOSCTL_CONFIG="+filepath.Join(home, "none.toml"), "COSMOSCTL_ENDPOINT="+rec.front, "COSMOSCTL_KEY="+srv.Key(),
		"COSMOSCTL_DATABASE=app", "COSMOSCTL_CONTAINER=items")
	return &account{srv: srv, rec: rec, env: env}
}

// recorder sits in front of every endpoint of an emulator (the global one and each
// region's) as a reverse proxy and notes when the first request of a run arrives. The
// emulator's addresses in what it answers (the account's regions, replica addresses) are
// rewritten to the recorder's, so that a client that follows them is still seen.
type recorder struct {
	front string       // the global endpoint's stand-in
	first atomic.Int64 // when the run's first request arrived (UnixNano), 0 before it
}

func newRecorder(t testing.TB, srv *emulator.Server) *recorder {
	t.Helper()
	r := &recorder{}
	targets := []string{srv.Endpoint()}
	for _, reg := range srv.Regions() {
		ep, _ := srv.RegionEndpoint(reg.Name)
		targets = append(targets, ep)
	}
	var replace []string // the emulator's host:port, then the recorder's, for each endpoint
	var lns []net.Listener
	var urls []*url.URL
	for _, tgt := range targets {
		u, err := url.Parse(tgt)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		replace = append(replace, u.Host, ln.Addr().String())
		lns, urls = append(lns, ln), append(urls, u)
	}
	r.front = "http://" + lns[0].Addr().String()
	// Longest first, so that no address is taken for the start of a longer one.
	pairs := make([][2]string, 0, len(replace)/2)
	for i := 0; i < len(replace); i += 2 {
		pairs = append(pairs, [2]string{replace[i], replace[i+1]})
	}
	slices.SortFunc(pairs, func(a, b [2]string) int { return cmp.Compare(len(b[0]), len(a[0])) })
	replace = replace[:0]
	for _, p := range pairs {
		replace = append(replace, p[0], p[1])
	}
	rewrite := strings.NewReplacer(replace...)
	for i, ln := range lns {
		proxy := httputil.NewSingleHostReverseProxy(urls[i])
		proxy.ModifyResponse = func(resp *http.Response) error {
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			body = []byte(rewrite.Replace(string(body)))
			resp.Body = io.NopCloser(bytes.NewReader(body))
			resp.ContentLength = int64(len(body))
			resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
			return nil
		}
		hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			r.first.CompareAndSwap(0, time.Now().UnixNano())
			proxy.ServeHTTP(w, req)
		}), ReadHeaderTimeout: 10 * time.Second}
		go hs.Serve(ln)
		t.Cleanup(func() { hs.Close() })
	}
	return r
}

// timing is one run of a program: from just before its exec to its first request's
// arrival, and to its exit.
type timing struct{ first, exit time.Duration }

// run execs bin with args and env, waits for it to exit 0 and times it.
func (r *recorder) run(t testing.TB, env []string, bin string, args ...string) timing {
	t.Helper()
	tm, _ := r.runOutput(t, env, bin, args...)
	return tm
}

// runOutput is run, with what the program wrote on stdout and stderr.
func (r *recorder) runOutput(t testing.TB, env []string, bin string, args ...string) (timing, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r.first.Store(0)
	c := exec.CommandContext(ctx, bin, args...)
	c.Env = env
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	start := time.Now()
	err := c.Run()
	exit := time.Since(start)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out.String())
	}
	first := r.first.Load()
	if first == 0 {
		t.Fatalf("%s %s sent no request", filepath.Base(bin), strings.Join(args, " "))
	}
	return timing{first: time.Unix(0, first).Sub(start), exit: exit}, out.String()
}

// initCost is what a process's package initialisation took, from GODEBUG=inittrace=1:
// the wall time summed over packages, and the bytes and allocations, which do not vary
// from run to run.
type initCost struct {
	clock         time.Duration
	bytes, allocs int64
	packages      map[string]int64 // bytes allocated by each package's initialisation
}

// parseInitTrace reads the lines GODEBUG=inittrace=1 writes on stderr:
//
//	init net/http @1.2 ms, 0.050 ms clock, 4712 bytes, 49 allocs
func parseInitTrace(t testing.TB, out string) initCost {
	t.Helper()
	c := initCost{packages: map[string]int64{}}
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) != 11 || f[0] != "init" || f[6] != "clock," || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		clock, err1 := strconv.ParseFloat(f[4], 64)
		bytes, err2 := strconv.ParseInt(f[7], 10, 64)
		allocs, err3 := strconv.ParseInt(f[9], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("unexpected inittrace line %q", line)
		}
		c.clock += time.Duration(clock * float64(time.Millisecond))
		c.bytes += bytes
		c.allocs += allocs
		c.packages[f[1]] += bytes
	}
	if len(c.packages) == 0 {
		t.Fatalf("no inittrace lines in:\n%s", out)
	}
	return c
}

// program is one of the programs compared, with its runs.
type program struct {
	name  string
	bin   string
	args  []string
	runs  []timing
	label string
}

func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkStartup execs `cosmosctl read` and the SDK program (testdata/sdkread) reading
// the same item from a local emulator, alternately, b.N times each, and reports for each
// the median time from exec to the first request's arrival at the server, and to exit.
// Both are release builds. cosmosctl runs as in a runbook's loop: its configuration in
// the environment, the account's topology remembered from the run before (so its first
// request is the read itself, where the SDK's is the account lookup).
// COSMOSCTL_STARTUP_BASELINE=PATH adds another cosmosctl binary (say, a build of an
// earlier commit), measured in the same run; a list (PATH:PATH) adds several.
//
//	go test -run='^$' -bench=BenchmarkStartup -benchtime=300x ./e2e/startup/
func BenchmarkStartup(b *testing.B) {
	dir := b.TempDir()
	acct := startAccount(b)
	progs := []*program{
		{name: "cosmosctl", bin: releaseBuild(b, dir, "github.com/cosmosctl/cosmosctl"), args: []string{"read", "startup", "--pk", "p"}, label: "`cosmosctl read`"},
		{name: "sdk", bin: releaseBuild(b, dir, sdkread), args: []string{"startup", "p"}, label: "azcosmos `ReadItem` (testdata/sdkread)"},
	}
	for i, base := range filepath.SplitList(os.Getenv("COSMOSCTL_STARTUP_BASELINE")) {
		name := "baseline"
		if i > 0 {
			name += strconv.Itoa(i + 1)
		}
		progs = append(progs, &program{name: name, bin: base, args: progs[0].args, label: "`cosmosctl read`, " + base})
	}
	acct.create(b, progs[0].bin)
	for _, p := range progs { // warm the page cache and cosmosctl's remembered topology
		acct.rec.run(b, acct.env, p.bin, p.args...)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range progs { // each takes its turn first
			p := progs[(i+j)%len(progs)]
			p.runs = append(p.runs, acct.rec.run(b, acct.env, p.bin, p.args...))
		}
	}
	b.StopTimer()
	// Package initialisation, from GODEBUG=inittrace=1, in runs of their own: the trace's
	// writing would slow the timed runs.
	traced := append(slices.Clip(acct.env), "GODEBUG=inittrace=1")
	inits := make([][]initCost, len(progs))
	for range min(b.N, 30) {
		for j, p := range progs {
			_, out := acct.rec.runOutput(b, traced, p.bin, p.args...)
			inits[j] = append(inits[j], parseInitTrace(b, out))
		}
	}
	var report strings.Builder
	fmt.Fprintf(&report, "\n%d runs each, alternating; medians (10th–90th percentile); package initialisation over %d runs each:\n", b.N, len(inits[0]))
	fmt.Fprintf(&report, "| program | exec → first request | exec → exit | package initialisation |\n|---|---|---|---|\n")
	for j, p := range progs {
		first, exit := make([]time.Duration, len(p.runs)), make([]time.Duration, len(p.runs))
		for i, r := range p.runs {
			first[i], exit[i] = r.first, r.exit
		}
		clock := make([]time.Duration, len(inits[j]))
		for i, c := range inits[j] {
			clock[i] = c.clock
		}
		last := inits[j][len(inits[j])-1]
		fmt.Fprintf(&report, "| %s | %.1f ms (%.1f–%.1f) | %.1f ms (%.1f–%.1f) | %.1f ms, %d KB in %d allocations |\n", p.label,
			ms(quantile(first, .5)), ms(quantile(first, .1)), ms(quantile(first, .9)),
			ms(quantile(exit, .5)), ms(quantile(exit, .1)), ms(quantile(exit, .9)),
			ms(quantile(clock, .5)), last.bytes/1000, last.allocs)
		b.ReportMetric(ms(quantile(first, .5)), p.name+"-first-ms")
		b.ReportMetric(ms(quantile(exit, .5)), p.name+"-exit-ms")
		b.ReportMetric(ms(quantile(clock, .5)), p.name+"-init-ms")
	}
	b.ReportMetric(0, "ns/op")
	if b.N > 1 { // not go test's first, one-run probe
		b.Log(report.String())
	}
}

// heavyPackages are dependencies that a command's start once paid for and must not
// again: tablewriter's initialisation alone allocated a 660 KB width cache.
var heavyPackages = []string{"github.com/olekukonko/"}

// TestReadsStartIsLight guards the start of a one-shot `cosmosctl read` where it can be
// deterministic: in what package initialisation allocates (GODEBUG=inittrace=1), not in
// time. None of heavyPackages is initialised; no package of cosmosctl's own allocates
// more than 16 KiB in its initialisation (the SQL engine's regexp, the chart page's
// template and the build's version are made when first needed); and all of them
// together, dependencies included, allocate less than 640 KiB (1.2 MB before; what
// remains is mostly Prometheus's client and Azure AD's, see README, Performance).
func TestReadsStartIsLight(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testkit.Binary(t)
	acct := startAccount(t)
	acct.create(t, bin)
	_, out := acct.rec.runOutput(t, append(slices.Clip(acct.env), "GODEBUG=inittrace=1"), bin, "read", "startup", "--pk", "p")
	if !strings.Contains(out, `"id":"startup"`) {
		t.Fatalf("read printed no item:\n%s", out)
	}
	cost := parseInitTrace(t, out)
	for pkg, bytes := range cost.packages {
		for _, heavy := range heavyPackages {
			if strings.HasPrefix(pkg, heavy) {
				t.Errorf("%s is initialised at every start (%d bytes)", pkg, bytes)
			}
		}
		if strings.HasPrefix(pkg, "github.com/cosmosctl/cosmosctl/") && bytes > 16<<10 {
			t.Errorf("%s's initialisation allocates %d bytes: make what it builds when first needed (sync.OnceValue)", pkg, bytes)
		}
	}
	if cost.bytes > 640<<10 {
		t.Errorf("package initialisation allocates %d bytes in %d allocations, more than 640 KiB; the largest:\n%s", cost.bytes, cost.allocs, largest(cost.packages, 10))
	}
	t.Logf("package initialisation: %d bytes in %d allocations; the largest:\n%s", cost.bytes, cost.allocs, largest(cost.packages, 10))
}

func largest(packages map[string]int64, n int) string {
	names := slices.Collect(maps.Keys(packages))
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(packages[b], packages[a]) })
	var b strings.Builder
	for _, name := range names[:min(n, len(names))] {
		fmt.Fprintf(&b, "  %8d  %s\n", packages[name], name)
	}
	return b.String()
}

// TestTheBenchmarksProgramsReadThroughTheRecorder keeps BenchmarkStartup honest: both
// programs read the item through the recorder, which sees each one's first request
// between the exec and the exit (cosmosctl's second read with the topology its first
// remembered, as in the benchmark).
func TestTheBenchmarksProgramsReadThroughTheRecorder(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	ctl := testkit.Binary(t)
	sdk := build(t, t.TempDir(), sdkread)
	acct := startAccount(t)
	acct.create(t, ctl)
	for _, run := range []struct {
		bin  string
		args []string
	}{{ctl, []string{"read", "startup", "--pk", "p"}}, {ctl, []string{"read", "startup", "--pk", "p"}}, {sdk, []string{"startup", "p"}}} {
		tm, out := acct.rec.runOutput(t, acct.env, run.bin, run.args...)
		if !strings.Contains(out, `"id":"startup"`) {
			t.Errorf("%s printed no item:\n%s", filepath.Base(run.bin), out)
		}
		if tm.first <= 0 || tm.first > tm.exit {
			t.Errorf("%s: first request %v after the exec, exit %v", filepath.Base(run.bin), tm.first, tm.exit)
		}
	}
}
