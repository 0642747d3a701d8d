package workload

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// ServerTime is one answer's client-measured duration split in two: the service's own
// time for the request (x-ms-request-duration-ms) and the rest, the network (with the
// client's own queueing and the TLS and HTTP work around the request). A region whose
// server time is high is itself slow; one whose network time is high is slow to reach.
type ServerTime struct {
	Server  time.Duration
	Network time.Duration
}

// SplitDuration splits an answer's client-measured duration by the service's time for
// it. ok is false when the answer did not say (server is 0: the Linux vNext emulator
// sends no x-ms-request-duration-ms), so that a missing figure is never recorded as a
// zero. The network part is floored at 0: the service's clock and the client's are not
// the same clock, and a fast loopback answer can measure shorter than the server says.
func SplitDuration(duration, server time.Duration) (t ServerTime, ok bool) {
	if server <= 0 {
		return ServerTime{}, false
	}
	return ServerTime{Server: server, Network: max(duration-server, 0)}, true
}

// spread is a histogram of durations with their count and exact maximum, so that a
// percentile never exceeds what was recorded (the histogram answers with the top of a
// bucket).
type spread struct {
	hist *hdrhistogram.Histogram // microseconds
	n    int
	max  time.Duration
}

func newSpread() spread {
	return spread{hist: hdrhistogram.New(lowestMicros, highestMicros, sigFigs)}
}

func (s *spread) record(d time.Duration) {
	d = max(d, 0)
	_ = s.hist.RecordValue(min(d.Microseconds(), highestMicros))
	s.n++
	s.max = max(s.max, d)
}

func (s *spread) merge(o spread) {
	s.hist.Merge(o.hist)
	s.n += o.n
	s.max = max(s.max, o.max)
}

func (s spread) clone() spread {
	return spread{hist: hdrhistogram.Import(s.hist.Export()), n: s.n, max: s.max}
}

// quantileMs is the q-th quantile in milliseconds; nil when nothing was recorded.
func (s spread) quantileMs(q float64) *float64 {
	if s.n == 0 {
		return nil
	}
	v := time.Duration(s.hist.ValueAtQuantile(q*100)) * time.Microsecond
	return Ms(ms(min(v, s.max)))
}

// RecordServerTime adds one answer's server and network times. An operation with
// several attempts that answered (a hedge, a retry) records each: every one of them is
// a round trip to its region.
func (s *Stats) RecordServerTime(t ServerTime) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.server.record(t.Server)
	s.network.record(t.Network)
}

// RecordServerTime adds one answer's server and network times to the run and to the
// current interval (see Stats.RecordServerTime).
func (r *Recorder) RecordServerTime(t ServerTime) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.interval.RecordServerTime(t)
	r.total.RecordServerTime(t)
}
