package faults

import (
	"slices"
	"strings"
)

// Operations the emulator distinguishes. They follow what a Cosmos DB client
// can observe separately, so a fault can target, say, point reads without
// also slowing down the metadata calls the SDK makes on startup.
const (
	OpRead      = "read" // point read
	OpQuery     = "query"
	OpCreate    = "create"
	OpUpsert    = "upsert"
	OpReplace   = "replace"
	OpDelete    = "delete"
	OpPatch     = "patch"
	OpAccount   = "account"   // GET / (account and region discovery)
	OpPKRanges  = "pkranges"  // partition key ranges
	OpMetadata  = "metadata"  // database and container CRUD
	OpAddresses = "addresses" // direct-mode address resolution
)

// Groups usable wherever an operation is accepted.
const (
	GroupAll    = "all"
	GroupReads  = "reads"
	GroupWrites = "writes"
)

var operations = []string{
	OpRead, OpQuery, OpCreate, OpUpsert, OpReplace, OpDelete, OpPatch,
	OpAccount, OpPKRanges, OpMetadata, OpAddresses,
}

var (
	readOps  = []string{OpRead, OpQuery}
	writeOps = []string{OpCreate, OpUpsert, OpReplace, OpDelete, OpPatch}
)

// validOperations is spelled out in error messages so a typo can be fixed
// without opening the documentation.
var validOperations = strings.Join(append(slices.Clone(operations), GroupAll, GroupReads, GroupWrites), ", ")

// ValidOperation reports whether s is an operation or a group name.
func ValidOperation(s string) bool {
	return s == GroupAll || s == GroupReads || s == GroupWrites || slices.Contains(operations, s)
}

// OperationMatches reports whether pattern (an operation or group) covers op.
func OperationMatches(pattern, op string) bool {
	return operationRank(pattern, op) >= 0
}

// operationRank orders how specifically pattern names op: 0 for the
// operation itself, 1 for its group, 2 for "all", -1 for no match. Latency
// lookup relies on this order to let precise entries override broad ones.
func operationRank(pattern, op string) int {
	switch {
	case pattern == op && pattern != GroupAll:
		return 0
	case pattern == GroupReads && slices.Contains(readOps, op),
		pattern == GroupWrites && isWrite(op):
		return 1
	case pattern == GroupAll:
		return 2
	}
	return -1
}

func isWrite(op string) bool { return slices.Contains(writeOps, op) }

// onlyWrites reports whether every pattern is a write or the writes group;
// used to keep ambiguous-write faults away from reads, where "the server
// applied it and then hung up" has no meaning.
func onlyWrites(patterns []string) (bad string, ok bool) {
	for _, p := range patterns {
		if p != GroupWrites && !isWrite(p) {
			return p, false
		}
	}
	return "", true
}
