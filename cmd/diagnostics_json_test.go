package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// anatomyAttempt is what a --diagnostics=json event says of an attempt.
type anatomyAttempt struct {
	Region           string   `json:"region"`
	StatusCode       *int     `json:"status_code"`
	StatusText       *string  `json:"status_text"`
	DurationMs       float64  `json:"duration_ms"`
	ServerDurationMs *float64 `json:"server_duration_ms"`
	NetworkMs        *float64 `json:"network_ms"`
	RangeID          *string  `json:"partition_key_range_id"`
	LSN              *int64   `json:"lsn"`
	SessionToken     *string  `json:"session_token"`
	ActivityID       string   `json:"activity_id"`
}

type anatomyDiagnostics struct {
	Attempts []anatomyAttempt `json:"attempts"`
}

type anatomyEvent struct {
	Event       string              `json:"event"`
	Kind        string              `json:"kind"`
	Line        int64               `json:"line"`
	Items       int                 `json:"items"`
	Diagnostics *anatomyDiagnostics `json:"diagnostics"`
	Page        *struct {
		Kind        string              `json:"kind"`
		Diagnostics *anatomyDiagnostics `json:"diagnostics"`
	} `json:"page"`
}

// diagnosticEvents parses stderr as NDJSON events: every line must be one.
func diagnosticEvents(t *testing.T, stderr string) []anatomyEvent {
	t.Helper()
	var evs []anatomyEvent
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var e anatomyEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Event == "" {
			t.Fatalf("stderr line %q is not a JSON event (%v):\n%s", line, err, stderr)
		}
		evs = append(evs, e)
	}
	return evs
}

// checkServed asserts the anatomy of an answered attempt: the emulator sends the
// service's headers, so none of the fields may be absent.
// A query page's answer carries no session token (the emulator's query responses, like
// the service's, send the LSN and the range; see emulator/query.go queryLSNHeaders).
func checkServed(t *testing.T, what string, a anatomyAttempt, sessionToken bool) {
	t.Helper()
	if a.StatusCode == nil || a.ServerDurationMs == nil || a.NetworkMs == nil || a.RangeID == nil || a.LSN == nil ||
		sessionToken && a.SessionToken == nil || a.ActivityID == "" {
		t.Fatalf("%s: an answered attempt lacks part of its anatomy: %+v", what, a)
	}
	if *a.NetworkMs < 0 || *a.NetworkMs > a.DurationMs || sessionToken && !strings.HasPrefix(*a.SessionToken, *a.RangeID+":") {
		t.Fatalf("%s: network %v ms of %v ms, range %q, session token %v", what, *a.NetworkMs, a.DurationMs, *a.RangeID, a.SessionToken)
	}
}

func TestDiagnosticsJSONGivesEveryAttemptsAnatomyPerOperation(t *testing.T) {
	testAccount(t)
	if r := cosmosctl(t, `{"id":"a","pk":"p"}`, "create", "-f", "-"); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}

	t.Run("read", func(t *testing.T) {
		r := cosmosctl(t, "", "read", "a", "--pk", "p", "--diagnostics=json")
		evs := diagnosticEvents(t, r.errOut)
		if r.code != 0 || len(evs) != 1 || evs[0].Event != "diagnostics" || evs[0].Diagnostics == nil || len(evs[0].Diagnostics.Attempts) == 0 {
			t.Fatalf("exit %d, events %+v", r.code, evs)
		}
		a := evs[0].Diagnostics.Attempts[0]
		checkServed(t, "read", a, true)
		if a.StatusText != nil {
			t.Errorf("a 200 has no words: %q", *a.StatusText)
		}
		if !strings.Contains(r.out, `"id":"a"`) {
			t.Errorf("the item must still go to stdout: %q", r.out)
		}
	})

	t.Run("a miss is put in words", func(t *testing.T) {
		r := cosmosctl(t, "", "read", "nope", "--pk", "p", "--diagnostics=json")
		evs := diagnosticEvents(t, r.errOut[:strings.LastIndex(strings.TrimSpace(r.errOut), "\n")+1])
		a := evs[0].Diagnostics.Attempts[0]
		if r.code != ExitNotFound || a.StatusText == nil || !strings.Contains(*a.StatusText, "does not exist") {
			t.Fatalf("exit %d, attempt %+v\n%s", r.code, a, r.errOut)
		}
	})

	t.Run("query pages", func(t *testing.T) {
		r := cosmosctl(t, "", "query", "SELECT * FROM c", "-o", "ndjson", "--diagnostics=json")
		evs := diagnosticEvents(t, r.errOut)
		served := 0
		for _, e := range evs {
			if e.Event != "page" || e.Page == nil || e.Page.Diagnostics == nil {
				t.Fatalf("event %+v in a query's diagnostics", e)
			}
			if e.Page.Kind != "page" {
				continue // the plan and the ranges are the gateway's, of no partition
			}
			for _, a := range e.Page.Diagnostics.Attempts {
				checkServed(t, "query page", a, false)
				served++
			}
		}
		if r.code != 0 || served == 0 {
			t.Fatalf("exit %d, %d answered attempts:\n%s", r.code, served, r.errOut)
		}
	})

	t.Run("change feed polls", func(t *testing.T) {
		r := cosmosctl(t, "", "changes", "--diagnostics=json")
		evs := diagnosticEvents(t, r.errOut)
		items := 0
		for _, e := range evs {
			if e.Event != "poll" || e.Diagnostics == nil {
				t.Fatalf("event %+v in a change feed's diagnostics", e)
			}
			items += e.Items
			for _, a := range e.Diagnostics.Attempts {
				checkServed(t, "poll", a, true)
			}
		}
		if r.code != 0 || items != 1 {
			t.Fatalf("exit %d, %d changes in the polls:\n%s", r.code, items, r.errOut)
		}
	})

	t.Run("import writes", func(t *testing.T) {
		in := filepath.Join(t.TempDir(), "in.ndjson")
		if err := os.WriteFile(in, []byte("{\"id\":\"i1\",\"pk\":\"p\"}\n{\"id\":\"i2\",\"pk\":\"q\"}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r := cosmosctl(t, "", "import", in, "--diagnostics=json", "--progress", "off")
		evs := diagnosticEvents(t, r.errOut)
		lines := map[int64]bool{}
		for _, e := range evs {
			if e.Event != "write" || e.Diagnostics == nil || len(e.Diagnostics.Attempts) == 0 {
				t.Fatalf("event %+v in an import's diagnostics", e)
			}
			checkServed(t, "write", e.Diagnostics.Attempts[0], true)
			lines[e.Line] = true
		}
		if r.code != 0 || len(lines) != 2 || !lines[1] || !lines[2] {
			t.Fatalf("exit %d, write events for lines %v:\n%s", r.code, lines, r.errOut)
		}
	})

	t.Run("a value other than true, false or json is refused", func(t *testing.T) {
		r := cosmosctl(t, "", "read", "a", "--pk", "p", "--diagnostics=yaml")
		if r.code != ExitUsage || !strings.Contains(r.errOut, "true, false or json") {
			t.Fatalf("exit %d: %s", r.code, r.errOut)
		}
	})
}
