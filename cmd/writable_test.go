package cmd

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// checkWritable refuses, as one usage error naming the flag, the path, the problem and
// the fix, every path a command could not write, and leaves nothing behind: no file it
// created to try, no truncated file. The paths that cannot be written are ones that
// cannot be written by root either (tests run as root in CI, and a read-only directory
// does not stop root): a missing directory, a file where a directory should be, a
// directory, and on Linux sysfs, which takes no new file and lets no one write
// /sys/kernel/notes.
func TestCheckWritableRefusesWhatCannotBeWrittenAndLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		path     string
		replaced bool
		linux    bool
		want     string
	}{
		{"a missing directory", filepath.Join(dir, "missing", "x.state"), true, false, "the directory " + filepath.Join(dir, "missing") + " does not exist: create it"},
		{"a missing directory, in place", filepath.Join(dir, "missing", "deeper", "x.ndjson"), false, false, "does not exist: create it (mkdir -p"},
		{"a file for a directory", filepath.Join(file, "x.state"), true, false, file + " is a file, not a directory"},
		{"a file for a directory further up", filepath.Join(file, "sub", "x.ndjson"), false, false, file + " is a file, not a directory"},
		{"a directory", dir, true, false, "it is a directory: give a file name"},
		{"a directory, in place", dir, false, false, "it is a directory: give a file name"},
		{"a directory that takes no files", "/sys/x.state", true, true, "no file can be created in /sys"},
		{"a directory that takes no files, in place", "/sys/x.ndjson", false, true, "no file can be created in /sys"},
		{"a read-only file", "/sys/kernel/notes", false, true, "the file is not writable (permission denied)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.linux {
				if _, err := os.Stat("/sys/kernel"); runtime.GOOS != "linux" || err != nil {
					t.Skip("needs Linux's sysfs")
				}
			}
			err := checkWritable(outputPath{flag: "--state", path: "ok.state", replaced: true}, outputPath{flag: "--out", path: tc.path, replaced: tc.replaced})
			if ExitCode(err) != ExitUsage {
				t.Fatalf("%v (exit %d), want a usage error", err, ExitCode(err))
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "--out "+tc.path+" cannot be written: ") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("%q: want one line naming --out %s, saying %q", msg, tc.path, tc.want)
			}
		})
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "kept" {
		t.Errorf("the file in the way holds %q (%v), want it untouched", b, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%s holds %d entries, want the one file it had", dir, len(entries))
	}
}

// A path that can be written passes, whether it exists or not, and the check creates
// nothing and truncates nothing: a state or an output being resumed is as it was.
func TestCheckWritableLeavesWritablePathsAsTheyWere(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	existing := filepath.Join(dir, "resumed.ndjson")
	if err := os.WriteFile(existing, []byte("line 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "resumed.state")
	if err := os.WriteFile(state, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := checkWritable(
		outputPath{flag: "--output-file", path: existing},
		outputPath{flag: "--state", path: state, replaced: true},
		outputPath{flag: "--rejected", path: filepath.Join(dir, "new.rejected.ndjson")},
		outputPath{flag: "--state", path: filepath.Join(dir, "new.state"), replaced: true},
		outputPath{flag: "--rejected", path: "import.rejected.ndjson", origin: "the default"},
		outputPath{flag: "--state"}, // not given
		outputPath{flag: "--output-file", path: os.DevNull},
	)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "resumed.ndjson resumed.state" {
		t.Errorf("the directory holds %v, want only the two files it had", names)
	}
	for path, want := range map[string]string{existing: "line 1\n", state: "{}\n"} {
		if b, _ := os.ReadFile(path); string(b) != want {
			t.Errorf("%s holds %q, want %q", path, b, want)
		}
	}
}

// A path the command did not take from its flag says where it came from.
func TestCheckWritableSaysWhereADefaultPathCameFrom(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "orders.rejected.ndjson")
	err := checkWritable(outputPath{flag: "--rejected", path: path, origin: "the default"})
	if want := "--rejected " + path + " (the default) cannot be written: the directory "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("%v, want it to start %q", err, want)
	}
}
