package emulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"

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
	res.IndexingPolicy = defaultIndexingPolicy
	if present(props.IndexingPolicy) {
		res.IndexingPolicy = props.IndexingPolicy
	}
	res.DefaultTTL = props.DefaultTTL
	res.UniqueKeyPolicy = nil
	if present(props.UniqueKeyPolicy) {
		res.UniqueKeyPolicy = props.UniqueKeyPolicy
	}
	res.VectorEmbeddingPolicy = nil
	if present(props.VectorEmbeddingPolicy) {
		res.VectorEmbeddingPolicy = props.VectorEmbeddingPolicy
	}
	res.FullTextPolicy = nil
	if present(props.FullTextPolicy) {
		res.FullTextPolicy = props.FullTextPolicy
	}
	return res
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
func validPolicies(in cosmos.Container) *cosmos.Error {
	if err := validDefaultTTL(in.DefaultTTL); err != nil {
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
func replaced(old, in cosmos.Container) (cosmos.Container, *cosmos.Error) {
	if in.ID != old.ID {
		// The REST reference says changing the id is not supported; the service's answer
		// to a body whose id differs from the path's is not documented: 400 chosen.
		return cosmos.Container{}, badRequest("the container's id cannot be changed: the body's id %q is not %q", in.ID, old.ID)
	}
	if !slices.Equal(in.PartitionKey.Paths, old.PartitionKey.Paths) || (in.PartitionKey.Kind != "" && in.PartitionKey.Kind != old.PartitionKey.Kind) {
		return cosmos.Container{}, badRequest("Document collection partition key cannot be changed.")
	}
	if err := validPolicies(in); err != nil {
		return cosmos.Container{}, err
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
func (s *store) replaceContainer(db, id string, in cosmos.Container, ifMatch string) (cosmos.Container, *cosmos.Error) {
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
	res, err := replaced(old, in)
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
	res, err := s.store.replaceContainer(db, coll, in, req.r.Header.Get(cosmos.HeaderIfMatch))
	if err != nil {
		s.writeError(req, err, chargeMetadata)
		return
	}
	if c, cerr := s.store.container(db, coll); cerr == nil {
		s.setContentPath(req, c)
	}
	s.answerResource(req, http.StatusOK, res, nil)
}
