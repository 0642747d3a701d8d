package cosmos

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos/rntbd"
	"github.com/cosmosctl/cosmosctl/cosmos/rntbdconn/rntbdtest"
)

const replicaPath = "/apps/acct/services/coll-rid/partitions/pk-rid/replicas/1p"

func tokenString(req rntbd.Request, id uint16) string {
	t, _ := req.Token(id)
	s, _ := t.Str()
	return s
}

// A point read to an rntbd:// replica goes as an RNTBD frame signed exactly as the REST
// request would be, and its answer comes back as the same *Response.
func TestRNTBDReplicaRead(t *testing.T) {
	cred, err := NewMasterKey("dGVzdC1hY2NvdW50LWtleQ==")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan rntbd.Request, 1)
	srv := rntbdtest.NewServer(t, func(req rntbd.Request) rntbdtest.Action {
		got <- req
		r := rntbdtest.OK(`{"id":"x"}`)
		r.Tokens = append(r.Tokens,
			rntbd.DoubleToken(rntbd.RespRequestCharge, 1.25),
			rntbd.StringToken(rntbd.RespPartitionKeyRangeID, rntbd.TypeString, "0"),
			rntbd.StringToken(rntbd.RespSessionToken, rntbd.TypeString, "-1#5"),
			rntbd.StringToken(rntbd.RespETag, rntbd.TypeString, `"e1"`),
			rntbd.DoubleToken(rntbd.RespBackendRequestDurationMilliseconds, 0.5),
		)
		return rntbdtest.Action{Resp: r}
	})
	tr := &Transport{Credential: cred, TLSConfig: srv.ClientTLS(), UserAgent: "cosmosctl-test"}
	defer tr.CloseIdleConnections()

	req := &Request{Method: http.MethodGet, Path: ItemPath("d b", "c", "x"), Header: http.Header{}}
	req.Header.Set(HeaderPartitionKey, `["p"]`)
	resp, err := tr.Do(context.Background(), "rntbd://"+srv.Addr()+replicaPath, req)
	if err != nil {
		t.Fatal(err)
	}
	sent := <-got
	if p := tokenString(sent, rntbd.ReqReplicaPath); p != replicaPath+"/" {
		t.Errorf("ReplicaPath %q, want %q", p, replicaPath+"/")
	}
	date := tokenString(sent, rntbd.ReqDate)
	want, _ := cred.Authorize(http.MethodGet, "docs", "dbs/d b/colls/c/docs/x", date)
	if auth := tokenString(sent, rntbd.ReqAuthorizationToken); auth != want || auth == "" {
		t.Errorf("AuthorizationToken %q, want the REST signature %q", auth, want)
	}
	if db := tokenString(sent, rntbd.ReqDatabaseName); db != "d b" {
		t.Errorf("DatabaseName %q", db)
	}
	if cr := <-srv.Contexts; tokenString(rntbd.Request{Tokens: cr.Tokens}, rntbd.CtxReqClientVersion) != APIVersion {
		t.Errorf("context negotiation did not send the API version")
	}
	if resp.StatusCode != 200 || string(resp.Body) != `{"id":"x"}` || resp.RequestCharge != 1.25 ||
		resp.SessionToken != "0:-1#5" || resp.ETag != `"e1"` || resp.ServerDuration != 500*time.Microsecond {
		t.Errorf("response %+v", resp)
	}
	if resp.ActivityID == "" || resp.ActivityID != sent.ActivityID.String() {
		t.Errorf("activity id %q, want the request's %s", resp.ActivityID, sent.ActivityID)
	}
	if p := resp.Placement(); p.PartitionKeyRangeID != "0" {
		t.Errorf("placement %+v", p)
	}
}

func TestRNTBDErrorsKeepTheirShapes(t *testing.T) {
	srv := rntbdtest.NewServer(t, func(req rntbd.Request) rntbdtest.Action {
		switch tokenString(req, rntbd.ReqDocumentName) {
		case "missing":
			r := rntbdtest.OK(`{"code":"NotFound","message":"Entity with the specified id does not exist in the system."}`)
			r.Status = 404
			return rntbdtest.Action{Resp: r}
		case "gone":
			r := rntbdtest.OK("")
			r.Status = 410
			return rntbdtest.Action{Resp: r}
		}
		return rntbdtest.Action{Close: true}
	})
	tr := &Transport{TLSConfig: srv.ClientTLS()}
	defer tr.CloseIdleConnections()
	ep := "rntbd://" + srv.Addr() + replicaPath + "/"
	read := func(id string) (*Response, error) {
		req := &Request{Method: http.MethodGet, Path: ItemPath("d", "c", id), Header: http.Header{}}
		req.Header.Set(HeaderPartitionKey, `["p"]`)
		return tr.Do(context.Background(), ep, req)
	}

	resp, err := read("missing")
	var ce *Error
	if !errors.As(err, &ce) || resp == nil || resp.StatusCode != 404 || ce.Code != "NotFound" {
		t.Errorf("404: %v %+v, want a *Error with the service's code", err, resp)
	}
	resp, err = read("gone")
	if resp == nil || resp.StatusCode != 410 || !errors.As(err, &ce) {
		t.Errorf("410: %v %+v", err, resp)
	}
	_, err = read("reset")
	var ne *NetworkError
	if !errors.As(err, &ne) || !ne.Sent || ne.Endpoint != ep {
		t.Errorf("closed after the request: %v, want a sent *NetworkError", err)
	}
}

func TestRNTBDConnectFailuresAreNotSent(t *testing.T) {
	// Accepts TCP but never answers the TLS handshake: the connect timeout ends it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	req := &Request{Method: http.MethodGet, Path: ItemPath("d", "c", "x"), Header: http.Header{}}
	ctx := WithConnectTimeout(context.Background(), 50*time.Millisecond)
	start := time.Now()
	_, err = tr.Do(ctx, "rntbd://"+ln.Addr().String()+replicaPath, req)
	var ne *NetworkError
	if !errors.As(err, &ne) || ne.Sent {
		t.Fatalf("error %v, want an unsent *NetworkError", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("took %s: the connect timeout was not honoured", el)
	}
	if !strings.Contains(err.Error(), "before the request was sent") {
		t.Errorf("error %q", err)
	}
}

func TestRNTBDCloseIdleConnections(t *testing.T) {
	srv := rntbdtest.NewServer(t, func(req rntbd.Request) rntbdtest.Action { return rntbdtest.Action{Resp: rntbdtest.OK("")} })
	tr := &Transport{TLSConfig: srv.ClientTLS()}
	req := &Request{Method: http.MethodDelete, Path: ItemPath("d", "c", "x"), Header: http.Header{}}
	if _, err := tr.Do(context.Background(), "rntbd://"+srv.Addr()+replicaPath, req); err != nil {
		t.Fatal(err)
	}
	tr.CloseIdleConnections()
	select {
	case <-srv.ClientClosed:
	case <-time.After(30 * time.Second):
		t.Fatal("CloseIdleConnections left the RNTBD connection open")
	}
}

func TestRNTBDRefusesWhatAFrameCannotCarry(t *testing.T) {
	tr := &Transport{}
	for _, tc := range []struct {
		name string
		req  *Request
		want string
	}{
		{"a query", &Request{Method: http.MethodPost, Path: ItemsPath("d", "c"), Header: http.Header{HeaderIsQuery: {"true"}}, Body: []byte(`{}`)}, "X-Ms-Documentdb-Isquery has no RNTBD token"},
		{"query parameters", &Request{Method: http.MethodGet, Path: ItemPath("d", "c", "x"), Query: map[string][]string{"a": {"b"}}}, "query parameters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tr.Do(context.Background(), "rntbd://127.0.0.1:1"+replicaPath, tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// pointReadDoc is the item the benchmark's servers return: a typical small document.
var pointReadDoc = `{"id":"order-1","pk":"alice","status":"shipped","items":[{"sku":"A-1","qty":2},{"sku":"B-7","qty":1}],"total":42.5,"_rid":"NH1uAJ6ANm0JAAAAAAAAAA==","_self":"dbs/NH1uAA==/colls/NH1uAJ6ANm0=/docs/NH1uAJ6ANm0JAAAAAAAAAA==/","_etag":"\"0000ad3e-0000-0200-0000-67ae64c00000\"","_attachments":"attachments/","_ts":1739482304}`

// BenchmarkDirectPointRead is a signed point read's client cost through Transport.Do,
// over loopback to in-process servers that answer at once with the same item and the
// headers a service answer carries: RNTBD over TLS to a replica (direct mode) beside
// HTTPS and plain HTTP to a gateway (gateway mode). The servers do almost nothing, so
// the difference is the client: encoding, framing, TLS, net/http, header parsing.
// "sequential" is one request at a time (latency); "parallel-64" is 64 goroutines
// sharing the transport (throughput), and reports the connections the transport held.
func BenchmarkDirectPointRead(b *testing.B) {
	cred, err := NewMasterKey("dGVzdC1hY2NvdW50LWtleQ==")
	if err != nil {
		b.Fatal(err)
	}
	srv := rntbdtest.NewServer(b, func(req rntbd.Request) rntbdtest.Action {
		r := rntbdtest.OK(pointReadDoc)
		r.Tokens = append(r.Tokens,
			rntbd.DoubleToken(rntbd.RespRequestCharge, 1),
			rntbd.LongLongToken(rntbd.RespLSN, 10),
			rntbd.StringToken(rntbd.RespPartitionKeyRangeID, rntbd.TypeString, "0"),
			rntbd.StringToken(rntbd.RespSessionToken, rntbd.TypeString, "-1#10"),
			rntbd.StringToken(rntbd.RespETag, rntbd.TypeString, `"0000ad3e-0000-0200-0000-67ae64c00000"`),
			rntbd.DoubleToken(rntbd.RespBackendRequestDurationMilliseconds, 0.3),
		)
		return rntbdtest.Action{Resp: r}
	})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set(HeaderRequestCharge, "1")
		h.Set(HeaderLSN, "10")
		h.Set(HeaderPartitionKeyRangeID, "0")
		h.Set(HeaderSessionToken, "0:-1#10")
		h.Set(HeaderETag, `"0000ad3e-0000-0200-0000-67ae64c00000"`)
		h.Set(HeaderRequestDuration, "0.3")
		h.Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, pointReadDoc)
	})
	httpsSrv := httptest.NewTLSServer(handler)
	defer httpsSrv.Close()
	httpSrv := httptest.NewServer(handler)
	defer httpSrv.Close()

	httpsClient := NewHTTPClient()
	httpsClient.Transport.(*http.Transport).TLSClientConfig = httpsSrv.Client().Transport.(*http.Transport).TLSClientConfig
	cases := []struct {
		name     string
		endpoint string
		tr       *Transport
	}{
		{"rntbd", "rntbd://" + srv.Addr() + replicaPath, &Transport{Credential: cred, TLSConfig: srv.ClientTLS()}},
		{"gateway-https", httpsSrv.URL, &Transport{HTTP: httpsClient, Credential: cred}},
		{"gateway-http", httpSrv.URL, &Transport{HTTP: NewHTTPClient(), Credential: cred}},
	}
	newReq := func() *Request {
		req := &Request{Method: http.MethodGet, Path: ItemPath("shop", "orders", "order-1"), Header: http.Header{}}
		req.Header.Set(HeaderPartitionKey, `["alice"]`)
		return req
	}
	check := func(b *testing.B, resp *Response, err error) {
		if err != nil || resp.StatusCode != 200 || len(resp.Body) != len(pointReadDoc) || resp.SessionToken != "0:-1#10" {
			b.Fatalf("answer %+v, %v", resp, err)
		}
	}
	for _, tc := range cases {
		b.Run(tc.name+"/sequential", func(b *testing.B) {
			ctx := context.Background()
			resp, err := tc.tr.Do(ctx, tc.endpoint, newReq()) // connect outside the timing
			check(b, resp, err)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				resp, err := tc.tr.Do(ctx, tc.endpoint, newReq())
				check(b, resp, err)
			}
		})
		b.Run(tc.name+"/parallel-64", func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := tc.tr.Do(ctx, tc.endpoint, newReq())
					check(b, resp, err)
				}
			})
			if tc.name == "rntbd" {
				b.ReportMetric(float64(tc.tr.rntbdPool().Conns(srv.Addr())), "conns")
			}
		})
		tc.tr.CloseIdleConnections()
	}
}
