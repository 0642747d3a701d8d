// Package startup measures and guards what a one-shot command costs before its first
// request: the process's start, package initialisation, the command tree and the
// settings, side by side with a minimal program using the official Go SDK (azcosmos)
// doing the same read (testdata/sdkread). README, Performance, gives the figures.
package startup

import (
	"bytes"
	"context"
	"fmt"
	"io"
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
)

// releaseBuild builds pkg as the release does (.goreleaser.yaml: CGO_ENABLED=0,
// -trimpath, -ldflags "-s -w") into dir and returns the binary's path.
func releaseBuild(t testing.TB, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	c := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg)
	c.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, out)
	}
	return bin
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
	var replace []string
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
	return timing{first: time.Unix(0, first).Sub(start), exit: exit}
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
// COSMOSCTL_STARTUP_BASELINE=PATH adds a third program, another cosmosctl binary (say,
// a build of an earlier commit), measured in the same run.
//
//	go test -run='^$' -bench=BenchmarkStartup -benchtime=200x ./e2e/startup/
func BenchmarkStartup(b *testing.B) {
	dir := b.TempDir()
	acct := startAccount(b)
	progs := []*program{
		{name: "cosmosctl", bin: releaseBuild(b, dir, "github.com/cosmosctl/cosmosctl"), args: []string{"read", "startup", "--pk", "p"}, label: "`cosmosctl read`"},
		{name: "sdk", bin: releaseBuild(b, dir, "github.com/cosmosctl/cosmosctl/e2e/startup/testdata/sdkread"), args: []string{"startup", "p"}, label: "azcosmos `ReadItem` (testdata/sdkread)"},
	}
	if base := os.Getenv("COSMOSCTL_STARTUP_BASELINE"); base != "" {
		progs = append(progs, &program{name: "baseline", bin: base, args: progs[0].args, label: "`cosmosctl read`, " + base})
	}
	c := exec.Command(progs[0].bin, "create", "-f", "-")
	c.Env, c.Stdin = acct.env, strings.NewReader(`{"id":"startup","pk":"p"}`)
	if out, err := c.CombinedOutput(); err != nil {
		b.Fatalf("create: %v\n%s", err, out)
	}
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
	var report strings.Builder
	fmt.Fprintf(&report, "\n%d runs each, alternating; medians (10th–90th percentile):\n", b.N)
	for _, p := range progs {
		first, exit := make([]time.Duration, len(p.runs)), make([]time.Duration, len(p.runs))
		for i, r := range p.runs {
			first[i], exit[i] = r.first, r.exit
		}
		fmt.Fprintf(&report, "| %s | %.1f ms (%.1f–%.1f) | %.1f ms (%.1f–%.1f) |\n", p.label,
			ms(quantile(first, .5)), ms(quantile(first, .1)), ms(quantile(first, .9)),
			ms(quantile(exit, .5)), ms(quantile(exit, .1)), ms(quantile(exit, .9)))
		b.ReportMetric(ms(quantile(first, .5)), p.name+"-first-ms")
		b.ReportMetric(ms(quantile(exit, .5)), p.name+"-exit-ms")
	}
	b.ReportMetric(0, "ns/op")
	if b.N > 1 { // not go test's first, one-run probe
		b.Log(report.String())
	}
}
