// Package jsonenc is how cosmosctl encodes a JSON value: as encoding/json does, except
// that "<", ">" and "&" are written as they are, never escaped. Every JSON cosmosctl
// prints is written so (output.WriteJSON), and a MarshalJSON method's bytes are used
// as they are by encoding/json, so the methods encode with Marshal too.
package jsonenc

import (
	"bytes"
	"encoding/json"
)

// Marshal encodes v as encoding/json's Marshal does, without HTML escaping.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
