package cosmos

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Every request carries the headers the service expects of any client: the API
// version, an activity id and the merge capability (an account with partition merge
// enabled refuses requests without it).
func TestEveryRequestDeclaresTheMergeCapability(t *testing.T) {
	got := make(chan http.Header, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	cred, err := NewMasterKey("dGVzdC1hY2NvdW50LWtleQ==")
	if err != nil {
		t.Fatal(err)
	}
	tr := &Transport{HTTP: srv.Client(), Credential: cred}
	for _, req := range []*Request{
		{Method: http.MethodGet, Path: "/", Header: http.Header{}},
		{Method: http.MethodPost, Path: ItemsPath("db", "c"), Header: http.Header{}, Body: []byte(`{"id":"a"}`)},
	} {
		if _, err := tr.Do(context.Background(), srv.URL, req); err != nil {
			t.Fatal(err)
		}
		h := <-got
		if v := h.Get(HeaderSDKSupportedCapabilities); v != "1" {
			t.Errorf("%s %s: %s = %q, want \"1\"", req.Method, req.Path, HeaderSDKSupportedCapabilities, v)
		}
		if h.Get(HeaderVersion) != APIVersion || h.Get(HeaderActivityID) == "" {
			t.Errorf("%s %s: version %q, activity id %q", req.Method, req.Path, h.Get(HeaderVersion), h.Get(HeaderActivityID))
		}
	}
}

// BenchmarkTransportCreate is one signed create over loopback, answered 201 with no
// body (Prefer: return=minimal), as an import sends thousands: what Do costs beyond
// net/http's own work, in time and allocations.
func BenchmarkTransportCreate(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set(HeaderRequestCharge, "5.71")
		w.Header().Set(HeaderSessionToken, "0:-1#12")
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	key, _ := NewMasterKey("C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==")
	tr := &Transport{HTTP: NewHTTPClient(), Credential: key, UserAgent: "cosmosctl/bench"}
	body := []byte(`{"id":"m000001","pk":"p1","n":42,"pad":"0123456789abcdef0123456789abcdef"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h := http.Header{}
		h.Set(HeaderPartitionKey, `["p1"]`)
		h.Set("Prefer", "return=minimal")
		resp, err := tr.Do(ctx, srv.URL, &Request{Method: http.MethodPost, Path: "/dbs/app/colls/items/docs", Header: h, Body: body})
		if err != nil || resp.StatusCode != http.StatusCreated {
			b.Fatalf("%v %+v", err, resp)
		}
	}
}

// An endpoint that is no URL is named in the error, before anything is sent.
func TestAnEndpointThatIsNoURLIsNamed(t *testing.T) {
	tr := &Transport{HTTP: NewHTTPClient()}
	_, err := tr.Do(context.Background(), "http://[::1", &Request{Method: http.MethodGet, Path: "/"})
	if err == nil || !strings.Contains(err.Error(), `endpoint "http://[::1" is not a URL`) {
		t.Fatalf("got %v, want the endpoint named as no URL", err)
	}
}
