package cmd

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
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
	if r.code != 0 || !strings.HasPrefix(r.out, "cosmosctl "+version+"\n") || r.errOut != "" {
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
	if len(got) != 5 || got["version"] != version || got["platform"] != runtime.GOOS+"/"+runtime.GOARCH {
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
