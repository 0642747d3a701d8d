package probe

import (
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/workload"
)

// recentSpan is the window the live view shows beside the whole run.
const recentSpan = 10 * time.Second

// recent keeps the requests of one stream that completed in the last span of the run,
// one Stats per second of it, for the live view: beside the whole run's numbers, how a
// region is doing now. A region's recovery shows there within seconds, long before it
// moves the percentiles of a run that has been counting its errors for minutes. It is
// safe for concurrent use.
type recent struct {
	span time.Duration
	mu   sync.Mutex
	// slot i holds the requests that completed in second seconds[i] of the run (-1:
	// none yet); one slot more than span has seconds, for the second under way.
	seconds []int64
	slots   []*workload.Stats
}

func newRecent(span time.Duration) *recent {
	n := int(span/time.Second) + 1
	r := &recent{span: span, seconds: make([]int64, n), slots: make([]*workload.Stats, n)}
	for i := range r.seconds {
		r.seconds[i] = -1
	}
	return r
}

// record adds a request that completed at elapsed into the run (see Stats.Record).
func (r *recent) record(elapsed, latency time.Duration, status, substatus int, requestCharge float64, failed bool) {
	r.slot(elapsed, func(st *workload.Stats) { st.Record(latency, status, substatus, requestCharge, failed) })
}

// recordTimeout adds a request that got no answer in time, at elapsed into the run.
func (r *recent) recordTimeout(elapsed time.Duration, requestCharge float64) {
	r.slot(elapsed, func(st *workload.Stats) { st.RecordTimeout(requestCharge) })
}

// recordServerTime adds an answer's server and network times, at elapsed into the run.
func (r *recent) recordServerTime(elapsed time.Duration, t workload.ServerTime) {
	r.slot(elapsed, func(st *workload.Stats) { st.RecordServerTime(t) })
}

func (r *recent) slot(elapsed time.Duration, add func(*workload.Stats)) {
	sec := int64(elapsed / time.Second)
	i := int(sec % int64(len(r.slots)))
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seconds[i] != sec {
		r.seconds[i], r.slots[i] = sec, workload.NewStats()
	}
	add(r.slots[i])
}

// summary is the record of the requests that completed in the span before elapsed: at
// a whole second, exactly the last span; between, up to a second more.
func (r *recent) summary(elapsed time.Duration) workload.Summary {
	cur := int64(elapsed / time.Second)
	oldest := max(cur-int64(r.span/time.Second), 0)
	if elapsed%time.Second == 0 {
		cur-- // the second that starts at elapsed has nothing in it yet
	}
	st := workload.NewStats()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, sec := range r.seconds {
		if sec >= oldest && sec <= cur {
			st.Merge(r.slots[i])
		}
	}
	return st.Summary()
}
