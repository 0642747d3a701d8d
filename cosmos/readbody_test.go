package cosmos

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// readBody returns the body's bytes whatever the Content-Length says, however the
// reader hands them over, up to the limit, and the reader's error.
func TestReadBodyReadsTheWholeBodyUpToTheLimit(t *testing.T) {
	for _, n := range []int{0, 1, 511, 4095, 4096, 4097, 100_000} {
		body := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		for _, cl := range []int64{-1, 0, int64(n) - 1, int64(n), int64(n) + 7} {
			for name, r := range map[string]io.Reader{
				"whole": bytes.NewReader(body), "byte by byte": iotest.OneByteReader(bytes.NewReader(body)),
				"data with EOF": iotest.DataErrReader(bytes.NewReader(body)),
			} {
				got, err := readBody(r, cl, 64<<20)
				if err != nil || !bytes.Equal(got, body) {
					t.Fatalf("%d bytes, Content-Length %d, %s: got %d bytes, %v", n, cl, name, len(got), err)
				}
				if n > 64<<10 && cap(got) > n+n/4 {
					t.Fatalf("%d bytes, Content-Length %d, %s: kept in a buffer of %d", n, cl, name, cap(got))
				}
			}
		}
	}
	got, err := readBody(bytes.NewReader(make([]byte, 10_000)), -1, 5000)
	if err != nil || len(got) != 5000 {
		t.Fatalf("over the limit: %d bytes, %v; want the first 5000", len(got), err)
	}
	boom := errors.New("connection reset")
	got, err = readBody(io.MultiReader(bytes.NewReader([]byte("abc")), iotest.ErrReader(boom)), 10, 1<<20)
	if !errors.Is(err, boom) || string(got) != "abc" {
		t.Fatalf("a failed read: %q, %v; want what came and the error", got, err)
	}
}
