package querycorpus_test

import (
	"strings"
	"testing"
)

// The generated documents have every shape the corpus is about, in enough partition
// keys and documents that the answers are not vacuous.
func TestTheDataHasEveryShape(t *testing.T) {
	docs := genDocs()
	kinds := map[int]bool{}
	pks := map[any]int{}
	var astral, missingTags, emptyTags, negativeFraction, dates int
	for _, d := range docs {
		kinds[typeRank(get(d, "k"))] = true
		pks[d["pk"]]++
		if s, ok := d["s"].(string); ok && utf16Len(s) != len([]rune(s)) {
			astral++
		}
		switch tags := get(d, "tags").(type) {
		case undefinedT:
			missingTags++
		case []any:
			if len(tags) == 0 {
				emptyTags++
			}
		}
		if x, ok := d["x"].(float64); ok && x < 0 && x != float64(int64(x)) {
			negativeFraction++
		}
		if _, ok := parseDT(d["when"]); ok {
			dates++
		}
	}
	if len(kinds) != 7 {
		t.Errorf("k takes %d of the 7 kinds (undefined, null, boolean, number, string, array, object)", len(kinds))
	}
	if len(pks) != pkCount || len(docs) < 200 {
		t.Errorf("%d documents over %d partition keys", len(docs), len(pks))
	}
	if astral == 0 || missingTags == 0 || emptyTags == 0 || negativeFraction == 0 || dates < len(docs)/2 {
		t.Errorf("astral strings %d, missing tags %d, empty tags %d, negative fractions %d, dates %d", astral, missingTags, emptyTags, negativeFraction, dates)
	}
}

// check rejects what is not the oracle's answer and takes ties in any order.
func TestCheckTellsRightFromWrong(t *testing.T) {
	rows := []row{{v: "a", key: []any{1.0}}, {v: "b", key: []any{2.0}}, {v: "c", key: []any{2.0}}, {v: "d", key: []any{undef}}}
	asc := expect{rows: rows, desc: []bool{false}, limit: -1}
	for _, c := range []struct {
		e    expect
		got  []any
		want bool
	}{
		{asc, []any{"d", "a", "b", "c"}, true},
		{asc, []any{"d", "a", "c", "b"}, true}, // a tie, in either order
		{asc, []any{"a", "d", "b", "c"}, false},
		{asc, []any{"d", "a", "b"}, false},
		{asc, []any{"d", "a", "b", "b"}, false},
		{asc.window(1, 2), []any{"a", "c"}, true},  // the window cuts a tie: either side of it
		{asc.window(1, 2), []any{"a", "d"}, false}, // d is before the window
		{expect{rows: rows, limit: -1}, []any{"c", "d", "b", "a"}, true},
		{expect{rows: rows, limit: 2}, []any{"c", "a"}, true},
		{expect{rows: rows, limit: 2}, []any{"c", "c"}, false},
		{values(map[string]any{"a": 1.0, "b": []any{2.0}}), []any{map[string]any{"b": []any{2.0000000000001}, "a": 1.0}}, true},
		{values(map[string]any{"a": 1.0}), []any{map[string]any{"a": 1.0, "b": nil}}, false},
	} {
		if err := check(c.e, c.got); (err == nil) != c.want {
			t.Errorf("check(%v) = %v, want ok %v", c.got, err, c.want)
		}
	}
}

// Most of the corpus's answers across partitions have rows: a query that matches
// nothing says little. The few that mean to match nothing are listed.
func TestTheCorpusAnswersAreNotVacuous(t *testing.T) {
	docs := genDocs()
	meantEmpty := []string{"WHERE c.n LIKE '1%'", "WHERE c.n > 1000", "OFFSET 1000 LIMIT 5",
		// k is never both a string and a number: one side of the OR is undefined, so the
		// OR is true or undefined and its NOT never true.
		"WHERE NOT (c.k = 'apple' OR c.k > 5)",
		// k holds strings and booleans: the SUM is undefined.
		"SELECT VALUE SUM(c.k) FROM c"}
	entries := allEntries(t)
	for _, e := range entries {
		if _, positions := e.want(docs).blocks(); len(positions) > 0 {
			continue
		}
		known := false
		for _, m := range meantEmpty {
			known = known || strings.Contains(e.sql, m)
		}
		if !known {
			t.Errorf("the oracle's answer to %s is empty", e.sql)
		}
	}
	if len(entries) < 150 {
		t.Errorf("%d queries, fewer than 150", len(entries))
	}
}
