package emulator

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
)

// Index metrics: which indexes a query page used and which would have helped, in
// x-ms-cosmos-index-utilization, when the request asks with
// x-ms-cosmos-populateindexmetrics: true (V1: base64 of a JSON IndexUtilizationInfo, as
// azcosmos, the Java SDK and older .NET, JS and Python SDKs ask) or
// x-ms-cosmos-populateindexmetrics-V2: true (URL-encoded JSON of UtilizedIndexes and
// PotentialIndexes, as JS SDK 4.10.1 asks). The shapes, the rules and their sources are
// in the README (emulator fidelity, "per-request figures"). The emulator scans instead of
// using an index; what it reports is what the service's index would do under the
// container's indexing policy.

// headerPopulateIndexMetricsV2 asks for the second form of the index metrics.
const headerPopulateIndexMetricsV2 = "x-ms-cosmos-populateindexmetrics-V2"

// indexUtilization is what the index metrics report of one query.
type indexUtilization struct {
	utilizedSingle, potentialSingle       []singleIndexUse
	utilizedComposite, potentialComposite [][]string
}

// singleIndexUse is one range index path a filter uses or would use.
type singleIndexUse struct {
	filter string // the filter expression, "" for the request's partition key
	spec   string // the index path: /name/?
}

// utilizationOf works out a query's index metrics: every filter term on a path is a
// utilized single index when the policy indexes the path and a potential one when it
// does not; a query scoped to a partition key uses the index of its path (the Python
// SDK's live test_populate_index_metrics: {"FilterExpression": "", "IndexSpec": "/pk/?"});
// equality filters with a range filter or system function (one composite index for
// each), or two or more equality filters, call for a composite index of those paths,
// utilized when the policy has it and potential otherwise; a multi-key ORDER BY uses its
// composite index.
func utilizationOf(pol *indexPolicy, prog *jsondoc.Program, pkPaths [][]string) indexUtilization {
	var u indexUtilization
	seen := map[singleIndexUse]bool{}
	addSingle := func(use singleIndexUse, steps []string) {
		if seen[use] {
			return
		}
		seen[use] = true
		if pol.indexed(steps) {
			u.utilizedSingle = append(u.utilizedSingle, use)
		} else {
			u.potentialSingle = append(u.potentialSingle, use)
		}
	}
	for _, steps := range pkPaths {
		if pol.indexed(steps) {
			addSingle(singleIndexUse{spec: singleSpec(steps)}, steps)
		}
	}
	var eq, last [][]string
	has := func(list [][]string, steps []string) bool {
		for _, l := range list {
			if equalSteps(l, steps) {
				return true
			}
		}
		return false
	}
	for _, t := range prog.FilterTerms() {
		steps := docSteps(t.Path, t.Elements)
		addSingle(singleIndexUse{filter: t.Expression, spec: singleSpec(steps)}, steps)
		switch {
		case !t.Conjunct || t.Elements:
		case t.Kind == jsondoc.TermEquality && !has(eq, steps):
			eq = append(eq, steps)
		case t.Kind != jsondoc.TermEquality && !has(last, steps):
			last = append(last, steps)
		}
	}
	seenComposite := map[string]bool{}
	addComposite := func(utilized bool, specs []string) {
		key := strings.Join(specs, ",")
		if seenComposite[key] {
			return
		}
		seenComposite[key] = true
		if utilized {
			u.utilizedComposite = append(u.utilizedComposite, specs)
		} else {
			u.potentialComposite = append(u.potentialComposite, specs)
		}
	}
	if items := prog.OrderBy(); len(items) > 1 {
		if ci := pol.orderComposite(items); ci != nil {
			addComposite(true, ci.specs())
		}
	}
	candidate := func(tail []string) {
		if ci := pol.filterComposite(eq, tail); ci != nil {
			addComposite(true, ci.specs())
			return
		}
		var specs []string
		for _, e := range eq {
			specs = append(specs, "/"+strings.Join(e, "/")+" ASC")
		}
		if tail != nil {
			specs = append(specs, "/"+strings.Join(tail, "/")+" ASC")
		}
		addComposite(false, specs)
	}
	switch {
	case len(eq) >= 1 && len(last) >= 1:
		for _, l := range last {
			if !has(eq, l) {
				candidate(l)
			}
		}
	case len(eq) >= 2:
		candidate(nil)
	}
	return u
}

// singleSpec is a range index path as the index metrics write it: /name/?.
func singleSpec(steps []string) string { return "/" + strings.Join(steps, "/") + "/?" }

// The JSON of the two forms. Every list is written, empty or not, as the service writes
// them (test_populate_index_metrics compares the decoded V1 object whole).
type (
	v1Utilization struct {
		UtilizedSingleIndexes     []v1Single    `json:"UtilizedSingleIndexes"`
		PotentialSingleIndexes    []v1Single    `json:"PotentialSingleIndexes"`
		UtilizedCompositeIndexes  []v1Composite `json:"UtilizedCompositeIndexes"`
		PotentialCompositeIndexes []v1Composite `json:"PotentialCompositeIndexes"`
	}
	v1Single struct {
		FilterExpression string `json:"FilterExpression"`
		IndexSpec        string `json:"IndexSpec"`
		FilterPreciseSet bool   `json:"FilterPreciseSet"`
		IndexPreciseSet  bool   `json:"IndexPreciseSet"`
		IndexImpactScore string `json:"IndexImpactScore"`
	}
	v1Composite struct {
		IndexSpecs       []string `json:"IndexSpecs"`
		IndexPreciseSet  bool     `json:"IndexPreciseSet"`
		IndexImpactScore string   `json:"IndexImpactScore"`
	}
	v2Utilization struct {
		UtilizedIndexes  v2Indexes `json:"UtilizedIndexes"`
		PotentialIndexes v2Indexes `json:"PotentialIndexes"`
	}
	v2Indexes struct {
		SingleIndexes    []v2Single    `json:"SingleIndexes"`
		CompositeIndexes []v2Composite `json:"CompositeIndexes"`
	}
	v2Single struct {
		IndexSpec        string `json:"IndexSpec"`
		IndexImpactScore string `json:"IndexImpactScore"`
	}
	v2Composite struct {
		IndexSpecs       []string `json:"IndexSpecs"`
		IndexImpactScore string   `json:"IndexImpactScore"`
	}
)

// impactHigh is the only index impact score the emulator gives: the documented examples
// show no other for these query shapes, and the service's rule for "Low" is not known.
const impactHigh = "High"

// v1 renders the first form: base64 of the JSON, a single index per filter expression.
// An index in use is a precise set, a potential one not, as the .NET SDK's parser test
// shows a potential composite index (IndexUtilizationInfoTests: "IndexPreciseSet": false).
func (u indexUtilization) v1() string {
	out := v1Utilization{
		UtilizedSingleIndexes: []v1Single{}, PotentialSingleIndexes: []v1Single{},
		UtilizedCompositeIndexes: []v1Composite{}, PotentialCompositeIndexes: []v1Composite{},
	}
	for _, s := range u.utilizedSingle {
		out.UtilizedSingleIndexes = append(out.UtilizedSingleIndexes, v1Single{s.filter, s.spec, true, true, impactHigh})
	}
	for _, s := range u.potentialSingle {
		out.PotentialSingleIndexes = append(out.PotentialSingleIndexes, v1Single{s.filter, s.spec, true, false, impactHigh})
	}
	for _, c := range u.utilizedComposite {
		out.UtilizedCompositeIndexes = append(out.UtilizedCompositeIndexes, v1Composite{c, true, impactHigh})
	}
	for _, c := range u.potentialComposite {
		out.PotentialCompositeIndexes = append(out.PotentialCompositeIndexes, v1Composite{c, false, impactHigh})
	}
	b, _ := json.Marshal(out)
	return base64.StdEncoding.EncodeToString(b)
}

// v2 renders the second form: the JSON URL-encoded (the SDKs decode it with
// decodeURIComponent, HttpUtility.UrlDecode and urllib.parse.unquote, so a space is
// %20, never +), each index path once.
func (u indexUtilization) v2() string {
	singles := func(uses []singleIndexUse) []v2Single {
		out := []v2Single{}
		seen := map[string]bool{}
		for _, s := range uses {
			if !seen[s.spec] {
				seen[s.spec] = true
				out = append(out, v2Single{s.spec, impactHigh})
			}
		}
		return out
	}
	composites := func(list [][]string) []v2Composite {
		out := []v2Composite{}
		for _, c := range list {
			out = append(out, v2Composite{c, impactHigh})
		}
		return out
	}
	b, _ := json.Marshal(v2Utilization{
		UtilizedIndexes:  v2Indexes{singles(u.utilizedSingle), composites(u.utilizedComposite)},
		PotentialIndexes: v2Indexes{singles(u.potentialSingle), composites(u.potentialComposite)},
	})
	return strings.ReplaceAll(url.QueryEscape(string(b)), "+", "%20")
}

// indexMetricsHeader sets x-ms-cosmos-index-utilization on a query page when the
// request asks for it, in the form it asks for (V2 when it asks for both), and when the
// page has rows: "This header is returned only if the query returns some items" (the
// index metrics article). A request that does not ask gets no header (azcosmos' query
// tests fail on one that arrives unasked).
func (s *Server) indexMetricsHeader(req *request, c *container, prog *jsondoc.Program, target queryTarget, rows int) {
	h := req.r.Header
	v1 := strings.EqualFold(h.Get(cosmos.HeaderPopulateIndexMetrics), "true")
	v2 := strings.EqualFold(h.Get(headerPopulateIndexMetricsV2), "true")
	if (!v1 && !v2) || rows == 0 {
		return
	}
	u := utilizationOf(c.indexPolicy(), prog, partitionKeyIndexPaths(c, target, h.Get(cosmos.HeaderPartitionKey)))
	if v2 {
		req.w.Header().Set(cosmos.HeaderIndexUtilization, u.v2())
	} else {
		req.w.Header().Set(cosmos.HeaderIndexUtilization, u.v1())
	}
}

// partitionKeyIndexPaths are the partition key paths a query scoped to a partition key
// filters on: one per component the header gives (a prefix of a hierarchical key gives
// fewer than the paths).
func partitionKeyIndexPaths(c *container, target queryTarget, header string) [][]string {
	if target.pkIdentity == "" || header == "" {
		return nil
	}
	var components []json.RawMessage
	if json.Unmarshal([]byte(header), &components) != nil {
		return nil
	}
	paths := c.meta.PartitionKey.Paths
	var out [][]string
	for i := range min(len(components), len(paths)) {
		out = append(out, pathSteps(paths[i]))
	}
	return out
}
