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
// characters, none of the characters that cannot appear in a resource path.
func validateResourceID(kind, id string) *cosmos.Error {
	switch {
	case id == "":
		return badRequest("%s id must not be empty", kind)
	case len(id) > 255:
		return badRequest("%s id is %d characters long; the limit is 255", kind, len(id))
	case strings.ContainsAny(id, `/\?#`):
		return badRequest("%s id %q contains one of the characters / \\ ? # which cannot appear in an id", kind, id)
	case strings.TrimSpace(id) != id && strings.HasSuffix(id, " "):
		return badRequest("%s id %q ends with a space, which the service does not allow", kind, id)
	}
	return nil
}
