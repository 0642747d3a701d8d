package engine

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/cosmos/rntbd"
	"github.com/cosmosctl/cosmosctl/cosmos/rntbdconn/rntbdtest"
	"github.com/cosmosctl/cosmosctl/emulator"
)

// rntbdAddresses is a transport that rewrites the replica addresses the emulator's
// gateway hands out into rntbd:// addresses of a fake RNTBD server (same paths), so that
// the engine's direct mode runs over cosmos.Transport's RNTBD path against real
// metadata. The emulator's own RNTBD replicas replace this once they exist.
type rntbdAddresses struct {
	*cosmos.Transport
	host string
}

func (r rntbdAddresses) Do(ctx context.Context, endpoint string, req *cosmos.Request) (*cosmos.Response, error) {
	resp, err := r.Transport.Do(ctx, endpoint, req)
	if err != nil || req.Path != "//addresses/" {
		return resp, err
	}
	var feed cosmos.AddressFeed
	if err := json.Unmarshal(resp.Body, &feed); err != nil {
		return resp, err
	}
	for i, a := range feed.Addresses {
		u, err := url.Parse(a.PhysicalURI)
		if err != nil {
			return nil, err
		}
		u.Scheme, u.Host = "rntbd", r.host
		feed.Addresses[i].PhysicalURI, feed.Addresses[i].Protocol = u.String(), "rntbd"
	}
	resp.Body, err = json.Marshal(feed)
	return resp, err
}

func TestDirectModeOverRNTBD(t *testing.T) {
	srv, err := emulator.Start(emulator.Config{Databases: []emulator.DatabaseConfig{{ID: "db", Containers: []emulator.ContainerConfig{{ID: "c", PartitionKey: []string{"/pk"}}}}}}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// The first replica asked answers 410 (it moved); every other one serves the item.
	var mu sync.Mutex
	gone, paths := "", []string{}
	replicas := rntbdtest.NewServer(t, func(req rntbd.Request) rntbdtest.Action {
		tok, _ := req.Token(rntbd.ReqReplicaPath)
		path, _ := tok.Str()
		mu.Lock()
		defer mu.Unlock()
		paths = append(paths, path)
		if gone == "" {
			gone = path
		}
		if path == gone {
			r := rntbdtest.OK("")
			r.Status = 410
			return rntbdtest.Action{Resp: r}
		}
		r := rntbdtest.OK(`{"id":"1","pk":"a"}`)
		r.Tokens = append(r.Tokens, rntbd.DoubleToken(rntbd.RespRequestCharge, 1),
			rntbd.StringToken(rntbd.RespPartitionKeyRangeID, rntbd.TypeString, "0"),
			rntbd.StringToken(rntbd.RespSessionToken, rntbd.TypeString, "-1#3"))
		return rntbdtest.Action{Resp: r}
	})
	cred, _ := cosmos.NewMasterKey(srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred, TLSConfig: replicas.ClientTLS()}
	defer tr.CloseIdleConnections()
	c, err := New(Options{Endpoint: srv.Endpoint(), Transport: rntbdAddresses{tr, replicas.Addr()}, Direct: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	res, err := c.Execute(context.Background(), directRead())
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || string(res.Body) != `{"id":"1","pk":"a"}` || res.SessionToken != "0:-1#3" {
		t.Fatalf("result %d %q session %q", res.StatusCode, res.Body, res.SessionToken)
	}
	at := res.Diagnostics.Attempts
	if len(at) != 2 || at[0].StatusCode != 410 || at[1].StatusCode != 200 {
		t.Fatalf("attempts %+v, want a 410 from the moved replica then a 200 from another", at)
	}
	for _, a := range at {
		if a.Transport != "rntbd" || !strings.HasPrefix(a.Endpoint, "rntbd://"+replicas.Addr()+"/") || a.ReplicaRole == "" {
			t.Errorf("attempt %d: transport %q endpoint %q role %q", a.N, a.Transport, a.Endpoint, a.ReplicaRole)
		}
	}
	if at[0].Replica == at[1].Replica || !strings.Contains(at[0].Note, "marked unhealthy") {
		t.Errorf("the retry went to %s after %s (%q)", at[1].Replica, at[0].Replica, at[0].Note)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") || !strings.HasSuffix(p, "/") || !strings.Contains(p, "/replicas/") {
			t.Errorf("ReplicaPath %q, want the replica URI's path with its trailing '/'", p)
		}
	}
}
