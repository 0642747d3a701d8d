package output

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the current output")

func TestMain(m *testing.M) {
	// tablewriter guesses East Asian character widths from the locale at start-up; pin
	// it so that golden files do not depend on the machine running the tests.
	twwidth.SetEastAsian(false)
	os.Exit(m.Run())
}

// golden compares got with testdata/name.golden, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./output -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update if the change is intended)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}
