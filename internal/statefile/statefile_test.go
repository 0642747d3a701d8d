package statefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	testKind     = "counter"
	testVersion  = 1
	testEndpoint = "https://acct.documents.azure.com:443/"
)

type counter struct {
	N       int      `json:"n"`
	Writers []string `json:"writers,omitempty"`
}

func testPath(t *testing.T) string {
	t.Helper()
	return AccountFile(t.TempDir(), testEndpoint, "counter")
}

func set(n int) func(counter, bool) (counter, error) {
	return func(counter, bool) (counter, error) { return counter{N: n}, nil }
}

func increment(c counter, _ bool) (counter, error) {
	c.N++
	return c, nil
}

func TestRoundTrip(t *testing.T) {
	path := testPath(t)
	want := counter{N: 7, Writers: []string{"a", "b"}}
	if err := Update(path, testKind, testVersion, testEndpoint, func(cur counter, loaded bool) (counter, error) {
		if loaded || cur.N != 0 {
			t.Errorf("first Update got %+v, loaded=%v; want the zero value, not loaded", cur, loaded)
		}
		return want, nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := Load[counter](path, testKind, testVersion, testEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Load = %+v, want %+v", got, want)
	}
	// The same account spelled differently reads the same file.
	if _, err := Load[counter](path, testKind, testVersion, "HTTPS://ACCT.documents.azure.com"); err != nil {
		t.Errorf("Load with the endpoint in another spelling: %v", err)
	}
	if err := Update(path, testKind, testVersion, testEndpoint, func(cur counter, loaded bool) (counter, error) {
		if !loaded || cur.N != 7 {
			t.Errorf("second Update got %+v, loaded=%v; want N=7, loaded", cur, loaded)
		}
		return cur, nil
	}); err != nil {
		t.Fatal(err)
	}

	var env map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"kind", "version", "endpoint", "written_at", "data"} {
		if _, ok := env[field]; !ok {
			t.Errorf("envelope has no %q field: %s", field, b)
		}
	}
	if env["endpoint"] != "https://acct.documents.azure.com" {
		t.Errorf("envelope endpoint = %v, want the normalised endpoint", env["endpoint"])
	}
}

func TestMissingFileIsZeroAndNoError(t *testing.T) {
	got, err := Load[counter](testPath(t), testKind, testVersion, testEndpoint)
	if err != nil || got.N != 0 || got.Writers != nil {
		t.Errorf("Load of a missing file = %+v, %v; want the zero value and nil", got, err)
	}
}

func TestUnusableFilesAreIgnoredAndReplaced(t *testing.T) {
	valid := func(kind string, version int, endpoint string) string {
		return fmt.Sprintf(`{"kind":%q,"version":%d,"endpoint":%q,"written_at":"2025-01-02T03:04:05Z","data":{"n":41}}`,
			kind, version, endpoint)
	}
	good := valid(testKind, testVersion, testEndpoint)
	for _, tc := range []struct {
		name, content, problem string
	}{
		{"not JSON", "this is not json", "not valid JSON"},
		{"truncated", good[:len(good)/2], "not valid JSON"},
		{"empty", "", "empty"},
		{"another kind of state", valid("topology", testVersion, testEndpoint), `holds "topology" state, not "counter"`},
		{"another version of the format", valid(testKind, 2, testEndpoint), "is version 2 of the counter format, this cosmosctl reads version 1"},
		{"another account", valid(testKind, testVersion, "https://other.documents.azure.com"), "was written for account https://other.documents.azure.com"},
		{"data of another shape", strings.Replace(good, `{"n":41}`, `{"n":"many"}`, 1), "data does not match the counter format"},
		{"no data", strings.Replace(good, `,"data":{"n":41}`, "", 1), "has no data"},
		{"too large", `{"kind":"` + strings.Repeat("x", MaxSize) + `"}`, "larger than 8 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := testPath(t)
			os.MkdirAll(filepath.Dir(path), 0o700)
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := Load[counter](path, testKind, testVersion, testEndpoint)
			var ig *Ignored
			if !errors.As(err, &ig) {
				t.Fatalf("Load = %+v, %v; want an *Ignored error", got, err)
			}
			if got.N != 0 {
				t.Errorf("Load returned %+v with the error; want the zero value", got)
			}
			msg := err.Error()
			if !strings.Contains(msg, path) || !strings.Contains(msg, tc.problem) || !strings.HasSuffix(msg, "it will be replaced") || strings.Contains(msg, "\n") {
				t.Errorf("error = %q; want one line naming %s, the problem %q, and that it will be replaced", msg, path, tc.problem)
			}

			if err := Update(path, testKind, testVersion, testEndpoint, func(cur counter, loaded bool) (counter, error) {
				if loaded || cur.N != 0 {
					t.Errorf("Update over an unusable file got %+v, loaded=%v; want zero, not loaded", cur, loaded)
				}
				return counter{N: 1}, nil
			}); err != nil {
				t.Fatal(err)
			}
			if got, err := Load[counter](path, testKind, testVersion, testEndpoint); err != nil || got.N != 1 {
				t.Errorf("after Update, Load = %+v, %v; want N=1 and no error", got, err)
			}
		})
	}
}

func TestFailingUpdateLeavesTheFile(t *testing.T) {
	path := testPath(t)
	if err := Update(path, testKind, testVersion, testEndpoint, set(3)); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := Update(path, testKind, testVersion, testEndpoint, func(counter, bool) (counter, error) {
		return counter{N: 99}, boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want fn's error", err)
	}
	if got, _ := Load[counter](path, testKind, testVersion, testEndpoint); got.N != 3 {
		t.Errorf("after a failed Update, N = %d, want 3", got.N)
	}
	assertNoTempFiles(t, filepath.Dir(path))
}

func TestPanicInUpdateReleasesTheLock(t *testing.T) {
	path := testPath(t)
	func() {
		defer func() { recover() }()
		Update(path, testKind, testVersion, testEndpoint, func(counter, bool) (counter, error) { panic("boom") })
	}()
	shortenLockWait(t, 200*time.Millisecond)
	if err := Update(path, testKind, testVersion, testEndpoint, set(1)); err != nil {
		t.Fatalf("Update after a panicking one: %v", err)
	}
}

func TestHeldLockTimesOutNamingTheLockFile(t *testing.T) {
	path := testPath(t)
	os.MkdirAll(filepath.Dir(path), 0o700)
	unlock, err := lock(path+".lock", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	shortenLockWait(t, 100*time.Millisecond)
	start := time.Now()
	err = Update(path, testKind, testVersion, testEndpoint, set(1))
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path+".lock") {
		t.Fatalf("Update while the lock is held = %v; want ErrLocked naming %s.lock", err, path)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Errorf("Update waited %s for a 100ms bound", waited)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Update wrote the state file without the lock (stat: %v)", err)
	}
}

func TestConcurrentGoroutinesLoseNoIncrement(t *testing.T) {
	path := testPath(t)
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	go func() { // the file parses at every moment
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := Load[counter](path, testKind, testVersion, testEndpoint); err != nil {
				t.Errorf("Load during updates: %v", err)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for range 50 {
				if err := Update(path, testKind, testVersion, testEndpoint, increment); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-readerDone
	if got, err := Load[counter](path, testKind, testVersion, testEndpoint); err != nil || got.N != 100 {
		t.Errorf("after 2×50 increments, Load = %+v, %v; want N=100", got, err)
	}
	assertNoTempFiles(t, filepath.Dir(path))
}

// TestHelperProcess is not a test: TestConcurrentProcessesLoseNoIncrement runs the test
// binary again with STATEFILE_HELPER_PATH set, and this is what those processes do.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv("STATEFILE_HELPER_PATH")
	if path == "" {
		t.Skip("helper process for TestConcurrentProcessesLoseNoIncrement")
	}
	n, _ := strconv.Atoi(os.Getenv("STATEFILE_HELPER_COUNT"))
	for i := range n {
		if err := Update(path, testKind, testVersion, testEndpoint, increment); err != nil {
			fmt.Fprintf(os.Stderr, "increment %d: %v\n", i, err)
			os.Exit(1)
		}
		if _, err := Load[counter](path, testKind, testVersion, testEndpoint); err != nil {
			fmt.Fprintf(os.Stderr, "load after increment %d: %v\n", i, err)
			os.Exit(1)
		}
	}
	os.Exit(0)
}

func TestConcurrentProcessesLoseNoIncrement(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := testPath(t)
	var cmds []*exec.Cmd
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), "STATEFILE_HELPER_PATH="+path, "STATEFILE_HELPER_COUNT=50")
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("helper output:\n%s", out.String())
			}
		})
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper process: %v", err)
		}
	}
	if got, err := Load[counter](path, testKind, testVersion, testEndpoint); err != nil || got.N != 100 {
		t.Errorf("after 2 processes × 50 increments, Load = %+v, %v; want N=100", got, err)
	}
	assertNoTempFiles(t, filepath.Dir(path))
}

func TestPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no unix permissions")
	}
	root := t.TempDir()
	path := AccountFile(filepath.Join(root, "state"), testEndpoint, "counter")
	if err := Update(path, testKind, testVersion, testEndpoint, set(1)); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{
		path:                         0o600,
		path + ".lock":               0o600,
		filepath.Dir(path):           0o700 | os.ModeDir,
		filepath.Join(root, "state"): 0o700 | os.ModeDir,
	} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode(); got != want {
			t.Errorf("%s has mode %v, want %v", p, got, want)
		}
	}
}

func TestAccountFile(t *testing.T) {
	dir := filepath.Join("base", "state")
	same := []string{
		"https://X.documents.azure.com:443/",
		"https://x.documents.azure.com:443",
		"https://x.documents.azure.com",
		"  HTTPS://x.Documents.Azure.com/ ",
	}
	want := AccountFile(dir, same[0], "health")
	for _, ep := range same[1:] {
		if got := AccountFile(dir, ep, "health"); got != want {
			t.Errorf("AccountFile(%q) = %s, want %s (the same account)", ep, got, want)
		}
	}
	if rel, _ := filepath.Rel(dir, want); !strings.HasPrefix(filepath.ToSlash(rel), "x.documents.azure.com-") || !strings.HasSuffix(rel, "health.json") {
		t.Errorf("AccountFile = %s, want base/state/x.documents.azure.com-<hash>/health.json", want)
	}
	seen := map[string]string{filepath.Dir(want): same[0]}
	for _, other := range []string{"https://y.documents.azure.com", "http://x.documents.azure.com", "https://127.0.0.1:8081", "https://127.0.0.1:8082"} {
		d := filepath.Dir(AccountFile(dir, other, "health"))
		if prev, dup := seen[d]; dup {
			t.Errorf("%s and %s share the directory %s", prev, other, d)
		}
		seen[d] = other
	}
	if got := filepath.Base(filepath.Dir(AccountFile(dir, "https://127.0.0.1:8081/", "health"))); !strings.HasPrefix(got, "127.0.0.1-8081-") {
		t.Errorf("emulator account directory = %s, want 127.0.0.1-8081-<hash> (no ':' for Windows)", got)
	}
	if got := AccountFile(dir, testEndpoint, "../../etc/passwd"); filepath.Dir(filepath.Dir(got)) != dir {
		t.Errorf("a name with separators escapes the account directory: %s", got)
	}
}

func TestDir(t *testing.T) {
	t.Setenv(EnvDir, "/somewhere/else")
	if got, err := Dir(); err != nil || got != "/somewhere/else" {
		t.Errorf("Dir with %s set = %q, %v", EnvDir, got, err)
	}
	t.Setenv(EnvDir, "")
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skip("no user cache directory here")
	}
	if got, err := Dir(); err != nil || got != filepath.Join(cache, "cosmosctl", "state") {
		t.Errorf("Dir = %q, %v; want %s", got, err, filepath.Join(cache, "cosmosctl", "state"))
	}
}

func shortenLockWait(t *testing.T, d time.Duration) {
	old := lockWait
	lockWait = d
	t.Cleanup(func() { lockWait = old })
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}
