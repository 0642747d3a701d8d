package emulator

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
)

// Query pages stop at this many documents or bytes, like the service's.
const (
	defaultPageItems = 100
	maxPageItems     = 1000
	maxPageBytes     = 4 << 20
)

// serveQuery runs the small SQL subset the emulator supports, read feeds (GET …/docs)
// and the change feed (a read feed with A-IM).
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
		if strings.EqualFold(r.Header.Get(cosmos.HeaderQueryPlanRequest), "true") {
			s.writeError(req, badRequest("the emulator does not produce query plans; it runs single-partition and simple cross-partition queries directly"), 0)
			return
		}
		body, ok := s.readBody(req)
		if !ok {
			return
		}
		if err := json.Unmarshal(body, &spec); err != nil {
			s.writeError(req, badRequest("the query body is not valid JSON: %v (expected {\"query\": \"SELECT …\", \"parameters\": […]})", err), 0)
			return
		}
	}
	q, err := jsondoc.ParseQuery(spec.Query)
	if err != nil {
		if errors.Is(err, jsondoc.ErrUnsupported) {
			s.writeError(req, badRequest("%v", err), 0)
		} else {
			s.writeError(req, badRequest("syntax error in query: %v", err), 0)
		}
		return
	}
	params := map[string]*jsondoc.Value{}
	for _, p := range spec.Parameters {
		v, err := jsondoc.Parse(p.Value)
		if err != nil {
			s.writeError(req, badRequest("query parameter %s has an invalid value: %v", p.Name, err), 0)
			return
		}
		params[p.Name] = v
	}

	parts, pkIdentity, ok := s.queryScope(req, c)
	if !ok {
		return
	}
	maxItems, ok := s.maxItemCount(req)
	if !ok {
		return
	}
	var cont queryPosition
	if v := r.Header.Get(cosmos.HeaderContinuation); v != "" {
		var err error
		if cont, err = parseQueryContinuation(v); err != nil {
			s.writeError(req, badRequest("%v", err), 0)
			return
		}
		if c.partitionByID(cont.Range) == nil {
			s.writeError(req, badRequest("the continuation token names partition key range %q, which this container does not have: it was issued for another container; restart the query without it", cont.Range), 0)
			return
		}
	}

	var (
		docs      []json.RawMessage
		scanned   int
		bytes     int
		more      bool
		evalErr   error
		last      queryPosition
		remaining = q.Top - cont.Returned
		started   = cont.Range == ""
	)
	for _, p := range parts {
		after := uint64(0)
		if !started {
			if p.rng.ID != cont.Range {
				continue
			}
			started, after = true, cont.Seq
		}
		s.store.scanAfter(p, req.region, pkIdentity, after, func(seq uint64, body []byte) bool {
			scanned++
			if q.Where != nil {
				doc, err := jsondoc.ParseObject(body)
				if err != nil {
					evalErr = err
					return false
				}
				ok, err := q.Where.Match(doc, params)
				if err != nil {
					evalErr = err
					return false
				}
				if !ok {
					return true
				}
			}
			if q.Top > 0 && remaining <= 0 {
				return false
			}
			if len(docs) >= maxItems || bytes+len(body) > maxPageBytes {
				more = true
				return false
			}
			if q.Top > 0 {
				remaining--
			}
			docs = append(docs, body)
			bytes += len(body)
			last = queryPosition{Range: p.rng.ID, Seq: seq}
			return true
		})
		if more || evalErr != nil || (q.Top > 0 && remaining <= 0) {
			break
		}
	}
	if evalErr != nil {
		s.writeError(req, badRequest("%v", evalErr), 0)
		return
	}
	if more {
		last.Returned = cont.Returned + len(docs)
		req.w.Header().Set(cosmos.HeaderContinuation, last.token())
	}
	if docs == nil {
		docs = []json.RawMessage{}
	}
	body, _ := json.Marshal(cosmos.DocumentFeed{RID: c.meta.RID, Documents: docs, Count: len(docs)})
	s.writeFeed(req, body, len(docs), chargeQuery(scanned, bytes))
}

// queryScope picks the partitions a query reads: the one holding the partition key in
// the header, the one named by a range id header, or every one when the client allows
// a cross-partition query. Sent to a replica, a query reads the replica's range only.
func (s *Server) queryScope(req *request, c *container) ([]*partition, string, bool) {
	r := req.r
	if raw := r.Header.Get(cosmos.HeaderPartitionKey); raw != "" {
		pk, ok := s.partitionKeyHeader(req, c)
		if !ok {
			return nil, "", false
		}
		p := c.partitionFor(pk)
		if !s.replicaHolds(req, c, p) {
			return nil, "", false
		}
		now := s.clock.Now()
		p.mu.RLock()
		caught := p.caughtUpLSN(req.region, now, s.lagNow())
		p.mu.RUnlock()
		req.w.Header().Set(cosmos.HeaderSessionToken, sessionToken(p.rng.ID, caught))
		if !s.sessionSatisfied(req, p.rng.ID, caught) {
			return nil, "", false
		}
		return []*partition{p}, pk.Identity(), true
	}
	if id := rangeIDHeader(r); id != "" {
		p := c.partitionByID(id)
		if p == nil {
			s.writeError(req, cosmosErr(410, cosmos.SubPartitionKeyRangeGone, "partition key range "+id+" does not exist"), 0)
			return nil, "", false
		}
		if !s.replicaHolds(req, c, p) {
			return nil, "", false
		}
		return []*partition{p}, "", true
	}
	if req.replica != nil {
		// A replica holds one range: a query sent to it reads that range only.
		p := c.partitionByID(req.replica.set.key.rangeID)
		if p == nil {
			p = c.parts[0] // another container: replicaHolds answers 410/1000
		}
		if !s.replicaHolds(req, c, p) {
			return nil, "", false
		}
		return []*partition{p}, "", true
	}
	if r.Method == http.MethodGet || strings.EqualFold(r.Header.Get(cosmos.HeaderEnableCrossPartition), "true") {
		return c.parts, "", true
	}
	s.writeError(req, badRequest("cross partition query is required but disabled: send the %s header for a single-partition query, or %s: true", cosmos.HeaderPartitionKey, cosmos.HeaderEnableCrossPartition), 0)
	return nil, "", false
}
