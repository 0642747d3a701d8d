package emulator

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
)

// serveItem handles point operations on documents.
func (s *Server) serveItem(req *request, segs []string) {
	c, cerr := s.store.container(segs[1], segs[3])
	if cerr != nil {
		s.writeError(req, cerr, 0)
		return
	}
	s.setContentPath(req, c)
	pk, ok := s.partitionKeyHeader(req, c)
	if !ok {
		return
	}
	p := c.partitionFor(pk)
	if !s.replicaHolds(req, c, p) {
		return
	}
	s.meter(req, c, p)
	switch req.op {
	case faults.OpRead:
		s.readItem(req, c, pk, segs[5])
		return
	}
	if !s.writeAllowed(req) {
		return
	}
	switch req.op {
	case faults.OpCreate, faults.OpUpsert:
		s.createItem(req, c, pk, req.op == faults.OpUpsert)
	case faults.OpReplace:
		s.replaceItem(req, c, pk, segs[5])
	case faults.OpDelete:
		s.deleteItem(req, c, pk, segs[5])
	case faults.OpPatch:
		s.patchItem(req, c, pk, segs[5])
	}
}

// partitionKeyHeader parses x-ms-documentdb-partitionkey and checks it against the
// container's definition.
func (s *Server) partitionKeyHeader(req *request, c *container) (cosmos.PartitionKey, bool) {
	raw := req.r.Header.Get(cosmos.HeaderPartitionKey)
	if raw == "" {
		s.writeError(req, badRequest("partition key value must be supplied for this operation: send the %s header, e.g. [\"value\"]", cosmos.HeaderPartitionKey), 0)
		return nil, false
	}
	pk, err := cosmos.ParsePartitionKeyJSON(raw)
	if err != nil {
		s.writeError(req, badRequest("the %s header is malformed: %v", cosmos.HeaderPartitionKey, err), 0)
		return nil, false
	}
	want := len(c.meta.PartitionKey.Paths)
	if !(len(pk) == 1 && pk[0].Kind == cosmos.KindUndefined) && len(pk) != want {
		s.writeError(req, badRequest("the partition key has %d component(s) but container %q is partitioned by %d path(s) %s", len(pk), c.meta.ID, want, strings.Join(c.meta.PartitionKey.Paths, ", ")), 0)
		return nil, false
	}
	return pk, true
}

// documentPartitionKey reads a document's partition key value from the container's
// key paths; a document without the property has the "none" key.
func documentPartitionKey(doc *jsondoc.Value, def cosmos.PartitionKeyDefinition) (cosmos.PartitionKey, *cosmos.Error) {
	pk := make(cosmos.PartitionKey, 0, len(def.Paths))
	undefined := 0
	for _, path := range def.Paths {
		v := doc.Lookup(strings.Split(strings.TrimPrefix(path, "/"), "/"))
		var c cosmos.Component
		switch {
		case v == nil:
			c.Kind = cosmos.KindUndefined
			undefined++
		case v.Kind == jsondoc.KindString:
			c = cosmos.Component{Kind: cosmos.KindString, Str: v.Str}
		case v.Kind == jsondoc.KindNumber:
			f, err := v.Num.Float64()
			if err != nil {
				return nil, badRequest("partition key value %s at %s is out of range", v.Num, path)
			}
			c = cosmos.Component{Kind: cosmos.KindNumber, Num: f}
		case v.Kind == jsondoc.KindBool:
			c = cosmos.Component{Kind: cosmos.KindBool, Bool: v.Bool}
		case v.Kind == jsondoc.KindNull:
			c.Kind = cosmos.KindNull
		default:
			return nil, badRequest("partition key value at %s must be a string, number, boolean or null, not an object or array", path)
		}
		pk = append(pk, c)
	}
	if undefined == len(pk) {
		return cosmos.NonePK, nil
	}
	return pk, nil
}

// The service's limits on items (Azure Cosmos DB "service quotas": 2,048 bytes of
// partition key value, 1,023 bytes of id, 2 MB of document, 128 levels of nesting). The
// service answers each with 400 BadRequest, substatus 0 as far as is known: its messages
// are not documented, so the ones here say what was exceeded and by how much.
const (
	maxPartitionKeyBytes = 2048
	maxItemIDBytes       = 1023
	maxNestingDepth      = jsondoc.MaxDepth
)

// partitionKeySize measures a partition key value the way the limit is stated: the
// UTF-8 bytes of its string values (not the header's escaped JSON, in which one 'é' is
// six bytes), 8 bytes for a number, 1 for true, false and null, summed over the
// components of a hierarchical key. So 11,000 'é' are 22,000 bytes and 11,000 '<' are
// 11,000.
func partitionKeySize(pk cosmos.PartitionKey) int {
	n := 0
	for _, c := range pk {
		switch c.Kind {
		case cosmos.KindString:
			n += len(c.Str)
		case cosmos.KindNumber:
			n += 8
		case cosmos.KindNull, cosmos.KindBool:
			n++
		}
	}
	return n
}

// checkItemLimits refuses a document the service would refuse for its id or its
// partition key value. Reads and deletes are not limited, so that a document stored by
// an emulator from before the limits can still be read and removed.
func checkItemLimits(id string, pk cosmos.PartitionKey) *cosmos.Error {
	if n := partitionKeySize(pk); n > maxPartitionKeyBytes {
		return badRequest("the partition key value is %d bytes (UTF-8); the service's limit is %d bytes", n, maxPartitionKeyBytes)
	}
	if len(id) > maxItemIDBytes {
		return badRequest("the document id is %d bytes long; the service's limit is %d bytes", len(id), maxItemIDBytes)
	}
	return nil
}

func tooDeep() *cosmos.Error {
	return badRequest("the document nests objects and arrays more than %d levels deep, the service's limit", maxNestingDepth)
}

// jsonNestingDepth is the deepest nesting of objects and arrays in a JSON text (the
// document itself is level 1), counted without parsing, so also for text that the
// parser refused for being too deep.
func jsonNestingDepth(b []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, ch := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case ch == '\\':
				escaped = true
			case ch == '"':
				inString = false
			}
		case ch == '"':
			inString = true
		case ch == '{' || ch == '[':
			depth++
			deepest = max(deepest, depth)
		case ch == '}' || ch == ']':
			depth--
		}
	}
	return deepest
}

// parseDocument checks a document body: a JSON object with a string id whose partition
// key matches the header.
func (s *Server) parseDocument(req *request, c *container, pk cosmos.PartitionKey, body []byte) (*jsondoc.Value, string, bool) {
	doc, err := jsondoc.ParseObject(body)
	if err != nil {
		if jsonNestingDepth(body) > maxNestingDepth {
			s.writeError(req, tooDeep(), 0)
			return nil, "", false
		}
		s.writeError(req, badRequest("the document is not valid JSON: %v", err), 0)
		return nil, "", false
	}
	idv := doc.Get("id")
	if idv == nil {
		s.writeError(req, badRequest("the input content is invalid because the required property 'id' is missing"), 0)
		return nil, "", false
	}
	if idv.Kind != jsondoc.KindString {
		s.writeError(req, badRequest("the document's id must be a string"), 0)
		return nil, "", false
	}
	if e := validateResourceID("document", idv.Str); e != nil {
		s.writeError(req, e, 0)
		return nil, "", false
	}
	if e := checkItemLimits(idv.Str, pk); e != nil {
		s.writeError(req, e, 0)
		return nil, "", false
	}
	docPK, perr := documentPartitionKey(doc, c.meta.PartitionKey)
	if perr != nil {
		s.writeError(req, perr, 0)
		return nil, "", false
	}
	if !docPK.Equal(pk) {
		s.writeError(req, cosmosErr(400, cosmos.SubPartitionKeyMismatch,
			"partition key "+pk.JSON()+" in the "+cosmos.HeaderPartitionKey+" header does not match "+docPK.JSON()+" in the document at "+strings.Join(c.meta.PartitionKey.Paths, ",")), 0)
		return nil, "", false
	}
	return doc, idv.Str, true
}

// mustExist is the precondition of replace, delete and patch: the document exists and,
// with If-Match, still has that etag.
func mustExist(cur *itemVersion, ifMatch string) *cosmos.Error {
	if cur == nil {
		return notFound("entity with the specified id does not exist in the system")
	}
	if ifMatch != "" && !etagMatches(ifMatch, cur.etag) {
		return preconditionFailed("operation cannot be performed because one of the specified precondition is not met (If-Match)")
	}
	return nil
}

func etagMatches(header, etag string) bool {
	header = strings.TrimSpace(header)
	return header == "*" || strings.Trim(header, `"`) == strings.Trim(etag, `"`)
}

func (s *Server) readItem(req *request, c *container, pk cosmos.PartitionKey, id string) {
	v, p, caught := s.store.readItem(c, pk, id, req.region)
	h := req.w.Header()
	h.Set(cosmos.HeaderSessionToken, sessionToken(p.rng.ID, caught))
	h.Set(cosmos.HeaderLSN, strconv.FormatInt(caught, 10))
	h.Set(cosmos.HeaderPartitionKeyRangeID, p.rng.ID)
	if !s.sessionSatisfied(req, p.rng.ID, caught) {
		return
	}
	if v == nil {
		s.writeError(req, notFound("entity with the specified id does not exist in the system"), chargeMetadata)
		return
	}
	h.Set(cosmos.HeaderETag, v.etag)
	h.Set(cosmos.HeaderItemLSN, strconv.FormatInt(v.lsn, 10))
	if inm := req.r.Header.Get(cosmos.HeaderIfNoneMatch); inm != "" && etagMatches(inm, v.etag) {
		s.writeJSON(req, http.StatusNotModified, nil, chargeMetadata)
		return
	}
	s.writeJSON(req, http.StatusOK, v.body, chargeRead(len(v.body)))
}

// sessionSatisfied answers 404/1002 when the client's session token asks for writes this
// region has not received yet: the signal for an SDK to retry elsewhere.
func (s *Server) sessionSatisfied(req *request, rangeID string, caught int64) bool {
	tok := req.r.Header.Get(cosmos.HeaderSessionToken)
	if tok == "" {
		return true
	}
	if s.readLevel(req) != levelSession {
		return true // consistency.go: only Session reads wait for a session token
	}
	want, ok := sessionLSN(tok, rangeID)
	if !ok || want <= caught {
		return true
	}
	s.writeError(req, cosmosErr(404, cosmos.SubReadSessionNotAvailable,
		"the read session is not available for the input session token: region "+req.regionName+" has LSN "+strconv.FormatInt(caught, 10)+", the session needs "+strconv.FormatInt(want, 10)), chargeMetadata)
	return false
}

// answerWrite sends the outcome of a committed write.
func (s *Server) answerWrite(req *request, status int, res writeResult, charge float64) {
	h := req.w.Header()
	h.Set(cosmos.HeaderSessionToken, sessionToken(res.part.rng.ID, res.lsn))
	h.Set(cosmos.HeaderLSN, strconv.FormatInt(res.version.lsn, 10))
	h.Set(cosmos.HeaderPartitionKeyRangeID, res.part.rng.ID)
	if res.version.body == nil {
		s.writeJSON(req, status, nil, charge)
		return
	}
	h.Set(cosmos.HeaderETag, res.version.etag)
	if strings.Contains(strings.ToLower(req.r.Header.Get(cosmos.HeaderPrefer)), cosmos.PreferMinimal) {
		s.writeJSON(req, status, nil, charge)
		return
	}
	s.writeJSON(req, status, res.version.body, charge)
}

// writeFailed answers a write the store refused (409, 412, 404 …), charging what
// the service would have spent finding out.
func (s *Server) writeFailed(req *request, e *cosmos.Error, res writeResult) {
	if res.part != nil {
		req.w.Header().Set(cosmos.HeaderSessionToken, sessionToken(res.part.rng.ID, res.lsn))
	}
	charge := 0.0
	switch e.StatusCode {
	case 404:
		charge = chargeMetadata
	case 409, 412:
		charge = chargeConflict
	}
	s.writeError(req, e, charge)
}

func (s *Server) createItem(req *request, c *container, pk cosmos.PartitionKey, upsert bool) {
	body, ok := s.readBody(req)
	if !ok {
		return
	}
	doc, id, ok := s.parseDocument(req, c, pk, body)
	if !ok {
		return
	}
	ifMatch := req.r.Header.Get(cosmos.HeaderIfMatch)
	raw := doc.AppendJSON(nil)
	res, err := s.store.writeAdmitted(c, pk, id, req.region, func(cur *itemVersion, _ string) ([]byte, bool, *cosmos.Error) {
		if cur != nil && !upsert {
			return nil, false, conflict("entity with the specified id already exists in the system")
		}
		if cur != nil && ifMatch != "" && !etagMatches(ifMatch, cur.etag) {
			return nil, false, preconditionFailed("operation cannot be performed because one of the specified precondition is not met (If-Match)")
		}
		if cur == nil && upsert && ifMatch != "" && ifMatch != "*" {
			return nil, false, preconditionFailed("operation cannot be performed because one of the specified precondition is not met (If-Match on a missing document)")
		}
		return raw, false, nil
	}, s.admitWrite(req, chargeWrite))
	if err != nil {
		s.writeFailed(req, err, res)
		return
	}
	status := http.StatusOK
	if res.created {
		status = http.StatusCreated
	}
	s.answerWrite(req, status, res, chargeWrite(len(res.version.body)))
}

func (s *Server) replaceItem(req *request, c *container, pk cosmos.PartitionKey, id string) {
	body, ok := s.readBody(req)
	if !ok {
		return
	}
	doc, bodyID, ok := s.parseDocument(req, c, pk, body)
	if !ok {
		return
	}
	if bodyID != id {
		s.writeError(req, badRequest("the id %q in the document does not match the id %q in the URL", bodyID, id), 0)
		return
	}
	ifMatch := req.r.Header.Get(cosmos.HeaderIfMatch)
	raw := doc.AppendJSON(nil)
	res, err := s.store.writeAdmitted(c, pk, id, req.region, func(cur *itemVersion, _ string) ([]byte, bool, *cosmos.Error) {
		if err := mustExist(cur, ifMatch); err != nil {
			return nil, false, err
		}
		return raw, false, nil
	}, s.admitWrite(req, chargeWrite))
	if err != nil {
		s.writeFailed(req, err, res)
		return
	}
	s.answerWrite(req, http.StatusOK, res, chargeWrite(len(res.version.body)))
}

func (s *Server) deleteItem(req *request, c *container, pk cosmos.PartitionKey, id string) {
	ifMatch := req.r.Header.Get(cosmos.HeaderIfMatch)
	res, err := s.store.writeAdmitted(c, pk, id, req.region, func(cur *itemVersion, _ string) ([]byte, bool, *cosmos.Error) {
		if err := mustExist(cur, ifMatch); err != nil {
			return nil, false, err
		}
		return nil, true, nil
	}, s.admitWrite(req, func(int) float64 { return chargeDelete }))
	if err != nil {
		s.writeFailed(req, err, res)
		return
	}
	s.answerWrite(req, http.StatusNoContent, res, chargeDelete)
}

func (s *Server) patchItem(req *request, c *container, pk cosmos.PartitionKey, id string) {
	body, ok := s.readBody(req)
	if !ok {
		return
	}
	patch, perr := jsondoc.ParsePatchBody(body)
	if perr != nil {
		s.writeError(req, badRequest("invalid patch request: %v", perr), 0)
		return
	}
	var cond *jsondoc.Filter
	if strings.TrimSpace(patch.Condition) != "" {
		f, err := jsondoc.ParseCondition(patch.Condition)
		if err != nil {
			s.writeError(req, badRequest("invalid patch condition: %v", err), 0)
			return
		}
		cond = f
	}
	protected := protectedPaths(c.meta.PartitionKey)
	ifMatch := req.r.Header.Get(cosmos.HeaderIfMatch)
	res, err := s.store.writeAdmitted(c, pk, id, req.region, func(cur *itemVersion, _ string) ([]byte, bool, *cosmos.Error) {
		if err := mustExist(cur, ifMatch); err != nil {
			return nil, false, err
		}
		doc, err := jsondoc.ParseObject(cur.body)
		if err != nil {
			return nil, false, storageError(err)
		}
		if cond != nil {
			match, err := cond.Match(doc, nil)
			if err != nil {
				return nil, false, badRequest("patch condition: %v", err)
			}
			if !match {
				return nil, false, preconditionFailed("the patch condition is not met by the current document")
			}
		}
		if err := jsondoc.ApplyPatch(doc, patch.Operations, protected); err != nil {
			return nil, false, badRequest("%v", err)
		}
		return doc.AppendJSON(nil), false, nil
	}, s.admitWrite(req, chargePatch))
	if err != nil {
		s.writeFailed(req, err, res)
		return
	}
	s.answerWrite(req, http.StatusOK, res, chargePatch(len(res.version.body)))
}

// protectedPaths reports whether a patch path touches the id, a system property or the
// partition key, none of which a patch may change.
func protectedPaths(def cosmos.PartitionKeyDefinition) func([]string) bool {
	var pkPaths [][]string
	for _, p := range def.Paths {
		pkPaths = append(pkPaths, strings.Split(strings.TrimPrefix(p, "/"), "/"))
	}
	return func(path []string) bool {
		if len(path) == 0 {
			return true
		}
		if path[0] == "id" || isSystemProperty(path[0]) {
			return true
		}
		for _, pk := range pkPaths {
			n := min(len(pk), len(path))
			same := true
			for i := 0; i < n; i++ {
				if pk[i] != path[i] {
					same = false
					break
				}
			}
			if same {
				return true
			}
		}
		return false
	}
}
