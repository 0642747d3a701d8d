package emulator

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/cosmos/rntbd"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// These tests speak to the emulator's RNTBD listeners with the client codec of
// cosmos/rntbd — written apart from emulator/rntbdserver, so that each side checks the
// other's reading of the layouts.

type rntbdTestConn struct {
	t   *testing.T
	c   *tls.Conn
	buf []byte
}

// dialReplica opens a TLS connection to the host of an rntbd:// address, trusting only
// the emulator's certificate, and negotiates the context.
func dialReplica(t *testing.T, s *Server, address string) *rntbdTestConn {
	t.Helper()
	u, err := url.Parse(address)
	if err != nil || u.Scheme != "rntbd" {
		t.Fatalf("replica address %q is not rntbd://", address)
	}
	cfg := s.ClientTLSConfig()
	cfg.ServerName = u.Hostname()
	c, err := tls.Dial("tcp", u.Host, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	rc := &rntbdTestConn{t: t, c: c}
	req := rntbd.NewContextRequest(uuid.New(), cosmos.APIVersion, "cosmosctl-emulator-test")
	b, err := req.Encode()
	if err != nil {
		t.Fatal(err)
	}
	rc.write(b)
	for {
		resp, n, err := rntbd.DecodeContextResponse(rc.buf)
		if errors.Is(err, rntbd.ErrIncomplete) {
			rc.fill()
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		rc.buf = rc.buf[n:]
		if resp.Status != 200 || resp.ServerAgent() == "" || resp.IdleTimeoutSeconds() != 600 {
			t.Fatalf("context answered %d agent %q idle %d: %s", resp.Status, resp.ServerAgent(), resp.IdleTimeoutSeconds(), resp.ErrorBody)
		}
		return rc
	}
}

func (rc *rntbdTestConn) write(b []byte) {
	if _, err := rc.c.Write(b); err != nil {
		rc.t.Fatal(err)
	}
}

func (rc *rntbdTestConn) fill() {
	var p [4096]byte
	n, err := rc.c.Read(p[:])
	if err != nil {
		rc.t.Fatalf("reading an answer: %v", err)
	}
	rc.buf = append(rc.buf, p[:n]...)
}

func (rc *rntbdTestConn) read() rntbd.Response {
	for {
		resp, n, err := rntbd.DecodeResponse(rc.buf)
		if errors.Is(err, rntbd.ErrIncomplete) {
			rc.fill()
			continue
		}
		if err != nil {
			rc.t.Fatal(err)
		}
		rc.buf = rc.buf[n:]
		return resp
	}
}

// pointRequest is a Document point operation on db/items, signed as REST signs it.
func pointRequest(t *testing.T, s *Server, op uint16, replicaPath, id, pk string, tid uint32, body []byte) []byte {
	t.Helper()
	key, _ := cosmos.NewMasterKey(s.Key())
	date := cosmos.FormatDate(time.Now())
	verb, link := "get", "dbs/db/colls/items/docs/"+id
	switch op {
	case 0x0001:
		verb, link = "post", "dbs/db/colls/items"
	case 0x0005:
		verb = "delete"
	}
	auth, _ := key.Authorize(verb, "docs", link, date)
	present := byte(0)
	if body != nil {
		present = 1
	}
	tokens := []rntbd.Token{
		rntbd.ByteToken(rntbd.ReqPayloadPresent, present),
		rntbd.StringToken(rntbd.ReqReplicaPath, rntbd.TypeString, replicaPath),
		rntbd.ULongToken(rntbd.ReqTransportRequestID, tid),
		rntbd.StringToken(rntbd.ReqAuthorizationToken, rntbd.TypeString, auth),
		rntbd.StringToken(rntbd.ReqDate, rntbd.TypeSmallString, date),
		rntbd.StringToken(rntbd.ReqDatabaseName, rntbd.TypeString, "db"),
		rntbd.StringToken(rntbd.ReqCollectionName, rntbd.TypeString, "items"),
		rntbd.StringToken(rntbd.ReqPartitionKey, rntbd.TypeString, `["`+pk+`"]`),
	}
	if op != 0x0001 {
		tokens = append(tokens, rntbd.StringToken(rntbd.ReqDocumentName, rntbd.TypeString, id))
	}
	req := rntbd.Request{ResourceType: 0x0003, OperationType: op, ActivityID: uuid.New(), Tokens: tokens, Payload: body}
	b, err := req.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func tokenText(r rntbd.Response, id uint16) string {
	tk, ok := r.Token(id)
	if !ok {
		return ""
	}
	if s, ok := tk.Str(); ok {
		return s
	}
	if u, ok := tk.Uint(); ok {
		return itoa64(int64(u))
	}
	if i, ok := tk.Int(); ok {
		return itoa64(i)
	}
	return "?"
}

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

// replicaOf returns the rntbd address of a secondary of the range the partition key
// value lands on, in East US, and its ReplicaPath.
func replicaOf(t *testing.T, s *Server, c *testClient, rng string, index int) (address, path string) {
	t.Helper()
	addrs := fetchAddresses(t, c, regionURL(t, s, "East US"), rng, false)
	a := addrs[index]
	if a.Protocol != "rntbd" {
		t.Fatalf("address %s has protocol %q, want rntbd", a.PhysicalURI, a.Protocol)
	}
	u, err := url.Parse(a.PhysicalURI)
	if err != nil {
		t.Fatal(err)
	}
	return a.PhysicalURI, u.EscapedPath()
}

func TestRNTBDReplicaServesPointOperations(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	rng := createIn(t, c, s.Endpoint(), "seed", "p1")
	address, path := replicaOf(t, s, c, rng, 1)
	if rep, _ := s.ReplicaEndpoint("East US"); !strings.HasPrefix(address, rep+"/apps/") {
		t.Fatalf("address %s is not on East US's RNTBD listener %s", address, rep)
	}
	before := s.ReplicaHTTPRequests()
	rc := dialReplica(t, s, address)

	rc.write(pointRequest(t, s, 0x0001, path, "a", "p1", 1, []byte(`{"id":"a","pk":"p1","n":1}`)))
	created := rc.read()
	if created.Status != 201 || tokenText(created, rntbd.RespTransportRequestID) != "1" || !strings.Contains(string(created.Payload), `"n":1`) {
		t.Fatalf("create → %d tid %s %s", created.Status, tokenText(created, rntbd.RespTransportRequestID), created.Payload)
	}
	rc.write(pointRequest(t, s, 0x0003, path, "a", "p1", 2, nil))
	read := rc.read()
	if read.Status != 200 || !strings.Contains(string(read.Payload), `"id":"a"`) {
		t.Fatalf("read → %d %s", read.Status, read.Payload)
	}
	session := tokenText(read, rntbd.RespSessionToken)
	if session == "" || strings.HasPrefix(session, rng+":") {
		t.Errorf("session token %q: want the partition-local token without %q", session, rng+":")
	}
	if tokenText(read, rntbd.RespPartitionKeyRangeID) != rng || tokenText(read, rntbd.RespLSN) == "" {
		t.Errorf("pk range id %q lsn %q", tokenText(read, rntbd.RespPartitionKeyRangeID), tokenText(read, rntbd.RespLSN))
	}
	if ch, ok := read.Token(rntbd.RespRequestCharge); !ok || ch.Type != rntbd.TypeDouble {
		t.Errorf("request charge token %+v", ch)
	}
	rc.write(pointRequest(t, s, 0x0003, path, "missing", "p1", 3, nil))
	if missing := rc.read(); missing.Status != 404 || !strings.Contains(string(missing.Payload), `"code"`) {
		t.Errorf("read of a missing item → %d %s, want 404 with the REST error body", missing.Status, missing.Payload)
	}
	// Ids travel in tokens: one a REST path would mangle is served as it is.
	odd := "x%20y/#z "
	rc.write(pointRequest(t, s, 0x0001, path, odd, "p1", 4, []byte(`{"id":"x%20y/#z ","pk":"p1"}`)))
	if r := rc.read(); r.Status != 201 {
		t.Fatalf("create %q → %d %s", odd, r.Status, r.Payload)
	}
	rc.write(pointRequest(t, s, 0x0003, path, odd, "p1", 5, nil))
	if r := rc.read(); r.Status != 200 || !strings.Contains(string(r.Payload), `"x%20y/#z "`) {
		t.Errorf("read %q → %d %s", odd, r.Status, r.Payload)
	}
	if got := s.ReplicaHTTPRequests() - before; got != 0 {
		t.Errorf("ReplicaHTTPRequests grew by %d over RNTBD", got)
	}
	var served int64
	for _, set := range s.Replicas() {
		for _, r := range set.Replicas {
			if r.Address == address {
				served = r.Requests
			}
		}
	}
	if served != 5 {
		t.Errorf("the replica counted %d requests, want 5", served)
	}

	// The same replica path over HTTP still answers (legacy), and is counted.
	if _, err := c.do(regionURL(t, s, "East US")+strings.TrimSuffix(path, "/"), "GET", itemsPath()+"/a", pkHeader(`["p1"]`), nil); err != nil {
		t.Fatal(err)
	}
	if s.ReplicaHTTPRequests() != before+1 {
		t.Errorf("ReplicaHTTPRequests = %d, want %d", s.ReplicaHTTPRequests(), before+1)
	}
}

func TestRNTBDReplicaMoveEffects(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	rng := createIn(t, c, s.Endpoint(), "a", "p1")
	goneAddr, gonePath := replicaOf(t, s, c, rng, 1)
	hangAddr, hangPath := replicaOf(t, s, c, rng, 2)
	refuseAddr, refusePath := replicaOf(t, s, c, rng, 3)
	_, primaryPath := replicaOf(t, s, c, rng, 0)
	for i, effect := range map[int]string{1: MoveGone, 2: MoveHang, 3: MoveRefuse} {
		if _, err := s.MoveReplica(ReplicaMove{Region: "East US", Database: "db", Container: "items", Range: rng, Replica: i, Effect: effect}); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = goneAddr, refuseAddr

	rc := dialReplica(t, s, hangAddr) // one connection: the node serves every replica of the region
	rc.write(pointRequest(t, s, 0x0003, gonePath, "a", "p1", 1, nil))
	if gone := rc.read(); gone.Status != 410 || tokenText(gone, rntbd.RespSubStatus) != "0" || tokenText(gone, rntbd.RespTransportRequestID) != "1" {
		t.Fatalf("moved (gone) replica → %d substatus %q", gone.Status, tokenText(gone, rntbd.RespSubStatus))
	}
	rc.write(pointRequest(t, s, 0x0003, hangPath, "a", "p1", 2, nil))
	rc.write(pointRequest(t, s, 0x0003, primaryPath, "a", "p1", 3, nil))
	if next := rc.read(); next.Status != 200 || tokenText(next, rntbd.RespTransportRequestID) != "3" {
		t.Fatalf("after a hanging request the next answer is %d for %s, want 200 for 3", next.Status, tokenText(next, rntbd.RespTransportRequestID))
	}
	rc.write(pointRequest(t, s, 0x0003, refusePath, "a", "p1", 4, nil))
	var p [1]byte
	_ = rc.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := rc.c.Read(p[:])
	var ne net.Error
	if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("after a request to a refusing replica: %v; want the connection closed (and no answer to the hanging request)", err)
	}
}

func TestRNTBDReplicaFaultRuleAndBadReplicaPath(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	rng := createIn(t, c, s.Endpoint(), "a", "p1")
	address, path := replicaOf(t, s, c, rng, 1)
	var name string
	for _, set := range s.Replicas() {
		for _, r := range set.Replicas {
			if r.Address == address {
				name = r.Name
			}
		}
	}
	if _, err := s.AddFault(faults.Rule{Replica: name, Operations: []string{"reads"}, Effect: "status", Status: 503}); err != nil {
		t.Fatal(err)
	}
	rc := dialReplica(t, s, address)
	rc.write(pointRequest(t, s, 0x0003, path, "a", "p1", 1, nil))
	if r := rc.read(); r.Status != 503 {
		t.Errorf("read on a replica with a 503 rule → %d", r.Status)
	}
	rc.write(pointRequest(t, s, 0x0003, "/dbs/", "a", "p1", 2, nil))
	if r := rc.read(); r.Status != 404 || !strings.Contains(string(r.Payload), "ReplicaPath") {
		t.Errorf("a ReplicaPath that is no replica address → %d %s", r.Status, r.Payload)
	}
}

// The listeners refuse plaintext: a client that does not speak TLS gets nothing served.
func TestRNTBDListenerRequiresTLS(t *testing.T) {
	s := startTest(t)
	rep, _ := s.ReplicaEndpoint("East US")
	conn, err := net.Dial("tcp", strings.TrimPrefix(rep, "rntbd://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := rntbd.NewContextRequest(uuid.New(), cosmos.APIVersion, "plain")
	b, _ := req.Encode()
	conn.Write(b)
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	got, _ := io.ReadAll(conn)
	if len(got) >= 24 && got[4] == 200 {
		t.Fatal("a plaintext context request was answered 200")
	}
}

// A region going down (a refuse fault) resets its open RNTBD connections and refuses new
// ones, as it does for HTTP.
func TestRNTBDRegionRefuseDropsConnections(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	rng := createIn(t, c, s.Endpoint(), "a", "p1")
	address, _ := replicaOf(t, s, c, rng, 1)
	rc := dialReplica(t, s, address)
	if _, err := s.AddFault(faults.Rule{Region: "East US", Effect: "refuse"}); err != nil {
		t.Fatal(err)
	}
	_ = rc.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := rc.c.Read(make([]byte, 1))
	var ne net.Error
	if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("an open connection of a refusing region: %v; want it reset", err)
	}
	u, _ := url.Parse(address)
	cfg := s.ClientTLSConfig()
	cfg.ServerName = u.Hostname()
	if conn, err := tls.Dial("tcp", u.Host, cfg); err == nil {
		conn.Close()
		t.Fatal("a refusing region's RNTBD listener completed a TLS handshake")
	}
}
