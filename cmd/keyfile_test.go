package cmd

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
)

// writeKeyFile writes the well-known key to a file with mode perm.
func writeKeyFile(t *testing.T, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte(cosmos.EmulatorKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestKeyFileReadableByOthersWarnsOnceOnStderr(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permission bits do not say who can read a file on Windows")
	}
	srv, err := emulator.Start(emulator.Config{}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	open, private := writeKeyFile(t, 0o644), writeKeyFile(t, 0o600)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"emulator control", []string{"emulator", "status", "--endpoint", srv.Endpoint()}},
		{"the CLI", []string{"config", "show", "--endpoint", srv.Endpoint()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{open, private} {
				io, _, errOut := testIO()
				if code := Run(context.Background(), io, append(tc.args, "--key-file", path)); code != ExitOK {
					t.Fatalf("%v with --key-file %s → exit %d: %s", tc.args, path, code, errOut)
				}
				var warnings []string
				for _, l := range strings.Split(errOut.String(), "\n") {
					if strings.Contains(l, "key file") {
						warnings = append(warnings, l)
					}
				}
				want := 0
				if path == open {
					want = 1
				}
				if len(warnings) != want {
					t.Fatalf("--key-file with mode %v: stderr %q, want %d key file warning(s)", map[string]string{open: "0644", private: "0600"}[path], errOut, want)
				}
				if want == 1 && (!strings.HasPrefix(warnings[0], "warning: key file "+path+" ") || !strings.HasSuffix(warnings[0], "chmod 600 "+path)) {
					t.Fatalf("warning %q, want it to name %s and chmod 600", warnings[0], path)
				}
			}
		})
	}
	o := &emulatorOptions{Output: "text", KeyFile: open, set: func(string) bool { return false }, warn: &syncBuffer{}}
	if _, err := o.config(); err != nil {
		t.Fatal(err)
	}
	if got := o.warn.(*syncBuffer).String(); !strings.HasPrefix(got, "warning: key file "+open) || strings.Count(got, "\n") != 1 {
		t.Fatalf("emulator --key-file with mode 0644 warned %q, want one line", got)
	}
}

func TestKeyFileThatNeverEndsIsAOneLineUsageError(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no /dev/zero")
	}
	for _, args := range [][]string{
		{"emulator", "--port", "0"},
		{"emulator", "status"},
		{"config", "show"},
	} {
		io, out, errOut := testIO()
		code := Run(context.Background(), io, append(args, "--key-file", "/dev/zero"))
		msg := strings.TrimSpace(errOut.String())
		if code != ExitUsage || strings.Contains(msg, "\n") || !strings.Contains(msg, "/dev/zero") || !strings.Contains(msg, "not a regular file") {
			t.Fatalf("%v --key-file /dev/zero → exit %d, stderr %q (stdout %q); want a one-line usage error", args, code, msg, out)
		}
	}
}
