package cmd

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/output"
)

// policyExcluding is the default indexing policy with path excluded as well.
func policyExcluding(path string) string {
	return `{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"` + path + `"},{"path":"/\"_etag\"/?"}]}`
}

func potentialSpecs(r output.ExplainReport) []string {
	var out []string
	for _, s := range r.Indexes.PotentialSingle {
		out = append(out, s.IndexSpec)
	}
	return out
}

// The acceptance of issue 24's --explain: a filter on a path the indexing policy
// excludes shows a scan (every document of every range retrieved for a third of them
// output) and proposes the index; after the proposed policy is applied with container
// set-indexing-policy, the same query retrieves only what it outputs.
func TestQueryExplainShowsAScanAndTheIndexThatEndsIt(t *testing.T) {
	for _, tc := range []struct {
		name, excluded, change string
	}{
		{"the path's value excluded", "/cat/?", "remove the excluded path /cat/?"},
		{"the path's subtree excluded", "/cat/*", "include the path /cat/?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := makeQueryItems(queryTestItems)
			queryAccount(t, items)
			if r := cosmosctl(t, policyExcluding(tc.excluded), "container", "set-indexing-policy", "-"); r.code != 0 {
				t.Fatalf("set-indexing-policy: %+v", r)
			}
			red := len(where(items, func(q qitem) bool { return q.Cat == "red" }))
			sql := "SELECT * FROM c WHERE c.cat = 'red'"

			before := decode[output.ExplainReport](t, cosmosctl(t, "", "query", sql, "--explain", "--all", "-o", "json"))
			if before.Items != red || !before.Complete || len(before.Ranges) != 4 {
				t.Fatalf("the explained run returned %d items (complete %t) over %d ranges; want all %d over 4", before.Items, before.Complete, len(before.Ranges), red)
			}
			if before.Totals.RetrievedDocuments != int64(len(items)) || before.Totals.OutputDocuments != int64(red) {
				t.Fatalf("a scan retrieves every document: retrieved %d, output %d; want %d and %d", before.Totals.RetrievedDocuments, before.Totals.OutputDocuments, len(items), red)
			}
			for _, r := range before.Ranges {
				if r.MetricsPages != r.Pages || r.RetrievedDocuments < r.OutputDocuments || r.RequestCharge <= 0 {
					t.Fatalf("range %s: %+v", r.RangeID, r)
				}
			}
			if !slices.Contains(potentialSpecs(before), "/cat/?") {
				t.Fatalf("the service's potential indexes %v do not name /cat/?", potentialSpecs(before))
			}
			p := before.IndexingPolicy
			if string(p.Proposed) == "null" || !slices.Contains(p.Changes, tc.change) {
				t.Fatalf("proposed %s with changes %v; want %q", p.Proposed, p.Changes, tc.change)
			}

			// Text: the same facts for a person.
			text := cosmosctl(t, "", "query", sql, "--explain", "--all")
			for _, want := range []string{"RETRIEVED/OUTPUT", "3.0", "could not use an index and scanned", "/cat/?", "set-indexing-policy"} {
				if text.code != 0 || !strings.Contains(text.out, want) {
					t.Fatalf("the report does not say %q:\n%s%s", want, text.out, text.errOut)
				}
			}

			if r := cosmosctl(t, string(p.Proposed), "container", "set-indexing-policy", "-"); r.code != 0 {
				t.Fatalf("applying the proposal: %+v", r)
			}
			after := decode[output.ExplainReport](t, cosmosctl(t, "", "query", sql, "--explain", "--all", "-o", "json"))
			if after.Totals.RetrievedDocuments != int64(red) || after.Totals.OutputDocuments != int64(red) || *after.Totals.RetrievedPerOutput != 1 {
				t.Fatalf("with /cat indexed the service loads only what it outputs: retrieved %d, output %d", after.Totals.RetrievedDocuments, after.Totals.OutputDocuments)
			}
			if *before.Totals.RetrievedPerOutput <= *after.Totals.RetrievedPerOutput {
				t.Fatalf("the retrieved/output ratio did not drop: %v, then %v", *before.Totals.RetrievedPerOutput, *after.Totals.RetrievedPerOutput)
			}
			if len(after.Indexes.PotentialSingle) != 0 || string(after.IndexingPolicy.Proposed) != "null" || after.Indexes.UtilizedSingle[0].IndexSpec != "/cat/?" {
				t.Fatalf("after: indexes %+v, proposal %s", after.Indexes, after.IndexingPolicy.Proposed)
			}
		})
	}
}

// Within a partition key there is one row, and --explain's other outputs are refused.
func TestQueryExplainWithinAPartitionKey(t *testing.T) {
	items := makeQueryItems(queryTestItems)
	queryAccount(t, items)
	rep := decode[output.ExplainReport](t, cosmosctl(t, "", "query", "SELECT c.id FROM c WHERE c.n >= @min", "--param", "@min=60", "--pk", "p1", "--explain", "-o", "json"))
	inP1 := where(items, func(q qitem) bool { return q.PK == "p1" })
	want := len(where(inP1, func(q qitem) bool { return q.N >= 60 }))
	if len(rep.Ranges) != 1 || rep.Ranges[0].RangeID != "" || rep.Totals.OutputDocuments != int64(want) || rep.Totals.RetrievedDocuments != int64(want) {
		t.Fatalf("within p1: %+v (want %d output, all of it retrieved: the default policy indexes /n)", rep.Ranges, want)
	}
	if pk := strings.Join(strings.Fields(string(rep.PartitionKey)), ""); pk != `["p1"]` || rep.Parameters[0].Name != "@min" {
		t.Fatalf("partition key %s, parameters %v", rep.PartitionKey, rep.Parameters)
	}
	if r := cosmosctl(t, "", "query", "SELECT * FROM c", "--explain", "-o", "ndjson"); r.code != ExitUsage || !strings.Contains(r.errOut, "-o table or -o json") {
		t.Fatalf("--explain -o ndjson: %+v", r)
	}
}

func TestContainerIndexingPolicyRoundTrip(t *testing.T) {
	testAccount(t)
	shown := cosmosctl(t, "", "container", "show", "--indexing-policy")
	var pol map[string]any
	if shown.code != 0 || json.Unmarshal([]byte(shown.out), &pol) != nil || pol["includedPaths"] == nil {
		t.Fatalf("show --indexing-policy: %+v", shown)
	}
	if r := cosmosctl(t, policyExcluding("/secret/?"), "container", "set-indexing-policy", "-"); r.code != 0 || !strings.Contains(r.out, "2 excluded") {
		t.Fatalf("set-indexing-policy: %+v", r)
	}
	if r := cosmosctl(t, "", "container", "show", "--indexing-policy"); !strings.Contains(r.out, `"/secret/?"`) {
		t.Fatalf("the applied policy is not shown: %+v", r)
	}
	if r := cosmosctl(t, "", "container", "show"); !strings.Contains(r.out, "partition key") {
		t.Fatalf("show without --indexing-policy keeps its summary: %+v", r)
	}
}

func TestContainerSetIndexingPolicyRefusesBadFiles(t *testing.T) {
	testAccount(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, stdin, file, want string
	}{
		{"a missing file", "", dir + "/nope.json", "does not exist"},
		{"not JSON", "{bad", "-", "is not valid JSON (line 1)"},
		{"not an object", `[{"path":"/*"}]`, "-", "is not a JSON object"},
		{"empty", " \n", "-", "is empty"},
		{"a container definition", `{"id":"items","indexingPolicy":{}}`, "-", "not an indexing policy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cosmosctl(t, tc.stdin, "container", "set-indexing-policy", tc.file)
			if r.code != ExitUsage || !strings.Contains(r.errOut, tc.want) || strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 {
				t.Fatalf("exit %d, stderr %q; want exit %d and one line saying %q", r.code, r.errOut, ExitUsage, tc.want)
			}
		})
	}
	if r := cosmosctl(t, `{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/a/?"}]}`, "container", "set-indexing-policy", "-", "--container", "nope"); r.code != ExitNotFound {
		t.Fatalf("a container that does not exist: %+v", r)
	}
}

func TestExplainReadsTheServicesHeaders(t *testing.T) {
	// Query advice as the .NET SDK's QueryAdvisor tests decode it: URL-encoded JSON.
	advice := parseQueryAdvice(url.QueryEscape(`[{"Id":"QA1009","Params":[]},{"Id":"QA9999","Params":["x"]}]`))
	if len(advice) != 2 || advice[0].Link != "https://aka.ms/CosmosDB/QueryAdvisor/QA1009" || advice[0].Message == "" || advice[1].Message != "" || advice[1].Parameters[0] != "x" {
		t.Fatalf("advice %+v", advice)
	}
	if parseQueryAdvice("not json") != nil {
		t.Fatal("a header in another form is ignored")
	}
	// Index metrics in both forms, united.
	u := newIndexUnion()
	v1 := base64.StdEncoding.EncodeToString([]byte(`{"UtilizedSingleIndexes":[{"FilterExpression":"(ROOT.a = 1)","IndexSpec":"/a/?","IndexImpactScore":"High"}],"PotentialSingleIndexes":[{"FilterExpression":"(ROOT.b = 2)","IndexSpec":"/b/?","IndexImpactScore":"High"}],"UtilizedCompositeIndexes":[],"PotentialCompositeIndexes":[{"IndexSpecs":["/a ASC","/b DESC"],"IndexImpactScore":"High"}]}`))
	v2 := url.PathEscape(`{"UtilizedIndexes":{"SingleIndexes":[{"IndexSpec":"/a/?","IndexImpactScore":"High"}],"CompositeIndexes":[]},"PotentialIndexes":{"SingleIndexes":[{"IndexSpec":"/c/?","IndexImpactScore":"Low"}],"CompositeIndexes":[]}}`)
	if !u.add(v1) || !u.add(v2) || u.add("garbage!") {
		t.Fatal("the two forms are read, another is not")
	}
	ix := u.result()
	if len(ix.UtilizedSingle) != 1 || len(ix.PotentialSingle) != 2 || ix.PotentialSingle[1].IndexSpec != "/c/?" || len(ix.PotentialComposite) != 1 {
		t.Fatalf("united %+v", ix)
	}
	// The proposal adds what is missing, once.
	p := proposeIndexingPolicy([]byte(policyExcluding("/b/?")), ix)
	want := []string{"remove the excluded path /b/?", "add the composite index (/a ASC, /b DESC)"}
	if !slices.Equal(p.Changes, want) {
		t.Fatalf("changes %v, want %v", p.Changes, want)
	}
	if !strings.Contains(string(p.Proposed), `{"order":"ascending","path":"/a"},{"order":"descending","path":"/b"}`) {
		t.Fatalf("proposed %s", p.Proposed)
	}
	if again := proposeIndexingPolicy(p.Proposed, ix); again.Proposed != nil {
		t.Fatalf("a policy that has the indexes needs no change: %v", again.Changes)
	}
	// /c/? is indexed under /* already: not proposed.
	if strings.Contains(string(p.Proposed), "/c/?") {
		t.Fatalf("an indexed path is proposed: %s", p.Proposed)
	}
}

func TestLineDiffKeepsARemovedObjectTogether(t *testing.T) {
	a := []string{"[", "  {", `    "path": "/a"`, "  },", "  {", `    "path": "/b"`, "  }", "]"}
	b := []string{"[", "  {", `    "path": "/b"`, "  }", "]"}
	got := lineDiff(a, b)
	want := []string{"  [", "-   {", `-     "path": "/a"`, "-   },", "    {", `      "path": "/b"`, "    }", "  ]"}
	if !slices.Equal(got, want) {
		t.Fatalf("diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
