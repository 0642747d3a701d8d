package gosuite

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"
)

// baseline is testdata/passing.txt: the tests recorded as passing, for one azcosmos
// version.
type baseline struct {
	version string
	passing []string
}

const baselineFile = "testdata/passing.txt"

// readBaseline reads the recorded passing tests: one name a line, # comments, and the
// line "# azcosmos VERSION" naming the version they were recorded with.
func readBaseline(path string) (baseline, error) {
	f, err := os.Open(path)
	if err != nil {
		return baseline{}, err
	}
	defer f.Close()
	var b baseline
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "# azcosmos "); ok {
			b.version = strings.TrimSpace(v)
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		b.passing = append(b.passing, line)
	}
	if b.version == "" {
		return b, fmt.Errorf("%s names no version (a line \"# azcosmos vX.Y.Z\")", path)
	}
	return b, sc.Err()
}

// writeBaseline records the tests that passed, in the suite's order.
func writeBaseline(path, version string, results []result) error {
	var b strings.Builder
	b.WriteString("# Microsoft's azcosmos emulator tests (emulator_*_test.go) that pass against `cosmosctl emulator`\n")
	b.WriteString("# in the shape of Microsoft's emulator, each on a fresh emulator: sdkcompat/gosuite checks that\n")
	b.WriteString("# every test named here still passes. Rewritten by\n")
	b.WriteString("#   COSMOSCTL_GOSUITE_UPDATE=1 go test -count=1 ./sdkcompat/gosuite/\n")
	fmt.Fprintf(&b, "# azcosmos %s\n", version)
	for _, r := range results {
		if r.outcome == passed {
			b.WriteString(r.name + "\n")
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// counts tallies the outcomes.
func counts(results []result) map[outcome]int {
	c := map[outcome]int{}
	for _, r := range results {
		c[r.outcome]++
	}
	return c
}

// summary is the one line that says how the run went.
func summary(results []result) string {
	c := counts(results)
	s := fmt.Sprintf("%d tests: %d passed, %d failed, %d skipped by the suite", len(results), c[passed], c[failed], c[skipped])
	if c[notRun] > 0 {
		s += fmt.Sprintf(", %d not run", c[notRun])
	}
	return s
}

// markdown is the results table: one row per test, the reason on failures and skips.
func markdown(version string, results []result, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# azcosmos %s emulator tests against `cosmosctl emulator`\n\n", version)
	fmt.Fprintf(&b, "Each test on a fresh `cosmosctl emulator --scenario examples/microsoft-emulator.toml` (https://localhost:8081/, the well-known key), `EMULATOR=1`, the certificate trusted through `SSL_CERT_FILE`. %s; %s in all.\n\n", summary(results), took.Round(time.Second))
	b.WriteString("| test | file | outcome | time | first failure or skip reason |\n|---|---|---|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %.1f s | %s |\n", r.name, r.file, r.outcome, r.duration.Seconds(), cell(r.reason))
	}
	return b.String()
}

// cell makes text safe in a markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
