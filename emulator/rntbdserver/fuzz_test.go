package rntbdserver

import (
	"encoding/base64"
	"encoding/hex"
	"testing"
)

// FuzzParseRequest: the request decoder never panics, never claims more bytes than it
// was given, and a frame it accepts has every token inside the frame and a body of the
// length it announced.
func FuzzParseRequest(f *testing.F) {
	rust, _ := hex.DecodeString(rustReadSnapshot)
	f.Add(rust)
	dotnet, _ := base64.StdEncoding.DecodeString(dotnetMockResponse)
	f.Add(dotnet)
	f.Add(contextRequest())
	f.Add(readFrame("doc", 9))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, n, err := ParseRequest(b)
		if err != nil {
			if n != 0 || r != nil {
				t.Fatalf("error %v with n %d", err, n)
			}
			return
		}
		if n < headLength || n > len(b) {
			t.Fatalf("used %d of %d bytes", n, len(b))
		}
		if r.PayloadPresent && len(r.Body)+4+headLength > n {
			t.Fatalf("body of %d bytes in a %d-byte frame", len(r.Body), n)
		}
		for _, tk := range r.Tokens {
			_ = tk.Text()
		}
	})
}
