package cmd

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

type writeResult struct {
	StatusCode  int `json:"status_code"`
	Diagnostics struct {
		WriteRetries string `json:"write_retries"`
		Resolution   string
		Notes        []string
		Attempts     []struct{ Reason, Outcome, Note string }
	}
}

func writeJSON(t *testing.T, stdin string, args ...string) (writeResult, runResult) {
	t.Helper()
	r := cosmosctl(t, stdin, append(args, "-o", "json")...)
	var got writeResult
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("%v: %q %q", err, r.out, r.errOut)
	}
	return got, r
}

func TestCreateWithTrackingIDSurvivesALostAnswer(t *testing.T) {
	srv := testAccount(t)
	t.Setenv("COSMOSCTL_WRITE_RETRY_POLICY", "WITH_TRACKING_ID")
	srv.AddFault(faults.Rule{Operations: []string{"create"}, Effect: "drop-response", Count: 1})
	got, r := writeJSON(t, `{"id":"w1","pk":"p"}`, "create", "-f", "-")
	if r.code != 0 || got.StatusCode != 201 || got.Diagnostics.Resolution != "409 on retry resolved: _trackingId matches" {
		t.Fatalf("exit %d: %+v %s", r.code, got, r.errOut)
	}
	if got.Diagnostics.WriteRetries != "tracking-id" || !strings.Contains(got.Diagnostics.Attempts[0].Note, "ambiguous") {
		t.Fatalf("diagnostics %+v", got.Diagnostics)
	}
	// The item carries the _trackingId, as the help says.
	r = cosmosctl(t, "", "read", "w1", "--pk", "p")
	if !strings.Contains(r.out, `"_trackingId":"`) {
		t.Fatalf("stored item %s", r.out)
	}
}

func TestWriteRetryPolicyPrecedence(t *testing.T) {
	srv := testAccount(t)
	cfg := os.Getenv("COSMOSCTL_CONFIG")
	os.WriteFile(cfg, []byte("default_profile = \"p\"\n[profiles.p.write_retries]\npolicy = \"retries\"\n"), 0o600)
	policyOf := func(args ...string) string {
		got, _ := writeJSON(t, `{"id":"`+strings.Join(args, "")+`x","pk":"p"}`, append([]string{"upsert", "-f", "-"}, args...)...)
		return got.Diagnostics.WriteRetries
	}
	if p := policyOf(); p != "retries" {
		t.Fatalf("profile: %s", p)
	}
	t.Setenv("COSMOSCTL_WRITE_RETRY_POLICY", "NO_RETRIES")
	if p := policyOf(); p != "off" {
		t.Fatalf("environment over profile: %s", p)
	}
	if p := policyOf("--write-retries", "tracking-id"); p != "tracking-id" {
		t.Fatalf("flag over environment: %s", p)
	}
	// Without retries the lost answer is an error that says the write may have been applied.
	srv.AddFault(faults.Rule{Operations: []string{"create"}, Effect: "drop-response", Count: 1})
	got, r := writeJSON(t, `{"id":"lost","pk":"p"}`, "create", "-f", "-")
	if r.code != ExitUnavailable || !strings.Contains(got.Diagnostics.Attempts[0].Note, "may or may not have been applied") {
		t.Fatalf("exit %d %+v", r.code, got.Diagnostics)
	}
	if r := cosmosctl(t, "", "upsert", "-f", "-", "--write-retries", "sometimes"); r.code != ExitUsage {
		t.Fatalf("bad policy: exit %d %s", r.code, r.errOut)
	}
}

func TestPatchRetriesOnlyWithItsOwnFlag(t *testing.T) {
	srv := testAccount(t)
	t.Setenv("COSMOSCTL_WRITE_RETRY_POLICY", "WITH_RETRIES")
	cosmosctl(t, `{"id":"pt","pk":"p","n":0}`, "create", "-f", "-")
	srv.AddFault(faults.Rule{Operations: []string{"patch"}, Effect: "status", Status: 503, Count: 1})
	if _, r := writeJSON(t, "", "patch", "pt", "--pk", "p", "--op", "set /n=1"); r.code != ExitUnavailable {
		t.Fatalf("patch must ignore the environment's policy: exit %d", r.code)
	}
	srv.AddFault(faults.Rule{Operations: []string{"patch"}, Effect: "status", Status: 503, Count: 1})
	got, r := writeJSON(t, "", "patch", "pt", "--pk", "p", "--op", "set /n=1", "--write-retries", "retries")
	if r.code != 0 || got.Diagnostics.WriteRetries != "retries" || len(got.Diagnostics.Attempts) != 2 {
		t.Fatalf("exit %d %+v", r.code, got.Diagnostics)
	}
	if r := cosmosctl(t, "", "patch", "pt", "--pk", "p", "--op", "set /n=1", "--write-retries", "tracking-id"); r.code != ExitUsage {
		t.Fatalf("patch with tracking-id: exit %d", r.code)
	}
}
