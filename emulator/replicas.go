package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// Replica sets, the gateway's //addresses/ endpoint and the "replica moved" fault.
//
// Every region × container × partition key range has a replica set of Config.Replicas
// replicas (default 4): index 0 is the primary, the others are secondaries. Real
// replicas speak RNTBD on their own hosts; the emulator serves every replica over the
// ordinary HTTP API on its region's port, under an address prefix:
//
//	http://127.0.0.1:PORT/apps/<account>/services/<collection rid>/partitions/<range id>/replicas/<replica id>(p|s)/
//
// ("p" for the primary, "s" for a secondary; the collection rid uses '-' where standard
// base64 has '/'). A client appends the resource path to the address —
// <address>dbs/<db>/colls/<coll>/docs/<id> — and signs the request for that resource
// path exactly as for the regional endpoint: the address prefix is not signed.
//
// A replica serves item operations (read, create, upsert, replace, delete, patch) and
// queries and read feeds scoped to its range, from the one store of its region: the
// answer is what the regional endpoint would give, and writes to a secondary are served
// too (clients send writes to the primary). What differs:
//
//   - a request whose partition key lies outside the replica's range answers
//     410/1002 (PartitionKeyRangeGone): the client routed it wrongly;
//   - a request whose container is not the one the address names (deleted and
//     re-created since) answers 410/1000 (NameCacheIsStale);
//   - fault rules with replica = "<range id>:<replica id>" (e.g. "0:7") apply to it
//     and to nothing else, and its requests are counted (GET /_emulator/replicas);
//   - once moved (ReplicaMove), it answers every request per the move's effect.
//
// Replica ids are unique in the account; a replica that replaces a moved one gets a new
// id and so a new address. Addresses that were never handed out answer 404.

// Replica move effects.
const (
	MoveGone   = "gone"   // answer 410/0 (Gone)
	MoveHang   = "hang"   // never answer; hold the request until the client disconnects
	MoveRefuse = "refuse" // reset the connection
)

// DefaultReplicas is the size of a replica set; DefaultGatewayCacheTTL is how long the
// gateway's address cache keeps serving a stale set to requests without force refresh;
// DefaultMoveRefreshDelay is how long the gateway keeps returning the old set after a
// replica moved.
const (
	DefaultReplicas         = 4
	DefaultGatewayCacheTTL  = 30 * time.Second
	DefaultMoveRefreshDelay = 2 * time.Second
)

// Replica states reported by GET /_emulator/replicas.
const (
	ReplicaServing = "serving"
)

// ReplicaMove moves one replica of a replica set. From After on, the old replica
// answers every request per Effect, forever. The gateway keeps returning the old set
// (with the old replica) until After+RefreshDelay; from then on requests with
// x-ms-force-refresh: true get the new set, in which a new replica (new id, new address)
// has taken the old one's index, and plain requests get it once the gateway's cache
// expires, GatewayCacheTTL later.
type ReplicaMove struct {
	Region    string `toml:"region" json:"region"`
	Database  string `toml:"database" json:"database"`
	Container string `toml:"container" json:"container"`
	// Range is the partition key range id; "" is "0".
	Range string `toml:"range,omitempty" json:"range,omitempty"`
	// Replica is the index in the set; 0 means the default, 1 (a secondary). Set
	// Primary to move the primary (index 0).
	Replica int  `toml:"replica,omitzero" json:"replica,omitempty"`
	Primary bool `toml:"primary,omitzero" json:"primary,omitempty"`
	// Effect is what the old replica does from After on: "gone" (410/0, the default),
	// "hang" or "refuse".
	Effect string `toml:"effect,omitempty" json:"effect,omitempty"`
	// After is counted from now (control API, Server.MoveReplica) or from emulator
	// start (scenario file).
	After faults.Duration `toml:"after,omitzero" json:"after,omitempty"`
	// RefreshDelay is how long the gateway keeps returning the old set; 0 is the
	// default, 2s.
	RefreshDelay faults.Duration `toml:"refresh_delay,omitzero" json:"refresh_delay,omitempty"`
}

// ReplicaMoveStatus is a registered move, as MoveReplica and GET
// /_emulator/replica-moves report it.
type ReplicaMoveStatus struct {
	ID string `json:"id"`
	// Move is the request with its defaults filled in.
	Move ReplicaMove `json:"move"`
	// OldReplica and NewReplica are fault-rule names ("<range id>:<replica id>").
	OldReplica string `json:"old_replica"`
	OldAddress string `json:"old_address"`
	NewReplica string `json:"new_replica"`
	NewAddress string `json:"new_address"`
	// GoneAt: the old replica stops serving. RefreshAt: address requests with force
	// refresh see the new set. PublishedAt: every address request sees it.
	GoneAt      time.Time `json:"gone_at"`
	RefreshAt   time.Time `json:"refresh_at"`
	PublishedAt time.Time `json:"published_at"`
	// State is "pending" (before GoneAt), "moved" (the gateway still returns the old
	// set), "refreshable" (force refresh sees the new set) or "published".
	State string `json:"state"`
}

// ReplicaSetInfo is one region × container × range replica set.
type ReplicaSetInfo struct {
	Region        string        `json:"region"`
	Database      string        `json:"database"`
	Container     string        `json:"container"`
	CollectionRID string        `json:"collection_rid"`
	Range         string        `json:"range"`
	Replicas      []ReplicaInfo `json:"replicas"`
}

// ReplicaInfo describes one replica: the current members of its set by index, then the
// replicas that have moved away.
type ReplicaInfo struct {
	// Name is what a fault rule's replica field matches: "<range id>:<replica id>".
	Name    string `json:"name"`
	ID      int64  `json:"id"`
	Index   int    `json:"index"`
	Primary bool   `json:"primary"`
	Address string `json:"address"`
	// State is "serving" or "moved (gone|hang|refuse)".
	State    string `json:"state"`
	Requests int64  `json:"requests"`
}

// replicaRegistry holds every replica set that has been looked at. Sets are created
// when first needed (an addresses request, a move, a listing) and kept.
type replicaRegistry struct {
	mu     sync.Mutex
	sets   map[replicaSetKey]*replicaSet
	byID   map[int64]*replica
	lastID int64
	moves  []*replicaMoveRecord
}

type replicaSetKey struct {
	region  int
	collRID string
	rangeID string
}

type replicaSet struct {
	key        replicaSetKey
	rangeIndex int
	initial    []*replica
	// moves in registration order; a later move of the same index chains on the
	// replica the earlier one brought in.
	moves []*replicaMoveRecord
}

type replica struct {
	id       int64
	index    int
	set      *replicaSet
	address  string
	requests atomic.Int64
	// move retires this replica; guarded by the registry's lock.
	move *replicaMoveRecord
}

func (r *replica) name() string { return r.set.key.rangeID + ":" + strconv.FormatInt(r.id, 10) }

type replicaMoveRecord struct {
	id        string
	spec      ReplicaMove
	set       *replicaSet
	index     int
	old, repl *replica
	at        time.Time // the old replica is gone from here
	refreshAt time.Time // force-refresh address requests see the new set from here
}

func newReplicaRegistry() *replicaRegistry {
	return &replicaRegistry{sets: map[replicaSetKey]*replicaSet{}, byID: map[int64]*replica{}}
}

// replicaSet returns the set of region × container × range, creating it on first use.
func (s *Server) replicaSet(region int, c *container, p *partition) *replicaSet {
	s.reps.mu.Lock()
	defer s.reps.mu.Unlock()
	return s.replicaSetLocked(region, c, p)
}

func (s *Server) replicaSetLocked(region int, c *container, p *partition) *replicaSet {
	key := replicaSetKey{region: region, collRID: c.meta.RID, rangeID: p.rng.ID}
	if set := s.reps.sets[key]; set != nil {
		return set
	}
	set := &replicaSet{key: key, rangeIndex: -1}
	for i, q := range c.partitions() {
		if q == p {
			set.rangeIndex = i
		}
	}
	for i := 0; i < s.cfg.Replicas; i++ {
		set.initial = append(set.initial, s.newReplicaLocked(set, i))
	}
	s.reps.sets[key] = set
	return set
}

func (s *Server) newReplicaLocked(set *replicaSet, index int) *replica {
	s.reps.lastID++
	r := &replica{id: s.reps.lastID, index: index, set: set}
	role := "s"
	if index == 0 {
		role = "p"
	}
	base := s.regions[set.key.region].url
	if s.cfg.ReplicaProtocol == ReplicaProtocolRNTBD {
		base = s.regions[set.key.region].rntbdURL
	}
	r.address = base + "/apps/" + url.PathEscape(s.cfg.Account) +
		"/services/" + url.PathEscape(strings.ReplaceAll(set.key.collRID, "/", "-")) +
		"/partitions/" + url.PathEscape(set.key.rangeID) +
		"/replicas/" + strconv.FormatInt(r.id, 10) + role + "/"
	s.reps.byID[r.id] = r
	return r
}

// gatewayView is the set the gateway answers an addresses request with at now: moves
// count once their refresh delay has passed, and for requests without force refresh
// only once the gateway's cache has expired as well.
func (set *replicaSet) gatewayView(now time.Time, forceRefresh bool, ttl time.Duration) []*replica {
	members := append([]*replica(nil), set.initial...)
	for _, m := range set.moves {
		from := m.refreshAt
		if !forceRefresh {
			from = from.Add(ttl)
		}
		if !now.Before(from) {
			members[m.index] = m.repl
		}
	}
	return members
}

// actual is the set's real membership at now, and the replicas that have moved away.
func (set *replicaSet) actual(now time.Time) (members, moved []*replica) {
	members = append([]*replica(nil), set.initial...)
	for _, m := range set.moves {
		if !now.Before(m.at) {
			members[m.index] = m.repl
			moved = append(moved, m.old)
		}
	}
	return members, moved
}

// current is the replica that a new move of index would retire: the last one brought in
// by a move (pending or not), or the original member.
func (set *replicaSet) current(index int) (*replica, *replicaMoveRecord) {
	r := set.initial[index]
	var last *replicaMoveRecord
	for _, m := range set.moves {
		if m.index == index {
			r, last = m.repl, m
		}
	}
	return r, last
}

// replicaAddr is the parsed prefix of a request to a replica address.
type replicaAddr struct {
	malformed bool
	account   string
	collRID   string
	rangeID   string
	id        int64
	primary   bool
}

const replicaAddressForm = "/apps/<account>/services/<collection rid>/partitions/<range id>/replicas/<replica id>(p|s)/"

// splitReplicaAddress recognises a path under a replica address and returns the
// address and the resource path after it ("/dbs/…"). ok is false for paths that do not
// start with /apps/; a path that does but is not a well-formed address comes back with
// addr.malformed set and rest equal to path.
func splitReplicaAddress(path string) (addr *replicaAddr, rest string, ok bool) {
	var segs []string
	pos := 0
	for len(segs) < 8 {
		for pos < len(path) && path[pos] == '/' {
			pos++
		}
		if pos == len(path) {
			break
		}
		end := strings.IndexByte(path[pos:], '/')
		if end < 0 {
			end = len(path)
		} else {
			end += pos
		}
		segs = append(segs, path[pos:end])
		pos = end
		if len(segs) == 1 && segs[0] != "apps" {
			return nil, path, false
		}
	}
	if len(segs) == 0 {
		return nil, path, false
	}
	bad := &replicaAddr{malformed: true}
	if len(segs) < 8 || segs[2] != "services" || segs[4] != "partitions" || segs[6] != "replicas" {
		return bad, path, true
	}
	idPart := segs[7]
	if len(idPart) < 2 {
		return bad, path, true
	}
	role := idPart[len(idPart)-1]
	id, err := strconv.ParseInt(idPart[:len(idPart)-1], 10, 64)
	if err != nil || id <= 0 || (role != 'p' && role != 's') {
		return bad, path, true
	}
	rest = path[pos:]
	if rest == "" {
		rest = "/"
	}
	return &replicaAddr{account: segs[1], collRID: segs[3], rangeID: segs[5], id: id, primary: role == 'p'}, rest, true
}

// replicaOps are the operations a replica address serves.
var replicaOps = map[string]bool{
	faults.OpRead: true, faults.OpQuery: true, faults.OpCreate: true, faults.OpUpsert: true,
	faults.OpReplace: true, faults.OpDelete: true, faults.OpPatch: true,
}

// attachReplica resolves the replica a request is addressed to, counts the request on
// it and carries out a move's effect. It returns false once the request is answered.
func (s *Server) attachReplica(req *request, epRegion int) bool {
	a := req.addr
	if a.malformed {
		s.writeError(req, notFound("no such replica address: "+req.r.URL.Path+" (replica addresses look like "+replicaAddressForm+" and come from //addresses/)"), 0)
		return false
	}
	s.reps.mu.Lock()
	rep := s.reps.byID[a.id]
	ok := rep != nil && a.account == s.cfg.Account && rep.set.key.collRID == a.collRID &&
		rep.set.key.rangeID == a.rangeID && (rep.index == 0) == a.primary
	var move *replicaMoveRecord
	if ok {
		move = rep.move
	}
	s.reps.mu.Unlock()
	if !ok {
		s.writeError(req, notFound("no replica at "+req.r.URL.Path+": the emulator never handed out this address (use the physcialUri values of //addresses/ as they are)"), 0)
		return false
	}
	if epRegion != rep.set.key.region {
		s.writeError(req, notFound("replica "+rep.name()+" belongs to region "+s.regions[rep.set.key.region].name+"; send requests to its address "+rep.address), 0)
		return false
	}
	rep.requests.Add(1)
	req.replica = rep
	req.w.Header().Set(HeaderServedReplica, rep.name())
	if move != nil && !s.clock.Now().Before(move.at) {
		switch move.spec.Effect {
		case MoveHang:
			select {
			case <-req.r.Context().Done():
			case <-s.closing:
			}
			s.abortIfClosing()
		case MoveRefuse:
			s.drop(req)
		default:
			s.writeError(req, cosmosErr(410, 0, "replica "+rep.name()+" has moved (replica move "+move.id+"): this address is gone; resolve the addresses again with "+cosmos.HeaderForceRefresh+": true"), 0)
		}
		return false
	}
	if !replicaOps[req.op] {
		s.writeError(req, notFound("replica addresses serve documents only (point operations and queries under dbs/{db}/colls/{coll}/docs); send "+req.r.Method+" "+req.resPath+" to the regional endpoint"), 0)
		return false
	}
	return true
}

// HeaderServedReplica names the replica that served a request sent to a replica
// address, as "<range id>:<replica id>" (emulator only).
const HeaderServedReplica = "x-ms-cosmos-emulator-replica"

// replicaHolds checks that the replica a request was sent to serves c's partition p:
// 410/1000 when the address names another (since re-created) container, 410/1002 when
// the partition key belongs to another range.
func (s *Server) replicaHolds(req *request, c *container, p *partition) bool {
	rep := req.replica
	if rep == nil {
		return true
	}
	if c.meta.RID != rep.set.key.collRID {
		s.writeError(req, cosmosErr(410, cosmos.SubNameCacheIsStale, "replica "+rep.name()+" serves collection "+rep.set.key.collRID+", but "+c.db.meta.ID+"/"+c.meta.ID+" is collection "+c.meta.RID+" (re-created): refresh the container and its addresses"), 0)
		return false
	}
	if p.rng.ID != rep.set.key.rangeID {
		s.writeError(req, cosmosErr(410, cosmos.SubPartitionKeyRangeGone, "partition key range gone: the partition key belongs to range "+p.rng.ID+", but replica "+rep.name()+" serves range "+rep.set.key.rangeID+" (refresh the partition key ranges and route by them)"), 0)
		return false
	}
	return true
}

// addressesLinks are the resource links an addresses request may be signed with: the
// link of $resolveFor without /docs (cosmosctl), the bare collection rid (Java) and the
// lower-cased rid (.NET lower-cases rid-based links).
func addressesLinks(r *http.Request) []string {
	base := addressesLink(r)
	links := []string{base}
	if strings.Contains(base, " ") {
		// An unescaped '+' in a rid arrives as a space.
		links = append(links, strings.ReplaceAll(base, " ", "+"))
	}
	for _, l := range append([]string(nil), links...) {
		segs := strings.Split(l, "/")
		if len(segs) == 4 && segs[0] == cosmos.TypeDatabases && segs[2] == cosmos.TypeContainers {
			links = append(links, segs[3], strings.ToLower(segs[3]), strings.ToLower(l))
		}
	}
	return links
}

// resolveCollection finds the container of a "dbs/{db}/colls/{coll}" link, by _rid (as
// the SDKs send it) or by id.
func (s *Server) resolveCollection(link string) (*container, *cosmos.Error) {
	try := []string{link}
	if strings.Contains(link, " ") {
		try = append(try, strings.ReplaceAll(link, " ", "+"))
	}
	for _, l := range try {
		segs := strings.Split(l, "/")
		if len(segs) != 4 || segs[0] != cosmos.TypeDatabases || segs[2] != cosmos.TypeContainers {
			return nil, badRequest("$resolveFor must be dbs/{db}/colls/{coll}/docs (by _rid or id), not %q", link)
		}
		if c := s.store.containerByRID(segs[1], segs[3]); c != nil {
			return c, nil
		}
		if c, err := s.store.container(segs[1], segs[3]); err == nil {
			return c, nil
		}
	}
	return nil, notFound("collection " + link + " does not exist (neither as _rids nor as ids)")
}

// serveAddresses answers GET //addresses/?$resolveFor=…&$partitionKeyRangeIds=… with
// the replica sets of the requested ranges (all when the parameter is absent) in the
// request's region.
func (s *Server) serveAddresses(req *request) {
	r := req.r
	if r.Method != http.MethodGet {
		s.methodNotAllowed(req)
		return
	}
	q := r.URL.Query()
	if q.Get("$resolveFor") == "" {
		s.writeError(req, badRequest("the addresses request needs $resolveFor=dbs/{dbRid}/colls/{collRid}/docs (URL-encoded)"), 0)
		return
	}
	c, err := s.resolveCollection(addressesLink(r))
	if err != nil {
		s.writeError(req, err, 0)
		return
	}
	parts := c.partitions()
	if ids := strings.TrimSpace(q.Get("$partitionKeyRangeIds")); ids != "" {
		parts = nil
		for _, id := range strings.Split(ids, ",") {
			id = strings.TrimSpace(id)
			if id == "" {
				continue
			}
			p := c.partitionByID(id)
			if p == nil {
				s.writeError(req, cosmosErr(410, cosmos.SubPartitionKeyRangeGone, fmt.Sprintf("partition key range %q does not exist in collection %s (its ranges are %s): refresh the partition key ranges", id, c.meta.RID, rangeIDs(c.partitions()))), 0)
				return
			}
			parts = append(parts, p)
		}
	}
	force := strings.EqualFold(strings.TrimSpace(r.Header.Get(cosmos.HeaderForceRefresh)), "true")
	now := s.clock.Now()
	ttl := time.Duration(s.cfg.GatewayCacheTTL)
	feed := cosmos.AddressFeed{Addresses: []cosmos.Address{}}
	protocol := "http"
	switch {
	case s.cfg.ReplicaProtocol == ReplicaProtocolRNTBD:
		protocol = ReplicaProtocolRNTBD
	case s.TLS():
		protocol = "https"
	}
	s.reps.mu.Lock()
	for _, p := range parts {
		set := s.replicaSetLocked(req.region, c, p)
		for i, rep := range set.gatewayView(now, force, ttl) {
			feed.Addresses = append(feed.Addresses, cosmos.Address{
				IsPrimary: i == 0, Protocol: protocol, PhysicalURI: rep.address,
				PartitionKeyRangeID: p.rng.ID, PartitionIndex: strconv.Itoa(set.rangeIndex),
			})
		}
	}
	s.reps.mu.Unlock()
	s.setContentPath(req, c)
	body, _ := json.Marshal(feed)
	s.writeFeed(req, body, len(feed.Addresses), chargeMetadata)
}

// MoveReplica moves a replica of a running emulator; m.After counts from now.
func (s *Server) MoveReplica(m ReplicaMove) (ReplicaMoveStatus, error) {
	return s.moveReplica(m, s.clock.Now())
}

func (s *Server) moveReplica(m ReplicaMove, base time.Time) (ReplicaMoveStatus, error) {
	spec, region, c, p, err := s.normalizeMove(m)
	if err != nil {
		return ReplicaMoveStatus{}, err
	}
	index := spec.Replica
	if spec.Primary {
		index = 0
	}
	at := base.Add(time.Duration(spec.After))
	s.reps.mu.Lock()
	defer s.reps.mu.Unlock()
	set := s.replicaSetLocked(region, c, p)
	old, prev := set.current(index)
	if prev != nil && at.Before(prev.at) {
		return ReplicaMoveStatus{}, fmt.Errorf("replica move: replica index %d of range %s already has a move (%s) taking effect at %s; a later move of the same index must not take effect before it",
			index, p.rng.ID, prev.id, prev.at.Format(time.RFC3339Nano))
	}
	rec := &replicaMoveRecord{
		id: "m" + strconv.Itoa(len(s.reps.moves)+1), spec: spec, set: set, index: index,
		old: old, at: at, refreshAt: at.Add(time.Duration(spec.RefreshDelay)),
	}
	rec.repl = s.newReplicaLocked(set, index)
	old.move = rec
	set.moves = append(set.moves, rec)
	s.reps.moves = append(s.reps.moves, rec)
	return s.moveStatus(rec, s.clock.Now()), nil
}

// normalizeMove validates a move and fills in its defaults.
func (s *Server) normalizeMove(m ReplicaMove) (ReplicaMove, int, *container, *partition, error) {
	fail := func(format string, args ...any) (ReplicaMove, int, *container, *partition, error) {
		return m, 0, nil, nil, fmt.Errorf("replica move: "+format, args...)
	}
	if strings.TrimSpace(m.Region) == "" {
		return fail("region is required; regions are %s", s.regionNames())
	}
	region, ok := s.regionIndex(m.Region)
	if !ok {
		return fail("unknown region %q; regions are %s", m.Region, s.regionNames())
	}
	m.Region = s.regions[region].name
	if m.Database == "" || m.Container == "" {
		return fail("database and container are required (the container whose replica moves)")
	}
	c, cerr := s.store.container(m.Database, m.Container)
	if cerr != nil {
		return fail("unknown container: %s", cerr.Message)
	}
	if m.Range == "" {
		m.Range = "0"
	}
	p := c.partitionByID(m.Range)
	if p == nil {
		return fail("unknown range %q: container %s/%s has ranges 0 to %d", m.Range, m.Database, m.Container, len(c.partitions())-1)
	}
	n := s.cfg.Replicas
	switch {
	case m.Primary && m.Replica != 0:
		return fail("primary = true moves index 0; do not also set replica (%d)", m.Replica)
	case m.Primary:
	case m.Replica == 0:
		m.Replica = 1
	}
	if m.Replica < 0 || m.Replica >= n {
		return fail("replica index %d is out of range: a replica set has %d replicas, index 0 (the primary, set primary = true) to %d", m.Replica, n, n-1)
	}
	switch m.Effect {
	case "":
		m.Effect = MoveGone
	case MoveGone, MoveHang, MoveRefuse:
	default:
		return fail("unknown effect %q; valid effects: %s (the default), %s, %s", m.Effect, MoveGone, MoveHang, MoveRefuse)
	}
	if m.After < 0 {
		return fail("after must not be negative: %s", m.After)
	}
	if m.RefreshDelay < 0 {
		return fail("refresh_delay must not be negative: %s", m.RefreshDelay)
	}
	if m.RefreshDelay == 0 {
		m.RefreshDelay = faults.Duration(DefaultMoveRefreshDelay)
	}
	return m, region, c, p, nil
}

func (s *Server) moveStatus(m *replicaMoveRecord, now time.Time) ReplicaMoveStatus {
	published := m.refreshAt.Add(time.Duration(s.cfg.GatewayCacheTTL))
	st := ReplicaMoveStatus{
		ID: m.id, Move: m.spec,
		OldReplica: m.old.name(), OldAddress: m.old.address,
		NewReplica: m.repl.name(), NewAddress: m.repl.address,
		GoneAt: m.at, RefreshAt: m.refreshAt, PublishedAt: published,
	}
	switch {
	case now.Before(m.at):
		st.State = "pending"
	case now.Before(m.refreshAt):
		st.State = "moved"
	case now.Before(published):
		st.State = "refreshable"
	default:
		st.State = "published"
	}
	return st
}

// ReplicaMoves lists the registered moves in the order they were made.
func (s *Server) ReplicaMoves() []ReplicaMoveStatus {
	now := s.clock.Now()
	s.reps.mu.Lock()
	defer s.reps.mu.Unlock()
	out := make([]ReplicaMoveStatus, 0, len(s.reps.moves))
	for _, m := range s.reps.moves {
		out = append(out, s.moveStatus(m, now))
	}
	return out
}

// Replicas lists the replica sets of every region, container and range, with each
// replica's address, state and request count.
func (s *Server) Replicas() []ReplicaSetInfo {
	conts := s.store.allContainers()
	now := s.clock.Now()
	s.reps.mu.Lock()
	defer s.reps.mu.Unlock()
	var out []ReplicaSetInfo
	for region := range s.regions {
		for _, c := range conts {
			for _, p := range c.partitions() {
				set := s.replicaSetLocked(region, c, p)
				info := ReplicaSetInfo{
					Region: s.regions[region].name, Database: c.db.meta.ID, Container: c.meta.ID,
					CollectionRID: c.meta.RID, Range: p.rng.ID,
				}
				members, moved := set.actual(now)
				for _, r := range members {
					info.Replicas = append(info.Replicas, replicaInfo(r, ReplicaServing))
				}
				for _, r := range moved {
					info.Replicas = append(info.Replicas, replicaInfo(r, "moved ("+r.move.spec.Effect+")"))
				}
				out = append(out, info)
			}
		}
	}
	return out
}

func replicaInfo(r *replica, state string) ReplicaInfo {
	return ReplicaInfo{
		Name: r.name(), ID: r.id, Index: r.index, Primary: r.index == 0, Address: r.address,
		State: state, Requests: r.requests.Load(),
	}
}

// registerScenarioMoves registers a scenario's moves, whose After counts from start, in
// order of After so that moves of the same replica index chain in time order.
func (s *Server) registerScenarioMoves(moves []ReplicaMove) error {
	sorted := append([]ReplicaMove(nil), moves...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].After < sorted[j].After })
	for _, m := range sorted {
		if _, err := s.moveReplica(m, s.started); err != nil {
			return err
		}
	}
	return nil
}

// checkReplicaName checks a fault rule's replica field: "" or the name of a replica
// ("<range id>:<replica id>") that exists.
func (s *Server) checkReplicaName(name string) error {
	if name == "" {
		return nil
	}
	rangeID, idText, ok := strings.Cut(name, ":")
	id, err := strconv.ParseInt(idText, 10, 64)
	if !ok || rangeID == "" || err != nil {
		return fmt.Errorf("fault replica %q is not a replica name: use \"<range id>:<replica id>\", e.g. \"0:7\" (GET /_emulator/replicas lists them)", name)
	}
	s.reps.mu.Lock()
	rep := s.reps.byID[id]
	s.reps.mu.Unlock()
	if rep == nil || rep.name() != name {
		return fmt.Errorf("fault replica %q does not exist (GET /_emulator/replicas lists the replicas and their names)", name)
	}
	return nil
}

// prepareReplicas creates the replica sets of the containers that exist at start, in a
// fixed order (regions as configured, containers in creation order, ranges), so that a
// scenario's replica ids are the same on every run; then it registers the scenario's
// moves and checks the replicas its fault rules name.
func (s *Server) prepareReplicas() error {
	s.Replicas()
	if err := s.registerScenarioMoves(s.cfg.ReplicaMoves); err != nil {
		return err
	}
	for _, r := range s.cfg.Faults {
		if err := s.checkReplicaName(r.Replica); err != nil {
			return err
		}
	}
	return nil
}
