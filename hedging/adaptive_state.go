package hedging

import (
	"math"
	"slices"
	"time"
)

// A CLI process usually runs one operation, so an Adaptive that learned only from its
// own process would never leave its warm-up fallback. The command layer keeps what
// earlier processes learned in a file: it Imports the file's state before the operation
// and, under a file lock, saves MergeAdaptiveState of the file's state (as it is by
// then) and the process's Export after it. This file is the pure-logic half: no I/O.
//
// A sample is told apart from every other by its observation time and latency, both to
// the nanosecond: a window never holds two samples observed at the same nanosecond (see
// window.add), and two processes observing the same latency at the same nanosecond do
// not happen. So a sample a process imported and then exports again is recognised when
// the exports are merged, and counted once.

// AdaptiveStateVersion is the version of the state format that Export and
// MergeAdaptiveState write.
const AdaptiveStateVersion = 1

// Limits on what a state may bring in, so that a damaged or hostile file cannot make
// the strategy hold more than a handful of windows or learn an impossible latency.
const (
	// maxOpKinds bounds the operation kinds an Adaptive takes from states; the
	// engine has six.
	maxOpKinds = 64
	// maxOpKindLen bounds an operation kind's name.
	maxOpKindLen = 64
	// maxSampleLatency is the longest latency taken from a state: no Cosmos DB request
	// answers after an hour, so a longer one is damage, and it would hold the threshold
	// up for as long as it counted.
	maxSampleLatency = time.Hour
	// maxFutureSkew is how far after now a sample from a state may have been observed.
	// A little is expected (a wall clock stepped back by NTP between two processes); a
	// sample from further in the future is damage, and would count for that much longer
	// than MaxSampleAge.
	maxFutureSkew = time.Minute
)

// AdaptiveState is a snapshot of what an Adaptive has learned: every operation kind's
// window of first-region latencies, with the time each was observed. It is meant to
// be written as JSON:
//
//	{
//	  "version": 1,
//	  "operations": {
//	    "read": [
//	      {"observed_at": "2026-03-01T12:00:00.123456789Z", "latency_ns": 8912345},
//	      {"observed_at": "2026-03-01T12:00:04.5Z", "latency_ns": 10200000}
//	    ]
//	  }
//	}
//
// Import and MergeAdaptiveState take any value, checking every sample: a state of
// another version is ignored as a whole, and samples that are invalid (a negative or
// implausible latency, a time that cannot be a real observation or lies in the future),
// have aged out, or belong to an operation kind whose name is not a plain word are
// dropped.
type AdaptiveState struct {
	// Version is AdaptiveStateVersion; 0 (absent) is taken as the current version.
	Version int `json:"version"`
	// Operations holds each operation kind's samples ("read", "create"…), oldest
	// first.
	Operations map[string][]AdaptiveSample `json:"operations"`
}

// AdaptiveSample is one first-region latency and when it was observed.
type AdaptiveSample struct {
	ObservedAt time.Time `json:"observed_at"`
	LatencyNS  int64     `json:"latency_ns"`
}

// Latency is the sample's latency as a duration.
func (s AdaptiveSample) Latency() time.Duration { return time.Duration(s.LatencyNS) }

// Samples is the total number of samples in the state, over every operation kind.
func (s AdaptiveState) Samples() int {
	n := 0
	for _, ss := range s.Operations {
		n += len(ss)
	}
	return n
}

// Export snapshots every operation kind's window: the samples that have not aged out,
// oldest first. Kinds without samples are left out.
func (a *Adaptive) Export() AdaptiveState {
	cutoff := a.cutoff(a.now())
	raw := map[string][]stamped{}
	a.mu.Lock()
	for op, w := range a.ops {
		w.expire(cutoff)
		if w.len() > 0 {
			raw[op] = w.samples(make([]stamped, 0, w.len()))
		}
	}
	a.mu.Unlock()
	st := AdaptiveState{Version: AdaptiveStateVersion, Operations: make(map[string][]AdaptiveSample, len(raw))}
	for op, ss := range raw {
		st.Operations[op] = exportSamples(ss)
	}
	return st
}

// Import merges a state into the strategy: for each operation kind, the state's valid
// samples and those the strategy already holds are combined, a sample present in both
// counted once, and the newest Window of them are kept. Invalid samples are dropped
// (see AdaptiveState); so are operation kinds beyond a few dozen. Operations that have
// begun keep the threshold they began with.
func (a *Adaptive) Import(s AdaptiveState) {
	if !s.current() {
		return
	}
	now := a.now()
	cutoff, latest := a.cutoff(now), addSaturating(now, int64(maxFutureSkew))
	// The state is checked and sorted before the lock is taken: operations beginning
	// meanwhile wait only for the merge of two sorted windows.
	in := map[string][]stamped{}
	kinds := validKinds(s.Operations)
	for _, op := range kinds {
		if ss := collect(nil, s.Operations[op], cutoff, latest); len(ss) > 0 {
			in[op] = newestUnique(ss, a.cfg.Window)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, op := range kinds { // in name order, so that the kinds cap is deterministic
		ss := in[op]
		if ss == nil {
			continue
		}
		w := a.ops[op]
		if w == nil {
			if len(a.ops) >= maxOpKinds {
				continue
			}
			w = newWindow(a.cfg.Window)
			w.op = op
			a.ops[op] = w
		}
		w.expire(cutoff)
		w.reset(newestUnique(w.samples(ss), a.cfg.Window))
	}
}

// MergeAdaptiveState combines two states, as they would be combined by importing both
// into one strategy with configuration cfg (whose zero fields take their defaults) at
// time now: per operation kind the valid samples of both that have not aged out by now,
// a sample present in both counted once, the newest cfg.Window of them kept. It is how
// a process saving under a file lock combines what the file holds with what it learned
// (its Export, which includes what it imported from the file before): a process that
// imported N samples and observed one more exports N+1, and merging that with the
// file's N gives N+1.
//
// The result is in the current version, with every kind's samples oldest first and in
// UTC; neither argument is modified.
func MergeAdaptiveState(x, y AdaptiveState, now time.Time, cfg AdaptiveConfig) AdaptiveState {
	cfg = cfg.withDefaults()
	size, maxAge := cfg.Window, cfg.MaxSampleAge
	if size < 1 {
		size = AdaptiveConfig{}.withDefaults().Window
	}
	if maxAge <= 0 {
		maxAge = defaultMaxSampleAge
	}
	nowNS := now.UnixNano()
	cutoff, latest := addSaturating(nowNS, -int64(maxAge)), addSaturating(nowNS, int64(maxFutureSkew))

	all := map[string][]stamped{}
	for _, s := range []AdaptiveState{x, y} {
		if !s.current() {
			continue
		}
		for _, op := range validKinds(s.Operations) {
			all[op] = collect(all[op], s.Operations[op], cutoff, latest)
		}
	}
	kinds := make([]string, 0, len(all))
	for op, ss := range all {
		if len(ss) > 0 {
			kinds = append(kinds, op)
		}
	}
	slices.Sort(kinds)
	kinds = kinds[:min(len(kinds), maxOpKinds)]
	out := AdaptiveState{Version: AdaptiveStateVersion, Operations: make(map[string][]AdaptiveSample, len(kinds))}
	for _, op := range kinds {
		out.Operations[op] = exportSamples(newestUnique(all[op], size))
	}
	return out
}

// current reports whether the state is in a version this code reads.
func (s AdaptiveState) current() bool { return s.Version == 0 || s.Version == AdaptiveStateVersion }

// validKinds is the operation kinds of ops whose names are plain words, in name order.
func validKinds(ops map[string][]AdaptiveSample) []string {
	kinds := make([]string, 0, min(len(ops), maxOpKinds))
	for op := range ops {
		if validOpKind(op) {
			kinds = append(kinds, op)
		}
	}
	slices.Sort(kinds)
	return kinds
}

// validOpKind reports whether op can be an operation kind: a word of ASCII letters,
// digits, '-', '_' or '.', as the engine's kinds ("read", "create"…) are. A kind this
// version does not run (one a newer version added) is kept, so that saving does not
// lose it.
func validOpKind(op string) bool {
	if op == "" || len(op) > maxOpKindLen {
		return false
	}
	for i := 0; i < len(op); i++ {
		switch c := op[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// collect appends to dst the samples of ss that are valid and were observed in
// [from, to] (Unix nanoseconds).
func collect(dst []stamped, ss []AdaptiveSample, from, to int64) []stamped {
	for _, s := range ss {
		if s.LatencyNS < 0 || s.LatencyNS > int64(maxSampleLatency) {
			continue
		}
		at := s.ObservedAt.UnixNano()
		// Times that Unix nanoseconds cannot hold (the zero time, years before 1678 or
		// after 2262) come back different.
		if !time.Unix(0, at).Equal(s.ObservedAt) || at < from || at > to {
			continue
		}
		dst = append(dst, stamped{at: at, lat: time.Duration(s.LatencyNS)})
	}
	return dst
}

// newestUnique sorts ss into arrival order, drops duplicate samples and returns the
// newest size of them. It reorders ss.
func newestUnique(ss []stamped, size int) []stamped {
	slices.SortFunc(ss, compareStamped) // already in order, as exported: linear
	ss = slices.Compact(ss)
	return ss[max(0, len(ss)-size):]
}

func exportSamples(ss []stamped) []AdaptiveSample {
	out := make([]AdaptiveSample, len(ss))
	for i, s := range ss {
		out[i] = AdaptiveSample{ObservedAt: time.Unix(0, s.at).UTC(), LatencyNS: int64(s.lat)}
	}
	return out
}

// addSaturating is x+d, held at the int64 limits instead of wrapping.
func addSaturating(x, d int64) int64 {
	switch {
	case d > 0 && x > math.MaxInt64-d:
		return math.MaxInt64
	case d < 0 && x < math.MinInt64-d:
		return math.MinInt64
	}
	return x + d
}
