package emulator

import (
	"cmp"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// Live splits and merges of partition key ranges, with the documents really moved.
//
// A split retires a range and puts two in its place, each holding the documents whose
// effective partition key falls in it; a merge retires two adjacent ranges and puts
// one in their place. What the service does, and the emulator with it:
//
//   - New ranges take the next ids, and parents lists every range the new one descends
//     from, oldest first: "if range with id '1' splits into '2' and '3', then Parents
//     for ranges '2' and '3' will be ['1']. If range '3' splits into '4' and '5', then
//     parents for ranges '4' and '5' will be ['1', '3']" (PartitionKeyRange.Parents in
//     the .NET SDK, azure-cosmos-dotnet-v3). The SDKs' routing maps drop every range
//     some new range names as a parent (azcosmos collectionRoutingMap.tryCombine).
//   - A retired range answers 410/1002 PartitionKeyRangeGone to a request addressed to
//     it by x-ms-documentdb-partitionkeyrangeid, the signal on which every SDK re-reads
//     the ranges (azcosmos isPartitionKeyRangeGoneError; the JS SDK's
//     ParallelQueryExecutionContextBase "split or merge" handling).
//   - The ranges feed changes: its etag moves on, and an incremental read (A-IM) from an
//     earlier etag returns the new ranges only (dispatch.go servePKRanges).
//   - A child continues from its parent's LSN, so that the parent's change feed
//     continuation is a valid continuation on each child: the SDKs hand the parent's
//     etag to every child ("copying the inheritETag pointer onto every child so no
//     events are skipped at the split boundary", azcosmos buildChildQueueEntries; the
//     .NET SDK's FeedRangeCompositeContinuation does the same). Documents keep their
//     LSNs. A merged range continues from the higher of its parents' LSNs; each
//     document keeps its LSN, so a parent's continuation scoped to the parent's EPK
//     range (x-ms-start-epk/x-ms-end-epk, as the .NET SDK sends it after a merge) reads
//     exactly that parent's later changes. How the service numbers LSNs after a merge is
//     documented nowhere (README, emulator fidelity).
//
// Where the service splits a range is its own choice (it splits by storage and
// throughput, documented nowhere in detail); the emulator splits at the median
// effective partition key of the documents, so both children get documents, unless
// the caller names the boundary.

// topology is a container's partition key ranges at one moment; a split or a merge
// stores a new one.
type topology struct {
	// parts are the live ranges in effective partition key order.
	parts []*partition
	// nextID is the id the next new range gets, nextSeq its place in the ranges feed.
	nextID, nextSeq int
	// retired are the ranges splits and merges have retired, by id, with the bounds
	// they had: a query continuation they issued is a position within those bounds
	// (querytarget.go).
	retired map[string]cosmos.PartitionKeyRange
}

// partitions are the container's live ranges, in effective partition key order.
func (c *container) partitions() []*partition { return c.topo.Load().parts }

// lockedPartitionFor is the range holding pk, locked for writing: a range retired
// between routing and locking is let go and the key routed again.
func (c *container) lockedPartitionFor(pk cosmos.PartitionKey) *partition {
	for {
		p := c.partitionFor(pk)
		p.mu.Lock()
		if !p.gone {
			return p
		}
		p.mu.Unlock()
	}
}

// rLockedPartitionFor is lockedPartitionFor for reading.
func (c *container) rLockedPartitionFor(pk cosmos.PartitionKey) *partition {
	for {
		p := c.partitionFor(pk)
		p.mu.RLock()
		if !p.gone {
			return p
		}
		p.mu.RUnlock()
	}
}

// descendsFrom reports whether range p took the place (by split or merge, at any
// depth) of the range with id ancestor.
func (p *partition) descendsFrom(ancestor string) bool {
	return slices.Contains(p.rng.Parents, ancestor)
}

// retired reports whether id names a range of c that a split or merge retired.
func (c *container) retired(id string) bool {
	_, ok := c.topo.Load().retired[id]
	return ok
}

// successor is the topology that replaces t once the ranges gone are retired: its
// parts are still to be filled in.
func (t *topology) successor(gone ...*partition) *topology {
	nt := &topology{nextID: t.nextID, nextSeq: t.nextSeq, retired: maps.Clone(t.retired)}
	if nt.retired == nil {
		nt.retired = map[string]cosmos.PartitionKeyRange{}
	}
	for _, p := range gone {
		nt.retired[p.rng.ID] = p.rng
	}
	return nt
}

// RangeChange is what a split or a merge did: the ranges it retired and the ones it
// created in their place.
type RangeChange struct {
	Database  string                     `json:"database"`
	Container string                     `json:"container"`
	Retired   []string                   `json:"retired"`
	Created   []cosmos.PartitionKeyRange `json:"created"`
	// Documents is how many documents each created range holds, in Created's order.
	Documents []int `json:"documents"`
}

// splitRange splits the live range id of c at the effective partition key at, or at
// the median of its documents' keys when at is "".
func (s *store) splitRange(c *container, id, at string) (RangeChange, error) {
	if s.disk != nil {
		return RangeChange{}, errPersistentReshape
	}
	c.reshape.Lock()
	defer c.reshape.Unlock()
	t := c.topo.Load()
	i := slices.IndexFunc(t.parts, func(p *partition) bool { return p.rng.ID == id })
	if i < 0 {
		return RangeChange{}, fmt.Errorf("container %s has no partition key range %q; its ranges are %s", c.meta.ID, id, rangeIDs(t.parts))
	}
	p := t.parts[i]
	p.mu.Lock()
	defer p.mu.Unlock()
	lo, hi := p.rng.MinInclusive, p.rng.MaxExclusive
	at = strings.ToUpper(at)
	if at == "" {
		at = medianEPK(p, lo, hi)
	}
	if at == "" || at <= lo || (hi != "FF" && at >= hi) || at >= "FF" {
		return RangeChange{}, fmt.Errorf("range %s [%q, %q) cannot be split at %q: the boundary must lie strictly inside it", id, lo, hi, at)
	}
	now := s.clock.Now()
	nt := t.successor(p)
	left := c.newRange(nt, p.rng.Parents, []string{p.rng.ID}, lo, at, p.rng.ThroughputFraction/2, now.Unix())
	right := c.newRange(nt, p.rng.Parents, []string{p.rng.ID}, at, hi, p.rng.ThroughputFraction/2, now.Unix())
	for _, child := range []*partition{left, right} {
		child.lsn = p.lsn
		child.commits = slices.Clone(p.commits)
	}
	for k, e := range p.items {
		if cosmos.EffectivePartitionKey(e.pk) < at {
			left.items[k] = e.clone()
		} else {
			right.items[k] = e.clone()
		}
	}
	left.rebuildCreationOrder()
	right.rebuildCreationOrder()
	ch := RangeChange{Database: c.db.meta.ID, Container: c.meta.ID, Retired: []string{id},
		Created: []cosmos.PartitionKeyRange{left.rng, right.rng}, Documents: []int{len(left.items), len(right.items)}}
	p.gone = true
	nt.parts = slices.Concat(t.parts[:i], []*partition{left, right}, t.parts[i+1:])
	c.topo.Store(nt)
	return ch, nil
}

// mergeRanges merges two adjacent live ranges of c into one.
func (s *store) mergeRanges(c *container, a, b string) (RangeChange, error) {
	if s.disk != nil {
		return RangeChange{}, errPersistentReshape
	}
	c.reshape.Lock()
	defer c.reshape.Unlock()
	t := c.topo.Load()
	i := slices.IndexFunc(t.parts, func(p *partition) bool { return p.rng.ID == a })
	j := slices.IndexFunc(t.parts, func(p *partition) bool { return p.rng.ID == b })
	switch {
	case i < 0 || j < 0:
		missing := a
		if i >= 0 {
			missing = b
		}
		return RangeChange{}, fmt.Errorf("container %s has no partition key range %q; its ranges are %s", c.meta.ID, missing, rangeIDs(t.parts))
	case i == j:
		return RangeChange{}, fmt.Errorf("a merge needs two different ranges, not %q twice", a)
	case i > j:
		i, j = j, i
	}
	if j != i+1 {
		return RangeChange{}, fmt.Errorf("ranges %s and %s are not adjacent: only neighbouring ranges merge (ranges in order: %s)", a, b, rangeIDs(t.parts))
	}
	p, q := t.parts[i], t.parts[j]
	p.mu.Lock()
	defer p.mu.Unlock()
	q.mu.Lock()
	defer q.mu.Unlock()
	now := s.clock.Now()
	nt := t.successor(p, q)
	lineage := slices.Concat(p.rng.Parents, q.rng.Parents)
	m := c.newRange(nt, lineage, []string{p.rng.ID, q.rng.ID}, p.rng.MinInclusive, q.rng.MaxExclusive,
		p.rng.ThroughputFraction+q.rng.ThroughputFraction, now.Unix())
	m.lsn = max(p.lsn, q.lsn)
	m.commits = slices.Concat(p.commits, q.commits)
	slices.SortFunc(m.commits, func(x, y commit) int { return cmp.Compare(x.lsn, y.lsn) })
	for _, src := range []*partition{p, q} {
		for k, e := range src.items {
			m.items[k] = e.clone()
		}
		src.gone = true
	}
	m.rebuildCreationOrder()
	ch := RangeChange{Database: c.db.meta.ID, Container: c.meta.ID, Retired: []string{p.rng.ID, q.rng.ID},
		Created: []cosmos.PartitionKeyRange{m.rng}, Documents: []int{len(m.items)}}
	nt.parts = slices.Concat(t.parts[:i], []*partition{m}, t.parts[j+1:])
	c.topo.Store(nt)
	return ch, nil
}

var errPersistentReshape = fmt.Errorf("splits and merges are not supported on a persistent emulator (--data-dir): its data file keeps the ranges the containers were created with")

// newRange builds an empty range of c with the next id and feed position of t (which
// it advances, t being the topology under construction): parents are the ranges it
// replaces, after their own lineage.
func (c *container) newRange(t *topology, lineage, parents []string, lo, hi string, fraction float64, ts int64) *partition {
	id := strconv.Itoa(t.nextID)
	seq := t.nextSeq
	t.nextID++
	t.nextSeq++
	var all []string
	for _, id := range slices.Concat(lineage, parents) {
		if !slices.Contains(all, id) {
			all = append(all, id)
		}
	}
	return &partition{
		items: map[string]*itemEntry{}, seq: seq,
		rng: cosmos.PartitionKeyRange{
			ID: id, RID: c.meta.RID, Self: c.meta.Self + "pkranges/" + id + "/",
			ETag: fmt.Sprintf(`"%s-%s"`, c.meta.RID, id), TS: ts,
			MinInclusive: lo, MaxExclusive: hi, RidPrefix: t.nextID - 1,
			ThroughputFraction: fraction, Status: "online", Parents: all,
		},
	}
}

// clone copies an entry with its own list of versions, so that the range it moves to
// and the retired range (still read by requests that routed to it before) share no
// mutable state. Versions themselves are never changed once committed.
func (e *itemEntry) clone() *itemEntry {
	c := *e
	c.versions = slices.Clone(e.versions)
	return &c
}

// medianEPK is the median effective partition key of p's documents, strictly above lo
// (so that the left child gets documents too), or the middle of [lo, hi) when p holds
// fewer than two distinct keys.
func medianEPK(p *partition, lo, hi string) string {
	seen := map[string]bool{}
	var keys []string
	for _, e := range p.items {
		k := cosmos.EffectivePartitionKey(e.pk)
		if !seen[k] && k > lo {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if len(keys) >= 2 {
		return keys[len(keys)/2]
	}
	return midpointEPK(lo, hi)
}

// midpointEPK is the middle of [lo, hi) in the space of hashed keys: 32 hex digits
// whose top two bits are clear (PROTOCOL.md), so "FF" stands for 0x40….
func midpointEPK(lo, hi string) string {
	const digits = 32
	num := func(s string) *big.Int {
		s = (s + strings.Repeat("0", digits))[:digits]
		n, _ := new(big.Int).SetString(s, 16)
		return n
	}
	l := num(lo)
	h := num("40")
	if hi != "FF" {
		h = num(hi)
	}
	m := new(big.Int).Add(l, h)
	m.Rsh(m, 1)
	out := fmt.Sprintf("%0*X", digits, m)
	for len(out) > 2 && strings.HasSuffix(out, "00") {
		out = out[:len(out)-2]
	}
	return out
}

func rangeIDs(parts []*partition) string {
	ids := make([]string, len(parts))
	for i, p := range parts {
		ids[i] = p.rng.ID
	}
	return strings.Join(ids, ", ")
}
