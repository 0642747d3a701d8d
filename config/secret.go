package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Secret is an account key or connection string. It prints masked with every fmt verb and
// in JSON, so that a Settings value can be logged or printed without leaking it; Reveal
// returns the value itself for the one place that signs requests.
type Secret string

// Reveal returns the secret itself.
func (s Secret) Reveal() string { return string(s) }

// String returns the masked secret.
func (s Secret) String() string { return Mask(string(s)) }

// Format masks the secret whatever the verb (%s, %v, %q, %x, %#v…).
func (s Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, Mask(string(s))) }

// MarshalJSON encodes the masked secret.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(Mask(string(s))) }

// Mask shows enough of a secret to tell two keys apart and none of the rest: the first and
// last four characters of a long secret ("C2y6…Jw=="), "****" for a short one, "" for none.
func Mask(secret string) string {
	r := []rune(secret)
	switch {
	case len(r) == 0:
		return ""
	case len(r) < 16:
		return "****"
	}
	return string(r[:4]) + "…" + string(r[len(r)-4:])
}

// ParseConnectionString reads an account connection string as the portal shows it,
// "AccountEndpoint=https://x.documents.azure.com:443/;AccountKey=…;". Keys are
// case-insensitive, the trailing ";" is optional, values may contain "=" (base64 padding)
// and other keys (such as the emulator's DisableServerCertificateValidation) are ignored.
// Errors never quote the string: it holds the key.
func ParseConnectionString(s string) (endpoint, key string, err error) {
	for part := range strings.SplitSeq(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			return "", "", errors.New("is not a connection string: expected AccountEndpoint=…;AccountKey=…; as shown in the portal (Keys blade)")
		}
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "accountendpoint":
			endpoint = strings.TrimSpace(value)
		case "accountkey":
			key = strings.TrimSpace(value)
		}
	}
	if endpoint == "" || key == "" {
		missing := "AccountEndpoint"
		if endpoint != "" {
			missing = "AccountKey"
		}
		return "", "", fmt.Errorf("has no %s: copy the whole connection string from the portal (Keys blade)", missing)
	}
	if _, err := parseEndpoint(endpoint); err != nil {
		return "", "", fmt.Errorf("has an AccountEndpoint that %v", err)
	}
	if err := checkKey(key); err != nil {
		return "", "", fmt.Errorf("has an AccountKey that %v", err)
	}
	return endpoint, key, nil
}
