package query

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// A hybrid search plan (hybridSearchQueryInfo) is what the service answers for ORDER
// BY RANK FullTextScore(…), VectorDistance(…) or RRF(…) across partitions. A vector
// component scores with _VectorScore and gathers no statistics: the plan ranks it in
// its orderBy direction like any other ("Descending" for a similarity, "Ascending"
// when reversed; .NET QueryPlanRetrieverTests), and the client follows the plan, never
// the function's name, as the JavaScript SDK's extractComponentWeights does (its
// comparator is ascending only for an "Ascending" orderBy; a component of the
// rewritten shape, with no orderBy, ranks descending and carries a reversed score
// negated). The pipeline runs it as the
// official SDKs do (azure-sdk-for-js hybridQueryExecutionContext and
// GlobalStatisticsAggregator, .NET HybridSearchCrossPartitionQueryPipelineStage):
//
//  1. the global statistics query on every range, summing documentCount and, per
//     full-text component, totalWordCount and each term's hit count;
//  2. each component query on every range, with the sums written over the
//     placeholders (the JavaScript SDK's reading: component i's
//     totalwordcount-i/hitcountsarray-i take the next statistics entry), every page;
//  3. one row per _rid; with several components each is ranked (equal scores share a
//     rank, the next score takes the next one) in its plan's direction, and rows sorted
//     by Σ weight/(60 + rank), weights 1 unless componentWeights says otherwise;
//  4. skip, then take.
//
// The whole result is computed before the first item is returned, and cannot resume
// from a continuation token (the SDKs refuse one for hybrid search too).
type hybridInfo struct {
	GlobalStatisticsQuery    string       `json:"globalStatisticsQuery"`
	Components               []*queryInfo `json:"componentQueryInfos"`
	Weights                  []float64    `json:"componentWeights"`
	Skip                     *int         `json:"skip"`
	Take                     *int         `json:"take"`
	RequiresGlobalStatistics bool         `json:"requiresGlobalStatistics"`
}

const (
	hybridDocumentCount = "{documentdb-formattablehybridsearchquery-totaldocumentcount}"
	hybridWordCount     = "{documentdb-formattablehybridsearchquery-totalwordcount-%d}"
	hybridHitCounts     = "{documentdb-formattablehybridsearchquery-hitcountsarray-%d}"
	rrfConstant         = 60
)

var errHybridUnresumable = errors.New("a hybrid search (ORDER BY RANK across partitions) has no continuation token: the service's plan ranks the whole result before the first item, and the SDKs refuse to resume it too; run it again without --max-items, or within one partition key (--pk)")

func parseHybrid(raw json.RawMessage) (*hybridInfo, error) {
	var h hybridInfo
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("the query plan's hybridSearchQueryInfo is not what the service sends: %v", err)
	}
	if len(h.Components) == 0 {
		return nil, fmt.Errorf("the query plan's hybridSearchQueryInfo has no component queries")
	}
	for _, c := range h.Components {
		if c == nil || c.RewrittenQuery == "" || len(c.OrderBy) > 1 {
			return nil, fmt.Errorf("the query plan's hybrid search component is not one ranked query")
		}
	}
	if len(h.Weights) > 0 && len(h.Weights) != len(h.Components) {
		return nil, fmt.Errorf("the query plan has %d component weights for %d components", len(h.Weights), len(h.Components))
	}
	return &h, nil
}

type fullTextStatistics struct {
	TotalWordCount float64   `json:"totalWordCount"`
	HitCounts      []float64 `json:"hitCounts"`
}

type globalStatistics struct {
	DocumentCount      float64              `json:"documentCount"`
	FullTextStatistics []fullTextStatistics `json:"fullTextStatistics"`
}

func (g *globalStatistics) add(o globalStatistics) error {
	g.DocumentCount += o.DocumentCount
	if g.FullTextStatistics == nil {
		g.FullTextStatistics = o.FullTextStatistics
		return nil
	}
	if len(o.FullTextStatistics) != len(g.FullTextStatistics) {
		return fmt.Errorf("the ranges' global statistics have %d and %d full-text entries", len(g.FullTextStatistics), len(o.FullTextStatistics))
	}
	for i, s := range o.FullTextStatistics {
		t := &g.FullTextStatistics[i]
		if len(s.HitCounts) != len(t.HitCounts) {
			return fmt.Errorf("the ranges' global statistics count %d and %d terms", len(t.HitCounts), len(s.HitCounts))
		}
		t.TotalWordCount += s.TotalWordCount
		for j, h := range s.HitCounts {
			t.HitCounts[j] += h
		}
	}
	return nil
}

// substitute writes the statistics over a component query's placeholders.
func (g *globalStatistics) substitute(q string, components int) (string, error) {
	q = strings.ReplaceAll(q, hybridDocumentCount, num(g.DocumentCount))
	next := 0
	for i := 0; i < components; i++ {
		wc := fmt.Sprintf(hybridWordCount, i)
		if !strings.Contains(q, wc) {
			continue
		}
		if next >= len(g.FullTextStatistics) {
			return "", fmt.Errorf("the component queries name more full-text statistics than the global statistics query gathered")
		}
		s := g.FullTextStatistics[next]
		hits := make([]string, len(s.HitCounts))
		for j, h := range s.HitCounts {
			hits[j] = num(h)
		}
		q = strings.ReplaceAll(q, wc, num(s.TotalWordCount))
		q = strings.ReplaceAll(q, fmt.Sprintf(hybridHitCounts, i), "["+strings.Join(hits, ",")+"]")
		next++
	}
	return q, nil
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// hybridRow is one document a component query returned.
type hybridRow struct {
	rid    string
	scores []float64
	data   json.RawMessage
}

// parseHybridRow reads a component row in either of the service's shapes:
// {"_rid", "orderByItems", "payload": {"payload": …, "componentScores": […]}} or
// {"_rid", "payload": …, "componentScores": […]}.
func parseHybridRow(raw json.RawMessage) (hybridRow, error) {
	var r struct {
		RID     string          `json:"_rid"`
		Payload json.RawMessage `json:"payload"`
		Scores  []float64       `json:"componentScores"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.RID == "" || r.Payload == nil {
		return hybridRow{}, fmt.Errorf("a hybrid search component row lacks _rid or payload: %.200s", raw)
	}
	row := hybridRow{rid: r.RID, scores: r.Scores, data: r.Payload}
	if r.Scores == nil {
		var inner struct {
			Payload json.RawMessage `json:"payload"`
			Scores  []float64       `json:"componentScores"`
		}
		if err := json.Unmarshal(r.Payload, &inner); err != nil || inner.Scores == nil {
			return hybridRow{}, fmt.Errorf("a hybrid search component row lacks componentScores: %.200s", raw)
		}
		row.scores, row.data = inner.Scores, inner.Payload
	}
	if row.data == nil {
		row.data = json.RawMessage("{}")
	}
	return row, nil
}

// setupHybrid runs a hybrid search plan to its end and leaves the results to emit.
func (it *Iterator) setupHybrid(ctx context.Context, p *queryPlan) error {
	h := it.shape.hybrid
	all, info, err := it.be.ranges(ctx, false)
	it.record(info)
	if err != nil {
		return err
	}
	targets := targetRanges(all, p.QueryRanges)
	var stats globalStatistics
	if h.RequiresGlobalStatistics {
		for _, r := range targets {
			rows, err := it.drainRange(ctx, r, h.GlobalStatisticsQuery)
			if err != nil {
				return err
			}
			for _, raw := range rows {
				var g globalStatistics
				if err := json.Unmarshal(raw, &g); err != nil {
					return fmt.Errorf("the global statistics of range %s: %v", r.ID, err)
				}
				if err := stats.add(g); err != nil {
					return err
				}
			}
		}
	}
	var rows []hybridRow
	seen := map[string]bool{}
	for _, c := range h.Components {
		q := strings.ReplaceAll(c.RewrittenQuery, orderByPlaceholder, "true")
		if h.RequiresGlobalStatistics {
			if q, err = stats.substitute(q, len(h.Components)); err != nil {
				return err
			}
		}
		for _, r := range targets {
			items, err := it.drainRange(ctx, r, q)
			if err != nil {
				return err
			}
			for _, raw := range items {
				row, err := parseHybridRow(raw)
				if err != nil {
					return err
				}
				if len(row.scores) != 0 && len(row.scores) != len(h.Components) {
					return fmt.Errorf("a hybrid search row has %d component scores for %d components", len(row.scores), len(h.Components))
				}
				if !seen[row.rid] {
					seen[row.rid] = true
					rows = append(rows, row)
				}
			}
		}
	}
	it.out = hybridResults(h, rows)
	it.drained = true
	return nil
}

// drainRange reads every page of query q in range r.
func (it *Iterator) drainRange(ctx context.Context, r epkRange, q string) ([]json.RawMessage, error) {
	spec := cosmos.QuerySpec{Query: q, Parameters: it.o.Spec.Parameters}
	req := pageRequest{spec: spec, rangeID: r.ID, maxItems: it.o.PageSize}
	if r.Scoped {
		req.startEPK, req.endEPK = r.Min, r.Max
	}
	var out []json.RawMessage
	for {
		pg, info, err := it.be.page(ctx, req)
		it.record(info)
		if err != nil {
			if isRangeGone(err) {
				return nil, fmt.Errorf("partition key range %s split or merged during the hybrid search; run the query again: %w", r.ID, err)
			}
			return nil, err
		}
		out = append(out, pg.items...)
		if pg.continuation == "" {
			return out, nil
		}
		req.continuation = pg.continuation
	}
}

// hybridResults fuses the rows and applies skip and take.
func hybridResults(h *hybridInfo, rows []hybridRow) []json.RawMessage {
	if len(rows) > 1 {
		if len(h.Components) == 1 {
			if len(rows[0].scores) == 1 { // else the component's own order, as merged
				asc := len(h.Components[0].OrderBy) == 1 && h.Components[0].OrderBy[0] == "Ascending"
				sort.SliceStable(rows, func(a, b int) bool {
					if asc {
						return rows[a].scores[0] < rows[b].scores[0]
					}
					return rows[a].scores[0] > rows[b].scores[0]
				})
			}
		} else {
			rrf := make(map[string]float64, len(rows))
			idx := make([]int, len(rows))
			for i, c := range h.Components {
				asc := len(c.OrderBy) == 1 && c.OrderBy[0] == "Ascending"
				w := 1.0
				if len(h.Weights) > 0 {
					w = h.Weights[i]
				}
				for j := range idx {
					idx[j] = j
				}
				score := func(j int) float64 {
					if len(rows[j].scores) == 0 { // no scores: the worst in this order
						if asc {
							return math.Inf(1)
						}
						return math.Inf(-1)
					}
					return rows[j].scores[i]
				}
				sort.SliceStable(idx, func(a, b int) bool {
					if asc {
						return score(idx[a]) < score(idx[b])
					}
					return score(idx[a]) > score(idx[b])
				})
				rank := 0
				for n, j := range idx {
					if n == 0 || score(j) != score(idx[n-1]) {
						rank++
					}
					rrf[rows[j].rid] += w / float64(rrfConstant+rank)
				}
			}
			sort.SliceStable(rows, func(a, b int) bool { return rrf[rows[a].rid] > rrf[rows[b].rid] })
		}
	}
	out := make([]json.RawMessage, 0, len(rows))
	for _, r := range rows {
		out = append(out, bytes.TrimSpace(r.data))
	}
	if h.Skip != nil && *h.Skip > 0 {
		out = out[min(*h.Skip, len(out)):]
	}
	if h.Take != nil && *h.Take >= 0 && *h.Take < len(out) {
		out = out[:*h.Take]
	}
	return out
}
