package cosmos

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"
)

// ContextCredential is a Credential that may have to wait to authorize a request (an
// Azure AD credential fetching a token). Transport.Do prefers AuthorizeContext, so that
// the wait is bounded by the request's context and ends when it is cancelled.
type ContextCredential interface {
	Credential
	AuthorizeContext(ctx context.Context, verb, resourceType, resourceLink, date string) (string, error)
}

// TokenSource gets an Azure AD access token for the account and the time it expires. A
// zero expiry means unknown, and the token is then used until the source gives another.
type TokenSource interface {
	Token(ctx context.Context) (token string, expiresOn time.Time, err error)
}

// AADRefreshBefore is how long before its expiry a cached token is replaced: far enough
// ahead that a request signed with it does not arrive after it expired, and that a slow
// or failing token endpoint leaves time to try again while the old token still works.
const AADRefreshBefore = 5 * time.Minute

// aadRetryAfterFailure spaces refresh attempts out when the token endpoint fails while the
// cached token is still valid, so that every request does not pay for a failing call.
const aadRetryAfterFailure = 30 * time.Second

// AADCredential authorizes requests with Azure AD (Microsoft Entra ID) access tokens from
// a TokenSource. It caches the token and replaces it AADRefreshBefore its expiry. It is
// safe for concurrent use: one caller fetches at a time; while a still-valid token is
// being replaced, other requests keep using it, and only when there is no valid token do
// they wait for the fetch (each within its own context).
type AADCredential struct {
	src TokenSource
	now func() time.Time

	mu        sync.Mutex
	token     string
	expiresOn time.Time   // zero: unknown, never refreshed on time alone
	fetching  *tokenFetch // non-nil while a fetch runs
	nextTry   time.Time   // after a failed refresh, no other before this
}

type tokenFetch struct {
	done chan struct{}
	err  error // set before done is closed
}

// NewAADCredential returns a credential over src.
func NewAADCredential(src TokenSource) *AADCredential {
	return &AADCredential{src: src, now: time.Now}
}

// String keeps tokens out of logs and error messages that format the credential.
func (c *AADCredential) String() string { return "AADCredential(redacted)" }

// Authorize implements Credential; it fetches a token, if it must, without a deadline.
// Transport.Do calls AuthorizeContext instead.
func (c *AADCredential) Authorize(verb, resourceType, resourceLink, date string) (string, error) {
	return c.AuthorizeContext(context.Background(), verb, resourceType, resourceLink, date)
}

// AuthorizeContext implements ContextCredential. An Azure AD token authorizes the
// principal, not one request, so verb, resource and date do not enter into it.
func (c *AADCredential) AuthorizeContext(ctx context.Context, _, _, _, _ string) (string, error) {
	tok, err := c.Token(ctx)
	if err != nil {
		return "", err
	}
	// Not URL-encoded, unlike the master-key header. Every official SDK sends the AAD
	// header raw (azcosmos's cosmosBearerTokenPolicy: "type=aad&ver=1.0&sig=%v"; the
	// .NET and Java SDKs likewise), so the raw form is the one the service is known to
	// accept; and a JWT is base64url segments joined by ".", with no "&", "=" or "%" that
	// could be misread, so escaping would change nothing a server needs.
	return "type=aad&ver=1.0&sig=" + tok, nil
}

// Token returns the cached token, fetching a new one when there is none, when it is
// within AADRefreshBefore of its expiry, or when it has expired.
func (c *AADCredential) Token(ctx context.Context) (string, error) {
	for {
		c.mu.Lock()
		now := c.now()
		valid := c.token != "" && (c.expiresOn.IsZero() || now.Before(c.expiresOn))
		fresh := valid && (c.expiresOn.IsZero() || now.Before(c.expiresOn.Add(-AADRefreshBefore)))
		if fresh || (valid && (c.fetching != nil || now.Before(c.nextTry))) {
			tok := c.token
			c.mu.Unlock()
			return tok, nil
		}
		if f := c.fetching; f != nil {
			// No valid token: wait for the fetch in flight rather than start another.
			c.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			if f.err != nil && !isContextError(f.err) {
				return "", f.err
			}
			continue // a fetch that its own caller cancelled says nothing: try again
		}
		f := &tokenFetch{done: make(chan struct{})}
		c.fetching = f
		c.mu.Unlock()

		tok, exp, err := c.src.Token(ctx)
		if err == nil {
			err = checkToken(tok)
		}

		c.mu.Lock()
		c.fetching = nil
		if err == nil {
			c.token, c.expiresOn, c.nextTry = tok, exp, time.Time{}
		} else {
			c.nextTry = c.now().Add(aadRetryAfterFailure)
		}
		f.err = err
		close(f.done)
		tok = c.token
		c.mu.Unlock()
		if err != nil && !valid {
			return "", err
		}
		// A failed refresh keeps the token it was to replace while that is still valid.
		return tok, nil
	}
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// checkToken rejects what cannot be sent as a bearer token without quoting it: a token
// in an error message would leak it to logs.
func checkToken(tok string) error {
	if tok == "" {
		return errors.New("the Azure AD token is empty")
	}
	for _, r := range tok {
		if !tokenChar(r) {
			return errors.New("the Azure AD token holds characters an access token cannot have (spaces, quotes, & or %): it should be the accessToken value alone, as `az account get-access-token --query accessToken -o tsv` prints it")
		}
	}
	return nil
}

// tokenChar is the alphabet of JWTs (base64url and ".") and of base64, which is all an
// access token is written in.
func tokenChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		strings.ContainsRune("-_.~+/=", r)
}

// AADScope is the Azure AD scope of the account at endpoint: https://<account host>/.default,
// the host without its port. The scheme is always https: Azure AD issues tokens for the
// account's https resource even when a test points cosmosctl at an http endpoint.
func AADScope(endpoint string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(endpoint))
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("endpoint %q is not a URL such as https://myaccount.documents.azure.com:443/", endpoint)
	}
	return "https://" + u.Hostname() + "/.default", nil
}

// StaticToken is a TokenSource for a token acquired elsewhere, such as by
// `az account get-access-token` in a CI job or a break-glass runbook. It is never
// refreshed: once it expires, requests fail with an error that says so.
type StaticToken struct {
	token     string
	from      string // where the token came from, for errors: "COSMOSCTL_AAD_TOKEN_FILE /path"
	expiresOn time.Time
	now       func() time.Time
}

// NewStaticToken returns a source for token; from names where it came from, for error
// messages (which never quote the token). The expiry is the token's exp claim when it is
// a JWT, as Azure AD tokens are; a token that is not (the emulator's test token) never
// expires.
func NewStaticToken(token, from string) (*StaticToken, error) {
	token = strings.TrimSpace(token)
	if err := checkToken(token); err != nil {
		return nil, fmt.Errorf("%s: %v", from, err)
	}
	return &StaticToken{token: token, from: from, expiresOn: jwtExpiry(token), now: time.Now}, nil
}

// String keeps the token out of anything that formats the source.
func (s *StaticToken) String() string { return "StaticToken(" + s.from + ", redacted)" }

// ExpiresOn is the token's expiry; zero when unknown.
func (s *StaticToken) ExpiresOn() time.Time { return s.expiresOn }

// Token implements TokenSource.
func (s *StaticToken) Token(context.Context) (string, time.Time, error) {
	if !s.expiresOn.IsZero() && !s.now().Before(s.expiresOn) {
		return "", time.Time{}, fmt.Errorf("the Azure AD token from %s expired at %s and a token from a file is not refreshed: write a new one (az account get-access-token --resource https://ACCOUNT.documents.azure.com --query accessToken -o tsv)",
			s.from, s.expiresOn.UTC().Format(time.RFC3339))
	}
	return s.token, s.expiresOn, nil
}

// jwtExpiry reads the exp claim of a JWT without verifying it (the service does that);
// zero when tok is not a JWT or has no exp.
func jwtExpiry(tok string) time.Time {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp json.Number `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil {
		return time.Time{}
	}
	exp, err := claims.Exp.Float64()
	if err != nil || exp <= 0 {
		return time.Time{}
	}
	return time.Unix(int64(exp), 0)
}
