package querycorpus_test

import (
	"strings"
)

// compositeIndexes are the container's composite indexes: one per multi-item ORDER BY
// of the corpus, as a real container needs
// (https://learn.microsoft.com/azure/cosmos-db/index-policy#composite-indexes).
var compositeIndexes = [][][2]string{
	{{"/cat", "ascending"}, {"/n", "descending"}},
	{{"/flag", "descending"}, {"/id", "ascending"}},
	{{"/n", "ascending"}, {"/x", "ascending"}},
	{{"/cat", "ascending"}, {"/s", "descending"}},
	{{"/color", "ascending"}, {"/n", "ascending"}, {"/id", "ascending"}},
}

// key is an ORDER BY of document paths.
func key(paths ...[]any) func(doc) []any {
	return func(d doc) []any {
		out := make([]any, len(paths))
		for i, p := range paths {
			out[i] = get(d, p...)
		}
		return out
	}
}

func at(p ...any) []any { return p }

// corpus is every query with its answer. Sections name the Learn page each construct
// follows.
func corpus() []entry {
	g := get
	var c []entry
	add := func(es ...entry) { c = append(c, es...) }

	// ---- SELECT: projections, aliases, VALUE, undefined left out
	// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/select)
	add(
		q("SELECT * FROM c", func(ds []doc) expect { return set(ds, nil, all(ds)) }),
		q("SELECT c.id, c.s FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any { return obj("id", g(d, "id"), "s", g(d, "s")) })
		}),
		q("SELECT c.id AS ident, c.addr.city AS city, c.addr.geo.lat AS lat FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any {
				return obj("ident", g(d, "id"), "city", g(d, "addr", "city"), "lat", g(d, "addr", "geo", "lat"))
			})
		}),
		q("SELECT c.addr.geo.lon, c.meta.level.deep FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any { return obj("lon", g(d, "addr", "geo", "lon"), "deep", g(d, "meta", "level", "deep")) })
		}),
		q("SELECT VALUE c.addr FROM c", func(ds []doc) expect { return set(ds, nil, path("addr")) }),
		q("SELECT VALUE c.x FROM c", func(ds []doc) expect { return set(ds, nil, path("x")) }),
		q("SELECT VALUE c.k FROM c", func(ds []doc) expect { return set(ds, nil, path("k")) }),
		q(`SELECT VALUE {"i": c.id, "k": c.k, "first": c.tags[0]} FROM c`, func(ds []doc) expect {
			return set(ds, nil, func(d doc) any { return obj("i", g(d, "id"), "k", g(d, "k"), "first", g(d, "tags", 0)) })
		}),
		q("SELECT VALUE [c.id, c.n, c.flag] FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any { return arr(g(d, "id"), g(d, "n"), g(d, "flag")) })
		}),
		q("SELECT c.id, c.n * 2 FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any { return obj("id", g(d, "id"), "$1", arith("*", g(d, "n"), 2.0)) })
		}),
		q(`SELECT c["id"], c["addr"]["zip"] AS zip, c.items[1].name AS second FROM c`, func(ds []doc) expect {
			return set(ds, nil, func(d doc) any {
				return obj("id", g(d, "id"), "zip", g(d, "addr", "zip"), "second", g(d, "items", 1, "name"))
			})
		}),
		q("SELECT c.id, {\"k\": c.k, \"o\": c.opt} AS wrapped FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any { return obj("id", g(d, "id"), "wrapped", obj("k", g(d, "k"), "o", g(d, "opt"))) })
		}),
		q("SELECT VALUE 1 FROM c WHERE c.n = @n", func(ds []doc) expect {
			return set(ds, func(d doc) any { return eq(g(d, "n"), 3.0) }, func(doc) any { return 1.0 })
		}, p("@n", 3)),
		q("SELECT @label AS label, c.id FROM c WHERE c.n < -8", func(ds []doc) expect {
			return set(ds, func(d doc) any { return cmpOp("<", g(d, "n"), -8.0) }, func(d doc) any { return obj("label", "low", "id", g(d, "id")) })
		}, p("@label", "low")),
		q("SELECT VALUE @obj.a.b FROM c WHERE c.id = 'd007'", func(ds []doc) expect {
			return set(ds, func(d doc) any { return eq(g(d, "id"), "d007") }, func(doc) any { return "deep" })
		}, p("@obj", map[string]any{"a": map[string]any{"b": "deep"}})).in("p07"),
		q("SELECT * FROM c WHERE c.pk = @pk", func(ds []doc) expect {
			return set(ds, func(d doc) any { return eq(g(d, "pk"), "p05") }, all(ds))
		}, p("@pk", "p05")).in("p05"),
	)

	// ---- WHERE: comparisons, logical operators, IN, BETWEEN, arithmetic, ||, ??, ?:
	// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/where,
	// .../equality-comparison-operators, .../logical-operators, .../ternary-coalesce-operators)
	id := func(d doc) any { return g(d, "id") }
	where := func(sql string, f pred, ps ...param) entry {
		return q("SELECT VALUE c.id FROM c WHERE "+sql, func(ds []doc) expect { return set(ds, f, id) }, ps...)
	}
	add(
		where("c.n = @n", func(d doc) any { return eq(g(d, "n"), 7.0) }, p("@n", 7)),
		where("c.n != 0", func(d doc) any { return cmpOp("!=", g(d, "n"), 0.0) }),
		where("c.n <> 0 AND c.n < @hi", func(d doc) any { return and(cmpOp("!=", g(d, "n"), 0.0), cmpOp("<", g(d, "n"), 3.0)) }, p("@hi", 3)),
		where("c.x > @lo", func(d doc) any { return cmpOp(">", g(d, "x"), 12.5) }, p("@lo", 12.5)),
		where("c.x <= -10.25", func(d doc) any { return cmpOp("<=", g(d, "x"), -10.25) }),
		where("c.x >= c.n", func(d doc) any { return cmpOp(">=", g(d, "x"), g(d, "n")) }),
		where("c.s = @s", func(d doc) any { return eq(g(d, "s"), "😀smile") }, p("@s", "😀smile")),
		where("c.s > 'b' AND c.s < 'n'", func(d doc) any { return and(cmpOp(">", g(d, "s"), "b"), cmpOp("<", g(d, "s"), "n")) }),
		where("c.s >= 'Ｆ'", func(d doc) any { return cmpOp(">=", g(d, "s"), "Ｆ") }),
		where("c.k > 0", func(d doc) any { return cmpOp(">", g(d, "k"), 0.0) }),
		where("c.k = true", func(d doc) any { return eq(g(d, "k"), true) }),
		where("c.k = null", func(d doc) any { return eq(g(d, "k"), nil) }),
		where(`c.k = {"a": 2}`, func(d doc) any { return eq(g(d, "k"), map[string]any{"a": 2.0}) }),
		where(`c.k = [3, "a"]`, func(d doc) any { return eq(g(d, "k"), []any{3.0, "a"}) }),
		where("c.k >= 'k'", func(d doc) any { return cmpOp(">=", g(d, "k"), "k") }),
		where("c.flag", func(d doc) any { return g(d, "flag") }),
		where("NOT c.flag AND c.n > 20", func(d doc) any { return and(not(g(d, "flag")), cmpOp(">", g(d, "n"), 20.0)) }),
		where("NOT (c.x > 0)", func(d doc) any { return not(cmpOp(">", g(d, "x"), 0.0)) }),
		where("c.x > 40 OR c.flag = false", func(d doc) any { return or(cmpOp(">", g(d, "x"), 40.0), eq(g(d, "flag"), false)) }),
		where("(c.x > 40 OR c.k = true) AND c.n >= 0", func(d doc) any {
			return and(or(cmpOp(">", g(d, "x"), 40.0), eq(g(d, "k"), true)), cmpOp(">=", g(d, "n"), 0.0))
		}),
		where("NOT (c.k = 'apple' OR c.k > 5)", func(d doc) any { return not(or(eq(g(d, "k"), "apple"), cmpOp(">", g(d, "k"), 5.0))) }),
		where("c.cat IN ('alpha', 'gamma')", func(d doc) any { return in(g(d, "cat"), "alpha", "gamma") }),
		where("c.cat IN (@a, @b, 'delta')", func(d doc) any { return in(g(d, "cat"), "beta", "epsilon", "delta") }, p("@a", "beta"), p("@b", "epsilon")),
		where("c.k IN (1, 'apple', true, null)", func(d doc) any { return in(g(d, "k"), 1.0, "apple", true, nil) }),
		where("c.n NOT IN (0, 1, 2, 3)", func(d doc) any { return not(in(g(d, "n"), 0.0, 1.0, 2.0, 3.0)) }),
		where("c.n BETWEEN @lo AND @hi", func(d doc) any { return between(g(d, "n"), -3.0, 4.0) }, p("@lo", -3), p("@hi", 4)),
		where("c.x BETWEEN -5.5 AND 5.5", func(d doc) any { return between(g(d, "x"), -5.5, 5.5) }),
		where("c.s BETWEEN 'a' AND 'c'", func(d doc) any { return between(g(d, "s"), "a", "c") }),
		where("c.k BETWEEN 0 AND 100", func(d doc) any { return between(g(d, "k"), 0.0, 100.0) }),
		where("c.n * 2 + 1 > @v", func(d doc) any { return cmpOp(">", arith("+", arith("*", g(d, "n"), 2.0), 1.0), 31.0) }, p("@v", 31)),
		where("c.n % 4 = 1", func(d doc) any { return eq(arith("%", g(d, "n"), 4.0), 1.0) }),
		where("c.n % 3 = -1", func(d doc) any { return eq(arith("%", g(d, "n"), 3.0), -1.0) }),
		where("c.x / 4 < -10", func(d doc) any { return cmpOp("<", arith("/", g(d, "x"), 4.0), -10.0) }),
		where("-c.n > 8", func(d doc) any { return cmpOp(">", arith("-", 0.0, g(d, "n")), 8.0) }),
		where("c.n - c.x > 40", func(d doc) any { return cmpOp(">", arith("-", g(d, "n"), g(d, "x")), 40.0) }),
		where("c.k + 1 > 5", func(d doc) any { return cmpOp(">", arith("+", g(d, "k"), 1.0), 5.0) }),
		where("c.cat || '-' || c.s = 'alpha-apple'", func(d doc) any { return eq(concatOp(g(d, "cat"), "-", g(d, "s")), "alpha-apple") }),
		where("c.s || @suffix = 'zebra!'", func(d doc) any { return eq(concatOp(g(d, "s"), "!"), "zebra!") }, p("@suffix", "!")),
		where("(c.opt ?? -1) = -1", func(d doc) any { return eq(coalesce(g(d, "opt"), -1.0), -1.0) }),
		where("(c.n > 10 ? c.x : c.n) > 5", func(d doc) any {
			v := g(d, "n")
			if cmpOp(">", v, 10.0) == true {
				v = g(d, "x")
			}
			return cmpOp(">", v, 5.0)
		}),
		where("c.addr.geo.lat > 45 AND c.addr.geo.lon < 0", func(d doc) any {
			return and(cmpOp(">", g(d, "addr", "geo", "lat"), 45.0), cmpOp("<", g(d, "addr", "geo", "lon"), 0.0))
		}),
		where(`c["addr"]["city"] = @city`, func(d doc) any { return eq(g(d, "addr", "city"), "Zürich") }, p("@city", "Zürich")),
		where("c.tags[0] = 'red'", func(d doc) any { return eq(g(d, "tags", 0), "red") }),
		where("c.items[1].qty >= 4", func(d doc) any { return cmpOp(">=", g(d, "items", 1, "qty"), 4.0) }),
		where("c.meta.level.deep = 0", func(d doc) any { return eq(g(d, "meta", "level", "deep"), 0.0) }),
		where("c.opt = null", func(d doc) any { return eq(g(d, "opt"), nil) }),
		where("c.color != 'red'", func(d doc) any { return cmpOp("!=", g(d, "color"), "red") }),
		where("c.when > @since", func(d doc) any { return cmpOp(">", g(d, "when"), "2024-06-01") }, p("@since", "2024-06-01")),
		where("c.id = 'd123' OR c.id = 'd321'", func(d doc) any { return or(eq(g(d, "id"), "d123"), eq(g(d, "id"), "d321")) }),
	)

	// ---- type checking functions (https://learn.microsoft.com/azure/cosmos-db/nosql/query/is-defined
	// and the IS_NULL, IS_BOOL, IS_NUMBER, IS_STRING, IS_ARRAY, IS_OBJECT, IS_PRIMITIVE pages)
	add(
		q("SELECT c.id, IS_DEFINED(c.k) AS d, IS_NULL(c.k) AS nl, IS_BOOL(c.k) AS b, IS_NUMBER(c.k) AS nm, IS_STRING(c.k) AS s, "+
			"IS_ARRAY(c.k) AS a, IS_OBJECT(c.k) AS o, IS_PRIMITIVE(c.k) AS p FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any {
				k := g(d, "k")
				return obj("id", g(d, "id"), "d", !isUndef(k), "nl", isType(k, 1), "b", isType(k, 2), "nm", isType(k, 3), "s", isType(k, 4),
					"a", isType(k, 5), "o", isType(k, 6), "p", typeRank(k) >= 1 && typeRank(k) <= 4)
			})
		}),
		where("NOT IS_DEFINED(c.x)", func(d doc) any { return isUndef(g(d, "x")) }),
		where("IS_NULL(c.color)", func(d doc) any { return g(d, "color") == nil }),
		where("IS_STRING(c.k) AND IS_DEFINED(c.s)", func(d doc) any { return isType(g(d, "k"), 4) == true && !isUndef(g(d, "s")) }),
	)

	// ---- ORDER BY, one and several items, ASC and DESC, across types
	// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/order-by)
	sel := func(fields ...string) proj {
		return func(d doc) any {
			var kv []any
			for _, f := range fields {
				kv = append(kv, f, g(d, f))
			}
			return obj(kv...)
		}
	}
	add(
		q("SELECT c.id, c.n FROM c ORDER BY c.n", func(ds []doc) expect { return sorted(ds, nil, sel("id", "n"), key(at("n")), false) }),
		q("SELECT c.id, c.n FROM c ORDER BY c.n DESC", func(ds []doc) expect { return sorted(ds, nil, sel("id", "n"), key(at("n")), true) }),
		q("SELECT c.id, c.x FROM c ORDER BY c.x", func(ds []doc) expect { return sorted(ds, nil, sel("id", "x"), key(at("x")), false) }).js("orderByMixedTypes"),
		q("SELECT c.id, c.x FROM c ORDER BY c.x DESC", func(ds []doc) expect { return sorted(ds, nil, sel("id", "x"), key(at("x")), true) }).js("orderByMixedTypes"),
		q("SELECT c.id, c.s FROM c ORDER BY c.s", func(ds []doc) expect { return sorted(ds, nil, sel("id", "s"), key(at("s")), false) }).js("orderByMixedTypes"),
		q("SELECT c.id, c.s FROM c ORDER BY c.s DESC", func(ds []doc) expect { return sorted(ds, nil, sel("id", "s"), key(at("s")), true) }).js("orderByMixedTypes"),
		q("SELECT c.id, c.k FROM c ORDER BY c.k", func(ds []doc) expect { return sorted(ds, nil, sel("id", "k"), key(at("k")), false) }).js("orderByMixedTypes"),
		q("SELECT c.id, c.k FROM c ORDER BY c.k DESC", func(ds []doc) expect { return sorted(ds, nil, sel("id", "k"), key(at("k")), true) }).js("orderByMixedTypes"),
		q("SELECT c.id, c.k FROM c WHERE IS_PRIMITIVE(c.k) ORDER BY c.k", func(ds []doc) expect {
			return sorted(ds, func(d doc) any { return typeRank(g(d, "k")) >= 1 && typeRank(g(d, "k")) <= 4 }, sel("id", "k"), key(at("k")), false)
		}).js("orderByMixedTypes"),
		q("SELECT c.id, c.opt FROM c ORDER BY c.opt DESC", func(ds []doc) expect { return sorted(ds, nil, sel("id", "opt"), key(at("opt")), true) }).js("orderByMixedTypes"),
		q("SELECT VALUE c.id FROM c ORDER BY c.id DESC", func(ds []doc) expect { return sorted(ds, nil, id, key(at("id")), true) }),
		q("SELECT c.id, c.flag FROM c ORDER BY c.flag", func(ds []doc) expect { return sorted(ds, nil, sel("id", "flag"), key(at("flag")), false) }),
		q("SELECT c.id, c.addr.city FROM c ORDER BY c.addr.city", func(ds []doc) expect {
			return sorted(ds, nil, func(d doc) any { return obj("id", g(d, "id"), "city", g(d, "addr", "city")) }, key(at("addr", "city")), false)
		}).js("orderByMixedTypes"),
		q("SELECT VALUE c.when FROM c ORDER BY c.when DESC", func(ds []doc) expect { return sorted(ds, nil, path("when"), key(at("when")), true) }),
		q("SELECT c.id FROM c ORDER BY c.meta.level.deep DESC", func(ds []doc) expect { return sorted(ds, nil, sel("id"), key(at("meta", "level", "deep")), true) }).js("orderByMixedTypes"),
		q("SELECT c.id, c.tags FROM c ORDER BY c.tags", func(ds []doc) expect { return sorted(ds, nil, sel("id", "tags"), key(at("tags")), false) }).js("orderByMixedTypes"),
		q("SELECT c.id, c.n FROM c WHERE c.flag = @f ORDER BY c.n", func(ds []doc) expect {
			return sorted(ds, func(d doc) any { return eq(g(d, "flag"), true) }, sel("id", "n"), key(at("n")), false)
		}, p("@f", true)),
		q("SELECT c.id, c.cat, c.n FROM c ORDER BY c.cat, c.n DESC", func(ds []doc) expect {
			return sorted(ds, nil, sel("id", "cat", "n"), key(at("cat"), at("n")), false, true)
		}),
		q("SELECT c.id, c.cat, c.n FROM c ORDER BY c.cat DESC, c.n ASC", func(ds []doc) expect {
			return sorted(ds, nil, sel("id", "cat", "n"), key(at("cat"), at("n")), true, false)
		}),
		q("SELECT c.id, c.flag FROM c ORDER BY c.flag DESC, c.id ASC", func(ds []doc) expect {
			return sorted(ds, nil, sel("id", "flag"), key(at("flag"), at("id")), true, false)
		}),
		q("SELECT c.id, c.n, c.x FROM c ORDER BY c.n, c.x", func(ds []doc) expect {
			return sorted(ds, nil, sel("id", "n", "x"), key(at("n"), at("x")), false, false)
		}).js("orderByMixedTypes"),
		q("SELECT c.id, c.n, c.x FROM c WHERE c.n > @min ORDER BY c.n DESC, c.x DESC", func(ds []doc) expect {
			return sorted(ds, func(d doc) any { return cmpOp(">", g(d, "n"), 15.0) }, sel("id", "n", "x"), key(at("n"), at("x")), true, true)
		}, p("@min", 15)).js("orderByMixedTypes"),
		q("SELECT c.cat, c.s FROM c ORDER BY c.cat, c.s DESC", func(ds []doc) expect {
			return sorted(ds, nil, sel("cat", "s"), key(at("cat"), at("s")), false, true)
		}).js("orderByMixedTypes"),
		q("SELECT c.id FROM c ORDER BY c.color, c.n, c.id", func(ds []doc) expect {
			return sorted(ds, nil, sel("id"), key(at("color"), at("n"), at("id")), false, false, false)
		}).js("orderByMixedTypes"),
	)

	// ---- TOP and OFFSET … LIMIT (https://learn.microsoft.com/azure/cosmos-db/nosql/query/offset-limit,
	// .../select#top): without ORDER BY, some n of the rows
	add(
		q("SELECT TOP 5 c.id, c.n FROM c ORDER BY c.n DESC", func(ds []doc) expect {
			return sorted(ds, nil, sel("id", "n"), key(at("n")), true).window(0, 5)
		}),
		q("SELECT TOP @t VALUE c.id FROM c ORDER BY c.id", func(ds []doc) expect { return sorted(ds, nil, id, key(at("id")), false).window(0, 11) }, p("@t", 11)),
		q("SELECT TOP 8 * FROM c", func(ds []doc) expect { return set(ds, nil, all(ds)).window(0, 8) }),
		q("SELECT TOP 3 c.id FROM c WHERE c.cat = 'beta' ORDER BY c.x", func(ds []doc) expect {
			return sorted(ds, func(d doc) any { return eq(g(d, "cat"), "beta") }, sel("id"), key(at("x")), false).window(0, 3)
		}).js("orderByMixedTypes"),
		q("SELECT c.id FROM c ORDER BY c.id OFFSET 10 LIMIT 7", func(ds []doc) expect { return sorted(ds, nil, sel("id"), key(at("id")), false).window(10, 7) }),
		q("SELECT VALUE c.id FROM c ORDER BY c.id DESC OFFSET @o LIMIT @l", func(ds []doc) expect {
			return sorted(ds, nil, id, key(at("id")), true).window(4, 6)
		}, p("@o", 4), p("@l", 6)),
		q("SELECT c.id, c.x FROM c ORDER BY c.x OFFSET 30 LIMIT 25", func(ds []doc) expect {
			return sorted(ds, nil, sel("id", "x"), key(at("x")), false).window(30, 25)
		}).js("orderByMixedTypes"),
		q("SELECT c.id, c.cat, c.n FROM c ORDER BY c.cat, c.n DESC OFFSET 3 LIMIT 9", func(ds []doc) expect {
			return sorted(ds, nil, sel("id", "cat", "n"), key(at("cat"), at("n")), false, true).window(3, 9)
		}),
		q("SELECT c.id FROM c OFFSET 3 LIMIT 5", func(ds []doc) expect { return set(ds, nil, sel("id")).window(3, 5) }),
		q("SELECT c.id FROM c ORDER BY c.id OFFSET 1000 LIMIT 5", func(ds []doc) expect { return sorted(ds, nil, sel("id"), key(at("id")), false).window(1000, 5) }),
		q("SELECT TOP 4 c.id, c.s FROM c ORDER BY c.s DESC", func(ds []doc) expect { return sorted(ds, nil, sel("id", "s"), key(at("s")), true).window(0, 4) }),
	)

	// ---- DISTINCT (https://learn.microsoft.com/azure/cosmos-db/nosql/query/keywords#distinct)
	add(
		q("SELECT DISTINCT VALUE c.cat FROM c", func(ds []doc) expect { return distinct(set(ds, nil, path("cat"))) }),
		q("SELECT DISTINCT c.cat, c.flag FROM c", func(ds []doc) expect { return distinct(set(ds, nil, sel("cat", "flag"))) }),
		q("SELECT DISTINCT VALUE c.k FROM c", func(ds []doc) expect { return distinct(set(ds, nil, path("k"))) }).js("distinctDropsFalsy"),
		q("SELECT DISTINCT VALUE c.k FROM c WHERE IS_STRING(c.k) OR c.k > 0 OR c.k = true", func(ds []doc) expect {
			return distinct(set(ds, func(d doc) any {
				k := g(d, "k")
				return or(isType(k, 4), cmpOp(">", k, 0.0), eq(k, true))
			}, path("k")))
		}).js("distinctDropsFalsy"),
		q("SELECT DISTINCT VALUE c.tags FROM c", func(ds []doc) expect { return distinct(set(ds, nil, path("tags"))) }),
		q("SELECT DISTINCT c.color FROM c", func(ds []doc) expect { return distinct(set(ds, nil, sel("color"))) }),
		q("SELECT DISTINCT VALUE c.n FROM c ORDER BY c.n DESC", func(ds []doc) expect {
			return distinct(sorted(ds, nil, path("n"), key(at("n")), true))
		}).js("distinctDropsFalsy"),
		q("SELECT DISTINCT VALUE c.cat FROM c ORDER BY c.cat", func(ds []doc) expect {
			return distinct(sorted(ds, nil, path("cat"), key(at("cat")), false))
		}),
		q("SELECT DISTINCT VALUE c.addr.city FROM c WHERE c.n > @n", func(ds []doc) expect {
			return distinct(set(ds, func(d doc) any { return cmpOp(">", g(d, "n"), 0.0) }, path("addr", "city")))
		}, p("@n", 0)),
		q("SELECT DISTINCT TOP 3 VALUE c.cat FROM c ORDER BY c.cat DESC", func(ds []doc) expect {
			return distinct(sorted(ds, nil, path("cat"), key(at("cat")), true)).window(0, 3)
		}),
	)

	// ---- aggregates (https://learn.microsoft.com/azure/cosmos-db/nosql/query/count, .../sum,
	// .../average, .../min, .../max)
	n, x, k := path("n"), path("x"), path("k")
	primK := func(d doc) any {
		if v := g(d, "k"); typeRank(v) <= 4 {
			return v
		}
		return undef
	}
	add(
		q("SELECT VALUE COUNT(1) FROM c", func(ds []doc) expect { return values(float64(len(ds))) }),
		q("SELECT VALUE COUNT(c.x) FROM c", func(ds []doc) expect { return aggregate(ds, nil, func(g []doc) any { return count(g, x) }) }),
		q("SELECT VALUE COUNT(c.opt) FROM c", func(ds []doc) expect { return aggregate(ds, nil, func(g []doc) any { return count(g, path("opt")) }) }),
		q("SELECT VALUE COUNT(1) FROM c WHERE c.n > 1000", func(ds []doc) expect { return values(0.0) }),
		q("SELECT VALUE SUM(c.n) FROM c", func(ds []doc) expect { return aggregate(ds, nil, func(g []doc) any { return sum(g, n) }) }),
		q("SELECT VALUE SUM(c.x) FROM c", func(ds []doc) expect { return aggregate(ds, nil, func(g []doc) any { return sum(g, x) }) }),
		q("SELECT VALUE SUM(c.k) FROM c", func(ds []doc) expect { return aggregate(ds, nil, func(g []doc) any { return sum(g, k) }) }),
		q("SELECT VALUE AVG(c.n) FROM c", func(ds []doc) expect { return aggregate(ds, nil, func(g []doc) any { return avg(g, n) }) }),
		q("SELECT VALUE AVG(c.x) FROM c WHERE c.cat = @cat", func(ds []doc) expect {
			return aggregate(ds, func(d doc) any { return eq(g(d, "cat"), "gamma") }, func(g []doc) any { return avg(g, x) })
		}, p("@cat", "gamma")),
		q("SELECT VALUE MIN(c.x) FROM c", func(ds []doc) expect { return aggregate(ds, nil, func(g []doc) any { return minOf(g, x) }) }),
		q("SELECT VALUE MAX(c.n) FROM c", func(ds []doc) expect { return aggregate(ds, nil, func(g []doc) any { return maxOf(g, n) }) }),
		q("SELECT VALUE MAX(c.n) FROM c WHERE c.n > 1000", func(ds []doc) expect { return values() }),
		q("SELECT VALUE MIN(c.s) FROM c", func(ds []doc) expect { return aggregate(ds, nil, func(g []doc) any { return minOf(g, path("s")) }) }),
		q("SELECT VALUE MAX(c.s) FROM c", func(ds []doc) expect { return aggregate(ds, nil, func(g []doc) any { return maxOf(g, path("s")) }) }),
		q("SELECT VALUE MAX(c.k) FROM c WHERE IS_PRIMITIVE(c.k)", func(ds []doc) expect { return aggregate(ds, nil, func(g []doc) any { return maxOf(g, primK) }) }),
		q("SELECT VALUE MIN(c.k) FROM c WHERE IS_PRIMITIVE(c.k)", func(ds []doc) expect { return aggregate(ds, nil, func(g []doc) any { return minOf(g, primK) }) }),
		q("SELECT VALUE MIN(c.opt) FROM c", func(ds []doc) expect { return aggregate(ds, nil, func(g []doc) any { return minOf(g, path("opt")) }) }),
		q("SELECT COUNT(1) AS cnt, SUM(c.n) AS total, AVG(c.x) AS mean, MIN(c.n) AS lo, MAX(c.x) AS hi FROM c", func(ds []doc) expect {
			return aggregate(ds, nil, func(gr []doc) any {
				return obj("cnt", float64(len(gr)), "total", sum(gr, n), "mean", avg(gr, x), "lo", minOf(gr, n), "hi", maxOf(gr, x))
			})
		}),
		q("SELECT SUM(c.k) AS s, COUNT(c.k) AS n FROM c", func(ds []doc) expect {
			return aggregate(ds, nil, func(gr []doc) any { return obj("s", sum(gr, k), "n", count(gr, k)) })
		}).js("sumOfUndefinedIsZero"),
		q("SELECT VALUE COUNT(1) FROM c WHERE c.n BETWEEN @a AND @b AND c.flag", func(ds []doc) expect {
			return aggregate(ds, func(d doc) any { return and(between(g(d, "n"), 0.0, 10.0), g(d, "flag")) }, func(g []doc) any { return float64(len(g)) })
		}, p("@a", 0), p("@b", 10)),
		q("SELECT VALUE SUM(IIF(c.flag, 1, 0)) FROM c", func(ds []doc) expect {
			return aggregate(ds, nil, func(gr []doc) any { return sum(gr, func(d doc) any { return iif(g(d, "flag"), 1.0, 0.0) }) })
		}),
		q("SELECT VALUE AVG(ARRAY_LENGTH(c.tags)) FROM c", func(ds []doc) expect {
			return aggregate(ds, nil, func(gr []doc) any {
				return avg(gr, func(d doc) any {
					if a, ok := g(d, "tags").([]any); ok {
						return float64(len(a))
					}
					return undef
				})
			})
		}),
	)

	// ---- GROUP BY, with expressions (https://learn.microsoft.com/azure/cosmos-db/nosql/query/group-by)
	add(
		q("SELECT c.cat, COUNT(1) AS n FROM c GROUP BY c.cat", func(ds []doc) expect {
			return grouped(ds, nil, key(at("cat")), func(gr []doc) any { return obj("cat", g(gr[0], "cat"), "n", float64(len(gr))) })
		}),
		q("SELECT VALUE c.cat FROM c GROUP BY c.cat", func(ds []doc) expect {
			return grouped(ds, nil, key(at("cat")), func(gr []doc) any { return g(gr[0], "cat") })
		}),
		q("SELECT VALUE c.color FROM c GROUP BY c.color", func(ds []doc) expect {
			return grouped(ds, nil, key(at("color")), func(gr []doc) any { return g(gr[0], "color") })
		}),
		q("SELECT c.color AS color, COUNT(1) AS n FROM c GROUP BY c.color", func(ds []doc) expect {
			return grouped(ds, nil, key(at("color")), func(gr []doc) any { return obj("color", g(gr[0], "color"), "n", float64(len(gr))) })
		}),
		q("SELECT c.cat, c.flag, MAX(c.n) AS mx, MIN(c.x) AS mn, AVG(c.n) AS a FROM c GROUP BY c.cat, c.flag", func(ds []doc) expect {
			return grouped(ds, nil, key(at("cat"), at("flag")), func(gr []doc) any {
				return obj("cat", g(gr[0], "cat"), "flag", g(gr[0], "flag"), "mx", maxOf(gr, n), "mn", minOf(gr, x), "a", avg(gr, n))
			})
		}),
		q("SELECT LOWER(c.cat) AS lc, SUM(c.n) AS s FROM c GROUP BY LOWER(c.cat)", func(ds []doc) expect {
			return grouped(ds, nil, key(at("cat")), func(gr []doc) any { return obj("lc", strings.ToLower(g(gr[0], "cat").(string)), "s", sum(gr, n)) })
		}),
		q("SELECT VALUE UPPER(c.cat) FROM c GROUP BY UPPER(c.cat)", func(ds []doc) expect {
			return grouped(ds, nil, key(at("cat")), func(gr []doc) any { return strings.ToUpper(g(gr[0], "cat").(string)) })
		}),
		q("SELECT c.addr.city AS city, COUNT(1) AS n FROM c GROUP BY c.addr.city", func(ds []doc) expect {
			return grouped(ds, nil, key(at("addr", "city")), func(gr []doc) any { return obj("city", g(gr[0], "addr", "city"), "n", float64(len(gr))) })
		}),
		q("SELECT VALUE c.addr.city FROM c GROUP BY c.addr.city", func(ds []doc) expect {
			return grouped(ds, nil, key(at("addr", "city")), func(gr []doc) any { return g(gr[0], "addr", "city") })
		}),
		q("SELECT c.n % 3 AS m, COUNT(1) AS cnt FROM c GROUP BY c.n % 3", func(ds []doc) expect {
			return grouped(ds, nil, func(d doc) []any { return []any{arith("%", g(d, "n"), 3.0)} }, func(gr []doc) any {
				return obj("m", arith("%", g(gr[0], "n"), 3.0), "cnt", float64(len(gr)))
			})
		}),
		q(`SELECT VALUE {"cat": c.cat, "n": COUNT(1), "hi": MAX(c.x)} FROM c GROUP BY c.cat`, func(ds []doc) expect {
			return grouped(ds, nil, key(at("cat")), func(gr []doc) any { return obj("cat", g(gr[0], "cat"), "n", float64(len(gr)), "hi", maxOf(gr, x)) })
		}).refusedAcross("aggregates inside another expression are not supported across partitions: "+
			"https://github.com/Azure/azure-cosmos-dotnet-v3/pull/730 (\"We still do not support composite aggregates\")"),
		q("SELECT c.flag, COUNT(1) AS n FROM c WHERE c.n >= @n GROUP BY c.flag", func(ds []doc) expect {
			return grouped(ds, func(d doc) any { return cmpOp(">=", g(d, "n"), 10.0) }, key(at("flag")), func(gr []doc) any {
				return obj("flag", g(gr[0], "flag"), "n", float64(len(gr)))
			})
		}, p("@n", 10)),
		q("SELECT VALUE COUNT(1) FROM c GROUP BY c.cat", func(ds []doc) expect {
			return grouped(ds, nil, key(at("cat")), func(gr []doc) any { return float64(len(gr)) })
		}),
		q("SELECT c.meta.level.deep AS deep, COUNT(1) AS n, SUM(c.n) AS s FROM c WHERE IS_DEFINED(c.meta) GROUP BY c.meta.level.deep", func(ds []doc) expect {
			return grouped(ds, func(d doc) any { return !isUndef(g(d, "meta")) }, key(at("meta", "level", "deep")), func(gr []doc) any {
				return obj("deep", g(gr[0], "meta", "level", "deep"), "n", float64(len(gr)), "s", sum(gr, n))
			})
		}),
		q("SELECT DateTimePart('yyyy', c.when) AS y, COUNT(1) AS n FROM c WHERE IS_DEFINED(c.when) GROUP BY DateTimePart('yyyy', c.when)", func(ds []doc) expect {
			return grouped(ds, func(d doc) any { return !isUndef(g(d, "when")) }, func(d doc) []any { return []any{dateTimePart("yyyy", g(d, "when"))} },
				func(gr []doc) any { return obj("y", dateTimePart("yyyy", g(gr[0], "when")), "n", float64(len(gr))) })
		}),
		q("SELECT c.k AS k, COUNT(1) AS n FROM c WHERE IS_PRIMITIVE(c.k) GROUP BY c.k", func(ds []doc) expect {
			return grouped(ds, func(d doc) any { return typeRank(g(d, "k")) >= 1 && typeRank(g(d, "k")) <= 4 }, key(at("k")), func(gr []doc) any {
				return obj("k", g(gr[0], "k"), "n", float64(len(gr)))
			})
		}),
	)

	add(joins()...)
	add(subqueries()...)
	add(functions()...)
	return c
}
