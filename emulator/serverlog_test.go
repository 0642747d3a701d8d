package emulator

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// syncBuffer is a log writer the test reads while servers write to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func startWithOptions(t *testing.T, opts Options) *Server {
	t.Helper()
	cfg := Config{Databases: []DatabaseConfig{{ID: "db", Containers: []ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}
	s, err := Start(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rawCreate writes the head of a signed create with a body of declared bytes, and the
// first part of that body, on a new connection.
func rawCreate(t *testing.T, s *Server, auth string, declared int, part string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.Endpoint(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	date := cosmos.FormatDate(time.Now())
	if auth == "" {
		key, _ := cosmos.NewMasterKey(s.Key())
		auth, _ = key.Authorize("POST", cosmos.TypeDocuments, "dbs/db/colls/items", date)
	}
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: emulator\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s: %s\r\nAuthorization: %s\r\n%s: [\"a\"]\r\n\r\n%s",
		itemsPath(), declared, cosmos.HeaderDate, date, auth, cosmos.HeaderPartitionKey, part)
	return conn
}

// closedWithin reads conn to its end and reports the response status line and how long
// the server took to close the connection; it fails the test past limit.
func closedWithin(t *testing.T, conn net.Conn, limit time.Duration) (status string, took time.Duration) {
	t.Helper()
	start := time.Now()
	_ = conn.SetReadDeadline(start.Add(limit))
	br := bufio.NewReader(conn)
	status, _ = br.ReadString('\n')
	_, err := io.Copy(io.Discard, br)
	took = time.Since(start)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection was still open after %v (status line %q)", limit, status)
	}
	return strings.TrimSpace(status), took
}

func TestStalledBodyIsCutOffWithinTheBodyTimeout(t *testing.T) {
	const bound = 200 * time.Millisecond
	s := startWithOptions(t, Options{BodyTimeout: bound, Log: io.Discard})
	cases := []struct {
		name, auth, status string
	}{
		// The handler reads the body and gives up on it.
		{"a create whose body stalls gets 408 and its connection closed", "", "HTTP/1.1 408 Request Timeout"},
		// The handler answers without reading; net/http then drains the body before
		// reusing the connection, and must not wait for ever either.
		{"an unread stalled body after a 401 does not hold the connection", "type%3Dmaster%26ver%3D1.0%26sig%3Dbad", "HTTP/1.1 401 Unauthorized"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn := rawCreate(t, s, tc.auth, 100, `{"id":`)
			status, took := closedWithin(t, conn, 5*time.Second)
			if status != tc.status {
				t.Errorf("status line %q, want %q", status, tc.status)
			}
			if took > bound+2*time.Second {
				t.Errorf("closed after %v, want about %v", took, bound)
			}
		})
	}
}

func TestBodyTimeoutLeavesCompleteRequestsAndIdleConnectionsAlone(t *testing.T) {
	const bound = 100 * time.Millisecond
	s := startWithOptions(t, Options{BodyTimeout: bound, Log: io.Discard})
	// A delay longer than the bound before the body is read does not count against it.
	if _, err := s.AddFault(faults.Rule{Operations: []string{faults.OpCreate}, Effect: faults.EffectDelay,
		Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(3 * bound)}}); err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, s.Key())
	for i, id := range []string{"1", "2"} {
		if st, _ := code(c.mustDo(s.Endpoint(), "POST", itemsPath(), pkHeader(`["a"]`), `{"id":"`+id+`","pk":"a"}`)); st != 201 {
			t.Fatalf("create %d behind a delay → %d, want 201", i+1, st)
		}
		// The keep-alive connection idles past the bound, and is still good.
		time.Sleep(3 * bound)
	}
	if st, _ := code(c.mustDo(s.Endpoint(), "GET", itemPath("1"), pkHeader(`["a"]`))); st != 200 {
		t.Fatalf("read → %d, want 200", st)
	}
}

func TestHandlerPanicIsLoggedAndFaultResetsAreNot(t *testing.T) {
	var log syncBuffer
	s := startWithOptions(t, Options{Log: &log, testServeHook: func(r *http.Request) {
		if r.URL.Path == "/dbs/db/colls/items/docs/boom" {
			panic("injected bug")
		}
	}})
	c := newTestClient(t, s.Key())
	if _, err := c.do(s.Endpoint(), "GET", itemPath("boom"), pkHeader(`["a"]`), nil); err == nil {
		t.Fatal("a panicking handler answered; want the connection aborted")
	}
	if st, _ := code(c.mustDo(s.Endpoint(), "GET", itemPath("other"), pkHeader(`["a"]`))); st != 404 {
		t.Fatalf("the server stopped serving after a panic: read → %d, want 404", st)
	}
	// Expected resets: a region refusing connections, a client going away mid-request.
	if _, err := s.AddFault(faults.Rule{Region: "West US", Effect: faults.EffectRefuse}); err != nil {
		t.Fatal(err)
	}
	west, _ := s.RegionEndpoint("West US")
	for range 3 {
		if _, err := c.do(west, "GET", itemPath("x"), pkHeader(`["a"]`), nil); err == nil {
			t.Fatal("a refusing region answered")
		}
	}
	conn := rawCreate(t, s, "", 100, `{"id":`)
	reset(conn)

	time.Sleep(100 * time.Millisecond) // let the server see the reset
	got := log.String()
	for _, want := range []string{"cosmosctl emulator: ", "panic serving GET /dbs/db/colls/items/docs/boom: injected bug", "serverlog_test.go"} {
		if !strings.Contains(got, want) {
			t.Errorf("log does not contain %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "panic serving"); n != 1 {
		t.Errorf("log has %d panic reports, want 1:\n%s", n, got)
	}
	if lines := strings.Count(got, "\ncosmosctl emulator: "); lines != 0 {
		t.Errorf("log has more than the panic report:\n%s", got)
	}
}

func TestServerLogIsRateLimitedAndQuietAboutResets(t *testing.T) {
	var out bytes.Buffer
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	l := newServerLog(&out, func() time.Time { return now }).logger()
	l.SetFlags(0)
	l.Printf("http: read tcp 127.0.0.1:1->127.0.0.1:2: read: connection reset by peer")
	l.Printf("write tcp: broken pipe")
	if out.Len() != 0 {
		t.Fatalf("connection resets were logged: %q", out.String())
	}
	for i := range 3 * logBurst {
		l.Printf("failure %d", i)
	}
	if n := strings.Count(out.String(), "failure"); n != logBurst {
		t.Fatalf("a burst of %d messages logged %d, want %d", 3*logBurst, n, logBurst)
	}
	now = now.Add(logEvery)
	l.Printf("later")
	want := fmt.Sprintf("cosmosctl emulator: (%d more messages not shown: at most %d at once, then one every %v)\ncosmosctl emulator: later\n", 2*logBurst, logBurst, logEvery)
	if got := out.String(); !strings.HasSuffix(got, want) {
		t.Fatalf("after the pause the log ends\n%q\nwant\n%q", got[max(0, len(got)-len(want)-20):], want)
	}
}
