package emulator

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

const testAADToken = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ0ZXN0In0.c2ln"

// newAADClient sends requests authorized with an Azure AD token.
func newAADClient(t testing.TB, token string) *testClient {
	src, err := cosmos.NewStaticToken(token, "test")
	if err != nil {
		t.Fatal(err)
	}
	return &testClient{t: t, tr: &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cosmos.NewAADCredential(src)}}
}

func TestAADTokenIsAcceptedWhenItIsTheConfiguredOne(t *testing.T) {
	s := startTest(t, func(c *Config) { c.AADToken = testAADToken + "\n" })
	aad := newAADClient(t, testAADToken)
	ep := s.Endpoint()
	steps := []struct {
		name         string
		method, path string
		body         any
		want         int
	}{
		{"account", "GET", "/", nil, 200},
		{"create", "POST", cosmos.ItemsPath("db", "items"), `{"id":"a1","pk":"p"}`, 201},
		{"read", "GET", itemPath("a1"), nil, 200},
	}
	for _, st := range steps {
		resp, err := aad.do(ep, st.method, st.path, pkHeader(`["p"]`), st.body)
		if got, _ := statusOf(t, resp, err); got != st.want {
			t.Fatalf("%s with the configured Azure AD token → %d, want %d: %v", st.name, got, st.want, err)
		}
	}
	// Key signatures still work next to Azure AD.
	key := newTestClient(t, s.Key())
	resp, err := key.do(ep, "GET", itemPath("a1"), pkHeader(`["p"]`), nil)
	if st, _ := statusOf(t, resp, err); st != 200 {
		t.Fatalf("key-signed read with Azure AD configured → %d", st)
	}
}

func TestOtherAADTokensAre401WithAClearMessage(t *testing.T) {
	cases := []struct {
		name       string
		configured string
		sent       string
		message    string
	}{
		{"wrong token", testAADToken, "eyJhbGciOiJub25lIn0.eyJzdWIiOiJvdGhlciJ9.c2ln", "not the one the emulator was started with"},
		{"a prefix of the token", testAADToken, testAADToken[:10], "not the one the emulator was started with"},
		{"no token configured", "", testAADToken, "has no Azure AD token configured"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startTest(t, func(c *Config) { c.AADToken = tc.configured })
			resp, err := newAADClient(t, tc.sent).do(s.Endpoint(), "GET", "/dbs", nil, nil)
			if st, _ := statusOf(t, resp, err); st != 401 {
				t.Fatalf("→ %d, want 401", st)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.message) {
				t.Fatalf("message %q, want it to say %q", msg, tc.message)
			}
			if tc.name == "no token configured" && !strings.Contains(msg, "--aad-token-file") {
				t.Fatalf("message %q does not say how to configure a token", msg)
			}
			if strings.Contains(msg, tc.sent) || (tc.configured != "" && strings.Contains(msg, tc.configured)) {
				t.Fatalf("message %q quotes a token", msg)
			}
		})
	}
}

func TestAADTokenArrivingURLEncodedIsAcceptedToo(t *testing.T) {
	// Some clients escape the whole header, as they do for master keys.
	s := startTest(t, func(c *Config) { c.AADToken = testAADToken })
	req, _ := http.NewRequestWithContext(context.Background(), "GET", s.Endpoint()+"/dbs", nil)
	req.Header.Set(cosmos.HeaderDate, cosmos.FormatDate(time.Now()))
	req.Header.Set(cosmos.HeaderAuthorization, url.QueryEscape("type=aad&ver=1.0&sig="+testAADToken))
	hr, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	hr.Body.Close()
	if hr.StatusCode != 200 {
		t.Fatalf("URL-encoded AAD header → %d, want 200", hr.StatusCode)
	}
}

func TestScenarioFileSetsTheAADToken(t *testing.T) {
	path := t.TempDir() + "/s.toml"
	if err := os.WriteFile(path, []byte("aad_token = \"from-scenario\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg Config
	if err := LoadScenario(path, &cfg); err != nil || cfg.AADToken != "from-scenario" {
		t.Fatalf("scenario aad_token: %q, %v", cfg.AADToken, err)
	}
}
