package emulator

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// dispatch routes a request that passed authentication and fault injection.
func (s *Server) dispatch(req *request) {
	segs := req.segs
	switch req.op {
	case faults.OpAccount:
		s.serveAccount(req)
	case faults.OpAddresses:
		s.serveAddresses(req)
	case faults.OpMetadata:
		if !s.serveMetadataExtras(req, segs) {
			s.serveMetadata(req, segs)
		}
	case faults.OpPKRanges:
		s.servePKRanges(req, segs[1], segs[3])
	case faults.OpQuery:
		s.serveQuery(req, segs[1], segs[3])
	default:
		if req.op == faults.OpDelete && isPartitionKeyDelete(segs) {
			s.servePartitionKeyDelete(req, segs)
			return
		}
		if req.op == faults.OpCreate && isBatchRequest(req.r) {
			s.serveBatch(req, segs)
			return
		}
		s.serveItem(req, segs)
	}
}

func (s *Server) serveAccount(req *request) {
	var body []byte
	if req.r.Header.Get(HeaderUseThinClient) != "" {
		// Gateway 2.0 discovery (thinclient.go).
		body, _ = json.Marshal(s.thinClientAccount())
	} else {
		body, _ = json.Marshal(s.Account())
	}
	s.writeJSON(req, http.StatusOK, body, 0)
}

// writeAllowed refuses writes in a read region of a single-write account with 403/3,
// the signal that makes SDKs re-read the account and follow the write region.
func (s *Server) writeAllowed(req *request) bool {
	if s.writable(req.region) {
		return true
	}
	s.writeError(req, cosmosErr(403, cosmos.SubWriteForbidden,
		"the requested operation cannot be performed at this region: "+req.regionName+" is a read region; write to the account's write region"), 0)
	return false
}

func (s *Server) serveMetadata(req *request, segs []string) {
	r := req.r
	switch {
	case len(segs) == 1: // /dbs
		switch r.Method {
		case http.MethodGet:
			dbs := s.store.listDatabases()
			keys := make([]uint64, len(dbs))
			for i := range dbs {
				keys[i] = creationOrder(dbs[i].RID)
			}
			from, to, next, ok := s.feedPage(req, cosmos.TypeDatabases, keys)
			if !ok {
				return
			}
			body, _ := json.Marshal(cosmos.DatabaseFeed{Databases: dbs[from:to], Count: to - from})
			s.writeFeedPage(req, body, to-from, next)
		case http.MethodPost:
			if !s.writeAllowed(req) {
				return
			}
			var in struct {
				ID string `json:"id"`
			}
			if !s.decodeJSON(req, &in) {
				return
			}
			offer, ok := s.offerFromHeaders(req)
			if !ok {
				return
			}
			db, err := s.store.createDatabase(in.ID)
			if err == nil && offer != nil {
				err = s.provisionOffer(db.RID, *offer)
			}
			s.answerResource(req, http.StatusCreated, db, err)
		default:
			s.methodNotAllowed(req)
		}
	case len(segs) == 2: // /dbs/{db}
		switch r.Method {
		case http.MethodGet:
			d := s.store.database(segs[1])
			if d == nil {
				s.writeError(req, notFound("database \""+segs[1]+"\" does not exist"), chargeMetadata)
				return
			}
			s.answerResource(req, http.StatusOK, d.meta, nil)
		case http.MethodDelete:
			if !s.writeAllowed(req) {
				return
			}
			if err := s.store.deleteDatabase(segs[1]); err != nil {
				s.writeError(req, err, chargeMetadata)
				return
			}
			s.writeJSON(req, http.StatusNoContent, nil, chargeMetadata)
		default:
			s.methodNotAllowed(req)
		}
	case len(segs) == 3: // /dbs/{db}/colls
		switch r.Method {
		case http.MethodGet:
			colls, err := s.store.listContainers(segs[1])
			if err != nil {
				s.writeError(req, err, chargeMetadata)
				return
			}
			keys := make([]uint64, len(colls))
			for i := range colls {
				keys[i] = creationOrder(colls[i].RID)
			}
			from, to, next, ok := s.feedPage(req, "dbs/"+segs[1]+"/colls", keys)
			if !ok {
				return
			}
			body, _ := json.Marshal(cosmos.ContainerFeed{Containers: colls[from:to], Count: to - from})
			s.writeFeedPage(req, body, to-from, next)
		case http.MethodPost:
			if !s.writeAllowed(req) {
				return
			}
			var in cosmos.Container
			if !s.decodeJSON(req, &in) {
				return
			}
			def, perr := partitionKeyDefinition(in.PartitionKey.Paths)
			if perr != nil {
				s.writeError(req, badRequest("%v", perr), 0)
				return
			}
			if in.PartitionKey.Kind != "" && in.PartitionKey.Kind != def.Kind {
				s.writeError(req, badRequest("partition key kind %q does not fit %d path(s): use %q", in.PartitionKey.Kind, len(def.Paths), def.Kind), 0)
				return
			}
			if err := validPolicies(in, s.cfg.MultiWrite); err != nil {
				s.writeError(req, err, 0)
				return
			}
			offer, ok := s.offerFromHeaders(req)
			if !ok {
				return
			}
			c, err := s.store.createContainer(segs[1], in.ID, def, in)
			if err == nil && offer != nil {
				err = s.provisionOffer(c.RID, *offer)
			}
			s.answerResource(req, http.StatusCreated, c, err)
		default:
			s.methodNotAllowed(req)
		}
	case len(segs) == 4: // /dbs/{db}/colls/{coll}
		switch r.Method {
		case http.MethodGet:
			c, err := s.store.container(segs[1], segs[3])
			if err != nil {
				s.writeError(req, err, chargeMetadata)
				return
			}
			s.setContentPath(req, c)
			if strings.EqualFold(r.Header.Get(cosmos.HeaderPopulatePartitionStatistics), "true") {
				s.answerResource(req, http.StatusOK, c.withStatistics(s.clock.Now()), nil)
				return
			}
			s.answerResource(req, http.StatusOK, c.resource(), nil)
		case http.MethodPut:
			s.serveContainerReplace(req, segs[1], segs[3])
		case http.MethodDelete:
			if !s.writeAllowed(req) {
				return
			}
			if err := s.store.deleteContainer(segs[1], segs[3]); err != nil {
				s.writeError(req, err, chargeMetadata)
				return
			}
			s.writeJSON(req, http.StatusNoContent, nil, chargeMetadata)
		default:
			s.methodNotAllowed(req)
		}
	}
}

func (s *Server) answerResource(req *request, status int, v any, err *cosmos.Error) {
	if err != nil {
		s.writeError(req, err, chargeMetadata)
		return
	}
	body, _ := json.Marshal(v)
	var etag struct {
		ETag string `json:"_etag"`
	}
	_ = json.Unmarshal(body, &etag)
	if etag.ETag != "" {
		req.w.Header().Set(cosmos.HeaderETag, etag.ETag)
	}
	s.writeJSON(req, status, body, chargeMetadata)
}

func (s *Server) writeFeed(req *request, body []byte, count int, charge float64) {
	req.w.Header().Set(cosmos.HeaderItemCount, strconv.Itoa(count))
	s.writeJSON(req, http.StatusOK, body, charge)
}

func (s *Server) methodNotAllowed(req *request) {
	s.writeError(req, cosmosErr(405, 0, "method "+req.r.Method+" is not supported on "+req.r.URL.Path), 0)
}

// decodeJSON reads a small JSON body into v, answering 400 when it is malformed.
func (s *Server) decodeJSON(req *request, v any) bool {
	body, ok := s.readBody(req)
	if !ok {
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		s.writeError(req, badRequest("the request body is not valid JSON: %v", err), 0)
		return false
	}
	return true
}

func (s *Server) setContentPath(req *request, c *container) {
	h := req.w.Header()
	h.Set(cosmos.HeaderContentPath, c.meta.RID)
	h.Set(cosmos.HeaderAltContentPath, "dbs/"+c.db.meta.ID+"/colls/"+c.meta.ID)
}

// servePKRanges answers the partition key ranges feed, in pages (feedpage.go), in the
// two ways the SDKs read it:
//
//   - as a read feed (the JS and Python SDKs): x-ms-continuation on every page but the
//     last, followed until it is absent;
//   - as an incremental feed, A-IM: Incremental Feed (the Go, .NET, Java and Rust SDKs'
//     routing-map caches): the etag of a page is the position after it, sent back as
//     If-None-Match for the next page, and a read from the end answers 304 Not Modified.
//     azcosmos drains it "until 304 Not Modified" (fetchAllChangeFeedPages in
//     cosmos_partition_key_range_cache.go), so the last page's etag must lead to a 304,
//     or that client loops.
//
// Either way the feed's etag, once every range has been read, is the etag of its end:
// If-None-Match with it answers 304, as it did before the feed was paged. An
// If-None-Match that is no position of this container's feed reads from the start
// (where the service's answer is documented nowhere).
//
// The feed is read-only: the REST reference lists GET alone for pkranges, and the
// service's answer to another verb is documented nowhere, so any other is a 405 with
// the Cosmos error body and Allow: GET (README, emulator fidelity), never the feed.
func (s *Server) servePKRanges(req *request, db, coll string) {
	if req.r.Method != http.MethodGet {
		req.w.Header().Set("Allow", http.MethodGet)
		s.writeError(req, cosmosErr(http.StatusMethodNotAllowed, 0, "method "+req.r.Method+" is not supported on "+req.r.URL.Path+
			": partition key ranges are a read-only feed, listed with GET"), 0)
		return
	}
	c, err := s.store.container(db, coll)
	if err != nil {
		s.writeError(req, err, chargeMetadata)
		return
	}
	s.setContentPath(req, c)
	ranges, keys := c.rangesFeed()
	end := pkRangesETag(c, 0)
	if len(keys) > 0 {
		end = pkRangesETag(c, int(keys[len(keys)-1]))
	}
	incremental := req.r.Header.Get(cosmos.HeaderAIM) != ""
	inm := strings.Trim(strings.TrimSpace(req.r.Header.Get(cosmos.HeaderIfNoneMatch)), `"`)
	if inm == strings.Trim(end, `"`) || (incremental && inm == "*") {
		req.w.Header().Set(cosmos.HeaderETag, end)
		req.w.Header().Set(cosmos.HeaderItemCount, "0")
		s.writeJSON(req, http.StatusNotModified, nil, chargeMetadata)
		return
	}
	if !incremental {
		from, to, next, ok := s.feedPage(req, "pkranges/"+c.meta.RID, keys)
		if !ok {
			return
		}
		req.w.Header().Set(cosmos.HeaderETag, end)
		body, _ := json.Marshal(cosmos.PartitionKeyRangeFeed{RID: c.meta.RID, Ranges: ranges[from:to], Count: to - from})
		s.writeFeedPage(req, body, to-from, next)
		return
	}
	size, ok := s.feedPageSize(req)
	if !ok {
		return
	}
	after := pkRangesPosition(c, inm)
	from := sort.Search(len(keys), func(i int) bool { return keys[i] > uint64(after) })
	to := min(from+size, len(ranges))
	etag := end
	if to > from {
		etag = pkRangesETag(c, int(keys[to-1]))
	}
	req.w.Header().Set(cosmos.HeaderETag, etag)
	body, _ := json.Marshal(cosmos.PartitionKeyRangeFeed{RID: c.meta.RID, Ranges: ranges[from:to], Count: to - from})
	s.writeFeed(req, body, to-from, chargeMetadata)
}

// rangesFeed lists c's live partition key ranges in the order of the ranges feed, the
// order they were created in (a split's or merge's new ranges come last), with each
// range's position in it. The positions only grow: the feed is a change feed of the
// ranges, and an incremental read from a position returns the ranges created after
// it, the children of a split or the range of a merge, each listing its parents.
func (c *container) rangesFeed() ([]cosmos.PartitionKeyRange, []uint64) {
	parts := slices.Clone(c.partitions())
	slices.SortFunc(parts, func(a, b *partition) int { return cmp.Compare(a.seq, b.seq) })
	ranges := make([]cosmos.PartitionKeyRange, len(parts))
	keys := make([]uint64, len(parts))
	for i, p := range parts {
		ranges[i], keys[i] = p.rng, uint64(p.seq)
	}
	return ranges, keys
}

// pkRangesETag is the etag of the ranges feed at position n: after the range created
// n-th (rangesFeed). Before any split, position n is after the first n ranges.
func pkRangesETag(c *container, n int) string {
	return `"` + c.meta.RID + "-pkranges-" + strconv.Itoa(n) + `"`
}

// pkRangesPosition reads an etag of pkRangesETag (unquoted): the position it is at; 0
// for anything else.
func pkRangesPosition(c *container, etag string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(etag, c.meta.RID+"-pkranges-"))
	if err != nil || !strings.HasPrefix(etag, c.meta.RID+"-pkranges-") || n < 0 {
		return 0
	}
	return n
}

// rangeStatistics is one entry of a container read's "statistics" array, answered when
// the read asks with x-ms-documentdb-populatepartitionstatistics: true, in the shape the
// service gives and the SDKs read as PartitionKeyRangeStatistics. The service samples
// its figures; the emulator's are exact (the items every region will see, once
// replicated, and their stored bytes, rounded up to whole KB). partitionKeys lists the
// service's largest logical partitions (those over 1 GB): the emulator has none.
type rangeStatistics struct {
	ID                               string `json:"id"`
	SizeInKB                         int64  `json:"sizeInKB"`
	DocumentCount                    int64  `json:"documentCount"`
	SampledDistinctPartitionKeyCount int64  `json:"sampledDistinctPartitionKeyCount"`
	PartitionKeys                    []any  `json:"partitionKeys"`
}

// withStatistics is the container's resource with its ranges' statistics beside it.
func (c *container) withStatistics(now time.Time) any {
	stats := make([]rangeStatistics, 0, len(c.partitions()))
	for _, p := range c.partitions() {
		var count, bytes int64
		keys := map[string]bool{}
		p.mu.RLock()
		for _, e := range p.items {
			if v := e.latest(); c.live(v, now) {
				count++
				bytes += int64(len(v.body))
				keys[e.pk.Identity()] = true
			}
		}
		p.mu.RUnlock()
		stats = append(stats, rangeStatistics{ID: p.rng.ID, SizeInKB: (bytes + 1023) / 1024, DocumentCount: count,
			SampledDistinctPartitionKeyCount: int64(len(keys)), PartitionKeys: []any{}})
	}
	return struct {
		cosmos.Container
		Statistics []rangeStatistics `json:"statistics"`
	}{c.resource(), stats}
}
