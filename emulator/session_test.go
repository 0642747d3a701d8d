package emulator

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// vectorToken is the multi-region shape: range, version, global LSN, then one
// regionId=lsn per region of the account.
var vectorToken = regexp.MustCompile(`^([0-9]+):1#([0-9]+)((?:#[0-9]+=[0-9]+)+)$`)

// progressOf parses a multi-region token into its global LSN and per-region progress.
func progressOf(t *testing.T, tok string) (int64, map[string]int64) {
	t.Helper()
	m := vectorToken.FindStringSubmatch(tok)
	if m == nil {
		t.Fatalf("session token %q is not in the multi-region shape <range>:1#<lsn>#<region>=<lsn>…", tok)
	}
	global, _ := strconv.ParseInt(m[2], 10, 64)
	regions := map[string]int64{}
	for _, seg := range strings.Split(strings.TrimPrefix(m[3], "#"), "#") {
		id, lsn, _ := strings.Cut(seg, "=")
		regions[id], _ = strconv.ParseInt(lsn, 10, 64)
	}
	return global, regions
}

func TestSessionTokensAreInTheMultiRegionShape(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	first := c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
	second := c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"2","pk":"a"}`)
	read := c.mustDo(s.Endpoint(), "GET", itemPath("1"), pk)
	g1, r1 := progressOf(t, first.SessionToken)
	g2, _ := progressOf(t, second.SessionToken)
	g3, r3 := progressOf(t, read.SessionToken)
	if g2 != g1+1 || g3 != g2 {
		t.Errorf("global LSNs create %d, create %d, read %d: want consecutive writes and the read at the last", g1, g2, g3)
	}
	if len(r1) != len(s.Regions()) || len(r3) != len(r1) {
		t.Errorf("region progress %v and %v: want every one of the %d regions, always the same set", r1, r3, len(s.Regions()))
	}
	for id, lsn := range r3 {
		if lsn != g3 {
			t.Errorf("region %s progress %d, want the global LSN %d without replication lag", id, lsn, g3)
		}
	}
	// Errors that know the range carry a token too, in the same shape.
	dup, _ := c.do(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
	if dup.StatusCode != 409 {
		t.Fatalf("duplicate create → %d", dup.StatusCode)
	}
	progressOf(t, dup.SessionToken)
}

func TestSessionTokenShowsARegionWhoseWritesHaveNotArrived(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	s := startWithClock(t, clk, func(c *Config) { c.MultiWrite = true; c.ReplicationLag = faults.Duration(time.Second) })
	c := newTestClientAt(t, s.Key(), clk)
	pk := pkHeader(`["a"]`)
	east, west := regionURL(t, s, "East US"), regionURL(t, s, "West US")
	c.mustDo(east, "POST", itemsPath(), pk, `{"id":"e","pk":"a"}`)
	clk.Advance(2 * time.Second)
	w := c.mustDo(west, "POST", itemsPath(), pk, `{"id":"w","pk":"a"}`)
	wGlobal, _ := progressOf(t, w.SessionToken)

	// East has not received West's write yet: its progress for West (region 1) stops
	// before it, its own is complete.
	r := c.mustDo(east, "GET", itemPath("e"), pk)
	global, progress := progressOf(t, r.SessionToken)
	if global != wGlobal-1 || progress["1"] != wGlobal-1 || progress["0"] != global {
		t.Errorf("East's token %q while West's write %d is in flight: want global and West's progress %d", r.SessionToken, wGlobal, wGlobal-1)
	}
	clk.Advance(2 * time.Second)
	r = c.mustDo(east, "GET", itemPath("e"), pk)
	if global, progress := progressOf(t, r.SessionToken); global != wGlobal || progress["1"] != wGlobal {
		t.Errorf("East's token %q after the lag: want everything up to %d", r.SessionToken, wGlobal)
	}
}

func TestSessionReadsAcceptBothTokenShapes(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	w := c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
	rng, _, _ := strings.Cut(w.SessionToken, ":")
	global, _ := progressOf(t, w.SessionToken)
	g, ahead := strconv.FormatInt(global, 10), strconv.FormatInt(global+5, 10)
	cases := []struct {
		name  string
		token string
		want  int
	}{
		{"the token a write returned", w.SessionToken, 200},
		{"the simple shape, satisfied", rng + ":-1#" + g, 200},
		{"the simple shape, ahead of the region", rng + ":-1#" + ahead, 404},
		{"the multi-region shape, ahead of the region", rng + ":1#" + ahead + "#0=" + ahead + "#1=3", 404},
		{"no range prefix, ahead", "-1#" + ahead, 404},
		{"another range's token demands nothing here", "zz:-1#" + ahead, 200},
		{"several ranges, one of them this one", "zz:1#1#0=1," + rng + ":1#" + g + "#0=" + g, 200},
		{"unparsable tokens demand nothing", rng + ":None", 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hdr := merge(pk, map[string]string{cosmos.HeaderSessionToken: tc.token})
			resp, _ := c.do(s.Endpoint(), "GET", itemPath("1"), hdr, nil)
			st, sub := statusOf(t, resp, nil)
			if st != tc.want || (st == 404 && sub != cosmos.SubReadSessionNotAvailable) {
				t.Errorf("read with session token %q → %d/%d, want %d", tc.token, st, sub, tc.want)
			}
		})
	}
}

func TestVectorSessionTokenNeverShowsProgressBeyondTheGlobalLSN(t *testing.T) {
	if got := vectorSessionToken("3", 7, []int64{9, 5}); got != "3:1#7#0=7#1=5" {
		t.Errorf("vectorSessionToken = %q", got)
	}
}
