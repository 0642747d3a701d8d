package data_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/internal/clitest"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

var continuationRE = regexp.MustCompile(`resume with --continuation (cq1\.[A-Za-z0-9_-]+)`)

// Issue 24's reproduction through the command: `query … ORDER BY c.a --max-items 97 -o
// ndjson`, fed its printed continuation until none comes, over 2,000 items whose a and b
// are of every JSON type, prints exactly what `--all` does, in the same order; ASC and
// DESC alike, and the DESC runs end (they cycled through the same pages for ever).
func TestQueryOrderByRunsOfMaxItemsPrintWhatAllDoes(t *testing.T) {
	const n = 2000
	srv := testkit.Account(t)
	testkit.SeedMixed(t, srv, "app", "items", testkit.MixedDocs(3, n))
	for _, form := range []string{"c.a", "c.a DESC"} {
		t.Run(form, func(t *testing.T) {
			sql := "SELECT c.id, c.a, c.b FROM c ORDER BY " + form
			all := clitest.MustRun(t, "query", sql, "--all", "-o", "ndjson")
			if got := strings.Count(all, "\n"); got != n {
				t.Fatalf("--all printed %d lines, want %d", got, n)
			}
			var resumed strings.Builder
			tok := ""
			for runs := 0; ; runs++ {
				if runs > n/97+1 {
					t.Fatalf("%d lines after %d runs, more than %d items take: items repeat, or the runs never end", strings.Count(resumed.String(), "\n"), runs, n)
				}
				args := []string{"query", sql, "--max-items", "97", "-o", "ndjson"}
				if tok != "" {
					args = append(args, "--continuation", tok)
				}
				r := clitest.Run(t, "", args...)
				if r.Code != 0 {
					t.Fatalf("run %d: exit %d: %s", runs, r.Code, r.ErrOut)
				}
				resumed.WriteString(r.Out)
				m := continuationRE.FindStringSubmatch(r.ErrOut)
				if m == nil {
					break
				}
				tok = m[1]
			}
			if resumed.String() != all {
				a, b := strings.Split(all, "\n"), strings.Split(resumed.String(), "\n")
				for i := range min(len(a), len(b)) {
					if a[i] != b[i] {
						t.Fatalf("line %d: resumed %s, --all %s (%d lines resumed)", i+1, b[i], a[i], len(b)-1)
					}
				}
				t.Fatalf("%d lines resumed, %d with --all", len(b)-1, len(a)-1)
			}
		})
	}
}

// SELECT VALUE … GROUP BY across partitions prints one value per defined group and no
// internal row for the group where the expression is undefined (it printed
// {"groupByItems":[{}]}), in NDJSON and in -o json.
func TestGroupByValuePrintsNoInternalRow(t *testing.T) {
	srv := testkit.Account(t)
	docs := testkit.MixedDocs(5, 200)
	testkit.SeedMixed(t, srv, "app", "items", docs)
	for _, sql := range []string{"SELECT VALUE c.a FROM c GROUP BY c.a", "SELECT VALUE LOWER(c.a) FROM c GROUP BY LOWER(c.a)", "SELECT VALUE c.a.k1 FROM c GROUP BY c.a.k1"} {
		nd := clitest.MustRun(t, "query", sql, "--all", "-o", "ndjson")
		js := clitest.MustRun(t, "query", sql, "--all", "-o", "json")
		if strings.Contains(nd, "groupByItems") || strings.Contains(js, "groupByItems") {
			t.Fatalf("%s prints an internal row:\n%s", sql, nd)
		}
		var doc struct{ Items []json.RawMessage }
		if err := json.Unmarshal([]byte(js), &doc); err != nil {
			t.Fatalf("%s -o json: %v", sql, err)
		}
		if lines := strings.Count(nd, "\n"); lines != len(doc.Items) || lines == 0 {
			t.Fatalf("%s: %d NDJSON lines, %d items in -o json", sql, lines, len(doc.Items))
		}
	}
}
