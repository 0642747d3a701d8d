package emulator

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// handler serves one endpoint. The global endpoint answers as the current write region
// (as a real account's global DNS name resolves to it) and also serves the control API.
type handler struct {
	s  *Server
	ep *endpoint
}

// request is one parsed incoming request.
type request struct {
	r          *http.Request
	w          http.ResponseWriter
	region     int
	regionName string
	activityID string
	op         string
	segs       []string
	// resPath is the resource path: the URL path without a replica address prefix.
	resPath string
	// addr is the replica address prefix of the URL, nil for the regional endpoint;
	// replica is the replica it names, once resolved.
	addr    *replicaAddr
	replica *replica
	// dropResponse: apply the write, then drop the connection without answering.
	dropResponse bool
	// bodyRead: readBody has run, so the body is bounded or consumed.
	bodyRead bool
	// budget is the RU budget the request draws on (nil: not throttled), and metered
	// says its charge has been admitted or refused (throughput.go).
	budget  *rangeBudget
	metered bool
	// start is when the emulator began serving the request, for x-ms-request-duration-ms:
	// its arrival, moved past any injected delay (which models the network, not the
	// server).
	start time.Time
}

// maxRequestBytes bounds a request body: a 2 MB document plus room for the envelope.
const maxRequestBytes = MaxDocumentBytes + 64*1024

// DefaultBodyTimeout is how long a request body may take to arrive: a 2 MB document
// over a slow link (under 100 KB/s) still makes it, a stalled client does not hold its
// connection and goroutine for ever.
const DefaultBodyTimeout = 30 * time.Second

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer h.s.recoverPanic(r.Method, r.URL.EscapedPath())
	if h.s.testServeHook != nil {
		h.s.testServeHook(r)
	}
	req := &request{r: r, w: w, region: h.ep.region, activityID: r.Header.Get(cosmos.HeaderActivityID), start: time.Now()}
	defer h.s.boundUnreadBody(req)
	if req.activityID == "" {
		req.activityID = uuid.NewString()
	}
	if req.region < 0 {
		req.region = int(h.s.writeIdx.Load())
	}
	req.regionName = h.s.regions[req.region].name
	// A request to a replica address is direct mode, and the control API is the
	// emulator's own: their paths are decoded once, segment by segment. Any other
	// reaches the gateway, which reads the path its own way (gatewaypath.go) and may
	// refuse the URL before anything else sees it.
	req.resPath = r.URL.EscapedPath()
	if addr, rest, ok := splitReplicaAddress(req.resPath); ok {
		if r.Context().Value(viaRNTBD{}) == nil {
			h.s.replicaHTTP.Add(1)
		}
		req.addr, req.resPath = addr, rest
		req.segs = cosmos.PathSegments(req.resPath)
	} else if segs := cosmos.PathSegments(req.resPath); len(segs) > 0 && segs[0] == cosmos.TypeEmulator {
		req.segs = segs
	} else if segs, ok := gatewaySegments(req.resPath); ok {
		req.segs = segs
	} else {
		refuseInvalidURL(w)
		return
	}
	// "//addresses/" arrives with an empty first segment that PathSegments drops.
	req.op = classify(r, req.segs)

	if req.op == opHello && req.addr == nil {
		// Before the key check: hello is how a client without the key learns what
		// this endpoint is.
		h.s.serveHello(req, h.authError(req) == nil)
		return
	}
	if req.op == opCertificate && req.addr == nil {
		// No key, as Microsoft's emulator: a client fetches the certificate to trust
		// before it has anything to sign with over a connection it can verify.
		h.s.serveCertificate(req)
		return
	}
	if !h.authorized(req) {
		return
	}
	if req.addr != nil && !h.s.attachReplica(req, h.ep.region) {
		return
	}
	if len(req.segs) > 0 && req.segs[0] == cosmos.TypeEmulator {
		if !h.ep.global {
			h.s.writeError(req, cosmosErr(404, 0, "the control API is served on the global endpoint only"), 0)
			return
		}
		h.s.serveControl(req)
		return
	}
	if req.op == "" {
		h.s.writeError(req, notFound("no such resource: "+r.URL.Path+" (the emulator serves /dbs/{db}/colls/{coll}/docs/{id}, pkranges and the account at /)"), 0)
		return
	}
	if !h.s.mergeCapable(req) || !h.s.consistencyAllowed(req) {
		return
	}
	if !h.injectFaults(req) {
		return
	}
	h.s.applyDueReshapes()
	h.s.dispatch(req)
	h.s.applyDueReshapes()
}

// classify names the operation for latency and fault matching; "" is an unknown path.
func classify(r *http.Request, segs []string) string {
	n := len(segs)
	switch {
	case n == 0:
		if r.Method == http.MethodGet {
			return faults.OpAccount
		}
		return ""
	case segs[0] == cosmos.TypeEmulator && n == 2 && segs[1] == helloSegment && r.Method == http.MethodGet:
		return opHello
	case segs[0] == cosmos.TypeEmulator:
		return "control"
	case r.Method == http.MethodGet && "/"+strings.Join(segs, "/") == CertificatePath:
		return opCertificate
	case segs[0] == cosmos.TypeAddresses && n == 1:
		return faults.OpAddresses
	case segs[0] == "offers" && n <= 2:
		return faults.OpMetadata
	case segs[0] != cosmos.TypeDatabases:
		return ""
	case n >= 3 && (segs[2] == cosmos.TypeUsers || n >= 5 && segs[2] == cosmos.TypeContainers && (segs[4] == "sprocs" || segs[4] == "udfs" || segs[4] == "triggers")):
		return faults.OpMetadata // answered with 400: not supported by the emulator
	case n <= 4 && (n < 3 || segs[2] == cosmos.TypeContainers):
		return faults.OpMetadata
	case n == 5 && segs[2] == cosmos.TypeContainers && segs[4] == cosmos.TypePKRanges:
		return faults.OpPKRanges
	case n == 5 && segs[2] == cosmos.TypeContainers && segs[4] == cosmos.TypeDocuments:
		switch {
		case r.Method == http.MethodGet:
			return faults.OpQuery
		case r.Method != http.MethodPost:
			return ""
		case isQuery(r):
			return faults.OpQuery
		case strings.EqualFold(r.Header.Get(cosmos.HeaderIsUpsert), "true"):
			return faults.OpUpsert
		default:
			return faults.OpCreate
		}
	case isPartitionKeyDelete(segs):
		if r.Method == http.MethodPost {
			// A write: write faults (a hung write region) apply to it as to a delete.
			return faults.OpDelete
		}
		return ""
	case n == 6 && segs[2] == cosmos.TypeContainers && segs[4] == cosmos.TypeDocuments:
		switch r.Method {
		case http.MethodGet:
			return faults.OpRead
		case http.MethodPut:
			return faults.OpReplace
		case http.MethodPatch:
			return faults.OpPatch
		case http.MethodDelete:
			return faults.OpDelete
		}
	}
	return ""
}

func isQuery(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get(cosmos.HeaderIsQuery), "true") ||
		strings.EqualFold(r.Header.Get(cosmos.HeaderQuery), "true") ||
		strings.HasPrefix(r.Header.Get("Content-Type"), "application/query+json")
}

// authorized checks the master-key signature over the verb, the resource type and link
// derived from the path, and x-ms-date, or an Azure AD token against the configured test
// token. A missing or wrong signature or token, or an x-ms-date more than 15 minutes
// from the server clock, is a 401.
func (h *handler) authorized(req *request) bool {
	if e := h.authError(req); e != nil {
		h.s.writeError(req, e, 0)
		return false
	}
	return true
}

// authError is why req is not authorized (a 401), or nil when it is.
func (h *handler) authError(req *request) *cosmos.Error {
	r := req.r
	tok, err := cosmos.ParseAuthorization(r.Header.Get(cosmos.HeaderAuthorization))
	if err != nil {
		return cosmosErr(401, 0, "the authorization header is invalid: "+err.Error())
	}
	if tok.Type == "aad" {
		return h.aadAuthError(tok)
	}
	if tok.Type != "master" {
		return cosmosErr(401, 0, "the emulator accepts master-key signatures (type=master) and its configured Azure AD test token (type=aad), not type="+tok.Type)
	}
	date := r.Header.Get(cosmos.HeaderDate)
	if date == "" {
		date = r.Header.Get("Date")
	}
	if date == "" {
		return cosmosErr(401, 0, "the request has no x-ms-date header, which the signature covers")
	}
	if msg := h.s.dateProblem(date); msg != "" {
		return cosmosErr(401, 0, msg)
	}
	// What the signature must cover is derived from the segments the request addresses
	// (for a replica address, those after the address): a client that signed another
	// link, such as an id the gateway reads differently, gets 401.
	resType, resLink := cosmos.ResourceFromSegments(req.segs)
	links := []string{resLink}
	if req.op == faults.OpAddresses {
		// The addresses call is signed for the documents of the collection it resolves,
		// with the collection's link or (the SDKs, rid-based) its _rid.
		resType, links = cosmos.TypeDocuments, addressesLinks(r)
	}
	if len(req.segs) == 2 && req.segs[0] == "offers" {
		// Offers are rid-based: the SDKs sign the offer id alone, in lower case.
		links = append(links, strings.ToLower(req.segs[1]), req.segs[1])
	}
	types := []string{resType}
	if isPartitionKeyDelete(req.segs) && req.addr == nil {
		var link string
		types, link = partitionKeyDeleteSignatures(req.segs)
		links, resType = []string{link}, types[0]
	}
	for _, t := range types {
		for _, l := range links {
			if h.s.key.Verify(tok.Signature, r.Method, t, l, date) {
				return nil
			}
		}
	}
	// The service's words, with the payload it signed: a client compares it with its
	// own to see which part differs (Azure/azure-cosmos-dotnet-v3#3507 shows one).
	payload := strings.ToLower(r.Method) + "\n" + strings.ToLower(resType) + "\n" + links[0] + "\n" + strings.ToLower(date) + "\n\n"
	return cosmosErr(401, 0, "The input authorization token can't serve the request. The wrong key is being used or the expected payload is not built as per the protocol (the signature covers verb, resource type, resource link and x-ms-date). Server used the following payload to sign: '"+payload+"'")
}

// maxDateSkew is how far x-ms-date may be from the server's clock, either way, as the
// service allows: without a bound, a captured signature could be replayed for ever.
const maxDateSkew = 15 * time.Minute

// dateLayouts are the forms of x-ms-date clients send: RFC 1123 in GMT (every official
// SDK), with the other HTTP date forms and an unpadded day accepted too.
var dateLayouts = []string{http.TimeFormat, time.RFC1123, time.RFC1123Z, "Mon, 2 Jan 2006 15:04:05 GMT", time.RFC850, time.ANSIC}

// dateProblem explains why a signed request's date is not acceptable now, or is "".
func (s *Server) dateProblem(date string) string {
	var at time.Time
	var err error
	for _, layout := range dateLayouts {
		if at, err = time.Parse(layout, date); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Sprintf("the x-ms-date header %q is not an RFC 1123 date such as %q", truncateString(date, 40), cosmos.FormatDate(s.clock.Now()))
	}
	now := s.clock.Now()
	skew := now.Sub(at)
	if skew <= maxDateSkew && skew >= -maxDateSkew {
		return ""
	}
	dir := "behind"
	if skew < 0 {
		dir, skew = "ahead of", -skew
	}
	return fmt.Sprintf("the authorization token is not valid at the current time: x-ms-date %s is %v %s the emulator's clock (%s), and at most %v either way is accepted, as the service does; sign each request with the current time and check the client's clock",
		cosmos.FormatDate(at), skew.Round(time.Second), dir, cosmos.FormatDate(now), maxDateSkew)
}

func truncateString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// aadAuthError accepts an Azure AD token equal to the configured test token, or, with
// aad_emulator_tokens, one made as Microsoft's emulator takes them (aadtoken.go). The
// comparisons are in constant time, and no message quotes a token.
func (h *handler) aadAuthError(tok cosmos.AuthToken) *cosmos.Error {
	want := h.s.cfg.AADToken
	if want != "" && subtle.ConstantTimeCompare([]byte(tok.Signature), []byte(want)) == 1 {
		return nil
	}
	if h.s.cfg.AADEmulatorTokens {
		why := emulatorTokenError(tok.Signature, h.s.cfg.Key, h.s.clock.Now())
		if why == "" {
			return nil
		}
		if want == "" {
			return cosmosErr(401, 0, "the input authorization token can't serve the request: the Azure AD token is not one Microsoft's emulator would accept: "+why)
		}
		return cosmosErr(401, 0, "the input authorization token can't serve the request: the Azure AD token is neither the one the emulator was started with (--aad-token-file) nor one Microsoft's emulator would accept ("+why+")")
	}
	if want == "" {
		return cosmosErr(401, 0, "the emulator has no Azure AD token configured, so it refuses type=aad requests: start it with --aad-token-file FILE (or aad_token in the scenario), or aad_emulator_tokens = true in the scenario to take tokens made as for Microsoft's emulator, or sign requests with the key")
	}
	return cosmosErr(401, 0, "the input authorization token can't serve the request: the Azure AD token is not the one the emulator was started with (--aad-token-file)")
}

func addressesLink(r *http.Request) string {
	v := r.URL.Query().Get("$resolveFor")
	v = strings.Trim(v, "/")
	return strings.TrimSuffix(strings.TrimSuffix(v, "/docs"), "/")
}

// injectFaults applies the latency model and the fault rules to a request. It returns
// false when a fault has already answered (or refused to answer) the request.
func (h *handler) injectFaults(req *request) bool {
	replicaName := ""
	if req.replica != nil {
		replicaName = req.replica.name()
	}
	d := h.s.faults.Decide(req.regionName, req.op, replicaName)
	if d.Refuse {
		h.s.drop(req)
		return false
	}
	if d.Delay > 0 {
		if !h.s.wait(req.r.Context(), d.Delay) {
			h.s.abortIfClosing()
			return false
		}
		// The latency model and delay faults stand for the network between client and
		// region: the service's x-ms-request-duration-ms does not count them.
		req.start = time.Now()
	}
	switch {
	case d.Hang:
		select {
		case <-req.r.Context().Done():
		case <-h.s.closing:
		}
		h.s.abortIfClosing()
		return false
	case d.Status != 0:
		where := "in region " + req.regionName
		if replicaName != "" {
			where += " on replica " + replicaName
		}
		e := cosmosErr(d.Status, d.SubStatus, "injected fault ("+strings.Join(d.Rules, ",")+") "+where)
		e.RetryAfter = d.RetryAfter
		h.s.writeError(req, e, 0)
		return false
	case d.DropResponse:
		req.dropResponse = true
	}
	return true
}

// abortIfClosing ends the request's connection without a response when the server is
// closing: a request that a delay or a hang held until then must look lost to its
// client, as it would if the process ended, not answered with an empty 200.
func (s *Server) abortIfClosing() {
	select {
	case <-s.closing:
		panic(http.ErrAbortHandler)
	default:
	}
}

// wait sleeps for d unless the client goes away or the server closes first.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.closing:
		return false
	}
}

// drop ends the request's connection with a reset and no response.
func (s *Server) drop(req *request) {
	hj, ok := req.w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	reset(conn)
}

// readBody reads a request body of at most maxRequestBytes, which must arrive within
// s.bodyTimeout of the first read (fault delays come before and do not count). ok is false
// once an error response has been written.
func (s *Server) readBody(req *request) ([]byte, bool) {
	req.bodyRead = true
	rc := http.NewResponseController(req.w)
	_ = rc.SetReadDeadline(time.Now().Add(s.bodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(req.w, req.r.Body, maxRequestBytes))
	if err == nil {
		// The connection idles next, or waits for the client to go away while a
		// handler works: neither may be cut by the body's deadline.
		_ = rc.SetReadDeadline(time.Time{})
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.writeError(req, cosmosErr(413, 0, "request size is too large: the limit for a document is 2 MB"), 0)
		} else if errors.Is(err, os.ErrDeadlineExceeded) {
			s.writeError(req, cosmosErr(408, 0, fmt.Sprintf("the request body did not arrive within %v: the emulator stopped waiting for it and closes the connection", s.bodyTimeout)), 0)
		} else {
			s.writeError(req, badRequest("could not read the request body: %v", err), 0)
		}
		return nil, false
	}
	return body, true
}

// boundUnreadBody is deferred by the handler: net/http reads what is left of a body no
// handler read (an error answered first) before it reuses the connection, and a client
// stalling that body would hold the connection for ever.
func (s *Server) boundUnreadBody(req *request) {
	if req.bodyRead || req.r.Body == nil || req.r.Body == http.NoBody {
		return
	}
	_ = http.NewResponseController(req.w).SetReadDeadline(time.Now().Add(s.bodyTimeout))
}

// baseHeaders sets what every response carries.
func (s *Server) baseHeaders(req *request, charge float64) http.Header {
	h := req.w.Header()
	h.Set(cosmos.HeaderActivityID, req.activityID)
	h.Set(cosmos.HeaderRequestCharge, strconv.FormatFloat(charge, 'f', 2, 64))
	h.Set(cosmos.HeaderServedRegion, req.regionName)
	h.Set("x-ms-gatewayversion", gatewayVersion)
	h.Set(cosmos.HeaderRequestDuration, requestDuration(req.start))
	return h
}

// requestDuration renders the time since start as the service writes
// x-ms-request-duration-ms: decimal milliseconds with three places ("0.408").
func requestDuration(start time.Time) string {
	return strconv.FormatFloat(float64(time.Since(start).Microseconds())/1000, 'f', 3, 64)
}

func (s *Server) writeJSON(req *request, status int, body []byte, charge float64) {
	if s.throttled(req, charge) {
		return
	}
	if !s.strongCommitWait(req, status) {
		s.abortIfClosing()
		return
	}
	if req.dropResponse {
		s.drop(req)
		return
	}
	h := s.baseHeaders(req, charge)
	if body != nil {
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	if status >= 400 && h.Get(cosmos.HeaderSubStatus) == "" {
		h.Set(cosmos.HeaderSubStatus, "0")
	}
	s.finishHeaders(req, status)
	req.w.WriteHeader(status)
	if body != nil && req.r.Method != http.MethodHead {
		_, _ = req.w.Write(body)
	}
}

// writeError answers with a Cosmos error body and its status, substatus and headers.
func (s *Server) writeError(req *request, e *cosmos.Error, charge float64) {
	s.writeErrorInfo(req, e, charge, "")
}

// writeErrorInfo is writeError with the body's additionalErrorInfo, which the gateway
// fills for a few errors (a cross-partition query that needs a query plan carries the
// plan there).
func (s *Server) writeErrorInfo(req *request, e *cosmos.Error, charge float64, info string) {
	if s.throttled(req, charge) {
		return
	}
	h := s.baseHeaders(req, charge)
	h.Set(cosmos.HeaderSubStatus, strconv.Itoa(e.SubStatus))
	if e.RetryAfter > 0 {
		h.Set(cosmos.HeaderRetryAfterMs, strconv.FormatInt(e.RetryAfter.Milliseconds(), 10))
	}
	code := e.Code
	if code == "" {
		code = cosmos.StatusName(e.StatusCode, e.SubStatus)
	}
	body := appendErrorBody(nil, code, e.Message, req.activityID)
	if info != "" {
		body, _ = json.Marshal(struct {
			Code                string `json:"code"`
			Message             string `json:"message"`
			AdditionalErrorInfo string `json:"additionalErrorInfo"`
		}{code, e.Message + "\r\nActivityId: " + req.activityID + ", cosmosctl-emulator", info})
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	s.finishHeaders(req, e.StatusCode)
	req.w.WriteHeader(e.StatusCode)
	_, _ = req.w.Write(body)
}

func appendErrorBody(dst []byte, code, msg, activityID string) []byte {
	body, _ := json.Marshal(cosmos.ErrorBody{Code: code, Message: msg + "\r\nActivityId: " + activityID + ", cosmosctl-emulator"})
	return append(dst, body...)
}

// isLoopback reports whether addr is a loopback address (used to warn when binding wider).
func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}
