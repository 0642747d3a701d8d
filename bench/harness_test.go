package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

const (
	database = "app"
	// readContainer holds the n items the read workloads read.
	readContainer = "items"
	// importConcurrency is the writes in flight of every import implementation:
	// cosmosctl import's default --concurrency, passed explicitly so that the three stay
	// comparable if the default changes.
	importConcurrency = 16
	// readPageSize is the page the SDK and the floor ask for (x-ms-max-item-count): the
	// service's largest, the cheapest way to read everything. cosmosctl runs with its
	// own defaults: what a user gets.
	readPageSize = 1000
)

// impl is one implementation of a workload: it does the work against container and
// returns how many items it wrote or read, as it counted them.
type impl struct {
	name string
	run  func(ctx context.Context, container string) (int, error)
}

// The implementations, in this order in every workload. floor-lines is the read
// workloads' second floor: the floor's requests, with each page's items split out and
// written as lines (see floorLines); a write workload has none.
const (
	cosmosctlImpl = iota
	sdkImpl
	floorImpl
	floorLinesImpl
	nImpls
)

var implNames = [nImpls]string{"cosmosctl", "sdk", "floor", "floor-lines"}

// workload is one piece of work done three ways.
type workload struct {
	name string
	// write: each run gets a new, empty container of its own (created before, checked
	// and deleted after, outside the measurement); reads all read readContainer.
	write bool
	impls [nImpls]impl // an implementation with no run is not part of the workload
}

// suite is one emulator loaded with n items to read, the import input of n lines, and
// the environment cosmosctl's commands (run in this process) use to reach it. The
// emulator runs in a process of its own (childemulator_test.go), as a service does: in
// this one, every collection would scan its stored items too, and charge the
// implementation that allocates most for the emulator's heap, more so the more items
// it holds. Its CPU time is added to this process's in every measurement.
type suite struct {
	emu      *childEmulator
	endpoint string
	key      *cosmos.MasterKey
	n        int
	// importFile is n NDJSON lines of new items, ≈250 bytes each like the loaded ones.
	importFile string
	dir        string
	containers atomic.Int64
}

// newSuite starts the emulator (4 ranges, no injected latency), loads n items into
// app/items and writes the import input into dir.
func newSuite(tb testing.TB, n int, dir string) *suite {
	tb.Helper()
	emu, err := startChildEmulator()
	if err != nil {
		tb.Fatal(err)
	}
	mk, err := cosmos.NewMasterKey(emu.key)
	if err != nil {
		emu.stop()
		tb.Fatal(err)
	}
	s := &suite{emu: emu, endpoint: strings.TrimRight(emu.endpoint, "/"), key: mk, n: n, dir: dir}
	testkit.LoadItemsAt(tb, emu.endpoint, emu.key, n)
	var buf bytes.Buffer
	for i := range n {
		fmt.Fprintf(&buf, `{"id":"m%06d","pk":"p%d","n":%d,"g":"g%d","pad":"0123456789abcdef0123456789abcdef0123456789abcdef"}`+"\n", i, i%997, (i*7919)%5000, i%7)
	}
	s.importFile = filepath.Join(dir, "items.ndjson")
	if err := os.WriteFile(s.importFile, buf.Bytes(), 0o600); err != nil {
		tb.Fatal(err)
	}
	return s
}

// pointCommandsAt sets the environment cosmosctl's commands read, every other
// COSMOSCTL_ variable cleared (testkit.Isolate, for a testing.TB).
func (s *suite) pointCommandsAt(tb testing.TB) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "COSMOSCTL_") || name == "NO_COLOR" {
			tb.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	dir := tb.TempDir()
	for k, v := range map[string]string{"COSMOSCTL_ENDPOINT": s.emu.endpoint, "COSMOSCTL_KEY": s.emu.key,
		"COSMOSCTL_DATABASE": database, "COSMOSCTL_CONTAINER": readContainer,
		"COSMOSCTL_CONFIG": filepath.Join(dir, "none.toml"), "COSMOSCTL_STATE_DIR": filepath.Join(dir, "state"),
		"COSMOSCTL_EMULATOR_DATA": filepath.Join(dir, "emulator")} {
		tb.Setenv(k, v)
	}
}

func (s *suite) workloads() []workload {
	return []workload{
		{name: "ImportCreate", write: true, impls: [nImpls]impl{
			{"cosmosctl", s.cosmosctlImport("create")}, {"sdk", s.sdkImport(false)}, {"floor", s.floorImport(false)}, {}}},
		{name: "ImportUpsert", write: true, impls: [nImpls]impl{
			{"cosmosctl", s.cosmosctlImport("upsert")}, {"sdk", s.sdkImport(true)}, {"floor", s.floorImport(true)}, {}}},
		{name: "Changes", impls: [nImpls]impl{
			{"cosmosctl", s.cosmosctlRead("changes", "-o", "ndjson")}, {"sdk", s.sdkChanges},
			{"floor", s.floorChanges(false)}, {"floor-lines", s.floorChanges(true)}}},
		{name: "Export", impls: [nImpls]impl{
			{"cosmosctl", s.cosmosctlRead("export")}, {"sdk", s.sdkQuery},
			{"floor", s.floorQuery(false)}, {"floor-lines", s.floorQuery(true)}}},
		{name: "QueryAll", impls: [nImpls]impl{
			{"cosmosctl", s.cosmosctlRead("query", "SELECT * FROM c", "--all", "-o", "ndjson")}, {"sdk", s.sdkQuery},
			{"floor", s.floorQuery(false)}, {"floor-lines", s.floorQuery(true)}}},
	}
}

// measurement is one run's cost.
type measurement struct {
	wall, cpu time.Duration
	// emuCPU is the emulator's share of cpu: what serving this implementation's
	// requests cost the service's side.
	emuCPU time.Duration
}

// runOnce runs one implementation of w once and checks that it did all the work: it
// counted s.n items and, for an import, the container holds s.n items after it. Only
// the run itself is measured; a collection first, in this process and the emulator's,
// keeps the garbage of what ran before from being collected (and charged) during it.
func (s *suite) runOnce(ctx context.Context, w workload, im impl) (measurement, error) {
	container := readContainer
	if w.write {
		container = fmt.Sprintf("import%d", s.containers.Add(1))
		if err := s.createContainer(ctx, container); err != nil {
			return measurement{}, err
		}
		defer s.deleteContainer(context.Background(), container)
	}
	runtime.GC()
	if err := s.emu.collect(); err != nil {
		return measurement{}, err
	}
	emu0 := s.emu.cpuTime()
	cpu0, wall0 := testkit.ProcessCPU()+emu0, time.Now()
	// The run's goroutines carry its implementation's label, so that a profile of the
	// whole benchmark (-cpuprofile) can be cut to one of them: -tagfocus=impl=cosmosctl (and workload=Export).
	var got int
	var err error
	pprof.Do(ctx, pprof.Labels("impl", im.name, "workload", w.name), func(ctx context.Context) { got, err = im.run(ctx, container) })
	emu1 := s.emu.cpuTime()
	m := measurement{wall: time.Since(wall0), cpu: testkit.ProcessCPU() + emu1 - cpu0, emuCPU: emu1 - emu0}
	if err != nil {
		return m, fmt.Errorf("%s %s: %w", w.name, im.name, err)
	}
	if got != s.n {
		return m, fmt.Errorf("%s %s: %d items, want %d", w.name, im.name, got, s.n)
	}
	if w.write {
		stored, err := s.countItems(ctx, container)
		if err != nil {
			return m, fmt.Errorf("%s %s: counting the items written: %w", w.name, im.name, err)
		}
		if stored != s.n {
			return m, fmt.Errorf("%s %s: the container holds %d items after it, want %d", w.name, im.name, stored, s.n)
		}
	}
	return m, nil
}

// setupRequest is a signed request for the suite's own setup and checks (not measured).
func (s *suite) setupRequest(ctx context.Context, method, path string, header http.Header, body []byte) (*cosmos.Response, error) {
	t := &cosmos.Transport{HTTP: http.DefaultClient, Credential: s.key}
	return t.Do(ctx, s.endpoint, &cosmos.Request{Method: method, Path: path, Header: header, Body: body})
}

func (s *suite) createContainer(ctx context.Context, id string) error {
	body, _ := json.Marshal(map[string]any{"id": id, "partitionKey": map[string]any{"paths": []string{"/pk"}, "kind": "Hash"}})
	_, err := s.setupRequest(ctx, http.MethodPost, "/dbs/"+database+"/colls", nil, body)
	return err
}

func (s *suite) deleteContainer(ctx context.Context, id string) {
	s.setupRequest(ctx, http.MethodDelete, "/dbs/"+database+"/colls/"+id, nil, nil)
}

// countItems sums SELECT VALUE COUNT(1) over the container's ranges.
func (s *suite) countItems(ctx context.Context, container string) (int, error) {
	ranges, err := s.ranges(ctx, container, &http.Client{})
	if err != nil {
		return 0, err
	}
	total := 0
	for _, r := range ranges {
		h := http.Header{}
		h.Set(cosmos.HeaderIsQuery, "True")
		h.Set("Content-Type", "application/query+json")
		h.Set(cosmos.HeaderEnableCrossPartition, "True")
		h.Set(cosmos.HeaderPartitionKeyRangeID, r)
		resp, err := s.setupRequest(ctx, http.MethodPost, "/dbs/"+database+"/colls/"+container+"/docs", h, []byte(`{"query":"SELECT VALUE COUNT(1) FROM c"}`))
		if err != nil {
			return 0, err
		}
		var feed struct{ Documents []int }
		if err := json.Unmarshal(resp.Body, &feed); err != nil {
			return 0, err
		}
		for _, c := range feed.Documents {
			total += c
		}
	}
	return total, nil
}

// benchN is the items per workload: COSMOSCTL_BENCH_N, else 20,000.
func benchN(tb testing.TB) int {
	v := os.Getenv("COSMOSCTL_BENCH_N")
	if v == "" {
		return 20000
	}
	var n int
	if _, err := fmt.Sscan(v, &n); err != nil || n < 1 {
		tb.Fatalf("COSMOSCTL_BENCH_N=%q: want a positive number of items, e.g. 100000", v)
	}
	return n
}
