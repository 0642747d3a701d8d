package faults

import (
	"strings"
	"unicode"
)

// SameRegion reports whether a and b name the same Azure region. Azure itself
// mixes display names ("East US") and programmatic names ("eastus"), and
// scenario authors type either, so case and whitespace are ignored.
func SameRegion(a, b string) bool {
	return regionKey(a) == regionKey(b)
}

func regionKey(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}
