package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	goio "io"
	"strings"
	"sync"

	"github.com/itchyny/gojq"
)

// compileJQ compiles a --jq expression (gojq, jq's language). The expression sees the
// command's JSON only: env and $ENV are empty, so that no expression prints the
// environment (a key in COSMOSCTL_KEY) into a script's output.
func compileJQ(expr string) (*gojq.Code, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, usageErrorf("--jq is empty: give a jq expression, e.g. --jq .id")
	}
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, usageErrorf("--jq %s: %s (jq's syntax: https://jqlang.org/manual/)", quoteJQ(expr), oneLine(err.Error()))
	}
	code, err := gojq.Compile(q, gojq.WithEnvironLoader(func() []string { return nil }))
	if err != nil {
		return nil, usageErrorf("--jq %s: %s", quoteJQ(expr), oneLine(err.Error()))
	}
	return code, nil
}

func quoteJQ(expr string) string {
	if len(expr) > 60 {
		expr = expr[:57] + "..."
	}
	return fmt.Sprintf("%q", expr)
}

// jqError is a --jq expression that failed on the command's JSON (`.items[]` of a
// string): the expression does not fit this output. It is a usage error (exit 2).
type jqError struct{ err error }

func (e *jqError) Error() string {
	return "--jq: " + oneLine(e.err.Error()) + " (the expression does not fit this command's JSON: see docs/json/)"
}

// jqWriter is stdout under --jq: it reads the JSON values the command writes (the one
// object of -o json, each line of NDJSON) as they complete, runs the expression on each,
// and writes what it yields: a string as it is, anything else as JSON (indented when
// pretty, one line otherwise), one a line. Keys come out sorted, as gojq gives them.
//
// A value is filtered as soon as its last byte is written, so that a stream (changes
// --follow, probe) reaches the reader line by line.
type jqWriter struct {
	mu     sync.Mutex
	out    goio.Writer
	code   *gojq.Code
	pretty bool
	buf    []byte
	err    error
}

func newJQWriter(out goio.Writer, code *gojq.Code, pretty bool) *jqWriter {
	return &jqWriter{out: out, code: code, pretty: pretty}
}

// Write takes the command's output. Once the expression failed (or the output was not
// JSON) a stream's writes fail, so that the command stops reading what nobody will
// see; the one object of -o json is the command's whole output, and its failure is left
// for Run to report after the command's own outcome (a read's 404 keeps its exit code).
func (w *jqWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.failed(p)
	}
	w.buf = append(w.buf, p...)
	if err := w.drain(false); err != nil {
		w.err = err
		return w.failed(p)
	}
	return len(p), nil
}

func (w *jqWriter) failed(p []byte) (int, error) {
	if w.pretty {
		return len(p), nil
	}
	return 0, w.err
}

// Close filters what is left; it reports a value cut short.
func (w *jqWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.err = w.drain(true)
	return w.err
}

// Err is the expression's failure, if it failed.
func (w *jqWriter) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// drain filters every complete value in the buffer and keeps the rest.
func (w *jqWriter) drain(final bool) error {
	dec := json.NewDecoder(bytes.NewReader(w.buf))
	dec.UseNumber()
	var out bytes.Buffer
	used := int64(0)
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, goio.EOF) {
			used = int64(len(w.buf))
			break
		}
		if errors.Is(err, goio.ErrUnexpectedEOF) && !final {
			break // the rest of the value is still to come
		}
		if err != nil {
			return &jqError{err: fmt.Errorf("the command's output is not JSON: %v", err)}
		}
		used = dec.InputOffset()
		if err := w.run(&out, v); err != nil {
			w.flush(&out)
			return err
		}
	}
	w.buf = append(w.buf[:0], w.buf[used:]...)
	return w.flush(&out)
}

func (w *jqWriter) flush(b *bytes.Buffer) error {
	if b.Len() == 0 {
		return nil
	}
	_, err := w.out.Write(b.Bytes())
	return err
}

// run writes what the expression yields for v.
func (w *jqWriter) run(out *bytes.Buffer, v any) error {
	iter := w.code.Run(v)
	for {
		r, ok := iter.Next()
		if !ok {
			return nil
		}
		switch r := r.(type) {
		case error:
			var halt *gojq.HaltError
			if errors.As(r, &halt) && halt.Value() == nil {
				return nil // halt: stop without an error
			}
			return &jqError{err: r}
		case string:
			out.WriteString(r)
		default:
			b, _ := gojq.Marshal(r)
			if w.pretty && (strings.HasPrefix(string(b), "{") || strings.HasPrefix(string(b), "[")) {
				var ind bytes.Buffer
				if json.Indent(&ind, b, "", "  ") == nil {
					b = ind.Bytes()
				}
			}
			out.Write(b)
		}
		out.WriteByte('\n')
	}
}

// filterLines runs code on each line of NDJSON and returns what it yields, one value a
// line (export's items under --jq).
func filterLines(code *gojq.Code, lines []byte) ([]byte, error) {
	var out bytes.Buffer
	w := newJQWriter(&out, code, false)
	if _, err := w.Write(lines); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
