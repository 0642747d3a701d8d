package cosmos

import (
	"fmt"
	"strings"
)

// Consistency levels as the service spells them (x-ms-consistency-level, the account's
// userConsistencyPolicy.defaultConsistencyLevel), strongest first.
const (
	ConsistencyStrong           = "Strong"
	ConsistencyBoundedStaleness = "BoundedStaleness"
	ConsistencySession          = "Session"
	ConsistencyConsistentPrefix = "ConsistentPrefix"
	ConsistencyEventual         = "Eventual"
)

var consistencyNames = map[string]string{
	"strong": ConsistencyStrong, "boundedstaleness": ConsistencyBoundedStaleness, "bounded": ConsistencyBoundedStaleness,
	"session": ConsistencySession, "consistentprefix": ConsistencyConsistentPrefix, "prefix": ConsistencyConsistentPrefix,
	"eventual": ConsistencyEventual,
}

// ParseConsistency spells a consistency level as the service does, from its own names
// or the short ones (strong, bounded, session, prefix, eventual), in any case.
func ParseConsistency(s string) (string, error) {
	level, ok := consistencyNames[strings.ToLower(strings.TrimSpace(s))]
	if !ok {
		return "", fmt.Errorf("consistency %q is not a consistency level: use strong, bounded, session, prefix or eventual (or Strong, BoundedStaleness, Session, ConsistentPrefix, Eventual)", s)
	}
	return level, nil
}

// ConsistencyAllowed reports whether a request may ask for level on an account whose
// default is account: a request may relax the account's level, never strengthen it.
// Strong takes any level, BoundedStaleness any but Strong, and Session,
// ConsistentPrefix and Eventual any of those three, the matrix the SDKs check
// (azure-cosmos-dotnet-v3 ValidationHelpers.IsValidConsistencyLevelOverwrite,
// azure-sdk-for-java Utils.isValidConsistency) and the service enforces with a 400.
func ConsistencyAllowed(account, level string) bool {
	switch account {
	case ConsistencyStrong:
		return true
	case ConsistencyBoundedStaleness:
		return level != ConsistencyStrong
	default:
		return level == ConsistencySession || level == ConsistencyConsistentPrefix || level == ConsistencyEventual
	}
}

// ConsistencyWeaker lists the levels a request may ask for on an account of level
// account, for messages.
func ConsistencyWeaker(account string) []string {
	var out []string
	for _, l := range []string{ConsistencyStrong, ConsistencyBoundedStaleness, ConsistencySession, ConsistencyConsistentPrefix, ConsistencyEventual} {
		if ConsistencyAllowed(account, l) {
			out = append(out, l)
		}
	}
	return out
}
