package emulator

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// store holds every database, container and document of the account. Metadata sits
// under one lock; documents sit in partitions with a lock each, so that point operations
// on different partitions never wait for one another.
type store struct {
	mu     sync.RWMutex
	dbs    map[string]*database
	ridSeq uint32
	ranges int
	disk   *disk
	clock  faults.Clock
	// lag is the replication lag in nanoseconds; it changes at run time.
	lag atomic.Int64
	// maxStale is the K of a BoundedStaleness account: no region may be more than
	// this many writes behind in a partition (recordCommit); 0 = no bound.
	maxStale int64
	docSeq   atomic.Uint64
	// skipped counts the unreadable records the start skipped in the data file.
	skipped int
	// scanExamined counts the index entries that query scans examined (docorder.go):
	// tests and benchmarks read it to show that a page seeks rather than walks.
	scanExamined atomic.Uint64
}

type database struct {
	meta  cosmos.Database
	seq   uint32
	colls map[string]*container
}

type container struct {
	// meta is the resource as it was created. What a replace may change (the indexing,
	// unique key, vector and full-text policies, defaultTtl, _etag and _ts) is read
	// through resource(), never from meta.
	meta cosmos.Container
	db   *database
	seq  uint32
	// current is the resource as last created or replaced (containerreplace.go).
	current atomic.Pointer[cosmos.Container]
	// policy is the indexing policy of current, parsed (indexpolicy.go).
	policy atomic.Pointer[parsedPolicy]
	// topo is the container's partition key ranges (splits.go): replaced whole by a
	// split or a merge, never changed in place.
	topo atomic.Pointer[topology]
	// reshape serializes splits and merges of the container.
	reshape sync.Mutex
	// usage is what the quota and usage headers report (responsemeta.go).
	usage usageCache
	// uniq is the unique key index (uniquekeys.go), nil without a unique key policy.
	// It is set before the container is reachable and never replaced: a replace cannot
	// change the unique key policy.
	uniq *uniqueIndex
}

// partition is one partition key range of a container: its items, its LSN and the
// recent commits that some region may not have seen yet.
type partition struct {
	mu      sync.RWMutex
	rng     cosmos.PartitionKeyRange
	lsn     int64
	items   map[string]*itemEntry
	commits []commit
	// seq is the range's place in the partition key ranges feed: the order the ranges
	// were created in (splits.go).
	seq int
	// gone is set, under mu, once a split or merge has moved the range's documents to
	// the ranges that replace it: a writer that routed here before must route again.
	gone bool
	// byCreation is items in creation order, with removed entries among them until
	// the next compaction (docorder.go); removedEntries counts those.
	byCreation     []*itemEntry
	removedEntries int
}

type commit struct {
	lsn       int64
	committed time.Time
	origin    int
	// key is the document the commit wrote (itemKey), so that a commit can be made
	// visible early (recordCommit).
	key string
}

// itemEntry is one logical document (id within a logical partition) and the versions of
// it that some region can still see, oldest first.
type itemEntry struct {
	id       string
	pk       cosmos.PartitionKey
	rid      string
	seq      uint64
	versions []*itemVersion
	// removed is set, under the partition's lock, once the entry has left its
	// partition's items (docorder.go).
	removed bool
}

// itemVersion is one committed state of a document; a nil body is a deletion.
type itemVersion struct {
	body      []byte
	etag      string
	lsn       int64
	ts        int64
	committed time.Time
	origin    int
	// ttl is the document's own time to live (ttl.go): -1, seconds, or 0 for none.
	ttl int32
	// uniq are the document's unique key index entries (uniquekeys.go), for a
	// container with unique keys.
	uniq []string
}

func newStore(ranges int, clock faults.Clock, d *disk) *store {
	return &store{dbs: map[string]*database{}, ranges: ranges, clock: clock, disk: d}
}

func itemKey(pk cosmos.PartitionKey, id string) string { return pk.Identity() + "\x00" + id }

// visibleIn returns the newest version that region can see now: its own writes at once,
// everybody else's once the replication lag has passed.
func (e *itemEntry) visibleIn(region int, now time.Time, lag time.Duration) *itemVersion {
	for i := len(e.versions) - 1; i >= 0; i-- {
		v := e.versions[i]
		if lag == 0 || v.origin == region || !v.committed.Add(lag).After(now) {
			return v
		}
	}
	return nil
}

func (e *itemEntry) latest() *itemVersion {
	if len(e.versions) == 0 {
		return nil
	}
	return e.versions[len(e.versions)-1]
}

// prune drops versions that no region can see any more: everything older than the newest
// version that every region already sees.
func (e *itemEntry) prune(now time.Time, lag time.Duration) {
	for i := len(e.versions) - 1; i > 0; i-- {
		if !e.versions[i].committed.Add(lag).After(now) {
			e.versions = append(e.versions[:0], e.versions[i:]...)
			return
		}
	}
}

// caughtUpLSN is the LSN that region has seen every commit up to.
func (p *partition) caughtUpLSN(region int, now time.Time, lag time.Duration) int64 {
	if lag > 0 {
		for _, c := range p.commits {
			if c.origin != region && c.committed.Add(lag).After(now) {
				return c.lsn - 1
			}
		}
	}
	return p.lsn
}

// recordCommit notes a commit some region may not have seen yet. With a staleness
// bound of maxStale versions (BoundedStaleness), the oldest commits beyond it become
// visible everywhere at once, with the document versions they wrote: the bound holds
// however long the replication lag (consistency.go). The service throttles writes
// instead; the emulator replicates early.
func (p *partition) recordCommit(c commit, now time.Time, lag time.Duration, maxStale int64) {
	if lag == 0 {
		p.commits = p.commits[:0]
		return
	}
	i := 0
	for i < len(p.commits) && !p.commits[i].committed.Add(lag).After(now) {
		i++
	}
	p.commits = append(p.commits[i:], c)
	if maxStale <= 0 || int64(len(p.commits)) <= maxStale {
		return
	}
	over := len(p.commits) - int(maxStale)
	seen := now.Add(-lag)
	for _, old := range p.commits[:over] {
		if e := p.items[old.key]; e != nil {
			for _, v := range e.versions {
				if v.lsn == old.lsn {
					v.committed = seen
				}
			}
		}
	}
	p.commits = append(p.commits[:0], p.commits[over:]...)
}

func (c *container) partitionFor(pk cosmos.PartitionKey) *partition {
	parts := c.partitions()
	if len(parts) == 1 {
		return parts[0]
	}
	return partitionForEPK(parts, cosmos.EffectivePartitionKey(pk))
}

// partitionForEPK is the range of parts that holds an effective partition key.
func partitionForEPK(parts []*partition, epk string) *partition {
	for _, p := range parts {
		if epk >= p.rng.MinInclusive && (p.rng.MaxExclusive == "FF" || epk < p.rng.MaxExclusive) {
			return p
		}
	}
	return parts[len(parts)-1]
}

func (c *container) partitionByID(id string) *partition {
	for _, p := range c.partitions() {
		if p.rng.ID == id {
			return p
		}
	}
	return nil
}

func (c *container) ranges() []cosmos.PartitionKeyRange {
	parts := c.partitions()
	out := make([]cosmos.PartitionKeyRange, len(parts))
	for i, p := range parts {
		out[i] = p.rng
	}
	return out
}

// Resource ids follow the service's layout: a database _rid is 4 bytes, a container's is
// the database's followed by 4 more, a document's the container's followed by 8 more.
// The service's base64 uses '-' where standard base64 has '/'.
func ridString(b []byte) string {
	s := base64.StdEncoding.EncodeToString(b)
	out := []byte(s)
	for i, ch := range out {
		if ch == '/' {
			out[i] = '-'
		}
	}
	return string(out)
}

func dbRIDBytes(seq uint32) []byte {
	b := make([]byte, 4)
	binary.LittleEndian.PutUint32(b, seq)
	return b
}

func collRIDBytes(dbSeq, seq uint32) []byte {
	b := dbRIDBytes(dbSeq)
	b = binary.LittleEndian.AppendUint32(b, seq|0x80000000)
	return b
}

func docRID(dbSeq, collSeq uint32, seq uint64) string {
	b := collRIDBytes(dbSeq, collSeq)
	b = binary.LittleEndian.AppendUint64(b, seq)
	return ridString(b)
}

func (s *store) nextRID() uint32 {
	s.ridSeq++
	return s.ridSeq
}

// newDatabase and newContainer build resources without storing them.
func newDatabase(id string, seq uint32, ts int64) *database {
	rid := ridString(dbRIDBytes(seq))
	return &database{
		seq:   seq,
		colls: map[string]*container{},
		meta: cosmos.Database{
			ID: id, RID: rid, Self: "dbs/" + rid + "/", ETag: fmt.Sprintf(`"%08x-0000-0000-0000-000000000000"`, seq),
			TS: ts, Colls: "colls/", Users: "users/",
		},
	}
}

func newContainer(db *database, id string, seq uint32, def cosmos.PartitionKeyDefinition, ranges int, ts int64) *container {
	rid := ridString(collRIDBytes(db.seq, seq))
	c := &container{db: db, seq: seq}
	c.meta = cosmos.Container{
		ID: id, RID: rid, Self: "dbs/" + db.meta.RID + "/colls/" + rid + "/",
		ETag: fmt.Sprintf(`"%08x-0000-0000-0000-%012x"`, db.seq, seq), TS: ts,
		PartitionKey:   def,
		IndexingPolicy: []byte(`{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`),
		Docs:           "docs/", Sprocs: "sprocs/", Triggers: "triggers/", Udfs: "udfs/", Conflicts: "conflicts/",
	}
	c.setResource(c.meta)
	bounds := cosmos.EvenRangeBoundaries(ranges)
	t := &topology{nextID: ranges, nextSeq: ranges + 1}
	for i := 0; i < ranges; i++ {
		t.parts = append(t.parts, &partition{
			items: map[string]*itemEntry{}, seq: i + 1,
			rng: cosmos.PartitionKeyRange{
				ID: fmt.Sprint(i), RID: rid, Self: c.meta.Self + "pkranges/" + fmt.Sprint(i) + "/",
				ETag: fmt.Sprintf(`"%s-%d"`, rid, i), TS: ts,
				MinInclusive: bounds[i], MaxExclusive: bounds[i+1], RidPrefix: i,
				ThroughputFraction: 1 / float64(ranges), Status: "online", Parents: []string{},
			},
		})
	}
	c.topo.Store(t)
	return c
}

func (s *store) database(id string) *database {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.dbs[id]
}

func (s *store) container(db, coll string) (*container, *cosmos.Error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d := s.dbs[db]
	if d == nil {
		return nil, notFound(fmt.Sprintf("database %q does not exist", db))
	}
	c := d.colls[coll]
	if c == nil {
		return nil, notFound(fmt.Sprintf("container %q does not exist in database %q", coll, db))
	}
	return c, nil
}

// containerByRID finds a container by its database's and its own _rid.
func (s *store) containerByRID(dbRID, collRID string) *container {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, d := range s.dbs {
		if d.meta.RID != dbRID {
			continue
		}
		for _, c := range d.colls {
			if c.meta.RID == collRID {
				return c
			}
		}
	}
	return nil
}

// allContainers lists every container, databases and containers in creation order.
func (s *store) allContainers() []*container {
	s.mu.RLock()
	defer s.mu.RUnlock()
	dbs := make([]*database, 0, len(s.dbs))
	for _, d := range s.dbs {
		dbs = append(dbs, d)
	}
	sort.Slice(dbs, func(i, j int) bool { return dbs[i].seq < dbs[j].seq })
	var out []*container
	for _, d := range dbs {
		colls := make([]*container, 0, len(d.colls))
		for _, c := range d.colls {
			colls = append(colls, c)
		}
		sort.Slice(colls, func(i, j int) bool { return colls[i].seq < colls[j].seq })
		out = append(out, colls...)
	}
	return out
}

func (s *store) listDatabases() []cosmos.Database {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*database, 0, len(s.dbs))
	for _, d := range s.dbs {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	metas := make([]cosmos.Database, len(out))
	for i, d := range out {
		metas[i] = d.meta
	}
	return metas
}

func (s *store) listContainers(db string) ([]cosmos.Container, *cosmos.Error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d := s.dbs[db]
	if d == nil {
		return nil, notFound(fmt.Sprintf("database %q does not exist", db))
	}
	out := make([]*container, 0, len(d.colls))
	for _, c := range d.colls {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	metas := make([]cosmos.Container, len(out))
	for i, c := range out {
		metas[i] = c.resource()
	}
	return metas, nil
}

func (s *store) createDatabase(id string) (cosmos.Database, *cosmos.Error) {
	if err := validateResourceID("database", id); err != nil {
		return cosmos.Database{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.dbs[id]; ok {
		return cosmos.Database{}, conflict(fmt.Sprintf("database %q already exists", id))
	}
	d := newDatabase(id, s.nextRID(), s.clock.Now().Unix())
	if s.disk != nil {
		if err := s.disk.putDatabase(d, s.ridSeq); err != nil {
			return cosmos.Database{}, storageError(err)
		}
	}
	s.dbs[id] = d
	return d.meta, nil
}

func (s *store) deleteDatabase(id string) *cosmos.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dbs[id]
	if d == nil {
		return notFound(fmt.Sprintf("database %q does not exist", id))
	}
	if s.disk != nil {
		if err := s.disk.deleteDatabase(d); err != nil {
			return storageError(err)
		}
	}
	delete(s.dbs, id)
	return nil
}

// createContainer creates container id partitioned by def, with the policies and
// defaultTtl of props (the rest of props is ignored).
func (s *store) createContainer(db, id string, def cosmos.PartitionKeyDefinition, props cosmos.Container) (cosmos.Container, *cosmos.Error) {
	if err := validateResourceID("container", id); err != nil {
		return cosmos.Container{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dbs[db]
	if d == nil {
		return cosmos.Container{}, notFound(fmt.Sprintf("database %q does not exist", db))
	}
	if _, ok := d.colls[id]; ok {
		return cosmos.Container{}, conflict(fmt.Sprintf("container %q already exists in database %q", id, db))
	}
	c := newContainer(d, id, s.nextRID(), def, s.ranges, s.clock.Now().Unix())
	c.meta = withConflictPolicy(withPolicies(c.meta, props), db)
	c.setResource(c.meta)
	c.uniq = newUniqueIndex(c.meta)
	if s.disk != nil {
		if err := s.disk.putContainer(c, c.meta, s.ridSeq); err != nil {
			return cosmos.Container{}, storageError(err)
		}
	}
	d.colls[id] = c
	return c.meta, nil
}

func (s *store) deleteContainer(db, id string) *cosmos.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dbs[db]
	if d == nil {
		return notFound(fmt.Sprintf("database %q does not exist", db))
	}
	c := d.colls[id]
	if c == nil {
		return notFound(fmt.Sprintf("container %q does not exist in database %q", id, db))
	}
	if s.disk != nil {
		if err := s.disk.deleteContainer(c); err != nil {
			return storageError(err)
		}
	}
	delete(d.colls, id)
	return nil
}

// ensureContainer creates a database and container unless they exist (pre-created
// resources of a scenario survive restarts of a persistent store).
func (s *store) ensureContainer(db, coll string, def cosmos.PartitionKeyDefinition) error {
	if s.database(db) == nil {
		if _, err := s.createDatabase(db); err != nil && err.StatusCode != 409 {
			return err
		}
	}
	if _, err := s.createContainer(db, coll, def, cosmos.Container{}); err != nil && err.StatusCode != 409 {
		return err
	}
	return nil
}

// readItem returns the version of a document that region sees now, and the LSN that
// region has caught up to in the document's partition.
func (s *store) readItem(c *container, pk cosmos.PartitionKey, id string, region int) (*itemVersion, *partition, int64) {
	p := c.rLockedPartitionFor(pk)
	now := s.clock.Now()
	lag := time.Duration(s.lag.Load())
	defer p.mu.RUnlock()
	caught := p.caughtUpLSN(region, now, lag)
	e := p.items[itemKey(pk, id)]
	if e == nil {
		return nil, p, caught
	}
	v := e.visibleIn(region, now, lag)
	if !c.live(v, now) {
		return nil, p, caught
	}
	return v, p, caught
}

// mutation decides a write given the current latest version of the document (nil when
// there is none): the new body (system properties are added afterwards), whether to
// delete instead, or an error such as 409 or 412 that leaves the store unchanged.
type mutation func(cur *itemVersion, rid string) (body []byte, del bool, err *cosmos.Error)

// writeResult is what a committed write tells the handler.
type writeResult struct {
	version *itemVersion
	created bool
	part    *partition
	// lsn is the partition's LSN after the write (or at its refusal), read under the
	// partition's lock: the handler must not read part.lsn itself.
	lsn int64
}

// write applies a mutation to one document atomically within its partition. The new
// version is on disk before it is visible, so a write acknowledged to a client survives
// a crash.
func (s *store) write(c *container, pk cosmos.PartitionKey, id string, region int, m mutation) (writeResult, *cosmos.Error) {
	return s.writeAdmitted(c, pk, id, region, m, nil)
}

// admission decides, once a write's new version is built (its body nil for a delete)
// and before anything is stored, whether its charge may be spent: nil, or the 429
// that refuses it (throughput.go). A nil admission admits every write.
type admission func(next *itemVersion) *cosmos.Error

// writeAdmitted is write with an admission check before the commit.
func (s *store) writeAdmitted(c *container, pk cosmos.PartitionKey, id string, region int, m mutation, admit admission) (writeResult, *cosmos.Error) {
	p := c.lockedPartitionFor(pk)
	key := itemKey(pk, id)
	defer p.mu.Unlock()
	now := s.clock.Now()
	lag := time.Duration(s.lag.Load())
	e := p.items[key]
	var cur *itemVersion
	if e != nil {
		if l := e.latest(); c.live(l, now) {
			cur = l
		}
	}
	rid := ""
	if e != nil {
		rid = e.rid
	}
	seq := uint64(0)
	if rid == "" {
		seq = s.docSeq.Add(1)
		rid = docRID(c.db.seq, c.seq, seq)
	}
	body, del, err := m(cur, rid)
	if err != nil {
		return writeResult{part: p, lsn: p.lsn}, err
	}
	if !del {
		// The handlers check these limits before they get here; this is the guard for
		// every other way in (batch, bulk), so that nothing is stored that the service
		// would have refused.
		if err := checkItemLimits(id, pk); err != nil {
			return writeResult{part: p, lsn: p.lsn}, err
		}
	}
	v := &itemVersion{lsn: p.lsn + 1, ts: now.Unix(), committed: now, origin: region}
	if !del {
		// The limit applies to the client's document; the system properties the
		// service adds do not count against it.
		if len(body) > MaxDocumentBytes {
			return writeResult{part: p, lsn: p.lsn}, tooLarge(len(body))
		}
		v.etag, v.ttl = newETag(), itemTTL(body)
		v.body, err = withSystemProperties(body, rid, c, v.etag, v.ts)
		if err != nil {
			if jsonNestingDepth(body) > maxNestingDepth {
				// A patch can nest a value deeper than any request body could.
				err = tooDeep()
			}
			return writeResult{part: p, lsn: p.lsn}, err
		}
	}
	if c.uniq != nil && !del {
		v.uniq = c.uniq.entries(pk, v.body)
		if err := c.uniq.check(c, p, pk, id, v.uniq, now); err != nil {
			return writeResult{part: p, lsn: p.lsn}, err
		}
	}
	if admit != nil {
		if err := admit(v); err != nil {
			return writeResult{part: p, lsn: p.lsn}, err
		}
	}
	if s.disk != nil {
		var derr error
		if del {
			derr = s.disk.deleteItem(c, p.rng.ID, key, v.lsn)
		} else {
			if e != nil {
				seq = e.seq
			}
			derr = s.disk.putItem(c, p.rng.ID, key, diskItem{id: id, pk: pk, rid: rid, seq: seq, lsn: v.lsn, ts: v.ts, etag: v.etag, body: v.body}, s.docSeq.Load())
		}
		if derr != nil {
			return writeResult{part: p, lsn: p.lsn}, storageError(derr)
		}
	}
	created := cur == nil
	if c.uniq != nil {
		var was []string
		if e != nil {
			if l := e.latest(); l != nil {
				was = l.uniq
			}
		}
		c.uniq.update(id, was, v.uniq)
	}
	if e == nil {
		e = &itemEntry{id: id, pk: pk, rid: rid, seq: seq}
		p.addEntry(key, e)
	}
	e.versions = append(e.versions, v)
	e.prune(now, lag)
	if del && len(e.versions) == 1 {
		p.removeEntry(key)
	}
	p.lsn = v.lsn
	p.recordCommit(commit{lsn: v.lsn, committed: now, origin: region, key: key}, now, lag, s.maxStale)
	return writeResult{version: v, created: created, part: p, lsn: p.lsn}, nil
}
