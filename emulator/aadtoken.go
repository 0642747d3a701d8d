package emulator

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// Azure AD tokens as Microsoft's emulator takes them.
//
// Started with /enableaadauthentication, Microsoft's emulator accepts, as type=aad, a
// JWT that the client makes itself: the header names the key "CosmosEmulatorPrimaryMaster"
// (kid and x5t), the claims carry the current nbf, iat and exp, and the third segment,
// where a signature would be, is the account key itself, base64-encoded. Every SDK's
// emulator tests build it that way: azcosmos emulator_test.go (emulatorTokenCredential,
// base64url without padding), the .NET SDK's AadSimpleEmulatorTokenCredential (standard
// base64), the Java and Python SDKs' test credentials, and the Rust SDK's
// CosmosEmulatorCredential, which says the emulator "validates this segment against its
// master key string bytes". None of them documents what else the emulator checks; the
// emulator here checks what the tokens are built to satisfy and nothing they leave
// open (not the audience, issuer or claims such as scp):
//
//   - three segments, the first two base64url JSON objects;
//   - the header's kid is CosmosEmulatorPrimaryMaster;
//   - the third segment decodes (base64url or standard, with or without padding) to the
//     account key, compared in constant time;
//   - exp is present, and now is within [nbf, exp) give or take aadClockSkew.
//
// A token failing any of these is a 401. Unsigned tokens (alg "none", an empty third
// segment) and tokens signed any other way fail the key comparison.

// aadEmulatorKeyID is the key id of the emulator's tokens.
const aadEmulatorKeyID = "CosmosEmulatorPrimaryMaster"

// aadClockSkew is the tolerance on nbf and exp. Microsoft's emulator's is not
// documented; five minutes is the default of .NET's token validation
// (TokenValidationParameters.DefaultClockSkew), which a .NET service would inherit.
const aadClockSkew = 5 * time.Minute

// emulatorTokenError is why token is not one Microsoft's emulator would accept from a
// client holding key, or "" when it is.
func emulatorTokenError(token, key string, now time.Time) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "it is not a JWT of three segments"
	}
	var header struct {
		KeyID string `json:"kid"`
	}
	if !decodeJWTPart(parts[0], &header) {
		return "its header is not base64url JSON"
	}
	if header.KeyID != aadEmulatorKeyID {
		return "its header's kid is not " + aadEmulatorKeyID
	}
	sig, ok := decodeBase64Any(parts[2])
	if !ok || subtle.ConstantTimeCompare(sig, []byte(key)) != 1 {
		return "it is not signed with the emulator's key (its third segment must be the account key, base64-encoded, as Microsoft's emulator's test tokens are)"
	}
	var claims struct {
		NotBefore *json.Number `json:"nbf"`
		Expires   *json.Number `json:"exp"`
	}
	if !decodeJWTPart(parts[1], &claims) {
		return "its claims are not base64url JSON"
	}
	if claims.Expires == nil {
		return "it has no exp claim"
	}
	exp, err := claims.Expires.Int64()
	if err != nil {
		return "its exp claim is not a number of seconds"
	}
	if !now.Before(time.Unix(exp, 0).Add(aadClockSkew)) {
		return "it expired at " + cosmos.FormatDate(time.Unix(exp, 0)) + " (the emulator's clock: " + cosmos.FormatDate(now) + ")"
	}
	if claims.NotBefore != nil {
		nbf, err := claims.NotBefore.Int64()
		if err != nil {
			return "its nbf claim is not a number of seconds"
		}
		if now.Add(aadClockSkew).Before(time.Unix(nbf, 0)) {
			return "it is not valid before " + cosmos.FormatDate(time.Unix(nbf, 0)) + " (the emulator's clock: " + cosmos.FormatDate(now) + ")"
		}
	}
	return ""
}

// decodeJWTPart decodes a base64url segment holding a JSON object into v.
func decodeJWTPart(seg string, v any) bool {
	raw, ok := decodeBase64Any(seg)
	if !ok {
		return false
	}
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	return d.Decode(v) == nil
}

// decodeBase64Any decodes s as base64url or standard base64, padded or not: the SDKs'
// test credentials use both.
func decodeBase64Any(s string) ([]byte, bool) {
	if s == "" {
		return nil, false
	}
	trimmed := strings.TrimRight(s, "=")
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.RawStdEncoding} {
		if b, err := enc.DecodeString(trimmed); err == nil {
			return b, true
		}
	}
	return nil, false
}
