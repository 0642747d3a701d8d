package cosmos

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos/rntbdconn"
	"github.com/google/uuid"
)

// Request is one gateway request, before signing.
type Request struct {
	Method string
	// Path is the escaped URL path ("/dbs/d/colls/c/docs/id"); the resource type and
	// link it is signed with are derived from it unless ResourceType is set (the
	// //addresses/ call is signed for the collection's documents, not for its own path).
	Path         string
	Query        url.Values
	ResourceType string
	ResourceLink string
	Header       http.Header
	Body         []byte
	// BodyBuffers, when set, lends the buffer the response's body is read into (see
	// BodyBuffers): the caller gives it back once done with the body.
	BodyBuffers *BodyBuffers
	// ThinClient, when set, sends the request to a Gateway 2.0 proxy: the endpoint is
	// the proxy's, and the request travels as an RNTBD frame in an HTTP/2 POST.
	ThinClient *ThinClient
}

// ThinClient is what a Gateway 2.0 proxy needs beyond the REST request to route a
// point operation (.NET ThinClientTransportSerializer.SerializeProxyRequestAsync): the
// account (the GlobalDatabaseAccountName token, the account document's id), the
// container's resource id, and the item's effective partition key (hex, as
// EffectivePartitionKey gives it; sent as its bytes).
type ThinClient struct {
	AccountName           string
	CollectionRID         string
	EffectivePartitionKey string
}

// BodyBuffers lends the buffers response bodies are read into, to a caller that reads
// many large bodies one after the other and is done with each before long (a query read
// page by page, each page written out before the next is asked for): a fresh buffer for
// every 1,000-item page was most of such a run's allocations, and its garbage
// collections with them. A body read into a lent buffer is the caller's until it gives
// the buffer back with Put; after that, neither the body nor any slice of it may be
// read again. A buffer not given back is collected as any other. Safe for concurrent
// use.
//
// It keeps up to maxFreeBodyBuffers buffers given back (a sync.Pool lost them at every
// garbage collection, which a run of large pages has every few pages), and makes new
// ones an eighth larger than asked for, so that the next page, a few bytes longer than
// the last, still fits the buffer the last one gave back.
type BodyBuffers struct {
	mu   sync.Mutex
	free [][]byte
}

// maxFreeBodyBuffers bounds what a BodyBuffers keeps: more than the pages a query or a
// change feed reads at once by default (cosmosctl's parallelism, plus a page ahead).
const maxFreeBodyBuffers = 16

// get lends a buffer of at least n bytes' capacity, empty.
func (b *BodyBuffers) get(n int) []byte {
	b.mu.Lock()
	for i := len(b.free) - 1; i >= 0; i-- {
		if buf := b.free[i]; cap(buf) >= n {
			last := len(b.free) - 1
			b.free[i], b.free[last] = b.free[last], nil
			b.free = b.free[:last]
			b.mu.Unlock()
			return buf
		}
	}
	b.mu.Unlock()
	return make([]byte, 0, n+n/8)
}

// Put gives back a body read with this BodyBuffers; the caller must not read it or any
// slice of it afterwards. The buffer is zeroed as it is given back, so that a slice read
// after its time holds NUL bytes, which no JSON has outside a string and none inside
// one, rather than another page's items, plausible and wrong (a test finds the one; the
// other is silent).
func (b *BodyBuffers) Put(body []byte) {
	if cap(body) == 0 {
		return
	}
	body = body[:cap(body)]
	clear(body)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.free) < maxFreeBodyBuffers {
		b.free = append(b.free, body[:0])
		return
	}
	// Full: the smallest goes, the collector takes it.
	small := 0
	for i, f := range b.free {
		if cap(f) < cap(b.free[small]) {
			small = i
		}
	}
	if cap(b.free[small]) < cap(body) {
		b.free[small] = body[:0]
	}
}

// Response is a gateway response with the headers every caller reads already parsed.
type Response struct {
	StatusCode    int
	SubStatus     int
	Header        http.Header
	Body          []byte
	RequestCharge float64
	ActivityID    string
	SessionToken  string
	ETag          string
	// Region is set by cosmosctl's emulator to name the region that served the
	// request; real accounts leave it empty.
	Region string
	// ServerDuration is the service's own time for the request
	// (x-ms-request-duration-ms), 0 when the response does not say.
	ServerDuration time.Duration
}

// NetworkError is a request that got no HTTP response. Sent says whether the request
// had been written to the connection: a write that was not sent can always be retried,
// one that was sent may have been applied.
type NetworkError struct {
	Endpoint string
	Sent     bool
	Err      error
}

func (e *NetworkError) Error() string {
	when := "before the request was sent"
	if e.Sent {
		when = "after the request was sent"
	}
	return fmt.Sprintf("%s: %v (%s)", e.Endpoint, e.Err, when)
}

func (e *NetworkError) Unwrap() error { return e.Err }

// The canonical keys of the headers Transport.Do sets on every request.
var (
	keyDate          = http.CanonicalHeaderKey(HeaderDate)
	keyVersion       = http.CanonicalHeaderKey(HeaderVersion)
	keyCapabilities  = http.CanonicalHeaderKey(HeaderSDKSupportedCapabilities)
	keyActivityID    = http.CanonicalHeaderKey(HeaderActivityID)
	keyAuthorization = http.CanonicalHeaderKey(HeaderAuthorization)
	keyUserAgent     = http.CanonicalHeaderKey("User-Agent")
	keyContentType   = http.CanonicalHeaderKey("Content-Type")

	// and of the headers it reads from every answer.
	keyRequestCharge   = http.CanonicalHeaderKey(HeaderRequestCharge)
	keySessionToken    = http.CanonicalHeaderKey(HeaderSessionToken)
	keyETag            = http.CanonicalHeaderKey(HeaderETag)
	keyServedRegion    = http.CanonicalHeaderKey(HeaderServedRegion)
	keyRequestDuration = http.CanonicalHeaderKey(HeaderRequestDuration)
	keySubStatus       = http.CanonicalHeaderKey(HeaderSubStatus)
	keyRangeID         = http.CanonicalHeaderKey(HeaderPartitionKeyRangeID)
	keyPhysicalID      = http.CanonicalHeaderKey(HeaderPhysicalPartitionID)
	keyLSN             = http.CanonicalHeaderKey(HeaderLSN)
	keyRetryAfter      = http.CanonicalHeaderKey(HeaderRetryAfterMs)
)

// Placement is where the service says it served a request, and what it asked of the
// client: each field is what the answer carried, zero (LSN -1) when it did not say.
type Placement struct {
	// PartitionKeyRangeID is the range that answered (x-ms-documentdb-partitionkeyrangeid,
	// else the range prefix of the session token, "<range>:<version>#<lsn>").
	PartitionKeyRangeID string
	// PhysicalPartitionID is the physical partition (x-ms-cosmos-physical-partition-id),
	// which live gateways send and the emulator does not.
	PhysicalPartitionID string
	// LSN is the partition's log sequence number after the request (lsn), -1 unknown.
	LSN int64
	// RetryAfter is the wait a 429 asked for (x-ms-retry-after-ms).
	RetryAfter time.Duration
}

// Placement reads the answer's placement headers.
func (r *Response) Placement() Placement {
	p := Placement{LSN: -1}
	if r == nil {
		return p
	}
	h := r.Header
	p.PartitionKeyRangeID = first(h, keyRangeID)
	if p.PartitionKeyRangeID == "" {
		if i := strings.IndexByte(r.SessionToken, ':'); i > 0 {
			p.PartitionKeyRangeID = r.SessionToken[:i]
		}
	}
	p.PhysicalPartitionID = first(h, keyPhysicalID)
	if v := first(h, keyLSN); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			p.LSN = n
		}
	}
	if v := first(h, keyRetryAfter); v != "" {
		if ms := parseFloat(v); ms > 0 {
			p.RetryAfter = time.Duration(ms * float64(time.Millisecond))
		}
	}
	return p
}

// first is h.Get(key) for a key already canonical.
func first(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Transport sends one signed request to one endpoint. It neither retries nor follows
// regions: the engine decides that, attempt by attempt.
type Transport struct {
	HTTP       *http.Client
	Credential Credential
	UserAgent  string
	// Now is the clock for x-ms-date; nil means time.Now.
	Now func() time.Time
	// MaxResponseBytes bounds how much of a body is read (default 64 MiB).
	MaxResponseBytes int64
	// TLSConfig is used for RNTBD connections (rntbd:// endpoints): its RootCAs, and
	// client certificates if any; nil means the system roots. The server name is always
	// the replica's host.
	TLSConfig *tls.Config

	// rntbd holds the RNTBD connections, made on first use (rntbdPool).
	rntbd *rntbdconn.Pool
	// thin is the HTTP/2 client of Gateway 2.0 requests, made on first use
	// (thinClientHTTP).
	thin *http.Client
}

// NewHTTPClient returns an HTTP client tuned for many parallel requests to a handful of
// regional endpoints: enough idle connections per host that hedged and probing traffic
// reuses connections instead of opening new ones, and no overall timeout (the engine's
// end-to-end timeout and per-attempt contexts bound every request).
func NewHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 512
	tr.MaxIdleConnsPerHost = 128
	tr.IdleConnTimeout = 90 * time.Second
	tr.ResponseHeaderTimeout = 0
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		// The engine bounds connecting separately from waiting for the answer: a region
		// that does not accept connections is given up on in a second, one that accepted
		// the request is given the response timeout.
		if d, ok := ctx.Value(connectTimeoutKey{}).(time.Duration); ok && d > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
		return dialer.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr}
}

type connectTimeoutKey struct{}

// WithConnectTimeout bounds how long a request sent with ctx through an HTTP client from
// NewHTTPClient may wait for a new connection; a pooled connection is used at once. The
// value travels to the dialer, which net/http runs with the request's values.
func WithConnectTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, connectTimeoutKey{}, d)
}

// Do signs req and sends it to endpoint (scheme://host:port). A response with status 400
// or more is returned together with an *Error built from it; a request that got no
// response returns a *NetworkError (or the context's error when ctx ended first).
//
// An rntbd:// endpoint is a replica address (rntbd://host:port/apps/…/replicas/…p, as
// the addresses feed lists it, with or without its trailing '/'): the request, with the
// same headers and signature as over HTTP, goes as an RNTBD frame over the transport's
// TLS connections to that host:port, and its answer comes back in the same shapes.
func (t *Transport) Do(ctx context.Context, endpoint string, req *Request) (*Response, error) {
	if strings.HasPrefix(endpoint, "rntbd://") {
		return t.doRNTBD(ctx, endpoint, req)
	}
	if req.ThinClient != nil {
		return t.doThinClient(ctx, endpoint, req)
	}
	target := strings.TrimRight(endpoint, "/") + req.Path
	if len(req.Query) > 0 {
		target += "?" + req.Query.Encode()
	}
	var sent atomic.Bool
	// Sent once the whole request was written; a write that failed part way (the
	// connection reset under it) never reached a server that could act on it.
	trace := &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
		if info.Err == nil {
			sent.Store(true)
		}
	}}
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), req.Method, target, body)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return nil, fmt.Errorf("endpoint %q is not a URL: %v", endpoint, ue.Err)
		}
		return nil, err
	}
	h, err := t.headers(ctx, req)
	if err != nil {
		return nil, err
	}
	hreq.Header = h

	client := t.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	hresp, err := client.Do(hreq)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, &NetworkError{Endpoint: endpoint, Sent: sent.Load(), Err: ctxErr}
		}
		return nil, &NetworkError{Endpoint: endpoint, Sent: sent.Load(), Err: unwrapURLError(err)}
	}
	defer hresp.Body.Close()
	limit := t.MaxResponseBytes
	if limit <= 0 {
		limit = 64 << 20
	}
	data, err := readBody(hresp.Body, hresp.ContentLength, limit, req.BodyBuffers)
	if err != nil {
		// The status line arrived but the body did not: the request was certainly sent.
		return nil, &NetworkError{Endpoint: endpoint, Sent: true, Err: err}
	}
	resp, err := answer(hresp.StatusCode, hresp.Header, data, first(hreq.Header, keyActivityID))
	if err != nil && resp.StatusCode == http.StatusBadRequest && hreq.URL.Scheme == "http" && bytes.Contains(resp.Body, []byte("HTTP request to an HTTPS server")) {
		// Go's TLS servers (cosmosctl emulator --tls among them) answer plain http
		// with this 400 and no Cosmos error body: say what to change.
		err.(*Error).Message = fmt.Sprintf("%s serves https, not http: use https://%s", endpoint, hreq.URL.Host)
	}
	return resp, err
}

// headers is the signed header set of req: the caller's headers and those every request
// carries (date, version, capabilities, activity id, user agent, content type,
// authorization), the same for HTTP and RNTBD.
func (t *Transport) headers(ctx context.Context, req *Request) (http.Header, error) {
	resType, resLink := req.ResourceType, req.ResourceLink
	if resType == "" && resLink == "" {
		resType, resLink = ResourceFromPath(req.Path)
	}
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	date := FormatDate(now())
	// Room for the caller's headers and the nine or so set here at once, rather than
	// a map grown twice on the way.
	h := make(http.Header, len(req.Header)+10)
	for k, vs := range req.Header {
		h[k] = vs
	}
	// The headers every request carries are set by their canonical keys, worked out
	// once (Header.Set and Get canonicalize the key at every call).
	h[keyDate] = []string{date}
	if vs := h[keyVersion]; len(vs) == 0 || vs[0] == "" {
		h[keyVersion] = []string{APIVersion}
	}
	// Every request declares that cosmosctl handles partition merges (its query pipeline
	// and change feed follow a merged range's keys into the merged range), as the SDKs
	// with merge support do; an account with merges enabled refuses requests without it.
	// A caller may set its own value (tests of an account's refusal send none or "0").
	if _, set := h[keyCapabilities]; !set {
		h[keyCapabilities] = []string{SupportedCapabilities}
	}
	if vs := h[keyActivityID]; len(vs) == 0 || vs[0] == "" {
		h[keyActivityID] = []string{uuid.NewString()}
	}
	if t.UserAgent != "" {
		h[keyUserAgent] = []string{t.UserAgent}
	}
	if req.Body != nil {
		if vs := h[keyContentType]; len(vs) == 0 || vs[0] == "" {
			h[keyContentType] = []string{"application/json"}
		}
	}
	if t.Credential != nil {
		var auth string
		var err error
		if cc, ok := t.Credential.(ContextCredential); ok {
			// It may wait (for an Azure AD token): within this request's context.
			auth, err = cc.AuthorizeContext(ctx, req.Method, resType, resLink, date)
		} else {
			auth, err = t.Credential.Authorize(req.Method, resType, resLink, date)
		}
		if err != nil {
			return nil, fmt.Errorf("signing the request: %w", err)
		}
		h[keyAuthorization] = []string{auth}
	}
	return h, nil
}

// answer builds the Response (and, from status 400, the *Error) of an answer's status,
// headers and body, whichever transport carried it. sentActivity is the request's
// activity id, for an answer that does not echo one.
func answer(status int, header http.Header, data []byte, sentActivity string) (*Response, error) {
	resp := &Response{
		StatusCode:    status,
		Header:        header,
		Body:          data,
		RequestCharge: parseFloat(first(header, keyRequestCharge)),
		ActivityID:    first(header, keyActivityID),
		SessionToken:  first(header, keySessionToken),
		ETag:          first(header, keyETag),
		Region:        first(header, keyServedRegion),
	}
	if v := first(header, keyRequestDuration); v != "" { // (a parse error allocates)
		resp.ServerDuration = ParseRequestDuration(v)
	}
	if v := first(header, keySubStatus); v != "" {
		resp.SubStatus, _ = strconv.Atoi(v)
	}
	if resp.ActivityID == "" {
		resp.ActivityID = sentActivity
	}
	if resp.StatusCode >= 400 {
		e := ErrorFromResponse(resp.StatusCode, resp.Header, resp.Body)
		if e.ActivityID == "" {
			e.ActivityID = resp.ActivityID
		}
		return resp, e
	}
	return resp, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// ParseRequestDuration reads x-ms-request-duration-ms (decimal milliseconds, "0.408");
// 0 when it is absent or not a non-negative number.
func ParseRequestDuration(v string) time.Duration {
	ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || ms < 0 || math.IsInf(ms, 0) || math.IsNaN(ms) {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// readBody reads a response body of at most limit bytes. It sizes its buffer from the
// Content-Length when there is one, and otherwise doubles it from 4 KiB: io.ReadAll's
// small steps copied a 1,000-item page some twenty times. A large body that left more
// than a quarter of its buffer unused is copied into one of its size: the body is kept
// as long as the items sliced from it, and a page's memory is what a page holds.
// With lend set, a body of known length is read into a buffer lent by it (and left as
// it is: the buffer goes back to lend, not to the collector).
func readBody(body io.Reader, contentLength, limit int64, lend *BodyBuffers) ([]byte, error) {
	size := int64(4 << 10)
	if contentLength >= 0 {
		size = contentLength + 1 // room to see the end without growing
	}
	var buf []byte
	lent := lend != nil && contentLength >= 0 && contentLength < limit
	if lent {
		buf = lend.get(int(size))
	} else {
		buf = make([]byte, 0, min(size, limit+1))
	}
	r := io.LimitReader(body, limit)
	for {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), 2*cap(buf))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if !lent && len(buf) > 64<<10 && cap(buf)-len(buf) > len(buf)/4 {
				buf = append([]byte(nil), buf...)
			}
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
