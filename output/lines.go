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
	// Sized once: growing by doubling cost a page of 1,000 items more than writing it.
	size := len(items)
	for _, it := range items {
		size += len(it)
	}
	buf := make([]byte, 0, size)
	for _, it := range items {
		buf = AppendItemLine(buf, it)
	}
	_, err := w.Write(buf)
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
