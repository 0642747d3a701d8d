package cosmos

import (
	"net/url"
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

// RegionalEndpoint derives a region's own endpoint from a real account's global one, as
// the SDKs do when they know a region by name only: the account name gets a dash and
// the region's key (https://acct.documents.azure.com:443/ and "West US" give
// https://acct-westus.documents.azure.com:443). It returns "" for an endpoint that is not
// a Cosmos DB account host (an emulator's, whose regions differ in port, not name).
func RegionalEndpoint(global, region string) string {
	u, err := url.Parse(strings.TrimRight(global, "/"))
	if err != nil || u.Host == "" || region == "" {
		return ""
	}
	host, port := u.Hostname(), u.Port()
	account, domain, ok := strings.Cut(host, ".")
	if !ok || !strings.HasPrefix(domain, "documents.azure.") || strings.HasSuffix(account, "-"+RegionKey(region)) {
		return ""
	}
	u.Host = account + "-" + RegionKey(region) + "." + domain
	if port != "" {
		u.Host += ":" + port
	}
	u.Path = ""
	return u.String()
}
