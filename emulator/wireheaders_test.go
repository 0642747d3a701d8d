package emulator

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// rawResponse is a response as it went over the wire: header lines in the order and
// case the server wrote them.
type rawResponse struct {
	status int
	lines  []string
	body   []byte
}

// rawRequest sends one signed HTTP/1.1 request over a fresh connection and reads the
// response without net/http's client, which would canonicalise the header names.
func rawRequest(t *testing.T, s *Server, method, path string, hdr map[string]string, body string) rawResponse {
	t.Helper()
	u, err := url.Parse(s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	key, err := cosmos.NewMasterKey(s.Key())
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, s.Endpoint()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	date := cosmos.FormatDate(time.Now())
	resType, resLink := cosmos.ResourceFromPath(path)
	auth, _ := key.Authorize(method, resType, resLink, date)
	req.Header.Set(cosmos.HeaderDate, date)
	req.Header.Set(cosmos.HeaderAuthorization, auth)
	req.Header.Set(cosmos.HeaderVersion, cosmos.APIVersion)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	tr := textproto.NewReader(bufio.NewReader(conn))
	statusLine, err := tr.ReadLine()
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(statusLine)
	if len(fields) < 2 {
		t.Fatalf("bad status line %q", statusLine)
	}
	resp := rawResponse{}
	resp.status, _ = strconv.Atoi(fields[1])
	length := 0
	for {
		line, err := tr.ReadLine()
		if err != nil {
			t.Fatal(err)
		}
		if line == "" {
			break
		}
		resp.lines = append(resp.lines, line)
		name, value, _ := strings.Cut(line, ":")
		if strings.EqualFold(name, "Content-Length") {
			length, _ = strconv.Atoi(strings.TrimSpace(value))
		}
	}
	resp.body = make([]byte, length)
	if _, err := io.ReadFull(tr.R, resp.body); err != nil {
		t.Fatalf("reading a %d-byte body: %v", length, err)
	}
	return resp
}

func (r rawResponse) names() []string {
	var out []string
	for _, l := range r.lines {
		name, _, _ := strings.Cut(l, ":")
		out = append(out, name)
	}
	return out
}

func TestResponseHeaderNamesAreLowerCaseOnTheWire(t *testing.T) {
	s := startTest(t)
	doc := `{"id":"a","pk":"p","n":1}`
	cases := []struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		body   string
		status int
	}{
		{"a create", http.MethodPost, "/dbs/db/colls/items/docs", pkHeader(`["p"]`), doc, 201},
		{"a read", http.MethodGet, "/dbs/db/colls/items/docs/a", pkHeader(`["p"]`), "", 200},
		{"a write answered with an empty body", http.MethodPost, "/dbs/db/colls/items/docs",
			map[string]string{cosmos.HeaderPartitionKey: `["p"]`, cosmos.HeaderIsUpsert: "true", cosmos.HeaderPrefer: cosmos.PreferMinimal}, doc, 200},
		{"an error", http.MethodGet, "/dbs/db/colls/items/docs/missing", pkHeader(`["p"]`), "", 404},
		{"the pkranges feed", http.MethodGet, "/dbs/db/colls/items/pkranges", nil, "", 200},
		{"the account", http.MethodGet, "/", nil, "", 200},
		{"a query", http.MethodPost, "/dbs/db/colls/items/docs",
			map[string]string{cosmos.HeaderIsQuery: "true", "Content-Type": "application/query+json", cosmos.HeaderEnableCrossPartition: "true", cosmos.HeaderMaxItemCount: "1"},
			`{"query":"SELECT * FROM c"}`, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := rawRequest(t, s, tc.method, tc.path, tc.hdr, tc.body)
			if tc.status != 0 && resp.status != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.status, tc.status, resp.body)
			}
			seen := map[string]int{}
			for _, name := range resp.names() {
				seen[strings.ToLower(name)]++
				// net/http reads the body length from the canonical key only, so
				// Content-Length is the one name left as Go writes it.
				if name != strings.ToLower(name) && name != "Content-Length" {
					t.Errorf("header %q is not lower case (all: %v)", name, resp.names())
				}
			}
			for name, n := range seen {
				if n > 1 {
					t.Errorf("header %q sent %d times", name, n)
				}
			}
			if seen["date"] != 1 {
				t.Errorf("no date header: %v", resp.names())
			}
			if len(resp.body) > 0 && seen["content-type"] != 1 {
				t.Errorf("a body without content-type: %v", resp.names())
			}
			if seen["transfer-encoding"] != 0 {
				t.Errorf("a body sent chunked rather than with its length: %v", resp.names())
			}
			if seen[cosmos.HeaderActivityID] != 1 {
				t.Errorf("no %s: %v", cosmos.HeaderActivityID, resp.names())
			}
		})
	}
}

func TestLowercaseKeysKeepsValuesAndSuppressesCanonicalDuplicates(t *testing.T) {
	h := http.Header{}
	h.Set(cosmos.HeaderSessionToken, "0:-1#3")
	h.Add(cosmos.HeaderContinuation, "a")
	h["x-ms-continuation"] = []string{"b"}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", "12")
	h.Set("Date", "Tue, 01 Dec 2026 00:00:00 GMT")
	lowercaseKeys(h)
	want := map[string][]string{
		"x-ms-session-token": {"0:-1#3"},
		"content-type":       {"application/json"},
		"Content-Length":     {"12"},
		"date":               {"Tue, 01 Dec 2026 00:00:00 GMT"},
		"Date":               nil,
		"Content-Type":       nil,
	}
	for k, v := range want {
		got, ok := h[k]
		if !ok || strings.Join(got, "|") != strings.Join(v, "|") || (v == nil) != (got == nil) {
			t.Errorf("%s = %q (present %v), want %q", k, got, ok, v)
		}
	}
	if got := h["x-ms-continuation"]; len(got) != 2 {
		t.Errorf("x-ms-continuation = %q, want both values", got)
	}
	var buf bytes.Buffer
	_ = h.Write(&buf)
	if strings.Contains(buf.String(), "X-Ms") || strings.Contains(buf.String(), "Date:") {
		t.Errorf("canonical names on the wire:\n%s", buf.String())
	}
}
