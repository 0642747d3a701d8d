package emulator

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
)

// What a container's indexing policy indexes, as the query rules and the index metrics
// read it. The emulator keeps no index: it scans, and uses the policy only to answer
// as the service does where the service's answer depends on it ("Indexing policies in
// Azure Cosmos DB", learn.microsoft.com; README, emulator fidelity, "indexing policy
// and queries").

// indexPolicy is a container's indexing policy, parsed.
type indexPolicy struct {
	included, excluded []policyPath
	composites         []compositeIndex
}

// policyPath is an included or excluded path: its steps from the root ("[]" for the
// elements of an array) and whether it ends in /* (the subtree) or /? (the value).
type policyPath struct {
	steps   []string
	subtree bool
}

// compositeIndex is one entry of compositeIndexes: its paths in order.
type compositeIndex []compositeStep

type compositeStep struct {
	steps []string
	desc  bool
}

// parsedPolicy caches a container's parsed policy for the resource it was read from:
// a replace makes a new resource, and the next query parses again.
type parsedPolicy struct {
	from   *cosmos.Container
	policy indexPolicy
}

// indexPolicy returns the container's current indexing policy. A policy the emulator
// cannot read (it keeps policies as sent) is taken as the default one, everything
// indexed and no composite index.
func (c *container) indexPolicy() *indexPolicy {
	res := c.current.Load()
	if p := c.policy.Load(); p != nil && p.from == res {
		return &p.policy
	}
	raw := defaultIndexingPolicy
	if res != nil && present(res.IndexingPolicy) {
		raw = res.IndexingPolicy
	}
	pol, err := parseIndexPolicy(raw)
	if err != nil {
		pol, _ = parseIndexPolicy(defaultIndexingPolicy)
	}
	c.policy.Store(&parsedPolicy{from: res, policy: pol})
	return &pol
}

func parseIndexPolicy(raw json.RawMessage) (indexPolicy, error) {
	var in struct {
		IncludedPaths []struct {
			Path string `json:"path"`
		} `json:"includedPaths"`
		ExcludedPaths []struct {
			Path string `json:"path"`
		} `json:"excludedPaths"`
		CompositeIndexes [][]struct {
			Path  string `json:"path"`
			Order string `json:"order"`
		} `json:"compositeIndexes"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return indexPolicy{}, err
	}
	var out indexPolicy
	for _, p := range in.IncludedPaths {
		out.included = append(out.included, parsePolicyPath(p.Path))
	}
	for _, p := range in.ExcludedPaths {
		out.excluded = append(out.excluded, parsePolicyPath(p.Path))
	}
	for _, ci := range in.CompositeIndexes {
		var idx compositeIndex
		for _, p := range ci {
			idx = append(idx, compositeStep{steps: pathSteps(p.Path), desc: strings.EqualFold(p.Order, "descending")})
		}
		out.composites = append(out.composites, idx)
	}
	return out, nil
}

// parsePolicyPath reads "/a/b/?", "/a/*", "/*", "/tags/[]/?" and "/\"odd-name\"/?".
func parsePolicyPath(path string) policyPath {
	steps := pathSteps(path)
	if n := len(steps); n > 0 && (steps[n-1] == "*" || steps[n-1] == "?") {
		return policyPath{steps: steps[:n-1], subtree: steps[n-1] == "*"}
	}
	return policyPath{steps: steps}
}

// pathSteps splits an index path into its steps, a quoted step unquoted.
func pathSteps(path string) []string {
	path = strings.TrimPrefix(strings.TrimSpace(path), "/")
	if path == "" {
		return nil
	}
	steps := strings.Split(path, "/")
	for i, s := range steps {
		if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
			steps[i] = s[1 : len(s)-1]
		}
	}
	return steps
}

// docSteps writes a document path in the policy's terms: names, array indexes as
// their number, and "[]" for any element of an array (elements).
func docSteps(path []jsondoc.PathStep, elements bool) []string {
	out := make([]string, 0, len(path)+1)
	for _, s := range path {
		if s.IsIndex {
			out = append(out, strconv.Itoa(s.Index))
		} else {
			out = append(out, s.Name)
		}
	}
	if elements {
		out = append(out, "[]")
	}
	return out
}

// matches reports whether the policy path covers the scalar value at doc, and how
// precisely: deeper paths are more precise than shallower ones, and at the same depth
// /? more than /* (the service's precedence rules, "Include/exclude precedence").
func (p policyPath) matches(doc []string) (precision int, ok bool) {
	if len(doc) < len(p.steps) || (!p.subtree && len(doc) != len(p.steps)) {
		return 0, false
	}
	for i, s := range p.steps {
		if s != doc[i] && !(s == "[]" && isArrayStep(doc[i])) {
			return 0, false
		}
	}
	precision = 2 * len(p.steps)
	if !p.subtree {
		precision++
	}
	return precision, true
}

// isArrayStep reports whether a document step addresses array elements: an index or
// "[]" (any element).
func isArrayStep(s string) bool {
	if s == "[]" {
		return true
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// indexed reports whether the policy's range index covers the value at doc: the most
// precise included or excluded path that matches decides, an excluded one on a tie.
// id and _ts are indexed whatever the policy says ("The system properties id and _ts
// will always be indexed when the cosmos account indexing mode is Consistent").
func (pol *indexPolicy) indexed(doc []string) bool {
	if len(doc) == 1 && (doc[0] == "id" || doc[0] == "_ts") {
		return true
	}
	best := func(paths []policyPath) int {
		top := -1
		for _, p := range paths {
			if n, ok := p.matches(doc); ok && n > top {
				top = n
			}
		}
		return top
	}
	in := best(pol.included)
	return in >= 0 && in > best(pol.excluded)
}

// orderComposite returns the composite index that serves a multi-key ORDER BY: the
// same paths in the same sequence, every direction the same as the query's or every
// one the opposite ("ORDER BY queries on multiple properties").
func (pol *indexPolicy) orderComposite(items []jsondoc.OrderItem) compositeIndex {
	for _, ci := range pol.composites {
		if len(ci) != len(items) {
			continue
		}
		same, opposite := true, true
		for i, it := range items {
			if !equalSteps(ci[i].steps, docSteps(it.Path, false)) {
				same, opposite = false, false
				break
			}
			if ci[i].desc == it.Descending {
				opposite = false
			} else {
				same = false
			}
		}
		if same || opposite {
			return ci
		}
	}
	return nil
}

// filterComposite returns the composite index whose paths are exactly eq (in any
// order) followed by last (when set): the shape a composite index must have to serve
// equality filters and one range filter or system function, whatever its directions
// ("Queries with filters on multiple properties").
func (pol *indexPolicy) filterComposite(eq [][]string, last []string) compositeIndex {
	n := len(eq)
	if last != nil {
		n++
	}
	for _, ci := range pol.composites {
		if len(ci) != n || (last != nil && !equalSteps(ci[n-1].steps, last)) {
			continue
		}
		ok := true
		for _, step := range ci[:len(eq)] {
			found := false
			for _, e := range eq {
				if equalSteps(step.steps, e) {
					found = true
					break
				}
			}
			if !found {
				ok = false
				break
			}
		}
		if ok {
			return ci
		}
	}
	return nil
}

func equalSteps(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// specs renders the composite index's paths as the index metrics write them:
// "/name ASC", "/age DESC".
func (ci compositeIndex) specs() []string {
	out := make([]string, len(ci))
	for i, s := range ci {
		dir := " ASC"
		if s.desc {
			dir = " DESC"
		}
		out[i] = "/" + strings.Join(s.steps, "/") + dir
	}
	return out
}

// orderByServed answers the service's 400 when the container's indexing policy cannot
// serve the query's ORDER BY, and reports whether the query may run: one item needs its
// path indexed ("The ORDER BY clause requires that the indexing policy includes an
// index for the fields being sorted"), two or more a composite index of those paths
// ("Queries that have an ORDER BY clause with two or more properties require a
// composite index").
func (s *Server) orderByServed(req *request, c *container, prog *jsondoc.Program) bool {
	items := prog.OrderBy()
	switch {
	case len(items) == 0:
		return true
	case len(items) == 1:
		if c.indexPolicy().indexed(docSteps(items[0].Path, false)) {
			return true
		}
		s.writeError(req, badRequest("The index path corresponding to the specified order-by item is excluded."), 0)
	default:
		if c.indexPolicy().orderComposite(items) != nil {
			return true
		}
		s.writeError(req, badRequest("The order by query does not have a corresponding composite index that it can be served from."), 0)
	}
	return false
}
