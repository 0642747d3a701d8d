package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

func TestReadSecretFileRefusesWhatIsNotASmallRegularFile(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	if err := os.WriteFile(key, []byte(cosmos.EmulatorKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	large := filepath.Join(dir, "large")
	if err := os.WriteFile(large, make([]byte, MaxSecretFileBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, want string
	}{
		{"a key file is read", key, ""},
		{"a file over the bound is refused", large, "larger than 4 KiB"},
		{"a directory is refused", dir, "is a directory, not a regular file"},
		{"a missing file is reported as missing", filepath.Join(dir, "nope"), "no such file"},
	}
	if runtime.GOOS != "windows" {
		// Reading it to the end would never finish.
		cases = append(cases, struct{ name, path, want string }{"/dev/zero is refused", "/dev/zero", "is a character device, not a regular file"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data, _, err := ReadSecretFile(tc.path)
			if tc.want == "" {
				if err != nil || strings.TrimSpace(string(data)) != cosmos.EmulatorKey {
					t.Fatalf("read %q, %v", data, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line containing %q", err, tc.want)
			}
		})
	}
	if _, _, err := ReadSecretFile(filepath.Join(dir, "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestKeyFileReadableByOthersWarnsAsSshDoes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permission bits do not say who can read a file on Windows")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		mode fs.FileMode
		warn bool
	}{{0o600, false}, {0o400, false}, {0o640, true}, {0o644, true}, {0o604, true}} {
		path := filepath.Join(dir, "key-"+tc.mode.String())
		if err := os.WriteFile(path, []byte(cosmos.EmulatorKey), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tc.mode); err != nil {
			t.Fatal(err)
		}
		flag := path
		s, err := Resolve(filepath.Join(dir, "none.toml"), Flags{KeyFile: &flag}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range s.Warnings {
			if strings.Contains(w, "key file") {
				got = append(got, w)
			}
		}
		switch {
		case !tc.warn && len(got) != 0:
			t.Errorf("mode %v: warnings %q, want none", tc.mode, got)
		case tc.warn && (len(got) != 1 || !strings.Contains(got[0], path) || !strings.HasSuffix(got[0], "chmod 600 "+path)):
			t.Errorf("mode %v: warnings %q, want one naming %s and chmod 600", tc.mode, got, path)
		}
	}
}
