package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cosmosctl/cosmosctl/output"
)

// The indexing policy change query --explain proposes: the container's policy with
// the service's potential indexes added, and nothing else changed, so that it can be
// applied as it is (container set-indexing-policy). A potential range index /a/? is
// added as an included path, after removing an excluded path that is exactly it (the
// same path may not be both); an excluded subtree above it (/a/*) stays, since the
// more precise path wins ("Indexing policies in Azure Cosmos DB", "Include/exclude
// precedence": a deeper path beats a shallower one, and /? beats /* at the same depth).
// A potential composite index is added to compositeIndexes unless the policy has it.

// proposeIndexingPolicy returns the current policy, and the proposal when it differs.
func proposeIndexingPolicy(current json.RawMessage, ix output.ExplainIndexes) output.ExplainPolicy {
	out := output.ExplainPolicy{Current: current, Changes: []string{}, Diff: []string{}}
	var pol map[string]json.RawMessage
	if json.Unmarshal(current, &pol) != nil {
		out.Changes = append(out.Changes, "the container's indexing policy is not a JSON object: no change proposed")
		return out
	}
	included, excluded := policyPaths(pol["includedPaths"]), policyPaths(pol["excludedPaths"])
	for _, s := range ix.PotentialSingle {
		spec := s.IndexSpec
		if !strings.HasSuffix(spec, "/?") && !strings.HasSuffix(spec, "/*") {
			continue // not a path the policy can name
		}
		for i := 0; i < len(excluded); i++ {
			if excluded[i].path == spec {
				out.Changes = append(out.Changes, "remove the excluded path "+spec)
				excluded = append(excluded[:i], excluded[i+1:]...)
				i--
			}
		}
		if !pathIndexed(included, excluded, spec) {
			included = append(included, policyPathEntry{path: spec, raw: mustJSON(map[string]string{"path": spec})})
			out.Changes = append(out.Changes, "include the path "+spec)
		}
	}
	var composites [][]json.RawMessage
	_ = json.Unmarshal(pol["compositeIndexes"], &composites)
	for _, c := range ix.PotentialComposite {
		entry, ok := compositeEntry(c.IndexSpecs)
		if !ok || hasComposite(composites, entry) {
			continue
		}
		composites = append(composites, entry)
		out.Changes = append(out.Changes, "add the composite index ("+strings.Join(c.IndexSpecs, ", ")+")")
	}
	if len(out.Changes) == 0 {
		return out
	}
	pol["includedPaths"] = entriesJSON(included)
	pol["excludedPaths"] = entriesJSON(excluded)
	if len(composites) > 0 {
		pol["compositeIndexes"] = mustJSON(composites)
	}
	proposed := mustJSON(pol)
	out.Proposed = proposed
	out.Diff = lineDiff(indentJSON(current), indentJSON(proposed))
	return out
}

// policyPathEntry is one included or excluded path, kept as sent (older policies carry
// "indexes" beside "path").
type policyPathEntry struct {
	path string
	raw  json.RawMessage
}

func policyPaths(raw json.RawMessage) []policyPathEntry {
	var list []json.RawMessage
	_ = json.Unmarshal(raw, &list)
	out := make([]policyPathEntry, 0, len(list))
	for _, r := range list {
		var p struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal(r, &p)
		out = append(out, policyPathEntry{path: p.Path, raw: r})
	}
	return out
}

func entriesJSON(list []policyPathEntry) json.RawMessage {
	raws := make([]json.RawMessage, len(list))
	for i, e := range list {
		raws[i] = e.raw
	}
	return mustJSON(raws)
}

// pathIndexed reports whether the value at spec (/a/b/?) is indexed: the most precise
// included or excluded path that covers it decides, an excluded one on a tie.
func pathIndexed(included, excluded []policyPathEntry, spec string) bool {
	doc, _ := splitIndexPath(spec)
	best := func(list []policyPathEntry) int {
		top := -1
		for _, e := range list {
			if n, ok := coverage(e.path, doc); ok && n > top {
				top = n
			}
		}
		return top
	}
	in := best(included)
	return in >= 0 && in > best(excluded)
}

// splitIndexPath reads /a/b/? or /a/* into its steps (quotes removed) and whether it
// ends in /* (a subtree).
func splitIndexPath(p string) (steps []string, subtree bool) {
	p = strings.TrimPrefix(strings.TrimSpace(p), "/")
	if p != "" {
		steps = strings.Split(p, "/")
	}
	for i, s := range steps {
		if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
			steps[i] = s[1 : len(s)-1]
		}
	}
	if n := len(steps); n > 0 && (steps[n-1] == "*" || steps[n-1] == "?") {
		subtree = steps[n-1] == "*"
		steps = steps[:n-1]
	}
	return steps, subtree
}

// coverage reports whether the policy path covers the value at doc, and how precisely.
func coverage(policyPath string, doc []string) (int, bool) {
	steps, subtree := splitIndexPath(policyPath)
	if len(doc) < len(steps) || (!subtree && len(doc) != len(steps)) {
		return 0, false
	}
	for i, s := range steps {
		if s != doc[i] && s != "[]" {
			return 0, false
		}
	}
	n := 2 * len(steps)
	if !subtree {
		n++
	}
	return n, true
}

// compositeEntry turns index metrics' specs ("/name ASC", "/age DESC") into a
// compositeIndexes entry.
func compositeEntry(specs []string) ([]json.RawMessage, bool) {
	var out []json.RawMessage
	for _, s := range specs {
		path, dir, _ := strings.Cut(strings.TrimSpace(s), " ")
		order := "ascending"
		switch strings.ToUpper(strings.TrimSpace(dir)) {
		case "", "ASC":
		case "DESC":
			order = "descending"
		default:
			return nil, false
		}
		out = append(out, mustJSON(map[string]string{"path": path, "order": order}))
	}
	return out, len(out) > 1
}

func hasComposite(list [][]json.RawMessage, entry []json.RawMessage) bool {
	type step struct{ Path, Order string }
	read := func(ci []json.RawMessage) []step {
		out := make([]step, len(ci))
		for i, r := range ci {
			var s struct {
				Path  string `json:"path"`
				Order string `json:"order"`
			}
			_ = json.Unmarshal(r, &s)
			out[i] = step{s.Path, strings.ToLower(s.Order)}
			if out[i].Order == "" {
				out[i].Order = "ascending"
			}
		}
		return out
	}
	want := read(entry)
next:
	for _, ci := range list {
		got := read(ci)
		if len(got) != len(want) {
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				continue next
			}
		}
		return true
	}
	return false
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal %T: %v", v, err)) // only maps and slices of JSON
	}
	return b
}

// indentJSON renders a policy for the diff: keys sorted (both sides go through the same
// map), two-space indentation.
func indentJSON(raw json.RawMessage) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return strings.Split(string(raw), "\n")
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return strings.Split(string(bytes.TrimSpace(b)), "\n")
}

// lineDiff is a line diff of a and b by their longest common subsequence: every line
// of both, in order, "  " when in both, "- " only in a, "+ " only in b. Lines are
// matched from the end, so that a removed or added JSON object is one run of lines
// rather than a closing brace here and an opening one there.
func lineDiff(a, b []string) []string {
	out := forwardDiff(reversed(a), reversed(b))
	slices.Reverse(out)
	return out
}

func reversed(l []string) []string {
	out := slices.Clone(l)
	slices.Reverse(out)
	return out
}

func forwardDiff(a, b []string) []string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, "  "+a[i])
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, "+ "+b[j])
			j++
		default:
			out = append(out, "- "+a[i])
			i++
		}
	}
	return out
}
