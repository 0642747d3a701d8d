package emulator

import (
	"context"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/rntbdserver"
)

// Gateway 2.0 ("thin client"): per region an HTTP/2-over-TLS proxy endpoint whose
// requests are RNTBD frames in POST bodies (issue 27 §4; contract decision 7). What the
// service does, as the SDKs that speak to it show:
//
//   - Discovery: an account read carrying x-ms-cosmos-use-thinclient gets
//     thinClientReadableLocations / thinClientWritableLocations (Location shape: name,
//     databaseAccountEndpoint) besides the usual lists; without the header they are left
//     out ("Without this header the server suppresses those fields", Rust driver
//     constants; .NET ThinClientConstants.EnableThinClientEndpointDiscoveryHeaderName,
//     GlobalEndpointManager.ParseThinClientLocationsFromAdditionalProperties).
//   - Transport: HTTP/2 over TLS (.NET ThinClientStoreClient.PrepareRequestForProxyAsync
//     sets requestMessage.Version = 2.0; Rust GATEWAY_V2_SPEC.md §5.5 "HTTP/2 required (no
//     HTTP/1.1 fallback)"). Like the Rust emulator (azure_data_cosmos_emulator
//     src/gateway_v2.rs), a request over HTTP/1.1 is answered 505 and a method other than
//     POST 405.
//   - POST /connectivity-probe, empty body → 200, empty body (GATEWAY_V2_SPEC.md §5.5
//     "Connectivity probe"; Rust emulator gateway_v2.rs). The service answers 503 when
//     its federation has the probe off; the emulator always has it on.
//   - Any other POST: the body is an RNTBD request frame in the proxy form (.NET
//     TransportSerialization.BuildRequestForProxy via ThinClientTransportSerializer.
//     SerializeProxyRequestAsync). The path is not read: .NET posts to the advertised
//     endpoint URL itself (RequestUri = thinClientEndpoint), the Rust driver to the
//     endpoint plus the resource path (gateway_v2_dispatch.rs wrap: url =
//     request.url, e.g. https://account-thin…:444/dbs/db1/colls/coll1/docs/doc1).
//     x-ms-version is required ("The proxy requires x-ms-version to dispatch the
//     request", Rust gateway_v2_dispatch.rs; 400 here, the proxy's status unknown; .NET
//     sends it among its HttpClient's default headers, CosmosHttpClientCore). Headers
//     x-ms-thinclient-proxy-operation-type and x-ms-thinclient-proxy-resource-type may
//     name the operation: PascalCase names, "Read", "Document" (Rust
//     proxy_operation_type_name "so the proxy can dispatch the request"). They are
//     optional: .NET reads them only to build the frame and clears every header before
//     the POST (ThinClientStoreClient.PrepareRequestForProxyAsync at 8c53d3595:
//     Headers.Clear(), then only x-ms-user-agent and x-ms-activity-id), and the service
//     serves .NET, whose Gateway 2.0 is on by default. When present they must match the
//     frame; the Rust spec §5.4 table says "numeric", which its code does not do, so the
//     emulator takes either.
//     The frame must carry GlobalDatabaseAccountName (0x00CE), the proxy's tenant key
//     (GATEWAY_V2_SPEC.md §5.4 "Tenant identification"), and must not carry
//     TransportRequestID (0x004D) or ReplicaPath (0x0013) (Java
//     RntbdConstants.thinClientExclusionList; "emitting one here triggers a routing
//     error", Rust gateway_v2_dispatch.rs). Point operations carry EffectivePartitionKey
//     (0x005A, Bytes): the EPK hex string's bytes (.NET HexStringUtility.HexStringToBytes
//     of GetEffectivePartitionKeyString; Rust EpkPayload::Point "binary EPK bytes"),
//     which the proxy routes by. The emulator requires it on point operations and
//     checks it against the partition key (400 otherwise, a status of its choosing),
//     then routes by the partition key.
//   - Answer: the HTTP status is the frame's status (.NET ConvertProxyResponseAsync
//     throws "Status code mismatch" otherwise) and the body is the RNTBD response frame.
//     Its session token carries no "<range>:" prefix; the client adds it.
//
// The request itself is served by the region's gateway, as a REST request built from
// the frame (rntbdserver.HTTPRequest): the same answers, faults and latencies as REST.

// Gateway 2.0 wire names (.NET ThinClientConstants.cs).
const (
	HeaderUseThinClient          = "x-ms-cosmos-use-thinclient"
	HeaderThinClientOperation    = "x-ms-thinclient-proxy-operation-type"
	HeaderThinClientResourceType = "x-ms-thinclient-proxy-resource-type"
	HeaderEffectivePartitionKey  = "x-ms-effective-partition-key"
	ConnectivityProbePath        = "/connectivity-probe"
)

// thinClientOps are the operation names and numbers the proxy header may carry, by RNTBD
// operation type (names: .NET OperationType; numbers: Java RntbdOperationType).
var thinClientOps = map[uint16][]string{
	rntbdserver.OpCreate: {"Create", "1"}, rntbdserver.OpPatch: {"Patch", "2"}, rntbdserver.OpRead: {"Read", "3"},
	rntbdserver.OpReadFeed: {"ReadFeed", "4"}, rntbdserver.OpDelete: {"Delete", "5"}, rntbdserver.OpReplace: {"Replace", "6"},
	rntbdserver.OpUpsert: {"Upsert", "19"},
}

// Request tokens the proxy form must or must not carry (Java RntbdConstants, commit
// 01feecf6).
const (
	tokReplicaPath           uint16 = 0x0013
	tokTransportRequestID    uint16 = 0x004D
	tokGlobalDatabaseAccount uint16 = 0x00CE
	tokEffectivePartitionKey uint16 = 0x005A
	tokPartitionKey          uint16 = 0x002B
)

// bindThinClient opens a region's Gateway 2.0 endpoint on a free port.
func (s *Server) bindThinClient(ep *endpoint) error {
	addr := net.JoinHostPort(s.cfg.Host, "0")
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &ListenError{What: "the Gateway 2.0 endpoint of region " + ep.name, Addr: addr, Err: err}
	}
	name := ep.name
	ep.thinListener = &faultListener{Listener: ln, refusing: func() bool { return s.faults.Refusing(name) }}
	ep.thinURL = "https://" + ln.Addr().String()
	cfg := s.rntbdTLS.Clone()
	cfg.NextProtos = []string{"h2", "http/1.1"}
	protos := new(http.Protocols)
	protos.SetHTTP1(true) // only to answer 505, as the Rust emulator does
	protos.SetHTTP2(true)
	ep.thin = &http.Server{
		Handler:           s.thinClientHandler(ep),
		TLSConfig:         cfg,
		Protocols:         protos,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          quietLog(),
	}
	return nil
}

func (s *Server) serveThinClient(ep *endpoint) {
	if err := ep.thin.Serve(tls.NewListener(ep.thinListener, ep.thin.TLSConfig)); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.logger.Printf("the Gateway 2.0 endpoint of %s stopped serving: %v", ep.name, err)
	}
}

func (s *Server) thinClientHandler(ep *endpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			writeFrameError(w, http.StatusHTTPVersionNotSupported, "Gateway 2.0 requires HTTP/2")
			return
		}
		if r.Method != http.MethodPost {
			writeFrameError(w, http.StatusMethodNotAllowed, "Gateway 2.0 requires POST")
			return
		}
		if r.URL.Path == ConnectivityProbePath {
			w.WriteHeader(http.StatusOK)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, rntbdserver.MaxFrameLength+rntbdserver.MaxBodyLength+8))
		if err != nil {
			writeFrameError(w, http.StatusBadRequest, "reading the RNTBD request frame: "+err.Error())
			return
		}
		req, n, err := rntbdserver.ParseRequest(body)
		if err == nil && n != len(body) {
			err = errors.New("the body holds " + strconv.Itoa(len(body)-n) + " bytes after the RNTBD frame")
		}
		if err != nil {
			writeFrameError(w, http.StatusBadRequest, "the body is not an RNTBD request frame: "+err.Error())
			return
		}
		answer := func(status int, h http.Header, b []byte) {
			resp := &rntbdserver.Response{Status: uint32(status), ActivityID: req.ActivityID, Tokens: rntbdserver.ResponseTokens(h)}
			if len(b) > 0 {
				resp.Body = b
			}
			frame := rntbdserver.EncodeResponse(resp)
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Length", strconv.Itoa(len(frame)))
			w.WriteHeader(status)
			_, _ = w.Write(frame)
		}
		fail := func(msg string) { answer(http.StatusBadRequest, nil, rntbdserver.ErrorBody(400, msg)) }
		if msg := s.checkProxyFrame(r, req); msg != "" {
			fail(msg)
			return
		}
		// The names travel in tokens, never in a URL, so every id reaches the store as
		// it is; the emulator's gateway decodes a path twice (gatewaypath.go), so they
		// are escaped twice.
		twice := func(name string) string { return url.PathEscape(url.PathEscape(name)) }
		hr, err := rntbdserver.HTTPRequestEscaped(context.WithValue(r.Context(), viaRNTBD{}, true), req, thinClientURLPath, r.Header.Get(cosmos.HeaderVersion), twice)
		if err != nil {
			fail(err.Error())
			return
		}
		hr.RemoteAddr, hr.Host, hr.TLS = r.RemoteAddr, r.Host, r.TLS
		if ua := r.Header.Get("User-Agent"); ua != "" {
			hr.Header.Set("User-Agent", ua)
		}
		rec := rntbdserver.Record(ep.http.Handler, hr, func() { panic(http.ErrAbortHandler) }, s.logger)
		if rec.Aborted {
			panic(http.ErrAbortHandler) // the proxy's stream is reset: the request is lost
		}
		answer(rec.Status, rec.Header, rec.Body)
	})
}

// checkProxyFrame checks what distinguishes the proxy form from a direct-mode frame;
// "" when it is well-formed.
func (s *Server) checkProxyFrame(r *http.Request, req *rntbdserver.Request) string {
	if r.Header.Get(cosmos.HeaderVersion) == "" {
		return "a Gateway 2.0 request needs x-ms-version: the proxy dispatches by it"
	}
	if _, ok := req.Token(tokTransportRequestID); ok {
		return "a Gateway 2.0 frame must not carry TransportRequestID (0x004D): the proxy assigns its own"
	}
	if _, ok := req.Token(tokReplicaPath); ok {
		return "a Gateway 2.0 frame must not carry ReplicaPath (0x0013): the proxy picks the replica"
	}
	acct, ok := req.Token(tokGlobalDatabaseAccount)
	if !ok {
		return "a Gateway 2.0 frame must carry GlobalDatabaseAccountName (0x00CE): the proxy finds the account by it"
	}
	if !strings.EqualFold(acct.Text(), s.cfg.Account) {
		return "GlobalDatabaseAccountName " + strconv.Quote(acct.Text()) + " is not this account (" + s.cfg.Account + ")"
	}
	switch req.OperationType {
	case rntbdserver.OpCreate, rntbdserver.OpRead, rntbdserver.OpReplace, rntbdserver.OpUpsert, rntbdserver.OpDelete, rntbdserver.OpPatch:
		epk, ok := req.Token(tokEffectivePartitionKey)
		if !ok {
			return "a Gateway 2.0 point operation must carry EffectivePartitionKey (0x005A): the proxy routes by it"
		}
		if pkTok, ok := req.Token(tokPartitionKey); ok {
			if pk, err := cosmos.ParsePartitionKeyJSON(pkTok.Text()); err == nil {
				if want := cosmos.EffectivePartitionKey(pk); !strings.EqualFold(hex.EncodeToString(epk.Value), want) {
					return "EffectivePartitionKey (0x005A) " + strings.ToUpper(hex.EncodeToString(epk.Value)) + " is not the effective partition key of " + pkTok.Text() + " (" + want + "): send the bytes of the EPK's hex string"
				}
			}
		}
	}
	opHeader := strings.TrimSpace(r.Header.Get(HeaderThinClientOperation))
	names, known := thinClientOps[req.OperationType]
	if opHeader != "" && known && !strings.EqualFold(opHeader, names[0]) && opHeader != names[1] {
		return HeaderThinClientOperation + " " + strconv.Quote(opHeader) + " does not name the frame's operation type " + strconv.Itoa(int(req.OperationType))
	}
	resHeader := strings.TrimSpace(r.Header.Get(HeaderThinClientResourceType))
	if resHeader != "" && req.ResourceType == rntbdserver.ResourceDocument && !strings.EqualFold(resHeader, "Document") && resHeader != "3" {
		return HeaderThinClientResourceType + " " + strconv.Quote(resHeader) + " does not name the frame's resource type " + strconv.Itoa(int(req.ResourceType))
	}
	return ""
}

// ThinClientEndpoint is the https URL of a region's Gateway 2.0 endpoint.
func (s *Server) ThinClientEndpoint(region string) (string, bool) {
	if i, ok := s.regionIndex(region); ok {
		return s.regions[i].thinURL + "/", true
	}
	return "", false
}

// thinClientAccount is the account document with the Gateway 2.0 locations, for an
// account read that asks for them.
type thinClientAccount struct {
	cosmos.Account
	ThinClientWritableLocations []cosmos.Location `json:"thinClientWritableLocations"`
	ThinClientReadableLocations []cosmos.Location `json:"thinClientReadableLocations"`
}

func (s *Server) thinClientAccount() thinClientAccount {
	a := thinClientAccount{Account: s.Account()}
	for _, i := range *s.order.Load() {
		loc := cosmos.Location{Name: s.regions[i].name, Endpoint: s.regions[i].thinURL + "/"}
		if s.writable(i) {
			a.ThinClientWritableLocations = append(a.ThinClientWritableLocations, loc)
		}
		a.ThinClientReadableLocations = append(a.ThinClientReadableLocations, loc)
	}
	return a
}
