package statefile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// EnvDir is the environment variable that overrides the state directory.
const EnvDir = "COSMOSCTL_STATE_DIR"

// Dir is the directory that holds cosmosctl's persisted state: $COSMOSCTL_STATE_DIR if
// set, else cosmosctl/state in the user's cache directory (~/.cache on Linux,
// ~/Library/Caches on macOS, %LocalAppData% on Windows). It does not create it.
func Dir() (string, error) {
	if dir := os.Getenv(EnvDir); dir != "" {
		return dir, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for cosmosctl's state (%v): set %s", err, EnvDir)
	}
	return filepath.Join(cache, "cosmosctl", "state"), nil
}

// AccountFile is the path of the file holding one kind of state (name, such as
// "health") for one account endpoint, inside dir:
//
//	dir/<host>-<port>-<8 hex digits>/<name>.json
//
// The directory name is readable (the endpoint's host and port) and unique (the start
// of the SHA-256 of the normalised endpoint), so https://X.documents.azure.com:443/ and
// https://x.documents.azure.com share a directory while two local emulators on
// different ports do not.
func AccountFile(dir, endpoint, name string) string {
	norm := NormalizeEndpoint(endpoint)
	sum := sha256.Sum256([]byte(norm))
	label := norm
	if u, err := url.Parse(norm); err == nil && u.Host != "" {
		label = u.Host
	}
	account := sanitize(label, 64) + "-" + hex.EncodeToString(sum[:4])
	return filepath.Join(dir, account, sanitize(name, 64)+".json")
}

// NormalizeEndpoint is the form of an account endpoint that state files are keyed by
// and record: scheme and host in lower case, the scheme's default port left out, no
// trailing slash, no query or fragment. Something that is not an absolute URL is only
// trimmed and lower-cased.
func NormalizeEndpoint(endpoint string) string {
	s := strings.TrimSpace(endpoint)
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return strings.TrimRight(strings.ToLower(s), "/")
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") { // IPv6
		host = "[" + host + "]"
	}
	if port := u.Port(); port != "" && !(scheme == "https" && port == "443") && !(scheme == "http" && port == "80") {
		host += ":" + port
	}
	return scheme + "://" + host + strings.TrimRight(u.EscapedPath(), "/")
}

// sanitize keeps a name safe as one path element on every OS: lower-case letters,
// digits, '.', '_' and '-'; anything else (':' is not allowed on Windows) becomes '-'.
func sanitize(s string, max int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if b.Len() >= max {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), ".-")
	if out == "" {
		return "state"
	}
	return out
}
