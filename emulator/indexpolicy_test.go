package emulator

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// TestIndexedPathsFollowThePolicysPrecedence: the most precise included or excluded
// path decides whether a value is indexed, as "Include/exclude precedence" has it.
func TestIndexedPathsFollowThePolicysPrecedence(t *testing.T) {
	cases := []struct {
		name   string
		policy string
		path   string
		want   bool
	}{
		{"the default policy indexes everything", string(defaultIndexingPolicy), "a/b", true},
		{"but _etag", string(defaultIndexingPolicy), "_etag", false},
		{"an excluded subtree", `{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/a/*"}]}`, "a/b", false},
		{"the excluded subtree's own value", `{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/a/*"}]}`, "a", false},
		{"a deeper included path wins over a shallower excluded one",
			`{"includedPaths":[{"path":"/food/ingredients/nutrition/*"}],"excludedPaths":[{"path":"/food/ingredients/*"}]}`, "food/ingredients/nutrition/kcal", true},
		{"the excluded rest of it", `{"includedPaths":[{"path":"/food/ingredients/nutrition/*"},{"path":"/*"}],"excludedPaths":[{"path":"/food/ingredients/*"}]}`, "food/ingredients/salt", false},
		{"/? wins over /* at the same depth", `{"includedPaths":[{"path":"/a/?"}],"excludedPaths":[{"path":"/a/*"}]}`, "a", true},
		{"/? covers the value only", `{"includedPaths":[{"path":"/a/?"}],"excludedPaths":[{"path":"/*"}]}`, "a/b", false},
		{"the exclude-all strategy leaves other paths out", `{"includedPaths":[{"path":"/x/?"}],"excludedPaths":[{"path":"/*"}]}`, "pk", false},
		{"id is indexed whatever the policy", `{"includedPaths":[],"excludedPaths":[{"path":"/*"}]}`, "id", true},
		{"and _ts", `{"includedPaths":[],"excludedPaths":[{"path":"/*"}]}`, "_ts", true},
		{"[] addresses every element", `{"includedPaths":[{"path":"/tags/[]/?"}],"excludedPaths":[{"path":"/*"}]}`, "tags/3", true},
		{"quoted names", `{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"odd-name\"/?"}]}`, "odd-name", false},
		{"no path matches, nothing is indexed", `{"includedPaths":[{"path":"/b/?"}],"excludedPaths":[]}`, "a", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pol, err := parseIndexPolicy(json.RawMessage(c.policy))
			if err != nil {
				t.Fatal(err)
			}
			if got := pol.indexed(strings.Split(c.path, "/")); got != c.want {
				t.Errorf("indexed(/%s/?) under %s = %v, want %v", c.path, c.policy, got, c.want)
			}
		})
	}
}

// TestOrderByNeedsTheIndexThePolicyGives: an ORDER BY runs only when the container's
// indexing policy can serve it, and otherwise answers the service's 400.
func TestOrderByNeedsTheIndexThePolicyGives(t *testing.T) {
	s := startTest(t)
	docs := []string{
		`{"id":"1","pk":"a","a":2,"b":"x","secret":3}`,
		`{"id":"2","pk":"a","a":1,"b":"y","secret":1}`,
		`{"id":"3","pk":"a","a":2,"b":"w","secret":2}`,
		`{"id":"4","pk":"a","b":"z"}`,
	}
	policyContainer(t, s, "plain", "", docs...)
	policyContainer(t, s, "ab", `{"indexingMode":"consistent","includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/secret/?"}],`+
		`"compositeIndexes":[[{"path":"/a","order":"ascending"},{"path":"/b","order":"descending"}],[{"path":"/a"},{"path":"/b"},{"path":"/id"}]]}`, docs...)
	policyContainer(t, s, "none", `{"indexingMode":"consistent","includedPaths":[],"excludedPaths":[{"path":"/*"}]}`, docs...)
	const (
		noComposite = "The order by query does not have a corresponding composite index that it can be served from."
		excluded    = "The index path corresponding to the specified order-by item is excluded."
	)
	cases := []struct {
		name, container, sql string
		want                 string // the ids in order, or the 400's message
	}{
		{"one item needs only its path indexed", "plain", "SELECT * FROM c ORDER BY c.b", "3 1 2 4"},
		{"two items without a composite index", "plain", "SELECT * FROM c ORDER BY c.a, c.b", noComposite},
		{"a composite index in the same directions", "ab", "SELECT * FROM c ORDER BY c.a ASC, c.b DESC", "4 2 1 3"},
		{"a composite index in the opposite directions on every path", "ab", "SELECT * FROM c ORDER BY c.a DESC, c.b ASC", "3 1 2 4"},
		{"not on only one of them", "ab", "SELECT * FROM c ORDER BY c.a ASC, c.b ASC", noComposite},
		{"not in another sequence", "ab", "SELECT * FROM c ORDER BY c.b DESC, c.a ASC", noComposite},
		{"not a prefix of a longer composite index", "ab", "SELECT * FROM c ORDER BY c.a, c.id", noComposite},
		{"a composite index of three paths", "ab", "SELECT * FROM c ORDER BY c.a, c.b, c.id", "4 2 3 1"},
		{"one item on an excluded path", "ab", "SELECT * FROM c ORDER BY c.secret", excluded},
		{"one item on a path the exclude-all strategy leaves out", "none", "SELECT * FROM c ORDER BY c.a", excluded},
		{"id is indexed whatever the policy", "none", "SELECT * FROM c ORDER BY c.id DESC", "4 3 2 1"},
		{"the rewritten query of a plan too", "plain", "SELECT c._rid, [{\"item\": c.a}, {\"item\": c.b}] AS orderByItems, c AS payload\nFROM c\nWHERE true\nORDER BY c.a, c.b", noComposite},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := queryIn(t, s, c.container, inPK, c.sql)
			if strings.HasPrefix(c.want, "The ") {
				var e cosmos.Error
				_ = json.Unmarshal(resp.Body, &e)
				if resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Message, c.want) {
					t.Fatalf("%d %s, want 400 %q", resp.StatusCode, resp.Body, c.want)
				}
				return
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, resp.Body)
			}
			if got := feedIDs(t, resp.Body); got != c.want {
				t.Errorf("ids %s, want %s", got, c.want)
			}
		})
	}
}

// feedIDs lists the ids of a query page's documents (or payloads), space-separated.
func feedIDs(t *testing.T, body []byte) string {
	t.Helper()
	var feed struct {
		Documents []struct {
			ID      string `json:"id"`
			Payload struct {
				ID string `json:"id"`
			} `json:"payload"`
		} `json:"Documents"`
	}
	if err := json.Unmarshal(body, &feed); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	var ids []string
	for _, d := range feed.Documents {
		ids = append(ids, d.ID+d.Payload.ID)
	}
	return strings.Join(ids, " ")
}

// TestOrderByReturnsItemsWithoutTheSortProperty: "Queries with ORDER BY return all
// items, including items where the property in the ORDER BY clause isn't defined" —
// undefined sorts lowest, first ascending and last descending, by one item or several.
func TestOrderByReturnsItemsWithoutTheSortProperty(t *testing.T) {
	s := startTest(t)
	docs := []string{
		`{"id":"1","pk":"a","n":2,"m":1}`,
		`{"id":"2","pk":"a"}`,
		`{"id":"3","pk":"a","n":null}`,
		`{"id":"4","pk":"a","n":1}`,
		`{"id":"5","pk":"a","n":1,"m":0}`,
	}
	policyContainer(t, s, "plain", "", docs...)
	policyContainer(t, s, "nm", `{"indexingMode":"consistent","includedPaths":[{"path":"/*"}],"excludedPaths":[],"compositeIndexes":[[{"path":"/n"},{"path":"/m"}]]}`, docs...)
	cases := []struct{ container, sql, want string }{
		{"plain", "SELECT * FROM c ORDER BY c.n", "2 3 4 5 1"},
		{"plain", "SELECT * FROM c ORDER BY c.n DESC", "1 5 4 3 2"},
		{"nm", "SELECT * FROM c ORDER BY c.n, c.m", "2 3 4 5 1"},
		{"nm", "SELECT * FROM c ORDER BY c.n DESC, c.m DESC", "1 5 4 3 2"},
	}
	for _, c := range cases {
		resp := queryIn(t, s, c.container, inPK, c.sql)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", c.sql, resp.StatusCode, resp.Body)
		}
		if got := feedIDs(t, resp.Body); got != c.want {
			t.Errorf("%s: ids %s, want %s", c.sql, got, c.want)
		}
	}
}

// TestQueryPlansDoNotRefuseAnOrderByTheIndexCannotServe: the gateway's plan is made
// without the index; the refusal comes from the ranges that run the rewritten query.
func TestQueryPlansDoNotRefuseAnOrderByTheIndexCannotServe(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	resp := c.mustDo(s.Endpoint(), "POST", itemsPath(), planHeaders(), cosmos.QuerySpec{Query: "SELECT * FROM c ORDER BY c.a, c.b"})
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(resp.Body), `"orderBy":["Ascending","Ascending"]`) {
		t.Fatalf("plan: %d %s", resp.StatusCode, resp.Body)
	}
	resp = c.mustDo(s.Endpoint(), "POST", itemsPath(), docQueryHeaders(rangeScope("0")), cosmos.QuerySpec{Query: "SELECT * FROM c ORDER BY c.a, c.b"})
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("the range's query: %d %s, want 400", resp.StatusCode, resp.Body)
	}
}
