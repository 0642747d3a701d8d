package bulk

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"unicode/utf8"
)

// MaxItemBytes is the largest item Cosmos DB stores (2 MiB). A longer line is rejected
// as too large without being held in memory.
const MaxItemBytes = 2 << 20

// fingerprintBytes is how much of the input its fingerprint hashes.
const fingerprintBytes = 1 << 20

// Fingerprint identifies an input, so that a state file is only resumed with the input
// it was written for.
type Fingerprint struct {
	// Name is the file's path as given ("-" for standard input), for messages only.
	Name string `json:"name"`
	// Size in bytes, -1 when unknown (standard input).
	Size int64 `json:"size"`
	// PrefixSHA256 is the hash of the first PrefixBytes bytes (1 MiB, or all of a
	// shorter input).
	PrefixSHA256 string `json:"prefix_sha256"`
	PrefixBytes  int    `json:"prefix_bytes"`
}

// Source reads an input's lines, numbered from 1.
type Source struct {
	in          *input
	r           *bufio.Reader
	n           int64
	fingerprint Fingerprint
	// skipping says the line being read was handed over as too large before its end:
	// the next line starts after that end.
	skipping bool
}

// line is one line of the input: its text without the line ending, or, for a line
// longer than MaxItemBytes, only its length.
type line struct {
	n    int64
	text []byte
	// tooLarge is the length of a line over MaxItemBytes; with cut, the length read
	// when the line was handed over, its end not read yet: it is at least that long.
	tooLarge int64
	cut      bool
	// bom is the length of the UTF-8 byte order mark taken off the first line, so
	// that offsets into text can be given as offsets into the line as the file has it.
	bom int
}

// NewSource reads the start of r to fingerprint it, until ctx ends (an input that stalls
// before its first MiB: a pipe whose writer waits). size is the input's size, -1 when
// unknown.
func NewSource(ctx context.Context, r io.Reader, name string, size int64) (*Source, error) {
	in := &input{r: r, ctx: ctx, buf: make([]byte, 256<<10)}
	br := bufio.NewReaderSize(in, fingerprintBytes)
	head, err := br.Peek(fingerprintBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	sum := sha256.Sum256(head)
	return &Source{in: in, r: br, fingerprint: Fingerprint{Name: name, Size: size, PrefixSHA256: hex.EncodeToString(sum[:]), PrefixBytes: len(head)}}, nil
}

// Fingerprint is the input's identity.
func (s *Source) Fingerprint() Fingerprint { return s.fingerprint }

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// next returns the next line, io.EOF after the last, or ctx's error once it is done.
//
// A line is never held in memory past MaxItemBytes (and its line ending): as soon as
// more than that is read without a newline, it is returned as too large, cut, and the
// next call skips the rest of it before reading the line after. An endless line (a
// device, a broken generator) is rejected at once, and only ctx ends the skipping.
func (s *Source) next(ctx context.Context) (line, error) {
	s.in.ctx = ctx
	if s.skipping {
		if err := s.skipLine(ctx); err != nil {
			return line{}, err
		}
	}
	var buf []byte
	bom := 0
	for {
		if err := ctx.Err(); err != nil {
			return line{}, err
		}
		chunk, err := s.buffered()
		if len(chunk) == 0 {
			switch {
			case !errors.Is(err, io.EOF):
				return line{}, err
			case len(buf) == 0:
				return line{}, io.EOF
			}
			return s.whole(buf, bom), nil // the last line, without a newline
		}
		if len(buf) == 0 && s.n == 0 && bytes.HasPrefix(chunk, utf8BOM) {
			bom = len(utf8BOM)
		}
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			if n := textLength(buf, chunk[:i], bom); n > MaxItemBytes {
				s.r.Discard(i + 1)
				s.n++
				return line{n: s.n, tooLarge: n}, nil
			}
			buf = append(buf, chunk[:i+1]...)
			s.r.Discard(i + 1)
			return s.whole(buf, bom), nil
		}
		if n := textLength(buf, chunk, bom); n > MaxItemBytes {
			s.r.Discard(len(chunk))
			s.n++
			s.skipping = true
			return line{n: s.n, tooLarge: n, cut: true}, nil
		}
		buf = append(buf, chunk...)
		s.r.Discard(len(chunk))
	}
}

// textLength is the length of the line's text in buf followed by b: without its byte
// order mark, nor a '\r' at the end, which is (or may yet be) part of the line ending.
func textLength(buf, b []byte, bom int) int64 {
	n := int64(len(buf) + len(b) - bom)
	if len(b) > 0 && b[len(b)-1] == '\r' || len(b) == 0 && len(buf) > 0 && buf[len(buf)-1] == '\r' {
		n--
	}
	return n
}

// whole is a line read to its end (its line ending included, if any).
func (s *Source) whole(buf []byte, bom int) line {
	s.n++
	text := bytes.TrimSuffix(buf, trailingNewline(buf))[bom:]
	if len(text) > MaxItemBytes { // the last line, ending in a '\r' of its own
		return line{n: s.n, tooLarge: int64(len(text))}
	}
	return line{n: s.n, text: text, bom: bom}
}

// skipLine reads past the end of the line handed over as too large, keeping none of it.
func (s *Source) skipLine(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk, err := s.buffered()
		if len(chunk) == 0 {
			if errors.Is(err, io.EOF) {
				s.skipping = false
				return nil
			}
			return err
		}
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			s.r.Discard(i + 1)
			s.skipping = false
			return nil
		}
		s.r.Discard(len(chunk))
	}
}

// buffered is what the reader holds, after one read of the input when it holds
// nothing: never more waiting than that, so that a line is handed over as too large as
// soon as enough of it is read, even from an input that then stalls.
func (s *Source) buffered() ([]byte, error) {
	if s.r.Buffered() == 0 {
		if _, err := s.r.Peek(1); err != nil {
			return nil, err
		}
	}
	return s.r.Peek(s.r.Buffered())
}

func trailingNewline(b []byte) []byte {
	switch {
	case bytes.HasSuffix(b, []byte("\r\n")):
		return []byte("\r\n")
	case bytes.HasSuffix(b, []byte("\n")):
		return []byte("\n")
	}
	return nil
}

// invalidUTF8 returns the byte offset of the first byte of b that is not valid UTF-8.
func invalidUTF8(b []byte) (int, bool) {
	if utf8.Valid(b) {
		return 0, false
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i, true
		}
		i += size
	}
	return 0, false
}

// input is the Source's reader of the input, through which a read stalled on a pipe
// (a producer that hangs) gives way to the context of the line being read: the read
// goes on in its own goroutine, and what it brings is kept for the next Read, so that
// nothing is lost. bufio.Reader's Read takes no context, hence ctx here, set by next.
type input struct {
	r       io.Reader
	ctx     context.Context
	buf     []byte
	rest    []byte
	err     error // the reader's, once it gave one: it gives no more
	reading chan readResult
}

type readResult struct {
	n   int
	err error
}

func (in *input) Read(p []byte) (int, error) {
	if len(in.rest) == 0 && in.err == nil {
		if in.reading == nil {
			ch := make(chan readResult, 1)
			in.reading = ch
			go func() {
				n, err := in.r.Read(in.buf)
				ch <- readResult{n, err}
			}()
		}
		select {
		case res := <-in.reading:
			in.reading = nil
			in.rest, in.err = in.buf[:res.n], res.err
		case <-in.ctx.Done():
			return 0, in.ctx.Err()
		}
	}
	if len(in.rest) == 0 {
		return 0, in.err
	}
	n := copy(p, in.rest)
	in.rest = in.rest[n:]
	return n, nil
}

// CountLines counts the lines of r (a last line without a newline counts), for the
// progress bar's total, until ctx is done.
func CountLines(ctx context.Context, r io.Reader) (int64, error) {
	buf := make([]byte, 256<<10)
	var n int64
	last := byte('\n')
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		k, err := r.Read(buf)
		if k > 0 {
			n += int64(bytes.Count(buf[:k], []byte("\n")))
			last = buf[k-1]
		}
		if errors.Is(err, io.EOF) {
			if last != '\n' {
				n++
			}
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
