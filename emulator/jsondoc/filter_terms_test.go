package jsondoc

import (
	"fmt"
	"strings"
	"testing"
)

// termString renders a term for comparison: path, kind, conjunct, expression.
func termString(t FilterTerm) string {
	var path []string
	for _, s := range t.Path {
		if s.IsIndex {
			path = append(path, fmt.Sprint(s.Index))
		} else {
			path = append(path, s.Name)
		}
	}
	kind := map[TermKind]string{TermEquality: "eq", TermRange: "range", TermFunction: "fn"}[t.Kind]
	if t.Elements {
		kind += "[]"
	}
	where := "nested"
	if t.Conjunct {
		where = "and"
	}
	return fmt.Sprintf("/%s %s %s %s", strings.Join(path, "/"), kind, where, t.Expression)
}

func TestFilterTermsAreTheIndexableTermsOfTheWhereClause(t *testing.T) {
	params := map[string]*Value{"@name": String("Julien"), "@lo": Number("12"), "@pre": String("a")}
	cases := []struct {
		name string
		sql  string
		want []string
	}{
		{"no WHERE, no terms", "SELECT * FROM c", nil},
		{"an equality and a range, as the service writes them", `SELECT * FROM c WHERE c.name = "Julien" AND c.age > 12`,
			[]string{`/name eq and (ROOT.name = "Julien")`, `/age range and (ROOT.age > 12)`}},
		{"parameters are rendered as their values", "SELECT * FROM root r WHERE r.name = @name AND r.age >= @lo",
			[]string{`/name eq and (ROOT.name = "Julien")`, `/age range and (ROOT.age >= 12)`}},
		{"a constant on the left keeps its place", "SELECT * FROM c WHERE 5 < c.n",
			[]string{`/n range and (5 < ROOT.n)`}},
		{"!= is a range, as composite indexes count it", "SELECT * FROM c WHERE c.s != 'x'",
			[]string{`/s range and (ROOT.s != "x")`}},
		{"IN is an equality, BETWEEN a range", "SELECT * FROM c WHERE c.cat IN ('a', 'b') AND c.n BETWEEN 1 AND 1 + 4",
			[]string{`/cat eq and (ROOT.cat IN ("a", "b"))`, `/n range and (ROOT.n BETWEEN 1 AND 5)`}},
		{"index-served functions on a path", "SELECT * FROM c WHERE STARTSWITH(c.s, @pre) AND IS_DEFINED(c.o.k) AND ARRAY_CONTAINS(c.t, 'b')",
			[]string{`/s fn and STARTSWITH(ROOT.s, "a")`, `/o/k fn and IS_DEFINED(ROOT.o.k)`, `/t fn[] and ARRAY_CONTAINS(ROOT.t, "b")`}},
		{"nested paths, array indexes and odd names", `SELECT * FROM c WHERE c.a.b = 1 AND c.t[0] = 'x' AND c["odd key"] = true`,
			[]string{`/a/b eq and (ROOT.a.b = 1)`, `/t/0 eq and (ROOT.t[0] = "x")`, `/odd key eq and (ROOT["odd key"] = true)`}},
		{"terms under OR and NOT are not conjuncts", "SELECT * FROM c WHERE c.a = 1 AND (c.b = 2 OR NOT (c.c < 3))",
			[]string{`/a eq and (ROOT.a = 1)`, `/b eq nested (ROOT.b = 2)`, `/c range nested (ROOT.c < 3)`}},
		{"comparisons of two paths, of computed values and other functions are not terms",
			"SELECT * FROM c WHERE c.a = c.b AND LOWER(c.s) = 'x' AND c.n + 1 > 2 AND (c.f ? c.g : 1) = 1 AND c.x = 1",
			[]string{`/x eq and (ROOT.x = 1)`}},
		{"a dynamic step is not a path the index knows", "SELECT * FROM c WHERE c[@name] = 1 AND c.t[c.i] = 2", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := ParseQuery(c.sql)
			if err != nil {
				t.Fatal(err)
			}
			p, err := q.Bind(params)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, term := range p.FilterTerms() {
				got = append(got, termString(term))
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("%s\n got  %q\n want %q", c.sql, got, c.want)
			}
		})
	}
}

func TestOrderByListsThePathsAndDirections(t *testing.T) {
	q, err := ParseQuery(`SELECT * FROM c ORDER BY c.a.b DESC, c["x y"], c.t[1] ASC`)
	if err != nil {
		t.Fatal(err)
	}
	p, err := q.Bind(nil)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(p.OrderBy())
	want := "[{[{a 0 false} {b 0 false}] true} {[{x y 0 false}] false} {[{t 0 false} { 1 true}] false}]"
	if got != want {
		t.Errorf("OrderBy() = %s, want %s", got, want)
	}
	q, _ = ParseQuery("SELECT * FROM c")
	p, _ = q.Bind(nil)
	if len(p.OrderBy()) != 0 {
		t.Errorf("a query without ORDER BY has items %v", p.OrderBy())
	}
}
