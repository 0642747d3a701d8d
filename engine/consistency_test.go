package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
)

func TestReadsAskForTheirConsistencyLevelAndNothingElseDoes(t *testing.T) {
	q := &cosmos.QuerySpec{Query: "SELECT * FROM c"}
	cases := []struct {
		name string
		op   Operation
		want string
	}{
		{"point read", Operation{Kind: OpRead, Consistency: "Eventual"}, "Eventual"},
		{"query page", Operation{Kind: OpQuery, Query: q, Consistency: "ConsistentPrefix"}, "ConsistentPrefix"},
		{"change feed poll", Operation{Kind: OpChangeFeed, RangeID: "0", Consistency: "Session"}, "Session"},
		{"query plan", Operation{Kind: OpQueryPlan, Query: q, Consistency: "Eventual"}, ""},
		{"a read at the account's level", Operation{Kind: OpRead}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := buildRequest(&tc.op, false)
			if got := req.Header.Get(cosmos.HeaderConsistencyLevel); got != tc.want {
				t.Errorf("x-ms-consistency-level %q, want %q", got, tc.want)
			}
			if got := req.Header.Get(cosmos.HeaderSessionToken); got != "" {
				t.Errorf("x-ms-session-token %q: cosmosctl keeps no session and sends none", got)
			}
		})
	}
}

func consistencyClient(t *testing.T, level string) *Client {
	t.Helper()
	srv, err := emulator.Start(emulator.Config{Consistency: level, Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	c, err := New(Options{Endpoint: srv.Endpoint(), Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tr.HTTP.CloseIdleConnections()
		srv.Close()
	})
	if _, err := c.Execute(context.Background(), Operation{Kind: OpCreate, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a"}`)}); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAReadMayRelaxTheAccountsConsistencyButNotStrengthenIt(t *testing.T) {
	cases := []struct {
		account, asked string
		problem        string
	}{
		{"Session", "strong", "consistency Strong is stronger than the account's Session: a read may only relax the account's level (use Session, ConsistentPrefix, Eventual)"},
		{"Session", "bounded", "consistency BoundedStaleness is stronger than the account's Session"},
		{"BoundedStaleness", "Strong", "use BoundedStaleness, Session, ConsistentPrefix, Eventual"},
		{"Session", "eventual", ""},
		{"Strong", "session", ""},
		{"Eventual", "session", ""},
		{"Session", "quorum", `consistency "quorum" is not a consistency level`},
	}
	for _, tc := range cases {
		t.Run(tc.account+"/"+tc.asked, func(t *testing.T) {
			c := consistencyClient(t, tc.account)
			op := readOp()
			op.Consistency = tc.asked
			res, err := c.Execute(context.Background(), op)
			if tc.problem == "" {
				if err != nil {
					t.Fatalf("%s read on a %s account: %v", tc.asked, tc.account, err)
				}
				return
			}
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.problem) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want a one-line input error saying %q", err, tc.problem)
			}
			if n := len(res.Diagnostics.Attempts); n != 0 {
				t.Errorf("%d attempts sent: a level the account refuses is refused before the first request", n)
			}
		})
	}
}

func TestAWriteCannotAskForAConsistencyLevel(t *testing.T) {
	c := consistencyClient(t, "Session")
	_, err := c.Execute(context.Background(), Operation{Kind: OpUpsert, Database: "db", Container: "c", Body: []byte(`{"id":"2","pk":"a"}`), Consistency: "Eventual"})
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "a write is made at the account's level") {
		t.Fatalf("error %v", err)
	}
}

func TestTheRegionsReportShowsTheAccountsConsistency(t *testing.T) {
	c := consistencyClient(t, "ConsistentPrefix")
	rep, err := c.Regions(context.Background(), RegionsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Consistency != "ConsistentPrefix" {
		t.Errorf("consistency %q, want the account's ConsistentPrefix", rep.Consistency)
	}
}

// MinimalResponse asks for no document back on the writes that would send one, and
// the emulator then answers with the status and headers alone.
func TestMinimalResponseAsksWritesForNoDocument(t *testing.T) {
	pk, _ := cosmos.PK("a")
	for _, kind := range []OpKind{OpCreate, OpUpsert, OpReplace, OpPatch, OpDelete, OpRead} {
		for _, minimal := range []bool{false, true} {
			op := Operation{Kind: kind, Database: "db", Container: "c", ID: "1", PartitionKey: pk, MinimalResponse: minimal}
			want := ""
			if minimal && kind != OpDelete && kind != OpRead {
				want = cosmos.PreferMinimal
			}
			if got := buildRequest(&op, false).Header.Get(cosmos.HeaderPrefer); got != want {
				t.Errorf("%s, MinimalResponse %v: Prefer %q, want %q", kind, minimal, got, want)
			}
		}
	}
	c := consistencyClient(t, "Session")
	for _, minimal := range []bool{false, true} {
		res, err := c.Execute(context.Background(), Operation{Kind: OpUpsert, Database: "db", Container: "c",
			Body: []byte(`{"id":"2","pk":"a"}`), MinimalResponse: minimal})
		if err != nil {
			t.Fatal(err)
		}
		if minimal != (len(res.Body) == 0) {
			t.Errorf("an upsert with MinimalResponse %v answered %q", minimal, res.Body)
		}
	}
}
