package cosmos

import (
	"context"
	"net/http"
	"net/http/httptest"
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
