package emulator

// Offers: the service's throughput resources at /offers. Every container has one (400
// RU/s manual unless it was created with x-ms-offer-throughput or autoscale settings),
// except a container without throughput of its own in a database that shares its
// throughput (a database created with throughput). The SDKs find an offer by querying
// /offers for its offerResourceId (the container's or database's _rid), then read and
// replace it at offers/{id}, signed with the offer id in lower case.
//
// Throughput is bookkeeping only unless Config.EnforceThroughput is set: then item
// operations are throttled by it (throughput.go); otherwise 429s come from fault rules.
// Offers persist in the data file with the rest of the store.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"weak"

	bolt "go.etcd.io/bbolt"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

const (
	offersFeed = "offers"

	headerOfferThroughput = "x-ms-offer-throughput"
	headerOfferAutoscale  = "x-ms-cosmos-offer-autopilot-settings"
	headerMinThroughput   = "x-ms-cosmos-min-throughput"
	headerReplacePending  = "x-ms-offer-replace-pending"

	// The migration flags of an offer replace (HttpConstants.HttpHeaders.MigrateOfferToAutopilot
	// and MigrateOfferToManualThroughput in the .NET SDK; Data Explorer's HttpHeaders).
	headerMigrateToAutoscale = "x-ms-cosmos-migrate-offer-to-autopilot"
	headerMigrateToManual    = "x-ms-cosmos-migrate-offer-to-manual-throughput"

	defaultThroughput   = 400
	minThroughput       = 400
	minAutoscaleMax     = 1000
	maxOfferThroughput  = 1_000_000
	offerVersion        = "V2"
	offerTypeThroughput = "Invalid" // what the service sends for V2 (throughput-based) offers
)

var bucketOffers = []byte("offers")

// offerRecord is a resource's throughput setting as stored. A container without one has
// the default offer, or none in a shared-throughput database.
type offerRecord struct {
	Shared       bool   `json:"shared,omitempty"` // reserved: no offer of its own
	Throughput   int    `json:"throughput,omitempty"`
	AutoscaleMax int    `json:"autoscaleMax,omitempty"`
	Increment    int    `json:"incrementPercent,omitempty"`
	ETag         string `json:"etag"`
	TS           int64  `json:"ts"`
}

func (r offerRecord) autoscale() bool { return r.AutoscaleMax > 0 }

// offerRegistry holds the offer records of one store, by resource _rid.
type offerRegistry struct {
	mu     sync.Mutex
	loaded bool
	recs   map[string]offerRecord
}

// offerRegistries keeps each store's registry without a field on the store: the key is
// a weak pointer, and the entry goes when its store is collected.
var offerRegistries sync.Map // weak.Pointer[store] → *offerRegistry

func (s *Server) offers() *offerRegistry {
	key := weak.Make(s.store)
	if v, ok := offerRegistries.Load(key); ok {
		return v.(*offerRegistry)
	}
	v, loaded := offerRegistries.LoadOrStore(key, &offerRegistry{recs: map[string]offerRecord{}})
	if !loaded {
		runtime.AddCleanup(s.store, func(k weak.Pointer[store]) { offerRegistries.Delete(k) }, key)
	}
	return v.(*offerRegistry)
}

// snapshot returns the records, loading them from d on first use.
func (o *offerRegistry) snapshot(d *disk) (map[string]offerRecord, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.loadLocked(d); err != nil {
		return nil, err
	}
	out := make(map[string]offerRecord, len(o.recs))
	for k, v := range o.recs {
		out[k] = v
	}
	return out, nil
}

func (o *offerRegistry) loadLocked(d *disk) error {
	if o.loaded || d == nil {
		o.loaded = true
		return nil
	}
	err := d.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketOffers)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var r offerRecord
			if json.Unmarshal(v, &r) == nil {
				o.recs[string(k)] = r
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	o.loaded = true
	return nil
}

// update changes the record of resource rid under the registry's lock; fn sees the
// current record (ok false when none) and returns the new one or an error.
func (o *offerRegistry) update(d *disk, rid string, fn func(cur offerRecord, ok bool) (offerRecord, *cosmos.Error)) (offerRecord, *cosmos.Error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.loadLocked(d); err != nil {
		return offerRecord{}, storageError(err)
	}
	cur, ok := o.recs[rid]
	next, e := fn(cur, ok)
	if e != nil {
		return offerRecord{}, e
	}
	if d != nil {
		data, _ := json.Marshal(next)
		err := d.db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketOffers)
			if err != nil {
				return err
			}
			return b.Put([]byte(rid), data)
		})
		if err != nil {
			return offerRecord{}, storageError(err)
		}
	}
	o.recs[rid] = next
	return next, nil
}

// offerTarget is a database or container that may have an offer.
type offerTarget struct {
	rid, dbRID string
	seq        uint32
	ts         int64
	isDB       bool
}

func (t offerTarget) resource() string {
	if t.isDB {
		return "dbs/" + t.rid + "/"
	}
	return "dbs/" + t.dbRID + "/colls/" + t.rid + "/"
}

// offerID is the offer's id and _rid: short, like the service's, and unique because
// resource sequence numbers are.
func (t offerTarget) offerID() string {
	return ridString([]byte{byte(t.seq), byte(t.seq >> 8), byte(t.seq >> 16)})
}

func (s *store) offerTargets() []offerTarget {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []offerTarget
	for _, d := range s.dbs {
		out = append(out, offerTarget{rid: d.meta.RID, seq: d.seq, ts: d.meta.TS, isDB: true})
		for _, c := range d.colls {
			out = append(out, offerTarget{rid: c.meta.RID, dbRID: d.meta.RID, seq: c.seq, ts: c.meta.TS})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// effectiveOffer is the record that applies to t, ok false when t has no offer.
func effectiveOffer(t offerTarget, recs map[string]offerRecord) (offerRecord, bool) {
	rec, has := recs[t.rid]
	switch {
	case has && rec.Shared:
		return offerRecord{}, false
	case has:
		return rec, true
	case t.isDB:
		return offerRecord{}, false
	}
	if db, ok := recs[t.dbRID]; ok && !db.Shared {
		return offerRecord{}, false // shares the database's throughput
	}
	return offerRecord{Throughput: defaultThroughput, ETag: fmt.Sprintf(`"%08x-0000-0000-0000-00000000offe"`, t.seq), TS: t.ts}, true
}

// The offer in the service's wire shape.
type offerBody struct {
	Resource        string       `json:"resource"`
	OfferType       string       `json:"offerType"`
	OfferResourceID string       `json:"offerResourceId"`
	OfferVersion    string       `json:"offerVersion"`
	Content         offerContent `json:"content"`
	ID              string       `json:"id"`
	RID             string       `json:"_rid"`
	Self            string       `json:"_self"`
	ETag            string       `json:"_etag"`
	TS              int64        `json:"_ts"`
}

type offerContent struct {
	OfferThroughput         int                 `json:"offerThroughput"`
	RUPerMinute             bool                `json:"offerIsRUPerMinuteThroughputEnabled"`
	Autopilot               *offerAutopilot     `json:"offerAutopilotSettings,omitempty"`
	MinimumThroughputParams *offerMinimumParams `json:"offerMinimumThroughputParameters,omitempty"`
}

type offerAutopilot struct {
	MaxThroughput     int                 `json:"maxThroughput"`
	AutoUpgradePolicy *offerUpgradePolicy `json:"autoUpgradePolicy,omitempty"`
}

type offerUpgradePolicy struct {
	ThroughputPolicy *offerThroughputPolicy `json:"throughputPolicy,omitempty"`
}

type offerThroughputPolicy struct {
	IncrementPercent int `json:"incrementPercent"`
}

type offerMinimumParams struct {
	MaxThroughputEverProvisioned int `json:"maxThroughputEverProvisioned"`
	MaxConsumedStorageEverInKB   int `json:"maxConsumedStorageEverInKB"`
}

func offerJSON(t offerTarget, rec offerRecord) offerBody {
	id := t.offerID()
	b := offerBody{
		Resource: t.resource(), OfferType: offerTypeThroughput, OfferResourceID: t.rid, OfferVersion: offerVersion,
		ID: id, RID: id, Self: "offers/" + id + "/", ETag: rec.ETag, TS: rec.TS,
	}
	if rec.autoscale() {
		// The service reports the autoscale floor (a tenth of the maximum) as the
		// current throughput.
		b.Content.OfferThroughput = rec.AutoscaleMax / 10
		b.Content.Autopilot = &offerAutopilot{MaxThroughput: rec.AutoscaleMax}
		if rec.Increment > 0 {
			b.Content.Autopilot.AutoUpgradePolicy = &offerUpgradePolicy{ThroughputPolicy: &offerThroughputPolicy{IncrementPercent: rec.Increment}}
		}
	} else {
		b.Content.OfferThroughput = rec.Throughput
	}
	b.Content.MinimumThroughputParams = &offerMinimumParams{MaxThroughputEverProvisioned: b.Content.OfferThroughput}
	return b
}

// validateThroughput applies the service's rules to a requested setting.
func validateThroughput(rec offerRecord) *cosmos.Error {
	if rec.autoscale() {
		if rec.AutoscaleMax < minAutoscaleMax || rec.AutoscaleMax > maxOfferThroughput || rec.AutoscaleMax%1000 != 0 {
			return badRequest("the autoscale max throughput must be a multiple of 1,000 RU/s from %d to %d; got %d", minAutoscaleMax, maxOfferThroughput, rec.AutoscaleMax)
		}
		return nil
	}
	if rec.Throughput < minThroughput || rec.Throughput > maxOfferThroughput || rec.Throughput%100 != 0 {
		return badRequest("the throughput must be a multiple of 100 RU/s from %d to %d; got %d", minThroughput, maxOfferThroughput, rec.Throughput)
	}
	return nil
}

// offerFromHeaders reads the throughput a database or container is created with
// (x-ms-offer-throughput or x-ms-cosmos-offer-autopilot-settings); nil when none.
func (s *Server) offerFromHeaders(req *request) (*offerRecord, bool) {
	h := req.r.Header
	manual, auto := h.Get(headerOfferThroughput), h.Get(headerOfferAutoscale)
	if manual == "" && auto == "" {
		return nil, true
	}
	var rec offerRecord
	switch {
	case manual != "" && auto != "":
		s.writeError(req, badRequest("send either %s or %s, not both", headerOfferThroughput, headerOfferAutoscale), 0)
		return nil, false
	case manual != "":
		n, err := strconv.Atoi(manual)
		if err != nil {
			s.writeError(req, badRequest("%s must be a number of RU/s, not %q", headerOfferThroughput, manual), 0)
			return nil, false
		}
		rec.Throughput = n
	default:
		var a offerAutopilot
		if err := json.Unmarshal([]byte(auto), &a); err != nil || a.MaxThroughput == 0 {
			s.writeError(req, badRequest("%s must be JSON like {\"maxThroughput\": 4000}, not %q", headerOfferAutoscale, auto), 0)
			return nil, false
		}
		rec.AutoscaleMax = a.MaxThroughput
		if a.AutoUpgradePolicy != nil && a.AutoUpgradePolicy.ThroughputPolicy != nil {
			rec.Increment = a.AutoUpgradePolicy.ThroughputPolicy.IncrementPercent
		}
	}
	if e := validateThroughput(rec); e != nil {
		s.writeError(req, e, 0)
		return nil, false
	}
	return &rec, true
}

// provisionOffer stores the offer of a resource just created with throughput.
func (s *Server) provisionOffer(rid string, rec offerRecord) *cosmos.Error {
	rec.ETag, rec.TS = newETag(), s.clock.Now().Unix()
	_, err := s.offers().update(s.store.disk, rid, func(offerRecord, bool) (offerRecord, *cosmos.Error) { return rec, nil })
	return err
}

// currentOffers lists every offer in resource creation order.
func (s *Server) currentOffers() ([]offerTarget, []offerRecord, *cosmos.Error) {
	recs, err := s.offers().snapshot(s.store.disk)
	if err != nil {
		return nil, nil, storageError(err)
	}
	var targets []offerTarget
	var out []offerRecord
	for _, t := range s.store.offerTargets() {
		if rec, ok := effectiveOffer(t, recs); ok {
			targets = append(targets, t)
			out = append(out, rec)
		}
	}
	return targets, out, nil
}

// serveOffers answers /offers (read feed, query) and /offers/{id} (read, replace).
func (s *Server) serveOffers(req *request, segs []string) {
	targets, recs, err := s.currentOffers()
	if err != nil {
		s.writeError(req, err, 0)
		return
	}
	if len(segs) == 1 {
		bodies := make([]any, len(targets))
		for i := range targets {
			bodies[i] = offerJSON(targets[i], recs[i])
		}
		switch {
		case req.r.Method == http.MethodGet:
			keys := make([]uint64, len(targets))
			for i := range targets {
				keys[i] = uint64(targets[i].seq)
			}
			from, to, next, ok := s.feedPage(req, offersFeed, keys)
			if !ok {
				return
			}
			body, _ := json.Marshal(map[string]any{"_rid": "", "Offers": bodies[from:to], "_count": to - from})
			s.writeFeedPage(req, body, to-from, next)
		case req.r.Method == http.MethodPost && isQuery(req.r):
			mq, ok := s.parseMetaQuery(req)
			if ok {
				s.answerMetaQuery(req, mq, "", "Offers", bodies)
			}
		default:
			s.writeError(req, cosmosErr(405, 0, "offers are created with their database or container (x-ms-offer-throughput); the offers feed answers GET and queries"), 0)
		}
		return
	}
	idx := -1
	for i, t := range targets {
		if t.offerID() == segs[1] {
			idx = i
			break
		}
	}
	if idx < 0 {
		for i, t := range targets {
			if strings.EqualFold(t.offerID(), segs[1]) {
				idx = i
				break
			}
		}
	}
	if idx < 0 {
		s.writeError(req, notFound("offer "+segs[1]+" does not exist"), chargeMetadata)
		return
	}
	switch req.r.Method {
	case http.MethodGet:
		setOfferHeaders(req.w.Header(), recs[idx])
		s.answerResource(req, http.StatusOK, offerJSON(targets[idx], recs[idx]), nil)
	case http.MethodPut:
		if !s.writeAllowed(req) {
			return
		}
		s.replaceOffer(req, targets[idx])
	default:
		s.methodNotAllowed(req)
	}
}

// The service's answers to a replace that would change the offer's mode without the
// migration header, word for word (azure-cosmos-dotnet-v3 issues 1820 and 3147 quote the
// first, 1554 the second): both are 400 with substatus 0, and nothing changes.
const (
	msgMigrateToAutoscale = "x-ms-cosmos-migrate-offer-to-autopilot must be supplied and offercontent must not contain autopilotSettings for migration from manual throughput to autoscale."
	msgMigrateToManual    = "x-ms-cosmos-migrate-offer-to-manual-throughput must be supplied and offercontent must contain autopilotSettings for migration of autoscale collection to manual throughput."
)

// replaceOffer answers PUT /offers/{id}: a replace in the offer's mode, or, with
// x-ms-cosmos-migrate-offer-to-autopilot or x-ms-cosmos-migrate-offer-to-manual-throughput
// set to true, the service's migration between manual and autoscale, which Data Explorer
// sends (cosmos-explorer src/Common/dataAccess/updateOffer.ts, updateOfferWithSDK): the
// offer without autopilot settings to migrate to autoscale, with them ({"maxThroughput":
// 0}) to migrate to manual. The service picks the throughput a migration leaves, and takes
// none from the request (the autoscale FAQ, "How does the migration between autoscale and
// standard (manual) provisioned throughput work?").
func (s *Server) replaceOffer(req *request, t offerTarget) {
	var in struct {
		OfferVersion string `json:"offerVersion"`
		Content      struct {
			OfferThroughput *int            `json:"offerThroughput"`
			Autopilot       *offerAutopilot `json:"offerAutopilotSettings"`
		} `json:"content"`
	}
	if !s.decodeJSON(req, &in) {
		return
	}
	if in.OfferVersion != "" && in.OfferVersion != offerVersion {
		s.writeError(req, badRequest("offerVersion %q is not supported: use %q (throughput in content.offerThroughput or content.offerAutopilotSettings)", in.OfferVersion, offerVersion), 0)
		return
	}
	// The SDKs' transport sends these flags as "true" or "false", compared without case.
	toAutoscale := strings.EqualFold(req.r.Header.Get(headerMigrateToAutoscale), "true")
	toManual := strings.EqualFold(req.r.Header.Get(headerMigrateToManual), "true")
	var next offerRecord
	switch {
	case toAutoscale && toManual:
		s.writeError(req, badRequest("send either %s or %s, not both", headerMigrateToAutoscale, headerMigrateToManual), 0)
		return
	case toAutoscale && in.Content.Autopilot != nil:
		s.writeError(req, badRequest(msgMigrateToAutoscale), 0)
		return
	case toManual && in.Content.Autopilot == nil:
		s.writeError(req, badRequest(msgMigrateToManual), 0)
		return
	case toAutoscale || toManual:
		// The throughput comes from the current offer, under the registry's lock below.
	case in.Content.Autopilot != nil && in.Content.Autopilot.MaxThroughput > 0:
		next.AutoscaleMax = in.Content.Autopilot.MaxThroughput
		if p := in.Content.Autopilot.AutoUpgradePolicy; p != nil && p.ThroughputPolicy != nil {
			next.Increment = p.ThroughputPolicy.IncrementPercent
		}
	case in.Content.OfferThroughput != nil:
		next.Throughput = *in.Content.OfferThroughput
	default:
		s.writeError(req, badRequest("the offer needs content.offerThroughput (manual) or content.offerAutopilotSettings.maxThroughput (autoscale)"), 0)
		return
	}
	if !toAutoscale && !toManual {
		if e := validateThroughput(next); e != nil {
			s.writeError(req, e, 0)
			return
		}
	}
	ifMatch := req.r.Header.Get(cosmos.HeaderIfMatch)
	recs, err := s.offers().snapshot(s.store.disk)
	if err != nil {
		s.writeError(req, storageError(err), 0)
		return
	}
	def, _ := effectiveOffer(t, recs)
	rec, e := s.offers().update(s.store.disk, t.rid, func(cur offerRecord, ok bool) (offerRecord, *cosmos.Error) {
		if !ok {
			cur = def
		}
		if ifMatch != "" && !etagMatches(ifMatch, cur.ETag) {
			return offerRecord{}, preconditionFailed("operation cannot be performed because one of the specified precondition is not met (If-Match)")
		}
		switch {
		// The service's answer to migrating an offer to the mode it has is unknown.
		case toAutoscale && cur.autoscale():
			return offerRecord{}, badRequest("the offer is already autoscale: there is nothing to migrate")
		case toManual && !cur.autoscale():
			return offerRecord{}, badRequest("the offer is already manual: there is nothing to migrate")
		case toAutoscale:
			next.AutoscaleMax = initialAutoscaleMax(cur.Throughput)
		case toManual:
			// "The initial manual provisioned throughput is equal to the current
			// autoscale maximum RU/s" (the autoscale FAQ).
			next.Throughput = cur.AutoscaleMax
		case cur.autoscale() && !next.autoscale():
			return offerRecord{}, badRequest(msgMigrateToManual)
		case !cur.autoscale() && next.autoscale():
			return offerRecord{}, badRequest(msgMigrateToAutoscale)
		}
		next.ETag, next.TS = newETag(), s.clock.Now().Unix()
		return next, nil
	})
	if e != nil {
		s.writeError(req, e, chargeMetadata)
		return
	}
	setOfferHeaders(req.w.Header(), rec)
	s.answerResource(req, http.StatusOK, offerJSON(t, rec), nil)
}

// initialAutoscaleMax is the autoscale maximum a manual offer of manual RU/s migrates
// to, by the autoscale FAQ's formula for a container: MAX(1,000, current manual RU/s,
// maximum RU/s ever provisioned / 10, storage in GB × 10), rounded to the nearest 1,000
// RU/s. The emulator's highest throughput ever provisioned is the current one (it keeps
// no history; offerMinimumThroughputParameters says so too), and its storage is far
// below the 100 GB at which the storage term would count, so the formula comes down to
// the manual RU/s, at least 1,000, rounded. The FAQ calls its formula an estimate that
// "might vary depending on your account configuration".
func initialAutoscaleMax(manual int) int {
	m := max(minAutoscaleMax, manual)
	return min((m+500)/1000*1000, maxOfferThroughput)
}

// setOfferHeaders adds what the service sends with a single offer (the SDKs' throughput
// responses read both): the lowest throughput it may be set to now — the service's floor,
// 400 RU/s manual or an autoscale maximum of 1,000 RU/s, since the emulator keeps no data
// that would raise it — and whether a replace is still being carried out, which is never
// so here: the emulator applies a replace at once.
func setOfferHeaders(h http.Header, rec offerRecord) {
	floor := minThroughput
	if rec.autoscale() {
		floor = minAutoscaleMax
	}
	h.Set(headerMinThroughput, strconv.Itoa(floor))
	h.Set(headerReplacePending, "false")
}
