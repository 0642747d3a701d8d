package engine

import (
	"context"
	"net/http"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// memTransport answers every item request at once with the same response, so a
// benchmark over it measures the engine's own per-operation cost.
type memTransport struct {
	account []byte
	resp    cosmos.Response
}

func (m *memTransport) Do(_ context.Context, _ string, req *cosmos.Request) (*cosmos.Response, error) {
	if req.Path == "/" {
		return &cosmos.Response{StatusCode: 200, Body: m.account, Header: http.Header{}}, nil
	}
	r := m.resp
	return &r, nil
}

// BenchmarkEngineRead is the engine's overhead for one point read: region planning,
// request building, the attempt loop and diagnostics recording, with a transport that
// costs nothing.
func BenchmarkEngineRead(b *testing.B) {
	tr := newFakeTransport(fakeAccount(false))
	acct, _ := tr.Do(context.Background(), "", &cosmos.Request{Path: "/"})
	mem := &memTransport{account: acct.Body, resp: cosmos.Response{StatusCode: 200, Body: []byte(`{"id":"1","pk":"a"}`), Header: http.Header{}, RequestCharge: 1}}
	c, err := New(Options{Endpoint: "http://global", Transport: mem, PreferredRegions: []string{"West US"}})
	if err != nil {
		b.Fatal(err)
	}
	op := readOp()
	op.ExcludeRegions = []string{"East US"}
	ctx := context.Background()
	if _, err := c.Execute(ctx, op); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Execute(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
}
