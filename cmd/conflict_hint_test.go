package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// A create or upsert that breaks a unique key exits with the conflict code and says it
// was a unique key, not the id; a create whose id is taken still says that.
func TestUniqueKeyConflictSaysWhatConflicts(t *testing.T) {
	srv := testAccount(t)
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	resp, err := tr.Do(context.Background(), srv.Endpoint(), &cosmos.Request{Method: "POST", Path: "/dbs/app/colls",
		Body: []byte(`{"id":"users","partitionKey":{"paths":["/pk"],"kind":"Hash"},"uniqueKeyPolicy":{"uniqueKeys":[{"paths":["/email"]}]}}`)})
	if resp == nil || resp.StatusCode != 201 {
		t.Fatalf("create the container: %+v %v", resp, err)
	}
	t.Setenv("COSMOSCTL_CONTAINER", "users")
	if r := cosmosctl(t, `{"id":"1","pk":"a","email":"x@c.com"}`, "create", "-f", "-"); r.code != ExitOK {
		t.Fatalf("first create: %+v", r)
	}
	for _, verb := range []string{"create", "upsert"} {
		r := cosmosctl(t, `{"id":"2","pk":"a","email":"x@c.com"}`, verb, "-f", "-")
		if r.code != ExitConflict || !strings.Contains(r.errOut, "Unique index constraint violation.") || !strings.Contains(r.errOut, "unique keys") || strings.Contains(r.errOut, "already exists in the system") {
			t.Errorf("%s of a second item with the same email: exit %d, stderr %q", verb, r.code, r.errOut)
		}
		if strings.Count(strings.TrimSpace(r.errOut), "\n") != 0 {
			t.Errorf("%s: the failure is not one line: %q", verb, r.errOut)
		}
	}
	r := cosmosctl(t, `{"id":"1","pk":"a","email":"y@c.com"}`, "create", "-f", "-")
	if r.code != ExitConflict || strings.Contains(r.errOut, "unique keys") {
		t.Errorf("a create of a taken id: exit %d, stderr %q, want the id conflict without the unique key hint", r.code, r.errOut)
	}
	if r := cosmosctl(t, `{"id":"2","pk":"b","email":"x@c.com"}`, "create", "-f", "-"); r.code != ExitOK {
		t.Errorf("the same email in another partition key: %+v", r)
	}
}
