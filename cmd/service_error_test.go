package cmd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A real account's 401: the message wraps the payload the service signed in line feeds
// and appends its diagnostics.
const real401 = `{"code":"Unauthorized","message":"The input authorization token can't serve the request. The wrong key is being used or the expected payload is not built as per the protocol. For more info: https://aka.ms/cosmosdb-tsg-401. Server used the following payload to sign: 'get\n\n\nmon, 30 nov 2026 03:21:17 gmt\n\n'\r\nActivityId: 0b7a3c55-1d2e-4f60-9a8b-7c6d5e4f3a21, Microsoft.Azure.Documents.Common/2.14.0"}`

func TestServiceErrorsAreShownWhole(t *testing.T) {
	isolate(t)
	t.Setenv("COSMOSCTL_KEY", testAccountKey)
	t.Setenv("COSMOSCTL_DATABASE", "app")
	t.Setenv("COSMOSCTL_CONTAINER", "items")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("x-ms-activity-id", "0b7a3c55-1d2e-4f60-9a8b-7c6d5e4f3a21")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(real401))
	}))
	t.Cleanup(srv.Close)
	const payload = `Server used the following payload to sign: 'get\n\n\nmon, 30 nov 2026 03:21:17 gmt\n\n'`

	r := cosmosctl(t, "", "read", "order-1", "--pk", "tenant-7", "--endpoint", srv.URL)
	if r.code != ExitAuth {
		t.Fatalf("exit %d, want %d: %q", r.code, ExitAuth, r.errOut)
	}
	var errLine string
	for _, l := range strings.Split(r.errOut, "\n") {
		if strings.Contains(l, "401") {
			errLine = l
		}
	}
	if !strings.Contains(errLine, payload) || !strings.Contains(errLine, "activity id 0b7a3c55-1d2e-4f60-9a8b-7c6d5e4f3a21") ||
		strings.Contains(errLine, "Microsoft.Azure.Documents.Common") {
		t.Fatalf("want the 401 on one line with the payload to sign and the activity id, without the diagnostics: %q", r.errOut)
	}

	r = cosmosctl(t, "", "read", "order-1", "--pk", "tenant-7", "--endpoint", srv.URL, "-o", "json")
	var obj struct {
		Error struct {
			Message        string `json:"message"`
			ServiceMessage string `json:"service_message"`
			ActivityID     string `json:"activity_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.out), &obj); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%q\nstderr %q", err, r.out, r.errOut)
	}
	if !strings.HasSuffix(obj.Error.Message, payload) || strings.Contains(obj.Error.Message, "\n") {
		t.Errorf("message %q: want the readable message on one line", obj.Error.Message)
	}
	if !strings.Contains(obj.Error.ServiceMessage, "\r\nActivityId: 0b7a3c55") || !strings.Contains(obj.Error.ServiceMessage, "'get\n\n\nmon") {
		t.Errorf("service_message %q: want the service's whole text", obj.Error.ServiceMessage)
	}
	if obj.Error.ActivityID != "0b7a3c55-1d2e-4f60-9a8b-7c6d5e4f3a21" {
		t.Errorf("activity_id %q: want the service's", obj.Error.ActivityID)
	}
}
