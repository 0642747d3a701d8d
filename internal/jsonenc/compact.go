package jsonenc

import (
	"bytes"
	"encoding/json"
)

// AppendCompact appends what json.Compact makes of the JSON value v to dst, and
// json.Compact's error (dst unchanged) for what it refuses among values with white
// space. A value with no white space between its tokens — every item the service sends
// — is already that, and is appended as it is after one pass that only looks for such
// space: profiles of export, query --all and changes spent from a quarter to most of
// the client's time compacting compact items. It does not check such a value is JSON;
// the feed that split it out of a page did (internal/docfeed).
func AppendCompact(dst, v []byte) ([]byte, error) {
	if !hasSpace(v) {
		return append(dst, v...), nil
	}
	b := bytes.NewBuffer(dst)
	if err := json.Compact(b, v); err != nil {
		return dst, err
	}
	return b.Bytes(), nil
}

// hasSpace reports white space outside the strings of a JSON value: false for a value
// with no white space byte at all, whatever else it holds; true for one with such a
// byte that it cannot read (json.Compact decides).
func hasSpace(v []byte) bool {
	// Most items hold no white space at all, in their strings or out: four vectorized
	// searches for its four bytes say so in a tenth of the time of the walk below,
	// which follows every string to tell space in one from space between tokens.
	if bytes.IndexByte(v, ' ') < 0 && bytes.IndexByte(v, '\n') < 0 && bytes.IndexByte(v, '\t') < 0 && bytes.IndexByte(v, '\r') < 0 {
		return false
	}
	for i := 0; i < len(v); {
		switch v[i] {
		case ' ', '\t', '\n', '\r':
			return true
		case '"':
			end := stringEnd(v, i)
			if end < 0 {
				return true
			}
			i = end
		default:
			i++
		}
	}
	return false
}

// stringEnd is the index after the JSON string starting at v[start] ('"'), -1 if it does
// not end.
func stringEnd(v []byte, start int) int {
	for j := start + 1; ; j++ {
		k := bytes.IndexByte(v[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		backslashes := 0
		for p := j - 1; p > start && v[p] == '\\'; p-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return j + 1
		}
	}
}
