package export

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cosmosctl/cosmosctl/engine"
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
	if doc, ok := engine.ScanDocument(item); ok {
		dst.Write(appendStripped(dst.AvailableBuffer(), doc, drop))
		return nil
	}
	return appendStrippedDecoded(dst, item, drop)
}

// appendStripped is appendLine's line for an object the document scanner read (valid
// JSON and UTF-8): its members in order but those drop names, keys as they are written
// unless encoding/json would write them otherwise (an escape, U+2028 or U+2029), values
// compacted. It is what appendStrippedDecoded writes, without decoding every member
// through a json.Decoder (most of an export --strip-system's time).
func appendStripped(dst []byte, doc *engine.Document, drop map[string]bool) []byte {
	dst = append(dst, '{')
	first := true
	for i := range doc.Members() {
		rawKey, value, escaped := doc.Member(i)
		reencode := escaped || bytes.IndexByte(rawKey, 0xE2) >= 0 // U+2028 and U+2029 start with E2
		var dropped bool
		if reencode {
			dropped = drop[doc.Key(i)]
		} else {
			dropped = drop[string(rawKey[1:len(rawKey)-1])]
		}
		if dropped {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		if reencode {
			var b bytes.Buffer
			writeKey(&b, doc.Key(i))
			dst = append(dst, b.Bytes()...)
		} else {
			dst = append(dst, rawKey...)
		}
		dst = append(dst, ':')
		// The scan validated the value: json.Compact cannot refuse it.
		dst, _ = jsonenc.AppendCompact(dst, value)
	}
	return append(dst, '}', '\n')
}

// appendStrippedDecoded is appendLine's line for an object, member by member through a
// json.Decoder: for what the document scanner does not read, and the reference its
// fast path is held to.
func appendStrippedDecoded(dst *bytes.Buffer, item json.RawMessage, drop map[string]bool) error {
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
