package query

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
)

// genDocs makes n documents with values of every type at "k" (some missing), small
// numbers with many ties at "n", a few groups at "g", strings at "s", and a sometimes
// non-numeric "x".
func genDocs(rng *rand.Rand, n int) []fdoc {
	docs := make([]fdoc, n)
	for i := range docs {
		body := map[string]any{"id": fmt.Sprintf("d%d", i), "n": rng.Intn(12), "g": fmt.Sprintf("g%d", rng.Intn(5)), "s": fmt.Sprintf("s%02d", rng.Intn(30)), "x": rng.Intn(100)}
		switch rng.Intn(8) {
		case 0: // k missing: undefined
		case 1:
			body["k"] = nil
		case 2:
			body["k"] = rng.Intn(2) == 0
		case 3, 4:
			body["k"] = float64(rng.Intn(20)) / 2
		default:
			body["k"] = fmt.Sprintf("v%d", rng.Intn(15))
		}
		raw, _ := json.Marshal(body)
		docs[i] = fdoc{rid: fmt.Sprintf("r%06d", i), epk: fmt.Sprintf("%08X", rng.Uint32()), body: body, raw: raw}
	}
	return docs
}

// qcase is a query form: its plan, how each range of the fake service answers the
// per-range query, and what the whole query returns, evaluated in memory over all the
// documents.
type qcase struct {
	name    string
	plan    string
	sorts   []bool
	rows    func(docs []fdoc) []frow
	partial func(docs []fdoc) []json.RawMessage
	// want is the in-memory evaluation.
	want func(docs []fdoc) []json.RawMessage
	// check: "ordered" (sorted by keyOf, same items), "prefix" (the sort values of want,
	// items among want's candidates: TOP and LIMIT cut ties arbitrarily), "set" (same
	// items in any order), "some" (that many distinct items among want's).
	check string
	keyOf func(item json.RawMessage) []value
	// pool are the items "prefix" and "some" may return.
	pool func(docs []fdoc) []json.RawMessage
	n    int // for "some"
}

func orderRow(d fdoc, payload any, paths ...string) frow {
	var vals []value
	for _, p := range paths {
		vals = append(vals, mustValue(d.get(p)))
	}
	raw, _ := json.Marshal(map[string]any{"_rid": d.rid, "orderByItems": rowJSON(vals), "payload": payload})
	return frow{key: vals, rid: d.rid, raw: raw}
}

func docKey(paths ...string) func(json.RawMessage) []value {
	return func(item json.RawMessage) []value {
		var m map[string]any
		json.Unmarshal(item, &m)
		var vals []value
		for _, p := range paths {
			v, ok := m[p]
			vals = append(vals, mustValue(v, ok))
		}
		return vals
	}
}

func sortedDocs(docs []fdoc, s sorter, paths ...string) []fdoc {
	type keyed struct {
		d   fdoc
		key []value
	}
	ks := make([]keyed, len(docs))
	for i, d := range docs {
		ks[i] = keyed{d, docKey(paths...)(d.raw)}
	}
	sort.SliceStable(ks, func(i, j int) bool { return s.compare(ks[i].key, ks[j].key) < 0 })
	out := make([]fdoc, len(docs))
	for i, k := range ks {
		out[i] = k.d
	}
	return out
}

func raws(docs []fdoc) []json.RawMessage {
	out := make([]json.RawMessage, len(docs))
	for i, d := range docs {
		out[i] = d.raw
	}
	return out
}

func numberOf(d fdoc, path string) (float64, bool) {
	v, ok := d.body[path]
	if !ok {
		return 0, false
	}
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

const orderByPlan = `{"partitionedQueryExecutionInfoVersion":2,"queryInfo":{"distinctType":"%s","top":%s,"offset":%s,"limit":%s,"orderBy":%s,"orderByExpressions":["c.k"],"groupByExpressions":[],"groupByAliases":[],"aggregates":[],"groupByAliasToAggregateType":{},"rewrittenQuery":"SELECT c._rid, [{\"item\": c.k}] AS orderByItems, c AS payload FROM c WHERE ({documentdb-formattableorderbyquery-filter}) ORDER BY c.k","hasSelectValue":false,"dCountInfo":null},"queryRanges":[{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}]}`

func obPlan(distinct, top, offset, limit, orderBy string) string {
	return fmt.Sprintf(orderByPlan, distinct, top, offset, limit, orderBy)
}

const simplePlan = `{"partitionedQueryExecutionInfoVersion":2,"queryInfo":{"distinctType":"None","top":null,"offset":null,"limit":null,"orderBy":[],"orderByExpressions":[],"groupByExpressions":[],"groupByAliases":[],"aggregates":[],"groupByAliasToAggregateType":{},"rewrittenQuery":"","hasSelectValue":false,"dCountInfo":null},"queryRanges":[{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}]}`

func aggPlan(value bool, aggregates, groupBy, aliases, types, rewritten string, dcount string) string {
	return fmt.Sprintf(`{"partitionedQueryExecutionInfoVersion":2,"queryInfo":{"distinctType":"%s","top":null,"offset":null,"limit":null,"orderBy":[],"orderByExpressions":[],"groupByExpressions":%s,"groupByAliases":%s,"aggregates":%s,"groupByAliasToAggregateType":%s,"rewrittenQuery":%q,"hasSelectValue":%v,"dCountInfo":%s},"queryRanges":[{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}]}`,
		map[bool]string{true: "Unordered", false: "None"}[dcount != "null"], groupBy, aliases, aggregates, types, rewritten, value, dcount)
}

func valueAgg(item any) json.RawMessage { return jsonOf([]any{map[string]any{"item": item}}) }

func allCases() []qcase {
	asc, desc := []bool{false}, []bool{true}
	byK := func(s []bool) func([]fdoc) []frow {
		return func(docs []fdoc) []frow {
			var out []frow
			for _, d := range docs {
				out = append(out, orderRow(d, d.body, "k"))
			}
			return out
		}
	}
	wantSorted := func(s []bool, paths ...string) func([]fdoc) []json.RawMessage {
		return func(docs []fdoc) []json.RawMessage { return raws(sortedDocs(docs, sorter{desc: s}, paths...)) }
	}
	multi := []bool{true, false}
	cases := []qcase{
		{
			name: "parallel: a filter across partitions", plan: simplePlan, check: "set",
			rows: func(docs []fdoc) []frow {
				var out []frow
				for _, d := range docs {
					if d.body["n"].(int)%3 == 0 {
						out = append(out, frow{rid: d.rid, raw: d.raw})
					}
				}
				return out
			},
			want: func(docs []fdoc) []json.RawMessage {
				var out []json.RawMessage
				for _, d := range docs {
					if d.body["n"].(int)%3 == 0 {
						out = append(out, d.raw)
					}
				}
				return out
			},
		},
		{name: "ORDER BY ascending over mixed types", plan: obPlan("None", "null", "null", "null", `["Ascending"]`), sorts: asc, rows: byK(asc), want: wantSorted(asc, "k"), check: "ordered", keyOf: docKey("k")},
		{name: "ORDER BY descending over mixed types", plan: obPlan("None", "null", "null", "null", `["Descending"]`), sorts: desc, rows: byK(desc), want: wantSorted(desc, "k"), check: "ordered", keyOf: docKey("k")},
		{
			name: "ORDER BY two paths (n DESC, s ASC)", plan: obPlan("None", "null", "null", "null", `["Descending","Ascending"]`), sorts: multi, check: "ordered", keyOf: docKey("n", "s"),
			rows: func(docs []fdoc) []frow {
				var out []frow
				for _, d := range docs {
					out = append(out, orderRow(d, d.body, "n", "s"))
				}
				return out
			},
			want: wantSorted(multi, "n", "s"),
		},
		{name: "ORDER BY with TOP", plan: obPlan("None", "7", "null", "null", `["Ascending"]`), sorts: asc, rows: byK(asc), check: "prefix", keyOf: docKey("k"),
			want: func(docs []fdoc) []json.RawMessage { return wantSorted(asc, "k")(docs)[:min(7, len(docs))] }, pool: func(d []fdoc) []json.RawMessage { return raws(d) }},
		{name: "ORDER BY with OFFSET and LIMIT", plan: obPlan("None", "null", "5", "10", `["Descending"]`), sorts: desc, rows: byK(desc), check: "prefix", keyOf: docKey("k"),
			want: func(docs []fdoc) []json.RawMessage {
				all := wantSorted(desc, "k")(docs)
				return all[min(5, len(all)):min(15, len(all))]
			}, pool: func(d []fdoc) []json.RawMessage { return raws(d) }},
		{name: "TOP without ORDER BY", plan: `{"queryInfo":{"distinctType":"None","top":9,"orderBy":[],"aggregates":[],"groupByExpressions":[],"groupByAliasToAggregateType":{},"rewrittenQuery":""},"queryRanges":[{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}]}`,
			rows: func(docs []fdoc) []frow {
				var out []frow
				for _, d := range docs {
					out = append(out, frow{rid: d.rid, raw: d.raw})
				}
				return out
			}, check: "some", n: 9, want: func(d []fdoc) []json.RawMessage { return raws(d) }, pool: func(d []fdoc) []json.RawMessage { return raws(d) }},
		{
			name: "DISTINCT (unordered) VALUE", plan: `{"queryInfo":{"distinctType":"Unordered","orderBy":[],"aggregates":[],"groupByExpressions":[],"groupByAliasToAggregateType":{},"rewrittenQuery":"SELECT DISTINCT VALUE c.g FROM c"},"queryRanges":[{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}]}`,
			check: "set",
			rows: func(docs []fdoc) []frow {
				seen := map[string]bool{}
				var out []frow
				for _, d := range docs {
					g := d.body["g"].(string)
					if !seen[g] {
						seen[g] = true
						out = append(out, frow{rid: d.rid, raw: jsonOf(g)})
					}
				}
				return out
			},
			want: func(docs []fdoc) []json.RawMessage {
				seen := map[string]bool{}
				var out []json.RawMessage
				for _, d := range docs {
					if g := d.body["g"].(string); !seen[g] {
						seen[g] = true
						out = append(out, jsonOf(g))
					}
				}
				return out
			},
		},
		{
			name: "DISTINCT (ordered) VALUE with ORDER BY", plan: `{"queryInfo":{"distinctType":"Ordered","orderBy":["Ascending"],"orderByExpressions":["c.n"],"aggregates":[],"groupByExpressions":[],"groupByAliasToAggregateType":{},"rewrittenQuery":"SELECT DISTINCT [{\"item\": c.n}] AS orderByItems, c.n AS payload FROM c WHERE ({documentdb-formattableorderbyquery-filter}) ORDER BY c.n"},"queryRanges":[{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}]}`,
			sorts: asc, check: "ordered", keyOf: func(item json.RawMessage) []value { v, _ := parseValue(item); return []value{v} },
			rows: func(docs []fdoc) []frow {
				seen := map[int]bool{}
				var out []frow
				for _, d := range docs {
					n := d.body["n"].(int)
					if !seen[n] {
						seen[n] = true
						v := mustValue(n, true)
						raw := jsonOf(map[string]any{"orderByItems": rowJSON([]value{v}), "payload": n})
						out = append(out, frow{key: []value{v}, rid: fmt.Sprintf("n%03d", n), raw: raw})
					}
				}
				return out
			},
			want: func(docs []fdoc) []json.RawMessage {
				seen := map[int]bool{}
				var ns []int
				for _, d := range docs {
					if n := d.body["n"].(int); !seen[n] {
						seen[n] = true
						ns = append(ns, n)
					}
				}
				sort.Ints(ns)
				var out []json.RawMessage
				for _, n := range ns {
					out = append(out, jsonOf(n))
				}
				return out
			},
		},
	}
	cases = append(cases, aggregateCases()...)
	return cases
}

func aggregateCases() []qcase {
	count := func(docs []fdoc) int { return len(docs) }
	sum := func(docs []fdoc, path string) (float64, bool) {
		s := 0.0
		for _, d := range docs {
			n, ok := numberOf(d, path)
			if !ok {
				return 0, false
			}
			s += n
		}
		return s, true
	}
	minmax := func(docs []fdoc, path string, max bool) (value, bool) {
		var best value
		has := false
		for _, d := range docs {
			v := mustValue(d.get(path))
			if v.k == kindUndefined {
				continue
			}
			if !has || (compareValues(v, best) > 0) == max && compareValues(v, best) != 0 {
				best, has = v, true
			}
		}
		return best, has
	}
	single := func(v json.RawMessage) []json.RawMessage {
		if v == nil {
			return []json.RawMessage{}
		}
		return []json.RawMessage{v}
	}
	groups := func(docs []fdoc) map[string][]fdoc {
		m := map[string][]fdoc{}
		for _, d := range docs {
			g := d.body["g"].(string)
			m[g] = append(m[g], d)
		}
		return m
	}
	var cases []qcase
	cases = append(cases,
		qcase{name: "SELECT VALUE COUNT(1)", check: "set",
			plan:    aggPlan(true, `["Count"]`, `[]`, `[]`, `{}`, `SELECT VALUE [{"item": COUNT(1)}] FROM c`, "null"),
			partial: func(docs []fdoc) []json.RawMessage { return []json.RawMessage{valueAgg(count(docs))} },
			want:    func(docs []fdoc) []json.RawMessage { return single(jsonOf(count(docs))) }},
		qcase{name: "SELECT VALUE SUM(c.x)", check: "set",
			plan: aggPlan(true, `["Sum"]`, `[]`, `[]`, `{}`, `SELECT VALUE [{"item": SUM(c.x)}] FROM c`, "null"),
			partial: func(docs []fdoc) []json.RawMessage {
				s, _ := sum(docs, "x")
				return []json.RawMessage{valueAgg(s)}
			},
			want: func(docs []fdoc) []json.RawMessage { s, _ := sum(docs, "x"); return single(jsonOf(s)) }},
		qcase{name: "SELECT VALUE SUM of a non-number is undefined", check: "set",
			plan: aggPlan(true, `["Sum"]`, `[]`, `[]`, `{}`, `SELECT VALUE [{"item": SUM(c.k)}] FROM c`, "null"),
			partial: func(docs []fdoc) []json.RawMessage {
				if s, ok := sum(docs, "k"); ok {
					return []json.RawMessage{valueAgg(s)}
				}
				return []json.RawMessage{json.RawMessage(`[{}]`)}
			},
			want: func(docs []fdoc) []json.RawMessage {
				if s, ok := sum(docs, "k"); ok {
					return single(jsonOf(s))
				}
				return []json.RawMessage{}
			}},
		qcase{name: "SELECT VALUE MIN over mixed types ({min, count} partials)", check: "set",
			plan: aggPlan(true, `["Min"]`, `[]`, `[]`, `{}`, `SELECT VALUE [{"item": {"min": MIN(c.k), "count": COUNT(c.k)}}] FROM c`, "null"),
			partial: func(docs []fdoc) []json.RawMessage {
				v, ok := minmax(docs, "k", false)
				p := map[string]any{"count": 0}
				if ok {
					p = map[string]any{"min": json.RawMessage(v.raw), "count": len(docs)}
				}
				return []json.RawMessage{valueAgg(p)}
			},
			want: func(docs []fdoc) []json.RawMessage {
				if v, ok := minmax(docs, "k", false); ok {
					return single(v.raw)
				}
				return []json.RawMessage{}
			}},
		qcase{name: "SELECT VALUE MAX (raw partials)", check: "set",
			plan: aggPlan(true, `["Max"]`, `[]`, `[]`, `{}`, `SELECT VALUE [{"item": MAX(c.k)}] FROM c`, "null"),
			partial: func(docs []fdoc) []json.RawMessage {
				if v, ok := minmax(docs, "k", true); ok {
					return []json.RawMessage{valueAgg(json.RawMessage(v.raw))}
				}
				return []json.RawMessage{json.RawMessage(`[{}]`)}
			},
			want: func(docs []fdoc) []json.RawMessage {
				if v, ok := minmax(docs, "k", true); ok {
					return single(v.raw)
				}
				return []json.RawMessage{}
			}},
		qcase{name: "SELECT VALUE AVG(c.x)", check: "set",
			plan: aggPlan(true, `["Average"]`, `[]`, `[]`, `{}`, `SELECT VALUE [{"item": {"sum": SUM(c.x), "count": COUNT(c.x)}}] FROM c`, "null"),
			partial: func(docs []fdoc) []json.RawMessage {
				s, _ := sum(docs, "x")
				return []json.RawMessage{valueAgg(map[string]any{"sum": s, "count": len(docs)})}
			},
			want: func(docs []fdoc) []json.RawMessage {
				if len(docs) == 0 {
					return []json.RawMessage{}
				}
				s, _ := sum(docs, "x")
				return single(json.RawMessage(formatNumber(s / float64(len(docs)))))
			}},
		qcase{name: "non-value aggregates (COUNT, SUM, MIN, MAX, AVG AS aliases)", check: "set",
			plan: aggPlan(false, `["Count","Sum","Min","Max","Average"]`, `[]`, `["n","s","lo","hi","a"]`, `{"n":"Count","s":"Sum","lo":"Min","hi":"Max","a":"Average"}`, `SELECT {"n": {"item": COUNT(1)}, …} AS payload FROM c`, "null"),
			partial: func(docs []fdoc) []json.RawMessage {
				s, _ := sum(docs, "n")
				p := map[string]any{"n": map[string]any{"item": len(docs)}, "s": map[string]any{"item": s}, "a": map[string]any{"item": map[string]any{"sum": s, "count": len(docs)}}, "lo": map[string]any{}, "hi": map[string]any{}}
				if v, ok := minmax(docs, "s", false); ok {
					p["lo"] = map[string]any{"item": json.RawMessage(v.raw)}
				}
				if v, ok := minmax(docs, "n", true); ok {
					p["hi"] = map[string]any{"item": json.RawMessage(v.raw)}
				}
				return []json.RawMessage{jsonOf(map[string]any{"groupByItems": []any{}, "payload": p})}
			},
			want: func(docs []fdoc) []json.RawMessage {
				s, _ := sum(docs, "n")
				out := fmt.Sprintf(`{"n":%d,"s":%s`, len(docs), formatNumber(s))
				if v, ok := minmax(docs, "s", false); ok {
					out += `,"lo":` + string(v.raw)
				}
				if v, ok := minmax(docs, "n", true); ok {
					out += `,"hi":` + string(v.raw)
				}
				if len(docs) > 0 {
					out += `,"a":` + formatNumber(s/float64(len(docs)))
				}
				return []json.RawMessage{json.RawMessage(out + "}")}
			}},
		qcase{name: "GROUP BY with COUNT and MAX", check: "set",
			plan: aggPlan(false, `["Count","Max"]`, `["c.g"]`, `["g","cnt","mx"]`, `{"g":null,"cnt":"Count","mx":"Max"}`, `SELECT [{"item": c.g}] AS groupByItems, {"g": c.g, "cnt": {"item": COUNT(1)}, "mx": {"item": MAX(c.x)}} AS payload FROM c GROUP BY c.g`, "null"),
			partial: func(docs []fdoc) []json.RawMessage {
				var out []json.RawMessage
				for g, ds := range groups(docs) {
					v, _ := minmax(ds, "x", true)
					out = append(out, jsonOf(map[string]any{"groupByItems": []any{map[string]any{"item": g}}, "payload": map[string]any{"g": g, "cnt": map[string]any{"item": len(ds)}, "mx": map[string]any{"item": json.RawMessage(v.raw)}}}))
				}
				return out
			},
			want: func(docs []fdoc) []json.RawMessage {
				var out []json.RawMessage
				for g, ds := range groups(docs) {
					v, _ := minmax(ds, "x", true)
					out = append(out, json.RawMessage(fmt.Sprintf(`{"g":%q,"cnt":%d,"mx":%s}`, g, len(ds), v.raw)))
				}
				return out
			}},
		qcase{name: "GROUP BY with SELECT VALUE COUNT", check: "set",
			plan: aggPlan(true, `["Count"]`, `["c.g"]`, `[]`, `{}`, `SELECT [{"item": c.g}] AS groupByItems, [{"item": COUNT(1)}] AS payload FROM c GROUP BY c.g`, "null"),
			partial: func(docs []fdoc) []json.RawMessage {
				var out []json.RawMessage
				for g, ds := range groups(docs) {
					out = append(out, jsonOf(map[string]any{"groupByItems": []any{map[string]any{"item": g}}, "payload": []any{map[string]any{"item": len(ds)}}}))
				}
				return out
			},
			want: func(docs []fdoc) []json.RawMessage {
				var out []json.RawMessage
				for _, ds := range groups(docs) {
					out = append(out, jsonOf(len(ds)))
				}
				return out
			}},
		qcase{name: "DCount: SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.g)", check: "set",
			plan: aggPlan(false, `[]`, `[]`, `[]`, `{}`, `SELECT DISTINCT VALUE c.g FROM c`, `{"dCountAlias":""}`),
			partial: func(docs []fdoc) []json.RawMessage {
				var out []json.RawMessage
				for g := range groups(docs) {
					out = append(out, jsonOf(g))
				}
				return out
			},
			want: func(docs []fdoc) []json.RawMessage { return []json.RawMessage{jsonOf(len(groups(docs)))} }},
	)
	return cases
}
