package config

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestSetCreatesThePrivateFileAndDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "dir", "config.toml")
	if err := Set(path, "prod", "endpoint", "https://a.documents.azure.com:443/"); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(path)
		di, _ := os.Stat(filepath.Dir(path))
		if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
			t.Fatalf("file %v, directory %v; want 0600 and 0700", fi.Mode().Perm(), di.Mode().Perm())
		}
	}
	f, err := Load(path)
	if err != nil || f.Profiles["prod"].Endpoint != "https://a.documents.azure.com:443/" {
		t.Fatalf("%+v, %v", f, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary file left behind: %v", entries)
	}
}

func TestSetKeepsOtherProfilesAndSettings(t *testing.T) {
	path := profileConfig(t)
	steps := []struct{ profile, key, value string }{
		{"prod", "hedging.threshold", "250ms"},
		{"prod", "preferred_regions", "West US, North Europe"},
		{"prod", "hedging.max_regions", "2"},
		{"prod", "write_retries.policy", "WITH_RETRIES"},
		{"prod", "output", "TABLE"},
		{"prod", "container", ""}, // removes it
		{"staging", "database", "stage"},
	}
	for _, s := range steps {
		if err := Set(path, s.profile, s.key, s.value); err != nil {
			t.Fatalf("Set %s %s: %v", s.key, s.value, err)
		}
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p := f.Profiles["prod"]
	if p.Hedging.Threshold != 250*time.Millisecond || p.Hedging.Step != 100*time.Millisecond || p.Hedging.MaxRegions != 2 ||
		p.WriteRetries.Policy != WriteRetriesOn || p.Output != OutputTable || p.IsSet("container") || p.Database != "app" ||
		strings.Join(p.PreferredRegions, "|") != "West US|North Europe" || p.KeyFile != "prod.key" {
		t.Fatalf("prod after Set: %+v", p)
	}
	if f.DefaultProfile != "prod" || f.Profiles["dev"].ConnectionString == "" || f.Profiles["staging"].Database != "stage" {
		t.Fatalf("file after Set: %+v", f)
	}
}

func TestSetOneCredentialRemovesTheOthers(t *testing.T) {
	path := profileConfig(t)
	if err := Set(path, "prod", "key", emulatorKey); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path) // would fail with both key and key_file
	if err != nil {
		t.Fatal(err)
	}
	if p := f.Profiles["prod"]; p.Key.Reveal() != emulatorKey || p.IsSet("key_file") {
		t.Fatalf("prod: %+v", p)
	}
}

func TestSetDefaultProfile(t *testing.T) {
	path := profileConfig(t)
	if err := Set(path, "", "default_profile", "dev"); err != nil {
		t.Fatal(err)
	}
	if d, err := ReadDefaultProfile(path); err != nil || d != "dev" {
		t.Fatalf("default %q, %v", d, err)
	}
	err := Set(path, "", "default_profile", "nope")
	if err == nil || !strings.Contains(err.Error(), "dev, prod") {
		t.Fatalf("unknown default: %v", err)
	}
}

func TestSetRejectsBadInput(t *testing.T) {
	path := profileConfig(t)
	before, _ := os.ReadFile(path)
	cases := []struct {
		name, profile, key, value, want string
	}{
		{"unknown key lists the valid ones", "prod", "endpont", "x", "valid settings are endpoint, key, key_file"},
		{"negative duration", "prod", "e2e_timeout", "-1s", "e2e_timeout must not be negative"},
		{"unparsable duration", "prod", "hedging.step", "soon", "hedging.step must be a duration"},
		{"bad output", "prod", "output", "yaml", "output must be table, json, ndjson or tsv"},
		{"bad hedging mode", "prod", "hedging.mode", "always", "hedging.mode must be"},
		{"bad policy", "prod", "write_retries.policy", "maybe", "write_retries.policy must be"},
		{"bad budget", "prod", "hedging.budget", "150%", "hedging.budget must be a percentage"},
		{"bad max regions", "prod", "hedging.max_regions", "many", "hedging.max_regions must be a whole number"},
		{"bad endpoint", "prod", "endpoint", "myaccount", "endpoint must be a URL"},
		{"bad key", "prod", "key", "secret*value", "key is not valid base64"},
		{"bad connection string", "prod", "connection_string", "AccountKey=secret*value", "connection_string has no AccountEndpoint"},
		{"bad profile name", "my prod", "database", "x", "profile name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Set(path, tc.profile, tc.key, tc.value)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "secret*value") {
				t.Fatalf("error quotes the secret: %v", err)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Fatal("file changed by a rejected Set")
			}
		})
	}
}

func TestSetRefusesToRewriteAMalformedFile(t *testing.T) {
	path := writeConfig(t, "[profiles.prod]\nendpoint = \n")
	err := Set(path, "prod", "database", "x")
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v", err)
	}
}

func TestSetCanRepairAnInvalidValue(t *testing.T) {
	path := writeConfig(t, "default_profile = \"prod\"\n[profiles.prod]\ne2e_timeout = \"-1s\"\n")
	if _, err := Load(path); err == nil {
		t.Fatal("Load accepted a negative duration")
	}
	if d, err := ReadDefaultProfile(path); err != nil || d != "prod" {
		t.Fatalf("ReadDefaultProfile: %q, %v", d, err)
	}
	if err := Set(path, "prod", "e2e_timeout", "1s"); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}
}

func TestSetFollowsASymlinkedConfig(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles.toml")
	link := filepath.Join(dir, "config.toml")
	_ = os.WriteFile(target, []byte("[profiles.a]\n"), 0o600)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := Set(link, "a", "database", "db"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a file")
	}
	if data, _ := os.ReadFile(target); !strings.Contains(string(data), `database = "db"`) {
		t.Fatalf("target holds %q", data)
	}
}

func TestSetWritesAFileAPersonCanRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	for _, s := range []struct{ profile, key, value string }{
		{"prod", "endpoint", "https://a.documents.azure.com:443/"},
		{"prod", "preferred_regions", "East US,West US"},
		{"prod", "hedging.threshold", "300ms"},
		{"dev", "database", "app"},
		{"", "default_profile", "prod"},
	} {
		if err := Set(path, s.profile, s.key, s.value); err != nil {
			t.Fatal(err)
		}
	}
	want := `default_profile = "prod"

[profiles.dev]
database = "app"

[profiles.prod]
endpoint = "https://a.documents.azure.com:443/"
preferred_regions = ["East US", "West US"]

[profiles.prod.hedging]
threshold = "300ms"
`
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
}

func TestSetEmptyValueRemovesTheSettingAndNoEmptyTablesStay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	for _, s := range [][3]string{
		{"p", "endpoint", "https://a.documents.azure.com:443/"},
		{"p", "hedging.threshold", "300ms"},
		{"p", "hedging.step", "50ms"},
		{"p", "write_retries.policy", "retries"},
		{"q", "database", "db"},
	} {
		if err := Set(path, s[0], s[1], s[2]); err != nil {
			t.Fatal(err)
		}
	}
	file := func() string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	steps := []struct {
		name      string
		profile   string
		key       string
		has, hasn []string // what the file has and has not afterwards
	}{
		{"one of two hedging settings goes, the table stays", "p", "hedging.step", []string{"[profiles.p.hedging]", "threshold"}, []string{"step"}},
		{"the last hedging setting takes its table with it", "p", "hedging.threshold", nil, []string{"[profiles.p.hedging]", "threshold"}},
		{"so does the last write_retries setting", "p", "write_retries.policy", nil, []string{"write_retries"}},
		{"the profile's last setting leaves the profile, empty", "p", "endpoint", []string{"[profiles.p]\n", "[profiles.q]"}, []string{"endpoint", "[profiles.p."}},
		{"removing what is not set changes nothing", "q", "hedging.step", []string{"[profiles.q]\ndatabase"}, []string{"[profiles.q.hedging]"}},
	}
	for _, s := range steps {
		if err := Set(path, s.profile, s.key, ""); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got := file()
		for _, w := range s.has {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the file lacks %q:\n%s", s.name, w, got)
			}
		}
		for _, w := range s.hasn {
			if strings.Contains(got, w) {
				t.Errorf("%s: the file still has %q:\n%s", s.name, w, got)
			}
		}
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Profiles["p"]; !ok {
		t.Errorf("the emptied profile p is gone: %+v", f.Profiles)
	}
	// Removing from a profile that does not exist does not create it.
	err = Set(path, "nosuch", "endpoint", "")
	if err == nil || !strings.Contains(err.Error(), `no profile "nosuch"`) || strings.Contains(file(), "nosuch") {
		t.Errorf("removing from a missing profile: %v\n%s", err, file())
	}
}

func TestSetRemovesEmptyTablesLeftByEarlierVersions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte("[profiles.p]\nendpoint = \"https://a.documents.azure.com:443/\"\ndatabase = \"db\"\n\n[profiles.p.hedging]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Set(path, "p", "database", ""); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if want := "[profiles.p]\nendpoint = \"https://a.documents.azure.com:443/\"\n"; string(data) != want {
		t.Errorf("file %q, want %q", data, want)
	}
}
