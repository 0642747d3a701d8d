package engine

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

func TestMetadata(t *testing.T) {
	for _, tc := range []struct {
		name     string
		method   string
		read     bool
		east     reply
		attempts string
		status   int // of the error; 0: success
	}{
		{"a read fails over to the next region after a 503", http.MethodGet, false, reply{status: 503}, "East US/initial/0s/failed West US/failover/0s/won", 0},
		{"a read fails over after a network error", http.MethodGet, false, reply{status: 0}, "East US/initial/0s/failed West US/failover/0s/won", 0},
		{"a 404 is the same everywhere: no failover", http.MethodGet, false, reply{status: 404}, "East US/initial/0s/failed", 404},
		{"a write is sent once, to the write region", http.MethodPost, false, reply{status: 503}, "East US/initial/0s/failed", 503},
		{"a 409 on a create stands", http.MethodPost, false, reply{status: 409}, "East US/initial/0s/failed", 409},
		{"a query of a metadata feed fails over like a read", http.MethodPost, true, reply{status: 503}, "East US/initial/0s/failed West US/failover/0s/won", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newFakeTransport(fakeAccount(false))
			tr.on("http://east", tc.east)
			tr.on("http://west", reply{status: 200, body: `{"id":"app"}`})
			c := newTestClient(t, tr, clock.NewFake(time.Unix(0, 0)))
			resp, d, err := c.Metadata(context.Background(), MetadataRequest{Method: tc.method, Path: "/dbs/app", Database: "app", Read: tc.read})
			if got := summary(d); got != tc.attempts || d.Operation != OpMetadata {
				t.Fatalf("attempts %s (%s)", got, d.Operation)
			}
			status, _, _ := cosmos.Status(err)
			if status != tc.status || (tc.status == 0 && (err != nil || string(resp.Body) != `{"id":"app"}`)) {
				t.Fatalf("status %d err %v", status, err)
			}
		})
	}
}
