package emulator

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// unsigned sends requests with no authorization at all, as a client that has only the
// endpoint does.
func unsigned() *cosmos.Transport { return &cosmos.Transport{HTTP: cosmos.NewHTTPClient()} }

func signedWith(t *testing.T, key string) *cosmos.Transport {
	t.Helper()
	mk, err := cosmos.NewMasterKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: mk}
}

func askHello(t *testing.T, tr *cosmos.Transport, endpoint string) Hello {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := AskHello(ctx, tr, endpoint)
	if err != nil {
		t.Fatalf("hello from %s: %v", endpoint, err)
	}
	return h
}

// ownKey is a key of the emulator's own, as --key-file gives one.
var ownKey = base64.StdEncoding.EncodeToString([]byte(strings.Repeat("own key, never revealed ", 3)))

func TestHelloAnnouncesTheEmulatorWithoutAKey(t *testing.T) {
	cfg := Config{Databases: []DatabaseConfig{
		{ID: "app", Containers: []ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}, {ID: "orders", PartitionKey: []string{"/tenant", "/user"}}}},
		{ID: "empty"},
	}}
	s, err := Start(cfg, Options{Version: "v1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	h := askHello(t, unsigned(), s.Endpoint())
	if h.Emulator != "cosmosctl" || h.Version != "v1.2.3" || !h.WellKnownKey || h.AAD || !h.DatabasesListed {
		t.Fatalf("hello: %+v", h)
	}
	want := []HelloDatabase{
		{ID: "app", Containers: []HelloContainer{{ID: "items", PartitionKey: []string{"/pk"}}, {ID: "orders", PartitionKey: []string{"/tenant", "/user"}}}},
		{ID: "empty", Containers: []HelloContainer{}},
	}
	if got, wantS := jsonString(t, h.Databases), jsonString(t, want); got != wantS {
		t.Errorf("databases %s, want %s", got, wantS)
	}

	// The header says it too, and every region's endpoint answers as the global one.
	resp, err := unsigned().Do(context.Background(), s.Regions()[1].Endpoint, &cosmos.Request{Method: "GET", Path: HelloPath})
	if err != nil || resp.Header.Get(HeaderEmulator) != "v1.2.3" {
		t.Fatalf("hello on %s: header %q, %v", s.Regions()[1].Endpoint, resp.Header.Get(HeaderEmulator), err)
	}

	// A database created later is in the next hello.
	if _, cerr := s.store.createDatabase("later"); cerr != nil {
		t.Fatal(cerr)
	}
	if h := askHello(t, unsigned(), s.Endpoint()); len(h.Databases) != 3 || h.Databases[2].ID != "later" {
		t.Errorf("after creating a database: %+v", h.Databases)
	}
}

func TestHelloNeverRevealsAKeyOfTheEmulatorsOwn(t *testing.T) {
	s := startTest(t, func(c *Config) { c.Key = ownKey })

	resp, err := unsigned().Do(context.Background(), s.Endpoint(), &cosmos.Request{Method: "GET", Path: HelloPath})
	if err != nil {
		t.Fatal(err)
	}
	body := string(resp.Body)
	raw, _ := base64.StdEncoding.DecodeString(ownKey)
	if strings.Contains(body, ownKey) || strings.Contains(body, string(raw)) || strings.Contains(body, cosmos.EmulatorKey) {
		t.Fatalf("hello reveals a key: %s", body)
	}
	h := askHello(t, unsigned(), s.Endpoint())
	if h.WellKnownKey || h.DatabasesListed || len(h.Databases) != 0 {
		t.Fatalf("unsigned hello to an emulator with a key of its own: %+v", h)
	}
	// Signed with a wrong key, it answers the same: hello is never a 401, and tells no more.
	if h := askHello(t, signedWith(t, cosmos.EmulatorKey), s.Endpoint()); h.DatabasesListed || len(h.Databases) != 0 {
		t.Fatalf("hello signed with the wrong key lists the databases: %+v", h)
	}
	// Signed with the account key, it lists them.
	if h := askHello(t, signedWith(t, ownKey), s.Endpoint()); !h.DatabasesListed || len(h.Databases) != 1 || h.Databases[0].ID != "db" {
		t.Fatalf("hello signed with the account key: %+v", h)
	}
}

func TestHelloOpensNothingElseWithoutTheKey(t *testing.T) {
	s := startTest(t)
	for _, c := range []struct{ method, path string }{
		{"GET", "/_emulator/state"},
		{"POST", HelloPath},
		{"GET", HelloPath + "/more"},
		{"GET", "/"},
		{"GET", "/dbs"},
	} {
		resp, _ := unsigned().Do(context.Background(), s.Endpoint(), &cosmos.Request{Method: c.method, Path: c.path})
		if resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("unsigned %s %s: %+v, want 401", c.method, c.path, resp)
		}
	}
}

// A rehearsal's faults apply to the account, not to the announcement: a client must
// still learn what it talks to while every region hangs.
func TestHelloAnswersWhileEveryRegionHangs(t *testing.T) {
	s := startTest(t)
	if _, err := s.AddFault(faults.Rule{Operations: []string{"all"}, Effect: "hang"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Faults().SetLatency("", "all", faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := AskHello(ctx, unsigned(), s.Endpoint()); err != nil {
		t.Fatalf("hello under a hang fault: %v", err)
	}
}

func TestAskHelloTellsOtherServersApart(t *testing.T) {
	for name, handler := range map[string]http.HandlerFunc{
		"a Cosmos DB account (401)": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"code":"Unauthorized","message":"The input authorization token can't serve the request."}`))
		},
		"a web server (200, HTML)": func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>hello</html>")) },
		"another JSON service": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"emulator":"azurite","well_known_key":true}`))
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(handler)
			defer srv.Close()
			if _, err := AskHello(context.Background(), unsigned(), srv.URL); !errors.Is(err, ErrNotEmulator) {
				t.Fatalf("AskHello: %v, want ErrNotEmulator", err)
			}
		})
	}
	// Nothing listening at all.
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	if _, err := AskHello(context.Background(), unsigned(), srv.URL); !errors.Is(err, ErrNotEmulator) {
		t.Fatalf("AskHello of a closed port: %v", err)
	}
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
