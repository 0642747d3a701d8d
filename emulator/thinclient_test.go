package emulator

import (
	"bytes"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/cosmos/rntbd"
)

func thinHTTPClient(s *Server, h2 bool) *http.Client {
	tr := &http.Transport{TLSClientConfig: s.ClientTLSConfig(), ForceAttemptHTTP2: h2}
	if !h2 {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

func TestThinClientLocationsOnlyWhenAsked(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	for _, ask := range []bool{false, true} {
		var hdr map[string]string
		if ask {
			hdr = map[string]string{HeaderUseThinClient: "true"}
		}
		var acct map[string]json.RawMessage
		if err := json.Unmarshal(c.mustDo(s.Endpoint(), "GET", "/", hdr).Body, &acct); err != nil {
			t.Fatal(err)
		}
		_, has := acct["thinClientReadableLocations"]
		if has != ask {
			t.Fatalf("asked %v: thinClientReadableLocations present %v", ask, has)
		}
		if !ask {
			continue
		}
		var read, write []cosmos.Location
		json.Unmarshal(acct["thinClientReadableLocations"], &read)
		json.Unmarshal(acct["thinClientWritableLocations"], &write)
		if len(read) != len(s.Regions()) || len(write) != 1 || write[0].Name != s.Regions()[0].Name {
			t.Fatalf("thin client locations read %v write %v", read, write)
		}
		for _, l := range read {
			if ep, _ := s.ThinClientEndpoint(l.Name); l.Endpoint != ep || !strings.HasPrefix(ep, "https://") {
				t.Errorf("%s: %s, want %s", l.Name, l.Endpoint, ep)
			}
		}
	}
}

func TestThinClientProbeNeedsHTTP2(t *testing.T) {
	s := startTest(t)
	ep, _ := s.ThinClientEndpoint("East US")
	for _, h2 := range []bool{true, false} {
		resp, err := thinHTTPClient(s, h2).Post(ep+"connectivity-probe", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := 200
		if !h2 {
			want = 505
		}
		if resp.StatusCode != want || (h2 && resp.ProtoMajor != 2) {
			t.Errorf("HTTP/2 %v: probe → %d over %s, want %d", h2, resp.StatusCode, resp.Proto, want)
		}
	}
}

// proxyRead is a point read in the proxy form: GlobalDatabaseAccountName and an
// EffectivePartitionKey, no TransportRequestID or ReplicaPath.
func proxyFrame(t *testing.T, s *Server, op uint16, id, pk string, body []byte, extra ...rntbd.Token) []byte {
	t.Helper()
	key, _ := cosmos.NewMasterKey(s.Key())
	date := cosmos.FormatDate(time.Now())
	verb, link := "get", "dbs/db/colls/items/docs/"+id
	if op == 0x0001 {
		verb, link = "post", "dbs/db/colls/items"
	}
	auth, _ := key.Authorize(verb, "docs", link, date)
	present := byte(0)
	if body != nil {
		present = 1
	}
	parsed, err := cosmos.ParsePartitionKeyJSON(`["` + pk + `"]`)
	if err != nil {
		t.Fatal(err)
	}
	epk, _ := hex.DecodeString(cosmos.EffectivePartitionKey(parsed))
	var tokens []rntbd.Token
	if len(extra) == 0 || extra[0].ID != rntbd.ReqEffectivePartitionKey {
		tokens = append(tokens, rntbd.BytesToken(rntbd.ReqEffectivePartitionKey, rntbd.TypeBytes, epk))
	} else {
		tokens, extra = append(tokens, extra[0]), extra[1:]
	}
	tokens = append(tokens,
		rntbd.StringToken(0x00CE, rntbd.TypeString, s.cfg.Account),
		rntbd.StringToken(rntbd.ReqDatabaseName, rntbd.TypeString, "db"),
		rntbd.StringToken(rntbd.ReqCollectionName, rntbd.TypeString, "items"),
		rntbd.ByteToken(rntbd.ReqPayloadPresent, present))
	if op != 0x0001 {
		tokens = append(tokens, rntbd.StringToken(rntbd.ReqDocumentName, rntbd.TypeString, id))
	}
	tokens = append(tokens,
		rntbd.StringToken(rntbd.ReqAuthorizationToken, rntbd.TypeString, auth),
		rntbd.StringToken(rntbd.ReqDate, rntbd.TypeSmallString, date),
		rntbd.StringToken(rntbd.ReqPartitionKey, rntbd.TypeString, `["`+pk+`"]`))
	tokens = append(tokens, extra...)
	req := rntbd.Request{ResourceType: 0x0003, OperationType: op, ActivityID: uuid.New(), Tokens: tokens, Payload: body}
	b, err := req.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func postProxy(t *testing.T, s *Server, opName string, frame []byte) (*http.Response, rntbd.Response) {
	return postProxyTo(t, s, "", opName, frame, true)
}

// postProxyTo posts a proxy frame to the East US endpoint plus path (.NET posts to the
// endpoint, the Rust driver to the endpoint plus the resource path).
func postProxyTo(t *testing.T, s *Server, path, opName string, frame []byte, version bool) (*http.Response, rntbd.Response) {
	t.Helper()
	ep, _ := s.ThinClientEndpoint("East US")
	hr, _ := http.NewRequest("POST", ep+path, bytes.NewReader(frame))
	hr.Header.Set(HeaderThinClientOperation, opName)
	hr.Header.Set(HeaderThinClientResourceType, "Document")
	if version {
		hr.Header.Set(cosmos.HeaderVersion, cosmos.APIVersion)
	}
	resp, err := thinHTTPClient(s, true).Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r, n, err := rntbd.DecodeResponse(b)
	if err != nil || n != len(b) {
		t.Fatalf("answer body is no RNTBD response frame (%d of %d bytes): %v\n%q", n, len(b), err, b)
	}
	return resp, r
}

func TestThinClientServesPointOperations(t *testing.T) {
	s := startTest(t)
	resp, created := postProxy(t, s, "Create", proxyFrame(t, s, 0x0001, "a", "p1", []byte(`{"id":"a","pk":"p1"}`)))
	if resp.StatusCode != 201 || created.Status != 201 || resp.ProtoMajor != 2 {
		t.Fatalf("create → HTTP %d (%s), frame %d %s", resp.StatusCode, resp.Proto, created.Status, created.Payload)
	}
	resp, read := postProxy(t, s, "Read", proxyFrame(t, s, 0x0003, "a", "p1", nil))
	if resp.StatusCode != 200 || read.Status != 200 || !strings.Contains(string(read.Payload), `"id":"a"`) {
		t.Fatalf("read → HTTP %d frame %d %s", resp.StatusCode, read.Status, read.Payload)
	}
	if st := tokenText(read, rntbd.RespSessionToken); st == "" || strings.Contains(st, ":") {
		t.Errorf("session token %q: want it without the range prefix", st)
	}
	if resp, r := postProxyTo(t, s, "dbs/db/colls/items/docs/a", "Read", proxyFrame(t, s, 0x0003, "a", "p1", nil), true); resp.StatusCode != 200 || r.Status != 200 {
		t.Errorf("read posted to the endpoint plus the resource path (the Rust driver's form) → HTTP %d frame %d", resp.StatusCode, r.Status)
	}
	if resp, r := postProxyTo(t, s, "", "Read", proxyFrame(t, s, 0x0003, "a", "p1", nil), false); resp.StatusCode != 400 || !strings.Contains(string(r.Payload), "x-ms-version") {
		t.Errorf("read without x-ms-version → HTTP %d %s", resp.StatusCode, r.Payload)
	}
	resp, missing := postProxy(t, s, "Read", proxyFrame(t, s, 0x0003, "nope", "p1", nil))
	if resp.StatusCode != 404 || missing.Status != 404 {
		t.Errorf("missing item → HTTP %d frame %d", resp.StatusCode, missing.Status)
	}
	// Ids travel in tokens: one that a REST path would mangle (a percent escape, a
	// trailing space, '#', '/') is stored and read back as it is.
	odd := "x%20y/#z "
	if resp, r := postProxy(t, s, "Create", proxyFrame(t, s, 0x0001, odd, "p1", []byte(`{"id":"x%20y/#z ","pk":"p1"}`))); resp.StatusCode != 201 {
		t.Fatalf("create %q → %d %s", odd, resp.StatusCode, r.Payload)
	}
	if resp, r := postProxy(t, s, "Read", proxyFrame(t, s, 0x0003, odd, "p1", nil)); resp.StatusCode != 200 || !strings.Contains(string(r.Payload), `"x%20y/#z "`) {
		t.Errorf("read %q → %d %s", odd, resp.StatusCode, r.Payload)
	}
	if s.ReplicaHTTPRequests() != 0 {
		t.Errorf("ReplicaHTTPRequests = %d", s.ReplicaHTTPRequests())
	}
}

func TestThinClientRefusesDirectModeFrames(t *testing.T) {
	s := startTest(t)
	cases := map[string][]byte{
		"TransportRequestID": proxyFrame(t, s, 0x0003, "a", "p1", nil, rntbd.ULongToken(rntbd.ReqTransportRequestID, 1)),
		"ReplicaPath":        proxyFrame(t, s, 0x0003, "a", "p1", nil, rntbd.StringToken(rntbd.ReqReplicaPath, rntbd.TypeString, "/apps/x/")),
	}
	for name, frame := range cases {
		resp, r := postProxy(t, s, "Read", frame)
		if resp.StatusCode != 400 || r.Status != 400 || !strings.Contains(string(r.Payload), name) {
			t.Errorf("%s: HTTP %d frame %d %s", name, resp.StatusCode, r.Status, r.Payload)
		}
	}
	wrongEPK := proxyFrame(t, s, 0x0003, "a", "p1", nil, rntbd.BytesToken(rntbd.ReqEffectivePartitionKey, rntbd.TypeBytes, []byte{0x01, 0x02}))
	if resp, r := postProxy(t, s, "Read", wrongEPK); resp.StatusCode != 400 || !strings.Contains(string(r.Payload), "EffectivePartitionKey") {
		t.Errorf("an EPK that is not the partition key's: HTTP %d %s", resp.StatusCode, r.Payload)
	}
	if resp, r := postProxy(t, s, "Create", proxyFrame(t, s, 0x0003, "a", "p1", nil)); resp.StatusCode != 400 || !strings.Contains(string(r.Payload), HeaderThinClientOperation) {
		t.Errorf("operation header that disagrees with the frame: HTTP %d %s", resp.StatusCode, r.Payload)
	}
}
