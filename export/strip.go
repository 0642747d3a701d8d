package export

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cosmosctl/cosmosctl/internal/jsonenc"
)

// SystemProperties are the properties the service adds to every item: --strip-system
// drops them, so that the file re-imports as the items were written.
var SystemProperties = []string{"_rid", "_self", "_etag", "_ts", "_attachments"}

// FeedProperties are what a change feed page adds to an item (the change's log sequence
// number): dropped with the system properties.
var FeedProperties = []string{"_lsn"}

// TrackingIDProperty is the property cosmosctl's retried writes leave in an item (see
// engine.TrackingIDProperty): dropped with --strip-tracking-id, so that a re-import
// starts without another run's write id.
const TrackingIDProperty = "_trackingId"

// appendLine appends item to dst as one compact line, without the top-level properties
// drop names (nested ones stay: only the service's own are at the top). An item that is
// not an object (a query's VALUE) is written as it is.
func appendLine(dst *bytes.Buffer, item json.RawMessage, drop map[string]bool) error {
	item = bytes.TrimSpace(item)
	if len(drop) == 0 || len(item) == 0 || item[0] != '{' || !bytes.Contains(item, []byte(`"_`)) {
		line, err := jsonenc.AppendCompact(dst.AvailableBuffer(), item)
		if err != nil {
			return fmt.Errorf("an item is not valid JSON: %w", err)
		}
		dst.Write(append(line, '\n'))
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(item))
	if _, err := dec.Token(); err != nil { // {
		return fmt.Errorf("an item is not valid JSON: %w", err)
	}
	dst.WriteByte('{')
	first := true
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("an item is not valid JSON: %w", err)
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return fmt.Errorf("an item is not valid JSON: %w", err)
		}
		if drop[key] {
			continue
		}
		if !first {
			dst.WriteByte(',')
		}
		first = false
		writeKey(dst, key)
		dst.WriteByte(':')
		if err := json.Compact(dst, value); err != nil {
			return fmt.Errorf("an item is not valid JSON: %w", err)
		}
	}
	dst.WriteString("}\n")
	return nil
}

// writeKey writes a property name as JSON, without the HTML escaping of json.Marshal
// (a name with < or & stays readable, and the same as the service sent it).
func writeKey(dst *bytes.Buffer, key string) {
	enc := json.NewEncoder(dst)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(key)
	dst.Truncate(dst.Len() - 1) // Encode's newline
}
