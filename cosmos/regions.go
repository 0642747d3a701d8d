package cosmos

import (
	"strings"
	"unicode"
)

// RegionKey is the form in which region names compare: Cosmos DB treats "East US",
// "eastus" and "EAST US" as one region.
func RegionKey(name string) string {
	var b strings.Builder
	for _, r := range name {
		if unicode.IsSpace(r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// SameRegion reports whether two region names name the same region.
func SameRegion(a, b string) bool { return RegionKey(a) == RegionKey(b) }
