package emulator

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
)

// FuzzRequest drives the emulator's request handling with arbitrary partition key
// headers, bodies, authorization headers and operations. Whatever arrives, the emulator
// must answer with a sensible status and a Cosmos error body, never panic, and never
// store a document that is not a JSON object with a string id in the right partition.
func FuzzRequest(f *testing.F) {
	f.Add(uint8(0), `["a"]`, []byte(`{"id":"1","pk":"a"}`), "")
	f.Add(uint8(1), `["a"]`, []byte(`{"id":"1","pk":"b"}`), "")
	f.Add(uint8(2), `[{}]`, []byte(`{"id":"1"}`), "")
	f.Add(uint8(3), `["a"]`, []byte(`{"operations":[{"op":"incr","path":"/n","value":1}]}`), "")
	f.Add(uint8(3), `["a"]`, []byte(`[{"op":"move","from":"/a","path":"/a/b"}]`), "")
	f.Add(uint8(4), `["a"]`, []byte(`{"query":"SELECT * FROM c WHERE c.n > @n","parameters":[{"name":"@n","value":1}]}`), "")
	f.Add(uint8(4), `["a"]`, []byte(`{"query":"SELECT c.g, COUNT(1) AS n, AVG(c.n) FROM c GROUP BY c.g"}`), "")
	f.Add(uint8(4), `["a"]`, []byte(`{"query":"SELECT DISTINCT VALUE c.n FROM c ORDER BY c.n DESC OFFSET @o LIMIT 2","parameters":[{"name":"@o","value":1}]}`), "")
	f.Add(uint8(4), `["a"]`, []byte(`{"query":"SELECT c._rid, [{\"item\": c.n}] AS orderByItems, c AS payload FROM c WHERE (true) ORDER BY c.n"}`), "")
	f.Add(uint8(5), `[1.5e308]`, []byte(`{"id":"x","pk":1.5e308}`), "")
	f.Add(uint8(0), `["\u00e9"]`, []byte("{\"id\":\"\xff\",\"pk\":\"é\"}"), "")
	f.Add(uint8(6), `["a"]`, []byte(`{}`), "type=master&ver=1.0&sig=AAAA")
	f.Add(uint8(7), `x`, []byte(`{"id":"1","pk":"a"}`), "%%%")

	s, err := Start(Config{Databases: []DatabaseConfig{{ID: "db", Containers: []ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}, Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	key, _ := cosmos.NewMasterKey(s.Key())
	h := s.global.http.Handler

	f.Fuzz(func(t *testing.T, op uint8, pk string, body []byte, auth string) {
		methods := []struct{ method, path string }{
			{"POST", itemsPath()},  // create
			{"PUT", itemPath("1")}, // replace
			{"POST", itemsPath()},  // upsert
			{"PATCH", itemPath("1")},
			{"POST", itemsPath()}, // query
			{"GET", itemPath("x")},
			{"DELETE", itemPath("1")},
			{"POST", "/dbs/db/colls"},
		}
		m := methods[int(op)%len(methods)]
		req := httptest.NewRequest(m.method, m.path, bytes.NewReader(body))
		date := cosmos.FormatDate(time.Now())
		req.Header.Set(cosmos.HeaderDate, date)
		req.Header.Set(cosmos.HeaderPartitionKey, pk)
		switch op % 8 {
		case 2:
			req.Header.Set(cosmos.HeaderIsUpsert, "true")
		case 4:
			req.Header.Set(cosmos.HeaderIsQuery, "true")
		}
		if auth == "" {
			rt, rl := cosmos.ResourceFromPath(m.path)
			auth, _ = key.Authorize(m.method, rt, rl, date)
		}
		req.Header.Set(cosmos.HeaderAuthorization, auth)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		switch rec.Code {
		case 200, 201, 204, 400, 401, 404, 405, 409, 412, 413:
		default:
			t.Fatalf("%s %s → unexpected status %d: %s", m.method, m.path, rec.Code, rec.Body.String())
		}
		if rec.Code >= 400 {
			var eb cosmos.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Code == "" {
				t.Fatalf("status %d without a Cosmos error body: %q", rec.Code, rec.Body.String())
			}
		}
		checkStoreInvariants(t, s)
	})
}

func checkStoreInvariants(t *testing.T, s *Server) {
	t.Helper()
	c, cerr := s.store.container("db", "items")
	if cerr != nil {
		t.Fatal(cerr)
	}
	for _, p := range c.partitions() {
		p.mu.RLock()
		for key, e := range p.items {
			v := e.latest()
			if v == nil || v.body == nil {
				continue
			}
			doc, err := jsondoc.ParseObject(v.body)
			if err != nil {
				t.Fatalf("stored document is not a JSON object: %v", err)
			}
			id := doc.Get("id")
			if id == nil || id.Kind != jsondoc.KindString || id.Str != e.id || key != itemKey(e.pk, e.id) {
				t.Fatalf("stored document %q has a bad id", v.body)
			}
			docPK, perr := documentPartitionKey(doc, c.meta.PartitionKey)
			if perr != nil || !docPK.Equal(e.pk) || c.partitionFor(e.pk) != p {
				t.Fatalf("stored document %q sits under the wrong partition key %s", v.body, e.pk)
			}
		}
		p.mu.RUnlock()
	}
	_ = http.StatusOK
}
