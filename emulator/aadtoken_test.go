package emulator

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// emulatorToken builds a token the way the SDKs' emulator tests do: the header, claims
// with nbf, iat and exp, and the key as the third segment. claims replaces the claims
// when not empty; enc encodes every segment.
type emulatorToken struct {
	header string
	claims string
	key    string
	sig    string // replaces the third segment when not empty
	enc    *base64.Encoding
}

const emulatorHeader = `{"typ":"JWT","alg":"RS256","x5t":"CosmosEmulatorPrimaryMaster","kid":"CosmosEmulatorPrimaryMaster"}`

func timedClaims(nbf, exp time.Time) string {
	return `{"aud":"https://localhost.localhost","iss":"https://sts.fake-issuer.net/7b1999a1-dfd7-440e-8204-00170979b984",` +
		`"iat":` + strconv.FormatInt(nbf.Unix(), 10) + `,"nbf":` + strconv.FormatInt(nbf.Unix(), 10) +
		`,"exp":` + strconv.FormatInt(exp.Unix(), 10) + `,"appid":"localhost","tid":"EmulatorFederation","scp":"user_impersonation"}`
}

func (e emulatorToken) String() string {
	enc := e.enc
	if enc == nil {
		enc = base64.RawURLEncoding
	}
	header, claims, key := e.header, e.claims, e.key
	if header == "" {
		header = emulatorHeader
	}
	if claims == "" {
		claims = timedClaims(time.Now(), time.Now().Add(2*time.Hour))
	}
	if key == "" {
		key = cosmos.EmulatorKey
	}
	sig := enc.EncodeToString([]byte(key))
	if e.sig != "" {
		sig = e.sig
	}
	return enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(claims)) + "." + sig
}

func TestAADEmulatorTokens(t *testing.T) {
	now := time.Now()
	hmacSig := func() string {
		m := hmac.New(sha256.New, []byte(cosmos.EmulatorKey))
		m.Write([]byte("x"))
		return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}()
	unsigned := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"CosmosEmulatorPrimaryMaster"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(timedClaims(now, now.Add(time.Hour)))) + "."
	cases := []struct {
		name  string
		token string
		want  int
		why   string
	}{
		{"azcosmos's token (base64url, no padding)", emulatorToken{}.String(), 200, ""},
		{"the .NET SDK's token (standard base64, padded)", emulatorToken{enc: base64.StdEncoding}.String(), 200, ""},
		{"nbf five minutes ahead is within the skew", emulatorToken{claims: timedClaims(now.Add(4*time.Minute), now.Add(time.Hour))}.String(), 200, ""},
		{"unsigned: alg none and an empty signature", unsigned, 401, "not signed with the emulator's key"},
		{"unsigned: no signature segment at all", strings.TrimSuffix(unsigned, "."), 401, "not a JWT"},
		{"signed with another key", emulatorToken{key: base64.StdEncoding.EncodeToString([]byte("another key of some length"))}.String(), 401, "not signed with the emulator's key"},
		{"an HMAC where the key should be", emulatorToken{sig: hmacSig}.String(), 401, "not signed with the emulator's key"},
		{"another kid", emulatorToken{header: `{"typ":"JWT","alg":"RS256","kid":"SomeOtherKey"}`}.String(), 401, "kid is not CosmosEmulatorPrimaryMaster"},
		{"expired beyond the skew", emulatorToken{claims: timedClaims(now.Add(-3*time.Hour), now.Add(-10*time.Minute))}.String(), 401, "it expired"},
		{"not yet valid beyond the skew", emulatorToken{claims: timedClaims(now.Add(10*time.Minute), now.Add(3*time.Hour))}.String(), 401, "not valid before"},
		{"no exp", emulatorToken{claims: `{"nbf":` + strconv.FormatInt(now.Unix(), 10) + `}`}.String(), 401, "no exp claim"},
		{"claims that are not JSON", emulatorToken{claims: `nbf=1`}.String(), 401, "claims are not base64url JSON"},
		{"not a JWT", "just-a-string", 401, "not a JWT"},
	}
	s := startTest(t, func(c *Config) { c.AADEmulatorTokens = true })
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, body := sendAAD(t, s.Endpoint()+"/dbs", tc.token)
			if st != tc.want {
				t.Fatalf("→ %d, want %d: %.300s", st, tc.want, body)
			}
			if tc.want == 401 && (!strings.Contains(body, tc.why) || strings.Contains(body, cosmos.EmulatorKey)) {
				t.Fatalf("401 body %.400s, want it to say %q and quote no key", body, tc.why)
			}
		})
	}
}

// sendAAD sends GET url with type=aad and token as azcosmos does, without a client that
// would judge the token first.
func sendAAD(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(cosmos.HeaderDate, cosmos.FormatDate(time.Now()))
	req.Header.Set(cosmos.HeaderAuthorization, neturl.QueryEscape("type=aad&ver=1.0&sig="+token))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestAADEmulatorTokensCarryTheAccountsOwnKey(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte("a key of this emulator's own, not the well-known one"))
	s := startTest(t, func(c *Config) { c.AADEmulatorTokens = true; c.Key = key })
	for _, tc := range []struct {
		name string
		key  string
		want int
	}{
		{"the account's key", key, 200},
		{"the well-known key", cosmos.EmulatorKey, 401},
	} {
		if st, _ := sendAAD(t, s.Endpoint()+"/", emulatorToken{key: tc.key}.String()); st != tc.want {
			t.Errorf("%s → %d, want %d", tc.name, st, tc.want)
		}
	}
}

func TestAADEmulatorTokensAreRefusedUnlessAskedFor(t *testing.T) {
	s := startTest(t, func(c *Config) { c.AADToken = testAADToken })
	if st, _ := sendAAD(t, s.Endpoint()+"/", emulatorToken{}.String()); st != 401 {
		t.Fatalf("an emulator token without aad_emulator_tokens → %d, want 401", st)
	}
	// Both kinds together: the configured token still works.
	s = startTest(t, func(c *Config) { c.AADToken = testAADToken; c.AADEmulatorTokens = true })
	for name, tok := range map[string]string{"configured token": testAADToken, "emulator token": emulatorToken{}.String()} {
		if st, _ := sendAAD(t, s.Endpoint()+"/", tok); st != 200 {
			t.Errorf("%s with both accepted → %d, want 200", name, st)
		}
	}
	if st, body := sendAAD(t, s.Endpoint()+"/", "neither"); st != 401 || !strings.Contains(body, "neither the one the emulator was started with") {
		t.Fatalf("a token of neither kind → %d %.300s, want 401 saying so", st, body)
	}
}
