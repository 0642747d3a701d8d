package emulator

// Transactional batch and bulk. Both arrive as a POST to a container's docs feed marked
// x-ms-cosmos-is-batch-request, with a JSON array of operations as the body; the SDKs
// (Go's TransactionalBatch, JS's container.items.batch and .bulk) read back a JSON array
// of per-operation results in the same order.
//
//   - A transactional batch (x-ms-cosmos-batch-atomic: true, the default) targets one
//     logical partition, named by x-ms-documentdb-partitionkey. Its operations run in
//     order against the partition as the preceding operations left it, and commit
//     together or not at all: 200 with every result, or 207 Multi-Status with the
//     failing operation's status and 424 FailedDependency for every other one, and
//     nothing stored.
//   - Bulk (x-ms-cosmos-batch-atomic: false) carries operations for many logical
//     partitions of one partition key range (x-ms-documentdb-partitionkeyrangeid), each
//     with its own partitionKey. Each operation commits on its own; a failure stops the
//     rest (424) only when x-ms-cosmos-batch-continue-on-error is false.

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
)

const (
	headerIsBatchRequest       = "x-ms-cosmos-is-batch-request"
	headerBatchAtomic          = "x-ms-cosmos-batch-atomic"
	headerBatchContinueOnError = "x-ms-cosmos-batch-continue-on-error"

	// maxBatchOperations is the service's limit per batch or bulk request.
	maxBatchOperations = 100

	statusFailedDependency = 424
)

// isBatchRequest reports a batch or bulk POST (the JS SDK sends "true", Go "True").
func isBatchRequest(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get(headerIsBatchRequest), "true")
}

// batchWireOp is one operation as the SDKs send it.
type batchWireOp struct {
	OperationType string          `json:"operationType"`
	ID            string          `json:"id"`
	ResourceBody  json.RawMessage `json:"resourceBody"`
	IfMatch       string          `json:"ifMatch"`
	IfNoneMatch   string          `json:"ifNoneMatch"`
	// PartitionKey is bulk's per-operation key: the JS SDK sends the header's JSON as a
	// string ("[\"a\"]"); an array is accepted too.
	PartitionKey json.RawMessage `json:"partitionKey"`
}

// batchResult is one operation's outcome in the service's wire shape.
type batchResult struct {
	StatusCode    int             `json:"statusCode"`
	SubStatusCode int             `json:"subStatusCode,omitempty"`
	RequestCharge float64         `json:"requestCharge"`
	ETag          string          `json:"eTag,omitempty"`
	ResourceBody  json.RawMessage `json:"resourceBody,omitempty"`
	RetryAfterMs  int64           `json:"retryAfterMilliseconds,omitempty"`
	// message is for the emulator's own 207 diagnostics; the service sends none per
	// operation.
	message string
}

// batchOp is a parsed, validated operation.
type batchOp struct {
	kind    string // Create, Upsert, Read, Replace, Delete, Patch
	id      string
	pk      cosmos.PartitionKey
	body    []byte // the client's document (Create, Upsert, Replace)
	patch   *jsondoc.PatchRequest
	cond    *jsondoc.Filter
	ifMatch string
	// err is a problem with the operation itself (400), found before any store access.
	err *cosmos.Error
}

func (op *batchOp) isWrite() bool { return op.kind != "Read" }

// serveBatch answers a batch or bulk request to the docs feed of segs' container.
func (s *Server) serveBatch(req *request, segs []string) {
	c, cerr := s.store.container(segs[1], segs[3])
	if cerr != nil {
		s.writeError(req, cerr, 0)
		return
	}
	s.setContentPath(req, c)
	if !s.writeAllowed(req) {
		return
	}
	atomic := !strings.EqualFold(req.r.Header.Get(headerBatchAtomic), "false")
	body, ok := s.readBody(req)
	if !ok {
		return
	}
	var wire []batchWireOp
	if err := json.Unmarshal(body, &wire); err != nil {
		s.writeError(req, badRequest("a batch request body is a JSON array of operations ({\"operationType\": \"Create\", \"resourceBody\": {…}}, …): %v", err), 0)
		return
	}
	switch {
	case len(wire) == 0:
		s.writeError(req, badRequest("the batch request has no operations"), 0)
		return
	case len(wire) > maxBatchOperations:
		s.writeError(req, badRequest("the batch request has %d operations; the service's limit is %d per request", len(wire), maxBatchOperations), 0)
		return
	}
	if atomic {
		s.serveAtomicBatch(req, c, wire)
	} else {
		s.serveBulk(req, c, wire)
	}
}

// parseBatchOp checks one operation against the container and the partition key it
// runs in (the batch's, or the operation's own in bulk).
func parseBatchOp(w batchWireOp, c *container, pk cosmos.PartitionKey) *batchOp {
	op := &batchOp{pk: pk, id: w.ID, ifMatch: strings.TrimSpace(w.IfMatch)}
	kind := strings.ToLower(w.OperationType)
	if kind != "" {
		kind = strings.ToUpper(kind[:1]) + kind[1:]
	}
	op.kind = kind
	switch kind {
	case "Create", "Upsert", "Replace":
		if len(w.ResourceBody) == 0 || string(w.ResourceBody) == "null" {
			op.err = badRequest("a %s operation needs a resourceBody", kind)
			return op
		}
		doc, err := jsondoc.ParseObject(w.ResourceBody)
		if err != nil {
			op.err = badRequest("the resourceBody of a %s operation is not a valid JSON object: %v", kind, err)
			if jsonNestingDepth(w.ResourceBody) > maxNestingDepth {
				op.err = tooDeep()
			}
			return op
		}
		idv := doc.Get("id")
		if idv == nil || idv.Kind != jsondoc.KindString {
			op.err = badRequest("the input content is invalid because the required property 'id' is missing or not a string")
			return op
		}
		if kind == "Replace" && op.id != "" && op.id != idv.Str {
			op.err = badRequest("the id %q in the resourceBody does not match the operation's id %q", idv.Str, op.id)
			return op
		}
		op.id = idv.Str
		docPK, perr := documentPartitionKey(doc, c.meta.PartitionKey)
		if perr != nil {
			op.err = perr
			return op
		}
		if !docPK.Equal(pk) {
			op.err = cosmosErr(400, cosmos.SubPartitionKeyMismatch, "partition key "+pk.JSON()+" of the batch does not match "+docPK.JSON()+" in the document at "+strings.Join(c.meta.PartitionKey.Paths, ","))
			return op
		}
		op.body = doc.AppendJSON(nil)
	case "Read", "Delete":
	case "Patch":
		patch, err := jsondoc.ParsePatchBody(w.ResourceBody)
		if err != nil {
			op.err = badRequest("invalid patch request: %v", err)
			return op
		}
		op.patch = patch
		if strings.TrimSpace(patch.Condition) != "" {
			f, err := jsondoc.ParseCondition(patch.Condition)
			if err != nil {
				op.err = badRequest("invalid patch condition: %v", err)
				return op
			}
			op.cond = f
		}
	default:
		op.err = badRequest("unknown operationType %q: a batch operation is one of Create, Upsert, Read, Replace, Delete, Patch", w.OperationType)
		return op
	}
	if e := validateResourceID("document", op.id); e != nil {
		op.err = e
	}
	return op
}

// decide runs op against the document's current state (nil: none). It returns the
// document to store (nil with del for a delete; nothing for a read), the status on
// success, or the operation's error.
func (op *batchOp) decide(cur *itemVersion, protected func([]string) bool) (body []byte, del bool, status int, err *cosmos.Error) {
	switch op.kind {
	case "Read":
		if cur == nil {
			return nil, false, 0, notFound("entity with the specified id does not exist in the system")
		}
		return nil, false, http.StatusOK, nil
	case "Create":
		if cur != nil {
			return nil, false, 0, conflict("entity with the specified id already exists in the system")
		}
		return op.body, false, http.StatusCreated, nil
	case "Upsert":
		if cur != nil && op.ifMatch != "" && !etagMatches(op.ifMatch, cur.etag) {
			return nil, false, 0, preconditionFailed("operation cannot be performed because one of the specified precondition is not met (ifMatch)")
		}
		if cur == nil && op.ifMatch != "" && op.ifMatch != "*" {
			return nil, false, 0, preconditionFailed("operation cannot be performed because one of the specified precondition is not met (ifMatch on a missing document)")
		}
		if cur == nil {
			return op.body, false, http.StatusCreated, nil
		}
		return op.body, false, http.StatusOK, nil
	case "Replace":
		if err := mustExist(cur, op.ifMatch); err != nil {
			return nil, false, 0, err
		}
		return op.body, false, http.StatusOK, nil
	case "Delete":
		if err := mustExist(cur, op.ifMatch); err != nil {
			return nil, false, 0, err
		}
		return nil, true, http.StatusNoContent, nil
	case "Patch":
		if err := mustExist(cur, op.ifMatch); err != nil {
			return nil, false, 0, err
		}
		doc, perr := jsondoc.ParseObject(cur.body)
		if perr != nil {
			return nil, false, 0, storageError(perr)
		}
		if op.cond != nil {
			match, cerr := op.cond.Match(doc, nil)
			if cerr != nil {
				return nil, false, 0, badRequest("patch condition: %v", cerr)
			}
			if !match {
				return nil, false, 0, preconditionFailed("the patch condition is not met by the current document")
			}
		}
		if aerr := jsondoc.ApplyPatch(doc, op.patch.Operations, protected); aerr != nil {
			return nil, false, 0, badRequest("%v", aerr)
		}
		return doc.AppendJSON(nil), false, http.StatusOK, nil
	}
	return nil, false, 0, badRequest("unknown operationType %q", op.kind)
}

// chargeFor is an operation's request charge under the emulator's model (charge.go).
func chargeFor(op *batchOp, status int, size int) float64 {
	switch {
	case status == statusFailedDependency:
		return 0
	case status == 404:
		return chargeMetadata
	case status == 409 || status == 412:
		return chargeConflict
	case status >= 400:
		return 0
	}
	switch op.kind {
	case "Read":
		return chargeRead(size)
	case "Delete":
		return chargeDelete
	case "Patch":
		return chargePatch(size)
	}
	return chargeWrite(size)
}

func failedResult(op *batchOp, e *cosmos.Error) batchResult {
	r := batchResult{StatusCode: e.StatusCode, SubStatusCode: e.SubStatus, message: e.Message, RetryAfterMs: e.RetryAfter.Milliseconds()}
	r.RequestCharge = chargeFor(op, e.StatusCode, 0)
	return r
}

// serveAtomicBatch runs a transactional batch: all operations or none.
func (s *Server) serveAtomicBatch(req *request, c *container, wire []batchWireOp) {
	pk, ok := s.partitionKeyHeader(req, c)
	if !ok {
		return
	}
	p := c.partitionFor(pk)
	if !s.replicaHolds(req, c, p) {
		return
	}
	ops := make([]*batchOp, len(wire))
	for i, w := range wire {
		ops[i] = parseBatchOp(w, c, pk)
	}
	s.meter(req, c, p)
	results, p, lsn, serr := s.store.atomicBatch(c, pk, req.region, ops, protectedPaths(c.meta.PartitionKey), func(charge float64) *cosmos.Error { return s.admit(req, charge) })
	if serr != nil {
		s.writeError(req, serr, 0)
		return
	}
	s.answerBatch(req, p, lsn, ops, results)
}

// serveBulk runs each operation on its own, in order.
func (s *Server) serveBulk(req *request, c *container, wire []batchWireOp) {
	var target *partition
	if id := rangeIDHeader(req.r); id != "" {
		target = c.partitionByID(id)
		if target == nil {
			s.writeError(req, cosmosErr(410, cosmos.SubPartitionKeyRangeGone, "partition key range "+id+" does not exist"), 0)
			return
		}
		if !s.replicaHolds(req, c, target) {
			return
		}
	}
	var headerPK cosmos.PartitionKey
	if req.r.Header.Get(cosmos.HeaderPartitionKey) != "" {
		pk, ok := s.partitionKeyHeader(req, c)
		if !ok {
			return
		}
		headerPK = pk
	}
	// Each operation draws on its own range's budget; the response as a whole is not
	// metered again.
	req.metered = true
	continueOnError := !strings.EqualFold(req.r.Header.Get(headerBatchContinueOnError), "false")
	protected := protectedPaths(c.meta.PartitionKey)
	ops := make([]*batchOp, len(wire))
	results := make([]batchResult, len(wire))
	stopped := false
	var last *partition
	var lastLSN int64
	for i, w := range wire {
		if stopped {
			ops[i] = &batchOp{kind: w.OperationType}
			results[i] = batchResult{StatusCode: statusFailedDependency}
			continue
		}
		pk, perr := bulkPartitionKey(w, c, headerPK)
		if perr != nil {
			ops[i] = &batchOp{kind: w.OperationType, err: perr}
		} else {
			ops[i] = parseBatchOp(w, c, pk)
		}
		op := ops[i]
		if op.err == nil && target != nil && c.partitionFor(op.pk) != target {
			// The client's routing map is stale: the SDKs refresh it on 410/1002.
			op.err = cosmosErr(410, cosmos.SubPartitionKeyRangeGone, "the operation's partition key is not in partition key range "+target.rng.ID)
		}
		if op.err != nil {
			results[i] = failedResult(op, op.err)
		} else {
			var p *partition
			results[i], p, lastLSN = s.bulkOne(req, c, op, protected)
			if p != nil {
				last = p
			}
		}
		if results[i].StatusCode >= 400 && !continueOnError {
			stopped = true
		}
	}
	if last == nil && target != nil {
		last = target
	}
	s.answerBatch(req, last, lastLSN, ops, results)
}

// bulkPartitionKey is the partition key a bulk operation runs in: its own, or the
// request's.
func bulkPartitionKey(w batchWireOp, c *container, headerPK cosmos.PartitionKey) (cosmos.PartitionKey, *cosmos.Error) {
	raw := strings.TrimSpace(string(w.PartitionKey))
	if raw == "" || raw == "null" {
		if headerPK != nil {
			return headerPK, nil
		}
		return nil, badRequest("a bulk operation needs its partitionKey (the key as JSON, e.g. \"[\\\"value\\\"]\")")
	}
	if strings.HasPrefix(raw, `"`) {
		var s string
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			return nil, badRequest("the operation's partitionKey is malformed: %v", err)
		}
		raw = s
	}
	pk, err := cosmos.ParsePartitionKeyJSON(raw)
	if err != nil {
		return nil, badRequest("the operation's partitionKey is malformed: %v", err)
	}
	want := len(c.meta.PartitionKey.Paths)
	if !(len(pk) == 1 && pk[0].Kind == cosmos.KindUndefined) && len(pk) != want {
		return nil, badRequest("the operation's partition key has %d component(s) but container %q is partitioned by %d path(s)", len(pk), c.meta.ID, want)
	}
	return pk, nil
}

// bulkOne commits one bulk operation through the store's ordinary write path. With
// throughput enforced, an operation whose charge does not fit in its range's budget
// gets its own 429/3200 with a retry-after, as the service answers bulk.
func (s *Server) bulkOne(req *request, c *container, op *batchOp, protected func([]string) bool) (batchResult, *partition, int64) {
	budget := s.budgetFor(req.region, c, c.partitionFor(op.pk))
	// refused is a failed operation's result, or the 429 when its charge does not fit.
	refused := func(e *cosmos.Error) batchResult {
		r := failedResult(op, e)
		if e.StatusCode != http.StatusTooManyRequests {
			if te := budget.admit(r.RequestCharge); te != nil {
				r = failedResult(op, te)
			}
		}
		return r
	}
	if op.kind == "Read" {
		v, p, caught := s.store.readItem(c, op.pk, op.id, req.region)
		if v == nil {
			return refused(notFound("entity with the specified id does not exist in the system")), p, caught
		}
		if e := budget.admit(chargeRead(len(v.body))); e != nil {
			return failedResult(op, e), p, caught
		}
		return batchResult{StatusCode: http.StatusOK, RequestCharge: chargeRead(len(v.body)), ETag: v.etag, ResourceBody: v.body}, p, caught
	}
	status := 0
	var admit admission
	if budget != nil {
		admit = func(next *itemVersion) *cosmos.Error { return budget.admit(chargeFor(op, status, len(next.body))) }
	}
	res, err := s.store.writeAdmitted(c, op.pk, op.id, req.region, func(cur *itemVersion, _ string) ([]byte, bool, *cosmos.Error) {
		body, del, st, err := op.decide(cur, protected)
		status = st
		return body, del, err
	}, admit)
	if err != nil {
		return refused(err), res.part, res.lsn
	}
	r := batchResult{StatusCode: status, RequestCharge: chargeFor(op, status, len(res.version.body))}
	if res.version.body != nil {
		r.ETag, r.ResourceBody = res.version.etag, res.version.body
	}
	return r, res.part, res.lsn
}

// answerBatch sends the per-operation results: 200 when every operation succeeded,
// else 207.
func (s *Server) answerBatch(req *request, p *partition, lsn int64, ops []*batchOp, results []batchResult) {
	minimal := strings.Contains(strings.ToLower(req.r.Header.Get(cosmos.HeaderPrefer)), cosmos.PreferMinimal)
	status := http.StatusOK
	charge := 0.0
	for i := range results {
		r := &results[i]
		charge += r.RequestCharge
		if r.StatusCode >= 400 {
			status = http.StatusMultiStatus
		}
		// Without content on write, the service sends bodies only for reads.
		if minimal && ops[i] != nil && ops[i].isWrite() {
			r.ResourceBody = nil
		}
	}
	h := req.w.Header()
	if p != nil {
		h.Set(cosmos.HeaderSessionToken, sessionToken(p.rng.ID, lsn))
		h.Set(cosmos.HeaderLSN, strconv.FormatInt(lsn, 10))
		h.Set(cosmos.HeaderPartitionKeyRangeID, p.rng.ID)
	}
	body, _ := json.Marshal(results)
	s.writeJSON(req, status, body, charge)
}

// batchDoc is the state of one document as an atomic batch has left it so far.
type batchDoc struct {
	key   string
	id    string
	pk    cosmos.PartitionKey
	entry *itemEntry
	rid   string
	seq   uint64
	cur   *itemVersion // nil: the document does not exist (now)
	dirty bool
}

// atomicBatch runs ops in order against partition p and commits their writes together,
// in one disk transaction, only when every operation succeeds. The partition stays
// locked throughout, so no other write interleaves and no reader sees part of a batch.
// A non-nil error is a failure of the emulator itself (the disk), not of an operation.
// admit decides, before anything is stored, whether the batch's whole charge may be
// spent (throughput.go); its error is then the batch's answer.
func (s *store) atomicBatch(c *container, pk cosmos.PartitionKey, region int, ops []*batchOp, protected func([]string) bool, admit func(charge float64) *cosmos.Error) ([]batchResult, *partition, int64, *cosmos.Error) {
	p := c.lockedPartitionFor(pk)
	defer p.mu.Unlock()
	results, lsn, err := s.atomicBatchLocked(c, p, region, ops, protected, admit)
	return results, p, lsn, err
}

// atomicBatchLocked runs a transactional batch in p, whose lock the caller holds.
func (s *store) atomicBatchLocked(c *container, p *partition, region int, ops []*batchOp, protected func([]string) bool, admit func(charge float64) *cosmos.Error) ([]batchResult, int64, *cosmos.Error) {
	results := make([]batchResult, len(ops))
	now := s.clock.Now()
	lag := time.Duration(s.lag.Load())

	docs := map[string]*batchDoc{}
	var order []*batchDoc
	failed := -1
	// The batch's unique key entries are checked against the index as the batch's own
	// earlier operations left it (uniquekeys.go); the index changes only on commit.
	var uniq *uniqueBatch
	var alive func(id, k string) bool
	if c.uniq != nil {
		uniq = &uniqueBatch{u: c.uniq, pending: map[string]string{}}
		alive = func(id, k string) bool {
			if d := docs[itemKey(ops[0].pk, id)]; d != nil {
				return d.cur != nil && slices.Contains(d.cur.uniq, k)
			}
			return c.holds(p.items[itemKey(ops[0].pk, id)], k, now)
		}
	}
	for i, op := range ops {
		if op.err != nil {
			results[i], failed = failedResult(op, op.err), i
			break
		}
		key := itemKey(op.pk, op.id)
		d := docs[key]
		if d == nil {
			d = &batchDoc{key: key, id: op.id, pk: op.pk, entry: p.items[key]}
			if d.entry != nil {
				d.rid, d.seq = d.entry.rid, d.entry.seq
				if l := d.entry.latest(); c.live(l, now) {
					d.cur = l
				}
			}
			docs[key] = d
		}
		prev := d.cur
		body, del, status, err := op.decide(d.cur, protected)
		if err == nil && !del && body != nil {
			if err = checkBatchDocument(op, body); err == nil {
				if d.rid == "" {
					d.seq = s.docSeq.Add(1)
					d.rid = docRID(c.db.seq, c.seq, d.seq)
				}
				v := &itemVersion{ts: now.Unix(), committed: now, origin: region, etag: newETag(), ttl: itemTTL(body)}
				v.body, err = withSystemProperties(body, d.rid, c, v.etag, v.ts)
				if err != nil && jsonNestingDepth(body) > maxNestingDepth {
					err = tooDeep() // a patch can nest deeper than any request body
				}
				if err == nil && uniq != nil {
					v.uniq = c.uniq.entries(d.pk, v.body)
					for _, k := range v.uniq {
						if h := uniq.holder(k, alive); h != "" && h != d.id {
							err = uniqueViolation()
							break
						}
					}
				}
				if err == nil {
					d.cur = v
				}
			}
		}
		if err != nil {
			results[i], failed = failedResult(op, err), i
			break
		}
		if del {
			d.cur = nil
		}
		if uniq != nil && op.isWrite() {
			var was, now []string
			if prev != nil {
				was = prev.uniq
			} else if d.entry != nil && d.entry.latest() != nil {
				// An expired version's entries are freed by whatever replaces it.
				was = d.entry.latest().uniq
			}
			if d.cur != nil {
				now = d.cur.uniq
			}
			uniq.write(d.id, was, now, alive)
		}
		if op.isWrite() && !d.dirty {
			d.dirty = true
			order = append(order, d)
		}
		r := batchResult{StatusCode: status}
		if d.cur != nil {
			r.ETag, r.ResourceBody = d.cur.etag, d.cur.body
			r.RequestCharge = chargeFor(op, status, len(d.cur.body))
		} else {
			r.RequestCharge = chargeFor(op, status, 0)
		}
		results[i] = r
	}
	if failed >= 0 {
		for i := range results {
			if i != failed {
				results[i] = batchResult{StatusCode: statusFailedDependency}
			}
		}
		return results, p.lsn, nil
	}
	charge := 0.0
	for _, r := range results {
		charge += r.RequestCharge
	}
	if err := admit(charge); err != nil {
		return nil, p.lsn, err
	}
	if len(order) == 0 {
		return results, p.lsn, nil
	}

	// Each changed document gets its own LSN, as if its writes had been sent one by one.
	lsn := p.lsn
	writes := make([]batchDiskWrite, len(order))
	for i, d := range order {
		lsn++
		v := d.cur
		if v == nil {
			v = &itemVersion{ts: now.Unix(), committed: now, origin: region}
		}
		v.lsn = lsn
		d.cur = v
		writes[i] = batchDiskWrite{key: d.key, del: v.body == nil,
			item: diskItem{id: d.id, pk: d.pk, rid: d.rid, seq: d.seq, lsn: v.lsn, ts: v.ts, etag: v.etag, body: v.body}}
	}
	if s.disk != nil {
		if err := s.disk.commitBatch(c, p.rng.ID, writes, lsn, s.docSeq.Load()); err != nil {
			return nil, p.lsn, storageError(err)
		}
	}
	for _, d := range order {
		e := d.entry
		if e == nil {
			if d.cur.body == nil {
				continue // created and deleted within the batch
			}
			e = &itemEntry{id: d.id, pk: d.pk, rid: d.rid, seq: d.seq}
			p.addEntry(d.key, e)
		}
		e.versions = append(e.versions, d.cur)
		e.prune(now, lag)
		if d.cur.body == nil && len(e.versions) == 1 {
			p.removeEntry(d.key)
		}
		p.recordCommit(commit{lsn: d.cur.lsn, committed: now, origin: region, key: d.key}, now, lag, s.maxStale)
	}
	if uniq != nil {
		uniq.commit()
	}
	p.lsn = lsn
	return results, lsn, nil
}

// checkBatchDocument applies the service's limits (items.go) to a document a batch
// would store.
func checkBatchDocument(op *batchOp, body []byte) *cosmos.Error {
	if err := checkItemLimits(op.id, op.pk); err != nil {
		return err
	}
	if len(body) > MaxDocumentBytes {
		return tooLarge(len(body))
	}
	return nil
}

// batchDiskWrite is one document's final state after an atomic batch.
type batchDiskWrite struct {
	key  string
	del  bool
	item diskItem
}

// commitBatch stores an atomic batch's documents in one bbolt transaction, so that a
// crash leaves all of the batch or none of it (the records are putItem's and
// deleteItem's).
func (d *disk) commitBatch(c *container, rangeID string, writes []batchDiskWrite, lsn int64, docSeq uint64) error {
	return d.rangeWrite(c, rangeID, lsn, docSeq, func(rb *bolt.Bucket) error {
		for _, w := range writes {
			var err error
			if w.del {
				err = rb.Delete([]byte(w.key))
			} else {
				err = rb.Put([]byte(w.key), encodeItem(w.item))
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}
