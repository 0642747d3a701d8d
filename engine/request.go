package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/retries"
)

// prepare validates an operation and fills in what it leaves to the document: the id of
// a create or upsert, and the partition key of a write without --pk.
func (c *Client) prepare(ctx context.Context, op *Operation, acct *cosmos.Account, endpoint string) error {
	switch op.Kind {
	case OpRead, OpCreate, OpUpsert, OpReplace, OpDelete, OpPatch, OpQuery, OpQueryPlan, OpChangeFeed, OpDeletePartition:
	default:
		return inputErrorf("unknown operation %q", op.Kind)
	}
	if op.Database == "" || op.Container == "" {
		return inputErrorf("no database or container: give --database and --container (or set them in a profile)")
	}
	if op.Kind.IsQuery() {
		return prepareQuery(op)
	}
	if op.Kind == OpChangeFeed {
		return prepareChangeFeed(op)
	}
	if op.Kind == OpDeletePartition {
		if op.PartitionKey == nil {
			return inputErrorf("no partition key: a partition delete needs the whole key of the logical partition")
		}
		return nil
	}
	// A document is scanned once (document.go); doc, the decoded map, is only made for
	// one the scan is not sure of, and for the messages that say what is wrong with it.
	var doc map[string]any
	var scanned *Document
	body := op.Body // as given, before a _trackingId is put in it
	if op.Kind == OpCreate || op.Kind == OpUpsert || op.Kind == OpReplace {
		scanned = op.scannedBody()
		if id, ok := scanned.idMatching(op.ID); ok {
			op.ID = id
		} else {
			scanned = nil
			var err error
			if doc, err = decodeDocument(op); err != nil {
				return err
			}
		}
	}
	if op.ID == "" {
		return inputErrorf("no item id given")
	}
	// The gateway would store a replacement character where the invalid byte was: an
	// item under another id than the one given, that this id never reads back.
	if !utf8.ValidString(op.ID) {
		return inputErrorf("the item id is not valid UTF-8 (byte offset %d): ids are UTF-8 text", invalidUTF8Offset(op.ID))
	}
	tracked := op.WriteRetries == retries.WriteRetriesWithTrackingID && (op.Kind == OpCreate || op.Kind == OpReplace)
	if op.SentBefore && (!tracked || op.TrackingID == "") {
		return inputErrorf("SentBefore needs a create or replace with the tracking-id write policy and a TrackingID")
	}
	if tracked && op.trackingID == "" {
		// One id per logical write, reused by every retry and hedge of it.
		op.trackingID = op.TrackingID
		if op.trackingID == "" {
			op.trackingID = newTrackingID()
		}
		if scanned != nil {
			op.Body = scanned.withTrackingID(op.trackingID)
		} else {
			withID, err := withTrackingID(op.Body, op.trackingID)
			if err != nil {
				return err
			}
			op.Body = withID
		}
	}
	if op.PartitionKey != nil {
		return nil
	}
	if doc == nil && scanned == nil {
		return inputErrorf("no partition key: give --pk (a JSON value such as '\"tenant-1\"' or 42, or a plain string)")
	}
	def, err := c.partitionKeyDefinition(ctx, op.Database, op.Container, acct, endpoint)
	if err != nil {
		return err
	}
	if scanned != nil {
		if pk, ok := scanned.PartitionKey(def); ok {
			op.PartitionKey = pk
			return nil
		}
		// Not a key the scan reads (missing, nested in something else than an object, an
		// object): decoded, for the same key or the same message as ever.
		if doc, err = decodeDocument(&Operation{Body: body}); err != nil {
			return err
		}
	}
	pk, err := partitionKeyFromDocument(doc, def)
	if err != nil {
		return err
	}
	op.PartitionKey = pk
	return nil
}

// scannedBody is the operation's Document when it was scanned from its Body, else Body
// scanned now; nil when the scan is not sure of it.
func (op *Operation) scannedBody() *Document {
	if d := op.Document; d != nil && len(d.raw) == len(op.Body) && (len(op.Body) == 0 || &d.raw[0] == &op.Body[0]) {
		return d
	}
	d, ok := ScanDocument(op.Body)
	if !ok {
		return nil
	}
	return d
}

// idMatching is the document's string id when it is the one given, or none was given;
// ok is false otherwise (and for a nil Document), for the old path to say why.
func (d *Document) idMatching(given string) (string, bool) {
	if d == nil {
		return "", false
	}
	id, ok := d.ID()
	if !ok || given != "" && given != id {
		return "", false
	}
	return id, true
}

// decodeDocument decodes a create's, upsert's or replace's document the old way, and
// checks its id against the operation's (filling it in when the operation has none).
func decodeDocument(op *Operation) (map[string]any, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(op.Body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return nil, inputErrorf("the document is not a JSON object: %v", jsonProblem(err))
	}
	if dec.More() {
		return nil, inputErrorf("the document has data after the JSON object: give one document per command")
	}
	id, ok := doc["id"].(string)
	switch {
	case doc["id"] == nil:
		return nil, inputErrorf(`the document has no "id" property: every Cosmos DB item needs a string id`)
	case !ok:
		return nil, inputErrorf(`the document's "id" must be a string, not %s`, cosmos.JSONKind(doc["id"]))
	case op.ID == "":
		op.ID = id
	case op.ID != id:
		return nil, inputErrorf("the document's id %q does not match the ID argument %q", id, op.ID)
	}
	return doc, nil
}

func jsonProblem(err error) string {
	if err == nil {
		return "it is null or not an object"
	}
	return err.Error()
}

// partitionKeyDefinition reads (once per process) the container's partition key paths:
// from endpoint, and when that region does not answer, from each other region of the
// account in turn (metadata is the same everywhere; a write whose region is down should
// fail on its own attempt, with the message that explains it, not on this read).
func (c *Client) partitionKeyDefinition(ctx context.Context, db, coll string, acct *cosmos.Account, endpoint string) (cosmos.PartitionKeyDefinition, error) {
	key := db + "/" + coll
	c.mu.Lock()
	def, ok := c.containers[key]
	c.mu.Unlock()
	if ok {
		return def, nil
	}
	endpoints := []string{endpoint}
	for _, l := range acct.ReadableLocations {
		if ep := endpointOf(l); !contains(endpoints, ep) {
			endpoints = append(endpoints, ep)
		}
	}
	var resp *cosmos.Response
	var err error
	for i, ep := range endpoints {
		// Fitted into the end-to-end timeout while another region remains (fitTimeout): a
		// hung first region must leave time to ask the next.
		at := c.sendFitted(ctx, ClassMetadata, 0, ep, &cosmos.Request{Method: http.MethodGet, Path: cosmos.ContainerPath(db, coll)}, i < len(endpoints)-1)
		resp, err = at.resp, at.err
		if err == nil || ctx.Err() != nil || (resp != nil && resp.StatusCode < 500 && resp.StatusCode != 408 && resp.StatusCode != 429) {
			break
		}
	}
	if err != nil {
		return def, err
	}
	var container cosmos.Container
	if err := json.Unmarshal(resp.Body, &container); err != nil || len(container.PartitionKey.Paths) == 0 {
		return def, inputErrorf("could not read the partition key definition of %s: give --pk", key)
	}
	c.mu.Lock()
	c.containers[key] = container.PartitionKey
	c.mu.Unlock()
	return container.PartitionKey, nil
}

// forgetRouting drops what the client cached of a container's definition and partition
// key ranges, after a 410 said the partition moved: the next request reads them again.
func (c *Client) forgetRouting(db, coll string) {
	key := db + "/" + coll
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.containers, key)
	delete(c.routing, key)
	delete(c.ranges, key)
}

// partitionKeyFromDocument reads a document's partition key value at the container's
// paths. A document with no value at a path would be stored under the "none" key, which
// only `--pk '[{}]'` reads back: that is nearly always a mistake (a misspelt property, the
// wrong container), so it is refused, and --pk '[{}]' says it is meant.
func partitionKeyFromDocument(doc map[string]any, def cosmos.PartitionKeyDefinition) (cosmos.PartitionKey, error) {
	var values []any
	var missing []string
	for _, path := range def.Paths {
		var cur any = doc
		for _, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
			m, ok := cur.(map[string]any)
			if !ok {
				cur = nil
				break
			}
			v, present := m[seg]
			if !present {
				cur = undefined{}
				break
			}
			cur = v
		}
		switch cur.(type) {
		case undefined:
			missing = append(missing, path)
		case map[string]any, []any:
			return nil, inputErrorf("the document's partition key at %s is an object or array; it must be a string, number, boolean or null", path)
		default:
			values = append(values, cur)
		}
	}
	if len(missing) > 0 {
		return nil, inputErrorf("the document has no value at the container's partition key path %s (the container's key is %s): "+
			"add the property to the document, or give --pk explicitly: --pk '[{}]' is the none key, for items without the property",
			strings.Join(missing, ", "), strings.Join(def.Paths, ", "))
	}
	return cosmos.PK(values...)
}

// invalidUTF8Offset is the byte offset of the first invalid UTF-8 sequence in s.
func invalidUTF8Offset(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
	}
	return len(s)
}

type undefined struct{}

// buildRequest turns an operation into its gateway request.
func buildRequest(op *Operation, multiWrite bool) *cosmos.Request {
	req := buildKindRequest(op, multiWrite)
	setConsistency(req, op)
	return req
}

func buildKindRequest(op *Operation, multiWrite bool) *cosmos.Request {
	if op.Kind.IsQuery() {
		return buildQueryRequest(op)
	}
	if op.Kind == OpChangeFeed {
		return buildChangeFeedRequest(op)
	}
	req := &cosmos.Request{Header: http.Header{}}
	req.Header.Set(cosmos.HeaderPartitionKey, op.partitionKeyJSON())
	switch op.Kind {
	case OpRead:
		req.Method, req.Path = http.MethodGet, cosmos.ItemPath(op.Database, op.Container, op.ID)
	case OpCreate:
		req.Method, req.Path = http.MethodPost, cosmos.ItemsPath(op.Database, op.Container)
	case OpUpsert:
		req.Method, req.Path = http.MethodPost, cosmos.ItemsPath(op.Database, op.Container)
		req.Header.Set(cosmos.HeaderIsUpsert, "true")
	case OpReplace:
		req.Method, req.Path = http.MethodPut, cosmos.ItemPath(op.Database, op.Container, op.ID)
	case OpDelete:
		req.Method, req.Path = http.MethodDelete, cosmos.ItemPath(op.Database, op.Container, op.ID)
	case OpDeletePartition:
		req.Method, req.Path = http.MethodPost, cosmos.ContainerPath(op.Database, op.Container)+"/operations/partitionkeydelete"
		// The link is signed as it is, not escaped (PROTOCOL.md, Authentication).
		req.ResourceType, req.ResourceLink = "partitionkey", "dbs/"+op.Database+"/colls/"+op.Container
	case OpPatch:
		req.Method, req.Path = http.MethodPatch, cosmos.ItemPath(op.Database, op.Container, op.ID)
		req.Header.Set("Content-Type", "application/json_patch+json")
	}
	if op.Kind.IsWrite() {
		req.Body = op.Body
		if op.MinimalResponse && op.Kind != OpDelete && op.Kind != OpDeletePartition {
			req.Header.Set(cosmos.HeaderPrefer, cosmos.PreferMinimal)
		}
		if multiWrite {
			req.Header.Set(cosmos.HeaderAllowTentativeWrites, "true")
		}
	}
	if op.IfMatch != "" {
		etag := op.IfMatch
		if etag != "*" && !strings.HasPrefix(etag, `"`) {
			etag = `"` + etag + `"`
		}
		req.Header.Set(cosmos.HeaderIfMatch, etag)
	}
	return req
}

// request returns the operation's gateway request, built once and shared by every
// attempt and arm: attempts differ only in where they are sent, and the transport only
// reads the request.
func (op *Operation) request(multiWrite bool) *cosmos.Request {
	op.reqOnce.Do(func() { op.req = buildRequest(op, multiWrite) })
	return op.req
}
