package emulator

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// The partition key ranges feed is read-only: the REST reference lists GET alone. A
// DELETE, POST, PUT or PATCH on it is a 405 with a Cosmos error body and Allow: GET,
// never the feed with a 200 that says the ranges were deleted or replaced; the feed is
// as it was afterwards. (What the service answers is documented nowhere: README,
// emulator fidelity.)
func TestPKRangesAnswersVerbsOtherThanGetWith405(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	path := cosmos.PKRangesPath("db", "items")
	for _, method := range []string{http.MethodDelete, http.MethodPost, http.MethodPut, http.MethodPatch} {
		t.Run(method, func(t *testing.T) {
			var body any
			if method != http.MethodDelete {
				body = map[string]any{"id": "0"}
			}
			resp, err := c.do(s.Endpoint(), method, path, nil, body)
			if st, _ := statusOf(t, resp, err); st != http.StatusMethodNotAllowed {
				t.Fatalf("%s %s → %d %s, want 405", method, path, st, resp.Body)
			}
			var e struct{ Code, Message string }
			if err := json.Unmarshal(resp.Body, &e); err != nil || e.Code != "MethodNotAllowed" ||
				!strings.Contains(e.Message, method+" is not supported on /dbs/db/colls/items/pkranges") {
				t.Errorf("body %s: want a Cosmos error, code MethodNotAllowed, naming the verb and the path", resp.Body)
			}
			if allow := resp.Header.Get("Allow"); allow != http.MethodGet {
				t.Errorf("Allow: %q, want GET", allow)
			}
		})
	}
	resp, err := c.do(s.Endpoint(), http.MethodGet, path, nil, nil)
	if st, _ := statusOf(t, resp, err); st != http.StatusOK {
		t.Fatalf("GET %s → %d after the refused verbs", path, st)
	}
	var feed cosmos.PartitionKeyRangeFeed
	if err := json.Unmarshal(resp.Body, &feed); err != nil || len(feed.Ranges) != 4 {
		t.Fatalf("the feed after the refused verbs: %s", resp.Body)
	}
}
