package cosmos

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"strings"
	"sync"
	"time"
)

// EmulatorKey is the well-known key of the local Cosmos DB emulator. Every official SDK and
// tool uses it against local emulators, so cosmosctl's emulator defaults to it too: it is
// public and protects nothing.
const EmulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// Credential produces the authorization header value for one request.
type Credential interface {
	Authorize(verb, resourceType, resourceLink, date string) (string, error)
}

// MasterKey signs requests with an account key. The key is decoded once; the decoded
// bytes never leave this value, and String never reveals them.
type MasterKey struct {
	key []byte
	// macs are HMAC-SHA256 states keyed with key, reset and reused: a new one for every
	// request cost more than the signature itself.
	macs *sync.Pool
}

// NewMasterKey decodes a base64 account key.
func NewMasterKey(key string) (*MasterKey, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return nil, errors.New("account key is empty: set COSMOSCTL_KEY or use --key-file")
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return nil, errors.New("account key is not valid base64: copy the primary or secondary key from the portal (Keys blade) unchanged")
	}
	return &MasterKey{key: raw, macs: &sync.Pool{New: func() any { return hmac.New(sha256.New, raw) }}}, nil
}

// String keeps the key out of logs and error messages that format the credential.
func (k *MasterKey) String() string { return "MasterKey(redacted)" }

// Signature returns the base64 HMAC-SHA256 of the canonical string to sign.
func (k *MasterKey) Signature(verb, resourceType, resourceLink, date string) string {
	// Five fields, each ending in a line feed; the fifth (HTTP Date) is always empty
	// because x-ms-date carries the date that is signed.
	var buf [256]byte
	text := append(buf[:0], strings.ToLower(verb)...)
	text = append(text, '\n')
	text = append(text, strings.ToLower(resourceType)...)
	text = append(text, '\n')
	text = append(text, resourceLink...)
	text = append(text, '\n')
	text = append(text, strings.ToLower(date)...)
	text = append(text, '\n', '\n')
	var mac hash.Hash
	if k.macs != nil {
		mac = k.macs.Get().(hash.Hash)
		defer func() { mac.Reset(); k.macs.Put(mac) }()
	} else {
		mac = hmac.New(sha256.New, k.key)
	}
	mac.Write(text)
	var sum [sha256.Size]byte
	return base64.StdEncoding.EncodeToString(mac.Sum(sum[:0]))
}

// Authorize implements Credential.
func (k *MasterKey) Authorize(verb, resourceType, resourceLink, date string) (string, error) {
	sig := k.Signature(verb, resourceType, resourceLink, date)
	return url.QueryEscape("type=master&ver=1.0&sig=" + sig), nil
}

// Verify reports whether sig is the signature of the request under this key, in
// constant time.
func (k *MasterKey) Verify(sig, verb, resourceType, resourceLink, date string) bool {
	want := k.Signature(verb, resourceType, resourceLink, date)
	return hmac.Equal([]byte(want), []byte(sig))
}

// AuthToken is a parsed authorization header.
type AuthToken struct {
	Type      string // "master", "aad" or "resource"
	Version   string
	Signature string
}

// ParseAuthorization decodes an authorization header. Clients differ in how they escape it
// (%3D against %3d, AAD tokens not escaped at all), so it is decoded and parsed, never
// compared as an encoded string.
func ParseAuthorization(header string) (AuthToken, error) {
	var tok AuthToken
	if header == "" {
		return tok, errors.New("missing authorization header")
	}
	decoded := header
	if strings.Contains(header, "%") {
		d, err := url.QueryUnescape(header)
		if err != nil {
			return tok, fmt.Errorf("authorization header is not URL-encoded correctly: %v", err)
		}
		decoded = d
	}
	for _, part := range strings.Split(decoded, "&") {
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			return tok, fmt.Errorf("authorization header part %q is not name=value", truncate(part, 20))
		}
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "type":
			tok.Type = strings.ToLower(value)
		case "ver":
			tok.Version = value
		case "sig":
			tok.Signature = value
		}
	}
	if tok.Type == "" || tok.Signature == "" {
		return tok, errors.New("authorization header needs type=…&ver=…&sig=…")
	}
	return tok, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// FormatDate renders t the way x-ms-date expects (RFC 1123 in GMT).
func FormatDate(t time.Time) string {
	return t.UTC().Format(http1123)
}

const http1123 = "Mon, 02 Jan 2006 15:04:05 GMT"

// ParseDate parses an x-ms-date value.
func ParseDate(s string) (time.Time, error) {
	return time.Parse(http1123, s)
}
