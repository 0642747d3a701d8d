package emulator_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// sdkRequired says the official SDKs must be there: .ci/run sets it after installing
// them, so that CI fails rather than skips; on a developer's machine a missing SDK is a
// skip that names what to install.
func sdkRequired() bool { return os.Getenv("COSMOSCTL_SDKCOMPAT") == "required" }

func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if sdkRequired() {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// TestOfficialJavaScriptSDK runs sdkcompat/js (the official @azure/cosmos, pinned in its
// package-lock.json) against a fresh emulator: CRUD, conditional requests, patch, paging
// with continuation, cross-partition queries, databases and containers, preferred and
// excluded regions, 429 with retry-after, 503 failover, 403/3 after a failover, the
// change feed (from the beginning, 304, resume, from now, by partition key),
// transactional batch (200, 207/424 with nothing applied), bulk, throughput (read
// and replace an offer), and every supported query form through the SDK's query-plan
// pipeline across four ranges (ORDER BY, TOP, OFFSET/LIMIT, DISTINCT, aggregates, GROUP
// BY, projections and functions, paged), compared with the same queries computed in
// JavaScript.
func TestOfficialJavaScriptSDK(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "sdkcompat", "js"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skipOrFail(t, "node is not installed: install Node.js, then `npm ci` in %s", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@azure", "cosmos")); err != nil {
		skipOrFail(t, "the JavaScript SDK is not installed: run `npm ci` in %s", dir)
	}
	s, err := emulator.Start(emulator.Config{}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "compat.test.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "COSMOS_ENDPOINT="+s.Endpoint(), "COSMOS_KEY="+s.Key())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the JavaScript SDK suite failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
