package query

import (
	"container/heap"
	"encoding/json"
	"errors"
)

// Non-streaming ORDER BY: a query ordered by a score the service computes per document
// (ORDER BY VectorDistance(…)), whose plan says "hasNonStreamingOrderBy": true. A range
// cannot return its rows in an order a client merges as they stream (the service ranks
// them all at once), so the SDKs read every range to its end, keep the TOP (or OFFSET +
// LIMIT) best rows of all of them in a bounded priority queue, and emit them, best
// first, once every range is drained: the JavaScript SDK 4.10.1's
// NonStreamingOrderByEndpointComponent and pipelinedQueryExecutionContext
// (createNonStreamingEndpoint), the .NET SDK's NonStreamingOrderByQueryTests. This
// pipeline does the same, with these rules from the JavaScript SDK:
//
//   - the query must have TOP or OFFSET … LIMIT ("Executing a non-streaming search
//     query without TOP or LIMIT can consume a large number of RUs very fast …"), and
//     TOP or OFFSET + LIMIT may not exceed the buffer of 50,000 rows
//     (QueryExecution.DEFAULT_MAX_VECTOR_SEARCH_BUFFER_SIZE; the SDK's
//     vectorSearchBufferSize option raises it, and allowUnboundedNonStreamingQueries
//     lifts the TOP rule: cosmosctl has neither, and runs such a query within one
//     partition key instead, where the service runs it whole);
//   - continuation tokens are refused ("Continuation tokens are not supported for
//     non-streaming ORDER BY queries", QueryValidationHelper.js): the state is the whole
//     buffer. A run cut short by MaxItems has no token either (Unresumable says why).
//
// Memory holds at most TOP (or OFFSET + LIMIT) rows, plus the pages in flight. Rows
// with equal scores keep the streaming merge's tie-break: the range with the lower
// minInclusive first, then the range's own order (the JavaScript SDK's queue leaves
// ties in no defined order).

// maxNonStreamingBuffer is the JavaScript SDK's default vectorSearchBufferSize.
const maxNonStreamingBuffer = 50000

// errNonStreamingResume says why a non-streaming ORDER BY has no continuation token.
var errNonStreamingResume = errors.New("a non-streaming ORDER BY (vector search: ORDER BY VectorDistance) cannot be resumed: it ranks every range's rows before it returns any, so there is no position to resume from (the SDKs refuse continuation tokens for it too); run it again without --max-items, or lower its TOP")

// nonStreamingBuffer checks a non-streaming ORDER BY's bounds and returns how many rows
// the client keeps: TOP, or OFFSET + LIMIT.
func nonStreamingBuffer(s shape) (int, error) {
	n := -1
	switch {
	case s.top >= 0:
		n = s.top
	case s.limit >= 0:
		n = s.offset + s.limit
	}
	if n < 0 {
		return 0, inputErrorf("a non-streaming ORDER BY (vector search: ORDER BY VectorDistance) across partitions needs TOP n or OFFSET … LIMIT: without it every range's rows would be ranked on the client (the SDKs refuse it too); add TOP, or give a partition key (--pk) to run it within one partition, where the service runs it whole")
	}
	if n > maxNonStreamingBuffer {
		return 0, inputErrorf("a non-streaming ORDER BY (vector search) keeps its TOP or OFFSET + LIMIT rows on the client, at most %d (the SDKs' vectorSearchBufferSize); this query asks for %d: lower TOP, or give a partition key (--pk) to run it within one partition", maxNonStreamingBuffer, n)
	}
	return n, nil
}

// ranked is a row in the buffer with its place for ties.
type ranked struct {
	e        entry
	rangeMin string
	seq      uint64
}

// topRows keeps the k best rows seen: a heap whose root is the worst kept row.
type topRows struct {
	k    int
	s    sorter
	rows []ranked
	seq  uint64
}

func newTopRows(k int, s sorter) *topRows { return &topRows{k: k, s: s} }

// before reports whether a comes before b in the query's order.
func (t *topRows) before(a, b *ranked) bool {
	if c := t.s.compare(a.e.vals, b.e.vals); c != 0 {
		return c < 0
	}
	if a.rangeMin != b.rangeMin {
		return a.rangeMin < b.rangeMin
	}
	return a.seq < b.seq
}

// heap.Interface, worst row at the root.
func (t *topRows) Len() int           { return len(t.rows) }
func (t *topRows) Less(i, j int) bool { return t.before(&t.rows[j], &t.rows[i]) }
func (t *topRows) Swap(i, j int)      { t.rows[i], t.rows[j] = t.rows[j], t.rows[i] }
func (t *topRows) Push(x any)         { t.rows = append(t.rows, x.(ranked)) }
func (t *topRows) Pop() any {
	last := t.rows[len(t.rows)-1]
	t.rows = t.rows[:len(t.rows)-1]
	return last
}

// add offers a row from the range starting at rangeMin.
func (t *topRows) add(e entry, rangeMin string) {
	if t.k == 0 {
		return
	}
	t.seq++
	r := ranked{e: e, rangeMin: rangeMin, seq: t.seq}
	if len(t.rows) < t.k {
		heap.Push(t, r)
		return
	}
	if t.before(&r, &t.rows[0]) {
		t.rows[0] = r
		heap.Fix(t, 0)
	}
}

// results are the kept rows' payloads, best first (rows whose projection is undefined
// yield nothing).
func (t *topRows) results() []json.RawMessage {
	sorted := make([]ranked, len(t.rows))
	for i := len(sorted) - 1; i >= 0; i-- {
		sorted[i] = heap.Pop(t).(ranked)
	}
	out := make([]json.RawMessage, 0, len(sorted))
	for _, r := range sorted {
		if r.e.out != nil {
			out = append(out, r.e.out)
		}
	}
	return out
}
