package emulator

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The routing gateway's reading of a request path.
//
// Microsoft's routing gateway (the gateway of Microsoft's emulator, and of accounts not
// yet moved to the compute gateway) does not address a resource by the path the client
// escaped. Its answers to azcosmos v1.5.0 TestItemIdEncodingRoutingGW, which
// Microsoft's CI runs against its emulator, are all explained by these steps, which
// gatewaySegments takes in order:
//
//  1. The path is percent-decoded once, whole, as http.sys does for the "converted URI"
//     it hands to the server (HttpListenerElement.UnescapeRequestUrl, .NET docs: http.sys
//     "un-escapes all percent encoded values"), so an escaped '/' separates segments.
//  2. A decoded control character (U+0000–U+001F, U+007F–U+009F) makes the URL invalid:
//     http.sys answers 400 itself, with its HTML page ("Http.sys registry settings for
//     Windows": AllowRestrictedChars, default 0, refuses hex-escaped characters that
//     decode to those ranges). The Java SDK's CosmosItemIdEncodingTest sees that page
//     ("<TITLE>Bad Request</TITLE>") for ids with CR, LF or a tab.
//  3. The decoded URL is read as a .NET Uri: trailing whitespace is cut (System.Uri
//     "Cut trailing spaces"), a '#' starts a fragment that is not part of the address,
//     and a backslash is a slash (the http scheme's ConvertPathSlashes). A '?' the
//     client escaped stays in the path: Cosmos requests carry no query string, and the
//     gateway answers 200 for the id "Disallowed?Chars".
//  4. Each segment is percent-decoded again, leaving a '%' that begins no escape as it
//     is: the routing gateway "expects id in the Uri to be double-percent-encoded"
//     (Azure/azure-sdk-for-js#22818, Azure/azure-sdk-for-java#30283), and an id such as
//     "%d5" cannot be read through it (Azure/azure-cosmos-dotnet-v2#458).
//
// The gateway then verifies the signature over the resource type and link of the
// segments it arrived at. SDKs sign the id as it is and escape it once, so any id these
// steps change is a 401 for its read, replace, patch and delete: one ending in
// whitespace, one holding a percent escape ("%20", "%E9%B1%80"), one with '/', '\' or
// '#' (Azure/azure-cosmos-dotnet-v3#3507 and #1734). The create carries the id in its
// body and is a 201. Requests to a replica address are direct mode, which no gateway
// reads: their paths are decoded once, segment by segment (cosmos.PathSegments).
//
// Not modelled, for want of evidence of what the gateway does with them: the Uri's
// compaction of "." and ".." segments, and non-UTF-8 escapes (http.sys may read them
// as ANSI).

// gatewaySegments returns the non-empty segments the routing gateway addresses for an
// escaped request path, or ok false when http.sys refuses the URL (answered by
// refuseInvalidURL).
func gatewaySegments(escaped string) (segs []string, ok bool) {
	decoded, err := url.PathUnescape(escaped)
	if err != nil || hasRestrictedChar(decoded) {
		return nil, false
	}
	decoded = strings.TrimRight(decoded, " ")
	if i := strings.IndexByte(decoded, '#'); i >= 0 {
		decoded = decoded[:i]
	}
	decoded = strings.ReplaceAll(decoded, `\`, "/")
	for _, s := range strings.Split(decoded, "/") {
		if s != "" {
			segs = append(segs, unescapeLeniently(s))
		}
	}
	return segs, true
}

// hasRestrictedChar reports whether s holds a character http.sys refuses in a URL by
// default: C0 controls, DEL and the C1 controls.
func hasRestrictedChar(s string) bool {
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return true
		}
	}
	return false
}

// unescapeLeniently decodes every %XX of s and keeps any other '%' as it is, as
// System.Uri.UnescapeDataString does: "100%" stays "100%", "a%41" becomes "aA".
func unescapeLeniently(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// invalidURLPage is the body of http.sys's 400 for a URL it refuses: HTML, not a Cosmos
// error, because no Cosmos code has seen the request.
const invalidURLPage = `<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd">
<HTML><HEAD><TITLE>Bad Request</TITLE>
<META HTTP-EQUIV="Content-Type" Content="text/html; charset=us-ascii"></HEAD>
<BODY><h2>Bad Request - Invalid URL</h2>
<hr><p>HTTP Error 400. The request URL is invalid.</p>
</BODY></HTML>
`

// refuseInvalidURL answers as http.sys does to a URL with a restricted character: 400
// and its HTML page, without the headers the gateway adds (no activity id, no charge).
func refuseInvalidURL(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=us-ascii")
	h.Set("Server", "Microsoft-HTTPAPI/2.0")
	h.Set("Content-Length", strconv.Itoa(len(invalidURLPage)))
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write([]byte(invalidURLPage))
}
