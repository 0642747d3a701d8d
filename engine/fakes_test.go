package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

// fakeAccount is a three-region account on fake endpoints.
func fakeAccount(multiWrite bool) cosmos.Account {
	locs := []cosmos.Location{
		{Name: "East US", Endpoint: "http://east/"},
		{Name: "West US", Endpoint: "http://west/"},
		{Name: "North Europe", Endpoint: "http://north/"},
	}
	a := cosmos.Account{ID: "fake", ReadableLocations: locs, WritableLocations: locs[:1], EnableMultipleWriteLocations: multiWrite}
	if multiWrite {
		a.WritableLocations = locs
	}
	return a
}

// reply is a canned answer: a status (0 = network error), or block until the request's
// context ends.
type reply struct {
	status, sub int
	charge      float64
	retryAfter  time.Duration
	body        string
	block       bool
	sent        bool
	// header is set on the response (x-ms-continuation of a query page, say).
	header map[string]string
}

// fakeTransport answers GET / with its account and item requests from per-endpoint
// queues of replies (the last reply repeats).
type fakeTransport struct {
	mu      sync.Mutex
	account cosmos.Account
	replies map[string][]reply
	calls   []string
	reqs    []*cosmos.Request
	pkPaths []string
	// blocked receives once for every request that starts blocking, so a test can
	// advance a fake clock only once the attempt is in flight.
	blocked chan string
	// accountReplies answer GET / per endpoint instead of the account (a status of 0
	// is a refused connection); accountCalls lists the endpoints asked, in order.
	accountReplies map[string]reply
	accountCalls   []string
	// containerBlock lists the endpoints where a read of a container's definition hangs.
	containerBlock map[string]bool
}

func newFakeTransport(acct cosmos.Account) *fakeTransport {
	return &fakeTransport{account: acct, replies: map[string][]reply{}, pkPaths: []string{"/pk"}, blocked: make(chan string, 64)}
}

func (f *fakeTransport) on(endpoint string, rs ...reply) { f.replies[endpoint] = rs }

func (f *fakeTransport) Do(ctx context.Context, endpoint string, req *cosmos.Request) (*cosmos.Response, error) {
	f.mu.Lock()
	if req.Path == "/" {
		f.accountCalls = append(f.accountCalls, endpoint)
		r, special := f.accountReplies[endpoint]
		body, _ := json.Marshal(f.account)
		f.mu.Unlock()
		switch {
		case !special:
		case r.block:
			f.blocked <- endpoint
			<-ctx.Done()
			return nil, &cosmos.NetworkError{Endpoint: endpoint, Sent: true, Err: ctx.Err()}
		case r.status == 0:
			return nil, &cosmos.NetworkError{Endpoint: endpoint, Err: errors.New("connection refused")}
		case r.status >= 400:
			return &cosmos.Response{StatusCode: r.status, Header: http.Header{}}, &cosmos.Error{StatusCode: r.status}
		}
		return &cosmos.Response{StatusCode: 200, Body: body, Header: http.Header{}}, nil
	}
	if req.Method == http.MethodGet && len(cosmos.PathSegments(req.Path)) == 4 {
		if f.containerBlock[endpoint] {
			f.mu.Unlock()
			f.blocked <- endpoint
			<-ctx.Done()
			return nil, &cosmos.NetworkError{Endpoint: endpoint, Sent: true, Err: ctx.Err()}
		}
		body, _ := json.Marshal(cosmos.Container{ID: "c", PartitionKey: cosmos.PartitionKeyDefinition{Paths: f.pkPaths, Kind: "Hash", Version: 2}})
		f.mu.Unlock()
		return &cosmos.Response{StatusCode: 200, Body: body, Header: http.Header{}}, nil
	}
	f.calls = append(f.calls, endpoint)
	f.reqs = append(f.reqs, req)
	rs := f.replies[endpoint]
	var r reply
	if len(rs) > 0 {
		r = rs[0]
		if len(rs) > 1 {
			f.replies[endpoint] = rs[1:]
		}
	} else {
		r = reply{status: 200, charge: 1, body: `{"id":"1"}`}
	}
	f.mu.Unlock()
	if r.block {
		f.blocked <- endpoint
		<-ctx.Done()
		return nil, &cosmos.NetworkError{Endpoint: endpoint, Sent: true, Err: ctx.Err()}
	}
	if r.status == 0 {
		return nil, &cosmos.NetworkError{Endpoint: endpoint, Sent: r.sent, Err: context.Canceled}
	}
	h := http.Header{}
	h.Set(cosmos.HeaderRequestCharge, strconv.FormatFloat(r.charge, 'f', 2, 64))
	for k, v := range r.header {
		h.Set(k, v)
	}
	resp := &cosmos.Response{StatusCode: r.status, SubStatus: r.sub, Header: h, Body: []byte(r.body), RequestCharge: r.charge, ActivityID: "act-" + endpoint}
	if r.status >= 400 {
		return resp, &cosmos.Error{StatusCode: r.status, SubStatus: r.sub, RetryAfter: r.retryAfter, RequestCharge: r.charge}
	}
	return resp, nil
}

func (f *fakeTransport) callLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func newTestClient(t testing.TB, tr Transport, clk clock.Clock, preferred ...string) *Client {
	t.Helper()
	c, err := New(Options{Endpoint: "http://global", Transport: tr, Clock: clk, PreferredRegions: preferred})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readOp() Operation {
	pk, _ := cosmos.PK("a")
	return Operation{Kind: OpRead, Database: "db", Container: "c", ID: "1", PartitionKey: pk}
}
