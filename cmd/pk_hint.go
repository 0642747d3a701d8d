package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/output"
)

// --pk is JSON when it parses as JSON, so --pk 42 is the number 42 and --pk true the
// boolean: a different partition key from the strings "42" and "true", which hash
// elsewhere. A point operation with the wrong one gets a plain 404 (the service has no
// way of knowing what was meant), and nothing in it says why. When an item's 404 (0: the
// item, not its container) came from a key read as a number, boolean or null, the
// error says how the key was read and how to give it as a string.

// hintedError is a failure with one more sentence for the person reading it; it is the
// same failure to everything else (exit code, JSON kind and status).
type hintedError struct {
	err  error
	hint string
}

func (e *hintedError) Error() string { return e.err.Error() + "; " + e.hint }
func (e *hintedError) Unwrap() error { return e.err }

// withPartitionKeyHint adds the hint to err when it is an item's 404, flag (the --pk
// the user typed) was read as a single number, boolean or null, and the container
// exists: the service answers 404/0 for a missing container too, and the SDKs tell the
// two apart by resolving the container (they then mark the 404 1003, owner resource
// not found), which containerExists does here, only on this failure's path.
func withPartitionKeyHint(err error, flag string, pk cosmos.PartitionKey, containerExists func() bool) error {
	status, sub, ok := cosmos.Status(err)
	typed := strings.TrimSpace(flag)
	if !ok || status != 404 || sub != 0 || len(pk) != 1 || strings.HasPrefix(typed, "[") {
		return err
	}
	var what string
	switch c := pk[0]; c.Kind {
	case cosmos.KindNumber:
		what = "the number " + typed
	case cosmos.KindBool:
		what = "the boolean " + typed
	case cosmos.KindNull:
		what = "null"
	default:
		return err
	}
	if !containerExists() {
		return err
	}
	return &hintedError{err: err, hint: fmt.Sprintf("--pk %s was read as %s, not a string: if the item's partition key is the string %q, pass --pk '%s'",
		typed, what, typed, `"`+typed+`"`)}
}

// addHint puts a hinted error's hint in its JSON error object's message too.
func addHint(e *output.ErrorObject, err error) {
	var he *hintedError
	if e != nil && errors.As(err, &he) {
		e.Message += "; " + he.hint
	}
}
