package cmd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
)

func TestBuildInfoPrefersLdflagsThenTheGoBuildInfo(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	cases := []struct {
		name                 string
		ldVersion, ldCommit  string
		ldDate               string
		bi                   *debug.BuildInfo
		version, commit, day string
	}{
		{"a release build has everything from ldflags", "1.4.0", "0123abc", "2026-03-01T10:00:00Z",
			&debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}}, "1.4.0", "0123abc", "2026-03-01T10:00:00Z"},
		{"go install of a tag has the module version", "", "", "",
			&debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0", "", ""},
		{"go install of a commit has it in the pseudo-version", "", "", "",
			&debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v0.0.0-20260102150405-abcdef123456"}},
			"v0.0.0-20260102150405-abcdef123456", "abcdef123456", "2026-01-02T15:04:05Z"},
		{"a pseudo-version after a tag", "", "", "",
			&debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v1.4.1-0.20260102150405-abcdef123456"}},
			"v1.4.1-0.20260102150405-abcdef123456", "abcdef123456", "2026-01-02T15:04:05Z"},
		{"go build in a checkout has the VCS stamp", "", "", "",
			&debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"},
				Settings: vcs("vcs.revision", "f00dfeed", "vcs.time", "2026-02-03T04:05:06Z", "vcs.modified", "true")},
			"dev", "f00dfeed-dirty", "2026-02-03T04:05:06Z"},
		{"no build info at all", "", "", "", nil, "dev", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := resolveBuildInfo(c.ldVersion, c.ldCommit, c.ldDate, c.bi)
			if got.Version != c.version || got.Commit != c.commit || got.Date != c.day || got.Platform != platform {
				t.Errorf("got %+v, want version %q commit %q date %q", got, c.version, c.commit, c.day)
			}
			if c.bi != nil && got.Go != c.bi.GoVersion {
				t.Errorf("go %q, want %q", got.Go, c.bi.GoVersion)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	isolate(t)
	r := cosmosctl(t, "", "version")
	if r.code != 0 || !strings.HasPrefix(r.out, "cosmosctl "+thisBuild().Version+"\n") || r.errOut != "" {
		t.Fatalf("version: %+v", r)
	}
	for _, want := range []string{"commit    ", "date      ", "go        " + runtime.Version(), "platform  " + runtime.GOOS + "/" + runtime.GOARCH} {
		if !strings.Contains(r.out, want) {
			t.Errorf("version output lacks %q:\n%s", want, r.out)
		}
	}

	r = cosmosctl(t, "", "version", "-o", "json")
	var got map[string]string
	if err := json.Unmarshal([]byte(r.out), &got); err != nil || r.code != 0 {
		t.Fatalf("version -o json: %v: %+v", err, r)
	}
	for _, k := range []string{"version", "commit", "date", "go", "platform"} {
		if _, ok := got[k]; !ok {
			t.Errorf("version -o json has no %q: %s", k, r.out)
		}
	}
	if len(got) != 5 || got["version"] != thisBuild().Version || got["platform"] != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("version -o json: %s", r.out)
	}

	t.Setenv("COSMOSCTL_OUTPUT", "json")
	if r := cosmosctl(t, "", "version"); !strings.HasPrefix(r.out, "{") {
		t.Errorf("COSMOSCTL_OUTPUT=json: %s", r.out)
	}
	if r := cosmosctl(t, "", "version", "-o", "yaml"); r.code != ExitUsage {
		t.Errorf("version -o yaml: code %d", r.code)
	}
}

func TestRootVersionFlagPrintsWhatTheVersionCommandPrints(t *testing.T) {
	isolate(t)
	want := cosmosctl(t, "", "version")
	got := cosmosctl(t, "", "--version")
	if got.code != 0 || got.out != want.out || got.errOut != "" {
		t.Fatalf("--version: %+v\nwant the output of version:\n%s", got, want.out)
	}
	if r := cosmosctl(t, "", "-v"); r.code != ExitUsage {
		t.Errorf("-v is no shorthand for --version: %+v", r)
	}
}

// userAgentServer answers every request with 401 and records the User-Agent headers
// it received: enough for a command to send its first request and fail.
func userAgentServer(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var agents []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.Header.Get("User-Agent"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"code":"Unauthorized","message":"test server"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), agents...)
	}
}

func TestRequestsCarryTheVersionAndPlatformInTheUserAgent(t *testing.T) {
	isolate(t)
	t.Setenv("COSMOSCTL_KEY", testAccountKey)
	srv, agents := userAgentServer(t)
	cosmosctl(t, "", "read", "order-1", "--pk", "tenant-7", "--endpoint", srv.URL)
	want := "cosmosctl/" + thisBuild().Version + " (" + runtime.GOOS + "/" + runtime.GOARCH + "; " + runtime.Version() + ")"
	got := agents()
	if len(got) == 0 {
		t.Fatal("the server received no request")
	}
	for _, ua := range got {
		if ua != want {
			t.Errorf("User-Agent %q, want %q", ua, want)
		}
	}
}

// TestABuildFromTheCheckoutReportsItsCommit builds the binary as a developer would, with
// the VCS stamp that `go build` embeds in a checkout (asked for explicitly: a machine may
// set GOFLAGS=-buildvcs=false), and checks --version, `version -o json` and the
// User-Agent that binary sends.
func TestABuildFromTheCheckoutReportsItsCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	// In a linked worktree (`git worktree add`) .git is a file pointing at the main
	// repository, and cmd/go recognises a git checkout by a .git directory only: it stamps
	// no VCS information there, so there is no commit to report.
	if fi, err := os.Stat(filepath.Join("..", ".git")); err == nil && !fi.IsDir() {
		t.Skip("a linked git worktree: go build stamps no VCS information there (cmd/go looks for a .git directory), so a build has no commit to report")
	}
	isolate(t)
	bin := filepath.Join(t.TempDir(), "cosmosctl")
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "github.com/cosmosctl/cosmosctl").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(args ...string) (int, string, string) {
		return runBinary(t, bin, os.Environ(), "", args...)
	}

	code, out, errOut := run("version", "-o", "json")
	var info buildInfo
	if err := json.Unmarshal([]byte(out), &info); err != nil || code != 0 {
		t.Fatalf("version -o json: %v: exit %d\n%s%s", err, code, out, errOut)
	}
	rev := strings.TrimSpace(string(head))
	if info.Commit != rev && info.Commit != rev+"-dirty" {
		t.Errorf("commit %q, want %s (with -dirty when the tree is modified)", info.Commit, rev)
	}
	if info.Date == "" || info.Version == "" || info.Version == "dev" {
		t.Errorf("a build from a checkout has a version and a commit time: %+v", info)
	}

	_, table, _ := run("version")
	if !strings.Contains(table, "commit    "+info.Commit+"\n") {
		t.Errorf("version does not show the commit:\n%s", table)
	}
	code, flag, _ := run("--version")
	if code != 0 || flag != table {
		t.Errorf("--version (exit %d):\n%s\nwant what version prints:\n%s", code, flag, table)
	}

	t.Setenv("COSMOSCTL_KEY", testAccountKey)
	srv, agents := userAgentServer(t)
	run("read", "order-1", "--pk", "tenant-7", "--endpoint", srv.URL)
	want := "cosmosctl/" + info.Version + " (" + info.Platform + "; " + info.Go + ")"
	if got := agents(); len(got) == 0 || got[0] != want {
		t.Errorf("User-Agent %q, want %q", got, want)
	}
}
