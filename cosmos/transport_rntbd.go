package cosmos

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos/rntbdconn"
	"github.com/cosmosctl/cosmosctl/cosmos/rntbdmap"
)

// rntbdInit guards the lazy making of a Transport's RNTBD pool. One lock for every
// Transport: a process has a handful, and holding it is a pointer check.
var rntbdInit sync.Mutex

// rntbdPool returns the transport's RNTBD connections, made on first use.
func (t *Transport) rntbdPool() *rntbdconn.Pool {
	rntbdInit.Lock()
	defer rntbdInit.Unlock()
	if t.rntbd == nil {
		ua := t.UserAgent
		if ua == "" {
			ua = "cosmosctl"
		}
		t.rntbd = rntbdconn.NewPool(rntbdconn.Options{TLSConfig: t.TLSConfig, ClientVersion: APIVersion, UserAgent: ua})
	}
	return t.rntbd
}

// CloseIdleConnections closes the idle connections of the HTTP client and the RNTBD
// connections that carry no request.
func (t *Transport) CloseIdleConnections() {
	if t.HTTP != nil {
		t.HTTP.CloseIdleConnections()
	}
	rntbdInit.Lock()
	p := t.rntbd
	rntbdInit.Unlock()
	if p != nil {
		p.CloseIdle()
	}
}

// connectTimeout is the connect timeout WithConnectTimeout put in ctx, 0 if none.
func connectTimeout(ctx context.Context) time.Duration {
	d, _ := ctx.Value(connectTimeoutKey{}).(time.Duration)
	return d
}

// doRNTBD sends req to a replica over RNTBD: signed as over HTTP, mapped to a frame by
// rntbdmap, carried by rntbdconn, and answered in Do's shapes.
func (t *Transport) doRNTBD(ctx context.Context, endpoint string, req *Request) (*Response, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || u.Port() == "" {
		return nil, fmt.Errorf("replica address %q is not rntbd://host:port/path", endpoint)
	}
	if len(req.Query) > 0 {
		return nil, fmt.Errorf("rntbd: %s %s has query parameters, which an RNTBD frame cannot carry", req.Method, req.Path)
	}
	h, err := t.headers(ctx, req)
	if err != nil {
		return nil, err
	}
	replicaPath := u.EscapedPath()
	if !strings.HasSuffix(replicaPath, "/") {
		replicaPath += "/"
	}
	frame, err := rntbdmap.Request(rntbdmap.RequestInfo{
		Method: req.Method, Path: req.Path, Header: h, Body: req.Body, ReplicaPath: replicaPath,
	}, rntbdmap.Replica)
	if err != nil {
		return nil, err
	}
	resp, err := t.rntbdPool().Do(ctx, u.Host, &frame, connectTimeout(ctx))
	if err != nil {
		sent := false
		var ce *rntbdconn.Error
		if errors.As(err, &ce) {
			sent = ce.Sent
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, &NetworkError{Endpoint: endpoint, Sent: sent, Err: ctxErr}
		}
		return nil, &NetworkError{Endpoint: endpoint, Sent: sent, Err: err}
	}
	status, header, body := rntbdmap.Response(resp)
	if limit := t.MaxResponseBytes; limit > 0 && int64(len(body)) > limit {
		return nil, &NetworkError{Endpoint: endpoint, Sent: true, Err: fmt.Errorf("the answer's body of %d bytes is more than the %d allowed", len(body), limit)}
	}
	return answer(status, header, body, first(h, keyActivityID))
}
