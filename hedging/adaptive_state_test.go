package hedging

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
)

// clocked is an Adaptive on a fake clock that starts at t0.
func clocked(t testing.TB, cfg AdaptiveConfig) (*Adaptive, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(t0)
	cfg.Clock = clk
	return newAdaptive(t, cfg), clk
}

// series is n samples of latency lat, the first observed at from, then one every gap.
func series(from time.Time, gap time.Duration, n int, lat time.Duration) []AdaptiveSample {
	ss := make([]AdaptiveSample, n)
	for i := range ss {
		ss[i] = AdaptiveSample{ObservedAt: from.Add(time.Duration(i) * gap), LatencyNS: int64(lat)}
	}
	return ss
}

func reversed(ss []AdaptiveSample) []AdaptiveSample {
	ss = slices.Clone(ss)
	slices.Reverse(ss)
	return ss
}

func state(ops map[string][]AdaptiveSample) AdaptiveState {
	return AdaptiveState{Version: AdaptiveStateVersion, Operations: ops}
}

// counts is the number of samples of each operation kind in s.
func counts(s AdaptiveState) map[string]int {
	n := map[string]int{}
	for op, ss := range s.Operations {
		n[op] = len(ss)
	}
	return n
}

// checkWindows fails the test unless every window of a is consistent: its sorted
// samples are its ring's, its times never decrease, and it holds no more than its size.
func checkWindows(t testing.TB, a *Adaptive) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	for op, w := range a.ops {
		checkWindow(t, op, w)
	}
}

func checkWindow(t testing.TB, op string, w *window) {
	t.Helper()
	ss := w.samples(nil)
	if len(ss) > w.size() || len(w.sorted) != len(ss) {
		t.Fatalf("%s: %d samples, %d sorted, window of %d", op, len(ss), len(w.sorted), w.size())
	}
	lat := make([]time.Duration, len(ss))
	for i, s := range ss {
		lat[i] = s.lat
		if i > 0 && s.at < ss[i-1].at {
			t.Fatalf("%s: sample %d observed at %d, before the one before it (%d)", op, i, s.at, ss[i-1].at)
		}
	}
	slices.Sort(lat)
	if !slices.Equal(lat, w.sorted) {
		t.Fatalf("%s: sorted samples %v, want %v", op, w.sorted, lat)
	}
}

func TestSamplesAgeOutAfterMaxSampleAge(t *testing.T) {
	// Each case feeds old samples, waits gap, feeds recent ones, waits wait, then begins.
	cases := []struct {
		name        string
		cfg         AdaptiveConfig
		old         []sample
		gap         time.Duration
		recent      []sample
		wait        time.Duration
		want        time.Duration
		wantSamples int
	}{
		{"samples count for MaxSampleAge after they were observed", AdaptiveConfig{},
			answered("read", 200, 80*ms), 0, nil, 10 * time.Minute, 80 * ms, 200},
		{"samples older than MaxSampleAge no longer count: back to the fallback", AdaptiveConfig{},
			answered("read", 200, 80*ms), 0, nil, 10*time.Minute + time.Second, 500 * ms, 0},
		{"aged samples leave the warm-up count", AdaptiveConfig{},
			answered("read", 15, 80*ms), 5 * time.Minute, answered("read", 10, 20*ms), 6 * time.Minute, 500 * ms, 10},
		{"the threshold follows the samples that are left", AdaptiveConfig{},
			answered("read", 200, 300*ms), 5 * time.Minute, answered("read", 50, 20*ms), 6 * time.Minute, 20 * ms, 50},
		{"the window still bounds what counts", AdaptiveConfig{},
			answered("read", 100, 300*ms), 5 * time.Minute, answered("read", 200, 20*ms), 4 * time.Minute, 20 * ms, 200},
		{"a configured MaxSampleAge", AdaptiveConfig{MaxSampleAge: time.Minute},
			answered("read", 200, 80*ms), 0, nil, time.Minute + time.Second, 500 * ms, 0},
		{"a long MaxSampleAge keeps a day's samples", AdaptiveConfig{MaxSampleAge: 48 * time.Hour},
			answered("read", 200, 80*ms), 0, nil, 24 * time.Hour, 80 * ms, 200},
		{"each kind ages on its own", AdaptiveConfig{},
			answered("read", 200, 80*ms), 5 * time.Minute, answered("create", 200, 20*ms), 6 * time.Minute, 500 * ms, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, clk := clocked(t, c.cfg)
			feed(a, c.old)
			clk.Advance(c.gap)
			feed(a, c.recent)
			clk.Advance(c.wait)
			// Begin first: it ages the window by itself, without Stats having looked.
			p := a.Begin("read").(*AdaptivePlan)
			if p.Threshold() != c.want || int(p.samples) != c.wantSamples {
				t.Fatalf("plan threshold %v from %d samples, want %v from %d (%s)", p.Threshold(), p.samples, c.want, c.wantSamples, p)
			}
			if th, n, _ := a.Stats("read"); th != c.want || n != c.wantSamples {
				t.Fatalf("Stats = %v from %d samples, want %v from %d", th, n, c.want, c.wantSamples)
			}
			if got := a.Export().Operations["read"]; len(got) != c.wantSamples {
				t.Fatalf("Export has %d read samples, want the %d that count", len(got), c.wantSamples)
			}
			checkWindows(t, a)
		})
	}
}

func TestAgedOutKindWarmsUpAgainAndLearns(t *testing.T) {
	a, clk := clocked(t, AdaptiveConfig{MinSamples: 5, Window: 10})
	feed(a, answered("read", 10, 300*ms))
	clk.Advance(11 * time.Minute)
	if got := a.Begin("read").String(); !strings.HasPrefix(got, "adaptive threshold=500ms (fallback: 0 of 5 read samples)") {
		t.Fatalf("after every sample aged out: %s", got)
	}
	feed(a, answered("read", 5, 20*ms))
	if th, n, _ := a.Stats("read"); th != 20*ms || n != 5 {
		t.Fatalf("relearned %v from %d samples, want 20ms from 5", th, n)
	}
	checkWindows(t, a)
}

func TestExportImportRoundTripThroughJSON(t *testing.T) {
	a, clk := clocked(t, AdaptiveConfig{})
	feed(a, shuffled1to("read", 150))
	clk.Advance(2 * time.Minute)
	feed(a, shuffled1to("read", 150), answered("create", 30, 40*ms))
	clk.Advance(time.Minute)
	feed(a, answered("upsert", 5, 7*ms))
	clk.Advance(time.Second)

	data, err := json.Marshal(a.Export())
	if err != nil {
		t.Fatal(err)
	}
	var back AdaptiveState
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	b, _ := clocked(t, AdaptiveConfig{})
	b.cfg.Clock.(*clock.Fake).Advance(3*time.Minute + time.Second) // the same instant as a's clock
	b.Import(back)
	checkWindows(t, b)
	for _, op := range []string{"read", "create", "upsert", "delete"} {
		wth, wn, _ := a.Stats(op)
		gth, gn, _ := b.Stats(op)
		if gth != wth || gn != wn {
			t.Errorf("%s: imported threshold %v from %d samples, exported %v from %d", op, gth, gn, wth, wn)
		}
	}
	if got, want := b.Begin("read").String(), a.Begin("read").String(); got != want {
		t.Errorf("imported plan %s\nexported plan %s", got, want)
	}
	again, _ := json.Marshal(b.Export())
	if string(again) != string(data) {
		t.Errorf("export after import differs:\n%s\n%s", again, data)
	}
}

func TestExportedStateIsStableJSON(t *testing.T) {
	a, clk := clocked(t, AdaptiveConfig{})
	a.Begin("read").Done(12*ms, true)
	clk.Advance(time.Second)
	a.Begin("read").Done(8500*time.Microsecond, true)
	a.Begin("create").Done(-ms, true) // a negative latency is learned as 0
	a.Begin("delete").Done(ms, false) // nothing learned: the kind is left out
	data, err := json.Marshal(a.Export())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":1,"operations":{` +
		`"create":[{"observed_at":"2026-03-01T12:00:01Z","latency_ns":0}],` +
		`"read":[{"observed_at":"2026-03-01T12:00:00.012Z","latency_ns":12000000},{"observed_at":"2026-03-01T12:00:01.0085Z","latency_ns":8500000}]}}`
	if string(data) != want {
		t.Fatalf("JSON\n  %s\nwant\n  %s", data, want)
	}
	empty, _ := json.Marshal(newAdaptive(t, AdaptiveConfig{}).Export())
	if string(empty) != `{"version":1,"operations":{}}` {
		t.Fatalf("empty state %s", empty)
	}
}

func TestTheNextProcessStartsFromWhatEarlierOnesLearned(t *testing.T) {
	first, clk := clocked(t, AdaptiveConfig{})
	feed(first, answered("read", 100, 30*ms))
	clk.Advance(5 * time.Minute)
	feed(first, answered("read", 100, 20*ms))
	saved := first.Export()

	clk.Advance(time.Minute) // the next invocation, a minute later
	next := newAdaptive(t, AdaptiveConfig{Clock: clk})
	next.Import(saved)
	want := "adaptive threshold=30ms (p99 of 200 read samples, newest 1m, oldest 6m) step=250ms budget=10%"
	if got := next.Begin("read").String(); got != want {
		t.Fatalf("first operation of the next process:\n  %s\nwant\n  %s", got, want)
	}
	clk.Advance(5 * time.Minute) // the older half ages out
	want = "adaptive threshold=20ms (p99 of 100 read samples, newest 6m, oldest 6m) step=250ms budget=10%"
	if got := next.Begin("read").String(); got != want {
		t.Fatalf("after the older half aged out:\n  %s\nwant\n  %s", got, want)
	}
}

func TestImportIntoAProcessThatAlreadyHasSamples(t *testing.T) {
	// The process observes its samples from t0 on (one per operation, the clock not
	// moving: 1ns apart), then its clock moves to t0+1m and it imports.
	cases := []struct {
		name        string
		cfg         AdaptiveConfig
		process     []sample
		file        func(own AdaptiveState) AdaptiveState
		want        time.Duration
		wantSamples int
	}{
		{"the file's samples and the process's combine", AdaptiveConfig{}, answered("read", 10, 20*ms),
			func(AdaptiveState) AdaptiveState {
				return state(map[string][]AdaptiveSample{"read": series(t0.Add(-time.Minute), time.Second, 15, 20*ms)})
			}, 20 * ms, 25},
		{"over the window the newest are kept: newer samples from the file", AdaptiveConfig{Window: 20}, answered("read", 20, 20*ms),
			func(AdaptiveState) AdaptiveState {
				return state(map[string][]AdaptiveSample{"read": series(t0.Add(time.Second), time.Second, 20, 300*ms)})
			}, 300 * ms, 20},
		{"over the window the newest are kept: the process's own newer samples", AdaptiveConfig{Window: 20}, answered("read", 20, 20*ms),
			func(AdaptiveState) AdaptiveState {
				return state(map[string][]AdaptiveSample{"read": series(t0.Add(-5*time.Minute), time.Second, 20, 300*ms)})
			}, 20 * ms, 20},
		{"samples interleaved in time are merged in time order", AdaptiveConfig{Window: 20, MinSamples: 20}, answered("read", 10, 20*ms),
			func(AdaptiveState) AdaptiveState {
				// 15 samples either side of the process's: the newest 20 are the
				// process's 10 and the file's 10 after them.
				ss := append(series(t0.Add(-time.Minute), time.Second, 15, 900*ms), series(t0.Add(time.Second), time.Second, 10, 40*ms)...)
				return state(map[string][]AdaptiveSample{"read": ss})
			}, 40 * ms, 20},
		{"importing the process's own export changes nothing", AdaptiveConfig{}, answered("read", 30, 20*ms),
			func(own AdaptiveState) AdaptiveState { return own }, 20 * ms, 30},
		{"stale samples in the file are dropped, the process's are kept", AdaptiveConfig{}, answered("read", 10, 20*ms),
			func(AdaptiveState) AdaptiveState {
				return state(map[string][]AdaptiveSample{"read": series(t0.Add(-20*time.Minute), time.Second, 50, 300*ms)})
			}, 500 * ms, 10},
		{"another kind in the file does not touch this one", AdaptiveConfig{}, answered("read", 30, 20*ms),
			func(AdaptiveState) AdaptiveState {
				return state(map[string][]AdaptiveSample{"create": series(t0, time.Second, 50, 300*ms)})
			}, 20 * ms, 30},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, clk := clocked(t, c.cfg)
			feed(a, c.process)
			file := c.file(a.Export())
			clk.Advance(time.Minute)
			a.Import(file)
			checkWindows(t, a)
			if th, n, _ := a.Stats("read"); th != c.want || n != c.wantSamples {
				t.Fatalf("after import: %v from %d samples, want %v from %d", th, n, c.want, c.wantSamples)
			}
			a.Import(file)
			if th, n, _ := a.Stats("read"); th != c.want || n != c.wantSamples {
				t.Fatalf("after importing the same state twice: %v from %d samples, want %v from %d", th, n, c.want, c.wantSamples)
			}
		})
	}
}

func TestImportLeavesRunningOperationsAlone(t *testing.T) {
	a, clk := clocked(t, AdaptiveConfig{MinSamples: 1})
	feed(a, answered("read", 5, 20*ms))
	p := a.Begin("read")
	a.Import(state(map[string][]AdaptiveSample{"read": series(t0.Add(time.Second), time.Millisecond, 200, 90*ms)}))
	if p.Offset(1) != 20*ms {
		t.Fatalf("threshold of a running operation changed to %v", p.Offset(1))
	}
	clk.Advance(2 * time.Second)
	p.Done(25*ms, true) // observed before the imported samples: recorded after them
	checkWindows(t, a)
	if th, n, _ := a.Stats("read"); th != 90*ms || n != 200 {
		t.Fatalf("%v from %d samples, want 90ms from 200", th, n)
	}
}

func TestMergeAdaptiveStateCountsEverySampleOnce(t *testing.T) {
	cfg := AdaptiveConfig{}
	file := state(map[string][]AdaptiveSample{
		"read":   series(t0.Add(-time.Minute), time.Second, 10, 20*ms),
		"create": series(t0.Add(-time.Minute), time.Second, 3, 50*ms),
	})
	// process is a CLI process that imported the file, ran n reads and exported.
	process := func(n int, lat time.Duration) AdaptiveState {
		a, _ := clocked(t, cfg)
		a.Import(file)
		feed(a, answered("read", n, lat))
		return a.Export()
	}
	viaJSON := func(s AdaptiveState) AdaptiveState {
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back AdaptiveState
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		return back
	}
	now := t0.Add(time.Second)
	cases := []struct {
		name  string
		merge func() AdaptiveState
		want  map[string]int
	}{
		{"a process that imported N and observed 1 more saves N+1",
			func() AdaptiveState { return MergeAdaptiveState(file, process(1, 30*ms), now, cfg) },
			map[string]int{"read": 11, "create": 3}},
		{"the order of the arguments does not matter",
			func() AdaptiveState { return MergeAdaptiveState(process(1, 30*ms), file, now, cfg) },
			map[string]int{"read": 11, "create": 3}},
		{"through JSON the samples are still recognised",
			func() AdaptiveState { return MergeAdaptiveState(viaJSON(file), viaJSON(process(1, 30*ms)), now, cfg) },
			map[string]int{"read": 11, "create": 3}},
		{"a state merged with itself is itself",
			func() AdaptiveState { return MergeAdaptiveState(file, file, now, cfg) },
			map[string]int{"read": 10, "create": 3}},
		{"two processes saving one after the other keep both their samples",
			func() AdaptiveState {
				p, q := process(1, 30*ms), process(2, 40*ms)
				return MergeAdaptiveState(MergeAdaptiveState(file, p, now, cfg), q, now, cfg)
			},
			map[string]int{"read": 13, "create": 3}},
		{"a process that observed nothing saves the file unchanged",
			func() AdaptiveState { return MergeAdaptiveState(file, process(0, 0), now, cfg) },
			map[string]int{"read": 10, "create": 3}},
		{"over the window the newest are kept",
			func() AdaptiveState {
				return MergeAdaptiveState(file, process(1, 30*ms), now, AdaptiveConfig{Window: 4, MinSamples: 1})
			},
			map[string]int{"read": 4, "create": 3}},
		{"samples that aged out by now are dropped",
			func() AdaptiveState { return MergeAdaptiveState(file, file, t0.Add(9*time.Minute+9*time.Second), cfg) },
			map[string]int{"read": 1}}, // only the newest read (observed at -51s) is 10m old at most
		{"a configured MaxSampleAge",
			func() AdaptiveState {
				return MergeAdaptiveState(file, file, now, AdaptiveConfig{MaxSampleAge: 55 * time.Second})
			},
			map[string]int{"read": 4}}, // the reads observed at -54s..-51s
		{"merging nothing is empty",
			func() AdaptiveState { return MergeAdaptiveState(AdaptiveState{}, AdaptiveState{}, now, cfg) },
			map[string]int{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.merge()
			if n := counts(got); !maps.Equal(n, c.want) {
				t.Fatalf("merged samples per kind %v, want %v", n, c.want)
			}
			if got.Version != AdaptiveStateVersion || got.Operations == nil {
				t.Fatalf("version %d, operations %v", got.Version, got.Operations)
			}
			for op, ss := range got.Operations {
				for i, s := range ss {
					if s.ObservedAt.Location() != time.UTC {
						t.Fatalf("%s sample %d in %v", op, i, s.ObservedAt.Location())
					}
					if i > 0 && !ss[i-1].ObservedAt.Before(s.ObservedAt) {
						t.Fatalf("%s samples out of arrival order at %d: %v then %v", op, i, ss[i-1].ObservedAt, s.ObservedAt)
					}
				}
			}
		})
	}
	// What Import does with two states is what MergeAdaptiveState does.
	a, _ := clocked(t, cfg)
	a.Import(file)
	a.Import(process(2, 30*ms))
	if got, want := counts(a.Export()), counts(MergeAdaptiveState(file, process(2, 30*ms), t0, cfg)); !maps.Equal(got, want) {
		t.Fatalf("importing both: %v, merging both: %v", got, want)
	}
}

func TestImportAndMergeDropInvalidSamples(t *testing.T) {
	recent := func(n int) []AdaptiveSample { return series(t0.Add(-time.Minute), time.Second, n, 20*ms) }
	with := func(ss []AdaptiveSample, bad ...AdaptiveSample) []AdaptiveSample { return append(ss, bad...) }
	many := map[string][]AdaptiveSample{}
	for i := range 1000 {
		many[fmt.Sprintf("kind%04d", i)] = recent(1)
	}
	cases := []struct {
		name  string
		state AdaptiveState
		want  map[string]int
	}{
		{"a negative latency", state(map[string][]AdaptiveSample{"read": with(recent(3), AdaptiveSample{t0, -1})}), map[string]int{"read": 3}},
		{"a latency longer than an hour", state(map[string][]AdaptiveSample{"read": with(recent(3), AdaptiveSample{t0, int64(2 * time.Hour)})}), map[string]int{"read": 3}},
		{"a time more than a minute in the future", state(map[string][]AdaptiveSample{"read": with(recent(3), AdaptiveSample{t0.Add(2 * time.Minute), 1})}), map[string]int{"read": 3}},
		{"a time seconds in the future is clock skew, kept", state(map[string][]AdaptiveSample{"read": with(recent(3), AdaptiveSample{t0.Add(30 * time.Second), 1})}), map[string]int{"read": 4}},
		{"the zero time", state(map[string][]AdaptiveSample{"read": with(recent(3), AdaptiveSample{time.Time{}, 1})}), map[string]int{"read": 3}},
		{"a time Unix nanoseconds cannot hold", state(map[string][]AdaptiveSample{"read": with(recent(3), AdaptiveSample{time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), 1}, AdaptiveSample{time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC), 1})}), map[string]int{"read": 3}},
		{"samples older than MaxSampleAge", state(map[string][]AdaptiveSample{"read": with(recent(3), series(t0.Add(-time.Hour), time.Second, 50, ms)...)}), map[string]int{"read": 3}},
		{"a sample twice in the same state", state(map[string][]AdaptiveSample{"read": with(recent(3), recent(3)...)}), map[string]int{"read": 3}},
		{"samples out of order", state(map[string][]AdaptiveSample{"read": reversed(recent(5))}), map[string]int{"read": 5}},
		{"an operation kind this version does not run is kept", state(map[string][]AdaptiveSample{"read": recent(3), "query": recent(2)}), map[string]int{"read": 3, "query": 2}},
		{"operation kinds that are not words", state(map[string][]AdaptiveSample{
			"read": recent(3), "": recent(2), "../read": recent(2), "read\n": recent(2), "réad": recent(2), strings.Repeat("r", 65): recent(2),
		}), map[string]int{"read": 3}},
		{"another version of the format", AdaptiveState{Version: 2, Operations: map[string][]AdaptiveSample{"read": recent(3)}}, map[string]int{}},
		{"a negative version", AdaptiveState{Version: -1, Operations: map[string][]AdaptiveSample{"read": recent(3)}}, map[string]int{}},
		{"no version is the current one", AdaptiveState{Operations: map[string][]AdaptiveSample{"read": recent(3)}}, map[string]int{"read": 3}},
		{"no operations", AdaptiveState{}, map[string]int{}},
		{"a kind with no samples", state(map[string][]AdaptiveSample{"read": nil, "create": {}}), map[string]int{}},
		{"a hundred thousand samples of a kind: the newest Window", state(map[string][]AdaptiveSample{"read": series(t0.Add(-5*time.Minute), time.Millisecond, 100_000, ms)}), map[string]int{"read": 200}},
		{"a thousand kinds: a few dozen", state(many), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := func(how string, got map[string]int) {
				t.Helper()
				if c.want == nil { // only bounded
					if len(got) != maxOpKinds {
						t.Fatalf("%s: %d kinds, want %d", how, len(got), maxOpKinds)
					}
					return
				}
				if !maps.Equal(got, c.want) {
					t.Fatalf("%s: samples per kind %v, want %v", how, got, c.want)
				}
			}
			a, _ := clocked(t, AdaptiveConfig{})
			a.Import(c.state)
			checkWindows(t, a)
			check("Import", counts(a.Export()))
			check("MergeAdaptiveState", counts(MergeAdaptiveState(c.state, AdaptiveState{}, t0, AdaptiveConfig{})))
		})
	}
}

func TestImportToleratesDamagedJSON(t *testing.T) {
	// Valid JSON with values no export writes: Import keeps the one good sample.
	data := `{"version": 1, "operations": {
		"read": [
			{"observed_at": "2026-03-01T11:59:00Z", "latency_ns": -5},
			{"latency_ns": 3},
			{"observed_at": "2026-03-01T11:59:30+01:00", "latency_ns": 7000000},
			{"observed_at": "2026-03-01T11:59:30Z", "latency_ns": 9000000},
			{"observed_at": "9999-12-31T23:59:59Z", "latency_ns": 1},
			{}
		],
		"create": null,
		"": [{"observed_at": "2026-03-01T11:59:30Z", "latency_ns": 1}],
		"extra": 1
	}, "unknown_field": true}`
	var s AdaptiveState
	if err := json.Unmarshal([]byte(data), &s); err == nil {
		t.Fatal(`"extra": 1 decoded into a sample list`) // a type error is the caller's to handle
	}
	data = strings.Replace(data, `"extra": 1`, `"extra": []`, 1)
	if err := json.Unmarshal([]byte(data), &s); err != nil {
		t.Fatal(err)
	}
	a, _ := clocked(t, AdaptiveConfig{MinSamples: 1})
	a.Import(s)
	// 11:59:30+01:00 is 10:59:30Z, aged out.
	if th, n, _ := a.Stats("read"); th != 9*ms || n != 1 {
		t.Fatalf("%v from %d samples, want 9ms from the one valid sample", th, n)
	}
	checkWindows(t, a)
}

func TestAStateFromAnotherWindowSize(t *testing.T) {
	// A file saved by a process with a window of 500: 300 slow samples, then 200 fast.
	big := state(map[string][]AdaptiveSample{"read": append(
		series(t0.Add(-5*time.Minute), 10*ms, 300, 300*ms),
		series(t0.Add(-4*time.Minute), 10*ms, 200, 20*ms)...)})
	small := state(map[string][]AdaptiveSample{"read": series(t0.Add(-time.Minute), time.Second, 50, 20*ms)})
	cases := []struct {
		name        string
		cfg         AdaptiveConfig
		file        AdaptiveState
		want        time.Duration
		wantSamples int
	}{
		{"a larger window's state: the newest samples that fit", AdaptiveConfig{}, big, 20 * ms, 200},
		{"a much smaller window", AdaptiveConfig{Window: 10, MinSamples: 10}, big, 20 * ms, 10},
		{"a larger window than the state's: all of it", AdaptiveConfig{Window: 1000}, big, 300 * ms, 500},
		{"a state smaller than MinSamples warms up from it", AdaptiveConfig{MinSamples: 100}, small, 500 * ms, 50},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, _ := clocked(t, c.cfg)
			a.Import(c.file)
			checkWindows(t, a)
			if th, n, _ := a.Stats("read"); th != c.want || n != c.wantSamples {
				t.Fatalf("%v from %d samples, want %v from %d", th, n, c.want, c.wantSamples)
			}
			if n := len(MergeAdaptiveState(c.file, AdaptiveState{}, t0, c.cfg).Operations["read"]); n != c.wantSamples {
				t.Fatalf("MergeAdaptiveState kept %d samples, want %d", n, c.wantSamples)
			}
		})
	}
}

func TestExportAndImportWhileOperationsRun(t *testing.T) {
	a, clk := clocked(t, AdaptiveConfig{Window: 50, MinSamples: 10, MaxSampleAge: time.Minute})
	other := state(map[string][]AdaptiveSample{
		"read":  series(t0, 100*ms, 600, 30*ms),
		"query": series(t0, 100*ms, 600, 30*ms),
	})
	ops := []string{"read", "create", "query"}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var background sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 11))
			for range 2000 {
				p := a.Begin(ops[rng.IntN(len(ops))])
				_ = p.String()
				p.Admit(1)
				p.Done(time.Duration(1+rng.IntN(100))*ms, rng.IntN(4) != 0)
			}
		}()
	}
	background.Add(3)
	go func() { // the clock moves: samples age out meanwhile
		defer background.Done()
		for {
			select {
			case <-stop:
				return
			default:
				clk.Advance(50 * ms)
			}
		}
	}()
	go func() { // a process saving and loading its state
		defer background.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			data, err := json.Marshal(a.Export())
			if err != nil {
				t.Error(err)
				return
			}
			var s AdaptiveState
			if err := json.Unmarshal(data, &s); err != nil {
				t.Error(err)
				return
			}
			a.Import(s)
			a.Import(other)
		}
	}()
	go func() { // another merging with it
		defer background.Done()
		for {
			select {
			case <-stop:
				return
			default:
				MergeAdaptiveState(a.Export(), other, clk.Now(), a.Config())
			}
		}
	}()
	wg.Wait()
	close(stop)
	background.Wait()
	checkWindows(t, a)
	for _, op := range ops {
		if _, n, _ := a.Stats(op); n > 50 {
			t.Errorf("%s: %d samples in a window of 50", op, n)
		}
	}
}

func TestSampleAgesAreRoundedForReading(t *testing.T) {
	cases := []struct {
		age  time.Duration
		want string
	}{
		{0, "0s"},
		{-time.Second, "0s"},
		{400 * ms, "0s"},
		{600 * ms, "1s"},
		{59 * time.Second, "59s"},
		{59600 * ms, "1m"},
		{9*time.Minute + 29*time.Second, "9m"},
		{9*time.Minute + 31*time.Second, "10m"},
		{59*time.Minute + 31*time.Second, "1h"},
		{50 * time.Hour, "50h"},
	}
	for _, c := range cases {
		now := t0.UnixNano()
		if got := sampleAge(now, now-int64(c.age)); got != c.want {
			t.Errorf("age %v shown as %q, want %q", c.age, got, c.want)
		}
	}
}

func TestWallClockFollowsTheWallClock(t *testing.T) {
	if newWallClock(clock.NewFake(t0)) != nil {
		t.Fatal("a fake clock was read as the wall clock")
	}
	w := newWallClock(clock.Real{})
	if w == nil {
		t.Fatal("the wall clock was not recognised")
	}
	near := func(how string) {
		t.Helper()
		before := time.Now().UnixNano()
		got := w.now()
		after := time.Now().UnixNano()
		if got < before-int64(ms) || got > after+int64(ms) {
			t.Fatalf("%s: %d, outside the wall clock's [%d, %d]", how, got, before, after)
		}
	}
	near("just based")
	// A base read long ago (as after a suspended laptop resumes, or a wall clock step)
	// is read again.
	stale := time.Now().Add(-time.Hour)
	w.base.Store(&wallBase{t: stale, ns: stale.UnixNano() - int64(time.Hour)})
	near("after the base went stale")
}

func BenchmarkAdaptiveExport(b *testing.B) {
	a, _ := clocked(b, AdaptiveConfig{})
	for _, op := range []string{"read", "create", "upsert", "replace", "delete", "patch"} {
		feed(a, shuffled1to(op, 200))
	}
	b.ReportAllocs()
	for b.Loop() {
		a.Export()
	}
}

// BenchmarkAdaptiveImport is a process that has run a few reads loading a full file.
func BenchmarkAdaptiveImport(b *testing.B) {
	src, clk := clocked(b, AdaptiveConfig{})
	for _, op := range []string{"read", "create", "upsert", "replace", "delete", "patch"} {
		feed(src, shuffled1to(op, 200))
	}
	file := src.Export()
	clk.Advance(time.Second)
	b.ReportAllocs()
	for b.Loop() {
		a := newAdaptive(b, AdaptiveConfig{Clock: clk})
		feed(a, answered("read", 5, 20*ms))
		a.Import(file)
	}
}

func BenchmarkMergeAdaptiveState(b *testing.B) {
	src, clk := clocked(b, AdaptiveConfig{})
	for _, op := range []string{"read", "create", "upsert", "replace", "delete", "patch"} {
		feed(src, shuffled1to(op, 200))
	}
	file := src.Export()
	feed(src, answered("read", 1, 20*ms))
	mine := src.Export()
	now := clk.Now()
	b.ReportAllocs()
	for b.Loop() {
		MergeAdaptiveState(file, mine, now, AdaptiveConfig{})
	}
}
