package health

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
)

var (
	start   = time.Date(2025, 3, 4, 12, 2, 21, 0, time.UTC)
	regions = []string{"East US", "West US", "North Europe"}
)

type harness struct {
	t   *testing.T
	clk *clock.Fake
	s   *Store
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	clk := clock.NewFake(start)
	s, err := New(cfg, clk)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, clk: clk, s: s}
}

// fail records n failures of region, one every gap.
func (h *harness) fail(region string, kind Kind, cause Cause, n int, gap time.Duration) {
	for i := range n {
		if i > 0 {
			h.clk.Advance(gap)
		}
		h.s.Failure(region, "", kind, cause)
	}
}

// trip makes region unavailable for reads with 3 timeouts, now.
func (h *harness) trip(region string) { h.fail(region, Read, Timeout, 3, 0) }

func (h *harness) order(kind Kind) Ordering { return h.s.Order(regions, "", kind) }

func (h *harness) wantOrder(o Ordering, want ...string) {
	h.t.Helper()
	if !slices.Equal(o.Regions, want) {
		h.t.Errorf("order = %q, want %q", o.Regions, want)
	}
}

func (h *harness) wantAvailable(kind Kind) {
	h.t.Helper()
	o := h.order(kind)
	h.wantOrder(o, regions...)
	if len(o.Unavailable) != 0 || o.Probe.Granted() {
		h.t.Errorf("with every region available: notes %v, probe %v", o.Unavailable, o.Probe.Granted())
	}
}

// wantDown checks that East US is unavailable: last, and not granted a probe.
func (h *harness) wantEastLast(kind Kind) {
	h.t.Helper()
	o := h.order(kind)
	h.wantOrder(o, "West US", "North Europe", "East US")
	if o.Probe.Granted() {
		h.t.Errorf("probe granted for %s, want none", o.Probe.Region())
		o.Probe.Abandoned()
	}
}

func (h *harness) grant(kind Kind) Probe {
	h.t.Helper()
	o := h.order(kind)
	if !o.Probe.Granted() {
		h.t.Fatalf("no probe granted; order %q, notes %v", o.Regions, o.Unavailable)
	}
	h.wantOrder(o, regions...) // the probed region keeps its place
	return o.Probe
}

func (h *harness) entry(region, rangeID string, kind Kind) Entry {
	h.t.Helper()
	for _, e := range h.s.Entries() {
		if e.Region == region && e.PartitionKeyRangeID == rangeID && e.Kind == kind {
			return e
		}
	}
	h.t.Fatalf("no entry for %s/%q/%s", region, rangeID, kind)
	return Entry{}
}

func TestStateModel(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"two read failures leave a region available; the third makes it unavailable", func(t *testing.T, h *harness) {
			h.fail("East US", Read, Timeout, 2, time.Second)
			h.wantAvailable(Read)
			h.s.Failure("East US", "", Read, Timeout)
			h.wantEastLast(Read)
		}},
		{"five write failures leave a region available; the sixth makes it unavailable", func(t *testing.T, h *harness) {
			h.fail("East US", Write, Unavailable, 5, time.Second)
			h.wantAvailable(Write)
			h.s.Failure("East US", "", Write, Unavailable)
			h.wantEastLast(Write)
		}},
		{"reads and writes are counted apart", func(t *testing.T, h *harness) {
			h.trip("East US")
			h.wantAvailable(Write)
			h.fail("East US", Write, Timeout, 2, time.Second)
			h.wantAvailable(Write)
		}},
		{"failures of different causes add up", func(t *testing.T, h *harness) {
			h.s.Failure("East US", "", Read, Timeout)
			h.s.Failure("East US", "", Read, Unreachable)
			h.s.Failure("East US", "", Read, Gone)
			h.wantEastLast(Read)
		}},
		{"a success between failures does not erase the counts of the window", func(t *testing.T, h *harness) {
			h.fail("East US", Read, Timeout, 2, time.Second)
			h.s.Success("East US", "", Read)
			h.s.Failure("East US", "", Read, Timeout)
			h.wantEastLast(Read)
		}},
		{"five quiet minutes start the count again", func(t *testing.T, h *harness) {
			h.fail("East US", Read, Timeout, 2, time.Second)
			h.clk.Advance(5*time.Minute + time.Second)
			if got := h.entry("East US", "", Read).Failures; len(got) != 0 {
				t.Errorf("failures after a quiet window = %v, want none", got)
			}
			h.fail("East US", Read, Timeout, 2, time.Second)
			h.wantAvailable(Read)
			h.s.Failure("East US", "", Read, Timeout)
			h.wantEastLast(Read)
		}},
		{"failures less than five minutes apart keep the window open", func(t *testing.T, h *harness) {
			h.fail("East US", Read, Timeout, 3, 4*time.Minute)
			h.wantEastLast(Read)
		}},
		{"five hedge losses in a row make a region unavailable", func(t *testing.T, h *harness) {
			for range 4 {
				h.s.HedgeLost("East US", "", Read)
			}
			h.wantAvailable(Read)
			h.s.HedgeLost("East US", "", Read)
			h.wantEastLast(Read)
			if note := h.order(Read).Unavailable[0].Text; !strings.Contains(note, "lost 5 hedge races in a row") {
				t.Errorf("note = %q, want it to say the hedges were lost", note)
			}
		}},
		{"a success as winner ends the hedge-loss streak", func(t *testing.T, h *harness) {
			for range 4 {
				h.s.HedgeLost("East US", "", Read)
			}
			h.s.Success("East US", "", Read)
			for range 4 {
				h.s.HedgeLost("East US", "", Read)
			}
			h.wantAvailable(Read)
			if got := h.entry("East US", "", Read).HedgeLossStreak; got != 4 {
				t.Errorf("hedge-loss streak = %d, want 4", got)
			}
		}},
		{"unavailable regions go to the end in their usual order, never removed", func(t *testing.T, h *harness) {
			h.trip("North Europe")
			h.trip("East US")
			o := h.order(Read)
			h.wantOrder(o, "West US", "East US", "North Europe")
			if len(o.Unavailable) != 2 || o.Unavailable[0].Region != "East US" || o.Unavailable[1].Region != "North Europe" {
				t.Errorf("notes = %v, want one for East US and one for North Europe", o.Unavailable)
			}
		}},
		{"no probe before ProbeAfter", func(t *testing.T, h *harness) {
			h.trip("East US")
			h.clk.Advance(5*time.Second - time.Millisecond)
			h.wantEastLast(Read)
		}},
		{"after ProbeAfter one operation may probe, in the region's usual place", func(t *testing.T, h *harness) {
			h.trip("East US")
			h.clk.Advance(5 * time.Second)
			p := h.grant(Read)
			if p.Region() != "East US" {
				t.Errorf("probe granted for %s, want East US", p.Region())
			}
			if want := "East US: 3 timeouts, unavailable, its period over: probed now"; p.Note() != want {
				t.Errorf("probe note = %q, want %q", p.Note(), want)
			}
			if got := h.entry("East US", "", Read).Status; got != StatusProbing {
				t.Errorf("status = %s, want probing", got)
			}
		}},
		{"while a probe is in flight, other operations use the region last", func(t *testing.T, h *harness) {
			h.trip("East US")
			h.clk.Advance(5 * time.Second)
			h.grant(Read)
			h.wantEastLast(Read)
			h.clk.Advance(time.Minute)
			h.wantEastLast(Read)
			if note := h.order(Read).Unavailable[0].Text; !strings.Contains(note, "one probe request in flight since 12:02:26") {
				t.Errorf("note = %q, want it to say a probe is in flight", note)
			}
		}},
		{"a probe that succeeds makes the region available with clean counts", func(t *testing.T, h *harness) {
			h.trip("East US")
			h.clk.Advance(5 * time.Second)
			h.grant(Read).Succeeded()
			h.wantAvailable(Read)
			e := h.entry("East US", "", Read)
			if e.Status != StatusAvailable || len(e.Failures) != 0 || !e.UnavailableUntil.IsZero() {
				t.Errorf("after a successful probe: %+v", e)
			}
			h.fail("East US", Read, Timeout, 2, time.Second)
			h.wantAvailable(Read) // counting starts again from zero
		}},
		{"a probe that fails doubles the unavailable period, up to MaxProbeInterval", func(t *testing.T, h *harness) {
			h.trip("East US")
			h.clk.Advance(5 * time.Second)
			for _, period := range []time.Duration{10, 20, 40, 60, 60} {
				period *= time.Second
				h.grant(Read).Failed()
				h.clk.Advance(period - time.Millisecond)
				h.wantEastLast(Read)
				h.clk.Advance(time.Millisecond)
				if got := h.entry("East US", "", Read).ProbeIntervalMs; got != float64(period.Milliseconds()) {
					t.Errorf("probe interval = %vms, want %v", got, period)
				}
			}
		}},
		{"a failure recorded for the probe attempt is the same verdict, not a second one", func(t *testing.T, h *harness) {
			h.trip("East US")
			h.clk.Advance(5 * time.Second)
			p := h.grant(Read)
			h.s.Failure("East US", "", Read, Timeout)
			p.Failed()
			if got := h.entry("East US", "", Read).ProbeIntervalMs; got != 10000 {
				t.Errorf("probe interval = %vms, want 10000 (doubled once)", got)
			}
		}},
		{"a probe that loses its hedge race keeps the region unavailable", func(t *testing.T, h *harness) {
			h.trip("East US")
			h.clk.Advance(5 * time.Second)
			p := h.grant(Read)
			h.s.HedgeLost("East US", "", Read)
			p.Abandoned()
			h.wantEastLast(Read)
			h.clk.Advance(10 * time.Second)
			h.grant(Read)
		}},
		{"an abandoned probe frees the slot for the next operation", func(t *testing.T, h *harness) {
			h.trip("East US")
			h.clk.Advance(5 * time.Second)
			h.grant(Read).Abandoned()
			h.grant(Read)
		}},
		{"a probe slot held past ProbeHold is given to another operation; the old verdict is ignored", func(t *testing.T, h *harness) {
			h.trip("East US")
			h.clk.Advance(5 * time.Second)
			lost := h.grant(Read)
			h.clk.Advance(2*time.Minute - time.Millisecond)
			h.wantEastLast(Read)
			h.clk.Advance(time.Millisecond)
			fresh := h.grant(Read)
			lost.Succeeded()
			if got := h.entry("East US", "", Read).Status; got != StatusProbing {
				t.Errorf("status after the stale ticket's verdict = %s, want probing", got)
			}
			fresh.Failed()
			h.wantEastLast(Read)
		}},
		{"settling a ticket twice, or the zero ticket, does nothing", func(t *testing.T, h *harness) {
			Probe{}.Succeeded()
			h.trip("East US")
			h.clk.Advance(5 * time.Second)
			p := h.grant(Read)
			p.Failed()
			p.Failed()
			p.Succeeded()
			if got := h.entry("East US", "", Read); got.Status != StatusUnavailable || got.ProbeIntervalMs != 10000 {
				t.Errorf("after settling twice: %s, interval %vms; want unavailable, 10000", got.Status, got.ProbeIntervalMs)
			}
		}},
		{"at most one probe per operation", func(t *testing.T, h *harness) {
			h.trip("East US")
			h.trip("West US")
			h.clk.Advance(5 * time.Second)
			o := h.order(Read)
			if o.Probe.Region() != "East US" {
				t.Errorf("probe for %q, want East US", o.Probe.Region())
			}
			h.wantOrder(o, "East US", "North Europe", "West US")
			if p := h.order(Read).Probe; p.Region() != "West US" {
				t.Errorf("second operation's probe for %q, want West US", p.Region())
			}
		}},
		{"an answer from an unavailable region makes it available", func(t *testing.T, h *harness) {
			h.trip("East US")
			h.s.Success("East US", "", Read)
			h.wantAvailable(Read)
		}},
		{"when every region is unavailable the usual order stands", func(t *testing.T, h *harness) {
			for _, r := range regions {
				h.trip(r)
			}
			o := h.order(Read)
			h.wantOrder(o, regions...)
			if !o.AllUnavailable || len(o.Unavailable) != 3 || o.Probe.Granted() {
				t.Errorf("all unavailable = %v, %d notes, probe %v; want true, 3, none", o.AllUnavailable, len(o.Unavailable), o.Probe.Granted())
			}
		}},
		{"when every region is unavailable, one whose period is over is probed first", func(t *testing.T, h *harness) {
			for _, r := range []string{"West US", "East US", "North Europe"} {
				h.trip(r)
				h.clk.Advance(2 * time.Second)
			}
			o := h.order(Read) // West US's period is over, not the others'
			h.wantOrder(o, "West US", "East US", "North Europe")
			if o.Probe.Region() != "West US" || o.AllUnavailable {
				t.Errorf("probe for %q, all unavailable %v; want West US, false", o.Probe.Region(), o.AllUnavailable)
			}
		}},
		{"a range-level record makes the region unavailable for that range only", func(t *testing.T, h *harness) {
			for range 3 {
				h.s.Failure("East US", "7", Read, Gone)
			}
			h.wantOrder(h.s.Order(regions, "7", Read), "West US", "North Europe", "East US")
			h.wantOrder(h.s.Order(regions, "8", Read), regions...)
			h.wantOrder(h.s.Order(regions, "", Read), regions...)
			if note := h.s.Order(regions, "7", Read).Unavailable[0].Text; !strings.HasPrefix(note, "East US, partition key range 7: 3 410s") {
				t.Errorf("note = %q, want it to name the range", note)
			}
		}},
		{"a region-level record makes the region unavailable for every range", func(t *testing.T, h *harness) {
			h.trip("East US")
			h.wantOrder(h.s.Order(regions, "7", Read), "West US", "North Europe", "East US")
		}},
		{"range-level and region-level failures are counted apart", func(t *testing.T, h *harness) {
			h.fail("East US", Read, Timeout, 2, time.Second)
			h.s.Failure("East US", "7", Read, Timeout)
			h.wantOrder(h.s.Order(regions, "7", Read), regions...)
		}},
		{"a probe through a range covers the region and the range", func(t *testing.T, h *harness) {
			h.trip("East US")
			for range 3 {
				h.s.Failure("East US", "7", Read, Gone)
			}
			h.clk.Advance(5 * time.Second)
			o := h.s.Order(regions, "7", Read)
			if o.Probe.Region() != "East US" {
				t.Fatalf("no probe granted through range 7: %v", o.Unavailable)
			}
			o.Probe.Succeeded()
			h.wantOrder(h.s.Order(regions, "7", Read), regions...)
			h.wantAvailable(Read)
		}},
		{"the note says what happened and when the region is tried again", func(t *testing.T, h *harness) {
			h.fail("East US", Read, Timeout, 3, 20*time.Second) // 12:02:21, 12:02:41, 12:03:01
			h.clk.Advance(time.Second)
			want := "East US: 3 timeouts in 40s, unavailable until 12:03:06, then one probe request"
			if got := h.order(Read).Unavailable[0].Text; got != want {
				t.Errorf("note = %q\nwant   %q", got, want)
			}
		}},
		{"the note counts every cause, most frequent first, and failed probes", func(t *testing.T, h *harness) {
			h.s.Failure("East US", "", Read, Unavailable)
			h.clk.Advance(300 * time.Millisecond)
			h.s.Failure("East US", "", Read, Timeout)
			h.s.Failure("East US", "", Read, Timeout)
			h.clk.Advance(5 * time.Second)
			h.grant(Read).Failed()
			want := "East US: 2 timeouts and 1 503 in 300ms, 1 failed probe, unavailable until 12:02:36, then one probe request"
			if got := h.order(Read).Unavailable[0].Text; got != want {
				t.Errorf("note = %q\nwant   %q", got, want)
			}
		}},
		{"Reset forgets everything", func(t *testing.T, h *harness) {
			h.trip("East US")
			h.s.Reset()
			h.wantAvailable(Read)
			if got := h.s.Entries(); len(got) != 0 {
				t.Errorf("entries after Reset = %v", got)
			}
		}},
		{"what is known of a region expires after 30 minutes without an event", func(t *testing.T, h *harness) {
			h.trip("East US")
			h.clk.Advance(30*time.Minute + time.Second)
			h.wantAvailable(Read)
			if got := h.s.Entries(); len(got) != 0 {
				t.Errorf("entries after EntryTTL = %v", got)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newHarness(t, Config{})) })
	}
}

func TestCauseOf(t *testing.T) {
	for _, tc := range []struct {
		status, sub int
		want        Cause
		failure     bool
	}{
		{503, 0, Unavailable, true},
		{500, 0, ServerError, true},
		{408, 0, RequestTimeout, true},
		{410, 1002, Gone, true},
		{410, 0, Gone, true},
		{429, 3200, 0, false}, // throttling: the account is busy, the region is fine
		{200, 0, 0, false},
		{201, 0, 0, false},
		{404, 0, 0, false},
		{404, 1002, 0, false},
		{409, 0, 0, false},
		{412, 0, 0, false},
		{449, 0, 0, false},
	} {
		if got, failure := CauseOf(tc.status, tc.sub); got != tc.want || failure != tc.failure {
			t.Errorf("CauseOf(%d/%d) = %v, %v; want %v, %v", tc.status, tc.sub, got, failure, tc.want, tc.failure)
		}
	}
}

func TestConcurrentOperationsGetExactlyOneProbe(t *testing.T) {
	h := newHarness(t, Config{})
	h.trip("East US")
	h.clk.Advance(5 * time.Second)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		grants []Probe
	)
	ready := make(chan struct{})
	for range 64 {
		wg.Go(func() {
			<-ready
			if o := h.order(Read); o.Probe.Granted() {
				mu.Lock()
				grants = append(grants, o.Probe)
				mu.Unlock()
			}
		})
	}
	close(ready)
	wg.Wait()
	if len(grants) != 1 {
		t.Fatalf("%d operations were granted a probe, want exactly 1", len(grants))
	}
	grants[0].Abandoned()
	h.grant(Read)
}

func TestSnapshotMergeRoundTrip(t *testing.T) {
	h := newHarness(t, Config{})
	h.trip("East US")
	h.fail("West US", Write, ServerError, 2, time.Second)
	h.s.HedgeLost("North Europe", "3", Read)
	h.s.Success("North Europe", "3", Read)
	h.clk.Advance(5 * time.Second)
	p := h.grant(Read)
	h.s.Failure("East US", "", Read, Timeout)
	p.Failed() // East US: one failed probe, 10s period
	h.clk.Advance(time.Second)

	b, err := json.Marshal(h.s.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	next := newHarness(t, Config{})
	next.clk.Advance(h.clk.Now().Sub(start))
	next.s.Merge(st)

	if got, want := next.s.Entries(), h.s.Entries(); !reflect.DeepEqual(got, want) {
		t.Errorf("entries after a round trip:\n%s\nwant\n%s", jsonOf(t, got), jsonOf(t, want))
	}
	next.wantEastLast(Read)
	next.clk.Advance(9 * time.Second)
	if p := next.order(Read).Probe; p.Region() != "East US" {
		t.Errorf("merged state: probe for %q at the end of the period, want East US", p.Region())
	}
	for _, field := range []string{`"region":"East US"`, `"kind":"read"`, `"failures":{"timeout":4}`, `"unavailable_until":"2025-03-04T12:02:37Z"`, `"probe_interval_ms":10000`, `"last_event":`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("snapshot JSON has no %s:\n%s", field, b)
		}
	}
}

func TestSnapshotDropsAHeldProbeSlot(t *testing.T) {
	h := newHarness(t, Config{})
	h.trip("East US")
	h.clk.Advance(5 * time.Second)
	h.grant(Read) // held, never settled: this process is about to exit
	next := newHarness(t, Config{})
	next.clk.Advance(h.clk.Now().Sub(start))
	next.s.Merge(h.s.Snapshot())
	if p := next.order(Read).Probe; p.Region() != "East US" {
		t.Errorf("the next process cannot probe East US (probe %q): the slot was persisted as held", p.Region())
	}
}

func TestMerge(t *testing.T) {
	at := func(d time.Duration) time.Time { return start.Add(d) }
	down := StateEntry{Region: "East US", Kind: Read, Failures: map[Cause]int{Timeout: 3},
		LastFailure: at(0), UnavailableSince: at(0), UnavailableUntil: at(5 * time.Second), LastEvent: at(0)}
	for _, tc := range []struct {
		name     string
		local    func(h *harness)
		incoming []StateEntry
		wantDown bool
	}{
		{"a newer entry replaces the local one", func(h *harness) {
			h.s.Failure("East US", "", Read, Timeout)
			h.clk.Advance(time.Minute)
		}, []StateEntry{with(down, func(e *StateEntry) { e.LastEvent = at(30 * time.Second) })}, true},
		{"an older entry leaves the local one", func(h *harness) {
			h.clk.Advance(time.Minute)
			h.s.Failure("East US", "", Read, Timeout)
		}, []StateEntry{with(down, func(e *StateEntry) { e.LastEvent = at(30 * time.Second) })}, false},
		{"an entry whose last event is 30 minutes old is ignored", func(h *harness) {
			h.clk.Advance(30*time.Minute + time.Second)
		}, []StateEntry{down}, false},
		{"an entry of no region is ignored", func(h *harness) {},
			[]StateEntry{with(down, func(e *StateEntry) { e.Region = "" })}, false},
		{"an unavailable period is cut to MaxProbeInterval from now", func(h *harness) {},
			[]StateEntry{with(down, func(e *StateEntry) { e.UnavailableUntil = at(24 * time.Hour) })}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			tc.local(h)
			h.s.Merge(State{Entries: tc.incoming})
			down := false
			for _, e := range h.s.Entries() {
				down = down || e.Status != StatusAvailable
				if limit := h.clk.Now().Add(time.Minute); e.UnavailableUntil.After(limit) {
					t.Errorf("unavailable until %s, more than MaxProbeInterval from now", e.UnavailableUntil)
				}
			}
			if down != tc.wantDown {
				t.Errorf("after Merge, East US unavailable = %v, want %v", down, tc.wantDown)
			}
		})
	}
}

func with(e StateEntry, f func(*StateEntry)) StateEntry {
	e.Failures = map[Cause]int{Timeout: 3}
	f(&e)
	return e
}

func TestEntries(t *testing.T) {
	h := newHarness(t, Config{})
	h.s.Failure("West US", "", Write, Unavailable)
	h.s.Failure("East US", "2", Read, Timeout)
	h.fail("East US", Read, Timeout, 3, 20*time.Second)
	h.s.HedgeLost("East US", "", Write)
	got := h.s.Entries()
	var keys []string
	for _, e := range got {
		keys = append(keys, fmt.Sprintf("%s/%s/%s=%s", e.Region, e.PartitionKeyRangeID, e.Kind, e.Status))
	}
	want := []string{"East US//read=unavailable", "East US//write=available", "East US/2/read=available", "West US//write=available"}
	if !slices.Equal(keys, want) {
		t.Errorf("entries = %q, want %q", keys, want)
	}
	b := jsonOf(t, got[0])
	// The vocabulary of docs/json: times in *_at fields, null for what is not known.
	wantJSON := `{"region":"East US","partition_key_range_id":null,"kind":"read","status":"unavailable","failures":{"timeout":3},` +
		`"first_failure_at":"2025-03-04T12:02:21Z","last_failure_at":"2025-03-04T12:03:01Z","last_failure_cause":"timeout",` +
		`"hedge_loss_streak":0,"last_hedge_loss_at":null,"last_success_at":null,"unavailable_at":"2025-03-04T12:03:01Z",` +
		`"unavailable_until_at":"2025-03-04T12:03:06Z","probe_interval_ms":5000,"failed_probes":0,"probe_started_at":null,` +
		`"note":"East US: 3 timeouts in 40s, unavailable until 12:03:06, then one probe request"}`
	if b != wantJSON {
		t.Errorf("entry JSON:\n%s\nwant\n%s", b, wantJSON)
	}
}

func TestConfig(t *testing.T) {
	clk := clock.NewFake(start)
	s, err := New(Config{}, clk)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{ReadFailures: 2, WriteFailures: 5, HedgeLosses: 5, ResetAfter: 5 * time.Minute, ProbeAfter: 5 * time.Second,
		MaxProbeInterval: time.Minute, ProbeHold: 2 * time.Minute, EntryTTL: 30 * time.Minute}
	if got := s.Config(); got != want {
		t.Errorf("defaults = %+v\nwant       %+v", got, want)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{ReadFailures: -1}, "region health ReadFailures must not be negative (got -1)"},
		{Config{WriteFailures: -1}, "WriteFailures must not be negative"},
		{Config{HedgeLosses: -2}, "HedgeLosses must not be negative (got -2)"},
		{Config{ResetAfter: -time.Second}, "ResetAfter must not be negative (got -1s)"},
		{Config{ProbeAfter: -1}, "ProbeAfter must not be negative"},
		{Config{MaxProbeInterval: -1}, "MaxProbeInterval must not be negative"},
		{Config{ProbeHold: -1}, "ProbeHold must not be negative"},
		{Config{EntryTTL: -1}, "EntryTTL must not be negative"},
		{Config{ProbeAfter: 2 * time.Minute, MaxProbeInterval: time.Minute}, "MaxProbeInterval (1m0s) must not be less than ProbeAfter (2m0s)"},
	} {
		_, err := New(tc.cfg, clk)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("New(%+v) = %v, want one line containing %q", tc.cfg, err, tc.want)
		}
	}
	if s, err := New(Config{ProbeAfter: 2 * time.Minute}, clk); err != nil || s.Config().MaxProbeInterval != 2*time.Minute {
		t.Errorf("a long ProbeAfter alone: %v; want MaxProbeInterval to follow it", err)
	}
	if _, err := New(Config{}, nil); err == nil {
		t.Error("New without a clock succeeded")
	}
}

// TestConcurrentUse is for the race detector: every method at once.
func TestConcurrentUse(t *testing.T) {
	h := newHarness(t, Config{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 300 {
				r := regions[(g+i)%3]
				switch i % 7 {
				case 0, 1:
					h.s.Failure(r, "", Read, Timeout)
				case 2:
					h.s.HedgeLost(r, fmt.Sprint(i%3), Read)
				case 3:
					h.s.Success(r, "", Read)
				case 4:
					if o := h.s.Order(regions, fmt.Sprint(i%3), Read); o.Probe.Granted() {
						if i%2 == 0 {
							o.Probe.Failed()
						} else {
							o.Probe.Succeeded()
						}
					}
				case 5:
					h.s.Merge(h.s.Snapshot())
					h.s.Entries()
				case 6:
					h.clk.Advance(time.Second)
				}
			}
		})
	}
	wg.Wait()
	h.s.Reset()
	h.wantAvailable(Read)
}

func TestOrderAllocatesNothingWhenNothingIsUnavailable(t *testing.T) {
	h := newHarness(t, Config{})
	if n := testing.AllocsPerRun(100, func() { h.order(Read) }); n != 0 {
		t.Errorf("Order with no record allocates %v times", n)
	}
	h.fail("East US", Read, Timeout, 2, time.Second)
	for range 3 {
		h.s.Failure("East US", "9", Read, Timeout) // another range: the slow path
	}
	if n := testing.AllocsPerRun(100, func() { h.s.Order(regions, "1", Read) }); n != 0 {
		t.Errorf("Order with nothing unavailable for this range allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { h.s.Success("West US", "", Read) }); n != 0 {
		t.Errorf("Success allocates %v times", n)
	}
}

func BenchmarkOrder(b *testing.B) {
	for _, bc := range []struct {
		name  string
		setup func(s *Store)
	}{
		{"nothing unavailable", func(*Store) {}},
		{"another range unavailable", func(s *Store) {
			for range 3 {
				s.Failure("East US", "9", Read, Timeout)
			}
		}},
		{"one region unavailable", func(s *Store) {
			for range 3 {
				s.Failure("East US", "", Read, Timeout)
			}
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s, _ := New(Config{}, clock.NewFake(start))
			bc.setup(s)
			b.ReportAllocs()
			for b.Loop() {
				s.Order(regions, "1", Read)
			}
		})
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
