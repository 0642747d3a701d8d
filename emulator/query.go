package emulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
)

// Query pages stop at this many documents or bytes, like the service's.
const (
	defaultPageItems = 100
	maxPageItems     = 1000
	maxPageBytes     = 4 << 20
)

// serveQuery runs queries (the SQL of jsondoc.ParseQuery), query plan requests
// (queryplan.go), read feeds (GET …/docs) and the change feed (a read feed with A-IM).
func (s *Server) serveQuery(req *request, db, coll string) {
	c, cerr := s.store.container(db, coll)
	if cerr != nil {
		s.writeError(req, cerr, 0)
		return
	}
	s.setContentPath(req, c)
	r := req.r
	if isChangeFeed(r) {
		s.serveChangeFeed(req, c)
		return
	}
	spec := cosmos.QuerySpec{Query: "SELECT * FROM c"}
	if r.Method == http.MethodPost {
		body, ok := s.readBody(req)
		if !ok {
			return
		}
		if err := json.Unmarshal(body, &spec); err != nil {
			s.writeError(req, badRequest("the query body is not valid JSON: %v (expected {\"query\": \"SELECT …\", \"parameters\": […]})", err), 0)
			return
		}
	}
	compileStart := time.Now()
	prog, ok := s.compileQuery(req, spec, vectorBindOptions(c))
	if !ok {
		return
	}
	metrics := queryMetrics{compile: time.Since(compileStart)}
	if strings.EqualFold(r.Header.Get(cosmos.HeaderQueryPlanRequest), "true") {
		s.serveQueryPlan(req, prog)
		return
	}

	target, ok := s.queryScope(req, c)
	if !ok {
		return
	}
	if target.container && prog.Query().NeedsPlan() {
		// The gateway does not run a client's pipeline: across partitions such a
		// query is a 400/1004 however many ranges the container has, unless its
		// filter pins the whole partition key, when it runs in that partition
		// (azcosmos v1.5.0 TestCrossPartitionQueryFailsIfGatewayCannotSatisfyRequest,
		// on Microsoft's one-range emulator, and TestSinglePartitionQueryInline).
		pk, pinned := pinnedPartitionKey(c, prog)
		if !pinned {
			s.refuseNeedsPlan(req, prog)
			return
		}
		target = queryTarget{parts: []*partition{c.partitionFor(pk)}, pkIdentity: pk.Identity()}
	}
	parts := target.parts
	if !s.orderByServed(req, c, prog) {
		return
	}
	maxItems, ok := s.maxItemCount(req)
	if !ok {
		return
	}
	fingerprint := queryFingerprint(spec, target.pkIdentity)
	var cont queryPosition
	if v := r.Header.Get(cosmos.HeaderContinuation); v != "" {
		var err error
		if cont, err = parseQueryContinuation(v); err != nil {
			s.writeError(req, badRequest("%v", err), 0)
			return
		}
		if c.partitionByID(cont.Range) == nil && !c.retired(cont.Range) {
			s.writeError(req, badRequest("the continuation token names partition key range %q, which this container does not have: it was issued for another container; restart the query without it", cont.Range), 0)
			return
		}
		if msg := cont.mismatch(prog, fingerprint); msg != "" {
			s.writeError(req, badRequest("%s; restart the query without the continuation token", msg), 0)
			return
		}
	}
	first := parts[0]
	if p := c.partitionByID(cont.Range); p != nil {
		first = p
	}
	s.meter(req, c, first)
	if len(parts) == 1 {
		s.queryLSNHeaders(req, parts[0])
	}
	pg := queryPage{maxItems: maxItems, fingerprint: fingerprint}
	var err error
	runStart := time.Now()
	if prog.Streaming() {
		err = s.streamQuery(req, c, target, prog, cont, &pg)
	} else {
		err = s.pageResult(req, c, target, prog, spec, cont, &pg)
	}
	if err != nil {
		s.writeError(req, badRequest("%v", err), 0)
		return
	}
	metrics.run = time.Since(runStart)
	if pg.next != nil {
		req.w.Header().Set(cosmos.HeaderContinuation, pg.next.token())
	}
	writeStart := time.Now()
	feed := pg.feed(c.meta.RID)
	metrics.write = time.Since(writeStart)
	if strings.EqualFold(r.Header.Get(cosmos.HeaderPopulateQueryMetrics), "true") {
		metrics.retrieved, metrics.retrievedBytes, metrics.matched = pg.retrieved, pg.retrievedBytes, pg.matched
		metrics.output, metrics.outputBytes = len(pg.docs), pg.bytes
		req.w.Header().Set(cosmos.HeaderQueryMetrics, metrics.header())
	}
	s.indexMetricsHeader(req, c, prog, target, len(pg.docs))
	s.writeFeed(req, feed, len(pg.docs), chargeQuery(pg.examined, pg.bytes))
}

// queryLSNHeaders sets the LSN and partition key range of a query page read from one
// range, as the service's query responses carry them (finishHeaders adds the rest of
// the LSN family).
func (s *Server) queryLSNHeaders(req *request, p *partition) {
	p.mu.RLock()
	caught := p.caughtUpLSN(req.region, s.clock.Now(), s.lagNow())
	p.mu.RUnlock()
	h := req.w.Header()
	h.Set(cosmos.HeaderLSN, strconv.FormatInt(caught, 10))
	h.Set(cosmos.HeaderPartitionKeyRangeID, p.rng.ID)
}

// compileQuery parses and binds a query, with what the container's policies tell it
// (opts); ok is false once an error has been answered.
func (s *Server) compileQuery(req *request, spec cosmos.QuerySpec, opts jsondoc.BindOptions) (*jsondoc.Program, bool) {
	q, err := jsondoc.ParseQuery(spec.Query)
	if err != nil {
		if errors.Is(err, jsondoc.ErrUnsupported) {
			s.writeError(req, badRequest("%v", err), 0)
		} else {
			s.writeError(req, badRequest("syntax error in query: %v", err), 0)
		}
		return nil, false
	}
	params := map[string]*jsondoc.Value{}
	for _, p := range spec.Parameters {
		v, err := jsondoc.Parse(p.Value)
		if err != nil {
			s.writeError(req, badRequest("query parameter %s has an invalid value: %v", p.Name, err), 0)
			return nil, false
		}
		params[p.Name] = v
	}
	opts.Now = s.clock.Now // GetCurrentDateTime and its kin read the emulator's clock
	prog, err := q.BindWith(params, opts)
	if err != nil {
		s.writeError(req, badRequest("%v", err), 0)
		return nil, false
	}
	return prog, true
}

// queryPage collects one page of results.
type queryPage struct {
	maxItems    int
	fingerprint string
	docs        []json.RawMessage
	bytes       int
	examined    int
	// retrieved, retrievedBytes and matched are the page's documents read, their
	// size and how many passed the filter, for the query metrics.
	retrieved, retrievedBytes, matched int
	next                               *queryPosition // the continuation, when there is more
}

// fits reports whether a row of n bytes still goes on the page; a page always takes
// its first row.
func (pg *queryPage) fits(n int) bool {
	return len(pg.docs) == 0 || (len(pg.docs) < pg.maxItems && pg.bytes+n <= maxPageBytes)
}

// feed renders the page as the service's feed body. The rows are compact JSON already
// (stored documents or the encoder's output), so they are copied rather than
// re-validated by encoding/json, which cost more than producing them.
func (pg *queryPage) feed(rid string) []byte {
	b := make([]byte, 0, pg.bytes+len(pg.docs)+64)
	b = append(b, `{"_rid":`...)
	q, _ := json.Marshal(rid)
	b = append(b, q...)
	b = append(b, `,"Documents":[`...)
	for i, d := range pg.docs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, d...)
	}
	b = append(b, `],"_count":`...)
	b = strconv.AppendInt(b, int64(len(pg.docs)), 10)
	return append(b, '}')
}

func (pg *queryPage) add(row []byte) {
	pg.docs = append(pg.docs, row)
	pg.bytes += len(row)
}

// streamQuery pages a streaming query: the target's documents in creation order, range
// after range, one document at a time.
//
// A continuation of a range that has split or merged since goes on after the same
// document in the ranges that now hold its span (querytarget.go): documents keep
// their creation sequence when they move (splits.go), so the order is the same.
func (s *Server) streamQuery(req *request, c *container, target queryTarget, prog *jsondoc.Program, cont queryPosition, pg *queryPage) error {
	_, offset, _ := prog.Bounds()
	end := prog.End()
	consumed := cont.Returned
	segs, err := target.segments(c, cont)
	if err != nil {
		return err
	}
	var (
		evalErr error
		last    queryPosition
		done    bool
	)
	for _, sg := range segs {
		at := func(seq uint64) queryPosition {
			pos := sg.at
			pos.Seq = seq
			return pos
		}
		s.store.scanSegment(c, sg, req.region, target.pkIdentity, func(seq uint64, body []byte) bool {
			if end >= 0 && consumed >= end {
				done = true
				return false
			}
			pg.examined++
			pg.retrieved++
			pg.retrievedBytes += len(body)
			var row []byte
			if prog.Star() {
				ok, err := prog.Match(body)
				if err != nil || !ok {
					evalErr = err
					return err == nil
				}
				row = body
			} else {
				out, ok, err := prog.Select(nil, body)
				if err != nil || !ok {
					evalErr = err
					return err == nil
				}
				row = out
			}
			pg.matched++
			if consumed < offset {
				consumed++
				last = at(seq)
				return true
			}
			if !pg.fits(len(row)) {
				pg.next = &queryPosition{}
				return false
			}
			consumed++
			pg.add(row)
			last = at(seq)
			if len(pg.docs) >= pg.maxItems && (end < 0 || consumed < end) {
				// A full page ends here with a continuation, whether or not anything
				// is left: the scan does not look ahead, so the page after the last
				// full one may be empty (azcosmos v1.5.0 TestCrossPartitionQuery,
				// against Microsoft's emulator: 20 items in pages of 5 are 5 pages).
				pg.next = &queryPosition{}
				return false
			}
			return true
		})
		if pg.next != nil || evalErr != nil || done {
			break
		}
	}
	if evalErr != nil {
		return evalErr
	}
	if pg.next != nil {
		last.Returned, last.Query = consumed, pg.fingerprint
		pg.next = &last
	}
	return nil
}

// pageResult pages a query that needs the whole scope before its first row (ORDER BY,
// DISTINCT, aggregates, GROUP BY). Its scope is one partition: a partition key, a range
// (or part of one), or the single range of a container, since across ranges such a
// query needs a plan.
func (s *Server) pageResult(req *request, c *container, target queryTarget, prog *jsondoc.Program, spec cosmos.QuerySpec, cont queryPosition, pg *queryPage) error {
	p := target.parts[0]
	span, tok, err := target.resumeSpan(c, cont)
	if err != nil {
		return err
	}
	scope := scopeOf(p, target.pkIdentity, span)
	res, err := s.results.get(s, req.region, c, p, scope, prog, spec)
	if err != nil {
		return err
	}
	_, offset, _ := prog.Bounds()
	end := prog.End()
	consumed := cont.Returned
	start := 0
	switch {
	case cont.Range == "":
	case cont.Kind == positionOrdered:
		keys, err := decodeOrderKeys(cont.Keys)
		if err != nil {
			return err
		}
		start = res.After(keys, cont.Seq)
	case span != tok:
		// A position in the rows of another result means nothing in this one: the
		// rows are the same only when the documents are, those of the same span (a
		// merged-away range's, read in the range that took its place).
		return fmt.Errorf("the continuation token is a position in the result of partition key range %s over the effective partition keys %s, and this request reads %s of range %s (it has split or merged since, or the request is narrowed otherwise); restart the query without it", cont.Range, tok, span, p.rng.ID)
	default:
		start = min(cont.Index, res.Len())
	}
	i := start
	for ; i < res.Len(); i++ {
		if end >= 0 && consumed >= end {
			break
		}
		if consumed < offset {
			consumed++
			continue
		}
		row, err := res.AppendRow(nil, i)
		if err != nil {
			return err
		}
		if !pg.fits(len(row)) {
			pg.next = &queryPosition{}
			break
		}
		consumed++
		pg.add(row)
	}
	pg.examined = i - start
	if cont.Range == "" && !prog.Ordered() {
		pg.examined = res.Scanned
	}
	// The first page built the result from every document of the scope; a later page
	// reads the rows it resumes through from that result.
	pg.retrieved, pg.retrievedBytes, pg.matched = i-start, pg.bytes, i-start
	if cont.Range == "" {
		pg.retrieved, pg.retrievedBytes, pg.matched = res.Scanned, res.ScannedBytes, res.Matched
	}
	if pg.next == nil {
		return nil
	}
	next := queryPosition{Range: p.rng.ID, Returned: consumed, Kind: positionRows, Index: i, Query: pg.fingerprint}
	if scope.narrow {
		next.Lo, next.Hi = span.lo, span.hi
	}
	if prog.Ordered() {
		keys, seq, err := res.Position(i - 1)
		if err != nil {
			return err
		}
		next.Kind, next.Seq, next.Index, next.Keys = positionOrdered, seq, 0, encodeOrderKeys(keys)
	}
	pg.next = &next
	return nil
}

// mismatch explains why the position cannot continue prog, or returns "".
func (p queryPosition) mismatch(prog *jsondoc.Program, fingerprint string) string {
	want := positionScan
	switch {
	case prog.Ordered():
		want = positionOrdered
	case !prog.Streaming():
		want = positionRows
	}
	if p.Kind != want || (p.Query != "" && p.Query != fingerprint) || (p.Kind != positionScan && p.Query == "") {
		return "the continuation token belongs to another query (or other parameters, or another partition key)"
	}
	return ""
}

// queryFingerprint identifies a query, its parameters and its partition key for
// continuation tokens.
func queryFingerprint(spec cosmos.QuerySpec, pkIdentity string) string {
	h := fnv.New64a()
	h.Write([]byte(spec.Query))
	params := slices.Clone(spec.Parameters)
	slices.SortFunc(params, func(a, b cosmos.QueryParameter) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range params {
		h.Write([]byte{0})
		h.Write([]byte(p.Name))
		h.Write([]byte{0})
		h.Write(p.Value)
	}
	h.Write([]byte{1})
	h.Write([]byte(pkIdentity))
	return strconv.FormatUint(h.Sum64(), 36)
}

// encodeOrderKeys writes ORDER BY values as the service's orderByItems: [{"item": v}, …]
// with {} for undefined.
func encodeOrderKeys(keys []*jsondoc.Value) json.RawMessage {
	arr := make([]*jsondoc.Value, len(keys))
	for i, k := range keys {
		if k == nil {
			arr[i] = jsondoc.Object()
		} else {
			arr[i] = jsondoc.Object(jsondoc.Member{Key: "item", Val: k})
		}
	}
	return jsondoc.Array(arr...).AppendJSON(nil)
}

func decodeOrderKeys(raw json.RawMessage) ([]*jsondoc.Value, error) {
	v, err := jsondoc.Parse(raw)
	if err != nil || v.Kind != jsondoc.KindArray {
		return nil, errors.New("the continuation token is not one this emulator issued")
	}
	keys := make([]*jsondoc.Value, len(v.Arr))
	for i, e := range v.Arr {
		if e.Kind != jsondoc.KindObject {
			return nil, errors.New("the continuation token is not one this emulator issued")
		}
		keys[i] = e.Get("item")
	}
	return keys, nil
}

// pinnedPartitionKey is the partition key that a query's filter pins every result to:
// each of the container's key paths compared for equality with a constant in a
// top-level AND term of the WHERE clause.
func pinnedPartitionKey(c *container, prog *jsondoc.Program) (cosmos.PartitionKey, bool) {
	paths := c.meta.PartitionKey.Paths
	if len(paths) == 0 {
		return nil, false
	}
	b := []byte{'['}
	for i, path := range paths {
		v, ok := prog.PinnedValue(strings.Split(strings.TrimPrefix(path, "/"), "/"))
		if !ok {
			return nil, false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, v...)
	}
	pk, err := cosmos.ParsePartitionKeyJSON(string(append(b, ']')))
	if err != nil {
		return nil, false
	}
	return pk, true
}
