package rntbdserver

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testTLS returns a server config and a client config trusting it.
func testTLS(t *testing.T) (*tls.Config, *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rntbdserver test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12},
		&tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

func startServer(t *testing.T, h http.Handler) (addr string, client *tls.Config) {
	t.Helper()
	srvTLS, cliTLS := testTLS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Handler: h, TLSConfig: srvTLS, ServerAgent: "test-agent", ServerVersion: "1.0"}
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(ln) }()
	t.Cleanup(func() { s.Close(); <-done })
	return ln.Addr().String(), cliTLS
}

// --- a client side written in the test from the layouts (REFERENCE §1.2-§1.5) ---

type tok struct {
	id  uint16
	typ byte
	val []byte
}

func tokBytes(ts ...tok) []byte {
	var b []byte
	for _, x := range ts {
		b = binary.LittleEndian.AppendUint16(b, x.id)
		b = append(b, x.typ)
		switch x.typ {
		case 0x07:
			b = append(b, byte(len(x.val)))
		case 0x08, 0x0B:
			b = binary.LittleEndian.AppendUint16(b, uint16(len(x.val)))
		}
		b = append(b, x.val...)
	}
	return b
}

func str(id uint16, s string) tok   { return tok{id, 0x08, []byte(s)} }
func small(id uint16, s string) tok { return tok{id, 0x07, []byte(s)} }
func ulong(id uint16, v uint32) tok { return tok{id, 0x02, binary.LittleEndian.AppendUint32(nil, v)} }
func byteTok(id uint16, v byte) tok { return tok{id, 0x00, []byte{v}} }
func frame(res, op uint16, act [16]byte, tokens []byte, body []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(24+len(tokens)))
	b = binary.LittleEndian.AppendUint16(b, res)
	b = binary.LittleEndian.AppendUint16(b, op)
	b = append(b, act[:]...)
	b = append(b, tokens...)
	if body != nil {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(body)))
		b = append(b, body...)
	}
	return b
}

func contextRequest(ts ...tok) []byte {
	if ts == nil {
		ts = []tok{ulong(0, 1), small(1, "2020-11-05"), small(2, "cosmosctl-test")}
	}
	return frame(0, 0, [16]byte{0xC0}, tokBytes(ts...), nil)
}

// answer is a response frame decoded by the test's own reading of the layout: u32
// length, u32 status, 16-byte activity id, tokens to length, then (PayloadPresent, or
// an error status on a context response) u32 body length + body.
type answer struct {
	status   uint32
	activity [16]byte
	tokens   map[uint16]tok
	order    []uint16
	body     []byte
}

func readAnswer(t *testing.T, r io.Reader, context bool) answer {
	t.Helper()
	var head [24]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		t.Fatalf("reading the answer's head: %v", err)
	}
	a := answer{status: binary.LittleEndian.Uint32(head[4:]), tokens: map[uint16]tok{}}
	copy(a.activity[:], head[8:])
	rest := make([]byte, binary.LittleEndian.Uint32(head[:])-24)
	if _, err := io.ReadFull(r, rest); err != nil {
		t.Fatal(err)
	}
	sizes := map[byte]int{0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 16, 0x0D: 4, 0x0E: 8}
	prefixes := map[byte]int{7: 1, 0x0A: 1, 8: 2, 0x0B: 2, 9: 4, 0x0C: 4}
	for len(rest) > 0 {
		x := tok{id: binary.LittleEndian.Uint16(rest), typ: rest[2]}
		rest = rest[3:]
		n, fixed := sizes[x.typ]
		if !fixed {
			p := prefixes[x.typ]
			switch p {
			case 1:
				n = int(rest[0])
			case 2:
				n = int(binary.LittleEndian.Uint16(rest))
			case 4:
				n = int(binary.LittleEndian.Uint32(rest))
			default:
				t.Fatalf("token 0x%04X of unknown type 0x%02X", x.id, x.typ)
			}
			rest = rest[p:]
		}
		x.val, rest = rest[:n], rest[n:]
		a.tokens[x.id] = x
		a.order = append(a.order, x.id)
	}
	hasBody := false
	if context {
		hasBody = a.status < 200 || a.status >= 400
	} else {
		pp, ok := a.tokens[0x0000]
		if !ok || pp.typ != 0 {
			t.Fatalf("answer without PayloadPresent (0x0000, Byte): %v", a.order)
		}
		hasBody = pp.val[0] == 1
	}
	if hasBody {
		var lb [4]byte
		if _, err := io.ReadFull(r, lb[:]); err != nil {
			t.Fatal(err)
		}
		a.body = make([]byte, binary.LittleEndian.Uint32(lb[:]))
		if _, err := io.ReadFull(r, a.body); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

func (a answer) text(id uint16) string {
	x, ok := a.tokens[id]
	if !ok {
		return "<missing>"
	}
	switch x.typ {
	case 2:
		return itoa(uint64(binary.LittleEndian.Uint32(x.val)))
	case 5:
		return itoa(binary.LittleEndian.Uint64(x.val))
	case 0x0E:
		return ftoa(math.Float64frombits(binary.LittleEndian.Uint64(x.val)))
	}
	return string(x.val)
}

func itoa(v uint64) string  { return strconv.FormatUint(v, 10) }
func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func dial(t *testing.T, addr string, cfg *tls.Config) *tls.Conn {
	t.Helper()
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return c
}

func negotiated(t *testing.T, addr string, cfg *tls.Config) *tls.Conn {
	c := dial(t, addr, cfg)
	if _, err := c.Write(contextRequest()); err != nil {
		t.Fatal(err)
	}
	a := readAnswer(t, c, true)
	if a.status != 200 {
		t.Fatalf("context answered %d %s", a.status, a.body)
	}
	return c
}

func TestContextNegotiation(t *testing.T) {
	addr, cfg := startServer(t, http.NotFoundHandler())
	c := dial(t, addr, cfg)
	c.Write(contextRequest())
	a := readAnswer(t, c, true)
	if a.status != 200 || a.activity != [16]byte{0xC0} {
		t.Fatalf("status %d activity %x", a.status, a.activity)
	}
	for id, want := range map[uint16]string{2: "test-agent", 3: "1.0", 4: "600", 5: "60"} {
		if got := a.text(id); got != want {
			t.Errorf("context token 0x%04X = %q, want %q", id, got, want)
		}
	}
	if a.tokens[2].typ != 0x07 || a.tokens[3].typ != 0x07 || a.tokens[4].typ != 0x02 {
		t.Errorf("context token types %v", a.tokens)
	}
}

func TestBadContextIsRefused(t *testing.T) {
	rust, _ := hex.DecodeString(rustReadSnapshot)
	cases := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"no user agent", contextRequest(ulong(0, 1), small(1, "2020-11-05")), "UserAgent"},
		{"no client version", contextRequest(ulong(0, 1), small(2, "ua")), "ClientVersion"},
		{"protocol version 2", contextRequest(ulong(0, 2), small(1, "2020-11-05"), small(2, "ua")), "protocol version"},
		{"a request before the context", rust, "context request"},
	}
	addr, cfg := startServer(t, http.NotFoundHandler())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr, cfg)
			c.Write(tc.frame)
			a := readAnswer(t, c, true)
			if a.status != 400 || !strings.Contains(string(a.body), tc.want) || !json.Valid(a.body) {
				t.Fatalf("status %d body %s, want 400 JSON naming %s", a.status, a.body, tc.want)
			}
			if _, err := c.Read(make([]byte, 1)); err == nil {
				t.Fatal("the connection stayed open after a bad context")
			}
		})
	}
}

// The Rust driver's Read snapshot after a context: it carries no ReplicaPath, so the
// replica answers 400, in a frame that decodes per the layout and echoes its activity id.
func TestRustSnapshotWithoutReplicaPathAnswers400(t *testing.T) {
	addr, cfg := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("handler reached for a frame without ReplicaPath: %s", r.URL)
	}))
	c := negotiated(t, addr, cfg)
	rust, _ := hex.DecodeString(rustReadSnapshot)
	c.Write(rust)
	a := readAnswer(t, c, false)
	if a.status != 400 || !bytes.Equal(a.activity[:], rust[8:24]) || !strings.Contains(string(a.body), "ReplicaPath") {
		t.Fatalf("status %d activity %x body %s", a.status, a.activity, a.body)
	}
}

// The Rust snapshot with the direct-mode tokens added (ReplicaPath, names, a
// TransportRequestID, the partition key and a session token): the handler sees the REST
// read, and its answer comes back as tokens per the independent response layout.
func TestRustSnapshotServedAsRESTRead(t *testing.T) {
	var got *http.Request
	addr, cfg := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		h := w.Header()
		// Lower-case keys, as the emulator writes them.
		h["x-ms-request-charge"] = []string{"1.5"}
		h["lsn"] = []string{"42"}
		h["x-ms-session-token"] = []string{"0:-1#42"}
		h["x-ms-substatus"] = []string{"0"}
		h["etag"] = []string{`"e1"`}
		h["x-ms-documentdb-partitionkeyrangeid"] = []string{"0"}
		h["x-ms-request-duration-ms"] = []string{"0.25"}
		h["x-ms-cosmos-physical-partition-id"] = []string{"0"}
		h["x-ms-global-committed-lsn"] = []string{"41"}
		h["x-ms-item-count"] = []string{"1"}
		h["x-ms-cosmos-emulator-region"] = []string{"West US"}
		w.WriteHeader(200)
		w.Write([]byte(`{"id":"a"}`))
	}))
	c := negotiated(t, addr, cfg)
	rust, _ := hex.DecodeString(rustReadSnapshot)
	extra := tokBytes(str(0x0013, "/apps/acct/services/c1/partitions/0/replicas/7s/"), ulong(0x004D, 77),
		str(0x0015, "db 1"), str(0x0016, "coll"), str(0x0017, "a/b"), str(0x002B, `["pk"]`),
		str(0x0005, "0:-1#41"), byteTok(0x0010, 2), str(0x0001, "type%3Dmaster"), small(0x0003, "Sun, 06 Dec 2026 22:00:00 GMT"),
		str(0x0008, `"e0"`), tok{0x0FFF, 0x0B, []byte{1, 2, 3}}) // an unknown id, skipped
	tokensEnd := binary.LittleEndian.Uint32(rust)
	f := append([]byte(nil), rust[:tokensEnd]...)
	f = append(f, extra...)
	binary.LittleEndian.PutUint32(f, uint32(len(f)))
	f = append(f, rust[tokensEnd:]...)
	c.Write(f)
	a := readAnswer(t, c, false)
	if got == nil {
		t.Fatal("handler not reached")
	}
	if got.Method != "GET" || got.URL.EscapedPath() != "/apps/acct/services/c1/partitions/0/replicas/7s/dbs/db%201/colls/coll/docs/a%2Fb" {
		t.Errorf("request %s %s", got.Method, got.URL.EscapedPath())
	}
	for h, want := range map[string]string{
		"x-ms-documentdb-partitionkey": `["pk"]`, "x-ms-session-token": "0:-1#41", "x-ms-consistency-level": "Session",
		"authorization": "type%3Dmaster", "x-ms-date": "Sun, 06 Dec 2026 22:00:00 GMT", "x-ms-version": "2020-11-05",
		"if-none-match": `"e0"`, "x-ms-max-item-count": "256", "x-ms-activity-id": "12345678-90ab-cdef-0123-456789abcdef",
		"user-agent": "cosmosctl-test",
	} {
		if v := got.Header.Get(h); v != want {
			t.Errorf("header %s = %q, want %q", h, v, want)
		}
	}
	if a.status != 200 || !bytes.Equal(a.activity[:], rust[8:24]) || string(a.body) != `{"id":"a"}` {
		t.Fatalf("answer %d %x %s", a.status, a.activity, a.body)
	}
	for id, want := range map[uint16]string{
		0x0035: "77", 0x0015: "1.5", 0x0013: "42", 0x003E: "-1#42", 0x001C: "0", 0x0004: `"e1"`, 0x0021: "0",
		0x0051: "0.25", 0x0063: "0", 0x0029: "41", 0x0014: "1",
	} {
		if got := a.text(id); got != want {
			t.Errorf("answer token 0x%04X = %s, want %s", id, got, want)
		}
	}
	if a.tokens[0x0015].typ != 0x0E || a.tokens[0x0013].typ != 0x05 || a.tokens[0x003E].typ != 0x08 {
		t.Errorf("token types: charge 0x%02X lsn 0x%02X session 0x%02X", a.tokens[0x0015].typ, a.tokens[0x0013].typ, a.tokens[0x003E].typ)
	}
	if a.order[0] != 0x0000 {
		t.Errorf("PayloadPresent is not the first token: %v", a.order)
	}
}

func readFrame(doc string, tid uint32) []byte {
	return frame(3, 3, [16]byte{byte(tid)}, tokBytes(byteTok(2, 0), str(0x0013, "/r/"), ulong(0x004D, tid),
		str(0x0015, "d"), str(0x0016, "c"), str(0x0017, doc)), nil)
}

// Answers go out as they are ready: a held request does not hold the ones after it,
// and each answer carries its own TransportRequestID.
func TestMultiplexedAnswersOutOfOrder(t *testing.T) {
	release := make(chan struct{})
	addr, cfg := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/slow") {
			<-release
		}
		w.Header().Set("x-ms-request-charge", "1")
		w.Write([]byte(`{}`))
	}))
	c := negotiated(t, addr, cfg)
	c.Write(readFrame("slow", 1))
	c.Write(readFrame("fast", 2))
	first := readAnswer(t, c, false)
	close(release)
	second := readAnswer(t, c, false)
	if first.text(0x0035) != "2" || first.activity[0] != 2 || second.text(0x0035) != "1" || second.activity[0] != 1 {
		t.Fatalf("answers %s then %s, want 2 then 1", first.text(0x0035), second.text(0x0035))
	}
}

// A handler that hijacks and closes (the emulator's "refuse") ends the connection; one
// that never answers (the emulator's "hang") is cancelled when the connection goes.
func TestHijackClosesAndHangIsCancelled(t *testing.T) {
	var mu sync.Mutex
	cancelled := make(chan struct{})
	addr, cfg := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/refuse"):
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			conn.Close()
		case strings.HasSuffix(r.URL.Path, "/hang"):
			<-r.Context().Done()
			mu.Lock()
			close(cancelled)
			mu.Unlock()
		}
	}))
	c := negotiated(t, addr, cfg)
	c.Write(readFrame("hang", 1))
	c.Write(readFrame("refuse", 2))
	_, err := c.Read(make([]byte, 1))
	if err == nil {
		t.Fatal("read an answer; want the connection closed")
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("timed out waiting for the connection to close")
	}
	select {
	case <-cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("the hanging request was not cancelled when its connection closed")
	}
}
