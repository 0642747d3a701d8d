package emulator

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

// readContainer reads coll of db "db" as raw JSON properties.
func readContainer(t *testing.T, c *testClient, ep, coll string) map[string]json.RawMessage {
	t.Helper()
	resp := c.mustDo(ep, "GET", "/dbs/db/colls/"+coll, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("read of %s: %d %s", coll, resp.StatusCode, resp.Body)
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(resp.Body, &props); err != nil {
		t.Fatal(err)
	}
	return props
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}

const (
	vectorEmbeddings = `{"vectorEmbeddings":[{"path":"/embedding","dataType":"float32","distanceFunction":"cosine","dimensions":3}]}`
	vectorIndexing   = `{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/embedding/*"}],"vectorIndexes":[{"path":"/embedding","type":"flat"}]}`
	fullText         = `{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/title","language":"en-US"}]}`
	fullTextIndexing = `{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[],"fullTextIndexes":[{"path":"/title"}]}`
	uniqueKeys       = `{"uniqueKeys":[{"paths":["/email"]}]}`
	noneIndexing     = `{"indexingMode":"none","automatic":false,"includedPaths":[],"excludedPaths":[]}`
)

// TestContainerReplaceFollowsTheServicesRules: PUT on a container replaces its
// definition, returned on later reads, where the service allows it, and answers as the
// service does where it does not (README, emulator fidelity: the sources of each rule).
func TestContainerReplaceFollowsTheServicesRules(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	tests := []struct {
		name string
		// create is the container's definition at creation; replace the body of the PUT.
		create, replace string
		status          int
		message         string
		// want lists properties the container has afterwards, as JSON (absent: "").
		want map[string]string
	}{
		{
			name:    "a new indexing policy is taken and read back as sent",
			create:  `{"partitionKey":{"paths":["/pk"],"kind":"Hash"}}`,
			replace: `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"indexingPolicy":` + noneIndexing + `}`,
			status:  http.StatusOK,
			want:    map[string]string{"indexingPolicy": noneIndexing},
		},
		{
			name:    "a replace without an indexing policy gets the default one",
			create:  `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"indexingPolicy":` + noneIndexing + `}`,
			replace: `{"partitionKey":{"paths":["/pk"],"kind":"Hash"}}`,
			status:  http.StatusOK,
			want:    map[string]string{"indexingPolicy": string(defaultIndexingPolicy)},
		},
		{
			name:    "defaultTtl is set, and dropped by a replace without it",
			create:  `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"defaultTtl":10}`,
			replace: `{"partitionKey":{"paths":["/pk"],"kind":"Hash"}}`,
			status:  http.StatusOK,
			want:    map[string]string{"defaultTtl": ""},
		},
		{
			name:    "a bad defaultTtl is refused as on create",
			create:  `{"partitionKey":{"paths":["/pk"],"kind":"Hash"}}`,
			replace: `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"defaultTtl":0}`,
			status:  http.StatusBadRequest,
		},
		{
			name:    "the partition key cannot be changed",
			create:  `{"partitionKey":{"paths":["/pk"],"kind":"Hash"}}`,
			replace: `{"partitionKey":{"paths":["/other"],"kind":"Hash"}}`,
			status:  http.StatusBadRequest, message: "Document collection partition key cannot be changed.",
		},
		{
			name:    "nor left out",
			create:  `{"partitionKey":{"paths":["/pk"],"kind":"Hash"}}`,
			replace: `{}`,
			status:  http.StatusBadRequest, message: "Document collection partition key cannot be changed.",
		},
		{
			name:    "the unique keys cannot be changed",
			create:  `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"uniqueKeyPolicy":` + uniqueKeys + `}`,
			replace: `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"uniqueKeyPolicy":{"uniqueKeys":[{"paths":["/name"]}]}}`,
			status:  http.StatusForbidden, message: "The unique index cannot be modified.",
		},
		{
			name:    "leaving the unique keys out is changing them",
			create:  `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"uniqueKeyPolicy":` + uniqueKeys + `}`,
			replace: `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"indexingPolicy":` + noneIndexing + `}`,
			status:  http.StatusForbidden, message: "The unique index cannot be modified.",
		},
		{
			name:    "the same unique keys again are no change",
			create:  `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"uniqueKeyPolicy":` + uniqueKeys + `}`,
			replace: `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"uniqueKeyPolicy":` + uniqueKeys + `,"defaultTtl":-1}`,
			status:  http.StatusOK,
			want:    map[string]string{"uniqueKeyPolicy": uniqueKeys, "defaultTtl": "-1"},
		},
		{
			name:    "the vector policies are kept when sent again",
			create:  `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"vectorEmbeddingPolicy":` + vectorEmbeddings + `,"indexingPolicy":` + vectorIndexing + `}`,
			replace: `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"vectorEmbeddingPolicy":` + vectorEmbeddings + `,"indexingPolicy":` + vectorIndexing + `,"defaultTtl":5}`,
			status:  http.StatusOK,
			want:    map[string]string{"vectorEmbeddingPolicy": vectorEmbeddings, "indexingPolicy": vectorIndexing, "defaultTtl": "5"},
		},
		{
			name:    "a vector index needs its path in the embedding policy",
			create:  `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"vectorEmbeddingPolicy":` + vectorEmbeddings + `,"indexingPolicy":` + vectorIndexing + `}`,
			replace: `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"indexingPolicy":` + vectorIndexing + `}`,
			status:  http.StatusBadRequest, message: "The Vector Indexing Policy's path::/embedding not matching in Embedding's path.",
		},
		{
			name:    "an existing vector embedding cannot be changed",
			create:  `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"vectorEmbeddingPolicy":` + vectorEmbeddings + `,"indexingPolicy":` + vectorIndexing + `}`,
			replace: `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"vectorEmbeddingPolicy":` + strings.Replace(vectorEmbeddings, `"dimensions":3`, `"dimensions":4`, 1) + `,"indexingPolicy":` + vectorIndexing + `}`,
			status:  http.StatusBadRequest, message: "Paths in existing embedding policy cannot be modified in Collection Replace",
		},
		{
			name:    "an existing vector index cannot be changed",
			create:  `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"vectorEmbeddingPolicy":` + vectorEmbeddings + `,"indexingPolicy":` + vectorIndexing + `}`,
			replace: `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"vectorEmbeddingPolicy":` + vectorEmbeddings + `,"indexingPolicy":` + strings.Replace(vectorIndexing, `"flat"`, `"quantizedFlat"`, 1) + `}`,
			status:  http.StatusBadRequest, message: "Paths in existing vector indexing policy cannot be modified in Collection Replace",
		},
		{
			name:    "the full-text policy and indexes can be changed",
			create:  `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"fullTextPolicy":` + fullText + `,"indexingPolicy":` + fullTextIndexing + `}`,
			replace: `{"partitionKey":{"paths":["/pk"],"kind":"Hash"},"fullTextPolicy":` + strings.ReplaceAll(fullText, "/title", "/body") + `,"indexingPolicy":` + strings.ReplaceAll(fullTextIndexing, "/title", "/body") + `}`,
			status:  http.StatusOK,
			want:    map[string]string{"fullTextPolicy": strings.ReplaceAll(fullText, "/title", "/body"), "indexingPolicy": strings.ReplaceAll(fullTextIndexing, "/title", "/body")},
		},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := "c" + string(rune('a'+i))
			create := `{"id":"` + id + `",` + strings.TrimPrefix(tc.create, "{")
			if r := c.mustDo(ep, "POST", "/dbs/db/colls", nil, create); r.StatusCode != http.StatusCreated {
				t.Fatalf("create: %d %s", r.StatusCode, r.Body)
			}
			before := readContainer(t, c, ep, id)
			replace := `{"id":"` + id + `"}`
			if tc.replace != `{}` {
				replace = `{"id":"` + id + `",` + strings.TrimPrefix(tc.replace, "{")
			}
			r := c.mustDo(ep, "PUT", "/dbs/db/colls/"+id, nil, replace)
			if r.StatusCode != tc.status {
				t.Fatalf("replace: %d %s, want %d", r.StatusCode, r.Body, tc.status)
			}
			if tc.message != "" && !strings.Contains(string(r.Body), tc.message) {
				t.Errorf("replace answered %s, want the message %q", r.Body, tc.message)
			}
			after := readContainer(t, c, ep, id)
			if tc.status != http.StatusOK {
				if string(after["_etag"]) != string(before["_etag"]) {
					t.Errorf("a refused replace changed the container: _etag %s → %s", before["_etag"], after["_etag"])
				}
				return
			}
			if string(after["_etag"]) == string(before["_etag"]) {
				t.Errorf("the replace kept the _etag %s", after["_etag"])
			}
			if r.Header.Get(cosmos.HeaderETag) != mustString(t, after["_etag"]) {
				t.Errorf("the replace's etag header %q is not the container's _etag %s", r.Header.Get(cosmos.HeaderETag), after["_etag"])
			}
			for prop, want := range tc.want {
				got, ok := after[prop]
				switch {
				case want == "" && ok:
					t.Errorf("%s is %s after the replace, want none", prop, got)
				case want != "" && !ok:
					t.Errorf("%s is missing after the replace, want %s", prop, want)
				case want != "" && !sameJSON(t, string(got), want):
					t.Errorf("%s is %s after the replace, want %s", prop, got, want)
				}
			}
		})
	}
}

func mustString(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestContainerPoliciesAreReadBackAsCreated: the vector embedding, full-text and
// indexing policies of a create come back on reads and in the containers feed as sent
// (azcosmos TestContainerVectorSearch and TestContainerFullTextSearch read them back).
func TestContainerPoliciesAreReadBackAsCreated(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	body := `{"id":"v","partitionKey":{"paths":["/pk"],"kind":"Hash"},"vectorEmbeddingPolicy":` + vectorEmbeddings +
		`,"fullTextPolicy":` + fullText + `,"uniqueKeyPolicy":` + uniqueKeys + `,"indexingPolicy":` + vectorIndexing + `}`
	if r := c.mustDo(ep, "POST", "/dbs/db/colls", nil, body); r.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %s", r.StatusCode, r.Body)
	}
	props := readContainer(t, c, ep, "v")
	for prop, want := range map[string]string{"vectorEmbeddingPolicy": vectorEmbeddings, "fullTextPolicy": fullText, "uniqueKeyPolicy": uniqueKeys, "indexingPolicy": vectorIndexing} {
		if !sameJSON(t, string(props[prop]), want) {
			t.Errorf("%s read back as %s, want %s", prop, props[prop], want)
		}
	}
	r := c.mustDo(ep, "POST", "/dbs/db/colls", nil, `{"id":"w","partitionKey":{"paths":["/pk"],"kind":"Hash"},"indexingPolicy":`+vectorIndexing+`}`)
	if r.StatusCode != http.StatusBadRequest || !strings.Contains(string(r.Body), "not matching in Embedding's path") {
		t.Errorf("a vector index without an embedding: %d %s, want 400 …not matching in Embedding's path", r.StatusCode, r.Body)
	}
}

// TestContainerReplaceIfMatch: a replace with a stale If-Match is a 412, with the
// current one it goes through.
func TestContainerReplaceIfMatch(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	etag := mustString(t, readContainer(t, c, ep, "items")["_etag"])
	body := `{"id":"items","partitionKey":{"paths":["/pk"],"kind":"Hash"},"defaultTtl":-1}`
	if r := c.mustDo(ep, "PUT", "/dbs/db/colls/items", map[string]string{cosmos.HeaderIfMatch: `"stale"`}, body); r.StatusCode != http.StatusPreconditionFailed {
		t.Errorf("stale If-Match: %d %s, want 412", r.StatusCode, r.Body)
	}
	if r := c.mustDo(ep, "PUT", "/dbs/db/colls/items", map[string]string{cosmos.HeaderIfMatch: etag}, body); r.StatusCode != http.StatusOK {
		t.Errorf("current If-Match: %d %s, want 200", r.StatusCode, r.Body)
	}
	if r := c.mustDo(ep, "PUT", "/dbs/db/colls/nope", nil, strings.Replace(body, "items", "nope", 1)); r.StatusCode != http.StatusNotFound {
		t.Errorf("replace of a missing container: %d, want 404", r.StatusCode)
	}
}

// TestReplacingTheDefaultTTLChangesWhichItemsLive: items follow the container's
// defaultTtl as last replaced, from their last write.
func TestReplacingTheDefaultTTLChangesWhichItemsLive(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s := startWithClock(t, clk, nil)
	c := newTestClientAt(t, s.Key(), clk)
	ep := s.Endpoint()
	pk := map[string]string{cosmos.HeaderPartitionKey: `["a"]`}
	c.mustDo(ep, "POST", "/dbs/db/colls/items/docs", pk, `{"id":"1","pk":"a"}`)
	replace := func(ttl string) {
		t.Helper()
		body := `{"id":"items","partitionKey":{"paths":["/pk"],"kind":"Hash"}` + ttl + `}`
		if r := c.mustDo(ep, "PUT", "/dbs/db/colls/items", nil, body); r.StatusCode != http.StatusOK {
			t.Fatalf("replace: %d %s", r.StatusCode, r.Body)
		}
	}
	read := func() int {
		t.Helper()
		return c.mustDo(ep, "GET", "/dbs/db/colls/items/docs/1", pk).StatusCode
	}
	replace(`,"defaultTtl":10`)
	clk.Advance(11 * time.Second)
	if got := read(); got != http.StatusNotFound {
		t.Fatalf("11 s after its write under defaultTtl 10 the item reads %d, want 404", got)
	}
	replace(``)
	if got := read(); got != http.StatusOK {
		t.Fatalf("with time to live turned off again the item reads %d, want 200 (it was never deleted)", got)
	}
	if ids := ttlIDs(t, c, ep, "items"); len(ids) != 1 {
		t.Errorf("a query finds %v, want [1]", ids)
	}
	replace(`,"defaultTtl":60`)
	if got := read(); got != http.StatusOK {
		t.Errorf("under defaultTtl 60, 11 s after its write, the item reads %d, want 200", got)
	}
}

// TestAReplacedContainerSurvivesARestart: the replace is on disk before it is answered.
func TestAReplacedContainerSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	persist := func(cfg *Config) { cfg.DataDir = dir }
	s := startTest(t, persist)
	c := newTestClient(t, s.Key())
	body := `{"id":"items","partitionKey":{"paths":["/pk"],"kind":"Hash"},"defaultTtl":30,"indexingPolicy":` + noneIndexing + `}`
	if r := c.mustDo(s.Endpoint(), "PUT", "/dbs/db/colls/items", nil, body); r.StatusCode != http.StatusOK {
		t.Fatalf("replace: %d %s", r.StatusCode, r.Body)
	}
	before := readContainer(t, c, s.Endpoint(), "items")
	s.Close()
	s = startTest(t, persist)
	c = newTestClient(t, s.Key())
	after := readContainer(t, c, s.Endpoint(), "items")
	for _, prop := range []string{"defaultTtl", "indexingPolicy", "_etag", "_ts"} {
		if string(after[prop]) != string(before[prop]) {
			t.Errorf("after a restart %s is %s, want %s", prop, after[prop], before[prop])
		}
	}
	etag := mustString(t, after["_etag"])
	if r := c.mustDo(s.Endpoint(), "PUT", "/dbs/db/colls/items", map[string]string{cosmos.HeaderIfMatch: etag}, body); r.StatusCode != http.StatusOK {
		t.Fatalf("second replace: %d %s", r.StatusCode, r.Body)
	}
	if next := mustString(t, readContainer(t, c, s.Endpoint(), "items")["_etag"]); next == etag {
		t.Errorf("a replace after the restart kept the _etag %s", etag)
	}
}
