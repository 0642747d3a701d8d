package health

import (
	"fmt"
	"strings"
)

// Kind is the kind of operation a record is about. Reads and writes are kept apart as
// in the SDKs: on a single-write account a region can serve reads while its writes fail.
type Kind uint8

const (
	Read Kind = iota
	Write
	numKinds
)

func (k Kind) String() string {
	switch k {
	case Read:
		return "read"
	case Write:
		return "write"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

func (k Kind) valid() bool { return k < numKinds }

// MarshalText makes a Kind "read" or "write" in JSON.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.valid() {
		return nil, fmt.Errorf("unknown operation kind %d", uint8(k))
	}
	return []byte(k.String()), nil
}

func (k *Kind) UnmarshalText(b []byte) error {
	switch strings.ToLower(string(b)) {
	case "read":
		*k = Read
	case "write":
		*k = Write
	default:
		return fmt.Errorf("unknown operation kind %q: want read or write", b)
	}
	return nil
}

// Cause is why an attempt counts as a failure of its region. Only answers that say
// something about the region count: throttling (429) says the account is busy, not that
// the region is ill, and a final answer (2xx, 404/0, 409, 412, 400 …) is a success.
type Cause uint8

const (
	// Timeout: the attempt's own timeout expired with no answer.
	Timeout Cause = iota + 1
	// Unreachable: no answer at all — connection refused or reset, DNS failure.
	Unreachable
	// Unavailable: 503, the service says the region cannot serve now.
	Unavailable
	// ServerError: 500.
	ServerError
	// RequestTimeout: 408 from the service (its own timeout inside the region).
	RequestTimeout
	// Gone: 410, whatever the substatus (1002 partition key range gone, 1000 name cache
	// stale, 1007/1008 split or migration completing): the region's routing is being
	// rebuilt and its answers are not to be had for now.
	Gone
	numCauses
)

var causeNames = [numCauses]string{
	Timeout:        "timeout",
	Unreachable:    "unreachable",
	Unavailable:    "unavailable",
	ServerError:    "server-error",
	RequestTimeout: "request-timeout",
	Gone:           "gone",
}

// causeNouns are the singular and plural words of a note: "3 timeouts and 1 503".
var causeNouns = [numCauses][2]string{
	Timeout:        {"timeout", "timeouts"},
	Unreachable:    {"unanswered connection", "unanswered connections"},
	Unavailable:    {"503", "503s"},
	ServerError:    {"500", "500s"},
	RequestTimeout: {"408", "408s"},
	Gone:           {"410", "410s"},
}

func (c Cause) valid() bool { return c > 0 && c < numCauses }

func (c Cause) String() string {
	if c.valid() {
		return causeNames[c]
	}
	return fmt.Sprintf("cause(%d)", uint8(c))
}

// MarshalText gives a Cause its name in JSON, as a value and as a map key
// ({"timeout": 3}).
func (c Cause) MarshalText() ([]byte, error) {
	if !c.valid() {
		return nil, fmt.Errorf("unknown failure cause %d", uint8(c))
	}
	return []byte(causeNames[c]), nil
}

func (c *Cause) UnmarshalText(b []byte) error {
	for i := Cause(1); i < numCauses; i++ {
		if causeNames[i] == string(b) {
			*c = i
			return nil
		}
	}
	return fmt.Errorf("unknown failure cause %q", b)
}

// CauseOf classifies an answer the region gave: the Cause and true if it counts as a
// failure of the region (503, 500, 408, 410), false otherwise. It cannot tell an
// attempt with no answer (status 0): the caller knows whether its timeout expired
// (Timeout) or the connection failed (Unreachable). Of the answers that are not
// failures, a final one is a success (Store.Success); a transient one that is not a
// failure (429, 449, 404/1002) says nothing about the region and is not recorded.
func CauseOf(status, substatus int) (Cause, bool) {
	switch status {
	case 503:
		return Unavailable, true
	case 500:
		return ServerError, true
	case 408:
		return RequestTimeout, true
	case 410:
		return Gone, true
	}
	return 0, false
}
