package workload

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The histograms track 1µs to 1 minute with 3 significant digits: a quantile is off by at
// most 0.1%, and a latency beyond a minute (a hung request with no timeout) is recorded
// as one minute rather than lost.
const (
	lowestMicros  = 1
	highestMicros = int64(time.Minute / time.Microsecond)
	sigFigs       = 3
)

// NetworkError is the ErrorsByStatus key of a failed request that got no status: a
// refused or reset connection.
const NetworkError = "network"

// TimeoutStatus and TimeoutSubStatus are how a request that got no answer in time is
// counted in ErrorsByStatus: 408/20008, the status the Java SDK (and cosmosctl read)
// gives an operation its end-to-end timeout cancelled.
const (
	TimeoutStatus    = 408
	TimeoutSubStatus = 20008
)

// Stats is the latency and error record of one stream of requests (one region, one
// strategy). Latencies of failed requests are recorded too: a client waits for a 503 as
// much as for a 200. A request that got no answer in time (RecordTimeout) is counted,
// as an error and a timeout, but has no latency: how long it would have taken is not
// known. It is safe for concurrent use.
type Stats struct {
	mu        sync.Mutex
	hist      *hdrhistogram.Histogram // microseconds
	count     int
	latencies int // requests with a latency in hist
	errors    int
	timeouts  int
	throttled int
	byStatus  map[string]int
	charge    float64
	max       time.Duration // exact, where the histogram's would be rounded up
	// server and network are the answers that carried the service's own time, split
	// (see ServerTime).
	server  spread
	network spread
}

// NewStats returns an empty record.
func NewStats() *Stats {
	return &Stats{hist: hdrhistogram.New(lowestMicros, highestMicros, sigFigs), byStatus: map[string]int{},
		server: newSpread(), network: newSpread()}
}

// Record adds one request: how long it took from its intended send time, its status and
// substatus (0 when it got no answer), its request charge, and whether it failed.
func (s *Stats) Record(latency time.Duration, status, substatus int, requestCharge float64, failed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	latency = max(latency, 0)
	_ = s.hist.RecordValue(min(latency.Microseconds(), highestMicros))
	s.count++
	s.latencies++
	s.max = max(s.max, latency)
	s.charge += requestCharge
	if status == 429 {
		s.throttled++
	}
	if status == TimeoutStatus && substatus == TimeoutSubStatus {
		s.timeouts++
	}
	if failed {
		s.errors++
		s.byStatus[StatusKey(status, substatus)]++
	}
}

// RecordTimeout adds one request that got no answer in time (its timeout expired, or it
// was cut at the end of a run): an error and a timeout (408/20008 in ErrorsByStatus),
// with its request charge (0 unless an earlier attempt answered), and no latency.
func (s *Stats) RecordTimeout(requestCharge float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	s.errors++
	s.timeouts++
	s.charge += requestCharge
	s.byStatus[StatusKey(TimeoutStatus, TimeoutSubStatus)]++
}

// StatusKey is how an error is counted in ErrorsByStatus: "503/0", "429/3200", or
// "network" for a request that got no status.
func StatusKey(status, substatus int) string {
	if status == 0 {
		return NetworkError
	}
	return fmt.Sprintf("%d/%d", status, substatus)
}

// Merge adds everything o recorded to s.
func (s *Stats) Merge(o *Stats) {
	snap := o.clone()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hist.Merge(snap.hist)
	s.count += snap.count
	s.latencies += snap.latencies
	s.errors += snap.errors
	s.timeouts += snap.timeouts
	s.throttled += snap.throttled
	for k, n := range snap.byStatus {
		s.byStatus[k] += n
	}
	s.charge += snap.charge
	s.max = max(s.max, snap.max)
	s.server.merge(snap.server)
	s.network.merge(snap.network)
}

// clone copies s under its lock, so that Merge never holds two locks (and s.Merge(s)
// works).
func (s *Stats) clone() *Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &Stats{
		hist:  hdrhistogram.Import(s.hist.Export()),
		count: s.count, latencies: s.latencies, errors: s.errors, timeouts: s.timeouts, throttled: s.throttled,
		charge: s.charge, max: s.max, server: s.server.clone(), network: s.network.clone(),
		byStatus: make(map[string]int, len(s.byStatus)),
	}
	for k, n := range s.byStatus {
		c.byStatus[k] = n
	}
	return c
}

// Quantile is the latency below which a fraction q of the requests fell: q is in [0,1],
// so p99.9 is Quantile(0.999). It is 0 when nothing was recorded.
func (s *Stats) Quantile(q float64) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.quantileLocked(q)
}

func (s *Stats) quantileLocked(q float64) time.Duration {
	if s.latencies == 0 || math.IsNaN(q) {
		return 0
	}
	q = min(max(q, 0), 1)
	if q == 0 {
		// The histogram's quantile 0 is 0 whatever was recorded.
		return time.Duration(s.hist.Min()) * time.Microsecond
	}
	v := time.Duration(s.hist.ValueAtQuantile(q*100)) * time.Microsecond
	// The histogram answers with the top of a bucket; never report more than was seen.
	return min(v, s.max)
}

// Count is the number of requests recorded, failed ones included.
func (s *Stats) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// Summary is a Stats for people and scripts. Its JSON field names are an API: units are in
// the names, and they only ever grow.
type Summary struct {
	// Count is every request that ended: answered (with any status) or timed out.
	Count     int     `json:"count"`
	Errors    int     `json:"errors"`
	ErrorRate float64 `json:"error_rate"` // 0..1
	// Timeouts are the requests that got no answer in time (counted in Errors, as
	// 408/20008); Throttled those answered 429 (in Errors too when they failed).
	Timeouts  int `json:"timeouts"`
	Throttled int `json:"throttled"`
	// ErrorsByStatus counts failed requests by "status/substatus" ("503/0", "429/3200",
	// "408/20008" for a timeout), or "network" for those that got no status.
	ErrorsByStatus map[string]int `json:"errors_by_status"`
	// The latency percentiles of the requests that got an answer: nil (null in JSON) when
	// none did, never 0 — a region whose every request timed out has no latency figure.
	P50Ms         *float64 `json:"p50_ms"`
	P90Ms         *float64 `json:"p90_ms"`
	P99Ms         *float64 `json:"p99_ms"`
	P999Ms        *float64 `json:"p999_ms"`
	MaxMs         *float64 `json:"max_ms"`
	RequestCharge float64  `json:"request_charge"`
	// The service's own time (x-ms-request-duration-ms) of the answers that carried it,
	// and the rest of their client-measured duration, the network: a region that is
	// slow itself has a high server time, one that is slow to reach a high network
	// time. Null when no answer carried a server time (the Linux vNext emulator sends
	// none): never 0.
	ServerP50Ms  *float64 `json:"server_p50_ms"`
	ServerP99Ms  *float64 `json:"server_p99_ms"`
	NetworkP50Ms *float64 `json:"network_p50_ms"`
	NetworkP99Ms *float64 `json:"network_p99_ms"`
}

// HasServerTime reports whether some answer of the stream carried a server time.
func (s Summary) HasServerTime() bool { return s.ServerP50Ms != nil }

// Summary returns the counts, the percentiles and the total request charge.
func (s *Stats) Summary() Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := Summary{
		Count: s.count, Errors: s.errors, Timeouts: s.timeouts, Throttled: s.throttled,
		ErrorsByStatus: make(map[string]int, len(s.byStatus)),
		RequestCharge:  math.Round(s.charge*100) / 100,
	}
	if s.latencies > 0 {
		sum.P50Ms = Ms(ms(s.quantileLocked(0.50)))
		sum.P90Ms = Ms(ms(s.quantileLocked(0.90)))
		sum.P99Ms = Ms(ms(s.quantileLocked(0.99)))
		sum.P999Ms = Ms(ms(s.quantileLocked(0.999)))
		sum.MaxMs = Ms(ms(s.max))
	}
	sum.ServerP50Ms, sum.ServerP99Ms = s.server.quantileMs(0.50), s.server.quantileMs(0.99)
	sum.NetworkP50Ms, sum.NetworkP99Ms = s.network.quantileMs(0.50), s.network.quantileMs(0.99)
	if s.count > 0 {
		sum.ErrorRate = float64(s.errors) / float64(s.count)
	}
	for k, n := range s.byStatus {
		sum.ErrorsByStatus[k] = n
	}
	return sum
}

// Ms is a latency figure in milliseconds, as a Summary holds it.
func Ms(v float64) *float64 { return &v }

// ms is a duration in milliseconds, to the microsecond.
func ms(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// Recorder keeps the Stats of a whole run and of the current interval together, for live
// views and NDJSON streams that report every second. It is safe for concurrent use.
type Recorder struct {
	mu       sync.Mutex
	total    *Stats
	interval *Stats
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{total: NewStats(), interval: NewStats()}
}

// Record adds one request to the run and to the current interval (see Stats.Record).
func (r *Recorder) Record(latency time.Duration, status, substatus int, requestCharge float64, failed bool) {
	// One lock over both, so that a request is in exactly the interval it is in the
	// total for: the intervals of a run always add up to its total.
	r.mu.Lock()
	defer r.mu.Unlock()
	r.interval.Record(latency, status, substatus, requestCharge, failed)
	r.total.Record(latency, status, substatus, requestCharge, failed)
}

// RecordTimeout adds one request that got no answer in time to the run and to the
// current interval (see Stats.RecordTimeout).
func (r *Recorder) RecordTimeout(requestCharge float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.interval.RecordTimeout(requestCharge)
	r.total.RecordTimeout(requestCharge)
}

// Total is the record of the whole run so far.
func (r *Recorder) Total() *Stats { return r.total }

// CutInterval returns the record of the interval that is ending and starts a new one.
func (r *Recorder) CutInterval() *Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	iv := r.interval
	r.interval = NewStats()
	return iv
}
