//go:build unix

package shards_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/health"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// account starts the emulator (4 ranges: 3 shards group whole ranges, 7 cut them) with
// the items, and the environment a shard process gets.
func account(t *testing.T) (*emulator.Server, []string) {
	t.Helper()
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "app", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	cert := certFile(t, srv)
	testkit.LoadItems(t, srv, items)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COSMOSCTL_") && !strings.HasPrefix(kv, "JOB_COMPLETION_INDEX=") {
			env = append(env, kv)
		}
	}
	env = append(env, "COSMOSCTL_ENDPOINT="+srv.Endpoint(), "COSMOSCTL_KEY="+srv.Key(), "COSMOSCTL_DATABASE=app", "COSMOSCTL_CONTAINER=items",
		"COSMOSCTL_CONFIG="+filepath.Join(t.TempDir(), "none.toml"), "COSMOSCTL_STATE_DIR="+t.TempDir(), "SSL_CERT_FILE="+cert)
	return srv, env
}

// certFile is the emulator's certificate, for a process to trust (testkit.TrustEmulator
// does it for this one).
func certFile(t *testing.T, srv *emulator.Server) string {
	t.Helper()
	testkit.TrustEmulator(t, srv)
	return os.Getenv("SSL_CERT_FILE")
}

// process is the binary running in the background.
type process struct {
	cmd    *exec.Cmd
	errOut *bytes.Buffer
	done   chan error
}

func start(t *testing.T, env []string, stdout *os.File, args ...string) *process {
	t.Helper()
	p := &process{errOut: &bytes.Buffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env, p.cmd.Stderr = env, p.errOut
	if stdout != nil {
		p.cmd.Stdout = stdout
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { p.cmd.Process.Kill() })
	return p
}

// wait waits for the process's end, bounded by two minutes.
func (p *process) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(2 * time.Minute):
		t.Fatalf("%v did not end within two minutes", p.cmd.Args)
		return nil
	}
}

func run(t *testing.T, env []string, args ...string) string {
	t.Helper()
	p := start(t, env, nil, args...)
	if err := p.wait(t); err != nil {
		t.Fatalf("%v: %v: %s", p.cmd.Args[1:], err, p.errOut)
	}
	return p.errOut.String()
}

// ids reads an NDJSON file's ids, sorted, and fails on an id twice when once is true.
func ids(t *testing.T, path string, once bool) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v struct{ ID string }
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: a line that is no item: %q", path, sc.Text())
		}
		if seen[v.ID] && once {
			t.Fatalf("%s: item %q twice", path, v.ID)
		}
		if !seen[v.ID] {
			out = append(out, v.ID)
		}
		seen[v.ID] = true
	}
	slices.Sort(out)
	return out
}

// stateItems is what an export's state file counts, and whether it is complete.
func stateItems(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	var s struct {
		Items    int64 `json:"items"`
		Complete bool  `json:"complete"`
	}
	if json.Unmarshal(b, &s) != nil {
		return 0, false
	}
	return s.Items, s.Complete
}

// TestShardedExportProcessesMergeToEveryItemOnce is the acceptance: N = 1, 3, 4, 7
// processes, 4 with its index from JOB_COMPLETION_INDEX, one shard of 3 killed with -9
// after a checkpoint and resumed; each run's merge holds every item exactly once.
func TestShardedExportProcessesMergeToEveryItemOnce(t *testing.T) {
	srv, env := account(t)
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.ndjson")
	run(t, env, "export", "--output-file", plain)
	want := ids(t, plain, true)
	if len(want) != items {
		t.Fatalf("the plain export holds %d items, want %d", len(want), items)
	}
	for _, n := range []int{1, 3, 4, 7} {
		t.Run(fmt.Sprintf("%d shards", n), func(t *testing.T) {
			sd := filepath.Join(dir, fmt.Sprint(n))
			if err := os.MkdirAll(sd, 0o700); err != nil {
				t.Fatal(err)
			}
			args := func(i int) []string {
				out := filepath.Join(sd, fmt.Sprintf("shard-%d.ndjson", i))
				spec := fmt.Sprintf("%d/%d", i, n)
				if n == 4 {
					spec = "auto/4"
				}
				return []string{"export", "--shard", spec, "--output-file", out, "--state", out + ".state"}
			}
			envOf := func(i int) []string {
				if n == 4 {
					return append(slices.Clone(env), fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i))
				}
				return env
			}
			const victim = 1
			var rule faults.Rule
			if n == 3 {
				// The shard to kill reads slowly (20 ms a page of 100) until it is killed,
				// so that it is killed after a checkpoint and well before its end.
				var err error
				rule, err = srv.AddFault(faults.Rule{Operations: []string{faults.OpQuery}, Effect: faults.EffectDelay,
					Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(20 * time.Millisecond)}})
				if err != nil {
					t.Fatal(err)
				}
				p := start(t, envOf(victim), nil, append(args(victim), "--page-size", "100", "--parallelism", "1")...)
				state := args(victim)[len(args(victim))-1]
				deadline := time.Now().Add(time.Minute)
				for {
					got, complete := stateItems(state)
					if complete {
						t.Fatalf("shard %d/3 completed before it could be killed", victim)
					}
					if got > 0 {
						break
					}
					select {
					case err := <-p.done:
						t.Fatalf("shard %d/3 ended (%v) before its first checkpoint: %s", victim, err, p.errOut)
					case <-time.After(10 * time.Millisecond):
					}
					if time.Now().After(deadline) {
						t.Fatal("no checkpoint within a minute")
					}
				}
				p.cmd.Process.Signal(syscall.SIGKILL)
				p.wait(t)
				srv.Faults().Remove(rule.ID)
				// The merge says what is missing while the killed shard is incomplete.
				mp := start(t, env, nil, "export", "merge", sd)
				if err := mp.wait(t); err == nil || mp.cmd.ProcessState.ExitCode() != 11 || !strings.Contains(mp.errOut.String(), "shard 1/3") {
					t.Fatalf("merge with shard 1/3 killed: %v, %s", err, mp.errOut)
				}
			}
			var wg sync.WaitGroup
			errs := make([]string, n)
			for i := range n {
				wg.Go(func() {
					p := start(t, envOf(i), nil, args(i)...)
					if err := <-p.done; err != nil {
						errs[i] = fmt.Sprintf("shard %d/%d: %v: %s", i, n, err, p.errOut)
					}
				})
			}
			wg.Wait()
			for _, e := range errs {
				if e != "" {
					t.Fatal(e)
				}
			}
			merged := filepath.Join(dir, fmt.Sprintf("merged-%d.ndjson", n))
			run(t, env, "export", "merge", sd, "--output-file", merged)
			if got := ids(t, merged, true); !slices.Equal(got, want) {
				t.Fatalf("the %d shards merged hold %d items, want each of %d once", n, len(got), len(want))
			}
		})
	}
}

// TestChangesShardsDeliverEveryChangeWhileWritesGoOn: 4 `changes --follow` shards, one
// killed with -9 and resumed from its state, while a writer creates items: between them
// every item, those loaded and the new ones, is delivered at least once.
func TestChangesShardsDeliverEveryChangeWhileWritesGoOn(t *testing.T) {
	srv, env := account(t)
	dir := t.TempDir()
	const n = 4
	outs := make([]*os.File, n)
	procs := make([]*process, n)
	follow := func(i int) *process {
		return start(t, env, outs[i], "changes", "--follow", "--shard", fmt.Sprintf("%d/%d", i, n), "--state", filepath.Join(dir, fmt.Sprintf("%d.state", i)),
			"-o", "ndjson", "--poll-interval", "50ms")
	}
	for i := range n {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.ndjson", i)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		outs[i] = f
		procs[i] = follow(i)
	}
	c := client(t, srv)
	var want []string
	for i := range written {
		id := fmt.Sprintf("w%05d", i)
		want = append(want, id)
		body := fmt.Appendf(nil, `{"id":%q,"pk":"w%d"}`, id, i%113)
		if _, err := c.Execute(context.Background(), engine.Operation{Kind: engine.OpCreate, Database: "app", Container: "items", Body: body}); err != nil {
			t.Fatal(err)
		}
		if i == written/2 {
			// Shard 2 dies mid-stream and is started again with the same state.
			procs[2].cmd.Process.Signal(syscall.SIGKILL)
			procs[2].wait(t)
			procs[2] = follow(2)
		}
	}
	for i := range items {
		want = append(want, fmt.Sprintf("b%06d", i))
	}
	slices.Sort(want)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var got []string
		for i := range n {
			got = append(got, ids(t, outs[i].Name(), false)...)
		}
		slices.Sort(got)
		got = slices.Compact(got)
		if slices.Equal(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after two minutes the shards delivered %d of the %d items", len(got), len(want))
		}
		for i, p := range procs {
			select {
			case err := <-p.done:
				t.Fatalf("shard %d ended: %v: %s", i, err, p.errOut)
			default:
			}
		}
		time.Sleep(100 * time.Millisecond) // polling the files for a condition, not a guess at a duration
	}
	for _, p := range procs {
		p.cmd.Process.Signal(syscall.SIGINT)
		p.wait(t)
	}
}

func client(t *testing.T, srv *emulator.Server) *engine.Client {
	t.Helper()
	mk, _ := cosmos.NewMasterKey(srv.Key())
	hs, _ := health.New(health.Config{}, clock.Real{})
	c, err := engine.New(engine.Options{Endpoint: srv.Endpoint(), Transport: &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: mk}, Health: hs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
