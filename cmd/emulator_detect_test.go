package cmd

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
)

// standaloneEmulator starts an emulator as `cosmosctl emulator` would serve it and
// points COSMOSCTL_ENDPOINT, and nothing else, at it.
func standaloneEmulator(t *testing.T, cfg emulator.Config) *emulator.Server {
	t.Helper()
	srv, err := emulator.Start(cfg, emulator.Options{Version: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	isolate(t)
	t.Setenv("COSMOSCTL_ENDPOINT", srv.Endpoint())
	return srv
}

// readDirect reads an item from the emulator with the SDKs' request, bypassing
// cosmosctl's settings, and returns the status.
func readDirect(t *testing.T, srv *emulator.Server, db, coll, id, pk string) int {
	t.Helper()
	mk, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: mk}
	req := &cosmos.Request{Method: "GET", Path: "/dbs/" + db + "/colls/" + coll + "/docs/" + id, Header: http.Header{}}
	req.Header.Set(cosmos.HeaderPartitionKey, `["`+pk+`"]`)
	resp, err := tr.Do(context.Background(), srv.Endpoint(), req)
	if resp == nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

func appItems() emulator.Config {
	return emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "app", Containers: []emulator.ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}
}

func noticesIn(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "is a cosmosctl emulator") {
			out = append(out, l)
		}
	}
	return out
}

func TestAnEndpointAloneIsEnoughForACosmosctlEmulator(t *testing.T) {
	srv := standaloneEmulator(t, appItems())
	want := "cosmosctl: " + srv.Endpoint() + " is a cosmosctl emulator; using what it announces: its well-known key, database app, container items"

	r := cosmosctl(t, `{"id":"o1","pk":"t1"}`, "create", "-f", "-")
	if r.code != 0 {
		t.Fatalf("create with only an endpoint: exit %d: %s", r.code, r.errOut)
	}
	if n := noticesIn(r.errOut); len(n) != 1 || n[0] != want {
		t.Errorf("create: notices %q, want once %q", n, want)
	}
	if strings.Contains(r.errOut, "embedded emulator") {
		t.Error("an endpoint is configured: no embedded emulator may start")
	}
	r = cosmosctl(t, "", "read", "o1", "--pk", "t1", "-o", "json")
	var res struct {
		Item struct{ ID string } `json:"item"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.out), &res) != nil || res.Item.ID != "o1" {
		t.Fatalf("read: exit %d: %s %s", r.code, r.out, r.errOut)
	}
	// The same script (these commands' parent process) was told already.
	if n := noticesIn(r.errOut); len(n) != 0 {
		t.Errorf("read: notices %q, want none: the same notice is printed once per script run", n)
	}
	// The item is in the standalone emulator's app/items, where an SDK would see it.
	if code := readDirect(t, srv, "app", "items", "o1", "t1"); code != 200 {
		t.Errorf("the item is not in app/items of the standalone emulator: %d", code)
	}
	// regions needs no container, but uses the one announced (each region's read goes
	// there): the same announcement, so the same script is not told again.
	r = cosmosctl(t, "", "regions", "--no-latency")
	if n := noticesIn(r.errOut); r.code != 0 || len(n) != 0 {
		t.Errorf("regions: exit %d, notices %q, want none: the same notice is printed once per script run", r.code, n)
	}
}

// everyNotice makes every command print its notices, as when its parent process tells
// no script run apart: for tests of what a notice says rather than of how often.
func everyNotice(t *testing.T) {
	old := scriptRun
	scriptRun = func() (string, bool) { return "", false }
	t.Cleanup(func() { scriptRun = old })
}

func TestAnythingConfiguredWinsOverTheAnnouncement(t *testing.T) {
	everyNotice(t)
	cfg := appItems()
	cfg.Databases = append(cfg.Databases, emulator.DatabaseConfig{ID: "shop", Containers: []emulator.ContainerConfig{{ID: "orders", PartitionKey: []string{"/pk"}}}})
	srv := standaloneEmulator(t, cfg)

	// A database flag: its only container is taken, and the key.
	r := cosmosctl(t, `{"id":"s1","pk":"t1"}`, "create", "-f", "-", "--database", "shop")
	if n := noticesIn(r.errOut); r.code != 0 || len(n) != 1 || !strings.HasSuffix(n[0], "its well-known key, container orders") {
		t.Fatalf("--database shop: exit %d, notices %q: %s", r.code, n, r.errOut)
	}
	if code := readDirect(t, srv, "shop", "orders", "s1", "t1"); code != 200 {
		t.Fatalf("the item is not in shop/orders: %d", code)
	}

	// A key, database and container from the environment: nothing asked for, nothing said.
	t.Setenv("COSMOSCTL_KEY", cosmos.EmulatorKey)
	t.Setenv("COSMOSCTL_DATABASE", "shop")
	t.Setenv("COSMOSCTL_CONTAINER", "orders")
	if r := cosmosctl(t, "", "read", "s1", "--pk", "t1"); r.code != 0 || len(noticesIn(r.errOut)) != 0 {
		t.Errorf("everything configured: exit %d, stderr %q", r.code, r.errOut)
	}

	// A profile's database wins too; the key and the container it lacks are announced.
	isolatedConfig(t, "default_profile = \"rehearsal\"\n[profiles.rehearsal]\ndatabase = \"shop\"\n")
	t.Setenv("COSMOSCTL_ENDPOINT", srv.Endpoint())
	r = cosmosctl(t, "", "read", "s1", "--pk", "t1")
	if n := noticesIn(r.errOut); r.code != 0 || len(n) != 1 || !strings.HasSuffix(n[0], "using what it announces: its well-known key, container orders") {
		t.Errorf("profile database: exit %d, notices %q: %s", r.code, n, r.errOut)
	}

	// Two databases and no choice: a usage error that lists them, not a guess. (app is
	// the embedded emulator's default, so it is taken when present: remove it.)
	if resp := newRaw(t, srv)("DELETE", "/dbs/app", ""); resp.StatusCode != 204 {
		t.Fatalf("deleting app: %d", resp.StatusCode)
	}
	if resp := newRaw(t, srv)("POST", "/dbs", `{"id":"other"}`); resp.StatusCode != 201 {
		t.Fatalf("creating other: %d", resp.StatusCode)
	}
	isolatedConfig(t, "")
	t.Setenv("COSMOSCTL_ENDPOINT", srv.Endpoint())
	r = cosmosctl(t, "", "read", "s1", "--pk", "t1")
	if r.code != ExitUsage || !strings.Contains(r.errOut, "no database: the cosmosctl emulator at "+srv.Endpoint()+" has shop, other; choose one with --database") {
		t.Errorf("two databases: exit %d: %s", r.code, r.errOut)
	}
}

// ownKeyFile writes a key of the emulator's own to a file, as `cosmosctl emulator
// --key-file` is given one.
func ownKeyFile(t *testing.T) (key, path string) {
	t.Helper()
	key = testAccountKey
	path = filepath.Join(t.TempDir(), "emulator.key")
	if err := os.WriteFile(path, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	return key, path
}

func TestAnEmulatorWithAKeyOfItsOwnNeedsThatKey(t *testing.T) {
	key, keyFile := ownKeyFile(t)
	cfg := appItems()
	cfg.Key = key
	standaloneEmulator(t, cfg)

	r := cosmosctl(t, "", "read", "o1", "--pk", "t1")
	if r.code != ExitUsage || !strings.Contains(r.errOut, "is a cosmosctl emulator with a key of its own") {
		t.Fatalf("no key: exit %d: %s", r.code, r.errOut)
	}
	if strings.Contains(r.errOut+r.out, key) {
		t.Fatal("the emulator's own key was printed")
	}
	// Given the key, the signed hello lists the databases, so they are still announced.
	r = cosmosctl(t, `{"id":"o1","pk":"t1"}`, "create", "-f", "-", "--key-file", keyFile)
	if n := noticesIn(r.errOut); r.code != 0 || len(n) != 1 || !strings.HasSuffix(n[0], "using what it announces: database app, container items") {
		t.Errorf("with --key-file: exit %d, notices %q: %s", r.code, n, r.errOut)
	}
}

// fakeAccount is a real account as far as the emulator question goes: it answers every
// request 401, and records the paths it was asked.
func fakeAccount(t *testing.T) (url string, paths func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"code":"Unauthorized","message":"The input authorization token can't serve the request."}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

func TestARealAccountIsNotMistakenForAnEmulator(t *testing.T) {
	isolate(t)
	url, paths := fakeAccount(t)
	t.Setenv("COSMOSCTL_ENDPOINT", url)

	// No key: asked once, then today's error.
	r := cosmosctl(t, "", "read", "o1", "--pk", "t1")
	if r.code != ExitUsage || !strings.Contains(r.errOut, "no key for "+url+": set COSMOSCTL_KEY") || len(noticesIn(r.errOut)) != 0 {
		t.Fatalf("no key: exit %d: %s", r.code, r.errOut)
	}
	if got := paths(); !slices.Equal(got, []string{emulator.HelloPath}) {
		t.Errorf("asked %q, want only the hello", got)
	}

	// A key but no database: the account is asked, and refuses the key, as before.
	t.Setenv("COSMOSCTL_KEY", testAccountKey)
	r = cosmosctl(t, "", "read", "o1", "--pk", "t1")
	if r.code != ExitAuth || len(noticesIn(r.errOut)) != 0 {
		t.Errorf("key, no database: exit %d: %s", r.code, r.errOut)
	}

	// Everything configured: the account is never asked what it is.
	t.Setenv("COSMOSCTL_DATABASE", "app")
	t.Setenv("COSMOSCTL_CONTAINER", "items")
	before := len(paths())
	cosmosctl(t, "", "read", "o1", "--pk", "t1")
	cosmosctl(t, "", "regions", "--no-latency")
	for _, p := range paths()[before:] {
		if p == emulator.HelloPath {
			t.Fatal("with key, database and container configured the endpoint was asked for a hello")
		}
	}
}

func TestTheAnnouncementIsWaitedForNoLongerThanTheAccountLookup(t *testing.T) {
	isolate(t)
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); hung.Close() })
	t.Setenv("COSMOSCTL_ENDPOINT", hung.URL)
	start := time.Now()
	r := cosmosctl(t, "", "read", "o1", "--pk", "t1", "--attempt-timeout", "200ms")
	if r.code != ExitUsage || !strings.Contains(r.errOut, "no key for") {
		t.Fatalf("hung endpoint, no key: exit %d: %s", r.code, r.errOut)
	}
	// 200 ms asked for; generous for a loaded machine, and far below the 2 s default.
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("the hello to a hung endpoint held the command %s", d)
	}
}

func TestConfigShowSaysWhatTheEmulatorAnnounces(t *testing.T) {
	srv := standaloneEmulator(t, appItems())
	r := cosmosctl(t, "", "config", "show", "-o", "json")
	var shown struct {
		Settings map[string]struct {
			Value  any    `json:"value"`
			Source string `json:"source"`
		} `json:"settings"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.out), &shown) != nil {
		t.Fatalf("config show: exit %d: %s %s", r.code, r.out, r.errOut)
	}
	by := "announced by the cosmosctl emulator at " + srv.Endpoint()
	for name, want := range map[string]string{"database": "app", "container": "items"} {
		if s := shown.Settings[name]; s.Value != want || s.Source != by {
			t.Errorf("%s: %v from %q, want %s from %q", name, s.Value, s.Source, want, by)
		}
	}
	if s := shown.Settings["key"]; s.Value != config.Mask(cosmos.EmulatorKey) || !strings.HasSuffix(s.Source, by) {
		t.Errorf("key: %v from %q", s.Value, s.Source)
	}
	if strings.Contains(r.errOut, "no account key is configured") {
		t.Errorf("config show says there is no key: %s", r.errOut)
	}
}

func TestRegionCompletionTakesTheAnnouncedKey(t *testing.T) {
	standaloneEmulator(t, appItems())
	isolateCache(t)
	if got, _ := complete(t, "read", "--region", ""); !slices.Equal(got, emulator.DefaultRegions) {
		t.Fatalf("--region with only the endpoint of an emulator: %q, want %q", got, emulator.DefaultRegions)
	}
}

func TestInterruptedWhileAskingTheEndpointExits130(t *testing.T) {
	isolate(t)
	asked := make(chan struct{}, 1)
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	t.Cleanup(hung.Close)
	t.Setenv("COSMOSCTL_ENDPOINT", hung.URL)
	io, _, errOut := testIO()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- Run(ctx, io, []string{"read", "o1", "--pk", "t1"}) }()
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the endpoint was never asked")
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitInterrupted {
			t.Fatalf("exit %d, want %d: %s", code, ExitInterrupted, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not end when interrupted")
	}
}
