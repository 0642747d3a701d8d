package emulator

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// A container's policies and their replace (PUT /dbs/{db}/colls/{coll}), with the
// service's rules. Every rule below is the service's as its documentation or the SDK
// tests that run against it show it; each answer names its source in the README
// (emulator fidelity, "containers").
//
// A replace is a whole replacement: what the body leaves out is not kept (the REST
// reference, "Replace a Collection", gives the body as the collection's definition,
// indexingPolicy optional and "by default … automatic for all document paths"). So a
// replace without defaultTtl turns time to live off, one without indexingPolicy gets the
// default policy, and one without the unique key or vector embedding policy the
// container has is a change of it, refused.

// defaultIndexingPolicy is the policy of a container created without one.
var defaultIndexingPolicy = json.RawMessage(`{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`)

func (c *container) setResource(res cosmos.Container) { c.current.Store(&res) }

// resource is the container's resource as last created or replaced.
func (c *container) resource() cosmos.Container { return *c.current.Load() }

// withPolicies is res with the policies and defaultTtl of props, as sent: the service
// returns the vector embedding, full-text and indexing policies as they were given (the
// Python SDK's live tests compare them whole: test_vector_policy.py,
// test_full_text_policy.py). An absent indexing policy is the default one.
func withPolicies(res, props cosmos.Container) cosmos.Container {
	res.IndexingPolicy = sentOr(props.IndexingPolicy, defaultIndexingPolicy)
	res.DefaultTTL = props.DefaultTTL
	res.UniqueKeyPolicy = sentOr(props.UniqueKeyPolicy, nil)
	res.VectorEmbeddingPolicy = sentOr(props.VectorEmbeddingPolicy, nil)
	res.FullTextPolicy = sentOr(props.FullTextPolicy, nil)
	res.ConflictResolutionPolicy = sentOr(props.ConflictResolutionPolicy, defaultConflictResolutionPolicy)
	res.GeospatialConfig = sentOr(props.GeospatialConfig, defaultGeospatialConfig)
	res.AnalyticalStorageTTL = props.AnalyticalStorageTTL
	res.ChangeFeedPolicy = sentOr(props.ChangeFeedPolicy, nil)
	res.ComputedProperties = sentOr(props.ComputedProperties, nil)
	return res
}

// sentOr is a policy as the request sent it, or dflt when it sent none (or null).
func sentOr(sent, dflt json.RawMessage) json.RawMessage {
	if present(sent) {
		return sent
	}
	return dflt
}

// Policies the emulator stores, fills in or refuses (README, emulator fidelity,
// "container replace and policies"):
//
//   - conflictResolutionPolicy: the service fills in last writer wins on _ts for a
//     container created without one, and returns it on every read (the REST API specs'
//     example CosmosDBRestorableSqlContainerList.json, azure-rest-api-specs; "az cosmosdb
//     sql container show" in Microsoft Learn's multi-region write exercise: "The
//     container was created without a conflict resolution policy, so it carries the
//     default ... because the policy is fixed at creation"). Microsoft's emulator takes a
//     custom path and a custom stored procedure and returns the procedure as a full link
//     (the .NET SDK's CosmosContainerTests, run against it: WithConflictResolution). On a
//     single-write account no two regions write one item, so every policy holds
//     trivially, and the emulator stores it. On a multi-write emulator concurrent writes
//     of one item are resolved by commit order, the last one winning (last writer wins
//     on _ts); anything else is refused, as the emulator cannot honour it.
//   - geospatialConfig: filled in as {"type":"Geography"} (same sources), stored as sent.
//     The emulator's queries have no spatial functions, so the type changes nothing.
//   - analyticalStorageTtl and changeFeedPolicy: stored and returned as sent. The
//     emulator has no analytical store, and its change feed refuses the all versions and
//     deletes mode that a retention serves (changefeed.go): nothing it serves depends on
//     them.
//   - computedProperties (other than none), clientEncryptionPolicy and the deprecated
//     ttlPropertyPath: refused with 400, as the emulator would otherwise accept and not
//     honour them (queries would not see computed properties; it has no client encryption
//     keys; items expire by _ts only).

var (
	defaultConflictResolutionPolicy = json.RawMessage(`{"mode":"LastWriterWins","conflictResolutionPath":"/_ts","conflictResolutionProcedure":""}`)
	defaultGeospatialConfig         = json.RawMessage(`{"type":"Geography"}`)
)

// conflictPolicy is a conflictResolutionPolicy, read.
type conflictPolicy struct {
	Mode      string `json:"mode"`
	Path      string `json:"conflictResolutionPath"`
	Procedure string `json:"conflictResolutionProcedure"`
}

// readConflictPolicy reads and normalizes a policy: last writer wins without a path is on
// _ts, as the service fills it in.
func readConflictPolicy(raw json.RawMessage) (conflictPolicy, *cosmos.Error) {
	var p conflictPolicy
	if !present(raw) {
		raw = defaultConflictResolutionPolicy
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, badRequest("conflictResolutionPolicy is not of the form {\"mode\": \"LastWriterWins\", \"conflictResolutionPath\": \"/_ts\"}: %v", err)
	}
	switch {
	case strings.EqualFold(p.Mode, "LastWriterWins") || p.Mode == "":
		p.Mode = "LastWriterWins"
		if p.Path == "" {
			p.Path = "/_ts"
		}
	case strings.EqualFold(p.Mode, "Custom"):
		p.Mode = "Custom"
	default:
		return p, badRequest("conflictResolutionPolicy mode %q is not one of LastWriterWins and Custom", p.Mode)
	}
	return p, nil
}

// withConflictPolicy is res with its conflict resolution policy as the service returns
// it: normalized, a custom procedure given by name as the link of that stored procedure
// of container coll of database db.
func withConflictPolicy(res cosmos.Container, db string) cosmos.Container {
	p, err := readConflictPolicy(res.ConflictResolutionPolicy)
	if err != nil {
		return res
	}
	if p.Mode == "Custom" && p.Procedure != "" && !strings.Contains(p.Procedure, "/") {
		p.Procedure = "dbs/" + db + "/colls/" + res.ID + "/sprocs/" + p.Procedure
	}
	res.ConflictResolutionPolicy, _ = json.Marshal(p)
	return res
}

// Unique key policy limits ("Unique key constraints in Azure Cosmos DB": "a maximum of
// 16 path values ... a maximum of 10 unique key constraints"). The service's answer to
// a policy over them is not documented; the emulator answers 400 naming the limit.
const (
	maxUniqueKeys     = 10
	maxUniqueKeyPaths = 16
)

// honourable refuses, with a 400 naming it, a property of a container's definition that
// the emulator would store without honouring (see above).
func honourable(in cosmos.Container, multiWrite bool) *cosmos.Error {
	if present(in.ComputedProperties) {
		var cps []json.RawMessage
		if err := json.Unmarshal(in.ComputedProperties, &cps); err != nil || len(cps) > 0 {
			return badRequest("computedProperties are not modelled by the emulator (its queries would not see them): create the container without computedProperties, or with an empty list")
		}
	}
	if present(in.ClientEncryptionPolicy) {
		return badRequest("clientEncryptionPolicy is not modelled by the emulator: it has no client encryption keys for the encryption SDKs to read; create the container without it")
	}
	if in.TTLPropertyPath != "" {
		return badRequest("ttlPropertyPath is not modelled by the emulator: items expire by their _ts and ttl; leave ttlPropertyPath out")
	}
	p, err := readConflictPolicy(in.ConflictResolutionPolicy)
	if err != nil {
		return err
	}
	if multiWrite && (p.Mode != "LastWriterWins" || p.Path != "/_ts") {
		return badRequest("conflictResolutionPolicy %s on %s is not modelled by the emulator: on a multi-write account it resolves concurrent writes of an item by last writer wins on /_ts only; leave the policy out or use that one", p.Mode, cmp.Or(p.Path, p.Procedure, "the conflicts feed"))
	}
	keys, uerr := uniqueKeyPaths(in.UniqueKeyPolicy)
	if uerr != nil {
		return badRequest("uniqueKeyPolicy is not of the form {\"uniqueKeys\": [{\"paths\": [...]}]}: %v", uerr)
	}
	if len(keys) > maxUniqueKeys {
		return badRequest("the uniqueKeyPolicy has %d unique keys; the service's limit is %d", len(keys), maxUniqueKeys)
	}
	n := 0
	for _, k := range keys {
		if len(k) == 0 {
			return badRequest("a unique key of the uniqueKeyPolicy has no paths: give each unique key one or more paths such as \"/email\"")
		}
		for _, up := range k {
			if !strings.HasPrefix(up, "/") || len(up) < 2 {
				return badRequest("unique key path %q must start with / and name a property, such as \"/email\"", up)
			}
		}
		n += len(k)
	}
	if n > maxUniqueKeyPaths {
		return badRequest("the uniqueKeyPolicy has %d paths; the service's limit is %d in all", n, maxUniqueKeyPaths)
	}
	return nil
}

// present reports whether a raw JSON property was sent with a value.
func present(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// policyShapes is what the rules read of a container's policies.
type policyShapes struct {
	uniqueKeys       [][]string
	vectorEmbeddings []map[string]any
	vectorIndexes    []map[string]any
}

func shapesOf(res cosmos.Container) (policyShapes, *cosmos.Error) {
	var out policyShapes
	if present(res.UniqueKeyPolicy) {
		var u struct {
			UniqueKeys []struct {
				Paths []string `json:"paths"`
			} `json:"uniqueKeys"`
		}
		if err := json.Unmarshal(res.UniqueKeyPolicy, &u); err != nil {
			return out, badRequest("uniqueKeyPolicy is not of the form {\"uniqueKeys\": [{\"paths\": [...]}]}: %v", err)
		}
		for _, k := range u.UniqueKeys {
			out.uniqueKeys = append(out.uniqueKeys, k.Paths)
		}
	}
	if present(res.VectorEmbeddingPolicy) {
		var v struct {
			VectorEmbeddings []map[string]any `json:"vectorEmbeddings"`
		}
		if err := json.Unmarshal(res.VectorEmbeddingPolicy, &v); err != nil {
			return out, badRequest("vectorEmbeddingPolicy is not of the form {\"vectorEmbeddings\": [{\"path\": ...}]}: %v", err)
		}
		out.vectorEmbeddings = v.VectorEmbeddings
	}
	if present(res.IndexingPolicy) {
		var ip struct {
			VectorIndexes []map[string]any `json:"vectorIndexes"`
		}
		if err := json.Unmarshal(res.IndexingPolicy, &ip); err != nil {
			return out, badRequest("indexingPolicy is not a JSON object with an array vectorIndexes: %v", err)
		}
		out.vectorIndexes = ip.VectorIndexes
	}
	return out, nil
}

// validPolicies checks a container's definition, on create or replace, by the rules
// the service is known to apply: defaultTtl's range (ttl.go), and a vector index on a
// path the vector embedding policy names (400 "The Vector Indexing Policy's
// path::/vector1 not matching in Embedding's path.", test_fail_create_vector_indexing_policy
// and test_fail_replace_vector_indexing_policy in the Python SDK). The service checks much
// more (data types, dimensions, index types, full-text languages); the emulator does
// not, and takes those as sent.
func validPolicies(in cosmos.Container, multiWrite bool) *cosmos.Error {
	if err := validDefaultTTL(in.DefaultTTL); err != nil {
		return err
	}
	if err := honourable(in, multiWrite); err != nil {
		return err
	}
	shapes, err := shapesOf(in)
	if err != nil {
		return err
	}
	for _, ix := range shapes.vectorIndexes {
		path, _ := ix["path"].(string)
		if !slices.ContainsFunc(shapes.vectorEmbeddings, func(e map[string]any) bool { return e["path"] == path }) {
			return badRequest("The Vector Indexing Policy's path::%s not matching in Embedding's path.", path)
		}
	}
	return nil
}

// replaced is the container old after a replace with the definition in, or the
// service's refusal.
func replaced(old, in cosmos.Container, multiWrite bool) (cosmos.Container, *cosmos.Error) {
	if in.ID != old.ID {
		// The REST reference says changing the id is not supported; the service's answer
		// to a body whose id differs from the path's is not documented: 400 chosen.
		return cosmos.Container{}, badRequest("the container's id cannot be changed: the body's id %q is not %q", in.ID, old.ID)
	}
	if !slices.Equal(in.PartitionKey.Paths, old.PartitionKey.Paths) || (in.PartitionKey.Kind != "" && in.PartitionKey.Kind != old.PartitionKey.Kind) {
		return cosmos.Container{}, badRequest("Document collection partition key cannot be changed.")
	}
	if err := validPolicies(in, multiWrite); err != nil {
		return cosmos.Container{}, err
	}
	// The conflict resolution policy is fixed at creation (Microsoft Learn, above): a
	// replace that leaves it out keeps it; one that changes it is refused. The
	// service's answer to a change is not documented: 400 chosen.
	if present(in.ConflictResolutionPolicy) {
		a, _ := readConflictPolicy(old.ConflictResolutionPolicy)
		b, _ := readConflictPolicy(in.ConflictResolutionPolicy)
		if a.Mode != b.Mode || a.Path != b.Path || (a.Procedure != b.Procedure && path.Base(a.Procedure) != b.Procedure) {
			return cosmos.Container{}, badRequest("conflictResolutionPolicy cannot be changed after the container is created: it is %s, the replace sends %s", old.ConflictResolutionPolicy, in.ConflictResolutionPolicy)
		}
	}
	in.ConflictResolutionPolicy = old.ConflictResolutionPolicy
	if !present(in.GeospatialConfig) {
		in.GeospatialConfig = old.GeospatialConfig
	}
	was, err := shapesOf(old)
	if err != nil {
		return cosmos.Container{}, err
	}
	now, err := shapesOf(in)
	if err != nil {
		return cosmos.Container{}, err
	}
	if !reflect.DeepEqual(emptyAsNil(was.uniqueKeys), emptyAsNil(now.uniqueKeys)) {
		return cosmos.Container{}, cosmosErr(http.StatusForbidden, 0, "The unique index cannot be modified. To change the unique index, remove the collection and re-create a new one.")
	}
	if !keepsEvery(was.vectorEmbeddings, now.vectorEmbeddings) {
		return cosmos.Container{}, badRequest("Paths in existing embedding policy cannot be modified in Collection Replace")
	}
	if !keepsEvery(was.vectorIndexes, now.vectorIndexes) {
		return cosmos.Container{}, badRequest("Paths in existing vector indexing policy cannot be modified in Collection Replace")
	}
	return withPolicies(old, in), nil
}

func emptyAsNil(keys [][]string) [][]string {
	if len(keys) == 0 {
		return nil
	}
	return keys
}

// keepsEvery reports whether every entry of was is in now unchanged.
func keepsEvery(was, now []map[string]any) bool {
	for _, w := range was {
		if !slices.ContainsFunc(now, func(n map[string]any) bool { return reflect.DeepEqual(w, n) }) {
			return false
		}
	}
	return true
}

// replaceContainer replaces container id of database db by the rules of replaced,
// when its current _etag matches ifMatch (if given), and makes the result current with
// a new _etag and _ts.
func (s *store) replaceContainer(db, id string, in cosmos.Container, ifMatch string, multiWrite bool) (cosmos.Container, *cosmos.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dbs[db]
	if d == nil {
		return cosmos.Container{}, notFound(fmt.Sprintf("database %q does not exist", db))
	}
	c := d.colls[id]
	if c == nil {
		return cosmos.Container{}, notFound(fmt.Sprintf("container %q does not exist in database %q", id, db))
	}
	old := c.resource()
	if ifMatch != "" && !etagMatches(ifMatch, old.ETag) {
		return cosmos.Container{}, preconditionFailed("operation cannot be performed because one of the specified precondition is not met (If-Match)")
	}
	res, err := replaced(old, in, multiWrite)
	if err != nil {
		return cosmos.Container{}, err
	}
	res.ETag = nextContainerETag(c, old.ETag)
	res.TS = s.clock.Now().Unix()
	if s.disk != nil {
		if err := s.disk.putContainer(c, res, s.ridSeq); err != nil {
			return cosmos.Container{}, storageError(err)
		}
	}
	c.setResource(res)
	return res, nil
}

// nextContainerETag is the container's _etag after one more replace: the created
// one's form (database and container sequence) with a count of replaces in its second
// group, so that it survives a restart of a persistent emulator.
func nextContainerETag(c *container, etag string) string {
	var dbSeq, n, seq uint64
	if _, err := fmt.Sscanf(etag, `"%08x-%04x-0000-0000-%012x"`, &dbSeq, &n, &seq); err != nil {
		n = 0
	}
	return fmt.Sprintf(`"%08x-%04x-0000-0000-%012x"`, c.db.seq, (n+1)&0xffff, c.seq)
}

// serveContainerReplace answers PUT /dbs/{db}/colls/{coll}: 200 with the container as
// replaced, or the service's refusal (replaced).
func (s *Server) serveContainerReplace(req *request, db, coll string) {
	if !s.writeAllowed(req) {
		return
	}
	var in cosmos.Container
	if !s.decodeJSON(req, &in) {
		return
	}
	res, err := s.store.replaceContainer(db, coll, in, req.r.Header.Get(cosmos.HeaderIfMatch), s.cfg.MultiWrite)
	if err != nil {
		s.writeError(req, err, chargeMetadata)
		return
	}
	if c, cerr := s.store.container(db, coll); cerr == nil {
		s.setContentPath(req, c)
	}
	s.answerResource(req, http.StatusOK, res, nil)
}
