package emulator

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

func TestSignedDateMustBeWithinFifteenMinutesOfTheServerClock(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	s := startWithClock(t, clk, nil)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	c.tr.Now = clk.Now
	c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)

	cases := []struct {
		name     string
		skew     time.Duration
		method   string
		path     string
		body     any
		want     int
		inReason string
	}{
		{"a read signed now is served", 0, "GET", itemPath("1"), nil, 200, ""},
		{"a read signed 15 minutes ago is served", -15 * time.Minute, "GET", itemPath("1"), nil, 200, ""},
		{"a read signed 15 minutes ahead is served", 15 * time.Minute, "GET", itemPath("1"), nil, 200, ""},
		{"a read signed 15 minutes and a second ago is refused", -15*time.Minute - time.Second, "GET", itemPath("1"), nil, 401, "behind"},
		{"a read signed 16 minutes ahead is refused", 16 * time.Minute, "GET", itemPath("1"), nil, 401, "ahead of"},
		{"a write replayed a year later is refused", -365 * 24 * time.Hour, "POST", itemsPath(), `{"id":"2","pk":"a"}`, 401, "behind"},
		{"the account read is checked too", -time.Hour, "GET", "/", nil, 401, "behind"},
		{"the control API is checked too", -time.Hour, "POST", "/_emulator/faults", `{"region":"East US","effect":"status","status":503}`, 401, "behind"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.tr.Now = func() time.Time { return clk.Now().Add(tc.skew) }
			hdr := pk
			if tc.path == "/" || strings.HasPrefix(tc.path, "/_emulator") {
				hdr = nil
			}
			resp, err := c.do(s.Endpoint(), tc.method, tc.path, hdr, tc.body)
			st, _ := statusOf(t, resp, err)
			if st != tc.want {
				t.Fatalf("%s %s signed %v off → %d, want %d: %s", tc.method, tc.path, tc.skew, st, tc.want, resp.Body)
			}
			if tc.inReason != "" {
				msg := string(resp.Body)
				for _, want := range []string{"not valid at the current time", tc.inReason, "15m0s", cosmos.FormatDate(clk.Now())} {
					if !strings.Contains(msg, want) {
						t.Errorf("message %s does not say %q", msg, want)
					}
				}
			}
		})
	}
	if n := len(s.Faults().Rules()); n != 0 {
		t.Errorf("a control request with an old date added %d fault rule(s)", n)
	}
	// The refused write did not happen.
	c.tr.Now = clk.Now
	if st, _ := code(c.mustDo(s.Endpoint(), "GET", itemPath("2"), pk)); st != 404 {
		t.Fatalf("the replayed create was stored (read → %d, want 404)", st)
	}
}

func TestUnparseableDateIs401(t *testing.T) {
	s := startTest(t)
	key, _ := cosmos.NewMasterKey(s.Key())
	for _, date := range []string{"yesterday", "2026-11-30T12:00:00Z", "Mon, 30 Nov 2026 12:00:00"} {
		req, _ := http.NewRequest("GET", s.Endpoint()+"/dbs", nil)
		req.Header.Set(cosmos.HeaderDate, date)
		auth, _ := key.Authorize("GET", cosmos.TypeDatabases, "", date)
		req.Header.Set(cosmos.HeaderAuthorization, auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("x-ms-date %q → %d, want 401", date, resp.StatusCode)
		}
	}
}

func TestDateFormsClientsSendAreAccepted(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 5, 7, 0, time.UTC)
	s := startWithClock(t, clock.NewFake(now), nil)
	for _, date := range []string{
		"Tue, 01 Dec 2026 09:05:07 GMT", // Go, JS, Python, Java, .NET
		"Tue, 1 Dec 2026 09:05:07 GMT",
		"Tue, 01 Dec 2026 09:05:07 +0000",
	} {
		if msg := s.dateProblem(date); msg != "" {
			t.Errorf("x-ms-date %q refused: %s", date, msg)
		}
	}
}

// newTestClientAt signs with clk, for tests that run the emulator on a fake clock: the
// emulator refuses dates more than 15 minutes from its own clock.
func newTestClientAt(t testing.TB, key string, clk interface{ Now() time.Time }) *testClient {
	c := newTestClient(t, key)
	c.tr.Now = clk.Now
	return c
}
