package rntbd

import (
	"bytes"
	"testing"
)

// The fuzz targets look for panics, for a decoder that claims more bytes than it was
// given, and for a decoded frame that does not re-encode to the bytes it came from. Their
// seeds are the independent vectors, so `go test` alone replays them.

func seedResponses(f *testing.F) {
	raw := dotnet201(f)
	f.Add(raw)
	f.Add(raw[:500])                // the frame without its body
	f.Add(raw[:4])                  // the length alone
	f.Add(append(raw, raw...))      // two frames back to back
	f.Add(frame(28, payloadAbsent)) // the smallest valid response
}

func FuzzDecodeResponse(f *testing.F) {
	seedResponses(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		r, n, err := DecodeResponse(in)
		checkDecoded(t, in, n, err, r.Encode)
		c, n, err := DecodeContextResponse(in)
		checkDecoded(t, in, n, err, c.Encode)
	})
}

func FuzzDecodeRequest(f *testing.F) {
	f.Add(rustRead(f))
	f.Add(rustRead(f)[:35])
	c := NewContextRequest([16]byte{1}, "2018-12-31", "cosmosctl", BoolToken(CtxReqEnableChannelMultiplexing, true))
	b, err := c.Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, in []byte) {
		r, n, err := DecodeRequest(in)
		checkDecoded(t, in, n, err, r.Encode)
		c, n, err := DecodeContextRequest(in)
		checkDecoded(t, in, n, err, c.Encode)
	})
}

func checkDecoded(t *testing.T, in []byte, n int, err error, encode func() ([]byte, error)) {
	t.Helper()
	if err != nil {
		if n != 0 {
			t.Fatalf("error %v but %d bytes consumed", err, n)
		}
		return
	}
	if n < 24 || n > len(in) {
		t.Fatalf("consumed %d bytes of %d", n, len(in))
	}
	out, err := encode()
	if err != nil {
		t.Fatalf("decoded frame does not re-encode: %v", err)
	}
	if !bytes.Equal(out, in[:n]) {
		t.Fatalf("re-encoded\n %x\nwant\n %x", out, in[:n])
	}
}

func BenchmarkDecodeResponse(b *testing.B) {
	raw := dotnet201(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeResponse(raw); err != nil {
			b.Fatal(err)
		}
	}
}
