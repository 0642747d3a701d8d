package cosmos

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// fakeClock is a settable clock for AADCredential.now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// fakeSource hands out numbered tokens valid for ttl from the clock's now, or err.
type fakeSource struct {
	clock *fakeClock
	ttl   time.Duration
	calls atomic.Int32
	mu    sync.Mutex
	err   error
	gate  chan struct{} // when set, Token waits for it (or ctx)
}

func (s *fakeSource) Token(ctx context.Context) (string, time.Time, error) {
	n := s.calls.Add(1)
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return "", time.Time{}, ctx.Err()
		}
	}
	s.mu.Lock()
	err := s.err
	s.mu.Unlock()
	if err != nil {
		return "", time.Time{}, err
	}
	return fmt.Sprintf("token-%d", n), s.clock.Now().Add(s.ttl), nil
}

func (s *fakeSource) fail(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

func newTestAAD(ttl time.Duration) (*AADCredential, *fakeSource, *fakeClock) {
	clock := &fakeClock{t: time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)}
	src := &fakeSource{clock: clock, ttl: ttl}
	c := NewAADCredential(src)
	c.now = clock.Now
	return c, src, clock
}

func TestAADHeaderIsTheRawTokenAfterTypeAndVersion(t *testing.T) {
	c, _, _ := newTestAAD(time.Hour)
	h, err := c.Authorize("GET", "docs", "dbs/d/colls/c/docs/x", "Thu, 27 Apr 2017 00:51:12 GMT")
	if err != nil {
		t.Fatal(err)
	}
	if h != "type=aad&ver=1.0&sig=token-1" {
		t.Fatalf("header %q: want type=aad&ver=1.0&sig=<token>, not URL-encoded", h)
	}
	tok, err := ParseAuthorization(h)
	if err != nil || tok.Type != "aad" || tok.Version != "1.0" || tok.Signature != "token-1" {
		t.Fatalf("parsed %+v, %v", tok, err)
	}
	if s := fmt.Sprintf("%v %s", c, c); strings.Contains(s, "token-1") {
		t.Fatalf("formatting the credential shows the token: %s", s)
	}
}

func TestAADTokenIsCachedAndRefreshedFiveMinutesBeforeExpiry(t *testing.T) {
	c, src, clock := newTestAAD(time.Hour)
	start := clock.Now()
	steps := []struct {
		name  string
		at    time.Duration
		token string
		calls int32
	}{
		{"first use fetches", 0, "token-1", 1},
		{"reuse while fresh", 30 * time.Minute, "token-1", 1},
		{"still fresh just before the refresh window", 54*time.Minute + 59*time.Second, "token-1", 1},
		{"refreshed five minutes before expiry", 55 * time.Minute, "token-2", 2},
		{"the new token is cached", 60 * time.Minute, "token-2", 2},
	}
	for _, s := range steps {
		clock.Set(start.Add(s.at))
		got, err := c.Token(context.Background())
		if err != nil || got != s.token || src.calls.Load() != s.calls {
			t.Fatalf("%s: token %q (%v) after %d fetches, want %q after %d", s.name, got, err, src.calls.Load(), s.token, s.calls)
		}
	}
}

func TestAADFailedRefreshKeepsTheValidTokenAndBacksOff(t *testing.T) {
	c, src, clock := newTestAAD(time.Hour)
	start := clock.Now()
	if _, err := c.Token(context.Background()); err != nil {
		t.Fatal(err)
	}
	src.fail(errors.New("token endpoint down"))
	clock.Set(start.Add(56 * time.Minute))
	if got, err := c.Token(context.Background()); err != nil || got != "token-1" || src.calls.Load() != 2 {
		t.Fatalf("a failed refresh of a valid token: %q, %v, %d fetches; want the old token after one more fetch", got, err, src.calls.Load())
	}
	clock.Set(start.Add(56*time.Minute + 10*time.Second))
	if got, _ := c.Token(context.Background()); got != "token-1" || src.calls.Load() != 2 {
		t.Fatalf("within the back-off: %q after %d fetches; want no new fetch", got, src.calls.Load())
	}
	clock.Set(start.Add(61 * time.Minute))
	if _, err := c.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "token endpoint down") {
		t.Fatalf("after expiry with the endpoint still down: %v, want its error", err)
	}
	src.fail(nil)
	if got, err := c.Token(context.Background()); err != nil || got == "token-1" {
		t.Fatalf("once the endpoint is back: %q, %v", got, err)
	}
}

func TestAADConcurrentCallersShareOneFetch(t *testing.T) {
	c, src, _ := newTestAAD(time.Hour)
	src.gate = make(chan struct{})
	const n = 64
	var wg sync.WaitGroup
	got := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = c.AuthorizeContext(context.Background(), "GET", "docs", "dbs/d", "date")
		}()
	}
	time.Sleep(20 * time.Millisecond) // let them all queue behind the first fetch
	close(src.gate)
	wg.Wait()
	for i := range n {
		if errs[i] != nil || got[i] != "type=aad&ver=1.0&sig=token-1" {
			t.Fatalf("caller %d: %q, %v", i, got[i], errs[i])
		}
	}
	if calls := src.calls.Load(); calls != 1 {
		t.Fatalf("%d fetches for %d concurrent callers, want 1", calls, n)
	}
}

func TestAADWaiterGivesUpWithItsOwnContext(t *testing.T) {
	c, src, _ := newTestAAD(time.Hour)
	src.gate = make(chan struct{})
	first := make(chan error, 1)
	go func() { _, err := c.Token(context.Background()); first <- err }()
	for src.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.Token(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a waiter whose context ends: %v, want its deadline", err)
	}
	src.gate <- struct{}{}
	if err := <-first; err != nil {
		t.Fatalf("the fetching caller: %v", err)
	}
}

func TestTransportPassesTheRequestContextToAADCredential(t *testing.T) {
	var header atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header.Store(r.Header.Get(HeaderAuthorization))
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c, _, _ := newTestAAD(time.Hour)
	tr := &Transport{HTTP: srv.Client(), Credential: c}
	if _, err := tr.Do(context.Background(), srv.URL, &Request{Method: "GET", Path: "/"}); err != nil {
		t.Fatal(err)
	}
	if h := header.Load(); h != "type=aad&ver=1.0&sig=token-1" {
		t.Fatalf("the server got authorization %q", h)
	}

	// A token fetch that hangs ends with the request's context.
	c2, src2, _ := newTestAAD(time.Hour)
	src2.gate = make(chan struct{})
	defer close(src2.gate)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	tr.Credential = c2
	if _, err := tr.Do(ctx, srv.URL, &Request{Method: "GET", Path: "/"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Do with a hanging token fetch: %v, want the context's deadline", err)
	}
}

func jwtWithExp(exp int64) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." +
		enc.EncodeToString([]byte(fmt.Sprintf(`{"aud":"https://a.documents.azure.com","exp":%d}`, exp))) + ".c2lnbmF0dXJl"
}

func TestStaticTokenExpiresWithItsJWTAndNeverLeaksIt(t *testing.T) {
	now := time.Now()
	valid := jwtWithExp(now.Add(time.Hour).Unix())
	s, err := NewStaticToken(valid+"\n", "/run/ci.token (env COSMOSCTL_AAD_TOKEN_FILE)")
	if err != nil {
		t.Fatal(err)
	}
	if got, exp, err := s.Token(context.Background()); err != nil || got != valid || exp.Unix() != now.Add(time.Hour).Unix() {
		t.Fatalf("valid JWT: %v %v", exp, err)
	}

	expired := jwtWithExp(now.Add(-time.Minute).Unix())
	s, _ = NewStaticToken(expired, "/run/ci.token (env COSMOSCTL_AAD_TOKEN_FILE)")
	_, _, err = s.Token(context.Background())
	if err == nil || !strings.Contains(err.Error(), "expired") || !strings.Contains(err.Error(), "/run/ci.token") || !strings.Contains(err.Error(), "not refreshed") {
		t.Fatalf("expired JWT: %v", err)
	}
	if strings.Contains(err.Error(), expired) || strings.Contains(err.Error(), expired[:20]) {
		t.Fatalf("the error quotes the token: %v", err)
	}

	// The emulator's test token is no JWT: it never expires.
	s, _ = NewStaticToken("emulator-test-token", "f")
	if got, exp, err := s.Token(context.Background()); err != nil || got != "emulator-test-token" || !exp.IsZero() {
		t.Fatalf("non-JWT token: %q %v %v", got, exp, err)
	}

	for _, bad := range []string{"", "   ", "two words", `{"accessToken":"x"}`, "a&b", "a%3Db"} {
		_, err := NewStaticToken(bad, "the file")
		if err == nil {
			t.Fatalf("token %q accepted", bad)
		}
		if strings.TrimSpace(bad) != "" && strings.Contains(err.Error(), bad) {
			t.Fatalf("the error quotes the token: %v", err)
		}
	}
}

func TestAADScopeIsTheAccountHostWithoutPort(t *testing.T) {
	cases := map[string]string{
		"https://myaccount.documents.azure.com:443/": "https://myaccount.documents.azure.com/.default",
		"https://myaccount.documents.azure.com":      "https://myaccount.documents.azure.com/.default",
		"http://127.0.0.1:8081":                      "https://127.0.0.1/.default",
	}
	for ep, want := range cases {
		if got, err := AADScope(ep); err != nil || got != want {
			t.Errorf("AADScope(%q) = %q, %v; want %q", ep, got, err, want)
		}
	}
	if _, err := AADScope("not a url"); err == nil {
		t.Error("AADScope accepted a non-URL")
	}
}

type fakeTokenCredential struct {
	scopes []string
	tok    azcore.AccessToken
	err    error
}

func (f *fakeTokenCredential) GetToken(_ context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	f.scopes = o.Scopes
	return f.tok, f.err
}

func TestAzureTokenSourceAsksForTheAccountScopeAndExplainsFailures(t *testing.T) {
	exp := time.Now().Add(time.Hour)
	fake := &fakeTokenCredential{tok: azcore.AccessToken{Token: "jwt", ExpiresOn: exp}}
	src := &AzureTokenSource{Credential: fake, Scope: "https://a.documents.azure.com/.default"}
	tok, gotExp, err := src.Token(context.Background())
	if err != nil || tok != "jwt" || !gotExp.Equal(exp) || len(fake.scopes) != 1 || fake.scopes[0] != "https://a.documents.azure.com/.default" {
		t.Fatalf("token %q exp %v err %v scopes %v", tok, gotExp, err, fake.scopes)
	}

	fake.err = azidentity.NewCredentialUnavailableError("DefaultAzureCredential: failed to acquire a token.\nAttempted credentials:\n\tEnvironmentCredential: missing\n\tAzureCLICredential: az not found")
	_, _, err = src.Token(context.Background())
	if !errors.Is(err, ErrNoAzureCredential) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "az login") {
		t.Fatalf("no credential: %v", err)
	}

	fake.err = fmt.Errorf("wrapped: %w", &azidentity.AuthenticationFailedError{})
	_, _, err = src.Token(context.Background())
	if err == nil || errors.Is(err, ErrNoAzureCredential) || !strings.HasPrefix(err.Error(), "Azure AD did not issue a token for https://a.documents.azure.com/.default") {
		t.Fatalf("refused: %v", err)
	}

}

func TestAttemptKeepsTheLineThatExplainsAFailedChain(t *testing.T) {
	cases := []struct{ name, msg, want string }{
		{"a CLI refusal", "DefaultAzureCredential: failed to acquire a token.\nAttempted credentials:\n\tEnvironmentCredential: missing\n\tAzureCLICredential: ERROR: AADSTS700082: expired",
			"AzureCLICredential: ERROR: AADSTS700082: expired"},
		{"a token endpoint's answer", "DefaultAzureCredential: failed to acquire a token.\nAttempted credentials:\n\tEnvironmentCredential: missing environment variable AZURE_TENANT_ID\n" +
			"\tManagedIdentityCredential authentication failed. \n\t\tGET http://169.254.169.254/metadata/identity/oauth2/token\n\t\t-----\n\t\tRESPONSE 403: 403 Forbidden\n\t\t-----\n\t\tresolve_deny: denied destination\n\t\t-----\n\t\tTo troubleshoot, visit https://aka.ms/x",
			"ManagedIdentityCredential authentication failed. (403 Forbidden: resolve_deny: denied destination)"},
		{"an Azure AD error body", "ClientSecretCredential authentication failed. \nPOST https://login.microsoftonline.com/t/oauth2/v2.0/token\n-----\nRESPONSE 401: 401 Unauthorized\n-----\n{\n  \"error\": \"invalid_client\",\n  \"error_description\": \"AADSTS7000215: Invalid client secret provided.\",\n  \"error_codes\": [7000215]\n}\n-----",
			"ClientSecretCredential authentication failed. (401 Unauthorized: AADSTS7000215: Invalid client secret provided.)"},
	}
	for _, tc := range cases {
		if got := attempt(tc.msg); got != tc.want {
			t.Errorf("%s: attempt = %q, want %q", tc.name, got, tc.want)
		}
	}
}
