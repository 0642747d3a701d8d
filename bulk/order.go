package bulk

import (
	"context"
	"sync"
)

// Lines with the same item (the same id in the same partition key) are written one at a
// time and in the input's order, so that the item ends as a sequential import would
// leave it: the last line's document, whatever the concurrency. The next line of an
// item is sent only when the tracker has settled the line before it, so that no
// checkpoint ever holds a line done while an earlier line of the same item is not
// (resuming would then send the earlier line after the later one). Lines of different
// items go out in parallel as before.
//
// keyOrder holds, for every item with a line being written, the lines of that item read
// since, in order. The writer that finishes a line takes the next line of its item
// itself; the reader hands a line to the writers only when no line of its item is being
// written. At most maxWaiting lines wait behind others (the reader blocks beyond that),
// so that a file with one id on every line cannot fill the memory.
type keyOrder struct {
	mu      sync.Mutex
	waiting map[string][]job // an item with a line being written -> its lines read since
	slots   chan struct{}    // one per line waiting behind another
}

func newKeyOrder(maxWaiting int) *keyOrder {
	return &keyOrder{waiting: map[string][]job{}, slots: make(chan struct{}, maxWaiting)}
}

// admit is the reader's: it reports whether j may be sent now (no line of its item is
// being written, and j now is), or queues it behind the line being written. It blocks
// while maxWaiting lines wait already, until ctx ends.
func (k *keyOrder) admit(ctx context.Context, j job) (sendNow bool, err error) {
	select {
	case k.slots <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if q, busy := k.waiting[j.key]; busy {
		k.waiting[j.key] = append(q, j)
		return false, nil // it keeps its slot until a writer takes it
	}
	k.waiting[j.key] = nil
	<-k.slots
	return true, nil
}

// next is the writer's, after the tracker settled its line of item key: the next line
// of the item to write, or false when none waits (the item is then free).
func (k *keyOrder) next(key string) (job, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	q := k.waiting[key]
	if len(q) == 0 {
		delete(k.waiting, key)
		return job{}, false
	}
	j := q[0]
	q[0] = job{}
	k.waiting[key] = q[1:]
	<-k.slots
	return j, true
}

// itemKey identifies an item: its id and partition key.
func itemKey(id string, pkJSON string) string { return pkJSON + "\x00" + id }
