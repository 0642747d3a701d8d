package querycorpus_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// jsBug is a known bug of the JavaScript SDK (@azure/cosmos 4.10.1, pinned in
// sdkcompat/js/package-lock.json) that makes its answer to some corpus queries wrong.
type jsBug struct {
	Name  string `json:"name"`
	Cause string `json:"cause"`
	// Symptom is how the answer is wrong, which querycorpus.test.js asserts: "error"
	// with Match in the message, or "dropsFalsy": the right answer less its falsy
	// values (0, false, null, "").
	Symptom struct {
		Kind  string `json:"kind"`
		Match string `json:"match,omitempty"`
	} `json:"symptom"`
}

// jsBugs are the SDK's known bugs by name; corpus entries name the one that hits them
// (entry.js), for their cross-partition run.
var jsBugs = map[string]jsBug{
	"orderByMixedTypes": bug("orderByMixedTypes",
		"dist/esm/queryExecutionContext/orderByDocumentProducerComparator.js:120 validateOrderByItems throws \"Cannot execute cross "+
			"partition order-by queries on mixed types\" when two ranges' next ORDER BY values differ in type (undefined against a number "+
			"included: a property some documents lack), and orderByComparator.js getType/compareValue throws \"unrecognizable type object\" "+
			"for null, arrays and objects (azure-sdk-for-js#30122); the service orders every type (undefined < null < booleans < numbers "+
			"< strings < arrays < objects) and returns items without the property", "error", "mixed types|unrecognizable type|compare an object"),
	"sumOfUndefinedIsZero": bug("sumOfUndefinedIsZero",
		"dist/esm/queryExecutionContext/EndpointComponent/emptyGroup.js:8 extractAggregateResult makes a range's undefined SUM "+
			"(a payload without item) null, and Aggregators/SumAggregator.js adds it (null + n), so SELECT SUM(x) AS s over values that "+
			"are not all numbers gives a number instead of leaving s out", "items", ""),
	"distinctDropsFalsy": bug("distinctDropsFalsy",
		"dist/esm/queryExecutionContext/EndpointComponent/UnorderedDistinctEndpointComponent.js:32 and OrderedDistinctEndpointComponent.js:31: "+
			"`if (item)` skips every falsy row, so DISTINCT loses 0, false, null and \"\"", "dropsFalsy", ""),
}

func bug(name, cause, kind, match string) jsBug {
	b := jsBug{Name: name, Cause: cause}
	b.Symptom.Kind, b.Symptom.Match = kind, match
	return b
}

// jsEntry is one run of a corpus query as querycorpus.test.js reads it.
type jsEntry struct {
	Name         string  `json:"name"`
	Query        string  `json:"query"`
	Parameters   []param `json:"parameters"`
	PartitionKey *string `json:"partitionKey"`
	Blocks       [][]any `json:"blocks"`
	Offset       int     `json:"offset"`
	Count        int     `json:"count"`
	Bug          *jsBug  `json:"bug"`
	// Refused: the service answers 400 (a query it runs in one partition only).
	Refused string `json:"refused,omitempty"`
}

// exportForJS is the corpus with the oracle's answers, each query across partitions
// and within its partition key.
func exportForJS(t *testing.T, docs []doc, entries []entry) []jsEntry {
	var out []jsEntry
	for i, e := range entries {
		runs := []string{""}
		if !e.noPK {
			runs = append(runs, entryPK(e, i))
		}
		for _, pk := range runs {
			ds, name := docs, shortName(i, e.sql)+" (across partitions)"
			je := jsEntry{Query: e.sql, Parameters: e.params}
			if e.refused != "" {
				je.Refused = e.refused
			}
			if pk != "" {
				ds, name = partition(docs, pk), shortName(i, e.sql)+" (--pk "+pk+")"
				je.PartitionKey = &pk
			} else if e.crossRefused != "" {
				je.Refused = e.crossRefused
			} else if e.jsBug != "" {
				b, ok := jsBugs[e.jsBug]
				if !ok {
					t.Fatalf("%s names an unknown JavaScript SDK bug %q", e.sql, e.jsBug)
				}
				je.Bug = &b
			}
			want := e.want(ds)
			blocks, positions := want.blocks()
			je.Name, je.Blocks, je.Offset, je.Count = name, blocks, want.offset, len(positions)
			if je.Blocks == nil {
				je.Blocks = [][]any{}
			}
			out = append(out, je)
		}
	}
	return out
}

// TestQueryCorpusThroughTheJavaScriptSDK runs the corpus through the official
// JavaScript SDK (sdkcompat/js/querycorpus.test.js) against the same emulator and data:
// each answer must be the oracle's, except for the SDK's known bugs (jsBugs), which
// must still show their symptom.
func TestQueryCorpusThroughTheJavaScriptSDK(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "sdkcompat", "js"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skipOrFail(t, "node is not installed: install Node.js, then `npm ci` in %s", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@azure", "cosmos")); err != nil {
		skipOrFail(t, "the JavaScript SDK is not installed: run `npm ci` in %s", dir)
	}
	used := map[string]bool{}
	entries := allEntries(t)
	for _, e := range entries {
		used[e.jsBug] = true
	}
	for name := range jsBugs {
		if !used[name] {
			t.Errorf("the JavaScript SDK bug %s is listed but no corpus query shows it", name)
		}
	}
	docs := genDocs()
	srv := corpusAccount(t, docs)
	export := struct {
		Database  string    `json:"database"`
		Container string    `json:"container"`
		Entries   []jsEntry `json:"entries"`
	}{"app", "items", exportForJS(t, docs, entries)}
	b, err := json.Marshal(export)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "corpus.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "querycorpus.test.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "COSMOS_ENDPOINT="+srv.Endpoint(), "COSMOS_KEY="+srv.Key(), "QUERYCORPUS_FILE="+file)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sdkcompat/js/querycorpus.test.js: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// skipOrFail skips a test whose official SDK is not installed, or fails it when
// COSMOSCTL_SDKCOMPAT=required (CI sets it after installing the SDKs).
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("COSMOSCTL_SDKCOMPAT") == "required" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}
