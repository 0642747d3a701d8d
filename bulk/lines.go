package bulk

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
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
	r           *bufio.Reader
	n           int64
	fingerprint Fingerprint
}

// line is one line of the input: its text without the line ending, or, for a line
// longer than MaxItemBytes, only its length.
type line struct {
	n        int64
	text     []byte
	tooLarge int64
}

// NewSource reads the start of r to fingerprint it. size is the input's size, -1 when
// unknown.
func NewSource(r io.Reader, name string, size int64) (*Source, error) {
	br := bufio.NewReaderSize(r, fingerprintBytes)
	head, err := br.Peek(fingerprintBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	sum := sha256.Sum256(head)
	return &Source{r: br, fingerprint: Fingerprint{Name: name, Size: size, PrefixSHA256: hex.EncodeToString(sum[:]), PrefixBytes: len(head)}}, nil
}

// Fingerprint is the input's identity.
func (s *Source) Fingerprint() Fingerprint { return s.fingerprint }

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// next returns the next line, io.EOF after the last.
func (s *Source) next() (line, error) {
	var buf []byte
	var long int64
	for {
		chunk, err := s.r.ReadSlice('\n')
		switch {
		case long > 0:
			long += int64(len(chunk))
		case len(buf)+len(chunk) > MaxItemBytes+2: // room for "\r\n"
			long = int64(len(buf) + len(chunk))
			buf = nil
		default:
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return line{}, err
		}
		if errors.Is(err, io.EOF) && len(buf) == 0 && long == 0 {
			return line{}, io.EOF
		}
		s.n++
		l := line{n: s.n}
		if long > 0 {
			l.tooLarge = long - int64(len(trailingNewline(chunk)))
			return l, nil
		}
		buf = bytes.TrimSuffix(buf, trailingNewline(buf))
		if s.n == 1 {
			buf = bytes.TrimPrefix(buf, utf8BOM)
		}
		if len(buf) > MaxItemBytes {
			l.tooLarge = int64(len(buf))
			return l, nil
		}
		l.text = buf
		return l, nil
	}
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

// CountLines counts the lines of r (a last line without a newline counts), for the
// progress bar's total.
func CountLines(r io.Reader) (int64, error) {
	buf := make([]byte, 256<<10)
	var n int64
	last := byte('\n')
	for {
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
