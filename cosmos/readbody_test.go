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
				got, err := readBody(r, cl, 64<<20, nil)
				if err != nil || !bytes.Equal(got, body) {
					t.Fatalf("%d bytes, Content-Length %d, %s: got %d bytes, %v", n, cl, name, len(got), err)
				}
				if n > 64<<10 && cap(got) > n+n/4 {
					t.Fatalf("%d bytes, Content-Length %d, %s: kept in a buffer of %d", n, cl, name, cap(got))
				}
			}
		}
	}
	got, err := readBody(bytes.NewReader(make([]byte, 10_000)), -1, 5000, nil)
	if err != nil || len(got) != 5000 {
		t.Fatalf("over the limit: %d bytes, %v; want the first 5000", len(got), err)
	}
	boom := errors.New("connection reset")
	got, err = readBody(io.MultiReader(bytes.NewReader([]byte("abc")), iotest.ErrReader(boom)), 10, 1<<20, nil)
	if !errors.Is(err, boom) || string(got) != "abc" {
		t.Fatalf("a failed read: %q, %v; want what came and the error", got, err)
	}
}

// A body read into a lent buffer is the same bytes; bodies not given back never share
// memory, and a buffer given back serves a later body of any size whole.
func TestReadBodyIntoLentBuffers(t *testing.T) {
	var lend BodyBuffers
	bodyOf := func(n int, fill byte) []byte { return bytes.Repeat([]byte{fill}, n) }
	read := func(b []byte, cl int64) []byte {
		t.Helper()
		got, err := readBody(iotest.HalfReader(bytes.NewReader(b)), cl, 64<<20, &lend)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%d bytes, Content-Length %d: got %d bytes, %v", len(b), cl, len(got), err)
		}
		return got
	}
	for _, n := range []int{0, 1, 4096, 100_000} {
		for _, cl := range []int64{-1, int64(n) - 1, int64(n), int64(n) + 7} {
			read(bodyOf(n, 'x'), cl)
		}
	}
	a := read(bodyOf(200_000, 'a'), 200_000)
	b := read(bodyOf(200_000, 'b'), 200_000)
	if !bytes.Equal(a, bodyOf(200_000, 'a')) || !bytes.Equal(b, bodyOf(200_000, 'b')) {
		t.Fatal("two bodies not given back share memory")
	}
	for i, n := range []int{200_000, 10, 300_000, 50_000} {
		given := a
		lend.Put(a)
		if bytes.ContainsFunc(given, func(r rune) bool { return r != 0 }) {
			t.Fatal("a buffer given back still holds its body: a slice read after its time would look valid")
		}
		a = read(bodyOf(n, byte('c'+i)), int64(n))
		if !bytes.Equal(b, bodyOf(200_000, 'b')) {
			t.Fatal("a body not given back changed when another buffer was lent again")
		}
	}
	lend.Put(nil) // nothing to give back: no harm
}

// A buffer given back serves the next body that fits it (the point of lending), one
// lent at a time; at most maxFreeBodyBuffers are kept, the largest.
func TestBodyBuffersLendWhatWasGivenBack(t *testing.T) {
	var lend BodyBuffers
	read := func(n int) []byte {
		t.Helper()
		got, err := readBody(bytes.NewReader(make([]byte, n)), int64(n), 64<<20, &lend)
		if err != nil || len(got) != n {
			t.Fatalf("%d bytes: got %d, %v", n, len(got), err)
		}
		return got
	}
	same := func(a, b []byte) bool { return &a[:1][0] == &b[:1][0] }
	first := read(100_000)
	if cap(first) < 100_001+100_001/8 {
		t.Fatalf("a new buffer of %d bytes for 100,000: want an eighth to spare for a longer next page", cap(first))
	}
	lend.Put(first)
	second := read(100_050) // a few bytes longer: still fits
	if !same(first, second) {
		t.Fatal("the buffer given back was not lent again for a body that fits it")
	}
	third := read(100_000) // second is not given back: a new one
	if same(second, third) {
		t.Fatal("a buffer still lent was lent again")
	}
	var bufs [][]byte
	for i := range maxFreeBodyBuffers + 4 {
		bufs = append(bufs, read(1000*(i+1)))
	}
	for _, b := range bufs {
		lend.Put(b)
	}
	if len(lend.free) != maxFreeBodyBuffers || cap(lend.free[0]) < 1000 {
		t.Fatalf("%d buffers kept, want %d", len(lend.free), maxFreeBodyBuffers)
	}
	for _, f := range lend.free {
		if cap(f) < 5000 {
			t.Fatalf("a buffer of %d kept while larger ones went: keep the largest", cap(f))
		}
	}
}
