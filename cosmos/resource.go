package cosmos

import (
	"net/url"
	"strings"
)

// Resource types as they appear in paths and in the string to sign.
const (
	TypeAccount     = ""
	TypeDatabases   = "dbs"
	TypeContainers  = "colls"
	TypeDocuments   = "docs"
	TypePKRanges    = "pkranges"
	TypeAddresses   = "addresses"
	TypeEmulator    = "_emulator"
	TypeUsers       = "users"
	TypeStoredProcs = "sprocs"
)

// ResourceFromPath derives the resource type and link that a request for path is signed
// with. The path is percent-decoded first ('+' stays '+', case is kept). No segments is the
// account; an odd number of segments is a feed (type = last segment, link = the rest); an
// even number is one resource (type = second to last, link = the whole path).
func ResourceFromPath(path string) (resourceType, resourceLink string) {
	if t, l, ok := plainResource(path); ok {
		return t, l
	}
	return ResourceFromSegments(PathSegments(path))
}

// plainResource is ResourceFromPath, without allocating, for a path with nothing to
// decode and no empty segment (every request the engine makes); ok is false otherwise.
func plainResource(path string) (resourceType, resourceLink string, ok bool) {
	if strings.IndexByte(path, '%') >= 0 || strings.Contains(path, "//") {
		return "", "", false
	}
	link := strings.TrimSuffix(strings.TrimPrefix(path, "/"), "/")
	if link == "" {
		return TypeAccount, "", true
	}
	last := strings.LastIndexByte(link, '/')
	if strings.Count(link, "/")%2 == 0 { // an odd number of segments: a feed
		if last < 0 {
			return link, "", true
		}
		return link[last+1:], link[:last], true
	}
	prev := strings.LastIndexByte(link[:last], '/')
	return link[prev+1 : last], link, true
}

// ResourceFromSegments is ResourceFromPath for a path already split into its decoded,
// non-empty segments: a server that reads paths its own way (the emulator, as a gateway
// does) derives what it verifies the signature over from the segments it addresses.
func ResourceFromSegments(segs []string) (resourceType, resourceLink string) {
	switch {
	case len(segs) == 0:
		return TypeAccount, ""
	case len(segs)%2 == 1:
		return segs[len(segs)-1], strings.Join(segs[:len(segs)-1], "/")
	default:
		return segs[len(segs)-2], strings.Join(segs, "/")
	}
}

// PathSegments splits an escaped request path (as sent on the wire, or as
// http.Request.URL.EscapedPath returns it) into its non-empty segments and percent-decodes
// each exactly once. Splitting before decoding keeps an escaped '/' inside its segment, and
// decoding once keeps an id such as "a%41" or "50%25off" what the client meant: a server
// must not pass it the already-decoded URL.Path, or "a%2541" would become "aA".
func PathSegments(path string) []string {
	var segs []string
	for _, s := range strings.Split(path, "/") {
		if s == "" {
			continue
		}
		if d, err := url.PathUnescape(s); err == nil {
			s = d
		}
		segs = append(segs, s)
	}
	return segs
}

// EscapePath percent-encodes each segment of a resource link for use in a URL path, so an
// item id with spaces or '#' survives the trip.
func EscapePath(segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// DatabaseLink, ContainerLink and ItemLink build resource links (unescaped, as signed).
func DatabaseLink(db string) string        { return "dbs/" + db }
func ContainerLink(db, coll string) string { return "dbs/" + db + "/colls/" + coll }
func ItemLink(db, coll, id string) string  { return ContainerLink(db, coll) + "/docs/" + id }
func ItemsPath(db, coll string) string     { return EscapePath("dbs", db, "colls", coll, "docs") }
func ItemPath(db, coll, id string) string  { return EscapePath("dbs", db, "colls", coll, "docs", id) }
func ContainerPath(db, coll string) string { return EscapePath("dbs", db, "colls", coll) }
func PKRangesPath(db, coll string) string  { return EscapePath("dbs", db, "colls", coll, "pkranges") }
func containerFeedPath(db string) string   { return EscapePath("dbs", db, "colls") }
func databasePath(db string) string        { return EscapePath("dbs", db) }
