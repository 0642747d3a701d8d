package jsondoc

import (
	"errors"
	"strings"
	"testing"
)

// queryDocs cover every type in the property the ORDER BY tests sort on (n):
// undefined (j), null (d), false (g), true (f), numbers with a tie (c and i), a
// string (e) and an array (h). Their creation sequence is their position + 1.
var queryDocs = []string{
	`{"id":"a","n":3,"s":"x","t":["a","b"],"g":"p","o":{"k":1,"l":2},"f":1.5}`,
	`{"id":"b","n":1,"s":"y","g":"q","o":{"l":2,"k":1},"f":2.5}`,
	`{"id":"c","n":2,"s":"x","g":"p","f":1.0}`,
	`{"id":"d","n":null,"s":"z","g":"q"}`,
	`{"id":"e","n":"2","g":"p","t":[]}`,
	`{"id":"f","n":true,"s":"x"}`,
	`{"id":"g","n":false,"s":"y","g":"q"}`,
	`{"id":"h","n":[1],"s":"w","g":"p"}`,
	`{"id":"i","n":2,"s":"v","g":"q"}`,
	`{"id":"j","s":"x","g":"r","_ts":5}`,
}

func docsOf(bodies []string) []Doc {
	docs := make([]Doc, len(bodies))
	for i, b := range bodies {
		docs[i] = Doc{Seq: uint64(i + 1), Body: []byte(b)}
	}
	return docs
}

// runQuery runs sql over docs and returns the rows as one JSON array.
func runQuery(t *testing.T, sql string, params map[string]*Value, docs []string) string {
	t.Helper()
	q, err := ParseQuery(sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	again, err := ParseQuery(q.String())
	if err != nil || again.String() != q.String() {
		t.Fatalf("canonical form %q does not round-trip: %v", q.String(), err)
	}
	p, err := q.Bind(params)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	rows, err := p.Run(docsOf(docs))
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return "[" + string(joinRows(rows)) + "]"
}

func joinRows(rows [][]byte) []byte {
	var b []byte
	for i, r := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	return b
}

func TestQueryResults(t *testing.T) {
	params := map[string]*Value{"@two": Number("2"), "@one": Number("1"), "@key": String("s"), "@x": String("x")}
	tests := []struct{ name, sql, want string }{
		// ORDER BY: the service's order across types, ties by creation order (reversed
		// under DESC), several items.
		{"order across types", "SELECT VALUE c.id FROM c ORDER BY c.n",
			`["j","d","g","f","b","c","i","a","e","h"]`},
		{"order across types descending, ties reversed", "SELECT VALUE c.id FROM c ORDER BY c.n DESC",
			`["h","e","a","i","c","b","f","g","d","j"]`},
		{"two items, the second descending", "SELECT VALUE c.id FROM c ORDER BY c.s, c.n DESC",
			`["e","i","h","a","c","f","j","b","g","d"]`},
		{"ties under DESC come newest first", "SELECT VALUE c.id FROM c ORDER BY c.g DESC",
			`["j","i","g","d","b","h","e","c","a","f"]`},
		{"explicit ASC", "SELECT VALUE c.id FROM c WHERE IS_STRING(c.s) ORDER BY c.s ASC, c.id DESC",
			`["i","h","j","f","c","a","g","b","d"]`},
		{"system properties are paths", "SELECT VALUE c.id FROM c WHERE IS_DEFINED(c._ts) ORDER BY c._ts", `["j"]`},

		// TOP, OFFSET … LIMIT, parameters for them.
		{"TOP after ORDER BY", "SELECT TOP 3 VALUE c.id FROM c ORDER BY c.n DESC", `["h","e","a"]`},
		{"TOP in scan order", "SELECT TOP 2 VALUE c.id FROM c", `["a","b"]`},
		{"TOP 0", "SELECT TOP 0 * FROM c", `[]`},
		{"OFFSET LIMIT after ORDER BY", "SELECT VALUE c.id FROM c ORDER BY c.n OFFSET 2 LIMIT 3", `["g","f","b"]`},
		{"OFFSET past the end", "SELECT VALUE c.id FROM c ORDER BY c.n OFFSET 8 LIMIT 5", `["e","h"]`},
		{"LIMIT 0", "SELECT VALUE c.id FROM c OFFSET 0 LIMIT 0", `[]`},
		{"OFFSET LIMIT in scan order", "SELECT VALUE c.id FROM c OFFSET 7 LIMIT 10", `["h","i","j"]`},
		{"TOP as a parameter", "SELECT TOP @two VALUE c.id FROM c ORDER BY c.id DESC", `["j","i"]`},
		{"OFFSET and LIMIT as parameters", "SELECT VALUE c.id FROM c ORDER BY c.id OFFSET @one LIMIT @two", `["b","c"]`},

		// Projections: names, undefined left out, VALUE, constructors.
		{"undefined properties are left out", "SELECT c.id, c.s FROM c WHERE c.id IN ('d', 'e')",
			`[{"id":"d","s":"z"},{"id":"e"}]`},
		{"output names: alias, last property, $n for the rest",
			`SELECT c.id AS x, c.o.k, c["odd"], c.t[0], UPPER(c.s), 1 FROM c WHERE c.id = 'a'`,
			`[{"x":"a","k":1,"$1":"a","$2":"X","$3":1}]`},
		{"the document itself", "SELECT c AS payload, c.id FROM c WHERE c.id = 'j'",
			`[{"payload":{"id":"j","s":"x","g":"r","_ts":5},"id":"j"}]`},
		{"the alias names the document", "SELECT c FROM c WHERE c.id = 'j'", `[{"c":{"id":"j","s":"x","g":"r","_ts":5}}]`},
		{"VALUE leaves undefined rows out", "SELECT VALUE c.s FROM c", `["x","y","x","z","x","y","w","v","x"]`},
		{"object constructor", `SELECT VALUE {"id": c.id, "s": c.s} FROM c WHERE c.id IN ('d', 'e')`,
			`[{"id":"d","s":"z"},{"id":"e"}]`},
		{"array constructor drops undefined", "SELECT VALUE [c.id, c.s] FROM c WHERE c.id = 'e'", `[["e"]]`},
		{"orderByItems shape", `SELECT c.id, [{"item": c.n}] AS orderByItems FROM c WHERE c.id IN ('a', 'j') ORDER BY c.n`,
			`[{"id":"j","orderByItems":[{}]},{"id":"a","orderByItems":[{"item":3}]}]`},
		{"SELECT * returns the document", "SELECT * FROM c WHERE c.id = 'b'", "[" + queryDocs[1] + "]"},
		{"member access on expressions", `SELECT VALUE [({"a": c.o}).a.k, ARRAY_SLICE(c.t, 1)[0], c[@key], c.t[@one]] FROM c WHERE c.id = 'a'`,
			`[[1,"b","x","b"]]`},

		// DISTINCT: first occurrence in result order, JSON equality.
		{"DISTINCT VALUE", "SELECT DISTINCT VALUE c.s FROM c", `["x","y","z","w","v"]`},
		{"DISTINCT on objects ignores member order", "SELECT DISTINCT VALUE c.o FROM c", `[{"k":1,"l":2}]`},
		{"DISTINCT on a list, {} for undefined", "SELECT DISTINCT c.g FROM c", `[{"g":"p"},{"g":"q"},{},{"g":"r"}]`},
		{"DISTINCT with ORDER BY", "SELECT DISTINCT VALUE c.g FROM c ORDER BY c.g DESC", `["r","q","p"]`},
		{"DISTINCT numbers", "SELECT DISTINCT VALUE c.n FROM c WHERE IS_NUMBER(c.n)", `[3,1,2]`},

		// Aggregates, VALUE and not, over nothing, over mixed types.
		{"COUNT(1)", "SELECT VALUE COUNT(1) FROM c", `[10]`},
		{"COUNT counts defined values", "SELECT VALUE COUNT(c.n) FROM c", `[9]`},
		{"SUM", "SELECT VALUE SUM(c.f) FROM c", `[5]`},
		{"SUM of mixed types is undefined", "SELECT VALUE SUM(c.n) FROM c", `[]`},
		{"AVG", "SELECT VALUE AVG(c.f) FROM c", `[1.6666666666666667]`},
		{"MIN and MAX of strings", "SELECT VALUE [MIN(c.s), MAX(c.s)] FROM c", `[["v","z"]]`},
		{"MIN and MAX order across types", "SELECT VALUE {\"min\": MIN(c.n), \"max\": MAX(c.n)} FROM c WHERE NOT IS_ARRAY(c.n)",
			`[{"min":null,"max":"2"}]`},
		{"MIN with an array is undefined", "SELECT VALUE MIN(c.n) FROM c", `[]`},
		{"COUNT and SUM over nothing are 0", "SELECT VALUE [COUNT(1), SUM(c.f)] FROM c WHERE false", `[[0,0]]`},
		{"AVG, MIN, MAX over nothing are undefined", "SELECT VALUE AVG(c.f) FROM c WHERE false", `[]`},
		{"aggregates without VALUE", "SELECT COUNT(1) AS n, SUM(c.f) AS total, AVG(c.f), MIN(c.s), MAX(c.s) AS highest FROM c",
			`[{"n":10,"total":5,"$1":1.6666666666666667,"$2":"v","highest":"z"}]`},
		{"aggregates without VALUE over nothing", "SELECT COUNT(1) AS n, AVG(c.f) AS a FROM c WHERE false", `[{"n":0}]`},

		// GROUP BY: groups in order of their first document, undefined is a group.
		{"GROUP BY", "SELECT c.g, COUNT(1) AS n FROM c GROUP BY c.g",
			`[{"g":"p","n":4},{"g":"q","n":4},{"n":1},{"g":"r","n":1}]`},
		{"GROUP BY two expressions", "SELECT c.g, c.s, COUNT(1) AS n FROM c WHERE c.g = 'p' GROUP BY c.g, c.s",
			`[{"g":"p","s":"x","n":2},{"g":"p","n":1},{"g":"p","s":"w","n":1}]`},
		{"VALUE aggregate per group", "SELECT VALUE COUNT(1) FROM c GROUP BY c.g", `[4,4,1,1]`},
		{"VALUE of the group, undefined left out", "SELECT VALUE c.g FROM c GROUP BY c.g", `["p","q","r"]`},
		{"GROUP BY an expression", `SELECT UPPER(c.g) AS G, MAX(c.id) AS last FROM c WHERE IS_DEFINED(c.g) GROUP BY UPPER(c.g)`,
			`[{"G":"P","last":"h"},{"G":"Q","last":"i"},{"G":"R","last":"j"}]`},
		{"grouped expressions inside constructors", `SELECT VALUE {"g": c.g, "n": [{"item": COUNT(1)}]} FROM c GROUP BY c.g`,
			`[{"g":"p","n":[{"item":4}]},{"g":"q","n":[{"item":4}]},{"n":[{"item":1}]},{"g":"r","n":[{"item":1}]}]`},
		{"TOP over groups", "SELECT TOP 2 c.g FROM c GROUP BY c.g", `[{"g":"p"},{"g":"q"}]`},
		{"c[\"g\"] is c.g for grouping", `SELECT c["g"], COUNT(1) AS n FROM c WHERE c.g = 'r' GROUP BY c.g`, `[{"g":"r","n":1}]`},

		// Operators.
		{"arithmetic, concatenation, coalesce, conditional",
			"SELECT VALUE [c.n + 1, c.n - 1, c.n * 2, c.n / 2, c.n % 2, -c.n, c.s || '!', c.n ?? 'none', (c.n > 1 ? 'big' : 'small')] FROM c WHERE c.id IN ('a', 'j')",
			`[[4,2,6,1.5,1,-3,"x!",3,"big"],["x!","none"]]`},
		{"integers stay exact until they overflow", "SELECT VALUE [9007199254740993 + 0, 9223372036854775807 + 1, 6 / 3, 1 / 0] FROM c WHERE c.id = 'a'",
			`[[9007199254740993,9223372036854776000,2]]`},
		{"arithmetic on other types is undefined", "SELECT VALUE [c.s + 1, c.n || 'x', 'a' * 2] FROM c WHERE c.id = 'a'", `[[]]`},
		{"BETWEEN", "SELECT VALUE c.id FROM c WHERE c.n BETWEEN 2 AND 3", `["a","c","i"]`},
		{"NOT BETWEEN leaves other types out", "SELECT VALUE c.id FROM c WHERE c.n NOT BETWEEN 2 AND 3", `["b"]`},
		{"IN compares type and value", "SELECT VALUE c.id FROM c WHERE c.n IN (2, '2')", `["c","e","i"]`},
		{"NOT IN", "SELECT VALUE c.id FROM c WHERE c.s NOT IN ('x', 'y')", `["d","h","i"]`},
		{"parameters as values", "SELECT VALUE c.id FROM c WHERE c.n = @two AND c.s = @x", `["c"]`},
		{"undefined literal", "SELECT VALUE c.id FROM c WHERE (c.n ?? undefined) = undefined", `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runQuery(t, tt.sql, params, queryDocs); got != tt.want {
				t.Errorf("%s\n got %s\nwant %s", tt.sql, got, tt.want)
			}
		})
	}
}

func TestDistinctTreatsEqualNumbersAsOne(t *testing.T) {
	docs := []string{`{"v":1}`, `{"v":1.0}`, `{"v":1e0}`, `{"v":2}`, `{"v":[1,{"a":1,"b":2}]}`, `{"v":[1.0,{"b":2,"a":1}]}`}
	if got, want := runQuery(t, "SELECT DISTINCT VALUE c.v FROM c", nil, docs), `[1,2,[1,{"a":1,"b":2}]]`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := runQuery(t, "SELECT c.v, COUNT(1) AS n FROM c GROUP BY c.v", nil, docs), `[{"v":1,"n":3},{"v":2,"n":1},{"v":[1,{"a":1,"b":2}],"n":2}]`; got != want {
		t.Errorf("GROUP BY: got %s, want %s", got, want)
	}
}

func TestFunctions(t *testing.T) {
	doc := `{"s":"Hello","e":"é-x","arr":[1,2,3,4],"objs":[{"a":1,"b":2}],"n":-2.5,"i":7,"z":null,"b":true,"o":{"x":1}}`
	tests := []struct{ expr, want string }{
		{"LOWER(c.s)", `"hello"`}, {"UPPER(c.s)", `"HELLO"`}, {"LOWER(c.i)", "undefined"},
		{"LENGTH(c.e)", "3"}, {"LENGTH(c.arr)", "undefined"},
		{"CONCAT(c.s, ' ', 'world', '!', '?')", `"Hello world!?"`}, {"CONCAT(c.s, c.i)", "undefined"},
		{"SUBSTRING(c.s, 1, 3)", `"ell"`}, {"SUBSTRING(c.e, 1, 10)", `"-x"`}, {"SUBSTRING(c.s, -2, 2)", `"He"`}, {"SUBSTRING(c.s, 9, 1)", `""`},
		{"STARTSWITH(c.s, 'He')", "true"}, {"STARTSWITH(c.s, 'he')", "false"}, {"STARTSWITH(c.s, 'he', true)", "true"},
		{"ENDSWITH(c.s, 'LO', true)", "true"}, {"ENDSWITH(c.s, 'l')", "false"},
		{"CONTAINS(c.s, 'ell')", "true"}, {"CONTAINS(c.i, '7')", "undefined"},
		{"INDEX_OF(c.s, 'l')", "2"}, {"INDEX_OF(c.s, 'l', 3)", "3"}, {"INDEX_OF(c.e, 'x')", "2"}, {"INDEX_OF(c.s, 'z')", "-1"},
		{"TRIM('  a b  ')", `"a b"`}, {"LTRIM('  a ')", `"a "`}, {"RTRIM('  a ')", `"  a"`},
		{"REPLACE(c.s, 'l', 'L')", `"HeLLo"`}, {"LEFT(c.s, 2)", `"He"`}, {"RIGHT(c.s, 3)", `"llo"`}, {"RIGHT(c.s, 9)", `"Hello"`},
		{"TOSTRING(c.i)", `"7"`}, {"TOSTRING(c.b)", `"true"`}, {"TOSTRING(c.z)", `"null"`}, {"TOSTRING(c.o)", `"{\"x\":1}"`}, {"TOSTRING(c.missing)", "undefined"},
		{"ARRAY_LENGTH(c.arr)", "4"}, {"ARRAY_LENGTH(c.s)", "undefined"},
		{"ARRAY_CONTAINS(c.arr, 3)", "true"}, {"ARRAY_CONTAINS(c.objs, {\"a\": 1})", "false"}, {"ARRAY_CONTAINS(c.objs, {\"a\": 1}, true)", "true"},
		{"ARRAY_SLICE(c.arr, 1)", "[2,3,4]"}, {"ARRAY_SLICE(c.arr, 1, 2)", "[2,3]"}, {"ARRAY_SLICE(c.arr, -2, 1)", "[3]"}, {"ARRAY_SLICE(c.arr, 9)", "[]"},
		{"IS_DEFINED(c.z)", "true"}, {"IS_DEFINED(c.missing)", "false"}, {"IS_NULL(c.z)", "true"}, {"IS_NULL(c.missing)", "false"},
		{"IS_STRING(c.s)", "true"}, {"IS_NUMBER(c.i)", "true"}, {"IS_BOOL(c.b)", "true"}, {"IS_ARRAY(c.arr)", "true"},
		{"IS_OBJECT(c.o)", "true"}, {"IS_OBJECT(c.arr)", "false"}, {"IS_PRIMITIVE(c.z)", "true"}, {"IS_PRIMITIVE(c.o)", "false"}, {"IS_PRIMITIVE(c.missing)", "false"},
		{"ABS(c.n)", "2.5"}, {"ABS(-7)", "7"}, {"FLOOR(c.n)", "-3"}, {"CEILING(c.n)", "-2"}, {"ROUND(c.n)", "-3"}, {"ROUND(2.5)", "3"}, {"ROUND(c.i)", "7"},
		{"FLOOR(c.s)", "undefined"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got := runQuery(t, "SELECT VALUE "+tt.expr+" FROM c", nil, []string{doc})
			want := "[" + tt.want + "]"
			if tt.want == "undefined" {
				want = "[]"
			}
			if got != want {
				t.Errorf("%s = %s, want %s", tt.expr, got, want)
			}
		})
	}
}

func TestQueryValidationErrors(t *testing.T) {
	tests := []struct {
		sql, want   string
		unsupported bool
	}{
		{"SELECT c.a, c.b.a FROM c", `two properties named "a"`, false},
		{"SELECT * FROM c WHERE COUNT(1) > 1", "aggregate COUNT can be used only in the SELECT list", false},
		{"SELECT * FROM c ORDER BY MAX(c.a)", "aggregate MAX can be used only in the SELECT list", false},
		{"SELECT VALUE COUNT(SUM(c.a)) FROM c", "cannot be nested", false},
		{"SELECT VALUE COUNT(*) FROM c", "COUNT(*) is not Cosmos SQL; count documents with COUNT(1)", false},
		{"SELECT VALUE SUM(c.a, c.b) FROM c", "SUM takes 1 argument, got 2", false},
		{"SELECT c.b, COUNT(1) FROM c GROUP BY c.a", "c.b in the SELECT list is neither in GROUP BY nor inside an aggregate", false},
		{"SELECT c.a, COUNT(1) FROM c", "c.a is not inside an aggregate", false},
		{"SELECT * FROM c GROUP BY c.a", "'SELECT *' is not allowed with GROUP BY", false},
		{"SELECT COUNT(1) AS n FROM c GROUP BY COUNT(1)", "can be used only in the SELECT list", false},
		{"SELECT TOP 1 * FROM c OFFSET 1 LIMIT 1", "TOP cannot be combined with OFFSET", false},
		{"SELECT * FROM c LIMIT 5", "LIMIT needs an OFFSET before it", false},
		{"SELECT * FROM c OFFSET 5", "expected LIMIT after OFFSET", false},
		{"SELECT * FROM c ORDER BY c.a WHERE c.a = 1", "WHERE is out of place", false},
		{"SELECT * FROM c ORDER c.a", "expected BY after ORDER", false},
		{"SELECT * FROM c WHERE c.a BETWEEN 1 OR 2", "expected AND between the bounds", false},
		{"SELECT * FROM c WHERE c.a IN ()", "IN needs at least one value", false},
		{`SELECT VALUE {"a": 1, "a": 2} FROM c`, `duplicate property "a"`, false},
		{"SELECT VALUE SUBSTRING(c.a, 1) FROM c", "SUBSTRING takes 3 arguments, got 2", false},
		{"SELECT VALUE CONCAT(c.a) FROM c", "CONCAT takes 2 or more arguments, got 1", false},
		{"SELECT VALUE (c.a ? 1) FROM c", `expected ":" of a conditional`, false},
		{"SELECT FROM c", "expected a value", false},
		{"SELECT c.a c.b FROM c", `expected "," or FROM`, false},
		{"SELECT * FROM c WHERE c.a = 1 ORDER BY c.a OFFSET 1.5 LIMIT 1", "OFFSET must be a non-negative integer", false},
		{"SELECT VALUE c.a FROM c ORDER BY c.a, LOWER(c.b)", "ORDER BY takes document paths", true},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			_, err := ParseQuery(tt.sql)
			if err == nil {
				t.Fatal("query parsed")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
			if errors.Is(err, ErrUnsupported) != tt.unsupported {
				t.Errorf("errors.Is(err, ErrUnsupported) = %v, want %v", !tt.unsupported, tt.unsupported)
			}
		})
	}
}

func TestBindChecksParametersAndCounts(t *testing.T) {
	q, err := ParseQuery("SELECT TOP @n * FROM c WHERE c.a = @a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Bind(map[string]*Value{"@n": Number("1")}); err == nil || !strings.Contains(err.Error(), "@a is not defined") {
		t.Errorf("missing @a: %v", err)
	}
	for _, bad := range []*Value{String("3"), Number("1.5"), Number("-1"), nil} {
		if _, err := q.Bind(map[string]*Value{"@n": bad, "@a": Null()}); err == nil || !strings.Contains(err.Error(), "@n is the TOP count and must be a non-negative integer") {
			t.Errorf("TOP @n = %v: %v", bad, err)
		}
	}
	p, err := q.Bind(map[string]*Value{"n": Number("3"), "a": Null()}) // bare names are accepted too
	if err != nil {
		t.Fatal(err)
	}
	if top, offset, limit := p.Bounds(); top != 3 || offset != 0 || limit != -1 {
		t.Errorf("Bounds = %d, %d, %d", top, offset, limit)
	}
}

func TestResultAfterResumesBetweenRows(t *testing.T) {
	q, err := ParseQuery("SELECT VALUE c.id FROM c ORDER BY c.n DESC")
	if err != nil {
		t.Fatal(err)
	}
	p, err := q.Bind(nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Materialize(docsOf(queryDocs))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < res.Len(); i++ {
		keys, seq, sub, err := res.Position(i)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.After(keys, seq, sub); got != i+1 {
			t.Errorf("After(position of row %d) = %d, want %d", i, got, i+1)
		}
	}
	// A rebuilt result with a new row placed before the resume point and one after:
	// resuming after row 2 of the old result (a, n=3) skips the new n=5 and keeps n=2.5.
	more := append([]string{}, queryDocs...)
	more = append(more, `{"id":"new-high","n":5}`, `{"id":"new-mid","n":2.5}`)
	rebuilt, err := p.Materialize(docsOf(more))
	if err != nil {
		t.Fatal(err)
	}
	keys, seq, sub, _ := res.Position(2)
	next, _ := rebuilt.AppendRow(nil, rebuilt.After(keys, seq, sub))
	if string(next) != `"new-mid"` {
		t.Errorf("resumed at %s, want \"new-mid\"", next)
	}
}

func TestParseObjectFieldsKeepsOnlyTheFields(t *testing.T) {
	doc := `{"a": 1, "skip": {"x": [1, {"y": "}]\""}], "z": "\\"}, "b" : "two", "c": [1, 2], "a": 3, "d\u0065": true}`
	v, err := ParseObjectFields([]byte(doc), []string{"a", "c", "de", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(v.AppendJSON(nil)), `{"a":3,"c":[1,2],"de":true}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if _, err := ParseObjectFields([]byte(`[1]`), []string{"a"}); err == nil {
		t.Error("an array parsed as an object")
	}
	if _, err := ParseObjectFields([]byte(`{"a": 1`), []string{"a"}); err == nil {
		t.Error("a truncated object parsed")
	}
}

func TestFullTextContains(t *testing.T) {
	doc := `{"title":"Azure Cosmos DB Full Text Search","d":"Learn about full-text search, searching fast.","n":7}`
	tests := []struct{ expr, want string }{
		{"FullTextContains(c.title, 'search')", "true"},
		{"FullTextContains(c.title, 'SEARCH')", "true"},
		{"FullTextContains(c.title, 'full text')", "true"},
		{"FullTextContains(c.title, 'text full')", "false"},
		{"FullTextContains(c.title, 'sear')", "false"},
		{"FullTextContains(c.d, 'full text search')", "true"},
		{"FullTextContains(c.d, 'searching')", "true"},
		{"FullTextContains(c.missing, 'search')", "undefined"},
		{"FullTextContains(c.n, '7')", "undefined"},
		{"FullTextContains(c.title, '')", "false"},
		{"FullTextContainsAll(c.title, 'azure', 'search')", "true"},
		{"FullTextContainsAll(c.title, 'azure', 'mongo')", "false"},
		{"FullTextContainsAny(c.title, 'mongo', 'cosmos db')", "true"},
		{"FullTextContainsAny(c.title, 'mongo', 'postgres')", "false"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got := runQuery(t, "SELECT VALUE "+tt.expr+" FROM c", nil, []string{doc})
			want := "[" + tt.want + "]"
			if tt.want == "undefined" {
				want = "[]"
			}
			if got != want {
				t.Errorf("%s = %s, want %s", tt.expr, got, want)
			}
		})
	}
	got := runQuery(t, `SELECT VALUE c.id FROM c WHERE FullTextContains(c.title, "search") OR FullTextContains(c.description, "search")`, nil,
		[]string{`{"id":"1","title":"Azure Cosmos DB Full Text Search"}`, `{"id":"2","title":"Not related","description":"An unrelated item"}`})
	if got != `["1"]` {
		t.Errorf("the azcosmos full-text query gave %s, want [\"1\"]", got)
	}
}
