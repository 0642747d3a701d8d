package query

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func scored(t *testing.T, id string, score string) entry {
	t.Helper()
	v, err := parseValue(json.RawMessage(score))
	if err != nil {
		t.Fatal(err)
	}
	return entry{out: json.RawMessage(fmt.Sprintf("%q", id)), orderKey: &orderKey{vals: []value{v}, id: id}}
}

func joined(items []json.RawMessage) string {
	var s []string
	for _, it := range items {
		s = append(s, string(it))
	}
	return strings.Join(s, ",")
}

// The buffer keeps only the k best rows whatever arrives, best first; equal scores go
// by range (lower minInclusive first), then by the range's own order.
func TestNonStreamingBufferKeepsTheBestRowsWithTheMergesTieBreak(t *testing.T) {
	top := newTopRows(3, sorter{desc: []bool{true}}) // a similarity: highest first
	top.add(scored(t, "a", "0.1"), "80")
	top.add(scored(t, "b", "0.9"), "80")
	top.add(scored(t, "c", "0.5"), "")
	if len(top.rows) != 3 {
		t.Fatalf("kept %d rows", len(top.rows))
	}
	top.add(scored(t, "d", "0.05"), "") // worse than every kept row: dropped
	top.add(scored(t, "e", "0.5"), "80")
	top.add(scored(t, "f", "0.5"), "")
	if len(top.rows) != 3 {
		t.Fatalf("the buffer grew past k: %d rows", len(top.rows))
	}
	if got := joined(top.results()); got != `"b","c","f"` {
		t.Fatalf("got %s, want b, then the ties of range \"\" in their order", got)
	}

	asc := newTopRows(2, sorter{desc: []bool{false}}) // a distance: lowest first
	for i, s := range []string{"3", "1", "2", "0.5"} {
		asc.add(scored(t, fmt.Sprint(i), s), "")
	}
	if got := joined(asc.results()); got != `"3","1"` {
		t.Fatalf("got %s, want the two lowest distances", got)
	}
	none := newTopRows(0, sorter{desc: []bool{true}})
	none.add(scored(t, "x", "1"), "")
	if got := none.results(); len(got) != 0 {
		t.Fatalf("TOP 0 returns %s", joined(got))
	}
}

func TestNonStreamingBufferBounds(t *testing.T) {
	for _, c := range []struct {
		s    shape
		want int
		err  string
	}{
		{shape{top: 10, limit: -1}, 10, ""},
		{shape{top: -1, offset: 5, limit: 10}, 15, ""},
		{shape{top: 0, limit: -1}, 0, ""},
		{shape{top: -1, limit: -1}, 0, "needs TOP n"},
		{shape{top: 50001, limit: -1}, 0, "at most 50000"},
		{shape{top: -1, offset: 49999, limit: 2}, 0, "asks for 50001"},
	} {
		n, err := nonStreamingBuffer(c.s)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: %v, want an error saying %q", c.s, err, c.err)
			}
			continue
		}
		if err != nil || n != c.want {
			t.Errorf("%+v: %d, %v, want %d", c.s, n, err, c.want)
		}
	}
}
