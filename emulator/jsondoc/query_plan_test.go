package jsondoc

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func planOf(t *testing.T, sql string, params map[string]*Value) (*PlanInfo, error) {
	t.Helper()
	q, err := ParseQuery(sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	p, err := q.Bind(params)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return p.Plan()
}

// The rewritten queries are the gateway's, character for character: the cases come
// from the service's own query plans (the .NET SDK records them as baselines in
// QueryPlanBaselineTests), which the official SDKs' pipelines are written against.
func TestPlanRewritesQueriesAsTheGatewayDoes(t *testing.T) {
	params := map[string]*Value{"@OFFSETCOUNT": Number("42"), "@LIMITCOUNT": Number("1337"), "@TOPCOUNT": Number("42")}
	tests := []struct{ sql, rewritten string }{
		// ORDER BY
		{"SELECT * FROM Root r ORDER BY r.blah",
			"SELECT r._rid, [{\"item\": r.blah}] AS orderByItems, r AS payload\nFROM Root AS r\nWHERE ({documentdb-formattableorderbyquery-filter})\nORDER BY r.blah"},
		{"SELECT * FROM Root r ORDER BY r.key ASC",
			"SELECT r._rid, [{\"item\": r.key}] AS orderByItems, r AS payload\nFROM Root AS r\nWHERE ({documentdb-formattableorderbyquery-filter})\nORDER BY r.key ASC"},
		{"SELECT * FROM Root r ORDER BY r.key DESC",
			"SELECT r._rid, [{\"item\": r.key}] AS orderByItems, r AS payload\nFROM Root AS r\nWHERE ({documentdb-formattableorderbyquery-filter})\nORDER BY r.key DESC"},
		{"SELECT * FROM Root r WHERE r.key IN (1, 2, 3, 4, 5, 6, 7, 8, 9) ORDER BY r.key",
			"SELECT r._rid, [{\"item\": r.key}] AS orderByItems, r AS payload\nFROM Root AS r\nWHERE ((r.key IN (1, 2, 3, 4, 5, 6, 7, 8, 9)) AND ({documentdb-formattableorderbyquery-filter}))\nORDER BY r.key"},
		{"SELECT TOP 10 * FROM Root r ORDER BY r.key",
			"SELECT TOP 10 r._rid, [{\"item\": r.key}] AS orderByItems, r AS payload\nFROM Root AS r\nWHERE ({documentdb-formattableorderbyquery-filter})\nORDER BY r.key"},
		{"SELECT c.blah, c.blah2 FROM Root c ORDER BY c.key",
			"SELECT c._rid, [{\"item\": c.key}] AS orderByItems, {\"blah\": c.blah, \"blah2\": c.blah2} AS payload\nFROM Root AS c\nWHERE ({documentdb-formattableorderbyquery-filter})\nORDER BY c.key"},
		{"SELECT VALUE c.blah FROM Root c ORDER BY c.key",
			"SELECT c._rid, [{\"item\": c.key}] AS orderByItems, c.blah AS payload\nFROM Root AS c\nWHERE (({documentdb-formattableorderbyquery-filter}) AND IS_DEFINED(c.blah))\nORDER BY c.key"},
		{"SELECT TOP 50 r[0] FROM r ORDER BY r.key ASC",
			"SELECT TOP 50 r._rid, [{\"item\": r.key}] AS orderByItems, {\"$1\": r[0]} AS payload\nFROM r\nWHERE ({documentdb-formattableorderbyquery-filter})\nORDER BY r.key ASC"},
		{`SELECT TOP 70 r["a"] FROM Root r ORDER BY r.key DESC`,
			"SELECT TOP 70 r._rid, [{\"item\": r.key}] AS orderByItems, {\"a\": r[\"a\"]} AS payload\nFROM Root AS r\nWHERE ({documentdb-formattableorderbyquery-filter})\nORDER BY r.key DESC"},
		{"SELECT r.field1, r.field2, r. field3 FROM r ORDER BY r.field4",
			"SELECT r._rid, [{\"item\": r.field4}] AS orderByItems, {\"field1\": r.field1, \"field2\": r.field2, \"field3\": r.field3} AS payload\nFROM r\nWHERE ({documentdb-formattableorderbyquery-filter})\nORDER BY r.field4"},
		{"SELECT VALUE r.a FROM r WHERE r.d = true ORDER BY r.b",
			"SELECT r._rid, [{\"item\": r.b}] AS orderByItems, r.a AS payload\nFROM r\nWHERE (((r.d = true) AND ({documentdb-formattableorderbyquery-filter})) AND IS_DEFINED(r.a))\nORDER BY r.b"},
		{"SELECT VALUE 1 FROM r ORDER BY r._ts",
			"SELECT r._rid, [{\"item\": r._ts}] AS orderByItems, 1 AS payload\nFROM r\nWHERE (({documentdb-formattableorderbyquery-filter}) AND IS_DEFINED(1))\nORDER BY r._ts"},
		{"SELECT 1 FROM r ORDER BY r._ts",
			"SELECT r._rid, [{\"item\": r._ts}] AS orderByItems, {\"$1\": 1} AS payload\nFROM r\nWHERE ({documentdb-formattableorderbyquery-filter})\nORDER BY r._ts"},
		{"SELECT DISTINCT VALUE c.blah FROM c ORDER BY c.blah",
			"SELECT DISTINCT c._rid, [{\"item\": c.blah}] AS orderByItems, c.blah AS payload\nFROM c\nWHERE (({documentdb-formattableorderbyquery-filter}) AND IS_DEFINED(c.blah))\nORDER BY c.blah"},

		// TOP, OFFSET … LIMIT, DISTINCT
		{"SELECT TOP 5 * FROM c", ""},
		{"SELECT TOP @TOPCOUNT * FROM c", ""},
		{"SELECT TOP 5 * FROM c WHERE c.blah = 5", ""},
		{"SELECT TOP 0 * FROM c", ""},
		{"SELECT DISTINCT c.blah FROM c", ""},
		{"SELECT DISTINCT TOP 5 VALUE c.name FROM c", "SELECT DISTINCT VALUE c.name\nFROM c"},
		{"SELECT * FROM c OFFSET 1 LIMIT 2", "SELECT *\nFROM c\nOFFSET 0 LIMIT 3"},
		{"SELECT * FROM c OFFSET @OFFSETCOUNT LIMIT @LIMITCOUNT", "SELECT *\nFROM c\nOFFSET 0 LIMIT 1379"},
		{"SELECT * FROM c WHERE c.blah = 5 OFFSET 1 LIMIT 2", "SELECT *\nFROM c\nWHERE (c.blah = 5)\nOFFSET 0 LIMIT 3"},
		{"SELECT * FROM c OFFSET 0 LIMIT 0", "SELECT *\nFROM c\nOFFSET 0 LIMIT 0"},
		{"SELECT c.name FROM c OFFSET 0 LIMIT 10", "SELECT c.name\nFROM c\nOFFSET 0 LIMIT 10"},
		{"SELECT DISTINCT *  FROM c WHERE c.key = 5 OFFSET 1 LIMIT 2", "SELECT DISTINCT *\nFROM c\nWHERE (c.key = 5)"},

		// VALUE aggregates
		{"SELECT VALUE AVG(c.blah) FROM c", "SELECT VALUE [{\"item\": {\"sum\": SUM(c.blah), \"count\": COUNT(c.blah)}}]\nFROM c"},
		{"SELECT VALUE MIN(c.blah) FROM c", "SELECT VALUE [{\"item\": MIN(c.blah), \"item2\": {\"min\": MIN(c.blah), \"count\": COUNT(c.blah)}}]\nFROM c"},
		{"SELECT VALUE MAX(c.blah) FROM c", "SELECT VALUE [{\"item\": MAX(c.blah), \"item2\": {\"max\": MAX(c.blah), \"count\": COUNT(c.blah)}}]\nFROM c"},
		{"SELECT VALUE SUM(c.blah) FROM c", "SELECT VALUE [{\"item\": SUM(c.blah)}]\nFROM c"},
		{"SELECT VALUE COUNT(c.blah) FROM c", "SELECT VALUE [{\"item\": COUNT(c.blah)}]\nFROM c"},
		{"SELECT VALUE COUNT(1) FROM c", "SELECT VALUE [{\"item\": COUNT(1)}]\nFROM c"},
		{"SELECT VALUE MIN(c.blah + 1) FROM c",
			"SELECT VALUE [{\"item\": MIN((c.blah + 1)), \"item2\": {\"min\": MIN((c.blah + 1)), \"count\": COUNT((c.blah + 1))}}]\nFROM c"},
		{"SELECT VALUE MIN(c.blah) FROM c WHERE c.key = 1",
			"SELECT VALUE [{\"item\": MIN(c.blah), \"item2\": {\"min\": MIN(c.blah), \"count\": COUNT(c.blah)}}]\nFROM c\nWHERE (c.key = 1)"},
		{"SELECT TOP 10 VALUE AVG(r.age + 1) FROM Root r",
			"SELECT VALUE [{\"item\": {\"sum\": SUM((r.age + 1)), \"count\": COUNT((r.age + 1))}}]\nFROM Root AS r"},
		{"SELECT VALUE COUNT(1) FROM c WHERE c.key = 5 OFFSET 1 LIMIT 2", "SELECT VALUE [{\"item\": COUNT(1)}]\nFROM c\nWHERE (c.key = 5)"},

		// aggregates without VALUE
		{"SELECT SUM(c.blah) FROM c", "SELECT {\"$1\": {\"item\": SUM(c.blah)}} AS payload\nFROM c"},
		{"SELECT AVG(c.blah) FROM c", "SELECT {\"$1\": {\"item\": {\"sum\": SUM(c.blah), \"count\": COUNT(c.blah)}}} AS payload\nFROM c"},
		{"SELECT MIN(c.blah) as min_blah FROM c",
			"SELECT {\"min_blah\": {\"item\": MIN(c.blah), \"item2\": {\"min\": MIN(c.blah), \"count\": COUNT(c.blah)}}} AS payload\nFROM c"},
		{"SELECT SUM(c.blah) as sum_blah, SUM(c.blah) FROM c",
			"SELECT {\"sum_blah\": {\"item\": SUM(c.blah)}, \"$1\": {\"item\": SUM(c.blah)}} AS payload\nFROM c"},
		{"SELECT COUNT(c.blah), COUNT(c.blah) FROM c",
			"SELECT {\"$1\": {\"item\": COUNT(c.blah)}, \"$2\": {\"item\": COUNT(c.blah)}} AS payload\nFROM c"},

		// GROUP BY
		{"SELECT VALUE c.age FROM c GROUP BY c.age", "SELECT [{\"item\": c.age}] AS groupByItems, c.age AS payload\nFROM c\nGROUP BY c.age"},
		{`SELECT VALUE {"age": c.age} FROM c GROUP BY {"age": c.age}`,
			"SELECT [{\"item\": {\"age\": c.age}}] AS groupByItems, {\"age\": c.age} AS payload\nFROM c\nGROUP BY {\"age\": c.age}"},
		{`SELECT VALUE {"age": c.age} FROM c GROUP BY c.age`,
			"SELECT [{\"item\": c.age}] AS groupByItems, {\"age\": c.age} AS payload\nFROM c\nGROUP BY c.age"},
		{"SELECT VALUE AVG(c.age) FROM c GROUP BY c.age",
			"SELECT [{\"item\": c.age}] AS groupByItems, [{\"item\": {\"sum\": SUM(c.age), \"count\": COUNT(c.age)}}] AS payload\nFROM c\nGROUP BY c.age"},
		{"SELECT VALUE COUNT(1) FROM c GROUP BY c.age", "SELECT [{\"item\": c.age}] AS groupByItems, [{\"item\": COUNT(1)}] AS payload\nFROM c\nGROUP BY c.age"},
		{"SELECT c.age, c.name FROM c GROUP BY c.age, c.name",
			"SELECT [{\"item\": c.age}, {\"item\": c.name}] AS groupByItems, {\"age\": c.age, \"name\": c.name} AS payload\nFROM c\nGROUP BY c.age, c.name"},
		{"SELECT c.team, c.name, COUNT(1) AS count, AVG(c.age) AS avg_age, MIN(c.age) AS min_age, MAX(c.age) AS max_age FROM c GROUP BY c.team, c.name",
			"SELECT [{\"item\": c.team}, {\"item\": c.name}] AS groupByItems, {\"team\": c.team, \"name\": c.name, \"count\": {\"item\": COUNT(1)}, \"avg_age\": {\"item\": {\"sum\": SUM(c.age), \"count\": COUNT(c.age)}}, \"min_age\": {\"item\": MIN(c.age), \"item2\": {\"min\": MIN(c.age), \"count\": COUNT(c.age)}}, \"max_age\": {\"item\": MAX(c.age), \"item2\": {\"max\": MAX(c.age), \"count\": COUNT(c.age)}}} AS payload\nFROM c\nGROUP BY c.team, c.name"},
		{"SELECT UPPER(c.name) AS name, SUBSTRING(c.address.city, 0, 3) AS city, Avg(c.income) AS income FROM c GROUP BY UPPER(c.name), SUBSTRING(c.address.city, 0, 3)",
			"SELECT [{\"item\": UPPER(c.name)}, {\"item\": SUBSTRING(c.address.city, 0, 3)}] AS groupByItems, {\"name\": UPPER(c.name), \"city\": SUBSTRING(c.address.city, 0, 3), \"income\": {\"item\": {\"sum\": SUM(c.income), \"count\": COUNT(c.income)}}} AS payload\nFROM c\nGROUP BY UPPER(c.name), SUBSTRING(c.address.city, 0, 3)"},
		{"SELECT c.name FROM c WHERE c.key = 5 GROUP BY c.name OFFSET 1 LIMIT 2",
			"SELECT [{\"item\": c.name}] AS groupByItems, {\"name\": c.name} AS payload\nFROM c\nWHERE (c.key = 5)\nGROUP BY c.name"},
		{"SELECT TOP 5 VALUE c.name FROM c GROUP BY c.name", "SELECT [{\"item\": c.name}] AS groupByItems, c.name AS payload\nFROM c\nGROUP BY c.name"},

		// queries that run as they are
		{"SELECT * FROM c", ""},
		{"SELECT c.a, UPPER(c.b) AS b FROM c WHERE c.n > @TOPCOUNT", ""},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			info, err := planOf(t, tt.sql, params)
			if err != nil {
				t.Fatal(err)
			}
			if info.RewrittenQuery != tt.rewritten {
				t.Errorf("rewrittenQuery\n got %q\nwant %q", info.RewrittenQuery, tt.rewritten)
			}
		})
	}
}

func TestPlanDescribesTheQuery(t *testing.T) {
	str := func(s string) *string { return &s }
	n := func(i int) *int { return &i }
	tests := []struct {
		sql  string
		want PlanInfo
	}{
		{"SELECT * FROM c ORDER BY c.a DESC, c.b", PlanInfo{DistinctType: "None",
			OrderBy: []string{"Descending", "Ascending"}, OrderByExpressions: []string{"c.a", "c.b"}}},
		{"SELECT TOP 3 VALUE c.a FROM c", PlanInfo{DistinctType: "None", Top: n(3), HasSelectValue: true}},
		{"SELECT * FROM c OFFSET 4 LIMIT 5", PlanInfo{DistinctType: "None", Offset: n(4), Limit: n(5)}},
		{"SELECT DISTINCT VALUE c.a FROM c", PlanInfo{DistinctType: "Unordered", HasSelectValue: true}},
		{"SELECT DISTINCT VALUE c.a FROM c ORDER BY c.a", PlanInfo{DistinctType: "Ordered", HasSelectValue: true,
			OrderBy: []string{"Ascending"}, OrderByExpressions: []string{"c.a"}}},
		{"SELECT DISTINCT c.a, c.b FROM c ORDER BY c.b, c.a", PlanInfo{DistinctType: "Ordered",
			OrderBy: []string{"Ascending", "Ascending"}, OrderByExpressions: []string{"c.b", "c.a"}}},
		{"SELECT DISTINCT c.a FROM c ORDER BY c.b", PlanInfo{DistinctType: "Unordered",
			OrderBy: []string{"Ascending"}, OrderByExpressions: []string{"c.b"}}},
		{"SELECT VALUE MAX(c.a) FROM c", PlanInfo{DistinctType: "None", Aggregates: []string{"Max"}, HasSelectValue: true}},
		{"SELECT COUNT(1) AS n, AVG(c.a) FROM c", PlanInfo{DistinctType: "None", GroupByAliases: []string{"n", "$1"},
			GroupByAliasToAggregateType: map[string]*string{"n": str("Count"), "$1": str("Average")}}},
		{"SELECT c.g, SUM(c.a) AS s FROM c GROUP BY c.g", PlanInfo{DistinctType: "None", GroupByExpressions: []string{"c.g"},
			GroupByAliases: []string{"g", "s"}, GroupByAliasToAggregateType: map[string]*string{"g": nil, "s": str("Sum")}}},
		{"SELECT VALUE MIN(c.a) FROM c GROUP BY c.g", PlanInfo{DistinctType: "None", GroupByExpressions: []string{"c.g"},
			Aggregates: []string{"Min"}, HasSelectValue: true}},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			got, err := planOf(t, tt.sql, nil)
			if err != nil {
				t.Fatal(err)
			}
			got.RewrittenQuery = ""
			want := tt.want
			for _, l := range []*[]string{&want.OrderBy, &want.OrderByExpressions, &want.GroupByExpressions, &want.GroupByAliases, &want.Aggregates} {
				if *l == nil {
					*l = []string{}
				}
			}
			if want.GroupByAliasToAggregateType == nil {
				want.GroupByAliasToAggregateType = map[string]*string{}
			}
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("plan\n got %+v\nwant %+v", *got, want)
			}
		})
	}
}

func TestPlanRefusesWhatNoPipelineCanMerge(t *testing.T) {
	for _, sql := range []string{
		"SELECT VALUE COUNT(1) + 1 FROM c",
		"SELECT ABS(AVG(c.n)) AS a FROM c",
		`SELECT VALUE {"n": COUNT(1)} FROM c`,
		"SELECT COUNT(1) AS n, 'x' AS k FROM c",
	} {
		t.Run(sql, func(t *testing.T) {
			_, err := planOf(t, sql, nil)
			if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "across partitions") {
				t.Errorf("err = %v, want an unsupported error naming the cross-partition limit", err)
			}
		})
	}
}

func TestFeaturesNameWhatTheQueryNeeds(t *testing.T) {
	tests := []struct {
		sql  string
		want []string
	}{
		{"SELECT * FROM c WHERE c.a = 1", nil},
		{"SELECT VALUE COUNT(1) FROM c", []string{"Aggregate"}},
		{"SELECT COUNT(1) AS n FROM c", []string{"NonValueAggregate"}},
		{"SELECT c.g, COUNT(1) AS n FROM c GROUP BY c.g", []string{"GroupBy"}},
		{"SELECT DISTINCT TOP 3 c.a FROM c ORDER BY c.a, c.b", []string{"Distinct", "MultipleOrderBy", "OrderBy", "Top"}},
		{"SELECT * FROM c OFFSET 1 LIMIT 1", []string{"OffsetAndLimit"}},
	}
	for _, tt := range tests {
		q, err := ParseQuery(tt.sql)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.Features(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Features = %v, want %v", tt.sql, got, tt.want)
		}
		if q.NeedsPlan() != (len(tt.want) > 0) {
			t.Errorf("%s: NeedsPlan = %v", tt.sql, q.NeedsPlan())
		}
	}
}
