package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// startTest starts an emulator on free loopback ports with a default database "db" and
// container "items" partitioned by /pk, and stops it when the test ends.
func startTest(t testing.TB, mutate ...func(*Config)) *Server {
	t.Helper()
	cfg := Config{Databases: []DatabaseConfig{{ID: "db", Containers: []ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}}}
	for _, m := range mutate {
		m(&cfg)
	}
	s, err := Start(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// testClient sends signed requests with the emulator key.
type testClient struct {
	t  testing.TB
	tr *cosmos.Transport
}

func newTestClient(t testing.TB, key string) *testClient {
	cred, err := cosmos.NewMasterKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &testClient{t: t, tr: &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}}
}

// do sends a request and returns the response (also for error statuses).
func (c *testClient) do(endpoint, method, path string, hdr map[string]string, body any) (*cosmos.Response, error) {
	c.t.Helper()
	req := &cosmos.Request{Method: method, Path: path, Header: http.Header{}}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	switch b := body.(type) {
	case nil:
	case []byte:
		req.Body = b
	case string:
		req.Body = []byte(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		req.Body = data
	}
	resp, err := c.tr.Do(context.Background(), endpoint, req)
	if resp == nil && err != nil {
		return nil, err
	}
	return resp, err
}

func pkHeader(v string) map[string]string {
	return map[string]string{cosmos.HeaderPartitionKey: v}
}

func statusOf(t testing.TB, resp *cosmos.Response, err error) (int, int) {
	t.Helper()
	if resp == nil {
		t.Fatalf("no response: %v", err)
	}
	return resp.StatusCode, resp.SubStatus
}

func timeNow() time.Time { return time.Now() }

func httpCanonical(k string) string { return http.CanonicalHeaderKey(k) }
