package cosmos

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos/rntbd"
	"github.com/cosmosctl/cosmosctl/cosmos/rntbdmap"
)

// Gateway 2.0 ("thin client"), as the .NET SDK sends it (azure-cosmos-dotnet-v3
// ThinClientStoreClient.PrepareRequestForProxyAsync and ThinClientTransportSerializer,
// at 8c53d3595): the REST request, signed as ever, becomes an RNTBD request frame in
// the proxy's form (no replica path or transport request id; the account name, the
// container's rid and the item's effective partition key instead), and travels as the
// body of an HTTP/2 POST to the proxy's endpoint itself — no resource path; the outer
// headers are the user agent (x-ms-user-agent) and the activity id, which
// PrepareRequestForProxyAsync sets after clearing the rest, and the HTTP client's
// defaults, which it keeps (CosmosHttpClientCore.CreateHttpClient: Cache-Control
// no-cache, x-ms-version, x-ms-cosmos-sdk-supportedcapabilities, Accept JSON; the
// Rust driver also sends x-ms-version: "the proxy requires x-ms-version to dispatch
// the request", gateway_v2_dispatch.rs). The answer's
// body is an RNTBD response frame whose status must be the HTTP status (.NET fails the
// request otherwise); its session token is prefixed with its range id, as over RNTBD.

// HeaderThinClientUserAgent is the user agent header of a Gateway 2.0 POST
// (.NET ThinClientConstants.UserAgent).
const HeaderThinClientUserAgent = "x-ms-user-agent"

var (
	keyThinClientUserAgent = http.CanonicalHeaderKey(HeaderThinClientUserAgent)
	keyCacheControl        = http.CanonicalHeaderKey("cache-control")
	keyAccept              = http.CanonicalHeaderKey("accept")
)

// thinClientHTTP returns the transport's HTTP/2 client for Gateway 2.0 proxies, made
// on first use: HTTP/2 over TLS only (the proxies serve nothing else), with the
// transport's TLS settings and the same connect timeouts as NewHTTPClient's.
func (t *Transport) thinClientHTTP() *http.Client {
	rntbdInit.Lock()
	defer rntbdInit.Unlock()
	if t.thin == nil {
		tr := &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: 10 * time.Second,
		}
		if t.TLSConfig != nil {
			tr.TLSClientConfig = t.TLSConfig.Clone()
		}
		var p http.Protocols
		p.SetHTTP2(true)
		tr.Protocols = &p
		dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if d := connectTimeout(ctx); d > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, d)
				defer cancel()
			}
			return dialer.DialContext(ctx, network, addr)
		}
		t.thin = &http.Client{Transport: tr}
	}
	return t.thin
}

// doThinClient sends req to the Gateway 2.0 proxy at endpoint.
func (t *Transport) doThinClient(ctx context.Context, endpoint string, req *Request) (*Response, error) {
	if !strings.HasPrefix(endpoint, "https://") {
		return nil, fmt.Errorf("the Gateway 2.0 endpoint %q is not https: its proxies serve HTTP/2 over TLS only", endpoint)
	}
	if len(req.Query) > 0 {
		return nil, fmt.Errorf("gateway2: %s %s has query parameters, which an RNTBD frame cannot carry", req.Method, req.Path)
	}
	tc := req.ThinClient
	epk, err := hex.DecodeString(tc.EffectivePartitionKey)
	if err != nil || len(epk) == 0 {
		return nil, fmt.Errorf("gateway2: effective partition key %q is not hex", tc.EffectivePartitionKey)
	}
	h, err := t.headers(ctx, req)
	if err != nil {
		return nil, err
	}
	activity := first(h, keyActivityID)
	frame, err := rntbdmap.Request(rntbdmap.RequestInfo{
		Method: req.Method, Path: req.Path, Header: h, Body: req.Body,
		GlobalDatabaseAccountName: tc.AccountName, CollectionRID: tc.CollectionRID, EffectivePartitionKey: epk,
	}, rntbdmap.Proxy)
	if err != nil {
		return nil, err
	}
	body, err := frame.Encode()
	if err != nil {
		return nil, err
	}
	var sent atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
		if info.Err == nil {
			sent.Store(true)
		}
	}}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("the Gateway 2.0 endpoint %q is not a URL: %v", endpoint, unwrapURLError(err))
	}
	hreq.Header = http.Header{
		keyActivityID:   {activity},
		keyVersion:      {first(h, keyVersion)},
		keyCapabilities: {first(h, keyCapabilities)},
		keyCacheControl: {"no-cache"},
		keyAccept:       {"application/json"},
	}
	if ua := first(h, keyUserAgent); ua != "" {
		hreq.Header[keyThinClientUserAgent] = []string{ua}
		hreq.Header[keyUserAgent] = []string{ua}
	}
	hresp, err := t.thinClientHTTP().Do(hreq)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, &NetworkError{Endpoint: endpoint, Sent: sent.Load(), Err: ctxErr}
		}
		err = unwrapURLError(err)
		var unknown x509.UnknownAuthorityError
		if errors.As(err, &unknown) {
			err = fmt.Errorf("%w (trust the Gateway 2.0 endpoint's certificate: SSL_CERT_FILE naming it; for a cosmosctl emulator, the file its banner names)", err)
		}
		return nil, &NetworkError{Endpoint: endpoint, Sent: sent.Load(), Err: err}
	}
	defer hresp.Body.Close()
	limit := t.MaxResponseBytes
	if limit <= 0 {
		limit = 64 << 20
	}
	data, err := readBody(hresp.Body, hresp.ContentLength, limit, nil)
	if err != nil {
		return nil, &NetworkError{Endpoint: endpoint, Sent: true, Err: err}
	}
	resp, _, err := rntbd.DecodeResponse(data)
	if err != nil {
		// Not a frame: a proxy (or something in front of it) that failed before it
		// could answer in RNTBD. Its HTTP status and a little of its body say what.
		return nil, &NetworkError{Endpoint: endpoint, Sent: true, Err: fmt.Errorf("the Gateway 2.0 answer (HTTP %d) is not an RNTBD frame: %v%s", hresp.StatusCode, err, bodyHint(data))}
	}
	if int(resp.Status) != hresp.StatusCode {
		return nil, &NetworkError{Endpoint: endpoint, Sent: true, Err: fmt.Errorf("the Gateway 2.0 answer's HTTP status %d is not its frame's %d", hresp.StatusCode, resp.Status)}
	}
	status, header, rbody := rntbdmap.Response(resp)
	return answer(status, header, rbody, activity)
}

// bodyHint is the start of a body that is not a frame, for an error message.
func bodyHint(b []byte) string {
	const max = 120
	s := strings.TrimSpace(string(b))
	if s == "" || !isPrintable(s) {
		return ""
	}
	if len(s) > max {
		s = s[:max] + "…"
	}
	return ": " + s
}

func isPrintable(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' {
			return false
		}
	}
	return true
}
