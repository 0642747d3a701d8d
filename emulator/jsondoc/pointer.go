package jsondoc

import (
	"strconv"
	"strings"
)

// ParsePointer splits a JSON pointer (RFC 6901) as used in Cosmos DB patch
// paths into unescaped segments. The root pointer is rejected: a patch
// always names a property, and replacing or removing the whole document
// would bypass the id and partition key checks.
func ParsePointer(p string) ([]string, error) {
	if p == "" || p == "/" {
		return nil, &PatchError{Msg: "patch path must name a property, e.g. /a/b"}
	}
	if p[0] != '/' {
		return nil, &PatchError{Msg: "patch path " + strconv.Quote(p) + ` must start with "/"`}
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		if strings.IndexByte(s, '~') < 0 {
			continue
		}
		var b strings.Builder
		for j := 0; j < len(s); j++ {
			if s[j] != '~' {
				b.WriteByte(s[j])
				continue
			}
			if j+1 < len(s) && s[j+1] == '0' {
				b.WriteByte('~')
			} else if j+1 < len(s) && s[j+1] == '1' {
				b.WriteByte('/')
			} else {
				return nil, &PatchError{Msg: "invalid escape in patch path " + strconv.Quote(p) +
					": \"~\" must be followed by 0 or 1"}
			}
			j++
		}
		segs[i] = b.String()
	}
	return segs, nil
}

// formatPointer is the inverse of ParsePointer, for error messages about
// paths the caller did not spell out (such as a parent).
func formatPointer(segs []string) string {
	if len(segs) == 0 {
		return "/"
	}
	var b strings.Builder
	r := strings.NewReplacer("~", "~0", "/", "~1")
	for _, s := range segs {
		b.WriteByte('/')
		r.WriteString(&b, s)
	}
	return b.String()
}
