package querycorpus_test

import (
	"strconv"
	"strings"
	"unicode"
)

// joins: JOIN x IN c.array iterates the array's elements (none for a missing property
// or a non-array), one row per combination
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/join).
func joins() []entry {
	g := get
	joined := func(f func(d doc, add func(v any, key ...any))) func([]doc) expect {
		return func(ds []doc) expect {
			return expect{limit: -1, rows: emit(func(add func(v any, key ...any)) {
				for _, d := range ds {
					f(d, add)
				}
			})}
		}
	}
	return []entry{
		q("SELECT c.id, t FROM c JOIN t IN c.tags", joined(func(d doc, add func(any, ...any)) {
			for _, t := range elems(g(d, "tags")) {
				add(obj("id", g(d, "id"), "t", t))
			}
		})),
		q("SELECT VALUE t FROM c JOIN t IN c.tags WHERE t = @tag", joined(func(d doc, add func(any, ...any)) {
			for _, t := range elems(g(d, "tags")) {
				if t == "sale" {
					add(t)
				}
			}
		}), p("@tag", "sale")),
		q("SELECT c.id, i.name, i.qty FROM c JOIN i IN c.items WHERE i.qty >= 3", joined(func(d doc, add func(any, ...any)) {
			for _, i := range elems(g(d, "items")) {
				if truth(cmpOp(">=", g(i, "qty"), 3.0)) {
					add(obj("id", g(d, "id"), "name", g(i, "name"), "qty", g(i, "qty")))
				}
			}
		})),
		q("SELECT c.id, t, i.name FROM c JOIN t IN c.tags JOIN i IN c.items WHERE t = 'sale' AND i.price > @p", joined(func(d doc, add func(any, ...any)) {
			for _, t := range elems(g(d, "tags")) {
				for _, i := range elems(g(d, "items")) {
					if truth(and(eq(t, "sale"), cmpOp(">", g(i, "price"), 100.0))) {
						add(obj("id", g(d, "id"), "t", t, "name", g(i, "name")))
					}
				}
			}
		}), p("@p", 100)),
		q("SELECT VALUE [t1, t2] FROM c JOIN t1 IN c.tags JOIN t2 IN c.tags WHERE t1 < t2", joined(func(d doc, add func(any, ...any)) {
			for _, t1 := range elems(g(d, "tags")) {
				for _, t2 := range elems(g(d, "tags")) {
					if truth(cmpOp("<", t1, t2)) {
						add(arr(t1, t2))
					}
				}
			}
		})),
		// SELECT * over a JOIN is the service's 400 ("'SELECT *' is only valid with a
		// single input set"): name the aliases.
		q("SELECT c, t FROM c JOIN t IN c.tags WHERE c.n > 25", joined(func(d doc, add func(any, ...any)) {
			if !truth(cmpOp(">", g(d, "n"), 25.0)) {
				return
			}
			for _, t := range elems(g(d, "tags")) {
				add(obj("c", d, "t", t))
			}
		})),
		q("SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags", func(ds []doc) expect {
			n := 0
			for _, d := range ds {
				n += len(elems(g(d, "tags")))
			}
			return values(float64(n))
		}),
		q("SELECT VALUE SUM(i.qty) FROM c JOIN i IN c.items", func(ds []doc) expect {
			s := 0.0
			for _, d := range ds {
				for _, i := range elems(g(d, "items")) {
					s += g(i, "qty").(float64)
				}
			}
			return values(s)
		}),
		q("SELECT t AS tag, COUNT(1) AS n FROM c JOIN t IN c.tags GROUP BY t", func(ds []doc) expect {
			counts := map[string]float64{}
			for _, d := range ds {
				for _, t := range elems(g(d, "tags")) {
					counts[t.(string)]++
				}
			}
			e := values()
			for t, n := range counts {
				e.rows = append(e.rows, row{v: obj("tag", t, "n", n)})
			}
			return e
		}),
		q("SELECT DISTINCT VALUE t FROM c JOIN t IN c.tags", func(ds []doc) expect {
			return distinct(joined(func(d doc, add func(any, ...any)) {
				for _, t := range elems(g(d, "tags")) {
					add(t)
				}
			})(ds))
		}),
		q("SELECT c.id, i.price FROM c JOIN i IN c.items WHERE IS_DEFINED(i.price) ORDER BY c.id", func(ds []doc) expect {
			e := joined(func(d doc, add func(any, ...any)) {
				for _, i := range elems(g(d, "items")) {
					if !isUndef(g(i, "price")) {
						add(obj("id", g(d, "id"), "price", g(i, "price")), g(d, "id"))
					}
				}
			})(ds)
			e.desc = []bool{false}
			return e
		}),
		q("SELECT c.id, i.name FROM c JOIN i IN c.items WHERE i.name IN (@a, @b) AND c.cat = 'alpha'", joined(func(d doc, add func(any, ...any)) {
			for _, i := range elems(g(d, "items")) {
				if truth(and(in(g(i, "name"), "pen", "lamp"), eq(g(d, "cat"), "alpha"))) {
					add(obj("id", g(d, "id"), "name", g(i, "name")))
				}
			}
		}), p("@a", "pen"), p("@b", "lamp")),
		q("SELECT c.id, t FROM c JOIN (SELECT VALUE t FROM t IN c.tags WHERE t != 'x') t", joined(func(d doc, add func(any, ...any)) {
			for _, t := range elems(g(d, "tags")) {
				if t != "x" {
					add(obj("id", g(d, "id"), "t", t))
				}
			}
		})),
		q("SELECT TOP 5 c.id, t FROM c JOIN t IN c.tags ORDER BY c.n DESC", func(ds []doc) expect {
			e := joined(func(d doc, add func(any, ...any)) {
				for _, t := range elems(g(d, "tags")) {
					add(obj("id", g(d, "id"), "t", t), g(d, "n"))
				}
			})(ds)
			e.desc = []bool{true}
			return e.window(0, 5)
		}),
	}
}

// subqueries: EXISTS, ARRAY(…) and scalar subqueries over the document's arrays
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/subquery).
func subqueries() []entry {
	g := get
	anyElem := func(v any, f func(any) bool) bool {
		for _, e := range elems(v) {
			if f(e) {
				return true
			}
		}
		return false
	}
	idOf := func(d doc) any { return g(d, "id") }
	return []entry{
		q("SELECT VALUE c.id FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 'sale')", func(ds []doc) expect {
			return set(ds, func(d doc) any { return anyElem(g(d, "tags"), func(t any) bool { return t == "sale" }) }, idOf)
		}),
		q("SELECT VALUE c.id FROM c WHERE NOT EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = @t)", func(ds []doc) expect {
			return set(ds, func(d doc) any { return !anyElem(g(d, "tags"), func(t any) bool { return t == "new" }) }, idOf)
		}, p("@t", "new")),
		q("SELECT c.id, EXISTS(SELECT VALUE i FROM i IN c.items WHERE i.qty > 4) AS big FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any {
				return obj("id", g(d, "id"), "big", anyElem(g(d, "items"), func(i any) bool { return truth(cmpOp(">", g(i, "qty"), 4.0)) }))
			})
		}),
		q("SELECT c.id, ARRAY(SELECT VALUE i.name FROM i IN c.items WHERE i.qty > 1) AS names FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any {
				names := []any{}
				for _, i := range elems(g(d, "items")) {
					if truth(cmpOp(">", g(i, "qty"), 1.0)) {
						names = append(names, g(i, "name"))
					}
				}
				return obj("id", g(d, "id"), "names", names)
			})
		}),
		q("SELECT VALUE ARRAY(SELECT VALUE UPPER(t) FROM t IN c.tags) FROM c WHERE c.n < @n", func(ds []doc) expect {
			return set(ds, func(d doc) any { return cmpOp("<", g(d, "n"), 0.0) }, func(d doc) any {
				out := []any{}
				for _, t := range elems(g(d, "tags")) {
					out = append(out, strings.ToUpper(t.(string)))
				}
				return out
			})
		}, p("@n", 0)),
		q("SELECT c.id, (SELECT VALUE COUNT(1) FROM t IN c.tags) AS nTags FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any { return obj("id", g(d, "id"), "nTags", float64(len(elems(g(d, "tags"))))) })
		}),
		q("SELECT c.id, (SELECT VALUE MAX(i.price) FROM i IN c.items) AS topPrice FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any {
				top := undef
				for _, i := range elems(g(d, "items")) {
					if p, ok := g(i, "price").(float64); ok && (isUndef(top) || p > top.(float64)) {
						top = p
					}
				}
				return obj("id", g(d, "id"), "topPrice", top)
			})
		}),
		q("SELECT VALUE c.id FROM c WHERE (SELECT VALUE COUNT(1) FROM i IN c.items WHERE i.qty >= @q) >= 2", func(ds []doc) expect {
			return set(ds, func(d doc) any {
				n := 0
				for _, i := range elems(g(d, "items")) {
					if truth(cmpOp(">=", g(i, "qty"), 2.0)) {
						n++
					}
				}
				return n >= 2
			}, idOf)
		}, p("@q", 2)),
		q("SELECT c.id, (SELECT TOP 1 VALUE t FROM t IN c.tags WHERE t = 'x') ?? 'none' AS hasX FROM c WHERE c.n > 20", func(ds []doc) expect {
			return set(ds, func(d doc) any { return cmpOp(">", g(d, "n"), 20.0) }, func(d doc) any {
				v := any("none")
				for _, t := range elems(g(d, "tags")) {
					if t == "x" {
						v = "x"
						break
					}
				}
				return obj("id", g(d, "id"), "hasX", v)
			})
		}),
		q("SELECT VALUE COUNT(1) FROM c WHERE EXISTS(SELECT VALUE i FROM i IN c.items WHERE i.name = 'pen' AND i.qty > 0)", func(ds []doc) expect {
			return aggregate(ds, func(d doc) any {
				return anyElem(g(d, "items"), func(i any) bool { return g(i, "name") == "pen" && truth(cmpOp(">", g(i, "qty"), 0.0)) })
			}, func(gr []doc) any { return float64(len(gr)) })
		}),
		q("SELECT TOP 10 c.id, ARRAY(SELECT VALUE t FROM t IN c.tags WHERE t IN ('red', 'blue')) AS rb FROM c ORDER BY c.id", func(ds []doc) expect {
			return sorted(ds, nil, func(d doc) any {
				out := []any{}
				for _, t := range elems(g(d, "tags")) {
					if t == "red" || t == "blue" {
						out = append(out, t)
					}
				}
				return obj("id", g(d, "id"), "rb", out)
			}, key(at("id")), false).window(0, 10)
		}),
	}
}

// functions: LIKE, IIF, the date and time, string, math and array functions over the
// documents, and queries without FROM.
func functions() []entry {
	g := get
	idOf := func(d doc) any { return g(d, "id") }
	sOf := path("s")
	noAstral := func(d doc) any {
		s, ok := g(d, "s").(string)
		if !ok {
			return undef
		}
		return !strings.ContainsAny(s, "😀𝄞")
	}
	return []entry{
		// LIKE (https://learn.microsoft.com/azure/cosmos-db/nosql/query/keywords#like)
		q("SELECT VALUE c.id FROM c WHERE c.s LIKE 'a%'", func(ds []doc) expect { return set(ds, func(d doc) any { return like(g(d, "s"), "a%", 0) }, idOf) }),
		q("SELECT VALUE c.s FROM c WHERE c.s LIKE '%an%'", func(ds []doc) expect { return set(ds, func(d doc) any { return like(g(d, "s"), "%an%", 0) }, sOf) }),
		q("SELECT VALUE c.s FROM c WHERE c.s LIKE '_pple'", func(ds []doc) expect { return set(ds, func(d doc) any { return like(g(d, "s"), "_pple", 0) }, sOf) }),
		q("SELECT VALUE c.s FROM c WHERE c.s LIKE '%!%%' ESCAPE '!'", func(ds []doc) expect {
			return set(ds, func(d doc) any { return like(g(d, "s"), "%!%%", '!') }, sOf)
		}),
		q("SELECT VALUE c.s FROM c WHERE c.s LIKE '%!_%' ESCAPE '!'", func(ds []doc) expect {
			return set(ds, func(d doc) any { return like(g(d, "s"), "%!_%", '!') }, sOf)
		}),
		q("SELECT VALUE c.id FROM c WHERE c.s NOT LIKE '%a%'", func(ds []doc) expect {
			return set(ds, func(d doc) any { return not(like(g(d, "s"), "%a%", 0)) }, idOf)
		}),
		q("SELECT VALUE c.id FROM c WHERE c.cat LIKE @pat", func(ds []doc) expect { return set(ds, func(d doc) any { return like(g(d, "cat"), "%ta", 0) }, idOf) }, p("@pat", "%ta")),
		q("SELECT VALUE c.s FROM c WHERE c.s LIKE '[a-c]%'", func(ds []doc) expect { return set(ds, func(d doc) any { return like(g(d, "s"), "[a-c]%", 0) }, sOf) }),
		q("SELECT VALUE c.s FROM c WHERE c.s LIKE '[^a-z]%'", func(ds []doc) expect { return set(ds, func(d doc) any { return like(g(d, "s"), "[^a-z]%", 0) }, sOf) }),
		q("SELECT VALUE c.id FROM c WHERE c.n LIKE '1%'", func(ds []doc) expect { return values() }),
		q("SELECT VALUE c.id FROM c WHERE c.addr.city LIKE '%ü%' OR c.s LIKE 'Z%'", func(ds []doc) expect {
			return set(ds, func(d doc) any { return or(like(g(d, "addr", "city"), "%ü%", 0), like(g(d, "s"), "Z%", 0)) }, idOf)
		}),

		// IIF (https://learn.microsoft.com/azure/cosmos-db/nosql/query/iif)
		q("SELECT c.id, IIF(c.n > 0, 'pos', 'nonpos') AS sign FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any {
				return obj("id", g(d, "id"), "sign", iif(cmpOp(">", g(d, "n"), 0.0), "pos", "nonpos"))
			})
		}),
		q("SELECT c.id, IIF(c.k, 'yes', 'no') AS kk FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any { return obj("id", g(d, "id"), "kk", iif(g(d, "k"), "yes", "no")) })
		}),
		q("SELECT VALUE c.id FROM c WHERE IIF(IS_DEFINED(c.x), c.x, @dflt) > 30", func(ds []doc) expect {
			return set(ds, func(d doc) any { return cmpOp(">", iif(!isUndef(g(d, "x")), g(d, "x"), 35.0), 30.0) }, idOf)
		}, p("@dflt", 35)),
		q("SELECT c.id, IIF(c.flag, c.tags, c.addr.zip) AS v FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any {
				return obj("id", g(d, "id"), "v", iif(g(d, "flag"), g(d, "tags"), g(d, "addr", "zip")))
			})
		}),

		// date and time functions (dates_test.go)
		q("SELECT c.id, DateTimePart('yyyy', c.when) AS y, DateTimePart('mm', c.when) AS m, DateTimePart('dd', c.when) AS d, "+
			"DateTimePart('hh', c.when) AS h, DateTimePart('ms', c.when) AS ms FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any {
				w := g(d, "when")
				return obj("id", g(d, "id"), "y", dateTimePart("yyyy", w), "m", dateTimePart("mm", w), "d", dateTimePart("dd", w),
					"h", dateTimePart("hh", w), "ms", dateTimePart("ms", w))
			})
		}),
		q("SELECT VALUE c.id FROM c WHERE DateTimePart('month', c.when) = @m", func(ds []doc) expect {
			return set(ds, func(d doc) any { return eq(dateTimePart("month", g(d, "when")), 3.0) }, idOf)
		}, p("@m", 3)),
		q("SELECT VALUE DateTimeAdd('mm', 1, c.when) FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any { return dateTimeAdd("mm", 1, g(d, "when")) })
		}),
		q("SELECT c.id, DateTimeAdd('dd', @days, c.when) AS later, DateTimeAdd('hh', -36, c.when) AS earlier FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any {
				return obj("id", g(d, "id"), "later", dateTimeAdd("dd", 10, g(d, "when")), "earlier", dateTimeAdd("hh", -36, g(d, "when")))
			})
		}, p("@days", 10)),
		q("SELECT c.id, DateTimeDiff('dd', c.when, @ref) AS days, DateTimeDiff('month', c.when, @ref) AS months FROM c", func(ds []doc) expect {
			ref := "2023-07-15T12:00:00.0000000Z"
			return set(ds, nil, func(d doc) any {
				return obj("id", g(d, "id"), "days", dateTimeDiff("dd", g(d, "when"), ref), "months", dateTimeDiff("month", g(d, "when"), ref))
			})
		}, p("@ref", "2023-07-15T12:00:00.0000000Z")),
		q("SELECT VALUE c.id FROM c WHERE DateTimeDiff('hh', c.when, '2022-01-01T00:00:00.0000000Z') > 0", func(ds []doc) expect {
			return set(ds, func(d doc) any {
				return cmpOp(">", dateTimeDiff("hh", g(d, "when"), "2022-01-01T00:00:00.0000000Z"), 0.0)
			}, idOf)
		}),
		q("SELECT c.id, DateTimeToTimestamp(c.when) AS ts FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any { return obj("id", g(d, "id"), "ts", dateTimeToTimestamp(g(d, "when"))) })
		}),
		q("SELECT VALUE c.id FROM c WHERE DateTimeToTimestamp(c.when) < @ts", func(ds []doc) expect {
			return set(ds, func(d doc) any { return cmpOp("<", dateTimeToTimestamp(g(d, "when")), 1609459200000.0) }, idOf)
		}, p("@ts", 1609459200000)),
		q("SELECT c.id, DateTimeFromParts(DateTimePart('yyyy', c.when), DateTimePart('mm', c.when), 1) AS monthStart FROM c WHERE IS_DEFINED(c.when)", func(ds []doc) expect {
			return set(ds, func(d doc) any { return !isUndef(g(d, "when")) }, func(d doc) any {
				w := g(d, "when")
				return obj("id", g(d, "id"), "monthStart", dateTimeFromParts(int(dateTimePart("yyyy", w).(float64)), int(dateTimePart("mm", w).(float64)), 1))
			})
		}),
		q("SELECT TOP 6 c.id, c.when FROM c WHERE IS_DEFINED(c.when) ORDER BY c.when", func(ds []doc) expect {
			return sorted(ds, func(d doc) any { return !isUndef(g(d, "when")) }, func(d doc) any { return obj("id", g(d, "id"), "when", g(d, "when")) },
				key(at("when")), false).window(0, 6)
		}),
		q("SELECT VALUE LENGTH(GetCurrentDateTime())", func([]doc) expect { return values(28.0) }),
		q("SELECT VALUE GetCurrentDateTime() > '2025-01-01'", func([]doc) expect { return values(true) }),
		q("SELECT VALUE DateTimeAdd('mi', @n, '2020-02-28T23:30:00.0000000Z')", func([]doc) expect {
			return values(dateTimeAdd("mi", 45, "2020-02-28T23:30:00.0000000Z"))
		}, p("@n", 45)),
		q("SELECT VALUE DateTimeDiff('dd', '2020-01-01T23:59:59.0000000Z', '2020-01-02T00:00:01.0000000Z')", func([]doc) expect { return values(1.0) }),

		// string functions, UTF-16 (https://learn.microsoft.com/azure/cosmos-db/nosql/query/length,
		// .../substring, .../left, .../right, .../index-of, .../upper, .../lower, .../concat, .../replicate)
		q("SELECT c.id, LENGTH(c.s) AS len FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any {
				return obj("id", g(d, "id"), "len", strFn(g(d, "s"), func(s string) any { return float64(utf16Len(s)) }))
			})
		}),
		q("SELECT VALUE LENGTH('😀smile')", func([]doc) expect { return values(7.0) }),
		q("SELECT VALUE {\"a\": SUBSTRING('😀smile', 2, 3), \"b\": SUBSTRING('a😀b', 1, 2), \"c\": LEFT('𝄞music', 2), \"d\": RIGHT('a😀b', 3), \"e\": INDEX_OF('a😀b', 'b')}", func([]doc) expect {
			return values(map[string]any{"a": "smi", "b": "😀", "c": "𝄞", "d": "😀b", "e": 3.0})
		}),
		q("SELECT c.id, SUBSTRING(c.s, 1, 3) AS sub FROM c WHERE NOT CONTAINS(c.s, '😀') AND NOT CONTAINS(c.s, '𝄞')", func(ds []doc) expect {
			return set(ds, noAstral, func(d doc) any { return obj("id", g(d, "id"), "sub", utf16Sub(g(d, "s").(string), 1, 3)) })
		}),
		q("SELECT VALUE c.s FROM c WHERE LENGTH(c.s) = @len", func(ds []doc) expect {
			return set(ds, func(d doc) any { return eq(strFn(g(d, "s"), func(s string) any { return float64(utf16Len(s)) }), 7.0) }, sOf)
		}, p("@len", 7)),
		q("SELECT c.id, UPPER(c.s) AS up, LOWER(c.cat) AS low FROM c WHERE c.s IN ('apple', 'Apple', 'éclair', 'Zulu', 'mañana')", func(ds []doc) expect {
			return set(ds, func(d doc) any { return in(g(d, "s"), "apple", "Apple", "éclair", "Zulu", "mañana") }, func(d doc) any {
				return obj("id", g(d, "id"), "up", strings.ToUpper(g(d, "s").(string)), "low", strings.ToLower(g(d, "cat").(string)))
			})
		}),
		q("SELECT VALUE CONCAT(c.cat, ':', c.s, ':', c.id) FROM c WHERE c.n = 1", func(ds []doc) expect {
			return set(ds, func(d doc) any { return eq(g(d, "n"), 1.0) }, func(d doc) any { return concatOp(g(d, "cat"), ":", g(d, "s"), ":", g(d, "id")) })
		}),
		q("SELECT VALUE c.id FROM c WHERE STARTSWITH(c.s, 'a', true) AND ENDSWITH(c.cat, @e)", func(ds []doc) expect {
			return set(ds, func(d doc) any {
				return and(strFn(g(d, "s"), func(s string) any { return strings.HasPrefix(strings.ToLower(s), "a") }),
					strFn(g(d, "cat"), func(s string) any { return strings.HasSuffix(s, "a") }))
			}, idOf)
		}, p("@e", "a")),
		q("SELECT VALUE c.s FROM c WHERE CONTAINS(c.s, 'AN', true)", func(ds []doc) expect {
			return set(ds, func(d doc) any {
				return strFn(g(d, "s"), func(s string) any { return strings.Contains(strings.ToLower(s), "an") })
			}, sOf)
		}),
		q("SELECT c.id, INDEX_OF(c.s, 'a') AS i FROM c WHERE NOT CONTAINS(c.s, '😀') AND NOT CONTAINS(c.s, '𝄞')", func(ds []doc) expect {
			return set(ds, noAstral, func(d doc) any {
				s := g(d, "s").(string)
				i := strings.Index(s, "a")
				if i >= 0 {
					i = utf16Len(s[:i])
				}
				return obj("id", g(d, "id"), "i", float64(i))
			})
		}),
		q("SELECT VALUE REPLACE(c.s, 'a', '@') FROM c WHERE STARTSWITH(c.s, 'a')", func(ds []doc) expect {
			return set(ds, func(d doc) any { return strFn(g(d, "s"), func(s string) any { return strings.HasPrefix(s, "a") }) },
				func(d doc) any { return strings.ReplaceAll(g(d, "s").(string), "a", "@") })
		}),
		q("SELECT VALUE TOSTRING(c.n) || '/' || TOSTRING(c.flag) FROM c WHERE c.n < -7", func(ds []doc) expect {
			return set(ds, func(d doc) any { return cmpOp("<", g(d, "n"), -7.0) }, func(d doc) any {
				f := "false"
				if g(d, "flag") == true {
					f = "true"
				}
				return strconv.FormatFloat(g(d, "n").(float64), 'f', -1, 64) + "/" + f
			})
		}),
		q("SELECT VALUE TRIM(CONCAT('  ', c.cat, ' ')) FROM c WHERE c.n = @n", func(ds []doc) expect {
			return set(ds, func(d doc) any { return eq(g(d, "n"), 2.0) }, func(d doc) any { return strings.TrimFunc(g(d, "cat").(string), unicode.IsSpace) })
		}, p("@n", 2)),
		q("SELECT VALUE REPLICATE(LEFT(c.cat, 2), 3) FROM c WHERE c.n = 4", func(ds []doc) expect {
			return set(ds, func(d doc) any { return eq(g(d, "n"), 4.0) }, func(d doc) any { return strings.Repeat(g(d, "cat").(string)[:2], 3) })
		}),

		// math (https://learn.microsoft.com/azure/cosmos-db/nosql/query/abs, .../floor, .../ceiling, .../round)
		q("SELECT c.id, ABS(c.x) AS a, FLOOR(c.x) AS f, CEILING(c.x) AS ce, ROUND(c.x) AS r FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any {
				x := g(d, "x")
				return obj("id", g(d, "id"), "a", numFn(x, absF), "f", numFn(x, floorF), "ce", numFn(x, ceilF), "r", numFn(x, round))
			})
		}),
		q("SELECT VALUE ROUND(c.x * 10) / 10 FROM c WHERE ABS(c.x) < @lim", func(ds []doc) expect {
			return set(ds, func(d doc) any { return cmpOp("<", numFn(g(d, "x"), absF), 5.0) }, func(d doc) any {
				return arith("/", numFn(arith("*", g(d, "x"), 10.0), round), 10.0)
			})
		}, p("@lim", 5)),
		q("SELECT VALUE c.id FROM c WHERE FLOOR(c.k) = c.k AND c.k < 0", func(ds []doc) expect {
			return set(ds, func(d doc) any { return and(eq(numFn(g(d, "k"), floorF), g(d, "k")), cmpOp("<", g(d, "k"), 0.0)) }, idOf)
		}),

		// array functions (https://learn.microsoft.com/azure/cosmos-db/nosql/query/array-length,
		// .../array-contains, .../array-slice)
		q("SELECT c.id, ARRAY_LENGTH(c.tags) AS n, ARRAY_SLICE(c.tags, 1, 2) AS mid, ARRAY_SLICE(c.tags, -1) AS last FROM c", func(ds []doc) expect {
			return set(ds, nil, func(d doc) any {
				t := g(d, "tags")
				var l any = undef
				if a, ok := t.([]any); ok {
					l = float64(len(a))
				}
				return obj("id", g(d, "id"), "n", l, "mid", arraySlice(t, 1, 2), "last", arraySlice(t, -1))
			})
		}),
		q("SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.tags, @t)", func(ds []doc) expect {
			return set(ds, func(d doc) any { return arrayContains(g(d, "tags"), "green", false) }, idOf)
		}, p("@t", "green")),
		q(`SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.items, {"name": "lamp"}, true)`, func(ds []doc) expect {
			return set(ds, func(d doc) any { return arrayContains(g(d, "items"), map[string]any{"name": "lamp"}, true) }, idOf)
		}),
		q(`SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.items, {"name": "cup", "qty": 2})`, func(ds []doc) expect {
			return set(ds, func(d doc) any { return arrayContains(g(d, "items"), map[string]any{"name": "cup", "qty": 2.0}, false) }, idOf)
		}),
		q("SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(@cats, c.cat)", func(ds []doc) expect {
			return set(ds, func(d doc) any { return arrayContains([]any{"beta", "delta"}, g(d, "cat"), false) }, idOf)
		}, p("@cats", []any{"beta", "delta"})),
		q("SELECT VALUE c.id FROM c WHERE ARRAY_LENGTH(c.items) > 2", func(ds []doc) expect {
			return set(ds, func(d doc) any {
				a, ok := g(d, "items").([]any)
				if !ok {
					return undef
				}
				return len(a) > 2
			}, idOf)
		}),

		// SELECT without FROM (https://learn.microsoft.com/azure/cosmos-db/nosql/query/select)
		q("SELECT 1 AS one, 'two' AS two", func([]doc) expect { return values(map[string]any{"one": 1.0, "two": "two"}) }),
		q("SELECT VALUE [1, 'a', true, null]", func([]doc) expect { return values([]any{1.0, "a", true, nil}) }),
		q("SELECT VALUE @p", func([]doc) expect { return values(map[string]any{"x": []any{1.0, 2.0}}) }, p("@p", map[string]any{"x": []any{1, 2}})),
		q("SELECT VALUE UPPER('abc') || 'd'", func([]doc) expect { return values("ABCd") }),
		q("SELECT VALUE 7 % 3 + 2 * 4 - 10 / 4", func([]doc) expect { return values(1.0 + 8 - 2.5) }),
		q("SELECT VALUE IIF(@b, 'on', 'off')", func([]doc) expect { return values("off") }, p("@b", false)),
		q("SELECT VALUE ARRAY_LENGTH([1, [2, 3], {}])", func([]doc) expect { return values(3.0) }),
		q("SELECT VALUE ARRAY_SLICE([1, 2, 3, 4], -2)", func([]doc) expect { return values([]any{3.0, 4.0}) }),
		q("SELECT VALUE {\"none\": undefined, \"nothing\": null}", func([]doc) expect { return values(map[string]any{"nothing": nil}) }),
	}
}

func absF(x float64) float64   { return max(x, -x) }
func floorF(x float64) float64 { return float64(int64(x) - b2i(x < 0 && float64(int64(x)) != x)) }
func ceilF(x float64) float64  { return -floorF(-x) }
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
