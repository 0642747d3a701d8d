package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// The emulator announces itself. GET /_emulator/hello, on the global endpoint and on
// every region's, needs no key: it is how a client that was given only an endpoint
// learns that the endpoint is a cosmosctl emulator, whether it takes the public
// well-known key (so that the client may sign with it unasked), and which databases
// and containers it holds (so that the client need not be told those either).
//
// A key of the emulator's own (--key-file) is never revealed: hello then says only that
// the key is not the well-known one. The databases and containers are listed when
// anybody could list them anyway (the key is the well-known one) or when the hello
// request itself was signed with the account key; otherwise they are left out.
//
// The answer also carries the header x-cosmosctl-emulator, the version of the build
// serving it. A real Cosmos DB account answers the path with an error, which clients
// take to mean "not a cosmosctl emulator".

// HelloPath is the path of the self-announcement.
const HelloPath = "/" + cosmos.TypeEmulator + "/" + helloSegment

// HeaderEmulator is the response header of a hello: the version of the cosmosctl build
// serving it ("dev" when it does not know).
const HeaderEmulator = "x-cosmosctl-emulator"

// HelloName is the value of Hello.Emulator.
const HelloName = "cosmosctl"

const (
	helloSegment = "hello"
	opHello      = "hello" // classify's name for it: no latency, no faults, no key
)

// Hello is the body of GET /_emulator/hello.
type Hello struct {
	// Emulator is always HelloName: a client checks it before believing the rest.
	Emulator string `json:"emulator"`
	// Version is the cosmosctl build serving the emulator.
	Version string `json:"version"`
	Account string `json:"account"`
	// WellKnownKey says the account key is cosmos.EmulatorKey, which is public.
	WellKnownKey bool `json:"well_known_key"`
	// AAD says the emulator accepts its Azure AD test token (never revealed).
	AAD bool `json:"aad"`
	// DatabasesListed says Databases is the full list; when false it was withheld
	// (a key of the emulator's own, and a request not signed with it).
	DatabasesListed bool            `json:"databases_listed"`
	Databases       []HelloDatabase `json:"databases"`
}

// HelloDatabase is one database of a Hello, with its containers in creation order.
type HelloDatabase struct {
	ID         string           `json:"id"`
	Containers []HelloContainer `json:"containers"`
}

// HelloContainer is one container of a HelloDatabase.
type HelloContainer struct {
	ID           string   `json:"id"`
	PartitionKey []string `json:"partition_key"`
}

// Hello is what GET /_emulator/hello answers; signed says the request was signed with
// the account key, which lets it see the databases under a key of the emulator's own.
func (s *Server) Hello(signed bool) Hello {
	version := s.version
	if version == "" {
		version = "dev"
	}
	h := Hello{Emulator: HelloName, Version: version, Account: s.cfg.Account, WellKnownKey: s.UsesWellKnownKey(),
		AAD: s.cfg.AADToken != "", Databases: []HelloDatabase{}}
	if !h.WellKnownKey && !signed {
		return h
	}
	h.DatabasesListed = true
	for _, db := range s.store.listDatabases() {
		hd := HelloDatabase{ID: db.ID, Containers: []HelloContainer{}}
		colls, _ := s.store.listContainers(db.ID) // a database deleted meanwhile lists none
		for _, c := range colls {
			hd.Containers = append(hd.Containers, HelloContainer{ID: c.ID, PartitionKey: c.PartitionKey.Paths})
		}
		h.Databases = append(h.Databases, hd)
	}
	return h
}

func (s *Server) serveHello(req *request, signed bool) {
	h := s.Hello(signed)
	req.w.Header().Set(HeaderEmulator, h.Version)
	s.controlJSON(req, http.StatusOK, h)
}

// ErrNotEmulator says an endpoint did not answer hello as a cosmosctl emulator does: a
// real account, another server, or nothing listening.
var ErrNotEmulator = errors.New("not a cosmosctl emulator")

// AskHello asks endpoint whether it is a cosmosctl emulator, through tr, which signs
// the request when it has a credential (to see the databases under a key of the
// emulator's own) and sends it unsigned otherwise. Any answer but a cosmosctl hello is
// an error wrapping ErrNotEmulator; ctx bounds the wait.
func AskHello(ctx context.Context, tr *cosmos.Transport, endpoint string) (Hello, error) {
	bounded := *tr
	bounded.MaxResponseBytes = 4 << 20 // a hello is small; a stranger's answer need not be read whole
	resp, err := bounded.Do(ctx, endpoint, &cosmos.Request{Method: http.MethodGet, Path: HelloPath, Header: http.Header{}})
	if err != nil {
		return Hello{}, fmt.Errorf("%w: %s answered %w", ErrNotEmulator, endpoint, err)
	}
	var h Hello
	if resp.StatusCode != http.StatusOK || json.Unmarshal(resp.Body, &h) != nil || h.Emulator != HelloName {
		return Hello{}, fmt.Errorf("%w: %s answered %s with status %d and no cosmosctl hello", ErrNotEmulator, endpoint, HelloPath, resp.StatusCode)
	}
	return h, nil
}
