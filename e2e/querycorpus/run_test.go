// Package querycorpus_test runs a corpus of Cosmos SQL queries — every construct of
// issue 24, within a partition key and across partitions, with parameters — through
// `cosmosctl query` against the in-process emulator (a container over four partition
// key ranges holding generated mixed-shape documents), and through the official
// JavaScript SDK (querycorpus.test.js), and checks each answer against an oracle: the
// documented semantics evaluated in plain Go (oracle_test.go), which imports neither
// the emulator's engine nor cosmosctl's query pipeline.
package querycorpus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

const ranges = 4

// learnSamples are the examples of Microsoft Learn's function pages, each a query
// without FROM and its published result (testdata/learn_samples.json, from
// Azure-Samples/cosmos-db-nosql-query-samples, which the pages include).
func learnSamples(t testing.TB) []entry {
	b, err := os.ReadFile("testdata/learn_samples.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Samples []struct {
			Name   string `json:"name"`
			Query  string `json:"query"`
			Result []any  `json:"result"`
		} `json:"samples"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var out, overOne []entry
	for _, s := range f.Samples {
		res := s.Result
		refused := learnRefused[s.Name]
		out = append(out, entry{sql: s.Query, want: func([]doc) expect { return values(res...) }, refused: refused})
		// The same over one document, FROM c: each function's answer apart from
		// SELECT without FROM.
		overOne = append(overOne, entry{sql: s.Query + "\nFROM c WHERE c.id = @id", params: []param{p("@id", "d000")}, pk: pkOf(0),
			want: func(ds []doc) expect {
				if len(partition(ds, pkOf(0))) == 0 {
					return values()
				}
				return values(res...)
			}, refused: refused})
	}
	return append(out, overOne...)
}

// learnRefused are the Learn samples the emulator refuses, by name, with the text of
// its 400: ToString's example passes the literals NaN and Infinity, which the
// emulator's JSON numbers cannot hold (README, "string positions" and "queries").
var learnRefused = map[string]string{
	"tostring": "non-finite number literal NaN",
}

// allEntries is the corpus and the Learn samples.
func allEntries(t testing.TB) []entry { return append(corpus(), learnSamples(t)...) }

// corpusAccount starts the test account (testkit.Account, the environment pointed at
// it) with a container over four ranges with the corpus's composite indexes, and
// writes the documents.
func corpusAccount(t *testing.T, docs []doc) *emulator.Server {
	t.Helper()
	srv := testkit.Account(t, func(c *emulator.Config) { c.Ranges = ranges })
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	defer tr.HTTP.CloseIdleConnections()
	var comps []string
	for _, ci := range compositeIndexes {
		var parts []string
		for _, p := range ci {
			parts = append(parts, fmt.Sprintf(`{"path":%q,"order":%q}`, p[0], p[1]))
		}
		comps = append(comps, "["+strings.Join(parts, ",")+"]")
	}
	policy := `{"id":"items","partitionKey":{"paths":["/pk"],"kind":"Hash"},"indexingPolicy":{"indexingMode":"consistent","automatic":true,` +
		`"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}],"compositeIndexes":[` + strings.Join(comps, ",") + `]}}`
	replace := &cosmos.Request{Method: http.MethodPut, Path: cosmos.EscapePath("dbs", "app", "colls", "items"), Header: http.Header{}, Body: []byte(policy)}
	if resp, err := tr.Do(context.Background(), srv.Endpoint(), replace); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("replacing the container's indexing policy: %v %+v", err, resp)
	}
	work := make(chan doc)
	errs := make(chan error, len(docs))
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range work {
				body, _ := json.Marshal(d)
				req := &cosmos.Request{Method: http.MethodPost, Path: cosmos.ItemsPath("app", "items"), Header: http.Header{}, Body: body}
				req.Header.Set(cosmos.HeaderPartitionKey, fmt.Sprintf(`[%q]`, d["pk"]))
				if resp, err := tr.Do(context.Background(), srv.Endpoint(), req); err != nil || resp.StatusCode != http.StatusCreated {
					errs <- fmt.Errorf("writing %s: %v %+v", d["id"], err, resp)
				}
			}
		}()
	}
	for _, d := range docs {
		work <- d
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return srv
}

// systemProperties are what the service adds to a stored document.
var systemProperties = []string{"_rid", "_self", "_etag", "_ts", "_attachments"}

// decodeItems reads a result's items as oracle values, without system properties
// (in a document anywhere in the item: SELECT * with JOIN nests it).
func decodeItems(t testing.TB, raw []json.RawMessage) []any {
	out := make([]any, len(raw))
	for i, r := range raw {
		var v any
		if err := json.Unmarshal(r, &v); err != nil {
			t.Fatalf("an item that is not JSON: %s", r)
		}
		out[i] = stripSystem(v)
	}
	return out
}

func stripSystem(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["_rid"]; ok {
			for _, k := range systemProperties {
				delete(x, k)
			}
		}
		for k, e := range x {
			x[k] = stripSystem(e)
		}
	case []any:
		for i, e := range x {
			x[i] = stripSystem(e)
		}
	}
	return v
}

// runQuery runs `cosmosctl query SQL --all -o ndjson` in-process (with --pk when pk is
// not empty) and returns its items, or the command's failure.
func runQuery(t *testing.T, e entry, pk string) ([]any, error) {
	args := []string{"query", e.sql, "--all", "-o", "ndjson"}
	for _, p := range e.params {
		v, _ := json.Marshal(p.Value)
		args = append(args, "--param", p.Name+"="+string(v))
	}
	if pk != "" {
		args = append(args, "--pk", pk)
	}
	r := clitest.Run(t, "", args...)
	if r.Code != 0 {
		return nil, fmt.Errorf("exit %d: %s", r.Code, strings.TrimSpace(r.ErrOut))
	}
	if strings.Contains(r.ErrOut, "continuation") {
		return nil, fmt.Errorf("query --all printed a continuation: %s", r.ErrOut)
	}
	var raw []json.RawMessage
	for _, line := range strings.Split(r.Out, "\n") {
		if line != "" {
			raw = append(raw, json.RawMessage(line))
		}
	}
	return decodeItems(t, raw), nil
}

// partition is the documents of one partition key.
func partition(docs []doc, pk string) []doc {
	var out []doc
	for _, d := range docs {
		if d["pk"] == pk {
			out = append(out, d)
		}
	}
	return out
}

// entryPK is the partition key of entry i's single-partition run.
func entryPK(e entry, i int) string {
	if e.pk != "" {
		return e.pk
	}
	return pkOf(i * 7)
}

func shortName(i int, sql string) string {
	s := strings.Join(strings.Fields(sql), " ")
	if len(s) > 90 {
		s = s[:90]
	}
	return fmt.Sprintf("%03d %s", i, s)
}

// TestQueryCorpus runs every entry through `cosmosctl query` across the four ranges and
// within a partition key, and compares each answer with the oracle's: items in the
// oracle's order where the query has ORDER BY (ties in any order), otherwise the same
// multiset; TOP and OFFSET without ORDER BY, some such number of the rows.
func TestQueryCorpus(t *testing.T) {
	docs := genDocs()
	entries := allEntries(t)
	if len(entries) < 150 {
		t.Fatalf("the corpus has %d queries, fewer than 150", len(entries))
	}
	corpusAccount(t, docs)
	for i, e := range entries {
		t.Run(shortName(i, e.sql), func(t *testing.T) {
			if e.refused != "" {
				for _, pk := range []string{"", entryPK(e, i)} {
					if got, err := runQuery(t, e, pk); err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), e.refused) {
						t.Errorf("pk %q: %v (%d items), want a 400 naming %q", pk, err, len(got), e.refused)
					}
				}
				return
			}
			got, err := runQuery(t, e, "")
			switch {
			case e.crossRefused != "":
				if err == nil || !strings.Contains(err.Error(), "400") {
					t.Errorf("across partitions: %v (%d items), want a 400: %s", err, len(got), e.crossRefused)
				}
			case err != nil:
				t.Errorf("across partitions: %v", err)
			default:
				if err := check(e.want(docs), got); err != nil {
					t.Errorf("across partitions: %v", err)
				}
			}
			if e.noPK {
				return
			}
			pk := entryPK(e, i)
			got, err = runQuery(t, e, pk)
			if err != nil {
				t.Errorf("with --pk %s: %v", pk, err)
			} else if err := check(e.want(partition(docs, pk)), got); err != nil {
				t.Errorf("with --pk %s: %v", pk, err)
			}
		})
	}
}
