package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/retries"
)

// storeTransport is a one-region in-memory container that can apply a write and then
// lose its answer: the ambiguous write.
type storeTransport struct {
	mu       sync.Mutex
	account  []byte
	items    map[string][]byte
	etags    map[string]string
	seq      int
	dropNext int // writes to apply and then answer with a network error
	bodies   [][]byte
}

func newStoreTransport() *storeTransport {
	acct, _ := json.Marshal(fakeAccount(false))
	return &storeTransport{account: acct, items: map[string][]byte{}, etags: map[string]string{}}
}

func (s *storeTransport) Do(_ context.Context, _ string, req *cosmos.Request) (*cosmos.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.Path == "/" {
		return &cosmos.Response{StatusCode: 200, Body: s.account, Header: http.Header{}}, nil
	}
	segs := cosmos.PathSegments(req.Path)
	if len(segs) == 4 {
		body, _ := json.Marshal(cosmos.Container{ID: "c", PartitionKey: cosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Kind: "Hash", Version: 2}})
		return &cosmos.Response{StatusCode: 200, Body: body, Header: http.Header{}}, nil
	}
	id := segs[len(segs)-1]
	var doc struct{ ID string }
	if req.Body != nil {
		json.Unmarshal(req.Body, &doc)
		s.bodies = append(s.bodies, req.Body)
	}
	status := 0
	switch req.Method {
	case http.MethodGet:
		if b, ok := s.items[id]; ok {
			return &cosmos.Response{StatusCode: 200, Body: b, Header: http.Header{}, RequestCharge: 1}, nil
		}
		status = 404
	case http.MethodPost:
		if _, ok := s.items[doc.ID]; ok {
			status = 409
		} else {
			s.seq++
			s.items[doc.ID], s.etags[doc.ID], status = req.Body, fmt.Sprint(s.seq), 201
		}
	case http.MethodPut:
		if m := req.Header.Get(cosmos.HeaderIfMatch); m != "" && strings.Trim(m, `"`) != s.etags[id] {
			status = 412
		} else {
			s.seq++
			s.items[id], s.etags[id], status = req.Body, fmt.Sprint(s.seq), 200
		}
	case http.MethodDelete:
		if _, ok := s.items[id]; !ok {
			status = 404
		} else {
			delete(s.items, id)
			status = 204
		}
	}
	if status < 400 && s.dropNext > 0 {
		s.dropNext--
		return nil, &cosmos.NetworkError{Endpoint: "http://east", Sent: true, Err: errors.New("connection reset by peer")}
	}
	resp := &cosmos.Response{StatusCode: status, Header: http.Header{}, RequestCharge: 5}
	if status >= 400 {
		return resp, &cosmos.Error{StatusCode: status}
	}
	return resp, nil
}

func writeClient(t *testing.T, tr Transport) *Client {
	t.Helper()
	p := retries.DefaultPolicy()
	p.WriteRetryBaseWait, p.WriteRetryMaxWait = time.Nanosecond, time.Nanosecond
	c, err := New(Options{Endpoint: "http://global", Transport: tr, Retry: &p})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func createOp(policy retries.WritePolicy) Operation {
	return Operation{Kind: OpCreate, Database: "db", Container: "c", Body: []byte(`{"id":"1","pk":"a","n":1}`), WriteRetries: policy}
}

func reasons(d *Diagnostics) string {
	var parts []string
	for _, a := range d.Attempts {
		parts = append(parts, fmt.Sprintf("%s:%d:%s", a.Reason, a.StatusCode, a.Outcome))
	}
	return strings.Join(parts, " ")
}

func TestCreateWithTrackingIDResolvesItsOwn409(t *testing.T) {
	tr := newStoreTransport()
	tr.dropNext = 1
	res, err := writeClient(t, tr).Execute(context.Background(), createOp(retries.WriteRetriesWithTrackingID))
	if err != nil {
		t.Fatalf("err %v (%s)", err, reasons(res.Diagnostics))
	}
	d := res.Diagnostics
	if res.StatusCode != 201 || reasons(d) != "initial:0:failed retry:409:failed verify:200:won" {
		t.Fatalf("status %d, attempts %s", res.StatusCode, reasons(d))
	}
	if d.Resolution != "409 on retry resolved: _trackingId matches" || d.RequestCharge != 5+1 || res.RequestCharge != d.RequestCharge {
		t.Fatalf("resolution %q, RU %v", d.Resolution, d.RequestCharge)
	}
	if !strings.Contains(d.Attempts[0].Note, "ambiguous") {
		t.Fatalf("the retry says why: %q", d.Attempts[0].Note)
	}
	// Every attempt carried the same _trackingId, and the document kept its order.
	var ids []string
	for _, b := range tr.bodies {
		var doc struct {
			TrackingID string `json:"_trackingId"`
		}
		json.Unmarshal(b, &doc)
		ids = append(ids, doc.TrackingID)
		if !strings.HasPrefix(string(b), `{"id":"1","pk":"a","n":1,"_trackingId":"`) {
			t.Fatalf("body %s", b)
		}
	}
	if len(ids) != 2 || ids[0] == "" || ids[0] != ids[1] {
		t.Fatalf("tracking ids %v", ids)
	}
}

func TestCreateWithRetriesButNoTrackingIDGetsAFalse409(t *testing.T) {
	tr := newStoreTransport()
	tr.dropNext = 1
	res, err := writeClient(t, tr).Execute(context.Background(), createOp(retries.WriteRetries))
	if st, _, _ := cosmos.Status(err); st != 409 || reasons(res.Diagnostics) != "initial:0:failed retry:409:won" {
		t.Fatalf("err %v attempts %s", err, reasons(res.Diagnostics))
	}
	if strings.Contains(string(tr.bodies[0]), "_trackingId") {
		t.Fatal("no tracking id without the tracking-id policy")
	}
}

func TestWithoutWriteRetriesTheAmbiguousFailureSurfaces(t *testing.T) {
	tr := newStoreTransport()
	tr.dropNext = 1
	res, err := writeClient(t, tr).Execute(context.Background(), createOp(retries.NoWriteRetries))
	var ne *cosmos.NetworkError
	if !errors.As(err, &ne) || !ne.Sent || len(res.Diagnostics.Attempts) != 1 {
		t.Fatalf("err %v attempts %s", err, reasons(res.Diagnostics))
	}
	if !strings.Contains(res.Diagnostics.Attempts[0].Note, "may or may not have been applied") {
		t.Fatalf("note %q", res.Diagnostics.Attempts[0].Note)
	}
}

func TestAGenuine409IsNotCheckedAndADifferentTrackingIDStands(t *testing.T) {
	tr := newStoreTransport()
	tr.items["1"] = []byte(`{"id":"1","pk":"a"}`)
	res, err := writeClient(t, tr).Execute(context.Background(), createOp(retries.WriteRetriesWithTrackingID))
	if st, _, _ := cosmos.Status(err); st != 409 || reasons(res.Diagnostics) != "initial:409:won" {
		t.Fatalf("first-attempt 409: err %v attempts %s", err, reasons(res.Diagnostics))
	}
	// Someone else created the item while our first attempt's answer was lost.
	tr2 := newStoreTransport()
	tr2.items["1"] = []byte(`{"id":"1","pk":"a","_trackingId":"somebody-else"}`)
	c := writeClient(t, &lostThenConflict{tr2})
	res, err = c.Execute(context.Background(), createOp(retries.WriteRetriesWithTrackingID))
	if st, _, _ := cosmos.Status(err); st != 409 || res.Diagnostics.Resolution != "" {
		t.Fatalf("foreign item: err %v attempts %s", err, reasons(res.Diagnostics))
	}
	if !strings.Contains(res.Diagnostics.Attempts[2].Note, "different _trackingId") {
		t.Fatalf("verify note %q", res.Diagnostics.Attempts[2].Note)
	}
}

// lostThenConflict loses the first write's answer without applying it.
type lostThenConflict struct{ *storeTransport }

func (l *lostThenConflict) Do(ctx context.Context, ep string, req *cosmos.Request) (*cosmos.Response, error) {
	if req.Method == http.MethodPost && l.seq == 0 {
		l.seq++
		return nil, &cosmos.NetworkError{Endpoint: ep, Sent: true, Err: errors.New("timeout")}
	}
	return l.storeTransport.Do(ctx, ep, req)
}

func TestReplaceWithTrackingIDResolvesItsOwn412(t *testing.T) {
	tr := newStoreTransport()
	tr.items["1"], tr.etags["1"] = []byte(`{"id":"1","pk":"a"}`), "7"
	tr.dropNext = 1
	op := Operation{Kind: OpReplace, Database: "db", Container: "c", ID: "1", Body: []byte(`{"id":"1","pk":"a","v":2}`), IfMatch: `"7"`, WriteRetries: retries.WriteRetriesWithTrackingID}
	res, err := writeClient(t, tr).Execute(context.Background(), op)
	if err != nil || res.StatusCode != 200 || res.Diagnostics.Resolution != "412 on retry resolved: _trackingId matches" {
		t.Fatalf("err %v status %d attempts %s", err, res.StatusCode, reasons(res.Diagnostics))
	}
}

func TestRetriedDeleteThatSees404SaysWhy(t *testing.T) {
	tr := newStoreTransport()
	tr.items["1"] = []byte(`{"id":"1","pk":"a"}`)
	tr.dropNext = 1
	op := Operation{Kind: OpDelete, Database: "db", Container: "c", ID: "1", PartitionKey: cosmos.PartitionKey{{Kind: cosmos.KindString, Str: "a"}}, WriteRetries: retries.WriteRetries}
	res, err := writeClient(t, tr).Execute(context.Background(), op)
	if st, _, _ := cosmos.Status(err); st != 404 {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(strings.Join(res.Diagnostics.Notes, ";"), "may have deleted the item") {
		t.Fatalf("notes %v", res.Diagnostics.Notes)
	}
}

func TestTrackingIDReplacesOneTheDocumentAlreadyHas(t *testing.T) {
	got, err := withTrackingID([]byte(`{"id":"1", "_trackingId":"old", "n":{"a":[1,2]}}`), "new")
	if err != nil || string(got) != `{"id":"1","n":{"a":[1,2]},"_trackingId":"new"}` {
		t.Fatalf("%s %v", got, err)
	}
}
