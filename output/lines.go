package output

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/cosmosctl/cosmosctl/internal/jsonenc"
)

// WriteItemLines writes items as NDJSON, one compact item a line, in one write, so that
// a page reaches a reader (`| jq`) whole and at once. It is how query, changes and
// export print items. The items must be JSON values (a feed split them from a page it
// checked, internal/docfeed); see AppendItemLine.
func WriteItemLines(w io.Writer, items []json.RawMessage) error {
	lw := ItemLineWriter{W: w}
	return lw.Write(items)
}

// ItemLineWriter writes pages of items as WriteItemLines does, one write a page, into
// one buffer it reuses from page to page (a command printing a feed page by page).
type ItemLineWriter struct {
	W   io.Writer
	buf []byte
}

// Write writes one page's items.
func (lw *ItemLineWriter) Write(items []json.RawMessage) error {
	// Sized once: growing by doubling cost a page of 1,000 items more than writing it.
	size := len(items)
	for _, it := range items {
		size += len(it)
	}
	buf := lw.buf[:0]
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	for _, it := range items {
		buf = AppendItemLine(buf, it)
	}
	lw.buf = buf
	_, err := lw.W.Write(buf) // an io.Writer keeps none of buf
	return err
}

// AppendItemLine appends item to dst as one compact line (jsonenc.AppendCompact) and a
// newline. An item json.Compact refuses is appended trimmed, as it is: the caller
// checked it was JSON, and a line is never dropped here.
func AppendItemLine(dst []byte, item json.RawMessage) []byte {
	out, err := jsonenc.AppendCompact(dst, item)
	if err != nil {
		out = append(dst, bytes.TrimSpace(item)...)
	}
	return append(out, '\n')
}
