package scripts_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// countingAccount is an account endpoint that counts the requests it gets and answers
// each 401: whatever reaches it, nothing is written.
func countingAccount(t *testing.T) (url string, requests func() int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"code":"Unauthorized","message":"The input authorization token can't serve the request."}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, n.Load
}

// An unset $ETAG makes `--if-match "$ETAG"` an empty etag; sent as it was, the write
// would carry no condition and overwrite whatever is stored. It is refused as bad input
// (exit 2) naming the flag, before any request.
func TestAnEmptyIfMatchIsAUsageErrorBeforeAnyRequest(t *testing.T) {
	bin := testkit.Binary(t)
	testkit.Isolate(t)
	url, requests := countingAccount(t)
	env := append(os.Environ(), "COSMOSCTL_ENDPOINT="+url, "COSMOSCTL_KEY="+testkit.AccountKey,
		"COSMOSCTL_DATABASE=app", "COSMOSCTL_CONTAINER=items")
	doc := `{"id":"order-1","pk":"tenant-7","total":43}`
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
	}{
		{"replace with an unset ETAG", doc, []string{"replace", "order-1", "-f", "-", "--if-match", ""}},
		{"replace with --if-match=", doc, []string{"replace", "order-1", "-f", "-", "--if-match="}},
		{"delete with an unset ETAG", "", []string{"delete", "order-1", "--pk", "tenant-7", "--if-match", ""}},
		{"patch with a blank etag", "", []string{"patch", "order-1", "--pk", "tenant-7", "--op", "set /status=\"shipped\"", "--if-match", " \t "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := requests()
			code, out, errOut := testkit.RunBinary(t, bin, env, tc.stdin, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (usage); stderr %q", code, errOut)
			}
			if !strings.Contains(errOut, "--if-match is empty") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("stderr is not one line naming --if-match: %q", errOut)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if n := requests() - before; n != 0 {
				t.Errorf("%d requests reached the account, want none", n)
			}
		})
	}
	// The same commands with an etag do reach the account: the test would see a request.
	before := requests()
	testkit.RunBinary(t, bin, env, "", "delete", "order-1", "--pk", "tenant-7", "--if-match", `"00000000-0000-0000-0000-000000000000"`)
	if requests() == before {
		t.Fatal("a delete with an etag sent nothing: the account is not the one the command uses")
	}
}
