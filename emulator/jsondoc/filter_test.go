package jsondoc

import (
	"errors"
	"strings"
	"testing"
)

func TestParseQueryAcceptsSupportedForms(t *testing.T) {
	tests := []struct {
		sql       string
		alias     string
		top       int
		canonical string
	}{
		{"SELECT * FROM c", "c", 0, "SELECT * FROM c"},
		{"select * from root", "root", 0, "SELECT * FROM root"},
		{"SELECT TOP 5 * FROM c", "c", 5, "SELECT TOP 5 * FROM c"},
		{"SeLeCt ToP 1 * FrOm doc WhErE doc.a = 1", "doc", 1, "SELECT TOP 1 * FROM doc WHERE doc.a = 1"},
		{`SELECT * FROM c WHERE c["a b"].c[0] <> 'x'`, "c", 0, `SELECT * FROM c WHERE c["a b"].c[0] != "x"`},
		{`SELECT * FROM c WHERE c.value = "v" AND c.top > -1.5e3`, "c", 0, `SELECT * FROM c WHERE (c.value = "v") AND (c.top > -1.5e3)`},
		{"SELECT * FROM c WHERE NOT c.a = 1 OR c.b", "c", 0, "SELECT * FROM c WHERE (NOT (c.a = 1)) OR c.b"},
		{"SELECT * FROM c WHERE c.a = 1 OR c.b = 2 AND c.c = 3", "c", 0,
			"SELECT * FROM c WHERE (c.a = 1) OR ((c.b = 2) AND (c.c = 3))"},
		{"SELECT * FROM c WHERE (c.a = 1 OR c.b = 2) AND c.c = 3", "c", 0,
			"SELECT * FROM c WHERE ((c.a = 1) OR (c.b = 2)) AND (c.c = 3)"},
		{"SELECT * FROM c WHERE not is_defined(c.x) and Is_Null(c.y)", "c", 0,
			"SELECT * FROM c WHERE (NOT IS_DEFINED(c.x)) AND IS_NULL(c.y)"},
		{"SELECT * FROM c WHERE STARTSWITH(c.n, @p, true) AND CONTAINS(c.n, 's') AND ARRAY_CONTAINS(c.t, {})", "c", 0,
			`SELECT * FROM c WHERE (STARTSWITH(c.n, @p, true) AND CONTAINS(c.n, "s")) AND ARRAY_CONTAINS(c.t, {})`},
		{"SELECT * FROM c WHERE ARRAY_CONTAINS(c.t, @v, false) AND c.x >= 007 AND c.y = null AND c.z = TRUE", "c", 0,
			"SELECT * FROM c WHERE ((ARRAY_CONTAINS(c.t, @v, false) AND (c.x >= 7)) AND (c.y = null)) AND (c.z = true)"},
		{`SELECT * FROM c WHERE c.s = 'it\'s \"q\" \u00e9\n'`, "c", 0, `SELECT * FROM c WHERE c.s = "it's \"q\" é\n"`},
		{"SELECT * FROM c WHERE c", "c", 0, "SELECT * FROM c WHERE c"},
		{"SELECT * FROM c WHERE c.épée = 1", "c", 0, "SELECT * FROM c WHERE c.épée = 1"},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			q, err := ParseQuery(tt.sql)
			if err != nil {
				t.Fatal(err)
			}
			if q.Alias != tt.alias || q.Top.N != tt.top {
				t.Errorf("alias, top = %q, %d; want %q, %d", q.Alias, q.Top.N, tt.alias, tt.top)
			}
			if got := q.String(); got != tt.canonical {
				t.Errorf("String() = %s\n          want %s", got, tt.canonical)
			}
			again, err := ParseQuery(q.String())
			if err != nil || again.String() != q.String() {
				t.Errorf("canonical form does not round-trip: %v", err)
			}
		})
	}
}

func TestParseQueryReportsUnsupportedFeatures(t *testing.T) {
	tests := []struct{ sql, found string }{
		{"SELECT * FROM c JOIN t IN c.tags", "JOIN at offset 16 is not supported"},
		// The JOIN is named, not the alias t the SELECT list uses before it.
		{"SELECT c.id, t AS tag FROM c JOIN t IN c.tags", "JOIN at offset 29 is not supported"},
		{"SELECT c.join FROM c WHERE c.like = 1", ""},
		{"SELECT * FROM (SELECT * FROM c)", "subqueries (SELECT at offset 15)"},
		{"SELECT * FROM t IN c.tags", "FROM x IN"},
		{"SELECT * FROM c.children", "FROM on a path"},
		{"SELECT * FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags)", "EXISTS subqueries"},
		{"SELECT * FROM c WHERE (SELECT 1) = 1", "subqueries (SELECT at offset 23)"},
		{"SELECT * FROM c WHERE c.a IN (SELECT VALUE 1)", "subqueries (SELECT at offset 30)"},
		{"SELECT ARRAY(SELECT VALUE t FROM t IN c.tags) FROM c", "ARRAY subqueries"},
		{"SELECT * FROM c WHERE udf.f(c.a)", "user-defined functions"},
		{"SELECT * FROM c WHERE REGEXMATCH(c.a, 'x')", `found "REGEXMATCH"`},
		{"SELECT * FROM c WHERE c.a & 1 = 1", `found "&"`},
		{"SELECT * FROM c WHERE ~c.a = 1", `found "~"`},
		{"SELECT * FROM c ORDER BY LOWER(c.a)", "ORDER BY LOWER(c.a)"},
		{"SELECT * FROM c ORDER BY c", "ORDER BY c:"},
		{"SELECT c.a, COUNT(1) AS n FROM c GROUP BY c.a ORDER BY c.a", "ORDER BY with aggregates or GROUP BY"},
		{"SELECT DISTINCT VALUE COUNT(1) FROM c", "DISTINCT with aggregates"},
		{"SELECT c.a FROM c GROUP BY c.a HAVING COUNT(1) > 1", `found "HAVING"`},
		{"SELECT 1", "a query without FROM"},
		{"DELETE FROM c", `found "DELETE"`},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			_, err := ParseQuery(tt.sql)
			if tt.found == "" {
				if err != nil {
					t.Fatalf("a property named like a keyword must parse: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("err = %v, want ErrUnsupported", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "unsupported query: ") || !strings.Contains(msg, "; the emulator supports SELECT [DISTINCT] [TOP n] ") {
				t.Errorf("message does not explain what is supported: %s", msg)
			}
			if !strings.Contains(msg, tt.found) {
				t.Errorf("message %q does not name %s", msg, tt.found)
			}
		})
	}
}

func TestParseQueryReportsSyntaxErrors(t *testing.T) {
	tests := []struct{ sql, wantMsg string }{
		{"", "empty query"},
		{"SELECT * FROM", "expected a collection alias"},
		{"SELECT * FROM c WHERE", "unexpected end of query"},
		{"SELECT * FROM c WHERE (c.a = 1", `expected ")"`},
		{"SELECT * FROM c WHERE c.a = )", `expected a value, found ")"`},
		{"SELECT * FROM c WHERE c.a = 1 2", "found \"2\""},
		{"SELECT * FROM c WHERE c.a = 'x", "unterminated string"},
		{`SELECT * FROM c WHERE c.a = 'x\q'`, `invalid escape \q`},
		{`SELECT * FROM c WHERE c.a = '\u12'`, `invalid \u escape`},
		{"SELECT * FROM c WHERE c.a = 1e", "malformed number"},
		{"SELECT * FROM c WHERE c.a = @", "parameter name"},
		{"SELECT * FROM c WHERE d.a = 1", `identifier "d" is not the FROM alias "c"`},
		{"SELECT * FROM c WHERE c. = 1", "expected a property name"},
		{"SELECT * FROM c WHERE c.a[1.5] = 1", "array index must be a non-negative integer"},
		{"SELECT * FROM c WHERE c.a[99999999999999999999] = 1", "array index must be a non-negative integer"},
		{"SELECT * FROM c WHERE c.a[0 = 1", `expected "]"`},
		{"SELECT TOP -1 * FROM c", "TOP must be a non-negative integer"},
		{"SELECT TOP 1.5 * FROM c", "TOP must be a non-negative integer"},
		{"SELECT TOP * FROM c", "a number after TOP"},
		{"SELECT * FROM c WHERE IS_DEFINED()", "IS_DEFINED takes 1 arguments, got 0"},
		{"SELECT * FROM c WHERE STARTSWITH(c.a)", "STARTSWITH takes 2 or 3 arguments, got 1"},
		{"SELECT * FROM c WHERE CONTAINS(c.a, 'x' 'y')", `expected "," or ")"`},
		{"SELECT * FROM c WHERE c.a = 1 = 2", "found \"=\""},
		{"SELECT * FROM c WHERE AND", `expected a value, found "AND"`},
		{"SELECT * FROM c WHERE " + strings.Repeat("(", 1000) + "1", "nests deeper"},
		{"SELECT * FROM c WHERE " + strings.Repeat("NOT ", 1000) + "true", "nests deeper"},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			_, err := ParseQuery(tt.sql)
			if err == nil {
				t.Fatal("query parsed")
			}
			if errors.Is(err, ErrUnsupported) {
				t.Errorf("a malformed query is reported as unsupported: %v", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %q, want it to contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestParseCondition(t *testing.T) {
	tests := []struct {
		cond        string
		wantErr     string
		unsupported bool
	}{
		{cond: "from c where c.status = 'active'"},
		{cond: "FROM doc WHERE IS_DEFINED(doc.x) AND doc.n > 1"},
		{cond: "", wantErr: "empty patch condition"},
		{cond: "from c", wantErr: "needs a WHERE clause"},
		{cond: "from c where", wantErr: "unexpected end of query"},
		{cond: "select * from c where c.a = 1", wantErr: "a patch condition has the form FROM c WHERE", unsupported: true},
		{cond: "from c join t in c.tags where t = 1", wantErr: `found "join"`, unsupported: true},
	}
	for _, tt := range tests {
		t.Run(tt.cond, func(t *testing.T) {
			f, err := ParseCondition(tt.cond)
			if tt.wantErr == "" {
				if err != nil || f == nil {
					t.Fatalf("ParseCondition = %v, %v", f, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
			if errors.Is(err, ErrUnsupported) != tt.unsupported {
				t.Errorf("errors.Is(err, ErrUnsupported) = %v, want %v", !tt.unsupported, tt.unsupported)
			}
		})
	}
}

const filterDoc = `{
	"id": "1", "name": "Widget", "n": 10, "f": 2.5, "big": 9007199254740993,
	"active": true, "nothing": null, "empty": "",
	"tags": ["a", "b", 3, {"k": 1, "l": 2}],
	"nested": {"deep": {"x": "y"}, "arr": [[1, 2], {"0": "zero"}]},
	"odd key": "spaces", "obj": {"a": 1, "b": [1, 2]}
}`

func TestFilterMatchSemantics(t *testing.T) {
	doc := mustParse(t, filterDoc)
	params := map[string]*Value{
		"@name":  String("Widget"),
		"@ten":   Number("10"),
		"@tag":   String("b"),
		"@obj":   mustParse(t, `{"b":[1,2.0],"a":1}`),
		"plain":  Bool(true),
		"@nilly": nil,
	}
	tests := []struct {
		where string
		want  bool
	}{
		// comparisons of each type
		{"c.n = 10", true},
		{"c.n = 10.0", true},
		{"c.n = 1e1", true},
		{"c.n != 11", true},
		{"c.n <> 10", false},
		{"c.n < 10.5", true},
		{"c.n <= 10", true},
		{"c.n > 9", true},
		{"c.n >= 11", false},
		{"c.f > 2", true},
		{"c.n > -1", true},
		{"c.big = 9007199254740993", true},
		{"c.big = 9007199254740992", false},
		{"c.name = 'Widget'", true},
		{`c.name = "widget"`, false},
		{"c.name < 'Widgets'", true},
		{"c.name > 'Z'", false}, // ordinal: uppercase sorts before lowercase
		{"c.name > 'W'", true},
		{"c.empty = ''", true},
		{"c.active = true", true},
		{"c.active > false", true},
		{"c.nothing = null", true},
		{"c.nothing != null", false},
		{"c.nothing <= null", true},
		{"c.obj = @obj", true},
		{`c.obj.b = c.nested.arr[0]`, true},
		{"c.obj != @obj", false},
		{"c.obj > @obj", false},
		{"c.tags = c.tags", true},
		// mixed types and undefined never match, whatever the operator
		{"c.n = '10'", false},
		{"c.n != '10'", false},
		{"c.active = 1", false},
		{"c.nothing = false", false},
		{"c.missing = null", false},
		{"c.missing != 1", false},
		{"NOT c.missing = 1", false},
		{"NOT (c.n = '10')", false},
		{"c.missing = c.missing", false},
		// three-valued AND / OR / NOT
		{"c.missing = 1 OR c.n = 10", true},
		{"c.n = 10 OR c.missing = 1", true},
		{"c.missing = 1 OR c.n = 11", false},
		{"NOT (c.missing = 1 OR c.n = 11)", false},
		{"NOT (c.missing = 1 AND c.n = 11)", true},
		{"NOT (c.missing = 1 AND c.n = 10)", false},
		{"c.n = 10 AND c.name = 'Widget'", true},
		{"c.n = 10 AND c.name = 'x'", false},
		{"NOT (c.n = 10 AND c.name = 'x')", true},
		{"NOT NOT c.active", true},
		{"c.active", true},
		{"c.n", false},
		{"c.n AND true", false},
		{"NOT c.n", false},
		{"true", true},
		{"false OR null", false},
		// paths
		{`c["odd key"] = 'spaces'`, true},
		{`c.nested.deep.x = 'y'`, true},
		{`c.nested["deep"]["x"] = 'y'`, true},
		{"c.tags[0] = 'a'", true},
		{"c.tags[3].k = 1", true},
		{"c.tags[9] = 'a'", false},
		{"c.nested.arr[1]['0'] = 'zero'", true},
		{"c.nested.arr[1][0] = 'zero'", false},
		{"c.nested['arr']['0'] = 1", false},
		{"c.name.length = 6", false},
		// functions
		{"IS_DEFINED(c.nothing)", true},
		{"IS_DEFINED(c.missing)", false},
		{"NOT IS_DEFINED(c.missing)", true},
		{"IS_DEFINED(c)", true},
		{"IS_NULL(c.nothing)", true},
		{"IS_NULL(c.missing)", false},
		{"IS_NULL(c.n)", false},
		{"STARTSWITH(c.name, 'Wid')", true},
		{"STARTSWITH(c.name, 'wid')", false},
		{"STARTSWITH(c.name, 'wid', true)", true},
		{"STARTSWITH(c.name, 'wid', false)", false},
		{"STARTSWITH(c.n, '1')", false},
		{"NOT STARTSWITH(c.n, '1')", false},
		{"STARTSWITH(c.name, 'W', 1)", false},
		{"CONTAINS(c.name, 'dge')", true},
		{"CONTAINS(c.name, 'DGE', true)", true},
		{"CONTAINS(c.name, 'x')", false},
		{"CONTAINS(c.missing, 'x')", false},
		{"ARRAY_CONTAINS(c.tags, 'b')", true},
		{"ARRAY_CONTAINS(c.tags, 3.0)", true},
		{"ARRAY_CONTAINS(c.tags, 'z')", false},
		{"NOT ARRAY_CONTAINS(c.tags, 'z')", true},
		{"ARRAY_CONTAINS(c.tags, c.obj.a)", false},
		{"ARRAY_CONTAINS(c.nested.arr, c.obj.b)", true},
		{"ARRAY_CONTAINS(c.name, 'W')", false},
		{"NOT ARRAY_CONTAINS(c.name, 'W')", false},
		{"ARRAY_CONTAINS(c.tags, c.missing)", false},
		{"ARRAY_CONTAINS(c.tags, @tag)", true},
		{"ARRAY_CONTAINS(c.tags, c.tags[3])", true},
		{"ARRAY_CONTAINS(c.tags, c.obj, true)", false},
		{"ARRAY_CONTAINS(c.tags, c.tags[3], true)", true},
		{"ARRAY_CONTAINS(c.nested.arr, c.tags[3], true)", false},
		// parameters
		{"c.name = @name", true},
		{"c.n = @ten AND @plain", true},
		{"c.nothing = @nilly", true},
		// literal comparisons
		{"1 = 1.0", true},
		{"'a' < 'b'", true},
	}
	for _, tt := range tests {
		t.Run(tt.where, func(t *testing.T) {
			f, err := ParseCondition("FROM c WHERE " + tt.where)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.Match(doc, params)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Match = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFilterMatchRequiresEveryParameter(t *testing.T) {
	f, err := ParseCondition("FROM c WHERE c.a = 1 OR c.b = @missing")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Match(mustParse(t, `{"a":1}`), map[string]*Value{"@other": Null()})
	if err == nil || !strings.Contains(err.Error(), "@missing") {
		t.Errorf("err = %v, want it to name @missing", err)
	}
}

func TestNilFilterMatchesEverything(t *testing.T) {
	q, err := ParseQuery("SELECT * FROM c")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := q.Where.Match(mustParse(t, `{}`), nil); !ok || err != nil {
		t.Errorf("Match = %v, %v", ok, err)
	}
}
