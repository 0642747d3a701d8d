package cmd

import (
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/emulator"
)

// --consistency on the commands that read: a level the account refuses is one line and
// exit 2 before the first data request; a weaker one reads.
func TestReadCommandsTakeAConsistencyLevelTheAccountAllows(t *testing.T) {
	testAccount(t) // Session
	if r := cosmosctl(t, `{"id":"o1","pk":"t1"}`, "create", "-f", "-"); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"read at a weaker level", []string{"read", "o1", "--pk", "t1", "--consistency", "eventual"}, ExitOK, ""},
		{"read at a stronger level", []string{"read", "o1", "--pk", "t1", "--consistency", "strong"}, ExitUsage,
			"consistency Strong is stronger than the account's Session: a read may only relax the account's level (use Session, ConsistentPrefix, Eventual)"},
		{"query at a stronger level", []string{"query", "SELECT * FROM c", "--consistency", "BoundedStaleness"}, ExitUsage, "stronger than the account's Session"},
		{"query at a weaker level", []string{"query", "SELECT * FROM c", "--consistency", "prefix"}, ExitOK, ""},
		{"not a level", []string{"read", "o1", "--pk", "t1", "--consistency", "linearizable"}, ExitUsage, `--consistency "linearizable" is not a consistency level`},
		{"changes at a stronger level", []string{"changes", "--consistency", "strong"}, ExitUsage, "stronger than the account's Session"},
		{"export at a stronger level", []string{"export", "--consistency", "strong"}, ExitUsage, "stronger than the account's Session"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := cosmosctl(t, "", tc.args...)
			if r.code != tc.code || !strings.Contains(r.errOut, tc.msg) {
				t.Fatalf("exit %d, stderr %q; want %d mentioning %q", r.code, r.errOut, tc.code, tc.msg)
			}
			if tc.code != ExitOK && strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 {
				t.Errorf("a refusal is one line, got %q", r.errOut)
			}
		})
	}
}

func TestStrongAccountTakesAStrongRead(t *testing.T) {
	testAccount(t, func(c *emulator.Config) { c.Consistency = "Strong" })
	if r := cosmosctl(t, `{"id":"o1","pk":"t1"}`, "create", "-f", "-"); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	if r := cosmosctl(t, "", "read", "o1", "--pk", "t1", "--consistency", "strong"); r.code != 0 {
		t.Fatalf("a Strong read on a Strong account: %+v", r)
	}
	r := cosmosctl(t, "", "regions")
	if !strings.Contains(r.out, "consistency:  Strong") {
		t.Errorf("regions does not show the account's consistency:\n%s", r.out)
	}
}
