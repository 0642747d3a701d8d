package emulator

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

var threeRegions = []RegionConfig{{Name: "East US"}, {Name: "West US"}, {Name: "North Europe"}}

func consistencyEmulator(t *testing.T, level string, lag time.Duration, more ...func(*Config)) (*Server, *clock.Fake, *testClient) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC))
	s := startWithClock(t, clk, func(c *Config) {
		c.Regions = threeRegions
		c.Consistency = level
		c.ReplicationLag = faults.Duration(lag)
		c.Ranges = 1
		for _, m := range more {
			m(c)
		}
	})
	return s, clk, newTestClientAt(t, s.Key(), clk)
}

func withHeader(h map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for hk, hv := range h {
		out[hk] = hv
	}
	return out
}

// On a Strong account a write is in every region before it is acknowledged: the fake
// clock never moves, so a read region that answers the new version can only have it
// from the synchronous replication, and the acknowledgement waited the replication lag.
func TestStrongReadsAreNeverStaleInAnyRegionAfterTheAcknowledgement(t *testing.T) {
	const lag = 500 * time.Millisecond
	s, _, c := consistencyEmulator(t, "strong", lag)
	pk := pkHeader(`["a"]`)
	east := regionURL(t, s, "East US")
	for v := 1; v <= 2; v++ {
		start := time.Now()
		resp := c.mustDo(east, "POST", itemsPath(), withHeader(pk, cosmos.HeaderIsUpsert, "true"), fmt.Sprintf(`{"id":"1","pk":"a","v":%d}`, v))
		took := time.Since(start)
		if resp.StatusCode >= 300 {
			t.Fatalf("upsert v%d → %d: %s", v, resp.StatusCode, resp.Body)
		}
		if took < lag {
			t.Errorf("write v%d acknowledged after %v: a Strong write waits for every region (replication lag %v)", v, took, lag)
		}
		for _, r := range threeRegions {
			read := c.mustDo(regionURL(t, s, r.Name), "GET", itemPath("1"), pk)
			if got := versionOf(t, read); got != v {
				t.Errorf("%s read v%d right after v%d was acknowledged: Strong never serves a stale read", r.Name, got, v)
			}
		}
	}
	// Reads are not held back: only writes pay for the replication.
	start := time.Now()
	c.mustDo(regionURL(t, s, "North Europe"), "GET", itemPath("1"), pk)
	if took := time.Since(start); took >= lag {
		t.Errorf("a Strong read took %v: reads do not wait for the replication lag", took)
	}
	var acct cosmos.Account
	_ = json.Unmarshal(c.mustDo(s.Endpoint(), "GET", "/", nil).Body, &acct)
	if acct.UserConsistencyPolicy.DefaultConsistencyLevel != "Strong" {
		t.Errorf("account reports %+v, want Strong", acct.UserConsistencyPolicy)
	}
}

func TestSessionTokenReadsItsOwnWriteOrWaitsForTheRegion(t *testing.T) {
	s, clk, c := consistencyEmulator(t, "session", 2*time.Second)
	pk := pkHeader(`["a"]`)
	w := c.mustDo(regionURL(t, s, "East US"), "POST", itemsPath(), pk, `{"id":"1","pk":"a","v":1}`)
	west := regionURL(t, s, "West US")
	withToken := withHeader(pk, cosmos.HeaderSessionToken, w.SessionToken)
	if st, sub := code(c.mustDo(west, "GET", itemPath("1"), withToken)); st != 404 || sub != cosmos.SubReadSessionNotAvailable {
		t.Fatalf("West before catching up, with the write's token → %d/%d, want 404/1002", st, sub)
	}
	clk.Advance(2 * time.Second)
	if got := versionOf(t, c.mustDo(west, "GET", itemPath("1"), withToken)); got != 1 {
		t.Fatalf("West after the replication lag read v%d, want its own write v1", got)
	}
}

// ConsistentPrefix and Eventual serve what a region has, in commit order, and do not
// wait for a session token; what is guaranteed is a prefix of the writes.
func TestWeakLevelsServeAPrefixAndIgnoreSessionTokens(t *testing.T) {
	for _, level := range []string{"prefix", "eventual"} {
		t.Run(level, func(t *testing.T) {
			s, clk, c := consistencyEmulator(t, level, 10*time.Second)
			east, west := regionURL(t, s, "East US"), regionURL(t, s, "West US")
			pk := pkHeader(`["a"]`)
			var tok string
			for i := 1; i <= 4; i++ {
				tok = c.mustDo(east, "POST", itemsPath(), pk, fmt.Sprintf(`{"id":"%d","pk":"a"}`, i)).SessionToken
				clk.Advance(3 * time.Second) // writes 1..4 at 0s, 3s, 6s, 9s
			}
			query := withHeader(withHeader(withHeader(pk, cosmos.HeaderIsQuery, "true"), "Content-Type", "application/query+json"), cosmos.HeaderSessionToken, tok)
			prev := 0
			for step := 0; step < 5; step++ {
				resp := c.mustDo(west, "POST", itemsPath(), query, `{"query":"SELECT c.id FROM c"}`)
				if resp.StatusCode != 200 {
					t.Fatalf("query in West with a session token → %d/%d: a %s read does not wait for the token", resp.StatusCode, resp.SubStatus, level)
				}
				var page struct{ Documents []struct{ ID string } }
				_ = json.Unmarshal(resp.Body, &page)
				seen := map[string]bool{}
				for _, d := range page.Documents {
					seen[d.ID] = true
				}
				n := len(seen)
				for i := 1; i <= n; i++ {
					if !seen[fmt.Sprint(i)] {
						t.Fatalf("West sees %v: not a prefix of the writes 1..4", seen)
					}
				}
				if n < prev {
					t.Fatalf("West saw %d writes, then %d: reads went back in time", prev, n)
				}
				prev = n
				clk.Advance(3 * time.Second)
			}
			if prev != 4 {
				t.Errorf("West sees %d of 4 writes after every lag passed", prev)
			}
		})
	}
}

// BoundedStaleness: a read region is never more than T seconds behind, however long
// the replication lag.
func TestBoundedStalenessKeepsReadRegionsWithinTheInterval(t *testing.T) {
	s, clk, c := consistencyEmulator(t, "bounded", time.Hour, func(c *Config) { c.MaxIntervalSeconds = 300 })
	pk := pkHeader(`["a"]`)
	c.mustDo(regionURL(t, s, "East US"), "POST", itemsPath(), pk, `{"id":"1","pk":"a","v":1}`)
	west := regionURL(t, s, "West US")
	clk.Advance(299 * time.Second)
	if st, _ := code(c.mustDo(west, "GET", itemPath("1"), pk)); st != 404 {
		t.Fatalf("West 299s after the write → %d; staleness within the bound is allowed, and the lag is an hour", st)
	}
	clk.Advance(time.Second)
	if got := versionOf(t, c.mustDo(west, "GET", itemPath("1"), pk)); got != 1 {
		t.Fatalf("West at the 300s bound read v%d, want v1", got)
	}
	var acct struct {
		P map[string]any `json:"userConsistencyPolicy"`
	}
	_ = json.Unmarshal(c.mustDo(s.Endpoint(), "GET", "/", nil).Body, &acct)
	if acct.P["defaultConsistencyLevel"] != "BoundedStaleness" || acct.P["maxIntervalInSeconds"] != 300.0 || acct.P["maxStalenessPrefix"] != 100000.0 {
		t.Errorf("account userConsistencyPolicy %v: want BoundedStaleness, 300 s and the multi-region minimum 100000 versions", acct.P)
	}
}

// ... and never more than K versions behind in a partition. K is set below the
// service's multi-region minimum (100000) so that the test writes a handful.
func TestBoundedStalenessKeepsReadRegionsWithinKVersions(t *testing.T) {
	const k = 3
	s, _, c := consistencyEmulator(t, "bounded", time.Hour)
	s.store.maxStale = k
	pk := pkHeader(`["a"]`)
	east, west := regionURL(t, s, "East US"), regionURL(t, s, "North Europe")
	for v := 1; v <= 8; v++ {
		c.mustDo(east, "POST", itemsPath(), withHeader(pk, cosmos.HeaderIsUpsert, "true"), fmt.Sprintf(`{"id":"1","pk":"a","v":%d}`, v))
		read := c.mustDo(west, "GET", itemPath("1"), pk)
		got := 0
		if read.StatusCode == 200 {
			got = versionOf(t, read)
		}
		if v-got > k {
			t.Fatalf("after v%d North Europe reads v%d: %d versions behind, the bound is %d", v, got, v-got, k)
		}
	}
}

func TestARequestMayRelaxButNotStrengthenTheAccountLevel(t *testing.T) {
	cases := []struct {
		account, request string
		want             int
	}{
		{"Session", "Strong", 400},
		{"Session", "BoundedStaleness", 400},
		{"Eventual", "Strong", 400},
		{"BoundedStaleness", "Strong", 400},
		{"Session", "Eventual", 200},
		{"Eventual", "Session", 200}, // the SDKs allow any of Session, ConsistentPrefix, Eventual
		{"Strong", "Eventual", 200},
		{"BoundedStaleness", "Session", 200},
		{"Session", "linearizable", 400},
	}
	for _, tc := range cases {
		t.Run(tc.account+"/"+tc.request, func(t *testing.T) {
			s, _, c := consistencyEmulator(t, tc.account, 0)
			pk := pkHeader(`["a"]`)
			c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
			resp := c.mustDo(s.Endpoint(), "GET", itemPath("1"), withHeader(pk, cosmos.HeaderConsistencyLevel, tc.request))
			if resp.StatusCode != tc.want {
				t.Fatalf("%s read on a %s account → %d (%s), want %d", tc.request, tc.account, resp.StatusCode, resp.Body, tc.want)
			}
			if tc.want == 400 && tc.request != "linearizable" {
				want := "ConsistencyLevel " + tc.request + " specified in the request is invalid when service is configured with consistency level " + tc.account +
					". Ensure the request consistency level is not stronger than the service consistency level."
				if !strings.Contains(string(resp.Body), want) {
					t.Errorf("body %s, want the service's message %q", resp.Body, want)
				}
			}
		})
	}
	// Writes carry the header too and are refused the same way.
	s, _, c := consistencyEmulator(t, "session", 0)
	resp := c.mustDo(s.Endpoint(), "POST", itemsPath(), withHeader(pkHeader(`["a"]`), cosmos.HeaderConsistencyLevel, "Strong"), `{"id":"w","pk":"a"}`)
	if resp.StatusCode != 400 {
		t.Errorf("a write asking for Strong on a Session account → %d, want 400", resp.StatusCode)
	}
}

// A weaker request level is honoured: an Eventual read on a Session account does not
// wait for the session token.
func TestAnEventualRequestDoesNotWaitForItsSessionToken(t *testing.T) {
	s, _, c := consistencyEmulator(t, "session", time.Minute)
	pk := pkHeader(`["a"]`)
	w := c.mustDo(regionURL(t, s, "East US"), "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
	hdr := withHeader(withHeader(pk, cosmos.HeaderSessionToken, w.SessionToken), cosmos.HeaderConsistencyLevel, "Eventual")
	if st, sub := code(c.mustDo(regionURL(t, s, "West US"), "GET", itemPath("1"), hdr)); st != 404 || sub != 0 {
		t.Fatalf("Eventual read in a lagging region → %d/%d, want 404/0 (the item has not arrived; no session wait)", st, sub)
	}
}

func TestConsistencySettings(t *testing.T) {
	two := []RegionConfig{{Name: "East US"}, {Name: "West US"}}
	one := []RegionConfig{{Name: "East US"}}
	cases := []struct {
		name    string
		cfg     Config
		want    string
		k       int64
		t       int
		problem string
	}{
		{"short names", Config{Consistency: "bounded", Regions: one}, "BoundedStaleness", 100, 5, ""},
		{"multi-region bounded defaults to the service's minimums", Config{Consistency: "BoundedStaleness", Regions: two}, "BoundedStaleness", 100000, 300, ""},
		{"prefix", Config{Consistency: "PREFIX"}, "ConsistentPrefix", 0, 0, ""},
		{"Strong across regions", Config{Consistency: "strong", Regions: two}, "Strong", 0, 0, ""},
		{"K below the multi-region minimum", Config{Consistency: "bounded", Regions: two, MaxStalenessPrefix: 10}, "", 0, 0, "100000 to 2147483647"},
		{"T below the one-region minimum", Config{Consistency: "bounded", Regions: one, MaxIntervalSeconds: 4}, "", 0, 0, "5 to 86400"},
		{"T above the limit", Config{Consistency: "bounded", Regions: one, MaxIntervalSeconds: 86401}, "", 0, 0, "5 to 86400"},
		{"bounds without BoundedStaleness", Config{Consistency: "session", MaxIntervalSeconds: 10}, "", 0, 0, "not of Session"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cfg.withDefaults()
			switch {
			case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem)):
				t.Fatalf("error %v, want one saying %q", err, tc.problem)
			case tc.problem == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.problem == "" && (got.Consistency != tc.want || got.MaxStalenessPrefix != tc.k || got.MaxIntervalSeconds != tc.t):
				t.Fatalf("%q K=%d T=%d, want %q K=%d T=%d", got.Consistency, got.MaxStalenessPrefix, got.MaxIntervalSeconds, tc.want, tc.k, tc.t)
			}
		})
	}
}

func TestTheAccountReportsStalenessBoundsAtEveryLevel(t *testing.T) {
	s, _, c := consistencyEmulator(t, "session", 0)
	var acct struct {
		P map[string]any `json:"userConsistencyPolicy"`
	}
	_ = json.Unmarshal(c.mustDo(s.Endpoint(), "GET", "/", nil).Body, &acct)
	if acct.P["defaultConsistencyLevel"] != "Session" || acct.P["maxStalenessPrefix"] != 100.0 || acct.P["maxIntervalInSeconds"] != 5.0 {
		t.Errorf("userConsistencyPolicy %v, want Session with the service's 100 and 5", acct.P)
	}
}

// The replication lag changed at run time is kept as configured (the control API shows
// it) and bounded by the level the same way as at start.
func TestReplicationLagChangedAtRunTimeKeepsToTheLevel(t *testing.T) {
	s, clk, c := consistencyEmulator(t, "bounded", 0, func(c *Config) { c.MaxIntervalSeconds = 300 })
	if err := s.SetReplicationLag(time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := s.State().ReplicationLag; time.Duration(got) != time.Hour {
		t.Errorf("state reports replication lag %v, want the configured 1h", time.Duration(got))
	}
	pk := pkHeader(`["a"]`)
	c.mustDo(regionURL(t, s, "East US"), "POST", itemsPath(), pk, `{"id":"1","pk":"a","v":1}`)
	clk.Advance(300 * time.Second)
	if got := versionOf(t, c.mustDo(regionURL(t, s, "West US"), "GET", itemPath("1"), pk)); got != 1 {
		t.Errorf("West at the 300s bound read v%d after the lag was raised to 1h, want v1", got)
	}
}

// Only an acknowledged write waits for the other regions: a refused one (409) is
// answered at once.
func TestStrongRefusedWriteIsNotHeldBack(t *testing.T) {
	const lag = 2 * time.Second
	s, _, c := consistencyEmulator(t, "strong", lag)
	pk := pkHeader(`["a"]`)
	east := regionURL(t, s, "East US")
	c.mustDo(east, "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
	start := time.Now()
	if st, _ := code(c.mustDo(east, "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)); st != 409 {
		t.Fatalf("duplicate create → %d", st)
	}
	if took := time.Since(start); took >= lag {
		t.Errorf("a 409 took %v: nothing was written, nothing to replicate", took)
	}
}
