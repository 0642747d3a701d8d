package query

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestHybridFusion fuses component rows as the SDKs do, against the hand computation of
// emulator/jsondoc/rrf_test.go: component scores ('quick', 'dog') of documents 1–4 are
// (0.633, 0), (0, 0.894), (0.974, 0), (-1, -1) (-1: undefined, as the plan writes it).
func TestHybridFusion(t *testing.T) {
	rows := func() []hybridRow {
		return []hybridRow{
			{rid: "a", scores: []float64{0.633, 0}, data: json.RawMessage(`"1"`)},
			{rid: "b", scores: []float64{0, 0.894}, data: json.RawMessage(`"2"`)},
			{rid: "c", scores: []float64{0.974, 0}, data: json.RawMessage(`"3"`)},
			{rid: "d", scores: []float64{-1, -1}, data: json.RawMessage(`"4"`)},
		}
	}
	two := []*queryInfo{{OrderBy: []string{"Descending"}}, {OrderBy: []string{"Descending"}}}
	one, three := 1, 3
	tests := []struct {
		name string
		h    hybridInfo
		want string
	}{
		{"equal weights: 1/61+1/62 > 1/63+1/61 > 2/62 > 1/64+1/63", hybridInfo{Components: two}, `"3","2","1","4"`},
		{"weights [1, 2]", hybridInfo{Components: two, Weights: []float64{1, 2}}, `"2","3","1","4"`},
		{"an ascending component ranks the low scores first", hybridInfo{Components: []*queryInfo{{OrderBy: []string{"Descending"}}, {OrderBy: []string{"Ascending"}}}}, `"3","1","4","2"`},
		{"skip and take", hybridInfo{Components: two, Skip: &one, Take: &one}, `"2"`},
		{"take beyond the rows", hybridInfo{Components: two, Take: &three}, `"3","2","1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range hybridResults(&tt.h, rows()) {
				got = append(got, string(r))
			}
			if s := strings.Join(got, ","); s != tt.want {
				t.Errorf("got %s, want %s", s, tt.want)
			}
		})
	}
}

func TestHybridStatisticsSubstitution(t *testing.T) {
	var g globalStatistics
	for _, r := range []string{
		`{"documentCount":3,"fullTextStatistics":[{"totalWordCount":10,"hitCounts":[1,2]}]}`,
		`{"documentCount":1,"fullTextStatistics":[{"totalWordCount":3,"hitCounts":[1,0]}]}`,
	} {
		var s globalStatistics
		if err := json.Unmarshal([]byte(r), &s); err != nil {
			t.Fatal(err)
		}
		if err := g.add(s); err != nil {
			t.Fatal(err)
		}
	}
	q, err := g.substitute(`_FullTextScore(c.t, ["a", "b"], {documentdb-formattablehybridsearchquery-totaldocumentcount}, {documentdb-formattablehybridsearchquery-totalwordcount-0}, {documentdb-formattablehybridsearchquery-hitcountsarray-0})`, 1)
	if want := `_FullTextScore(c.t, ["a", "b"], 4, 13, [2,2])`; err != nil || q != want {
		t.Errorf("got %q (%v), want %q", q, err, want)
	}
	var bad globalStatistics
	_ = json.Unmarshal([]byte(`{"documentCount":1,"fullTextStatistics":[{"totalWordCount":3,"hitCounts":[1]}]}`), &bad)
	if err := g.add(bad); err == nil {
		t.Error("ranges counting different numbers of terms were summed")
	}
}
