package engine

import (
	"context"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// A page with Explain asks for the service's query metrics, index metrics and query
// advice, and its result carries the three answers; a page without it asks for none.
func TestQueryPageExplainAsksForTheServicesMetrics(t *testing.T) {
	asks := []string{cosmos.HeaderPopulateQueryMetrics, cosmos.HeaderPopulateIndexMetrics, cosmos.HeaderPopulateQueryAdvice}
	for _, explain := range []bool{false, true} {
		tr := newFakeTransport(fakeAccount(false))
		tr.on("http://east", reply{status: 200, body: feedBody, header: map[string]string{
			cosmos.HeaderQueryMetrics: "retrievedDocumentCount=2", cosmos.HeaderIndexUtilization: "e30=", cosmos.HeaderQueryAdvice: "%5B%5D"}})
		c := newTestClient(t, tr, nil)
		op := queryPage("3")
		op.Explain = explain
		res, err := c.Execute(context.Background(), op)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range asks {
			want := map[bool]string{true: "true", false: ""}[explain]
			if got := tr.reqs[0].Header.Get(h); got != want {
				t.Errorf("explain %t: %s = %q, want %q", explain, h, got, want)
			}
		}
		if res.QueryMetrics != "retrievedDocumentCount=2" || res.IndexUtilization != "e30=" || res.QueryAdvice != "%5B%5D" {
			t.Errorf("the result does not carry the answer's headers: %+v", res)
		}
	}
}
