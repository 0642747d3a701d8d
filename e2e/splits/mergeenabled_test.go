package splits_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// TestEveryCommandWorksOnAMergeEnabledAccount: an account with partition merge enabled
// refuses every request that does not declare the merge capability (the emulator's
// TestMergeEnabledAccountRefusesRequestsWithoutTheCapability); cosmosctl declares it on
// every request, so each command works there as anywhere.
func TestEveryCommandWorksOnAMergeEnabledAccount(t *testing.T) {
	srv := testkit.Account(t, func(c *emulator.Config) { c.MergeEnabled = true })

	// The account refuses a request without the capability, so the commands below
	// really are checked.
	req, _ := http.NewRequest(http.MethodGet, srv.Endpoint(), nil)
	cred, _ := cosmos.NewMasterKey(srv.Key())
	date := cosmos.FormatDate(time.Now())
	auth, _ := cred.Authorize(http.MethodGet, "", "", date)
	req.Header.Set(cosmos.HeaderDate, date)
	req.Header.Set(cosmos.HeaderVersion, cosmos.APIVersion)
	req.Header.Set(cosmos.HeaderAuthorization, auth)
	resp, err := http.DefaultClient.Do(req.WithContext(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("an account read without the capability: %d, want 400", resp.StatusCode)
	}

	ndjson := t.TempDir() + "/items.ndjson"
	writeFile(t, ndjson, `{"id":"i1","pk":"a"}`+"\n"+`{"id":"i2","pk":"b"}`+"\n")
	for _, args := range [][]string{
		{"version"},
		{"regions"},
		{"db", "ls"},
		{"container", "ls"},
		{"container", "show", "items"},
		{"throughput", "show", "items"},
		{"create", "--pk", "a", "-f", "-", `{"id":"x","pk":"a","n":1}`},
		{"read", "x", "--pk", "a"},
		{"upsert", "--pk", "a", "-f", "-", `{"id":"x","pk":"a","n":2}`},
		{"replace", "x", "--pk", "a", "-f", "-", `{"id":"x","pk":"a","n":3}`},
		{"patch", "x", "--pk", "a", "--op", "incr /n=1"},
		{"query", "SELECT * FROM c"},
		{"query", "SELECT VALUE COUNT(1) FROM c"},
		{"import", ndjson},
		{"export"},
		{"changes"},
		{"locate", "--pk", "a"},
		{"health"},
		{"probe", "--count", "5"},
		{"hedge-test", "--count", "20"},
		{"delete", "x", "--pk", "a"},
	} {
		stdin := ""
		if n := len(args); n > 2 && args[n-2] == "-" {
			args, stdin = args[:n-1], args[n-1] // the document, on standard input
		}
		r := clitest.Run(t, stdin, args...)
		if r.Code != 0 {
			t.Errorf("%s on a merge-enabled account: exit %d\nstdout %s\nstderr %s", strings.Join(args, " "), r.Code, r.Out, r.ErrOut)
		}
	}
	var q struct {
		Items []json.RawMessage `json:"items"`
	}
	if out := clitest.Run(t, "", "query", "-o", "json", "SELECT VALUE COUNT(1) FROM c"); json.Unmarshal([]byte(out.Out), &q) != nil || len(q.Items) != 1 || string(q.Items[0]) != "2" {
		t.Errorf("after the commands the container holds %s items, want the 2 imported", out.Out)
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
