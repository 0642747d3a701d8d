package emulator

import (
	"fmt"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

func cosmosErr(status, sub int, msg string) *cosmos.Error {
	return &cosmos.Error{StatusCode: status, SubStatus: sub, Code: cosmos.StatusName(status, sub), Message: msg}
}

func badRequest(format string, args ...any) *cosmos.Error {
	return cosmosErr(400, 0, fmt.Sprintf(format, args...))
}

func notFound(msg string) *cosmos.Error { return cosmosErr(404, 0, msg) }

func conflict(msg string) *cosmos.Error { return cosmosErr(409, 0, msg) }

func preconditionFailed(msg string) *cosmos.Error { return cosmosErr(412, 0, msg) }

func tooLarge(n int) *cosmos.Error {
	return cosmosErr(413, 0, fmt.Sprintf("request size is too large: the document is %d bytes and the limit is %d bytes (2 MB)", n, MaxDocumentBytes))
}

func storageError(err error) *cosmos.Error {
	return cosmosErr(500, 0, "the emulator could not persist the write: "+err.Error())
}

// validateResourceID applies the service's rules for ids: non-empty, at most 255
// bytes for a database or container and 1,023 for a document. A document's id may hold
// any character: the routing gateway creates documents whose ids contain '/', '\', '?',
// '#', CR, LF, tabs or trailing spaces (201 in azcosmos v1.5.0
// TestItemIdEncodingRoutingGW), though it then addresses some of them differently
// (gatewaypath.go). For databases and containers the service's rule is not known, and
// the emulator keeps refusing the characters .NET's Resource.Id lists as restricted
// ("/", "\", "?", "#") and a trailing space.
func validateResourceID(kind, id string) *cosmos.Error {
	limit := 255
	if kind == "document" {
		limit = maxItemIDBytes
	}
	switch {
	case id == "":
		return badRequest("%s id must not be empty", kind)
	case len(id) > limit:
		return badRequest("%s id is %d bytes long; the service's limit is %d bytes", kind, len(id), limit)
	case kind == "document":
		return nil
	case strings.ContainsAny(id, `/\?#`):
		return badRequest("%s id %q contains one of the characters / \\ ? # which cannot appear in an id", kind, id)
	case strings.HasSuffix(id, " "):
		return badRequest("%s id %q ends with a space, which the emulator does not allow", kind, id)
	}
	return nil
}
