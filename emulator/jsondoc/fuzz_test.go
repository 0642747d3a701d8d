package jsondoc

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

var patchBodySeeds = []string{
	`[{"op":"add","path":"/a","value":1}]`,
	`[{"op":"set","path":"/arr/0","value":null},{"op":"remove","path":"/b"}]`,
	`{"condition":"from c where c.a = 1","operations":[{"op":"incr","path":"/n","value":-2.5}]}`,
	`{"operations":[{"op":"move","from":"/a","path":"/b/~1c"}]}`,
	`{"operations":[{"op":"replace","path":"/arr/-","value":{"x":[1,2]}}]}`,
	`[{"op":"remove","path":"/arr/1"},{"op":"add","path":"/arr/-","value":"z"},{"op":"incr","path":"/arr/0","value":1}]`,
	`[{"op":"move","from":"/arr","path":"/arr/0"}]`,
	`[{"op":"add","path":"/id","value":"x"}]`,
	`[]`,
	`{"operations":[]}`,
	`[{"op":"nope","path":"/a"}]`,
	`[{"op":"add","path":"a"}]`,
	`{"condition":5,"operations":[{"op":"remove","path":"/a"}]}`,
	`"x"`,
	`[{"op":"remove","path":"/a"},{"op":"remove","path":"/a"},{"op":"remove","path":"/a"},{"op":"remove","path":"/a"},{"op":"remove","path":"/a"},{"op":"remove","path":"/a"},{"op":"remove","path":"/a"},{"op":"remove","path":"/a"},{"op":"remove","path":"/a"},{"op":"remove","path":"/a"},{"op":"remove","path":"/a"}]`,
}

var validOps = []string{"add", "set", "replace", "remove", "incr", "move"}

func FuzzParsePatchBody(f *testing.F) {
	for _, s := range patchBodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := ParsePatchBody(body)
		if err != nil {
			if !errors.As(err, new(*PatchError)) {
				t.Fatalf("error %v is not a *PatchError", err)
			}
			return
		}
		if n := len(req.Operations); n < 1 || n > MaxPatchOperations {
			t.Fatalf("parsed %d operations", n)
		}
		for _, op := range req.Operations {
			if !slices.Contains(validOps, op.Op) {
				t.Fatalf("parsed invalid op %q", op.Op)
			}
			if _, err := ParsePointer(op.Path); err != nil {
				t.Fatalf("parsed invalid path %q", op.Path)
			}
			if op.Value != nil {
				if _, err := Parse(op.Value); err != nil {
					t.Fatalf("parsed invalid value %q", op.Value)
				}
			}
		}
	})
}

func FuzzApplyPatch(f *testing.F) {
	docs := []string{
		`{"id":"1","a":1,"b":{"c":[1,2,3]},"arr":[0,{"x":"y"}],"n":9223372036854775807}`,
		`{}`,
		`[1,2]`,
	}
	for i, s := range patchBodySeeds {
		f.Add([]byte(docs[i%len(docs)]), []byte(s))
	}
	protected := func(path []string) bool { return len(path) == 1 && (path[0] == "id" || path[0] == "_ts") }
	f.Fuzz(func(t *testing.T, docJSON, body []byte) {
		doc, err := Parse(docJSON)
		if err != nil {
			return
		}
		req, err := ParsePatchBody(body)
		if err != nil {
			return
		}
		before := string(doc.AppendJSON(nil))
		err = ApplyPatch(doc, req.Operations, protected)
		after := doc.AppendJSON(nil)
		if err != nil {
			if !errors.As(err, new(*PatchError)) {
				t.Fatalf("error %v is not a *PatchError", err)
			}
			if string(after) != before {
				t.Fatalf("failed patch (%v) changed %s to %s", err, before, after)
			}
			return
		}
		again, err := Parse(after)
		if err != nil {
			t.Fatalf("patched document %s does not parse: %v", after, err)
		}
		if !Equal(again, doc) {
			t.Fatalf("patched document does not round-trip: %s", after)
		}
		orig, _ := Parse([]byte(before))
		if (orig.Get("id") == nil) != (doc.Get("id") == nil) || !Equal(orig.Get("id"), doc.Get("id")) {
			t.Fatalf("protected id changed from %s to %s", before, after)
		}
	})
}

func FuzzParseQuery(f *testing.F) {
	seeds := []string{
		"SELECT * FROM c",
		"select top 10 * from root where root.a = 1",
		`SELECT * FROM c WHERE c.a.b[0] >= -1.5e3 AND (c["x y"] != 'q\'s' OR NOT IS_DEFINED(c.z))`,
		"SELECT * FROM c WHERE STARTSWITH(c.n, @p, true) AND ARRAY_CONTAINS(c.t, 'x', false) AND IS_NULL(c.m)",
		"SELECT * FROM c WHERE CONTAINS(c.s, \"\\u00e9\\n\") AND c.b = true AND c.z = null AND c.a <> 007",
		"SELECT * FROM c WHERE (c.a = 1) = false",
		"SELECT * FROM c WHERE NOT NOT c.a",
		"SELECT * FROM c ORDER BY c.a",
		"SELECT c.id FROM c",
		"SELECT * FROM c WHERE c.a IN (1,2)",
		"SELECT * FROM c WHERE (((c.a",
		// the grammar of issue 14: projections, VALUE, DISTINCT, ORDER BY, OFFSET,
		// aggregates, GROUP BY, operators and functions
		"SELECT c.id, c.n * 2 + 1 AS x, UPPER(c.s), c.t[0], c[\"odd key\"] FROM root c WHERE c.n BETWEEN 1 AND 10 ORDER BY c.n DESC, c.id",
		"SELECT DISTINCT VALUE {\"a\": [c.a, -c.b, c.s || 'x'], \"b\": c.a ?? c.b} FROM c WHERE c.a NOT IN (1, 'two', null) OFFSET 1 LIMIT 2",
		"SELECT TOP @n VALUE c FROM c WHERE (c.a > 1 ? c.b : c.c) ORDER BY c._ts",
		"SELECT c.g, COUNT(1) AS n, SUM(c.n), MIN(c.s) AS lo, MAX(c.s), AVG(c.f) FROM c GROUP BY c.g",
		"SELECT VALUE [{\"item\": COUNT(1)}] FROM c WHERE SUBSTRING(c.s, 0, 2) = 'ab' AND LENGTH(c.s) % 2 = 0",
		"SELECT c._rid, [{\"item\": c.n}] AS orderByItems, c AS payload FROM c WHERE ((c.n >= 2) AND (true)) ORDER BY c.n",
		"SELECT VALUE ARRAY_SLICE(c.tags, -1)[0] FROM c WHERE IS_STRING(TOSTRING(c.n)) AND CONCAT(c.s, '-', c.id) != ''",
		"SELECT * FROM c GROUP BY c.a",
		"SELECT VALUE COUNT(SUM(c.a)) FROM c",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	docs := []string{filterDoc, `{"id":"2","n":"10","s":"ab","tags":[],"g":null}`, `{"id":"3","g":"x","f":1.5,"_ts":7}`}
	doc, err := Parse([]byte(filterDoc))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		q, err := ParseQuery(sql)
		if err != nil {
			return
		}
		rendered := q.String()
		q2, err := ParseQuery(rendered)
		if err != nil {
			t.Fatalf("rendered query %q (from %q) does not parse: %v", rendered, sql, err)
		}
		if got := q2.String(); got != rendered {
			t.Fatalf("rendering is not stable:\n%s\n%s", rendered, got)
		}
		fuzzRun(t, q, q2, sql, docs)
		if q.Where == nil {
			return
		}
		cond := "FROM " + q.Alias + " WHERE " + q.Where.String()
		if _, err := ParseCondition(cond); err != nil {
			t.Fatalf("condition %q does not parse: %v", cond, err)
		}
		params := map[string]*Value{}
		if len(sql)%2 == 0 { // otherwise leave them undefined to exercise the error
			for _, p := range q.Where.params {
				params[p] = String(strings.TrimPrefix(p, "@"))
			}
		}
		r1, err1 := q.Where.Match(doc, params)
		r2, err2 := q2.Where.Match(doc, params)
		if r1 != r2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("rendered query matches differently: %v,%v vs %v,%v", r1, err1, r2, err2)
		}
	})
}

// fuzzRun binds a parsed query and its canonical rendering to the same
// parameters and checks that both run without panicking, give the same rows,
// and that a plan (where one can be made) is a query the parser accepts.
func fuzzRun(t *testing.T, q, q2 *Query, sql string, docs []string) {
	params := map[string]*Value{}
	for _, name := range q.params {
		params[name] = Number("2")
	}
	p1, err1 := q.Bind(params)
	p2, err2 := q2.Bind(params)
	if (err1 == nil) != (err2 == nil) {
		t.Fatalf("binding %q: %v, its rendering: %v", sql, err1, err2)
	}
	if err1 != nil {
		return
	}
	source := func(yield func(Doc) bool) {
		for i, d := range docs {
			if !yield(Doc{Seq: uint64(i + 1), Body: []byte(d)}) {
				return
			}
		}
	}
	rows1, err1 := p1.Run(source)
	rows2, err2 := p2.Run(source)
	if (err1 == nil) != (err2 == nil) || string(joinRows(rows1)) != string(joinRows(rows2)) {
		t.Fatalf("%q and its rendering run differently: %s (%v) vs %s (%v)", sql, joinRows(rows1), err1, joinRows(rows2), err2)
	}
	for _, r := range rows1 {
		if _, err := Parse(r); err != nil {
			t.Fatalf("%q produced invalid JSON %q: %v", sql, r, err)
		}
	}
	info, err := p1.Plan()
	if err != nil {
		if !errors.Is(err, ErrUnsupported) {
			t.Fatalf("planning %q: %v", sql, err)
		}
		return
	}
	if info.RewrittenQuery != "" {
		rewritten := strings.Replace(info.RewrittenQuery, "{documentdb-formattableorderbyquery-filter}", "true", 1)
		if _, err := ParseQuery(rewritten); err != nil {
			t.Fatalf("the plan of %q rewrites it to %q, which does not parse: %v", sql, rewritten, err)
		}
	}
}

// FuzzParseObjectFields checks the partial decoder against the full one on
// valid documents.
func FuzzParseObjectFields(f *testing.F) {
	f.Add([]byte(filterDoc), "name,tags,odd key")
	f.Add([]byte(`{"a":"\"}","b":[{"c":"]"}],"a":2}`), "a,b")
	f.Add([]byte(`{}`), "x")
	f.Fuzz(func(t *testing.T, data []byte, names string) {
		full, err := ParseObject(data)
		if err != nil {
			return
		}
		fields := strings.Split(names, ",")
		part, err := ParseObjectFields(data, fields)
		if err != nil {
			t.Fatalf("valid object %q: %v", data, err)
		}
		want := &Value{Kind: KindObject, Obj: []Member{}}
		for _, m := range full.Obj {
			if slices.Contains(fields, m.Key) {
				want.Obj = append(want.Obj, m)
			}
		}
		if !Equal(part, want) || string(part.AppendJSON(nil)) != string(want.AppendJSON(nil)) {
			t.Fatalf("fields %q of %q: %s, want %s", fields, data, part.AppendJSON(nil), want.AppendJSON(nil))
		}
	})
}

// FuzzParse checks the hand-written decoder against encoding/json.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2,{"b":null}],"c":"\u00e9\ud83d\ude00","a":true}`,
		`[-0.5e+10, 0, 1E2, "\ud800", "\/"]`,
		"\"\xff\xfe\"",
		`{"a" : 1 , "b":[ ]}`,
		`[1,]`, `01`, `"\x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgainstEncodingJSON(t, data)
	})
}
